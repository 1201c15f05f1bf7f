//! The architecture map on the page: the control plane and the nodes drawn as the classic
//! diagram (an SVG laid out by `crate::views::map`), with every request and watch notification
//! of the record travelling its edge as a token, the API server's stages lighting as a request
//! passes them, and the receiver pulsing as it wakes. Text panels sit beside it, never under
//! the tokens.

use super::clock::now_ms;
use crate::page::sim::FlowFrame;
use crate::views::map::{self as geo, Board, Layout, Rect, fit};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use yew::prelude::*;

/// The map's messages as the latest frame has them, compared by identity (a new frame's
/// messages are a new one).
#[derive(Clone)]
pub struct SharedFlow(pub Rc<FlowFrame>);

impl PartialEq for SharedFlow {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The board, compared first by identity: the map redraws every animation frame while tokens
/// fly, and the board it hands down is the same one until the page builds a new one.
#[derive(Clone)]
pub struct SharedBoard(pub Rc<Board>);

impl PartialEq for SharedBoard {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

#[derive(Properties, PartialEq)]
pub struct MapProps {
    pub flow: SharedFlow,
    pub board: SharedBoard,
    pub teaching: bool,
    /// Opens an object (`pod/NAME`) or a view (`scheduler`, `etcd`, `controller/NAME`).
    #[prop_or_default]
    pub on_pick: Callback<String>,
}

fn reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-reduced-motion: reduce)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// The map: the board, the tokens over it, and the sentence of the latest hop under it.
#[function_component(ArchitectureMap)]
pub fn architecture_map(props: &MapProps) -> Html {
    let reduced = use_mut_ref(reduced_motion);
    let redraw = use_force_update();
    // The animation loop: a frame is drawn while messages travel. The simulation says when
    // each left; the page moves them on by itself, every animation frame.
    let current = use_mut_ref(|| props.flow.0.clone());
    *current.borrow_mut() = props.flow.0.clone();
    {
        let (current, redraw) = (current.clone(), redraw.clone());
        use_effect_with((), move |_| {
            type Frame = Closure<dyn FnMut(f64)>;
            let slot: Rc<RefCell<Option<Frame>>> = Rc::new(RefCell::new(None));
            let pending = Rc::new(Cell::new(None::<i32>));
            let (again, pending2) = (slot.clone(), pending.clone());
            let request = move |slot: &Rc<RefCell<Option<Frame>>>, pending: &Cell<Option<i32>>| {
                let id = slot
                    .borrow()
                    .as_ref()
                    .and_then(|f| web_sys::window()?.request_animation_frame(f.as_ref().unchecked_ref()).ok());
                pending.set(id);
            };
            // One more frame after the last message arrives, so it leaves the map.
            let was_moving = Cell::new(false);
            *slot.borrow_mut() = Some(Closure::new(move |_: f64| {
                let moving = current.try_borrow().is_ok_and(|f| f.moving(now_ms()));
                if moving || was_moving.get() {
                    redraw.force_update();
                }
                was_moving.set(moving);
                request(&again, &pending2);
            }));
            request(&slot, &pending);
            move || {
                if let (Some(id), Some(w)) = (pending.get(), web_sys::window()) {
                    let _ = w.cancel_animation_frame(id);
                }
                slot.borrow_mut().take();
            }
        });
    }

    let layout = &props.board.0.layout;
    let flow = &props.flow.0;
    let messages = flow.at(now_ms());
    let (tokens, lights, caption, passed_over) =
        (layout.tokens(&messages, *reduced.borrow()), layout.lights(&messages), flow.caption.clone(), flow.passed_over);
    let stage_lights = layout.stages.iter().enumerate().filter_map(|(i, (stage, r))| {
        let refused = lights.refused_at == Some(*stage);
        (i < lights.stages_reached).then(|| {
            html! {
                <rect class={classes!("stage-light", refused.then_some("refused"))} data-stage={stage.label()}
                    x={n(r.x)} y={n(r.y)} width={n(r.w)} height={n(r.h)} rx="6" />
            }
        })
    });
    let pulses = lights.arriving.iter().filter_map(|place| {
        let r = layout.place_rect(place)?;
        Some(html! {
            <rect class="pulse" data-place={place.name()} x={n(r.x - 3.0)} y={n(r.y - 3.0)}
                width={n(r.w + 6.0)} height={n(r.h + 6.0)} rx="9" />
        })
    });
    // The API server's row of stages, whose names a label must not cover: a token passing
    // through it has its label under the row (over the line of the last request, which says the
    // same at more length), not over the stage names or the API server's own.
    let row = layout
        .stages
        .iter()
        .map(|(_, r)| (r.x, r.y, r.x + r.w, r.y + r.h))
        .reduce(|a, b| (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3)));
    let token_marks = tokens.iter().map(|t| {
        let (x, y) = t.at;
        // Above the token (its top 28 above the token's centre), or, where that would cover the
        // stages' row, under both the row and the token.
        let ly = match row {
            Some((left, top, right, bottom)) if (left..=right).contains(&x) && (top + 7.0..=bottom + 28.0).contains(&y) => {
                (bottom + 3.0 - y).max(9.0)
            }
            _ => -28.0,
        };
        let label = fit(&t.label, 280.0, 13.0);
        let wide = label.chars().count() as f64 * 7.8 + 16.0;
        // Labels sit above and to the right of the token, or to the left near the right edge.
        let flip = x + wide > geo::WIDTH - 4.0;
        // A Raft message's label is centred over it: the etcd box is narrow.
        let lx = if t.from.starts_with("etcd/") {
            -wide / 2.0
        } else if flip {
            -wide - 6.0
        } else {
            10.0
        };
        html! {
            <g class={t.class.css()} key={t.ids[0]} data-from={t.from.clone()} data-to={t.to.clone()} data-count={t.count.to_string()} data-label={t.label.clone()}
                transform={format!("translate({x:.1} {y:.1})")}>
                <circle r="7" />
                if t.count > 1 { <text class="count" x="0" y="3.5">{t.count.min(99).to_string()}</text> }
                if t.labelled {
                    <rect class="label-bg" x={n(lx)} y={n(ly)} width={n(wide)} height="21" rx="10" />
                    <text class="label" x={n(lx + 8.0)} y={n(ly + 15.0)}>{label}</text>
                }
            </g>
        }
    });
    let view_box = format!("0 0 {} {}", geo::WIDTH, n(layout.height));
    let (etcd, revision) = (geo::ETCD, props.board.0.revision);
    let raft = !props.board.0.etcd_members.is_empty();
    let background = if passed_over > 0 && props.teaching {
        format!(" (and {passed_over} background write(s): Events, heartbeats)")
    } else {
        String::new()
    };
    html! {
        <figure class="map-figure" id="map-figure">
            // Two layers over each other: the board, drawn again only when it changes, and what
            // moves over it every animation frame (tokens, stage lights, pulses, etcd's
            // revision), so a frame of moving tokens never repaints hundreds of nodes.
            <div id="map" class="map-stack">
                <svg class="map map-board" viewBox={view_box.clone()} role="group"
                    aria-labelledby="map-title map-desc" preserveAspectRatio="xMidYMin meet">
                    <title id="map-title">{"The cluster's architecture: kubectl, the control plane and the nodes"}</title>
                    <desc id="map-desc">{"Every component talks only to kube-apiserver; only kube-apiserver talks to etcd. Moving dots are requests and watch notifications."}</desc>
                    <defs>
                        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                            <path d="M0 0 L10 5 L0 10 z" class="arrowhead" />
                        </marker>
                    </defs>
                    <MapBoard board={props.board.clone()} on_pick={props.on_pick.clone()} />
                </svg>
                <svg class="map map-overlay" viewBox={view_box} aria-hidden="true" preserveAspectRatio="xMidYMin meet">
                    // With a Raft group the revision sits beside the title, leaving the band over
                    // the members' chips to the messages between them.
                    <text class={classes!("revision", raft.then_some("compact"))} id="map-revision"
                        x={n(etcd.x + if raft { 64.0 } else { 14.0 })} y={n(etcd.y + if raft { 50.0 } else { 86.0 })}>
                        { for std::iter::once(html! { <tspan key={revision}>{format!("revision {revision}")}</tspan> }) }
                    </text>
                    <g class="lights">{ for stage_lights }{ for pulses }</g>
                    <g class="tokens">{ for token_marks }</g>
                </svg>
            </div>
            <figcaption id="map-caption" class={classes!("map-caption", props.teaching.then_some("teaching"))}
                aria-live={if props.teaching { "polite" } else { "off" }}>
                { if caption.is_empty() { "Messages will travel the map as the cluster works: requests toward the API server, watch notifications back.".to_string() } else { format!("{caption}{background}") } }
            </figcaption>
        </figure>
    }
}

