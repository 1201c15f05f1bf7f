//! The page's panels: leaf views of a snapshot, and the controls that send commands.

use super::view::{EventRow, NodeCard, PodRow, WorkloadRow, status_class};
use crate::util::sort::StableSort;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct PodTableProps {
    pub pods: Vec<PodRow>,
    /// How many pods there are in all (the table shows the first ones).
    #[prop_or_default]
    pub total: usize,
    /// Opens the inspector on a pod.
    #[prop_or_default]
    pub on_inspect: Callback<String>,
    pub on_delete: Callback<String>,
    pub on_command: Callback<String>,
    /// The object an event click highlighted (`pod/NAME`).
    #[prop_or_default]
    pub highlight: Option<String>,
}

/// `kubectl get pods -o wide`, live.
#[function_component(PodTable)]
pub fn pod_table(props: &PodTableProps) -> Html {
    if props.pods.is_empty() {
        return html! {
            <table id="pods" class="kube-table" aria-label="Pods in the default namespace">
                <caption>{"No resources found in default namespace."}</caption>
            </table>
        };
    }
    html! {
        <table id="pods" class="kube-table" aria-label="Pods in the default namespace">
            <thead><tr>
                <th>{"NAME"}</th><th>{"READY"}</th><th>{"STATUS"}</th><th>{"RESTARTS"}</th><th>{"AGE"}</th><th>{"NODE"}</th><th><span class="sr-only">{"Actions"}</span></th>
            </tr></thead>
            <tbody>
            { for props.pods.iter().map(|p| {
                let name = p.name.clone();
                let on_delete = props.on_delete.clone();
                let onclick = Callback::from(move |_| on_delete.emit(name.clone()));
                let crash = command_button("crash", format!("sim pod crash {}", p.name), &props.on_command);
                // New pulls of the image fail while it is broken (nodes that have it keep it).
                let image = match (p.image.is_empty(), p.image_broken) {
                    (true, _) => html! {},
                    (false, false) => command_button("break image", format!("sim image break {}", p.image), &props.on_command),
                    (false, true) => command_button("fix image", format!("sim image fix {}", p.image), &props.on_command),
                };
                html! {
                    <tr data-pod={p.name.clone()} class={classes!((props.highlight.as_deref() == Some(format!("pod/{}", p.name).as_str())).then_some("highlight"))}>
                        <td><button class="linkish name" title="inspect: YAML, describe, owners, events" onclick={
                            let (on_inspect, name) = (props.on_inspect.clone(), p.name.clone());
                            Callback::from(move |_: MouseEvent| on_inspect.emit(name.clone()))
                        }>{&p.name}</button></td>
                        <td>{&p.ready}</td>
                        <td>
                            <span class={classes!("status", status_class(&p.status))}>{&p.status}</span>
                            if let Some(why) = &p.why_pending {
                                <div class="why" title="the scheduler's reason (kubectl describe pod shows it under Events)">{why}</div>
                            }
                        </td>
                        <td>{&p.restarts}</td>
                        <td>{&p.age}</td>
                        <td>{&p.node}</td>
                        <td class="actions"><button class="small" title={format!("kubectl delete pod {}", p.name)} aria-label={format!("Delete pod {}", p.name)} {onclick}>{"delete"}</button>{crash}{image}</td>
                    </tr>
                }
            }) }
            </tbody>
            if props.total > props.pods.len() {
                <caption class="more">{format!("… and {} more (kubectl get pods lists them all)", props.total - props.pods.len())}</caption>
            }
        </table>
    }
}

/// Which events the stream shows (kept in the page's state).
pub use crate::page::EventFilter;

impl EventFilter {
    pub fn admits(&self, e: &EventRow) -> bool {
        (self.from.is_empty() || e.source == self.from)
            && (self.kind.is_empty() || e.object.split('/').next() == Some(self.kind.as_str()))
            && (self.object.is_empty() || e.object.contains(self.object.trim()))
    }
}

#[derive(Properties, PartialEq)]
pub struct EventListProps {
    pub events: Vec<EventRow>,
    pub filter: EventFilter,
    pub on_filter: Callback<EventFilter>,
    /// The object of the event clicked last (`pod/web-…`), highlighted across the page.
    pub selected: Option<String>,
    pub on_select: Callback<Option<String>>,
}

