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
    /// Deployment's when a Deployment controls it.
    fn controller_scale(&self, pod: &Pod) -> Result<(String, i32), String> {
        let name = &pod.metadata.name;
        let owner = pod
            .metadata
            .owner_references
            .iter()
            .find(|o| o.controller == Some(true))
            .ok_or_else(|| format!("found no controller ref for pod \"{name}\""))?;
        if owner.kind == "ReplicaSet" {
            if let Some(Object::ReplicaSet(rs)) =
                self.replica_sets.get(&pod.metadata.namespace, &owner.name).map(|o| o.as_ref())
            {
                if rs.metadata.uid == owner.uid {
                    let deployment = rs
                        .metadata
                        .owner_references
                        .iter()
                        .find(|o| o.controller == Some(true) && o.kind == "Deployment");
                    if let Some(d) = deployment {
                        if let Some(Object::Deployment(dep)) =
                            self.deployments.get(&pod.metadata.namespace, &d.name).map(|o| o.as_ref())
                        {
                            if dep.metadata.uid == d.uid {
                                return Ok((dep.metadata.uid.clone(), dep.spec.replicas.unwrap_or(1)));
                            }
                        }
                    }
                    return Ok((rs.metadata.uid.clone(), rs.spec.replicas.unwrap_or(1)));
                }
            }
        }
        Err(format!("found no controllers for pod \"{name}\""))
    }

    /// The scale of the pods' controllers, each counted once.
    fn expected_scale(&self, pods: &[&Pod]) -> Result<i32, String> {
        let mut scales: BTreeMap<String, i32> = BTreeMap::new();
        for pod in pods {
            let (uid, scale) = self.controller_scale(pod)?;
            scales.insert(uid, scale);
        }
        Ok(scales.values().sum())
    }

    /// How many pods are expected and how many must stay healthy.
    pub fn count(&self, pdb: &PodDisruptionBudget, pods: &[&Pod]) -> Result<Count, String> {
        let scaled = |v: &IntOrString, total: i32| v.scaled(total, true);
        if let Some(max) = &pdb.spec.max_unavailable {
            let expected = self.expected_scale(pods)?;
            let max = scaled(max, expected)?;
            return Ok(Count { expected, desired_healthy: (expected - max).max(0) });
        }
        match &pdb.spec.min_available {
            Some(IntOrString::Int(n)) => Ok(Count { expected: pods.len() as i32, desired_healthy: *n }),
            Some(pct) => {
                let expected = self.expected_scale(pods)?;
                Ok(Count { expected, desired_healthy: scaled(pct, expected)? })
            }
            None => Ok(Count { expected: pods.len() as i32, desired_healthy: 0 }),
        }
    }
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
        vec![&mut self.budgets, &mut self.pods, &mut self.replica_sets, &mut self.deployments]
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
            ctx.event(&obj, "", "Warning", "NoPods", "No matching pods found".into());
        }
        let generation = pdb.metadata.generation;
        let mut status = pdb.status.clone();
        status.observed_generation = Some(generation);
        let mut recheck = None;
        match self.count(pdb, &pods) {
            Ok(count) => {
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
                fail_safe(&mut status, generation, ctx.now, &why);
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
        assert_eq!(count, Count { expected: 3, desired_healthy: 2 });
    }

    #[test]
    fn max_unavailable_needs_the_pods_controller() {
        let c = DisruptionController::default();
        let pod = Pod { metadata: ObjectMeta { name: "bare".into(), ..Default::default() }, ..Default::default() };
        let err = c.count(&pdb(None, Some(IntOrString::Int(1))), &[&pod]).unwrap_err();
        assert_eq!(err, "found no controller ref for pod \"bare\"");
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
