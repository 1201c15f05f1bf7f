//! What the page holds: the latest frame the simulation sent (and the journal it keeps, for
//! saving), the terminal, the clock's settings, the lesson, the editor's outcome, what the
//! student opened (inspector, followed apply, a view from the map, a past revision), the
//! storage's status, and the requests on their way to the simulation.

use super::terminal::{Editing, Line, push_output};
use crate::editor::errors::Mark;
use crate::lessons::{CheckResult, Lesson, Progress};
use crate::page::journal::Journal;
use crate::page::sim::{ClockSettings, DetailFrame, FlowFrame, FrameQuery, LessonSource};
use crate::page::snapshot::Snapshot;
use crate::record::Seq;
use crate::shell::Command;
use crate::views::map::Board;
use crate::views::overview::{ChainStep, Inspection};
use crate::views::sequence::Sequence;
use crate::views::speed::SpeedMeter;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The speeds the page offers, with their labels (the teaching pace aside).
pub const SPEEDS: &[(f64, &str)] =
    &[(0.25, "0.25×"), (0.5, "0.5×"), (1.0, "1×"), (2.0, "2×"), (5.0, "5×"), (10.0, "10×"), (100.0, "100×")];

/// What the page is opened with (from its address, or a test).
#[derive(Clone, Debug, Default)]
pub struct PageConfig {
    pub seed: u64,
    pub start_paused: bool,
    /// A session to pick up: from a shared link or the last visit.
    pub journal: Option<Journal>,
    /// The lesson the address names.
    pub lesson: Option<String>,
    /// Its Markdown as fetched, or why it could not be.
    pub lesson_source: Option<Result<Rc<str>, String>>,
    /// The lesson's step to open, from 1.
    pub step: Option<usize>,
    /// Show the course's index beside the sandbox.
    pub show_index: bool,
    /// The storage's status when the page opens (a refused shared link says so at once).
    pub storage: StorageStatus,
}

/// What the last save did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StorageStatus {
    #[default]
    Saved,
    /// The browser refused to store `bytes` characters: its storage for the page is full.
    Full { bytes: usize },
    /// The browser gives the page no storage (private browsing, blocked site data).
    Unavailable,
    /// Another tab opened the session since: this one does not save.
    OtherTab,
    /// The file the student opened is not a saved session (nothing changed).
    NotASession,
    /// A shared link (or a saved session) the sandbox will not replay, and why: the page
    /// opened without it.
    Refused(String),
}

/// Which events the stream shows: by component (FROM), by kind, by object name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventFilter {
    pub from: String,
    pub kind: String,
    pub object: String,
}

/// A view opened from the map.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Detail {
    /// The scheduler's decision for a pod (`namespace/name`), or its latest.
    Scheduler(Option<String>),
    Etcd,
    /// A controller's reconciliation loop, for one of its objects.
    Controller(String, Option<String>),
}

impl Detail {
    /// The view a click on the map names (`scheduler`, `etcd`, `scheduler/POD`,
    /// `controller/NAME`).
    pub fn from_pick(what: &str) -> Option<Detail> {
        match what.split_once('/') {
            _ if what == "scheduler" => Some(Detail::Scheduler(None)),
            _ if what == "etcd" => Some(Detail::Etcd),
            Some(("scheduler", pod)) => Some(Detail::Scheduler(Some(pod.to_string()))),
            Some(("controller", name)) => Some(Detail::Controller(name.to_string(), None)),
            _ => None,
        }
    }
}

/// The terminal: its scrollback, the input line's history and where recall is in it.
#[derive(Debug, Default)]
pub struct Terminal {
    /// Shared with the view, which redraws it only when it changed.
    pub lines: Rc<Vec<Line>>,
    pub history: Vec<String>,
    pub cursor: usize,
    /// A here-document being typed (`cat <<EOF > f`): its command line, its end word and the
    /// lines so far; the terminal's prompt is `> ` until the end word.
    pub heredoc: Option<Heredoc>,
}

/// A command whose standard input is being typed, line by line, up to its end word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heredoc {
    pub line: String,
    pub word: String,
    pub body: Vec<String>,
}

/// The clock's settings, and what it measures.
#[derive(Debug)]
pub struct ClockState {
    pub playing: bool,
    /// Virtual time per real time, when not at the teaching pace.
    pub speed: f64,
    /// The teaching pace: the simulation waits for the map, one hop at a time.
    pub teaching: bool,
    /// Large type, high contrast, slow motion.
    pub presenter: bool,
    /// Ticks since the clock last started or changed pace.
    pub ticks: u32,
    /// The speed the clock really achieves, said when it falls short of the one chosen.
    pub meter: SpeedMeter,
}

