//! Field management: which manager owns which fields. Every write updates
//! `metadata.managedFields` — an update makes its manager the owner of the fields it changed;
//! a server-side apply makes the applier own exactly the fields of its configuration, fails on
//! fields another manager owns with a different value (unless forced), and removes fields the
//! applier dropped that nobody else owns.

use super::field_schema::{self as schema, ListType};
use crate::api::managed_fields::ManagedFields;
use crate::api::{FieldSet, Kind, ManagedFieldsEntry};
use crate::sim::Time;
use crate::util::sort::StableSort;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

/// Shares equal field sets between objects: the pods of one ReplicaSet are created with the
/// same fields, and their entries need not each hold a copy. It holds the sets weakly: a set
/// no stored object uses any more is gone with its last object (a long session creates and
/// deletes pods without end). Only lookups use the hash, so its order never shows.
#[derive(Debug, Default)]
pub struct Interner {
    sets: HashMap<u64, Vec<Weak<FieldSet>>>,
    count: usize,
}

impl Interner {
    /// Past this many entries, those whose set is gone are dropped; if that is not enough,
    /// the table starts afresh (sets already shared stay shared).
    const CAPACITY: usize = 20_000;

    pub fn intern(&mut self, set: FieldSet) -> Arc<FieldSet> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        set.hash(&mut hasher);
        let bucket = self.sets.entry(hasher.finish()).or_default();
        if let Some(found) = bucket.iter().filter_map(Weak::upgrade).find(|s| **s == set) {
            return found;
        }
        let shared = Arc::new(set);
        bucket.push(Arc::downgrade(&shared));
        self.count += 1;
        if self.count > Self::CAPACITY {
            self.sets.retain(|_, bucket| {
                bucket.retain(|s| s.strong_count() > 0);
                !bucket.is_empty()
            });
            self.count = self.sets.values().map(Vec::len).sum();
            if self.count > Self::CAPACITY / 2 {
                self.sets.clear();
                self.count = 0;
            }
        }
        shared
    }
}

/// How a walk over a value marks members: as an apply configuration (the fields named, and
/// list items), or as newly created content (maps, lists and optional structs too).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Apply,
    Created,
}

/// The fields an apply configuration names (status is not applied through the main resource).
pub fn apply_set(kind: Kind, config: &Value) -> FieldSet {
    let mut set = FieldSet::default();
    walk_object(kind, Mode::Apply, &[], config, &mut set, true);
    set
}

/// Everything `value` holds, as created content.
fn created_set(kind: Kind, path: &[&str], value: &Value, out: &mut FieldSet) {
    walk_object(kind, Mode::Created, path, value, out, false);
}

fn walk_object(kind: Kind, mode: Mode, path: &[&str], value: &Value, out: &mut FieldSet, skip_status: bool) {
    let Value::Object(map) = value else { return };
    for (field, v) in map {
        if schema::is_untracked(path, field) || v.is_null() || (skip_status && path.is_empty() && field == "status") {
            continue;
        }
        let step = field_step(field);
        let node = out.child(step.clone());
        walk_field(kind, mode, path, field, v, node);
        if node.is_empty() {
            out.children.remove(&step);
        }
    }
}

fn walk_field(kind: Kind, mode: Mode, path: &[&str], field: &str, value: &Value, node: &mut FieldSet) {
    let parent = path.last().copied().unwrap_or("");
    let mut inner: Vec<&str> = path.to_vec();
    inner.push(field);
    match value {
        Value::Object(map) if map.is_empty() || schema::is_atomic_object(kind, parent, field) => node.member = true,
        Value::Object(_) => {
            if mode == Mode::Created
                && !path.is_empty()
                && (schema::is_granular_map(kind, parent, field) || !schema::is_value_struct(field))
            {
                node.member = true;
            }
            walk_object(kind, mode, &inner, value, node, false);
        }
        Value::Array(items) => match schema::list_type(parent, field) {
            ListType::Atomic => node.member = true,
            _ if items.is_empty() => node.member = true,
            lt => {
                if mode == Mode::Created && field != "containers" {
                    node.member = true;
                }
                for item in items {
                    let Some(step) = schema::item_step(lt, item) else {
                        // An item without its keys cannot be told apart: the list is owned whole.
                        node.member = true;
                        node.children.clear();
                        break;
                    };
                    let child = node.child(step);
                    child.member = true;
                    if lt != ListType::Set {
                        walk_object(kind, mode, &inner, item, child, false);
                    }
                }
            }
        },
        _ => node.member = true,
    }
}

