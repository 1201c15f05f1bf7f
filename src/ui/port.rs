//! The page's channel to the simulation: a Web Worker running this same wasm module (the page's
//! main thread stays free while the cluster works), or, when no worker can serve, a `Simulation`
//! in this thread. Requests and replies cross as JSON strings.

mod worker;

pub use worker::{in_worker, worker_answer};

use crate::page::sim::{SimReply, SimRequest, Simulation};
use gloo_timers::callback::Timeout;
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, Event, MessageEvent, Worker};
use worker::{Answer, Asked, thread_now};

/// The worker's script: loads the module it is sent, queues requests meanwhile, answers.
const WORKER_JS: &str = include_str!("port/worker.js");

/// How long the worker may take to load (the module instantiated, its glue run) before the page
/// gives up on it. Answers themselves have no deadline: a long replay is not a dead worker.
const LOAD_MS: u32 = 10_000;

#[wasm_bindgen]
extern "C" {
    /// The URL of this module's JS glue (`import.meta.url` read inside the glue itself): the
    /// worker imports the same file, wherever the page is served from.
    #[wasm_bindgen(thread_local_v2, js_namespace = ["import", "meta"], js_name = url)]
    static GLUE_URL: JsValue;
}

/// What answering one request in the worker cost: in the worker (simulating and framing, writing
/// the JSON) and in the page (reading it), and the JSON's length.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Costs {
    pub answer_ms: f64,
    pub encode_ms: f64,
    pub decode_ms: f64,
    pub bytes: usize,
}

/// Where the page's requests go: a Web Worker running this same wasm module, or (fallback) a
/// Simulation in this thread.
#[derive(Clone)]
pub struct Port {
    inner: Rc<RefCell<Inner>>,
}

struct Inner {
    /// The worker while it serves; None: this thread answers.
    worker: Option<Live>,
    /// This thread's simulation (made on its first request).
    local: Option<Simulation>,
    in_flight: usize,
    on_reply: Rc<dyn Fn(u64, SimReply)>,
    on_failure: Rc<dyn Fn(String)>,
    last_costs: Option<Costs>,
}

/// A running worker and what listens to it.
struct Live {
    worker: Worker,
    script_url: String,
    answered: bool,
    /// Gives up on a worker that has not loaded in time.
    deadline: Option<Timeout>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(Event)>,
    /// Asks the worker to keep its memory (the session as it stands) when the page is hidden:
    /// the next visit restores it rather than replaying the whole journal (`worker.js`).
    on_hidden: Option<Closure<dyn FnMut(Event)>>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.set_onmessageerror(None);
        self.worker.terminate();
        let _ = web_sys::Url::revoke_object_url(&self.script_url);
        if let (Some(on_hidden), Some(document)) = (&self.on_hidden, web_sys::window().and_then(|w| w.document())) {
            for event in HIDDEN_EVENTS {
                let _ = document.remove_event_listener_with_callback(event, on_hidden.as_ref().unchecked_ref());
            }
        }
    }
}

/// When the page may be going away: hidden (another tab, the window closed on some browsers)
/// or unloading.
const HIDDEN_EVENTS: [&str; 2] = ["visibilitychange", "pagehide"];

/// Listens for the page going out of sight and asks `worker` to keep its memory then.
fn on_hidden(worker: &Worker) -> Option<Closure<dyn FnMut(Event)>> {
    let document = web_sys::window()?.document()?;
    let worker = worker.clone();
    let page = document.clone();
    let listener = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
        let state = js_sys::Reflect::get(&page, &"visibilityState".into()).ok().and_then(|v| v.as_string());
        let hidden = state.as_deref() == Some("hidden");
        if hidden || event.type_() == "pagehide" {
            let ask = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&ask, &"image".into(), &"save".into());
            let _ = worker.post_message(&ask);
        }
    });
    for event in HIDDEN_EVENTS {
        document.add_event_listener_with_callback(event, listener.as_ref().unchecked_ref()).ok()?;
    }
    Some(listener)
}