/// The lesson followed, where the student is in it and what its checks say now.
#[derive(Debug, Default)]
pub struct LessonState {
    pub lesson: Option<Rc<Lesson>>,
    /// Why the lesson the address named cannot be followed.
    pub problem: Option<String>,
    pub progress: Option<Progress>,
    pub results: Vec<CheckResult>,
    /// Each step's prediction's reason, in words, once the step is complete.
    pub reasons: Vec<Option<String>>,
    /// The course's index or a lesson is beside the sandbox.
    pub beside: bool,
    /// The lesson's Markdown, for the simulation to replay a session of it.
    pub source: Option<LessonSource>,
}

/// The manifest editor's state as the page keeps it (its text lives in the editor itself).
#[derive(Debug)]
pub struct EditorState {
    pub example: &'static str,
    /// Lines a failed apply points at; typing clears them.
    pub marks: Rc<Vec<Mark>>,
    /// What `kubectl edit` opened, while it is open.
    pub editing: Option<Rc<Editing>>,
    /// The last button's outcome: ok, and what kubectl said.
    pub result: Option<(bool, String)>,
}

/// What the simulation's frames last said: what the page draws.
#[derive(Clone, Debug, Default)]
pub struct View {
    /// The session is replayed and its first frame has come: the page shows it and takes
    /// commands.
    pub ready: bool,
    pub last_seq: Seq,
    /// Virtual milliseconds since the cluster started.
    pub time_ms: u64,
    /// The revisions time travel reaches: the oldest kept, and the present.
    pub revisions: (i64, i64),
    /// The terminal's prompt while attached to a container's shell.
    pub prompt: Option<String>,
    pub snapshot: Rc<Snapshot>,
    pub board: Rc<Board>,
    pub flow: Rc<FlowFrame>,
    pub sequence: Option<Rc<Sequence>>,
    pub detail: Option<Rc<DetailFrame>>,
}

/// What the page does with a request's reply once it comes.
#[derive(Clone, Debug, PartialEq)]
pub enum Pending {
    /// The clock's tick.
    Tick,
    /// A command run as if typed, echoed as `shown`.
    Run { shown: String },
    /// A line typed at a container shell's prompt.
    Typed { prompt: String, shown: String },
    /// A command already echoed line by line (a here-document's).
    Echoed { shown: String },
    /// An editor button, with the line it ran and the editor's text.
    Manifest { action: super::ManifestAction, line: String, text: String },
    /// `kubectl edit`'s save, with the editor's text.
    EditSave { text: String },
    /// Tab completion.
    Complete,
    /// A replayed session: its terminal replaces the page's.
    Load,
    /// The export button.
    Export,
    /// The journal changed: it is saved once the reply brings it.
    Save,
    /// Anything else: the frame, the journal and the lesson are all the reply brings.
    Other,
}

/// Everything the page holds.
pub struct PageState {
    pub seed: u64,
    /// The journal as the simulation keeps it (each reply brings it when it changed): what the
    /// page saves and shares.
    pub journal: Rc<RefCell<Journal>>,
    /// What the latest frames said.
    pub view: View,
    /// Requests sent and not yet answered, by id, with what to do with each reply.
    pub pending: BTreeMap<u64, Pending>,
    pub next_request: u64,
    /// The frame query and clock settings the simulation was last told.
    pub told: Option<(FrameQuery, ClockSettings)>,
    /// The lesson's step the address asked for (from 1), until the simulation opens it.
    pub open_step: Option<usize>,
    /// Why the simulation stopped answering (its worker failed), until it answers again.
    pub failure: Option<String>,
    /// A long session's replay is under way, this far (0..1): the page is not ready yet.
    pub loading: Option<f64>,
    pub terminal: Terminal,
    pub clock: ClockState,
    pub lesson: LessonState,
    pub editor: EditorState,
    /// What the share and export buttons said.
    pub share_note: String,
    pub storage: StorageStatus,
    pub inspected: Option<Inspection>,
    /// The chain of the last apply, while followed.
    pub following: Option<Vec<ChainStep>>,
    /// The followed step's message, sent across the map on its own.
    pub spotlight: Option<u64>,
    pub event_filter: EventFilter,
    /// The object of the event clicked last, highlighted across the page.
    pub highlight: Option<String>,
    /// The view opened from the map, under it.
    pub detail: Option<Detail>,
    /// Time travel: the etcd revision shown, when not the present.
    pub past: Option<i64>,
    /// Real milliseconds (the clock's meter and the map's animation; never the simulation's).
    pub real_ms: fn() -> f64,
}

pub use crate::page::sim::simulation::no_real_clock;

