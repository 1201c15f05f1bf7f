//! The control-plane components a kubeadm node runs as static pods, tied to those pods: when
//! the control-plane node's kubelet stops kube-scheduler's pod (its manifest moved away,
//! broken, or changed and not yet running again), the scheduler stops scheduling; when the
//! pod runs again, the scheduler starts afresh. kube-controller-manager's pod carries every
//! controller of the manager. kube-apiserver's and etcd's pods are tied as soon as the kubelet
//! reads their manifests (their mirror pods need the API they serve): with the API server's
//! gone, nothing listens on that node's port 6443 (with one control plane, kubectl's
//! connection is refused; with several, the load balancer sends it to another); with etcd's
//! gone, that member stops (a single etcd: the API server has no store).

use super::{Cluster, Role};
use crate::kubelet::Kubelet;
use crate::record::ComponentId;

/// After a kubelet ran (the slot `idx`): starts or stops the components whose static pods it
/// runs, as their pods now are.
pub(super) fn follow(cluster: &mut Cluster, idx: u32) {
    let Some(kubelet) =
        cluster.slots.get(idx as usize).and_then(|s| s.component.as_ref()?.as_any().downcast_ref::<Kubelet>())
    else {
        return;
    };
    let scheduler = kubelet.static_component_up("kube-scheduler");
    let manager = kubelet.static_component_up("kube-controller-manager");
    let api_server = kubelet.static_component_present("kube-apiserver");
    let etcd = kubelet.static_component_present("etcd");
    let node = kubelet.node_name().to_string();
    // The node's own instances, which elect their leaders: one that comes back is a new
    // process, a candidate with a new identity; the controllers act while a manager leads.
    if let Some(i) = cluster.control_planes.iter().position(|c| c.node == node) {
        cluster.static_pods_changed(i, api_server, etcd);
        let (sched, mgr) = (cluster.control_planes[i].scheduler, cluster.control_planes[i].controller_manager);
        if let Some(up) = scheduler {
            restart_or_stop(cluster, sched, &node, "kube-scheduler", up);
        }
        if let Some(up) = manager {
            let managed_before = cluster.manager_leads();
            if !up {
                cluster.control_planes[i].manages.set(false);
            }
            restart_or_stop(cluster, mgr, &node, "kube-controller-manager", up);
            cluster.follow_manager(managed_before);
        }
        return;
    }
    if let Some(up) = scheduler {
        let ids: Vec<u32> = slots_where(cluster, |r| *r == Role::Scheduler);
        set(cluster, &ids, up);
    }
    if let Some(up) = manager {
        let ids = slots_where(cluster, |r| matches!(r, Role::Controller { .. }));
        set(cluster, &ids, up);
    }
}

fn restart_or_stop(cluster: &mut Cluster, id: u32, node: &str, lease: &str, up: bool) {
    match (up, cluster.is_running(ComponentId(id))) {
        (true, false) => cluster.restart_elected(id, node, lease),
        (false, true) => cluster.stop_component(ComponentId(id)),
        _ => {}
    }
}

fn slots_where(cluster: &Cluster, f: impl Fn(&Role) -> bool) -> Vec<u32> {
    cluster.slots.iter().enumerate().filter(|(_, s)| f(&s.role)).map(|(i, _)| i as u32).collect()
}

fn set(cluster: &mut Cluster, ids: &[u32], up: bool) {
    for &id in ids {
        match (up, cluster.is_running(ComponentId(id))) {
            (true, false) => cluster.start_component(ComponentId(id)),
            (false, true) => cluster.stop_component(ComponentId(id)),
            _ => {}
        }
    }
}
