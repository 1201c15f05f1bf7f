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

pub use model::{Check, CheckResult, Expect, Lesson, LessonError, Part, Step, Test};
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

/// The built-in course, in order. A lesson that does not parse is left out (the tests make
/// sure none is).
pub fn course() -> Vec<Lesson> {
    builtin().iter().filter_map(|(file, text)| parse(file, text).ok()).collect()
}

/// A built-in lesson by id (`03-reconcile`) or path.
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
