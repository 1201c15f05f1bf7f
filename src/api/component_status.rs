//! ComponentStatus (core/v1, deprecated in 1.19): the API server's view of the health of the
//! scheduler, the controller manager and etcd. Never stored: computed on each read.

use super::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComponentStatus {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ComponentCondition>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComponentCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub error: String,
}

impl ComponentStatus {
    /// A component's status: healthy with message `ok`, or the probe's error.
    pub fn new(name: &str, error: Option<String>) -> ComponentStatus {
        let condition = match error {
            None => ComponentCondition {
                type_: "Healthy".into(),
                status: "True".into(),
                message: "ok".into(),
                ..Default::default()
            },
            Some(error) => {
                ComponentCondition { type_: "Healthy".into(), status: "False".into(), error, ..Default::default() }
            }
        };
        ComponentStatus {
            api_version: "v1".into(),
            kind: "ComponentStatus".into(),
            metadata: ObjectMeta { name: name.into(), ..Default::default() },
            conditions: vec![condition],
        }
    }
}
