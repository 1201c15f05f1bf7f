//! The kubelet: the node agent. It registers its Node, renews its Lease as a heartbeat,
//! watches the pods bound to its node and runs them through the container runtime,
//! reporting each pod's status and Events back through the API server.

pub mod admission_webhook;
pub mod apparmor;
pub mod banners;
pub mod entrypoint;
pub mod env;
pub mod expansion;
pub mod file_source;
pub mod image_family;
pub mod images;
mod interpreters;
pub mod node_config;
pub mod pod_worker;
pub mod probes;
mod python_if;
pub mod references;
pub mod script;
mod service;
pub mod usage;
pub mod volumes;
mod workers;

pub use node_config::NodeConfig;

use crate::api::{Kind, Lease, LeaseSpec, Object, ObjectMeta, OwnerReference, Pod, Toleration};
use crate::apiserver::admission::MIRROR_POD_ANNOTATION;
use crate::apiserver::{FieldSelector, Request};
use crate::client::component::{Component, Ctx, Informer, cache_key};
use crate::client::object_cache::FastKeys;
use crate::record::{Seq, WatchEventType};
use crate::sim::time::MicroTime;
use crate::sim::{Duration, Time};
use pod_worker::{Action, PodWorker, Runtime};
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

pub const LEASE_RENEW_INTERVAL: Duration = Duration::seconds(10);
pub const LEASE_DURATION_SECONDS: i32 = 40;
/// How long the lease controller first waits to try again after a renewal failed; the wait
/// doubles up to `LEASE_RETRY_MAX`.
const LEASE_RETRY_INITIAL: Duration = Duration::millis(200);
const LEASE_RETRY_MAX: Duration = Duration::seconds(7);
/// How often the kubelet's node status loop runs (`nodeStatusUpdateFrequency`): a report that
/// failed is tried again at its next round.
const NODE_STATUS_UPDATE_FREQUENCY: Duration = Duration::seconds(10);
/// How often the kubelet reports an unchanged node status.
pub const NODE_STATUS_REPORT_INTERVAL: Duration = Duration::minutes(5);

/// How a kubelet's decision that calls its runtime begins.
pub const RUNTIME_PREFIX: &str = "containerd: ";

pub struct Kubelet {
    pub config: NodeConfig,
    pods: Informer,
    /// Its own Node (`metadata.name=<node>`), whose status it reports.
    node: Informer,
    /// Every Service, for the Service links in containers' environments.
    services: Informer,
    /// The ConfigMaps and Secrets the pods it runs refer to, one watch each.
    references: references::References,
    /// Pods waiting on a missing ConfigMap or Secret (a volume's back-off, a container that
    /// could not be configured).
    blocked: BTreeSet<String>,
    workers: workers::Workers,
    /// Pods with a container whose log awaits the cluster's filling in (see `script::PLACEHOLDER`).
    unfilled: BTreeSet<String>,
    runtime: Runtime,
    registered: bool,
    lease_due: Time,
    /// The wait before the next try of a lease renewal that failed.
    lease_retry: Duration,
    status_due: Time,
    ips_in_use: BTreeSet<u32>,
    next_ip: u32,
    causes: HashMap<String, Seq, FastKeys>,
    /// Set on (re)start: the first run syncs every pod, as a kubelet does after a restart.
    resync_all: bool,
    /// The Node's uid, which mirror pods name as their owner.
    node_uid: String,
    /// Static pods read from the manifests at start, by `namespace/name`.
    static_pods: BTreeMap<String, Pod>,
    /// Pods whose last status write failed (the API was unreachable): the status manager
    /// sends their status again on its next sync.
    unsynced: BTreeSet<String>,
    /// Whether a restart found workers whose pods had gone meanwhile (see `has_pod`).
    relisted_without_pods: bool,
    /// Where its pods' DNS queries go: this node's kube-proxy rules, CoreDNS behind them.
    network: crate::dns::Network,
    /// The node's own files that pods wrote through hostPath and claim volumes (absolute
    /// path → content): they stay when the pod goes, as a directory on the node would.
    disk: BTreeMap<String, String>,
    /// When the file source next looks at the manifests folder (after a file there changed).
    manifest_check_at: Option<Time>,
    /// Whether the manifests have changed since the node started (see `file_source`).
    manifests_changed: bool,
    /// Static pods whose mirror it just created with no worker yet: stepped at once.
    fresh_static: Vec<String>,
    /// When its process last started, and when it stopped after each run (for systemd).
    started_at: Time,
    lifecycle: Vec<(Time, bool)>,
}

/// How often the kubelet's status manager resends statuses the API did not take.
const STATUS_SYNC_PERIOD: Duration = Duration::seconds(10);

