//! The simulation as the page talks to it: it owns the session, its journal, the lesson's
//! progress, a live `kubectl get -w` and the map's story (the flow), and answers each
//! `SimRequest` with a `SimReply`. This is what runs in the page's Web Worker (and, where no
//! worker can serve, in the page's own thread); the page never reads it in place.

use super::frame::{FlowFrame, Frame, FrameQuery, Parts, frame_of, frame_parts};
use super::request::{
    ClockSettings, CommandOutput, ExportFile, JournalChange, LessonFrame, Opened, SimReply, SimRequest,
};
use crate::kubectl::watch::LiveWatch;
use crate::lessons::{CheckResult, Lesson, Progress};
use crate::page::journal::Journal;
use crate::page::state::show_replayed;
use crate::page::terminal::{Line, edit_as_get};
use crate::record::Seq;
use crate::shell::{Command, Session};
use crate::sim::{Duration, Time};
use crate::views::flow::{Flow, Pace};
use std::rc::Rc;

/// The command skipping to settled runs (as typed, it shows in the terminal and the journal).
const SETTLE_COMMAND: &str = "sim settle";
/// Real milliseconds between two clock ticks the page sends.
pub const TICK_MS: u32 = 20;
/// The most real time one tick makes up for when ticks come late (a slow frame, a busy
/// worker): past it, virtual time falls behind and the page says what speed it achieves.
const TICK_CATCH_UP_MS: f64 = 100.0;
/// Real milliseconds a tick may spend running components in the page's own thread: the rest
/// of a 16.7 ms frame draws.
pub const THREAD_BUDGET_MS: f64 = 6.0;
/// …and in a worker, which draws nothing: most of a tick, leaving room to answer a click.
pub const WORKER_BUDGET_MS: f64 = 15.0;
/// At the teaching pace, while the map has nothing to show, virtual time runs this many times
/// faster than real time until something happens (a pull of a few seconds takes that long).
const TEACHING_IDLE_SPEED: u64 = 1;
/// The most steps one teaching-pace tick takes looking for the map's next hop.
const TEACHING_STEPS: usize = 2000;
/// Real milliseconds between two builds of the map's board while the clock runs: the tokens
/// move every frame on their own, and a big cluster's board is costly to build and draw.
const BOARD_MS: f64 = 200.0;
/// Real milliseconds between two snapshots of the tables while the clock runs.
const SNAPSHOT_MS: f64 = 100.0;
/// While the clock runs, the gap between two builds of the tables or the board is also at least
/// this many times what the last build took: a big cluster's parts are costly to build, send,
/// read and draw, and the page would read most of them only to draw one in a few (it redraws by
/// the same rule, `ui::clock::Redraws`)…
const PARTS_COST_FACTOR: f64 = 25.0;
/// …up to this many real milliseconds.
const PARTS_MAX_GAP_MS: f64 = 1000.0;
/// Real milliseconds between two looks at the lesson's checks while the clock runs.
const EVALUATE_MS: f64 = 1000.0;
/// The most steps of a followed chain.
const FOLLOW_STEPS: usize = 300;

/// What a part of the frame was built from, and when (real milliseconds).
type Built<K> = Option<(K, f64)>;

/// What the previous frame carried, so the next one sends only what changed.
#[derive(Default)]
struct Sent {
    /// The board's key (the record's last entry, the present revision, the moment shown).
    board: Built<(Seq, i64, Option<i64>)>,
    /// The board's layout as last sent. The page keeps the one it has until another comes, and
    /// takes every reply's frame, so this is always the page's.
    layout: Option<Rc<crate::views::map::Layout>>,
    /// The snapshot's key (the record's last entry, the time, the moment shown).
    snapshot: Built<(Seq, u64, Option<i64>)>,
    /// The lesson as last sent.
    lesson: Option<LessonFrame>,
    /// How many of the journal's entries the page has, and the progress it was sent (None:
    /// the page must be sent the whole journal).
    journal: Option<(usize, Option<String>)>,
}

/// The lesson followed: what it is, where the student is, what its checks say.
struct LessonRun {
    lesson: Rc<Lesson>,
    progress: Progress,
    results: Vec<CheckResult>,
    /// Each step's prediction's reason, in words (see `LessonFrame::reasons`).
    reasons: Vec<Option<String>>,
    /// When the checks were last looked at (real milliseconds).
    evaluated_ms: f64,
}

