//! The kubelet: the node agent. It registers its Node, renews its Lease as a heartbeat,
//! watches the pods bound to its node and runs them through the container runtime,
//! reporting each pod's status and Events back through the API server.

pub mod images;
pub mod node_config;
pub mod pod_worker;
pub mod script;

pub use node_config::NodeConfig;

use crate::api::{Kind, Lease, LeaseSpec, Object, ObjectMeta, Pod};
use crate::apiserver::{FieldSelector, Request};
use crate::component::{Component, Ctx, Informer, cache_key};
use crate::record::{Seq, WatchEventType};
use crate::sim::time::MicroTime;
use crate::sim::{Duration, Time};
use pod_worker::{Action, PodWorker, Runtime};
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub const LEASE_RENEW_INTERVAL: Duration = Duration::seconds(10);
pub const LEASE_DURATION_SECONDS: i32 = 40;
/// How often the kubelet reports an unchanged node status.
pub const NODE_STATUS_REPORT_INTERVAL: Duration = Duration::minutes(5);

pub struct Kubelet {
    pub config: NodeConfig,
    pods: Informer,
    workers: BTreeMap<String, (String, PodWorker)>,
    runtime: Runtime,
    registered: bool,
    lease_due: Time,
    status_due: Time,
    ips_in_use: BTreeSet<u32>,
    next_ip: u32,
    causes: HashMap<String, Seq>,
    /// Set on (re)start: the first run syncs every pod, as a kubelet does after a restart.
    resync_all: bool,
}

impl Kubelet {
    pub fn new(config: NodeConfig) -> Self {
        let selector = FieldSelector::equals("spec.nodeName", &config.name);
        Kubelet {
            config,
            pods: Informer::new(Kind::Pod).with_fields(selector),
            workers: BTreeMap::new(),
            runtime: Runtime::default(),
            registered: false,
            lease_due: Time::ZERO,
            status_due: Time::ZERO,
            ips_in_use: BTreeSet::new(),
            next_ip: 2,
            causes: HashMap::new(),
            resync_all: true,
        }
    }

    pub fn node_name(&self) -> &str {
        &self.config.name
    }

    /// The log lines a container of a pod on this node wrote, up to `now`; with `previous`,
    /// those of the instance before the current one.
    pub fn logs(&self, namespace: &str, pod: &str, container: &str, previous: bool, now: Time) -> Option<Vec<String>> {
        let (_, worker) = self.workers.get(&cache_key(namespace, pod))?;
        Some(worker.logs(container, previous)?.into_iter().filter(|(t, _)| *t <= now).map(|(_, l)| l).collect())
    }

    /// Images present on this node, by canonical reference.
    pub fn images(&self) -> &BTreeSet<String> {
        &self.runtime.images
    }

    fn register(&mut self, ctx: &mut Ctx) {
        let node = Object::Node(self.config.node_object(ctx.now));
        let registered = match ctx.call_object(Request::create(node.clone())) {
            Ok(stored) => Some(stored),
            Err(status) if status.reason == "AlreadyExists" => {
                // Re-registering after a restart: report a fresh status on the existing node.
                ctx.call_object(Request::update_status(node)).ok()
            }
            Err(_) => None,
        };
        let Some(node) = registered else { return };
        self.registered = true;
        let name = self.config.name.clone();
        ctx.event(&node, "", "Normal", "Starting", "Starting kubelet.".into());
        for reason in ["NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"] {
            ctx.event(&node, "", "Normal", reason, format!("Node {name} status is now: {reason}"));
        }
        ctx.event(&node, "", "Normal", "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods".into());
        ctx.event(&node, "", "Normal", "NodeReady", format!("Node {name} status is now: NodeReady"));
        self.status_due = ctx.now + NODE_STATUS_REPORT_INTERVAL;
    }

    fn renew_lease(&mut self, ctx: &mut Ctx) {
        let name = self.config.name.clone();
        let lease = Lease {
            metadata: ObjectMeta { name: name.clone(), namespace: "kube-node-lease".into(), ..Default::default() },
            spec: LeaseSpec {
                holder_identity: Some(name.clone()),
                lease_duration_seconds: Some(LEASE_DURATION_SECONDS),
                renew_time: Some(MicroTime(ctx.now)),
                ..Default::default()
            },
            ..Default::default()
        };
        let result = ctx.call(Request::update(Object::Lease(lease.clone())));
        if result.as_ref().is_err_and(|s| s.reason == "NotFound") {
            let _ = ctx.call(Request::create(Object::Lease(lease)));
        }
        self.lease_due = ctx.now + LEASE_RENEW_INTERVAL;
    }

    fn report_node_status(&mut self, ctx: &mut Ctx) {
        if let Some(current) = ctx.api.peek(Kind::Node, "", &self.config.name) {
            if let Object::Node(mut node) = (*current).clone() {
                for c in &mut node.status.conditions {
                    c.last_heartbeat_time = Some(ctx.now);
                }
                node.metadata.resource_version.clear();
                let _ = ctx.call(Request::update_status(Object::Node(node)));
            }
        }
        self.status_due = ctx.now + NODE_STATUS_REPORT_INTERVAL;
    }