impl Kubelet {
    pub fn new(config: NodeConfig) -> Self {
        let selector = FieldSelector::equals("spec.nodeName", &config.name);
        Kubelet {
            pods: Informer::new(Kind::Pod).with_fields(selector),
            node: Informer::new(Kind::Node).with_fields(FieldSelector::equals("metadata.name", &config.name)),
            services: Informer::new(Kind::Service).with_own_cache(),
            references: references::References::default(),
            blocked: BTreeSet::new(),
            workers: Default::default(),
            unfilled: BTreeSet::new(),
            registered: false,
            lease_due: Time::ZERO,
            lease_retry: LEASE_RETRY_INITIAL,
            status_due: Time::ZERO,
            ips_in_use: BTreeSet::new(),
            next_ip: 2,
            causes: HashMap::default(),
            unsynced: BTreeSet::new(),
            relisted_without_pods: false,
            resync_all: true,
            runtime: Runtime {
                images: crate::util::sort::btree_set(config.preloaded_images.iter().cloned()),
                ..Runtime::default()
            },
            node_uid: String::new(),
            static_pods: BTreeMap::new(),
            network: crate::dns::Network::default(),
            disk: config
                .manifest_files
                .iter()
                .map(|(name, text)| (format!("{}/{name}", file_source::MANIFEST_DIR), text.clone()))
                .collect(),
            manifest_check_at: None,
            manifests_changed: false,
            fresh_static: Vec::new(),
            started_at: Time::ZERO,
            lifecycle: Vec::new(),
            config,
        }
    }

    pub fn node_name(&self) -> &str {
        &self.config.name
    }

    /// The node's address (its InternalIP).
    pub fn internal_ip(&self) -> &str {
        &self.config.internal_ip
    }

    /// How many times it has synced a pod it runs (stepped the pod's worker).
    pub fn pod_syncs(&self, namespace: &str, pod: &str) -> Option<u64> {
        Some(self.workers.get(&cache_key(namespace, pod))?.1.syncs())
    }

    /// The log lines a container of a pod on this node wrote, up to `now`; with `previous`,
    /// those of the instance before the current one.
    pub fn logs(&self, namespace: &str, pod: &str, container: &str, previous: bool, now: Time) -> Option<Vec<String>> {
        let (_, worker) = self.workers.get(&cache_key(namespace, pod))?;
        Some(worker.logs(container, previous)?.into_iter().filter(|(t, _)| *t <= now).map(|(_, l)| l).collect())
    }

    /// Like [`Kubelet::logs`], each line with the time it was written.
    pub fn logs_timed(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        previous: bool,
        now: Time,
    ) -> Option<Vec<(Time, String)>> {
        let (_, worker) = self.workers.get(&cache_key(namespace, pod))?;
        Some(worker.logs(container, previous)?.into_iter().filter(|(t, _)| *t <= now).collect())
    }

    /// Images present on this node, by canonical reference.
    pub fn images(&self) -> &BTreeSet<String> {
        &self.runtime.images
    }

    /// Pulls from `registry` (the cluster's, shared by every node) instead of a registry of
    /// its own.
    pub fn with_registry(mut self, registry: images::Registry) -> Self {
        self.runtime.registry = registry;
        self
    }

    /// Sends its pods' DNS queries over the cluster's `network` (see [`crate::dns::network`]).
    pub fn with_network(mut self, network: crate::dns::Network) -> Self {
        self.network = network;
        self
    }

    /// Kills a container's process on this node at once (`sim pod crash`): it exits with 137,
    /// and the kubelet's next run handles it as any exit. Errors when the pod has no worker
    /// here or the container is not running.
    pub fn crash(&mut self, namespace: &str, pod: &str, container: &str, now: Time) -> Result<(), String> {
        self.workers
            .update(&cache_key(namespace, pod), |worker| worker.crash(container, now))
            .ok_or_else(|| format!("pod \"{pod}\" is not running on node {}", self.config.name))?
    }

    /// Lines a container's process wrote now (see `PodWorker::append_logs`).
    pub fn append_logs(&mut self, namespace: &str, pod: &str, container: &str, lines: &[String], now: Time) {
        self.workers.update(&cache_key(namespace, pod), |worker| worker.append_logs(container, lines, now));
    }

    /// A container's main process exits with `code` (a shell attached to a terminal that
    /// typed `exit`); the kubelet's next run handles it as any exit.
    pub fn exit_process(
        &mut self,
        namespace: &str,
        pod: &str,
        container: &str,
        code: i32,
        now: Time,
    ) -> Result<(), String> {
        self.workers
            .update(&cache_key(namespace, pod), |worker| worker.exit_process(container, code, now))
            .ok_or_else(|| format!("pod \"{pod}\" is not running on node {}", self.config.name))?
    }

    /// Whether a container started with output for the cluster to fill in.
    pub fn has_unfilled(&self) -> bool {
        !self.unfilled.is_empty()
    }

