//! The page: renders snapshots of the simulated cluster and sends it commands. Everything it
//! shows comes from the core; it keeps no cluster state of its own.

mod clock;
pub mod etcd_view;
pub use crate::views::examples;
pub mod lesson;
pub mod manifest;
pub mod map;
pub mod panels;
pub mod reconcile_view;
pub mod scheduler_view;
pub mod sequence;
mod shortcuts;
pub mod storage;
pub mod view;

use crate::lessons::{Lesson, Progress};
use crate::shell::journal::Journal;
use crate::shell::{Command, Session};
use crate::sim::Duration;
use gloo_timers::callback::Interval;
use panels::{EventList, FollowChain, Inspector, NodeMap, PodTable, WorkloadTable};
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

/// Real milliseconds between clock ticks.
/// Short, so the simulation's budget per tick (`clock::BUDGET_MS`) comes round often.
const TICK_MS: u32 = 20;
/// Ticks in one real second.
const TICKS_PER_S: u32 = 1000 / TICK_MS;
/// Real milliseconds between two builds of the map's board while the clock runs.
const BOARD_MS: f64 = 200.0;
/// At the teaching pace, while the map has nothing to show, virtual time runs this many times
/// faster than real time until something happens (a pull of a few seconds takes that long).
const TEACHING_IDLE_SPEED: u64 = 1;
const SPEEDS: &[(f64, &str)] =
    &[(0.25, "0.25×"), (0.5, "0.5×"), (1.0, "1×"), (2.0, "2×"), (5.0, "5×"), (10.0, "10×"), (100.0, "100×")];

#[derive(Properties, PartialEq, Clone)]
pub struct AppProps {
    #[prop_or(1)]
    pub seed: u64,
    /// Start with the clock stopped (tests, and `?paused`).
    #[prop_or(false)]
    pub start_paused: bool,
    /// A session to pick up: from a shared link or the last visit.
    #[prop_or_default]
    pub journal: Option<Journal>,
    /// Keep the session in the browser's storage (off in tests).
    #[prop_or(false)]
    pub persist: bool,
    /// The lesson to follow (`?lesson=03-reconcile`), and the step to open (`&step=2`, from 1).
    #[prop_or_default]
    pub lesson: Option<String>,
    /// The lesson's Markdown, fetched from `lessons/<id>.md` before the app mounts (the page
    /// carries only the course's index), or why it could not be.
    #[prop_or_default]
    pub lesson_source: Option<Result<Rc<str>, String>>,
    #[prop_or_default]
    pub step: Option<usize>,
    /// Show the course's index beside the sandbox (`?lessons`).
    #[prop_or(false)]
    pub show_index: bool,
    /// Embedded in another page (`?embed`): no header chrome.
    #[prop_or(false)]
    pub embed: bool,
}

/// Where the page keeps the session between visits (a lesson's under its own key).
const STORAGE_KEY: &str = "kubeloop.session";

fn storage_key(lesson: Option<&str>) -> String {
    match lesson {
        Some(id) => format!("kubeloop.lesson.{id}"),
        None => STORAGE_KEY.to_string(),
    }
}

/// Saves the journal, with the clock's current time, for the next visit (`storage::save`:
/// a failure is shown, and another tab's session is left alone).
fn save(journal: &mut Journal, now: crate::sim::Time, persist: storage::Handle) {
    journal.now = now.0;
    storage::save(persist, journal);
}

/// One line of the terminal's scrollback.
#[derive(Clone, PartialEq)]
enum Line {
    Command(String),
    /// A line typed at a container shell's prompt, shown after that prompt (`/ # hostname`).
    Typed(String),
    Out(String),
    Err(String),
}

