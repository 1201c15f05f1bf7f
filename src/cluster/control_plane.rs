//! The control-plane nodes and what runs on each, as kubeadm's stacked topology lays them
//! out: one node by default, three for high availability (`control-plane`,
//! `control-plane2`, `control-plane3`), each with its static pods, a kube-scheduler and a
//! kube-controller-manager that elect a leader through Leases in `kube-system` (only the
//! leader acts), and an API server behind the load balancer in front of them all.

use super::{Cluster, Role};
use crate::client::leaderelection::{ControllerManager, Elected, LeaderElector};
use crate::kubelet::NodeConfig;
use crate::record::ComponentId;
use crate::scheduler::Scheduler;
use crate::sim::Rng;
use std::cell::Cell;
use std::rc::Rc;

/// The most control-plane nodes a sandbox has (an etcd of more than seven members is not
/// advised; more would only slow the page).
pub const MAX_CONTROL_PLANES: u32 = 7;

/// The names of the control-plane nodes of a cluster with `count` of them (at least one).
pub fn control_plane_names(count: u32) -> Vec<String> {
    (1..=count.max(1)).map(|i| if i == 1 { "control-plane".to_string() } else { format!("control-plane{i}") }).collect()
}

/// What runs on one control-plane node besides its kubelet.
#[derive(Debug)]
pub(super) struct Instance {
    pub node: String,
    pub scheduler: u32,
    pub controller_manager: u32,
    /// Whether this node's kube-controller-manager leads (its controllers act).
    pub manages: Rc<Cell<bool>>,
    /// Whether this node's machine runs (its kube-apiserver stops with it).
    pub serving: bool,
    /// Whether the kubelet runs the node's kube-apiserver static pod (its manifest is in
    /// place), and its etcd's: as the kubelet last reported them.
    pub api_pod: bool,
    pub etcd_pod: bool,
}

impl Instance {
    /// Whether this node's kube-apiserver listens: its machine runs and so does its pod.
    pub fn listening(&self) -> bool {
        self.serving && self.api_pod
    }
}

/// The name of a control-plane component's slot on `node`: the bare name on the first node
/// (as a single-control-plane cluster has always called it), the node's in parentheses on
/// the others.
fn slot_name(component: &str, node: &str) -> String {
    if node == "control-plane" { component.to_string() } else { format!("{component} ({node})") }
}

impl Cluster {
    /// Adds kube-scheduler and kube-controller-manager on the control-plane node `node`,
    /// each a candidate for its Lease.
    pub(super) fn add_control_plane_components(&mut self, node: &str) {
        let seed = self.config.seed;
        let name = slot_name("kube-scheduler", node);
        let identity = LeaderElector::identity_for(node, &mut Rng::stream(seed, &format!("{name} identity")));
        let draws = Rng::stream(seed, &format!("{name} leader election"));
        let scheduler = Elected::new(LeaderElector::new("kube-scheduler", identity, draws), Scheduler::new);
        let scheduler = self.add_component(
            &name,
            "system:kube-scheduler",
            Role::Scheduler,
            Box::new(scheduler),
            "default-scheduler",
            node,
        );
        let name = slot_name("kube-controller-manager", node);
        let identity = LeaderElector::identity_for(node, &mut Rng::stream(seed, &format!("{name} identity")));
        let draws = Rng::stream(seed, &format!("{name} leader election"));
        let elector = LeaderElector::new("kube-controller-manager", identity, draws);
        let manages = elector.leading_handle();
        let role = Role::Controller { name: "kube-controller-manager".into() };
        let manager = Box::new(ControllerManager { elector });
        let controller_manager =
            self.add_component(&name, "system:kube-controller-manager", role, manager, "kube-controller-manager", node);
        self.control_planes.push(Instance {
            node: node.to_string(),
            scheduler,
            controller_manager,
            manages,
            serving: true,
            api_pod: true,
            etcd_pod: true,
        });
    }