impl Port {
    /// Starts a worker when it can (module workers supported, the module's JS glue URL known,
    /// `allow_worker`), else answers in this thread. `on_reply(id, reply)` gets the worker's
    /// replies, in the order sent. `on_failure(message)` is called if the worker dies (a
    /// trap/panic inside it, or it cannot load): from then on the port answers in-thread. The
    /// requests then in flight are never answered. Neither callback is called during `ask`.
    pub fn start(allow_worker: bool, on_reply: Rc<dyn Fn(u64, SimReply)>, on_failure: Rc<dyn Fn(String)>) -> Port {
        let inner = Rc::new(RefCell::new(Inner {
            worker: None,
            local: None,
            in_flight: 0,
            on_reply,
            on_failure,
            last_costs: None,
        }));
        let early = take_early_worker();
        if allow_worker {
            match spawn(Rc::downgrade(&inner), early) {
                Ok((live, heard_before)) => {
                    inner.borrow_mut().worker = Some(live);
                    // What the worker index.html started said before the app listened.
                    let weak = Rc::downgrade(&inner);
                    for data in heard_before {
                        heard(&weak, data);
                    }
                }
                Err(why) => log(&format!("kubeloop: the simulation runs in the page ({why})")),
            }
        } else if let Some(early) = early {
            early.worker.terminate();
            let _ = web_sys::Url::revoke_object_url(&early.url);
        }
        let port = Port { inner };
        show(port.in_worker());
        port
    }

    /// Sends request `id`. In this thread: answered at once, returned as Some(reply) (on_reply
    /// is NOT called). In the worker: None now; on_reply(id, reply) later (or, should the worker
    /// fail first, never: on_failure is called instead).
    pub fn ask(&self, id: u64, request: SimRequest) -> Option<SimReply> {
        let mut inner = self.inner.borrow_mut();
        if let Some(live) = &inner.worker {
            let sent = serde_json::to_string(&Asked { id, request: &request })
                .map_err(|e| format!("the page could not write a request: {e}"))
                .and_then(|json| live.worker.post_message(&JsValue::from_str(&json)).map_err(|e| describe(&e)));
            match sent {
                Ok(()) => {
                    inner.in_flight += 1;
                    return None;
                }
                Err(why) => {
                    // This thread answers from now on; the page hears of it once this call is over.
                    if let Some(on_failure) = retire(&mut inner, &why) {
                        let _ = Timeout::new(0, move || on_failure(why)).forget();
                    }
                    return None;
                }
            }
        }
        let local = inner.local.get_or_insert_with(|| {
            let mut s = Simulation::new(1);
            s.set_real_clock(thread_now, crate::page::sim::simulation::THREAD_BUDGET_MS);
            s
        });
        Some(local.answer(request))
    }

    pub fn in_worker(&self) -> bool {
        self.inner.borrow().worker.is_some()
    }

    /// Requests sent to the worker not yet answered.
    pub fn in_flight(&self) -> usize {
        self.inner.borrow().in_flight
    }

    /// What the worker's last answer cost (None before the first, and in this thread).
    pub fn last_costs(&self) -> Option<Costs> {
        self.inner.borrow().last_costs
    }
}

/// Tells the tests where the simulation runs: `<html data-sim="worker|thread">`.
fn show(in_worker: bool) {
    if let Some(root) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element()) {
        let _ = root.set_attribute("data-sim", if in_worker { "worker" } else { "thread" });
    }
}

/// A worker index.html started before the app (its script, its Blob URL, and what it said
/// meanwhile).
struct Early {
    worker: Worker,
    url: String,
    heard: Vec<JsValue>,
}

