//! `kubectl get` of CustomResourceDefinitions (NAME, CREATED AT) and of custom resources: the
//! columns their definition's `additionalPrinterColumns` name (each a JSONPath into the object),
//! or NAME and AGE when it names none.

use super::age::age;
use crate::api::crd::PrinterColumn;
use crate::api::custom::{CustomKind, Served};
use crate::api::{CustomObject, Object};
use crate::sim::Time;
use serde_json::Value;

/// The columns a custom resource prints: its definition's (wide adds those of priority above
/// zero), or AGE alone.
fn columns(kind: CustomKind, wide: bool) -> Vec<PrinterColumn> {
    let served = Served::of(kind).map(|s| s.columns).unwrap_or_default();
    if served.is_empty() {
        return vec![PrinterColumn {
            name: "Age".into(),
            type_: "date".into(),
            json_path: ".metadata.creationTimestamp".into(),
            ..Default::default()
        }];
    }
    served.into_iter().filter(|c| wide || c.priority.unwrap_or(0) == 0).collect()
}

pub fn headers(kind: CustomKind, wide: bool) -> Vec<String> {
    let mut out = vec!["NAME".to_string()];
    out.extend(columns(kind, wide).iter().map(|c| c.name.to_uppercase()));
    out
}

pub fn row(object: &Object, now: Time, wide: bool) -> Vec<String> {
    match object {
        Object::CustomResourceDefinition(crd) => {
            vec![crd.metadata.name.clone(), crd.metadata.creation_timestamp.map(Time::rfc3339).unwrap_or_default()]
        }
        Object::Custom(o) => custom_row(o, now, wide),
        _ => Vec::new(),
    }
}

fn custom_row(object: &CustomObject, now: Time, wide: bool) -> Vec<String> {
    let value = serde_json::to_value(object).unwrap_or(Value::Null);
    let mut row = vec![object.metadata.name.clone()];
    for column in columns(object.of, wide) {
        row.push(cell(&column, &value, now));
    }
    row
}

/// One cell: the first value the column's JSONPath finds, printed as its type says; blank
/// when it finds none (a status no controller has written yet).
pub fn cell(column: &PrinterColumn, object: &Value, now: Time) -> String {
    let path = format!("{{{}}}", column.json_path);
    let found = super::jsonpath::Template::parse(&path).ok().and_then(|t| t.execute_json(object).ok());
    let Some(value) = found.and_then(|v| v.into_iter().next()).filter(|v| !v.is_null()) else {
        return String::new();
    };
    match (column.type_.as_str(), &value) {
        ("date", Value::String(s)) => match Time::parse_rfc3339(s) {
            Some(t) => age(Some(t), now),
            None => s.clone(),
        },
        (_, Value::String(s)) => s.clone(),
        (_, other) => super::jsonpath::text_of(other),
    }
}

/// `kubectl describe` of an object kubectl has no describer of its own for (a custom resource,
/// a definition): its name and labels, then every other field, nested, under labels made from
/// the field names (`readyReplicas` → `Ready Replicas`), then its events.
pub fn describe(object: &Object, events: &[crate::api::Event], now: Time) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let m = object.meta();
    let _ = writeln!(out, "Name:\t{}", m.name);
    if !m.namespace.is_empty() {
        let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    }
    super::describe::labels_multiline(&mut out, "Labels", &m.labels);
    super::describe::annotations_multiline(&mut out, "Annotations", &m.annotations);
    let mut value = object.to_json_value();
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        for skipped in ["name", "namespace", "labels", "annotations", "managedFields"] {
            meta.remove(skipped);
        }
    }
    if let Value::Object(map) = &value {
        content(&mut out, map, 0);
    }
    super::describe::events_section(&mut out, events, now);
    super::describe::layout(&out)
}

fn content(out: &mut String, map: &serde_json::Map<String, Value>, level: usize) {
    let indent = "  ".repeat(level);
    for (key, value) in map {
        let label = smart_label(key);
        match value {
            Value::Object(inner) if inner.is_empty() => {}
            Value::Object(inner) => {
                out.push_str(&format!("{indent}{label}:\n"));
                content(out, inner, level + 1);
            }
            Value::Array(items) if items.is_empty() => {}
            Value::Array(items) => {
                out.push_str(&format!("{indent}{label}:\n"));
                let inner = "  ".repeat(level + 1);
                for item in items {
                    match item {
                        Value::Object(fields) => content(out, fields, level + 1),
                        scalar => out.push_str(&format!("{inner}{}\n", super::jsonpath::text_of(scalar))),
                    }
                }
            }
            scalar => out.push_str(&format!("{indent}{label}:\t{}\n", super::jsonpath::text_of(scalar))),
        }
    }
}

/// A field name as describe labels it: words split at capitals, each capitalized, known
/// initialisms upper-cased (`apiVersion` → `API Version`, `uid` → `UID`).
pub fn smart_label(field: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    for c in field.chars() {
        if c.is_ascii_uppercase()
            && !current.is_empty()
            && !current.chars().last().is_some_and(|p| p.is_ascii_uppercase())
        {
            words.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
        .iter()
        .map(|w| {
            let upper = w.to_ascii_uppercase();
            if matches!(upper.as_str(), "API" | "UID" | "URL" | "IP" | "ID" | "CPU" | "DNS" | "TLS" | "JSON" | "HTTP") {
                upper
            } else {
                let mut chars = w.chars();
                chars.next().map(|f| f.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_become_describe_labels() {
        assert_eq!(smart_label("readyReplicas"), "Ready Replicas");
        assert_eq!(smart_label("apiVersion"), "API Version");
        assert_eq!(smart_label("uid"), "UID");
        assert_eq!(smart_label("creationTimestamp"), "Creation Timestamp");
    }
}
