//! The DaemonSet controller of kube-controller-manager (`daemonset-controller`): one pod of a
//! DaemonSet on every node that should run it.
//!
//! As upstream: a node should run the pod when it matches the template's `nodeSelector` and
//! required node affinity and every NoSchedule/NoExecute taint is tolerated by the template
//! plus the tolerations the controller adds to daemon pods (a node whose only untolerated
//! taints are NoSchedule keeps the pods it has). Pods are created with a required node
//! affinity on `metadata.name` for their node, so the default scheduler binds them; pods on
//! nodes that should not run them, failed or succeeded pods (failed ones with a back-off and a
//! `FailedDaemonPod` event) and all but the oldest of several pods on one node are deleted.
//! A template change rolls the pods over node by node, at most `maxUnavailable` at a time,
//! replacing old pods that are not available first; `OnDelete` leaves that to the user.
//!
//! Simplified: pods carry `pod-template-generation` (the DaemonSet's `metadata.generation`:
//! the API server here keeps no separate template generation annotation) and
//! `controller-revision-hash` (the template's hash), but no ControllerRevision history is
//! kept; `maxSurge` is not honoured (updates always delete before they create); orphan pods
//! are not adopted.

use super::deployment::template_hash;
use super::expectations::Expectations;
pub use super::lane::Lane;
use super::pods::{create_reporting, is_available, pod_from_template, ready_since, slow_start};
use super::{Action, Reconciler, Synced};
use crate::api::helpers::tolerations::tolerates;
use crate::api::{DaemonSet, IntOrString, Kind, Node, Object, Pod, PodSpec, Toleration};
use crate::apiserver::{Request, Status};
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::record::WatchEventType;
use crate::sim::{Duration, Time};
use crate::util::json_macro::json;
use crate::util::sort::StableSort;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The label holding the DaemonSet generation a pod was created from.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// The label holding the hash of the template a pod was created from.
pub const REVISION_HASH_LABEL: &str = "controller-revision-hash";
/// The most pods one sync creates or deletes.
const BURST_REPLICAS: usize = 250;

/// A DaemonSet's pods by the node they are for (shared with the informer's cache).
type PodsByNode = BTreeMap<String, Vec<Arc<Object>>>;
const FAILED_POD_BACKOFF_INITIAL: Duration = Duration::seconds(1);
const FAILED_POD_BACKOFF_MAX: Duration = Duration::minutes(15);

