//! Events kept in an etcd of their own, as large clusters run kube-apiserver
//! (`--etcd-servers-overrides=/events#…`), so the cluster's busiest stream of writes does not
//! share a store with everything else; and the components' event sinks writing there without
//! waiting for the reply, as upstream's broadcasters do. Each component correlates its own
//! events (its recorder, in the client library); what arrives here are plain writes of Events.
//! Where the platform has threads, no record is kept and nothing watches Events, those writes
//! are made on a thread of their own, and any request that reads Events waits until every write
//! sent before it is stored.

use super::{ApiServer, Body, Env, Reply, Request, StageResult};
use crate::api::{Event, Object};
use crate::etcd::Etcd;
use crate::record::{ComponentId, Record, Seq};
use crate::sim::{Rng, Time};
#[cfg(not(target_arch = "wasm32"))]
use std::sync::mpsc;

/// How many writes go to the events thread at once.
const BATCH: usize = 256;

/// What a component's event sink sends: a first report's Event to create, or a repeat's to
/// update — and, if it is not stored (its first report was dropped, or it expired), to create
/// as it stands (client-go's `recordToSink`).
#[derive(Clone, Debug)]
pub enum EventWrite {
    Create(Event),
    UpdateElseCreate(Event),
}

impl EventWrite {
    /// The Event written.
    pub fn event(&self) -> &Event {
        match self {
            EventWrite::Create(e) | EventWrite::UpdateElseCreate(e) => e,
        }
    }

    /// Sends the write's requests through `call`: the create, or the update and, if it fails,
    /// the create.
    pub fn send<T, E>(self, mut call: impl FnMut(Request) -> Result<T, E>) -> Result<T, E> {
        match self {
            EventWrite::Create(event) => call(Request::create(Object::Event(event))),
            EventWrite::UpdateElseCreate(event) => call(Request::update(Object::Event(event.clone())))
                .or_else(|_| call(Request::create(Object::Event(event)))),
        }
    }
}

/// A write on its way to the events storage.
struct Written {
    actor: ComponentId,
    user: String,
    write: EventWrite,
    now: Time,
    /// Whether the Event's namespace exists: NamespaceLifecycle admission, judged where the
    /// namespaces are.
    namespace_exists: bool,
}

/// The events storage: an API server of its own over the events etcd.
pub(super) struct EventsSide {
    pub(super) api: ApiServer,
    /// Uids of the Events components write.
    rng: Rng,
    /// Its own writes are not the cluster's record.
    record: Record,
}

impl EventsSide {
    fn new(seed: u64) -> Self {
        EventsSide { api: ApiServer::new(), rng: Rng::stream(seed, "etcd-events"), record: Record::with_enabled(false) }
    }

    /// Stores one write: its status code, or where and why it was refused.
    fn take(&mut self, written: Written) -> StageResult<(u16, Reply)> {
        let Written { actor, user, write, now, namespace_exists } = written;
        let EventsSide { api, rng, record } = self;
        let mut env = Env { now, rng, record, actor, user: &user, cause: None, identity: None };
        write.send(|req| api.answer_with_namespace(namespace_exists, req, &mut env, 0))
    }
}

/// Where the events storage is: here, or on its thread with reports on their way.
pub struct EventsEtcd {
    side: Option<Box<EventsSide>>,
    /// Writes not yet sent to the thread.
    pending: Vec<Written>,
    worker: Option<Worker>,
    /// How many batches of writes went to the thread.
    batches: usize,
    seed: u64,
}

impl std::fmt::Debug for EventsEtcd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventsEtcd").field("here", &self.side.is_some()).field("pending", &self.pending.len()).finish()
    }
}

/// The thread the storage goes to, and how it comes back. The storage is either here or held
/// by the thread, never both and never neither.
#[cfg(not(target_arch = "wasm32"))]
struct Worker {
    to: mpsc::Sender<Message>,
    back: mpsc::Receiver<Option<Box<EventsSide>>>,
}

/// The page has no threads: no worker is ever made, and none of the code is compiled in.
#[cfg(target_arch = "wasm32")]
enum Worker {}

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
enum Message {
    /// The storage, to keep until asked for it back.
    Take(Box<EventsSide>),
    Writes(Vec<Written>),
    /// Send the storage back once everything before this is stored.
    Return,
}