/// Takes the worker index.html started, if it did (`window.kubeloopEarlyWorker`).
fn take_early_worker() -> Option<Early> {
    let window = web_sys::window()?;
    let key = JsValue::from_str("kubeloopEarlyWorker");
    let early = js_sys::Reflect::get(&window, &key).ok().filter(|e| e.is_object())?;
    let _ = js_sys::Reflect::delete_property(&window, &key);
    let field = |name: &str| js_sys::Reflect::get(&early, &name.into()).ok();
    let worker = field("worker")?.dyn_into::<Worker>().ok()?;
    let url = field("url").and_then(|u| u.as_string()).unwrap_or_default();
    let heard = field("heard").map(|h| js_sys::Array::from(&h).iter().collect()).unwrap_or_default();
    Some(Early { worker, url, heard })
}

/// Starts the worker (or adopts the one index.html started) and sends it the module; why not,
/// when it cannot. Also what an adopted worker said before now.
fn spawn(port: Weak<RefCell<Inner>>, early: Option<Early>) -> Result<(Live, Vec<JsValue>), String> {
    let glue = GLUE_URL.with(JsValue::as_string).filter(|url| !url.is_empty()).ok_or("no module URL")?;
    if let Some(early) = early {
        let heard_before = early.heard.clone();
        return listen(port, early.worker, early.url, &glue).map(|live| (live, heard_before));
    }
    let window = web_sys::window().ok_or("no window")?;
    if js_sys::Reflect::get(&window, &"Worker".into()).map_or(true, |w| w.is_undefined()) {
        return Err("no Web Workers".into());
    }
    let script_url = script_url()?;
    // A browser without module workers never reads the options' `type`: asking it tells.
    let reads_type = Rc::new(Cell::new(false));
    let options = js_sys::Object::new();
    let getter = {
        let reads_type = reads_type.clone();
        Closure::<dyn FnMut() -> JsValue>::new(move || {
            reads_type.set(true);
            JsValue::from_str("module")
        })
    };
    let descriptor = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&descriptor, &"get".into(), getter.as_ref());
    js_sys::Object::define_property(&options, &"type".into(), &descriptor);
    let worker = Worker::new_with_options(&script_url, options.unchecked_ref()).map_err(|e| describe(&e));
    drop(getter);
    let worker = match worker {
        Ok(worker) if reads_type.get() => worker,
        Ok(worker) => {
            worker.terminate();
            let _ = web_sys::Url::revoke_object_url(&script_url);
            return Err("no module workers".into());
        }
        Err(why) => {
            let _ = web_sys::Url::revoke_object_url(&script_url);
            return Err(why);
        }
    };
    listen(port, worker, script_url, &glue).map(|live| (live, Vec::new()))
}

/// Listens to a started worker and sends it the module and its glue's URL (a worker that has
/// them already ignores them).
fn listen(port: Weak<RefCell<Inner>>, worker: Worker, script_url: String, glue: &str) -> Result<Live, String> {
    let on_message = {
        let port = port.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| heard(&port, event.data()))
    };
    let on_error = {
        let port = port.clone();
        Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            event.prevent_default();
            let why = match event.dyn_ref::<ErrorEvent>() {
                Some(error) if !error.message().is_empty() => format!("the worker failed: {}", error.message()),
                _ if event.type_() == "messageerror" => "the worker's reply could not be read".to_string(),
                _ => "the worker failed".to_string(),
            };
            fail(&port, why);
        })
    };
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    worker.set_onmessageerror(Some(on_error.as_ref().unchecked_ref()));
    let start = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&start, &"module".into(), &wasm_bindgen::module());
    let _ = js_sys::Reflect::set(&start, &"glue".into(), &JsValue::from_str(glue));
    let on_hidden = on_hidden(&worker);
    let mut live = Live {
        worker,
        script_url,
        answered: false,
        deadline: None,
        _on_message: on_message,
        _on_error: on_error,
        on_hidden,
    };
    live.worker.post_message(&start).map_err(|e| describe(&e))?;
    live.deadline = Some(Timeout::new(LOAD_MS, move || {
        fail(&port, format!("the worker did not load within {} s", LOAD_MS / 1000));
    }));
    Ok(live)
}