/// The tolerations every daemon pod gets, so node problems neither evict nor block it.
pub fn daemon_tolerations(host_network: bool) -> Vec<Toleration> {
    let mut list = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if host_network {
        list.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    list.into_iter()
        .map(|(key, effect)| Toleration {
            key: key.into(),
            operator: Some("Exists".into()),
            effect: effect.into(),
            ..Default::default()
        })
        .collect()
}

/// Adds the daemon tolerations to a pod spec, replacing any that match one by key, operator,
/// value and effect.
pub fn add_daemon_tolerations(spec: &mut PodSpec) {
    for t in daemon_tolerations(spec.host_network) {
        let same = |x: &Toleration| {
            x.key == t.key
                && x.operator.as_deref().unwrap_or("Equal") == "Exists"
                && x.value == t.value
                && x.effect == t.effect
        };
        match spec.tolerations.iter_mut().find(|x| same(x)) {
            Some(existing) => *existing = t,
            None => spec.tolerations.push(t),
        }
    }
}

/// Whether a node should run the DaemonSet's pod, and whether a pod already there may stay
/// (it may when the only taints it does not tolerate are NoSchedule).
pub fn node_should_run(node: &Node, ds: &DaemonSet) -> (bool, bool) {
    node_should_run_with(&pod_tolerations(ds), node, ds)
}

/// The tolerations a DaemonSet's pods carry: the template's plus the daemon ones.
pub fn pod_tolerations(ds: &DaemonSet) -> Vec<crate::api::Toleration> {
    let mut spec = crate::api::PodSpec { tolerations: ds.spec.template.spec.tolerations.clone(), ..Default::default() };
    spec.host_network = ds.spec.template.spec.host_network;
    add_daemon_tolerations(&mut spec);
    spec.tolerations.to_vec()
}

/// `node_should_run` with the daemon tolerations worked out once (a sync checks every node).
pub fn node_should_run_with(tolerations: &[crate::api::Toleration], node: &Node, ds: &DaemonSet) -> (bool, bool) {
    let template = &ds.spec.template.spec;
    if !template.node_name.is_empty() && template.node_name != node.metadata.name {
        return (false, false);
    }
    if !crate::api::helpers::node_affinity::fits(template, &node.metadata.labels, &node.metadata.name) {
        return (false, false);
    }
    let untolerated = |effects: &[&str]| {
        node.spec
            .taints
            .iter()
            .filter(|t| effects.contains(&t.effect.as_str()))
            .any(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
    };
    if untolerated(&["NoSchedule", "NoExecute"]) {
        return (false, !untolerated(&["NoExecute"]));
    }
    (true, true)
}

/// The node a daemon pod is for: its `nodeName`, or else the one its node affinity names.
pub fn target_node(pod: &Pod) -> Option<String> {
    if !pod.spec.node_name.is_empty() {
        return Some(pod.spec.node_name.clone());
    }
    let terms = pod
        .spec
        .affinity
        .as_ref()?
        .pointer("/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")?
        .as_array()?;
    terms.iter().filter_map(|t| t.get("matchFields")?.as_array()).flatten().find_map(|req| {
        let name_in = req.get("key")?.as_str()? == "metadata.name" && req.get("operator")?.as_str()? == "In";
        let values = req.get("values")?.as_array()?;
        if name_in && values.len() == 1 { values[0].as_str().map(String::from) } else { None }
    })
}

/// A pod's affinity with the required node terms replaced by "this node, by name".
pub fn affinity_for_node(affinity: Option<&Value>, node: &str) -> Value {
    let term = json!({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node]}
    ]}]});
    let mut affinity = affinity.cloned().filter(Value::is_object).unwrap_or_else(|| json!({}));
    if !affinity.get("nodeAffinity").is_some_and(Value::is_object) {
        affinity["nodeAffinity"] = json!({});
    }
    affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = term;
    affinity
}

/// `maxUnavailable` for a rolling update over `desired` nodes (percentages round up; at least
/// one), or None for `OnDelete`.
pub fn max_unavailable(ds: &DaemonSet, desired: i32) -> Option<i32> {
    let strategy = ds.spec.update_strategy.as_ref();
    let type_ = strategy.and_then(|s| s.get("type")).and_then(Value::as_str).unwrap_or("RollingUpdate");
    if type_ != "RollingUpdate" {
        return None;
    }
    let raw = strategy.and_then(|s| s.pointer("/rollingUpdate/maxUnavailable"));
    let value: Option<IntOrString> = raw.and_then(|v| crate::api::value_de::from_value(v).ok());
    let n = match value {
        Some(IntOrString::Int(n)) => n,
        Some(IntOrString::String(s)) => {
            let pct: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
            ((pct * desired as i64 + 99) / 100) as i32
        }
        None => 1,
    };
    Some(n.max(1))
}

/// Whether a pod was made from the DaemonSet's current template.
fn is_updated(pod: &Pod, hash: &str, generation: i64) -> bool {
    let labels = &pod.metadata.labels;
    labels.get(REVISION_HASH_LABEL).is_some_and(|h| h == hash)
        || labels.get(TEMPLATE_GENERATION_LABEL).is_some_and(|g| *g == generation.to_string())
}

/// Oldest first; among equals, running before pending.
fn by_age(a: &&Pod, b: &&Pod) -> std::cmp::Ordering {
    a.metadata
        .creation_timestamp
        .cmp(&b.metadata.creation_timestamp)
        .then((a.status.phase != "Running").cmp(&(b.status.phase != "Running")))
        .then(a.metadata.name.cmp(&b.metadata.name))
}

pub struct DaemonSetController {
    daemon_sets: Informer,
    pods: Informer,
    nodes: Informer,
    expectations: Expectations,
    /// Failed-pod deletion back-off per DaemonSet and node: (next wait, allowed again at).
    failed_backoff: HashMap<(String, String), (Duration, Time)>,
    /// The last decision per DaemonSet.
    pub lanes: BTreeMap<String, Lane>,
    /// The nodes and pods the last sync went through (its worker time).
    last_work: usize,
}