/// The session, and everything the page asked of it.
pub struct Simulation {
    session: Session,
    journal: Journal,
    lesson: Option<LessonRun>,
    live_watch: Option<LiveWatch>,
    flow: Flow,
    query: FrameQuery,
    clock: ClockSettings,
    /// The record's last entry the previous frame carried.
    cursor: Seq,
    sent: Sent,
    /// The page's animation clock at the last tick.
    last_tick_ms: Option<f64>,
    /// The page's animation clock less this thread's real clock, as of the last request that
    /// told it (a worker's clock starts later than the page's).
    page_offset_ms: f64,
    /// Real milliseconds a tick may spend running components.
    budget_ms: f64,
    /// Real milliseconds, for budgets (never the simulation's own clock).
    real_ms: fn() -> f64,
    /// A real clock is set: the board and tables are built at most every so often.
    throttled: bool,
    /// Real milliseconds the last build of the tables or the board took.
    parts_ms: f64,
    /// The session is a fresh cluster of this seed that nothing has touched yet: loading an
    /// empty journal of the same seed keeps it rather than booting another (a page's start).
    untouched: Option<u64>,
    /// A journal's replay that `Load` started and `LoadMore` goes on with, a slice of real
    /// time at a time, so that a long session's reload shows its progress.
    loading: Option<Loading>,
    /// The journal's commands and what they printed, as a replay of it shows them in the
    /// terminal (kept as the terminal keeps its scrollback): what a session that goes on
    /// rather than replays (`Journal::continues`) shows of the commands it holds.
    scrollback: Vec<Line>,
}

/// A replay under way: what it replays, the lesson to open when done, and the terminal so far.
struct Loading {
    journal: Journal,
    lesson: Option<Rc<Lesson>>,
    step: Option<usize>,
    replay: crate::page::journal::Replay,
    lines: Vec<crate::page::terminal::Line>,
}

/// Real milliseconds a `Load` or `LoadMore` replays before it answers with its progress.
const LOAD_SLICE_MS: f64 = 100.0;

/// A session goes on with a journal it holds the start of (`Simulation::go_on_with`) when this
/// many entries at most remain, over this much virtual time at most: more is replayed in
/// slices, with its progress shown, as any journal.
const RESUME_MAX_ENTRIES: usize = 50;
const RESUME_MAX_VIRTUAL_MS: u64 = 10 * 60 * 1000;

/// A clock that never moves: budgets never run out (native use and tests).
pub fn no_real_clock() -> f64 {
    0.0
}

impl Simulation {
    pub fn new(seed: u64) -> Simulation {
        Simulation { untouched: Some(seed), ..Simulation::from_session(Session::new(seed), Journal::new(seed)) }
    }

    /// Takes over a session and the journal that built it.
    fn from_session(session: Session, journal: Journal) -> Simulation {
        let cursor = session.cluster.record.last_seq();
        Simulation {
            flow: Flow::new(cursor),
            session,
            journal,
            lesson: None,
            live_watch: None,
            query: FrameQuery::default(),
            clock: ClockSettings::default(),
            cursor,
            sent: Sent::default(),
            last_tick_ms: None,
            page_offset_ms: 0.0,
            budget_ms: THREAD_BUDGET_MS,
            real_ms: no_real_clock,
            throttled: false,
            parts_ms: 0.0,
            untouched: None,
            loading: None,
            scrollback: Vec::new(),
        }
    }

    /// Measures budgets with this clock (the browser's), allowing a tick `budget_ms`.
    pub fn set_real_clock(&mut self, real_ms: fn() -> f64, budget_ms: f64) {
        self.real_ms = real_ms;
        self.budget_ms = budget_ms;
        self.throttled = true;
    }

    /// The session, read-only (tests, and the page's native checks).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Whether a live `kubectl get -w` is open.
    pub fn watching(&self) -> bool {
        self.live_watch.is_some()
    }

