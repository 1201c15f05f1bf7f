//! Node affinity as every component reads it: whether a pod's `nodeSelector` and required
//! node affinity admit a node (the scheduler filters by it, the DaemonSet controller decides
//! where its pods belong by it).

use crate::api::meta::Labels;
use serde_json::Value;

/// Whether one `nodeSelectorTerm`'s `matchExpressions` hold for a node's labels.
pub fn term_matches(term: &Value, labels: &Labels, node_name: &str) -> bool {
    let exprs = term.get("matchExpressions").and_then(Value::as_array);
    let fields = term.get("matchFields").and_then(Value::as_array);
    if exprs.is_none_or(|e| e.is_empty()) && fields.is_none_or(|f| f.is_empty()) {
        return false;
    }
    let check = |req: &Value, value: Option<&str>| {
        let op = req.get("operator").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = req
            .get("values")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match op {
            "In" => value.is_some_and(|v| values.contains(&v)),
            "NotIn" => !value.is_some_and(|v| values.contains(&v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            "Gt" | "Lt" => {
                let (Some(v), Some(bound)) =
                    (value.and_then(|v| v.parse::<i64>().ok()), values.first().and_then(|b| b.parse::<i64>().ok()))
                else {
                    return false;
                };
                if op == "Gt" { v > bound } else { v < bound }
            }
            _ => false,
        }
    };
    exprs.into_iter().flatten().all(|req| {
        let key = req.get("key").and_then(Value::as_str).unwrap_or("");
        check(req, labels.get(key).map(String::as_str))
    }) && fields.into_iter().flatten().all(|req| {
        let key = req.get("key").and_then(Value::as_str).unwrap_or("");
        check(req, (key == "metadata.name").then_some(node_name))
    })
}

/// Whether a pod spec's `nodeSelector` and required node affinity admit a node with these
/// labels and this name.
pub fn fits(spec: &crate::api::PodSpec, labels: &Labels, node_name: &str) -> bool {
    let selector_ok = spec.node_selector.iter().all(|(k, v)| labels.get(k) == Some(v));
    selector_ok && required_terms(spec).is_none_or(|terms| terms.iter().any(|t| term_matches(t, labels, node_name)))
}

/// The pod's preferred node affinity terms, if it has any list of them.
pub fn preferred_terms(spec: &crate::api::PodSpec) -> Option<&Vec<Value>> {
    spec.affinity
        .as_ref()
        .and_then(|a| a.pointer("/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution"))
        .and_then(Value::as_array)
}

/// The pod's required `nodeSelectorTerms`, if it has any list of them.
pub fn required_terms(spec: &crate::api::PodSpec) -> Option<&Vec<Value>> {
    spec.affinity
        .as_ref()
        .and_then(|a| a.pointer("/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"))
        .and_then(Value::as_array)
}

/// The nodes a pod's required node affinity names outright (`matchFields` on `metadata.name`,
/// as DaemonSet pods carry), when every term does: the scheduler need look nowhere else.
pub fn required_node_names(spec: &crate::api::PodSpec) -> Option<std::collections::BTreeSet<String>> {
    let terms = spec
        .affinity
        .as_ref()?
        .pointer("/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")?
        .as_array()?;
    let mut names = std::collections::BTreeSet::new();
    for term in terms {
        let fields = term.get("matchFields").and_then(Value::as_array)?;
        let by_name = fields.iter().find(|f| {
            f.get("key").and_then(Value::as_str) == Some("metadata.name")
                && f.get("operator").and_then(Value::as_str) == Some("In")
        })?;
        let values = by_name.get("values").and_then(Value::as_array)?;
        names.extend(values.iter().filter_map(Value::as_str).map(String::from));
    }
    (!terms.is_empty()).then_some(names)
}