/// The event stream, newest first, like `kubectl get events --watch` with a FROM column;
/// filtered by component, kind or object; a click highlights the event's object.
#[function_component(EventList)]
pub fn event_list(props: &EventListProps) -> Html {
    let options = |values: Vec<String>, current: &str| -> Html {
        let mut values = values;
        values.stable_sort();
        values.dedup();
        html! { <>{ for values.into_iter().map(|v| html! { <option value={v.clone()} selected={v == current}>{v}</option> }) }</> }
    };
    let sources: Vec<String> = props.events.iter().map(|e| e.source.clone()).collect();
    let kinds: Vec<String> =
        props.events.iter().filter_map(|e| e.object.split('/').next().map(str::to_string)).collect();
    let set = |change: fn(&mut EventFilter, String)| {
        let (filter, on_filter) = (props.filter.clone(), props.on_filter.clone());
        Callback::from(move |e: Event| {
            let value = e
                .target_dyn_into::<web_sys::HtmlSelectElement>()
                .map(|s| s.value())
                .or_else(|| e.target_dyn_into::<web_sys::HtmlInputElement>().map(|i| i.value()))
                .unwrap_or_default();
            let mut next = filter.clone();
            change(&mut next, value);
            on_filter.emit(next);
        })
    };
    let shown: Vec<&EventRow> = props.events.iter().filter(|e| props.filter.admits(e)).collect();
    html! {
        <>
        <div class="event-filters" role="group" aria-label="Filter events">
            <label>{"from "}<select id="event-from" onchange={set(|f, v| f.from = v)}>
                <option value="" selected={props.filter.from.is_empty()}>{"any component"}</option>
                {options(sources, &props.filter.from)}
            </select></label>
            <label>{"kind "}<select id="event-kind" onchange={set(|f, v| f.kind = v)}>
                <option value="" selected={props.filter.kind.is_empty()}>{"any"}</option>
                {options(kinds, &props.filter.kind)}
            </select></label>
            <label>{"object "}<input id="event-object" type="search" value={props.filter.object.clone()} onchange={set(|f, v| f.object = v)} placeholder="name" /></label>
        </div>
        <div class="events-scroll">
        <table id="events" class="kube-table events" aria-label="Events, newest first" aria-live="polite">
            <thead><tr>
                <th>{"LAST SEEN"}</th><th>{"TYPE"}</th><th>{"REASON"}</th><th>{"OBJECT"}</th><th>{"FROM"}</th><th>{"MESSAGE"}</th>
            </tr></thead>
            <tbody>
            { for shown.into_iter().map(|e| {
                let selected = props.selected.as_deref() == Some(e.object.as_str());
                let (on_select, object) = (props.on_select.clone(), e.object.clone());
                let onclick = Callback::from(move |_: MouseEvent| {
                    on_select.emit(if selected { None } else { Some(object.clone()) })
                });
                html! {
                    <tr class={classes!((e.type_ == "Warning").then_some("warning"), selected.then_some("selected"))}
                        data-reason={e.reason.clone()} {onclick} title="highlight this event's object">
                        <td>{&e.last_seen}</td><td>{&e.type_}</td><td>{&e.reason}</td><td>{&e.object}</td><td>{&e.source}</td><td class="message">{&e.message}</td>
                    </tr>
                }
            }) }
            </tbody>
        </table>
        </div>
        </>
    }
}

#[derive(Properties, PartialEq)]
pub struct NodeMapProps {
    pub nodes: Vec<NodeCard>,
    /// Nodes with no card (a big cluster), and how many of them are Ready.
    #[prop_or_default]
    pub left_out: (usize, usize),
    /// Runs a command line in the terminal (the chaos buttons teach their commands).
    pub on_command: Callback<String>,
}

/// A button that runs `line` in the terminal, showing the command it stands for.
fn command_button(label: &str, line: String, on_command: &Callback<String>) -> Html {
    let on_command = on_command.clone();
    let title = line.clone();
    let onclick = Callback::from(move |_: MouseEvent| on_command.emit(line.clone()));
    html! { <button class="small" title={title.clone()} aria-label={title} {onclick}>{label}</button> }
}

fn gauge(label: &str, used: i64, total: i64, text: String) -> Html {
    let pct = if total > 0 { (used * 100 / total).clamp(0, 100) } else { 0 };
    html! {
        <div class="gauge" role="meter" aria-label={label.to_string()} aria-valuemin="0" aria-valuemax="100" aria-valuenow={pct.to_string()}>
            <span class="gauge-label">{label}</span>
            <span class="gauge-bar"><span class="gauge-fill" style={format!("width:{pct}%")}></span></span>
            <span class="gauge-text">{text}</span>
        </div>
    }
}