    /// Adds the control-plane nodes' kubelets (and their node agents), with the static pods.
    pub(super) fn add_control_plane_nodes(&mut self) {
        let workers = self.config.workers;
        for (i, name) in control_plane_names(self.config.control_planes).iter().enumerate() {
            // The first node keeps the address it has always had; the others come after the
            // workers', whose addresses stay the same too.
            let index = if i == 0 { 0 } else { workers + i as u32 };
            let node = NodeConfig::new(name, index, 4000, 8 << 30, 110);
            let static_pods = super::bootstrap::control_plane_static_pods(&node.name, &node.internal_ip);
            let files = super::bootstrap::control_plane_manifest_files(&node.name, &node.internal_ip);
            self.add_node(node.control_plane(static_pods).with_manifest_files(files));
        }
    }

    pub(super) fn manager_leads(&self) -> bool {
        self.control_planes.iter().any(|c| c.manages.get() && self.slots[c.controller_manager as usize].running)
    }

    /// After slot `idx` ran: the lines its process printed go to its container's log, and a
    /// kube-controller-manager that just started leading wakes its controllers.
    pub(super) fn after_control_plane_step(&mut self, idx: u32, managed_before: bool) {
        let Some(instance) = self.control_planes.iter().find(|c| c.scheduler == idx || c.controller_manager == idx)
        else {
            return;
        };
        let node = instance.node.clone();
        let container = if instance.scheduler == idx { "kube-scheduler" } else { "kube-controller-manager" };
        if let Some(component) = self.slots[idx as usize].component.as_mut() {
            for (at, line) in component.take_log() {
                self.component_logs.push((node.clone(), container, at, line));
            }
        }
        self.flush_component_logs();
        self.follow_manager(managed_before);
    }

    /// kube-controller-manager's controllers run in the process that leads: they stop when
    /// no running instance leads any more, and start afresh (listing again) when one does.
    pub(super) fn follow_manager(&mut self, managed_before: bool) {
        let managed = self.manager_leads();
        if managed == managed_before {
            return;
        }
        let controllers: Vec<u32> = (0..self.slots.len() as u32).filter(|&i| self.is_managed_controller(i)).collect();
        for i in controllers {
            if managed {
                self.start_component(ComponentId(i));
            } else {
                self.stop_component(ComponentId(i));
            }
        }
    }

    fn is_managed_controller(&self, idx: u32) -> bool {
        matches!(self.slots[idx as usize].role, Role::Controller { .. })
            && !self.control_planes.iter().any(|c| c.controller_manager == idx)
    }

    /// Whether any kube-controller-manager leads now (before a step, to see it change).
    pub(super) fn managed(&self) -> bool {
        self.manager_leads()
    }

    /// Hands the printed lines to the containers that run them, once those have started.
    fn flush_component_logs(&mut self) {
        let pending = std::mem::take(&mut self.component_logs);
        for (node, container, at, line) in pending {
            let pod = format!("{container}-{node}");
            let now = self.now;
            // Its process has started once the container has printed its first line.
            let written = self
                .kubelet(&node)
                .and_then(|k| k.logs("kube-system", &pod, container, false, now))
                .map_or(0, |lines| lines.len());
            match self.kubelet_unwoken_mut(&node) {
                Some(kubelet) if written > 0 => {
                    let at = at.max(now);
                    let line = crate::client::leaderelection::klog_line(at, written as u64, &line);
                    kubelet.append_logs("kube-system", &pod, container, &[line], at);
                }
                _ => self.component_logs.push((node, container, at, line)),
            }
        }
    }

    /// The control-plane nodes, in order.
    pub fn control_plane_nodes(&self) -> Vec<String> {
        self.control_planes.iter().map(|c| c.node.clone()).collect()
    }

