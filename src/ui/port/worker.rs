//! The worker's side of the port: the same wasm module, started by `worker.js` in a Web Worker,
//! keeps its own `Simulation` and answers each request `{id, request}` with `{id, reply}` (JSON).

use crate::page::sim::{SimReply, SimRequest, Simulation};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

thread_local! {
    /// The worker's simulation, made on the first request.
    static SIMULATION: RefCell<Option<Simulation>> = const { RefCell::new(None) };
}

/// A request as the page posts it.
#[derive(Serialize, Deserialize)]
pub(super) struct Asked<R> {
    pub id: u64,
    pub request: R,
}

/// An answer as the worker posts it back: the reply, or why there is none (the port then
/// gives up on the worker), and what answering cost in the worker.
#[derive(Deserialize)]
pub(super) struct Answer {
    pub id: u64,
    #[serde(default)]
    pub reply: Option<SimReply>,
    #[serde(default)]
    pub failed: Option<String>,
    /// Real milliseconds the simulation took to answer (frame included)…
    #[serde(default)]
    pub answer_ms: f64,
    /// …and to write its reply as JSON.
    #[serde(default)]
    pub encode_ms: f64,
}

/// True in a worker (no window): the module's `main` then leaves the page alone.
pub fn in_worker() -> bool {
    web_sys::window().is_none()
}

/// This thread's clock in real milliseconds: the window's `performance.now()`, or the worker's.
pub(super) fn thread_now() -> f64 {
    let performance = match web_sys::window() {
        Some(window) => window.performance(),
        None => js_sys::global().dyn_into::<web_sys::WorkerGlobalScope>().ok().and_then(|w| w.performance()),
    };
    performance.map_or(0.0, |p| p.now())
}

/// Answers one request, `{"id":…,"request":…}`, with
/// `{"id":…,"answer_ms":…,"encode_ms":…,"memory_bytes":…,"reply":…}`
/// (or `{"id":…,"failed":…}` when the request cannot be read or the reply written).
#[wasm_bindgen]
pub fn worker_answer(json: &str) -> String {
    let asked: Asked<SimRequest> = match serde_json::from_str(json) {
        Ok(asked) => asked,
        Err(e) => return failed(id_of(json), &format!("the worker could not read a request: {e}")),
    };
    let start = thread_now();
    let reply = SIMULATION.with(|cell| {
        let mut simulation = cell.borrow_mut();
        simulation.get_or_insert_with(booted).answer(asked.request)
    });
    let answered = thread_now();
    match serde_json::to_string(&reply) {
        Ok(reply) => {
            let encode_ms = thread_now() - answered;
            format!(
                r#"{{"id":{},"answer_ms":{},"encode_ms":{},"memory_bytes":{},"reply":{reply}}}"#,
                asked.id,
                finite(answered - start),
                finite(encode_ms),
                memory_bytes()
            )
        }
        Err(e) => failed(asked.id, &format!("the worker could not write a reply: {e}")),
    }
}

/// The worker's simulation as it starts: a fresh playground cluster, booted.
fn booted() -> Simulation {
    let mut s = Simulation::new(1);
    s.set_real_clock(thread_now, crate::page::sim::simulation::WORKER_BUDGET_MS);
    s
}

/// Boots the worker's simulation before anything is asked of it, as its first request would.
/// `scripts/boot-image.mjs` calls this at build time and ships the memory it leaves, the boot
/// image: a first visit's worker puts that back instead of booting (`worker.js`).
#[wasm_bindgen]
pub fn worker_boot() {
    SIMULATION.with(|cell| {
        if let Ok(mut simulation) = cell.try_borrow_mut() {
            simulation.get_or_insert_with(booted);
        }
    });
}

fn failed(id: u64, why: &str) -> String {
    let why = serde_json::to_string(why).unwrap_or_else(|_| "\"the worker failed\"".into());
    format!(r#"{{"id":{id},"failed":{why}}}"#)
}

/// The request's id, read loosely (for the answer to a request that cannot be read).
fn id_of(json: &str) -> u64 {
    #[derive(Deserialize)]
    struct Id {
        id: u64,
    }
    serde_json::from_str::<Id>(json).map_or(0, |i| i.id)
}

/// The size of the worker's wasm memory (it only grows: what a long session's simulation
/// has needed at most), for the end-to-end tests.
fn memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map_or(0.0, |m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().map_or(0.0, |b| b.byte_length() as f64))
}

/// A number JSON can carry.
fn finite(ms: f64) -> f64 {
    if ms.is_finite() { ms } else { 0.0 }
}

/// Whether the worker's memory is worth keeping now (`worker.js` saves it when the page is
/// hidden): a session is there, and not half-way through replaying a journal.
#[wasm_bindgen]
pub fn worker_keepable() -> bool {
    SIMULATION.with(|cell| cell.try_borrow().is_ok_and(|s| s.as_ref().is_some_and(Simulation::keepable)))
}

/// Called once `worker.js` has put back the memory a previous visit kept: the session in it
/// stays, but what it had sent belonged to that visit's page; this one starts afresh. Its
/// first `Load` then goes on from the session when the journal it brings continues it, or
/// replays that journal as usual.
#[wasm_bindgen]
pub fn worker_restored() {
    SIMULATION.with(|cell| {
        if let Ok(mut simulation) = cell.try_borrow_mut() {
            if let Some(simulation) = simulation.as_mut() {
                simulation.restored();
            }
        }
    });
}
