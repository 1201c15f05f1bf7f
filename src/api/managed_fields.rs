//! `metadata.managedFields`: which field manager owns which fields of an object, as
//! server-side apply records it (a `FieldsV1` trie per manager and operation).

use crate::sim::Time;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// An object's entries, shared between its revisions while they stay the same.
///
/// A status write's entries may be worked out late: the write keeps what it needs (the
/// previous revision and the new status) and the entries are computed the first time anyone
/// reads them. The result is the same as computing them at once; most status writes are
/// never read back, so the cost is only paid when someone looks.
#[derive(Clone)]
pub struct ManagedFields(Arc<Lazy>);

/// Computes a write's entries from what it kept.
pub type Pending = Box<dyn FnOnce() -> Arc<Vec<ManagedFieldsEntry>> + Send>;

struct Lazy {
    done: OnceLock<Arc<Vec<ManagedFieldsEntry>>>,
    pending: Mutex<Option<Pending>>,
    /// How many unworked writes this one waits on, itself included (0 once worked out).
    depth: u32,
    /// What a deferred write kept of the revision it wrote (its status), for the next write
    /// to share rather than copy again; opaque here.
    view: Option<View>,
    /// Whether the pending work reads the stored revision itself rather than a copy (see
    /// `reading_stored`), so it must be done before that revision is replaced.
    reads_stored: bool,
}

/// What a deferred write keeps of the revision it wrote: see `ManagedFields::view`.
pub type View = Arc<dyn std::any::Any + Send + Sync>;

impl ManagedFields {
    /// How many pending writes may wait on each other before the oldest is worked out (what
    /// a pending write keeps — the revision before it — stays alive until then).
    pub const MAX_PENDING: u32 = 8;

    pub fn new(entries: Vec<ManagedFieldsEntry>) -> Self {
        Self::shared(Arc::new(entries))
    }

    pub fn shared(entries: Arc<Vec<ManagedFieldsEntry>>) -> Self {
        let done = OnceLock::new();
        let _ = done.set(entries);
        ManagedFields(Arc::new(Lazy { done, pending: Mutex::new(None), depth: 0, view: None, reads_stored: false }))
    }

    /// Entries to be computed on first read, after `previous` (the revision's entries before
    /// this write).
    pub fn later(previous: &ManagedFields, compute: Pending) -> Self {
        Self::later_with_view(previous, compute, None)
    }

    /// As `later`, keeping `view` (what the write kept of the revision it wrote) for the next
    /// write to share.
    pub fn later_with_view(previous: &ManagedFields, compute: Pending, view: Option<View>) -> Self {
        let mut depth = previous.depth() + 1;
        if depth > Self::MAX_PENDING {
            previous.entries();
            depth = 1;
        }
        ManagedFields(Arc::new(Lazy {
            done: OnceLock::new(),
            pending: Mutex::new(Some(compute)),
            depth,
            view,
            reads_stored: false,
        }))
    }

    /// Entries to be computed on first read by `compute`, which reads the revision they belong
    /// to as the store holds it (through a weak reference) instead of a copy kept for the
    /// purpose. Most created objects are never read back for their managed fields, so a
    /// creation then costs no copy at all. The store calls `settle` before it replaces such a
    /// revision, while it can still be read.
    pub fn reading_stored(compute: Pending) -> Self {
        ManagedFields(Arc::new(Lazy {
            done: OnceLock::new(),
            pending: Mutex::new(Some(compute)),
            depth: 1,
            view: None,
            reads_stored: true,
        }))
    }

    /// Works out entries that read their stored revision (see `reading_stored`): the store
    /// calls it before that revision is replaced. Other entries are left as they are.
    pub fn settle(&self) {
        if self.0.reads_stored {
            self.entries();
        }
    }

    /// What the write that made these entries kept of the revision it wrote, if it was deferred.
    pub fn view(&self) -> Option<&View> {
        self.0.view.as_ref()
    }

    /// Whether both are the very same entries (one shared value), without working them out.
    pub fn same(&self, other: &ManagedFields) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    fn depth(&self) -> u32 {
        if self.0.done.get().is_some() { 0 } else { self.0.depth }
    }

    /// The entries, worked out now if they were pending.
    pub fn entries(&self) -> &Arc<Vec<ManagedFieldsEntry>> {
        self.0.done.get_or_init(|| {
            let compute = self.0.pending.lock().unwrap_or_else(|e| e.into_inner()).take();
            compute.map_or_else(Default::default, |f| f())
        })
    }
}

impl Default for ManagedFields {
    /// No entries: one shared value, so a new object's metadata allocates nothing for them.
    fn default() -> Self {
        static NONE: OnceLock<ManagedFields> = OnceLock::new();
        NONE.get_or_init(|| ManagedFields::new(Vec::new())).clone()
    }
}

impl std::ops::Deref for ManagedFields {
    type Target = [ManagedFieldsEntry];
    fn deref(&self) -> &[ManagedFieldsEntry] {
        self.entries()
    }
}

impl PartialEq for ManagedFields {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.entries() == other.entries()
    }
}

impl std::fmt::Debug for ManagedFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.entries().fmt(f)
    }
}

impl Serialize for ManagedFields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.entries().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ManagedFields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ManagedFields::new(Vec::deserialize(d)?))
    }
}

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
        out.add(other);
        out
    }

    /// Adds `other`'s members in place (each subtree copied once).
    fn add(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (k, v) in &other.children {
            match self.children.get_mut(k) {
                Some(mine) => mine.add(v),
                None => {
                    self.children.insert(k.clone(), v.clone());
                }
            }
        }
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
    fn pending_entries_are_worked_out_once_when_first_read() {
        let entry = ManagedFieldsEntry { manager: "kubelet".into(), ..Default::default() };
        let first = ManagedFields::new(vec![entry.clone()]);
        let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = runs.clone();
        let later = ManagedFields::later(
            &first,
            Box::new(move || {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Arc::new(vec![entry])
            }),
        );
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(later, first);
        assert_eq!(later.len(), 1);
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_long_chain_of_pending_writes_is_worked_out_as_it_grows() {
        let mut fields = ManagedFields::default();
        for _ in 0..3 * ManagedFields::MAX_PENDING {
            fields = ManagedFields::later(&fields, Box::new(|| Arc::new(Vec::new())));
            assert!(fields.depth() <= ManagedFields::MAX_PENDING);
        }
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