    /// A control-plane node's machine stops (`sim node stop`): its scheduler, controller
    /// manager and API server stop with its kubelet. Whether `node` is one.
    pub fn stop_control_plane(&mut self, node: &str) -> bool {
        let Some(i) = self.control_planes.iter().position(|c| c.node == node) else { return false };
        let (scheduler, manager) = (self.control_planes[i].scheduler, self.control_planes[i].controller_manager);
        let managed_before = self.manager_leads();
        self.control_planes[i].serving = false;
        self.stop_component(ComponentId(scheduler));
        self.stop_component(ComponentId(manager));
        self.follow_manager(managed_before);
        true
    }

    /// It starts again: its components start afresh, as candidates.
    pub fn start_control_plane(&mut self, node: &str) -> bool {
        let Some(i) = self.control_planes.iter().position(|c| c.node == node) else { return false };
        let (scheduler, manager) = (self.control_planes[i].scheduler, self.control_planes[i].controller_manager);
        self.control_planes[i].serving = true;
        self.control_planes[i].manages.set(false);
        self.restart_elected(scheduler, node, "kube-scheduler");
        self.restart_elected(manager, node, "kube-controller-manager");
        true
    }

    /// A control-plane component's process starts again: a new identity, not leading.
    pub(super) fn restart_elected(&mut self, idx: u32, node: &str, lease: &str) {
        let rng = &mut self.slots[idx as usize].rng;
        let identity = LeaderElector::identity_for(node, rng);
        let draws = Rng::stream(rng.next_u64(), "leader election");
        let elector = LeaderElector::new(lease, identity, draws);
        let component: Box<dyn crate::client::component::Component> = if lease == "kube-scheduler" {
            Box::new(Elected::new(elector, Scheduler::new))
        } else {
            let manages = elector.leading_handle();
            if let Some(c) = self.control_planes.iter_mut().find(|c| c.controller_manager == idx) {
                c.manages = manages;
            }
            Box::new(ControllerManager { elector })
        };
        self.slots[idx as usize].component = Some(component);
        self.start_component(ComponentId(idx));
    }

    /// The API server instances that serve, by node (one per control-plane node).
    pub fn api_servers(&self) -> Vec<(String, bool)> {
        self.control_planes.iter().map(|c| (c.node.clone(), c.listening())).collect()
    }

    /// Which API server instance serves a request from component `actor` now. A scheduler
    /// or controller manager talks to its own node's (kubeadm points their kubeconfigs at
    /// the local API server), the controllers to their leading manager's; every other client
    /// goes through the load balancer, keeping its connection to one instance (picked by its
    /// place in the cluster) and moving to the next that serves when that one stops. `None`
    /// with a single control-plane node.
    pub fn serving_instance(&self, actor: ComponentId) -> Option<usize> {
        let n = self.control_planes.len();
        if n < 2 {
            return None;
        }
        let own = |c: &Instance| c.scheduler == actor.0 || c.controller_manager == actor.0;
        if let Some(i) = self.control_planes.iter().position(own) {
            return Some(i);
        }
        let leading = |c: &Instance| c.manages.get() && self.slots[c.controller_manager as usize].running;
        if self.slots.get(actor.0 as usize).is_some() && self.is_managed_controller(actor.0) {
            if let Some(i) = self.control_planes.iter().position(leading) {
                return Some(i);
            }
        }
        let first = actor.0 as usize % n;
        (0..n).map(|k| (first + k) % n).find(|&i| self.control_planes[i].listening())
    }

    /// Where component `actor`'s connection to the API is refused, if it is: the address it
    /// dials (`host:port`) when no API server listens there for it. The API server's own
    /// loopback requests always go through.
    pub(super) fn refusal(&self, actor: ComponentId) -> Option<String> {
        if actor == ComponentId::API_SERVER || self.control_planes.is_empty() {
            return None;
        }
        let instance = if self.control_planes.len() == 1 { Some(0) } else { self.serving_instance(actor) };
        match instance {
            Some(i) if self.control_planes[i].listening() => None,
            _ => Some(self.client_endpoint(actor)),
        }
    }

