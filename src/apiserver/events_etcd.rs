//! Events kept in an etcd of their own, as large clusters run kube-apiserver
//! (`--etcd-servers-overrides=/events#…`), so the cluster's busiest stream of writes does not
//! share a store with everything else; and the components' event broadcasters writing there
//! without waiting for the reply, as upstream's do. Where the platform has threads, no record is
//! kept and nothing watches Events, those writes are made on a thread of their own, and any
//! request that reads Events waits until every event reported before it is stored.

use super::{ApiServer, Body, Env, Reply, Request, StageResult, Status, WatchId};
use crate::api::shared::Shared;
use crate::api::{EventSource, Object};
use crate::client::component::Ctx;
use crate::client::event_recorder::{EventRecorder, Report};
use crate::etcd::Etcd;
use crate::record::{ComponentId, Record, Seq};
use crate::sim::{Rng, Time};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::mpsc;

/// The watches of the events storage, as the API server numbers them: above all of its own.
pub const WATCH_IDS: WatchId = 1 << 30;
/// How many reports go to the events thread at once.
const BATCH: usize = 256;

/// An event a component reported, on its way to the events storage.
pub struct Reported {
    actor: ComponentId,
    /// Who reports, the first time it does.
    introduction: Option<Introduction>,
    involved: Arc<Object>,
    field_path: String,
    type_: &'static str,
    reason: Cow<'static, str>,
    message: String,
    now: Time,
    /// Whether the Event's namespace exists: NamespaceLifecycle admission, judged where the
    /// namespaces are.
    namespace_exists: bool,
}

/// A component, as its recorder in the events storage needs to know it.
struct Introduction {
    user: String,
    source: Shared<EventSource>,
    correlates: bool,
}

impl Reported {
    pub fn new(
        api: &ApiServer,
        ctx: &Ctx,
        involved: &Arc<Object>,
        field_path: &str,
        type_: &'static str,
        reason: Cow<'static, str>,
        message: String,
    ) -> Self {
        let introduction = (!api.knows_reporter(ctx.me)).then(|| Introduction {
            user: ctx.user.to_string(),
            source: ctx.recorder.source.clone(),
            correlates: ctx.recorder.correlates(),
        });
        let namespace = involved.namespace();
        let namespace = if namespace.is_empty() { "default" } else { namespace };
        Reported {
            actor: ctx.me,
            introduction,
            involved: involved.clone(),
            field_path: field_path.to_string(),
            type_,
            reason,
            message,
            now: ctx.now,
            namespace_exists: api.namespace_exists(namespace),
        }
    }
}

/// The events storage: an API server of its own over the events etcd, and each component's
/// event recorder (its correlator's state).
pub(super) struct EventsSide {
    pub(super) api: ApiServer,
    recorders: BTreeMap<ComponentId, (EventRecorder, String)>,
    /// Uids of the Events components report.
    rng: Rng,
    /// Its own writes are not the cluster's record.
    record: Record,
    /// The millisecond of the last report, and how many came before it in that millisecond:
    /// Event names sort in the order they were reported.
    order: (Time, u64),
}

impl EventsSide {
    fn new(seed: u64) -> Self {
        EventsSide {
            api: ApiServer::new(),
            recorders: BTreeMap::new(),
            rng: Rng::stream(seed, "etcd-events"),
            record: Record::with_enabled(false),
            order: (Time::ZERO, 0),
        }
    }

    /// Correlates one report with its component's recorder and stores what gets through.
    fn take(&mut self, reported: Reported) {
        let Reported { actor, introduction, involved, field_path, type_, reason, message, now, namespace_exists } =
            reported;
        let EventsSide { api, recorders, rng, record, order } = self;
        *order = if order.0 == now { (now, order.1 + 1) } else { (now, 0) };
        if let Some(Introduction { user, source, correlates }) = introduction {
            let recorder = EventRecorder::reporting_as(source);
            let recorder = if correlates { recorder } else { recorder.without_correlation() };
            recorders.entry(actor).or_insert((recorder, user));
        }
        let Some((recorder, user)) = recorders.get_mut(&actor) else { return };
        let report = Report { involved: &involved, field_path: &field_path, type_, reason: &reason, message };
        recorder.report(report, now, order.1, &mut |req| {
            let mut env = Env { now, rng, record, actor, user, cause: None, identity: None };
            let (_, reply) = api.answer_with_namespace(namespace_exists, req, &mut env, 0).map_err(|(_, s)| s)?;
            reply.object().ok_or_else(|| Status::bad_request("the API answered without an object"))
        });
    }
}

