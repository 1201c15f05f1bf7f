//! The disruption controller: for each PodDisruptionBudget it counts the pods its selector
//! picks, works out how many must stay healthy (from `minAvailable`, or from the scale of the
//! pods' controllers and `maxUnavailable` or a percentage), and writes how many may be
//! disrupted now into the budget's status, which the eviction subresource spends.

use super::lane::Lane;
use super::{Action, Reconciler, Synced};
use crate::api::disruption::PodDisruptionBudgetStatus;
use crate::api::{IntOrString, Kind, Object, Pod, PodDisruptionBudget};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::sim::{Duration, Time};
use std::collections::BTreeMap;

/// How long a pod the eviction subresource let go is kept out of the healthy count while the
/// controller waits to see it deleted.
pub const DELETION_TIMEOUT: Duration = Duration::seconds(120);

pub struct DisruptionController {
    budgets: Informer,
    pods: Informer,
    replica_sets: Informer,
    deployments: Informer,
    replication_controllers: Informer,
    stateful_sets: Informer,
    /// Healthy pods wanted and had, per budget.
    pub lanes: BTreeMap<String, Lane>,
}

impl Default for DisruptionController {
    fn default() -> Self {
        DisruptionController {
            budgets: Informer::new(Kind::PodDisruptionBudget),
            pods: Informer::new(Kind::Pod),
            replica_sets: Informer::new(Kind::ReplicaSet),
            deployments: Informer::new(Kind::Deployment),
            replication_controllers: Informer::new(Kind::ReplicationController),
            stateful_sets: Informer::new(Kind::StatefulSet),
            lanes: BTreeMap::new(),
        }
    }
}

/// Whether the budget picks pods with these labels (none without a selector).
pub fn selects(pdb: &PodDisruptionBudget, labels: &crate::api::Labels) -> bool {
    pdb.selects(labels)
}

fn as_pdb(o: &Object) -> Option<&PodDisruptionBudget> {
    if let Object::PodDisruptionBudget(p) = o { Some(p) } else { None }
}

/// What a budget comes to over its pods.
#[derive(Debug, PartialEq)]
pub struct Count {
    pub expected: i32,
    pub desired_healthy: i32,
    /// Pods without a controller, left out of the expected count.
    pub unmanaged: Vec<String>,
}

impl DisruptionController {
    /// The budgets of `namespace` that pick pods labelled `labels`.
    fn budgets_for(&self, namespace: &str, labels: &crate::api::Labels) -> Vec<String> {
        self.budgets
            .cache
            .values()
            .filter(|o| o.namespace() == namespace)
            .filter(|o| as_pdb(o).is_some_and(|p| selects(p, labels)))
            .map(|o| cache_key(o.namespace(), o.name()))
            .collect()
    }

    /// The replicas the pod's controller wants, by its uid: a ReplicaSet's own, or its
    /// Deployment's when a Deployment controls it; a ReplicationController's. `Ok(None)` for
    /// a pod without a controller.
    fn controller_scale(&self, pod: &Pod) -> Result<Option<(String, i32)>, String> {
        let Some(owner) = pod.metadata.owner_references.iter().find(|o| o.controller == Some(true)) else {
            return Ok(None);
        };
        let ns = &pod.metadata.namespace;
        let found = match owner.kind.as_str() {
            "ReplicaSet" => match self.replica_sets.get(ns, &owner.name).map(|o| o.as_ref()) {
                Some(Object::ReplicaSet(rs)) if rs.metadata.uid == owner.uid => {
                    let deployment = rs
                        .metadata
                        .owner_references
                        .iter()
                        .find(|o| o.controller == Some(true) && o.kind == "Deployment")
                        .and_then(|d| match self.deployments.get(ns, &d.name).map(|o| o.as_ref()) {
                            Some(Object::Deployment(dep)) if dep.metadata.uid == d.uid => {
                                Some((dep.metadata.uid.clone(), dep.spec.replicas.unwrap_or(1)))
                            }
                            _ => None,
                        });
                    deployment.or(Some((rs.metadata.uid.clone(), rs.spec.replicas.unwrap_or(1))))
                }
                _ => None,
            },
            "ReplicationController" => match self.replication_controllers.get(ns, &owner.name).map(|o| o.as_ref()) {
                Some(Object::ReplicationController(rc)) if rc.metadata.uid == owner.uid => {
                    Some((rc.metadata.uid.clone(), rc.spec.replicas.unwrap_or(1)))
                }
                _ => None,
            },
            "StatefulSet" => match self.stateful_sets.get(ns, &owner.name).map(|o| o.as_ref()) {
                Some(Object::StatefulSet(sts)) if sts.metadata.uid == owner.uid => {
                    Some((sts.metadata.uid.clone(), sts.spec.replicas.unwrap_or(1)))
                }
                _ => None,
            },
            _ => None,
        };
        match found {
            Some(scale) => Ok(Some(scale)),
            None => Err(format!("found no controllers for pod \"{}\"", pod.metadata.name)),
        }
    }

