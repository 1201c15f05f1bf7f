//! The cluster: one world holding the virtual clock, the random source, the record, the API
//! server and every component, and the agenda that decides who runs next.
//!
//! Components run when a watch notification reaches them (a moment after the write that
//! caused it) or when a timer they asked for is due. Nothing else moves the world, so the
//! same seed and the same commands always replay the same cluster.

pub mod bootstrap;
pub mod container_output;
pub mod control_plane;
pub mod ingress;
pub mod kubelet_proxy;
pub mod metrics;
pub mod network;
mod operators;
pub mod policy;
pub mod rbac_policy;
pub mod static_components;

use crate::api::{Kind, Namespace, Object, ObjectMeta};
use crate::apiserver::authorization::Identity;
use crate::apiserver::{ApiServer, Env, Reply, Request, Status};
use crate::client::component::{Component, Ctx, EventRecorder};
use crate::client::shared_informer::InformerFactory;
use crate::controllers::ControllerLoop;
use crate::controllers::deployment::DeploymentController;
use crate::controllers::endpoints::EndpointsController;
use crate::controllers::endpointslice::EndpointSliceController;
use crate::controllers::garbage_collector::GarbageCollector;
use crate::controllers::namespace::NamespaceController;
use crate::controllers::node_lifecycle::NodeLifecycleController;
use crate::controllers::replicaset::ReplicaSetController;
use crate::controllers::serviceaccount::ServiceAccountController;
use crate::controllers::taint_eviction::TaintEvictionController;
use crate::kubelet::{Kubelet, NodeConfig};
use crate::proxy::KubeProxy;
use crate::record::{ComponentId, Record};
use crate::sim::{Duration, Rng, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// How long a watch notification takes to reach its watcher.
pub const WATCH_LATENCY: Duration = Duration::millis(1);
/// The longest "run until settled" goes before giving up (a crash loop never settles).
pub const SETTLE_LIMIT: Duration = Duration::minutes(15);

#[derive(Clone, Debug, PartialEq)]
pub struct ClusterConfig {
    pub seed: u64,
    pub workers: u32,
    pub worker_cpu_milli: i64,
    pub worker_memory_bytes: i64,
    pub worker_max_pods: i64,
    /// Keep the record of requests and notifications (off for large benchmarks).
    pub record: bool,
    /// Keep Events in an etcd of their own, as large clusters do (kube-apiserver's
    /// `--etcd-servers-overrides=/events#…`; see [`crate::apiserver::events_etcd`]). Off by
    /// default: a kubeadm cluster keeps them with everything else, where `etcdctl` shows them.
    pub events_etcd: bool,
    /// How many control-plane nodes (1; 3 is kubeadm's stacked high-availability topology:
    /// see [`control_plane`]). Each runs an etcd member: with more than one, etcd is a Raft group.
    pub control_planes: u32,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            seed: 1,
            workers: 3,
            worker_cpu_milli: 4000,
            worker_memory_bytes: 8 << 30,
            worker_max_pods: 110,
            record: true,
            events_etcd: false,
            control_planes: 1,
        }
    }
}

/// What kind of component a slot holds, as the page groups them (`CoreDns`: kubeadm's DNS
/// add-on behind the `kube-dns` Service).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    ApiServer,
    Scheduler,
    Controller {
        name: String,
    },
    Kubelet {
        node: String,
    },
    KubeProxy {
        node: String,
    },
    /// The CNI plugin's agent on a node (`calico-node`), which enforces NetworkPolicies.
    Cni {
        node: String,
    },
    CoreDns,
    /// An add-on that runs as pods and works the API like a controller, drawn beside the
    /// control plane with CoreDNS (`local-path-provisioner`).
    AddOn {
        name: String,
    },
}

impl Role {
    /// The name of the control loop this component runs, for a controller or an add-on.
    pub fn control_loop(&self) -> Option<&str> {
        match self {
            Role::Controller { name } | Role::AddOn { name } => Some(name),
            _ => None,
        }
    }
}

struct Slot {
    name: String,
    user: String,
    role: Role,
    component: Option<Box<dyn Component>>,
    started: bool,
    running: bool,
    wake_at: Option<Time>,
    /// The component is busy until then: it is not woken sooner.
    not_before: Time,
    recorder: EventRecorder,
    rng: Rng,
    /// Whether RBAC judges its requests as its user's (a workload's process, such as an
    /// operator, as its service account); the control plane acts under its bootstrap policy.
    judged: bool,
}