/// Where the events storage is: here, or on its thread with reports on their way.
pub struct EventsEtcd {
    side: Option<Box<EventsSide>>,
    /// Reports not yet sent to the thread.
    pending: Vec<Reported>,
    /// Components whose recorder the storage has.
    introduced: BTreeSet<ComponentId>,
    worker: Option<Worker>,
    /// How many batches of reports went to the thread.
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
    Reports(Vec<Reported>),
    /// Send the storage back once everything before this is stored.
    Return,
}

impl EventsEtcd {
    pub(super) fn new(seed: u64) -> Self {
        EventsEtcd {
            side: Some(Box::new(EventsSide::new(seed))),
            pending: Vec::new(),
            introduced: BTreeSet::new(),
            worker: None,
            batches: 0,
            seed,
        }
    }

    pub(super) fn knows(&self, actor: ComponentId) -> bool {
        self.introduced.contains(&actor)
    }

    /// The storage, here, with every report made so far stored.
    pub(super) fn here(&mut self) -> &mut EventsSide {
        if self.side.is_none() {
            self.call_back();
        }
        let seed = self.seed;
        let side = self.side.get_or_insert_with(|| Box::new(EventsSide::new(seed)));
        for reported in self.pending.drain(..) {
            side.take(reported);
        }
        side
    }

    /// The storage if it is here (not on its thread), as it stands.
    pub(super) fn if_here(&mut self) -> Option<&mut EventsSide> {
        self.side.as_deref_mut()
    }

    /// Takes a component's report: stored now, or sent to the thread with others when
    /// `may_defer` (no record is kept) and nothing watches Events.
    pub(super) fn report(&mut self, reported: Reported, may_defer: bool) {
        if reported.introduction.is_some() {
            self.introduced.insert(reported.actor);
        }
        let unwatched = self.side.as_ref().is_none_or(|side| !side.api.watches.any_open());
        if may_defer && THREADS && unwatched {
            self.pending.push(reported);
            if self.pending.len() >= BATCH {
                self.send_away();
            }
        } else {
            self.here().take(reported);
        }
    }

    /// Sends the storage (if here) and the pending reports to the thread, starting it the first
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
        let reports = std::mem::replace(&mut self.pending, Vec::with_capacity(BATCH));
        match worker.send(Message::Reports(reports)) {
            Ok(()) => self.batches += 1,
            Err(message) => {
                if let Message::Reports(reports) = message {
                    self.pending = reports;
                }
                self.lost();
            }
        }
    }

    /// Brings the storage back from its thread, with everything sent there stored.
    fn call_back(&mut self) {
        let Some(worker) = &self.worker else { return };
        let reports = std::mem::take(&mut self.pending);
        let _ = worker.send(Message::Reports(reports));
        match worker.call_back() {
            Some(side) => self.side = Some(side),
            None => self.lost(),
        }
    }

    /// The thread is gone (it cannot panic on a report, but if it did), and the storage it held
    /// with it: the storage starts afresh, and components introduce themselves again.
    fn lost(&mut self) {
        self.worker = None;
        if self.side.is_none() {
            self.side = Some(Box::new(EventsSide::new(self.seed)));
            self.introduced.clear();
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
                        Message::Reports(reports) => {
                            let Some(side) = side.as_mut() else { continue };
                            reports.into_iter().for_each(|r| side.take(r));
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

    fn knows_reporter(&self, actor: ComponentId) -> bool {
        self.events.as_ref().is_some_and(|e| e.borrow().knows(actor))
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

    /// Takes an event a component reported, for the events storage; `record` says whether the
    /// cluster keeps a record (its writes are then made at once).
    pub fn report_event(&mut self, reported: Reported, record: bool) {
        if let Some(events) = &mut self.events {
            self.events_oldest_lease.get_or_insert(reported.now);
            events.get_mut().report(reported, !record);
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