    /// The commands whose output containers started since the last call await: namespace,
    /// pod, container and the commands, in order.
    pub fn take_unfilled(&mut self) -> Vec<(String, String, String, Vec<String>)> {
        let mut out = Vec::new();
        for key in std::mem::take(&mut self.unfilled) {
            let Some((_, worker)) = self.workers.get(&key) else { continue };
            let (namespace, pod) = key.split_once('/').unwrap_or(("", &key));
            for (container, cmds) in worker.unfilled() {
                out.push((namespace.to_string(), pod.to_string(), container, cmds));
            }
        }
        out
    }

    /// Fills in a container's placeholders (see `PodWorker::fill`).
    pub fn fill(&mut self, namespace: &str, pod: &str, container: &str, results: &[(Vec<String>, i32)]) {
        self.workers.update(&cache_key(namespace, pod), |worker| worker.fill(container, results));
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn register(&mut self, ctx: &mut Ctx) {
        let node = Object::Node(Box::new(self.config.node_object(ctx.now)));
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
        self.node_uid = node.meta().uid.clone();
        let name = self.config.name.clone();
        ctx.event(&node, "", "Normal", "Starting", "Starting kubelet.".into());
        for reason in ["NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"] {
            ctx.event(&node, "", "Normal", reason, format!("Node {name} status is now: {reason}"));
        }
        ctx.event(&node, "", "Normal", "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods".into());
        ctx.event(&node, "", "Normal", "NodeReady", format!("Node {name} status is now: NodeReady"));
        self.status_due = ctx.now + NODE_STATUS_REPORT_INTERVAL;
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
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
        let mut result = ctx.call(Request::update(Object::Lease(lease.clone())));
        if result.as_ref().is_err_and(|s| s.reason == "NotFound") {
            result = ctx.call(Request::create(Object::Lease(lease)));
        }
        match result {
            Ok(_) => {
                self.lease_retry = LEASE_RETRY_INITIAL;
                self.lease_due = ctx.now + LEASE_RENEW_INTERVAL;
            }
            // The lease controller keeps trying, sooner than its renew interval: from 200 ms,
            // doubling up to 7 s, until the API server answers again.
            Err(status) => {
                let wait = self.lease_retry;
                self.lease_retry = Duration((wait.0 * 2).min(LEASE_RETRY_MAX.0));
                ctx.decide(|| format!("failed to update lease, will retry in {wait}: {}", status.message));
                self.lease_due = ctx.now + wait;
            }
        }
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn report_node_status(&mut self, ctx: &mut Ctx) {
        if let Some(current) = self.node.get("", &self.config.name) {
            if let Object::Node(mut node) = (**current).clone() {
                // The kubelet posts its own view of each condition: one the node lifecycle
                // controller set to Unknown while the kubelet could not reach the API (an
                // outage of etcd or the API server) goes back to what the kubelet sees.
                let own = self.config.node_object(ctx.now).status.conditions;
                for c in &mut node.status.conditions {
                    if let Some(mine) = own.iter().find(|m| m.type_ == c.type_).filter(|m| m.status != c.status) {
                        c.status = mine.status.clone();
                        c.reason = mine.reason.clone();
                        c.message = mine.message.clone();
                        c.last_transition_time = Some(ctx.now);
                    }
                    c.last_heartbeat_time = Some(ctx.now);
                }
                node.metadata.resource_version.clear();
                if let Err(status) = ctx.call(Request::update_status(Object::Node(node))) {
                    ctx.decide(|| format!("error updating node status, will retry: {}", status.message));
                    self.status_due = ctx.now + NODE_STATUS_UPDATE_FREQUENCY;
                    return;
                }
            }
        }
        self.status_due = ctx.now + NODE_STATUS_REPORT_INTERVAL;
    }

    /// Applies what its Node and Service watches saw (a watch that could not be opened, the
    /// API being unreachable, is opened again).
    fn sync_informers(&mut self, ctx: &mut Ctx) {
        for informer in [&mut self.node, &mut self.services] {
            if informer.watch_id().is_none() {
                let _ = informer.start(ctx);
            } else {
                let _ = informer.sync(ctx);
            }
        }
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

    /// The keys of the pods whose change calls for a sync (a key may come twice: `due` puts
    /// them in order, each once).
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn sync_pods(&mut self, ctx: &mut Ctx) -> Vec<String> {
        let mut touched = Vec::new();
        for d in self.pods.sync(ctx) {
            let key = cache_key(d.object.namespace(), d.object.name());
            match self.causes.get_mut(&key) {
                Some(seq) => *seq = d.seq,
                None => {
                    self.causes.insert(key.clone(), d.seq);
                }
            }
            // A static pod's containers run whatever happens to its mirror pod.
            let is_static = self.static_pods.contains_key(&key);
            if d.type_ == WatchEventType::Deleted {
                if !is_static {
                    self.drop_worker(&key, ctx);
                }
                continue;
            }
            // The echo of the kubelet's own status write: the version it stored and already
            // holds. Nothing to react to (upstream's pod config hands such an update on as a
            // reconcile, not a sync).
            if d.old.as_ref().is_some_and(|old| old.meta().resource_version == d.object.meta().resource_version) {
                continue;
            }
            let uid = &d.object.meta().uid;
            if !is_static && self.workers.get(&key).is_some_and(|(u, _)| u != uid) {
                self.drop_worker(&key, ctx);
            }
            touched.push(key);
        }
        touched
    }

    /// The pods to step now, in key order: those just changed, those whose status write is
    /// to be retried, and those whose worker is due. A cached pod without a worker that did
    /// not change is one stepping left without a worker (finished, or a static pod being
    /// deleted): stepping it again would do nothing. So only the workers are looked through,
    /// by their wakeup, not every pod by key. (A key whose pod has left the cache since is
    /// stepped as nothing.)
    fn due(&self, touched: Vec<String>, now: Time) -> Vec<String> {
        // In key order, each once (a few keys: sorted in a vector, not a tree; the changed
        // pods' keys are the ones `sync_pods` made, not copied again).
        let mut due = touched;
        due.extend(self.unsynced.iter().cloned());
        due.extend(self.workers.due(now).filter(|key| self.has_pod(key)).map(str::to_string));
        due.sort_unstable();
        due.dedup();
        due
    }

    /// The earliest wakeup of a worker whose pod is in the cache.
    fn next_worker_wakeup(&self) -> Option<Time> {
        self.workers.next_wakeup(|key| self.has_pod(key))
    }

    /// Whether the pod a worker runs is in the cache. Only a static pod's can be missing (its
    /// mirror pod deleted): any other pod's worker goes when its pod leaves the cache, unless
    /// the pod went while the kubelet was stopped (then every worker is looked up).
    fn has_pod(&self, key: &str) -> bool {
        (!self.relisted_without_pods && !self.static_pods.contains_key(key)) || self.pods.cache.contains_key(key)
    }

    fn drop_worker(&mut self, key: &str, ctx: &mut Ctx) {
        self.keep_written(key, ctx.now);
        self.references.unregister(key, ctx);
        self.blocked.remove(key);
        if let Some((_, worker)) = self.workers.remove(key) {
            // Only addresses from the pod CIDR go back (a hostNetwork pod has the node's).
            let from_cidr = worker.ip.as_ref().filter(|ip| *ip != &self.config.internal_ip);
            if let Some(last) = from_cidr.and_then(|ip| ip.rsplit('.').next()).and_then(|n| n.parse().ok()) {
                self.ips_in_use.remove(&last);
            }
        }
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn step_pod(&mut self, key: &str, ctx: &mut Ctx) {
        let Some(object) = self.pods.cache.get(key).cloned() else { return };
        let Some(pod) = object.as_pod() else { return };
        if pod.is_terminal() && !self.workers.contains_key(key) {
            return;
        }
        // A static pod runs from its manifest: deleting its mirror pod does not stop it (the
        // mirror pod is replaced instead, in `sync_static_pods`), and its events name the
        // static pod itself, whose uid is the manifest's hash.
        let static_pod = self.static_pods.get(key);
        if static_pod.is_some() && (pod.metadata.deletion_timestamp.is_some() || self.stale_mirror(key, pod)) {
            return;
        }
        let involved = match static_pod {
            Some(s) => {
                let mut p = pod.clone();
                p.metadata.uid = s.metadata.uid.clone();
                Arc::new(Object::Pod(p))
            }
            None => object.clone(),
        };
        ctx.cause = self.causes.get(key).copied();
        // The key is copied only for a new worker (a pod is stepped many times).
        if !self.workers.contains_key(key) {
            // Its ConfigMaps and Secrets are watched from now on, for as long as it runs here.
            self.references.register(key, pod, ctx);
            let worker = PodWorker::new(pod, ctx.now, &self.config.internal_ip);
            self.workers.insert(key, pod.metadata.uid.clone(), worker);
        }
        let config = &self.config;
        let ips = &mut self.ips_in_use;
        let next = &mut self.next_ip;
        let host_network = pod.spec.host_network;
        let mut next_ip = || {
            if host_network { config.internal_ip.clone() } else { config.pod_ip(Self::allocate_ip(ips, next)) }
        };
        let objects = KnownObjects { services: &self.services, references: &self.references };
        let world = PodView { pod, network: &self.network, node: &self.config.name, objects };
        let (runtime, rng, now) = (&mut self.runtime, &mut *ctx.rng, ctx.now);
        let stepped = self.workers.update(key, |worker| {
            let actions = worker.step(pod, now, runtime, rng, &mut next_ip, &world);
            // Inside the runtime's call, the status the sync began with stands: none is built.
            let status = (!worker.held()).then(|| worker.status(pod, now));
            let blocked = worker.mount_waiting() || worker.config_waiting().next().is_some();
            (actions, !worker.unfilled().is_empty(), status, blocked)
        });
        let Some((actions, unfilled, status, blocked)) = stepped else { return };
        if blocked {
            self.blocked.insert(key.to_string());
        } else {
            self.blocked.remove(key);
        }
        if unfilled {
            self.unfilled.insert(key.to_string());
        }
        let mut delete = false;
        for action in actions {
            match action {
                Action::Event { type_, reason, message, field_path } => {
                    if ctx.record.enabled {
                        if let Some(call) = runtime_call(reason, &message, &field_path) {
                            ctx.decide(|| call);
                        }
                    }
                    ctx.event(&involved, &field_path, type_, reason, message);
                }
                Action::Decision(text) => {
                    ctx.decide(|| text);
                }
                Action::DeletePod => delete = true,
            }
        }
        match status {
            // Inside the runtime's call nothing is written, and a write that failed before stays
            // marked to be sent again once the call returns. A pod being deleted is never held.
            None => {}
            Some(status) if status == *pod.status => {
                self.unsynced.remove(key);
            }
            Some(status) => {
                // The stored pod with the new status (its old status is not copied only to be
                // replaced).
                let mut updated = Pod {
                    api_version: pod.api_version.clone(),
                    kind: pod.kind.clone(),
                    metadata: pod.metadata.clone(),
                    spec: pod.spec.clone(),
                    status: Arc::new(status),
                };
                updated.metadata.resource_version.clear();
                match ctx.call_object(Request::update_status(Object::Pod(updated))) {
                    Ok(stored) => {
                        self.pods.assume(stored);
                        self.unsynced.remove(key);
                    }
                    // Gone: nothing to report to. Otherwise the status is sent again later.
                    Err(status) if status.reason == "NotFound" => {
                        self.unsynced.remove(key);
                    }
                    Err(_) => {
                        self.unsynced.insert(key.to_string());
                    }
                }
            }
        }
        if delete {
            let mut req = Request::delete(Kind::Pod, &pod.metadata.namespace, &pod.metadata.name);
            req.grace_period_seconds = Some(0);
            let _ = ctx.call(req);
        }
    }
}

/// What a pod's processes read from the cluster: names they look up in its DNS (`until
/// nslookup NAME` ends once CoreDNS, reached through this node's rules, answers NAME), and,
/// from what the kubelet watches, the values their environment variables take and the files
/// of their volumes.
struct PodView<'a> {
    pod: &'a Pod,
    network: &'a crate::dns::Network,
    node: &'a str,
    objects: KnownObjects<'a>,
}

impl pod_worker::Surroundings for PodView<'_> {
    fn resolves(&self, name: &str) -> bool {
        let server = crate::api::well_known::KUBE_DNS_IP;
        self.network.resolve(self.node, server, name, &self.pod.metadata.namespace).is_ok()
    }
    fn environment(&self, container: &crate::api::Container) -> Vec<(String, String)> {
        env::for_expansion(&self.objects, self.pod, container, None)
    }
    fn config_error(&self, container: &crate::api::Container) -> Option<String> {
        env::config_error(&self.objects, self.pod, container)
    }
    fn mount(&self, pod: &Pod) -> Result<volumes::Mounted, (String, String)> {
        volumes::mount(&self.objects, pod)
    }
    fn declared(&self, container: &crate::api::Container) -> Vec<(String, String)> {
        env::declared(&self.objects, self.pod, container)
    }
}

/// The objects a kubelet knows of: the Services its informer caches, and the ConfigMaps and
/// Secrets its managers watch for the pods it runs.
#[derive(Clone, Copy)]
pub struct KnownObjects<'a> {
    services: &'a Informer,
    references: &'a references::References,
}

impl env::Objects for KnownObjects<'_> {
    fn services(&self, namespace: &str) -> Vec<Arc<Object>> {
        self.services.cache.values().filter(|s| s.namespace() == namespace).cloned().collect()
    }
    fn object(&self, kind: Kind, namespace: &str, name: &str) -> Option<Arc<Object>> {
        match kind {
            Kind::Service => self.services.get(namespace, name).cloned(),
            _ => self.references.get(kind, namespace, name).cloned(),
        }
    }
}