impl Default for DaemonSetController {
    fn default() -> Self {
        DaemonSetController {
            daemon_sets: Informer::new(Kind::DaemonSet),
            pods: Informer::new(Kind::Pod),
            nodes: Informer::new(Kind::Node),
            expectations: Expectations::default(),
            failed_backoff: HashMap::new(),
            lanes: BTreeMap::new(),
            last_work: 0,
        }
    }
}

/// A node as one sync of a DaemonSet sees it.
struct Placement {
    node: Arc<Object>,
    should_run: bool,
    should_continue: bool,
}

fn as_daemon_set(o: &Object) -> Option<&DaemonSet> {
    if let Object::DaemonSet(d) = o { Some(d) } else { None }
}

impl DaemonSetController {
    fn all_keys(&self) -> Vec<String> {
        self.daemon_sets.cache.keys().map(String::from).collect()
    }

    /// Each node, with whether the DaemonSet's pod should run there and whether one already
    /// there may stay: worked out once per sync, for the plan and the status alike.
    fn placement(&self, ds: &DaemonSet) -> Vec<Placement> {
        let tolerations = pod_tolerations(ds);
        self.nodes
            .cache
            .values()
            .filter_map(|o| {
                let (should_run, should_continue) = node_should_run_with(&tolerations, o.as_node()?, ds);
                Some(Placement { node: o.clone(), should_run, should_continue })
            })
            .collect()
    }

    /// The DaemonSet's pods by the node they are for (finished pods being deleted left out).
    fn pods_by_node(&self, ds: &DaemonSet) -> PodsByNode {
        let mut map = PodsByNode::new();
        for o in self.pods.owned_by(&ds.metadata.uid) {
            let Some(p) = o.as_pod() else { continue };
            if p.is_terminal() && p.metadata.deletion_timestamp.is_some() {
                continue;
            }
            if let Some(node) = target_node(p) {
                map.entry(node).or_default().push(o.clone());
            }
        }
        map
    }

    /// What each node needs: a pod created, or some pods deleted.
    fn plan(
        &mut self,
        key: &str,
        obj: &Arc<Object>,
        by_node: &PodsByNode,
        placement: &[Placement],
        ctx: &mut Ctx,
    ) -> (Vec<String>, Vec<Pod>, Option<Duration>) {
        let mut create = Vec::new();
        let mut delete = Vec::new();
        let mut requeue: Option<Duration> = None;
        // One list for every node's running pods (a sync goes through every node).
        let mut running: Vec<&Pod> = Vec::new();
        for &Placement { ref node, should_run, should_continue } in placement {
            let name = node.name();
            let here = by_node.get(name);
            let pods = || here.into_iter().flatten().filter_map(|o| o.as_pod());
            if should_run && pods().next().is_none() {
                create.push(name.to_string());
            } else if should_continue {
                running.clear();
                for pod in pods().filter(|p| p.metadata.deletion_timestamp.is_none()) {
                    match pod.status.phase.as_str() {
                        "Failed" => {
                            let backoff_key = (key.to_string(), name.to_string());
                            let (wait, until) =
                                self.failed_backoff.get(&backoff_key).copied().unwrap_or((Duration::ZERO, ctx.now));
                            if ctx.now < until {
                                let left = until.since(ctx.now);
                                requeue = Some(requeue.map_or(left, |r| r.min(left)));
                                continue;
                            }
                            let next = if wait == Duration::ZERO {
                                FAILED_POD_BACKOFF_INITIAL
                            } else {
                                Duration((wait.0 * 2).min(FAILED_POD_BACKOFF_MAX.0))
                            };
                            self.failed_backoff.insert(backoff_key, (next, ctx.now + next));
                            let message = format!(
                                "Found failed daemon pod {}/{} on node {name}, will try to kill it",
                                pod.metadata.namespace, pod.metadata.name
                            );
                            ctx.event(obj, "", "Warning", "FailedDaemonPod", message);
                            delete.push(pod.clone());
                        }
                        "Succeeded" => delete.push(pod.clone()),
                        _ => running.push(pod),
                    }
                }
                // One pod per node: the oldest stays.
                running.stable_sort_by(by_age);
                delete.extend(running.drain(..).skip(1).cloned());
            } else {
                delete.extend(pods().filter(|p| p.metadata.deletion_timestamp.is_none()).cloned());
            }
        }
        (create, delete, requeue)
    }