    /// The kubelet on control-plane node `i` started or stopped its kube-apiserver static pod
    /// (`api`) or its etcd's: the API server there listens or not; the etcd member there runs
    /// or not (a single etcd: the API server has its store or not).
    pub(super) fn static_pods_changed(&mut self, i: usize, api: Option<bool>, etcd: Option<bool>) {
        if let Some(up) = api {
            self.control_planes[i].api_pod = up;
        }
        let Some(up) = etcd.filter(|up| *up != self.control_planes[i].etcd_pod) else { return };
        self.control_planes[i].etcd_pod = up;
        let node = &self.control_planes[i].node;
        match self.inspect().etcd().raft().map(|g| g.find(node)) {
            Some(Some(member)) => self.with_api(|api, env| {
                if let Some(group) = api.etcd_bypass().raft_mut() {
                    group.set_stopped(member, !up, env.now);
                }
            }),
            Some(None) => {}
            None => self.with_api(|api, _| api.set_etcd_running(up)),
        }
    }

    /// The API server address (`host:port`) component `actor`'s kubeconfig names: a
    /// control-plane node's scheduler and controller manager their own node's, every other
    /// client the control-plane endpoint.
    pub fn client_endpoint(&self, actor: ComponentId) -> String {
        let own = self.control_planes.iter().find(|c| c.scheduler == actor.0 || c.controller_manager == actor.0);
        match own.and_then(|c| self.kubelet(&c.node)) {
            Some(kubelet) => format!("{}:{}", kubelet.internal_ip(), crate::api::well_known::API_SERVER_PORT),
            None => self.api_endpoint(),
        }
    }

    /// Notes, for the record, which API server instance the next requests of `actor` reach.
    pub(super) fn route(&mut self, actor: ComponentId) {
        let instance = self.serving_instance(actor);
        self.record.serving = instance.map(|i| i as u8);
        let refusal = self.refusal(actor);
        self.api.refusing = refusal;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Kind, Object};
    use crate::cluster::ClusterConfig;
    use crate::record::Happening;
    use crate::shell::{Command, Session};

    fn ha() -> Session {
        Session::with_config(ClusterConfig { control_planes: 3, ..ClusterConfig::default() })
    }

    fn run(s: &mut Session, line: &str) -> String {
        let out = s.execute(&Command::new(line));
        out.stdout + &out.stderr
    }

    fn holder(s: &Session, lease: &str) -> String {
        let object = s.cluster.inspect().get(Kind::Lease, "kube-system", lease).expect("the Lease");
        match object.as_ref() {
            Object::Lease(l) => l.spec.holder_identity.clone().unwrap_or_default(),
            _ => String::new(),
        }
    }

    fn transitions(s: &Session, lease: &str) -> i32 {
        match s.cluster.inspect().get(Kind::Lease, "kube-system", lease).as_deref() {
            Some(Object::Lease(l)) => l.spec.lease_transitions.unwrap_or(-1),
            _ => -1,
        }
    }

