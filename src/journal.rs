//! A page session as it can be kept and shared: the seed, and each command with the virtual
//! time it ran at (time passes between commands while the clock plays), plus the single
//! steps taken. Replaying it rebuilds the same cluster — same names, same events — which is
//! how a reload keeps the student's work and a link shows someone else the same sandbox.

use crate::kubectl::Output;
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
        mut shown: impl FnMut(&Command, Option<&str>, &Output),
    ) -> Session {
        let mut session = match lesson {
            Some(lesson) => lesson.start(),
            None => Session::new(self.seed),
        };
        for entry in &self.entries {
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
            advance_to(&mut session, t);
        }
        session
    }

    /// The journal as text for a link or storage: URL-safe base64 of its JSON.
    pub fn encode(&self) -> String {
        base64url(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }

    /// Reads what `encode` wrote; None for anything else (a mangled link never breaks the page).
    pub fn decode(text: &str) -> Option<Journal> {
        let bytes = unbase64url(text.trim())?;
        serde_json::from_slice(&bytes).ok()
    }
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
    fn garbage_is_not_a_journal() {
        assert_eq!(Journal::decode("not base64 at all!"), None);
        assert_eq!(Journal::decode(&base64url(b"{\"seed\":\"x\"}")), None);
    }
}