    /// Creates pods for nodes and deletes pods, as one step with expectations.
    fn sync_nodes(
        &mut self,
        key: &str,
        obj: &Arc<Object>,
        create: Vec<String>,
        delete: Vec<Pod>,
        hash: &str,
        ctx: &mut Ctx,
    ) -> Result<(), Status> {
        let Some(ds) = as_daemon_set(obj) else { return Ok(()) };
        let create: Vec<String> = create.into_iter().take(BURST_REPLICAS).collect();
        let delete: Vec<Pod> = delete.into_iter().take(BURST_REPLICAS).collect();
        if create.is_empty() && delete.is_empty() {
            return Ok(());
        }
        self.expectations.expect(key, create.len(), delete.len(), ctx.now);
        let mut template = ds.spec.template.clone();
        add_daemon_tolerations(std::sync::Arc::make_mut(&mut template.spec));
        template.metadata.labels.insert(TEMPLATE_GENERATION_LABEL.into(), ds.metadata.generation.to_string());
        template.metadata.labels.insert(REVISION_HASH_LABEL.into(), hash.to_string());
        // Slow start: batches of 1, 2, 4, … stop at the first failure.
        let mut nodes = create.iter();
        let mut refused = None;
        let created = slow_start(create.len(), || {
            let Some(node) = nodes.next() else { return false };
            let mut pod = pod_from_template(&template, obj, &format!("{}-", ds.metadata.name));
            let spec = Arc::make_mut(&mut pod.spec);
            spec.affinity = Some(affinity_for_node(spec.affinity.as_ref(), node));
            create_reporting(ctx, obj, pod).map_err(|status| refused = Some(status)).is_ok()
        });
        let missing = create.len() - created;
        for victim in delete {
            let req = Request::delete(Kind::Pod, &victim.metadata.namespace, &victim.metadata.name);
            match ctx.call(req) {
                Ok(_) => {
                    ctx.event(obj, "", "Normal", "SuccessfulDelete", format!("Deleted pod: {}", victim.metadata.name))
                }
                Err(status) => {
                    self.expectations.lower_dels(key);
                    ctx.event(obj, "", "Warning", "FailedDelete", format!("Error deleting: {}", status.message));
                }
            }
        }
        self.expectations.lower_adds(key, missing);
        refused.map_or(Ok(()), Err)
    }

    /// Old pods to delete for a rolling update: unavailable ones always, available ones while
    /// fewer than `maxUnavailable` nodes are without an available pod.
    fn rolling_update(ds: &DaemonSet, by_node: &PodsByNode, desired: i32, hash: &str, now: Time) -> Vec<Pod> {
        let Some(max_unavailable) = max_unavailable(ds, desired) else { return Vec::new() };
        let min_ready = Duration::seconds(ds.spec.min_ready_seconds.unwrap_or(0).max(0) as u64);
        let generation = ds.metadata.generation;
        let mut unavailable = 0;
        let mut replace = Vec::new();
        let mut candidates = Vec::new();
        for pods in by_node.values() {
            let live: Vec<&Pod> =
                pods.iter().filter_map(|o| o.as_pod()).filter(|p| p.metadata.deletion_timestamp.is_none()).collect();
            let new: Vec<&&Pod> = live.iter().filter(|p| is_updated(p, hash, generation)).collect();
            let old: Vec<&&Pod> = live.iter().filter(|p| !is_updated(p, hash, generation)).collect();
            match (new.as_slice(), old.as_slice()) {
                ([], []) | ([_], [_]) => unavailable += 1,
                ([new], []) => {
                    if !is_available(new, min_ready, now) {
                        unavailable += 1;
                    }
                }
                ([], [old]) => {
                    if !is_available(old, min_ready, now) {
                        replace.push((**old).clone());
                        unavailable += 1;
                    } else if unavailable < max_unavailable {
                        candidates.push((**old).clone());
                    }
                }
                // Several pods on the node: the main loop sorts that out first.
                _ => unavailable += 1,
            }
        }
        let room = (max_unavailable - unavailable).max(0) as usize;
        replace.extend(candidates.into_iter().take(room));
        replace
    }

