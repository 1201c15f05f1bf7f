//! A page session as it can be kept and shared: the seed, and each command with the virtual
//! time it ran at (time passes between commands while the clock plays), plus the single
//! steps taken. Replaying it rebuilds the same cluster — same names, same events — which is
//! how a reload keeps the student's work and a link shows someone else the same sandbox.

use crate::kubectl::Output;
use crate::shell::{Command, Session};
use crate::sim::limits::{JOURNAL_MAX_ENCODED, JOURNAL_MAX_ENTRIES, JOURNAL_MAX_TEXT, JOURNAL_TIME_CAP};
use crate::sim::{Duration, Time};
use serde::{Deserialize, Serialize};

/// One thing the student did, at a virtual time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Virtual milliseconds since the cluster started.
    pub at: u64,
    /// A command line; empty for a single step of the clock.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub line: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Run beside the terminal (a page control) while it was attached to a container shell.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub beside: bool,
    /// Left out of the saved session (`Journal::compact`): the command failed before it
    /// reached the cluster, so replay only shows its line and moves the clock to `at`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
}

impl Entry {
    /// The same step or command as `ran`, which a live session ran; compaction may since have
    /// marked this one skipped (its input dropped: it failed and changed nothing).
    fn replays_as(&self, ran: &Entry) -> bool {
        self.at == ran.at
            && self.line == ran.line
            && self.beside == ran.beside
            && (self.skipped || (self.stdin == ran.stdin && !ran.skipped))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub seed: u64,
    pub entries: Vec<Entry>,
    /// Where the clock was when the journal was saved (virtual milliseconds).
    #[serde(default)]
    pub now: u64,
    /// The lesson the session belongs to: it starts from the lesson's cluster and set-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lesson: Option<String>,
    /// The lesson's progress (`lessons::Progress` as JSON), kept with its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// How many control-plane nodes a session without a lesson starts with (the page's
    /// `?control-planes=3`); 0 or 1: one.
    #[serde(default, skip_serializing_if = "is_single", rename = "controlPlanes")]
    pub control_planes: u32,
}

fn is_single(control_planes: &u32) -> bool {
    *control_planes <= 1
}

impl Journal {
    pub fn new(seed: u64) -> Journal {
        Journal { seed, entries: Vec::new(), now: 0, lesson: None, progress: None, control_planes: 0 }
    }

    /// A fresh cluster of the journal's seed and topology (at most
    /// [`MAX_CONTROL_PLANES`](crate::cluster::control_plane::MAX_CONTROL_PLANES) control planes).
    pub fn fresh_session(&self) -> Session {
        let max = crate::cluster::control_plane::MAX_CONTROL_PLANES;
        let control_planes = self.control_planes.clamp(1, max);
        Session::with_config(crate::cluster::ClusterConfig {
            seed: self.seed,
            control_planes,
            ..crate::cluster::ClusterConfig::default()
        })
    }

    /// A journal for a lesson's session, which starts where the lesson does.
    pub fn for_lesson(lesson: &crate::lessons::Lesson) -> Journal {
        Journal { lesson: Some(lesson.id.clone()), ..Journal::new(lesson.cluster.seed) }
    }

    /// Notes a command about to run at `now`.
    pub fn command(&mut self, now: Time, command: &Command) {
        self.command_beside(now, command, false);
    }

    /// Notes a command run at `now`; `beside`: by a page control while the terminal was
    /// attached to a container shell (`Session::execute_beside`).
    pub fn command_beside(&mut self, now: Time, command: &Command, beside: bool) {
        let stdin = command.heredoc.as_ref().map(|(_, body)| body.clone());
        self.entries.push(Entry { at: now.0, line: command.line.clone(), stdin, beside, skipped: false });
    }

    /// Notes a single step of the clock taken at `now`.
    pub fn step(&mut self, now: Time) {
        self.entries.push(Entry { at: now.0, line: String::new(), stdin: None, beside: false, skipped: false });
    }

    /// Runs the journal on a fresh session: time advances to each entry, which then runs.
    /// The session's clock ends at `until` (where the original was), or at the last entry.
    pub fn replay(&self, until: Option<Time>) -> Session {
        self.replay_showing(until, |_, _, _| {})
    }

