//! An informer's local store: objects by `namespace/name`, found by hash and listed in key
//! order.
//!
//! Most of what reaches an informer is an update to an object it already holds, and a large
//! cluster holds many objects whose keys share long prefixes (`default/app-12-...`): a hash
//! finds those in one step where an ordered tree compares a dozen keys. The order is kept
//! beside the hash, sorted when the store is next listed (`SortedKeys`), so everything that
//! lists the store still sees it sorted by key, and the hash's own order never shows.

use crate::api::Object;
pub use crate::util::fast_keys::{FastKeys, KeyHasher};
use crate::util::sorted_keys::{InOrder, SortedKeys};
use std::collections::HashMap;
use std::sync::Arc;

/// A cache's objects by key, with the keys in order.
#[derive(Debug, Default)]
pub struct ObjectCache {
    /// Each key is shared with `order`.
    objects: HashMap<Arc<str>, Arc<Object>, FastKeys>,
    order: SortedKeys,
}

impl ObjectCache {
    pub fn new() -> Self {
        ObjectCache::default()
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&Arc<Object>> {
        self.objects.get(key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.objects.contains_key(key)
    }

    /// Stores `object` under `key`, returning what was there.
    pub fn insert(&mut self, key: String, object: Arc<Object>) -> Option<Arc<Object>> {
        if let Some(slot) = self.objects.get_mut(key.as_str()) {
            return Some(std::mem::replace(slot, object));
        }
        self.insert_shared(key.into(), object)
    }

    /// Stores `object` under `key`, a key already shared with the caller's own indexes.
    pub fn insert_shared(&mut self, key: Arc<str>, object: Arc<Object>) -> Option<Arc<Object>> {
        let old = self.objects.insert(key.clone(), object);
        if old.is_none() {
            self.order.insert(key);
        }
        old
    }

    /// The stored object under `key`, to replace in place (the key stays where it is).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Arc<Object>> {
        self.objects.get_mut(key)
    }

    pub fn remove(&mut self, key: &str) -> Option<Arc<Object>> {
        let old = self.objects.remove(key)?;
        let objects = &self.objects;
        self.order.removed(&|k| objects.contains_key(k));
        Some(old)
    }

    pub fn clear(&mut self) {
        self.objects.clear();
        self.order.clear();
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// The objects, in key order.
    pub fn values(&self) -> impl Iterator<Item = &Arc<Object>> + '_ {
        self.iter().map(|(_, o)| o)
    }

    /// The objects in no particular order, for a caller that puts what it keeps in order
    /// itself (without sorting the keys for it).
    pub fn values_unordered(&self) -> impl Iterator<Item = &Arc<Object>> + '_ {
        self.objects.values()
    }

    /// Keys and objects, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Arc<Object>)> + '_ {
        let objects = &self.objects;
        let find = move |k: &str| objects.get_key_value(k).map(|(k, o)| (&**k, o));
        InOrder::one(self.order.sorted(&|k| objects.contains_key(k)), "", find)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Namespace, ObjectMeta};

    fn ns(name: &str) -> Arc<Object> {
        Arc::new(Object::Namespace(Namespace {
            metadata: ObjectMeta { name: name.into(), ..Default::default() },
            ..Default::default()
        }))
    }

    #[test]
    fn objects_are_listed_in_key_order_whatever_the_insertion_order() {
        let mut cache = ObjectCache::new();
        for name in ["c", "a", "d", "b"] {
            assert!(cache.insert(name.to_string(), ns(name)).is_none());
        }
        assert_eq!(cache.keys().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        let names: Vec<&str> = cache.values().map(|o| o.name()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
    }

    #[test]
    fn replacing_and_removing_keep_the_order_in_step() {
        let mut cache = ObjectCache::new();
        cache.insert("a".into(), ns("a"));
        cache.insert("b".into(), ns("b"));
        assert_eq!(cache.insert("a".into(), ns("a2")).map(|o| o.name().to_string()), Some("a".into()));
        assert_eq!(cache.get("a").map(|o| o.name()), Some("a2"));
        assert_eq!(cache.remove("a").map(|o| o.name().to_string()), Some("a2".into()));
        assert!(cache.remove("a").is_none());
        assert_eq!(cache.keys().collect::<Vec<_>>(), ["b"]);
        assert_eq!(cache.len(), 1);
    }
}