    fn allocate_ip(ips_in_use: &mut BTreeSet<u32>, next_ip: &mut u32) -> u32 {
        for _ in 0..253 {
            let candidate = *next_ip;
            *next_ip = if *next_ip >= 254 { 2 } else { *next_ip + 1 };
            if ips_in_use.insert(candidate) {
                return candidate;
            }
        }
        254
    }

    fn sync_pods(&mut self, ctx: &mut Ctx) -> BTreeSet<String> {
        let mut touched = BTreeSet::new();
        for d in self.pods.sync(ctx.api) {
            let key = cache_key(d.object.namespace(), d.object.name());
            self.causes.insert(key.clone(), d.seq);
            if d.type_ == WatchEventType::Deleted {
                self.drop_worker(&key);
                continue;
            }
            let uid = d.object.meta().uid.clone();
            if self.workers.get(&key).is_some_and(|(u, _)| *u != uid) {
                self.drop_worker(&key);
            }
            touched.insert(key);
        }
        touched
    }

    fn drop_worker(&mut self, key: &str) {
        if let Some((_, worker)) = self.workers.remove(key) {
            if let Some(last) = worker.ip.as_ref().and_then(|ip| ip.rsplit('.').next()).and_then(|n| n.parse().ok()) {
                self.ips_in_use.remove(&last);
            }
        }
    }

    fn step_pod(&mut self, key: &str, ctx: &mut Ctx) {
        let Some(object) = self.pods.cache.get(key).cloned() else { return };
        let Some(pod) = object.as_pod() else { return };
        if pod.is_terminal() && !self.workers.contains_key(key) {
            return;
        }
        ctx.cause = self.causes.get(key).copied();
        let host_ip = self.config.internal_ip.clone();
        let (_, worker) = self
            .workers
            .entry(key.to_string())
            .or_insert_with(|| (pod.metadata.uid.clone(), PodWorker::new(pod, ctx.now, &host_ip)));
        let config = &self.config;
        let ips = &mut self.ips_in_use;
        let next = &mut self.next_ip;
        let mut next_ip = || config.pod_ip(Self::allocate_ip(ips, next));
        let actions = worker.step(pod, ctx.now, &mut self.runtime, ctx.rng, &mut next_ip);
        let status = worker.status(pod, ctx.now);
        let mut delete = false;
        for action in actions {
            match action {
                Action::Event { type_, reason, message, field_path } => {
                    ctx.event(&object, &field_path, type_, reason, message);
                }
                Action::Decision(text) => {
                    ctx.decide(|| text);
                }
                Action::DeletePod => delete = true,
            }
        }
        if status != pod.status {
            let mut updated: Pod = pod.clone();
            updated.status = status;
            updated.metadata.resource_version.clear();
            if let Ok(stored) = ctx.call_object(Request::update_status(Object::Pod(updated))) {
                self.pods.assume(stored);
            }
        }
        if delete {
            let mut req = Request::delete(Kind::Pod, &pod.metadata.namespace, &pod.metadata.name);
            req.grace_period_seconds = Some(0);
            let _ = ctx.call(req);
        }
    }
}

impl Component for Kubelet {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.register(ctx);
        self.renew_lease(ctx);
        let _ = self.pods.start(ctx);
        self.resync_all = true;
        Some(ctx.now)
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        if !self.registered {
            self.register(ctx);
        }
        let mut touched = self.sync_pods(ctx);
        if std::mem::take(&mut self.resync_all) {
            touched.extend(self.pods.cache.keys().cloned());
        }
        let due: Vec<String> = self
            .pods
            .cache
            .keys()
            .filter(|k| {
                touched.contains(*k)
                    || !self.workers.contains_key(*k)
                    || self.workers.get(*k).and_then(|(_, w)| w.next_wakeup()).is_some_and(|t| t <= ctx.now)
            })
            .cloned()
            .collect();
        for key in due {
            self.step_pod(&key, ctx);
        }
        ctx.cause = None;
        if ctx.now >= self.lease_due {
            self.renew_lease(ctx);
        }
        if ctx.now >= self.status_due {
            self.report_node_status(ctx);
        }
        let next_worker = self.workers.values().filter_map(|(_, w)| w.next_wakeup()).min();
        let next = [Some(self.lease_due), Some(self.status_due), next_worker].into_iter().flatten().min();
        next.map(|t| t.max(ctx.now + Duration::millis(1)))
    }

    fn busy(&self) -> bool {
        self.workers.values().any(|(_, w)| w.busy())
            || self
                .pods
                .cache
                .iter()
                .any(|(k, o)| !self.workers.contains_key(k) && o.as_pod().is_some_and(|p| !p.is_terminal()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn informers(&self) -> Vec<&Informer> {
        vec![&self.pods]
    }
}
