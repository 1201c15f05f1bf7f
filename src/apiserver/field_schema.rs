//! The merge semantics server-side apply reads from the API's schema: which lists are keyed
//! by which fields (`x-kubernetes-list-map-keys`), which are sets, which maps and structs are
//! atomic, and how a JSON object is turned into field-set steps.

use crate::api::Kind;
use serde_json::{Map, Value};

/// How a list merges: replaced whole, a set of scalars, or items keyed by some fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListType {
    Atomic,
    Set,
    Map(&'static [&'static str]),
}

/// The list type of `field`, whose nearest enclosing field is `parent`.
pub fn list_type(parent: &str, field: &str) -> ListType {
    match (parent, field) {
        (_, "containers" | "initContainers" | "ephemeralContainers" | "volumes" | "env" | "imagePullSecrets") => {
            ListType::Map(&["name"])
        }
        (_, "volumeMounts") => ListType::Map(&["mountPath"]),
        ("containers" | "initContainers" | "ephemeralContainers", "ports") => {
            ListType::Map(&["containerPort", "protocol"])
        }
        ("spec", "ports") => ListType::Map(&["port", "protocol"]),
        (_, "conditions") => ListType::Map(&["type"]),
        ("metadata", "ownerReferences") => ListType::Map(&["uid"]),
        (_, "finalizers") => ListType::Set,
        (_, "topologySpreadConstraints") => ListType::Map(&["topologyKey", "whenUnsatisfiable"]),
        ("status", "podIPs" | "hostIPs") => ListType::Map(&["ip"]),
        _ => ListType::Atomic,
    }
}

/// Structs and maps owned as a whole (`x-kubernetes-map-type: atomic`): label selectors,
/// node selectors and object references.
pub fn is_atomic_object(kind: Kind, parent: &str, field: &str) -> bool {
    match (parent, field) {
        ("spec", "selector") => kind != Kind::Service,
        (_, "labelSelector" | "namespaceSelector") => true,
        ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution") => true,
        (_, "fieldRef" | "resourceFieldRef" | "configMapKeyRef" | "secretKeyRef" | "configMapRef" | "secretRef") => {
            true
        }
        (_, "involvedObject" | "related" | "regarding" | "target") => true,
        _ => false,
    }
}

/// Maps whose keys are data, not field names: each key is owned on its own, and the map
/// itself is a member once someone creates it.
pub fn is_granular_map(kind: Kind, parent: &str, field: &str) -> bool {
    match field {
        "labels" | "annotations" | "data" | "binaryData" | "stringData" | "nodeSelector" | "requests" | "limits"
        | "capacity" | "allocatable" | "matchLabels" => true,
        "selector" => kind == Kind::Service && parent == "spec",
        _ => false,
    }
}

/// Structs that are always present in the Go types (not pointers): creating their fields
/// does not make the struct itself a member.
pub fn is_value_struct(field: &str) -> bool {
    matches!(
        field,
        "metadata" | "spec" | "status" | "template" | "strategy" | "updateStrategy" | "nodeInfo" | "daemonEndpoints"
    )
}

/// Fields the API server sets and nobody manages.
pub fn is_untracked(path: &[&str], field: &str) -> bool {
    match path {
        [] => matches!(field, "apiVersion" | "kind"),
        ["metadata"] => matches!(
            field,
            "name"
                | "namespace"
                | "uid"
                | "resourceVersion"
                | "generation"
                | "creationTimestamp"
                | "deletionTimestamp"
                | "deletionGracePeriodSeconds"
                | "managedFields"
                | "selfLink"
        ),
        _ => false,
    }
}

/// The step naming `item` of a list of `list_type`, or None when the item lacks its keys.
pub fn item_step(list_type: ListType, item: &Value) -> Option<String> {
    match list_type {
        ListType::Atomic => None,
        ListType::Set => Some(format!("v:{item}")),
        ListType::Map(keys) => {
            let obj = item.as_object()?;
            let mut key = Map::new();
            for k in keys {
                let v = match obj.get(*k) {
                    Some(v) => v.clone(),
                    // Ports default their protocol to TCP, and are keyed by it already.
                    None if *k == "protocol" => Value::String("TCP".into()),
                    None => return None,
                };
                key.insert(k.to_string(), v);
            }
            Some(format!("k:{}", Value::Object(key)))
        }
    }
}

/// The item of `items` a `k:` or `v:` step names.
pub fn find_item<'a>(list_type: ListType, items: &'a [Value], step: &str) -> Option<(usize, &'a Value)> {
    items.iter().enumerate().find(|(_, item)| item_step(list_type, item).as_deref() == Some(step))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn container_ports_are_keyed_by_port_and_protocol_with_tcp_by_default() {
        let lt = list_type("containers", "ports");
        assert_eq!(
            item_step(lt, &json!({"containerPort": 80})).unwrap(),
            "k:{\"containerPort\":80,\"protocol\":\"TCP\"}"
        );
    }

    #[test]
    fn a_deployments_selector_is_atomic_but_a_services_is_a_map() {
        assert!(is_atomic_object(Kind::Deployment, "spec", "selector"));
        assert!(!is_atomic_object(Kind::Service, "spec", "selector"));
        assert!(is_granular_map(Kind::Service, "spec", "selector"));
    }
}
