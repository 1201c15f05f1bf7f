//! Object metadata (`metadata:`), owner references and label selectors, as apimachinery defines them.

use super::shared::Shared;
use crate::sim::Time;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub type Labels = BTreeMap<String, String>;

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}
pub(crate) fn is_zero(n: &i64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectMeta {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub generate_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub generation: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// Shared between versions until changed (see [`Shared`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Shared<Labels>,
    /// Shared between versions until changed, as the labels are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: Shared<Labels>,
    /// Shared between versions until changed, as the labels are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_references: Shared<Vec<OwnerReference>>,
    /// Shared between versions until changed, as the labels are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Shared<Vec<String>>,
    /// Which field manager owns which fields (server-side apply's record). The API server
    /// keeps it; what a client sends here is ignored.
    #[serde(default, skip_serializing_if = "super::managed_fields::none_managed")]
    pub managed_fields: super::managed_fields::ManagedFields,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnerReference {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// A reference to another object, as events' `involvedObject` carries it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectReference {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field_path: String,
}

/// `matchLabels` plus `matchExpressions`, as Deployments, ReplicaSets and affinities use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelector {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: Labels,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelectorRequirement {
    pub key: String,
    pub operator: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl LabelSelector {
    /// Whether `labels` satisfy every requirement. An empty selector matches everything.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|req| {
                let value = labels.get(&req.key);
                match req.operator.as_str() {
                    "In" => value.is_some_and(|v| req.values.contains(v)),
                    "NotIn" => !value.is_some_and(|v| req.values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
    }

    /// The selector in kubectl's string form (`app=web,tier in (a,b)`), `<none>` when empty.
    pub fn to_selector_string(&self) -> String {
        let mut parts: Vec<String> = self.match_labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for req in &self.match_expressions {
            parts.push(match req.operator.as_str() {
                "Exists" => req.key.clone(),
                "DoesNotExist" => format!("!{}", req.key),
                op => format!("{} {} ({})", req.key, op.to_lowercase(), req.values.join(",")),
            });
        }
        parts.join(",")
    }
}

/// Parses kubectl's `-l` syntax: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x)`.
pub fn parse_selector(text: &str) -> Result<LabelSelector, String> {
    let mut selector = LabelSelector::default();
    let mut rest = text.trim();
    while !rest.is_empty() {
        // Split at the next comma that is not inside parentheses.
        let mut depth = 0;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                c == ',' && depth == 0
            })
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        let term = rest[..end].trim();
        rest = rest.get(end + 1..).unwrap_or("").trim();
        let requirement = |key: &str, op: &str, values: Vec<String>| LabelSelectorRequirement {
            key: key.trim().to_string(),
            operator: op.to_string(),
            values,
        };
        if let Some((k, v)) = term.split_once("!=") {
            selector.match_expressions.push(requirement(k, "NotIn", vec![v.trim().to_string()]));
        } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
            selector.match_labels.insert(k.trim().to_string(), v.trim().to_string());
        } else if let Some(k) = term.strip_prefix('!') {
            selector.match_expressions.push(requirement(k, "DoesNotExist", vec![]));
        } else if let Some((k, set)) = split_set(term, " notin ") {
            selector.match_expressions.push(requirement(&k, "NotIn", set));
        } else if let Some((k, set)) = split_set(term, " in ") {
            selector.match_expressions.push(requirement(&k, "In", set));
        } else if !term.is_empty() && !term.contains([' ', '(', ')']) {
            selector.match_expressions.push(requirement(term, "Exists", vec![]));
        } else {
            return Err(format!("unable to parse requirement: found '{term}', expected: identifier"));
        }
    }
    Ok(selector)
}

fn split_set(term: &str, op: &str) -> Option<(String, Vec<String>)> {
    let (key, set) = term.split_once(op)?;
    let set = set.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some((key.trim().to_string(), set.split(',').map(|v| v.trim().to_string()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn empty_selector_matches_everything() {
        assert!(LabelSelector::default().matches(&labels(&[("a", "b")])));
    }

    #[test]
    fn selector_strings_parse_equality_sets_and_existence() {
        let sel = parse_selector("app=web,tier in (front, back),!legacy").unwrap();
        assert!(sel.matches(&labels(&[("app", "web"), ("tier", "front")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("tier", "db")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("tier", "front"), ("legacy", "1")])));
        assert!(parse_selector("a b").is_err());
    }
}
