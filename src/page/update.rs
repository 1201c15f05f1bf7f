//! The one function that changes the page: it applies an action to the state and returns what
//! the browser must then do — among it the requests for the simulation (`Effect::Ask`), whose
//! replies come back as `Action::Reply`. The page never reads the simulation in place: in a
//! worker or in the page's own thread, it answers only by reply.

use super::action::{Action, Effect, Key, ManifestAction};
use super::state::{Detail, PageState, Pending};
use super::terminal::{Editing, Line, push_output, trim};
use crate::page::journal::Journal;
use crate::page::sim::{JournalChange, SimReply, SimRequest};
use std::rc::Rc;

pub use crate::page::sim::simulation::TICK_MS;
/// Ticks in one real second.
pub const TICKS_PER_S: u32 = 1000 / TICK_MS;

/// Applies `action` to the page's state; returns what the shell must do, in order.
pub fn update(state: &mut PageState, action: Action) -> Vec<Effect> {
    let before = clock_key(state);
    let running = state.running();
    let mut fx = Vec::new();
    let quiet = matches!(action, Action::Tick | Action::Reply(..));
    apply(state, action, &mut fx);
    // A command sent (or answered) shows as running (or stops showing) at once.
    if state.running() != running && !fx.contains(&Effect::Redraw) {
        fx.push(Effect::Redraw);
    }
    if clock_key(state) != before {
        // A new speed, a pause or the teaching pace: the clock and its meter start afresh.
        state.clock.meter.reset();
        state.clock.ticks = 0;
    }
    // The simulation hears of a new view or clock before anything else is asked of it.
    let settings = (state.frame_query(), state.clock_settings());
    if state.told.as_ref() != Some(&settings) && state.view.ready {
        state.told = Some(settings.clone());
        let (query, clock) = settings;
        fx.insert(0, ask(state, SimRequest::Settings { query, clock }, Pending::Other));
    }
    if !quiet && !fx.contains(&Effect::Redraw) && redraws_after(&fx) {
        fx.push(Effect::Redraw);
    }
    fx
}

/// What the clock runs at: when it changes, the shell's timer starts again.
pub fn clock_key(state: &PageState) -> (bool, u64, bool, bool) {
    let c = &state.clock;
    (c.playing, (c.speed * 100.0) as u64, c.teaching, c.presenter)
}

/// A student's action redraws the page, unless all it did was drive the editor or the
/// terminal's line (which draw themselves), ask the simulation something, or nothing.
fn redraws_after(fx: &[Effect]) -> bool {
    fx.iter().any(|e| {
        !matches!(
            e,
            Effect::SetEditorText(_) | Effect::FocusEditor | Effect::SetInput(_) | Effect::KeyHandled | Effect::Ask(..)
        )
    })
}

/// The effect that sends `request`, noting what to do with its reply.
fn ask(state: &mut PageState, request: SimRequest, then: Pending) -> Effect {
    let id = state.next_request;
    state.next_request += 1;
    state.pending.insert(id, then);
    Effect::Ask(id, request)
}