    /// The journal as it stands.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Answers one request: does what it asks, then builds the frame (with only what changed
    /// since the previous one).
    pub fn answer(&mut self, request: SimRequest) -> SimReply {
        let mut reply = SimReply::default();
        // What a command changed may show though the record did not move (a registry that
        // stops serving an image, a node cut off): the tables and the board are sent again.
        let quiet = matches!(
            request,
            SimRequest::Tick { .. } | SimRequest::Frame | SimRequest::Complete(_) | SimRequest::Spotlight { .. }
        );
        if !quiet {
            self.sent.snapshot = None;
            self.sent.board = None;
        }
        if !matches!(request, SimRequest::Settings { .. } | SimRequest::Frame | SimRequest::Load { .. }) {
            self.untouched = None;
        }
        // A page that has been sent nothing yet tells its settings and then loads its session:
        // a frame now would be replaced at once by the load's (the first frame costs the most).
        let before_load = self.sent.journal.is_none() && matches!(request, SimRequest::Settings { .. });
        let evaluate = self.apply(request, &mut reply);
        if before_load {
            return reply;
        }
        if self.loading.is_some() {
            // Nothing of this session goes to the page while the journal it holds replays: not
            // this session's journal above all (the page would keep it in place of its own).
            return reply;
        }
        if evaluate {
            self.evaluate();
        }
        // What happened leaves on the map at once (a tick would only send it a moment later).
        let now_ms = self.page_ms();
        self.flow.frame(&self.session.cluster, now_ms, self.pace());
        if let Some(w) = self.live_watch.as_mut() {
            let rows = w.poll(&mut self.session.cluster);
            if !rows.is_empty() {
                reply.watch_rows = Some(rows);
            }
        }
        reply.journal = match &self.sent.journal {
            None => Some(JournalChange::Replace(self.journal.clone())),
            Some((n, progress)) if *n < self.journal.entries.len() || *progress != self.journal.progress => {
                Some(JournalChange::Append {
                    entries: self.journal.entries[*n..].to_vec(),
                    progress: self.journal.progress.clone(),
                })
            }
            Some(_) => None,
        };
        self.sent.journal = Some((self.journal.entries.len(), self.journal.progress.clone()));
        let lesson = self.lesson.as_ref().map(|l| LessonFrame {
            progress: l.progress.clone(),
            results: l.results.clone(),
            reasons: l.reasons.clone(),
        });
        if lesson != self.sent.lesson {
            reply.lesson = lesson.clone();
            self.sent.lesson = lesson;
        }
        reply.frame = self.frame();
        reply
    }

    /// Does what a request asks; true when the lesson's checks should look again.
    fn apply(&mut self, request: SimRequest, reply: &mut SimReply) -> bool {
        // While a replay is under way the session is not the student's yet: nothing but the
        // replay (or another load, or a reset) runs on it.
        if self.loading.is_some()
            && !matches!(
                request,
                SimRequest::Load { .. } | SimRequest::LoadMore | SimRequest::Reset { .. } | SimRequest::Settings { .. }
            )
        {
            return false;
        }
        match request {
            SimRequest::LoadMore => {
                self.load_more(reply);
                true
            }
            SimRequest::Load { journal, lesson, step } => {
                let lesson = lesson.and_then(|l| crate::lessons::from_source(&l.id, &l.markdown).ok()).map(Rc::new);
                self.load(journal, lesson, step, reply);
                true
            }
            SimRequest::Reset { seed } => {
                // A fresh cluster of the same topology (`?control-planes=3` stays three).
                let journal = Journal { control_planes: self.journal.control_planes, ..Journal::new(seed) };
                let single = journal.control_planes <= 1;
                self.replace(journal.fresh_session(), journal);
                self.untouched = single.then_some(seed);
                false
            }
            SimRequest::Run { line, stdin, to_shell } => {
                self.run(line, stdin, to_shell, reply);
                true
            }
            SimRequest::EditSave { opened, text } => {
                let now = self.session.cluster.now();
                let saved = crate::kubectl::edit::save(&mut self.session.cluster, &opened, &text);
                // The journal keeps the request the save sent, so that it replays.
                if let Some(replay) = &saved.replay {
                    let beside = self.session.prompt().is_some();
                    self.journal.command_beside(now, replay, beside);
                    show_replayed(&mut self.scrollback, replay, None, &saved.output);
                }
                reply.output = Some(CommandOutput::from(&saved.output));
                true
            }
            SimRequest::Step => {
                self.journal.step(self.session.cluster.now());
                self.session.cluster.step();
                true
            }
            SimRequest::Settle => {
                self.run(SETTLE_COMMAND.into(), None, false, reply);
                // Skipping to settled skips the story too: the map shows the settled cluster
                // now rather than telling every hop of the way at the teaching pace.
                self.flow.skip(&self.session.cluster);
                true
            }
            SimRequest::Tick { now_ms } => {
                self.page_offset_ms = now_ms - (self.real_ms)();
                self.tick(now_ms, reply)
            }
            SimRequest::Settings { query, clock } => {
                if clock != self.clock {
                    self.last_tick_ms = None;
                }
                self.query = query;
                self.clock = clock;
                false
            }
            SimRequest::Inspect(target) => {
                // `kind/name`, or a bare pod name from the pod table.
                let (kind, name) = match target.split_once('/') {
                    Some((k, n)) => (crate::api::Kind::from_resource_arg(k), n.to_string()),
                    None => (Some(crate::api::Kind::Pod), target.clone()),
                };
                reply.inspection =
                    kind.map(|kind| crate::views::overview::inspect(&mut self.session, kind, "default", &name));
                false
            }
            SimRequest::Follow => {
                reply.following =
                    Some(crate::views::overview::follow_latest_write(&self.session.cluster, FOLLOW_STEPS));
                false
            }
            SimRequest::Spotlight { seq, now_ms } => {
                self.page_offset_ms = now_ms - (self.real_ms)();
                self.flow.spotlight(&self.session.cluster, seq, now_ms);
                false
            }
            SimRequest::Complete(line) => {
                reply.completion = Some(crate::shell::completion::complete(&self.session, &line));
                false
            }
            SimRequest::Interrupt => {
                self.stop_watch();
                false
            }
            SimRequest::Predict { step, answer } => {
                if let Some(l) = self.lesson.as_mut() {
                    l.progress.predict(&l.lesson, step, &answer);
                }
                true
            }
            SimRequest::LessonGo(step) => {
                if let Some(l) = self.lesson.as_mut() {
                    l.progress.go_to(step, &self.session);
                }
                true
            }
            SimRequest::Export => {
                let objects = crate::shell::export::objects(&self.session.cluster);
                reply.export =
                    Some(ExportFile { text: crate::shell::export::to_file(&objects), objects: objects.len() });
                false
            }
            SimRequest::Frame => false,
        }
    }

