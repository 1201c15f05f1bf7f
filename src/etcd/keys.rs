//! etcd's sorted key index, for ranges (`kubectl get` lists, `etcdctl get --prefix`): the keys
//! of each resource (`/registry/pods/`, `/registry/events/`, ...) kept apart and sorted lazily
//! (see [`crate::util::sorted_keys`]), so a resource nobody lists while it grows (Events, at scale)
//! is never sorted and a write never compares its key with cold ones.

use crate::etcd::resources::{ResourceCounts, resource_prefix};
use crate::util::sorted_keys::{InOrder, Live, SortedKeys};
use std::collections::{BTreeMap, BTreeSet};
use std::iter::Peekable;
use std::ops::Bound;
use std::sync::Arc;

/// The index: each resource prefix's keys, in prefix order (which is key order: no resource
/// prefix is a prefix of another), and the rare keys outside `/registry/<resource>/` in a
/// plain sorted set; and how many keys each resource has.
#[derive(Debug, Default)]
pub struct KeyIndex {
    resources: BTreeMap<Box<str>, SortedKeys>,
    other: BTreeSet<Arc<str>>,
    counts: ResourceCounts,
}

impl KeyIndex {
    /// A key the store did not hold.
    pub fn insert(&mut self, key: Arc<str>) {
        self.counts.added(&key);
        let Some(prefix) = resource_prefix(&key).filter(|p| p.len() < key.len()) else {
            self.other.insert(key);
            return;
        };
        match self.resources.get_mut(prefix) {
            Some(keys) => keys.insert(key),
            None => {
                let mut keys = SortedKeys::default();
                let prefix: Box<str> = prefix.into();
                keys.insert(key);
                self.resources.insert(prefix, keys);
            }
        }
    }

    /// A key the store no longer holds (`live` answers for the store as it now is).
    pub fn remove(&mut self, key: &str, live: Live) {
        self.counts.removed(key);
        if self.other.remove(key) {
            return;
        }
        if let Some(keys) = resource_prefix(key).and_then(|p| self.resources.get_mut(p)) {
            keys.removed(live);
        }
    }

    /// Whether any key starts with `prefix`, when it is a whole resource prefix
    /// (`/registry/resourcequotas/`); None for any other prefix.
    pub fn any_under(&self, prefix: &str) -> Option<bool> {
        self.counts.any_under(prefix)
    }

    /// The keys starting with `prefix`, in order, each as `find` answers for it (keys it does
    /// not find, the store has removed).
    pub fn range<'a, V: 'a, F>(&'a self, prefix: &'a str, find: F) -> impl Iterator<Item = (&'a str, &'a V)> + 'a
    where
        F: Fn(&str) -> Option<(&'a str, &'a V)> + Copy + 'a,
    {
        let live = |k: &str| find(k).is_some();
        // The resources that may hold such keys: the one `prefix` is within, or every one
        // whose prefix starts with it.
        let lists = match resource_prefix(prefix) {
            Some(p) => self.resources.get(p).map(|keys| keys.sorted(&live)).into_iter().collect(),
            None => self
                .resources
                .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
                .take_while(|(p, _)| p.starts_with(prefix))
                .map(|(_, keys)| keys.sorted(&live))
                .collect(),
        };
        let other = self
            .other
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(move |k| k.starts_with(prefix))
            .filter_map(move |k| find(k));
        Merge { a: InOrder::new(lists, prefix, find).peekable(), b: other.peekable() }
    }
}

/// Two key-ordered streams as one.
struct Merge<'a, V: 'a, A: Iterator<Item = (&'a str, &'a V)>, B: Iterator<Item = (&'a str, &'a V)>> {
    a: Peekable<A>,
    b: Peekable<B>,
}

impl<'a, V: 'a, A, B> Iterator for Merge<'a, V, A, B>
where
    A: Iterator<Item = (&'a str, &'a V)>,
    B: Iterator<Item = (&'a str, &'a V)>,
{
    type Item = (&'a str, &'a V);

    fn next(&mut self) -> Option<(&'a str, &'a V)> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if y.0 < x.0 => self.b.next(),
            (Some(_), _) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::api::{Namespace, Object};
    use crate::etcd::Etcd;

    fn put(etcd: &mut Etcd, key: &str) {
        etcd.put_object(key, Object::Namespace(Namespace::default()));
    }

    fn keys(etcd: &Etcd, prefix: &str) -> Vec<String> {
        etcd.range(prefix).map(|(k, _)| k.to_string()).collect()
    }

    #[test]
    fn a_range_lists_keys_written_in_any_order_sorted_and_only_under_its_prefix() {
        let mut etcd = Etcd::new();
        for key in ["/registry/pods/b/x", "/registry/pods/a/y", "/registry/pods/a/x", "/registry/nodes/n"] {
            put(&mut etcd, key);
        }
        assert_eq!(keys(&etcd, "/registry/pods/a/"), ["/registry/pods/a/x", "/registry/pods/a/y"]);
        put(&mut etcd, "/registry/pods/a/w");
        assert_eq!(
            keys(&etcd, "/registry/pods/"),
            ["/registry/pods/a/w", "/registry/pods/a/x", "/registry/pods/a/y", "/registry/pods/b/x"]
        );
        assert!(keys(&etcd, "/registry/pods/c/").is_empty());
    }

    #[test]
    fn a_range_over_several_resources_and_keys_outside_them_keeps_key_order() {
        let mut etcd = Etcd::new();
        for key in [
            "/registry/services/s",
            "/registry/pods/p",
            "/registry/podx",
            "/other",
            "/registry/nodes/n",
            "/registry/pods/",
        ] {
            put(&mut etcd, key);
        }
        assert_eq!(
            keys(&etcd, ""),
            [
                "/other",
                "/registry/nodes/n",
                "/registry/pods/",
                "/registry/pods/p",
                "/registry/podx",
                "/registry/services/s"
            ]
        );
        assert_eq!(keys(&etcd, "/registry/pod"), ["/registry/pods/", "/registry/pods/p", "/registry/podx"]);
        etcd.delete("/registry/podx", None).unwrap();
        etcd.delete("/registry/pods/", None).unwrap();
        etcd.delete("/registry/services/s", None).unwrap();
        put(&mut etcd, "/registry/services/s");
        assert_eq!(keys(&etcd, "/registry/"), ["/registry/nodes/n", "/registry/pods/p", "/registry/services/s"]);
    }

    #[test]
    fn a_range_read_while_another_reads_the_same_resource_sees_the_same_keys() {
        let mut etcd = Etcd::new();
        for i in (0..50).rev() {
            put(&mut etcd, &format!("/registry/pods/default/p{i:02}"));
        }
        let mut outer = etcd.range("/registry/pods/");
        assert_eq!(outer.next().map(|(k, _)| k), Some("/registry/pods/default/p00"));
        assert_eq!(keys(&etcd, "/registry/pods/default/").len(), 50);
        assert_eq!(outer.count(), 49);
    }
}
