//! A controller's work queue: keys of objects to reconcile, each queued once, with delayed
//! re-queues on virtual time (client-go's rate-limited delaying queue, minus the rate limit).

use crate::client::object_cache::FastKeys;
use crate::record::Seq;
use crate::sim::Time;
use std::collections::{BTreeMap, HashMap, VecDeque};

#[derive(Debug, Default)]
pub struct WorkQueue {
    ready: VecDeque<String>,
    /// Looked up by key, never listed: hashed with the cheap key hasher.
    queued: HashMap<String, Option<Seq>, FastKeys>,
    delayed: BTreeMap<(Time, u64), String>,
    delayed_seq: u64,
}

impl WorkQueue {
    /// Queues `key` to be reconciled; `cause` is the record entry that made it dirty.
    pub fn add(&mut self, key: &str, cause: Option<Seq>) {
        match self.queued.get_mut(key) {
            Some(existing) => {
                if cause.is_some() {
                    *existing = cause;
                }
            }
            None => {
                self.queued.insert(key.to_string(), cause);
                self.ready.push_back(key.to_string());
            }
        }
    }

    /// Queues `key` once `at` has come.
    pub fn add_after(&mut self, key: &str, at: Time) {
        self.delayed_seq += 1;
        self.delayed.insert((at, self.delayed_seq), key.to_string());
    }

    /// Moves delayed keys whose time has come into the ready queue.
    pub fn promote(&mut self, now: Time) {
        while let Some((&(at, seq), _)) = self.delayed.first_key_value() {
            if at > now {
                break;
            }
            if let Some(key) = self.delayed.remove(&(at, seq)) {
                self.add(&key, None);
            }
        }
    }

    pub fn pop(&mut self) -> Option<(String, Option<Seq>)> {
        let key = self.ready.pop_front()?;
        let cause = self.queued.remove(&key).flatten();
        Some((key, cause))
    }

    pub fn next_delayed(&self) -> Option<Time> {
        self.delayed.keys().next().map(|(t, _)| *t)
    }

    /// Keys waiting to be reconciled now, for views.
    pub fn ready_keys(&self) -> impl Iterator<Item = &String> {
        self.ready.iter()
    }

    pub fn len(&self) -> usize {
        self.ready.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ready.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_queued_once_until_it_is_taken() {
        let mut q = WorkQueue::default();
        q.add("default/web", Some(1));
        q.add("default/web", Some(2));
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop(), Some(("default/web".to_string(), Some(2))));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn delayed_keys_wait_for_their_time() {
        let mut q = WorkQueue::default();
        q.add_after("a", Time(100));
        q.promote(Time(99));
        assert!(q.is_empty());
        assert_eq!(q.next_delayed(), Some(Time(100)));
        q.promote(Time(100));
        assert_eq!(q.pop().map(|(k, _)| k), Some("a".to_string()));
    }
}

/// The work queue's per-item rate limiter, for keys whose sync had a create refused (a quota,
/// a missing service account): the key is tried again after 5 ms, doubling with each refusal
/// in a row up to 1000 s, and starts over once a sync gets through.
#[derive(Debug, Default)]
pub struct Refusals {
    in_a_row: HashMap<String, u32, FastKeys>,
}

impl Refusals {
    /// Counts a refusal for `key`; returns how long until it is tried again.
    pub fn refused(&mut self, key: &str) -> crate::sim::Duration {
        let n = self.in_a_row.entry(key.to_string()).or_default();
        *n += 1;
        backoff(*n)
    }

    /// A sync of `key` got its creates through (or made none): the back-off starts over.
    pub fn admitted(&mut self, key: &str) {
        self.in_a_row.remove(key);
    }
}

/// The delay after `n` refusals in a row: 5 ms · 2^(n-1), at most 1000 s.
fn backoff(n: u32) -> crate::sim::Duration {
    let millis = 5u64.saturating_mul(1u64 << n.saturating_sub(1).min(30));
    crate::sim::Duration::millis(millis.min(1_000_000))
}

#[cfg(test)]
mod refusal_tests {
    use super::*;
    use crate::sim::Duration;

    #[test]
    fn refused_keys_wait_5_ms_doubling_up_to_1000_seconds_and_start_over_once_admitted() {
        let mut r = Refusals::default();
        assert_eq!(r.refused("a"), Duration::millis(5));
        assert_eq!(r.refused("a"), Duration::millis(10));
        assert_eq!(r.refused("b"), Duration::millis(5));
        r.admitted("a");
        assert_eq!(r.refused("a"), Duration::millis(5));
        assert_eq!(backoff(11), Duration::millis(5120));
        assert_eq!(backoff(40), Duration::seconds(1000));
    }
}