    /// A new session (and the journal that built it) in place of this one; what the page
    /// asked of the frames and the clock stays.
    fn replace(&mut self, session: Session, journal: Journal) {
        self.stop_watch();
        self.session = session;
        self.start_over(journal);
    }

    /// What the page was sent of the session starts over, as for a session just loaded (the
    /// views asked for, the clock's settings and the real clocks stay), with `journal` as the
    /// one that built it.
    fn start_over(&mut self, journal: Journal) {
        self.stop_watch();
        let cursor = self.session.cluster.record.last_seq();
        self.journal = journal;
        self.lesson = None;
        self.flow = Flow::new(cursor);
        self.cursor = cursor;
        self.sent = Sent::default();
        self.last_tick_ms = None;
        self.parts_ms = 0.0;
        self.untouched = None;
        self.loading = None;
        self.scrollback = Vec::new();
    }

    /// Replays `journal` (on the lesson's start, when it is given) in place of this session.
    fn load(&mut self, journal: Journal, lesson: Option<Rc<Lesson>>, step: Option<usize>, reply: &mut SimReply) {
        self.stop_watch();
        let lines = Vec::new();
        let empty = journal.entries.is_empty() && journal.now == 0 && journal.lesson.is_none();
        let single = journal.control_planes <= 1;
        if empty && lesson.is_none() && single && self.untouched == Some(journal.seed) {
            // The cluster this simulation booted is the one the journal would give.
            self.journal = journal;
            self.sent = Sent::default();
            self.lesson = None;
            reply.replayed = Some(lines);
            return;
        }
        if empty {
            self.replace(journal.fresh_session(), journal);
            self.open_lesson(lesson, step);
            reply.replayed = Some(lines);
            return;
        }
        if self.go_on_with(&journal) {
            let mut lines = std::mem::take(&mut self.scrollback);
            let ran = self.journal.entries.len();
            journal.replay_rest(&mut self.session, ran, &mut |c, p, o| show_replayed(&mut lines, c, p, o));
            self.start_over(journal);
            self.scrollback = lines.clone();
            self.open_lesson(lesson, step);
            reply.replayed = Some(lines);
            return;
        }
        let replay = journal.replay_begin(lesson.as_deref());
        self.loading = Some(Loading { journal, lesson, step, replay, lines });
        self.load_more(reply);
    }