    /// The scale of the pods' controllers, each counted once, and the pods without one.
    fn expected_scale(&self, pods: &[&Pod]) -> Result<(i32, Vec<String>), String> {
        let mut scales: BTreeMap<String, i32> = BTreeMap::new();
        let mut unmanaged = Vec::new();
        for pod in pods {
            match self.controller_scale(pod)? {
                Some((uid, scale)) => {
                    scales.insert(uid, scale);
                }
                None => unmanaged.push(pod.metadata.name.clone()),
            }
        }
        Ok((scales.values().sum(), unmanaged))
    }

    /// How many pods are expected and how many must stay healthy.
    pub fn count(&self, pdb: &PodDisruptionBudget, pods: &[&Pod]) -> Result<Count, String> {
        let scaled = |v: &IntOrString, total: i32| v.scaled(total, true);
        if let Some(max) = &pdb.spec.max_unavailable {
            let (expected, unmanaged) = self.expected_scale(pods)?;
            let max = scaled(max, expected)?;
            return Ok(Count { expected, desired_healthy: (expected - max).max(0), unmanaged });
        }
        match &pdb.spec.min_available {
            Some(IntOrString::Int(n)) => {
                Ok(Count { expected: pods.len() as i32, desired_healthy: *n, unmanaged: Vec::new() })
            }
            Some(pct) => {
                let (expected, unmanaged) = self.expected_scale(pods)?;
                Ok(Count { expected, desired_healthy: scaled(pct, expected)?, unmanaged })
            }
            None => Ok(Count { expected: 0, desired_healthy: 0, unmanaged: Vec::new() }),
        }
    }
}

/// A selector as Go's `%v` prints a `*LabelSelector` in the UnmanagedPods event.
fn go_selector(selector: Option<&crate::api::LabelSelector>) -> String {
    let Some(sel) = selector else { return "nil".into() };
    let labels: String = sel.match_labels.iter().map(|(k, v)| format!("{k}: {v},")).collect();
    let exprs: String = sel
        .match_expressions
        .iter()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e.key,
                e.operator,
                e.values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}

/// Keeps the pods the eviction subresource let go that are not yet seen deleted and whose
/// wait has not run out; the earliest time one runs out.
fn disrupted_still(
    disrupted: &BTreeMap<String, Time>,
    pods: &[&Pod],
    now: Time,
) -> (BTreeMap<String, Time>, Option<Time>) {
    let mut kept = BTreeMap::new();
    let mut recheck: Option<Time> = None;
    for (name, at) in disrupted {
        let Some(pod) = pods.iter().find(|p| p.metadata.name == *name) else { continue };
        if pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let expires = *at + DELETION_TIMEOUT;
        if expires <= now {
            continue;
        }
        recheck = Some(recheck.map_or(expires, |r: Time| r.min(expires)));
        kept.insert(name.clone(), *at);
    }
    (kept, recheck)
}

/// Ready, not being deleted, and not let go by an eviction.
fn healthy(pods: &[&Pod], disrupted: &BTreeMap<String, Time>) -> i32 {
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| !disrupted.contains_key(&p.metadata.name))
        .filter(|p| p.is_ready())
        .count() as i32
}

impl Reconciler for DisruptionController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![
            &mut self.budgets,
            &mut self.pods,
            &mut self.replica_sets,
            &mut self.deployments,
            &mut self.replication_controllers,
            &mut self.stateful_sets,
        ]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let o = &delta.object;
        match informer {
            0 => vec![cache_key(o.namespace(), o.name())],
            1 => super::keys_of_both(delta, super::KeysFrom::Labels, |o| {
                self.budgets_for(o.namespace(), &o.meta().labels)
            }),
            // Controllers are read for their scale only: a change of scale shows in their pods.
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let Some(obj) = self.budgets.cache.get(key).cloned() else {
            self.lanes.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Some(pdb) = as_pdb(&obj) else { return Ok(Action::AwaitChange) };
        if pdb.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let ns = pdb.metadata.namespace.clone();
        let pods: Vec<&Pod> = self
            .pods
            .cache
            .values()
            .filter(|o| o.namespace() == ns)
            .filter_map(|o| o.as_pod())
            .filter(|p| selects(pdb, &p.metadata.labels))
            .collect();
        if pods.is_empty() {
            ctx.event(&obj, "", "Normal", "NoPods", "No matching pods found".into());
        }
        let generation = pdb.metadata.generation;
        let mut status = pdb.status.clone();
        status.observed_generation = Some(generation);
        let mut recheck = None;
        match self.count(pdb, &pods) {
            Ok(count) => {
                if !count.unmanaged.is_empty() {
                    ctx.event(
                        &obj,
                        "",
                        "Warning",
                        "UnmanagedPods",
                        format!(
                            "Pods selected by this PodDisruptionBudget (selector: {}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.",
                            go_selector(pdb.spec.selector.as_ref())
                        ),
                    );
                }
                let (disrupted, next) = disrupted_still(&pdb.status.disrupted_pods, &pods, ctx.now);
                recheck = next;
                let current = healthy(&pods, &disrupted);
                let allowed = current - count.desired_healthy;
                status.disruptions_allowed = if count.expected <= 0 || allowed <= 0 { 0 } else { allowed };
                status.current_healthy = current;
                status.desired_healthy = count.desired_healthy;
                status.expected_pods = count.expected;
                status.disrupted_pods = disrupted;
                status.set_allowed_condition(generation, ctx.now);
                self.lanes.insert(
                    key.to_string(),
                    Lane { want: count.desired_healthy, have: current, action: String::new() },
                );
            }
            Err(why) => {
                ctx.event(
                    &obj,
                    "",
                    "Warning",
                    "CalculateExpectedPodCountFailed",
                    format!("Failed to calculate the number of expected pods: {why}"),
                );
                status.observed_generation = pdb.status.observed_generation;
                fail_safe(&mut status, pdb.status.observed_generation.unwrap_or(0), ctx.now, &why);
            }
        }
        if status != pdb.status {
            let mut next = pdb.clone();
            next.status = status;
            next.metadata.resource_version.clear();
            ctx.cause = Some(ctx.decide(|| {
                format!("PodDisruptionBudget {key}: {} disruption(s) allowed", next.status.disruptions_allowed)
            }));
            let stored = ctx.call_object(Request::update_status(Object::PodDisruptionBudget(Box::new(next))))?;
            self.budgets.assume(stored);
        }
        Ok(match recheck {
            Some(t) => Action::RequeueAfter(t.since(ctx.now)),
            None => Action::AwaitChange,
        })
    }

    fn summary(&self) -> String {
        self.lanes.iter().map(|(k, l)| format!("{k}: {l}")).collect::<Vec<_>>().join("\n")
    }
}