#[function_component(App)]
pub fn app(props: &AppProps) -> Html {
    let loaded = use_state(|| load_lesson(props.lesson.as_deref(), props.lesson_source.as_ref()));
    let lesson = use_state(|| loaded.as_ref().ok().cloned().flatten());
    let lesson_problem = loaded.as_ref().err().cloned();
    let seed = props.journal.as_ref().map_or(props.seed, |j| j.seed);
    let scrollback = use_mut_ref(Vec::<Line>::new);
    let journal = {
        let lesson = (*lesson).clone();
        use_mut_ref(move || match (&lesson, props.journal.clone()) {
            (Some(l), Some(j)) if j.lesson.as_deref() == Some(l.id.as_str()) => j,
            (Some(l), _) => Journal::for_lesson(l),
            (None, Some(j)) if j.lesson.is_none() => j,
            (None, _) => Journal::new(seed),
        })
    };
    let session = {
        let scrollback = scrollback.clone();
        let journal = journal.clone();
        let lesson = (*lesson).clone();
        use_mut_ref(move || {
            let j = journal.borrow();
            if j.entries.is_empty() && j.now == 0 && j.lesson.is_none() {
                return Session::new(seed);
            }
            let mut sb = scrollback.borrow_mut();
            j.replay_in(lesson.as_deref(), Some(crate::sim::Time(j.now)), |command, prompt, out| {
                sb.push(match prompt {
                    Some(prompt) => Line::Typed(format!("{prompt}{}", command.line)),
                    None => Line::Command(command.line.clone()),
                });
                push_output(&mut sb, out);
            })
        })
    };
    // The cluster is up (the end-to-end check reads this mark).
    use_mut_ref(|| clock::mark("kubeloop-booted"));
    let redraw = use_force_update();
    let persist = storage::use_store(props.persist, (*lesson).clone(), redraw.clone());
    // What drawing the page costs, so a big cluster's ticks redraw it less often.
    let redraws = use_mut_ref(clock::Redraws::default);
    redraws.borrow_mut().start(clock::now_ms());
    {
        let redraws = redraws.clone();
        use_effect(move || redraws.borrow_mut().done(clock::now_ms()));
    }
    // A `kubectl get -w` left open: its rows arrive as the clock runs, until Ctrl-C.
    let live_watch = use_mut_ref(|| None::<crate::kubectl::watch::LiveWatch>);
    let poll_watch: Rc<dyn Fn()> = {
        let (live_watch, session, scrollback) = (live_watch.clone(), session.clone(), scrollback.clone());
        Rc::new(move || {
            if let Some(w) = live_watch.borrow_mut().as_mut() {
                let rows = w.poll(&mut session.borrow_mut().cluster);
                if !rows.is_empty() {
                    let mut sb = scrollback.borrow_mut();
                    sb.push(Line::Out(rows.trim_end().to_string()));
                    let excess = sb.len().saturating_sub(400);
                    sb.drain(..excess);
                }
            }
        })
    };
    let progress = {
        let (lesson, journal, session) = ((*lesson).clone(), journal.clone(), session.clone());
        let step = props.step;
        use_mut_ref(move || {
            let l = lesson?;
            let session = session.borrow();
            let saved = journal.borrow().progress.as_deref().and_then(|p| Progress::from_json(p, &l));
            let mut p = saved.unwrap_or_else(|| Progress::new(&l, &session));
            if let Some(n) = step {
                p.go_to(n.saturating_sub(1), &session);
            }
            Some(p)
        })
    };
    let results = use_mut_ref(Vec::<crate::lessons::CheckResult>::new);
    // Looks at the lesson's checks against the cluster as it is now (they leave no trace).
    let evaluate: Rc<dyn Fn()> = {
        let (lesson, progress, results) = ((*lesson).clone(), progress.clone(), results.clone());
        let (session, journal) = (session.clone(), journal.clone());
        Rc::new(move || {
            let Some(l) = &lesson else { return };
            let mut guard = progress.borrow_mut();
            let Some(p) = guard.as_mut() else { return };
            let mut s = session.borrow_mut();
            let eval = p.evaluate(l, &mut s);
            *results.borrow_mut() = if eval.step_complete { p.check(l, &mut s) } else { eval.results };
            journal.borrow_mut().progress = Some(p.to_json());
        })
    };
    let playing = use_state(|| !props.start_paused);
    let speed = use_state(|| 1.0f64);
    // The speed the clock really achieves, said when it falls short of the one chosen.
    let meter = use_mut_ref(crate::views::speed::SpeedMeter::default);
    // The teaching pace: the simulation waits for the map, one hop at a time.
    // The sandbox opens at it, so a first apply is told as a story; a lesson runs at 1×.
    let teaching = use_state(|| props.lesson.is_none());
    let presenter = use_state(|| false);
    let flow = {
        let session = session.clone();
        use_mut_ref(move || crate::views::flow::Flow::new(session.borrow().cluster.record.last_seq()))
    };
    let editor = use_node_ref();
    let terminal_input = use_node_ref();
    let apply_result = use_state(|| None::<(bool, String)>);
    let history = use_mut_ref(Vec::<String>::new);

    // The clock: each tick advances virtual time by the tick times the speed.
    {
        let session = session.clone();
        let redraw = redraw.clone();
        let journal = journal.clone();
        let evaluate = evaluate.clone();
        let poll_watch = poll_watch.clone();
        let redraws = redraws.clone();
        let scrollback = scrollback.clone();
        let flow = flow.clone();
        let meter = meter.clone();
        use_effect_with(
            (*playing, (*speed * 100.0) as u64, *teaching, *presenter),
            move |(playing, speed_pct, teaching, slow_motion)| {
                let (teaching, slow_motion) = (*teaching, *slow_motion);
                // A new speed, a pause or the teaching pace: the measured speed starts afresh.
                meter.borrow_mut().reset();
                let interval = playing.then(|| {
                    let step = Duration((u64::from(TICK_MS) * speed_pct / 100).max(1));
                    let pace = crate::views::flow::Pace::teaching(slow_motion);
                    let journal = journal.clone();
                    let evaluate = evaluate.clone();
                    let poll_watch = poll_watch.clone();
                    let scrollback = scrollback.clone();
                    let mut ticks = 0u32;
                    Interval::new(TICK_MS, move || {
                        if teaching {
                            // The simulation waits for the picture: it runs only while the map has
                            // nothing left to show, and stops as soon as it has.
                            let mut s = session.borrow_mut();
                            let mut f = flow.borrow_mut();
                            let target = s.cluster.now() + Duration(u64::from(TICK_MS) * TEACHING_IDLE_SPEED);
                            let mut steps = 0;
                            while f.idle() && s.cluster.now() < target && steps < 2000 {
                                s.cluster.step_toward(target);
                                f.absorb(&s.cluster, pace);
                                steps += 1;
                            }
                        } else {
                            clock::advance_within(&mut session.borrow_mut().cluster, step, clock::BUDGET_MS);
                            meter.borrow_mut().observe(clock::now_ms(), session.borrow().cluster.now().0);
                        }
                        ticks += 1;
                        poll_watch();
                        // A container shell's session ends when its container stops.
                        let ended = session.borrow_mut().poll();
                        if let Some(out) = ended {
                            push_output(&mut scrollback.borrow_mut(), &out);
                            redraw.force_update();
                        }
                        if ticks % TICKS_PER_S == 0 {
                            evaluate();
                        }
                        if ticks % (2 * TICKS_PER_S) == 0 {
                            save(&mut journal.borrow_mut(), session.borrow().cluster.now(), persist);
                        }
                        if redraws.borrow().due(clock::now_ms()) {
                            redraw.force_update();
                        }
                    })
                });
                move || drop(interval)
            },
        );
    }

    // Runs a command as if typed, echoing it and its output in the terminal.
    // `kubectl edit` in the page: the object's YAML opens in the editor (what was opened is
    // kept), and saving sends what changed since as a patch, as kubectl edit does.
    let editing = use_state(|| None::<Rc<Editing>>);
    let run = {
        let session = session.clone();
        let scrollback = scrollback.clone();
        let redraw = redraw.clone();
        let journal = journal.clone();
        let evaluate = evaluate.clone();
        let (editor, editing) = (editor.clone(), editing.clone());
        let (live_watch, poll_watch) = (live_watch.clone(), poll_watch.clone());
        Callback::from(move |(shown, command): (String, Command)| {
            // While the terminal is attached to a container's shell, a page control runs its
            // command beside it, as a second terminal would.
            let beside = session.borrow().prompt().is_some();
            let words = crate::shell::split_words(&command.line).unwrap_or_default();
            let live = match words.split_first() {
                Some((program, rest)) if (program == "kubectl" || program == "k") && !command.line.contains('|') => {
                    crate::kubectl::start_live_watch(&mut session.borrow_mut().cluster, rest)
                }
                _ => None,
            };
            if let Some(started) = live {
                let mut sb = scrollback.borrow_mut();
                sb.push(Line::Command(shown));
                match started {
                    Ok((out, watch)) => {
                        push_output(&mut sb, &out);
                        if let Some(old) = live_watch.borrow_mut().replace(watch) {
                            old.stop(&mut session.borrow_mut().cluster);
                        }
                    }
                    Err(out) => push_output(&mut sb, &out),
                }
                drop(sb);
                redraw.force_update();
                return;
            }
            if let Some(get) = edit_as_get(&command.line) {
                let now = session.borrow().cluster.now();
                let get = Command::new(&get);
                journal.borrow_mut().command_beside(now, &get, beside);
                let out = session.borrow_mut().execute_beside(&get);
                let mut sb = scrollback.borrow_mut();
                sb.push(Line::Command(shown));
                if out.code == 0 {
                    let opened = format!("{}{}", crate::kubectl::edit::HEADER, out.stdout);
                    manifest::set_text(&editor, &opened);
                    if let Some(area) = editor.cast::<HtmlTextAreaElement>() {
                        let _ = area.focus();
                    }
                    let what = command.line.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
                    sb.push(Line::Out(format!(
                        "Editing {what} in the manifest editor: change it, then press \"save edit\" (like kubectl edit, it sends what you changed as a patch)."
                    )));
                    editing.set(Some(Rc::new(Editing { what, opened })));
                } else {
                    push_output(&mut sb, &out);
                }
                drop(sb);
                redraw.force_update();
                return;
            }
            let now = session.borrow().cluster.now();
            journal.borrow_mut().command_beside(now, &command, beside);
            let out = session.borrow_mut().execute_beside(&command);
            evaluate();
            save(&mut journal.borrow_mut(), session.borrow().cluster.now(), persist);
            let mut sb = scrollback.borrow_mut();
            sb.push(Line::Command(shown));
            push_output(&mut sb, &out);
            drop(sb);
            poll_watch();
            redraw.force_update();
        })
    };

    // A line typed in the terminal: to the container's shell while attached to one (shown
    // after its prompt), else run as any command.
    let typed = {
        let (session, scrollback, redraw) = (session.clone(), scrollback.clone(), redraw.clone());
        let (journal, evaluate, run) = (journal.clone(), evaluate.clone(), run.clone());
        Callback::from(move |(shown, command): (String, Command)| {
            let prompt = session.borrow().prompt().map(String::from);
            let Some(prompt) = prompt else {
                run.emit((shown, command));
                return;
            };
            let now = session.borrow().cluster.now();
            // An empty line changes nothing (and an empty journal entry is a step).
            if !command.line.trim().is_empty() {
                journal.borrow_mut().command(now, &command);
            }
            let out = session.borrow_mut().execute(&command);
            evaluate();
            save(&mut journal.borrow_mut(), session.borrow().cluster.now(), persist);
            let mut sb = scrollback.borrow_mut();
            sb.push(Line::Typed(format!("{prompt}{shown}")));
            push_output(&mut sb, &out);
            drop(sb);
            redraw.force_update();
        })
    };

    // The editor's buttons: its text goes to kubectl on standard input; a failure marks the
    // lines it points at.
    let marks = use_state(|| Rc::new(Vec::<crate::editor::errors::Mark>::new()));
    let on_action = {
        let (session, journal, evaluate) = (session.clone(), journal.clone(), evaluate.clone());
        let (editor, apply_result, scrollback) = (editor.clone(), apply_result.clone(), scrollback.clone());
        let (redraw, editing, marks) = (redraw.clone(), editing.clone(), marks.clone());
        Callback::from(move |action: manifest::Action| {
            let text = editor.cast::<HtmlTextAreaElement>().map(|t| t.value()).unwrap_or_default();
            if let (Some(open), manifest::Action::Apply) = (&*editing, action) {
                let now = session.borrow().cluster.now();
                let saved = crate::kubectl::edit::save(&mut session.borrow_mut().cluster, &open.opened, &text);
                // The session keeps the request the save sent, so that it replays.
                if let Some(replay) = &saved.replay {
                    let beside = session.borrow().prompt().is_some();
                    journal.borrow_mut().command_beside(now, replay, beside);
                }
                evaluate();
                save(&mut journal.borrow_mut(), session.borrow().cluster.now(), persist);
                let out = saved.output;
                let ok = out.code == 0;
                let shown = out.combined().trim_end().to_string();
                scrollback.borrow_mut().push(if ok { Line::Out(shown.clone()) } else { Line::Err(shown.clone()) });
                if ok {
                    editing.set(None);
                }
                marks.set(Rc::new(if ok { Vec::new() } else { crate::editor::errors::locate(&text, &out.stderr) }));
                apply_result.set(Some((ok, shown)));
                redraw.force_update();
                return;
            }
            let line = manifest::command_line(action);
            let command = Command { line: line.clone(), heredoc: Some(("EOF".into(), text.clone())) };
            let now = session.borrow().cluster.now();
            let beside = session.borrow().prompt().is_some();
            journal.borrow_mut().command_beside(now, &command, beside);
            let out = session.borrow_mut().execute_beside(&command);
            evaluate();
            save(&mut journal.borrow_mut(), session.borrow().cluster.now(), persist);
            let ok = out.code == 0;
            let shown = if ok { out.stdout.trim_end().to_string() } else { out.combined().trim_end().to_string() };
            let mut sb = scrollback.borrow_mut();
            sb.push(Line::Command(format!("{line} < manifest.yaml")));
            if ok && action != manifest::Action::DryRun {
                editing.set(None);
            }
            sb.push(if ok { Line::Out(shown.clone()) } else { Line::Err(shown.clone()) });
            drop(sb);
            marks.set(Rc::new(if ok { Vec::new() } else { crate::editor::errors::locate(&text, &out.stderr) }));
            apply_result.set(Some((ok, shown)));
            redraw.force_update();
        })
    };
    // Typing clears the marks. Kept across the clock's redraws, so the editor only redraws
    // when its text or marks change.
    let on_edit = use_callback(marks.clone(), |(), marks| {
        if !marks.is_empty() {
            marks.set(Rc::default());
        }
    });

    let example = use_state(|| examples::EXAMPLES[0].id);
    let on_example = {
        let editor = editor.clone();
        let example = example.clone();
        Callback::from(move |e: Event| {
            let id = e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value()).unwrap_or_default();
            if let Some(ex) = examples::EXAMPLES.iter().find(|x| x.id == id) {
                manifest::set_text(&editor, ex.manifest);
                example.set(ex.id);
            }
        })
    };

    let on_settle = {
        let (run, flow, session) = (run.clone(), flow.clone(), session.clone());
        Callback::from(move |_: MouseEvent| {
            run.emit(("sim settle".into(), Command::new("sim settle")));
            // Skipping to settled skips the story too: the map shows the settled cluster now
            // rather than telling every hop of the way at the teaching pace.
            flow.borrow_mut().skip(&session.borrow().cluster);
        })
    };
    let on_step = {
        let session = session.clone();
        let redraw = redraw.clone();
        let evaluate = evaluate.clone();
        let poll_watch = poll_watch.clone();
        let journal = journal.clone();
        Callback::from(move |_: MouseEvent| {
            let now = session.borrow().cluster.now();
            journal.borrow_mut().step(now);
            session.borrow_mut().cluster.step();
            poll_watch();
            evaluate();
            save(&mut journal.borrow_mut(), session.borrow().cluster.now(), persist);
            redraw.force_update();
        })
    };
    let on_presenter = {
        let presenter = presenter.clone();
        let speed = speed.clone();
        let teaching = teaching.clone();
        Callback::from(move |_: MouseEvent| {
            // Presenting plays at the teaching pace so a room can follow; leaving restores 1×.
            speed.set(1.0);
            teaching.set(!*presenter);
            presenter.set(!*presenter);
        })
    };
    let share_note = use_state(String::new);
    let on_share = {
        let session = session.clone();
        let journal = journal.clone();
        let share_note = share_note.clone();
        Callback::from(move |_: MouseEvent| {
            save(&mut journal.borrow_mut(), session.borrow().cluster.now(), persist);
            share_note.set(storage::share(persist, &journal.borrow()));
        })
    };
    // Puts a session in the page in place of this one (a tab taking over, back from a shared
    // session); None only redraws.
    let on_load = {
        let (session, journal, scrollback, redraw) =
            (session.clone(), journal.clone(), scrollback.clone(), redraw.clone());
        let lesson = (*lesson).clone();
        Callback::from(move |loaded: Option<Journal>| {
            if let Some(j) = loaded {
                let mut sb = scrollback.borrow_mut();
                sb.clear();
                *session.borrow_mut() =
                    j.replay_in(lesson.as_deref(), Some(crate::sim::Time(j.now)), |command, prompt, out| {
                        sb.push(match prompt {
                            Some(prompt) => Line::Typed(format!("{prompt}{}", command.line)),
                            None => Line::Command(command.line.clone()),
                        });
                        push_output(&mut sb, out);
                    });
                *journal.borrow_mut() = j;
            }
            redraw.force_update();
        })
    };
    // Downloads what the student made as one YAML file for a real cluster (`sim export`).
    let on_export = {
        let (session, share_note) = (session.clone(), share_note.clone());
        Callback::from(move |_: MouseEvent| {
            let objects = crate::shell::export::objects(&session.borrow().cluster);
            share_note.set(match download("kubeloop-export.yaml", &crate::shell::export::to_file(&objects)) {
                Some(()) => {
                    format!("kubeloop-export.yaml: {} object(s) you created, for kubectl apply -f", objects.len())
                }
                None => "the browser refused the download".into(),
            });
        })
    };
    let on_reset = {
        let session = session.clone();
        let journal = journal.clone();
        let scrollback = scrollback.clone();
        let redraw = redraw.clone();
        let share_note = share_note.clone();
        Callback::from(move |_: MouseEvent| {
            *session.borrow_mut() = Session::new(seed);
            *journal.borrow_mut() = Journal::new(seed);
            scrollback.borrow_mut().clear();
            save(&mut journal.borrow_mut(), session.borrow().cluster.now(), persist);
            if let Some(location) = web_sys::window().map(|w| w.location()) {
                let _ = location.set_hash("");
            }
            share_note.set(String::new());
            redraw.force_update();
        })
    };
    let on_play = {
        let playing = playing.clone();
        Callback::from(move |_: MouseEvent| playing.set(!*playing))
    };
    let on_speed = {
        let (speed, teaching) = (speed.clone(), teaching.clone());
        Callback::from(move |e: Event| {
            let value = e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value()).unwrap_or_default();
            if value == "teaching" {
                teaching.set(true);
            } else if let Ok(v) = value.parse::<f64>() {
                teaching.set(false);
                speed.set(v);
            }
        })
    };
    let on_delete_pod = {
        let run = run.clone();
        Callback::from(move |name: String| {
            let line = format!("kubectl delete pod {name} --wait=false");
            run.emit((line.clone(), Command::new(&line)));
        })
    };
    let on_command = {
        let run = run.clone();
        Callback::from(move |line: String| run.emit((line.clone(), Command::new(&line))))
    };
    let on_terminal_key = {
        let run = typed.clone();
        let input = terminal_input.clone();
        let history = history.clone();
        let cursor = use_mut_ref(|| 0usize);
        let session = session.clone();
        let scrollback = scrollback.clone();
        let redraw = redraw.clone();
        let live_watch = live_watch.clone();
        Callback::from(move |e: KeyboardEvent| {
            let Some(field) = input.cast::<HtmlInputElement>() else { return };
            match e.key().as_str() {
                "Tab" => {
                    e.prevent_default();
                    let done = crate::shell::completion::complete(&session.borrow(), &field.value());
                    field.set_value(&done.line);
                    if !done.candidates.is_empty() {
                        let mut sb = scrollback.borrow_mut();
                        sb.push(Line::Command(done.line.clone()));
                        sb.push(Line::Out(done.candidates.join("  ")));
                        drop(sb);
                        redraw.force_update();
                    }
                }
                "c" if e.ctrl_key() => {
                    e.prevent_default();
                    if let Some(watch) = live_watch.borrow_mut().take() {
                        watch.stop(&mut session.borrow_mut().cluster);
                    }
                    let line = match session.borrow().prompt() {
                        Some(prompt) => Line::Typed(format!("{prompt}{}^C", field.value())),
                        None => Line::Command(format!("{}^C", field.value())),
                    };
                    scrollback.borrow_mut().push(line);
                    field.set_value("");
                    *cursor.borrow_mut() = history.borrow().len();
                    redraw.force_update();
                }
                // Ctrl-D at a container shell's empty prompt ends it, as `exit` does.
                "d" if e.ctrl_key() && field.value().is_empty() && session.borrow().prompt().is_some() => {
                    e.prevent_default();
                    run.emit(("exit".to_string(), Command::new("exit")));
                }
                "Enter" => {
                    let line = field.value();
                    // Enter alone shows a container shell's prompt again.
                    if line.trim().is_empty() && session.borrow().prompt().is_none() {
                        return;
                    }
                    field.set_value("");
                    if !line.trim().is_empty() {
                        history.borrow_mut().push(line.clone());
                    }
                    *cursor.borrow_mut() = history.borrow().len();
                    run.emit((line.clone(), Command::new(&line)));
                }
                "ArrowUp" | "ArrowDown" => {
                    e.prevent_default();
                    let h = history.borrow();
                    let mut c = cursor.borrow_mut();
                    if e.key() == "ArrowUp" {
                        *c = c.saturating_sub(1);
                    } else {
                        *c = (*c + 1).min(h.len());
                    }
                    field.set_value(h.get(*c).map_or("", String::as_str));
                }
                _ => {}
            }
        })
    };

    // Keyboard shortcuts, outside text fields: space play/pause, "." one step, "s" skip to
    // settled, "p" presenter mode.
    {
        let (playing, presenter, speed, teaching) =
            (playing.clone(), presenter.clone(), speed.clone(), teaching.clone());
        let (on_step, on_settle) = (on_step.clone(), on_settle.clone());
        use_effect_with((*playing, *presenter), move |_| {
            let listener = shortcuts::listen(move |key| match key {
                " " => playing.set(!*playing),
                "." | "s" => {
                    if let Ok(click) = MouseEvent::new("click") {
                        if key == "." { on_step.emit(click) } else { on_settle.emit(click) }
                    }
                }
                "p" => {
                    speed.set(1.0);
                    teaching.set(!*presenter);
                    presenter.set(!*presenter);
                }
                _ => {}
            });
            move || drop(listener)
        });
    }

    let on_lesson_run = {
        let run = run.clone();
        Callback::from(move |command: Command| run.emit((command.line.clone(), command)))
    };
    let on_lesson_manifest = {
        let editor = editor.clone();
        Callback::from(move |text: String| {
            manifest::set_text(&editor, &text);
            if let Some(area) = editor.cast::<HtmlTextAreaElement>() {
                let _ = area.focus();
            }
        })
    };
    let on_lesson_go = {
        let (progress, session, evaluate, redraw) =
            (progress.clone(), session.clone(), evaluate.clone(), redraw.clone());
        Callback::from(move |step: usize| {
            if let Some(p) = progress.borrow_mut().as_mut() {
                p.go_to(step, &session.borrow());
            }
            evaluate();
            redraw.force_update();
        })
    };
    if (*lesson).is_some() && results.borrow().is_empty() {
        evaluate();
    }
    let lesson_panel = match (&*lesson, progress.borrow().as_ref()) {
        (Some(l), Some(p)) => html! {
            <lesson::LessonPanel lesson={l.clone()} progress={p.clone()} results={results.borrow().clone()}
                on_run={on_lesson_run} on_manifest={on_lesson_manifest} on_go={on_lesson_go} />
        },
        _ if props.show_index || props.lesson.is_some() => html! { <lesson::LessonIndex problem={lesson_problem} /> },
        _ => html! {},
    };
    let with_lesson = (*lesson).is_some() || props.show_index || props.lesson.is_some();

    let inspected = use_state(|| None::<crate::views::overview::Inspection>);
    let open_inspector = {
        let (session, inspected) = (session.clone(), inspected.clone());
        Callback::from(move |target: String| {
            // `kind/name`, or a bare pod name from the pod table.
            let (kind, name) = match target.split_once('/') {
                Some((k, n)) => (crate::api::Kind::from_resource_arg(k), n.to_string()),
                None => (Some(crate::api::Kind::Pod), target.clone()),
            };
            if let Some(kind) = kind {
                let view = crate::views::overview::inspect(&mut session.borrow_mut(), kind, "default", &name);
                inspected.set(Some(view));
            }
        })
    };
    let on_inspect_pod = open_inspector.reform(|name: String| format!("pod/{name}"));
    let on_close_inspector = {
        let inspected = inspected.clone();
        Callback::from(move |_| inspected.set(None))
    };
    let on_refresh_inspector = {
        let (inspected, open) = (inspected.clone(), open_inspector.clone());
        Callback::from(move |_| {
            if let Some(v) = &*inspected {
                open.emit(v.title.clone());
            }
        })
    };
    let following = use_state(|| None::<Vec<crate::views::overview::ChainStep>>);
    let on_follow = {
        let (session, following, playing) = (session.clone(), following.clone(), playing.clone());
        Callback::from(move |_: MouseEvent| {
            playing.set(false);
            following.set(Some(crate::views::overview::follow_latest_write(&session.borrow().cluster, 300)));
        })
    };
    // The followed step's message, sent across the map on its own.
    let spotlight = use_state(|| None::<u64>);
    let on_follow_step = {
        let spotlight = spotlight.clone();
        Callback::from(move |seq: u64| spotlight.set(Some(seq)))
    };
    let on_unfollow = {
        let (following, spotlight) = (following.clone(), spotlight.clone());
        Callback::from(move |_| {
            following.set(None);
            spotlight.set(None);
        })
    };
    let event_filter = use_state(panels::EventFilter::default);
    let on_event_filter = {
        let event_filter = event_filter.clone();
        Callback::from(move |f: panels::EventFilter| event_filter.set(f))
    };
    let highlight = use_state(|| None::<String>);
    // The view opened from the map, under it.
    let detail = use_state(|| None::<Detail>);
    let board_memo = use_mut_ref(|| None::<((u64, i64, Option<i64>), f64, map::SharedBoard)>);
    let on_highlight = {
        let highlight = highlight.clone();
        Callback::from(move |h: Option<String>| highlight.set(h))
    };

    // Time travel: the cluster as it was at an earlier etcd revision (the clock pauses).
    let past = use_state(|| None::<i64>);
    let (oldest, latest) = {
        let s = session.borrow();
        let etcd = s.cluster.api().etcd();
        (etcd.compacted_revision().max(1), etcd.revision())
    };
    let on_scrub = {
        let (past, playing) = (past.clone(), playing.clone());
        Callback::from(move |e: InputEvent| {
            let Some(v) = e.target_dyn_into::<HtmlInputElement>().and_then(|i| i.value().parse::<i64>().ok()) else {
                return;
            };
            if v >= latest {
                past.set(None);
            } else {
                playing.set(false);
                past.set(Some(v));
            }
        })
    };
    // A step chosen in the sequence diagram: its hop travels the map again, and the page shows
    // the cluster as etcd held it at that step's revision.
    let on_sequence_select = {
        let (spotlight, past, playing) = (spotlight.clone(), past.clone(), playing.clone());
        Callback::from(move |(seq, revision): (u64, i64)| {
            spotlight.set(Some(seq));
            playing.set(false);
            past.set(Some(revision));
        })
    };
    let on_now = {
        let past = past.clone();
        Callback::from(move |_: MouseEvent| past.set(None))
    };

    // The first snapshot is on the page and the terminal takes commands: the end-to-end check
    // reads this mark as "time to first interactive cluster".
    use_effect_with((), |_| clock::mark("kubeloop-interactive"));
    let snap = view::snapshot_at(&session.borrow(), *past);
    // At the teaching pace the map shows the cluster as of the hop on it: the simulation is a
    // step ahead, and the picture must not give away what the story has not told yet.
    // Paused, the student looks at the cluster as it is.
    let shown = match *past {
        Some(rev) => Some(rev),
        None if *teaching && *playing => flow.borrow().revision(),
        None => None,
    };
    // Built again only when the cluster moved or another moment is shown — and, while the
    // clock runs, at most a few times a second: the tokens move every frame on their own, and a
    // big cluster's board is costly to build and draw.
    let board = {
        let key = (session.borrow().cluster.record.last_seq(), session.borrow().cluster.api().etcd().revision(), shown);
        let now = clock::now_ms();
        let mut memo = board_memo.borrow_mut();
        match &*memo {
            Some((k, _, b)) if *k == key => b.clone(),
            Some((k, built, b)) if *playing && k.2 == key.2 && now - built < BOARD_MS => b.clone(),
            _ => {
                let b = map::SharedBoard(Rc::new(crate::views::map::board_at(&session.borrow().cluster, shown)));
                *memo = Some((key, now, b.clone()));
                b
            }
        }
    };
    // A click on the map: a pod opens in the inspector; the scheduler, etcd or a controller's
    // lane opens its own view under the map.
    let on_pick = {
        let (open_inspector, detail) = (open_inspector.clone(), detail.clone());
        Callback::from(move |what: String| {
            if what.starts_with("pod/") {
                open_inspector.emit(what);
            } else {
                detail.set(Detail::from_pick(&what));
            }
        })
    };
    let detail_panel = detail_view(&session.borrow(), &detail);
    let clock = snap.now.since(crate::sim::Time::ZERO);
    let (ok, message) = match &*apply_result {
        Some((ok, m)) => (*ok, m.clone()),
        None => (true, String::new()),
    };
    // Attached to a container's shell, the terminal shows that shell's prompt.
    let prompt = session.borrow().prompt().unwrap_or("$ ").trim_end().to_string();
    let attached = session.borrow().prompt().is_some();
    html! {
        <div class={classes!("app", presenter.then_some("presenter"), props.embed.then_some("embed"))}>
            <header class="topbar">
                <h1>{logo()}{" kubeloop"}</h1>
                if !props.embed {
                    <p class="tagline">{"a Kubernetes control plane and its nodes, simulated in your browser"}</p>
                    <a class="lessons-link" href="?lessons">{"lessons"}</a>
                }
                <div class="time-controls" role="group" aria-label="Time controls">
                    <span id="clock" class="clock" title="virtual time since the cluster started">{format!("t = {}", crate::kubectl::age::human_duration(clock))}</span>
                    <span class="revision" title="etcd's revision">{format!("rev {}", snap.revision)}</span>
                    <label for="scrubber" class="sr-only">{"Time travel: etcd revision"}</label>
                    <input id="scrubber" type="range" min={oldest.to_string()} max={latest.to_string()}
                        value={past.unwrap_or(latest).to_string()} oninput={on_scrub}
                        title="time travel: drag back through etcd's revisions" />
                    <button id="play" onclick={on_play} aria-pressed={(!*playing).to_string()}>{ if *playing { "pause" } else { "play" } }</button>
                    <button id="step" onclick={on_step} title="run the next component that is due">{"step"}</button>
                    <label for="speed" class="sr-only">{"Speed"}</label>
                    <select id="speed" onchange={on_speed} aria-label="Speed"
                        title="teaching: the simulation waits for the map, one step at a time, each with a sentence">
                        <option value="teaching" selected={*teaching}>{"teaching pace"}</option>
                        { for SPEEDS.iter().map(|(v, label)| html! { <option value={v.to_string()} selected={!*teaching && (*speed - v).abs() < 1e-9}>{*label}</option> }) }
                    </select>
                    if let Some(short) = (*playing && !*teaching).then(|| meter.borrow().shortfall(*speed)).flatten() {
                        <span id="achieved-speed" class="achieved" role="status"
                            title="the page gives the simulation a budget per frame, so a big cluster runs slower than the speed chosen rather than freezing the page">{short}</span>
                    }
                    <button id="settle" onclick={on_settle} title="run virtual time until the cluster has nothing left to do">{"skip to settled"}</button>
                    <button id="presenter" onclick={on_presenter.clone()} aria-pressed={presenter.to_string()} title="large type, high contrast, slow motion (key: p)">{"presenter"}</button>
                    <button id="share" onclick={on_share} title="a link that replays this session (seed and commands), to copy and share">{"share"}</button>
                    <button id="export" onclick={on_export} title="download the objects you made, with the fields you set, as YAML for a real cluster (sim export)">{"export YAML"}</button>
                    <button id="reset" onclick={on_reset} title="start again with a fresh cluster">{"reset"}</button>
                </div>
                if !share_note.is_empty() {
                    <p id="share-note" class="share-note" role="status">{(*share_note).clone()}</p>
                }
                {storage::notice(persist, &journal, &on_load)}
            </header>
            if let Some(rev) = *past {
                <p id="time-travel" class="time-travel" role="status">
                    {format!("Time travel: the cluster as etcd held it at revision {rev} (t = {}). Commands still act on the present. ", crate::kubectl::age::human_duration(clock))}
                    <button class="small" onclick={on_now}>{"back to now"}</button>
                </p>
            }
            <main class={classes!("layout", with_lesson.then_some("with-lesson"))}>
                {lesson_panel}
                <section class="panel editor" aria-labelledby="editor-title">
                    <h2 id="editor-title">{"Manifest"}</h2>
                    <div class="editor-bar">
                        <label for="examples">{"Examples "}</label>
                        <select id="examples" onchange={on_example}>
                            { for examples::EXAMPLES.iter().map(|x| html! { <option value={x.id} selected={x.id == *example}>{x.title}</option> }) }
                        </select>
                    </div>
                    <manifest::ManifestEditor area={editor} initial={examples::EXAMPLES[0].manifest} marks={(*marks).clone()} {on_edit} />
                    <div class="editor-actions">
                        <button id="apply" class="primary" onclick={on_action.reform(|_| manifest::Action::Apply)}
                            title={ if editing.is_some() { "kubectl edit: save, sending what changed as a patch".to_string() } else { manifest::command_line(manifest::Action::Apply) } }>
                            { if editing.is_some() { "save edit" } else { "kubectl apply" } }</button>
                        <button id="dry-run" onclick={on_action.reform(|_| manifest::Action::DryRun)} disabled={editing.is_some()}
                            title={ if editing.is_some() { "kubectl edit has no dry run".to_string() } else { manifest::command_line(manifest::Action::DryRun) } }>{"dry run"}</button>
                        <button id="delete" onclick={on_action.reform(|_| manifest::Action::Delete)}
                            title={manifest::command_line(manifest::Action::Delete)}>{"kubectl delete"}</button>
                        if let Some(open) = &*editing {
                            <span class="editing-note">{format!("editing {}", open.what)}</span>
                        }
                    </div>
                    if !message.is_empty() && ok {
                        <pre id="apply-result" class="result ok" role="status">{message.clone()}</pre>
                    }
                    if !message.is_empty() && !ok {
                        <pre id="apply-error" class="result error" role="alert">{message.clone()}</pre>
                    }
                    <h2>{"Terminal"}</h2>
                    <div class="terminal" id="terminal">
                        <pre id="terminal-output" aria-live="polite">
                        { for scrollback.borrow().iter().map(|l| match l {
                            Line::Command(c) => html! { <div class="cmd">{format!("$ {c}")}</div> },
                            Line::Typed(c) => html! { <div class="cmd">{c}</div> },
                            Line::Out(o) => html! { <div class="out">{o}</div> },
                            Line::Err(e) => html! { <div class="err">{e}</div> },
                        }) }
                        </pre>
                        <div class="prompt">
                            <span id="terminal-prompt" aria-hidden="true">{prompt}</span>
                            <input id="terminal-input" ref={terminal_input} onkeydown={on_terminal_key} autocomplete="off" spellcheck="false"
                                aria-label={if attached { "Command for the container's shell; exit or Ctrl-D leaves it" } else { "Command (kubectl, etcdctl, sleep, sim); Tab completes, arrows recall history" }}
                                placeholder={if attached { "" } else { "kubectl get pods" }} />
                        </div>
                    </div>
                </section>
                <section class="panel cluster" aria-labelledby="cluster-title">
                    if let Some(view) = (*inspected).clone() {
                        <Inspector {view} on_close={on_close_inspector} on_refresh={on_refresh_inspector} on_open={open_inspector.clone()} />
                    }
                    <h2 id="control-plane-title">{"Control plane "}
                        <button id="follow-apply" class="small" onclick={on_follow}
                            title="walk through everything the last kubectl write set off">{"follow the last apply"}</button>
                    </h2>
                    <map::ArchitectureMap session={map::Shared(session.clone())} flow={map::SharedFlow(flow.clone())}
                        board={board} speed={*speed} teaching={*teaching} slow_motion={*presenter}
                        spotlight={*spotlight} on_pick={on_pick} />
                    <map::MapLegend />
                    if let Some(chain) = (*following).clone() {
                        <FollowChain {chain} on_close={on_unfollow} on_step={on_follow_step} />
                        <section class="panel sequence-panel" aria-label="The followed apply as a sequence diagram">
                            <h2>{"The sequence of the last apply "}<span class="muted">{"(choose a step: the map lights its hop and shows the cluster as it was)"}</span></h2>
                            <sequence::SequenceView sequence={crate::views::sequence::sequence(&session.borrow().cluster, 160)}
                                selected={*spotlight} on_select={on_sequence_select} />
                        </section>
                    }
                    {detail_panel}
                    <h2 id="cluster-title">{"Nodes: faults and maintenance"}</h2>
                    <NodeMap nodes={snap.nodes.clone()} on_command={on_command.clone()} />
                    if !snap.workloads.is_empty() {
                        <h2>{"Deployments & ReplicaSets "}<code>{"(kubectl get deploy,rs)"}</code></h2>
                        <WorkloadTable rows={snap.workloads.clone()} />
                    }
                    <h2>{"Pods "}<code>{"(kubectl get pods -o wide)"}</code></h2>
                    <PodTable pods={snap.pods.clone()} total={snap.pod_count} on_delete={on_delete_pod} on_command={on_command} highlight={(*highlight).clone()} on_inspect={on_inspect_pod} />
                    <h2>{"Events"}</h2>
                    <EventList events={snap.events.clone()} filter={(*event_filter).clone()} on_filter={on_event_filter}
                        selected={(*highlight).clone()} on_select={on_highlight} />
                </section>
            </main>
        </div>
    }
}

