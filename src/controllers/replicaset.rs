//! The ReplicaSet controller: keeps `spec.replicas` pods matching the selector running.
//! Creates missing pods in slow-start batches (1, 2, 4, …), deletes surplus ones in
//! upstream's order (unscheduled, pending, not ready, … newest first), adopts orphans, and
//! uses expectations so it never acts twice on a change its cache has not seen yet.

use super::expectations::Expectations;
pub use super::lane::Lane;
use super::pods::{
    controller_ref, create_reporting, is_active, is_available, pod_from_template, ready_since, slow_start,
};
use super::{Action, Reconciler};
use crate::api::{Kind, Object, Pod, ReplicaSet};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::client::object_cache::FastKeys;
use crate::client::workqueue::Refusals;
use crate::record::WatchEventType;
use crate::sim::Duration;
use crate::util::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The most pods one sync creates or deletes.
pub const BURST_REPLICAS: usize = 500;

/// Per-ReplicaSet pod counts, kept up to date from every pod change so a sync need not
/// walk all of a ReplicaSet's pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    active: i32,
    ready: i32,
    fully_labeled: i32,
}

pub struct ReplicaSetController {
    replica_sets: Informer,
    pods: Informer,
    /// By owning ReplicaSet's uid.
    counts: HashMap<String, Counts, FastKeys>,
    expectations: Expectations,
    /// The last decision per ReplicaSet.
    pub lanes: BTreeMap<String, Lane>,
    /// Owned pods whose labels left their ReplicaSet's selector, by the owner's uid: the
    /// next reconcile releases them (noticed as their labels change, not by scanning).
    strays: HashMap<String, BTreeSet<String>>,
    /// The pods the last sync went through (its worker time).
    last_work: usize,
    /// Keys whose creates were refused, retried after a back-off.
    refusals: Refusals,
}

impl Default for ReplicaSetController {
    fn default() -> Self {
        ReplicaSetController {
            replica_sets: Informer::new(Kind::ReplicaSet),
            pods: Informer::new(Kind::Pod),
            counts: HashMap::default(),
            expectations: Expectations::default(),
            lanes: BTreeMap::new(),
            strays: HashMap::new(),
            last_work: 0,
            refusals: Refusals::default(),
        }
    }
}

/// The order in which surplus pods go: the first is deleted first.
pub fn deletion_order(a: &Pod, b: &Pod, related_on_node: &dyn Fn(&Pod) -> usize) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let assigned = |p: &Pod| !p.spec.node_name.is_empty();
    let phase_rank = |p: &Pod| match p.status.phase.as_str() {
        "Pending" | "" => 0,
        "Unknown" => 1,
        _ => 2,
    };
    let cost = |p: &Pod| {
        p.metadata
            .annotations
            .get("controller.kubernetes.io/pod-deletion-cost")
            .and_then(|c| c.parse::<i32>().ok())
            .unwrap_or(0)
    };
    let restarts = |p: &Pod| p.status.container_statuses.iter().map(|c| c.restart_count).max().unwrap_or(0);
    assigned(a)
        .cmp(&assigned(b))
        .then(phase_rank(a).cmp(&phase_rank(b)))
        .then(ready_since(a).is_some().cmp(&ready_since(b).is_some()))
        .then(cost(a).cmp(&cost(b)))
        .then(related_on_node(b).cmp(&related_on_node(a)))
        .then(match (ready_since(a), ready_since(b)) {
            (Some(x), Some(y)) => y.cmp(&x),
            _ => Ordering::Equal,
        })
        .then(restarts(b).cmp(&restarts(a)))
        .then(b.metadata.creation_timestamp.cmp(&a.metadata.creation_timestamp))
}

/// Whether two versions of a pod (with the same labels) count differently towards their
/// ReplicaSet: another owner, or a change in being active or ready.
fn counts_differ(old: &Object, new: &Object) -> bool {
    let same_owner = match (old.controller_ref(), new.controller_ref()) {
        (Some(a), Some(b)) => a.uid == b.uid && a.kind == b.kind && a.name == b.name,
        (a, b) => a.is_none() && b.is_none(),
    };
    let state = |o: &Object| o.as_pod().map(|p| (is_active(p), ready_since(p).is_some()));
    !same_owner || state(old) != state(new)
}

