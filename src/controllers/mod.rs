//! kube-controller-manager: independent, level-triggered control loops. Each controller
//! watches what it cares about through informers (whose caches the process shares, one per
//! kind), turns every change into a key in its work queue, and reconciles one key at a time:
//! it compares what is desired with what is, and acts only through the API server.

pub mod claim;
pub mod cronjob;
pub mod daemonset;
pub mod deployment;
pub mod disruption;
pub mod endpoints;
pub mod endpointslice;
pub mod expectations;
pub mod garbage_collector;
pub mod hpa;
pub mod indexed_job;
pub mod ingress_nginx;
pub mod job;
pub mod lane;
pub mod local_path;
pub mod metrics_server;
pub mod namespace;
pub mod node_lifecycle;
pub mod persistentvolume;
pub mod pods;
pub mod replica_set_status;
pub mod replicaset;
pub mod service_lb;
pub mod serviceaccount;
pub mod statefulset;
pub mod storage_protection;
pub mod taint_eviction;
pub mod website_operator;

use crate::api::Object;
use crate::client::component::{Component, Ctx, Delta, Informer};
use crate::client::shared_informer::{InformerFactory, Shared};
use crate::client::workqueue::WorkQueue;
use crate::record::ComponentId;
use crate::sim::{Duration, Time};
use std::any::Any;

/// What a controller's keys for a dependent object follow from, besides its namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeysFrom {
    /// Its owner references (the ReplicaSet, Job, ... that controls it).
    Owners,
    /// Its labels (the Services that select it).
    Labels,
}

/// The keys a change to a dependent object makes dirty: those of its new version and of its
/// old one (a pod that changed owner or labels touches both), each key once, in that order.
/// An old version with the same `from` has the same keys: they are not worked out twice (most
/// changes are status writes). (It is the same object, in the same namespace: an informer's
/// old version is what its cache held under the same key.)
pub fn keys_of_both(delta: &Delta, from: KeysFrom, keys_of: impl Fn(&Object) -> Vec<String>) -> Vec<String> {
    let mut keys = Vec::new();
    let add = |keys: &mut Vec<String>, o: &Object| {
        for key in keys_of(o) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    };
    add(&mut keys, &delta.object);
    if let Some(old) = delta.old.as_deref() {
        let (before, now) = (old.meta(), delta.object.meta());
        debug_assert_eq!(before.namespace, now.namespace, "a delta's versions are of one object");
        let same = match from {
            KeysFrom::Owners => before.owner_references == now.owner_references,
            KeysFrom::Labels => before.labels == now.labels,
        };
        if !same {
            add(&mut keys, old);
        }
    }
    keys
}

/// The key of the object's controller, when that controller is of kind `kind`.
pub fn owner_key(o: &Object, kind: &str) -> Vec<String> {
    o.controller_ref()
        .filter(|r| r.kind == kind)
        .map(|r| crate::client::component::cache_key(o.namespace(), &r.name))
        .into_iter()
        .collect()
}

/// A controller's worker time per object a sync looks at (listing pods from its cache,
/// checking a node): a sync over thousands of objects keeps the worker busy for milliseconds,
/// and changes that arrive meanwhile are taken together by the next sync, as a work queue
/// takes them. Below a millisecond a run costs nothing, so small clusters never wait.
const WORK_PER_OBJECT_MICROS: u64 = 5;

/// What a successful reconcile asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing more until something changes.
    AwaitChange,
    /// Look again after this long, even if nothing changes.
    RequeueAfter(Duration),
}

/// What a reconcile came to: what it asks for next, or why it failed (a request refused or
/// unanswered). The loop retries a failed key after its work queue's rate limiter's delay, and
/// forgets the key's failures once a sync of it succeeds, as client-go's controllers do.
pub type Synced = Result<Action, crate::apiserver::Status>;

/// A delete's or update's outcome, where the object being gone already is as good as done.
pub fn done_unless_failed<T>(result: Result<T, crate::apiserver::Status>) -> Result<(), crate::apiserver::Status> {
    match result {
        Err(status) if status.code != 404 => Err(status),
        _ => Ok(()),
    }
}

/// The part of a controller that is specific to it.
pub trait Reconciler: 'static {
    /// The informers it watches, in start order.
    fn informers(&mut self) -> Vec<&mut Informer>;
    /// Which keys a change to a watched object makes dirty (informer index, change).
    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String>;
    /// Called once the informers have listed: rebuild anything derived from their caches.
    fn on_start(&mut self) {}
    /// Called before each run's sync: a controller that watches what discovery lists (the
    /// garbage collector, every resource) starts informers for resources served since; the
    /// keys it returns are queued (the objects a new informer listed).
    fn refresh(&mut self, _ctx: &mut Ctx) -> Vec<String> {
        Vec::new()
    }
    /// Brings one object's actual state towards its desired state.
    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced;
    /// Whether it has work under way beyond its ready queue (e.g. a namespace it is emptying
    /// while it waits to look again), so that "run until settled" waits for it.
    fn busy(&self) -> bool {
        false
    }
    /// How many objects the last reconcile looked at, as the real controller's sync would
    /// (the pods of a ReplicaSet, the nodes and pods of a DaemonSet): its cost in worker time.
    fn work(&self) -> usize {
        0
    }
    /// A one-line summary for views: e.g. desired vs actual of the last reconcile.
    fn summary(&self) -> String {
        String::new()
    }
    /// The reconciler itself, for what others may look up in it (an ingress controller's
    /// routes); `None` for most.
    fn as_any(&self) -> Option<&dyn Any> {
        None
    }
}

