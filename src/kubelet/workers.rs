//! A kubelet's pod workers, by pod key, with their wakeups kept in time order.
//!
//! Each run the kubelet steps the workers that are due and then asks when the next one is.
//! Looking through every worker for that touches each worker's state on every run; the wakeup
//! index answers both from the few entries at its front. A worker is changed only through
//! [`Workers::update`], which moves its entry in the index when its wakeup moves.

use super::pod_worker::PodWorker;
use crate::client::object_cache::FastKeys;
use crate::sim::Time;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// A pod's uid and its worker.
pub type Worker = (String, PodWorker);

#[derive(Debug, Default)]
pub struct Workers {
    /// Each pod's uid and worker, found by hash: a kubelet looks its workers up several times
    /// a run, and a search of a sorted tree would compare keys scattered over the heap. The
    /// entry holds its key too (shared with the index), so a change finds both in one lookup.
    by_key: HashMap<Arc<str>, (Arc<str>, Worker), FastKeys>,
    /// `(wakeup, key)` for every worker that has a wakeup (the key shared with `by_key`).
    wakeups: BTreeSet<(Time, Arc<str>)>,
}

impl Workers {
    pub fn get(&self, key: &str) -> Option<&Worker> {
        self.by_key.get(key).map(|(_, w)| w)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    pub fn insert(&mut self, key: &str, uid: String, worker: PodWorker) {
        self.remove(key);
        let key: Arc<str> = Arc::from(key);
        if let Some(at) = worker.next_wakeup() {
            self.wakeups.insert((at, key.clone()));
        }
        self.by_key.insert(key.clone(), (key, (uid, worker)));
    }

    pub fn remove(&mut self, key: &str) -> Option<Worker> {
        let (key, (uid, worker)) = self.by_key.remove(key)?;
        if let Some(at) = worker.next_wakeup() {
            self.wakeups.remove(&(at, key));
        }
        Some((uid, worker))
    }

    /// Changes a worker; its place in the wakeup index follows.
    pub fn update<R>(&mut self, key: &str, change: impl FnOnce(&mut PodWorker) -> R) -> Option<R> {
        let (key, (_, worker)) = self.by_key.get_mut(key)?;
        let before = worker.next_wakeup();
        let result = change(worker);
        let after = worker.next_wakeup();
        if before != after {
            if let Some(at) = before {
                self.wakeups.remove(&(at, key.clone()));
            }
            if let Some(at) = after {
                self.wakeups.insert((at, key.clone()));
            }
        }
        Some(result)
    }

    /// Every worker, in no particular order (its callers ask whether any worker is so).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Worker)> + '_ {
        self.by_key.values().map(|(k, w)| (&**k, w))
    }

    /// The workers' keys, in no particular order either.
    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.by_key.keys().map(|k| &**k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Worker> + '_ {
        self.by_key.values().map(|(_, w)| w)
    }

    /// The keys of the workers whose wakeup is `now` or earlier, soonest first.
    pub fn due(&self, now: Time) -> impl Iterator<Item = &str> + '_ {
        self.wakeups.iter().take_while(move |(at, _)| *at <= now).map(|(_, key)| &**key)
    }

    /// The earliest wakeup among the workers `counts` accepts.
    pub fn next_wakeup(&self, counts: impl Fn(&str) -> bool) -> Option<Time> {
        self.wakeups.iter().find(|(_, key)| counts(key)).map(|(at, _)| *at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Pod;

    fn worker(at: Option<u64>) -> PodWorker {
        let mut worker = PodWorker::new(&Pod::default(), Time(0), "10.0.0.1");
        worker.set_wakeup(at.map(Time));
        worker
    }

    fn index(w: &Workers) -> Vec<(u64, &str)> {
        w.wakeups.iter().map(|(t, k)| (t.0, &**k)).collect()
    }

    #[test]
    fn the_index_follows_every_change_to_a_workers_wakeup() {
        let mut workers = Workers::default();
        workers.insert("default/a", "uid-a".into(), worker(Some(30)));
        workers.insert("default/b", "uid-b".into(), worker(Some(10)));
        workers.insert("default/c", "uid-c".into(), worker(None));
        assert_eq!(index(&workers), [(10, "default/b"), (30, "default/a")], "soonest first; no wakeup, no entry");
        assert_eq!(workers.due(Time(10)).collect::<Vec<_>>(), ["default/b"]);
        assert_eq!(workers.next_wakeup(|_| true), Some(Time(10)));
        assert_eq!(workers.next_wakeup(|k| k != "default/b"), Some(Time(30)), "only the workers that count");

        workers.update("default/b", |w| w.set_wakeup(Some(Time(40))));
        workers.update("default/c", |w| w.set_wakeup(Some(Time(20))));
        assert_eq!(index(&workers), [(20, "default/c"), (30, "default/a"), (40, "default/b")]);
        workers.update("default/a", |w| w.set_wakeup(None));
        assert_eq!(index(&workers), [(20, "default/c"), (40, "default/b")]);

        workers.remove("default/c");
        workers.insert("default/b", "uid-b2".into(), worker(Some(5)));
        assert_eq!(index(&workers), [(5, "default/b")], "a replaced worker leaves no stale entry");
        assert!(workers.update("default/c", |_| ()).is_none(), "a removed worker is not changed");
        assert_eq!(workers.get("default/b").map(|(uid, _)| uid.as_str()), Some("uid-b2"));
    }
}
