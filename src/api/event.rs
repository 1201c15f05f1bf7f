//! Events (core/v1): what a component reports about an object, as `kubectl get events` lists them.

use super::meta::{ObjectMeta, ObjectReference};
use super::shared::Shared;
use crate::sim::Time;
use crate::sim::time::MicroTime;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Event {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Boxed, as `related` and `series` are: an Event sets the size of every `Object`.
    #[serde(default)]
    pub involved_object: Box<ObjectReference>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The reporting component and host: one copy per recorder, shared by its Events.
    #[serde(default)]
    pub source: Shared<EventSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<MicroTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Box<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<Box<ObjectReference>>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_component: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_instance: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSource {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub component: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

impl Event {
    /// The FROM column of `kubectl describe`/`events`: `kubelet`, `default-scheduler`, ...
    pub fn source_text(&self) -> String {
        let component =
            if self.source.component.is_empty() { &self.reporting_component } else { &self.source.component };
        if self.source.host.is_empty() { component.clone() } else { format!("{component}, {}", self.source.host) }
    }

    /// When this event last happened.
    pub fn last_seen(&self) -> Time {
        self.last_timestamp.or(self.event_time.map(|t| t.0)).or(self.metadata.creation_timestamp).unwrap_or_default()
    }
}
