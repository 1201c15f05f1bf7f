//! CustomResourceDefinition (apiextensions.k8s.io/v1): a new resource the API server serves
//! once the definition is accepted — its group, names, scope, versions and each version's
//! schema (kept as the JSON it was written in, read by the API server's structural checks).

use super::meta::ObjectMeta;
use crate::sim::Time;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomResourceDefinition {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CrdSpec,
    #[serde(default)]
    pub status: CrdStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdSpec {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub names: CrdNames,
    #[serde(default)]
    pub scope: String,
    #[serde(default)]
    pub versions: Vec<CrdVersion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversion: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_unknown_fields: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdNames {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub plural: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub singular: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub list_kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdVersion {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub served: bool,
    #[serde(default)]
    pub storage: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<CrdValidation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresources: Option<CrdSubresources>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_printer_columns: Vec<PrinterColumn>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selectable_fields: Vec<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrdValidation {
    #[serde(default, rename = "openAPIV3Schema", skip_serializing_if = "Option::is_none")]
    pub open_api_v3_schema: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdSubresources {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PrinterColumn {
    #[serde(default)]
    pub name: String,
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(default, rename = "jsonPath")]
    pub json_path: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<CrdCondition>,
    #[serde(default)]
    pub accepted_names: CrdNames,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_versions: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdCondition {
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

impl CustomResourceDefinition {
    pub fn condition(&self, type_: &str) -> Option<&CrdCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Whether the API server serves its resources (the Established condition is True).
    pub fn established(&self) -> bool {
        self.condition("Established").is_some_and(|c| c.status == "True")
    }

    pub fn namespaced(&self) -> bool {
        self.spec.scope == "Namespaced"
    }

    pub fn version(&self, name: &str) -> Option<&CrdVersion> {
        self.spec.versions.iter().find(|v| v.name == name)
    }

    /// The schema of `version`, if it has one.
    pub fn schema(&self, version: &str) -> Option<&Value> {
        self.version(version)?.schema.as_ref()?.open_api_v3_schema.as_ref()
    }

    /// Whether `version` has the status subresource.
    pub fn has_status(&self, version: &str) -> bool {
        self.version(version).and_then(|v| v.subresources.as_ref()).is_some_and(|s| s.status.is_some())
    }

    /// The custom kind one served version stands for.
    pub fn custom_kind(&self, version: &str) -> super::custom::CustomKind {
        let names = &self.spec.names;
        super::custom::CustomKind::intern(
            &self.spec.group,
            version,
            &names.plural,
            &names.kind,
            &names.singular,
            self.namespaced(),
        )
    }
}