/// A number for an SVG attribute, to a tenth (by integer arithmetic: a big map writes
/// thousands of them, and formatting a float is many times slower).
fn n(v: f64) -> String {
    let tenths = (v * 10.0).round();
    if !tenths.is_finite() || tenths.abs() > 1e15 {
        return format!("{v:.1}");
    }
    let tenths = tenths as i64;
    let sign = if tenths < 0 { "-" } else { "" };
    let t = tenths.unsigned_abs();
    format!("{sign}{}.{}", t / 10, t % 10)
}

#[derive(Properties, PartialEq)]
struct BoardProps {
    board: SharedBoard,
    on_pick: Callback<String>,
}

fn boxed(class: &'static str, r: Rect, rx: f64, component: &str) -> Html {
    html! {
        <rect class={classes!("box", class)} data-component={component.to_string()} x={n(r.x)} y={n(r.y)} width={n(r.w)} height={n(r.h)} rx={n(rx)} />
    }
}

/// Who leads among a component's instances (one per control-plane node), as its Lease names it.
fn leader_line(leader: &str, instances: usize) -> String {
    if leader.is_empty() {
        format!("no leader yet: {instances} instances electing")
    } else {
        format!("leader: {} (Lease) · {} standing by", leader.replace("control-plane", "cp"), instances - 1)
    }
}