/// What the kubelet knows of the pods it runs, for the userland of their containers (which
/// sees what the kubelet and the runtime set up, not the store).
impl Kubelet {
    /// The objects it knows of (see [`KnownObjects`]).
    pub fn objects(&self) -> KnownObjects<'_> {
        KnownObjects { services: &self.services, references: &self.references }
    }

    /// A pod bound to this node, as its informer last saw it.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<Arc<Object>> {
        self.pods.get(namespace, name).cloned()
    }

    /// The pods bound to this node, as its informer last saw them.
    pub fn pods(&self) -> impl Iterator<Item = &Arc<Object>> + '_ {
        self.pods.cache.values()
    }

    /// The files it wrote into a pod's ConfigMap, Secret and downward API volumes, by volume,
    /// once they are set up.
    pub fn volume_files(&self, namespace: &str, pod: &str) -> Option<&volumes::Mounted> {
        self.workers.get(&cache_key(namespace, pod))?.1.mounted()
    }

    /// What each container of a pod wrote by `now` (absolute path → content), with its spec:
    /// what a volume the containers share shows the others.
    pub fn written_files(
        &self,
        namespace: &str,
        pod: &str,
        now: Time,
    ) -> Vec<(Arc<crate::api::Container>, BTreeMap<String, String>)> {
        self.workers.get(&cache_key(namespace, pod)).map(|(_, w)| w.written(now)).unwrap_or_default()
    }

    /// The node directory behind a pod's hostPath or claim volume (a claim's: its bound
    /// volume's path), as far as the kubelet knows it.
    pub fn volume_host_dir(&self, namespace: &str, volume: &crate::api::NamedItem) -> Option<String> {
        if let Some(path) = volume.get("hostPath").and_then(|h| h.get("path")).and_then(|p| p.as_str()) {
            return Some(path.trim_end_matches('/').to_string());
        }
        let claim = volume.get("persistentVolumeClaim")?.get("claimName")?.as_str()?;
        let Some(Object::PersistentVolumeClaim(c)) =
            self.references.get(Kind::PersistentVolumeClaim, namespace, claim).map(|o| &**o)
        else {
            return None;
        };
        match self.references.get(Kind::PersistentVolume, "", &c.spec.volume_name).map(|o| &**o) {
            Some(Object::PersistentVolume(pv)) => pv.host_dir().map(|d| d.trim_end_matches('/').to_string()),
            _ => None,
        }
    }

    /// The files on the node under `dir`, by their path inside it.
    pub fn disk_files<'a>(&'a self, dir: &str) -> impl Iterator<Item = (&'a str, &'a String)> + 'a {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let skip = prefix.len();
        self.disk
            .range(prefix.clone()..)
            .take_while(move |(k, _)| k.starts_with(&prefix))
            .map(move |(k, v)| (&k[skip..], v))
    }

    /// Keeps on the node what a pod's containers wrote into its hostPath and claim volumes.
    fn keep_written(&mut self, key: &str, now: Time) {
        let Some((_, worker)) = self.workers.get(key) else { return };
        if worker.persistent_volumes().is_empty() {
            return;
        }
        let namespace = key.split('/').next().unwrap_or_default().to_string();
        let dirs: Vec<(String, String)> = worker
            .persistent_volumes()
            .iter()
            .filter_map(|v| {
                let name = v.get("name")?.as_str()?.to_string();
                Some((name, self.volume_host_dir(&namespace, v)?))
            })
            .collect();
        let mut kept = Vec::new();
        for (spec, files) in worker.written(now) {
            for mount in &spec.volume_mounts {
                let (Some(name), Some(at)) =
                    (mount.get("name").and_then(|n| n.as_str()), mount.get("mountPath").and_then(|p| p.as_str()))
                else {
                    continue;
                };
                let Some((_, dir)) = dirs.iter().find(|(n, _)| n == name) else { continue };
                let at = format!("{}/", at.trim_end_matches('/'));
                for (path, content) in &files {
                    if let Some(rest) = path.strip_prefix(&at) {
                        kept.push((format!("{dir}/{rest}"), content.clone()));
                    }
                }
            }
        }
        self.disk.extend(kept);
    }

    /// The variables a container started with, when some came from ConfigMaps or Secrets.
    pub fn container_env(&self, namespace: &str, pod: &str, container: &str) -> Option<&[(String, String)]> {
        self.workers.get(&cache_key(namespace, pod))?.1.started_env(container)
    }

    /// Whether a pod waiting on a missing ConfigMap or Secret (a volume's back-off, or a
    /// container that could not be configured) would now get past it, by `horizon`.
    fn references_arrived(&self, horizon: Time) -> bool {
        let objects = self.objects();
        self.blocked.iter().any(|key| {
            let Some((_, w)) = self.workers.get(key) else { return false };
            if w.next_wakeup().is_none_or(|t| t > horizon) {
                return false;
            }
            let Some(pod) = self.pods.cache.get(key).and_then(|o| o.as_pod()) else { return false };
            (w.mount_waiting() && volumes::mount(&objects, pod).is_ok())
                || w.config_waiting().any(|c| env::config_error(&objects, pod, c).is_none())
        })
    }
}