impl ReplicaSetController {
    /// Adds (`sign` 1) or removes (-1) a pod's contribution to its owner's counts.
    fn count(&mut self, pod_obj: &Object, sign: i32) {
        let Some(owner) = pod_obj.controller_ref().filter(|r| r.kind == "ReplicaSet") else { return };
        let Some(pod) = pod_obj.as_pod().filter(|p| is_active(p)) else { return };
        let labeled =
            self.replica_sets.get(pod_obj.namespace(), &owner.name).and_then(|rs| rs.as_replica_set()).is_none_or(
                |rs| rs.spec.template.metadata.labels.iter().all(|(k, v)| pod.metadata.labels.get(k) == Some(v)),
            );
        // A pod leaving after its owner's counts were dropped counts for nothing (the owner's
        // uid may come back, e.g. from an etcd restore, and must start from zero).
        let c = match (sign < 0, self.counts.get_mut(&owner.uid)) {
            (true, None) => return,
            (_, Some(c)) => c,
            (false, None) => self.counts.entry(owner.uid.clone()).or_default(),
        };
        c.active += sign;
        c.ready += sign * i32::from(ready_since(pod).is_some());
        c.fully_labeled += sign * i32::from(labeled);
    }

    /// Takes orphan pods whose labels match (adoption), as the controller's pod claim does.
    fn adopt(&mut self, rs: &Arc<Object>, ctx: &mut Ctx) {
        let Some(selector) = rs.as_replica_set().and_then(|r| r.spec.selector.as_ref()) else { return };
        let orphans: Vec<Arc<Object>> = self
            .pods
            .owned_by("")
            .into_iter()
            .filter(|p| p.namespace() == rs.namespace() && selector.matches(&p.meta().labels))
            .filter(|p| p.as_pod().is_some_and(is_active))
            .cloned()
            .collect();
        for orphan in orphans {
            let Some(mut pod) = orphan.as_pod().cloned() else { continue };
            pod.metadata.owner_references.push(controller_ref(rs));
            // Not assumed into the cache: the counts follow the watch, which brings it.
            let _ = ctx.call(Request::update(Object::Pod(pod)));
        }
    }

    /// Lets go of owned pods whose labels no longer match the selector (the other half of the
    /// pod claim): the owner reference is removed, the pod runs on as an orphan, and the
    /// ReplicaSet, one short, creates a replacement.
    fn release(&mut self, rs: &Arc<Object>, ctx: &mut Ctx) {
        let uid = &rs.meta().uid;
        // Most syncs have no strays to release: checked before anything else.
        if !self.strays.contains_key(uid) {
            return;
        }
        let Some(selector) = rs.as_replica_set().and_then(|r| r.spec.selector.as_ref()) else { return };
        let Some(keys) = self.strays.remove(uid) else { return };
        let strays: Vec<Arc<Object>> = keys
            .iter()
            .filter_map(|k| self.pods.cache.get(k))
            .filter(|p| p.controller_ref().is_some_and(|r| r.uid == *uid) && !selector.matches(&p.meta().labels))
            .cloned()
            .collect();
        for stray in strays {
            let Some(mut pod) = stray.as_pod().cloned() else { continue };
            pod.metadata.owner_references.retain(|r| r.uid != *uid);
            // Not assumed into the cache: the counts follow the watch, which brings it.
            let _ = ctx.call(Request::update(Object::Pod(pod)));
        }
    }

    /// Remembers a pod whose labels no longer match its owning ReplicaSet's selector.
    fn note_stray(&mut self, pod: &Arc<Object>) {
        let Some(owner) = pod.controller_ref().filter(|r| r.kind == "ReplicaSet") else { return };
        let stray = self
            .replica_sets
            .get(pod.namespace(), &owner.name)
            .and_then(|rs| rs.as_replica_set().and_then(|r| r.spec.selector.as_ref()))
            .is_some_and(|s| !s.matches(&pod.meta().labels));
        if stray {
            self.strays.entry(owner.uid.clone()).or_default().insert(cache_key(pod.namespace(), pod.name()));
        }
    }