/// The API server instances behind the load balancer and whether each serves.
fn api_servers_line(servers: &[(String, bool)]) -> String {
    let each: Vec<String> = servers
        .iter()
        .map(|(node, up)| format!("{}{}", node.replace("control-plane", "cp"), if *up { "" } else { " (down)" }))
        .collect();
    format!("behind a load balancer: {}", each.join(", "))
}

/// etcd's members as chips along the bottom of its box: the leader lit, a member that cannot
/// take part dashed, each with its role and term (the tooltip adds its log and commit index).
fn raft_members(members: &[crate::views::map::EtcdMember]) -> Vec<Html> {
    members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let chip = geo::member_chip(i, members.len());
            let (x, y, w) = (chip.x, chip.y, chip.w);
            let class = match (&m.trouble, m.role.as_str()) {
                (Some(t), _) if t != "slow disk" => "raft-member down",
                (_, "leader") => "raft-member leader",
                (_, "candidate") => "raft-member candidate",
                _ => "raft-member",
            };
            // "cp2 · t3" over "leader": a chip is narrow.
            let state = match &m.trouble {
                Some(t) if t != "slow disk" => t.clone(),
                Some(_) => format!("{} (slow)", m.role),
                None => m.role.clone(),
            };
            let short = format!("{} · t{}", m.name.replace("control-plane", "cp"), m.term);
            html! {
                <g class={class} data-member={m.name.clone()}>
                    <title>{format!("etcd member {}: {}, term {}, log index {}, committed {}{}", m.name, m.role, m.term, m.index, m.commit,
                        m.trouble.as_ref().map(|t| format!(" ({t})")).unwrap_or_default())}</title>
                    <rect x={n(x)} y={n(y)} width={n(w)} height="30" rx="5" />
                    <text class="raft-name" x={n(x + 5.0)} y={n(y + 12.0)}>{fit(&short, w - 10.0, 10.5)}</text>
                    <text class="raft-state" x={n(x + 5.0)} y={n(y + 25.0)}>{fit(&state, w - 10.0, 10.0)}</text>
                </g>
            }
        })
        .collect()
}

