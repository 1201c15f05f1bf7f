//! A page session as it can be kept and shared: the seed, and each command with the virtual
//! time it ran at (time passes between commands while the clock plays), plus the single
//! steps taken. Replaying it rebuilds the same cluster — same names, same events — which is
//! how a reload keeps the student's work and a link shows someone else the same sandbox.

use crate::kubectl::Output;
use crate::limits::{JOURNAL_MAX_ENCODED, JOURNAL_MAX_ENTRIES, JOURNAL_MAX_TEXT, JOURNAL_TIME_CAP};
use crate::shell::{Command, Session};
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
}

impl Journal {
    pub fn new(seed: u64) -> Journal {
        Journal { seed, entries: Vec::new(), now: 0, lesson: None, progress: None }
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
        self.entries.push(Entry { at: now.0, line: command.line.clone(), stdin, beside });
    }

    /// Notes a single step of the clock taken at `now`.
    pub fn step(&mut self, now: Time) {
        self.entries.push(Entry { at: now.0, line: String::new(), stdin: None, beside: false });
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
        let mut session = match lesson {
            Some(lesson) => lesson.start(),
            None => Session::new(self.seed),
        };
        // A journal read with `decode_checked` stays within the cap; one built by hand, or
        // commands that let time pass (each at most `COMMAND_TIME_CAP`), stop the replay there.
        for entry in self.entries.iter().take(JOURNAL_MAX_ENTRIES) {
            if Time(entry.at) > cap || session.cluster.now() > cap {
                break;
            }
            advance_to(&mut session, Time(entry.at));
            if entry.line.is_empty() {
                session.cluster.step();
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
        }
        if let Some(t) = until {
            advance_to(&mut session, t.min(cap));
        }
        session
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
    /// ([`crate::limits`]).
    pub fn decode_checked(text: &str) -> Result<Journal, JournalError> {
        let text = text.trim();
        if text.len() > JOURNAL_MAX_ENCODED {
            return Err(JournalError::TooLarge { bytes: text.len() });
        }
        let bytes = unbase64url(text).ok_or(JournalError::NotAJournal)?;
        let journal: Journal = serde_json::from_slice(&bytes).map_err(|_| JournalError::NotAJournal)?;
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

fn advance_to(session: &mut Session, t: Time) {
    let now = session.cluster.now();
    if t > now {
        session.cluster.advance(Duration(t.0 - now.0));
    }
}

fn base64url(bytes: &[u8]) -> String {
    crate::base64::encode_with(bytes, crate::base64::URL_SAFE, false)
}

fn unbase64url(text: &str) -> Option<Vec<u8>> {
    crate::base64::decode_with(text, crate::base64::URL_SAFE)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(replayed.cluster.api().etcd().revision(), original.cluster.api().etcd().revision());
    }

    #[test]
    fn a_replay_stops_at_its_cap_however_the_commands_let_time_pass() {
        let entries = (0..50).map(|_| Entry { at: 70_000, line: "sleep 5m".into(), stdin: None, beside: false });
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
}
