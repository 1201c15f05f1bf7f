//! The node lifecycle controller: watches each node's heartbeats (its Lease and status) and,
//! when they stop for longer than the grace period, marks the node's conditions Unknown,
//! taints it `unreachable` (NoSchedule and NoExecute) and its pods not ready; when
//! heartbeats come back, it lifts the taints again. A cordoned node gets the
//! `unschedulable:NoSchedule` taint for as long as it stays cordoned.

use super::{Action, Reconciler, Synced};
use crate::api::node::{Node, Taint};
use crate::api::pod::{PodCondition, set_condition};
use crate::api::{Kind, Object};
use crate::apiserver::{Request, Status};
use crate::client::component::{Ctx, Delta, Informer};
use crate::sim::{Duration, Time};
use std::collections::BTreeSet;

/// How often every node is checked (`--node-monitor-period`).
pub const MONITOR_PERIOD: Duration = Duration::seconds(5);
/// How long a node may go without a heartbeat (`--node-monitor-grace-period`, 1.32+).
pub const GRACE_PERIOD: Duration = Duration::seconds(50);

pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
pub const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

pub struct NodeLifecycleController {
    nodes: Informer,
    leases: Informer,
    pods: Informer,
    registered: BTreeSet<String>,
    /// A write of its was refused (the API server is unreachable) and no notification has
    /// come since: it judges no node's health meanwhile.
    lost_contact: bool,
    /// A notification came while contact was lost: the API server answers again.
    heard_again: bool,
    /// When it last regained contact with the API server: no node's silence counts from
    /// before then.
    contact_since: Time,
    /// It has started before: a start now is its process's restart (its manager lost and
    /// won back the lead, or another instance took over).
    started: bool,
}

impl Default for NodeLifecycleController {
    fn default() -> Self {
        NodeLifecycleController {
            nodes: Informer::new(Kind::Node),
            leases: Informer::new(Kind::Lease),
            pods: Informer::new(Kind::Pod),
            registered: BTreeSet::new(),
            lost_contact: false,
            heard_again: false,
            contact_since: Time::ZERO,
            started: false,
        }
    }
}

impl NodeLifecycleController {
    /// The node's last sign of life: its Lease's renew time or its Ready condition's heartbeat.
    fn last_heartbeat(&self, node: &Node) -> Time {
        let lease = self
            .leases
            .get("kube-node-lease", &node.metadata.name)
            .and_then(|l| if let Object::Lease(l) = &**l { l.spec.renew_time.map(|t| t.0) } else { None });
        let status = node.condition("Ready").and_then(|c| c.last_heartbeat_time);
        lease.max(status).or(node.metadata.creation_timestamp).unwrap_or_default()
    }

    fn update_node(&mut self, node: Node, status_only: bool, ctx: &mut Ctx) -> Result<Option<Node>, Status> {
        let mut n = node;
        n.metadata.resource_version.clear();
        let req = if status_only {
            Request::update_status(Object::Node(Box::new(n)))
        } else {
            Request::update(Object::Node(Box::new(n)))
        };
        let stored = match ctx.call_object(req) {
            Ok(stored) => stored,
            Err(status) => {
                // Nothing answered at all (not an error from the API server).
                if status.code == 0 && status.reason.is_empty() {
                    self.lost_contact = true;
                    self.heard_again = false;
                }
                return Err(status);
            }
        };
        self.nodes.assume(stored.clone());
        Ok(stored.as_node().cloned())
    }

    /// Ready=False on every pod of the node, with the event that says why.
    fn mark_pods_not_ready(&mut self, node: &str, ctx: &mut Ctx) -> Result<(), Status> {
        let pods: Vec<_> = self
            .pods
            .cache
            .values()
            .filter(|p| p.as_pod().is_some_and(|p| p.spec.node_name == node && !p.is_terminal()))
            .cloned()
            .collect();
        for object in pods {
            let Some(pod) = object.as_pod() else { continue };
            if pod.condition("Ready").is_some_and(|c| c.status == "False") {
                continue;
            }
            let mut updated = pod.clone();
            let cond = PodCondition { type_: "Ready".into(), status: "False".into(), ..Default::default() };
            let status = std::sync::Arc::make_mut(&mut updated.status);
            set_condition(&mut status.conditions, cond, ctx.now);
            if let Some(c) = status.conditions.iter_mut().find(|c| c.type_ == "ContainersReady") {
                c.status = "False".into();
            }
            updated.metadata.resource_version.clear();
            match ctx.call(Request::update_status(Object::Pod(updated))) {
                Ok(_) => ctx.event(&object, "", "Warning", "NodeNotReady", "Node is not ready".into()),
                Err(status) if status.code == 404 => {}
                Err(status) => return Err(status),
            }
        }
        Ok(())
    }
}

