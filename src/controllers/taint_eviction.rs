//! The taint eviction controller: pods on a node with a NoExecute taint they do not tolerate
//! are evicted at once; pods that tolerate it for `tolerationSeconds` are evicted when that
//! time has passed since the taint was added (or, for a taint that does not say when, since
//! this controller first found the pod on its way out, as upstream's timed queue counts it).

use super::{Action, Reconciler, Synced};
use crate::api::helpers::tolerations::tolerates;
use crate::api::pod::{PodCondition, set_condition};
use crate::api::{Kind, Object, Pod};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::record::WatchEventType;
use crate::sim::{Duration, Time};
use std::sync::Arc;

pub struct TaintEvictionController {
    pods: Informer,
    nodes: Informer,
    /// When each pod was first found tolerating a NoExecute taint only for a while: the time
    /// its `tolerationSeconds` run from when the taint has no `timeAdded` (a taint added with
    /// `kubectl taint`), so that looking again does not push the deadline on.
    counting: std::collections::BTreeMap<String, Time>,
}

impl Default for TaintEvictionController {
    fn default() -> Self {
        TaintEvictionController {
            pods: Informer::new(Kind::Pod),
            nodes: Informer::new(Kind::Node),
            counting: std::collections::BTreeMap::new(),
        }
    }
}

/// When a pod must leave a node, given the node's NoExecute taints: `None` if it may stay.
pub fn eviction_time(pod: &Pod, taints: &[crate::api::Taint], now: Time) -> Option<Time> {
    let mut at: Option<Time> = None;
    for taint in taints.iter().filter(|t| t.effect == "NoExecute") {
        let added = taint.time_added.unwrap_or(now);
        let toleration = pod.spec.tolerations.iter().find(|t| tolerates(t, taint));
        let when = match toleration {
            None => Some(now),
            Some(t) => t.toleration_seconds.map(|s| added + Duration::seconds(s.max(0) as u64)),
        };
        if let Some(w) = when {
            at = Some(at.map_or(w, |a: Time| a.min(w)));
        }
    }
    at
}

/// A node's NoExecute taints, the only ones that evict.
fn no_execute_taints(object: &Object) -> impl Iterator<Item = &crate::api::node::Taint> {
    object.as_node().map(|n| n.spec.taints.as_slice()).unwrap_or_default().iter().filter(|t| t.effect == "NoExecute")
}

