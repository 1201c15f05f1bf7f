//! The chain, animated on the page: the flow's messages (`crate::flow`) drawn over the
//! sandbox, each moved along its route — sender → the API server's stages → receiver — by a CSS
//! transform, one animation frame at a time. With reduced motion they wait at their receiver.

use super::clock::now_ms;
use crate::flow::{Flow, Message, Pace, Place};
use crate::shell::Session;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use yew::prelude::*;

/// The page's session, compared by identity (it is one for the page's life).
#[derive(Clone)]
pub struct Shared(pub Rc<RefCell<Session>>);

impl PartialEq for Shared {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Properties, PartialEq)]
pub struct FlowProps {
    pub session: Shared,
    /// The record's last entry: when it moves (a step, a command), a frame is drawn at once.
    pub seq: u64,
    pub speed: f64,
    /// Presenter mode: slow motion.
    pub slow_motion: bool,
    /// A record entry whose message to send now, alone (the followed step of a chain).
    #[prop_or_default]
    pub spotlight: Option<u64>,
}

/// A point on the layer, in CSS pixels from its top left corner.
type Point = (f64, f64);

struct State {
    flow: Flow,
    /// Each message's route, measured when it first shows.
    routes: Vec<(u64, Vec<Point>)>,
    /// What the screen reader hears: the latest message, at most every few seconds.
    summary: String,
    summarized: u64,
    summary_at: f64,
    reduced: bool,
}

/// Real milliseconds between two spoken summaries.
const SUMMARY_MS: f64 = 4000.0;