fn apply(state: &mut PageState, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Open => {
            // The simulation replays the page's journal (a fresh cluster when it is empty).
            let settings = (state.frame_query(), state.clock_settings());
            state.told = Some(settings.clone());
            let (query, clock) = settings;
            let journal = state.journal.borrow().clone();
            let load = SimRequest::Load { journal, lesson: state.lesson.source.clone(), step: state.open_step.take() };
            fx.push(ask(state, SimRequest::Settings { query, clock }, Pending::Other));
            fx.push(ask(state, load, Pending::Load));
        }
        Action::Reply(id, reply) => {
            let then = state.pending.remove(&id).unwrap_or(Pending::Other);
            replied(state, then, *reply, fx);
        }
        Action::SimFailed(why) => {
            // The worker stopped: the page answers in its own thread from now on, replaying
            // the journal it holds.
            state.failure = Some(why);
            state.pending.clear();
            state.told = None;
            fx.push(Effect::Redraw);
            apply(state, Action::Open, fx);
        }
        Action::Tick => tick(state, fx),
        Action::TerminalKey(key, value) => terminal_key(state, key, value, fx),
        Action::Run(shown, command) => run(state, shown, command, fx),
        Action::LessonRun(command) => run(state, command.line.clone(), command, fx),
        Action::LessonManifest(text) => {
            fx.push(Effect::SetEditorText(text));
            fx.push(Effect::FocusEditor);
        }
        Action::LessonGo(step) => fx.push(ask(state, SimRequest::LessonGo(step), Pending::Other)),
        Action::Predict(step, answer) => fx.push(ask(state, SimRequest::Predict { step, answer }, Pending::Save)),
        Action::Manifest(action, text) => manifest(state, action, text, fx),
        Action::EditorTyped => {
            // Typing clears the marks; the editor redraws itself otherwise.
            if !state.editor.marks.is_empty() {
                state.editor.marks = Rc::default();
                fx.push(Effect::Redraw);
            }
        }
        Action::Example(id) => {
            if let Some(ex) = crate::views::examples::EXAMPLES.iter().find(|x| x.id == id) {
                fx.push(Effect::SetEditorText(ex.manifest.to_string()));
                state.editor.example = ex.id;
                fx.push(Effect::Redraw);
            }
        }
        Action::Step => fx.push(ask(state, SimRequest::Step, Pending::Save)),
        Action::Settle => {
            let shown = "sim settle".to_string();
            fx.push(ask(state, SimRequest::Settle, Pending::Run { shown }));
        }
        Action::TogglePlay => {
            state.clock.playing = !state.clock.playing;
            fx.push(Effect::Redraw);
        }
        Action::Speed(value) => {
            if value == "teaching" {
                state.clock.teaching = true;
            } else if let Ok(v) = value.parse::<f64>() {
                state.clock.teaching = false;
                state.clock.speed = v;
            }
            fx.push(Effect::Redraw);
        }
        Action::TogglePresenter => {
            // Presenting plays at the teaching pace so a room can follow; leaving restores 1×.
            let c = &mut state.clock;
            c.speed = 1.0;
            c.teaching = !c.presenter;
            c.presenter = !c.presenter;
            fx.push(Effect::Redraw);
        }
        Action::Shortcut(key) => match key {
            ' ' => apply(state, Action::TogglePlay, fx),
            '.' => apply(state, Action::Step, fx),
            's' => apply(state, Action::Settle, fx),
            'p' => apply(state, Action::TogglePresenter, fx),
            _ => {}
        },
        Action::Share => {
            save(state, fx);
            fx.push(Effect::Share);
        }
        Action::Export => fx.push(ask(state, SimRequest::Export, Pending::Export)),
        Action::Note(note) => {
            state.share_note = note;
            fx.push(Effect::Redraw);
        }
        Action::Reset => {
            fx.push(ask(state, SimRequest::Reset { seed: state.seed }, Pending::Save));
            *state.journal.borrow_mut() = Journal::new(state.seed);
            state.lines().clear();
            fx.push(Effect::ClearAddressHash);
            state.share_note.clear();
            fx.push(Effect::Redraw);
        }
        Action::Load(loaded) => {
            if let Some(j) = loaded {
                let lesson = state.lesson.source.clone();
                *state.journal.borrow_mut() = j.clone();
                fx.push(ask(state, SimRequest::Load { journal: j, lesson, step: None }, Pending::Load));
            }
            fx.push(Effect::Redraw);
        }
        Action::Storage(status) => {
            state.storage = status;
            fx.push(Effect::Redraw);
        }
        Action::Inspect(target) => fx.push(ask(state, SimRequest::Inspect(target), Pending::Other)),
        Action::CloseInspector => {
            state.inspected = None;
            fx.push(Effect::Redraw);
        }
        Action::RefreshInspector => {
            if let Some(title) = state.inspected.as_ref().map(|v| v.title.clone()) {
                apply(state, Action::Inspect(title), fx);
            }
        }
        Action::Follow => {
            state.clock.playing = false;
            fx.push(ask(state, SimRequest::Follow, Pending::Other));
            fx.push(Effect::Redraw);
        }
        Action::Unfollow => {
            state.following = None;
            state.spotlight = None;
            fx.push(Effect::Redraw);
        }
        Action::FollowStep(seq) => {
            state.spotlight = Some(seq);
            spotlight(state, seq, fx);
            fx.push(Effect::Redraw);
        }
        Action::SequenceSelect(seq, revision) => {
            // Its hop travels the map again, and the page shows the cluster as etcd held it
            // at that step's revision.
            state.spotlight = Some(seq);
            state.clock.playing = false;
            state.past = Some(revision);
            spotlight(state, seq, fx);
            fx.push(Effect::Redraw);
        }
        Action::FilterEvents(filter) => {
            state.event_filter = filter;
            fx.push(Effect::Redraw);
        }
        Action::Highlight(h) => {
            state.highlight = h;
            fx.push(Effect::Redraw);
        }
        Action::Pick(what) => {
            // A pod opens in the inspector; the scheduler, etcd or a controller's lane opens
            // its own view under the map.
            if what.starts_with("pod/") {
                apply(state, Action::Inspect(what), fx);
            } else {
                state.detail = Detail::from_pick(&what);
                fx.push(Effect::Redraw);
            }
        }
        Action::Detail(detail) => {
            state.detail = detail;
            fx.push(Effect::Redraw);
        }
        Action::Scrub(revision) => {
            // Time travel: the cluster as it was at an earlier etcd revision (the clock pauses).
            if revision >= state.revisions().1 {
                state.past = None;
            } else {
                state.clock.playing = false;
                state.past = Some(revision);
            }
            fx.push(Effect::Redraw);
        }
        Action::BackToNow => {
            state.past = None;
            fx.push(Effect::Redraw);
        }
    }
}

