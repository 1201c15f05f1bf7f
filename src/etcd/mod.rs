//! etcd: the versioned key-value store behind the API server.
//!
//! Keys are `/registry/<resource>/<namespace>/<name>`. One global revision counts every write;
//! each key remembers the revision that created it and the one that last changed it. The log of
//! changes since the last compaction serves watches that start from an old revision and lets
//! the sandbox show the cluster as it was at any past revision.

pub mod keys;
pub mod lookup_key;
pub mod raft;
pub mod resources;

use crate::api::Object;
use crate::etcd::keys::KeyIndex;
use crate::util::fast_keys::FastKeys;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Write;
use std::sync::Arc;

pub type Revision = i64;

#[derive(Clone, Debug)]
pub struct KeyValue {
    pub value: Arc<Object>,
    pub create_revision: Revision,
    pub mod_revision: Revision,
    /// How many times the key was written since it was created.
    pub version: i64,
    /// The key, shared with the store's indexes and the changes written to it.
    key: Arc<str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Put,
    Delete,
}

/// One write, as etcd's watch stream reports it.
#[derive(Clone, Debug)]
pub struct Change {
    pub revision: Revision,
    /// Shared with the store's indexes (a key is copied once, when it is created).
    pub key: Arc<str>,
    pub kind: ChangeKind,
    /// The value written (for a delete: the last value before it).
    pub value: Arc<Object>,
    pub prev: Option<Arc<Object>>,
    /// Whether this write created the key.
    pub created: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdError {
    /// A create found the key already present.
    Exists,
    /// The key is absent.
    NotFound,
    /// A conditional write's expected revision is no longer current.
    Conflict,
    /// The requested revision has been compacted away.
    Compacted { compacted: Revision },
    /// The requested revision is in the future.
    FutureRevision,
}

/// Takes the changes compaction lets go of (see [`Etcd::set_discard`]).
pub trait Discard: std::fmt::Debug {
    fn discard(&mut self, change: Change);
}

#[derive(Debug)]
pub struct Etcd {
    revision: Revision,
    /// The keys' values, found by hash; `order` lists the same keys sorted, for ranges, and
    /// counts them per resource.
    kvs: HashMap<Arc<str>, KeyValue, FastKeys>,
    order: KeyIndex,
    log: VecDeque<Change>,
    compacted: Revision,
    /// Automatic compaction keeps at most this many changes in the log.
    pub history_limit: usize,
    /// Values no API object decodes from (written by `etcdctl put`), by key. A key is either
    /// here or in `kvs`, never both.
    raw: BTreeMap<String, RawValue>,
    /// Where compacted changes go (automatic or asked for); dropped at once without one.
    discard: Option<Box<dyn Discard + Send>>,
    /// The Raft group behind the store when etcd has several members (none for the single
    /// member of a one-control-plane cluster, whose writes commit as they are made).
    raft: Option<Box<raft::Group>>,
}

impl KeyValue {
    /// A key's first version, written at `revision`.
    fn first(key: Arc<str>, value: Arc<Object>, revision: Revision) -> Self {
        KeyValue { value, create_revision: revision, mod_revision: revision, version: 1, key }
    }
}

/// Moves the store to its next revision and stamps it on `object` as its resourceVersion.
fn stamp(revision: &mut Revision, mut object: Object) -> (Revision, Arc<Object>) {
    *revision += 1;
    // Written into the object's own string: a client that cleared it kept its room.
    let version = &mut object.meta_mut().resource_version;
    version.clear();
    let _ = write!(version, "{revision}");
    (*revision, Arc::new(object))
}

/// A value written behind the API server's back that is not an object it can decode.
#[derive(Clone, Debug)]
pub struct RawValue {
    pub value: String,
    pub create_revision: Revision,
    pub mod_revision: Revision,
    pub version: i64,
}

impl Default for Etcd {
    fn default() -> Self {
        Etcd::new()
    }
}

impl Etcd {
    pub fn new() -> Self {
        Etcd {
            revision: 1,
            kvs: HashMap::default(),
            order: KeyIndex::default(),
            log: VecDeque::new(),
            compacted: 1,
            history_limit: 50_000,
            raw: BTreeMap::new(),
            discard: None,
            raft: None,
        }
    }