/// The worker's script as a Blob URL (no file of its own to find beside the page).
fn script_url() -> Result<String, String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(WORKER_JS));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).map_err(|e| describe(&e))?;
    web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| describe(&e))
}

/// A message from the worker: an answer, handed to `on_reply` once the port is no longer
/// borrowed (it may ask again at once); that it has loaded; or a failure.
fn heard(port: &Weak<RefCell<Inner>>, data: JsValue) {
    let Some(inner) = port.upgrade() else { return };
    let started = thread_now();
    let Some(json) = data.as_string() else {
        let field = |name: &str| js_sys::Reflect::get(&data, &name.into()).ok();
        if let Some(kept) = field("imaged").filter(|k| !k.is_undefined()) {
            // The worker kept its memory (or says why not): nothing to do but say so.
            let said = kept.as_string().unwrap_or_default();
            web_sys::console::log_1(&JsValue::from_str(&format!("kubeloop: the worker's memory: {said}")));
            return;
        }
        // How its download of the module went: index.html's business (the app runs by then).
        if field("progress").is_some_and(|p| !p.is_undefined()) || field("compiled").is_some_and(|c| !c.is_undefined())
        {
            return;
        }
        if field("loaded").is_some_and(|l| l.is_truthy()) {
            if let Some(live) = inner.borrow_mut().worker.as_mut() {
                live.deadline = None;
                super::clock::mark("kubeloop-worker-loaded");
            }
            return;
        }
        let why = field("failed").and_then(|f| f.as_string());
        fail(port, format!("the worker failed: {}", why.unwrap_or_else(|| "an unreadable message".into())));
        return;
    };
    let answer = match serde_json::from_str::<Answer>(&json) {
        Ok(answer) => answer,
        Err(e) => return fail(port, format!("the page could not read the worker's reply: {e}")),
    };
    let decode_ms = thread_now() - started;
    let Some(reply) = answer.reply else {
        return fail(port, answer.failed.unwrap_or_else(|| "the worker sent no reply".into()));
    };
    let on_reply = {
        let mut inner = inner.borrow_mut();
        let Some(live) = inner.worker.as_mut() else { return };
        if !live.answered {
            live.answered = true;
            super::clock::mark("kubeloop-worker-ready");
        }
        inner.in_flight = inner.in_flight.saturating_sub(1);
        inner.last_costs =
            Some(Costs { answer_ms: answer.answer_ms, encode_ms: answer.encode_ms, decode_ms, bytes: json.len() });
        inner.on_reply.clone()
    };
    on_reply(answer.id, reply);
}

/// Gives up on the worker: this thread answers from now on, and the page is told.
fn fail(port: &Weak<RefCell<Inner>>, why: String) {
    let Some(inner) = port.upgrade() else { return };
    let Ok(mut borrowed) = inner.try_borrow_mut() else {
        // Called while the port is in use: try again once it is not.
        return fail_later(port.clone(), why);
    };
    let on_failure = retire(&mut borrowed, &why);
    drop(borrowed);
    if let Some(on_failure) = on_failure {
        on_failure(why);
    }
}

/// Stops the worker (its requests in flight are lost); what to tell, unless it was stopped already.
fn retire(inner: &mut Inner, why: &str) -> Option<Rc<dyn Fn(String)>> {
    let live = inner.worker.take()?;
    inner.in_flight = 0;
    live.worker.terminate();
    // The worker's listeners may be running this very call: let them go after it.
    let _ = Timeout::new(0, move || drop(live)).forget();
    log(&format!("kubeloop: the simulation runs in the page from now on ({why})"));
    show(false);
    Some(inner.on_failure.clone())
}

/// `fail`, once the current call is over.
fn fail_later(port: Weak<RefCell<Inner>>, why: String) {
    let _ = Timeout::new(0, move || fail(&port, why)).forget();
}

fn describe(error: &JsValue) -> String {
    error
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "an error".into())
}

fn log(message: &str) {
    web_sys::console::warn_1(&JsValue::from_str(message));
}
