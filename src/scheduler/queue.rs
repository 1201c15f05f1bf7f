//! The scheduling queue: pods waiting for a node, highest priority and oldest first
//! (PrioritySort), with back-off for pods that did not fit.

use crate::client::object_cache::FastKeys;
use crate::record::Seq;
use crate::sim::{Duration, Time};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub const INITIAL_BACKOFF: Duration = Duration::seconds(1);
const MAX_BACKOFF: Duration = Duration::seconds(10);

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Order {
    priority: Reverse<i32>,
    created: Time,
    key: String,
}

#[derive(Debug, Default)]
pub struct SchedulingQueue {
    active: BTreeSet<Order>,
    orders: HashMap<String, Order, FastKeys>,
    /// Pods that failed, waiting for a cluster change: attempts so far and the last attempt.
    unschedulable: BTreeMap<String, (u32, Time)>,
    /// Pods moved back after a change, each ready once its back-off has passed.
    backoff: BTreeMap<String, Time>,
    /// The record entry that last made each pod worth (re)trying.
    pub causes: HashMap<String, Seq, FastKeys>,
}

impl SchedulingQueue {
    pub fn add(&mut self, key: &str, priority: i32, created: Time, cause: Seq) {
        self.causes.insert(key.to_string(), cause);
        if self.orders.contains_key(key) || self.unschedulable.contains_key(key) || self.backoff.contains_key(key) {
            return;
        }
        let order = Order { priority: Reverse(priority), created, key: key.to_string() };
        self.active.insert(order.clone());
        self.orders.insert(key.to_string(), order);
    }

    pub fn remove(&mut self, key: &str) {
        if let Some(order) = self.orders.remove(key) {
            self.active.remove(&order);
        }
        self.unschedulable.remove(key);
        self.backoff.remove(key);
        self.causes.remove(key);
    }

    /// Takes the next pod to schedule, if one is ready now.
    pub fn pop(&mut self, now: Time) -> Option<String> {
        let ready: Vec<String> = self.backoff.iter().filter(|&(_, &at)| at <= now).map(|(k, _)| k.clone()).collect();
        for key in ready {
            self.backoff.remove(&key);
            let order = Order { priority: Reverse(0), created: Time::ZERO, key: key.clone() };
            let order = self.orders.get(&key).cloned().unwrap_or(order);
            self.active.insert(order.clone());
            self.orders.insert(key, order);
        }
        let order = self.active.pop_first()?;
        Some(order.key)
    }

    /// Parks a pod that fit nowhere until the cluster changes. Keeps its queue order.
    pub fn unschedulable(&mut self, key: &str, now: Time) {
        let attempts = self.unschedulable.get(key).map_or(0, |(a, _)| *a) + 1;
        self.unschedulable.insert(key.to_string(), (attempts, now));
    }

    /// A change that might let parked pods fit: each goes back after its back-off.
    pub fn move_all_to_active(&mut self, cause: Seq) {
        for (key, (attempts, last)) in std::mem::take(&mut self.unschedulable) {
            let shift = attempts.saturating_sub(1).min(10);
            let backoff = Duration(INITIAL_BACKOFF.0 << shift).min(MAX_BACKOFF);
            self.causes.insert(key.clone(), cause);
            self.backoff.insert(key, last + backoff);
        }
    }

    /// Sends a pod whose binding failed for a reason other than the pod itself (the API
    /// unreachable) back to the queue at `at`, as the scheduler's binding-cycle error handling does.
    pub fn retry_at(&mut self, key: &str, at: Time) {
        if let Some(order) = self.orders.remove(key) {
            self.active.remove(&order);
        }
        self.unschedulable.remove(key);
        self.backoff.insert(key.to_string(), at);
    }

    /// When the earliest backed-off pod becomes ready.
    pub fn next_ready(&self) -> Option<Time> {
        self.backoff.values().copied().min()
    }

    pub fn has_ready_work(&self) -> bool {
        !self.active.is_empty()
    }

    pub fn len(&self) -> usize {
        self.active.len() + self.unschedulable.len() + self.backoff.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn attempts(&self, key: &str) -> u32 {
        self.unschedulable.get(key).map_or(0, |(a, _)| *a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_priority_then_older_pods_go_first() {
        let mut q = SchedulingQueue::default();
        q.add("default/b", 0, Time(2), 1);
        q.add("default/a", 0, Time(1), 1);
        q.add("default/vip", 10, Time(3), 1);
        assert_eq!(q.pop(Time(0)).as_deref(), Some("default/vip"));
        assert_eq!(q.pop(Time(0)).as_deref(), Some("default/a"));
        assert_eq!(q.pop(Time(0)).as_deref(), Some("default/b"));
        assert_eq!(q.pop(Time(0)), None);
    }

    #[test]
    fn unschedulable_pods_wait_for_a_change_and_their_back_off() {
        let mut q = SchedulingQueue::default();
        q.add("default/a", 0, Time(0), 1);
        let key = q.pop(Time(0)).unwrap();
        q.unschedulable(&key, Time(1000));
        assert_eq!(q.pop(Time(5000)), None, "waits for a cluster change");
        q.move_all_to_active(2);
        assert_eq!(q.pop(Time(1500)), None, "first back-off is one second");
        assert_eq!(q.pop(Time(2000)).as_deref(), Some("default/a"));
    }
}