fn reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-reduced-motion: reduce)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// The messages travelling over the page.
#[function_component(FlowLayer)]
pub fn flow_layer(props: &FlowProps) -> Html {
    let layer = use_node_ref();
    let state = {
        let session = props.session.0.clone();
        use_mut_ref(move || State {
            flow: Flow::new(session.try_borrow().map_or(0, |s| s.cluster.record.last_seq())),
            routes: Vec::new(),
            summary: String::new(),
            summarized: 0,
            summary_at: f64::NEG_INFINITY,
            reduced: reduced_motion(),
        })
    };
    let redraw = use_force_update();
    // Following a chain: each step the student moves to sends its message again.
    {
        let (state, session) = (state.clone(), props.session.0.clone());
        use_effect_with(props.spotlight, move |spot| {
            if let (Some(seq), Ok(s)) = (*spot, session.try_borrow()) {
                state.borrow_mut().flow.spotlight(&s.cluster, seq, now_ms());
            }
        });
    }
    // The animation loop: a frame is drawn while messages travel or the record moved.
    {
        let (state, session, redraw) = (state.clone(), props.session.0.clone(), redraw.clone());
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
            *slot.borrow_mut() = Some(Closure::new(move |_: f64| {
                let moved = match (state.try_borrow(), session.try_borrow()) {
                    (Ok(st), Ok(s)) => !st.flow.idle() || s.cluster.record.last_seq() != st.flow.cursor(),
                    _ => false,
                };
                if moved {
                    redraw.force_update();
                }
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

    let now = now_ms();
    let mut st = state.borrow_mut();
    let st = &mut *st;
    if let Ok(s) = props.session.0.try_borrow() {
        st.flow.frame(&s.cluster, now, Pace::new(props.speed, props.slow_motion));
    }
    let messages = st.flow.messages();
    st.routes.retain(|(id, _)| messages.iter().any(|m| m.id == *id));
    if let Some(origin) = layer.cast::<web_sys::Element>().map(|e| e.get_bounding_client_rect()) {
        for m in messages {
            if !st.routes.iter().any(|(id, _)| *id == m.id) {
                st.routes.push((m.id, route(m, (origin.left(), origin.top()))));
            }
        }
    }
    if let Some(newest) = messages.iter().max_by_key(|m| m.id) {
        if newest.id > st.summarized && now - st.summary_at >= SUMMARY_MS {
            st.summary = newest.describe();
            st.summarized = newest.id;
            st.summary_at = now;
        }
    }
    let reduced = st.reduced;
    let dots = messages.iter().filter_map(|m| {
        let points = &st.routes.iter().find(|(id, _)| *id == m.id)?.1;
        let (x, y) = along(points, if reduced { 1.0 } else { m.progress })?;
        let class = classes!(
            "message",
            if m.stages > 0 { "request" } else { "watch" },
            m.refused.then_some("refused"),
            (m.count > 1).then_some("bundle"),
        );
        Some(html! {
            <div {class} key={m.id} data-from={m.from.name()} data-to={m.to.name()}
                style={format!("transform:translate({x:.1}px,{y:.1}px) translate(-50%,-50%)")}>{&m.label}</div>
        })
    });
    html! {
        <div id="flow" class="flow" ref={layer}>
            <p id="flow-summary" class="sr-only" aria-live="polite">{&st.summary}</p>
            <div aria-hidden="true">{ for dots }</div>
        </div>
    }
}

/// Where a place is drawn: the selector of its box, then a fallback.
fn selectors(place: &Place) -> (String, &'static str) {
    match place {
        Place::Kubectl => ("#terminal".into(), "#apply"),
        Place::ApiServer => ("#control-plane .component.api".into(), "#control-plane"),
        Place::Etcd => ("#etcd-revision".into(), "#control-plane .component.etcd"),
        Place::Scheduler => ("#control-plane .component.scheduler h3".into(), "#control-plane"),
        Place::Controller(name) => {
            (format!("#control-plane .lane[data-controller=\"{name}\"]"), "#control-plane .component.controllers h3")
        }
        Place::Kubelet(node) | Place::KubeProxy(node) => {
            (format!("#nodes section[data-node=\"{node}\"] header"), "#nodes")
        }
        Place::Nodes => ("#nodes".into(), "#cluster-title"),
    }
}

/// The centre of the first element a selector finds, relative to `origin`.
fn centre(selector: &str, origin: Point) -> Option<Point> {
    let element = web_sys::window()?.document()?.query_selector(selector).ok()??;
    let r = element.get_bounding_client_rect();
    (r.width() > 0.0 || r.height() > 0.0)
        .then(|| (r.left() + r.width() / 2.0 - origin.0, r.top() + r.height() / 2.0 - origin.1))
}

fn locate(place: &Place, origin: Point) -> Option<Point> {
    let (first, fallback) = selectors(place);
    centre(&first, origin).or_else(|| centre(fallback, origin))
}

/// The points a message passes: its sender, the pipeline stages it goes through, its receiver.
fn route(m: &Message, origin: Point) -> Vec<Point> {
    let mut points = Vec::with_capacity(usize::from(m.stages) + 2);
    points.extend(locate(&m.from, origin));
    for i in 1..=m.stages {
        points.extend(centre(&format!("#control-plane .pipeline li:nth-child({i})"), origin));
    }
    if !(m.refused && m.to == Place::ApiServer && m.stages > 0) {
        points.extend(locate(&m.to, origin));
    }
    points
}

/// The point `progress` (0..1) of the way along a path, by length.
fn along(points: &[Point], progress: f64) -> Option<Point> {
    let first = *points.first()?;
    let length: f64 = points.windows(2).map(|w| dist(w[0], w[1])).sum();
    let mut left = length * progress.clamp(0.0, 1.0);
    for w in points.windows(2) {
        let d = dist(w[0], w[1]);
        if d > 0.0 && left <= d {
            let t = left / d;
            return Some((w[0].0 + (w[1].0 - w[0].0) * t, w[0].1 + (w[1].1 - w[0].1) * t));
        }
        left -= d;
    }
    points.last().copied().or(Some(first))
}

fn dist(a: Point, b: Point) -> f64 {
    ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt()
}