/// The step naming a field, `f:<field>` (joined rather than formatted: diffs make one per
/// field).
fn field_step(field: &str) -> String {
    ["f:", field].concat()
}

/// What an update did to the fields: those it set or changed, and those it removed (with
/// everything below them).
pub fn update_sets(kind: Kind, old: &Value, new: &Value) -> (FieldSet, FieldSet) {
    let mut changed = FieldSet::default();
    let mut removed = FieldSet::default();
    diff_object(kind, &[], old, new, &mut changed, &mut removed);
    (changed, removed)
}

fn diff_object(kind: Kind, path: &[&str], old: &Value, new: &Value, changed: &mut FieldSet, removed: &mut FieldSet) {
    let empty = Map::new();
    let old_map = old.as_object().unwrap_or(&empty);
    let new_map = new.as_object().unwrap_or(&empty);
    for (field, nv) in new_map {
        if schema::is_untracked(path, field) || nv.is_null() {
            continue;
        }
        let step = field_step(field);
        match old_map.get(field) {
            Some(ov) if ov == nv => {}
            Some(ov) if !ov.is_null() => {
                let mut c = FieldSet::default();
                let mut r = FieldSet::default();
                diff_field(kind, path, field, ov, nv, &mut c, &mut r);
                if !c.is_empty() {
                    changed.children.insert(step.clone(), c);
                }
                if !r.is_empty() {
                    removed.children.insert(step, r);
                }
            }
            _ => {
                let node = changed.child(step.clone());
                walk_field(kind, Mode::Created, path, field, nv, node);
                if node.is_empty() {
                    changed.children.remove(&step);
                }
            }
        }
    }
    for (field, ov) in old_map {
        if schema::is_untracked(path, field) || new_map.get(field).is_some_and(|v| !v.is_null()) {
            continue;
        }
        let node = removed.child(field_step(field));
        walk_field(kind, Mode::Created, path, field, ov, node);
        node.member = true;
    }
}

fn diff_field(
    kind: Kind,
    path: &[&str],
    field: &str,
    old: &Value,
    new: &Value,
    changed: &mut FieldSet,
    removed: &mut FieldSet,
) {
    let parent = path.last().copied().unwrap_or("");
    let mut inner: Vec<&str> = path.to_vec();
    inner.push(field);
    match (old, new) {
        (Value::Object(_), Value::Object(n)) if !n.is_empty() && !schema::is_atomic_object(kind, parent, field) => {
            diff_object(kind, &inner, old, new, changed, removed);
        }
        (Value::Array(o), Value::Array(n)) if !o.is_empty() && !n.is_empty() => {
            let lt = schema::list_type(parent, field);
            let steps_o: Option<Vec<String>> = o.iter().map(|i| schema::item_step(lt, i)).collect();
            let steps_n: Option<Vec<String>> = n.iter().map(|i| schema::item_step(lt, i)).collect();
            let (Some(steps_o), Some(steps_n)) = (steps_o, steps_n) else {
                changed.member = true;
                return;
            };
            if lt == ListType::Atomic {
                changed.member = true;
                return;
            }
            for (step, item) in steps_n.iter().zip(n) {
                match steps_o.iter().position(|s| s == step) {
                    Some(i) if o[i] == *item => {}
                    Some(i) if lt != ListType::Set => {
                        let mut c = FieldSet::default();
                        let mut r = FieldSet::default();
                        diff_object(kind, &inner, &o[i], item, &mut c, &mut r);
                        if !c.is_empty() {
                            changed.children.insert(step.clone(), c);
                        }
                        if !r.is_empty() {
                            removed.children.insert(step.clone(), r);
                        }
                    }
                    Some(_) => {}
                    None => {
                        let child = changed.child(step.clone());
                        child.member = true;
                        if lt != ListType::Set {
                            created_set(kind, &inner, item, child);
                        }
                    }
                }
            }
            for (step, item) in steps_o.iter().zip(o) {
                if !steps_n.contains(step) {
                    let child = removed.child(step.clone());
                    child.member = true;
                    if lt != ListType::Set {
                        created_set(kind, &inner, item, child);
                    }
                }
            }
        }
        _ => {
            changed.member = true;
            // What was below a replaced value is gone.
            if old.is_object() || old.is_array() {
                walk_field(kind, Mode::Created, path, field, old, removed);
                removed.member = false;
            }
        }
    }
}

