//! The ReplicaSet controller: keeps `spec.replicas` pods matching the selector running.
//!
//! Level-triggered, as upstream's: its event handlers only turn pod and ReplicaSet changes
//! into keys (and count the changes it was waiting for against its expectations). Each sync
//! reads the ReplicaSet and its pods from the informer cache, through the index of pods by
//! their controller's uid (and the orphans of its namespace), claims them (keeps, adopts,
//! releases), creates missing pods in slow-start batches (1, 2, 4, …) or deletes surplus ones
//! in upstream's order (unscheduled, pending, not ready, … newest first), unless expectations
//! say its cache has not yet seen its last sync's work, and writes the status those pods add
//! up to. A failed create or delete fails the sync: the work queue retries it, rate-limited.

use super::claim::claim;
use super::expectations::Expectations;
pub use super::lane::Lane;
use super::pods::{controller_ref, create_reporting, is_active, pod_from_template, ready_since, slow_start};
use super::replica_set_status::{calculate_status, min_ready};
use super::{Action, Reconciler, Synced};
use crate::api::{Kind, Object, Pod, ReplicaSet};
use crate::apiserver::{Request, Status};
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::record::WatchEventType;
use crate::sim::Duration;
use crate::util::sort::StableSort;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The most pods one sync creates or deletes.
pub const BURST_REPLICAS: usize = 500;

pub struct ReplicaSetController {
    /// ReplicaSet, or ReplicationController.
    kind: Kind,
    replica_sets: Informer,
    pods: Informer,
    expectations: Expectations,
    /// The last decision per ReplicaSet.
    pub lanes: BTreeMap<String, Lane>,
    /// The pods the last sync went through (its worker time).
    last_work: usize,
}

