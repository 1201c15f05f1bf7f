//! The table rows of the disruption and priority kinds, as `kubectl get pdb` and
//! `kubectl get pc` print them.

use super::age::age;
use crate::api::{PodDisruptionBudget, PriorityClass};
use crate::sim::Time;

/// NAME, MIN AVAILABLE, MAX UNAVAILABLE, ALLOWED DISRUPTIONS, AGE: the setting not given
/// prints `N/A`.
pub fn pdb_row(pdb: &PodDisruptionBudget, now: Time) -> Vec<String> {
    let cell = |v: &Option<crate::api::IntOrString>| v.as_ref().map_or("N/A".to_string(), |v| v.to_string());
    vec![
        pdb.metadata.name.clone(),
        cell(&pdb.spec.min_available),
        cell(&pdb.spec.max_unavailable),
        pdb.status.disruptions_allowed.to_string(),
        age(pdb.metadata.creation_timestamp, now),
    ]
}

/// NAME, VALUE, GLOBAL-DEFAULT, AGE, PREEMPTIONPOLICY.
pub fn priority_class_row(pc: &PriorityClass, now: Time) -> Vec<String> {
    vec![
        pc.metadata.name.clone(),
        pc.value.to_string(),
        pc.global_default.to_string(),
        age(pc.metadata.creation_timestamp, now),
        pc.preemption_policy.clone().unwrap_or_else(|| "PreemptLowerPriority".into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::IntOrString;

    #[test]
    fn a_budget_prints_na_for_the_setting_it_does_not_use() {
        let mut pdb = PodDisruptionBudget::default();
        pdb.metadata.name = "web".into();
        pdb.spec.min_available = Some(IntOrString::String("50%".into()));
        pdb.status.disruptions_allowed = 1;
        let row = pdb_row(&pdb, Time::ZERO);
        assert_eq!(row[..4], ["web", "50%", "N/A", "1"]);
    }
}