    /// Whether this session is worth keeping to go on with on a later visit: it is the
    /// student's, not a replay under way.
    pub fn keepable(&self) -> bool {
        self.loading.is_none()
    }

    /// This simulation's memory was kept by a visit of the page that is gone and put back for
    /// a new one: the session and its journal stay; what was sent to the old page, the lesson
    /// it had open and a live watch do not (the new page loads them again).
    pub fn restored(&mut self) {
        let scrollback = std::mem::take(&mut self.scrollback);
        let journal = self.journal.clone();
        self.start_over(journal);
        self.scrollback = scrollback;
    }

    /// Whether this session can go on with `journal` rather than replay it: it holds the
    /// journal's first entries (`Journal::continues`: a page restored from its worker's saved
    /// memory), and what is left takes no longer than a moment to run.
    pub(crate) fn go_on_with(&self, journal: &Journal) -> bool {
        if self.loading.is_some() || self.live_watch.is_some() {
            return false;
        }
        let now = self.session.cluster.now();
        journal.continues(&self.journal, now).is_some_and(|ran| {
            journal.entries.len() - ran <= RESUME_MAX_ENTRIES && journal.now - now.0 <= RESUME_MAX_VIRTUAL_MS
        })
    }

    /// Goes on with the replay under way for a slice of real time: when it is done, its session
    /// takes over and the terminal is sent; until then, how far it has come.
    fn load_more(&mut self, reply: &mut SimReply) {
        let Some(mut loading) = self.loading.take() else { return };
        let real_ms = self.real_ms;
        let end = real_ms() + LOAD_SLICE_MS;
        let Loading { journal, replay, lines, .. } = &mut loading;
        let done = journal.replay_more(replay, Some(Time(journal.now)), &mut || real_ms() < end, &mut |c, p, o| {
            show_replayed(lines, c, p, o)
        });
        if !done {
            reply.loading = Some(loading.replay.progress(&loading.journal));
            self.loading = Some(loading);
            return;
        }
        let Loading { journal, lesson, step, replay, lines } = loading;
        self.replace(replay.session, journal);
        self.scrollback = lines.clone();
        self.open_lesson(lesson, step);
        reply.replayed = Some(lines);
    }

    /// Opens `lesson` on the session just loaded, at `step` (from 1) when given, with the
    /// progress the journal kept.
    fn open_lesson(&mut self, lesson: Option<Rc<Lesson>>, step: Option<usize>) {
        self.lesson = lesson.map(|lesson| {
            let saved = self.journal.progress.as_deref().and_then(|p| Progress::from_json(p, &lesson));
            let mut progress = saved.unwrap_or_else(|| Progress::new(&lesson, &self.session));
            if let Some(n) = step {
                progress.go_to(n.saturating_sub(1), &self.session);
            }
            LessonRun { lesson, progress, results: Vec::new(), reasons: Vec::new(), evaluated_ms: f64::NEG_INFINITY }
        });
    }

    /// Runs a command line and keeps it in the journal (see `SimRequest::Run`).
    fn run(&mut self, line: String, stdin: Option<String>, to_shell: bool, reply: &mut SimReply) {
        let now = self.session.cluster.now();
        let command = Command { line, heredoc: stdin.map(|body| ("EOF".to_string(), body)) };
        if to_shell {
            // An empty line changes nothing (and an empty journal entry is a step).
            let prompt = self.session.prompt().map(String::from);
            let out = self.session.execute(&command);
            if !command.line.trim().is_empty() {
                self.journal.command(now, &command);
                show_replayed(&mut self.scrollback, &command, prompt.as_deref(), &out);
            }
            reply.output = Some(CommandOutput::from(&out));
            return;
        }
        let attached = self.session.prompt().is_some();
        if command.heredoc.is_none() {
            if let Some(started) = self.live_watch(&command.line) {
                match started {
                    Ok((out, watch)) => {
                        self.stop_watch();
                        self.live_watch = Some(watch);
                        reply.watching = true;
                        reply.output = Some(CommandOutput::from(&out));
                    }
                    Err(out) => reply.output = Some(CommandOutput::from(&out)),
                }
                return;
            }
            if let Some(get) = edit_as_get(&command.line) {
                // The object's YAML opens in the editor (what was opened is kept), and saving
                // sends what changed since as a patch, as kubectl edit does.
                let get = Command::new(&get);
                self.journal.command_beside(now, &get, attached);
                let out = self.session.execute_beside(&get);
                show_replayed(&mut self.scrollback, &get, None, &out);
                if out.code == 0 {
                    let what = command.line.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
                    let text = format!("{}{}", crate::kubectl::edit::HEADER, out.stdout);
                    reply.opened = Some(Opened { what, text });
                } else {
                    reply.output = Some(CommandOutput::from(&out));
                }
                return;
            }
        }
        self.journal.command_beside(now, &command, attached);
        let out = self.session.execute_beside(&command);
        show_replayed(&mut self.scrollback, &command, None, &out);
        reply.output = Some(CommandOutput::from(&out));
    }