    /// Replays, handing each command, the container shell's prompt it was typed at (None: the
    /// sandbox's `$`) and what it printed to `shown` (the terminal's scrollback).
    pub fn replay_showing(&self, until: Option<Time>, shown: impl FnMut(&Command, Option<&str>, &Output)) -> Session {
        let lesson = self.lesson.as_deref().and_then(crate::lessons::find);
        self.replay_in(lesson.as_ref(), until, shown)
    }

    /// Replays on the start of `lesson` (the one the journal names, as the caller loaded it),
    /// or on a fresh cluster of the journal's seed.
    pub fn replay_in(
        &self,
        lesson: Option<&crate::lessons::Lesson>,
        until: Option<Time>,
        shown: impl FnMut(&Command, Option<&str>, &Output),
    ) -> Session {
        self.replay_within(lesson, until, Time::ZERO + JOURNAL_TIME_CAP, shown)
    }

    /// Replays no further than `cap` on the virtual clock: an entry past it, or one after a
    /// command that let time run past it, is not run.
    fn replay_within(
        &self,
        lesson: Option<&crate::lessons::Lesson>,
        until: Option<Time>,
        cap: Time,
        mut shown: impl FnMut(&Command, Option<&str>, &Output),
    ) -> Session {
        let mut replay = self.replay_begin(lesson);
        self.replay_more_within(&mut replay, until, cap, &mut || true, &mut shown);
        replay.session
    }

    /// A replay to be run a piece at a time ([`Journal::replay_more`]), from the start of
    /// `lesson` (the one the journal names, as the caller loaded it) or a fresh cluster of the
    /// journal's seed.
    pub fn replay_begin(&self, lesson: Option<&crate::lessons::Lesson>) -> Replay {
        let session = match lesson {
            Some(lesson) => lesson.start(),
            None => self.fresh_session(),
        };
        Replay { session, next: 0, advancing: false, finished: false }
    }

    /// Runs `replay` on, entry by entry and (between entries) step by step of the cluster, while
    /// `more` says so; whether it has finished. Stopping and going on changes nothing: the
    /// pieces run the same steps as one replay would (as the page's ticks do).
    pub fn replay_more(
        &self,
        replay: &mut Replay,
        until: Option<Time>,
        more: &mut dyn FnMut() -> bool,
        shown: &mut dyn FnMut(&Command, Option<&str>, &Output),
    ) -> bool {
        self.replay_more_within(replay, until, Time::ZERO + JOURNAL_TIME_CAP, more, shown)
    }

    fn replay_more_within(
        &self,
        replay: &mut Replay,
        until: Option<Time>,
        cap: Time,
        more: &mut dyn FnMut() -> bool,
        shown: &mut dyn FnMut(&Command, Option<&str>, &Output),
    ) -> bool {
        let Replay { session, next, advancing, finished } = replay;
        *finished = self.run_entries(session, next, advancing, until, cap, more, shown);
        *finished
    }

    /// Goes on with `session` from entry `next` (see `replay_more_within`); whether it got to
    /// the end. `advancing` says an earlier call stopped on its way to an entry's time.
    #[allow(clippy::too_many_arguments)]
    fn run_entries(
        &self,
        session: &mut Session,
        next: &mut usize,
        advancing: &mut bool,
        until: Option<Time>,
        cap: Time,
        more: &mut dyn FnMut() -> bool,
        shown: &mut dyn FnMut(&Command, Option<&str>, &Output),
    ) -> bool {
        // A journal read with `decode_checked` stays within the cap; one built by hand, or
        // commands that let time pass (each at most `COMMAND_TIME_CAP`), stop the replay there.
        let entries = self.entries.len().min(JOURNAL_MAX_ENTRIES);
        while *next < entries {
            let entry = &self.entries[*next];
            if Time(entry.at) > cap || session.cluster.now() > cap {
                *next = entries;
                break;
            }
            if !advance_while(session, Time(entry.at), advancing, more) {
                return false;
            }
            *next += 1;
            if entry.line.is_empty() {
                session.cluster.step();
            } else if entry.skipped {
                let command = Command { line: entry.line.clone(), heredoc: None };
                let prompt = if entry.beside { None } else { session.prompt().map(String::from) };
                shown(&command, prompt.as_deref(), &skipped_output());
            } else {
                let heredoc = entry.stdin.clone().map(|body| ("EOF".to_string(), body));
                let command = Command { line: entry.line.clone(), heredoc };
                let (prompt, out) = if entry.beside {
                    (None, session.execute_beside(&command))
                } else {
                    (session.prompt().map(String::from), session.execute(&command))
                };
                shown(&command, prompt.as_deref(), &out);
            }
            if !more() {
                return false;
            }
        }
        if let Some(t) = until {
            if !advance_while(session, t.min(cap), advancing, more) {
                return false;
            }
        }
        true
    }