/// What a budget says while its pods cannot be counted: no disruption allowed.
fn fail_safe(status: &mut PodDisruptionBudgetStatus, generation: i64, now: Time, why: &str) {
    status.disruptions_allowed = 0;
    status.set_allowed_condition(generation, now);
    if let Some(c) = status.conditions.iter_mut().find(|c| c.type_ == crate::api::disruption::DISRUPTION_ALLOWED) {
        c.reason = "SyncFailed".into();
        c.message = why.to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{LabelSelector, ObjectMeta};

    fn pdb(min: Option<IntOrString>, max: Option<IntOrString>) -> PodDisruptionBudget {
        let mut p = PodDisruptionBudget::default();
        p.spec.min_available = min;
        p.spec.max_unavailable = max;
        p.spec.selector = Some(LabelSelector {
            match_labels: [("app".to_string(), "web".to_string())].into_iter().collect(),
            ..Default::default()
        });
        p
    }

    #[test]
    fn an_integer_min_available_counts_the_pods_themselves() {
        let c = DisruptionController::default();
        let pods = [Pod::default(), Pod::default(), Pod::default()];
        let refs: Vec<&Pod> = pods.iter().collect();
        let count = c.count(&pdb(Some(IntOrString::Int(2)), None), &refs).unwrap();
        assert_eq!(count, Count { expected: 3, desired_healthy: 2, unmanaged: Vec::new() });
    }

    #[test]
    fn max_unavailable_leaves_out_pods_without_a_controller_and_fails_on_unknown_ones() {
        let c = DisruptionController::default();
        let mut pod = Pod { metadata: ObjectMeta { name: "bare".into(), ..Default::default() }, ..Default::default() };
        let count = c.count(&pdb(None, Some(IntOrString::Int(1))), &[&pod]).unwrap();
        assert_eq!(count, Count { expected: 0, desired_healthy: 0, unmanaged: vec!["bare".into()] });
        pod.metadata.owner_references = vec![crate::api::OwnerReference {
            kind: "DaemonSet".into(),
            name: "ds".into(),
            controller: Some(true),
            ..Default::default()
        }]
        .into();
        let err = c.count(&pdb(None, Some(IntOrString::Int(1))), &[&pod]).unwrap_err();
        assert_eq!(err, "found no controllers for pod \"bare\"");
    }

    #[test]
    fn a_budget_with_an_empty_selector_picks_no_pods() {
        let mut p = pdb(Some(IntOrString::Int(1)), None);
        p.spec.selector = Some(LabelSelector::default());
        assert!(!selects(&p, &Default::default()));
    }

    #[test]
    fn an_evicted_pod_leaves_the_disrupted_list_once_deleted_or_after_two_minutes() {
        let mut gone = Pod { metadata: ObjectMeta { name: "a".into(), ..Default::default() }, ..Default::default() };
        gone.metadata.deletion_timestamp = Some(Time::ZERO);
        let waiting = Pod { metadata: ObjectMeta { name: "b".into(), ..Default::default() }, ..Default::default() };
        let disrupted: BTreeMap<String, Time> = [("a".into(), Time::ZERO), ("b".into(), Time::ZERO)].into();
        let (kept, recheck) = disrupted_still(&disrupted, &[&gone, &waiting], Time::ZERO + Duration::seconds(60));
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(recheck, Some(Time::ZERO + DELETION_TIMEOUT));
        let (kept, _) = disrupted_still(&disrupted, &[&gone, &waiting], Time::ZERO + DELETION_TIMEOUT);
        assert!(kept.is_empty());
    }
}
