//! `?porttest`: the port alone, without the page, for tests/e2e/worker.mjs (and the console).
//! `?porttest` asks for the worker, `?porttest=thread` for this thread. It sets
//! `window.kubeloopPort.ask(id, requestJson)` (returns a summary, or null when the worker will
//! answer) and `.state()`; the worker's answers are summarised into `window.kubeloopPortReplies`,
//! failures into `window.kubeloopPortFailures`. In the worker it asks request 0 (`Frame`) at once.

use super::{Costs, Port};
use crate::page::sim::{SimReply, SimRequest};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// Starts the probe when the address asks for it; true then (the page itself does not start).
pub fn start_if_asked() -> bool {
    let Some(window) = web_sys::window() else { return false };
    let search = window.location().search().unwrap_or_default();
    let Some(mode) = search.trim_start_matches('?').split('&').find_map(|p| p.strip_prefix("porttest")) else {
        return false;
    };
    super::super::clock::mark("kubeloop-start");
    let replies = js_sys::Array::new();
    let failures = js_sys::Array::new();
    let _ = js_sys::Reflect::set(&window, &"kubeloopPortReplies".into(), &replies);
    let _ = js_sys::Reflect::set(&window, &"kubeloopPortFailures".into(), &failures);
    let shared: Rc<RefCell<Option<Port>>> = Rc::default();
    let on_reply: Rc<dyn Fn(u64, SimReply)> = {
        let shared = shared.clone();
        Rc::new(move |id, reply| {
            let costs = shared.borrow().as_ref().and_then(Port::last_costs);
            replies.push(&JsValue::from_str(&summary(id, &reply, costs)));
        })
    };
    let on_failure: Rc<dyn Fn(String)> = Rc::new(move |why| {
        failures.push(&JsValue::from_str(&why));
    });
    let port = Port::start(mode != "=thread", on_reply, on_failure);
    *shared.borrow_mut() = Some(port.clone());
    // As the page will: a first request at once (its answer sets `kubeloop-worker-ready`).
    if port.in_worker() {
        port.ask(0, SimRequest::Frame);
    }
    let api = js_sys::Object::new();
    let ask = {
        let port = port.clone();
        Closure::<dyn Fn(f64, String) -> JsValue>::new(move |id: f64, json: String| {
            match serde_json::from_str::<SimRequest>(&json) {
                Ok(request) => match port.ask(id as u64, request) {
                    Some(reply) => JsValue::from_str(&summary(id as u64, &reply, None)),
                    None => JsValue::NULL,
                },
                Err(e) => JsValue::from_str(&format!("{{\"error\":{:?}}}", e.to_string())),
            }
        })
    };
    let state = Closure::<dyn Fn() -> JsValue>::new(move || {
        JsValue::from_str(&format!("{{\"in_worker\":{},\"in_flight\":{}}}", port.in_worker(), port.in_flight()))
    });
    let _ = js_sys::Reflect::set(&api, &"ask".into(), &ask.into_js_value());
    let _ = js_sys::Reflect::set(&api, &"state".into(), &state.into_js_value());
    let _ = js_sys::Reflect::set(&window, &"kubeloopPort".into(), &api);
    true
}

/// What a test needs of a reply: what the command printed, the cluster's size, the costs.
fn summary(id: u64, reply: &SimReply, costs: Option<Costs>) -> String {
    let output = reply.output.as_ref();
    let snapshot = &reply.frame.snapshot;
    serde_json::json!({
        "id": id,
        "stdout": output.map(|o| o.stdout.as_str()),
        "stderr": output.map(|o| o.stderr.as_str()),
        "code": output.map(|o| o.code),
        "pod_count": snapshot.pod_count,
        "nodes": snapshot.nodes.len(),
        "last_seq": reply.frame.last_seq,
        "board": reply.frame.board.is_some(),
        "costs": costs.map(|c| serde_json::json!({
            "answer_ms": c.answer_ms,
            "encode_ms": c.encode_ms,
            "decode_ms": c.decode_ms,
            "bytes": c.bytes,
        })),
    })
    .to_string()
}