impl Default for ReplicaSetController {
    fn default() -> Self {
        ReplicaSetController {
            kind: Kind::ReplicaSet,
            replica_sets: Informer::new(Kind::ReplicaSet),
            pods: Informer::new(Kind::Pod),
            expectations: Expectations::default(),
            lanes: BTreeMap::new(),
            last_work: 0,
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

/// The ReplicaSet an object of the controlled kind amounts to.
fn as_replica_set(o: &Object) -> Option<std::borrow::Cow<'_, ReplicaSet>> {
    match o {
        Object::ReplicaSet(rs) => Some(std::borrow::Cow::Borrowed(rs)),
        Object::ReplicationController(rc) => Some(std::borrow::Cow::Owned(rc.as_replica_set())),
        _ => None,
    }
}

impl ReplicaSetController {
    /// The replication controller: this loop over ReplicationControllers.
    pub fn for_replication_controllers() -> Self {
        ReplicaSetController {
            kind: Kind::ReplicationController,
            replica_sets: Informer::new(Kind::ReplicationController),
            ..Default::default()
        }
    }

    /// Claims the ReplicaSet's active pods: those it controls that its selector still matches,
    /// and the matching orphans of its namespace, which it adopts; it releases those whose
    /// labels left the selector. Returns the pods it now has, and how many it looked at.
    fn claim_pods(
        &self,
        rs_obj: &Arc<Object>,
        rs: &ReplicaSet,
        ctx: &mut Ctx,
    ) -> Result<(Vec<Arc<Object>>, usize), Status> {
        let active = |p: &&Arc<Object>| p.as_pod().is_some_and(is_active);
        let controlled = self.pods.owned_by(&rs.metadata.uid);
        let orphans: Vec<&Arc<Object>> = self.pods.orphans_in(&rs.metadata.namespace);
        let looked_at = controlled.len() + orphans.len();
        let Some(selector) = rs.spec.selector.as_ref() else { return Ok((Vec::new(), looked_at)) };
        let deleting = rs.metadata.deletion_timestamp.is_some();
        let claimed = claim(
            &rs.metadata.uid,
            deleting,
            selector,
            controlled.into_iter().filter(active),
            orphans.into_iter().filter(active),
        );
        let mut pods = claimed.owned;
        let mut first_error = None;
        for orphan in claimed.adopt {
            let Some(mut pod) = orphan.as_pod().cloned() else { continue };
            pod.metadata.owner_references.push(controller_ref(rs_obj));
            match ctx.call_object(Request::update(Object::Pod(pod))) {
                // Adopted: it counts from now on (not assumed into the cache: the watch brings it).
                Ok(adopted) => pods.push(adopted),
                Err(status) if status.code == 404 => {}
                Err(status) => first_error = first_error.or(Some(status)),
            }
        }
        for stray in claimed.release {
            let Some(mut pod) = stray.as_pod().cloned() else { continue };
            pod.metadata.owner_references.retain(|r| r.uid != rs.metadata.uid);
            match ctx.call(Request::update(Object::Pod(pod))) {
                Ok(_) => {}
                Err(status) if status.code == 404 => {}
                Err(status) => first_error = first_error.or(Some(status)),
            }
        }
        match first_error {
            Some(status) => Err(status),
            None => Ok((pods, looked_at)),
        }
    }

    /// Creates or deletes pods towards the wanted count; the first refusal fails the sync.
    fn manage(
        &mut self,
        key: &str,
        rs_obj: &Arc<Object>,
        rs: &ReplicaSet,
        pods: &[Arc<Object>],
        ctx: &mut Ctx,
    ) -> Result<(), Status> {
        let want = rs.spec.replicas.unwrap_or(1);
        let have = pods.len() as i32;
        let diff = have - want;
        let mut lane = Lane { want, have, action: String::new() };
        let mut first_error = None;
        if diff < 0 {
            let count = ((-diff) as usize).min(BURST_REPLICAS);
            lane.action = format!("create {count}");
            ctx.cause = Some(
                ctx.decide(|| format!("{} {key}: want {want}, have {have}: create {count}", self.kind.info().kind)),
            );
            self.expectations.expect(key, count, 0, ctx.now);
            let created = slow_start(count, || {
                let pod = pod_from_template(&rs.spec.template, rs_obj, &format!("{}-", rs.metadata.name));
                create_reporting(ctx, rs_obj, pod).map_err(|status| first_error = Some(status)).is_ok()
            });
            // The creates not made will never be seen.
            self.expectations.lower_adds(key, count - created);
        } else if diff > 0 {
            let count = (diff as usize).min(BURST_REPLICAS);
            lane.action = format!("delete {count}");
            ctx.cause = Some(
                ctx.decide(|| format!("{} {key}: want {want}, have {have}: delete {count}", self.kind.info().kind)),
            );
            let victims = self.victims(rs, pods, count);
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
                        // Already gone is as good as deleted.
                        if status.code != 404 {
                            first_error = first_error.or(Some(status));
                        }
                    }
                }
            }
        }
        self.lanes.insert(key.to_string(), lane);
        first_error.map_or(Ok(()), Err)
    }

    /// The `count` pods to delete first. A pod ranks higher the more pods of its
    /// ReplicaSet's family (every ReplicaSet with the same controller, such as a Deployment's
    /// old and new ones) run on its node, so that scaling down spreads what remains.
    fn victims(&self, rs: &ReplicaSet, pods: &[Arc<Object>], count: usize) -> Vec<Pod> {
        let mut on_node: HashMap<&str, usize> = HashMap::new();
        if let Some(controller) = rs.metadata.owner_references.iter().find(|r| r.controller == Some(true)) {
            let family = self.replica_sets.owned_by(&controller.uid);
            for sibling in family.iter().filter(|s| s.namespace() == rs.metadata.namespace) {
                for p in self.pods.owned_by(&sibling.meta().uid).iter().filter_map(|p| p.as_pod()) {
                    *on_node.entry(p.spec.node_name.as_str()).or_default() += 1;
                }
            }
        }
        let related = |p: &Pod| on_node.get(p.spec.node_name.as_str()).copied().unwrap_or(0);
        let mut ranked: Vec<&Pod> = pods.iter().filter_map(|p| p.as_pod()).collect();
        ranked.stable_sort_by(|a, b| deletion_order(a, b, &related));
        ranked.into_iter().take(count).cloned().collect()
    }

    /// The ReplicaSets whose selector matches an orphan pod's labels: each may adopt it.
    fn adopters(&self, pod: &Object) -> Vec<String> {
        self.replica_sets
            .cache
            .values()
            .filter(|r| r.namespace() == pod.namespace())
            .filter(|r| {
                as_replica_set(r)
                    .and_then(|r| r.spec.selector.clone())
                    .is_some_and(|s| !s.match_labels.is_empty() && s.matches(&pod.meta().labels))
            })
            .map(|r| cache_key(r.namespace(), r.name()))
            .collect()
    }
}

