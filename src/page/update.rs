//! The one function that changes the page: it applies an action to the state, running what
//! it asks of the simulated session, and returns what the browser must then do.

use super::action::{Action, Effect, Key, ManifestAction};
use super::state::{Detail, PageState};
use super::terminal::{Editing, Line, edit_as_get, push_output, trim};
use crate::cluster::Cluster;
use crate::page::journal::Journal;
use crate::page::sim::SimRequest;
use crate::shell::Command;
use crate::sim::Duration;
use std::rc::Rc;

/// Real milliseconds between clock ticks. Short, so the simulation's budget per tick
/// (`BUDGET_MS`) comes round often.
pub const TICK_MS: u32 = 20;
/// Ticks in one real second.
pub const TICKS_PER_S: u32 = 1000 / TICK_MS;
/// Real milliseconds a tick may spend running components (the rest of a 16.7 ms frame draws).
pub const BUDGET_MS: f64 = 6.0;
/// At the teaching pace, while the map has nothing to show, virtual time runs this many times
/// faster than real time until something happens (a pull of a few seconds takes that long).
const TEACHING_IDLE_SPEED: u64 = 1;

/// Applies `action` to the page's state; returns what the shell must do, in order.
pub fn update(state: &mut PageState, action: Action) -> Vec<Effect> {
    let before = clock_key(state);
    let mut fx = Vec::new();
    let tick = action == Action::Tick;
    apply(state, action, &mut fx);
    if clock_key(state) != before {
        // A new speed, a pause or the teaching pace: the clock and its meter start afresh.
        state.clock.meter.reset();
        state.clock.ticks = 0;
    }
    if !tick {
        state.evaluate_if_unseen();
        if !fx.contains(&Effect::Redraw) && redraws_after(&fx) {
            fx.push(Effect::Redraw);
        }
    }
    fx
}

/// What the clock runs at: when it changes, the shell's timer starts again.
pub fn clock_key(state: &PageState) -> (bool, u64, bool, bool) {
    let c = &state.clock;
    (c.playing, (c.speed * 100.0) as u64, c.teaching, c.presenter)
}

/// A student's action redraws the page, unless all it did was drive the editor or the
/// terminal's line (which draw themselves), or nothing.
fn redraws_after(fx: &[Effect]) -> bool {
    fx.iter().any(|e| {
        !matches!(e, Effect::SetEditorText(_) | Effect::FocusEditor | Effect::SetInput(_) | Effect::KeyHandled)
    })
}