/// The followed step's message travels the map again, alone.
fn spotlight(state: &mut PageState, seq: u64, fx: &mut Vec<Effect>) {
    let now_ms = (state.real_ms)();
    fx.push(ask(state, SimRequest::Spotlight { seq, now_ms }, Pending::Other));
}

/// Sets the journal's clock and asks for it to be saved.
fn save(state: &mut PageState, fx: &mut Vec<Effect>) {
    state.journal.borrow_mut().now = state.view.time_ms;
    fx.push(Effect::Save);
}

/// The clock's tick: the simulation is asked to move on, unless it has not answered the
/// previous tick yet (a busy simulation is never sent a queue of ticks to catch up on).
fn tick(state: &mut PageState, fx: &mut Vec<Effect>) {
    if !state.view.ready || state.ticking() {
        return;
    }
    // Paused with nothing on its way across the map, there is nothing to ask.
    let now_ms = (state.real_ms)();
    if !state.clock.playing && !state.view.flow.busy && !state.view.flow.moving(now_ms) {
        return;
    }
    fx.push(ask(state, SimRequest::Tick { now_ms }, Pending::Tick));
}

/// A reply came: the frame, journal and lesson it brings are kept, and what was asked is
/// carried on.
fn replied(state: &mut PageState, then: Pending, reply: SimReply, fx: &mut Vec<Effect>) {
    let redraw = take_frame(state, &reply);
    if let Some(change) = reply.journal {
        let mut journal = state.journal.borrow_mut();
        let now = journal.now;
        let appended = matches!(change, JournalChange::Append { .. });
        change.apply_to(&mut journal);
        if appended {
            journal.now = journal.now.max(now);
        }
    }
    let mut changed = redraw;
    if let Some(l) = reply.lesson {
        state.lesson.progress = Some(l.progress);
        state.lesson.results = l.results;
        state.lesson.reasons = l.reasons;
        changed = true;
    }
    if let Some(rows) = &reply.watch_rows {
        let lines = state.lines();
        lines.push(Line::Out(rows.trim_end().to_string()));
        trim(lines);
        changed = true;
    }
    // A container shell's session ends when its container stops.
    if let Some(out) = &reply.ended {
        push_output(state.lines(), &out.to_output());
        changed = true;
    }
    if let Some(view) = reply.inspection {
        state.inspected = Some(view);
        changed = true;
    }
    if let Some(chain) = reply.following {
        state.following = Some(chain);
        changed = true;
    }
    let out = reply.output.map(|o| o.to_output());
    match then {
        Pending::Tick => {
            state.clock.ticks += 1;
            if state.clock.playing && !state.clock.teaching {
                state.clock.meter.observe((state.real_ms)(), state.view.time_ms);
            }
            if state.clock.ticks % (2 * TICKS_PER_S) == 0 {
                save(state, fx);
            }
            if changed {
                fx.push(Effect::RedrawIfDue);
            }
            return;
        }
        Pending::Load => {
            // A long replay comes in slices: the page shows how far it has come, and asks on.
            if let Some(progress) = reply.loading {
                state.loading = Some(progress);
                fx.push(ask(state, SimRequest::LoadMore, Pending::Load));
                fx.push(Effect::Redraw);
                return;
            }
            state.loading = None;
            // The page shows a cluster only once it is the student's: the session replayed.
            state.view.ready = true;
            if let Some(lines) = reply.replayed {
                state.terminal.lines = Rc::new(lines);
            }
        }
        Pending::Run { shown } => {
            state.lines().push(Line::Command(shown));
            if let Some(opened) = reply.opened {
                fx.push(Effect::SetEditorText(opened.text.clone()));
                fx.push(Effect::FocusEditor);
                state.lines().push(Line::Out(format!(
                    "Editing {} in the manifest editor: change it, then press \"save edit\" (like kubectl edit, it sends what you changed as a patch).",
                    opened.what
                )));
                state.editor.editing = Some(Rc::new(Editing { what: opened.what, opened: opened.text }));
            }
            if let Some(out) = &out {
                push_output(state.lines(), out);
            }
            if !reply.watching {
                save(state, fx);
            }
        }
        Pending::Echoed { .. } => {
            if let Some(out) = &out {
                push_output(state.lines(), out);
            }
            save(state, fx);
        }
        Pending::Typed { prompt, shown } => {
            let lines = state.lines();
            lines.push(Line::Typed(format!("{prompt}{shown}")));
            if let Some(out) = &out {
                push_output(lines, out);
            }
            save(state, fx);
        }
        Pending::Manifest { action, line, text } => {
            let out = out.unwrap_or_default();
            let ok = out.code == 0;
            let shown = if ok { out.stdout.trim_end().to_string() } else { out.combined().trim_end().to_string() };
            let lines = state.lines();
            lines.push(Line::Command(format!("{line} < manifest.yaml")));
            lines.push(if ok { Line::Out(shown.clone()) } else { Line::Err(shown.clone()) });
            if ok && action != ManifestAction::DryRun {
                state.editor.editing = None;
            }
            state.editor.marks =
                Rc::new(if ok { Vec::new() } else { crate::editor::errors::locate(&text, &out.stderr) });
            state.editor.result = Some((ok, shown));
            save(state, fx);
        }
        Pending::EditSave { text } => {
            let out = out.unwrap_or_default();
            let ok = out.code == 0;
            let shown = out.combined().trim_end().to_string();
            state.lines().push(if ok { Line::Out(shown.clone()) } else { Line::Err(shown.clone()) });
            if ok {
                state.editor.editing = None;
            }
            state.editor.marks =
                Rc::new(if ok { Vec::new() } else { crate::editor::errors::locate(&text, &out.stderr) });
            state.editor.result = Some((ok, shown));
            save(state, fx);
        }
        Pending::Complete => {
            if let Some(done) = reply.completion {
                fx.push(Effect::SetInput(done.line.clone()));
                if !done.candidates.is_empty() {
                    let lines = state.lines();
                    lines.push(Line::Command(done.line));
                    lines.push(Line::Out(done.candidates.join("  ")));
                }
            }
        }
        Pending::Export => {
            if let Some(file) = reply.export {
                fx.push(Effect::Download {
                    file: "kubeloop-export.yaml".into(),
                    text: file.text,
                    note: format!("kubeloop-export.yaml: {} object(s) you created, for kubectl apply -f", file.objects),
                });
            }
        }
        Pending::Save => save(state, fx),
        Pending::Other => {
            if changed {
                fx.push(Effect::Redraw);
            }
            return;
        }
    }
    fx.push(Effect::Redraw);
}