fn text(class: &'static str, x: f64, y: f64, content: String) -> Html {
    html! { <text class={class} x={n(x)} y={n(y)}>{content}</text> }
}

/// What does not move: boxes, edges and what each box says. Drawn again only when the board
/// changes.
#[function_component(MapBoard)]
fn map_board(props: &BoardProps) -> Html {
    let b = &*props.board.0;
    let l: &Layout = &b.layout;
    let pick = |what: String| {
        let on_pick = props.on_pick.clone();
        Callback::from(move |_: MouseEvent| on_pick.emit(what.clone()))
    };
    let key_pick = |what: String| {
        let on_pick = props.on_pick.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" || e.key() == " " {
                e.prevent_default();
                on_pick.emit(what.clone());
            }
        })
    };
    let cp = geo::CONTROL_PLANE;
    let api = geo::API_SERVER;
    let etcd = geo::ETCD;
    let sched = geo::SCHEDULER;
    let cm = geo::CONTROLLER_MANAGER;
    let kubectl = geo::KUBECTL;
    let coredns = geo::COREDNS;
    let stages = l.stages.iter().map(|(stage, r)| {
        let refused = b.request.as_ref().and_then(|q| q.refused_at) == Some(*stage);
        html! {
            <g class={classes!("stage", refused.then_some("refused"))} data-stage={stage.label()}>
                <title>{stage.label()}</title>
                <rect x={n(r.x)} y={n(r.y)} width={n(r.w)} height={n(r.h)} rx="6" />
                <text class="stage-label" x={n(r.cx())} y={n(r.cy() + 4.0)}>{geo::stage_short(*stage)}</text>
                if refused { <text class="stage-mark" x={n(r.right() - 10.0)} y={n(r.y + 13.0)}>{"✗"}</text> }
            </g>
        }
    });
    let request_line = match &b.request {
        Some(r) => fit(&r.text, api.w - 24.0, 12.5),
        None => "no requests yet".to_string(),
    };
    let refused = b.request.as_ref().is_some_and(|r| r.refused_at.is_some());
    let refusal = if refused { b.refusal.clone().map(|m| fit(&m, api.w - 24.0, 12.5)) } else { None };
    let lanes = l.lanes.iter().zip(&b.lanes).map(|((name, r), (_, line))| {
        let short = name.trim_end_matches("-controller");
        html! {
            <g class="lane" data-controller={name.clone()} tabindex="0" role="button"
                aria-label={format!("{name}: {line}")}
                onclick={pick(format!("controller/{name}"))} onkeydown={key_pick(format!("controller/{name}"))}>
                <title>{format!("{name}: {line}")}</title>
                <rect x={n(r.x)} y={n(r.y)} width={n(r.w)} height={n(r.h)} rx="5" />
                <text class="lane-name" x={n(r.x + 7.0)} y={n(r.y + 14.0)}>{fit(short, r.w - 14.0, 12.5)}</text>
                <text class="lane-line" x={n(r.x + 7.0)} y={n(r.y + 28.0)}>{fit(line, r.w - 14.0, 11.0)}</text>
            </g>
        }
    });
    // Each add-on's box opens its loop, as a controller's lane does.
    let addons = l.addons.iter().zip(&b.addons).map(|((name, r), (_, line))| {
        let what = geo::addon_role(name);
        html! {
            <g class="component addon" data-component={name.clone()} tabindex="0" role="button"
                aria-label={format!("{name}: {what}; {line}")}
                onclick={pick(format!("controller/{name}"))} onkeydown={key_pick(format!("controller/{name}"))}>
                <title>{format!("{name} (an add-on running as pods): {what}; {line}")}</title>
                { boxed("addon", *r, 10.0, name) }
                // Up to four add-ons leave a box room for its title, role and state; five, title and role;
                // six, the title (the tooltip has the rest).
                if r.h >= 40.0 {
                    { text("title", r.x + 10.0, r.y + 20.0, fit(&geo::addon_title(name), r.w - 20.0, 13.0)) }
                    { text("sub muted", r.x + 10.0, r.y + 35.0, fit(what, r.w - 20.0, 11.0)) }
                } else if r.h >= 30.0 {
                    { text("title", r.x + 10.0, r.y + 14.0, fit(&geo::addon_title(name), r.w - 20.0, 12.0)) }
                    { text("sub muted", r.x + 10.0, r.y + 26.0, fit(what, r.w - 20.0, 10.0)) }
                } else {
                    { text("title", r.x + 10.0, r.y + r.h / 2.0 + 4.0, fit(&geo::addon_title(name), r.w - 20.0, 12.0)) }
                }
                if r.h >= 52.0 {
                    { text("sub muted", r.x + 10.0, r.y + 49.0, fit(line, r.w - 20.0, 11.0)) }
                }
            </g>
        }
    });
    let nodes = l.nodes.iter().zip(&b.nodes).map(|(nl, nv)| {
        html! { <NodeMark key={nv.name.clone()} layout={nl.clone()} view={nv.clone()} cni={l.cni.clone()} on_pick={props.on_pick.clone()} /> }
    });
    html! {
        <g class="board">
            <rect class="frame" x={n(cp.x)} y={n(cp.y)} width={n(cp.w)} height={n(cp.h)} rx="14" />
            { text("frame-label", cp.x + 14.0, cp.y + 20.0, match &b.ha {
                Some(ha) => format!("control plane (static pods on {} control-plane nodes; one box per component)", ha.api_servers.len()),
                None => "control plane (the control-plane node's static pods)".into(),
            }) }
            <MapEdges layout={SharedLayout(b.layout.clone())} />

            <g class="component kubectl" data-component="kubectl">
                { boxed("you", kubectl, 10.0, "kubectl") }
                <circle class="person" cx={n(kubectl.x + 24.0)} cy={n(kubectl.y + 30.0)} r="8" />
                <path class="person" d={format!("M{:.0} {:.0} q12 -16 24 0", kubectl.x + 12.0, kubectl.y + 56.0)} />
                { text("title", kubectl.x + 44.0, kubectl.y + 32.0, "you".into()) }
                { text("sub", kubectl.x + 44.0, kubectl.y + 52.0, "kubectl".into()) }
                { text("sub muted", kubectl.x + 8.0, kubectl.y + 80.0, "terminal, editor".into()) }
            </g>

            <g class="component coredns" data-component="coredns">
                <title>{"CoreDNS (kube-system): answers the cluster's DNS names from its watches"}</title>
                { boxed("coredns", coredns, 10.0, "coredns") }
                { text("title", coredns.x + 10.0, coredns.y + 24.0, "CoreDNS".into()) }
                { text("sub", coredns.x + 10.0, coredns.y + 44.0, "cluster DNS".into()) }
                { text("sub muted", coredns.x + 10.0, coredns.y + 64.0, fit(&b.coredns, coredns.w - 20.0, 11.0)) }
                { text("sub muted", coredns.x + 10.0, coredns.y + 80.0, "behind kube-dns".into()) }
            </g>

            { for addons }

            <g class="component api" data-component="kube-apiserver">
                { boxed("api", api, 10.0, "kube-apiserver") }
                if let Some(ha) = &b.ha {
                    { text("title", api.x + 12.0, api.y + 26.0, format!("kube-apiserver ×{}", ha.api_servers.len())) }
                    { text("sub muted", api.x + 200.0, api.y + 26.0, fit(&api_servers_line(&ha.api_servers), api.w - 212.0, 12.0)) }
                } else {
                    { text("title", api.x + 12.0, api.y + 26.0, "kube-apiserver".into()) }
                    { text("sub muted", api.x + 180.0, api.y + 26.0, "every request passes these stages; every watch starts here".into()) }
                }
                { for stages }
                <text class={classes!("request-line", refused.then_some("refused"))} x={n(api.x + 12.0)} y={n(api.y + 112.0)}>{request_line}</text>
                if let Some(message) = refusal {
                    <text class="refusal" x={n(api.x + 12.0)} y={n(api.y + 134.0)}>{message}</text>
                }
            </g>

            <g class="component etcd" data-component="etcd" tabindex="0" role="button" aria-label={format!("etcd: revision {}, {} keys; open the key tree", b.revision, b.keys)}
                onclick={pick("etcd".into())} onkeydown={key_pick("etcd".into())}>
                <path class="box cylinder" d={etcd.cylinder_path()} />
                <ellipse class="cylinder-top" cx={n(etcd.cx())} cy={n(etcd.y + 12.0)} rx={n(etcd.w / 2.0)} ry="12" />
                { text("title", etcd.x + 14.0, etcd.y + 50.0, "etcd".into()) }
                // The revision itself is drawn on the moving layer (it changes with every write).
                if b.etcd_members.is_empty() {
                    { text("sub muted", etcd.x + 14.0, etcd.y + 112.0, format!("{} keys under /registry", b.keys)) }
                    { text("sub muted", etcd.x + 14.0, etcd.y + 132.0, "only the API server talks to it".into()) }
                } else {
                    // The revision is beside the title (on the moving layer); the band over the
                    // chips is where Raft's messages travel.
                    { text("sub muted", etcd.x + 14.0, etcd.y + 68.0, fit(&format!("Raft · {} members · {} keys", b.etcd_members.len(), b.keys), etcd.w - 28.0, 12.5)) }
                    { for raft_members(&b.etcd_members) }
                }
            </g>

            <g class="component scheduler" data-component="kube-scheduler" tabindex="0" role="button"
                aria-label="kube-scheduler: open its latest decision" onclick={pick("scheduler".into())} onkeydown={key_pick("scheduler".into())}>
                { boxed("sched", sched, 10.0, "kube-scheduler") }
                { text("title", sched.x + 12.0, sched.y + 26.0, "kube-scheduler".into()) }
                { text("sub", sched.x + 12.0, sched.y + 54.0, if b.waiting == 0 { "no pods waiting for a node".into() } else { format!("{} pod(s) waiting for a node", b.waiting) }) }
                { text("sub muted", sched.x + 12.0, sched.y + 80.0, fit(&b.scheduler_last, sched.w - 24.0, 12.0)) }
                if let Some(ha) = &b.ha {
                    { text("sub", sched.x + 12.0, sched.y + 108.0, fit(&leader_line(&ha.scheduler_leader, ha.api_servers.len()), sched.w - 24.0, 12.0)) }
                }
                { text("sub muted", sched.x + 12.0, sched.y + 134.0, "watches pods without a node".into()) }
            </g>

            <g class="component controllers" data-component="kube-controller-manager">
                { boxed("cm", cm, 10.0, "kube-controller-manager") }
                { text("title", cm.x + 12.0, cm.y + 22.0, "kube-controller-manager".into()) }
                if let Some(ha) = &b.ha {
                    { text("sub", cm.x + 256.0, cm.y + 22.0, fit(&leader_line(&ha.manager_leader, ha.api_servers.len()), cm.w - 268.0, 12.0)) }
                } else {
                { text("sub muted", cm.x + 256.0, cm.y + 22.0, if l.lanes.is_empty() { "its controllers appear here as they act".to_string() } else if l.more_lanes > 0 { format!("and {} more controller(s)", l.more_lanes) } else { "a lane per controller that acted (click for its loop)".to_string() }) }
                }
                { for lanes }
            </g>
            <g class="nodes">{ for nodes }</g>
        </g>
    }
}

