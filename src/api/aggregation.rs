//! API aggregation's objects: an APIService (apiregistration.k8s.io/v1) says which Service
//! serves a group/version the API server does not serve itself (`v1beta1.metrics.k8s.io` →
//! `kube-system/metrics-server`); NodeMetrics and PodMetrics (metrics.k8s.io/v1beta1) are what
//! that Service answers. The metrics are never stored: metrics-server holds them in memory.

use super::meta::ObjectMeta;
use super::quantity::Quantity;
use crate::sim::Time;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiService {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ApiServiceSpec,
    #[serde(default)]
    pub status: ApiServiceStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceReference {
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiServiceSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, rename = "insecureSkipTLSVerify", skip_serializing_if = "std::ops::Not::not")]
    pub insecure_skip_tls_verify: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    #[serde(default)]
    pub group_priority_minimum: i32,
    #[serde(default)]
    pub version_priority: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiServiceStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ApiServiceCondition>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiServiceCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl ApiService {
    /// The Available condition, if the availability check has set one.
    pub fn available(&self) -> Option<&ApiServiceCondition> {
        self.status.conditions.iter().find(|c| c.type_ == "Available")
    }
}

/// A node's usage as metrics-server last scraped it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeMetrics {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Time>,
    #[serde(default)]
    pub window: String,
    #[serde(default)]
    pub usage: BTreeMap<String, Quantity>,
}

/// A pod's containers' usage as metrics-server last scraped it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodMetrics {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Time>,
    #[serde(default)]
    pub window: String,
    #[serde(default)]
    pub containers: Vec<ContainerMetrics>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerMetrics {
    pub name: String,
    #[serde(default)]
    pub usage: BTreeMap<String, Quantity>,
}

impl PodMetrics {
    /// The pod's CPU (millicores) and memory (bytes): its containers' sum.
    pub fn total(&self) -> (i64, i64) {
        self.containers.iter().fold((0, 0), |(c, m), x| {
            (c + x.usage.get("cpu").map_or(0, Quantity::milli), m + x.usage.get("memory").map_or(0, Quantity::value))
        })
    }
}