pub struct Cluster {
    now: Time,
    /// The API server's stream of chance; each component has its own in its slot.
    api_rng: Rng,
    pub record: Record,
    api: ApiServer,
    slots: Vec<Slot>,
    agenda: BinaryHeap<Reverse<(Time, u64, u32)>>,
    agenda_seq: u64,
    config: ClusterConfig,
    /// The image registry every node pulls from; `sim image break` changes what it serves.
    registry: crate::kubelet::images::Registry,
    /// When set, every request kubectl sends is kept here with its answer (`kubectl -v=6`).
    pub client_log: Option<Vec<ClientCall>>,
    /// The namespace of kubectl's kubeconfig context (`kubectl config set-context --current
    /// --namespace=...`); `default` when unset.
    pub context_namespace: Option<String>,
    /// Whom kubectl's requests impersonate while a command with `--as`/`--as-group` runs.
    pub acting_as: Option<Identity>,
    /// While a lesson's check looks: kubectl's requests that kept it waiting do not run the
    /// clock on (a look must leave the cluster as it was).
    pub looking: bool,
    /// kube-controller-manager's shared informers, one cache per kind for all its controllers.
    pub controller_informers: InformerFactory,
    /// When etcd next looks for expired leases (Events past `--event-ttl`).
    next_lease_sweep: Time,
    /// When kube-apiserver's etcd compactor next runs.
    next_compaction: Time,
    /// What a pod's DNS query reaches: its node's kube-proxy rules, CoreDNS behind them.
    dns: crate::dns::Network,
    /// etcdctl in the etcd pod (`kubectl exec … -- etcdctl`), given by the shell above, which
    /// holds the etcdctl the sandbox's own command line runs.
    pub etcdctl: Option<EtcdctlFn>,
    /// metrics-server's scrapes and the APIServices' availability checks (see [`metrics`]).
    metrics: metrics::Metrics,
    /// What runs on each control-plane node (see [`control_plane`]).
    control_planes: Vec<control_plane::Instance>,
    /// Lines control-plane components printed, waiting for their containers to start:
    /// node, container, when, line.
    component_logs: Vec<(String, &'static str, Time, String)>,
}

/// etcdctl over the store's read-only handle: stdout, stderr, exit code.
pub type EtcdctlFn = fn(crate::apiserver::inspect::Inspect<'_>, &[String]) -> (String, String, i32);

/// How often etcd deletes the keys of expired leases. kube-apiserver attaches an Event to a
/// lease granted up to a minute earlier and lengthens its TTL by that minute, so an Event goes
/// between one hour and one hour and a minute after its last write; sweeping once a virtual
/// minute keeps it in that window and off every step's path.
pub const LEASE_SWEEP: Duration = Duration::minutes(1);

/// When a job that runs at every multiple of `every` and was next due at `next` is due again,
/// if it is due by `now`: the next multiple after `now`.
fn due(now: Time, next: Time, every: Duration) -> Option<Time> {
    (now >= next).then(|| Time((now.0 / every.0).saturating_add(1).saturating_mul(every.0)))
}

/// That no two objects in `etcd` share a resourceVersion and none is newer than the store (or
/// than the revision that wrote it); collects their uids.
fn check_versions(etcd: &crate::etcd::Etcd, problems: &mut Vec<String>, uids: &mut std::collections::HashSet<String>) {
    let revision = etcd.revision();
    let mut seen_rv = std::collections::HashMap::new();
    for (key, kv) in etcd.range("/registry/") {
        let rv: i64 = kv.value.meta().resource_version.parse().unwrap_or(-1);
        if rv <= 0 || rv > revision || rv != kv.mod_revision {
            problems.push(format!(
                "{key}: resourceVersion {rv} (store revision {revision}, written at {})",
                kv.mod_revision
            ));
        }
        if let Some(other) = seen_rv.insert(rv, key) {
            problems.push(format!("{key} and {other} share resourceVersion {rv}"));
        }
        uids.insert(kv.value.meta().uid.clone());
    }
}

/// One request kubectl sent and what came back, for `-v` logging.
#[derive(Clone, Debug)]
pub struct ClientCall {
    pub request: Request,
    pub result: Result<Reply, crate::apiserver::Status>,
    /// How long the API server kept the request waiting (a webhook, etcd's timeout).
    pub waited: Duration,
}

impl Cluster {
    /// The default cluster: a control-plane node and `config.workers` workers.
    pub fn new(config: ClusterConfig) -> Cluster {
        let mut cluster = Cluster {
            now: Time::ZERO,
            api_rng: Rng::stream(config.seed, "kube-apiserver"),
            record: Record::with_enabled(config.record),
            api: ApiServer::new(),
            slots: Vec::new(),
            agenda: BinaryHeap::new(),
            agenda_seq: 0,
            config: config.clone(),
            registry: Default::default(),
            client_log: None,
            context_namespace: None,
            acting_as: None,
            looking: false,
            controller_informers: InformerFactory::default(),
            next_lease_sweep: Time::ZERO + LEASE_SWEEP,
            next_compaction: Time::ZERO + crate::apiserver::compactor::COMPACTION_INTERVAL,
            dns: crate::dns::Network::default(),
            etcdctl: None,
            metrics: Default::default(),
            control_planes: Vec::new(),
            component_logs: Vec::new(),
        };
        if config.events_etcd {
            cluster.api.keep_events_apart(config.seed);
        }
        if config.control_planes > 1 {
            let host = crate::api::well_known::control_plane_endpoint(config.control_planes, config.workers);
            cluster.api.endpoint = Some(format!("{host}:{}", crate::api::well_known::API_SERVER_PORT));
            let members = crate::etcd::raft::members_of(config.control_planes, config.workers);
            cluster.api.etcd_bypass().form_group(&members, config.seed, cluster.now);
        }
        cluster.add_slot("kubectl", "kubernetes-admin", Role::User, None, "");
        cluster.add_slot("kube-apiserver", "system:apiserver", Role::ApiServer, None, "");
        for ns in ["default", "kube-node-lease", "kube-public", "kube-system"] {
            let object = Object::Namespace(Namespace {
                metadata: ObjectMeta { name: ns.into(), ..Default::default() },
                status: crate::api::namespace::NamespaceStatus { phase: "Active".into(), ..Default::default() },
                ..Default::default()
            });
            let _ = cluster.request_as(ComponentId::API_SERVER, Request::create(object));
        }
        // The post-start hook's classes draw their uids from a stream of their own, so that
        // every later name and uid is what it was before the hook existed.
        let api_rng = std::mem::replace(&mut cluster.api_rng, Rng::stream(config.seed, "priority-classes"));
        crate::cluster::bootstrap::system_priority_classes(&mut |req| cluster.request_as(ComponentId::API_SERVER, req));
        cluster.api_rng = api_rng;
        crate::cluster::rbac_policy::create(&mut |req| cluster.request_as(ComponentId::API_SERVER, req));
        crate::cluster::bootstrap::cluster_services(&mut |req| cluster.request_as(ComponentId::API_SERVER, req));
        let endpoint = crate::api::well_known::control_plane_endpoint(config.control_planes, config.workers);
        crate::cluster::bootstrap::kube_system_addons(&endpoint, &mut |req| {
            cluster.request_as(ComponentId::API_SERVER, req)
        });
        crate::cluster::bootstrap::coredns_rbac(&mut |req| cluster.request_as(ComponentId::API_SERVER, req));
        crate::cluster::bootstrap::kind_storage(&mut |req| cluster.request_as(ComponentId::API_SERVER, req));
        // The CNI plugin's objects, too, draw from a stream of their own.
        let api_rng = std::mem::replace(&mut cluster.api_rng, Rng::stream(config.seed, "cni-plugin"));
        crate::cluster::bootstrap::cni_plugin(&mut |req| cluster.request_as(ComponentId::API_SERVER, req));
        cluster.api_rng = api_rng;
        crate::cluster::bootstrap::metrics_server(&mut |req| cluster.request_as(ComponentId::API_SERVER, req));
        crate::cluster::bootstrap::ingress_nginx(&mut |req| cluster.request_as(ComponentId::API_SERVER, req));
        for node in control_plane::control_plane_names(config.control_planes) {
            cluster.add_control_plane_components(&node);
        }
        cluster.add_controller("node-lifecycle-controller", ControllerLoop::new(NodeLifecycleController::default()));
        cluster.add_controller("taint-eviction-controller", ControllerLoop::new(TaintEvictionController::default()));
        cluster.add_controller("garbage-collector", ControllerLoop::new(GarbageCollector::default()));
        cluster.add_controller("deployment-controller", ControllerLoop::new(DeploymentController::default()));
        cluster.add_controller("replicaset-controller", ControllerLoop::new(ReplicaSetController::default()));
        cluster.add_controller(
            "replication-controller",
            ControllerLoop::new(ReplicaSetController::for_replication_controllers()),
        );
        cluster
            .add_controller("job-controller", ControllerLoop::new(crate::controllers::job::JobController::default()));
        cluster.add_controller(
            "cronjob-controller",
            ControllerLoop::new(crate::controllers::cronjob::CronJobController::default()),
        );
        cluster.add_controller(
            "daemonset-controller",
            ControllerLoop::new(crate::controllers::daemonset::DaemonSetController::default()),
        );
        cluster.add_controller(
            "statefulset-controller",
            ControllerLoop::new(crate::controllers::statefulset::StatefulSetController::default()),
        );
        cluster.add_controller(
            "disruption-controller",
            ControllerLoop::new(crate::controllers::disruption::DisruptionController::default()),
        );
        cluster.add_controller("endpointslice-controller", ControllerLoop::new(EndpointSliceController::default()));
        cluster.add_controller("endpoints-controller", ControllerLoop::new(EndpointsController::default()));
        cluster.add_controller("namespace-controller", ControllerLoop::new(NamespaceController::default()));
        cluster.add_controller("serviceaccount-controller", ControllerLoop::new(ServiceAccountController::default()));
        cluster.add_controller(
            "persistentvolume-controller",
            ControllerLoop::new(crate::controllers::persistentvolume::PersistentVolumeController::default()),
        );
        cluster.add_controller(
            "pvc-protection-controller",
            ControllerLoop::new(crate::controllers::storage_protection::PvcProtectionController::default()),
        );
        cluster.add_controller(
            "pv-protection-controller",
            ControllerLoop::new(crate::controllers::storage_protection::PvProtectionController::default()),
        );
        cluster.add_controller(
            "horizontal-pod-autoscaler",
            ControllerLoop::new(crate::controllers::hpa::HpaController::default()),
        );
        cluster.add_control_plane_nodes();
        for i in 1..=config.workers {
            let name = format!("worker-{i}");
            let node =
                NodeConfig::new(&name, i, config.worker_cpu_milli, config.worker_memory_bytes, config.worker_max_pods);
            cluster.add_node(node);
        }
        let coredns = Box::new(crate::dns::CoreDns::new(cluster.dns.clone()));
        cluster.add_component("coredns", crate::dns::coredns::USER, Role::CoreDns, coredns, "coredns", "");
        let provisioner =
            Box::new(ControllerLoop::new(crate::controllers::local_path::LocalPathProvisioner::default()));
        let name = "local-path-provisioner";
        let role = Role::AddOn { name: name.into() };
        let source = "rancher.io/local-path_local-path-provisioner";
        cluster.add_component(name, crate::cluster::bootstrap::LOCAL_PATH_USER, role, provisioner, source, "");
        let backend = cluster.api.metrics.clone();
        let server = Box::new(ControllerLoop::new(crate::controllers::metrics_server::MetricsServer::new(backend)));
        let role = Role::AddOn { name: "metrics-server".into() };
        let user = crate::cluster::bootstrap::METRICS_SERVER_USER;
        let id = cluster.add_component("metrics-server", user, role, server, "metrics-server", "");
        cluster.api.metrics.set_server(ComponentId(id));
        cluster.api.webhook_network = Some(crate::kubelet::admission_webhook::call);
        cluster.add_ingress_components();
        cluster
    }

    fn add_slot(
        &mut self,
        name: &str,
        user: &str,
        role: Role,
        component: Option<Box<dyn Component>>,
        source: &str,
    ) -> u32 {
        let host = match &role {
            Role::Kubelet { node } => node.clone(),
            _ => String::new(),
        };
        let recorder = match role {
            // The scheduler reports through events.k8s.io, which has no correlator.
            Role::Scheduler => EventRecorder::new(source, &host).without_correlation(),
            _ => EventRecorder::new(source, &host),
        };
        self.slots.push(Slot {
            name: name.to_string(),
            user: user.to_string(),
            role,
            component,
            started: false,
            running: true,
            judged: false,
            wake_at: None,
            not_before: Time(0),
            recorder,
            rng: Rng::stream(self.config.seed, name),
        });
        (self.slots.len() - 1) as u32
    }

    fn add_component(
        &mut self,
        name: &str,
        user: &str,
        role: Role,
        component: Box<dyn Component>,
        source: &str,
        _host: &str,
    ) -> u32 {
        let idx = self.add_slot(name, user, role, Some(component), source);
        self.wake(idx, self.now);
        idx
    }

    /// Adds a controller of kube-controller-manager, with its own service account; it shares
    /// the manager's informers.
    fn add_controller(&mut self, name: &str, controller: ControllerLoop) -> u32 {
        let user = format!("system:serviceaccount:kube-system:{name}");
        let component = Box::new(controller.in_manager(&self.controller_informers));
        // The disruption controller reports as the manager itself, as upstream's does.
        let source = if name == "disruption-controller" { "controllermanager" } else { name };
        self.add_component(name, &user, Role::Controller { name: name.to_string() }, component, source, "")
    }

    /// Adds a node: its kubelet starts, registers the Node and begins heartbeating.
    pub fn add_node(&mut self, config: NodeConfig) -> u32 {
        let name = config.name.clone();
        let user = format!("system:node:{name}");
        let role = Role::Kubelet { node: name.clone() };
        self.add_component(
            &format!("kube-proxy ({name})"),
            "system:kube-proxy",
            Role::KubeProxy { node: name.clone() },
            Box::new(KubeProxy::new(&name).with_network(self.dns.clone())),
            "kube-proxy",
            "",
        );
        let cni = Box::new(crate::cni::CalicoNode::new(&name));
        let cni_role = Role::Cni { node: name.clone() };
        self.add_component(&format!("calico-node ({name})"), crate::cni::USER, cni_role, cni, crate::cni::NAME, "");
        let kubelet =
            Box::new(Kubelet::new(config).with_registry(self.registry.clone()).with_network(self.dns.clone()));
        self.add_component(&format!("kubelet ({name})"), &user, role, kubelet, "kubelet", "")
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn seed(&self) -> u64 {
        self.config.seed
    }

    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// The read-only window on the store for what only looks (views, etcdctl, lesson checks,
    /// invariant tests); see [`crate::apiserver::inspect`].
    pub fn inspect(&self) -> crate::apiserver::inspect::Inspect<'_> {
        crate::apiserver::inspect::Inspect::new(&self.api)
    }

    /// The components' names, indexed by `ComponentId`.
    pub fn component_name(&self, id: ComponentId) -> &str {
        self.slots.get(id.0 as usize).map_or("?", |s| s.name.as_str())
    }

    pub fn component_role(&self, id: ComponentId) -> Option<&Role> {
        self.slots.get(id.0 as usize).map(|s| &s.role)
    }

    /// A component's lanes and queued keys, for views (empty when it is stopped).
    pub fn component_state(&self, id: ComponentId) -> (Vec<String>, Vec<String>) {
        match self.slots.get(id.0 as usize).and_then(|s| s.component.as_deref()) {
            Some(c) => (c.lanes(), c.queued()),
            None => (Vec::new(), Vec::new()),
        }
    }

    pub fn component_ids(&self) -> impl Iterator<Item = ComponentId> + '_ {
        (0..self.slots.len() as u32).map(ComponentId)
    }

    /// A component of type `T`, to change how it behaves (faults): of several instances, the
    /// one that acts. It is woken to notice.
    pub fn component_mut<T: 'static>(&mut self) -> Option<&mut T> {
        let is = |s: &Slot| s.component.as_ref().is_some_and(|c| c.as_any().downcast_ref::<T>().is_some());
        let acts = |s: &Slot| is(s) && s.running && s.component.as_ref().is_some_and(|c| !c.standing_by());
        let idx = self.slots.iter().position(acts).or_else(|| self.slots.iter().position(is))?;
        self.wake(idx as u32, self.now);
        let component: &mut dyn Component = self.slots[idx].component.as_deref_mut()?;
        if component.inner_mut().is_some() {
            return component.inner_mut()?.downcast_mut::<T>();
        }
        let any: &mut dyn std::any::Any = component;
        any.downcast_mut::<T>()
    }

