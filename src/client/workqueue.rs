//! A controller's work queue: keys of objects to reconcile, each queued once, with delayed
//! re-queues on virtual time and a rate limiter for keys whose sync failed (client-go's
//! rate-limited delaying queue with its default controller rate limiter).

use crate::client::object_cache::FastKeys;
use crate::record::Seq;
use crate::sim::{Duration, Time};
use std::collections::{BTreeMap, HashMap, VecDeque};

#[derive(Debug, Default)]
pub struct WorkQueue {
    ready: VecDeque<String>,
    /// Looked up by key, never listed: hashed with the cheap key hasher.
    queued: HashMap<String, Option<Seq>, FastKeys>,
    delayed: BTreeMap<(Time, u64), String>,
    delayed_seq: u64,
    limiter: RateLimiter,
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

    /// Queues `key` again after a failed sync, once the rate limiter allows.
    pub fn add_rate_limited(&mut self, key: &str, now: Time) {
        let wait = self.limiter.when(key, now);
        self.add_after(key, now + wait);
    }

    /// Stops counting `key`'s failures: its sync succeeded.
    pub fn forget(&mut self, key: &str) {
        self.limiter.forget(key);
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

/// client-go's default controller rate limiter: the longer of two waits. Per key, 5 ms doubling
/// with each failure in a row up to 1000 s (forgotten once a sync succeeds); and overall, a
/// token bucket of 100 retries refilled at 10 a second, so that many keys failing together
/// (the API server gone) are retried at most 10 a second once the first 100 are spent.
#[derive(Debug)]
pub struct RateLimiter {
    failures: HashMap<String, u32, FastKeys>,
    /// The bucket's tokens, in hundredths (one hundredth comes back each millisecond).
    hundredths: u64,
    /// When the bucket was last drawn from.
    drawn_at: Time,
}

/// The bucket holds 100 tokens, in hundredths.
const BUCKET: u64 = 100 * 100;

impl Default for RateLimiter {
    fn default() -> Self {
        RateLimiter { failures: HashMap::default(), hundredths: BUCKET, drawn_at: Time::ZERO }
    }
}

impl RateLimiter {
    /// How long `key`, which just failed, waits before it is tried again.
    pub fn when(&mut self, key: &str, now: Time) -> Duration {
        let n = self.failures.entry(key.to_string()).or_default();
        let per_key = backoff(*n);
        *n = n.saturating_add(1);
        per_key.max(self.draw(now))
    }

    /// Takes a token from the bucket; how long until that token is there.
    fn draw(&mut self, now: Time) -> Duration {
        if now > self.drawn_at {
            self.hundredths = self.hundredths.saturating_add(now.since(self.drawn_at).as_millis()).min(BUCKET);
            self.drawn_at = now;
        }
        if let Some(left) = self.hundredths.checked_sub(100) {
            self.hundredths = left;
            return Duration::ZERO;
        }
        // Not a whole token left: this one is owed, and the bucket fills from when it is paid.
        self.drawn_at = self.drawn_at + Duration::millis(100 - self.hundredths);
        self.hundredths = 0;
        self.drawn_at.since(now)
    }

    /// Forgets `key`'s failures.
    pub fn forget(&mut self, key: &str) {
        self.failures.remove(key);
    }
}

/// The per-key wait after `n` earlier failures in a row: 5 ms · 2^n, at most 1000 s.
fn backoff(n: u32) -> Duration {
    let millis = 5u64.saturating_mul(1u64 << n.min(30));
    Duration::millis(millis.min(1_000_000))
}

#[cfg(test)]
mod rate_limiter_tests {
    use super::*;

    #[test]
    fn a_failing_key_waits_5_ms_doubling_up_to_1000_seconds_and_starts_over_once_forgotten() {
        let mut r = RateLimiter::default();
        let now = Time(1_000_000);
        assert_eq!(r.when("a", now), Duration::millis(5));
        assert_eq!(r.when("a", now), Duration::millis(10));
        assert_eq!(r.when("b", now), Duration::millis(5));
        r.forget("a");
        assert_eq!(r.when("a", now), Duration::millis(5));
        assert_eq!(backoff(10), Duration::millis(5120));
        assert_eq!(backoff(40), Duration::seconds(1000));
    }

    #[test]
    fn past_a_burst_of_100_retries_keys_go_at_10_a_second() {
        let mut r = RateLimiter::default();
        let now = Time(1_000_000);
        let waits: Vec<Duration> = (0..103).map(|i| r.when(&format!("k{i}"), now)).collect();
        assert!(waits[..100].iter().all(|w| *w == Duration::millis(5)), "the burst: only the key's own wait");
        assert_eq!(&waits[100..], [Duration::millis(100), Duration::millis(200), Duration::millis(300)]);
        // Ten seconds later the bucket is full again.
        assert_eq!(r.when("late", now + Duration::seconds(11)), Duration::millis(5));
    }

    #[test]
    fn a_failed_key_is_queued_after_its_wait_and_forgotten_when_it_succeeds() {
        let mut q = WorkQueue::default();
        q.add_rate_limited("a", Time(0));
        q.add_rate_limited("a", Time(0));
        assert_eq!(q.next_delayed(), Some(Time(5)));
        q.promote(Time(10));
        assert_eq!(q.pop().map(|(k, _)| k), Some("a".to_string()));
        q.forget("a");
        q.add_rate_limited("a", Time(20));
        assert_eq!(q.next_delayed(), Some(Time(25)));
    }
}