    /// Makes the store a Raft group of these members (name, IP): from then on a write
    /// commits at a quorum of them, and without one nothing is served.
    pub fn form_group(&mut self, members: &[(String, String)], seed: u64, now: crate::sim::Time) {
        self.raft = (members.len() > 1).then(|| Box::new(raft::Group::new(members, seed, now)));
    }

    /// The Raft group, when etcd has several members.
    pub fn raft(&self) -> Option<&raft::Group> {
        self.raft.as_deref()
    }

    pub fn raft_mut(&mut self) -> Option<&mut raft::Group> {
        self.raft.as_deref_mut()
    }

    /// The key an object is stored under.
    pub fn key_for(resource: &str, namespace: &str, name: &str) -> String {
        crate::util::fast_keys::join(&crate::etcd::lookup_key::etcd_parts(resource, namespace, name))
    }

    pub fn revision(&self) -> Revision {
        self.revision
    }

    pub fn compacted_revision(&self) -> Revision {
        self.compacted
    }

    pub fn len(&self) -> usize {
        self.kvs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kvs.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&KeyValue> {
        self.kvs.get(key)
    }

    /// Every key starting with `prefix`, in key order.
    pub fn range<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a KeyValue)> + 'a {
        let kvs = &self.kvs;
        self.order.range(prefix, move |k| kvs.get_key_value(k).map(|(k, kv)| (&**k, kv)))
    }