/// The board's layout, compared first by identity (the page keeps the same one until it
/// changes).
#[derive(Clone)]
struct SharedLayout(Rc<Layout>);

impl PartialEq for SharedLayout {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

#[derive(Properties, PartialEq)]
struct EdgesProps {
    layout: SharedLayout,
}

/// The connections a cluster really has: drawn again only when the layout changes (a big
/// cluster has hundreds).
#[function_component(MapEdges)]
fn map_edges(props: &EdgesProps) -> Html {
    let edges = props.layout.0.edges.iter().map(|e| {
        let local = e.to.starts_with("containerd/") || e.to.starts_with("pods/");
        html! {
            <path class={classes!("edge", local.then_some("local"))} data-from={e.from.clone()} data-to={e.to.clone()}
                d={e.path()} marker-end="url(#arrow)" />
        }
    });
    html! { <g class="edges">{ for edges }</g> }
}

#[derive(Properties, PartialEq)]
struct NodeProps {
    layout: geo::NodeLayout,
    /// The CNI agent's name, when nodes draw one.
    cni: Option<String>,
    view: geo::NodeView,
    on_pick: Callback<String>,
}

/// One node: drawn again only when it changes (most of a big cluster's nodes do not, from one
/// board to the next).
#[function_component(NodeMark)]
fn node_mark(props: &NodeProps) -> Html {
    node(&props.layout, &props.view, props.cni.as_deref(), &props.on_pick)
}

/// A tile's pods as dots: one path for each look, rather than an element for each pod.
fn dots(nl: &geo::NodeLayout, nv: &geo::NodeView) -> Html {
    let mut by_look: Vec<(&str, String)> = Vec::new();
    for (i, look) in nv.dots.iter().take(nl.pod_room).enumerate() {
        let (x, y) = nl.pod_at(i);
        let d = match by_look.iter_mut().find(|(class, _)| class == look) {
            Some((_, d)) => d,
            None => {
                by_look.push((look, String::new()));
                &mut by_look.last_mut().expect("just pushed").1
            }
        };
        // A circle of radius 3.6 as two arcs.
        d.push_str(&format!("M{} {}a3.6 3.6 0 1 0 7.2 0a3.6 3.6 0 1 0 -7.2 0", n(x - 3.6), n(y)));
    }
    by_look.into_iter().map(|(class, d)| html! { <path class={classes!("dots", class.to_string())} {d} /> }).collect()
}

fn node(nl: &geo::NodeLayout, nv: &geo::NodeView, cni: Option<&str>, on_pick: &Callback<String>) -> Html {
    let r = nl.rect;
    let status_class = if nv.ready { "ok" } else { "bad" };
    let part = |class: &'static str, rect: Rect, label: &str, component: String| {
        if nl.tile {
            // The tile's own title names the node; its parts carry no more text.
            html! {
                <rect class={classes!("part", class)} data-component={component} x={n(rect.x)} y={n(rect.y)} width={n(rect.w)} height={n(rect.h)} rx="2" />
            }
        } else {
            html! {
                <g class={classes!("part", class)} data-component={component}>
                    <rect x={n(rect.x)} y={n(rect.y)} width={n(rect.w)} height={n(rect.h)} rx="5" />
                    <text x={n(rect.cx())} y={n(rect.cy() + 4.5)}>{fit(label, rect.w - 6.0, 12.0)}</text>
                </g>
            }
        }
    };
    let shown = nv.pods.iter().take(nl.pod_room);
    let pods = shown.enumerate().map(|(i, p)| {
        let (x, y) = nl.pod_at(i);
        let target = format!("pod/{}", p.name);
        let onclick = {
            let (on_pick, target) = (on_pick.clone(), target.clone());
            Callback::from(move |_: MouseEvent| on_pick.emit(target.clone()))
        };
        let onkeydown = {
            let on_pick = on_pick.clone();
            Callback::from(move |e: KeyboardEvent| {
                if e.key() == "Enter" || e.key() == " " {
                    e.prevent_default();
                    on_pick.emit(target.clone());
                }
            })
        };
        let title = format!("{} {} {} restarts: {}", p.name, p.ready, p.status, p.restarts);
        let restarts = (p.restarts > 0).then(|| format!("↻{}", p.restarts));
        if nl.listed {
            html! {
                <g class={classes!("pod", p.class.clone())} data-pod={p.name.clone()} data-status={p.status.clone()} {onclick} {onkeydown}
                    tabindex="0" role="button" aria-label={format!("{title}; open it in the inspector")}>
                    <title>{title.clone()}</title>
                    <circle cx={n(x)} cy={n(y)} r="8" />
                    <text class="glyph" x={n(x)} y={n(y + 4.0)}>{p.glyph.to_string()}</text>
                    <text class="pod-name" x={n(x + 14.0)} y={n(y + 4.5)}>{fit(&p.name, nl.pods.w * 0.56, 12.0)}</text>
                    <text class="pod-status" x={n(nl.pods.right() - 2.0)} y={n(y + 4.5)}>
                        {format!("{}{}", fit(&p.status, nl.pods.w * 0.32, 11.0), restarts.map(|r| format!(" {r}")).unwrap_or_default())}
                    </text>
                </g>
            }
        } else {
            let radius = 8.0;
            html! {
                <g class={classes!("pod", p.class.clone())} data-pod={p.name.clone()} data-status={p.status.clone()} {onclick}>
                    <title>{title}</title>
                    <circle cx={n(x)} cy={n(y)} r={n(radius)} />
                    <text class="glyph" x={n(x)} y={n(y + 4.0)}>{p.glyph.to_string()}</text>
                </g>
            }
        }
    });
    let more = nv.pod_count.saturating_sub(nl.pod_room.min(nv.pods.len() + nv.dots.len()));
    let title = if nl.tile {
        fit(&nv.name, r.w - 12.0, 10.5)
    } else {
        format!(
            "{}  {}",
            nv.name,
            if nv.cut_off { format!("{} (kubelet cut off)", nv.status) } else { nv.status.clone() }
        )
    };
    html! {
        <g class={classes!("node", (!nv.ready).then_some("not-ready"), nl.tile.then_some("tile"))} data-node={nv.name.clone()}
            aria-label={format!("Node {}: {}, {} pods", nv.name, nv.status, nv.pod_count)}>
            <title>{format!("{}: {}, {} pods", nv.name, nv.status, nv.pod_count)}</title>
            <rect class="node-box" x={n(r.x)} y={n(r.y)} width={n(r.w)} height={n(r.h)} rx="10" />
            { part("proxy", nl.kube_proxy, "kube-proxy", format!("kube-proxy/{}", nv.name)) }
            { part("kubelet", nl.kubelet, "kubelet", format!("kubelet/{}", nv.name)) }
            { part("runtime", nl.runtime, "containerd", format!("containerd/{}", nv.name)) }
            if let (Some(bar), Some(agent)) = (nl.cni, cni) {
                { part("cni", bar, &geo::cni_label(agent), format!("cni/{}", nv.name)) }
            }
            <text class={classes!("node-title", status_class)} x={n(nl.title.0)} y={n(nl.title.1)}>{title}</text>
            if nv.pod_count == 0 && !nl.tile {
                <text class="sub muted" x={n(nl.pods.x)} y={n(nl.pods.y + 12.0)}>{"no pods"}</text>
            }
            { for pods }
            // Many nodes: a pod is a dot, nothing more (hundreds of them redraw often).
            { dots(nl, nv) }
            if more > 0 {
                <text class="more" x={n(r.right() - 8.0)} y={n(r.bottom() - 6.0)}>{format!("+{more}")}</text>
            }
        </g>
    }
}

