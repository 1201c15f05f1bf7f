//! Pod priority (scheduling.k8s.io/v1): a PriorityClass names a priority value; pods name
//! their class, admission writes its value into `spec.priority`, and the scheduler orders and
//! preempts by it.

use super::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriorityClass {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub value: i32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global_default: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `PreemptLowerPriority` (the default) or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_policy: Option<String>,
}

/// The class of pods the cluster cannot run without (its DNS, its add-ons).
pub const SYSTEM_CLUSTER_CRITICAL: &str = "system-cluster-critical";
/// The class of pods a node cannot run without (its static control plane, kube-proxy).
pub const SYSTEM_NODE_CRITICAL: &str = "system-node-critical";
/// Classes above this value are reserved to the system's own.
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i32 = 1_000_000_000;

/// The built-in classes every cluster has: (name, value, description).
pub const SYSTEM_CLASSES: &[(&str, i32, &str)] = &[
    (
        SYSTEM_NODE_CRITICAL,
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        SYSTEM_CLUSTER_CRITICAL,
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];
