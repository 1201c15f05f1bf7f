//! The page: renders snapshots of the simulated cluster and sends it commands. Everything it
//! shows comes from the core; it keeps no cluster state of its own.

pub mod examples;
pub mod panels;
pub mod view;

use crate::shell::{Command, Session};
use crate::sim::Duration;
use gloo_timers::callback::Interval;
use panels::{ControlPlaneMap, EventList, NodeMap, PodTable, WorkloadTable};
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

/// Real milliseconds between clock ticks.
const TICK_MS: u32 = 100;
const SPEEDS: &[(f64, &str)] =
    &[(0.25, "0.25×"), (0.5, "0.5×"), (1.0, "1×"), (2.0, "2×"), (5.0, "5×"), (10.0, "10×"), (100.0, "100×")];

#[derive(Properties, PartialEq, Clone)]
pub struct AppProps {
    #[prop_or(1)]
    pub seed: u64,
    /// Start with the clock stopped (tests, and `?paused`).
    #[prop_or(false)]
    pub start_paused: bool,
}

/// One line of the terminal's scrollback.
#[derive(Clone, PartialEq)]
enum Line {
    Command(String),
    Out(String),
    Err(String),
}

#[function_component(App)]
pub fn app(props: &AppProps) -> Html {
    let seed = props.seed;
    let session = use_mut_ref(move || Session::new(seed));
    let redraw = use_force_update();
    let playing = use_state(|| !props.start_paused);
    let speed = use_state(|| 1.0f64);
    let editor = use_node_ref();
    let terminal_input = use_node_ref();
    let apply_result = use_state(|| None::<(bool, String)>);
    let scrollback = use_mut_ref(Vec::<Line>::new);
    let history = use_mut_ref(Vec::<String>::new);

    // The clock: each tick advances virtual time by the tick times the speed.
    {
        let session = session.clone();
        let redraw = redraw.clone();
        use_effect_with((*playing, (*speed * 100.0) as u64), move |(playing, speed_pct)| {
            let interval = playing.then(|| {
                let step = Duration((u64::from(TICK_MS) * speed_pct / 100).max(1));
                Interval::new(TICK_MS, move || {
                    session.borrow_mut().cluster.advance(step);
                    redraw.force_update();
                })
            });
            move || drop(interval)
        });
    }

    // Runs a command as if typed, echoing it and its output in the terminal.
    let run = {
        let session = session.clone();
        let scrollback = scrollback.clone();
        let redraw = redraw.clone();
        Callback::from(move |(shown, command): (String, Command)| {
            let out = session.borrow_mut().execute(&command);
            let mut sb = scrollback.borrow_mut();
            sb.push(Line::Command(shown));
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
            drop(sb);
            redraw.force_update();
        })
    };

    let on_apply = {
        let session = session.clone();
        let editor = editor.clone();
        let apply_result = apply_result.clone();
        let scrollback = scrollback.clone();
        let redraw = redraw.clone();
        Callback::from(move |_: MouseEvent| {
            let text = editor.cast::<HtmlTextAreaElement>().map(|t| t.value()).unwrap_or_default();
            let command = Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), text)) };
            let out = session.borrow_mut().execute(&command);
            let ok = out.code == 0;
            let text = if ok { out.stdout.trim_end().to_string() } else { out.combined().trim_end().to_string() };
            let mut sb = scrollback.borrow_mut();
            sb.push(Line::Command("kubectl apply -f manifest.yaml".into()));
            sb.push(if ok { Line::Out(text.clone()) } else { Line::Err(text.clone()) });
            drop(sb);
            apply_result.set(Some((ok, text)));
            redraw.force_update();
        })
    };

    let example = use_state(|| examples::EXAMPLES[0].id);
    let on_example = {
        let editor = editor.clone();
        let example = example.clone();
        Callback::from(move |e: Event| {
            let id = e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value()).unwrap_or_default();
            if let Some(ex) = examples::EXAMPLES.iter().find(|x| x.id == id) {
                if let Some(area) = editor.cast::<HtmlTextAreaElement>() {
                    area.set_value(ex.manifest);
                }
                example.set(ex.id);
            }
        })
    };

    let on_settle = {
        let run = run.clone();
        Callback::from(move |_: MouseEvent| run.emit(("sim settle".into(), Command::new("sim settle"))))
    };
    let on_step = {
        let session = session.clone();
        let redraw = redraw.clone();
        Callback::from(move |_: MouseEvent| {
            session.borrow_mut().cluster.step();
            redraw.force_update();
        })
    };
    let on_play = {
        let playing = playing.clone();
        Callback::from(move |_: MouseEvent| playing.set(!*playing))
    };
    let on_speed = {
        let speed = speed.clone();
        Callback::from(move |e: Event| {
            if let Some(v) = e.target_dyn_into::<HtmlSelectElement>().and_then(|s| s.value().parse::<f64>().ok()) {
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
        let run = run.clone();
        let input = terminal_input.clone();
        let history = history.clone();
        let cursor = use_mut_ref(|| 0usize);
        let session = session.clone();
        let scrollback = scrollback.clone();
        let redraw = redraw.clone();
        Callback::from(move |e: KeyboardEvent| {
            let Some(field) = input.cast::<HtmlInputElement>() else { return };
            match e.key().as_str() {
                "Tab" => {
                    e.prevent_default();
                    let done = crate::completion::complete(&session.borrow(), &field.value());
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
                    scrollback.borrow_mut().push(Line::Command(format!("{}^C", field.value())));
                    field.set_value("");
                    *cursor.borrow_mut() = history.borrow().len();
                    redraw.force_update();
                }
                "Enter" => {
                    let line = field.value();
                    if line.trim().is_empty() {
                        return;
                    }
                    field.set_value("");
                    history.borrow_mut().push(line.clone());
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

    let snap = view::snapshot(&session.borrow());
    let clock = snap.now.since(crate::sim::Time::ZERO);
    let (ok, message) = match &*apply_result {
        Some((ok, m)) => (*ok, m.clone()),
        None => (true, String::new()),
    };
    html! {
        <div class="app">
            <header class="topbar">
                <h1>{logo()}{" kubeloop"}</h1>
                <p class="tagline">{"a Kubernetes control plane and its nodes, simulated in your browser"}</p>
                <div class="time-controls" role="group" aria-label="Time controls">
                    <span id="clock" class="clock" title="virtual time since the cluster started">{format!("t = {}", crate::kubectl::age::human_duration(clock))}</span>
                    <span class="revision" title="etcd's revision">{format!("rev {}", snap.revision)}</span>
                    <button id="play" onclick={on_play} aria-pressed={(!*playing).to_string()}>{ if *playing { "pause" } else { "play" } }</button>
                    <button id="step" onclick={on_step} title="run the next component that is due">{"step"}</button>
                    <label for="speed" class="sr-only">{"Speed"}</label>
                    <select id="speed" onchange={on_speed} aria-label="Speed">
                        { for SPEEDS.iter().map(|(v, label)| html! { <option value={v.to_string()} selected={(*speed - v).abs() < 1e-9}>{*label}</option> }) }
                    </select>
                    <button id="settle" onclick={on_settle} title="run virtual time until the cluster has nothing left to do">{"skip to settled"}</button>
                </div>
            </header>
            <main class="layout">
                <section class="panel editor" aria-labelledby="editor-title">
                    <h2 id="editor-title">{"Manifest"}</h2>
                    <div class="editor-bar">
                        <label for="examples">{"Examples "}</label>
                        <select id="examples" onchange={on_example}>
                            { for examples::EXAMPLES.iter().map(|x| html! { <option value={x.id} selected={x.id == *example}>{x.title}</option> }) }
                        </select>
                    </div>
                    <textarea id="manifest" ref={editor} spellcheck="false" aria-label="Manifest (YAML)" rows="18" defaultvalue={examples::EXAMPLES[0].manifest} />
                    <div class="editor-actions">
                        <button id="apply" class="primary" onclick={on_apply}>{"kubectl apply"}</button>
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
                            Line::Out(o) => html! { <div class="out">{o}</div> },
                            Line::Err(e) => html! { <div class="err">{e}</div> },
                        }) }
                        </pre>
                        <div class="prompt">
                            <span aria-hidden="true">{"$"}</span>
                            <input id="terminal-input" ref={terminal_input} onkeydown={on_terminal_key} autocomplete="off" spellcheck="false"
                                aria-label="Command (kubectl, etcdctl, sleep, sim); Tab completes, arrows recall history" placeholder="kubectl get pods" />
                        </div>
                    </div>
                </section>
                <section class="panel cluster" aria-labelledby="cluster-title">
                    <h2 id="control-plane-title">{"Control plane"}</h2>
                    <ControlPlaneMap view={crate::overview::control_plane(&session.borrow().cluster)} />
                    <h2 id="cluster-title">{"Nodes"}</h2>
                    <NodeMap nodes={snap.nodes.clone()} on_command={on_command.clone()} />
                    if !snap.workloads.is_empty() {
                        <h2>{"Deployments & ReplicaSets "}<code>{"(kubectl get deploy,rs)"}</code></h2>
                        <WorkloadTable rows={snap.workloads.clone()} />
                    }
                    <h2>{"Pods "}<code>{"(kubectl get pods -o wide)"}</code></h2>
                    <PodTable pods={snap.pods.clone()} on_delete={on_delete_pod} on_command={on_command} />
                    <h2>{"Events"}</h2>
                    <div class="events-scroll"><EventList events={snap.events.clone()} /></div>
                </section>
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

/// Reads `?seed=N&paused` from the page's address.
fn url_props() -> AppProps {
    let search = web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default();
    let mut props = AppProps { seed: 1, start_paused: false };
    for pair in search.trim_start_matches('?').split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "seed" => props.seed = v.parse().unwrap_or(1),
            "paused" => props.start_paused = v != "0" && v != "false",
            _ => {}
        }
    }
    props
}

/// Mounts the app on the page's body.
pub fn start() {
    yew::Renderer::<App>::with_props(url_props()).render();
}