/// A view opened from the map.
#[derive(Clone, Debug, PartialEq)]
enum Detail {
    /// The scheduler's decision for a pod (`namespace/name`), or its latest.
    Scheduler(Option<String>),
    Etcd,
    /// A controller's reconciliation loop, for one of its objects.
    Controller(String, Option<String>),
}

impl Detail {
    fn from_pick(what: &str) -> Option<Detail> {
        match what.split_once('/') {
            _ if what == "scheduler" => Some(Detail::Scheduler(None)),
            _ if what == "etcd" => Some(Detail::Etcd),
            Some(("scheduler", pod)) => Some(Detail::Scheduler(Some(pod.to_string()))),
            Some(("controller", name)) => Some(Detail::Controller(name.to_string(), None)),
            _ => None,
        }
    }
}

/// The view opened from the map, drawn from the cluster as it is.
fn detail_view(session: &Session, detail: &UseStateHandle<Option<Detail>>) -> Html {
    let Some(open) = (**detail).clone() else { return html! {} };
    let close = {
        let detail = detail.clone();
        Callback::from(move |()| detail.set(None))
    };
    let close_button = {
        let close = close.clone();
        html! { <button class="small" onclick={Callback::from(move |_: MouseEvent| close.emit(()))}>{"close"}</button> }
    };
    let cluster = &session.cluster;
    let body = match &open {
        Detail::Scheduler(pod) => {
            let scheduler = cluster.component::<crate::scheduler::Scheduler>();
            let table = scheduler.and_then(|s| match pod {
                Some(key) => s.decision(key).cloned(),
                None => s.decisions().last().cloned(),
            });
            let pods: Vec<String> =
                scheduler.map(|s| s.decisions().rev().map(|t| t.pod.clone()).collect()).unwrap_or_default();
            let chosen = table.as_ref().map(|t| t.pod.clone()).unwrap_or_default();
            let on_pod = {
                let detail = detail.clone();
                Callback::from(move |e: Event| {
                    if let Some(v) = e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value()) {
                        detail.set(Some(Detail::Scheduler(Some(v))));
                    }
                })
            };
            html! {
                <>
                <header><h2>{"kube-scheduler: its decision for a pod"}</h2>
                    if pods.len() > 1 {
                        <label>{"pod "}<select id="scheduler-pod" onchange={on_pod}>
                            { for pods.iter().map(|p| html! { <option value={p.clone()} selected={*p == chosen}>{p}</option> }) }
                        </select></label>
                    }
                    </header>
                { match table {
                    Some(table) => html! { <scheduler_view::SchedulerDecision {table} on_close={close} /> },
                    None => html! { <><p class="muted">{"The scheduler has placed no pod since the cluster started. Create one (kubectl run web --image=nginx) and its decision shows here."}</p>{close_button}</> },
                } }
                </>
            }
        }
        Detail::Etcd => html! {
            <>
            <header><h2>{"etcd: revision, keys and the latest writes"}</h2>{close_button}</header>
            <etcd_view::EtcdPanel view={crate::views::etcd::etcd_view(cluster, 10)} />
            </>
        },
        Detail::Controller(name, object) => {
            let on_pick = {
                let (detail, name) = (detail.clone(), name.clone());
                Callback::from(move |key: String| detail.set(Some(Detail::Controller(name.clone(), Some(key)))))
            };
            html! {
                <>
                <header><h2>{format!("{name}: its reconciliation loop")}</h2></header>
                { match crate::views::reconcile::reconcile_view(cluster, name, object.as_deref()) {
                    Some(view) => html! { <reconcile_view::ReconcileLoop {view} on_close={close} {on_pick} /> },
                    None => html! { <><p class="muted">{format!("{name} has not acted yet.")}</p>{close_button}</> },
                } }
                </>
            }
        }
    };
    html! { <section id="map-detail" class="panel map-detail" aria-label="Opened from the map">{body}</section> }
}