fn apply(state: &mut PageState, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Tick => tick(state, fx),
        Action::TerminalKey(key, value) => terminal_key(state, key, value, fx),
        Action::Run(shown, command) => run(state, shown, command, fx),
        Action::LessonRun(command) => run(state, command.line.clone(), command, fx),
        Action::LessonManifest(text) => {
            fx.push(Effect::SetEditorText(text));
            fx.push(Effect::FocusEditor);
        }
        Action::LessonGo(step) => {
            if let Some(p) = state.lesson.progress.as_mut() {
                p.go_to(step, state.sim.borrow().session());
            }
            state.evaluate();
            fx.push(Effect::Redraw);
        }
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
        Action::Step => {
            let now = state.sim.borrow().session().cluster.now();
            state.journal.borrow_mut().step(now);
            state.sim.borrow_mut().apply(SimRequest::Step);
            poll_watch(state);
            state.evaluate();
            save(state, fx);
            fx.push(Effect::Redraw);
        }
        Action::Settle => {
            run(state, "sim settle".into(), Command::new("sim settle"), fx);
            // Skipping to settled skips the story too: the map shows the settled cluster now
            // rather than telling every hop of the way at the teaching pace.
            state.flow.borrow_mut().skip(&state.sim.borrow().session().cluster);
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
        Action::Export => {
            let objects = crate::shell::export::objects(&state.sim.borrow().session().cluster);
            fx.push(Effect::Download {
                file: "kubeloop-export.yaml".into(),
                text: crate::shell::export::to_file(&objects),
                note: format!("kubeloop-export.yaml: {} object(s) you created, for kubectl apply -f", objects.len()),
            });
        }
        Action::Note(note) => {
            state.share_note = note;
            fx.push(Effect::Redraw);
        }
        Action::Reset => {
            state.sim.borrow_mut().apply(SimRequest::Reset { seed: state.seed });
            *state.journal.borrow_mut() = Journal::new(state.seed);
            state.lines().clear();
            save(state, fx);
            fx.push(Effect::ClearAddressHash);
            state.share_note.clear();
            fx.push(Effect::Redraw);
        }
        Action::Load(loaded) => {
            if let Some(j) = loaded {
                let lesson = state.lesson.source.clone();
                let reply = state.sim.borrow_mut().apply(SimRequest::Load { journal: j.clone(), lesson });
                *state.journal.borrow_mut() = j;
                state.terminal.lines = Rc::new(reply.replayed.unwrap_or_default());
            }
            fx.push(Effect::Redraw);
        }
        Action::Storage(status) => {
            state.storage = status;
            fx.push(Effect::Redraw);
        }
        Action::Inspect(target) => {
            // `kind/name`, or a bare pod name from the pod table.
            let (kind, name) = match target.split_once('/') {
                Some((k, n)) => (crate::api::Kind::from_resource_arg(k), n.to_string()),
                None => (Some(crate::api::Kind::Pod), target.clone()),
            };
            if let Some(kind) = kind {
                state.inspected =
                    Some(crate::views::overview::inspect(state.sim.borrow_mut().session_mut(), kind, "default", &name));
            }
            fx.push(Effect::Redraw);
        }
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
            state.following =
                Some(crate::views::overview::follow_latest_write(&state.sim.borrow().session().cluster, 300));
            fx.push(Effect::Redraw);
        }
        Action::Unfollow => {
            state.following = None;
            state.spotlight = None;
            fx.push(Effect::Redraw);
        }
        Action::FollowStep(seq) => {
            state.spotlight = Some(seq);
            fx.push(Effect::Redraw);
        }
        Action::SequenceSelect(seq, revision) => {
            // Its hop travels the map again, and the page shows the cluster as etcd held it
            // at that step's revision.
            state.spotlight = Some(seq);
            state.clock.playing = false;
            state.past = Some(revision);
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

/// Sets the journal's clock and asks for it to be saved.
fn save(state: &mut PageState, fx: &mut Vec<Effect>) {
    state.journal.borrow_mut().now = state.sim.borrow().session().cluster.now().0;
    fx.push(Effect::Save);
}

/// The clock's tick: virtual time moves on by the tick times the speed, or, at the teaching
/// pace, only while the map has nothing left to show.
fn tick(state: &mut PageState, fx: &mut Vec<Effect>) {
    if !state.clock.playing {
        return;
    }
    let mut ended = None;
    if state.clock.teaching {
        let pace = crate::views::flow::Pace::teaching(state.clock.presenter);
        // By reference still: at the teaching pace the clock waits on the map's flow, which
        // reads the record in place (a worker would run to the next recorded hop instead).
        let mut sim = state.sim.borrow_mut();
        let s = sim.session_mut();
        let mut f = state.flow.borrow_mut();
        let target = s.cluster.now() + Duration(u64::from(TICK_MS) * TEACHING_IDLE_SPEED);
        let mut steps = 0;
        while f.idle() && s.cluster.now() < target && steps < 2000 {
            s.cluster.step_toward(target);
            f.absorb(&s.cluster, pace);
            steps += 1;
        }
    } else {
        let speed_pct = clock_key(state).1;
        let step = Duration((u64::from(TICK_MS) * speed_pct / 100).max(1));
        let real_ms = state.real_ms;
        let mut sim = state.sim.borrow_mut();
        sim.set_real_clock(real_ms);
        ended = sim.apply(SimRequest::Advance { virtual_ms: step.0, budget_ms: BUDGET_MS }).ended;
        let now = sim.session().cluster.now().0;
        drop(sim);
        state.clock.meter.observe(real_ms(), now);
    }
    state.clock.ticks += 1;
    poll_watch(state);
    // A container shell's session ends when its container stops.
    let ended = ended.map(|o| o.to_output()).or_else(|| state.sim.borrow_mut().session_mut().poll());
    if let Some(out) = ended {
        push_output(state.lines(), &out);
        fx.push(Effect::Redraw);
    }
    let ticks = state.clock.ticks;
    if ticks % TICKS_PER_S == 0 {
        state.evaluate();
    }
    if ticks % (2 * TICKS_PER_S) == 0 {
        save(state, fx);
    }
    fx.push(Effect::RedrawIfDue);
}

/// Runs what is due within `d` of virtual time, as `Cluster::advance` does, unless that takes
/// more than `budget_ms` of real time (`real_ms`): then the clock stops where the work
/// stopped, and the next tick carries on from there.
pub fn advance_within(cluster: &mut Cluster, d: Duration, budget_ms: f64, real_ms: fn() -> f64) {
    let target = cluster.now() + d;
    let end = real_ms() + budget_ms;
    while cluster.now() < target {
        cluster.step_toward(target);
        if real_ms() >= end {
            break;
        }
    }
}

/// Runs a command in the simulation (`beside`: from a page control, as from a second
/// terminal) and returns what it printed.
fn execute(state: &PageState, command: &Command, beside: bool) -> crate::kubectl::Output {
    let stdin = command.heredoc.as_ref().map(|(_, body)| body.clone());
    let request = SimRequest::Run { line: command.line.clone(), stdin, beside };
    state.sim.borrow_mut().apply(request).output.map(|o| o.to_output()).unwrap_or_default()
}

/// The rows a live `kubectl get -w` has for the terminal now.
fn poll_watch(state: &mut PageState) {
    let Some(w) = state.live_watch.as_mut() else { return };
    let rows = w.poll(&mut state.sim.borrow_mut().session_mut().cluster);
    if !rows.is_empty() {
        let lines = Rc::make_mut(&mut state.terminal.lines);
        lines.push(Line::Out(rows.trim_end().to_string()));
        trim(lines);
    }
}

/// A key in the terminal's input line, whose text is `value`.
fn terminal_key(state: &mut PageState, key: Key, value: String, fx: &mut Vec<Effect>) {
    match key {
        Key::Tab => {
            fx.push(Effect::KeyHandled);
            let done = crate::shell::completion::complete(state.sim.borrow().session(), &value);
            fx.push(Effect::SetInput(done.line.clone()));
            if !done.candidates.is_empty() {
                let lines = state.lines();
                lines.push(Line::Command(done.line));
                lines.push(Line::Out(done.candidates.join("  ")));
                fx.push(Effect::Redraw);
            }
        }
        Key::CtrlC => {
            fx.push(Effect::KeyHandled);
            if let Some(watch) = state.live_watch.take() {
                watch.stop(&mut state.sim.borrow_mut().session_mut().cluster);
            }
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
                typed(state, "exit".into(), Command::new("exit"), fx);
            }
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
            let command = Command::new(&value);
            typed(state, value, command, fx);
        }
        Key::Up | Key::Down => {
            fx.push(Effect::KeyHandled);
            let t = &mut state.terminal;
            t.cursor = if key == Key::Up { t.cursor.saturating_sub(1) } else { (t.cursor + 1).min(t.history.len()) };
            fx.push(Effect::SetInput(t.history.get(t.cursor).cloned().unwrap_or_default()));
        }
    }
}

/// A line typed in the terminal: to the container's shell while attached to one (shown
/// after its prompt), else run as any command.
fn typed(state: &mut PageState, shown: String, command: Command, fx: &mut Vec<Effect>) {
    let Some(prompt) = state.prompt() else {
        run(state, shown, command, fx);
        return;
    };
    let now = state.sim.borrow().session().cluster.now();
    // An empty line changes nothing (and an empty journal entry is a step).
    if !command.line.trim().is_empty() {
        state.journal.borrow_mut().command(now, &command);
    }
    let out = execute(state, &command, false);
    state.evaluate();
    save(state, fx);
    let lines = state.lines();
    lines.push(Line::Typed(format!("{prompt}{shown}")));
    push_output(lines, &out);
    fx.push(Effect::Redraw);
}

/// Runs a command as if typed, echoing it (as `shown`) and its output in the terminal. While
/// the terminal is attached to a container's shell, it runs beside it, as a second terminal
/// would. `kubectl get -w` stays open; `kubectl edit` opens the object in the editor.
fn run(state: &mut PageState, shown: String, command: Command, fx: &mut Vec<Effect>) {
    let beside = state.prompt().is_some();
    let words = crate::shell::split_words(&command.line).unwrap_or_default();
    let live = match words.split_first() {
        Some((program, rest)) if (program == "kubectl" || program == "k") && !command.line.contains('|') => {
            crate::kubectl::start_live_watch(&mut state.sim.borrow_mut().session_mut().cluster, rest)
        }
        _ => None,
    };
    if let Some(started) = live {
        state.lines().push(Line::Command(shown));
        match started {
            Ok((out, watch)) => {
                push_output(state.lines(), &out);
                if let Some(old) = state.live_watch.replace(watch) {
                    old.stop(&mut state.sim.borrow_mut().session_mut().cluster);
                }
            }
            Err(out) => push_output(state.lines(), &out),
        }
        fx.push(Effect::Redraw);
        return;
    }
    if let Some(get) = edit_as_get(&command.line) {
        // The object's YAML opens in the editor (what was opened is kept), and saving sends
        // what changed since as a patch, as kubectl edit does.
        let now = state.sim.borrow().session().cluster.now();
        let get = Command::new(&get);
        state.journal.borrow_mut().command_beside(now, &get, beside);
        let out = execute(state, &get, true);
        state.lines().push(Line::Command(shown));
        if out.code == 0 {
            let opened = format!("{}{}", crate::kubectl::edit::HEADER, out.stdout);
            fx.push(Effect::SetEditorText(opened.clone()));
            fx.push(Effect::FocusEditor);
            let what = command.line.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
            state.lines().push(Line::Out(format!(
                "Editing {what} in the manifest editor: change it, then press \"save edit\" (like kubectl edit, it sends what you changed as a patch)."
            )));
            state.editor.editing = Some(Rc::new(Editing { what, opened }));
        } else {
            push_output(state.lines(), &out);
        }
        fx.push(Effect::Redraw);
        return;
    }
    let now = state.sim.borrow().session().cluster.now();
    state.journal.borrow_mut().command_beside(now, &command, beside);
    let out = execute(state, &command, true);
    state.evaluate();
    save(state, fx);
    let lines = state.lines();
    lines.push(Line::Command(shown));
    push_output(lines, &out);
    poll_watch(state);
    fx.push(Effect::Redraw);
}

/// The editor's buttons: its text goes to kubectl on standard input (or, while `kubectl edit`
/// has an object open, what changed goes as a patch); a failure marks the lines it points at.
fn manifest(state: &mut PageState, action: ManifestAction, text: String, fx: &mut Vec<Effect>) {
    if let (Some(open), ManifestAction::Apply) = (state.editor.editing.clone(), action) {
        let now = state.sim.borrow().session().cluster.now();
        let saved = crate::kubectl::edit::save(&mut state.sim.borrow_mut().session_mut().cluster, &open.opened, &text);
        // The session keeps the request the save sent, so that it replays.
        if let Some(replay) = &saved.replay {
            let beside = state.prompt().is_some();
            state.journal.borrow_mut().command_beside(now, replay, beside);
        }
        state.evaluate();
        save(state, fx);
        let out = saved.output;
        let ok = out.code == 0;
        let shown = out.combined().trim_end().to_string();
        state.lines().push(if ok { Line::Out(shown.clone()) } else { Line::Err(shown.clone()) });
        if ok {
            state.editor.editing = None;
        }
        state.editor.marks = Rc::new(if ok { Vec::new() } else { crate::editor::errors::locate(&text, &out.stderr) });
        state.editor.result = Some((ok, shown));
        fx.push(Effect::Redraw);
        return;
    }
    let line = action.command_line();
    let command = Command { line: line.clone(), heredoc: Some(("EOF".into(), text.clone())) };
    let now = state.sim.borrow().session().cluster.now();
    let beside = state.prompt().is_some();
    state.journal.borrow_mut().command_beside(now, &command, beside);
    let out = execute(state, &command, true);
    state.evaluate();
    save(state, fx);
    let ok = out.code == 0;
    let shown = if ok { out.stdout.trim_end().to_string() } else { out.combined().trim_end().to_string() };
    let lines = state.lines();
    lines.push(Line::Command(format!("{line} < manifest.yaml")));
    lines.push(if ok { Line::Out(shown.clone()) } else { Line::Err(shown.clone()) });
    if ok && action != ManifestAction::DryRun {
        state.editor.editing = None;
    }
    state.editor.marks = Rc::new(if ok { Vec::new() } else { crate::editor::errors::locate(&text, &out.stderr) });
    state.editor.result = Some((ok, shown));
    fx.push(Effect::Redraw);
}
