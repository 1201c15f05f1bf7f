//! The page: renders snapshots of the simulated cluster and sends it commands. Everything it
//! shows comes from the core; it keeps no cluster state of its own. Its state, and every change
//! to it, is `crate::page` (native, tested there); this is the shell that draws that state, one
//! component per panel, and does in the browser what an update asks (save, focus, redraw…).

mod clock;
mod cluster_pane;
mod controls;
mod editor_pane;
pub mod etcd_view;
pub use crate::views::examples;
mod course_progress;
pub mod lesson;
pub mod manifest;
pub mod map;
pub mod panels;
pub mod port;
pub mod reconcile_view;
mod rest;
pub mod scheduler_view;
pub mod sequence;
mod shortcuts;
pub mod storage;
mod terminal;
pub mod view;

use crate::page::journal::Journal;
use crate::page::update::TICK_MS;
use crate::page::{Action, Effect, PageConfig, PageState, update};
use gloo_timers::callback::Interval;
use std::cell::RefCell;
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlTextAreaElement};
use yew::prelude::*;

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
    /// Run the simulation in a Web Worker when the browser can (`?worker=0`: in the page's
    /// own thread, as the tests do).
    #[prop_or(false)]
    pub worker: bool,
}

/// Where the page keeps the session between visits (a lesson's under its own key).
const STORAGE_KEY: &str = "kubeloop.session";

fn storage_key(lesson: Option<&str>) -> String {
    match lesson {
        Some(id) => format!("kubeloop.lesson.{id}"),
        None => STORAGE_KEY.to_string(),
    }
}

/// The page's state and what the shell needs to carry out an update's effects.
struct Shell {
    state: Rc<RefCell<PageState>>,
    port: port::Port,
    redraw: UseForceUpdateHandle,
    redraws: Rc<RefCell<clock::Redraws>>,
    editor: NodeRef,
    input: NodeRef,
    persist: storage::Handle,
}

impl Shell {
    /// Applies an action, then does what it asks in the browser (and the actions that follow
    /// from that: what the share and export buttons said). True when a key was handled.
    fn dispatch(&self, action: Action) -> bool {
        let mut queue = std::collections::VecDeque::from([action]);
        let mut handled = false;
        while let Some(action) = queue.pop_front() {
            let effects = update(&mut self.state.borrow_mut(), action);
            for effect in effects {
                handled |= effect == Effect::KeyHandled;
                if let Some(next) = self.perform(effect) {
                    queue.push_back(next);
                }
            }
        }
        handled
    }

    /// Does one effect; the action it leads to, if any. The state is not borrowed meanwhile
    /// (setting the editor's text dispatches the editor's own input event).
    fn perform(&self, effect: Effect) -> Option<Action> {
        match effect {
            Effect::Redraw => self.redraw.force_update(),
            Effect::RedrawIfDue => {
                if self.redraws.borrow().due(clock::now_ms()) {
                    self.redraw.force_update();
                }
            }
            Effect::Save => {
                let journal = self.state.borrow().journal.clone();
                storage::save(self.persist, &mut journal.borrow_mut());
            }
            Effect::Share => {
                let journal = self.state.borrow().journal.clone();
                let note = storage::share(self.persist, &journal.borrow());
                return Some(Action::Note(note));
            }
            Effect::Download { file, text, note } => {
                return Some(Action::Note(match download(&file, &text) {
                    Some(()) => note,
                    None => "the browser refused the download".into(),
                }));
            }
            Effect::SetEditorText(text) => manifest::set_text(&self.editor, &text),
            Effect::FocusEditor => {
                if let Some(area) = self.editor.cast::<HtmlTextAreaElement>() {
                    let _ = area.focus();
                }
            }
            Effect::SetInput(text) => {
                if let Some(field) = self.input.cast::<HtmlInputElement>() {
                    field.set_value(&text);
                }
            }
            Effect::KeyHandled => {}
            // In this thread the reply comes at once; from the worker, later (`Port`).
            Effect::Ask(id, request) => return self.port.ask(id, request).map(|r| Action::Reply(id, Box::new(r))),
            Effect::ClearAddressHash => {
                if let Some(location) = web_sys::window().map(|w| w.location()) {
                    let _ = location.set_hash("");
                }
            }
        }
        None
    }
}