/// An object `kubectl edit` opened in the editor: what was asked for, and the text as opened
/// (what a save compares the editor's text with).
#[derive(Debug, PartialEq)]
struct Editing {
    what: String,
    opened: String,
}

/// `kubectl edit TYPE NAME …` as the GET that fetches what the editor opens, or None for
/// any other command.
fn edit_as_get(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["kubectl" | "k", "edit", rest @ ..] if !rest.is_empty() && !line.contains('|') => {
            Some(format!("kubectl get {} -o yaml", rest.join(" ")))
        }
        _ => None,
    }
}

/// Appends what a command printed to the scrollback (warnings, output, errors), keeping it bounded.
fn push_output(sb: &mut Vec<Line>, out: &crate::kubectl::Output) {
    if !out.warnings.is_empty() {
        sb.push(Line::Err(out.warnings.trim_end().to_string()));
    }
    if !out.stdout.is_empty() {
        sb.push(Line::Out(out.stdout.trim_end().to_string()));
    }
    if !out.stderr.is_empty() {
        sb.push(Line::Err(out.stderr.trim_end().to_string()));
    }
    let excess = sb.len().saturating_sub(400);
    sb.drain(..excess);
}

/// The logo, inline so the page needs no extra request.
fn logo() -> Html {
    html! {
        <svg width="26" height="26" viewBox="0 0 64 64" aria-hidden="true">
            <polygon points="32,3 54.7,13.9 60.3,38.5 44.6,58.2 19.4,58.2 3.7,38.5 9.3,13.9" fill="#326ce5" />
            <path d="M44 32a12 12 0 1 1-3.5-8.5" fill="none" stroke="#fff" stroke-width="5" stroke-linecap="round" />
            <polygon points="46,14 47,28 34,25" fill="#fff" />
        </svg>
    }
}