#[derive(Properties, PartialEq)]
pub struct MapLegendProps {
    /// etcd is a Raft group (several members): its messages' token is explained.
    #[prop_or_default]
    pub raft: bool,
    /// An admission webhook is configured: its call's token is explained.
    #[prop_or_default]
    pub webhooks: bool,
}

/// The legend: each pod look in words, and what the tokens mean (Raft's and a webhook's only
/// when the map can draw them).
#[function_component(MapLegend)]
pub fn map_legend(props: &MapLegendProps) -> Html {
    html! {
        <ul class="map-legend" aria-label="Legend">
            { for geo::LEGEND.iter().map(|(class, glyph, words)| html! {
                <li><span class={classes!("legend-pod", *class)} aria-hidden="true">{*glyph}</span>{*words}</li>
            }) }
            <li><span class="legend-token request" aria-hidden="true"></span>{"request"}</li>
            <li><span class="legend-token watch" aria-hidden="true"></span>{"watch notification"}</li>
            <li><span class="legend-token runtime" aria-hidden="true"></span>{"kubelet → containerd"}</li>
            if props.webhooks {
                <li><span class="legend-token webhook" aria-hidden="true"></span>{"admission webhook call"}</li>
            }
            if props.raft {
                <li><span class="legend-token raft" aria-hidden="true"></span>{"etcd member → member (Raft)"}</li>
            }
        </ul>
    }
}