    fn update_status(
        &mut self,
        ds: &DaemonSet,
        by_node: &PodsByNode,
        hash: &str,
        placement: &[Placement],
        observed: bool,
        ctx: &mut Ctx,
    ) -> (i32, i32, i32) {
        let min_ready = Duration::seconds(ds.spec.min_ready_seconds.unwrap_or(0).max(0) as u64);
        let (mut desired, mut current, mut misscheduled, mut ready, mut available, mut updated) = (0, 0, 0, 0, 0, 0);
        for &Placement { ref node, should_run, .. } in placement {
            let pods: Vec<&Pod> =
                by_node.get(node.name()).map(|v| v.iter().filter_map(|o| o.as_pod()).collect()).unwrap_or_default();
            if should_run {
                desired += 1;
                let mut pods = pods;
                pods.stable_sort_by(by_age);
                let Some(pod) = pods.first() else { continue };
                current += 1;
                if ready_since(pod).is_some() {
                    ready += 1;
                    if is_available(pod, min_ready, ctx.now) {
                        available += 1;
                    }
                }
                if is_updated(pod, hash, ds.metadata.generation) {
                    updated += 1;
                }
            } else if !pods.is_empty() {
                misscheduled += 1;
            }
        }
        let nonzero = |n: i32| (n != 0).then_some(n);
        let mut status = ds.status.clone();
        status.desired_number_scheduled = desired;
        status.current_number_scheduled = current;
        status.number_misscheduled = misscheduled;
        status.number_ready = ready;
        status.number_available = nonzero(available);
        status.number_unavailable = nonzero(desired - available);
        status.updated_number_scheduled = nonzero(updated);
        if observed {
            status.observed_generation = Some(ds.metadata.generation);
        }
        if status != ds.status {
            let mut next = ds.clone();
            next.status = status;
            next.metadata.resource_version.clear();
            if let Ok(stored) = ctx.call_object(Request::update_status(Object::DaemonSet(Box::new(next)))) {
                self.daemon_sets.assume(stored);
            }
        }
        (desired, current, ready - available)
    }
}