/// Runs a reconciler as a component: sync informers, queue keys, reconcile them. The
/// reconciler is boxed so that the loop is compiled once, not once per controller.
pub struct ControllerLoop {
    pub reconciler: Box<dyn Reconciler>,
    pub queue: WorkQueue,
    /// Every key once after start (informers' initial lists are state, not changes).
    resync_on_start: bool,
    /// Until when the worker is busy with the last run's syncs.
    busy_until: Option<Time>,
    /// kube-controller-manager's shared informers, when the loop runs inside it.
    factory: Option<InformerFactory>,
    /// Per informer of the reconciler: the shared cache it borrows while the loop runs.
    shared: Vec<Option<Shared>>,
}

impl ControllerLoop {
    pub fn new(reconciler: impl Reconciler) -> Self {
        ControllerLoop {
            reconciler: Box::new(reconciler),
            queue: WorkQueue::default(),
            resync_on_start: true,
            busy_until: None,
            factory: None,
            shared: Vec::new(),
        }
    }

    /// Runs the loop inside kube-controller-manager: its informers use the process's shared
    /// caches where they can.
    pub fn in_manager(mut self, factory: &InformerFactory) -> Self {
        self.factory = Some(factory.clone());
        self
    }

    /// Syncs the informers, borrowing the shared caches until `give_back`; queues the keys
    /// the changes make dirty.
    fn sync(&mut self, ctx: &mut Ctx) {
        let mut deltas: Vec<(usize, Delta)> = Vec::new();
        for (i, informer) in self.reconciler.informers().into_iter().enumerate() {
            match self.shared.get(i).and_then(Option::as_ref) {
                Some(shared) => {
                    let mut shared = shared.borrow_mut();
                    shared.sync(ctx);
                    deltas.extend(shared.take_pending(ctx.me).into_iter().map(|d| (i, d)));
                    shared.lend(ctx.me, informer);
                }
                None => deltas.extend(informer.sync(ctx).into_iter().map(|d| (i, d))),
            }
        }
        for (i, delta) in deltas {
            for key in self.reconciler.keys_for(i, &delta) {
                self.queue.add(&key, Some(delta.seq));
            }
        }
    }

    /// Returns the shared caches borrowed for this run.
    fn give_back(&mut self) {
        for (i, informer) in self.reconciler.informers().into_iter().enumerate() {
            if let Some(shared) = self.shared.get(i).and_then(Option::as_ref) {
                shared.borrow_mut().give_back(informer);
            }
        }
    }

    /// Lists and watches, into the shared caches where the loop has them.
    fn start_informers(&mut self, ctx: &mut Ctx) {
        if let Some(factory) = &self.factory {
            // One shared cache per kind: a second informer of a kind keeps its own.
            let mut kinds = Vec::new();
            self.shared = self
                .reconciler
                .informers()
                .iter()
                .map(|i| {
                    let first = !kinds.contains(&i.kind);
                    kinds.push(i.kind);
                    (first && i.shareable()).then(|| factory.for_kind(i.kind))
                })
                .collect();
        }
        let me: ComponentId = ctx.me;
        for (i, informer) in self.reconciler.informers().into_iter().enumerate() {
            match self.shared.get(i).and_then(Option::as_ref) {
                Some(shared) => {
                    let mut shared = shared.borrow_mut();
                    // The other members' changes so far are theirs; the list replaces the cache.
                    shared.sync(ctx);
                    shared.lend(me, informer);
                    let _ = informer.start(ctx);
                    shared.join(me, informer);
                }
                None => {
                    let _ = informer.start(ctx);
                }
            }
        }
    }
}

impl Component for ControllerLoop {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.start_informers(ctx);
        self.reconciler.on_start();
        if self.resync_on_start {
            // Reconcile every object that exists at start, as a controller does once its
            // caches have synced; the primary (first) informer's objects are its own.
            let first: Vec<String> = self
                .reconciler
                .informers()
                .first()
                .map(|i| i.cache.keys().map(String::from).collect())
                .unwrap_or_default();
            for key in first {
                self.queue.add(&key, None);
            }
        }
        self.give_back();
        Some(ctx.now)
    }

    fn lanes(&self) -> Vec<String> {
        self.reconciler.summary().lines().map(str::to_string).collect()
    }

    fn queued(&self) -> Vec<String> {
        self.queue.ready_keys().cloned().collect()
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        for key in self.reconciler.refresh(ctx) {
            self.queue.add(&key, None);
        }
        self.sync(ctx);
        self.queue.promote(ctx.now);
        let mut work = 0;
        while let Some((key, cause)) = self.queue.pop() {
            ctx.cause = cause;
            let synced = self.reconciler.reconcile(&key, ctx);
            work += self.reconciler.work() as u64;
            match synced {
                Ok(action) => {
                    self.queue.forget(&key);
                    if let Action::RequeueAfter(d) = action {
                        self.queue.add_after(&key, ctx.now + d);
                    }
                }
                // Tried again later, the later the more often it failed in a row.
                Err(_) => self.queue.add_rate_limited(&key, ctx.now),
            }
        }
        ctx.cause = None;
        self.give_back();
        let busy = Duration::millis(work * WORK_PER_OBJECT_MICROS / 1000);
        self.busy_until = (busy > Duration::ZERO).then(|| ctx.now + busy);
        self.queue.next_delayed()
    }

    fn busy_until(&self) -> Option<Time> {
        self.busy_until
    }

    fn busy(&self) -> bool {
        !self.queue.is_empty() || self.reconciler.busy()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