    /// The requests component `name` sent since entry `after`: (verb, kind) pairs.
    fn requests_by(s: &Session, name: &str, after: u64) -> Vec<(&'static str, Kind)> {
        let record = &s.cluster.record;
        record
            .since(after)
            .filter(|e| s.cluster.component_name(e.actor) == name)
            .filter_map(|e| match &e.what {
                Happening::Request { verb, kind, .. } => Some((*verb, *kind)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn control_plane_nodes_are_named_as_kubeadm_joins_them() {
        assert_eq!(control_plane_names(1), ["control-plane"]);
        assert_eq!(control_plane_names(3), ["control-plane", "control-plane2", "control-plane3"]);
        assert_eq!(control_plane_names(0), ["control-plane"], "never none");
    }

    #[test]
    fn a_single_control_plane_holds_both_leases_from_the_start_and_renews_them_every_two_seconds() {
        let mut s = Session::new(1);
        for lease in ["kube-scheduler", "kube-controller-manager"] {
            assert!(holder(&s, lease).starts_with("control-plane_"), "{lease}: {}", holder(&s, lease));
            assert_eq!(transitions(&s, lease), 0);
        }
        let mark = s.cluster.record.last_seq();
        run(&mut s, "sleep 20s");
        let renewals = requests_by(&s, "kube-scheduler", mark);
        // The leader writes over the version it last wrote, without reading first.
        assert!(renewals.iter().all(|r| *r == ("update", Kind::Lease)), "{renewals:?}");
        assert!((9..=10).contains(&renewals.len()), "{} renewals in 20 s", renewals.len());
        assert_eq!(s.cluster.control_plane_nodes(), ["control-plane"]);
        assert_eq!(s.cluster.serving_instance(crate::record::ComponentId::USER), None, "one API server");
    }

    #[test]
    fn three_control_planes_run_a_scheduler_and_a_controller_manager_each_and_only_the_leaders_act() {
        let mut s = ha();
        let nodes = run(&mut s, "kubectl get nodes -o name");
        for node in control_plane_names(3) {
            assert!(nodes.contains(&format!("node/{node}\n")), "{nodes}");
            let pods =
                run(&mut s, &format!("kubectl get pods -n kube-system --field-selector spec.nodeName={node} -o name"));
            for pod in ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"] {
                assert!(pods.contains(&format!("pod/{pod}-{node}\n")), "{pods}");
            }
        }
        let mark = s.cluster.record.last_seq();
        run(&mut s, "kubectl create deployment web --image=nginx --replicas=2");
        run(&mut s, "sim settle");
        let binds = |name: &str| requests_by(&s, name, mark).iter().filter(|(_, k)| *k == Kind::Pod).count();
        assert_eq!(binds("kube-scheduler"), 2, "the leader binds");
        assert_eq!(binds("kube-scheduler (control-plane2)") + binds("kube-scheduler (control-plane3)"), 0);
        let standby = requests_by(&s, "kube-scheduler (control-plane2)", mark);
        assert!(standby.iter().all(|r| *r == ("get", Kind::Lease)), "a standby only reads the Lease: {standby:?}");
    }

    #[test]
    fn stopping_the_leaders_node_hands_both_leases_to_standbys_after_the_lease_duration() {
        let mut s = ha();
        let first = holder(&s, "kube-scheduler");
        run(&mut s, "sim node stop control-plane");
        run(&mut s, "sleep 12s");
        assert_eq!(holder(&s, "kube-scheduler"), first, "15 s have not passed since the last renewal");
        run(&mut s, "sleep 13s");
        for lease in ["kube-scheduler", "kube-controller-manager"] {
            let now = holder(&s, lease);
            assert!(now.starts_with("control-plane2_") || now.starts_with("control-plane3_"), "{lease}: {now}");
            assert_eq!(transitions(&s, lease), 1, "{lease}");
        }
        let events = run(&mut s, "kubectl get events -n kube-system --field-selector reason=LeaderElection -o name");
        assert_eq!(events.lines().count(), 4, "{events}");
        let new_leader = holder(&s, "kube-scheduler");
        let node = new_leader.split('_').next().unwrap_or_default().to_string();
        let logs = run(&mut s, &format!("kubectl logs -n kube-system kube-scheduler-{node}"));
        assert!(
            logs.contains("leaderelection.go:271] successfully acquired lease kube-system/kube-scheduler"),
            "{logs}"
        );
        // Work goes on: the new leaders create and place a Deployment's pods.
        run(&mut s, "kubectl create deployment web --image=nginx --replicas=3");
        run(&mut s, "sim settle");
        let ready = run(&mut s, "kubectl get deployment web -o jsonpath={.status.readyReplicas}");
        assert_eq!(ready, "3");
        // The stopped node's API server serves nobody.
        for id in s.cluster.component_ids().filter(|id| s.cluster.is_running(*id)) {
            assert_ne!(s.cluster.serving_instance(id), Some(0), "{}", s.cluster.component_name(id));
        }
        assert!(s.cluster.check_invariants(true).is_empty(), "{:?}", s.cluster.check_invariants(true));
    }

    #[test]
    fn views_and_faults_reach_the_scheduler_that_leads() {
        let mut s = ha();
        run(&mut s, "sim node stop control-plane");
        run(&mut s, "sleep 25s");
        let out = run(&mut s, "sim scheduler slow 1s");
        assert!(out.starts_with("kube-scheduler: each scheduling cycle now takes 1s"), "{out}");
        let slowed = s.cluster.component::<Scheduler>().map(|sch| sch.cycle_time);
        assert_eq!(slowed, Some(crate::sim::Duration::seconds(1)), "the one views show is the one slowed");
        run(&mut s, "kubectl create deployment web --image=nginx --replicas=2");
        run(&mut s, "sleep 5s");
        let leader = holder(&s, "kube-scheduler");
        let node = leader.split('_').next().unwrap_or_default().to_string();
        let name = format!("kube-scheduler ({node})");
        let binds = requests_by(&s, &name, 0).iter().filter(|r| **r == ("create", Kind::Pod)).count();
        assert_eq!(binds, 2, "{name} bound the pods, one a second: {:?}", requests_by(&s, &name, 0));
    }

    #[test]
    fn kubectl_and_the_kubeconfigs_name_the_load_balancer_in_front_of_several_api_servers() {
        let mut s = ha();
        let lb = "https://172.18.0.8:6443";
        assert!(
            run(&mut s, "kubectl cluster-info").starts_with(&format!("Kubernetes control plane is running at {lb}\n"))
        );
        assert_eq!(run(&mut s, "kubectl config view -o jsonpath={.clusters[0].cluster.server}"), lb);
        let file = |s: &Session, node: &str, path: &str| {
            crate::shell::node::fs::read(&s.cluster, node, path).unwrap_or_default()
        };
        for path in ["/etc/kubernetes/admin.conf", "/etc/kubernetes/kubelet.conf"] {
            assert!(file(&s, "control-plane2", path).contains(&format!("server: {lb}\n")), "{path}");
        }
        // The scheduler and the controller manager talk to their own node's API server.
        let own = file(&s, "control-plane2", "/etc/kubernetes/scheduler.conf");
        assert!(own.contains("server: https://172.18.0.6:6443\n"), "{own}");
        // With one control-plane node, its own address.
        let mut single = Session::new(1);
        let info = run(&mut single, "kubectl cluster-info");
        assert!(info.starts_with("Kubernetes control plane is running at https://172.18.0.2:6443\n"), "{info}");
    }

    #[test]
    fn the_same_seed_replays_the_same_failover() {
        let record = || {
            let mut s = ha();
            run(&mut s, "sim node stop control-plane");
            run(&mut s, "sleep 30s");
            let entries: Vec<String> = s.cluster.record.entries().map(|e| format!("{e:?}")).collect();
            (entries, holder(&s, "kube-scheduler"))
        };
        assert_eq!(record(), record());
    }

    #[test]
    fn a_leader_cut_off_from_the_store_gives_up_after_the_renew_deadline_and_leads_again_under_a_new_identity() {
        let mut s = Session::new(1);
        let first = holder(&s, "kube-scheduler");
        run(&mut s, "sim etcd stop");
        run(&mut s, "sleep 30s");
        run(&mut s, "sim etcd start");
        run(&mut s, "sleep 10s");
        assert_eq!(holder(&s, "kube-scheduler"), first, "the new process waits out its former self's Lease");
        run(&mut s, "sleep 15s");
        let now = holder(&s, "kube-scheduler");
        assert!(now.starts_with("control-plane_") && now != first, "{now}");
        let logs = run(&mut s, "kubectl logs -n kube-system kube-scheduler-control-plane");
        assert!(logs.contains("failed to renew lease kube-system/kube-scheduler"), "{logs}");
        run(&mut s, "kubectl create deployment web --image=nginx --replicas=2");
        run(&mut s, "sim settle");
        assert_eq!(run(&mut s, "kubectl get deployment web -o jsonpath={.status.readyReplicas}"), "2");
    }
}