/// Static pods: what the kubelet runs from manifest files on its node, with no API object
/// behind them. It publishes each as a mirror pod (read-only, owned by the Node) so the API
/// shows it, and re-creates the mirror whenever it is deleted.
impl Kubelet {
    /// Whether a pod it runs will change on its own by `horizon`, or a pod bound to it has no
    /// worker yet.
    fn busy_before(&self, horizon: Time) -> bool {
        self.workers.values().any(|(_, w)| w.busy(horizon))
            || self.manifest_check_at.is_some_and(|t| t <= horizon)
            || self
                .pods
                .cache
                .iter()
                .any(|(k, o)| !self.workers.contains_key(k) && o.as_pod().is_some_and(|p| !p.is_terminal()))
    }

    /// Reads the manifests as the kubelet's file source does: the pod is named after the node,
    /// bound to it, tolerates every NoExecute taint, and its uid is the hash of the manifest.
    fn read_static_pods(&mut self, manifests: &[Pod], now: Time) {
        self.static_pods.clear();
        for manifest in manifests {
            let mut pod = manifest.clone();
            let hash = manifest_hash(manifest, &self.config.name);
            let meta = &mut pod.metadata;
            meta.name = format!("{}-{}", meta.name, self.config.name.to_lowercase());
            if meta.namespace.is_empty() {
                meta.namespace = "default".into();
            }
            meta.uid = hash.clone();
            for (k, v) in [
                ("kubernetes.io/config.hash", hash),
                ("kubernetes.io/config.seen", rfc3339_nano(now)),
                ("kubernetes.io/config.source", "file".to_string()),
            ] {
                meta.annotations.insert(k.to_string(), v);
            }
            let spec = Arc::make_mut(&mut pod.spec);
            spec.node_name = self.config.name.clone();
            let everything = |t: &Toleration| t.key.is_empty() && t.operator.as_deref() == Some("Exists");
            if !spec.tolerations.iter().any(|t| everything(t) && t.effect == "NoExecute") {
                spec.tolerations.push(Toleration {
                    operator: Some("Exists".into()),
                    effect: "NoExecute".into(),
                    ..Default::default()
                });
            }
            self.static_pods.insert(cache_key(&pod.metadata.namespace, &pod.metadata.name), pod);
        }
    }