/// Keeps what the reply's frame brings; true when something drawn changed.
fn take_frame(state: &mut PageState, reply: &SimReply) -> bool {
    let f = &reply.frame;
    let v = &mut state.view;
    let mut changed = v.last_seq != f.last_seq || v.time_ms != f.time_ms || v.prompt != f.prompt;
    v.last_seq = f.last_seq;
    v.time_ms = f.time_ms;
    v.revisions = f.revisions;
    v.prompt = f.prompt.clone();
    if let Some(s) = &f.snapshot {
        v.snapshot = Rc::new(s.clone());
        changed = true;
    }
    // The layout comes apart, only when it changed; the page keeps the one it has (the same
    // `Rc`, so the map's parts drawn from it alone are not drawn again).
    if let Some(board) = f.whole_board(&v.board.layout) {
        if *v.board != board {
            v.board = Rc::new(board);
            changed = true;
        }
    }
    if *v.flow != f.flow {
        v.flow = Rc::new(f.flow.clone());
        changed = true;
    }
    // The sequence and the view under the map come with the tables (when they changed); the
    // page shows them while the student has them open.
    if f.snapshot.is_some() {
        let sequence = f.sequence.clone().map(Rc::new);
        if v.sequence != sequence {
            v.sequence = sequence;
            changed = true;
        }
        let detail = f.detail.clone().map(Rc::new);
        if v.detail != detail {
            v.detail = detail;
            changed = true;
        }
    }
    changed
}

