//! The disruption and priority kinds as kubectl shows them: their table rows
//! (`kubectl get pdb`, `kubectl get pc`) and their `describe` text.

use super::age::age;
use super::describe::{events_section, layout};
use crate::api::{Event, PodDisruptionBudget, PriorityClass};
use crate::sim::Time;
use std::fmt::Write;

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

/// `kubectl describe pdb`: the setting it uses, its selector, and its status counts.
pub fn describe_pdb(pdb: &PodDisruptionBudget, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", pdb.metadata.name);
    let _ = writeln!(out, "Namespace:\t{}", pdb.metadata.namespace);
    if let Some(v) = &pdb.spec.min_available {
        let _ = writeln!(out, "Min available:\t{v}");
    } else if let Some(v) = &pdb.spec.max_unavailable {
        let _ = writeln!(out, "Max unavailable:\t{v}");
    }
    match &pdb.spec.selector {
        Some(sel) => {
            let text = sel.to_selector_string();
            let _ = writeln!(out, "Selector:\t{}", if text.is_empty() { "<none>" } else { &text });
        }
        None => out.push_str("Selector:\t<unset>\n"),
    }
    let s = &pdb.status;
    out.push_str("Status:\n");
    let _ = writeln!(out, "    Allowed disruptions:\t{}", s.disruptions_allowed);
    let _ = writeln!(out, "    Current:\t{}", s.current_healthy);
    let _ = writeln!(out, "    Desired:\t{}", s.desired_healthy);
    let _ = writeln!(out, "    Total:\t{}", s.expected_pods);
    events_section(&mut out, events, now);
    layout(&out)
}

/// `kubectl describe pc`: its value, whether it is the default, and what it is for.
pub fn describe_priority_class(pc: &PriorityClass, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", pc.metadata.name);
    let _ = writeln!(out, "Value:\t{}", pc.value);
    let _ = writeln!(out, "GlobalDefault:\t{}", pc.global_default);
    let _ = writeln!(out, "PreemptionPolicy:\t{}", pc.preemption_policy.as_deref().unwrap_or("PreemptLowerPriority"));
    let _ = writeln!(out, "Description:\t{}", pc.description);
    let annotations: Vec<String> = pc.metadata.annotations.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ =
        writeln!(out, "Annotations:\t{}", if annotations.is_empty() { "<none>".into() } else { annotations.join(",") });
    events_section(&mut out, events, now);
    layout(&out)
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