    /// Every key starting with `prefix`, in no particular order: for counting and checking,
    /// which need no order, without making the key index sort the keys added since it last did.
    pub fn unordered<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a KeyValue)> + 'a {
        self.kvs.iter().filter(move |(k, _)| k.starts_with(prefix)).map(|(k, kv)| (&**k, kv))
    }

    /// Whether any key starts with `prefix`; for a whole resource prefix
    /// (`/registry/resourcequotas/`) without walking the key index.
    pub fn any_under(&self, prefix: &str) -> bool {
        self.order.any_under(prefix).unwrap_or_else(|| self.range(prefix).next().is_some())
    }

    /// Stores a new key. The object's `resourceVersion` becomes the write's revision.
    pub fn create(&mut self, key: &str, object: Object) -> Result<Change, EtcdError> {
        self.try_create(key, object).map_err(|_| EtcdError::Exists)
    }

    /// `create`, handing the object back when the key is taken. The key is looked up once
    /// (and copied once, for both indexes and the log to share).
    pub fn try_create(&mut self, key: &str, object: Object) -> Result<Change, Box<Object>> {
        let slot = match self.kvs.entry(Arc::from(key)) {
            Entry::Occupied(_) => return Err(Box::new(object)),
            Entry::Vacant(slot) => slot,
        };
        let (revision, value) = stamp(&mut self.revision, object);
        let key = slot.key().clone();
        self.order.insert(key.clone());
        slot.insert(KeyValue::first(key.clone(), value.clone(), revision));
        let change = Change { revision, key, kind: ChangeKind::Put, value, prev: None, created: true };
        self.append(change.clone());
        Ok(change)
    }

    /// Replaces a key's value. With `expected`, the write only happens if the key was last
    /// modified at that revision (optimistic concurrency).
    pub fn update(&mut self, key: &str, object: Object, expected: Option<Revision>) -> Result<Change, EtcdError> {
        let current = self.kvs.get(key).ok_or(EtcdError::NotFound)?;
        if expected.is_some_and(|rev| rev != current.mod_revision) {
            return Err(EtcdError::Conflict);
        }
        let prev = Some(current.value.clone());
        Ok(self.put(key, object, prev))
    }

    pub fn delete(&mut self, key: &str, expected: Option<Revision>) -> Result<Change, EtcdError> {
        let current = self.kvs.get(key).ok_or(EtcdError::NotFound)?;
        if expected.is_some_and(|rev| rev != current.mod_revision) {
            return Err(EtcdError::Conflict);
        }
        let (key, kv) = self.kvs.remove_entry(key).ok_or(EtcdError::NotFound)?;
        let kvs = &self.kvs;
        self.order.remove(&key, &|k| kvs.contains_key(k));
        self.revision += 1;
        let change = Change {
            revision: self.revision,
            key,
            kind: ChangeKind::Delete,
            value: kv.value.clone(),
            prev: Some(kv.value),
            created: false,
        };
        self.append(change.clone());
        Ok(change)
    }

    fn put(&mut self, key: &str, object: Object, prev: Option<Arc<Object>>) -> Change {
        let (revision, value) = stamp(&mut self.revision, object);
        let created = prev.is_none();
        // An update finds its key by reference; a new key (`etcdctl put`) is copied once, for
        // both indexes and the log to share.
        let key = match self.kvs.get_mut(key) {
            Some(entry) => {
                // Managed fields still to be worked out from this revision are worked out
                // while it is the stored one (see `ManagedFields::reading_stored`).
                entry.value.meta().managed_fields.settle();
                entry.value = value.clone();
                entry.mod_revision = revision;
                entry.version += 1;
                entry.key.clone()
            }
            None => {
                let shared: Arc<str> = Arc::from(key);
                self.order.insert(shared.clone());
                self.kvs.insert(shared.clone(), KeyValue::first(shared.clone(), value.clone(), revision));
                shared
            }
        };
        let change = Change { revision, key, kind: ChangeKind::Put, value, prev, created };
        self.append(change.clone());
        change
    }

    fn append(&mut self, change: Change) {
        self.log.push_back(change);
        while self.log.len() > self.history_limit {
            if let Some(old) = self.log.pop_front() {
                self.compacted = old.revision;
                self.let_go(old);
            }
        }
    }

    /// Hands the changes that compaction lets go of to `discard` instead of dropping them (the
    /// scale benchmark frees them on another core: see `janitor`).
    pub fn set_discard(&mut self, discard: Box<dyn Discard + Send>) {
        self.discard = Some(discard);
    }

    /// A change compaction took out of the log.
    fn let_go(&mut self, change: Change) {
        if let Some(discard) = &mut self.discard {
            discard.discard(change);
        }
    }

    /// The undecodable value stored at `key`, if one is.
    pub fn raw(&self, key: &str) -> Option<&RawValue> {
        self.raw.get(key)
    }

    /// Whether any undecodable value is stored (only `etcdctl put` writes one).
    pub fn has_raw(&self) -> bool {
        // Keys outside the registry (the compactor's `compact_rev_key`) hold no object.
        self.raw
            .range::<str, _>((std::ops::Bound::Included("/registry/"), std::ops::Bound::Unbounded))
            .next()
            .is_some_and(|(k, _)| k.starts_with("/registry/"))
    }

    /// Every undecodable value whose key starts with `prefix`, in key order.
    pub fn raw_range<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a String, &'a RawValue)> + 'a {
        self.raw.range(prefix.to_string()..).take_while(move |(k, _)| k.starts_with(prefix))
    }

    /// Writes an object at `key` whatever is there (etcdctl's unconditional put).
    pub fn put_object(&mut self, key: &str, object: Object) -> Change {
        let raw = self.raw.remove(key);
        let prev = self.kvs.get(key).map(|kv| kv.value.clone());
        let change = self.put(key, object, prev);
        if let Some(raw) = raw {
            // The key lives on: keep its history as etcd would.
            if let Some(kv) = self.kvs.get_mut(key) {
                kv.create_revision = raw.create_revision;
                kv.version = raw.version + 1;
            }
        }
        change
    }

    /// Writes a value no object decodes from. If an object was stored at `key`, it is gone as
    /// far as any decoder can tell: the returned change reports it deleted.
    pub fn put_raw(&mut self, key: &str, value: String) -> Option<Change> {
        self.revision += 1;
        let revision = self.revision;
        let removed = self.kvs.remove(key);
        if removed.is_some() {
            let kvs = &self.kvs;
            self.order.remove(key, &|k| kvs.contains_key(k));
        }
        let (create_revision, version, old) = match (self.raw.get(key), removed) {
            (Some(r), _) => (r.create_revision, r.version, None),
            (None, Some(kv)) => (kv.create_revision, kv.version, Some(kv.value)),
            (None, None) => (revision, 0, None),
        };
        self.raw
            .insert(key.to_string(), RawValue { value, create_revision, mod_revision: revision, version: version + 1 });
        let change = old.map(|old| Change {
            revision,
            key: Arc::from(key),
            kind: ChangeKind::Delete,
            value: old.clone(),
            prev: Some(old),
            created: false,
        });
        if let Some(c) = &change {
            self.append(c.clone());
        }
        change
    }

    /// Deletes whatever `key` holds; `None` when it held nothing. Deleting an undecodable value
    /// bumps the revision but is no change any watcher could decode.
    pub fn delete_any(&mut self, key: &str) -> Option<Option<Change>> {
        if self.raw.remove(key).is_some() {
            self.revision += 1;
            return Some(None);
        }
        self.kvs.contains_key(key).then(|| self.delete(key, None).ok())
    }

    /// Everything stored, for `etcdctl snapshot save`.
    pub fn snapshot(&self) -> StoreSnapshot {
        StoreSnapshot {
            objects: crate::util::sort::btree_map(self.kvs.iter().map(|(k, kv)| (k.to_string(), kv.value.clone()))),
            raw: crate::util::sort::btree_map(self.raw.iter().map(|(k, r)| (k.clone(), r.value.clone()))),
            revision: self.revision,
        }
    }

    /// Drops history up to and including `revision`; watches from before it get `Compacted`.
    pub fn compact(&mut self, revision: Revision) {
        let revision = revision.min(self.revision);
        while self.log.front().is_some_and(|c| c.revision <= revision) {
            if let Some(old) = self.log.pop_front() {
                self.let_go(old);
            }
        }
        self.compacted = self.compacted.max(revision);
    }

    /// Every change after `revision`, oldest first.
    pub fn changes_since(&self, revision: Revision) -> Result<impl Iterator<Item = &Change>, EtcdError> {
        if revision < self.compacted {
            return Err(EtcdError::Compacted { compacted: self.compacted });
        }
        if revision > self.revision {
            return Err(EtcdError::FutureRevision);
        }
        let start = self.log.partition_point(|c| c.revision <= revision);
        Ok(self.log.range(start..))
    }

    /// The store's contents as they were at `revision` (time travel), in key order.
    pub fn snapshot_at(&self, revision: Revision) -> Result<BTreeMap<String, Arc<Object>>, EtcdError> {
        let mut state: BTreeMap<String, Arc<Object>> =
            crate::util::sort::btree_map(self.range("").map(|(k, kv)| (k.to_string(), kv.value.clone())));
        if revision >= self.revision {
            return Ok(state);
        }
        if revision < self.compacted {
            return Err(EtcdError::Compacted { compacted: self.compacted });
        }
        // Undo changes newer than `revision`, newest first.
        for change in self.log.iter().rev().take_while(|c| c.revision > revision) {
            match (&change.kind, &change.prev) {
                (ChangeKind::Put, Some(prev)) | (ChangeKind::Delete, Some(prev)) if !change.created => {
                    state.insert(change.key.to_string(), prev.clone());
                }
                _ => {
                    state.remove(&*change.key);
                }
            }
        }
        Ok(state)
    }
}