    /// A component's state, for views (e.g. the scheduler's reasons for a Pending pod): of
    /// several instances (one per control-plane node), the one that acts.
    pub fn component<T: 'static>(&self) -> Option<&T> {
        fn of<T: 'static>(s: &Slot) -> Option<&T> {
            s.component.as_ref()?.as_any().downcast_ref::<T>()
        }
        let acts = |s: &&Slot| s.running && s.component.as_ref().is_some_and(|c| !c.standing_by());
        self.slots.iter().filter(acts).find_map(of::<T>).or_else(|| self.slots.iter().find_map(of::<T>))
    }

    pub fn kubelet(&self, node: &str) -> Option<&Kubelet> {
        self.slots.iter().find_map(|s| {
            let k = s.component.as_ref()?.as_any().downcast_ref::<Kubelet>()?;
            (k.node_name() == node).then_some(k)
        })
    }

    /// Every node's kubelet.
    pub fn kubelets(&self) -> impl Iterator<Item = &Kubelet> + '_ {
        self.slots.iter().filter_map(|s| s.component.as_ref()?.as_any().downcast_ref::<Kubelet>())
    }

    /// The kubelet on `node`, to change what happens on its machine (`sim pod crash`). It is
    /// woken at once to notice.
    pub fn kubelet_mut(&mut self, node: &str) -> Option<&mut Kubelet> {
        let is_it = |s: &Slot| {
            s.component
                .as_ref()
                .and_then(|c| c.as_any().downcast_ref::<Kubelet>())
                .is_some_and(|k| k.node_name() == node)
        };
        let idx = self.slots.iter().position(is_it)?;
        self.wake(idx as u32, self.now);
        let component: &mut dyn Component = self.slots[idx].component.as_deref_mut()?;
        let any: &mut dyn std::any::Any = component;
        any.downcast_mut::<Kubelet>()
    }

    /// The kubelet on `node`, without waking it (the cluster filling in what its containers
    /// printed, right after it ran).
    pub(crate) fn kubelet_unwoken_mut(&mut self, node: &str) -> Option<&mut Kubelet> {
        self.slots.iter_mut().find_map(|s| {
            let component: &mut dyn Component = s.component.as_deref_mut()?;
            let any: &mut dyn std::any::Any = component;
            any.downcast_mut::<Kubelet>().filter(|k| k.node_name() == node)
        })
    }

    /// The path of a pod's DNS queries, to CoreDNS's answers.
    pub fn dns(&self) -> &crate::dns::Network {
        &self.dns
    }

    /// The registry the nodes pull from (`sim image break|fix`).
    pub fn registry(&self) -> &crate::kubelet::images::Registry {
        &self.registry
    }

    /// Every node's CNI agent (`calico-node`), whose rules decide which connections the pod
    /// network carries.
    pub fn cni_agents(&self) -> Vec<&crate::cni::CalicoNode> {
        self.slots
            .iter()
            .filter_map(|s| s.component.as_ref()?.as_any().downcast_ref::<crate::cni::CalicoNode>())
            .collect()
    }

    /// The kube-proxy on `node`, for `sim curl` and views.
    pub fn kube_proxy(&self, node: &str) -> Option<&KubeProxy> {
        self.slots.iter().find_map(|s| {
            let p = s.component.as_ref()?.as_any().downcast_ref::<KubeProxy>()?;
            (p.node_name() == node).then_some(p)
        })
    }

    fn wake(&mut self, idx: u32, at: Time) {
        let slot = &mut self.slots[idx as usize];
        let at = at.max(slot.not_before);
        if !slot.running || slot.wake_at.is_some_and(|w| w <= at) {
            return;
        }
        slot.wake_at = Some(at);
        self.agenda_seq += 1;
        self.agenda.push(Reverse((at, self.agenda_seq, idx)));
    }

    fn schedule_woken(&mut self) {
        let at = self.now + WATCH_LATENCY;
        for id in self.api.take_woken() {
            self.wake(id.0, at);
        }
    }

    /// When the next component will run, if any will.
    pub fn next_wakeup(&mut self) -> Option<Time> {
        while let Some(Reverse((at, _, idx))) = self.agenda.peek().copied() {
            if self.slots[idx as usize].wake_at == Some(at) {
                return Some(at);
            }
            self.agenda.pop();
        }
        None
    }

    /// The component that runs at the next `step`, and when (for benchmarks that measure
    /// where the time goes).
    pub fn next_due(&mut self) -> Option<(Time, ComponentId)> {
        let at = self.next_wakeup()?;
        self.agenda.peek().map(|Reverse((_, _, idx))| (at, ComponentId(*idx)))
    }

    /// Runs the next component that is due. Returns false when nothing is scheduled.
    pub fn step(&mut self) -> bool {
        let Some(at) = self.next_wakeup() else { return false };
        let Some(Reverse((_, _, idx))) = self.agenda.pop() else { return false };
        self.advance_clock(self.now.max(at));
        let slot = &mut self.slots[idx as usize];
        slot.wake_at = None;
        let managed_before = self.managed();
        self.route(ComponentId(idx));
        let slot = &mut self.slots[idx as usize];
        let Some(mut component) = slot.component.take() else { return true };
        let started = slot.started;
        let served = self.api.served_custom();
        slot.started = true;
        let next = {
            let slot = &mut self.slots[idx as usize];
            let mut ctx = Ctx::new(
                self.now,
                ComponentId(idx),
                &slot.user,
                &mut self.api,
                &mut slot.rng,
                &mut self.api_rng,
                &mut self.record,
                &mut slot.recorder,
            );
            ctx.judged = slot.judged;
            // The component's discovery: the custom resources the server lists.
            let _discovery = crate::api::custom::Discovery::install(served);
            if started { component.run(&mut ctx) } else { component.start(&mut ctx) }
        };
        // A kubelet that started containers leaves what their commands print for the cluster
        // to fill in, from the userland `kubectl exec` uses.
        let node = component
            .as_any()
            .downcast_ref::<Kubelet>()
            .filter(|k| k.has_unfilled())
            .map(|k| k.node_name().to_string());
        let slot = &mut self.slots[idx as usize];
        slot.not_before = component.busy_until().unwrap_or(self.now);
        slot.component = Some(component);
        if let Some(node) = node {
            container_output::fill(self, &node);
        }
        static_components::follow(self, idx);
        if let Some(at) = next {
            self.wake(idx, at.max(self.now));
        }
        self.after_control_plane_step(idx, managed_before);
        self.schedule_woken();
        true
    }

    /// Runs everything due within the next `d` of virtual time, then moves the clock there.
    pub fn advance(&mut self, d: Duration) {
        let target = self.now + d;
        self.advance_to_while(target, &mut || true);
    }

    /// What `advance` does to reach `target`, a step at a time, stopping after any step when
    /// `more` says so; whether it got there. Called again, it goes on where it stopped, and the
    /// pieces run the same steps as one `advance` (a long replay in slices).
    pub fn advance_to_while(&mut self, target: Time, more: &mut dyn FnMut() -> bool) -> bool {
        while self.next_wakeup().is_some_and(|t| t <= target) {
            self.step();
            if !more() {
                return false;
            }
        }
        self.advance_clock(target);
        true
    }

    /// Moves the clock to `to` (never back), and runs the API server's housekeeping that is due:
    /// the etcd compactor's round, etcd's sweep of keys whose lease ran out.
    fn advance_clock(&mut self, to: Time) {
        self.now = self.now.max(to);
        if let Some(next) = due(self.now, self.next_compaction, crate::apiserver::compactor::COMPACTION_INTERVAL) {
            self.next_compaction = next;
            self.as_api_server(|api, env| api.compact_history(env));
        }
        if let Some(next) = due(self.now, self.next_lease_sweep, LEASE_SWEEP) {
            self.next_lease_sweep = next;
            if self.as_api_server(|api, env| api.expire_events(env)) > 0 {
                self.schedule_woken();
            }
        }
        self.metrics_due();
        self.operators_due();
        if self.api.next_crd_work().is_some_and(|t| t <= self.now) {
            self.as_api_server(|api, env| api.apiextensions_due(env));
            self.schedule_woken();
        }
    }

    /// The custom resources the API server serves, as discovery lists them.
    pub fn served_custom(&self) -> std::sync::Arc<Vec<crate::api::custom::Served>> {
        self.api.served_custom()
    }

    /// Runs `f` as the API server's own housekeeping (no request caused it).
    fn as_api_server<R>(&mut self, f: impl FnOnce(&mut ApiServer, &mut Env) -> R) -> R {
        let mut env = Env {
            now: self.now,
            rng: &mut self.api_rng,
            record: &mut self.record,
            actor: ComponentId::API_SERVER,
            user: "system:apiserver",
            cause: None,
            identity: None,
        };
        f(&mut self.api, &mut env)
    }

    /// One move toward `deadline`, for commands that wait and look between moves (`rollout
    /// status`, `logs -f`, `get -w`): the next component due by then runs, or, when none is,
    /// the clock jumps to the deadline.
    pub fn step_toward(&mut self, deadline: Time) {
        match self.next_wakeup() {
            Some(t) if t <= deadline => {
                self.step();
            }
            _ => {
                let left = deadline.since(self.now);
                self.advance(left);
            }
        }
    }

    /// Whether any component has work under way that changes the cluster by `horizon`, or a
    /// notification is still in flight. A notification to a component whose worker is still
    /// busy with its last sync waits until the worker is free (`not_before`): a wake-up at
    /// or before then is work in flight too, however far off (a ReplicaSet controller that
    /// just went through 9,000 pods hears of the last one becoming ready 20 ms later).
    pub fn busy(&self, horizon: Time) -> bool {
        self.slots.iter().any(|s| self.slot_busy(s, horizon))
    }

    fn slot_busy(&self, s: &Slot, horizon: Time) -> bool {
        s.running
            && (s.component.as_ref().is_some_and(|c| c.busy_in(self.api.etcd_running(), horizon))
                || s.wake_at.is_some_and(|w| w <= (self.now + WATCH_LATENCY).max(s.not_before)))
    }

    /// The components [`Cluster::busy`] finds with work under way by `horizon`, by name.
    pub fn busy_components(&self, horizon: Time) -> Vec<String> {
        self.slots.iter().filter(|s| self.slot_busy(s, horizon)).map(|s| s.name.clone()).collect()
    }

    /// Runs until no component has work under way (or `limit` of virtual time has passed).
    /// Returns the virtual time it took.
    pub fn settle(&mut self, limit: Duration) -> Duration {
        self.settle_reporting(limit).0
    }

    /// [`Cluster::settle`], also naming the components that still had work when `limit` ran
    /// out (none when it settled).
    pub fn settle_reporting(&mut self, limit: Duration) -> (Duration, Vec<String>) {
        let start = self.now;
        let deadline = start + limit;
        let mut unsettled = Vec::new();
        loop {
            // A process that runs on past the limit (`sleep 3600`) is as settled as it gets.
            if !self.busy(deadline) {
                break;
            }
            match self.next_wakeup() {
                Some(t) if t <= deadline => {
                    self.step();
                }
                _ => {
                    unsettled = self.busy_components(deadline);
                    self.advance_clock(deadline);
                    break;
                }
            }
        }
        (self.now.since(start), unsettled)
    }

    /// The API server's warnings to the person at kubectl since they were last taken.
    pub fn take_api_warnings(&mut self) -> Vec<String> {
        self.api.take_warnings()
    }

    /// Sends a request as the person at the keyboard (kubectl). A request the API server kept
    /// waiting (a webhook's answer or timeout, etcd without a quorum) takes that long: the
    /// cluster runs on meanwhile, as under `sleep`, and kubectl has its answer after.
    pub fn request(&mut self, req: Request) -> Result<Reply, Status> {
        let logged = self.client_log.is_some().then(|| req.clone());
        let result = self.request_as(ComponentId::USER, req);
        let waited = self.api.take_user_wait();
        if let (Some(request), Some(log)) = (logged, self.client_log.as_mut()) {
            log.push(ClientCall { request, result: result.clone(), waited });
        }
        if waited > Duration::ZERO && !self.looking {
            self.advance(waited);
        }
        result
    }

    fn request_as(&mut self, actor: ComponentId, req: Request) -> Result<Reply, Status> {
        let user = self.slots.get(actor.0 as usize).map(|s| s.user.clone()).unwrap_or_default();
        // The person at kubectl is judged by RBAC, as whoever `--as` names when it is given.
        let identity =
            (actor == ComponentId::USER).then(|| self.acting_as.clone().unwrap_or_else(|| Identity::of(&user, &[])));
        self.route(actor);
        let mut env = Env {
            now: self.now,
            rng: &mut self.api_rng,
            record: &mut self.record,
            actor,
            user: &user,
            cause: None,
            identity,
        };
        let result = self.api.handle(req, &mut env);
        self.schedule_woken();
        result
    }

    /// Every stored object of a kind (all namespaces when `namespace` is empty), for views.
    pub fn objects(&self, kind: Kind, namespace: &str) -> Vec<Arc<Object>> {
        self.inspect().list(kind, namespace)
    }

    /// Checks what must always hold, returning every violation:
    /// no two objects share a resourceVersion and none is newer than the store; no node holds
    /// more than it can allocate. With `settled`, also: every owner reference resolves, and
    /// the running components' caches agree with the API.
    pub fn check_invariants(&self, settled: bool) -> Vec<String> {
        let mut problems = Vec::new();
        let mut uids = std::collections::HashSet::new();
        check_versions(self.inspect().etcd(), &mut problems, &mut uids);
        // Events kept apart have resourceVersions of their own etcd's.
        self.api.with_events_etcd(|etcd| check_versions(etcd, &mut problems, &mut uids));
        for node in self.objects(Kind::Node, "").iter().filter_map(|n| n.as_node().cloned()) {
            let pods: Vec<_> = self
                .objects(Kind::Pod, "")
                .into_iter()
                .filter(|p| p.as_pod().is_some_and(|p| p.spec.node_name == node.metadata.name && !p.is_terminal()))
                .collect();
            let (cpu, mem) = pods.iter().filter_map(|p| p.as_pod()).fold((0, 0), |(c, m), p| {
                let r = p.requests();
                (c + r.cpu_milli, m + r.memory_bytes)
            });
            let alloc = |r: &str| node.allocatable(r).map(|q| (q.milli(), q.value()));
            if let Some((cpu_alloc, _)) = alloc("cpu") {
                if cpu > cpu_alloc {
                    problems.push(format!("node {} has {cpu}m cpu requested of {cpu_alloc}m", node.metadata.name));
                }
            }
            if let Some((_, mem_alloc)) = alloc("memory") {
                if mem > mem_alloc {
                    problems.push(format!("node {} has {mem} bytes requested of {mem_alloc}", node.metadata.name));
                }
            }
            if let Some((_, max)) = alloc("pods") {
                if pods.len() as i64 > max {
                    problems.push(format!("node {} runs {} pods, at most {max}", node.metadata.name, pods.len()));
                }
            }
        }
        if settled {
            for (key, kv) in self.inspect().etcd().range("/registry/") {
                let meta = kv.value.meta();
                if meta.deletion_timestamp.is_some() {
                    continue;
                }
                for owner in &meta.owner_references {
                    if !uids.contains(&owner.uid) {
                        problems.push(format!(
                            "{key} is owned by {}/{} ({}), which is gone",
                            owner.kind, owner.name, owner.uid
                        ));
                    }
                }
            }
            for slot in self.slots.iter().filter(|s| s.running && s.started) {
                for informer in slot.component.iter().flat_map(|c| c.informers()) {
                    for d in informer.differences(self.inspect()) {
                        problems.push(format!("{}'s {:?} cache: {d}", slot.name, informer.kind));
                    }
                }
            }
        }
        problems
    }

    /// Stops a component's process: its watches close and it no longer runs.
    pub fn stop_component(&mut self, id: ComponentId) {
        if let Some(slot) = self.slots.get_mut(id.0 as usize) {
            slot.running = false;
            slot.wake_at = None;
        }
        self.api.close_watches_of(id);
        let now = self.now;
        if let Some(kubelet) = self.slots.get_mut(id.0 as usize).and_then(|s| {
            let component: &mut dyn Component = s.component.as_deref_mut()?;
            let any: &mut dyn std::any::Any = component;
            any.downcast_mut::<Kubelet>()
        }) {
            kubelet.stopped(now);
        }
    }

    /// Starts a stopped component's process again: it lists and watches afresh.
    pub fn start_component(&mut self, id: ComponentId) {
        if let Some(slot) = self.slots.get_mut(id.0 as usize) {
            if slot.running {
                return;
            }
            slot.running = true;
            slot.started = false;
            slot.not_before = Time(0);
        }
        self.wake(id.0, self.now);
    }

    /// The notifications waiting on one of kubectl's watches (`get -w`, `wait`): the stream
    /// the API server sends it.
    pub fn drain_watch(&mut self, id: crate::apiserver::WatchId) -> Vec<crate::apiserver::WatchEvent> {
        self.api.drain_watch(id)
    }

    /// Whether anything listens at the API server's address (it does not while etcd is
    /// stopped: see `sim etcd stop`). What a client finds out by connecting.
    /// Where clients reach the API, `host:port` (kubeadm's `controlPlaneEndpoint`): the
    /// control-plane node, or the load balancer in front of several.
    pub fn api_endpoint(&self) -> String {
        self.api.endpoint()
    }

    pub fn api_server_listening(&self) -> bool {
        self.api.etcd_running() && self.refusal(ComponentId::USER).is_none()
    }

    /// kubectl hangs up: every watch it opened closes.
    pub fn close_user_watches(&mut self) {
        self.api.close_watches_of(ComponentId::USER);
    }

    /// Runs `f` on the API server as the person at the keyboard would reach it, then wakes
    /// whoever it notified: for writes that go straight to etcd (`etcdctl put`, a restore).
    pub fn with_api<R>(&mut self, f: impl FnOnce(&mut ApiServer, &mut Env) -> R) -> R {
        let mut env = Env {
            now: self.now,
            rng: &mut self.api_rng,
            record: &mut self.record,
            actor: ComponentId::USER,
            user: "etcdctl",
            cause: None,
            identity: None,
        };
        let result = f(&mut self.api, &mut env);
        self.schedule_woken();
        result
    }

    pub fn is_running(&self, id: ComponentId) -> bool {
        self.slots.get(id.0 as usize).is_some_and(|s| s.running)
    }

    pub fn find_component(&self, role: &Role) -> Option<ComponentId> {
        self.slots.iter().position(|s| s.role == *role).map(|i| ComponentId(i as u32))
    }
}

