//! What the page holds: the session it drives (and its journal, for saving and replay), the
//! terminal, the clock's settings, the lesson, the editor's outcome, what the student opened
//! (inspector, followed apply, a view from the map, a past revision) and the storage's status.

use super::terminal::{Editing, Line, push_output};
use crate::editor::errors::Mark;
use crate::kubectl::watch::LiveWatch;
use crate::lessons::{CheckResult, Lesson, Progress};
use crate::page::journal::Journal;
use crate::page::sim::{LessonSource, Simulation};
use crate::shell::Session;
use crate::views::flow::Flow;
use crate::views::overview::{ChainStep, Inspection};
use crate::views::speed::SpeedMeter;
use std::cell::RefCell;
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

/// Everything the page holds.
pub struct PageState {
    pub seed: u64,
    /// The simulation (the cluster and the terminal's shell), answering in this thread: the
    /// page sends it requests and draws its frames. Shared with the map's animation, which
    /// still reads the record by reference (see `crate::page::sim`).
    pub sim: Rc<RefCell<Simulation>>,
    /// What the student did, to save and replay.
    pub journal: Rc<RefCell<Journal>>,
    /// The messages the map tells, one hop at a time.
    pub flow: Rc<RefCell<Flow>>,
    /// A `kubectl get -w` left open: its rows arrive as the clock runs, until Ctrl-C.
    pub live_watch: Option<LiveWatch>,
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
    /// Real milliseconds (the clock's budget per tick and its meter; never the simulation's).
    pub real_ms: fn() -> f64,
}

/// A clock that never moves: budgets never run out (native use and tests).
pub fn no_real_clock() -> f64 {
    0.0
}

impl PageState {
    /// The page as it opens: the lesson read, the session replayed from its journal.
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
        let mut lines = Vec::new();
        let session = if journal.entries.is_empty() && journal.now == 0 && journal.lesson.is_none() {
            Session::new(seed)
        } else {
            replay(&journal, lesson.as_deref(), &mut lines)
        };
        let progress = lesson.as_ref().map(|l| {
            let saved = journal.progress.as_deref().and_then(|p| Progress::from_json(p, l));
            let mut p = saved.unwrap_or_else(|| Progress::new(l, &session));
            if let Some(n) = config.step {
                p.go_to(n.saturating_sub(1), &session);
            }
            p
        });
        let source = match (&config.lesson, &config.lesson_source, &lesson) {
            (Some(id), Some(Ok(text)), Some(_)) => Some(LessonSource { id: id.clone(), markdown: text.to_string() }),
            _ => None,
        };
        let flow = Flow::new(session.cluster.record.last_seq());
        let mut state = PageState {
            seed,
            sim: Rc::new(RefCell::new(Simulation::from_session(session))),
            journal: Rc::new(RefCell::new(journal)),
            flow: Rc::new(RefCell::new(flow)),
            live_watch: None,
            terminal: Terminal { lines: Rc::new(lines), ..Terminal::default() },
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
                progress,
                results: Vec::new(),
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
        };
        state.evaluate_if_unseen();
        state
    }

    /// The terminal's prompt: a container shell's while attached to one.
    pub fn prompt(&self) -> Option<String> {
        self.sim.borrow().session().prompt().map(String::from)
    }

    /// Looks at the lesson's checks against the cluster as it is now (they leave no trace).
    pub fn evaluate(&mut self) {
        let Some(l) = &self.lesson.lesson else { return };
        let Some(p) = self.lesson.progress.as_mut() else { return };
        let mut sim = self.sim.borrow_mut();
        let s = sim.session_mut();
        let eval = p.evaluate(l, s);
        self.lesson.results = if eval.step_complete { p.check(l, s) } else { eval.results };
        self.journal.borrow_mut().progress = Some(p.to_json());
    }

    /// Evaluates the lesson's checks when nothing has been said about them yet.
    pub fn evaluate_if_unseen(&mut self) {
        if self.lesson.lesson.is_some() && self.lesson.results.is_empty() {
            self.evaluate();
        }
    }

    /// The terminal's scrollback, to append to.
    pub fn lines(&mut self) -> &mut Vec<Line> {
        Rc::make_mut(&mut self.terminal.lines)
    }

    /// The etcd revisions time travel reaches: the oldest kept, and the present.
    pub fn revisions(&self) -> (i64, i64) {
        self.sim.borrow().moment().1
    }
}

/// Replays a journal into a new session, its commands and their output into `lines`.
pub fn replay(journal: &Journal, lesson: Option<&Lesson>, lines: &mut Vec<Line>) -> Session {
    journal.replay_in(lesson, Some(crate::sim::Time(journal.now)), |command, prompt, out| {
        lines.push(match prompt {
            Some(prompt) => Line::Typed(format!("{prompt}{}", command.line)),
            None => Line::Command(command.line.clone()),
        });
        push_output(lines, out);
    })
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
