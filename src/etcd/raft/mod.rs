//! etcd as a Raft group: the members (one per control-plane node), the network between them,
//! and the virtual clock that delivers their messages and fires their timers.
//!
//! The group keeps its own clock, which never runs behind the cluster's: the API server
//! advances it to the present before each request, and a write runs it on until the write's
//! entry commits at a quorum (a few milliseconds; longer while an election is under way).
//! Election timeouts are randomized from the group's own stream of the simulation's seeded
//! RNG, so the same seed and the same faults elect the same leaders at the same instants.

pub mod log;
pub mod member;
pub mod message;
pub mod network;
pub mod trace;

#[cfg(test)]
mod tests;

/// The record entry of the API server request a write came from: a number the store keeps
/// and hands back, without knowing the record (which sits above it).
pub type Seq = u64;
use crate::sim::{Duration, Rng, Time};
pub use member::Role;
use member::{Changed, Member, Outgoing};
use message::{Body, Message};
use network::{LATENCY, Link};
use std::collections::{BTreeMap, VecDeque};
use trace::{TRACE_LIMIT, Traced};

/// etcd's `--heartbeat-interval` default.
pub const HEARTBEAT: Duration = Duration::millis(100);
/// etcd's `--election-timeout` default; each wait is drawn from [1×, 2×) of it.
pub const ELECTION: Duration = Duration::millis(1000);
/// How long etcd lets a request wait for its proposal to commit before answering
/// `etcdserver: request timed out` (5 s plus two election timeouts).
pub const REQUEST_TIMEOUT: Duration = Duration::millis(7000);

/// The answer a request gets when the group cannot commit it.
pub const TIMED_OUT: &str = "etcdserver: request timed out";

/// The member ID the single-member etcd of a kubeadm control plane reports.
pub const FIRST_MEMBER_ID: u64 = 0x8e9e_05c5_2164_694d;

