//! Namespace policy (core/v1): a ResourceQuota caps what a namespace may hold and use; a
//! LimitRange gives containers default requests and limits and bounds them.

use super::Quantity;
use super::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Resource name → quantity, as `spec.hard` and `status.used` hold them.
pub type ResourceList = BTreeMap<String, Quantity>;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceQuota {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ResourceQuotaSpec,
    #[serde(default)]
    pub status: ResourceQuotaStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceQuotaSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hard: ResourceList,
    /// Kept as written; the sandbox's quotas cover every object of the namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_selector: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceQuotaStatus {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hard: ResourceList,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub used: ResourceList,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitRange {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: LimitRangeSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitRangeSpec {
    #[serde(default)]
    pub limits: Vec<LimitRangeItem>,
}

/// The bounds and defaults for one type of object (`Container`, `Pod`,
/// `PersistentVolumeClaim`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitRangeItem {
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub max: ResourceList,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub min: ResourceList,
    /// Default limits.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub default: ResourceList,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub default_request: ResourceList,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub max_limit_request_ratio: ResourceList,
}
