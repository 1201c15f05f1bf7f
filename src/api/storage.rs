//! Storage: StorageClass (storage.k8s.io/v1), PersistentVolume and PersistentVolumeClaim (v1),
//! and the annotations the PV controller, the scheduler and a provisioner pass each other.

use super::meta::{LabelSelector, ObjectMeta, ObjectReference};
use super::quantity::Quantity;
use crate::sim::Time;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Marks the cluster's default class (`standard (default)` in `kubectl get sc`).
pub const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
/// The node the scheduler picked for a claim whose class waits for its first consumer.
pub const SELECTED_NODE_ANNOTATION: &str = "volume.kubernetes.io/selected-node";
/// Which provisioner the PV controller hands a claim to.
pub const STORAGE_PROVISIONER_ANNOTATION: &str = "volume.kubernetes.io/storage-provisioner";
pub const BETA_STORAGE_PROVISIONER_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-provisioner";
/// Set on a PV by the provisioner that made it.
pub const PROVISIONED_BY_ANNOTATION: &str = "pv.kubernetes.io/provisioned-by";
/// Set on a claim once the PV controller has finished binding it.
pub const BIND_COMPLETED_ANNOTATION: &str = "pv.kubernetes.io/bind-completed";
/// What keeps a deleted claim while a pod uses it, and a deleted volume while it is bound.
pub const PVC_PROTECTION_FINALIZER: &str = "kubernetes.io/pvc-protection";
pub const PV_PROTECTION_FINALIZER: &str = "kubernetes.io/pv-protection";
/// Set on a claim or volume the PV controller bound (not one a user pre-bound).
pub const BOUND_BY_CONTROLLER_ANNOTATION: &str = "pv.kubernetes.io/bound-by-controller";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StorageClass {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub provisioner: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaim_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mount_options: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_volume_expansion: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_binding_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_topologies: Vec<Value>,
}

impl StorageClass {
    pub fn is_default(&self) -> bool {
        self.metadata.annotations.get(DEFAULT_CLASS_ANNOTATION).is_some_and(|v| v == "true")
            || self
                .metadata
                .annotations
                .get("storageclass.beta.kubernetes.io/is-default-class")
                .is_some_and(|v| v == "true")
    }

    /// Whether claims of this class wait for a pod before they are bound or provisioned.
    pub fn waits_for_first_consumer(&self) -> bool {
        self.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer")
    }

