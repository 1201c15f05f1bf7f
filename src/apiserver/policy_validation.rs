//! Validation of the disruption and priority kinds, with upstream's error texts: a
//! PodDisruptionBudget's `minAvailable`/`maxUnavailable`, a PriorityClass's value and its
//! reserved `system-` names.

use crate::api::scheduling::{HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_CLASSES};
use crate::api::{IntOrString, PodDisruptionBudget, PriorityClass};

/// An int that is not negative, or a percentage of at most 100.
fn int_or_percent(value: &IntOrString, field: &str, errors: &mut Vec<String>) {
    match value {
        IntOrString::Int(n) if *n < 0 => {
            errors.push(format!("{field}: Invalid value: {n}: must be greater than or equal to 0"))
        }
        IntOrString::Int(_) => {}
        IntOrString::String(s) => match s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
            None => errors.push(format!("{field}: Invalid value: \"{s}\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")),
            Some(p) if p > 100 => errors.push(format!("{field}: Invalid value: \"{s}\": must not be greater than 100%")),
            Some(_) => {}
        },
    }
}

#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn validate_pdb(pdb: &PodDisruptionBudget, errors: &mut Vec<String>) {
    let spec = &pdb.spec;
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        let value = serde_json::to_string(spec).unwrap_or_default();
        errors.push(format!("spec: Invalid value: {value}: minAvailable and maxUnavailable cannot be both set"));
    }
    if let Some(v) = &spec.min_available {
        int_or_percent(v, "spec.minAvailable", errors);
    }
    if let Some(v) = &spec.max_unavailable {
        int_or_percent(v, "spec.maxUnavailable", errors);
    }
    if let Some(p) =
        spec.unhealthy_pod_eviction_policy.as_deref().filter(|p| !["AlwaysAllow", "IfHealthyBudget"].contains(p))
    {
        errors.push(format!(
            "spec.unhealthyPodEvictionPolicy: Unsupported value: \"{p}\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""
        ));
    }
}

#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn validate_priority_class(pc: &PriorityClass, errors: &mut Vec<String>) {
    let name = pc.metadata.name.as_str();
    if name.starts_with("system-") {
        let known = SYSTEM_CLASSES.iter().find(|(n, _, _)| *n == name);
        let problem = match known {
            None => Some(format!("{name} is not a known system priority class")),
            Some((_, value, _)) if *value != pc.value || pc.global_default => {
                Some(format!("value of {name} PriorityClass must be {value}"))
            }
            Some(_) => None,
        };
        if let Some(problem) = problem {
            errors.push(format!(
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: {problem}"
            ));
        }
    } else if pc.value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errors.push(format!(
            "value: Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
        ));
    }
    if let Some(p) = pc.preemption_policy.as_deref().filter(|p| !["Never", "PreemptLowerPriority"].contains(p)) {
        errors.push(format!(
            "preemptionPolicy: Unsupported value: \"{p}\": supported values: \"Never\", \"PreemptLowerPriority\""
        ));
    }
}

/// What an update may not change: a class's value and preemption policy.
pub fn validate_priority_class_update(old: &PriorityClass, new: &PriorityClass) -> Vec<String> {
    let mut errors = Vec::new();
    if old.value != new.value {
        errors.push("value: Forbidden: may not be changed in an update.".to_string());
    }
    if old.preemption_policy != new.preemption_policy {
        let value = new.preemption_policy.as_deref().unwrap_or_default();
        errors.push(format!("preemptionPolicy: Invalid value: \"{value}\": field is immutable"));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_may_not_set_both_min_available_and_max_unavailable() {
        let mut pdb = PodDisruptionBudget::default();
        pdb.spec.min_available = Some(IntOrString::Int(1));
        pdb.spec.max_unavailable = Some(IntOrString::String("150%".into()));
        let mut errors = Vec::new();
        validate_pdb(&pdb, &mut errors);
        assert_eq!(errors.len(), 2);
        assert!(errors[0].ends_with("minAvailable and maxUnavailable cannot be both set"));
        assert!(errors[1].contains("must not be greater than 100%"));
    }

    #[test]
    fn user_classes_may_not_use_system_names_or_values() {
        let mut pc = PriorityClass::default();
        pc.metadata.name = "system-mine".into();
        let mut errors = Vec::new();
        validate_priority_class(&pc, &mut errors);
        assert!(errors[0].contains("reserved for system use only"));
        pc.metadata.name = "high".into();
        pc.value = 2_000_000_000;
        errors.clear();
        validate_priority_class(&pc, &mut errors);
        assert_eq!(errors, ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]);
    }
}
