//! The cluster's pane: the inspector, the control plane's map (with the followed apply and
//! the view a click on it opened), the nodes, the workloads, the pods and the events.

use super::map::{self, SharedBoard, SharedFlow};
use super::panels::{EventFilter, EventList, FollowChain, Inspector, NodeMap, PodTable, WorkloadTable};
use super::view::Snapshot;
use super::{etcd_view, reconcile_view, scheduler_view, sequence};
use crate::page::sim::DetailFrame;
use crate::page::{Action, Detail};
use crate::shell::Command;
use crate::views::overview::{ChainStep, Inspection};
use crate::views::sequence::Sequence;
use std::rc::Rc;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ClusterPaneProps {
    /// The frame's sequence diagram (while an apply is followed).
    pub sequence: Option<Rc<Sequence>>,
    /// The frame's view opened from the map.
    pub detail_frame: Option<Rc<DetailFrame>>,
    pub flow: SharedFlow,
    pub board: SharedBoard,
    /// The record's last entry: what is drawn from the cluster itself redraws when it moves.
    pub last_seq: u64,
    pub snap: Rc<Snapshot>,
    pub teaching: bool,
    pub spotlight: Option<u64>,
    pub inspected: Option<Inspection>,
    pub following: Option<Vec<ChainStep>>,
    pub detail: Option<Detail>,
    pub event_filter: EventFilter,
    pub highlight: Option<String>,
    pub dispatch: Callback<Action>,
}

#[function_component(ClusterPane)]
pub fn cluster_pane(props: &ClusterPaneProps) -> Html {
    let d = &props.dispatch;
    let on_command = d.reform(|line: String| Action::Run(line.clone(), Command::new(&line)));
    let on_delete_pod = d.reform(|name: String| {
        let line = format!("kubectl delete pod {name} --wait=false");
        Action::Run(line.clone(), Command::new(&line))
    });
    // The same callback from one drawing to the next, so the map's board is not drawn again
    // for a new callback alone.
    let on_pick = (*use_memo(d.clone(), |d| d.reform(Action::Pick))).clone();
    let snap = &props.snap;
    html! {
        <section class="panel cluster" aria-labelledby="cluster-title">
            if let Some(view) = props.inspected.clone() {
                <Inspector {view} on_close={d.reform(|()| Action::CloseInspector)}
                    on_refresh={d.reform(|()| Action::RefreshInspector)} on_open={d.reform(Action::Inspect)} />
            }
            <h2 id="control-plane-title">{"Control plane "}
                <button id="follow-apply" class="small" onclick={d.reform(|_: MouseEvent| Action::Follow)}
                    title="walk through everything the last kubectl write set off">{"follow the last apply"}</button>
            </h2>
            <map::ArchitectureMap flow={props.flow.clone()} board={props.board.clone()} teaching={props.teaching}
                {on_pick} />
            <map::MapLegend raft={!props.board.0.etcd_members.is_empty()} webhooks={props.board.0.webhooks} />
            if let Some(chain) = props.following.clone() {
                <FollowChain {chain} on_close={d.reform(|()| Action::Unfollow)} on_step={d.reform(Action::FollowStep)} />
                <section class="panel sequence-panel" aria-label="The followed apply as a sequence diagram">
                    <h2>{"The sequence of the last apply "}<span class="muted">{"(choose a step: the map lights its hop and shows the cluster as it was)"}</span></h2>
                    <sequence::SequenceView sequence={props.sequence.as_deref().cloned().unwrap_or_default()}
                        selected={props.spotlight} on_select={d.reform(|(seq, rev)| Action::SequenceSelect(seq, rev))} />
                </section>
            }
            if let Some(open) = props.detail.clone() {
                <DetailPanel last_seq={props.last_seq} {open}
                    frame={props.detail_frame.clone()} dispatch={d.clone()} />
            }
            <h2 id="cluster-title">{"Nodes: faults and maintenance"}</h2>
            <NodeMap nodes={snap.nodes.clone()} left_out={snap.nodes_left_out} on_command={on_command.clone()} />
            if !snap.workloads.is_empty() {
                <h2>{"Deployments & ReplicaSets "}<code>{"(kubectl get deploy,rs)"}</code></h2>
                <WorkloadTable rows={snap.workloads.clone()} />
            }
            <h2>{"Pods "}<code>{"(kubectl get pods -o wide)"}</code></h2>
            <div class="offscreen-lazy">
                <PodTable pods={snap.pods.clone()} total={snap.pod_count} on_delete={on_delete_pod} {on_command}
                    highlight={props.highlight.clone()} on_inspect={d.reform(|name: String| Action::Inspect(format!("pod/{name}")))} />
            </div>
            <h2>{"Events"}</h2>
            <EventList events={snap.events.clone()} filter={props.event_filter.clone()} on_filter={d.reform(Action::FilterEvents)}
                selected={props.highlight.clone()} on_select={d.reform(Action::Highlight)} />
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct DetailProps {
    pub last_seq: u64,
    pub open: Detail,
    /// The view as the frame carries it (the scheduler's decision, etcd's, a controller's loop).
    pub frame: Option<Rc<DetailFrame>>,
    pub dispatch: Callback<Action>,
}

/// The view opened from the map, drawn from the frame.
#[function_component(DetailPanel)]
pub fn detail_panel(props: &DetailProps) -> Html {
    let d = &props.dispatch;
    let close = d.reform(|()| Action::Detail(None));
    let close_button =
        html! { <button class="small" onclick={d.reform(|_: MouseEvent| Action::Detail(None))}>{"close"}</button> };
    let body = match &props.open {
        Detail::Scheduler(_) => {
            let (pods, table) = match props.frame.as_deref() {
                Some(DetailFrame::Scheduler(view)) => (view.pods.clone(), view.table.clone()),
                _ => (Vec::new(), None),
            };
            let chosen = table.as_ref().map(|t| t.pod.clone()).unwrap_or_default();
            let on_pod = {
                let d = d.clone();
                Callback::from(move |e: Event| {
                    if let Some(v) = e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value()) {
                        d.emit(Action::Detail(Some(Detail::Scheduler(Some(v)))));
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
            if let Some(DetailFrame::Etcd(view)) = props.frame.as_deref() {
                <etcd_view::EtcdPanel view={view.clone()} />
            }
            </>
        },
        Detail::Controller(name, _) => {
            let on_pick = {
                let name = name.clone();
                d.reform(move |key: String| Action::Detail(Some(Detail::Controller(name.clone(), Some(key)))))
            };
            html! {
                <>
                <header><h2>{format!("{name}: its reconciliation loop")}</h2></header>
                { match props.frame.as_deref() {
                    Some(DetailFrame::Controller { view: Some(view), .. }) => html! { <reconcile_view::ReconcileLoop view={view.clone()} on_close={close} {on_pick} /> },
                    _ => html! { <><p class="muted">{format!("{name} has not acted yet.")}</p>{close_button}</> },
                } }
                </>
            }
        }
    };
    html! { <section id="map-detail" class="panel map-detail" aria-label="Opened from the map">{body}</section> }
}