/// The page's state when it opens, from its properties.
fn config(props: &AppProps) -> PageConfig {
    PageConfig {
        seed: props.seed,
        start_paused: props.start_paused,
        journal: props.journal.clone(),
        lesson: props.lesson.clone(),
        lesson_source: props.lesson_source.clone(),
        step: props.step,
        show_index: props.show_index,
        storage: storage::Status::Saved,
    }
}

#[function_component(App)]
pub fn app(props: &AppProps) -> Html {
    let state = use_mut_ref(|| PageState { real_ms: clock::now_ms, ..PageState::new(config(props)) });
    // The cluster is up (the end-to-end check reads this mark).
    use_mut_ref(|| clock::mark("kubeloop-booted"));
    let redraw = use_force_update();
    let persist = storage::use_store(props.persist, state.borrow().lesson.lesson.clone(), redraw.clone());
    // The storage's status as the page's state has it (a save, another tab, a refused link).
    let status = persist.status();
    if state.borrow().storage != status {
        update(&mut state.borrow_mut(), Action::Storage(status));
    }
    // What drawing the page costs, so a big cluster's ticks redraw it less often.
    let redraws = use_mut_ref(clock::Redraws::default);
    redraws.borrow_mut().start(clock::now_ms());
    {
        let redraws = redraws.clone();
        use_effect(move || redraws.borrow_mut().done(clock::now_ms()));
    }
    let editor = use_node_ref();
    let terminal_input = use_node_ref();
    // The shell, once made, for the port's replies (which come later, from the worker).
    let reach = use_mut_ref(std::rc::Weak::<Shell>::new);
    let shell = {
        let on_reply = {
            let reach = reach.clone();
            Rc::new(move |id: u64, reply: crate::page::sim::SimReply| {
                let shell = reach.borrow().upgrade();
                if let Some(shell) = shell {
                    shell.dispatch(Action::Reply(id, Box::new(reply)));
                }
            }) as Rc<dyn Fn(u64, crate::page::sim::SimReply)>
        };
        let on_failure = {
            let reach = reach.clone();
            Rc::new(move |why: String| {
                let shell = reach.borrow().upgrade();
                if let Some(shell) = shell {
                    shell.dispatch(Action::SimFailed(why));
                }
            }) as Rc<dyn Fn(String)>
        };
        let worker = props.worker;
        let (state, redraw, redraws) = (state.clone(), redraw.clone(), redraws.clone());
        let (editor, input) = (editor.clone(), terminal_input.clone());
        // Made once: the port starts the worker (or not) for the page's life.
        let shell = use_memo((), move |_| Shell {
            state,
            port: port::Port::start(worker, on_reply, on_failure),
            redraw,
            redraws,
            editor,
            input,
            persist,
        });
        *reach.borrow_mut() = Rc::downgrade(&shell);
        shell
    };
    let dispatch = use_memo((), {
        let shell = shell.clone();
        move |_| {
            Callback::from(move |action: Action| {
                shell.dispatch(action);
            })
        }
    });
    let dispatch = (*dispatch).clone();
    let on_key = use_memo((), {
        let shell = shell.clone();
        move |_| Callback::from(move |action: Action| shell.dispatch(action))
    });
    let on_load = dispatch.reform(Action::Load);
    // The simulation replays the page's journal (in this thread, before the first drawing).
    {
        let shell = shell.clone();
        use_mut_ref(move || shell.dispatch(Action::Open));
    }

    // The clock: a tick every TICK_MS, for the page's life (the update asks the simulation
    // to move on only while it plays or messages still travel the map).
    {
        let shell = shell.clone();
        use_effect_with((), move |_| {
            let interval = Interval::new(TICK_MS, move || {
                shell.dispatch(Action::Tick);
            });
            move || drop(interval)
        });
    }
    // Keyboard shortcuts, outside text fields: space play/pause, "." one step, "s" skip to
    // settled, "p" presenter mode.
    {
        let shell = shell.clone();
        use_effect_with((), move |_| {
            let listener = shortcuts::listen(move |key| {
                if let Some(c) = key.chars().next() {
                    shell.dispatch(Action::Shortcut(c));
                }
            });
            move || drop(listener)
        });
    }
    // A long session replays in slices: the page's shell says how far it has come.
    use_effect_with(state.borrow().loading.map(|p| (p * 100.0).round() as u32), |percent| {
        if let Some(percent) = *percent {
            shell_progress(&format!("Replaying your session… {percent}%"), f64::from(percent) / 100.0);
        }
    });
    // The first snapshot is on the page and the terminal takes commands: the end-to-end check
    // reads this mark as "time to first interactive cluster".
    use_effect_with(state.borrow().view.ready, |ready| {
        if *ready {
            take_over_shell();
            clock::mark("kubeloop-interactive");
        }
    });
    let page = state.borrow();
    let c = &page.clock;
    let view = &page.view;
    let (oldest, latest) = view.revisions;
    let snap = view.snapshot.clone();
    let clock = snap.now.since(crate::sim::Time::ZERO);
    let shortfall = (c.playing && !c.teaching).then(|| c.meter.shortfall(c.speed)).flatten();
    // Attached to a container's shell, the terminal shows that shell's prompt.
    // Typing a here-document, the prompt is `> ` until its end word.
    let prompt = if page.terminal.heredoc.is_some() { Some("> ".to_string()) } else { view.prompt.clone() };
    let attached = view.prompt.is_some();
    let prompt = prompt.as_deref().unwrap_or("$ ").trim_end().to_string();
    let (shared, link, left_out) = persist.seen();
    let l = &page.lesson;
    let e = &page.editor;
    html! {
        <div class={classes!("app", c.presenter.then_some("presenter"), props.embed.then_some("embed"))}>
            <header class="topbar">
                <h1>{logo()}{" kubeloop"}</h1>
                if !props.embed {
                    <p class="tagline">{"a Kubernetes control plane and its nodes, simulated in your browser"}</p>
                    <a class="lessons-link" href="?lessons">{"lessons"}</a>
                }
                <controls::TimeControls {clock} revision={snap.revision} {oldest} {latest} past={page.past}
                    playing={c.playing} speed={c.speed} teaching={c.teaching} presenter={c.presenter}
                    {shortfall} dispatch={dispatch.clone()} />
                if !page.share_note.is_empty() {
                    <p id="share-note" class="share-note" role="status">{page.share_note.clone()}</p>
                }
                if let Some(why) = page.failure.clone() {
                    <p id="sim-note" class="share-note" role="status">
                        {format!("The simulation's worker stopped ({why}); it runs in this page now, your session replayed.")}
                    </p>
                }
                <storage::StorageBanner handle={persist} status={page.storage.clone()} {shared} {link} {left_out}
                    journal={storage::SharedJournal(page.journal.clone())} {on_load} />
            </header>
            if let Some(revision) = page.past {
                <controls::TimeTravelNote {revision} {clock} dispatch={dispatch.clone()} />
            }
            <main class={classes!("layout", l.beside.then_some("with-lesson"))}>
                <lesson::LessonPane lesson={l.lesson.clone()} progress={l.progress.clone()} results={l.results.clone()} reasons={l.reasons.clone()}
                    problem={l.problem.clone()} index={props.show_index || props.lesson.is_some()} dispatch={dispatch.clone()} />
                <section class="panel editor" aria-labelledby="editor-title">
                    <editor_pane::EditorPane area={editor} example={e.example} marks={e.marks.clone()}
                        editing={e.editing.clone()} result={e.result.clone()} dispatch={dispatch.clone()} />
                    <terminal::TerminalPane lines={page.terminal.lines.clone()} {prompt} {attached} running={page.running()}
                        input={terminal_input} on_key={(*on_key).clone()} />
                </section>
                <cluster_pane::ClusterPane
                    sequence={view.sequence.clone()} detail_frame={view.detail.clone()} flow={map::SharedFlow(view.flow.clone())}
                    board={map::SharedBoard(view.board.clone())} last_seq={view.last_seq} {snap} teaching={c.teaching}
                    spotlight={page.spotlight} inspected={page.inspected.clone()} following={page.following.clone()}
                    detail={page.detail.clone()} event_filter={page.event_filter.clone()} highlight={page.highlight.clone()}
                    {dispatch} />
            </main>
        </div>
    }
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
        worker: true,
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
            "worker" => props.worker = v != "0" && v != "false",
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

/// The element the app is drawn in: hidden behind the page's shell (`#shell` in index.html,
/// the first screen drawn before the module had loaded) until the simulation's first frame.
const APP_ROOT: &str = "app-root";

/// Shows the app in place of the page's shell, once it has a cluster to draw: in this thread at
/// once; from a worker when its first frame comes (the shell's progress says "Starting the
/// cluster…" meanwhile). Both are in place in one task, so no frame shows neither.
/// The shell's progress line and bar (`window.kubeloopShellProgress`, from index.html).
fn shell_progress(phase: &str, fraction: f64) {
    let Some(window) = web_sys::window() else { return };
    let Ok(show) = js_sys::Reflect::get(&window, &"kubeloopShellProgress".into()) else { return };
    use wasm_bindgen::{JsCast, JsValue};
    if let Some(show) = show.dyn_ref::<js_sys::Function>() {
        let _ = show.call2(&JsValue::NULL, &JsValue::from_str(phase), &JsValue::from_f64(fraction));
    }
}

fn take_over_shell() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    if let Some(root) = document.get_element_by_id(APP_ROOT) {
        let _ = root.remove_attribute("hidden");
    }
    if let Some(shell) = document.get_element_by_id("shell") {
        shell.remove();
    }
}

