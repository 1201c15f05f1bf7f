//! Voluntary disruption (policy/v1): a PodDisruptionBudget says how many of the pods its
//! selector picks must stay healthy (`minAvailable`) or may be down (`maxUnavailable`) while
//! evictions take pods away; the disruption controller keeps its status, and the eviction
//! subresource spends `disruptionsAllowed`.

use super::IntOrString;
use super::meta::{LabelSelector, ObjectMeta};
use crate::sim::Time;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodDisruptionBudget {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PodDisruptionBudgetSpec,
    #[serde(default)]
    pub status: PodDisruptionBudgetStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodDisruptionBudgetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// `IfHealthyBudget` (the default) or `AlwaysAllow`: kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_pod_eviction_policy: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodDisruptionBudgetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Pods the eviction subresource let go that the controller has not yet seen leave, and
    /// when they were let go.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub disrupted_pods: BTreeMap<String, Time>,
    #[serde(default)]
    pub disruptions_allowed: i32,
    #[serde(default)]
    pub current_healthy: i32,
    #[serde(default)]
    pub desired_healthy: i32,
    #[serde(default)]
    pub expected_pods: i32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// metav1.Condition, as the newer APIs carry their conditions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
}

impl PodDisruptionBudget {
    /// Whether the budget covers pods with these labels: a budget without a selector, or with
    /// an empty one, covers none.
    pub fn selects(&self, labels: &super::Labels) -> bool {
        match &self.spec.selector {
            Some(sel) if !(sel.match_labels.is_empty() && sel.match_expressions.is_empty()) => sel.matches(labels),
            _ => false,
        }
    }
}

/// The condition the controller and the eviction subresource keep on a budget.
pub const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";

impl PodDisruptionBudgetStatus {
    /// Sets `DisruptionAllowed` from `disruptions_allowed`, keeping the transition time when
    /// the status stays the same.
    pub fn set_allowed_condition(&mut self, generation: i64, now: Time) {
        let (status, reason) =
            if self.disruptions_allowed > 0 { ("True", "SufficientPods") } else { ("False", "InsufficientPods") };
        let since = self
            .conditions
            .iter()
            .find(|c| c.type_ == DISRUPTION_ALLOWED && c.status == status)
            .and_then(|c| c.last_transition_time)
            .unwrap_or(now);
        self.conditions.retain(|c| c.type_ != DISRUPTION_ALLOWED);
        self.conditions.push(Condition {
            type_: DISRUPTION_ALLOWED.into(),
            status: status.into(),
            observed_generation: Some(generation),
            last_transition_time: Some(since),
            reason: reason.into(),
            message: String::new(),
        });
    }
}
