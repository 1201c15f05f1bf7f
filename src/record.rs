//! The record: every request, watch notification, decision and event, with its cause.
//!
//! The page animates it, the event stream lists it, lessons check it and "why?" questions are
//! answered from it. Each entry names the entry that caused it, so a chain such as
//! `kubectl apply` → binding → container start can be followed backwards.

use crate::api::Kind;
use crate::etcd::Revision;
use crate::sim::Time;
use std::collections::VecDeque;

/// An entry's position in the record; also the entry's identity.
pub type Seq = u64;

/// Which component did something (an index into the cluster's component table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentId(pub u32);

impl ComponentId {
    /// The person at the keyboard: kubectl and the sandbox's own controls.
    pub const USER: ComponentId = ComponentId(0);
    /// kube-apiserver, which sends every watch notification.
    pub const API_SERVER: ComponentId = ComponentId(1);
}

/// The API server's request pipeline, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Stage {
    Authentication,
    Authorization,
    MutatingAdmission,
    Validation,
    ValidatingAdmission,
    Storage,
}

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::Authentication,
        Stage::Authorization,
        Stage::MutatingAdmission,
        Stage::Validation,
        Stage::ValidatingAdmission,
        Stage::Storage,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Stage::Authentication => "authentication",
            Stage::Authorization => "authorization",
            Stage::MutatingAdmission => "mutating admission",
            Stage::Validation => "validation",
            Stage::ValidatingAdmission => "validating admission",
            Stage::Storage => "storage",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEventType {
    Added,
    Modified,
    Deleted,
}

impl WatchEventType {
    pub fn as_str(self) -> &'static str {
        match self {
            WatchEventType::Added => "ADDED",
            WatchEventType::Modified => "MODIFIED",
            WatchEventType::Deleted => "DELETED",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Happening {
    /// An API request and how the pipeline answered it.
    Request {
        method: &'static str,
        verb: &'static str,
        path: String,
        kind: Kind,
        namespace: String,
        name: String,
        code: u16,
        /// The stage that refused the request, if one did.
        failed_at: Option<Stage>,
        message: String,
    },
    /// The API server sent a watch notification to a component.
    Notify { to: ComponentId, event: WatchEventType, kind: Kind, namespace: String, name: String },
    /// A component decided something, in its own words.
    Decision { text: String },
    /// The API server called a kubelet's own API for a client (a connect subresource: logs,
    /// exec, attach): the hop from the API server to the kubelet `to`, at `path` on it.
    KubeletCall { to: ComponentId, method: &'static str, path: String },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub seq: Seq,
    pub time: Time,
    /// etcd's revision after this entry.
    pub revision: Revision,
    pub actor: ComponentId,
    pub cause: Option<Seq>,
    pub what: Happening,
}

/// The record, bounded: the oldest entries go once `capacity` is reached.
#[derive(Debug)]
pub struct Record {
    entries: VecDeque<Entry>,
    next: Seq,
    pub capacity: usize,
    /// When off (large benchmarks), nothing is kept but sequence numbers still advance.
    pub enabled: bool,
    /// With several API servers behind the load balancer: the instance (by control-plane
    /// node, in order) that serves the requests being recorded now.
    pub serving: Option<u8>,
    /// Which instance served each kept request, when there are several.
    served_by: std::collections::BTreeMap<Seq, u8>,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            entries: VecDeque::new(),
            next: 1,
            capacity: 100_000,
            enabled: true,
            serving: None,
            served_by: Default::default(),
        }
    }
}

impl Record {
    pub fn with_enabled(enabled: bool) -> Self {
        Record { enabled, ..Record::default() }
    }

    pub fn push(
        &mut self,
        time: Time,
        revision: Revision,
        actor: ComponentId,
        cause: Option<Seq>,
        what: Happening,
    ) -> Seq {
        let seq = self.next;
        self.next += 1;
        if self.enabled {
            if self.entries.len() >= self.capacity
                && let Some(gone) = self.entries.pop_front()
            {
                while self.served_by.first_key_value().is_some_and(|(s, _)| *s <= gone.seq) {
                    self.served_by.pop_first();
                }
            }
            if let (Some(instance), Happening::Request { .. }) = (self.serving, &what) {
                self.served_by.insert(seq, instance);
            }
            self.entries.push_back(Entry { seq, time, revision, actor, cause, what });
        }
        seq
    }