/// The entry for `manager`'s `operation` through `subresource`, if any.
fn position(entries: &[ManagedFieldsEntry], manager: &str, operation: &str, subresource: &str) -> Option<usize> {
    entries.iter().position(|e| e.manager == manager && e.operation == operation && e.subresource == subresource)
}

/// Orders entries as the API server does: applies first, then updates oldest first.
fn sort(entries: &mut [ManagedFieldsEntry]) {
    entries.stable_sort_by(|a, b| {
        (!a.is_apply(), a.time, &a.manager, &a.subresource).cmp(&(!b.is_apply(), b.time, &b.manager, &b.subresource))
    });
}

/// Records an update (create, update or non-apply patch) by `manager`: it owns what it
/// changed; nobody owns what it removed.
pub struct UpdateWrite<'a> {
    pub kind: Kind,
    pub manager: &'a str,
    pub subresource: &'a str,
    pub api_version: String,
    pub now: Time,
}

/// A status a deferred status write looks at, shared between that write (its status after)
/// and the next one (its status before), so each revision's status is copied once. Its JSON
/// view is kept between the two computations, which run one after the other when a chain of
/// pending writes is worked out, so it is serialized once too.
pub struct StatusView<T> {
    pub status: T,
    json: Mutex<Option<Value>>,
}

impl<T: Serialize + PartialEq + Clone + Send + Sync + 'static> StatusView<T> {
    pub fn new(status: T) -> Arc<Self> {
        Arc::new(StatusView { status, json: Mutex::new(None) })
    }

    /// The view the previous write kept, when it is of `status` (compared, so a view is only
    /// ever shared by equal statuses); a new one otherwise.
    pub fn shared(previous: &ManagedFields, status: &T) -> Arc<Self> {
        previous
            .view()
            .and_then(|v| v.clone().downcast::<StatusView<T>>().ok())
            .filter(|v| v.status == *status)
            .unwrap_or_else(|| Self::new(status.clone()))
    }

    /// `{"status": ...}`: the one kept, or serialized now.
    fn take_json(&self) -> Value {
        let kept = self.json.lock().unwrap_or_else(|e| e.into_inner()).take();
        kept.unwrap_or_else(|| {
            let mut only = Map::new();
            only.insert("status".into(), serde_json::to_value(&self.status).unwrap_or(Value::Null));
            Value::Object(only)
        })
    }

    fn keep_json(&self, json: Value) {
        *self.json.lock().unwrap_or_else(|e| e.into_inner()) = Some(json);
    }
}