impl Reconciler for DaemonSetController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.daemon_sets, &mut self.pods, &mut self.nodes]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let obj = &delta.object;
        match informer {
            0 => vec![cache_key(obj.namespace(), obj.name())],
            1 => {
                let keys = super::keys_of_both(delta, super::KeysFrom::Owners, |o| super::owner_key(o, "DaemonSet"));
                if let Some(key) = keys.first().cloned() {
                    self.expectations.observe(&key, delta);
                }
                keys
            }
            _ => {
                let (Some(new), old) = (obj.as_node(), delta.old.as_ref().and_then(|o| o.as_node())) else {
                    return Vec::new();
                };
                match (delta.type_, old) {
                    // A changed node only matters to DaemonSets whose verdict on it changed.
                    (WatchEventType::Modified, Some(old)) => self
                        .daemon_sets
                        .cache
                        .iter()
                        .filter(|(_, d)| {
                            as_daemon_set(d).is_some_and(|ds| node_should_run(old, ds) != node_should_run(new, ds))
                        })
                        .map(|(k, _)| k.to_string())
                        .collect(),
                    _ => self.all_keys(),
                }
            }
        }
    }

    fn work(&self) -> usize {
        self.last_work
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        self.last_work = 0;
        let Some(obj) = self.daemon_sets.cache.get(key).cloned() else {
            self.expectations.forget(key);
            self.failed_backoff.retain(|(k, _), _| k != key);
            self.lanes.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Some(ds) = as_daemon_set(&obj).cloned() else { return Ok(Action::AwaitChange) };
        if ds.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let hash = template_hash(&ds.spec.template, ds.status.collision_count);
        let by_node = self.pods_by_node(&ds);
        let placement = self.placement(&ds);
        self.last_work = placement.len() + by_node.values().map(Vec::len).sum::<usize>();
        let mut requeue = None;
        let mut failed = None;
        let satisfied = self.expectations.satisfied(key, ctx.now);
        let mut lane = self.lanes.get(key).cloned().unwrap_or_default();
        if satisfied {
            let (create, delete, wait) = self.plan(key, &obj, &by_node, &placement, ctx);
            requeue = wait;
            lane.action.clear();
            if !create.is_empty() || !delete.is_empty() {
                let (c, d) = (create.len(), delete.len());
                lane.action = match (c, d) {
                    (c, 0) => format!("create {c}"),
                    (0, d) => format!("delete {d}"),
                    (c, d) => format!("create {c}, delete {d}"),
                };
                ctx.cause = Some(ctx.decide(|| format!("DaemonSet {key}: {}", lane.action)));
                // A refused create fails the sync: the work queue tries it again, rate-limited.
                failed = self.sync_nodes(key, &obj, create, delete, &hash, ctx).err();
            } else {
                let desired = placement.iter().filter(|p| p.should_run).count() as i32;
                let old = Self::rolling_update(&ds, &by_node, desired, &hash, ctx.now);
                if !old.is_empty() {
                    lane.action = format!("update: delete {}", old.len());
                    ctx.cause = Some(ctx.decide(|| format!("DaemonSet {key}: rolling update: {}", lane.action)));
                    failed = self.sync_nodes(key, &obj, Vec::new(), old, &hash, ctx).err();
                }
            }
        }
        let (desired, current, waiting_available) =
            self.update_status(&ds, &by_node, &hash, &placement, satisfied, ctx);
        lane.want = desired;
        lane.have = current;
        self.lanes.insert(key.to_string(), lane);
        let min_ready = ds.spec.min_ready_seconds.unwrap_or(0);
        if min_ready > 0 && waiting_available > 0 {
            let d = Duration::seconds(min_ready as u64);
            requeue = Some(requeue.map_or(d, |r: Duration| r.min(d)));
        }
        if let Some(status) = failed {
            return Err(status);
        }
        Ok(match requeue {
            Some(d) => Action::RequeueAfter(d),
            None => Action::AwaitChange,
        })
    }

    fn summary(&self) -> String {
        self.lanes.iter().map(|(k, l)| format!("{k}: {l}")).collect::<Vec<_>>().join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Taint;

    fn node(name: &str, labels: &[(&str, &str)], taints: &[(&str, &str)]) -> Node {
        let mut n = Node::default();
        n.metadata.name = name.into();
        for (k, v) in labels {
            n.metadata.labels.insert(k.to_string(), v.to_string());
        }
        for (key, effect) in taints {
            n.spec.taints.push(Taint { key: key.to_string(), effect: effect.to_string(), ..Default::default() });
        }
        n
    }

    fn control_plane() -> Node {
        node("control-plane", &[], &[("node-role.kubernetes.io/control-plane", "NoSchedule")])
    }

    #[test]
    fn every_untainted_node_runs_the_pod_but_not_the_tainted_control_plane() {
        let ds = DaemonSet::default();
        assert_eq!(node_should_run(&node("worker-1", &[], &[]), &ds), (true, true));
        // A NoSchedule taint keeps new pods off but lets existing ones stay.
        assert_eq!(node_should_run(&control_plane(), &ds), (false, true));
    }

    #[test]
    fn a_template_toleration_lets_the_pod_onto_the_control_plane() {
        let mut ds = DaemonSet::default();
        std::sync::Arc::make_mut(&mut ds.spec.template.spec).tolerations.push(Toleration {
            key: "node-role.kubernetes.io/control-plane".into(),
            operator: Some("Exists".into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        });
        assert_eq!(node_should_run(&control_plane(), &ds), (true, true));
    }

    #[test]
    fn an_untolerated_no_execute_taint_evicts_the_daemon_pod() {
        let ds = DaemonSet::default();
        let n = node("worker-1", &[], &[("dedicated", "NoExecute")]);
        assert_eq!(node_should_run(&n, &ds), (false, false));
    }

    #[test]
    fn daemon_pods_tolerate_node_problems_and_cordons() {
        let ds = DaemonSet::default();
        for (key, effect) in [
            ("node.kubernetes.io/not-ready", "NoExecute"),
            ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/unschedulable", "NoSchedule"),
            ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ] {
            assert_eq!(node_should_run(&node("w", &[], &[(key, effect)]), &ds), (true, true), "{key}");
        }
    }

    #[test]
    fn nodes_that_do_not_match_the_node_selector_or_affinity_run_nothing() {
        let mut ds = DaemonSet::default();
        std::sync::Arc::make_mut(&mut ds.spec.template.spec).node_selector.insert("disk".into(), "ssd".into());
        assert_eq!(node_should_run(&node("a", &[("disk", "ssd")], &[]), &ds), (true, true));
        assert_eq!(node_should_run(&node("b", &[], &[]), &ds), (false, false));
        let mut ds = DaemonSet::default();
        std::sync::Arc::make_mut(&mut ds.spec.template.spec).affinity =
            Some(json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}));
        assert_eq!(node_should_run(&node("a", &[("zone", "a")], &[]), &ds), (true, true));
        assert_eq!(node_should_run(&node("b", &[("zone", "b")], &[]), &ds), (false, false));
    }

    #[test]
    fn daemon_tolerations_are_added_once_in_upstream_order() {
        let mut spec = PodSpec::default();
        spec.tolerations.push(Toleration { operator: Some("Exists".into()), ..Default::default() });
        add_daemon_tolerations(&mut spec);
        add_daemon_tolerations(&mut spec);
        let keys: Vec<&str> = spec.tolerations.iter().map(|t| t.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "",
                "node.kubernetes.io/not-ready",
                "node.kubernetes.io/unreachable",
                "node.kubernetes.io/disk-pressure",
                "node.kubernetes.io/memory-pressure",
                "node.kubernetes.io/pid-pressure",
                "node.kubernetes.io/unschedulable",
            ]
        );
        spec.host_network = true;
        add_daemon_tolerations(&mut spec);
        assert_eq!(spec.tolerations.last().unwrap().key, "node.kubernetes.io/network-unavailable");
    }

    #[test]
    fn daemon_pods_are_pinned_to_their_node_by_a_match_fields_affinity() {
        let preferred = json!({"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": []}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}});
        let a = affinity_for_node(Some(&preferred), "worker-2");
        assert_eq!(a["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"], 1);
        let mut pod = Pod::default();
        Arc::make_mut(&mut pod.spec).affinity = Some(a);
        assert_eq!(target_node(&pod).as_deref(), Some("worker-2"));
        Arc::make_mut(&mut pod.spec).node_name = "worker-3".into();
        assert_eq!(target_node(&pod).as_deref(), Some("worker-3"));
        assert_eq!(target_node(&Pod::default()), None);
    }

    #[test]
    fn max_unavailable_defaults_to_one_rounds_percentages_up_and_is_none_on_delete() {
        let mut ds = DaemonSet::default();
        assert_eq!(max_unavailable(&ds, 10), Some(1));
        ds.spec.update_strategy = Some(json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}}));
        assert_eq!(max_unavailable(&ds, 10), Some(3));
        ds.spec.update_strategy = Some(json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}));
        assert_eq!(max_unavailable(&ds, 10), Some(1));
        ds.spec.update_strategy = Some(json!({"type": "OnDelete"}));
        assert_eq!(max_unavailable(&ds, 10), None);
    }

    #[test]
    fn a_rolling_update_replaces_one_available_old_pod_at_a_time() {
        let mut ds = DaemonSet::default();
        ds.metadata.generation = 2;
        let pod = |name: &str, generation: &str, ready: bool| {
            let mut p = Pod::default();
            p.metadata.name = name.into();
            p.metadata.labels.insert(TEMPLATE_GENERATION_LABEL.into(), generation.into());
            if ready {
                Arc::make_mut(&mut p.status).conditions.push(crate::api::PodCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    ..Default::default()
                });
            }
            p
        };
        let mut by_node = BTreeMap::new();
        let arc = |p: Pod| Arc::new(Object::Pod(p));
        by_node.insert("a".to_string(), vec![arc(pod("a", "1", true))]);
        by_node.insert("b".to_string(), vec![arc(pod("b", "1", true))]);
        let names = |v: Vec<Pod>| v.into_iter().map(|p| p.metadata.name).collect::<Vec<_>>();
        assert_eq!(names(DaemonSetController::rolling_update(&ds, &by_node, 2, "h", Time(0))), ["a"]);
        // One node is already without an available pod: nothing more goes.
        by_node.insert("a".to_string(), vec![arc(pod("a2", "2", false))]);
        assert!(DaemonSetController::rolling_update(&ds, &by_node, 2, "h", Time(0)).is_empty());
        // Old pods that are not available anyway are replaced at once.
        by_node.insert("b".to_string(), vec![arc(pod("b", "1", false))]);
        assert_eq!(names(DaemonSetController::rolling_update(&ds, &by_node, 2, "h", Time(0))), ["b"]);
    }
}