    /// The API server instance that served request `seq` (see [`Record::serving`]).
    pub fn served_by(&self, seq: Seq) -> Option<u8> {
        self.served_by.get(&seq).copied()
    }

    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &Entry> + ExactSizeIterator {
        self.entries.iter()
    }

    /// Entries after `seq`, oldest first.
    pub fn since(&self, seq: Seq) -> impl Iterator<Item = &Entry> {
        let start = self.entries.partition_point(|e| e.seq <= seq);
        self.entries.range(start..)
    }

    pub fn get(&self, seq: Seq) -> Option<&Entry> {
        let first = self.entries.front()?.seq;
        self.entries.get(seq.checked_sub(first)? as usize).filter(|e| e.seq == seq)
    }

    /// The chain of causes leading to `seq`, oldest first, as far back as the record reaches.
    pub fn causal_chain(&self, seq: Seq) -> Vec<&Entry> {
        let mut chain = Vec::new();
        let mut next = Some(seq);
        while let Some(s) = next {
            match self.get(s) {
                Some(entry) => {
                    chain.push(entry);
                    next = entry.cause;
                }
                None => break,
            }
        }
        chain.reverse();
        chain
    }

    pub fn get_mut(&mut self, seq: Seq) -> Option<&mut Entry> {
        let first = self.entries.front()?.seq;
        self.entries.get_mut(seq.checked_sub(first)? as usize).filter(|e| e.seq == seq)
    }

    pub fn last_seq(&self) -> Seq {
        self.next - 1
    }

    /// Stops keeping entries until [`Record::resume`], which puts the record back exactly as it
    /// stood: looking at the cluster (a lesson's checks) leaves no trace in it.
    pub fn hush(&mut self) -> Hushed {
        let hushed = Hushed { enabled: self.enabled, next: self.next };
        self.enabled = false;
        hushed
    }

    pub fn resume(&mut self, hushed: Hushed) {
        self.enabled = hushed.enabled;
        self.next = hushed.next;
    }
}

/// Where the record stood when it was hushed.
#[must_use]
#[derive(Debug)]
pub struct Hushed {
    enabled: bool,
    next: Seq,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(text: &str) -> Happening {
        Happening::Decision { text: text.into() }
    }

    #[test]
    fn causal_chains_follow_causes_back_to_the_start() {
        let mut record = Record::default();
        let a = record.push(Time(0), 1, ComponentId::USER, None, decision("apply"));
        let b = record.push(Time(1), 2, ComponentId(1), Some(a), decision("schedule"));
        let _other = record.push(Time(1), 2, ComponentId(2), None, decision("unrelated"));
        let c = record.push(Time(2), 3, ComponentId(2), Some(b), decision("start"));
        let chain: Vec<Seq> = record.causal_chain(c).iter().map(|e| e.seq).collect();
        assert_eq!(chain, [a, b, c]);
    }

    #[test]
    fn a_full_record_drops_its_oldest_entries() {
        let mut record = Record { capacity: 2, ..Record::default() };
        for i in 0..3 {
            record.push(Time(i), 1, ComponentId::USER, None, decision("x"));
        }
        assert_eq!(record.entries().map(|e| e.seq).collect::<Vec<_>>(), [2, 3]);
        assert!(record.get(1).is_none());
        assert_eq!(record.since(2).count(), 1);
    }

    #[test]
    fn a_hushed_record_keeps_nothing_and_resumes_where_it_stood() {
        let mut record = Record::default();
        record.push(Time(0), 1, ComponentId::USER, None, decision("before"));
        let hushed = record.hush();
        record.push(Time(1), 1, ComponentId::USER, None, decision("looking"));
        record.resume(hushed);
        let seq = record.push(Time(2), 1, ComponentId::USER, None, decision("after"));
        assert_eq!(seq, 2);
        assert_eq!(record.entries().count(), 2);
    }
}