impl UpdateWrite<'_> {
    /// The entries after this write, worked out when first read (see `ManagedFields`): from
    /// the entries before it, `previous`, and the views before and after it that `views` gives.
    pub fn record_later(
        &self,
        previous: &ManagedFields,
        views: impl FnOnce() -> (Value, Value) + Send + 'static,
    ) -> ManagedFields {
        self.later(previous, None, move |write, interner, entries| {
            let (before, after) = views();
            write.record(interner, entries, &before, &after)
        })
    }

    /// As `record_later`, for a status write: the statuses before and after it as shared
    /// views (see `StatusView`); the one after is kept for the next write.
    pub fn record_status_later<T: Serialize + PartialEq + Clone + Send + Sync + 'static>(
        &self,
        previous: &ManagedFields,
        before: Arc<StatusView<T>>,
        after: Arc<StatusView<T>>,
    ) -> ManagedFields {
        let view: crate::api::managed_fields::View = after.clone();
        self.later(previous, Some(view), move |write, interner, entries| {
            let (old, new) = (before.take_json(), after.take_json());
            let out = write.record(interner, entries, &old, &new);
            after.keep_json(new);
            out
        })
    }

    /// As `record_later`, for a creation whose `views` read the created object as the store
    /// holds it (see `ManagedFields::reading_stored`): nothing is copied for them.
    pub fn record_created_later(&self, views: impl FnOnce() -> (Value, Value) + Send + 'static) -> ManagedFields {
        ManagedFields::reading_stored(self.pending(&ManagedFields::default(), move |write, interner, entries| {
            let (before, after) = views();
            write.record(interner, entries, &before, &after)
        }))
    }

    /// Entries worked out on first read by `compute`, given this write, an interner and the
    /// entries before it (None: the write changed no field).
    fn later(
        &self,
        previous: &ManagedFields,
        view: Option<crate::api::managed_fields::View>,
        compute: impl FnOnce(&UpdateWrite, &mut Interner, &[ManagedFieldsEntry]) -> Option<Vec<ManagedFieldsEntry>>
        + Send
        + 'static,
    ) -> ManagedFields {
        ManagedFields::later_with_view(previous, self.pending(previous, compute), view)
    }

    /// The work `later` defers: this write's entries from those of `previous`.
    fn pending(
        &self,
        previous: &ManagedFields,
        compute: impl FnOnce(&UpdateWrite, &mut Interner, &[ManagedFieldsEntry]) -> Option<Vec<ManagedFieldsEntry>>
        + Send
        + 'static,
    ) -> crate::api::managed_fields::Pending {
        let (kind, manager, subresource, api_version, now) =
            (self.kind, self.manager.to_string(), self.subresource.to_string(), self.api_version.clone(), self.now);
        let kept = previous.clone();
        Box::new(move || {
            let write = UpdateWrite { kind, manager: &manager, subresource: &subresource, api_version, now };
            let previous = kept.entries();
            compute(&write, &mut Interner::default(), previous).map(Arc::new).unwrap_or_else(|| previous.clone())
        })
    }

    /// The entries after this write, or None when the write changed no field.
    pub fn record(
        &self,
        interner: &mut Interner,
        entries: &[ManagedFieldsEntry],
        old: &Value,
        new: &Value,
    ) -> Option<Vec<ManagedFieldsEntry>> {
        let (changed, removed) = update_sets(self.kind, old, new);
        if changed.is_empty() && removed.is_empty() {
            return None;
        }
        let mut out: Vec<ManagedFieldsEntry> = Vec::with_capacity(entries.len() + 1);
        let own_at = position(entries, self.manager, "Update", self.subresource);
        for (i, e) in entries.iter().enumerate() {
            if Some(i) == own_at {
                continue;
            }
            // Most writes leave other managers' fields alone: their sets stay shared.
            if !e.fields_v1.overlaps(&changed) && !e.fields_v1.overlaps(&removed) {
                out.push(e.clone());
                continue;
            }
            let rest = e.fields_v1.difference(&changed).difference(&removed);
            if !rest.is_empty() {
                out.push(ManagedFieldsEntry { fields_v1: interner.intern(rest), ..e.clone() });
            }
        }
        let own: Arc<FieldSet> = match own_at.map(|i| &entries[i].fields_v1) {
            // A manager changing fields it already owns keeps its set.
            Some(set) if changed.is_subset(set) && !set.overlaps(&removed) => set.clone(),
            Some(set) => interner.intern(set.difference(&removed).union(&changed)),
            None => interner.intern(changed),
        };
        if !own.is_empty() {
            out.push(ManagedFieldsEntry {
                api_version: self.api_version.clone(),
                fields_type: "FieldsV1".into(),
                fields_v1: own,
                manager: self.manager.to_string(),
                operation: "Update".into(),
                subresource: self.subresource.to_string(),
                time: Some(self.now),
            });
        }
        sort(&mut out);
        Some(out)
    }
}

/// A field another manager owns with a different value than an apply asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub manager: String,
    /// The subresource the manager wrote through (`scale`), empty for the object itself.
    pub subresource: String,
    pub api_version: String,
    pub path: String,
}

impl Conflict {
    /// `"kubectl-scale" with subresource "scale" using apps/v1`, as the message names a manager.
    fn owner(&self) -> String {
        match self.subresource.as_str() {
            "" => format!("\"{}\" using {}", self.manager, self.api_version),
            sub => format!("\"{}\" with subresource \"{sub}\" using {}", self.manager, self.api_version),
        }
    }
}

/// The apply failure message, as the API server words it.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    let n = conflicts.len();
    if n == 1 {
        let c = &conflicts[0];
        return format!("Apply failed with 1 conflict: conflict with {}: {}", c.owner(), c.path);
    }
    let mut out = format!("Apply failed with {n} conflicts: ");
    let mut last: Option<String> = None;
    for c in conflicts {
        let owner = c.owner();
        if last.as_ref() != Some(&owner) {
            if last.is_some() {
                out.push('\n');
            }
            out.push_str(&format!("conflicts with {owner}:"));
            last = Some(owner);
        }
        out.push_str(&format!("\n- {}", c.path));
    }
    out
}