/// The app's element, added to the page's body (hidden until it takes over from the shell).
fn app_root() -> Option<web_sys::Element> {
    let document = web_sys::window()?.document()?;
    let root = document.create_element("div").ok()?;
    root.set_id(APP_ROOT);
    root.set_attribute("hidden", "").ok()?;
    document.body()?.append_child(&root).ok()?;
    Some(root)
}

fn mount(props: AppProps) {
    match app_root() {
        Some(root) => {
            yew::Renderer::<App>::with_root_and_props(root, props).render();
        }
        None => {
            yew::Renderer::<App>::with_props(props).render();
        }
    }
}

/// Mounts the app on the page's body, in place of the page's shell.
pub fn start() {
    clock::mark("kubeloop-start");
    let mut props = url_props();
    let query = web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default();
    let asked = |key: &str| query.trim_start_matches('?').split('&').find_map(|p| p.strip_prefix(key));
    let asked_seed = asked("seed=").is_some();
    // `?control-planes=3`: kubeadm's stacked HA topology (a lesson brings its own).
    let control_planes = asked("control-planes=").map(|n| n.parse::<u32>().unwrap_or(1).max(1));
    // A saved visit is picked up unless the address asks for another seed or topology.
    props.journal = saved_journal(props.lesson.as_deref())
        .filter(|j| !asked_seed || j.seed == props.seed)
        .filter(|j| control_planes.is_none_or(|n| j.control_planes.max(1) == n));
    if let (None, None, Some(n)) = (&props.journal, &props.lesson, control_planes.filter(|n| *n > 1)) {
        props.journal = Some(Journal { control_planes: n, ..Journal::new(props.seed) });
    }
    match props.lesson.clone() {
        None => mount(props),
        Some(id) => wasm_bindgen_futures::spawn_local(async move {
            props.lesson_source = Some(fetch_lesson(&id).await);
            mount(props);
        }),
    }
}
