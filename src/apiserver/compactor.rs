//! kube-apiserver's etcd compactor: every `--etcd-compaction-interval` (5 minutes) it writes
//! `compact_rev_key` — the revision it noted the round before — and compacts etcd's history up
//! to that revision, so etcd keeps between one and two intervals of history. A watch or a read
//! from before the compacted revision then gets "too old" (`410 Gone`, `mvcc: required
//! revision has been compacted`), and the page's time travel reaches back as far as etcd does.

use super::{ApiServer, Env};
use crate::etcd::Revision;
use crate::record::{ComponentId, Happening};
use crate::sim::Duration;

/// `--etcd-compaction-interval`'s default.
pub const COMPACTION_INTERVAL: Duration = Duration::minutes(5);
/// The key whose version counts the compactor's rounds and whose value is the revision it
/// compacted to (outside `/registry/`, so no API object lives there).
pub const COMPACT_REV_KEY: &str = "compact_rev_key";

/// How the compactor's decisions begin in the record.
pub const PREFIX: &str = "etcd compactor: ";

/// What the compactor remembers between rounds.
#[derive(Debug, Default)]
pub struct Compactor {
    /// The store's revision when the last round wrote `compact_rev_key`: the next round
    /// compacts to it. None before the first round (nothing is compacted on bootstrap).
    noted: Option<Revision>,
}

impl ApiServer {
    /// One round of the compactor: notes the current revision in `compact_rev_key` and
    /// compacts to the one noted the round before. Nothing happens while etcd is stopped (the
    /// write fails; the next round tries again). Returns the revision compacted to.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub fn compact_history(&mut self, env: &mut Env) -> Option<Revision> {
        if self.etcd_down {
            return None;
        }
        let previous = self.compactor.noted;
        let value = previous.unwrap_or(0).to_string();
        // A key outside the registry concerns no watch: the write changes nothing but etcd.
        let _ = self.etcd.put_raw(COMPACT_REV_KEY, value);
        let revision = self.etcd.revision();
        self.compactor.noted = Some(revision);
        if let Some(to) = previous {
            self.etcd.compact(to);
        }
        let text = if !env.record.enabled {
            String::new()
        } else if let Some(to) = previous {
            format!("{PREFIX}{COMPACT_REV_KEY} = {to}; compacted to revision {to}")
        } else {
            format!("{PREFIX}first round, {COMPACT_REV_KEY} written; nothing compacted on bootstrap")
        };
        env.record.push(env.now, revision, ComponentId::API_SERVER, None, Happening::Decision { text });
        previous
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::{Cluster, ClusterConfig};
    use crate::sim::Duration;

    #[test]
    fn history_older_than_one_interval_is_compacted_from_the_second_round_on() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        let fresh = cluster.inspect().etcd().compacted_revision();
        cluster.advance(Duration::minutes(4));
        assert_eq!(cluster.inspect().etcd().compacted_revision(), fresh, "nothing before the first round");
        cluster.advance(Duration::minutes(2));
        let first = cluster.inspect().etcd().raw(super::COMPACT_REV_KEY).map(|r| r.value.clone());
        assert_eq!(first.as_deref(), Some("0"), "the first round only writes the key");
        assert_eq!(cluster.inspect().etcd().compacted_revision(), fresh, "nothing compacted on bootstrap");
        let noted = cluster.inspect().etcd().raw(super::COMPACT_REV_KEY).map(|r| r.mod_revision).unwrap();
        cluster.advance(Duration::minutes(5));
        assert_eq!(cluster.inspect().etcd().compacted_revision(), noted, "compacted to the revision noted before");
        assert!(cluster.inspect().etcd().snapshot_at(noted - 1).is_err(), "older history is gone");
    }

    #[test]
    fn a_round_while_etcd_is_stopped_does_nothing() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        let fresh = cluster.inspect().etcd().compacted_revision();
        cluster.with_api(|api, _| api.set_etcd_running(false));
        cluster.advance(Duration::minutes(11));
        assert!(cluster.inspect().etcd().raw(super::COMPACT_REV_KEY).is_none());
        assert_eq!(cluster.inspect().etcd().compacted_revision(), fresh);
    }
}
