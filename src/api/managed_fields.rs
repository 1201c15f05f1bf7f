//! `metadata.managedFields`: which field manager owns which fields of an object, as
//! server-side apply records it (a `FieldsV1` trie per manager and operation).

use crate::sim::Time;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// An object's entries, shared between its revisions while they stay the same.
pub type ManagedFields = Arc<Vec<ManagedFieldsEntry>>;

pub(crate) fn none_managed(fields: &ManagedFields) -> bool {
    fields.is_empty()
}

/// One manager's claim: who, by which operation (`Apply` or `Update`), through which
/// subresource, when, and the fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManagedFieldsEntry {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fields_type: String,
    #[serde(default, rename = "fieldsV1", skip_serializing_if = "FieldSet::is_empty")]
    pub fields_v1: Arc<FieldSet>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manager: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub operation: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Time>,
}

impl ManagedFieldsEntry {
    pub fn is_apply(&self) -> bool {
        self.operation == "Apply"
    }
}

/// A set of field paths, stored as a trie. Each step is `f:<field>`, `k:<key json>` (an
/// item of a list keyed by some of its fields), `v:<value json>` (an item of a set) or
/// `i:<index>`. A node is a member itself (`.` in the JSON form, or `{}` for a leaf) or only
/// leads to members below it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldSet {
    pub member: bool,
    pub children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    pub fn is_empty(&self) -> bool {
        !self.member && self.children.is_empty()
    }

    /// The node at one step below, created when missing.
    pub fn child(&mut self, step: String) -> &mut FieldSet {
        self.children.entry(step).or_default()
    }

    /// Adds the path `steps` as a member.
    pub fn insert(&mut self, steps: &[String]) {
        let mut node = self;
        for s in steps {
            node = node.child(s.clone());
        }
        node.member = true;
    }

    pub fn contains(&self, steps: &[String]) -> bool {
        let mut node = self;
        for s in steps {
            match node.children.get(s) {
                Some(n) => node = n,
                None => return false,
            }
        }
        node.member
    }

    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.member |= other.member;
        for (k, v) in &other.children {
            let merged = match out.children.get(k) {
                Some(mine) => mine.union(v),
                None => v.clone(),
            };
            out.children.insert(k.clone(), merged);
        }
        out
    }

    /// The members of `self` that are not members of `other`.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet { member: self.member && !other.member, children: BTreeMap::new() };
        for (k, v) in &self.children {
            let rest = match other.children.get(k) {
                Some(o) => v.difference(o),
                None => v.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(k.clone(), rest);
            }
        }
        out
    }

    /// Whether the sets share a member (without building the intersection).
    pub fn overlaps(&self, other: &FieldSet) -> bool {
        (self.member && other.member)
            || self.children.iter().any(|(k, v)| other.children.get(k).is_some_and(|o| v.overlaps(o)))
    }

    /// Whether every member of `self` is a member of `other`.
    pub fn is_subset(&self, other: &FieldSet) -> bool {
        (!self.member || other.member)
            && self.children.iter().all(|(k, v)| other.children.get(k).is_some_and(|o| v.is_subset(o)))
    }

    /// The members of both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet { member: self.member && other.member, children: BTreeMap::new() };
        for (k, v) in &self.children {
            if let Some(o) = other.children.get(k) {
                let both = v.intersection(o);
                if !both.is_empty() {
                    out.children.insert(k.clone(), both);
                }
            }
        }
        out
    }

    /// Every member path, depth first in step order.
    pub fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if self.member && !prefix.is_empty() {
            out.push(prefix.clone());
        }
        for (k, v) in &self.children {
            prefix.push(k.clone());
            v.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The set in `FieldsV1` JSON form.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        if self.member && !self.children.is_empty() {
            map.insert(".".into(), Value::Object(Map::new()));
        }
        for (k, v) in &self.children {
            map.insert(k.clone(), v.to_json());
        }
        Value::Object(map)
    }

    pub fn from_json(value: &Value) -> FieldSet {
        let Value::Object(map) = value else { return FieldSet::default() };
        if map.is_empty() {
            return FieldSet { member: true, children: BTreeMap::new() };
        }
        let mut set = FieldSet::default();
        for (k, v) in map {
            if k == "." {
                set.member = true;
            } else {
                set.children.insert(k.clone(), FieldSet::from_json(v));
            }
        }
        set
    }
}

/// A path in the form conflict messages print it: `.spec.template.spec.containers[name="app"].image`.
pub fn path_string(steps: &[String]) -> String {
    let mut out = String::new();
    for step in steps {
        if let Some(field) = step.strip_prefix("f:") {
            out.push('.');
            out.push_str(field);
        } else if let Some(keys) = step.strip_prefix("k:") {
            let parsed: Map<String, Value> = serde_json::from_str(keys).unwrap_or_default();
            let parts: Vec<String> = parsed.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(v) = step.strip_prefix("v:") {
            out.push_str(&format!("[={v}]"));
        } else if let Some(i) = step.strip_prefix("i:") {
            out.push_str(&format!("[{i}]"));
        }
    }
    out
}

impl Serialize for FieldSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for FieldSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(FieldSet::from_json(&Value::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(steps: &[&str]) -> Vec<String> {
        steps.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_field_set_round_trips_through_its_fieldsv1_json() {
        let json = serde_json::json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}}}}
        });
        let set = FieldSet::from_json(&json);
        assert!(set.contains(&p(&["f:metadata", "f:labels"])));
        assert!(set.contains(&p(&["f:metadata", "f:labels", "f:app"])));
        assert!(!set.contains(&p(&["f:metadata"])));
        assert_eq!(set.to_json(), json);
    }

    #[test]
    fn difference_keeps_only_paths_the_other_set_lacks() {
        let mut a = FieldSet::default();
        a.insert(&p(&["f:spec", "f:replicas"]));
        a.insert(&p(&["f:spec", "f:paused"]));
        let mut b = FieldSet::default();
        b.insert(&p(&["f:spec", "f:replicas"]));
        let d = a.difference(&b);
        assert_eq!(d.paths(), vec![p(&["f:spec", "f:paused"])]);
        assert_eq!(a.intersection(&b).paths(), vec![p(&["f:spec", "f:replicas"])]);
        assert!(b.difference(&a).is_empty());
        assert!(a.overlaps(&b) && b.is_subset(&a) && !a.is_subset(&b));
    }

    #[test]
    fn conflict_paths_print_keys_and_set_values_like_the_api_server() {
        let steps = p(&[
            "f:spec",
            "f:containers",
            "k:{\"name\":\"app\"}",
            "f:ports",
            "k:{\"containerPort\":80,\"protocol\":\"TCP\"}",
        ]);
        assert_eq!(path_string(&steps), ".spec.containers[name=\"app\"].ports[containerPort=80,protocol=\"TCP\"]");
        assert_eq!(path_string(&p(&["f:metadata", "f:finalizers", "v:\"x\""])), ".metadata.finalizers[=\"x\"]");
    }
}