/// A key in the terminal's input line, whose text is `value`.
fn terminal_key(state: &mut PageState, key: Key, value: String, fx: &mut Vec<Effect>) {
    match key {
        Key::Tab => {
            fx.push(Effect::KeyHandled);
            fx.push(ask(state, SimRequest::Complete(value), Pending::Complete));
        }
        Key::CtrlC if state.terminal.heredoc.is_some() => {
            // Ctrl-C abandons the here-document, as in a shell.
            fx.push(Effect::KeyHandled);
            state.terminal.heredoc = None;
            state.lines().push(Line::Typed(format!("> {value}^C")));
            fx.push(Effect::SetInput(String::new()));
            fx.push(Effect::Redraw);
        }
        Key::CtrlC => {
            fx.push(Effect::KeyHandled);
            fx.push(ask(state, SimRequest::Interrupt, Pending::Other));
            let line = match state.prompt() {
                Some(prompt) => Line::Typed(format!("{prompt}{value}^C")),
                None => Line::Command(format!("{value}^C")),
            };
            state.lines().push(line);
            fx.push(Effect::SetInput(String::new()));
            state.terminal.cursor = state.terminal.history.len();
            fx.push(Effect::Redraw);
        }
        // Ctrl-D at a container shell's empty prompt ends it, as `exit` does.
        Key::CtrlD => {
            if value.is_empty() && state.prompt().is_some() {
                fx.push(Effect::KeyHandled);
                typed(state, "exit".into(), fx);
            }
        }
        Key::Enter if state.terminal.heredoc.is_some() => {
            fx.push(Effect::SetInput(String::new()));
            state.lines().push(Line::Typed(format!("> {value}")));
            let ends = state.terminal.heredoc.as_ref().is_some_and(|h| value.trim_start_matches('\t') == h.word);
            if !ends {
                if let Some(h) = state.terminal.heredoc.as_mut() {
                    h.body.push(value);
                }
                fx.push(Effect::Redraw);
                return;
            }
            if let Some(h) = state.terminal.heredoc.take() {
                let mut stdin = h.body.join("\n");
                stdin.push('\n');
                let request = SimRequest::Run { line: h.line.clone(), stdin: Some(stdin), to_shell: false };
                fx.push(ask(state, request, Pending::Echoed { shown: h.line }));
            }
        }
        Key::Enter if state.prompt().is_none() && crate::util::command_line::heredoc_word(&value).is_some() => {
            // A here-document: its lines are typed next, after a `> ` prompt, up to its word.
            fx.push(Effect::SetInput(String::new()));
            state.terminal.history.push(value.clone());
            state.terminal.cursor = state.terminal.history.len();
            let word = crate::util::command_line::heredoc_word(&value).unwrap_or_default();
            state.lines().push(Line::Command(value.clone()));
            state.terminal.heredoc = Some(super::state::Heredoc { line: value, word, body: Vec::new() });
            fx.push(Effect::Redraw);
        }
        Key::Enter => {
            // Enter alone shows a container shell's prompt again.
            if value.trim().is_empty() && state.prompt().is_none() {
                return;
            }
            fx.push(Effect::SetInput(String::new()));
            if !value.trim().is_empty() {
                state.terminal.history.push(value.clone());
            }
            state.terminal.cursor = state.terminal.history.len();
            if state.prompt().is_some() {
                typed(state, value, fx);
            } else {
                let command = crate::shell::Command::new(&value);
                run(state, value, command, fx);
            }
        }
        Key::Up | Key::Down => {
            fx.push(Effect::KeyHandled);
            let t = &mut state.terminal;
            t.cursor = if key == Key::Up { t.cursor.saturating_sub(1) } else { (t.cursor + 1).min(t.history.len()) };
            fx.push(Effect::SetInput(t.history.get(t.cursor).cloned().unwrap_or_default()));
        }
    }
}