    /// Creates or deletes pods towards the wanted count; false when a create was refused.
    fn manage(&mut self, key: &str, rs_obj: &Arc<Object>, rs: &ReplicaSet, have: i32, ctx: &mut Ctx) -> bool {
        let want = rs.spec.replicas.unwrap_or(1);
        let diff = have - want;
        let mut lane = Lane { want, have, action: String::new() };
        if diff < 0 {
            let count = ((-diff) as usize).min(BURST_REPLICAS);
            lane.action = format!("create {count}");
            ctx.cause = Some(ctx.decide(|| format!("ReplicaSet {key}: want {want}, have {have}: create {count}")));
            self.expectations.expect(key, count, 0, ctx.now);
            let created = slow_start(count, || {
                let pod = pod_from_template(&rs.spec.template, rs_obj, &format!("{}-", rs.metadata.name));
                create_reporting(ctx, rs_obj, pod)
            });
            self.expectations.lower_adds(key, count - created);
            if created < count {
                self.lanes.insert(key.to_string(), lane);
                return false;
            }
        } else if diff > 0 {
            let count = (diff as usize).min(BURST_REPLICAS);
            lane.action = format!("delete {count}");
            ctx.cause = Some(ctx.decide(|| format!("ReplicaSet {key}: want {want}, have {have}: delete {count}")));
            let active: Vec<Arc<Object>> = self
                .pods
                .owned_by(&rs.metadata.uid)
                .into_iter()
                .filter(|p| p.as_pod().is_some_and(is_active))
                .cloned()
                .collect();
            let mut on_node: HashMap<&str, usize> = HashMap::new();
            for p in active.iter().filter_map(|p| p.as_pod()) {
                *on_node.entry(p.spec.node_name.as_str()).or_default() += 1;
            }
            let related = |p: &Pod| on_node.get(p.spec.node_name.as_str()).copied().unwrap_or(0);
            let mut victims: Vec<&Pod> = active.iter().filter_map(|p| p.as_pod()).collect();
            victims.stable_sort_by(|a, b| deletion_order(a, b, &related));
            let victims: Vec<Pod> = victims.into_iter().take(count).cloned().collect();
            self.expectations.expect(key, 0, count, ctx.now);
            for victim in victims {
                let req = Request::delete(Kind::Pod, &victim.metadata.namespace, &victim.metadata.name);
                match ctx.call(req) {
                    Ok(_) => ctx.event(
                        rs_obj,
                        "",
                        "Normal",
                        "SuccessfulDelete",
                        format!("Deleted pod: {}", victim.metadata.name),
                    ),
                    Err(status) => {
                        self.expectations.lower_dels(key);
                        ctx.event(rs_obj, "", "Warning", "FailedDelete", format!("Error deleting: {}", status.message));
                    }
                }
            }
        }
        self.lanes.insert(key.to_string(), lane);
        true
    }
}

