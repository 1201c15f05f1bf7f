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
    /// Whether this node's kube-apiserver serves (it stops with its node).
    pub serving: bool,
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
            self.add_node(node.control_plane(static_pods));
        }
    }

    fn manager_leads(&self) -> bool {
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
    fn follow_manager(&mut self, managed_before: bool) {
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
                    let stamp = crate::kubectl::verbose::stamp(at, written as u64);
                    kubelet.append_logs("kube-system", &pod, container, &[format!("{stamp}       1 {line}")], at);
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
    fn restart_elected(&mut self, idx: u32, node: &str, lease: &str) {
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
        self.control_planes.iter().map(|c| (c.node.clone(), c.serving)).collect()
    }

    /// Which API server instance serves a request from component `actor` now: each client
    /// keeps its connection through the load balancer to one instance (picked by its place
    /// in the cluster) and reconnects to the next that serves when that one stops. `None`
    /// with a single control-plane node.
    pub fn serving_instance(&self, actor: ComponentId) -> Option<usize> {
        let n = self.control_planes.len();
        if n < 2 {
            return None;
        }
        let first = actor.0 as usize % n;
        (0..n).map(|k| (first + k) % n).find(|&i| self.control_planes[i].serving)
    }

    /// Notes, for the record, which API server instance the next requests of `actor` reach.
    pub(super) fn route(&mut self, actor: ComponentId) {
        let instance = self.serving_instance(actor);
        self.record.serving = instance.map(|i| i as u8);
    }
}