    /// How many of this journal's entries `ran` (the journal that built a live session now at
    /// virtual time `now`) holds already, when `session`'s state is where replaying them would
    /// leave it: the same seed, lesson and topology, `ran`'s entries first here (an entry compaction
    /// marked skipped counts as the one that ran), and nothing here before `now`. A replay
    /// jumps from entry to entry where the live session got there in many ticks: the
    /// simulation gives the same result either way, so such a session can go on with the
    /// entries after them instead of replaying from the start.
    pub fn continues(&self, ran: &Journal, now: Time) -> Option<usize> {
        let n = ran.entries.len();
        let same = self.seed == ran.seed
            && self.lesson == ran.lesson
            && self.control_planes.max(1) == ran.control_planes.max(1)
            && self.entries.len() >= n
            && self.entries.iter().zip(&ran.entries).all(|(here, there)| here.replays_as(there));
        let later = self.now >= now.0 && self.entries[n.min(self.entries.len())..].iter().all(|e| e.at >= now.0);
        (same && later).then_some(n)
    }

    /// Runs this journal's entries from `from` on `session` (which holds the ones before, see
    /// `continues`) and its clock on to where the journal ends, handing each command and what it
    /// printed to `shown`.
    pub fn replay_rest(
        &self,
        session: &mut Session,
        from: usize,
        shown: &mut dyn FnMut(&Command, Option<&str>, &Output),
    ) {
        let (mut next, mut advancing) = (from, false);
        let cap = Time::ZERO + JOURNAL_TIME_CAP;
        self.run_entries(session, &mut next, &mut advancing, Some(Time(self.now)), cap, &mut || true, shown);
    }

