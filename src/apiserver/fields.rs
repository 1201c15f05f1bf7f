//! Field selectors (`spec.nodeName=worker-1,status.phase!=Running`), as list and watch accept them.

use crate::api::Object;
use std::borrow::Cow;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRequirement {
    pub field: String,
    pub equals: bool,
    pub value: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    pub requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    pub fn equals(field: &str, value: &str) -> FieldSelector {
        FieldSelector {
            requirements: vec![FieldRequirement { field: field.into(), equals: true, value: value.into() }],
        }
    }

    pub fn parse(text: &str) -> Result<FieldSelector, String> {
        let mut requirements = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, equals, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!("invalid selector: '{text}'; can't understand '{term}'"));
            };
            requirements.push(FieldRequirement { field: field.trim().into(), equals, value: value.trim().into() });
        }
        Ok(FieldSelector { requirements })
    }

    /// The value a pod watch is indexed by, when the selector pins `spec.nodeName`.
    pub fn node_name(&self) -> Option<&str> {
        self.requirements.iter().find(|r| r.field == "spec.nodeName" && r.equals).map(|r| r.value.as_str())
    }

    /// Checks every field named is one the kind supports; the error is the API server's.
    pub fn check_supported(&self, sample: &Object) -> Result<(), String> {
        for req in &self.requirements {
            if field_value(sample, &req.field).is_none() {
                return Err(format!("field label not supported: {}", req.field));
            }
        }
        Ok(())
    }

    pub fn matches(&self, object: &Object) -> bool {
        self.requirements.iter().all(|req| {
            let value = field_value(object, &req.field).unwrap_or_default();
            (*value == *req.value) == req.equals
        })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| format!("{}{}{}", r.field, if r.equals { "=" } else { "!=" }, r.value))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// The value of a selectable field, or `None` if the kind does not support selecting on it.
pub fn field_value<'a>(object: &'a Object, field: &str) -> Option<Cow<'a, str>> {
    let meta = object.meta();
    match field {
        "metadata.name" => return Some(Cow::Borrowed(meta.name.as_str())),
        "metadata.namespace" => return Some(Cow::Borrowed(meta.namespace.as_str())),
        _ => {}
    }
    match object {
        Object::Pod(p) => match field {
            "spec.nodeName" => Some(Cow::Borrowed(p.spec.node_name.as_str())),
            "spec.restartPolicy" => Some(Cow::Borrowed(p.restart_policy())),
            "spec.schedulerName" => Some(Cow::Borrowed(p.spec.scheduler_name.as_deref().unwrap_or_default())),
            "spec.serviceAccountName" => {
                Some(Cow::Borrowed(p.spec.service_account_name.as_deref().unwrap_or_default()))
            }
            "status.phase" => Some(Cow::Borrowed(p.status.phase.as_str())),
            "status.podIP" => Some(Cow::Borrowed(p.status.pod_ip.as_str())),
            "status.nominatedNodeName" => Some(Cow::Borrowed(p.status.nominated_node_name.as_str())),
            _ => None,
        },
        Object::Node(n) => match field {
            "spec.unschedulable" => Some(Cow::Owned(n.spec.unschedulable.to_string())),
            _ => None,
        },
        Object::Event(e) => match field {
            "involvedObject.kind" => Some(Cow::Borrowed(e.involved_object.kind.as_str())),
            "involvedObject.name" => Some(Cow::Borrowed(e.involved_object.name.as_str())),
            "involvedObject.apiVersion" => Some(Cow::Borrowed(e.involved_object.api_version.as_str())),
            "involvedObject.resourceVersion" => Some(Cow::Borrowed(e.involved_object.resource_version.as_str())),
            "involvedObject.namespace" => Some(Cow::Borrowed(e.involved_object.namespace.as_str())),
            "involvedObject.uid" => Some(Cow::Borrowed(e.involved_object.uid.as_str())),
            "involvedObject.fieldPath" => Some(Cow::Borrowed(e.involved_object.field_path.as_str())),
            "reason" => Some(Cow::Borrowed(e.reason.as_str())),
            "type" => Some(Cow::Borrowed(e.type_.as_str())),
            "source" => Some(Cow::Borrowed(e.source.component.as_str())),
            _ => None,
        },
        Object::Namespace(n) => match field {
            "status.phase" => Some(Cow::Borrowed(n.status.phase.as_str())),
            _ => None,
        },
        Object::Secret(sec) => match field {
            "type" => Some(Cow::Borrowed(sec.type_.as_str())),
            _ => None,
        },
        Object::ReplicaSet(rs) => match field {
            "status.replicas" => Some(Cow::Owned(rs.status.replicas.to_string())),
            _ => None,
        },
        Object::Job(job) => match field {
            "status.successful" => Some(Cow::Owned(job.status.succeeded.unwrap_or(0).to_string())),
            _ => None,
        },
        _ => None,
    }
}
