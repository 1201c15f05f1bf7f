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

/// One cell: the first value the column's JSONPath finds, printed as its type says.
pub fn cell(column: &PrinterColumn, object: &Value, now: Time) -> String {
    let path = format!("{{{}}}", column.json_path);
    let found = super::jsonpath::Template::parse(&path).ok().and_then(|t| t.execute_json(object).ok());
    let Some(value) = found.and_then(|v| v.into_iter().next()).filter(|v| !v.is_null()) else {
        return "<none>".into();
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
