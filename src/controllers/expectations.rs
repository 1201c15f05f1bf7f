//! Expectations: the pods a controller has asked to create or delete but not yet seen come
//! back through its watch, so that it never acts twice on a change its cache has not caught up
//! with. Shared by the ReplicaSet and DaemonSet controllers, as upstream shares its own.

use crate::client::component::Delta;
use crate::client::object_cache::FastKeys;
use crate::record::WatchEventType;
use crate::sim::{Duration, Time};
use std::collections::HashMap;

/// Expectations older than this are given up on.
const TIMEOUT: Duration = Duration::minutes(5);

#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    adds: i64,
    dels: i64,
    set_at: Time,
}

/// Outstanding creations and deletions per owner key (`namespace/name`).
#[derive(Debug, Default)]
pub struct Expectations {
    by_owner: HashMap<String, Pending, FastKeys>,
}

impl Expectations {
    /// Records that a sync is about to create `adds` and delete `dels` pods for `key`.
    pub fn expect(&mut self, key: &str, adds: usize, dels: usize, now: Time) {
        self.by_owner.insert(key.to_string(), Pending { adds: adds as i64, dels: dels as i64, set_at: now });
    }

    /// Creations that will never be observed (the request failed or was not sent).
    pub fn lower_adds(&mut self, key: &str, n: usize) {
        if let Some(p) = self.by_owner.get_mut(key) {
            p.adds -= n as i64;
        }
    }

    /// A deletion that will never be observed (the request failed).
    pub fn lower_dels(&mut self, key: &str) {
        if let Some(p) = self.by_owner.get_mut(key) {
            p.dels -= 1;
        }
    }

    /// Counts a watched pod change against `key`'s expectations. A graceful deletion is
    /// counted once: when the deletionTimestamp first appears, not again when the pod goes.
    pub fn observe(&mut self, key: &str, delta: &Delta) {
        let Some(p) = self.by_owner.get_mut(key) else { return };
        let was_deleting = delta.old.as_ref().is_some_and(|o| o.meta().deletion_timestamp.is_some());
        match delta.type_ {
            WatchEventType::Added => p.adds -= 1,
            WatchEventType::Deleted if !was_deleting => p.dels -= 1,
            WatchEventType::Modified if delta.object.meta().deletion_timestamp.is_some() && !was_deleting => {
                p.dels -= 1
            }
            _ => {}
        }
    }

    /// Whether `key` may sync: everything it expected was seen, or it waited too long.
    pub fn satisfied(&self, key: &str, now: Time) -> bool {
        self.by_owner.get(key).is_none_or(|p| (p.adds <= 0 && p.dels <= 0) || now.since(p.set_at) > TIMEOUT)
    }

    /// Drops `key`'s expectations (its owner is gone).
    pub fn forget(&mut self, key: &str) {
        self.by_owner.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Object, Pod};
    use std::sync::Arc;

    fn delta(type_: WatchEventType, old_deleting: Option<bool>, deleting: bool) -> Delta {
        let pod = |d: bool| {
            let mut p = Pod::default();
            p.metadata.deletion_timestamp = d.then_some(Time(1));
            Arc::new(Object::Pod(p))
        };
        Delta { type_, object: pod(deleting), old: old_deleting.map(pod), seq: 0 }
    }

    #[test]
    fn a_graceful_deletion_is_counted_once_not_again_when_the_pod_goes() {
        let mut e = Expectations::default();
        e.expect("ns/a", 0, 2, Time(0));
        e.observe("ns/a", &delta(WatchEventType::Modified, Some(false), true));
        e.observe("ns/a", &delta(WatchEventType::Deleted, Some(true), true));
        assert!(!e.satisfied("ns/a", Time(0)), "one of two deletions seen");
        e.observe("ns/a", &delta(WatchEventType::Deleted, Some(false), false));
        assert!(e.satisfied("ns/a", Time(0)));
    }

    #[test]
    fn failed_requests_lower_expectations_and_old_ones_time_out() {
        let mut e = Expectations::default();
        e.expect("ns/a", 3, 1, Time(0));
        e.lower_adds("ns/a", 3);
        e.lower_dels("ns/a");
        assert!(e.satisfied("ns/a", Time(0)));
        e.expect("ns/b", 1, 0, Time(0));
        assert!(!e.satisfied("ns/b", Time(0)));
        assert!(e.satisfied("ns/b", Time(0) + TIMEOUT + Duration::seconds(1)));
        assert!(e.satisfied("ns/unknown", Time(0)));
    }
}