impl Reconciler for ReplicaSetController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.replica_sets, &mut self.pods]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let obj = &delta.object;
        if informer == 0 {
            return vec![cache_key(obj.namespace(), obj.name())];
        }
        // The ReplicaSets that control the pod now and controlled it before.
        let kind = self.kind.info().kind;
        let mut keys = super::keys_of_both(delta, super::KeysFrom::Owners, |o| super::owner_key(o, kind));
        if let Some(key) = keys.first() {
            self.expectations.observe(key, delta);
        }
        // An orphan that is new, or whose labels or owners changed: every ReplicaSet whose
        // selector matches may adopt it.
        let orphan = obj.controller_ref().is_none() && delta.type_ != WatchEventType::Deleted;
        let changed = delta.old.as_ref().is_none_or(|old| {
            old.meta().labels != obj.meta().labels || old.meta().owner_references != obj.meta().owner_references
        });
        if orphan && changed {
            for key in self.adopters(obj) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        keys
    }

    fn work(&self) -> usize {
        self.last_work
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        self.last_work = 0;
        let Some(rs_obj) = self.replica_sets.cache.get(key).cloned() else {
            self.expectations.forget(key);
            self.lanes.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Some(rs) = as_replica_set(&rs_obj) else { return Ok(Action::AwaitChange) };
        let rs = rs.as_ref();
        // Without a selector it could own no pod it made (validation refuses such a ReplicaSet;
        // only a write straight to etcd stores one): making pods would never end.
        if rs.spec.selector.as_ref().is_none_or(|s| s.match_labels.is_empty() && s.match_expressions.is_empty()) {
            let kind = self.kind.info().kind;
            ctx.decide(|| format!("{kind} {key} has no selector: it cannot tell its pods, so none is made"));
            return Ok(Action::AwaitChange);
        }
        // Read before the pods: a change seen after this still counts towards them.
        let needs_sync = self.expectations.satisfied(key, ctx.now);
        let (pods, looked_at) = self.claim_pods(&rs_obj, rs, ctx)?;
        self.last_work = looked_at;
        let manage_error = if needs_sync && rs.metadata.deletion_timestamp.is_none() {
            self.manage(key, &rs_obj, rs, &pods, ctx).err()
        } else {
            None
        };
        // The status those pods add up to (the next sync sees this sync's creates and deletes).
        let pods: Vec<&Pod> = pods.iter().filter_map(|p| p.as_pod()).collect();
        let status = calculate_status(rs, &pods, manage_error.as_ref(), ctx.now);
        let min_ready = min_ready(rs);
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
            let object = match rs_obj.as_ref() {
                Object::ReplicationController(rc) => {
                    let mut rc = rc.clone();
                    rc.status = updated.status;
                    rc.metadata.resource_version.clear();
                    Object::ReplicationController(rc)
                }
                _ => Object::ReplicaSet(Box::new(updated)),
            };
            let stored = ctx.call_object(Request::update_status(object))?;
            self.replica_sets.assume(stored);
        }
        match manage_error {
            Some(error) => Err(error),
            // Pods ready but not yet available are looked at again once they may be.
            None if requeue => Ok(Action::RequeueAfter(min_ready)),
            None => Ok(Action::AwaitChange),
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

    #[test]
    fn a_replicaset_without_a_selector_written_to_etcd_makes_no_pods() {
        let mut s = crate::shell::Session::new(1);
        let body = r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}"#;
        s.execute(&crate::shell::Command::new(&format!("etcdctl put /registry/replicasets/default/r '{body}'")));
        s.execute(&crate::shell::Command::new("sleep 1m"));
        assert!(s.cluster.objects(crate::api::Kind::Pod, "default").is_empty(), "it would make pods without end");
    }
}