/// The lesson the address names, read from the source the page fetched for it: `Ok(None)`
/// when it names none, the reason shown above the course's index when it cannot be followed.
fn load_lesson(id: Option<&str>, source: Option<&Result<Rc<str>, String>>) -> Result<Option<Rc<Lesson>>, String> {
    let Some(id) = id else { return Ok(None) };
    match source {
        Some(Ok(text)) => crate::lessons::from_source(id, text).map(|l| Some(Rc::new(l))).map_err(|e| e.to_string()),
        Some(Err(why)) => Err(why.clone()),
        None => Err(format!("no lesson \"{id}\"")),
    }
}

/// Fetches `lessons/<id>.md` beside the page: the lessons are static files, so a course adds
/// one by putting its Markdown there, with no rebuild.
async fn fetch_lesson(id: &str) -> Result<Rc<str>, String> {
    use wasm_bindgen::JsCast;
    if !crate::lessons::is_valid_id(id) {
        return Err(format!("no lesson \"{id}\": a lesson id has only letters, digits, - and _"));
    }
    let window = web_sys::window().ok_or("no window")?;
    let url = format!("lessons/{id}.md");
    let failed = |what: &str| format!("lesson \"{id}\" could not be loaded from {url}: {what}");
    let response =
        wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(&url)).await.map_err(|_| failed("network error"))?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| failed("not a response"))?;
    if !response.ok() {
        return Err(failed(&format!("{} {}", response.status(), response.status_text())));
    }
    let text = response.text().map_err(|_| failed("unreadable body"))?;
    let text = wasm_bindgen_futures::JsFuture::from(text).await.map_err(|_| failed("unreadable body"))?;
    text.as_string().map(Rc::from).ok_or_else(|| failed("not text"))
}

