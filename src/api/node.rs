//! Nodes (core/v1): a machine's capacity, taints and the conditions its kubelet reports.

use super::meta::{ObjectMeta, is_false};
use super::quantity::Quantity;
use crate::sim::Time;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Node {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: NodeSpec,
    #[serde(default)]
    pub status: NodeStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeSpec {
    #[serde(default, skip_serializing_if = "String::is_empty", rename = "podCIDR")]
    pub pod_cidr: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "podCIDRs")]
    pub pod_cidrs: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty", rename = "providerID")]
    pub provider_id: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub unschedulable: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_source: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Taint {
    pub key: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    pub effect: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_added: Option<Time>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeStatus {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocatable: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<NodeCondition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<NodeAddress>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_endpoints: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_info: Option<NodeSystemInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeAddress {
    #[serde(rename = "type")]
    pub type_: String,
    pub address: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeSystemInfo {
    #[serde(rename = "machineID", default)]
    pub machine_id: String,
    #[serde(rename = "systemUUID", default)]
    pub system_uuid: String,
    #[serde(rename = "bootID", default)]
    pub boot_id: String,
    #[serde(default)]
    pub kernel_version: String,
    #[serde(default)]
    pub os_image: String,
    #[serde(default)]
    pub container_runtime_version: String,
    #[serde(default)]
    pub kubelet_version: String,
    #[serde(default)]
    pub kube_proxy_version: String,
    #[serde(default)]
    pub operating_system: String,
    #[serde(default)]
    pub architecture: String,
}

impl Node {
    pub fn condition(&self, type_: &str) -> Option<&NodeCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// The node's STATUS as kubectl prints it: `Ready` when the Ready condition is True,
    /// `NotReady` when it is False *or Unknown* (a node that stopped reporting), and
    /// `Unknown` only when there is no Ready condition at all (upstream's printNode).
    pub fn readiness(&self) -> &'static str {
        match self.condition("Ready").map(|c| c.status.as_str()) {
            Some("True") => "Ready",
            Some(_) => "NotReady",
            None => "Unknown",
        }
    }

    pub fn allocatable(&self, resource: &str) -> Option<&Quantity> {
        self.status.allocatable.get(resource)
    }

    pub fn internal_ip(&self) -> Option<&str> {
        self.status.addresses.iter().find(|a| a.type_ == "InternalIP").map(|a| a.address.as_str())
    }
}