/// A server-side apply of `config` by `manager`.
pub struct ApplyWrite<'a> {
    pub kind: Kind,
    pub manager: &'a str,
    pub force: bool,
    pub api_version: String,
    pub now: Time,
}

impl ApplyWrite<'_> {
    /// The merged object and its entries, or the conflicts that stop the apply.
    pub fn merge(
        &self,
        live: &Value,
        entries: &[ManagedFieldsEntry],
        config: &Value,
    ) -> Result<(Value, Vec<ManagedFieldsEntry>), Vec<Conflict>> {
        let applied = apply_set(self.kind, config);
        let mine = |e: &ManagedFieldsEntry| e.manager == self.manager && e.is_apply() && e.subresource.is_empty();
        let mut conflicts = Vec::new();
        let mut conflicted = FieldSet::default();
        for e in entries.iter().filter(|e| !mine(e) && e.subresource != "status") {
            for steps in e.fields_v1.intersection(&applied).paths() {
                let last = steps.last().map(String::as_str).unwrap_or("");
                if last.starts_with("k:") || last.starts_with("v:") {
                    continue;
                }
                if value_at(config, &steps) != value_at(live, &steps) {
                    conflicted.insert(&steps);
                    conflicts.push(Conflict {
                        manager: e.manager.clone(),
                        subresource: e.subresource.clone(),
                        api_version: e.api_version.clone(),
                        path: crate::api::managed_fields::path_string(&steps),
                    });
                }
            }
        }
        if !conflicts.is_empty() && !self.force {
            conflicts.stable_sort_by(|a, b| (&a.manager, &a.path).cmp(&(&b.manager, &b.path)));
            conflicts.dedup();
            return Err(conflicts);
        }
        // Fields this manager applied before and dropped now, that nobody else owns, go.
        let previous = entries.iter().find(|e| mine(e)).map(|e| (*e.fields_v1).clone()).unwrap_or_default();
        let others = entries.iter().filter(|e| !mine(e)).fold(FieldSet::default(), |acc, e| acc.union(&e.fields_v1));
        let dropped = previous.difference(&applied).difference(&others);
        let mut merged = live.clone();
        let mut paths = dropped.paths();
        // Deepest first, so removing an item does not shift a path still to remove.
        paths.stable_sort_by_key(|p| std::cmp::Reverse(p.len()));
        for steps in paths {
            remove_at(&mut merged, &steps);
        }
        merge_into(self.kind, "", "", &mut merged, config);

        let mut out: Vec<ManagedFieldsEntry> = Vec::with_capacity(entries.len() + 1);
        for e in entries.iter().filter(|e| !mine(e)) {
            let rest = e.fields_v1.difference(&conflicted);
            if !rest.is_empty() {
                out.push(ManagedFieldsEntry { fields_v1: Arc::new(rest), ..e.clone() });
            }
        }
        if !applied.is_empty() {
            out.push(ManagedFieldsEntry {
                api_version: self.api_version.clone(),
                fields_type: "FieldsV1".into(),
                fields_v1: Arc::new(applied),
                manager: self.manager.to_string(),
                operation: "Apply".into(),
                subresource: String::new(),
                time: Some(self.now),
            });
        }
        sort(&mut out);
        Ok((merged, out))
    }
}

/// Whether a list item matches a `k:` or `v:` step.
pub(crate) fn item_matches(item: &Value, step: &str) -> bool {
    if let Some(keys) = step.strip_prefix("k:") {
        let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(keys) else { return false };
        keys.iter().all(|(k, v)| match item.get(k) {
            Some(x) => x == v,
            None => k == "protocol" && v == "TCP",
        })
    } else if let Some(v) = step.strip_prefix("v:") {
        serde_json::from_str::<Value>(v).is_ok_and(|v| *item == v)
    } else {
        false
    }
}

/// The value at a field-set path, if present.
pub fn value_at<'a>(value: &'a Value, steps: &[String]) -> Option<&'a Value> {
    let mut cur = value;
    for step in steps {
        cur = if let Some(field) = step.strip_prefix("f:") {
            cur.get(field)?
        } else if let Some(i) = step.strip_prefix("i:") {
            cur.get(i.parse::<usize>().ok()?)?
        } else {
            cur.as_array()?.iter().find(|item| item_matches(item, step))?
        };
    }
    Some(cur)
}