/// The nodes, each with its requested vs allocatable resources and the pods it runs.
#[function_component(NodeMap)]
pub fn node_map(props: &NodeMapProps) -> Html {
    html! {
        <>
        <div id="nodes" class="nodes">
        { for props.nodes.iter().map(|n| html! {
            <NodeCardView key={n.name.clone()} card={n.clone()} on_command={props.on_command.clone()} />
        }) }
        </div>
        if props.left_out.0 > 0 {
            <p id="nodes-left-out" class="muted">{format!(
                "…and {} more node(s), {} of them Ready, with no card: nodes in trouble are shown first; `kubectl get nodes` lists them all.",
                props.left_out.0, props.left_out.1
            )}</p>
        }
        </>
    }
}

#[derive(Properties)]
struct NodeCardProps {
    card: NodeCard,
    on_command: Callback<String>,
}

/// Cards compare by what they show: an unchanged card is not drawn again. (`on_command` is a new
/// callback at every page render that runs the line the same way.)
impl PartialEq for NodeCardProps {
    fn eq(&self, other: &Self) -> bool {
        self.card == other.card
    }
}

#[function_component(NodeCardView)]
fn node_card_view(props: &NodeCardProps) -> Html {
    let n = &props.card;
    let ready = n.status.starts_with("Ready");
    html! {
        <section class={classes!("node", (!ready).then_some("not-ready"))} data-node={n.name.clone()} aria-label={format!("Node {}", n.name)}>
            <header>
                <strong>{&n.name}</strong>
                <span class={classes!("node-status", if ready { "running" } else { "failed" })}>{&n.status}</span>
                if n.roles != "<none>" { <span class="role">{&n.roles}</span> }
            </header>
            <div class="node-actions" role="group" aria-label={format!("Faults and maintenance for {}", n.name)}>
                { if n.cut_off {
                    // Stopped or partitioned, the control plane hears nothing: either brings it back.
                    html! { <>
                        { command_button("start kubelet", format!("sim node start {}", n.name), &props.on_command) }
                        { command_button("heal", format!("sim node heal {}", n.name), &props.on_command) }
                    </> }
                } else {
                    html! { <>
                        { command_button("stop kubelet", format!("sim node stop {}", n.name), &props.on_command) }
                        { command_button("partition", format!("sim node partition {}", n.name), &props.on_command) }
                    </> }
                } }
                { if n.cordoned {
                    command_button("uncordon", format!("kubectl uncordon {}", n.name), &props.on_command)
                } else {
                    command_button("cordon", format!("kubectl cordon {}", n.name), &props.on_command)
                } }
                { command_button("drain", format!("kubectl drain {} --ignore-daemonsets --delete-emptydir-data", n.name), &props.on_command) }
            </div>
            { gauge("cpu", n.cpu_requested, n.cpu_allocatable, format!("{}m / {}m", n.cpu_requested, n.cpu_allocatable)) }
            { gauge("memory", n.memory_requested, n.memory_allocatable, format!("{}Mi / {}Mi", n.memory_requested >> 20, n.memory_allocatable >> 20)) }
            <ul class="pod-chips">
            { for n.pods.iter().map(|(name, status)| html! {
                <li class={classes!("chip", status_class(status))} title={format!("{name}: {status}")}>{name}<span class="chip-status">{status}</span></li>
            }) }
            if n.pod_count > n.pods.len() {
                <li class="chip more">{format!("+{} more", n.pod_count - n.pods.len())}</li>
            }
            </ul>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct WorkloadTableProps {
    pub rows: Vec<WorkloadRow>,
}

/// `kubectl get deploy,rs`, live: the owners of the pods below.
#[function_component(WorkloadTable)]
pub fn workload_table(props: &WorkloadTableProps) -> Html {
    html! {
        <table id="workloads" class="kube-table" aria-label="Deployments and ReplicaSets">
            <thead><tr><th>{"NAME"}</th><th>{"READY"}</th><th>{"STATUS"}</th><th>{"AGE"}</th></tr></thead>
            <tbody>
            { for props.rows.iter().map(|r| html! {
                <tr data-workload={r.name.clone()}>
                    <td>{&r.name}</td><td>{&r.ready}</td><td>{&r.detail}</td><td>{&r.age}</td>
                </tr>
            }) }
            </tbody>
        </table>
    }
}

#[derive(Properties, PartialEq)]
pub struct ControlPlaneProps {
    pub view: crate::views::overview::ControlPlane,
}

/// The control plane as the seeds' diagram draws it: the API server with its pipeline, etcd,
/// the scheduler and the controller manager with a lane per controller.
#[function_component(ControlPlaneMap)]
pub fn control_plane_map(props: &ControlPlaneProps) -> Html {
    let v = &props.view;
    let last = v.requests.first();
    let stage_class = |stage: crate::record::Stage| -> &'static str {
        match last {
            None => "stage",
            Some(r) => match r.refused_at {
                Some(at) if at == stage.label() => "stage refused",
                Some(at)
                    if crate::record::Stage::ALL.iter().position(|s| s.label() == at)
                        < crate::record::Stage::ALL.iter().position(|s| *s == stage) =>
                {
                    "stage skipped"
                }
                _ => "stage passed",
            },
        }
    };
    let busy: Vec<&crate::views::overview::ControllerRow> = v
        .controllers
        .iter()
        .filter(|c| !c.lanes.is_empty() || !c.queued.is_empty() || !c.decisions.is_empty())
        .collect();
    html! {
        <div id="control-plane" class="control-plane" aria-label="Control plane">
            <article class="component api" aria-labelledby="cp-api">
                <h3 id="cp-api">{"kube-apiserver"}</h3>
                <ol class="pipeline" aria-label="Request pipeline (the latest request)">
                    { for crate::record::Stage::ALL.iter().map(|s| html! { <li class={stage_class(*s)}>{s.label()}</li> }) }
                </ol>
                <ul class="requests">
                    { for v.requests.iter().map(|r| html! {
                        <li class={if r.code >= 400 { "refused" } else { "ok" }}>
                            <span class="code">{r.code}</span>{" "}
                            <span class="method">{r.method}</span>{" "}
                            <span class="path">{&r.path}</span>
                            <span class="who">{format!(" · {}", r.who)}</span>
                        </li>
                    }) }
                </ul>
            </article>
            <article class="component etcd" aria-labelledby="cp-etcd">
                <h3 id="cp-etcd">{"etcd"}</h3>
                <p class="revision-big" id="etcd-revision">{"revision "}
                    // Keyed by the revision: each new one is a new element, so it ticks (CSS).
                    { for std::iter::once(html! { <span class="rev-tick" key={v.revision}>{v.revision}</span> }) }
                </p>
                <p class="muted">{format!("{} keys under /registry", v.keys)}</p>
            </article>
            <article class="component scheduler" aria-labelledby="cp-scheduler">
                <h3 id="cp-scheduler">{"kube-scheduler"}</h3>
                <p class="muted">{ if v.unscheduled.is_empty() { "no pods waiting for a node".to_string() } else { format!("{} waiting: {}", v.waiting, v.unscheduled.join(", ")) } }</p>
                <ul class="decisions">{ for v.scheduler_decisions.iter().map(|d| html! { <li>{d}</li> }) }</ul>
            </article>
            <article class="component controllers" aria-labelledby="cp-kcm">
                <h3 id="cp-kcm">{"kube-controller-manager"}</h3>
                if busy.is_empty() {
                    <p class="muted">{"every controller in sync"}</p>
                }
                { for busy.iter().map(|c| html! {
                    <section class="lane" data-controller={c.name.clone()}>
                        <h4>{&c.name}{ if c.queued.is_empty() { String::new() } else { format!(" · queue: {}", c.queued.join(", ")) } }</h4>
                        <ul>
                            { for c.lanes.iter().map(|l| html! { <li class="lane-state">{l}</li> }) }
                            { for c.decisions.iter().take(1).map(|d| html! { <li class="decision">{d}</li> }) }
                        </ul>
                    </section>
                }) }
            </article>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct InspectorProps {
    pub view: crate::views::overview::Inspection,
    pub on_close: Callback<()>,
    pub on_refresh: Callback<()>,
    /// Opens an owner (`kind/name`).
    pub on_open: Callback<String>,
}

/// One object up close: its YAML, `kubectl describe`, owner chain and events.
#[function_component(Inspector)]
pub fn inspector(props: &InspectorProps) -> Html {
    let tab = use_state(|| "describe");
    let tab_button = |name: &'static str| {
        let t = tab.clone();
        html! { <button role="tab" aria-selected={(*tab == name).to_string()} class={classes!((*tab == name).then_some("active"))}
        onclick={Callback::from(move |_: MouseEvent| t.set(name))}>{name}</button> }
    };
    let v = &props.view;
    let body = match *tab {
        "yaml" => v.yaml.clone(),
        "events" => v.events.clone(),
        _ => v.describe.clone(),
    };
    let close = props.on_close.reform(|_: MouseEvent| ());
    let refresh = props.on_refresh.reform(|_: MouseEvent| ());
    html! {
        <aside id="inspector" class="inspector panel" aria-label={format!("Inspector: {}", v.title)}>
            <header>
                <h2>{&v.title}</h2>
                <button class="small" onclick={refresh} title="look again">{"refresh"}</button>
                <button class="small" onclick={close} aria-label="Close the inspector">{"close"}</button>
            </header>
            if !v.owners.is_empty() {
                <p class="owners">{"owned by "}
                { for v.owners.iter().map(|o| {
                    let (on_open, o2) = (props.on_open.clone(), o.clone());
                    html! { <>{" ← "}<button class="linkish" onclick={Callback::from(move |_: MouseEvent| on_open.emit(o2.clone()))}>{o}</button></> }
                }) }
                </p>
            }
            <div role="tablist" class="tabs">{tab_button("describe")}{tab_button("yaml")}{tab_button("events")}</div>
            <pre class="inspector-body" role="tabpanel">{body}</pre>
        </aside>
    }
}

#[derive(Properties, PartialEq)]
pub struct FollowProps {
    pub chain: Vec<crate::views::overview::ChainStep>,
    pub on_close: Callback<()>,
    /// The step shown now (its record entry), so the map can send its message.
    pub on_step: Callback<u64>,
}

/// Real milliseconds a played chain stays on each step: about one message's journey.
const FOLLOW_STEP_MS: u32 = 1800;

/// "Follow this apply": the chain of what one kubectl write set off, one step at a time,
/// each captioned with who acted and what they saw or did.
#[function_component(FollowChain)]
pub fn follow_chain(props: &FollowProps) -> Html {
    let at = use_state(|| 0usize);
    let n = props.chain.len();
    let current = (*at).min(n.saturating_sub(1));
    let move_to = |to: usize| {
        let at = at.clone();
        Callback::from(move |_: MouseEvent| at.set(to))
    };
    let close = props.on_close.reform(|_: MouseEvent| ());
    // Playing walks the chain by itself, a step each time its message has had time to travel.
    let playing = use_state(|| false);
    {
        let (at, playing) = (at.clone(), playing.clone());
        use_effect_with((*playing, current), move |&(on, from)| {
            let timer = on.then(|| {
                gloo_timers::callback::Timeout::new(FOLLOW_STEP_MS, move || {
                    if from + 1 < n {
                        at.set(from + 1);
                    } else {
                        playing.set(false);
                    }
                })
            });
            move || drop(timer)
        });
    }
    let toggle_play = {
        let playing = playing.clone();
        Callback::from(move |_: MouseEvent| playing.set(!*playing))
    };
    {
        let on_step = props.on_step.clone();
        use_effect_with(props.chain.get(current).map(|s| s.seq), move |seq| {
            if let Some(seq) = *seq {
                on_step.emit(seq);
            }
        });
    }
    html! {
        <section id="follow" class="follow panel" aria-label="Follow the last apply">
            <header>
                <h2>{format!("Follow the last apply · step {} of {n}", current + 1)}</h2>
                <button class="small" onclick={move_to(current.saturating_sub(1))} disabled={current == 0}>{"previous"}</button>
                <button id="follow-next" class="small" onclick={move_to((current + 1).min(n.saturating_sub(1)))} disabled={current + 1 >= n}>{"next"}</button>
                <button id="follow-play" class="small" onclick={toggle_play} aria-pressed={playing.to_string()}
                    title="step through the chain by itself">{if *playing { "pause" } else { "play" }}</button>
                <button class="small" onclick={close} aria-label="Stop following">{"close"}</button>
            </header>
            if let Some(step) = props.chain.get(current) {
                <p class="follow-current" aria-live="polite"><strong>{&step.who}</strong>{" "}{&step.caption}</p>
            }
            <ol class="follow-steps">
            { for props.chain.iter().enumerate().map(|(i, s)| html! {
                <li class={classes!((i == current).then_some("current"), (i < current).then_some("past"))}>
                    <button class="linkish" onclick={move_to(i)}>
                        <span class="at">{&s.at}</span>{" "}<span class="who">{&s.who}</span>{" "}{&s.caption}
                    </button>
                </li>
            }) }
            </ol>
        </section>
    }
}
