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
use crate::component::{Ctx, Delta, Informer};
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
}

impl Default for NodeLifecycleController {
    fn default() -> Self {
        NodeLifecycleController {
            nodes: Informer::new(Kind::Node),
            leases: Informer::new(Kind::Lease),
            pods: Informer::new(Kind::Pod),
            registered: BTreeSet::new(),
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
        let stored = ctx.call_object(req)?;
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

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
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
        let silent_for = ctx.now.since(self.last_heartbeat(node));
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
