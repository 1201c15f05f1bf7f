//! What the page asks of the simulation, and what comes back: plain data, serializable, so
//! that it can cross `postMessage` to a worker.

use super::frame::{Frame, FrameQuery};
use crate::page::journal::Journal;
use crate::page::terminal::Line;
use serde::{Deserialize, Serialize};

/// A lesson as the simulation needs it to replay a session of it: its id and Markdown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LessonSource {
    pub id: String,
    pub markdown: String,
}

/// What the page asks the simulation to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SimRequest {
    /// Runs a command line, with `stdin` as its standard input when given (the editor's
    /// text). `beside`: from a page control, as from a second terminal, so a container shell
    /// the terminal is attached to does not see it.
    Run { line: String, stdin: Option<String>, beside: bool },
    /// Runs the next component that is due.
    Step,
    /// Moves virtual time on by `virtual_ms`, unless that takes more than `budget_ms` of real
    /// time: then the clock stops where the work stopped (the next request carries on).
    Advance { virtual_ms: u64, budget_ms: f64 },
    /// Runs virtual time until the cluster has nothing left to do (`sim settle`).
    Settle,
    /// A fresh cluster of this seed.
    Reset { seed: u64 },
    /// Replays a saved session (of a lesson, when it is given) in place of this one.
    Load { journal: Journal, lesson: Option<LessonSource> },
    /// What the next frames carry: the moment shown, the map's board, the views opened.
    View(FrameQuery),
    /// Nothing done: just the frame.
    Frame,
}

/// What a command printed, and how it exited.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandOutput {
    pub stdout: String,
    pub stderr: String,
    pub warnings: String,
    pub code: i32,
}

impl From<&crate::kubectl::Output> for CommandOutput {
    fn from(out: &crate::kubectl::Output) -> Self {
        CommandOutput {
            stdout: out.stdout.clone(),
            stderr: out.stderr.clone(),
            warnings: out.warnings.clone(),
            code: out.code,
        }
    }
}

impl CommandOutput {
    /// Back to the shell's own type (for the terminal's printing of it).
    pub fn to_output(&self) -> crate::kubectl::Output {
        crate::kubectl::Output {
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
            warnings: self.warnings.clone(),
            code: self.code,
            attach: None,
        }
    }
}

/// The simulation's answer: what a command printed (or a replay showed), and the frame to draw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimReply {
    pub output: Option<CommandOutput>,
    /// A replayed session's terminal: its commands and what they printed.
    pub replayed: Option<Vec<Line>>,
    /// A container shell's session that ended as time passed: what kubectl printed then.
    pub ended: Option<CommandOutput>,
    pub frame: Frame,
}
