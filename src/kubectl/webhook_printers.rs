//! The webhook configurations as `kubectl get` shows them: NAME, WEBHOOKS (how many), AGE.

use super::age::age;
use crate::api::Object;
use crate::sim::Time;

pub const HEADERS: &[&str] = &["NAME", "WEBHOOKS", "AGE"];

/// A Validating- or MutatingWebhookConfiguration's row.
pub fn row(object: &Object, now: Time) -> Vec<String> {
    let count = match object {
        Object::ValidatingWebhookConfiguration(c) => c.webhooks.len(),
        Object::MutatingWebhookConfiguration(c) => c.webhooks.len(),
        _ => 0,
    };
    vec![object.name().to_string(), count.to_string(), age(object.meta().creation_timestamp, now)]
}

/// `kubectl describe` of a webhook configuration: kubectl's generic describer, which prints
/// the object's fields as nested, title-cased labels (keys in order, lists item by item).
pub fn describe(object: &Object, events: &[crate::api::Event], now: Time) -> String {
    use super::describe::{annotations_multiline, events_section, labels_multiline, layout};
    let mut out = String::new();
    let meta = object.meta();
    out.push_str(&format!("Name:\t{}\nNamespace:\t\n", meta.name));
    labels_multiline(&mut out, "Labels", &meta.labels);
    annotations_multiline(&mut out, "Annotations", &meta.annotations);
    let serde_json::Value::Object(fields) = object.to_json_value() else { return layout(&out) };
    for (key, value) in &fields {
        let value = match (key.as_str(), value) {
            ("metadata", serde_json::Value::Object(m)) => {
                let skip = ["name", "namespace", "labels", "annotations", "managedFields"];
                serde_json::Value::Object(
                    m.iter()
                        .filter(|(k, _)| !skip.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            }
            _ => value.clone(),
        };
        field(&mut out, 0, key, &value);
    }
    events_section(&mut out, events, now);
    layout(&out)
}

fn field(out: &mut String, level: usize, key: &str, value: &serde_json::Value) {
    use serde_json::Value;
    let indent = "  ".repeat(level);
    let label = smart_label(key);
    match value {
        Value::Object(map) => {
            out.push_str(&format!("{indent}{label}:\n"));
            for (k, v) in map {
                field(out, level + 1, k, v);
            }
        }
        Value::Array(items) => {
            out.push_str(&format!("{indent}{label}:\n"));
            for item in items {
                match item {
                    Value::Object(map) => map.iter().for_each(|(k, v)| field(out, level + 1, k, v)),
                    Value::String(s) => out.push_str(&format!("{indent}  {s}\n")),
                    other => out.push_str(&format!("{indent}  {other}\n")),
                }
            }
        }
        Value::String(s) => out.push_str(&format!("{indent}{label}:\t{s}\n")),
        other => out.push_str(&format!("{indent}{label}:\t{other}\n")),
    }
}

/// `apiVersion` → `API Version`, `caBundle` → `Ca Bundle`; keys that are not plain words
/// (label keys) stay as they are.
fn smart_label(key: &str) -> String {
    if key.chars().any(|c| !c.is_ascii_alphabetic()) {
        return key.to_string();
    }
    let mut words: Vec<String> = Vec::new();
    for c in key.chars() {
        match words.last_mut() {
            Some(w) if !c.is_ascii_uppercase() => w.push(c),
            _ => words.push(c.to_string()),
        }
    }
    words
        .iter()
        .map(|w| {
            let upper = w.to_ascii_uppercase();
            if ["API", "URL", "UID", "OSB", "GUID"].contains(&upper.as_str()) {
                upper
            } else {
                let mut cs = w.chars();
                cs.next().map(|f| f.to_ascii_uppercase().to_string() + cs.as_str()).unwrap_or_default()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_print_as_kubectls_generic_describer_labels_them() {
        assert_eq!(smart_label("apiVersion"), "API Version");
        assert_eq!(smart_label("uid"), "UID");
        assert_eq!(smart_label("admissionReviewVersions"), "Admission Review Versions");
        assert_eq!(smart_label("kubernetes.io/metadata.name"), "kubernetes.io/metadata.name");
    }
}