    /// Makes sure each static pod has a current mirror pod: creates a missing one, and deletes
    /// one that is being deleted (or is a stale copy) so that it can be created afresh.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn sync_static_pods(&mut self, ctx: &mut Ctx) {
        if !self.registered || self.node_uid.is_empty() {
            return;
        }
        let wanted: Vec<(String, Pod)> = self.static_pods.iter().map(|(k, p)| (k.clone(), p.clone())).collect();
        for (key, pod) in wanted {
            let hash = pod.metadata.uid.clone();
            match self.pods.cache.get(&key).and_then(|o| o.as_pod()) {
                None => {
                    let mut mirror = pod;
                    mirror.metadata.uid.clear();
                    mirror.metadata.annotations.insert(MIRROR_POD_ANNOTATION.into(), hash);
                    mirror.metadata.owner_references = vec![OwnerReference {
                        api_version: "v1".into(),
                        kind: "Node".into(),
                        name: self.config.name.clone(),
                        uid: self.node_uid.clone(),
                        controller: Some(true),
                        block_owner_deletion: None,
                    }]
                    .into();
                    if let Ok(stored) = ctx.call_object(Request::create(Object::Pod(mirror))) {
                        self.pods.assume(stored);
                        if !self.workers.contains_key(&key) {
                            self.fresh_static.push(key);
                        }
                    }
                }
                Some(mirror) => {
                    let is_mirror = mirror.metadata.annotations.contains_key(MIRROR_POD_ANNOTATION);
                    let current = mirror.metadata.annotations.get(MIRROR_POD_ANNOTATION) == Some(&hash);
                    if is_mirror && (mirror.metadata.deletion_timestamp.is_some() || !current) {
                        let (ns, name) = (mirror.metadata.namespace.clone(), mirror.metadata.name.clone());
                        ctx.decide(|| format!("deleting mirror pod {ns}/{name}: the static pod keeps running"));
                        let mut req = Request::delete(Kind::Pod, &ns, &name);
                        req.grace_period_seconds = Some(0);
                        let _ = ctx.call(req);
                    }
                }
            }
        }
    }
}