fn has_taint(node: &Node, key: &str, effect: &str) -> bool {
    node.spec.taints.iter().any(|t| t.key == key && t.effect == effect)
}

impl Reconciler for NodeLifecycleController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.nodes, &mut self.leases, &mut self.pods]
    }

    /// A restarted controller knows no node's heartbeats from before: it judges every node
    /// afresh from its first look, as after losing contact.
    fn on_start(&mut self) {
        if self.started {
            self.lost_contact = true;
            self.heard_again = true;
        }
        self.started = true;
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        self.heard_again |= self.lost_contact;
        match informer {
            0 => vec![delta.object.name().to_string()],
            1 if delta.object.namespace() == "kube-node-lease" => vec![delta.object.name().to_string()],
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        // Upstream's node health monitor is a loop over every node each period, not a work
        // queue: a pass whose writes fail is not retried sooner, it is made again next period.
        match self.monitor(key, ctx) {
            Err(_) => Ok(Action::RequeueAfter(MONITOR_PERIOD)),
            done => done,
        }
    }
}

impl NodeLifecycleController {
    /// One pass of the health monitor over node `key`.
    fn monitor(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let Some(object) = self.nodes.cache.get(key).cloned() else {
            self.registered.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Some(node) = object.as_node() else { return Ok(Action::AwaitChange) };
        // A node seen for the first time (its name is copied only then).
        if !self.registered.contains(key) {
            self.registered.insert(key.to_string());
            ctx.event(
                &object,
                "",
                "Normal",
                "RegisteredNode",
                format!("Node {key} event: Registered Node {key} in Controller"),
            );
        }
        // Upstream measures a node's silence from when the controller itself last saw its
        // heartbeat change (kept in memory only). When the API server goes away (etcd down),
        // kube-controller-manager cannot renew its leader-election lease: it exits, is
        // restarted, and runs its controllers again only once the API answers, with fresh
        // node health data, so every node gets a full grace period from then instead of
        // being marked Unknown for the outage. Here: a refused write means contact is lost;
        // until a notification shows the API answering again no node is judged, and silence
        // counts from that moment at the earliest.
        if self.lost_contact {
            if !self.heard_again {
                return Ok(Action::RequeueAfter(MONITOR_PERIOD));
            }
            self.lost_contact = false;
            self.contact_since = ctx.now;
        }
        let silent_for = ctx.now.since(self.last_heartbeat(node).max(self.contact_since));
        let ready = node.condition("Ready").map(|c| c.status.clone()).unwrap_or_default();
        if silent_for > GRACE_PERIOD {
            if ready != "Unknown" {
                ctx.cause = Some(ctx.decide(|| {
                    format!("node {key}: no heartbeat for {silent_for}, more than {GRACE_PERIOD}: marking it Unknown")
                }));
                let mut n = node.clone();
                for c in &mut n.status.conditions {
                    c.status = "Unknown".into();
                    c.reason = "NodeStatusUnknown".into();
                    c.message = "Kubelet stopped posting node status.".into();
                    c.last_transition_time = Some(ctx.now);
                }
                if let Some(updated) = self.update_node(n, true, ctx)? {
                    ctx.event(&object, "", "Normal", "NodeNotReady", format!("Node {key} status is now: NodeNotReady"));
                    self.mark_pods_not_ready(key, ctx)?;
                    let mut n = updated;
                    n.spec.taints.retain(|t| t.key != NOT_READY);
                    for effect in ["NoSchedule", "NoExecute"] {
                        if !has_taint(&n, UNREACHABLE, effect) {
                            n.spec.taints.push(Taint {
                                key: UNREACHABLE.into(),
                                value: String::new(),
                                effect: effect.into(),
                                time_added: Some(ctx.now),
                            });
                        }
                    }
                    self.update_node(n, false, ctx)?;
                }
            }
        } else if ready == "True" {
            let tainted = node.spec.taints.iter().any(|t| t.key == UNREACHABLE || t.key == NOT_READY);
            if tainted {
                ctx.cause = Some(ctx.decide(|| {
                    format!("node {key} is posting status again: removing its not-ready/unreachable taints")
                }));
                let mut n = node.clone();
                n.spec.taints.retain(|t| t.key != UNREACHABLE && t.key != NOT_READY);
                self.update_node(n, false, ctx)?;
            }
        } else if ready == "False" && !has_taint(node, NOT_READY, "NoExecute") {
            let mut n = node.clone();
            for effect in ["NoSchedule", "NoExecute"] {
                n.spec.taints.push(Taint {
                    key: NOT_READY.into(),
                    value: String::new(),
                    effect: effect.into(),
                    time_added: Some(ctx.now),
                });
            }
            self.update_node(n, false, ctx)?;
        }
        self.sync_unschedulable_taint(key, ctx)?;
        Ok(Action::RequeueAfter(MONITOR_PERIOD))
    }
    /// A cordoned node (`spec.unschedulable`) carries the `unschedulable:NoSchedule` taint, and
    /// only then (upstream's NoSchedule tainting pass). The update names the cached
    /// resourceVersion, so it never overwrites a change it has not seen; a conflict is retried.
    fn sync_unschedulable_taint(&mut self, key: &str, ctx: &mut Ctx) -> Result<(), Status> {
        let Some(node) = self.nodes.cache.get(key).and_then(|o| o.as_node()) else { return Ok(()) };
        let tainted = has_taint(node, UNSCHEDULABLE, "NoSchedule");
        if tainted == node.spec.unschedulable {
            return Ok(());
        }
        // Copied only when the taint is to change (every node is checked every five seconds).
        let mut n = node.clone();
        if n.spec.unschedulable {
            n.spec.taints.push(Taint {
                key: UNSCHEDULABLE.into(),
                value: String::new(),
                effect: "NoSchedule".into(),
                time_added: Some(ctx.now),
            });
        } else {
            n.spec.taints.retain(|t| !(t.key == UNSCHEDULABLE && t.effect == "NoSchedule"));
        }
        let stored = ctx.call_object(Request::update(Object::Node(Box::new(n))))?;
        self.nodes.assume(stored);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::api::{Kind, Object};
    use crate::cluster::{Cluster, ClusterConfig};
    use crate::sim::Duration;

    fn readiness(cluster: &Cluster) -> Vec<String> {
        cluster
            .objects(Kind::Node, "")
            .iter()
            .filter_map(|o| o.as_node().map(|n| format!("{} {}", n.metadata.name, n.readiness())))
            .collect()
    }

    fn not_ready_events(cluster: &Cluster) -> usize {
        let events = cluster.objects(Kind::Event, "");
        events.iter().filter(|e| matches!(&***e, Object::Event(e) if e.reason == "NodeNotReady")).count()
    }

    #[test]
    fn an_etcd_outage_longer_than_the_grace_period_leaves_every_node_ready() {
        let mut cluster = Cluster::new(ClusterConfig { workers: 2, ..ClusterConfig::default() });
        cluster.settle(Duration::minutes(1));
        let ready = readiness(&cluster);
        cluster.with_api(|api, _| api.set_etcd_running(false));
        cluster.advance(Duration::minutes(3));
        cluster.with_api(|api, _| api.set_etcd_running(true));
        cluster.advance(Duration::minutes(2));
        assert_eq!(readiness(&cluster), ready);
        assert_eq!(not_ready_events(&cluster), 0);
    }

    #[test]
    fn a_node_silent_after_the_outage_is_still_marked_unknown_a_grace_period_later() {
        let mut cluster = Cluster::new(ClusterConfig { workers: 2, ..ClusterConfig::default() });
        cluster.settle(Duration::minutes(1));
        cluster.with_api(|api, _| api.set_etcd_running(false));
        cluster.advance(Duration::minutes(2));
        let role = crate::cluster::Role::Kubelet { node: "worker-2".into() };
        let kubelet = cluster.find_component(&role).expect("worker-2's kubelet");
        cluster.stop_component(kubelet);
        cluster.with_api(|api, _| api.set_etcd_running(true));
        cluster.advance(Duration::seconds(30));
        assert!(readiness(&cluster).contains(&"worker-2 Ready".to_string()), "a full grace period from the return");
        // kube-controller-manager lost its Lease in the outage: restarted, it waits out the
        // Lease its former self held (15 s, from its first look) before its controllers run,
        // and the grace period (40 s) counts from then.
        cluster.advance(Duration::seconds(60));
        assert!(readiness(&cluster).contains(&"worker-2 NotReady".to_string()), "{:?}", readiness(&cluster));
    }
}