impl Reconciler for ReplicaSetController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.replica_sets, &mut self.pods]
    }

    fn on_start(&mut self) {
        self.counts.clear();
        let pods: Vec<Arc<Object>> = self.pods.cache.values().cloned().collect();
        for p in pods {
            self.count(&p, 1);
        }
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let obj = &delta.object;
        if informer == 0 {
            if delta.type_ == WatchEventType::Deleted {
                self.counts.remove(&obj.meta().uid);
                self.strays.remove(&obj.meta().uid);
            }
            return vec![cache_key(obj.namespace(), obj.name())];
        }
        let relabelled = delta.old.as_ref().is_none_or(|o| o.meta().labels != obj.meta().labels);
        // A change that leaves what the pod counts for as it was (most are status writes
        // before it is ready) moves no count.
        let recount = delta.type_ == WatchEventType::Deleted
            || relabelled
            || delta.old.as_ref().is_none_or(|old| counts_differ(old, obj));
        if recount {
            if let Some(old) = &delta.old {
                self.count(old, -1);
            }
            if delta.type_ != WatchEventType::Deleted {
                self.count(obj, 1);
            }
        }
        if delta.type_ != WatchEventType::Deleted && relabelled {
            self.note_stray(obj);
        }
        let mut keys = super::keys_of_both(delta, super::KeysFrom::Owners, |o| super::owner_key(o, "ReplicaSet"));
        if let Some(key) = keys.first().cloned() {
            self.expectations.observe(&key, delta);
        } else if delta.type_ != WatchEventType::Deleted {
            // An orphan: every ReplicaSet whose selector matches may adopt it.
            for rs in self.replica_sets.cache.values().filter(|r| r.namespace() == obj.namespace()) {
                let matches = rs
                    .as_replica_set()
                    .and_then(|r| r.spec.selector.as_ref())
                    .is_some_and(|s| !s.match_labels.is_empty() && s.matches(&obj.meta().labels));
                if matches {
                    keys.push(cache_key(rs.namespace(), rs.name()));
                }
            }
        }
        keys
    }

    fn work(&self) -> usize {
        self.last_work
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Action {
        self.last_work = 0;
        let Some(rs_obj) = self.replica_sets.cache.get(key).cloned() else {
            self.expectations.forget(key);
            self.lanes.remove(key);
            self.refusals.admitted(key);
            return Action::AwaitChange;
        };
        let Some(rs) = rs_obj.as_replica_set() else { return Action::AwaitChange };
        let deleting = rs.metadata.deletion_timestamp.is_some();
        if !deleting {
            self.adopt(&rs_obj, ctx);
            self.release(&rs_obj, ctx);
        }
        let mut refused = false;
        if !deleting && self.expectations.satisfied(key, ctx.now) {
            let have = self.counts.get(&rs.metadata.uid).map_or(0, |c| c.active);
            refused = !self.manage(key, &rs_obj, rs, have, ctx);
        }
        // A refused create (a quota, a terminating namespace) is retried after a back-off.
        let retry = if refused {
            Some(self.refusals.refused(key))
        } else {
            self.refusals.admitted(key);
            None
        };
        // Status, from what the cache shows now (the next sync sees this sync's writes).
        let min_ready = Duration::seconds(rs.spec.min_ready_seconds.unwrap_or(0).max(0) as u64);
        let counts = self.counts.get(&rs.metadata.uid).copied().unwrap_or_default();
        // The real sync lists the ReplicaSet's pods (counted here as they change).
        self.last_work = counts.active.max(0) as usize;
        let available = if min_ready == Duration::ZERO {
            counts.ready
        } else {
            self.pods
                .owned_by(&rs.metadata.uid)
                .iter()
                .filter_map(|p| p.as_pod())
                .filter(|p| is_active(p) && is_available(p, min_ready, ctx.now))
                .count() as i32
        };
        let mut status = rs.status.clone();
        status.replicas = counts.active;
        status.fully_labeled_replicas = Some(counts.fully_labeled);
        status.ready_replicas = Some(counts.ready);
        status.available_replicas = Some(available);
        status.terminating_replicas = None;
        status.observed_generation = Some(rs.metadata.generation);
        let requeue = min_ready > Duration::ZERO && status.ready_replicas != status.available_replicas;
        if status != rs.status {
            // The ReplicaSet with the new status (its old status is not copied to be replaced).
            let mut updated = ReplicaSet {
                api_version: rs.api_version.clone(),
                kind: rs.kind.clone(),
                metadata: rs.metadata.clone(),
                spec: rs.spec.clone(),
                status,
            };
            updated.metadata.resource_version.clear();
            if let Ok(stored) = ctx.call_object(Request::update_status(Object::ReplicaSet(Box::new(updated)))) {
                self.replica_sets.assume(stored);
            }
        }
        match (retry, requeue) {
            (Some(backoff), true) => Action::RequeueAfter(backoff.min(min_ready)),
            (Some(backoff), false) => Action::RequeueAfter(backoff),
            (None, true) => Action::RequeueAfter(min_ready),
            (None, false) => Action::AwaitChange,
        }
    }

    fn summary(&self) -> String {
        self.lanes.iter().map(|(k, l)| format!("{k}: {l}")).collect::<Vec<_>>().join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_set_refused_by_a_quota_fills_the_room_a_deleted_pod_leaves() {
        let mut s = crate::shell::Session::new(1);
        let run = |s: &mut crate::shell::Session, line: &str| s.execute(&crate::shell::Command::new(line));
        run(&mut s, "kubectl create quota two --hard=pods=2");
        run(&mut s, "kubectl run solo --image=nginx");
        run(&mut s, "kubectl create deployment web --image=nginx --replicas=2");
        run(&mut s, "sleep 10s");
        let ready =
            |s: &mut crate::shell::Session| run(s, "kubectl get deploy web -o jsonpath={.status.readyReplicas}").stdout;
        assert_eq!(ready(&mut s), "1");
        run(&mut s, "kubectl delete pod solo");
        run(&mut s, "sleep 30s");
        assert_eq!(ready(&mut s), "2", "the refused replica is created once the quota has room");
    }
    use crate::api::PodCondition;
    use crate::sim::Time;

    fn pod(name: &str, node: &str, phase: &str, ready: bool, created: u64) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.creation_timestamp = Some(Time(created));
        std::sync::Arc::make_mut(&mut p.spec).node_name = node.into();
        Arc::make_mut(&mut p.status).phase = phase.into();
        if ready {
            Arc::make_mut(&mut p.status).conditions.push(PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..Default::default()
            });
        }
        p
    }

    #[test]
    fn surplus_pods_go_unscheduled_first_then_pending_then_unready_then_newest() {
        let pods = [
            pod("ready-old", "n1", "Running", true, 1),
            pod("ready-new", "n1", "Running", true, 5),
            pod("unready", "n1", "Running", false, 2),
            pod("pending", "n1", "Pending", false, 3),
            pod("unscheduled", "", "Pending", false, 4),
        ];
        let mut order: Vec<&Pod> = pods.iter().collect();
        order.stable_sort_by(|a, b| deletion_order(a, b, &|_| 1));
        let names: Vec<&str> = order.iter().map(|p| p.metadata.name.as_str()).collect();
        assert_eq!(names, ["unscheduled", "pending", "unready", "ready-new", "ready-old"]);
    }

    #[test]
    fn only_a_change_of_owner_activity_or_readiness_moves_a_pods_count() {
        let obj = |p: Pod| Object::Pod(p);
        let creating = pod("web-1", "n1", "Pending", false, 1);
        let mut started = creating.clone();
        Arc::make_mut(&mut started.status).phase = "Running".into();
        assert!(!counts_differ(&obj(creating.clone()), &obj(started.clone())), "running, not yet ready");
        let ready = pod("web-1", "n1", "Running", true, 1);
        assert!(counts_differ(&obj(started.clone()), &obj(ready.clone())));
        let mut leaving = ready.clone();
        leaving.metadata.deletion_timestamp = Some(Time(9));
        assert!(counts_differ(&obj(ready.clone()), &obj(leaving)));
        let mut adopted = ready.clone();
        adopted.metadata.owner_references.push(crate::api::OwnerReference {
            kind: "ReplicaSet".into(),
            name: "web".into(),
            uid: "u-web".into(),
            controller: Some(true),
            ..Default::default()
        });
        assert!(counts_differ(&obj(ready), &obj(adopted)));
    }

    #[test]
    fn lanes_read_as_desired_against_actual() {
        let lane = Lane { want: 3, have: 2, action: "create 1".into() };
        assert_eq!(lane.to_string(), "want 3 · have 2 → create 1");
    }

    #[test]
    fn a_pod_relabelled_out_of_the_selector_is_released_and_replaced() {
        let mut s = crate::shell::Session::new(1);
        s.transcript(
            "kubectl create deployment web --image=nginx:1.25 --replicas=3\nsim settle\n\
             kubectl label $(kubectl get pods -l app=web -o name | head -1) app=debug --overwrite\nsleep 10s\n",
        );
        let pods = s.cluster.objects(crate::api::Kind::Pod, "default");
        let app = |p: &Arc<Object>| p.meta().labels.get("app").cloned().unwrap_or_default();
        let web: Vec<_> = pods.iter().filter(|p| app(p) == "web").collect();
        let debug: Vec<_> = pods.iter().filter(|p| app(p) == "debug").collect();
        assert_eq!((web.len(), debug.len()), (3, 1));
        assert!(debug[0].meta().owner_references.is_empty());
        assert!(web.iter().all(|p| p.controller_ref().is_some()));
    }
}
