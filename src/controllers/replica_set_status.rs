//! A ReplicaSet's status as a function of the ReplicaSet and the active pods it claimed: how
//! many there are, how many carry every label of its template, how many are ready and how
//! many have been ready for `minReadySeconds`, the generation it was computed for, and a
//! `ReplicaFailure` condition while creating or deleting pods fails.

use super::claim::SameLabels;
use super::pods::ready_since;
use crate::api::apps::{ReplicaSetStatus, WorkloadCondition};
use crate::api::{Pod, ReplicaSet};
use crate::apiserver::Status;
use crate::sim::{Duration, Time};

/// The condition a ReplicaSet carries while its pods cannot be created or deleted.
pub const REPLICA_FAILURE: &str = "ReplicaFailure";

/// The status `rs` should have, given its active claimed `pods` at `now` and the error, if
/// any, of this sync's creates or deletes.
pub fn calculate_status(rs: &ReplicaSet, pods: &[&Pod], manage_error: Option<&Status>, now: Time) -> ReplicaSetStatus {
    let template = &rs.spec.template.metadata.labels;
    let min_ready = min_ready(rs);
    let (mut fully_labeled, mut ready, mut available) = (0usize, 0usize, 0usize);
    let mut verdicts = SameLabels::default();
    for pod in pods {
        let labels = &pod.metadata.labels;
        fully_labeled += usize::from(verdicts.judge(labels, |l| template.iter().all(|(k, v)| l.get(k) == Some(v))));
        if let Some(since) = ready_since(pod) {
            ready += 1;
            available += usize::from(now.since(since) >= min_ready);
        }
    }
    let mut status = rs.status.clone();
    status.replicas = pods.len() as i32;
    status.fully_labeled_replicas = Some(fully_labeled as i32);
    status.ready_replicas = Some(ready as i32);
    status.available_replicas = Some(available as i32);
    status.terminating_replicas = None;
    status.observed_generation = Some(rs.metadata.generation);
    let failing = status.conditions.iter().any(|c| c.type_ == REPLICA_FAILURE);
    match manage_error {
        Some(error) if !failing => {
            let want = rs.spec.replicas.unwrap_or(1);
            let reason = match (pods.len() as i32).cmp(&want) {
                std::cmp::Ordering::Less => "FailedCreate",
                std::cmp::Ordering::Greater => "FailedDelete",
                std::cmp::Ordering::Equal => "",
            };
            status.conditions.push(WorkloadCondition {
                type_: REPLICA_FAILURE.into(),
                status: "True".into(),
                last_transition_time: Some(now),
                reason: reason.into(),
                message: error.message.clone(),
                ..Default::default()
            });
        }
        None if failing => status.conditions.retain(|c| c.type_ != REPLICA_FAILURE),
        _ => {}
    }
    status
}

/// `spec.minReadySeconds` as a span.
pub fn min_ready(rs: &ReplicaSet) -> Duration {
    Duration::seconds(rs.spec.min_ready_seconds.unwrap_or(0).max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PodCondition;
    use std::sync::Arc;

    fn rs(replicas: i32, min_ready_seconds: i32) -> ReplicaSet {
        let mut rs = ReplicaSet::default();
        rs.metadata.generation = 4;
        rs.spec.replicas = Some(replicas);
        rs.spec.min_ready_seconds = Some(min_ready_seconds);
        rs.spec.template.metadata.labels.insert("app".into(), "web".into());
        rs.spec.template.metadata.labels.insert("tier".into(), "front".into());
        rs
    }

    fn pod(tier: Option<&str>, ready_at: Option<u64>) -> Pod {
        let mut p = Pod::default();
        p.metadata.labels.insert("app".into(), "web".into());
        if let Some(t) = tier {
            p.metadata.labels.insert("tier".into(), t.into());
        }
        if let Some(at) = ready_at {
            Arc::make_mut(&mut p.status).conditions.push(PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(Time(at)),
                ..Default::default()
            });
        }
        p
    }

    #[test]
    fn replicas_count_every_pod_fully_labeled_only_those_with_all_template_labels() {
        let pods = [pod(Some("front"), None), pod(None, None), pod(Some("back"), None)];
        let status = calculate_status(&rs(3, 0), &pods.iter().collect::<Vec<_>>(), None, Time(0));
        assert_eq!((status.replicas, status.fully_labeled_replicas), (3, Some(1)));
        assert_eq!(status.observed_generation, Some(4));
    }

    #[test]
    fn a_ready_pod_is_available_once_ready_for_min_ready_seconds() {
        let pods = [pod(Some("front"), Some(0)), pod(Some("front"), Some(8_000)), pod(Some("front"), None)];
        let refs: Vec<&Pod> = pods.iter().collect();
        let at = |ms| calculate_status(&rs(3, 5), &refs, None, Time(ms));
        assert_eq!((at(10_000).ready_replicas, at(10_000).available_replicas), (Some(2), Some(1)));
        assert_eq!(at(13_000).available_replicas, Some(2));
        let no_wait = calculate_status(&rs(3, 0), &refs, None, Time(8_000));
        assert_eq!(no_wait.available_replicas, Some(2));
    }

    #[test]
    fn a_failed_create_sets_replica_failure_and_a_clean_sync_clears_it() {
        let refused = Status::bad_request("pods \"web-x\" is forbidden: exceeded quota: two");
        let mut set = rs(3, 0);
        let failing = calculate_status(&set, &[], Some(&refused), Time(7));
        let cond = &failing.conditions[0];
        assert_eq!((cond.type_.as_str(), cond.reason.as_str()), (REPLICA_FAILURE, "FailedCreate"));
        assert_eq!((cond.message.as_str(), cond.last_transition_time), (refused.message.as_str(), Some(Time(7))));
        set.status = failing;
        let again = calculate_status(&set, &[], Some(&refused), Time(9));
        assert_eq!(again.conditions, set.status.conditions, "kept as it was, not set anew");
        assert!(calculate_status(&set, &[], None, Time(9)).conditions.is_empty());
    }
}
