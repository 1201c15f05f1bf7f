//! Old object versions freed on another core: the changes etcd's compaction lets go of are
//! handed, a batch at a time, to a background thread that drops them.
//!
//! At upstream's size limits the log lets go of 1.6 million changes, and the last reference to
//! most old versions of an object is theirs: dropping one frees every string, list and map of
//! that version, about 2% of the simulation's time. Nothing the simulation computes depends on
//! when memory is freed, so this only moves work to the second core. The scale benchmark
//! installs it (`--no-janitor` leaves it out); the page (wasm) and the CLI drop inline.

use kubeloop::etcd::{Change, Discard};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

/// Changes handed over at once (one channel message per batch, not per change).
const BATCH: usize = 1024;
/// Batches waiting at most; past that the simulation drops its own (it never waits).
const QUEUED: usize = 64;

/// The sending end, kept by etcd.
#[derive(Debug)]
pub struct Janitor {
    batch: Vec<Change>,
    to_thread: SyncSender<Vec<Change>>,
}

impl Discard for Janitor {
    fn discard(&mut self, change: Change) {
        self.batch.push(change);
        if self.batch.len() >= BATCH {
            let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
            match self.to_thread.try_send(full) {
                Ok(()) => {}
                // Behind, or gone: dropped here instead.
                Err(TrySendError::Full(batch) | TrySendError::Disconnected(batch)) => drop(batch),
            }
        }
    }
}

/// Starts the thread and gives what etcd hands changes to; `None` where no thread can start.
pub fn start() -> Option<Janitor> {
    let (to_thread, batches) = sync_channel::<Vec<Change>>(QUEUED);
    std::thread::Builder::new()
        .name("janitor".into())
        .spawn(move || {
            kubeloop::util::background::take(kubeloop::util::background::Standing::Janitor);
            for batch in batches {
                drop(batch);
            }
        })
        .ok()?;
    Some(Janitor { batch: Vec::with_capacity(BATCH), to_thread })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubeloop::api::{Kind, Object};
    use kubeloop::etcd::Etcd;
    use std::sync::Arc;

    fn fill(etcd: &mut Etcd) -> (Arc<Object>, Vec<(String, i64)>) {
        etcd.history_limit = 10;
        // The first version of `a`, soon replaced: the log's two changes naming it (its own and
        // the next one's `prev`) are its only other references.
        let first = etcd.put_object("/registry/configmaps/default/a", Object::empty(Kind::ConfigMap)).value;
        for i in 0..(3 * BATCH) {
            let key = format!("/registry/configmaps/default/{}", ["a", "b", "c"][i % 3]);
            etcd.put_object(&key, Object::empty(Kind::ConfigMap));
        }
        let seen = etcd.range("/registry/").map(|(k, kv)| (k.to_string(), kv.mod_revision)).collect();
        (first, seen)
    }

    #[test]
    fn compacted_changes_are_dropped_by_the_thread_and_the_store_reads_the_same() {
        let (_, plain) = fill(&mut Etcd::new());
        let mut handed = Etcd::new();
        handed.set_discard(Box::new(start().expect("a thread")));
        let (first, seen) = fill(&mut handed);
        assert_eq!(seen, plain, "the same keys and revisions either way");
        assert_eq!(handed.changes_since(handed.compacted_revision()).map(|c| c.count()).ok(), Some(10));
        // The thread lets go of the changes that named the first version (a few batches were
        // handed over); until it has, this one waits for it.
        let waited = std::time::Instant::now();
        while Arc::strong_count(&first) > 1 {
            assert!(waited.elapsed().as_secs() < 30, "the janitor never dropped the batch");
            std::thread::yield_now();
        }
    }
}