/// Saves `text` as a file through a link to a `data:` URL, clicked once and removed.
fn download(file: &str, text: &str) -> Option<()> {
    use wasm_bindgen::JsCast;
    let document = web_sys::window()?.document()?;
    let link = document.create_element("a").ok()?;
    let encoded = js_sys::encode_uri_component(text);
    link.set_attribute("href", &format!("data:text/yaml;charset=utf-8,{}", String::from(encoded))).ok()?;
    link.set_attribute("download", file).ok()?;
    link.set_attribute("hidden", "").ok()?;
    document.body()?.append_child(&link).ok()?;
    link.dyn_ref::<web_sys::HtmlElement>()?.click();
    link.remove();
    Some(())
}

/// Reads `?seed=N&paused` from the page's address.
fn url_props() -> AppProps {
    let search = web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default();
    let mut props = AppProps {
        seed: 1,
        start_paused: false,
        journal: None,
        persist: true,
        lesson: None,
        lesson_source: None,
        step: None,
        show_index: false,
        embed: false,
    };
    for pair in search.trim_start_matches('?').split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "seed" => props.seed = v.parse().unwrap_or(1),
            "paused" => props.start_paused = v != "0" && v != "false",
            "lesson" => props.lesson = Some(v.to_string()).filter(|id| !id.is_empty()),
            "step" => props.step = v.parse().ok(),
            "lessons" => props.show_index = true,
            "embed" => props.embed = v != "0" && v != "false",
            _ => {}
        }
    }
    props
}

