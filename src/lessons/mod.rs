//! Lessons: Markdown files in `lessons/` read into steps with checks written in the sandbox's
//! command language, evaluated against the live cluster without leaving a trace.
//!
//! For the page: [`course`] lists the built-in lessons, [`Lesson::start`] builds the starting
//! session, and [`Progress`] tracks and evaluates the student's way through it.

pub mod check;
pub mod markdown;
pub mod model;
pub mod parse;
pub mod progress;
pub mod runner;

pub use model::{Check, CheckResult, Expect, Lesson, LessonError, Part, Prediction, Step, Test};
pub use parse::parse;
pub use progress::{Evaluation, Progress, StepProgress};
pub use runner::{LessonRun, StepRun, run_solution};

use crate::shell::Session;

mod index {
    include!(concat!(env!("OUT_DIR"), "/lessons_index.rs"));
}

/// Every lesson file built in (path, text), in file-name order: `lessons/*.md` but the README
/// and the template. A new lesson is a new file there; nothing in Rust changes.
pub fn builtin() -> &'static [(&'static str, &'static str)] {
    index::BUILTIN
}

/// One entry of the course's table of contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The lesson's id: its file name without `.md` (`03-reconcile`).
    pub id: &'static str,
    pub title: &'static str,
    pub summary: &'static str,
    /// The track it belongs to (the default track when its front matter names none).
    pub track: &'static str,
}

/// The built-in course's table of contents, in order: all the page carries of the lessons
/// until the student opens one (then it fetches `lessons/<id>.md`, see [`from_source`]).
pub fn index() -> Vec<Entry> {
    index::INDEX
        .iter()
        .map(|&(id, title, summary, track)| Entry {
            id,
            title,
            summary,
            track: if track.is_empty() { model::DEFAULT_TRACK } else { track },
        })
        .collect()
}

/// The course's tracks in the order their first lesson comes, each with its lessons.
pub fn tracks() -> Vec<(&'static str, Vec<Entry>)> {
    let mut tracks: Vec<(&'static str, Vec<Entry>)> = Vec::new();
    for entry in index() {
        match tracks.iter_mut().find(|(t, _)| *t == entry.track) {
            Some((_, entries)) => entries.push(entry),
            None => tracks.push((entry.track, vec![entry])),
        }
    }
    tracks
}

/// Whether `id` can name a lesson file: letters, digits, `-` and `_` only, so an address's
/// `?lesson=` can never reach outside the site's `lessons/` folder.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 100 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A lesson read from its Markdown source, as the page loads it: `lessons/<id>.md`.
pub fn from_source(id: &str, text: &str) -> Result<Lesson, LessonError> {
    parse(&format!("lessons/{id}.md"), text)
}

/// The built-in course, in order. A lesson that does not parse is left out (the tests make
/// sure none is).
pub fn course() -> Vec<Lesson> {
    builtin().iter().filter_map(|(file, text)| parse(file, text).ok()).collect()
}

/// A built-in lesson by id (`03-reconcile`) or path. Native only in effect: the page fetches
/// a lesson's text rather than carrying every one (see [`index`]).
pub fn find(id: &str) -> Option<Lesson> {
    let (file, text) = builtin()
        .iter()
        .find(|(file, _)| *file == id || file.rsplit('/').next().and_then(|n| n.strip_suffix(".md")) == Some(id))?;
    parse(file, text).ok()
}

impl Lesson {
    /// The session the lesson begins in: its cluster, its manifests as files, its set-up run.
    /// The set-up commands are the first `self.setup.len()` entries of `session.log()`.
    pub fn start(&self) -> Session {
        let mut session = Session::with_config(self.cluster.clone());
        for (name, text) in self.files() {
            session.files.insert(name.to_string(), text.to_string());
        }
        for command in &self.setup {
            session.execute(command);
        }
        session
    }

    /// A saved session of this lesson restored: the lesson started again, then the student's
    /// commands (the session's log after the set-up) replayed. The same seed and commands give
    /// the same cluster and record, so a saved [`Progress`] still fits it.
    pub fn resume(&self, commands: &[crate::shell::Command]) -> Session {
        let mut session = self.start();
        for command in commands {
            session.execute(command);
        }
        session
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_carries_every_lessons_id_title_summary_and_track_as_its_file_says() {
        let course = course();
        let index = index();
        assert_eq!(index.len(), builtin().len(), "every built-in lesson is in the index");
        assert_eq!(course.len(), index.len());
        for (entry, lesson) in index.iter().zip(&course) {
            assert_eq!(
                (entry.id, entry.title, entry.summary, entry.track),
                (lesson.id.as_str(), lesson.title.as_str(), lesson.summary.as_str(), lesson.track.as_str())
            );
        }
    }

    #[test]
    fn a_lesson_read_from_its_source_is_the_built_in_one() {
        let (file, text) = builtin()[2];
        let id = file.trim_start_matches("lessons/").trim_end_matches(".md");
        let loaded = from_source(id, text).expect("parses");
        assert_eq!(loaded.id, find(id).expect("built in").id);
        assert_eq!(loaded.steps.len(), find(id).expect("built in").steps.len());
    }

    #[test]
    fn a_lesson_id_cannot_leave_the_lessons_folder() {
        assert!(is_valid_id("03-reconcile"));
        assert!(is_valid_id("my_course-lesson2"));
        for bad in ["", "../secret", "a/b", "x.md", "https://evil.example/x", "%2e%2e", "a b"] {
            assert!(!is_valid_id(bad), "{bad:?}");
        }
    }
}