/// A member's ID: the first member keeps the single-node etcd's, the others a hash of their
/// name and peer URL (as etcd hashes its peer URLs and cluster token).
pub fn member_id(index: usize, name: &str, ip: &str) -> u64 {
    if index == 0 {
        return FIRST_MEMBER_ID;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain(ip.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The etcd members of a cluster with `control_planes` control-plane nodes: one on each,
/// named after it (`control-plane`, `control-plane2`, …), at its node's address (the first
/// keeps kind's 172.18.0.2; the others follow the workers').
pub fn members_of(control_planes: u32, workers: u32) -> Vec<(String, String)> {
    (1..=control_planes.clamp(1, 7))
        .map(|n| {
            let name = if n == 1 { "control-plane".to_string() } else { format!("control-plane{n}") };
            let host = if n == 1 { 2 } else { 1 + workers + n };
            (name, format!("172.18.0.{host}"))
        })
        .collect()
}

#[derive(Debug)]
pub struct Group {
    pub members: Vec<Member>,
    pub links: Vec<Link>,
    now: Time,
    /// Messages in flight, by delivery instant and the order they were sent.
    queue: BTreeMap<(Time, u64), Message>,
    sent: u64,
    rng: Rng,
    trace: VecDeque<Traced>,
    /// What happened since the API server last took it, for its record: (cause, text).
    notes: Vec<(Option<Seq>, String)>,
}

impl Group {
    /// A group of the named members (name, IP), all followers at term 0, started at `now`.
    pub fn new(members: &[(String, String)], seed: u64, now: Time) -> Group {
        let size = members.len();
        let mut group = Group {
            members: members
                .iter()
                .enumerate()
                .map(|(i, (name, ip))| Member::new(i, size, name, member_id(i, name, ip), ip))
                .collect(),
            links: vec![Link::default(); size],
            now,
            queue: BTreeMap::new(),
            sent: 0,
            rng: Rng::stream(seed, "etcd-raft"),
            trace: VecDeque::new(),
            notes: Vec::new(),
        };
        for i in 0..size {
            group.members[i].election_due = now + group.timeout();
        }
        group
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn quorum(&self) -> usize {
        self.members.len() / 2 + 1
    }

    /// A fresh randomized election timeout, in [1×, 2×) of the configured one.
    fn timeout(&mut self) -> Duration {
        Duration::millis(self.rng.between(ELECTION.as_millis(), 2 * ELECTION.as_millis()))
    }

    /// The member named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name == name)
    }

    /// The leader the reachable members follow: a reachable leader of the highest term
    /// among them.
    pub fn leader(&self) -> Option<usize> {
        let top = (0..self.members.len()).filter(|&i| self.links[i].reachable()).map(|i| self.members[i].term).max()?;
        (0..self.members.len())
            .find(|&i| self.links[i].reachable() && self.members[i].role == Role::Leader && self.members[i].term == top)
    }

    /// Whether enough members run and reach each other to elect a leader and commit.
    pub fn has_quorum(&self) -> bool {
        self.links.iter().filter(|l| l.reachable()).count() >= self.quorum()
    }

    /// Everything traced, oldest first.
    pub fn trace(&self) -> impl Iterator<Item = &Traced> {
        self.trace.iter()
    }

    /// The notes for the record gathered since the last call.
    pub fn take_notes(&mut self) -> Vec<(Option<Seq>, String)> {
        std::mem::take(&mut self.notes)
    }

    fn next_event(&self) -> Option<Time> {
        let message = self.queue.keys().next().map(|(at, _)| *at);
        let timer =
            (0..self.members.len()).filter(|&i| self.links[i].running()).map(|i| self.members[i].next_timer()).min();
        match (message, timer) {
            (Some(m), Some(t)) => Some(m.min(t)),
            (m, t) => m.or(t),
        }
    }

    /// Runs the group's clock on to `until`, delivering messages and firing timers on the way.
    pub fn advance_to(&mut self, until: Time) {
        while let Some(at) = self.next_event().filter(|at| *at <= until) {
            self.step_one(at);
        }
        self.now = self.now.max(until);
    }

    /// Handles the next event, due at `at` (a message before a timer due at the same instant).
    fn step_one(&mut self, at: Time) {
        self.now = self.now.max(at);
        let now = self.now;
        let mut out = Vec::new();
        let first = self.queue.first_key_value().map(|((t, _), _)| *t);
        if first.is_some_and(|t| t <= at) {
            let Some((_, message)) = self.queue.pop_first() else { return };
            let delivered = network::delivers(&self.links, message.from, message.to);
            if message.replicates() {
                self.note_message(&message, delivered);
            }
            if !delivered {
                return;
            }
            let to = message.to;
            let (timeout, fsync) = (self.timeout(), self.links[to].fsync());
            let changed = self.members[to].step(now, message, timeout, fsync, &mut out);
            self.changed(to, changed);
        } else {
            let Some(i) = (0..self.members.len())
                .filter(|&i| self.links[i].running())
                .min_by_key(|&i| (self.members[i].next_timer(), i))
            else {
                return;
            };
            let (timeout, fsync) = (self.timeout(), self.links[i].fsync());
            let changed = self.members[i].tick(now, timeout, fsync, &mut out);
            self.changed(i, changed);
        }
        self.enqueue(out);
    }

    fn enqueue(&mut self, out: Vec<Outgoing>) {
        for Outgoing { at, message } in out {
            let at = if message.from == message.to { at } else { at + LATENCY };
            self.sent += 1;
            self.queue.insert((at, self.sent), message);
        }
    }

    fn changed(&mut self, i: usize, changed: Changed) {
        let (term, name) = (self.members[i].term, self.members[i].name.clone());
        if changed.became_leader {
            self.push_trace(Traced {
                at: self.now,
                sent: self.now,
                from: i,
                to: i,
                kind: "leader",
                term,
                index: self.members[i].log.last_index(),
                cause: None,
                delivered: true,
            });
            self.notes.push((None, format!("etcd: {name} became leader at term {term}")));
        }
        if changed.stepped_down {
            self.notes.push((None, format!("etcd: {name} stepped down at term {term}")));
        }
        if let Some(index) = changed.committed {
            let cause = self.members[i].log.get(index).and_then(|e| e.cause);
            self.push_trace(Traced {
                at: self.now,
                sent: self.now,
                from: i,
                to: i,
                kind: "commit",
                term,
                index,
                cause,
                delivered: true,
            });
            if cause.is_some() {
                self.notes
                    .push((cause, format!("etcd: {name} committed index {index} at term {term} (a quorum holds it)")));
            }
        }
    }

    fn note_message(&mut self, m: &Message, delivered: bool) {
        let index = match &m.body {
            Body::App { entries, prev_index, .. } => entries.last().map_or(*prev_index, |e| e.index),
            Body::AppResp { index, .. } => *index,
            Body::Vote { last_index, .. } => *last_index,
            _ => 0,
        };
        self.push_trace(Traced {
            at: self.now,
            sent: m.sent,
            from: m.from,
            to: m.to,
            kind: m.kind(),
            term: m.term,
            index,
            cause: m.cause,
            delivered,
        });
        if m.cause.is_some() {
            let (from, to) = (&self.members[m.from].name, &self.members[m.to].name);
            let lost = if delivered { "" } else { " (lost)" };
            self.notes.push((m.cause, format!("etcd: {} {from} → {to} term {} index {index}{lost}", m.kind(), m.term)));
        }
    }

    fn push_trace(&mut self, t: Traced) {
        if self.trace.len() == TRACE_LIMIT {
            self.trace.pop_front();
        }
        self.trace.push_back(t);
    }

    /// Replicates `count` writes of the request `cause`, made at `now`: the leader appends them
    /// and the group runs on until they commit at a quorum. `Err` with etcd's message when
    /// they cannot within its request timeout (no quorum).
    pub fn propose(&mut self, now: Time, cause: Option<Seq>, count: u64) -> Result<u64, &'static str> {
        self.advance_to(now);
        if !self.has_quorum() {
            return Err(TIMED_OUT);
        }
        let deadline = self.now + REQUEST_TIMEOUT;
        let leader = loop {
            if let Some(l) = self.leader() {
                break l;
            }
            match self.next_event().filter(|at| *at <= deadline) {
                Some(at) => self.step_one(at),
                None => return Err(TIMED_OUT),
            }
        };
        let mut out = Vec::new();
        let mut index = 0;
        let fsync = self.links[leader].fsync();
        for _ in 0..count.max(1) {
            index = self.members[leader].append(self.now, cause, fsync, &mut out);
        }
        self.enqueue(out);
        while self.members[leader].commit < index {
            match self.next_event().filter(|at| *at <= deadline) {
                Some(at) => self.step_one(at),
                None => return Err(TIMED_OUT),
            }
        }
        Ok(index)
    }

    /// A linearizable read: it needs a leader that still hears from a quorum.
    pub fn read(&mut self, now: Time) -> Result<(), &'static str> {
        self.advance_to(now);
        if self.has_quorum() { Ok(()) } else { Err(TIMED_OUT) }
    }

    /// Stops or starts a member's process. A started member comes back as a follower with
    /// what it had written (term, vote, log) and waits out an election timeout.
    pub fn set_stopped(&mut self, i: usize, stopped: bool, now: Time) {
        self.advance_to(now);
        if self.links[i].stopped == stopped {
            return;
        }
        self.links[i].stopped = stopped;
        if !stopped {
            let timeout = self.timeout();
            let m = &mut self.members[i];
            let changed = m.become_follower(m.term, None, self.now, timeout);
            self.changed(i, changed);
        }
    }

    pub fn set_partitioned(&mut self, i: usize, partitioned: bool, now: Time) {
        self.advance_to(now);
        self.links[i].partitioned = partitioned;
    }

    pub fn set_slow_disk(&mut self, i: usize, slow: bool, now: Time) {
        self.advance_to(now);
        self.links[i].slow_disk = slow;
    }
}