/// The whole keyspace at one revision, as `etcdctl snapshot save` writes it to a file.
#[derive(Clone, Debug)]
pub struct StoreSnapshot {
    pub objects: BTreeMap<String, Arc<Object>>,
    pub raw: BTreeMap<String, String>,
    pub revision: Revision,
}

impl StoreSnapshot {
    pub fn keys(&self) -> usize {
        self.objects.len() + self.raw.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Namespace, ObjectMeta};

    fn ns(name: &str) -> Object {
        Object::Namespace(Namespace {
            metadata: ObjectMeta { name: name.into(), ..Default::default() },
            ..Default::default()
        })
    }

    #[test]
    fn a_revision_is_stamped_over_whatever_version_the_object_came_with() {
        let mut object = ns("a");
        object.meta_mut().resource_version = "123456789".into();
        let mut revision = 41;
        let (written, stored) = stamp(&mut revision, object);
        assert_eq!((written, stored.meta().resource_version.as_str()), (42, "42"));
    }

    #[test]
    fn managed_fields_that_read_the_stored_revision_are_worked_out_before_it_is_replaced() {
        use crate::api::ManagedFieldsEntry;
        use crate::api::managed_fields::ManagedFields;
        use std::sync::{OnceLock, Weak};
        let mut etcd = Etcd::new();
        etcd.history_limit = 1;
        let stored: Arc<OnceLock<Weak<Object>>> = Default::default();
        let mut object = ns("a");
        let reads = stored.clone();
        object.meta_mut().managed_fields = ManagedFields::reading_stored(Box::new(move || {
            let seen = reads.get().and_then(Weak::upgrade).map(|o| o.meta().resource_version.clone());
            Arc::new(vec![ManagedFieldsEntry { manager: seen.unwrap_or_default(), ..Default::default() }])
        }));
        let created = etcd.create("/registry/namespaces/a", object).unwrap();
        let _ = stored.set(Arc::downgrade(&created.value));
        // The next revision shares the entries (the write changed no field), and the first
        // revision is then forgotten by everyone.
        let next = (*created.value).clone();
        drop(created);
        etcd.update("/registry/namespaces/a", next, None).unwrap();
        etcd.put_object("/registry/namespaces/b", ns("b"));
        let now = etcd.get("/registry/namespaces/a").unwrap().value.clone();
        assert_eq!(now.meta().managed_fields[0].manager, "2", "worked out from revision 2, not lost with it");
    }