impl EventsEtcd {
    pub(super) fn new(seed: u64) -> Self {
        EventsEtcd { side: Some(Box::new(EventsSide::new(seed))), pending: Vec::new(), worker: None, batches: 0, seed }
    }

    /// The storage, here, with every write sent so far stored.
    pub(super) fn here(&mut self) -> &mut EventsSide {
        if self.side.is_none() {
            self.call_back();
        }
        let seed = self.seed;
        let side = self.side.get_or_insert_with(|| Box::new(EventsSide::new(seed)));
        for written in self.pending.drain(..) {
            // Nobody waits for a deferred write's answer (a refused one is lost, as upstream's
            // sink drops what the server refuses).
            let _ = side.take(written);
        }
        side
    }

    /// The storage if it is here (not on its thread), as it stands.
    pub(super) fn if_here(&mut self) -> Option<&mut EventsSide> {
        self.side.as_deref_mut()
    }

    /// Takes a component's write: stored now (its answer), or sent to the thread with others
    /// when `may_defer` (no record is kept) and nothing watches Events (`None`).
    fn write(&mut self, written: Written, may_defer: bool) -> Option<StageResult<(u16, Reply)>> {
        let unwatched = self.side.as_ref().is_none_or(|side| !side.api.watches.any_open());
        if may_defer && THREADS && unwatched {
            self.pending.push(written);
            if self.pending.len() >= BATCH {
                self.send_away();
            }
            None
        } else {
            Some(self.here().take(written))
        }
    }

    /// Sends the storage (if here) and the pending writes to the thread, starting it the first
    /// time; stores them here if there is no thread to be had.
    fn send_away(&mut self) {
        if self.worker.is_none() {
            self.worker = Worker::start();
        }
        let Some(worker) = &self.worker else {
            self.here();
            return;
        };
        if let Some(side) = self.side.take() {
            if let Err(Message::Take(side)) = worker.send(Message::Take(side)) {
                self.side = Some(side);
                self.lost();
                self.here();
                return;
            }
        }
        let writes = std::mem::replace(&mut self.pending, Vec::with_capacity(BATCH));
        match worker.send(Message::Writes(writes)) {
            Ok(()) => self.batches += 1,
            Err(message) => {
                if let Message::Writes(writes) = message {
                    self.pending = writes;
                }
                self.lost();
            }
        }
    }

    /// Brings the storage back from its thread, with everything sent there stored.
    fn call_back(&mut self) {
        let Some(worker) = &self.worker else { return };
        let writes = std::mem::take(&mut self.pending);
        let _ = worker.send(Message::Writes(writes));
        match worker.call_back() {
            Some(side) => self.side = Some(side),
            None => self.lost(),
        }
    }

    /// The thread is gone (it cannot panic on a write, but if it did), and the storage it held
    /// with it: the storage starts afresh.
    fn lost(&mut self) {
        self.worker = None;
        if self.side.is_none() {
            self.side = Some(Box::new(EventsSide::new(self.seed)));
        }
    }
}

/// Whether the platform runs threads (the page does not).
const THREADS: bool = cfg!(not(target_arch = "wasm32"));

#[cfg(not(target_arch = "wasm32"))]
impl Worker {
    /// Sends a message, or hands it back if the thread is gone.
    fn send(&self, message: Message) -> Result<(), Message> {
        self.to.send(message).map_err(|mpsc::SendError(message)| message)
    }

    /// The storage, once the thread has stored everything sent before (`None` if it is gone).
    fn call_back(&self) -> Option<Box<EventsSide>> {
        self.to.send(Message::Return).ok()?;
        self.back.recv().ok().flatten()
    }

    fn start() -> Option<Worker> {
        let (to, inbox) = mpsc::channel::<Message>();
        let (reply, back) = mpsc::channel::<Option<Box<EventsSide>>>();
        std::thread::Builder::new()
            .name("etcd-events".into())
            .spawn(move || {
                crate::util::background::take(crate::util::background::Standing::EventsEtcd);
                let mut side: Option<Box<EventsSide>> = None;
                for message in inbox {
                    match message {
                        Message::Take(s) => side = Some(s),
                        Message::Writes(writes) => {
                            let Some(side) = side.as_mut() else { continue };
                            writes.into_iter().for_each(|w| {
                                let _ = side.take(w);
                            });
                        }
                        Message::Return => {
                            let _ = reply.send(side.take());
                        }
                    }
                }
            })
            .ok()?;
        Some(Worker { to, back })
    }
}

