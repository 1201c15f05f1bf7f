//! The eviction subresource (`POST pods/<name>/eviction`): a deletion that asks the pod's
//! PodDisruptionBudget first. A pod that is finished, still Pending or already being deleted
//! goes at once; otherwise the budget that picks it must allow a disruption, which the eviction
//! spends (recording the pod among the budget's disrupted pods) before the pod is deleted
//! gracefully. A budget that allows none refuses with 429, and clients try again later.

use super::{ApiServer, Body, Env, Request, Stage, StageResult, Status};
use crate::api::{Kind, Object, Pod, PodDisruptionBudget};
use crate::record::Seq;
use std::sync::Arc;

/// The 429's message, which `kubectl drain` prints before it tries again.
pub const VIOLATES_BUDGET: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// Pods whose eviction needs no budget's leave: finished, not yet running, or already going.
fn can_ignore_budget(pod: &Pod) -> bool {
    matches!(pod.status.phase.as_str(), "Succeeded" | "Failed" | "Pending") || pod.metadata.deletion_timestamp.is_some()
}

/// Whether the budget lets one more of its pods go; the refusal otherwise.
fn check(pdb: &PodDisruptionBudget) -> Result<(), Status> {
    let status = &pdb.status;
    if status.observed_generation.unwrap_or(0) < pdb.metadata.generation {
        let cause = format!("The disruption budget {} is still being processed by the server.", pdb.metadata.name);
        return Err(Status::too_many_requests(VIOLATES_BUDGET, vec![cause]));
    }
    if status.disruptions_allowed < 0 {
        return Err(Status::forbidden(format!(
            "poddisruptionbudget.policy \"{}\" is forbidden: pdb disruptions allowed is negative",
            pdb.metadata.name
        )));
    }
    if status.disruptions_allowed == 0 {
        let cause = format!(
            "The disruption budget {} needs {} healthy pods and has {} currently",
            pdb.metadata.name, status.desired_healthy, status.current_healthy
        );
        return Err(Status::too_many_requests(VIOLATES_BUDGET, vec![cause]));
    }
    Ok(())
}

impl ApiServer {
    /// The budgets of the pod's namespace that pick it.
    fn budgets_of(&self, pod: &Pod) -> Vec<(String, Arc<Object>)> {
        let prefix = format!("/registry/poddisruptionbudgets/{}/", pod.metadata.namespace);
        self.etcd
            .range(&prefix)
            .filter(|(_, kv)| {
                matches!(kv.value.as_ref(), Object::PodDisruptionBudget(p) if p.selects(&pod.metadata.labels))
            })
            .map(|(k, kv)| (k.to_string(), kv.value.clone()))
            .collect()
    }

    /// POST `pods/<name>/eviction`.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn evict(&mut self, req: Request, env: &mut Env, seq: Seq) -> StageResult<Arc<Object>> {
        if req.kind != Kind::Pod {
            return Err((Stage::Validation, Status::not_found(req.kind, &req.name)));
        }
        let (grace, dry_run_in_body) = match &req.body {
            Some(Body::Json(v)) => (
                v.pointer("/deleteOptions/gracePeriodSeconds").and_then(|g| g.as_i64()),
                v.pointer("/deleteOptions/dryRun").and_then(|d| d.as_array()).is_some_and(|d| !d.is_empty()),
            ),
            _ => (None, false),
        };
        let dry_run = req.dry_run || dry_run_in_body;
        let mut delete = Request::delete(Kind::Pod, &req.namespace, &req.name);
        delete.grace_period_seconds = grace.or(req.grace_period_seconds);
        delete.dry_run = dry_run;
        let pod_key = Self::key(&delete, &req.name);
        let pod = match self.etcd.get(&pod_key).map(|kv| kv.value.clone()) {
            Some(o) => match o.as_ref() {
                Object::Pod(p) => p.clone(),
                _ => return Err((Stage::Storage, Status::not_found(Kind::Pod, &req.name))),
            },
            None => return Err((Stage::Storage, Status::not_found(Kind::Pod, &req.name))),
        };
        if can_ignore_budget(&pod) {
            return self.delete(delete, env, seq);
        }
        let budgets = self.budgets_of(&pod);
        let (key, budget) = match budgets.as_slice() {
            [] => return self.delete(delete, env, seq),
            [one] => one.clone(),
            _ => {
                return Err((
                    Stage::ValidatingAdmission,
                    Status::internal(
                        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                    ),
                ));
            }
        };
        let Object::PodDisruptionBudget(pdb) = budget.as_ref() else { return self.delete(delete, env, seq) };
        // An unready pod counts for nothing healthy: it may go while the budget is met.
        let always = pdb.spec.unhealthy_pod_eviction_policy.as_deref() == Some("AlwaysAllow");
        let met = pdb.status.current_healthy >= pdb.status.desired_healthy && pdb.status.desired_healthy > 0;
        if !pod.is_ready() && (always || met) {
            return self.delete(delete, env, seq);
        }
        check(pdb).map_err(|s| (Stage::ValidatingAdmission, s))?;
        if !dry_run {
            let mut spent = (**pdb).clone();
            spent.status.disruptions_allowed -= 1;
            if spent.status.disruptions_allowed == 0 {
                spent.status.set_allowed_condition(pdb.metadata.generation, env.now);
            }
            spent.status.disrupted_pods.insert(pod.metadata.name.clone(), env.now);
            spent.metadata.resource_version.clear();
            let revision = self.etcd.get(&key).map(|kv| kv.mod_revision);
            let change = self
                .etcd
                .update(&key, Object::PodDisruptionBudget(Box::new(spent)), revision)
                .map_err(|_| (Stage::Storage, Status::conflict(Kind::PodDisruptionBudget, &pdb.metadata.name)))?;
            self.publish(change, env, seq);
        }
        self.delete(delete, env, seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_that_allows_no_disruption_refuses_with_429_and_its_count() {
        let mut pdb = PodDisruptionBudget::default();
        pdb.metadata.name = "web".into();
        pdb.metadata.generation = 1;
        pdb.status.observed_generation = Some(1);
        pdb.status.desired_healthy = 2;
        pdb.status.current_healthy = 2;
        let refused = check(&pdb).unwrap_err();
        assert_eq!(refused.code, 429);
        assert_eq!(
            refused.kubectl_message(),
            "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget."
        );
        assert_eq!(refused.causes, ["The disruption budget web needs 2 healthy pods and has 2 currently"]);
        pdb.status.disruptions_allowed = 1;
        assert!(check(&pdb).is_ok());
    }

    #[test]
    fn a_budget_not_yet_seen_by_its_controller_refuses() {
        let mut pdb = PodDisruptionBudget::default();
        pdb.metadata.generation = 1;
        pdb.status.disruptions_allowed = 3;
        assert_eq!(check(&pdb).unwrap_err().code, 429);
    }
}