    #[test]
    fn every_write_bumps_the_global_revision_and_sets_resource_version() {
        let mut etcd = Etcd::new();
        let a = etcd.create("/registry/namespaces/a", ns("a")).unwrap();
        let b = etcd.create("/registry/namespaces/b", ns("b")).unwrap();
        assert_eq!((a.revision, b.revision), (2, 3));
        assert_eq!(etcd.get("/registry/namespaces/b").unwrap().value.meta().resource_version, "3");
        assert_eq!(etcd.create("/registry/namespaces/a", ns("a")).unwrap_err(), EtcdError::Exists);
    }

    #[test]
    fn creating_a_taken_key_hands_the_object_back_and_writes_nothing() {
        let mut etcd = Etcd::new();
        let first = etcd.try_create("/registry/namespaces/a", ns("a")).unwrap();
        let kv = etcd.get("/registry/namespaces/a").unwrap();
        assert_eq!((kv.create_revision, kv.mod_revision, kv.version), (2, 2, 1));
        assert!(first.created && first.prev.is_none());
        let back = etcd.try_create("/registry/namespaces/a", ns("again")).unwrap_err();
        assert_eq!(back.name(), "again");
        assert_eq!((etcd.revision(), etcd.len()), (2, 1));
        assert_eq!(etcd.range("/registry/namespaces/").count(), 1);
    }

    #[test]
    fn conditional_updates_fail_on_a_stale_revision() {
        let mut etcd = Etcd::new();
        etcd.create("/k", ns("a")).unwrap();
        etcd.update("/k", ns("a"), Some(2)).unwrap();
        assert_eq!(etcd.update("/k", ns("a"), Some(2)).unwrap_err(), EtcdError::Conflict);
        assert_eq!(etcd.get("/k").unwrap().version, 2);
    }