    /// `kubectl get … -w` started and left open, when `line` is one.
    #[allow(clippy::type_complexity)]
    fn live_watch(
        &mut self,
        line: &str,
    ) -> Option<Result<(crate::kubectl::Output, LiveWatch), crate::kubectl::Output>> {
        let words = crate::shell::split_words(line).unwrap_or_default();
        match words.split_first() {
            Some((program, rest)) if (program == "kubectl" || program == "k") && !line.contains('|') => {
                crate::kubectl::start_live_watch(&mut self.session.cluster, rest)
            }
            _ => None,
        }
    }

    fn stop_watch(&mut self) {
        if let Some(watch) = self.live_watch.take() {
            watch.stop(&mut self.session.cluster);
        }
    }

    /// The clock's tick: virtual time moves on by the real time since the last tick times the
    /// speed (within the budget), or, at the teaching pace, only while the map has nothing
    /// left to show; then the map's messages move on. True when the lesson's checks are due.
    fn tick(&mut self, now_ms: f64, reply: &mut SimReply) -> bool {
        let pace = self.pace();
        // Messages that arrived leave the map, and the teaching pace sees whether it is idle.
        self.flow.frame(&self.session.cluster, now_ms, pace);
        if self.clock.playing {
            let elapsed = match self.last_tick_ms {
                Some(last) => (now_ms - last).clamp(f64::from(TICK_MS), TICK_CATCH_UP_MS),
                None => f64::from(TICK_MS),
            };
            self.last_tick_ms = Some(now_ms);
            if self.clock.teaching {
                let cluster = &mut self.session.cluster;
                let target = cluster.now() + Duration(u64::from(TICK_MS) * TEACHING_IDLE_SPEED);
                let mut steps = 0;
                while self.flow.idle() && cluster.now() < target && steps < TEACHING_STEPS {
                    cluster.step_toward(target);
                    self.flow.absorb(cluster, pace);
                    steps += 1;
                }
            } else {
                let virtual_ms = (elapsed * self.clock.speed).round().max(1.0) as u64;
                advance_within(&mut self.session.cluster, Duration(virtual_ms), self.budget_ms, self.real_ms);
            }
            // A container shell's session ends when its container stops.
            reply.ended = self.session.poll().map(|out| CommandOutput::from(&out));
        } else {
            self.last_tick_ms = None;
        }
        self.flow.frame(&self.session.cluster, now_ms, pace);
        match self.lesson.as_mut() {
            Some(l) if self.clock.playing && now_ms - l.evaluated_ms >= EVALUATE_MS => {
                l.evaluated_ms = now_ms;
                true
            }
            _ => false,
        }
    }

    /// The page's animation clock now, as best this thread can tell.
    fn page_ms(&self) -> f64 {
        (self.real_ms)() + self.page_offset_ms
    }

    /// How fast the map's messages go.
    fn pace(&self) -> Pace {
        if self.clock.teaching {
            Pace::teaching(self.clock.presenter)
        } else {
            Pace::new(self.clock.speed, self.clock.presenter)
        }
    }

    /// Looks at the lesson's checks against the cluster as it is now (they leave no trace).
    fn evaluate(&mut self) {
        let Some(l) = self.lesson.as_mut() else { return };
        let eval = l.progress.evaluate(&l.lesson, &mut self.session);
        l.results = if eval.step_complete { l.progress.check(&l.lesson, &mut self.session) } else { eval.results };
        self.journal.progress = Some(l.progress.to_json());
        let cluster = &self.session.cluster;
        l.reasons = l
            .progress
            .steps
            .iter()
            .map(|s| s.why.and_then(|seq| cluster.record.get(seq)).map(|e| crate::views::caption::caption(cluster, e)))
            .collect();
    }

