//! What the page asks of the simulation, and what comes back: plain data, serializable, so
//! that it crosses `postMessage` to the worker the simulation runs in.

use super::frame::{Frame, FrameQuery};
use crate::lessons::{CheckResult, Progress};
use crate::page::journal::Journal;
use crate::page::terminal::Line;
use crate::shell::completion::Completion;
use crate::views::overview::{ChainStep, Inspection};
use serde::{Deserialize, Serialize};

/// A lesson as the simulation needs it to replay a session of it: its id and Markdown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LessonSource {
    pub id: String,
    pub markdown: String,
}

/// The page's clock as the simulation must know it: whether it plays, how fast, and whether
/// at the teaching pace (where virtual time waits for the map's story).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockSettings {
    pub playing: bool,
    /// Virtual time per real time, when not at the teaching pace.
    pub speed: f64,
    pub teaching: bool,
    /// Presenter mode's slow motion.
    pub presenter: bool,
}

impl Default for ClockSettings {
    fn default() -> Self {
        ClockSettings { playing: false, speed: 1.0, teaching: false, presenter: false }
    }
}

/// What the page asks the simulation to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SimRequest {
    /// Replays a saved session (of a lesson, when it is given) in place of this one, and opens
    /// the lesson at `step` (from 1) when given. A journal with nothing in it is a fresh
    /// cluster of its seed.
    Load { journal: Journal, lesson: Option<LessonSource>, step: Option<usize> },
    /// Goes on with a replay that `Load` (or the last `LoadMore`) left under way.
    LoadMore,
    /// A fresh cluster of this seed (and a fresh journal).
    Reset { seed: u64 },
    /// Runs a command line, with `stdin` as its standard input when given (the editor's
    /// text), and keeps it in the journal. `to_shell`: typed at the prompt of the container
    /// shell the terminal is attached to, which sees it; otherwise it runs beside that shell,
    /// as from a second terminal, and may open a live `kubectl get -w` or a `kubectl edit`.
    Run { line: String, stdin: Option<String>, to_shell: bool },
    /// `kubectl edit`'s save: what changed between the text opened and the editor's text
    /// goes as a patch.
    EditSave { opened: String, text: String },
    /// Runs the next component that is due.
    Step,
    /// Runs virtual time until the cluster has nothing left to do (`sim settle`), and the
    /// map's story skips to the present.
    Settle,
    /// The page's animation clock is at `now_ms` (real milliseconds, the page's own clock):
    /// when playing, virtual time moves on by a tick of the chosen speed (within a budget of
    /// real time), or, at the teaching pace, as far as the map's next hop; the map's messages
    /// move on; a live watch's rows come in.
    Tick { now_ms: f64 },
    /// What the frames carry (the moment shown, the views opened) and how the clock runs.
    Settings { query: FrameQuery, clock: ClockSettings },
    /// The inspector on `kind/name` (or a bare pod name).
    Inspect(String),
    /// The chain the latest kubectl write set off.
    Follow,
    /// Sends the message of one record entry across the map at once, alone.
    Spotlight { seq: u64, now_ms: f64 },
    /// Tab completion of the input line.
    Complete(String),
    /// Ctrl-C: a live `kubectl get -w` stops.
    Interrupt,
    /// The lesson's step chosen (from 0).
    LessonGo(usize),
    /// The student's answer to step `step`'s prediction.
    Predict { step: usize, answer: String },
    /// The objects the student created, as a file for `kubectl apply -f`.
    Export,
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

/// `kubectl edit` opened an object: its YAML as opened, and what was asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Opened {
    pub what: String,
    pub text: String,
}

/// The file the export button offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportFile {
    pub text: String,
    pub objects: usize,
}

/// What changed in the simulation's journal, for the page's copy (which it saves, and may
/// compact in place: entries are only ever added, so the page's edits of earlier ones stay).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum JournalChange {
    /// A new journal (a session loaded, a reset).
    Replace(Journal),
    /// Entries added at the end, and the lesson's progress as it now stands.
    Append { entries: Vec<crate::page::journal::Entry>, progress: Option<String> },
}

impl JournalChange {
    /// The page's copy brought up to date.
    pub fn apply_to(self, copy: &mut Journal) {
        match self {
            JournalChange::Replace(journal) => *copy = journal,
            JournalChange::Append { entries, progress } => {
                copy.entries.extend(entries);
                copy.progress = progress;
            }
        }
    }
}

/// The lesson's progress and what its checks say now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LessonFrame {
    pub progress: Progress,
    pub results: Vec<CheckResult>,
    /// For each step, the sentence of the record entry that says why its prediction came out
    /// as it did (None: no prediction, or not answered yet).
    pub reasons: Vec<Option<String>>,
}

/// The simulation's answer: what a command printed (or a replay showed), what the page asked
/// to see, the journal and the lesson when they changed, and the frame to draw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimReply {
    pub output: Option<CommandOutput>,
    /// A live `kubectl get -w` started (its first rows are the output); its further rows
    /// come as `watch_rows`.
    pub watching: bool,
    /// Rows a live watch printed since the last reply.
    pub watch_rows: Option<String>,
    /// `kubectl edit` opened this in the editor.
    pub opened: Option<Opened>,
    /// A replayed session's terminal: its commands and what they printed.
    pub replayed: Option<Vec<Line>>,
    /// A long replay is under way, this far (0..1): ask `LoadMore` for the rest.
    pub loading: Option<f64>,
    /// A container shell's session that ended as time passed: what kubectl printed then.
    pub ended: Option<CommandOutput>,
    pub completion: Option<Completion>,
    pub inspection: Option<Inspection>,
    pub following: Option<Vec<ChainStep>>,
    pub export: Option<ExportFile>,
    /// What changed in the journal since the last reply.
    pub journal: Option<JournalChange>,
    /// The lesson, when its progress or results changed since the last reply.
    pub lesson: Option<LessonFrame>,
    pub frame: Frame,
}
