//! A key built for one lookup — etcd's `/registry/<resource>/[<namespace>/]<name>` or an
//! informer cache's `[<namespace>/]<name>` — spelled out on the stack when it fits, as nearly
//! every key does, so reading or writing what is already stored costs no allocation (a store
//! keeps its own copy of each key it holds).

use std::ops::Deref;

/// The pieces of etcd's key of `name` in `namespace` under `resource`, one after another (the
/// one spelling, for `Etcd::key_for`'s owned keys and [`LookupKey::etcd`]'s).
pub fn etcd_parts<'a>(resource: &'a str, namespace: &'a str, name: &'a str) -> [&'a str; 6] {
    if namespace.is_empty() {
        ["/registry/", resource, "/", name, "", ""]
    } else {
        ["/registry/", resource, "/", namespace, "/", name]
    }
}

/// The pieces of an informer cache's key, `namespace/name` or `name` (for `component::cache_key`
/// and [`LookupKey::cache`]).
pub fn cache_parts<'a>(namespace: &'a str, name: &'a str) -> [&'a str; 3] {
    if namespace.is_empty() { [name, "", ""] } else { [namespace, "/", name] }
}

/// A key, on the stack up to [`LookupKey::ROOM`] bytes and on the heap beyond.
pub struct LookupKey {
    bytes: [u8; LookupKey::ROOM],
    len: usize,
    long: Option<String>,
}

impl LookupKey {
    /// Room for a key on the stack: resource, namespace and name of usual lengths fit.
    pub const ROOM: usize = 160;

    /// etcd's key of `name` in `namespace` (empty for cluster-scoped kinds) under `resource`.
    pub fn etcd(resource: &str, namespace: &str, name: &str) -> Self {
        Self::join(&etcd_parts(resource, namespace, name))
    }

    /// An informer cache's key.
    pub fn cache(namespace: &str, name: &str) -> Self {
        Self::join(&cache_parts(namespace, name))
    }

    fn join(parts: &[&str]) -> Self {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let mut key = LookupKey { bytes: [0; Self::ROOM], len, long: None };
        if len > Self::ROOM {
            key.long = Some(parts.concat());
            return key;
        }
        let mut at = 0;
        for p in parts.iter() {
            key.bytes[at..at + p.len()].copy_from_slice(p.as_bytes());
            at += p.len();
        }
        key
    }

    pub fn as_str(&self) -> &str {
        match &self.long {
            Some(long) => long,
            // SAFETY: `join` filled `bytes[..len]` with whole `str`s one after another, which
            // is UTF-8 (checking it again on every read cost more than the allocation saved).
            None => unsafe { std::str::from_utf8_unchecked(&self.bytes[..self.len]) },
        }
    }
}

impl Deref for LookupKey {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for LookupKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_key_spells_the_same_key_its_store_keeps() {
        assert_eq!(&*LookupKey::etcd("pods", "default", "web-1"), "/registry/pods/default/web-1");
        assert_eq!(&*LookupKey::etcd("nodes", "", "node-1"), "/registry/nodes/node-1");
        assert_eq!(
            &*LookupKey::etcd("pods", "default", "web-1"),
            crate::etcd::Etcd::key_for("pods", "default", "web-1")
        );
        assert_eq!(&*LookupKey::cache("default", "web-1"), crate::client::component::cache_key("default", "web-1"));
        assert_eq!(&*LookupKey::cache("", "node-1"), crate::client::component::cache_key("", "node-1"));
    }

    #[test]
    fn a_key_longer_than_the_room_on_the_stack_is_spelled_out_whole() {
        let name = "n".repeat(LookupKey::ROOM);
        let key = LookupKey::etcd("configmaps", "kube-system", &name);
        assert_eq!(&*key, format!("/registry/configmaps/kube-system/{name}"));
        let fits = "x".repeat(LookupKey::ROOM - "/registry/pods/".len());
        assert_eq!(LookupKey::etcd("pods", "", &fits).len(), LookupKey::ROOM, "exactly full stays on the stack");
        assert!(LookupKey::etcd("pods", "", &fits).long.is_none());
    }
}