impl Reconciler for TaintEvictionController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.pods, &mut self.nodes]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        match informer {
            0 => {
                // As upstream's taint manager: a pod update that keeps its node and its
                // tolerations (a status write, a label) changes nothing about its eviction.
                let unchanged = delta.type_ == WatchEventType::Modified
                    && delta.old.as_deref().and_then(Object::as_pod).zip(delta.object.as_pod()).is_some_and(
                        |(old, new)| {
                            Arc::ptr_eq(&old.spec, &new.spec)
                                || (old.spec.node_name == new.spec.node_name
                                    && old.spec.tolerations == new.spec.tolerations)
                        },
                    );
                // A pod on no node yet has no taints to be evicted for (its binding will say).
                let unbound = delta.object.as_pod().is_some_and(|p| p.spec.node_name.is_empty());
                if unchanged || unbound {
                    return Vec::new();
                }
                vec![cache_key(delta.object.namespace(), delta.object.name())]
            }
            _ => {
                // Only a change of a node's NoExecute taints can start or stop evictions: other
                // node updates (status, images, heartbeats) leave its pods alone.
                if delta.old.as_deref().is_some_and(|old| no_execute_taints(old).eq(no_execute_taints(&delta.object))) {
                    return Vec::new();
                }
                // Every pod on it needs a look.
                let node = delta.object.name().to_string();
                self.pods
                    .cache
                    .iter()
                    .filter(|(_, p)| p.as_pod().is_some_and(|p| p.spec.node_name == node))
                    .map(|(k, _)| k.to_string())
                    .collect()
            }
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let Some(object) = self.pods.cache.get(key).cloned() else {
            self.counting.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Some(pod) = object.as_pod() else { return Ok(Action::AwaitChange) };
        if pod.spec.node_name.is_empty() || pod.metadata.deletion_timestamp.is_some() || pod.is_terminal() {
            self.counting.remove(key);
            return Ok(Action::AwaitChange);
        }
        let Some(node_object) = self.nodes.get("", &pod.spec.node_name).cloned() else {
            return Ok(Action::AwaitChange);
        };
        let Some(node) = node_object.as_node() else { return Ok(Action::AwaitChange) };
        let since = self.counting.get(key).copied().unwrap_or(ctx.now);
        match eviction_time(pod, &node.spec.taints, since) {
            None => {
                self.counting.remove(key);
                Ok(Action::AwaitChange)
            }
            Some(at) if at > ctx.now => {
                self.counting.insert(key.to_string(), since);
                Ok(Action::RequeueAfter(at.since(ctx.now)))
            }
            Some(_) => {
                self.counting.remove(key);
                let name = format!("{}/{}", pod.metadata.namespace, pod.metadata.name);
                ctx.cause = Some(ctx.decide(|| {
                    format!("evicting {name}: node {} has a NoExecute taint it no longer tolerates", node.metadata.name)
                }));
                let mut updated = pod.clone();
                let cond = PodCondition {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                    reason: "DeletionByTaintManager".into(),
                    message: "Taint manager: deleting due to NoExecute taint".into(),
                    ..Default::default()
                };
                set_condition(&mut Arc::make_mut(&mut updated.status).conditions, cond, ctx.now);
                updated.metadata.resource_version.clear();
                super::done_unless_failed(ctx.call(Request::update_status(Object::Pod(updated))))?;
                ctx.event(&object, "", "Normal", "TaintManagerEviction", format!("Marking for deletion Pod {name}"));
                super::done_unless_failed(ctx.call(Request::delete(
                    Kind::Pod,
                    &pod.metadata.namespace,
                    &pod.metadata.name,
                )))?;
                Ok(Action::AwaitChange)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Taint, Toleration};

    #[test]
    fn a_pod_update_that_keeps_its_node_and_tolerations_is_not_looked_at_again() {
        let mut controller = TaintEvictionController::default();
        let mut pod = Pod::default();
        pod.metadata.name = "web".into();
        pod.metadata.namespace = "default".into();
        Arc::make_mut(&mut pod.spec).node_name = "worker-1".into();
        let mut status_write = pod.clone();
        Arc::make_mut(&mut status_write.status).phase = "Running".into();
        let mut moved = pod.clone();
        Arc::make_mut(&mut moved.spec).node_name = "worker-2".into();
        let delta = |old: &Pod, new: &Pod| Delta {
            type_: WatchEventType::Modified,
            object: Arc::new(Object::Pod(new.clone())),
            old: Some(Arc::new(Object::Pod(old.clone()))),
            seq: 0,
        };
        assert!(controller.keys_for(0, &delta(&pod, &status_write)).is_empty());
        assert_eq!(controller.keys_for(0, &delta(&pod, &moved)), vec!["default/web".to_string()]);
        let mut tolerant = pod.clone();
        Arc::make_mut(&mut tolerant.spec).tolerations.push(Toleration {
            key: "node.kubernetes.io/unreachable".into(),
            operator: Some("Exists".into()),
            effect: "NoExecute".into(),
            ..Default::default()
        });
        assert_eq!(controller.keys_for(0, &delta(&pod, &tolerant)), vec!["default/web".to_string()]);
    }

    fn unreachable(added: u64) -> Taint {
        Taint {
            key: "node.kubernetes.io/unreachable".into(),
            value: String::new(),
            effect: "NoExecute".into(),
            time_added: Some(Time(added)),
        }
    }

    #[test]
    fn pods_tolerating_for_a_while_leave_when_the_time_is_up() {
        let mut pod = Pod::default();
        std::sync::Arc::make_mut(&mut pod.spec).tolerations.push(Toleration {
            key: "node.kubernetes.io/unreachable".into(),
            operator: Some("Exists".into()),
            effect: "NoExecute".into(),
            toleration_seconds: Some(300),
            ..Default::default()
        });
        assert_eq!(eviction_time(&pod, &[unreachable(1000)], Time(2000)), Some(Time(301_000)));
    }

    #[test]
    fn pods_without_a_toleration_leave_at_once_and_tolerating_forever_stay() {
        assert_eq!(eviction_time(&Pod::default(), &[unreachable(0)], Time(5)), Some(Time(5)));
        let mut forever = Pod::default();
        std::sync::Arc::make_mut(&mut forever.spec)
            .tolerations
            .push(Toleration { operator: Some("Exists".into()), ..Default::default() });
        assert_eq!(eviction_time(&forever, &[unreachable(0)], Time(5)), None);
    }
}