/// A static pod's uid and `kubernetes.io/config.hash`: a hash of its manifest, the node's name
/// and the source, as 32 hex digits (upstream uses MD5; any stable digest serves).
fn manifest_hash(manifest: &Pod, node: &str) -> String {
    let text = format!("{}{node}file", serde_json::to_string(manifest).unwrap_or_default());
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in text.bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    format!("{h:032x}")
}

/// Go's RFC3339Nano layout: fractional seconds without trailing zeros.
fn rfc3339_nano(t: Time) -> String {
    let micros = t.rfc3339_micros();
    let (whole, frac) = micros.trim_end_matches('Z').split_once('.').unwrap_or((&micros, ""));
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { format!("{}Z", whole.trim_end_matches('Z')) } else { format!("{whole}.{frac}Z") }
}

impl Component for Kubelet {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.started_at = ctx.now;
        self.lifecycle.push((ctx.now, true));
        self.manifest_check_at = None;
        self.reload_static_pods(ctx);
        self.register(ctx);
        self.renew_lease(ctx);
        let _ = self.pods.start(ctx);
        let _ = self.node.start(ctx);
        let _ = self.services.start(ctx);
        self.references.restart(ctx);
        self.relisted_without_pods |= self.workers.keys().any(|k| !self.pods.cache.contains_key(k));
        self.resync_all = true;
        Some(ctx.now)
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        if !self.registered {
            self.register(ctx);
        }
        self.sync_informers(ctx);
        let mut touched = self.sync_pods(ctx);
        // A pod whose ConfigMap or Secret changed is synced again only on its own schedule
        // (its back-off, its periodic sync): the change is read from the caches then.
        let _ = self.references.sync(ctx);
        if self.manifest_check_at.is_some_and(|t| ctx.now >= t) {
            self.manifest_check_at = None;
            self.reload_static_pods(ctx);
        }
        self.sync_static_pods(ctx);
        touched.append(&mut self.fresh_static);
        if std::mem::take(&mut self.resync_all) {
            touched.extend(self.pods.cache.keys().map(String::from));
        }
        for key in self.due(touched, ctx.now) {
            self.step_pod(&key, ctx);
        }
        ctx.cause = None;
        if ctx.now >= self.lease_due {
            self.renew_lease(ctx);
            // A condition that is not what the kubelet sees is reported at once, not at the
            // next periodic report (the kubelet's status loop compares every 10 s).
            let node = self.node.get("", &self.config.name);
            let ready = node.and_then(|n| n.as_node()).is_none_or(|n| n.readiness() == "Ready");
            if !ready && self.registered {
                self.status_due = ctx.now;
            }
        }
        if ctx.now >= self.status_due {
            self.report_node_status(ctx);
        }
        // Only workers whose pod is in the cache can be stepped; a static pod whose mirror pod
        // is gone (and could not be created again) retries the mirror each second instead.
        let next_worker = self.next_worker_wakeup();
        let mirror_retry =
            self.static_pods.keys().any(|k| !self.pods.cache.contains_key(k)).then(|| ctx.now + Duration::seconds(1));
        self.unsynced.retain(|k| self.pods.cache.contains_key(k));
        let status_retry = (!self.unsynced.is_empty()).then(|| ctx.now + STATUS_SYNC_PERIOD);
        let next = [
            Some(self.lease_due),
            Some(self.status_due),
            next_worker,
            mirror_retry,
            status_retry,
            self.manifest_check_at,
        ]
        .into_iter()
        .flatten()
        .min();
        next.map(|t| t.max(ctx.now + Duration::millis(1)))
    }

    fn busy_in(&self, api_answers: bool, horizon: Time) -> bool {
        // A pod's loop waiting for a name that now resolves (CoreDNS, reached through this
        // node's rules, answers it) ends at its next check; a status write that failed is sent
        // again (unless etcd is down: then every write fails).
        let (node, server) = (self.config.name.as_str(), crate::api::well_known::KUBE_DNS_IP);
        self.busy_before(horizon)
            || self.references_arrived(horizon)
            || (!self.unsynced.is_empty() && api_answers)
            || self.workers.iter().any(|(key, (_, w))| {
                let namespace = key.split('/').next().unwrap_or_default();
                w.waiting_for().any(|name| self.network.resolve(node, server, name, namespace).is_ok())
            })
    }

    fn busy(&self) -> bool {
        self.busy_before(Time(u64::MAX))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn informers(&self) -> Vec<&Informer> {
        let mut out = vec![&self.pods, &self.node, &self.services];
        out.extend(self.references.informers());
        out
    }
}

/// The call to the container runtime an event of the kubelet's reports, as the decision the
/// record keeps before it (`containerd: pull image "nginx:1.25"`, `containerd: start container
/// nginx`): what the map draws as a message from the kubelet to containerd.
fn runtime_call(reason: &str, message: &str, field_path: &str) -> Option<String> {
    let container = field_path.split_once('{').and_then(|(_, rest)| rest.strip_suffix('}')).unwrap_or("");
    let prefix = RUNTIME_PREFIX;
    match reason {
        "Pulling" => {
            let image = message.split('"').nth(1)?;
            Some(format!("{prefix}pull image \"{image}\""))
        }
        "Created" if !container.is_empty() => Some(format!("{prefix}create container {container}")),
        "Started" if !container.is_empty() => Some(format!("{prefix}start container {container}")),
        "Killing" if !container.is_empty() => Some(format!("{prefix}stop container {container}")),
        _ => None,
    }
}
