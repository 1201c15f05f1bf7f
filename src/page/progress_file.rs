//! A student's course progress as one file: every lesson's saved session (its journal, with
//! the lesson's progress inside) and the sandbox's, to download on one computer and load on
//! another. Loading never loses work: a lesson is taken from the file only where the file has
//! got further in it than the browser has.

use crate::lessons::Progress;
use crate::page::journal::Journal;
use crate::sim::limits::JOURNAL_MAX_ENCODED;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the file says it is.
pub const FORMAT: &str = "kubeloop-progress/1";
/// Where a lesson's session is kept in the browser: this, then the lesson's id.
pub const LESSON_PREFIX: &str = "kubeloop.lesson.";
/// Where the sandbox's own session is kept.
pub const SANDBOX_KEY: &str = "kubeloop.session";
/// The most sessions a file may hold (a course's lessons and incidents, with room to grow).
const MAX_SESSIONS: usize = 500;

/// The file: its format, and each saved session by its storage key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProgressFile {
    pub format: String,
    pub sessions: BTreeMap<String, String>,
}

/// Whether `key` is where the page keeps a session it should carry.
pub fn is_session_key(key: &str) -> bool {
    key == SANDBOX_KEY
        || key.strip_prefix(LESSON_PREFIX).is_some_and(|id| crate::lessons::is_valid_id(id) && !id.ends_with(".shared"))
}

/// The file for these stored sessions (keys the page does not keep are left out).
pub fn encode(stored: &BTreeMap<String, String>) -> String {
    let sessions = stored.iter().filter(|(k, _)| is_session_key(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    serde_json::to_string_pretty(&ProgressFile { format: FORMAT.into(), sessions }).unwrap_or_default()
}

/// Reads a progress file, refusing what is not one: a file is untrusted input, bounded as a
/// shared link is, and every session in it must read as one.
pub fn decode(text: &str) -> Result<ProgressFile, String> {
    if text.len() > JOURNAL_MAX_ENCODED * 8 {
        return Err(format!("the file is too large to be a progress file ({} bytes)", text.len()));
    }
    let file: ProgressFile =
        serde_json::from_str(text).map_err(|_| "this is not a kubeloop progress file".to_string())?;
    if file.format != FORMAT {
        return Err(format!("this is not a kubeloop progress file (format \"{}\")", file.format));
    }
    if file.sessions.len() > MAX_SESSIONS {
        return Err(format!("the file holds {} sessions; at most {MAX_SESSIONS} are read", file.sessions.len()));
    }
    if let Some((key, _)) = file.sessions.iter().find(|(k, v)| !is_session_key(k) || Journal::from_storage(v).is_none())
    {
        return Err(format!("the file's session \"{key}\" cannot be read"));
    }
    Ok(file)
}

/// How far a saved session got in its lesson: steps complete, and steps in all (None: no
/// lesson progress in it).
pub fn steps_done(saved: &str) -> Option<(usize, usize)> {
    let journal = Journal::from_storage(saved)?;
    let progress: Progress = serde_json::from_str(journal.progress.as_deref()?).ok()?;
    Some((progress.steps.iter().filter(|s| s.complete).count(), progress.steps.len()))
}

/// The sessions to store from `file`, given what the browser has: each one the browser lacks,
/// and each lesson the file got further in. The sandbox's session is taken only when the
/// browser has none (it has no progress to compare).
pub fn merge(stored: &BTreeMap<String, String>, file: &ProgressFile) -> Vec<(String, String)> {
    file.sessions
        .iter()
        .filter(|(key, text)| match stored.get(*key) {
            None => true,
            Some(_) if *key == SANDBOX_KEY => false,
            Some(mine) => {
                let done = |t: &str| steps_done(t).map_or(0, |(d, _)| d);
                done(text) > done(mine)
            }
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(lesson: &str, done: usize, total: usize) -> String {
        let progress = Progress {
            lesson: lesson.into(),
            steps: (0..total)
                .map(|i| crate::lessons::StepProgress { complete: i < done, ..Default::default() })
                .collect(),
            ..Progress::default()
        };
        let journal = Journal {
            lesson: Some(lesson.into()),
            progress: Some(serde_json::to_string(&progress).unwrap()),
            ..Journal::new(1)
        };
        journal.to_storage()
    }

    fn map(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn a_file_carries_the_sessions_of_the_course_and_nothing_else() {
        let stored = map(&[
            ("kubeloop.lesson.03-reconcile", saved("03-reconcile", 2, 5)),
            ("kubeloop.session", Journal::new(4).to_storage()),
            ("kubeloop.lesson.03-reconcile.shared", saved("03-reconcile", 5, 5)),
            ("something-else", "x".into()),
        ]);
        let file = decode(&encode(&stored)).unwrap();
        assert_eq!(file.sessions.keys().collect::<Vec<_>>(), ["kubeloop.lesson.03-reconcile", "kubeloop.session"]);
        assert_eq!(steps_done(&file.sessions["kubeloop.lesson.03-reconcile"]), Some((2, 5)));
    }

    #[test]
    fn loading_takes_only_lessons_the_file_got_further_in_and_never_replaces_the_sandbox() {
        let stored = map(&[
            ("kubeloop.lesson.a", saved("a", 3, 4)),
            ("kubeloop.lesson.b", saved("b", 1, 4)),
            ("kubeloop.session", Journal::new(1).to_storage()),
        ]);
        let file = ProgressFile {
            format: FORMAT.into(),
            sessions: map(&[
                ("kubeloop.lesson.a", saved("a", 2, 4)),
                ("kubeloop.lesson.b", saved("b", 4, 4)),
                ("kubeloop.lesson.c", saved("c", 1, 2)),
                ("kubeloop.session", Journal::new(9).to_storage()),
            ]),
        };
        let taken: Vec<String> = merge(&stored, &file).into_iter().map(|(k, _)| k).collect();
        assert_eq!(taken, ["kubeloop.lesson.b", "kubeloop.lesson.c"]);
    }

    #[test]
    fn a_file_that_is_not_a_progress_file_is_refused_with_a_reason() {
        assert_eq!(decode("not json").unwrap_err(), "this is not a kubeloop progress file");
        assert!(decode(r#"{"format":"other","sessions":{}}"#).unwrap_err().contains("format \"other\""));
        let bad = format!(r#"{{"format":"{FORMAT}","sessions":{{"kubeloop.lesson.x":"garbage"}}}}"#);
        assert_eq!(decode(&bad).unwrap_err(), "the file's session \"kubeloop.lesson.x\" cannot be read");
        let foreign = format!(r#"{{"format":"{FORMAT}","sessions":{{"../etc":"{{}}"}}}}"#);
        assert!(decode(&foreign).is_err());
        assert!(decode(&"x".repeat(JOURNAL_MAX_ENCODED * 8 + 1)).unwrap_err().contains("too large"));
    }
}