    /// The journal as text for a link or storage: URL-safe base64 of its JSON.
    pub fn encode(&self) -> String {
        base64url(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }

    /// Reads what `encode` wrote; None for anything else, or for a journal the sandbox will
    /// not replay (see [`Journal::decode_checked`]): a mangled or crafted link never breaks or
    /// freezes the page.
    pub fn decode(text: &str) -> Option<Journal> {
        Journal::decode_checked(text).ok()
    }

    /// Reads what `encode` wrote, or says why not. A journal comes from a link or storage,
    /// which anyone can write: besides not decoding, it is refused when it is larger, or
    /// reaches further in virtual time, than a replay can rebuild in a moment
    /// ([`crate::sim::limits`]).
    pub fn decode_checked(text: &str) -> Result<Journal, JournalError> {
        let text = text.trim();
        if text.len() > JOURNAL_MAX_ENCODED {
            return Err(JournalError::TooLarge { bytes: text.len() });
        }
        let bytes = unbase64url(text).ok_or(JournalError::NotAJournal)?;
        // Read as text, like a saved journal, so the wasm holds one copy of the decoder.
        let text = std::str::from_utf8(&bytes).map_err(|_| JournalError::NotAJournal)?;
        let journal: Journal = serde_json::from_str(text).map_err(|_| JournalError::NotAJournal)?;
        journal.check()?;
        Ok(journal)
    }

    /// Whether the sandbox will replay this journal: not too many entries, not too much text,
    /// nothing past [`JOURNAL_TIME_CAP`].
    pub fn check(&self) -> Result<(), JournalError> {
        if self.entries.len() > JOURNAL_MAX_ENTRIES {
            return Err(JournalError::TooManyEntries { entries: self.entries.len() });
        }
        let text: usize = self.entries.iter().map(|e| e.line.len() + e.stdin.as_ref().map_or(0, String::len)).sum();
        let text = text + self.lesson.as_ref().map_or(0, String::len) + self.progress.as_ref().map_or(0, String::len);
        if text > JOURNAL_MAX_TEXT {
            return Err(JournalError::TooLarge { bytes: text });
        }
        let furthest = self.entries.iter().map(|e| e.at).chain([self.now]).max().unwrap_or(0);
        if furthest > JOURNAL_TIME_CAP.0 {
            return Err(JournalError::TooFar { at: Duration(furthest) });
        }
        Ok(())
    }
}

/// Why a journal (a shared link, a saved session) is not replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalError {
    /// Not base64 of a journal's JSON.
    NotAJournal,
    /// Its text (encoded, or of its commands) is past what the sandbox reads, in bytes.
    TooLarge { bytes: usize },
    /// More entries than the sandbox replays.
    TooManyEntries { entries: usize },
    /// Its clock, or an entry, is this far into virtual time: past [`JOURNAL_TIME_CAP`].
    TooFar { at: Duration },
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalError::NotAJournal => {
                write!(f, "this saved session is not one the sandbox wrote: it does not decode")
            }
            JournalError::TooLarge { bytes } => write!(
                f,
                "this saved session is too large to replay ({bytes} bytes; the sandbox reads at most {JOURNAL_MAX_TEXT} bytes of commands)"
            ),
            JournalError::TooManyEntries { entries } => write!(
                f,
                "this saved session has too many commands to replay ({entries}; the sandbox replays at most {JOURNAL_MAX_ENTRIES})"
            ),
            JournalError::TooFar { at } => write!(
                f,
                "this saved session reaches {} of virtual time; the sandbox replays at most {}",
                days(*at),
                days(JOURNAL_TIME_CAP)
            ),
        }
    }
}

impl std::error::Error for JournalError {}

/// A long span as days and hours: `7 days`, `365 days 2h`, `1 day 12h`; shorter ones as Go.
fn days(d: Duration) -> String {
    const DAY: u64 = 86_400_000;
    if d.0 < DAY {
        return d.to_string();
    }
    let (n, hours) = (d.0 / DAY, (d.0 % DAY) / 3_600_000);
    let unit = if n == 1 { "day" } else { "days" };
    if hours == 0 { format!("{n} {unit}") } else { format!("{n} {unit} {hours}h") }
}

/// What a replayed `skipped` entry shows in place of its output.
fn skipped_output() -> Output {
    Output {
        stderr: "(this command failed and changed nothing; its input was too large to keep in the saved session)\n"
            .into(),
        code: 1,
        ..Output::default()
    }
}

/// What the cluster would show of any change a command made: etcd's revision, the record of
/// requests and decisions, and the clock. A command that leaves all three as they were (and
/// the terminal at the same prompt) changed nothing that a replay could tell apart.
fn fingerprint(session: &Session) -> (i64, u64, u64, Option<String>) {
    (
        session.cluster.inspect().etcd().revision(),
        session.cluster.record.last_seq(),
        session.cluster.now().0,
        session.prompt().map(String::from),
    )
}

/// Standard input at least this long is worth leaving out of a saved session.
pub const LARGE_STDIN: usize = 16 * 1024;