impl PageState {
    /// The page as it opens: the lesson read and the journal chosen; the simulation replays
    /// it when the page sends `Action::Open`.
    pub fn new(config: PageConfig) -> PageState {
        let loaded = load_lesson(config.lesson.as_deref(), config.lesson_source.as_ref());
        let lesson = loaded.as_ref().ok().cloned().flatten();
        let seed = config.journal.as_ref().map_or(config.seed, |j| j.seed);
        let journal = match (&lesson, config.journal) {
            (Some(l), Some(j)) if j.lesson.as_deref() == Some(l.id.as_str()) => j,
            (Some(l), _) => Journal::for_lesson(l),
            (None, Some(j)) if j.lesson.is_none() => j,
            (None, _) => Journal::new(seed),
        };
        let source = match (&config.lesson, &config.lesson_source, &lesson) {
            (Some(id), Some(Ok(text)), Some(_)) => Some(LessonSource { id: id.clone(), markdown: text.to_string() }),
            _ => None,
        };
        PageState {
            seed,
            journal: Rc::new(RefCell::new(journal)),
            view: View::default(),
            pending: BTreeMap::new(),
            next_request: 1,
            told: None,
            open_step: config.step,
            failure: None,
            loading: None,
            terminal: Terminal::default(),
            clock: ClockState {
                playing: !config.start_paused,
                speed: 1.0,
                // The sandbox opens at the teaching pace, so a first apply is told as a story;
                // a lesson runs at 1×.
                teaching: config.lesson.is_none(),
                presenter: false,
                ticks: 0,
                meter: SpeedMeter::default(),
            },
            lesson: LessonState {
                beside: lesson.is_some() || config.show_index || config.lesson.is_some(),
                lesson,
                problem: loaded.err(),
                progress: None,
                results: Vec::new(),
                reasons: Vec::new(),
                source,
            },
            editor: EditorState {
                example: crate::views::examples::EXAMPLES[0].id,
                marks: Rc::default(),
                editing: None,
                result: None,
            },
            share_note: String::new(),
            storage: config.storage,
            inspected: None,
            following: None,
            spotlight: None,
            event_filter: EventFilter::default(),
            highlight: None,
            detail: None,
            past: None,
            real_ms: no_real_clock,
        }
    }

    /// The terminal's prompt: a container shell's while attached to one.
    pub fn prompt(&self) -> Option<String> {
        self.view.prompt.clone()
    }

    /// The terminal's scrollback, to append to.
    pub fn lines(&mut self) -> &mut Vec<Line> {
        Rc::make_mut(&mut self.terminal.lines)
    }

    /// The etcd revisions time travel reaches: the oldest kept, and the present.
    pub fn revisions(&self) -> (i64, i64) {
        self.view.revisions
    }

    /// What the frames must carry, as the page's state asks.
    pub fn frame_query(&self) -> FrameQuery {
        FrameQuery {
            past: self.past,
            board: true,
            board_at: None,
            sequence: self.following.is_some(),
            detail: self.detail.clone(),
            records: false,
        }
    }

    /// The clock as the simulation must know it.
    pub fn clock_settings(&self) -> ClockSettings {
        let c = &self.clock;
        ClockSettings { playing: c.playing, speed: c.speed, teaching: c.teaching, presenter: c.presenter }
    }

    /// The command the simulation is running, as the terminal shows it, while its reply is
    /// on its way (a worker busy with a big cluster may take a moment).
    pub fn running(&self) -> Option<String> {
        self.pending.values().find_map(|p| match p {
            Pending::Run { shown } => Some(format!("$ {shown}")),
            Pending::Typed { prompt, shown } => Some(format!("{prompt}{shown}")),
            Pending::Echoed { shown } => Some(format!("$ {shown}")),
            Pending::Manifest { line, .. } => Some(format!("$ {line} < manifest.yaml")),
            Pending::EditSave { .. } => Some("saving the edit".to_string()),
            Pending::Load => Some("replaying the session".to_string()),
            _ => None,
        })
    }

    /// Whether a tick's request is on its way.
    pub fn ticking(&self) -> bool {
        self.pending.values().any(|p| *p == Pending::Tick)
    }
}

/// A replayed command and what it printed, as the terminal's scrollback shows them.
pub fn show_replayed(lines: &mut Vec<Line>, command: &Command, prompt: Option<&str>, out: &crate::kubectl::Output) {
    lines.push(match prompt {
        Some(prompt) => Line::Typed(format!("{prompt}{}", command.line)),
        None => Line::Command(command.line.clone()),
    });
    push_output(lines, out);
}

/// The lesson the address names, read from the source the page fetched for it: `Ok(None)`
/// when it names none, the reason shown above the course's index when it cannot be followed.
pub fn load_lesson(id: Option<&str>, source: Option<&Result<Rc<str>, String>>) -> Result<Option<Rc<Lesson>>, String> {
    let Some(id) = id else { return Ok(None) };
    match source {
        Some(Ok(text)) => crate::lessons::from_source(id, text).map(|l| Some(Rc::new(l))).map_err(|e| e.to_string()),
        Some(Err(why)) => Err(why.clone()),
        None => Err(format!("no lesson \"{id}\"")),
    }
}
