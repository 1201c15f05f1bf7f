//! ReplicationController (core/v1): the ReplicaSet's predecessor, kept pods-for-pods the same
//! way but with an equality-only selector (a plain label map) and an optional template.

use super::apps::{PodTemplateSpec, ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};
use super::meta::{LabelSelector, Labels, ObjectMeta};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplicationController {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ReplicationControllerSpec,
    /// The same fields as a ReplicaSet's status.
    #[serde(default)]
    pub status: ReplicaSetStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplicationControllerSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub selector: Labels,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<PodTemplateSpec>,
}

impl ReplicationController {
    /// The ReplicaSet this controller amounts to (its selector as `matchLabels`), as upstream's
    /// replication manager runs the ReplicaSet controller's logic over converted objects.
    pub fn as_replica_set(&self) -> ReplicaSet {
        let selector = (!self.spec.selector.is_empty())
            .then(|| LabelSelector { match_labels: self.spec.selector.clone(), ..Default::default() });
        ReplicaSet {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            metadata: self.metadata.clone(),
            spec: ReplicaSetSpec {
                replicas: self.spec.replicas,
                min_ready_seconds: self.spec.min_ready_seconds,
                selector,
                template: self.spec.template.clone().unwrap_or_default(),
            },
            status: self.status.clone(),
        }
    }
}