/// A session from the address (`#session=…`, a shared link) or else from the last visit (of
/// this lesson, when following one).
fn saved_journal(lesson: Option<&str>) -> Option<Journal> {
    storage::load_for_page(lesson)
}

/// Takes the page's shell (`#shell` in index.html, the first screen drawn before the module had
/// loaded) off the page once the app is mounted in its place. Yew's `render()` empties the body
/// and draws the app's first frame in a microtask of this same task, so no frame is painted
/// between the shell and the app; this removes the shell should it still be there.
fn take_over_shell() {
    if let Some(shell) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id("shell")) {
        shell.remove();
    }
}

/// Mounts the app on the page's body, in place of the page's shell.
pub fn start() {
    clock::mark("kubeloop-start");
    let mut props = url_props();
    let asked_seed = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .is_some_and(|q| q.trim_start_matches('?').split('&').any(|p| p.starts_with("seed=")));
    // A saved visit is picked up unless the address asks for another seed.
    props.journal = saved_journal(props.lesson.as_deref()).filter(|j| !asked_seed || j.seed == props.seed);
    match props.lesson.clone() {
        None => {
            yew::Renderer::<App>::with_props(props).render();
            take_over_shell();
        }
        Some(id) => wasm_bindgen_futures::spawn_local(async move {
            props.lesson_source = Some(fetch_lesson(&id).await);
            yew::Renderer::<App>::with_props(props).render();
            take_over_shell();
        }),
    }
}