    /// Whether a provisioner makes volumes of this class (`kubernetes.io/no-provisioner` does not).
    pub fn provisions(&self) -> bool {
        !self.provisioner.is_empty() && self.provisioner != "kubernetes.io/no-provisioner"
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersistentVolume {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PersistentVolumeSpec,
    #[serde(default)]
    pub status: PersistentVolumeStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersistentVolumeSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_ref: Option<ObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_reclaim_policy: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub storage_class_name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mount_options: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_attributes_class_name: Option<String>,
    // The volume's source: one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csi: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iscsi: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fc: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cephfs: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rbd: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_elastic_block_store: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gce_persistent_disk: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure_disk: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure_file: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersistentVolumeStatus {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_phase_transition_time: Option<Time>,
}

impl PersistentVolume {
    pub fn reclaim_policy(&self) -> &str {
        self.spec.persistent_volume_reclaim_policy.as_deref().unwrap_or("Retain")
    }

    /// The storage the volume offers, in bytes.
    pub fn capacity_bytes(&self) -> i64 {
        self.spec.capacity.get("storage").map_or(0, Quantity::value)
    }

    /// The host directory behind a hostPath or local volume.
    pub fn host_dir(&self) -> Option<String> {
        let source = self.spec.host_path.as_ref().or(self.spec.local.as_ref())?;
        source.get("path").and_then(Value::as_str).map(str::to_string)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersistentVolumeClaim {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PersistentVolumeClaimSpec,
    #[serde(default)]
    pub status: PersistentVolumeClaimStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersistentVolumeClaimSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default)]
    pub resources: VolumeResourceRequirements,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_source: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_source_ref: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_attributes_class_name: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VolumeResourceRequirements {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, Quantity>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersistentVolumeClaimStatus {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Value>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocated_resources: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated_resource_statuses: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_volume_attributes_class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modify_volume_status: Option<Value>,
}

impl PersistentVolumeClaim {
    /// The reference a volume bound to this claim carries (`spec.claimRef`).
    pub fn reference(&self) -> ObjectReference {
        ObjectReference {
            kind: "PersistentVolumeClaim".into(),
            namespace: self.metadata.namespace.clone(),
            name: self.metadata.name.clone(),
            uid: self.metadata.uid.clone(),
            api_version: "v1".into(),
            resource_version: self.metadata.resource_version.clone(),
            ..Default::default()
        }
    }

    /// The class the claim asks for ("" : none, only volumes without a class).
    pub fn class(&self) -> &str {
        self.spec.storage_class_name.as_deref().unwrap_or("")
    }

    /// The storage the claim requests, in bytes.
    pub fn requested_bytes(&self) -> i64 {
        self.spec.resources.requests.get("storage").map_or(0, Quantity::value)
    }

    pub fn is_bound(&self) -> bool {
        !self.spec.volume_name.is_empty() && self.status.phase == "Bound"
    }
}

/// Access modes as `kubectl get` abbreviates them: `RWO,ROX`.
pub fn access_modes_short(modes: &[String]) -> String {
    let short: Vec<&str> = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]
        .iter()
        .zip(["RWO", "ROX", "RWX", "RWOP"])
        .filter(|(long, _)| modes.iter().any(|m| m == *long))
        .map(|(_, s)| s)
        .collect();
    short.join(",")
}

/// The claims a pod's volumes name (`persistentVolumeClaim.claimName`), in order.
pub fn pod_claims(pod: &super::Pod) -> Vec<String> {
    pod.spec
        .volumes
        .iter()
        .filter_map(|v| v.get("persistentVolumeClaim").and_then(|c| c.get("claimName")).and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Whether a volume's `nodeAffinity.required` admits a node with these labels.
pub fn node_affinity_admits(affinity: Option<&Value>, labels: &BTreeMap<String, String>) -> bool {
    node_affinity_admits_with(affinity, |k| labels.get(k).map(String::as_str))
}

/// As [`node_affinity_admits`], reading the node's labels through `label`.
pub fn node_affinity_admits_with<'a>(affinity: Option<&Value>, label: impl Fn(&str) -> Option<&'a str>) -> bool {
    let Some(terms) = affinity.and_then(|a| a.pointer("/required/nodeSelectorTerms")).and_then(Value::as_array) else {
        return true;
    };
    terms.iter().any(|term| {
        term.get("matchExpressions").and_then(Value::as_array).into_iter().flatten().all(|e| {
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
            let values: Vec<&str> =
                e.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            let have = label(key);
            match e.get("operator").and_then(Value::as_str).unwrap_or_default() {
                "In" => have.is_some_and(|v| values.contains(&v)),
                "NotIn" => have.is_none_or(|v| !values.contains(&v)),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                _ => false,
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_modes_print_in_kubectls_order_and_abbreviations() {
        let modes = vec!["ReadWriteMany".to_string(), "ReadWriteOnce".to_string(), "ReadWriteOncePod".to_string()];
        assert_eq!(access_modes_short(&modes), "RWO,RWX,RWOP");
    }

    #[test]
    fn a_volume_pinned_to_a_node_admits_only_that_node() {
        let affinity = serde_json::json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["worker-1"]}]}]}});
        let on = |n: &str| BTreeMap::from([("kubernetes.io/hostname".to_string(), n.to_string())]);
        assert!(node_affinity_admits(Some(&affinity), &on("worker-1")));
        assert!(!node_affinity_admits(Some(&affinity), &on("worker-2")));
        assert!(node_affinity_admits(None, &on("worker-2")));
    }
}