#[cfg(target_arch = "wasm32")]
impl Worker {
    fn send(&self, _: Message) -> Result<(), Message> {
        match *self {}
    }

    fn call_back(&self) -> Option<Box<EventsSide>> {
        match *self {}
    }

    fn start() -> Option<Worker> {
        None
    }
}

/// The namespace a request is about: its own, or its body's.
pub(super) fn namespace_of(req: &Request) -> &str {
    if !req.namespace.is_empty() {
        return &req.namespace;
    }
    match &req.body {
        Some(Body::Object(o)) => o.namespace(),
        Some(Body::Json(v)) => v["metadata"]["namespace"].as_str().unwrap_or_default(),
        Some(Body::Binding { .. }) | None => "",
    }
}

impl ApiServer {
    /// Keeps Events in an etcd of their own from now on (before any is stored).
    pub fn keep_events_apart(&mut self, seed: u64) {
        self.events = Some(std::cell::RefCell::new(EventsEtcd::new(seed)));
    }

    pub fn keeps_events_apart(&self) -> bool {
        self.events.is_some()
    }

    /// The events storage's answer to `req`, whose namespace the API server in front of it
    /// found to exist or not (the storage holds no namespaces for NamespaceLifecycle to look at).
    pub(super) fn answer_with_namespace(
        &mut self,
        namespace_exists: bool,
        req: Request,
        env: &mut Env,
        seq: Seq,
    ) -> StageResult<(u16, Reply)> {
        self.namespace_verdict = Some(namespace_exists);
        let answer = self.process(req, env, seq);
        self.namespace_verdict = None;
        answer
    }

    /// Whether `namespace` is stored (and so may hold new objects).
    pub fn namespace_exists(&self, namespace: &str) -> bool {
        self.etcd.get(&crate::etcd::lookup_key::LookupKey::etcd("namespaces", "", namespace)).is_some()
    }

    /// A component's event sink writing an Event to the events storage without waiting for the
    /// answer: kept in the record as the request it starts with (update or create), and stored
    /// at once where the cluster keeps a record or Events are watched, else on the events thread.
    /// Without an events storage the write's requests are handled as any other.
    pub fn send_event(&mut self, write: EventWrite, env: &mut Env) {
        if self.events.is_none() {
            let _ = write.send(|req| self.handle(req, env));
            return;
        }
        let what = if env.record.enabled {
            let first = match &write {
                EventWrite::Create(e) => Request::create(Object::Event(e.clone())),
                EventWrite::UpdateElseCreate(e) => Request::update(Object::Event(e.clone())),
            };
            Self::happening(&first, true)
        } else {
            crate::record::Happening::Decision { text: String::new() }
        };
        let seq = env.record.push(env.now, self.etcd.revision(), env.actor, env.cause, what);
        let namespace = &write.event().metadata.namespace;
        let namespace_exists = self.namespace_exists(namespace);
        let Some(events) = &mut self.events else { return };
        self.events_oldest_lease.get_or_insert(env.now);
        let written = Written { actor: env.actor, user: env.user.to_string(), write, now: env.now, namespace_exists };
        if let Some(answer) = events.get_mut().write(written, !env.record.enabled) {
            let revision = self.etcd.revision();
            Self::note_answer(env.record, seq, revision, &answer);
        }
    }

    /// `f` of the events etcd, with every event reported so far stored (`None` without one).
    pub fn with_events_etcd<R>(&self, f: impl FnOnce(&Etcd) -> R) -> Option<R> {
        let mut events = self.events.as_ref()?.borrow_mut();
        Some(f(events.here().api.etcd()))
    }

    /// How many batches of reported events went to the events thread.
    pub fn events_sent_away(&self) -> usize {
        self.events.as_ref().map_or(0, |e| e.borrow().batches)
    }

    /// Waits until every event reported so far is stored: how many Events there are, and the
    /// events etcd's revision (`None` without an events etcd).
    pub fn settle_events(&mut self) -> Option<(usize, u64)> {
        // Counted in no order: a range would first have the key index sort every Event's key.
        self.with_events_etcd(|etcd| (etcd.unordered("/registry/events/").count(), etcd.revision() as u64))
    }
}