    /// The frame as the query asks, with the record's entries since the previous frame; the
    /// board and the tables only when they changed (and, while the clock runs, at most a few
    /// times a second, less often when they are costly to build).
    pub fn frame(&mut self) -> Frame {
        let now = (self.real_ms)();
        let etcd = self.session.cluster.inspect().etcd();
        let (last_seq, latest) = (self.session.cluster.record.last_seq(), etcd.revision());
        // At the teaching pace the map shows the cluster as of the hop on it: the simulation is
        // a step ahead, and the picture must not give away what the story has not told yet.
        // Paused, the student looks at the cluster as it is.
        let shown = match self.query.past {
            Some(rev) => Some(rev),
            None if self.clock.teaching && self.clock.playing => self.flow.revision(),
            None => None,
        };
        // Throttled only against a real clock (natively, every frame is whole).
        let playing = self.clock.playing && self.throttled;
        let gap = |least: f64| least.max((self.parts_ms * PARTS_COST_FACTOR).min(PARTS_MAX_GAP_MS));
        let throttle = playing.then_some((now, gap));
        let board_key = (last_seq, latest, shown);
        let board = due(&self.sent.board, &board_key, |k| k.2, throttle, BOARD_MS);
        let snapshot_key = (last_seq, self.session.cluster.now().0, self.query.past);
        let snapshot = due(&self.sent.snapshot, &snapshot_key, |k| k.2, throttle, SNAPSHOT_MS);
        let query = FrameQuery { board: true, board_at: shown, ..self.query.clone() };
        let mut frame = frame_parts(&self.session, &query, self.cursor, Parts { tables: snapshot, board });
        if board || snapshot {
            self.parts_ms = (self.real_ms)() - now;
        }
        if board {
            self.sent.board = Some((board_key, now));
        }
        // The layout only when it changed: a big cluster's is most of the board.
        if let Some(layout) = frame.layout.take() {
            if self.sent.layout.as_ref().is_none_or(|sent| *sent != layout) {
                self.sent.layout = Some(layout.clone());
                frame.layout = Some(layout);
            }
        }
        if snapshot {
            self.sent.snapshot = Some((snapshot_key, now));
        }
        frame.flow = FlowFrame {
            messages: self.flow.messages().to_vec(),
            travel_ms: self.pace().travel_ms,
            caption: self.flow.caption().to_string(),
            passed_over: self.flow.passed_over(),
            busy: !self.flow.idle() || self.flow.cursor() != self.session.cluster.record.last_seq(),
        };
        self.cursor = frame.last_seq;
        frame
    }

    /// The whole frame as `query` asks (tables and board always), without moving the record's
    /// cursor: for comparing a page's frames with a session's.
    pub fn peek_frame(&self, query: &FrameQuery) -> Frame {
        frame_of(&self.session, query, self.session.cluster.record.last_seq())
    }

    /// The session's virtual time.
    pub fn now(&self) -> Time {
        self.session.cluster.now()
    }
}

/// Whether a part of the frame built from `key` must be built again: it was built from
/// another key, and — while the clock runs (`throttle`: now, and the gap to keep) — it shows
/// another moment (`moment`), or `least` (at least) has passed since it was built.
fn due<K: PartialEq>(
    sent: &Built<K>,
    key: &K,
    moment: fn(&K) -> Option<i64>,
    throttle: Option<(f64, impl Fn(f64) -> f64)>,
    least: f64,
) -> bool {
    match (sent, throttle) {
        (Some((k, _)), _) if k == key => false,
        (Some((k, at)), Some((now, gap))) if moment(k) == moment(key) && now - at < gap(least) => false,
        _ => true,
    }
}

/// Runs what is due within `d` of virtual time, as `Cluster::advance` does, unless that takes
/// more than `budget_ms` of real time (`real_ms`): then the clock stops where the work
/// stopped, and the next tick carries on from there.
pub fn advance_within(cluster: &mut crate::cluster::Cluster, d: Duration, budget_ms: f64, real_ms: fn() -> f64) {
    let target = cluster.now() + d;
    let end = real_ms() + budget_ms;
    while cluster.now() < target {
        cluster.step_toward(target);
        if real_ms() >= end {
            break;
        }
    }
}