    #[test]
    fn range_lists_a_prefix_in_key_order_and_an_unordered_listing_the_same_keys() {
        let mut etcd = Etcd::new();
        for name in ["c", "a", "b", "d"] {
            etcd.create(&format!("/registry/namespaces/{name}"), ns(name)).unwrap();
        }
        etcd.create("/registry/nodes/x", ns("x")).unwrap();
        etcd.delete("/registry/namespaces/d", None).unwrap();
        let keys: Vec<_> = etcd.range("/registry/namespaces/").map(|(k, _)| k).collect();
        assert_eq!(keys, ["/registry/namespaces/a", "/registry/namespaces/b", "/registry/namespaces/c"]);
        let mut unordered: Vec<_> = etcd.unordered("/registry/namespaces/").map(|(k, _)| k).collect();
        unordered.sort_unstable();
        assert_eq!(unordered, keys);
    }

    #[test]
    fn compacted_history_answers_too_old() {
        let mut etcd = Etcd::new();
        for name in ["a", "b", "c"] {
            etcd.create(&format!("/{name}"), ns(name)).unwrap();
        }
        assert_eq!(etcd.changes_since(2).unwrap().count(), 2);
        etcd.compact(3);
        assert_eq!(etcd.changes_since(2).err(), Some(EtcdError::Compacted { compacted: 3 }));
        assert_eq!(etcd.changes_since(3).unwrap().count(), 1);
    }

    #[test]
    fn snapshots_show_the_store_at_a_past_revision() {
        let mut etcd = Etcd::new();
        etcd.create("/a", ns("a")).unwrap(); // rev 2
        etcd.create("/b", ns("b")).unwrap(); // rev 3
        etcd.delete("/a", None).unwrap(); // rev 4
        let at3 = etcd.snapshot_at(3).unwrap();
        assert_eq!(at3.keys().collect::<Vec<_>>(), ["/a", "/b"]);
        let at2 = etcd.snapshot_at(2).unwrap();
        assert_eq!(at2.keys().collect::<Vec<_>>(), ["/a"]);
    }

    #[test]
    fn a_value_no_object_decodes_from_hides_the_object_it_overwrites_and_keeps_the_keys_history() {
        let mut etcd = Etcd::new();
        etcd.create("/registry/namespaces/a", ns("a")).unwrap(); // rev 2
        let change = etcd.put_raw("/registry/namespaces/a", "garbage".into()).unwrap(); // rev 3
        assert_eq!((change.kind, change.revision), (ChangeKind::Delete, 3));
        assert!(etcd.get("/registry/namespaces/a").is_none());
        let raw = etcd.raw("/registry/namespaces/a").unwrap();
        assert_eq!((raw.value.as_str(), raw.create_revision, raw.mod_revision, raw.version), ("garbage", 2, 3, 2));
        // Writing an object back brings the key back as a creation, with its history.
        let back = etcd.put_object("/registry/namespaces/a", ns("a")); // rev 4
        assert!(back.created);
        let kv = etcd.get("/registry/namespaces/a").unwrap();
        assert_eq!((kv.create_revision, kv.version), (2, 3));
        assert!(etcd.raw("/registry/namespaces/a").is_none());
    }

    #[test]
    fn deleting_any_key_reports_whether_a_watcher_could_see_it() {
        let mut etcd = Etcd::new();
        etcd.create("/a", ns("a")).unwrap();
        assert!(etcd.put_raw("/b", "x".into()).is_none());
        assert!(matches!(etcd.delete_any("/a"), Some(Some(Change { kind: ChangeKind::Delete, .. }))));
        assert!(matches!(etcd.delete_any("/b"), Some(None)));
        assert!(etcd.delete_any("/c").is_none());
        assert_eq!(etcd.revision(), 5);
    }

    #[test]
    fn a_snapshot_holds_objects_values_and_the_revision() {
        let mut etcd = Etcd::new();
        etcd.create("/a", ns("a")).unwrap();
        etcd.put_raw("/b", "x".into());
        let snap = etcd.snapshot();
        assert_eq!((snap.keys(), snap.revision), (2, 3));
        assert_eq!(snap.raw.get("/b").map(String::as_str), Some("x"));
    }
}