/// For tests: a one-worker cluster that has run an nginx pod, `default/web`, for two minutes.
#[cfg(test)]
pub(crate) fn one_worker_running_web() -> Cluster {
    use crate::api::{Container, Pod};
    let mut cluster = Cluster::new(ClusterConfig { workers: 1, ..ClusterConfig::default() });
    cluster.settle(Duration::seconds(30));
    let mut pod = Pod::default();
    pod.metadata.name = "web".into();
    pod.metadata.namespace = "default".into();
    let container = Container { name: "web".into(), image: "nginx:1.25".into(), ..Default::default() };
    Arc::make_mut(&mut pod.spec).containers.push(container.into());
    cluster.request(Request::create(Object::Pod(pod))).expect("the pod is created");
    cluster.settle(Duration::minutes(2));
    cluster
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::component::Informer;

    #[test]
    fn a_binding_binds_the_same_whether_posted_as_json_or_as_the_scheduler_holds_it() {
        use crate::api::{Container, Pod};
        use crate::apiserver::{Body, binding_json};
        let mut cluster = Cluster::new(ClusterConfig { workers: 1, ..ClusterConfig::default() });
        cluster.settle(Duration::seconds(30));
        // Two pods no scheduler here places, bound by hand to the one worker.
        for name in ["by-json", "typed"] {
            let mut pod = Pod::default();
            pod.metadata.name = name.into();
            pod.metadata.namespace = "default".into();
            let spec = Arc::make_mut(&mut pod.spec);
            spec.scheduler_name = Some("my-scheduler".into());
            spec.containers
                .push(Container { name: "c".into(), image: "nginx:1.25".into(), ..Default::default() }.into());
            cluster.request(Request::create(Object::Pod(pod))).expect("the pod is created");
        }
        let node = "worker-1";
        let mut by_json = Request::bind("default", "by-json", node);
        by_json.body = Some(Body::Json(binding_json("default", "by-json", node)));
        let typed = Request::bind("default", "typed", node);
        assert_eq!(typed.body_json(), Some(binding_json("default", "typed", node)), "shown as the JSON it stands for");
        assert_eq!(
            binding_json("default", "typed", node),
            serde_json::json!({"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": "typed", "namespace": "default"},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
        );
        for req in [by_json, typed] {
            let name = req.name.clone();
            cluster.request(req).expect("bound");
            let pod = cluster.inspect().get(Kind::Pod, "default", &name).expect("the pod");
            let pod = pod.as_pod().expect("a pod");
            assert_eq!(pod.spec.node_name, node, "{name}");
            assert_eq!(pod.condition("PodScheduled").map(|c| &*c.status), Some("True"), "{name}");
        }
        let mut again = Request::bind("default", "typed", node);
        let refused = cluster.request(again.clone()).expect_err("bound already");
        assert_eq!(refused.message, "pod typed is already assigned to node \"worker-1\"");
        again.body = Some(Body::Binding { node: String::new() });
        let refused = cluster.request(again).expect_err("no target");
        assert!(refused.message.contains("target.name: Required value"), "{}", refused.message);
    }

    #[test]
    fn invariant_checks_catch_an_overfull_node_and_a_dangling_owner() {
        use crate::api::{Container, OwnerReference, Pod, Quantity};
        use crate::etcd::Etcd;
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.settle(Duration::seconds(30));
        assert_eq!(cluster.check_invariants(true), Vec::<String>::new());
        // Written straight into etcd, past every check the API server would make.
        let mut pod = Pod::default();
        pod.metadata.name = "huge".into();
        pod.metadata.namespace = "default".into();
        pod.metadata.uid = "u-huge".into();
        pod.metadata.owner_references.push(OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "gone".into(),
            uid: "u-gone".into(),
            controller: Some(true),
            block_owner_deletion: None,
        });
        let mut c = Container { name: "c".into(), image: "nginx".into(), ..Default::default() };
        c.resources.requests.insert("cpu".into(), Quantity::parse("64").unwrap());
        let spec = Arc::make_mut(&mut pod.spec);
        spec.containers.push(c.into());
        spec.node_name = "worker-1".into();
        let key = Etcd::key_for("pods", "default", "huge");
        cluster.api.etcd_bypass().create(&key, Object::Pod(pod)).unwrap();
        let problems = cluster.check_invariants(true);
        let overfull = |p: &String| p.starts_with("node worker-1 has 64") && p.ends_with("m cpu requested of 4000m");
        assert!(problems.iter().any(overfull), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("owned by ReplicaSet/gone")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("cache: default/huge missing")), "{problems:?}");
    }

    #[test]
    fn a_kubelet_syncs_a_pod_as_its_containers_progress_not_on_the_echoes_of_its_own_status_writes() {
        let cluster = super::one_worker_running_web();
        let running = cluster.objects(Kind::Pod, "default");
        assert!(running[0].as_pod().is_some_and(|p| p.status.phase == "Running" && p.is_ready()));
        // Bound (ContainerCreating); sandbox ready (PodReadyToStartContainers); image pulled and
        // container started (Running). Each status write comes back through its watch without
        // another sync.
        assert_eq!(cluster.kubelet("worker-1").and_then(|k| k.pod_syncs("default", "web")), Some(3));
    }

    /// Watches ConfigMaps and counts its runs; each run keeps it busy for 10 ms.
    struct Slow {
        informer: Informer,
        runs: usize,
        seen: usize,
        until: Option<Time>,
    }

    impl Component for Slow {
        fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
            let _ = self.informer.start(ctx);
            None
        }
        fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
            self.runs += 1;
            self.seen += self.informer.sync(ctx).len();
            self.until = Some(ctx.now + Duration::millis(10));
            None
        }
        fn busy_until(&self) -> Option<Time> {
            self.until
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// A settled cluster with a slow controller watching ConfigMaps, started.
    fn with_slow_controller() -> Cluster {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.settle(Duration::seconds(30));
        let slow = Slow { informer: Informer::new(Kind::ConfigMap), runs: 0, seen: 0, until: None };
        let role = Role::Controller { name: "slow".into() };
        cluster.add_component("slow", "system:serviceaccount:kube-system:slow", role, Box::new(slow), "slow", "");
        cluster.advance(Duration::millis(5));
        cluster
    }

    /// kubectl creates ConfigMap `name` in the default namespace.
    fn create_config_map(cluster: &mut Cluster, name: &str) {
        let mut cm = crate::api::ConfigMap::default();
        cm.metadata.name = name.into();
        cm.metadata.namespace = "default".into();
        cluster.request(Request::create(Object::ConfigMap(cm))).unwrap();
    }

    #[test]
    fn a_busy_component_takes_the_changes_that_arrive_meanwhile_together() {
        let mut cluster = with_slow_controller();
        for i in 0..10 {
            create_config_map(&mut cluster, &format!("cm-{i}"));
            cluster.advance(Duration::millis(2));
        }
        cluster.advance(Duration::millis(50));
        let slow = cluster.component::<Slow>().unwrap();
        assert_eq!(slow.seen, 10, "every change reaches it");
        // Woken at most once per 10 ms over the 20 ms the changes took, not once per change.
        assert!(slow.runs <= 3, "{} runs", slow.runs);
    }

    #[test]
    fn settle_waits_for_a_notification_held_until_a_busy_worker_is_free() {
        let mut cluster = with_slow_controller();
        let create = create_config_map;
        create(&mut cluster, "first");
        cluster.advance(Duration::millis(2));
        assert_eq!(cluster.component::<Slow>().unwrap().seen, 1, "it ran, and is busy for 10 ms");
        // Heard of 1 ms from now, but handled only once the worker is free, 9 ms from now.
        create(&mut cluster, "second");
        assert!(cluster.busy(cluster.now() + SETTLE_LIMIT), "a held notification is work in flight");
        let took = cluster.settle(SETTLE_LIMIT);
        assert_eq!(cluster.component::<Slow>().unwrap().seen, 2, "settled after {took} with a change unseen");
    }

    #[test]
    fn the_default_cluster_registers_four_ready_nodes() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.settle(Duration::seconds(30));
        let nodes = cluster.objects(Kind::Node, "");
        let names: Vec<&str> = nodes.iter().map(|n| n.name()).collect();
        assert_eq!(names, ["control-plane", "worker-1", "worker-2", "worker-3"]);
        assert!(nodes.iter().all(|n| n.as_node().unwrap().readiness() == "Ready"));
        assert_eq!(cluster.objects(Kind::Lease, "kube-node-lease").len(), 4);
    }
}