/// A line typed at the prompt of the container shell the terminal is attached to.
fn typed(state: &mut PageState, line: String, fx: &mut Vec<Effect>) {
    let prompt = state.prompt().unwrap_or_default();
    let request = SimRequest::Run { line: line.clone(), stdin: None, to_shell: true };
    fx.push(ask(state, request, Pending::Typed { prompt, shown: line }));
}

/// Runs a command as if typed, echoing it (as `shown`) and its output in the terminal. While
/// the terminal is attached to a container's shell, it runs beside it, as a second terminal
/// would. `kubectl get -w` stays open; `kubectl edit` opens the object in the editor.
fn run(state: &mut PageState, shown: String, command: crate::shell::Command, fx: &mut Vec<Effect>) {
    let stdin = command.heredoc.map(|(_, body)| body);
    let request = SimRequest::Run { line: command.line, stdin, to_shell: false };
    fx.push(ask(state, request, Pending::Run { shown }));
}

/// The editor's buttons: its text goes to kubectl on standard input (or, while `kubectl edit`
/// has an object open, what changed goes as a patch); a failure marks the lines it points at.
fn manifest(state: &mut PageState, action: ManifestAction, text: String, fx: &mut Vec<Effect>) {
    if let (Some(open), ManifestAction::Apply) = (state.editor.editing.clone(), action) {
        let request = SimRequest::EditSave { opened: open.opened.clone(), text: text.clone() };
        fx.push(ask(state, request, Pending::EditSave { text }));
        return;
    }
    let line = action.command_line();
    let request = SimRequest::Run { line: line.clone(), stdin: Some(text.clone()), to_shell: false };
    fx.push(ask(state, request, Pending::Manifest { action, line, text }));
}
