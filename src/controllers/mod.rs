//! kube-controller-manager: independent, level-triggered control loops. Each controller
//! watches what it cares about through informers, turns every change into a key in its work
//! queue, and reconciles one key at a time: it compares what is desired with what is, and
//! acts only through the API server.

pub mod cronjob;
pub mod daemonset;
pub mod deployment;
pub mod endpoints;
pub mod endpointslice;
pub mod expectations;
pub mod garbage_collector;
pub mod job;
pub mod lane;
pub mod namespace;
pub mod node_lifecycle;
pub mod pods;
pub mod replicaset;
pub mod serviceaccount;
pub mod taint_eviction;
pub mod workqueue;

use crate::api::Object;
use crate::component::{Component, Ctx, Delta, Informer};
use crate::sim::{Duration, Time};
use std::any::Any;
use workqueue::WorkQueue;

/// The keys a change to a dependent object makes dirty: those of its new version and of its
/// old one (a pod that changed owner or labels touches both), each key once, in that order.
pub fn keys_of_both(delta: &Delta, keys_of: impl Fn(&Object) -> Vec<String>) -> Vec<String> {
    let mut keys = Vec::new();
    for o in [Some(&delta.object), delta.old.as_ref()].into_iter().flatten() {
        for key in keys_of(o) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

/// The key of the object's controller, when that controller is of kind `kind`.
pub fn owner_key(o: &Object, kind: &str) -> Vec<String> {
    o.controller_ref()
        .filter(|r| r.kind == kind)
        .map(|r| crate::component::cache_key(o.namespace(), &r.name))
        .into_iter()
        .collect()
}

/// A controller's worker time per object a sync looks at (listing pods from its cache,
/// checking a node): a sync over thousands of objects keeps the worker busy for milliseconds,
/// and changes that arrive meanwhile are taken together by the next sync, as a work queue
/// takes them. Below a millisecond a run costs nothing, so small clusters never wait.
const WORK_PER_OBJECT_MICROS: u64 = 5;

/// What a reconcile asks for next.
/// When a key whose sync found the API unreachable is tried again.
const UNREACHABLE_RETRY: Duration = Duration::seconds(1);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing more until something changes.
    AwaitChange,
    /// Look again after this long, even if nothing changes.
    RequeueAfter(Duration),
}

/// The part of a controller that is specific to it.
pub trait Reconciler: 'static {
    /// The informers it watches, in start order.
    fn informers(&mut self) -> Vec<&mut Informer>;
    /// Which keys a change to a watched object makes dirty (informer index, change).
    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String>;
    /// Called once the informers have listed: rebuild anything derived from their caches.
    fn on_start(&mut self) {}
    /// Brings one object's actual state towards its desired state.
    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Action;
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
}

impl ControllerLoop {
    pub fn new(reconciler: impl Reconciler) -> Self {
        ControllerLoop {
            reconciler: Box::new(reconciler),
            queue: WorkQueue::default(),
            resync_on_start: true,
            busy_until: None,
        }
    }

    fn sync(&mut self, ctx: &mut Ctx) {
        let mut deltas: Vec<(usize, Delta)> = Vec::new();
        for (i, informer) in self.reconciler.informers().into_iter().enumerate() {
            deltas.extend(informer.sync(ctx.api).into_iter().map(|d| (i, d)));
        }
        for (i, delta) in deltas {
            for key in self.reconciler.keys_for(i, &delta) {
                self.queue.add(&key, Some(delta.seq));
            }
        }
    }
}

impl Component for ControllerLoop {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        for informer in self.reconciler.informers() {
            let _ = informer.start(ctx);
        }
        self.reconciler.on_start();
        if self.resync_on_start {
            // Reconcile every object that exists at start, as a controller does once its
            // caches have synced; the primary (first) informer's objects are its own.
            let first: Vec<String> =
                self.reconciler.informers().first().map(|i| i.cache.keys().cloned().collect()).unwrap_or_default();
            for key in first {
                self.queue.add(&key, None);
            }
        }
        Some(ctx.now)
    }

    fn lanes(&self) -> Vec<String> {
        self.reconciler.summary().lines().map(str::to_string).collect()
    }

    fn queued(&self) -> Vec<String> {
        self.queue.ready_keys().cloned().collect()
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.sync(ctx);
        self.queue.promote(ctx.now);
        let mut work = 0;
        while let Some((key, cause)) = self.queue.pop() {
            ctx.cause = cause;
            let refused = ctx.api.refused_requests();
            let action = self.reconciler.reconcile(&key, ctx);
            work += self.reconciler.work() as u64;
            match action {
                // The API was unreachable: the work queue retries the key (rate-limited).
                _ if ctx.api.refused_requests() > refused => self.queue.add_after(&key, ctx.now + UNREACHABLE_RETRY),
                Action::RequeueAfter(d) => self.queue.add_after(&key, ctx.now + d),
                Action::AwaitChange => {}
            }
        }
        ctx.cause = None;
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