impl Journal {
    /// The session as kept in the browser's storage: its JSON, a quarter smaller than the
    /// base64 of a link. `from_storage` reads both.
    pub fn to_storage(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads what `to_storage` or `encode` wrote (older pages saved the link's form).
    pub fn from_storage(text: &str) -> Option<Journal> {
        let text = text.trim();
        if !text.starts_with('{') {
            return Journal::decode(text);
        }
        // Storage and session files are untrusted too: the same bounds as a link.
        if text.len() > JOURNAL_MAX_ENCODED {
            return None;
        }
        serde_json::from_str::<Journal>(text).ok().filter(|j| j.check().is_ok())
    }

    /// Whether `compact` could leave something out: an entry from `from` on carries standard
    /// input of at least `LARGE_STDIN` bytes.
    pub fn has_large_input(&self, from: usize) -> bool {
        self.entries.iter().skip(from).any(|e| !e.skipped && e.stdin.as_ref().is_some_and(|s| s.len() >= LARGE_STDIN))
    }

    /// The same session without the large input of commands that failed and changed nothing
    /// (a manifest kubectl could not read, say): each such entry keeps its line and time and
    /// is marked `skipped`. Replaying the result gives the same cluster, entry by entry — this
    /// replays the journal on `lesson`'s start (as `replay_in`) and leaves out only entries
    /// whose command failed with the cluster's fingerprint unchanged. None: nothing to leave out.
    pub fn compact(&self, lesson: Option<&crate::lessons::Lesson>) -> Option<Journal> {
        if !self.has_large_input(0) {
            return None;
        }
        let mut session = match lesson {
            Some(lesson) => lesson.start(),
            None => self.fresh_session(),
        };
        let mut compacted = self.clone();
        let mut changed = false;
        for (entry, kept) in self.entries.iter().zip(compacted.entries.iter_mut()) {
            advance_to(&mut session, Time(entry.at));
            if entry.line.is_empty() {
                session.cluster.step();
                continue;
            }
            if entry.skipped {
                continue;
            }
            let heredoc = entry.stdin.clone().map(|body| ("EOF".to_string(), body));
            let large = heredoc.as_ref().is_some_and(|(_, body)| body.len() >= LARGE_STDIN);
            let command = Command { line: entry.line.clone(), heredoc };
            let before = large.then(|| fingerprint(&session));
            let out = if entry.beside { session.execute_beside(&command) } else { session.execute(&command) };
            if let Some(before) = before {
                if out.code != 0 && fingerprint(&session) == before {
                    kept.stdin = None;
                    kept.skipped = true;
                    changed = true;
                }
            }
        }
        changed.then_some(compacted)
    }
}

fn advance_to(session: &mut Session, t: Time) {
    let now = session.cluster.now();
    if t > now {
        session.cluster.advance(Duration(t.0 - now.0));
    }
}

/// Runs the cluster to `t` as `advance_to` does, stopping when `more` says so (see
/// `Cluster::advance_to_while`); whether it got there. `started` says an earlier call stopped
/// on the way to `t`: it goes on from there (a step may have brought the clock to `t` with more
/// steps due at `t`), where a fresh call to a time already reached does nothing.
fn advance_while(session: &mut Session, t: Time, started: &mut bool, more: &mut dyn FnMut() -> bool) -> bool {
    if !*started && t <= session.cluster.now() {
        return true;
    }
    *started = !session.cluster.advance_to_while(t, more);
    !*started
}

/// A journal's replay under way (see [`Journal::replay_begin`]).
pub struct Replay {
    /// The session as far as the replay has come.
    pub session: Session,
    /// The next entry to run.
    next: usize,
    /// It stopped on its way to the next entry's time (or the end's).
    advancing: bool,
    finished: bool,
}

impl Replay {
    /// How far it has come, 0..1: the virtual time reached of the time the journal reaches.
    pub fn progress(&self, journal: &Journal) -> f64 {
        if self.finished {
            return 1.0;
        }
        let end = journal.entries.last().map_or(0, |e| e.at).max(journal.now).max(1);
        (self.session.cluster.now().0 as f64 / end as f64).clamp(0.0, 0.99)
    }
}

fn base64url(bytes: &[u8]) -> String {
    crate::util::base64::encode_with(bytes, crate::util::base64::URL_SAFE, false)
}

fn unbase64url(text: &str) -> Option<Vec<u8>> {
    crate::util::base64::decode_with(text, crate::util::base64::URL_SAFE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_run_in_pieces_builds_the_same_session_as_one_run() {
        let mut journal = Journal::new(3);
        let at = |s: u64| Time(60_000 + s * 1000);
        journal.command(at(0), &Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=2"));
        journal.command(
            at(1),
            &Command::new("kubectl create cronjob tick --image=busybox --schedule='* * * * *' -- date"),
        );
        journal.command(at(2), &Command::new("sleep 3m"));
        journal.step(at(200));
        journal.command(at(260), &Command::new("kubectl scale deployment web --replicas=4"));
        journal.now = at(400).0;
        let whole = journal.replay_in(None, Some(Time(journal.now)), |_, _, _| {});
        for every in [1, 7, 50] {
            let mut replay = journal.replay_begin(None);
            let (mut calls, mut pieces, mut lines) = (0, 0, 0);
            let mut last = 0.0;
            while !journal.replay_more(
                &mut replay,
                Some(Time(journal.now)),
                &mut || {
                    calls += 1;
                    calls % every != 0
                },
                &mut |_, _, _| lines += 1,
            ) {
                pieces += 1;
                let p = replay.progress(&journal);
                assert!(p >= last && p < 1.0, "{p} after {last}");
                last = p;
            }
            assert!(pieces > 0 || every > 1000);
            assert_eq!(lines, 4, "each command shown once");
            assert_eq!(replay.progress(&journal), 1.0);
            let s = &replay.session;
            assert_eq!(
                (s.cluster.now(), s.cluster.record.last_seq()),
                (whole.cluster.now(), whole.cluster.record.last_seq()),
                "in pieces of {every}"
            );
            let names = |s: &Session| {
                s.cluster
                    .objects(crate::api::Kind::Pod, "default")
                    .iter()
                    .map(|p| p.name().to_string())
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(s), names(&whole));
        }
    }

    #[test]
    fn base64url_round_trips_every_length() {
        for len in 0..20 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(unbase64url(&base64url(&bytes)).unwrap(), bytes);
        }
        assert_eq!(unbase64url("!!"), None);
    }

    #[test]
    fn a_replayed_journal_rebuilds_the_same_pods_with_the_same_names() {
        let mut original = Session::new(7);
        let mut journal = Journal::new(7);
        let create = Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=3");
        journal.command(original.cluster.now(), &create);
        original.execute(&create);
        // The clock plays for a while, then a pod is deleted.
        original.cluster.advance(Duration::seconds(20));
        let pod = original.cluster.objects(crate::api::Kind::Pod, "default")[0].name().to_string();
        let delete = Command::new(&format!("kubectl delete pod {pod} --wait=false"));
        journal.command(original.cluster.now(), &delete);
        original.execute(&delete);
        journal.step(original.cluster.now());
        original.cluster.step();
        original.cluster.advance(Duration::seconds(15));

        let shared = Journal::decode(&journal.encode()).expect("the link decodes");
        let replayed = shared.replay(Some(original.cluster.now()));
        let names = |s: &Session| {
            s.cluster.objects(crate::api::Kind::Pod, "default").iter().map(|p| p.name().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(names(&replayed), names(&original));
        assert_eq!(replayed.cluster.inspect().etcd().revision(), original.cluster.inspect().etcd().revision());
    }

    #[test]
    fn a_replay_stops_at_its_cap_however_the_commands_let_time_pass() {
        let entries =
            (0..50).map(|_| Entry { at: 70_000, line: "sleep 5m".into(), stdin: None, beside: false, skipped: false });
        let journal = Journal { entries: entries.collect(), ..Journal::new(3) };
        let cap = Time(20 * 60_000);
        let mut ran = 0;
        let session = journal.replay_within(None, Some(Time(u64::MAX)), cap, |_, _, _| ran += 1);
        // From 70 s, sleeps of five minutes until the clock is past 20 minutes.
        assert_eq!((ran, session.cluster.now()), (4, Time(70_000 + 4 * 300_000)));
    }

    #[test]
    fn garbage_is_not_a_journal() {
        assert_eq!(Journal::decode("not base64 at all!"), None);
        assert_eq!(Journal::decode(&base64url(b"{\"seed\":\"x\"}")), None);
    }

    /// About `mb` megabytes of a typical manifest: a ConfigMap of many short lines.
    fn big_config_map(mb: f64, broken: bool) -> String {
        let mut yaml = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n");
        let mut i = 0;
        while (yaml.len() as f64) < mb * 1_000_000.0 {
            yaml.push_str(&format!("  key-{i}: \"a value, with \\\"quotes\\\" and words {i}\"\n"));
            i += 1;
        }
        if broken {
            yaml.push_str("  bad: [unclosed\n\tand a tab\n");
        }
        yaml
    }

    fn run(session: &mut Session, journal: &mut Journal, line: &str, stdin: Option<&str>) -> i32 {
        let command = Command { line: line.into(), heredoc: stdin.map(|s| ("EOF".into(), s.into())) };
        journal.command(session.cluster.now(), &command);
        session.execute(&command).code
    }

    fn state(s: &Session) -> (i64, u64, u64, Vec<String>, usize) {
        let pods = s.cluster.objects(crate::api::Kind::Pod, "default").iter().map(|p| p.name().to_string()).collect();
        (
            s.cluster.inspect().etcd().revision(),
            s.cluster.record.last_seq(),
            s.cluster.now().0,
            pods,
            s.cluster.record.entries().len(),
        )
    }

    #[test]
    fn a_failed_megabyte_apply_is_left_out_of_the_saved_session_and_replay_is_the_same() {
        let mut original = Session::new(3);
        let mut journal = Journal::new(3);
        assert_eq!(
            run(&mut original, &mut journal, "kubectl create deployment web --image=nginx --replicas=2", None),
            0
        );
        original.cluster.advance(Duration::seconds(5));
        let broken = big_config_map(1.0, true);
        assert_ne!(run(&mut original, &mut journal, "kubectl apply -f -", Some(&broken)), 0, "the manifest is broken");
        original.cluster.advance(Duration::seconds(3));
        journal.step(original.cluster.now());
        original.cluster.step();
        assert_eq!(run(&mut original, &mut journal, "kubectl scale deployment web --replicas=4", None), 0);
        original.cluster.advance(Duration::seconds(20));
        journal.now = original.cluster.now().0;

        let compacted = journal.compact(None).expect("the failed apply is left out");
        assert!(compacted.entries[1].skipped && compacted.entries[1].stdin.is_none());
        assert_eq!(compacted.entries[1].line, "kubectl apply -f -");
        assert!(compacted.to_storage().len() < 2_000, "{} bytes", compacted.to_storage().len());
        assert!(journal.to_storage().len() > 1_000_000);
        // Same cluster, through the storage form, as the original and as the full journal.
        let read = Journal::from_storage(&compacted.to_storage()).unwrap();
        let mut shown = Vec::new();
        let replayed =
            read.replay_showing(Some(original.cluster.now()), |c, _, o| shown.push((c.line.clone(), o.code)));
        assert_eq!(state(&replayed), state(&original));
        assert_eq!(state(&journal.replay(Some(original.cluster.now()))), state(&original));
        assert_eq!(shown[1], ("kubectl apply -f -".to_string(), 1), "the line still shows, as failed");
        // Nothing more to leave out.
        assert_eq!(compacted.compact(None), None);
    }

    #[test]
    fn a_large_apply_that_reached_the_cluster_is_kept() {
        let mut session = Session::new(3);
        let mut journal = Journal::new(3);
        assert_eq!(run(&mut session, &mut journal, "kubectl apply -f -", Some(&big_config_map(0.1, false))), 0);
        assert!(journal.has_large_input(0));
        assert_eq!(journal.compact(None), None, "a successful apply changed the cluster: kept");
    }

    /// Measured: what one MB of manifest costs a saved session (JSON) and a link (base64).
    #[test]
    fn a_megabyte_of_manifest_costs_about_a_megabyte_saved_and_a_third_more_in_a_link() {
        let mut journal = Journal::new(1);
        let yaml = big_config_map(1.0, false);
        journal.command(
            Time::ZERO,
            &Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), yaml.clone())) },
        );
        let mb = yaml.len() as f64 / 1e6;
        let saved = journal.to_storage().len() as f64 / 1e6 / mb;
        let link = journal.encode().len() as f64 / 1e6 / mb;
        println!("per MB of manifest: saved {saved:.2} MB, link {link:.2} MB");
        assert!((1.0..1.2).contains(&saved), "{saved}");
        assert!((1.3..1.6).contains(&link), "{link}");
        assert_eq!(Journal::from_storage(&journal.to_storage()), Some(journal.clone()));
        assert_eq!(Journal::from_storage(&journal.encode()), Some(journal));
    }
}