fn remove_at(value: &mut Value, steps: &[String]) {
    let Some((last, parents)) = steps.split_last() else { return };
    let mut cur = value;
    for step in parents {
        let next = if let Some(field) = step.strip_prefix("f:") {
            cur.get_mut(field)
        } else {
            cur.as_array_mut().and_then(|items| items.iter_mut().find(|item| item_matches(item, step)))
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    if let Some(field) = last.strip_prefix("f:") {
        if let Some(map) = cur.as_object_mut() {
            map.remove(field);
        }
    } else if let Some(items) = cur.as_array_mut() {
        items.retain(|item| !item_matches(item, last));
    }
}

/// Merges an apply configuration into the live object: structs and granular maps field by
/// field, keyed lists item by item, sets by value; atomic values are replaced.
fn merge_into(kind: Kind, parent: &str, field: &str, live: &mut Value, config: &Value) {
    match config {
        Value::Object(cfg) if live.is_object() && !schema::is_atomic_object(kind, parent, field) => {
            let Value::Object(map) = live else { return };
            for (k, v) in cfg {
                if v.is_null() {
                    map.remove(k);
                    continue;
                }
                let slot = map.entry(k.clone()).or_insert(Value::Null);
                if slot.is_null() {
                    *slot = v.clone();
                } else {
                    merge_into(kind, field, k, slot, v);
                }
            }
        }
        Value::Array(cfg) if live.is_array() => match schema::list_type(parent, field) {
            ListType::Atomic => *live = config.clone(),
            lt => {
                let Value::Array(items) = live else { return };
                for c in cfg {
                    let Some(step) = schema::item_step(lt, c) else {
                        *items = cfg.clone();
                        return;
                    };
                    match items.iter_mut().find(|i| schema::item_step(lt, i).as_deref() == Some(&step)) {
                        Some(existing) if lt != ListType::Set => merge_into(kind, field, "", existing, c),
                        Some(_) => {}
                        None => items.push(c.clone()),
                    }
                }
            }
        },
        _ => *live = config.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": image, "ports": [{"containerPort": 80}]}]}
                }
            }
        })
    }

    fn applier(manager: &str, force: bool) -> ApplyWrite<'_> {
        ApplyWrite { kind: Kind::Deployment, manager, force, api_version: "apps/v1".into(), now: Time(0) }
    }

    #[test]
    fn equal_field_sets_are_shared_while_an_object_holds_them_and_forgotten_after() {
        let mut interner = Interner::default();
        let a = interner.intern(apply_set(Kind::Deployment, &deployment(3, "nginx:1.25")));
        let b = interner.intern(apply_set(Kind::Deployment, &deployment(3, "nginx:1.25")));
        assert!(Arc::ptr_eq(&a, &b), "one copy for both");
        drop((a, b));
        // Nothing holds it: the next equal set is a new one, and the table does not keep sets
        // alive past their objects.
        let c = interner.intern(apply_set(Kind::Deployment, &deployment(3, "nginx:1.25")));
        assert_eq!(Arc::strong_count(&c), 1);
        drop(c);
        // Sets of as many different fields (a label each) as the table's room, all let go.
        let labelled = |i: usize| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {format!("k{i}"): "v"}}});
        let held: Vec<Arc<FieldSet>> =
            (0..Interner::CAPACITY + 5).map(|i| interner.intern(apply_set(Kind::ConfigMap, &labelled(i)))).collect();
        drop(held);
        assert!(interner.count <= Interner::CAPACITY, "{} entries", interner.count);
        let d = interner.intern(apply_set(Kind::ConfigMap, &labelled(1)));
        assert_eq!(Arc::strong_count(&d), 1);
    }

    #[test]
    fn an_apply_set_names_leaves_and_keyed_items_but_not_name_or_kind() {
        let set = apply_set(Kind::Deployment, &deployment(3, "nginx:1.25"));
        let json = set.to_json();
        assert_eq!(json["f:spec"]["f:selector"], json!({}));
        assert!(json.get("f:apiVersion").is_none());
        assert!(json["f:metadata"].get("f:name").is_none());
        let item = &json["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"nginx\"}"];
        assert_eq!(item["."], json!({}));
        assert_eq!(item["f:ports"]["k:{\"containerPort\":80,\"protocol\":\"TCP\"}"]["f:containerPort"], json!({}));
        // Apply sets mark items, not maps.
        assert!(json["f:metadata"]["f:labels"].get(".").is_none());
    }

    #[test]
    fn an_update_owns_what_it_created_with_maps_and_lists_as_members() {
        let (changed, removed) = update_sets(Kind::Deployment, &json!({}), &deployment(3, "nginx:1.25"));
        assert!(removed.is_empty());
        let json = changed.to_json();
        assert_eq!(json["f:metadata"]["f:labels"]["."], json!({}));
        assert!(json["f:spec"].get(".").is_none());
        let containers = &json["f:spec"]["f:template"]["f:spec"]["f:containers"];
        assert!(containers.get(".").is_none());
        assert_eq!(containers["k:{\"name\":\"nginx\"}"]["f:ports"]["."], json!({}));
    }

    #[test]
    fn an_update_owns_only_the_fields_it_changed() {
        let (changed, removed) =
            update_sets(Kind::Deployment, &deployment(3, "nginx:1.25"), &deployment(5, "nginx:1.25"));
        assert_eq!(changed.paths(), vec![vec!["f:spec".to_string(), "f:replicas".to_string()]]);
        assert!(removed.is_empty());
    }

    #[test]
    fn applying_a_field_another_manager_changed_is_a_conflict_naming_it() {
        let live = deployment(5, "nginx:1.25");
        let entries = vec![ManagedFieldsEntry {
            manager: "kubectl-client-side-apply".into(),
            operation: "Update".into(),
            api_version: "apps/v1".into(),
            fields_v1: Arc::new(update_sets(Kind::Deployment, &json!({}), &live).0),
            ..Default::default()
        }];
        let err = applier("kubectl", false).merge(&live, &entries, &deployment(3, "nginx:1.25")).unwrap_err();
        assert_eq!(
            conflict_message(&err),
            "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas"
        );
        // The same values co-own without conflict.
        let (merged, out) = applier("kubectl", false).merge(&live, &entries, &deployment(5, "nginx:1.25")).unwrap();
        assert_eq!(merged, live);
        assert_eq!(out.len(), 2);
        // Forced, the applier takes the field from the other manager.
        let (merged, out) = applier("kubectl", true).merge(&live, &entries, &deployment(3, "nginx:1.25")).unwrap();
        assert_eq!(merged["spec"]["replicas"], json!(3));
        let other = out.iter().find(|e| e.manager == "kubectl-client-side-apply").unwrap();
        assert!(!other.fields_v1.contains(&["f:spec".into(), "f:replicas".into()]));
    }

    #[test]
    fn a_configuration_naming_only_untracked_metadata_claims_no_metadata() {
        let set = apply_set(
            Kind::ConfigMap,
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x"}, "data": {"a": "1"}}),
        );
        assert_eq!(set.to_json(), json!({"f:data": {"f:a": {}}}));
    }

    #[test]
    fn several_conflicts_are_listed_under_their_manager() {
        let conflicts = vec![
            Conflict { manager: "a".into(), subresource: String::new(), api_version: "v1".into(), path: ".x".into() },
            Conflict { manager: "a".into(), subresource: String::new(), api_version: "v1".into(), path: ".y".into() },
            Conflict { manager: "b".into(), subresource: String::new(), api_version: "v1".into(), path: ".z".into() },
        ];
        assert_eq!(
            conflict_message(&conflicts),
            "Apply failed with 3 conflicts: conflicts with \"a\" using v1:\n- .x\n- .y\nconflicts with \"b\" using v1:\n- .z"
        );
    }

    #[test]
    fn a_field_dropped_from_the_appliers_configuration_is_removed_when_nobody_else_owns_it() {
        let mut with_label = deployment(3, "nginx:1.25");
        with_label["metadata"]["labels"]["tier"] = json!("front");
        let (live, entries) = applier("kubectl", false).merge(&json!({}), &[], &with_label).unwrap();
        assert_eq!(live["metadata"]["labels"]["tier"], json!("front"));
        let (merged, _) = applier("kubectl", false).merge(&live, &entries, &deployment(3, "nginx:1.25")).unwrap();
        assert!(merged["metadata"]["labels"].get("tier").is_none());
        assert_eq!(merged["metadata"]["labels"]["app"], json!("web"));
    }
}
