//! One etcd member's Raft state machine: follower, candidate or leader; its term, its vote,
//! its log and how far it knows the log is committed. It reacts to a message or a timer by
//! changing its state and sending messages; the group delivers them.

use super::Seq;
use super::log::Log;
use super::message::{Body, Message};
use crate::sim::{Duration, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
}

/// How many entries one AppendEntries carries at most.
const MAX_BATCH: usize = 64;

/// A message to send, and the instant it leaves (after the disk, for an answer that needs the
/// log written first).
pub struct Outgoing {
    pub at: Time,
    pub message: Message,
}

#[derive(Clone, Debug)]
pub struct Member {
    /// Its position in the group (messages address members by it).
    pub me: usize,
    pub name: String,
    /// etcd's member ID (hex in etcdctl's tables).
    pub id: u64,
    pub ip: String,
    pub role: Role,
    pub term: u64,
    pub voted_for: Option<usize>,
    /// The leader it last heard from in its term.
    pub leader: Option<usize>,
    pub log: Log,
    pub commit: u64,
    /// The votes a candidate has in its term.
    votes: std::collections::BTreeSet<usize>,
    /// A leader's view of each member: the next entry to send, how far its log matches, and
    /// whether it answered since the last quorum check.
    next: Vec<u64>,
    pub matched: Vec<u64>,
    active: Vec<bool>,
    /// When a follower or candidate starts an election, unless it hears from a leader first.
    pub election_due: Time,
    pub heartbeat_due: Time,
    /// When a leader next checks it still hears from a quorum (etcd's CheckQuorum).
    check_due: Time,
}

/// What a member's step changed that the group reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    pub became_leader: bool,
    pub stepped_down: bool,
    /// The leader's commit index moved to this.
    pub committed: Option<u64>,
}

impl Member {
    pub fn new(me: usize, size: usize, name: &str, id: u64, ip: &str) -> Member {
        Member {
            me,
            name: name.to_string(),
            id,
            ip: ip.to_string(),
            role: Role::Follower,
            term: 0,
            voted_for: None,
            leader: None,
            log: Log::default(),
            commit: 0,
            votes: Default::default(),
            next: vec![1; size],
            matched: vec![0; size],
            active: vec![false; size],
            election_due: Time::ZERO,
            heartbeat_due: Time::ZERO,
            check_due: Time::ZERO,
        }
    }

    fn size(&self) -> usize {
        self.next.len()
    }

    fn quorum(&self) -> usize {
        self.size() / 2 + 1
    }

    fn send(&self, out: &mut Vec<Outgoing>, at: Time, to: usize, body: Body, cause: Option<Seq>) {
        out.push(Outgoing { at, message: Message { from: self.me, to, term: self.term, body, sent: at, cause } });
    }

    /// Becomes a follower of `term` (a new term forgets the vote).
    pub fn become_follower(&mut self, term: u64, leader: Option<usize>, now: Time, timeout: Duration) -> Changed {
        let was_leader = self.role == Role::Leader;
        if term > self.term {
            self.term = term;
            self.voted_for = None;
        }
        self.role = Role::Follower;
        self.leader = leader;
        self.election_due = now + timeout;
        Changed { stepped_down: was_leader, ..Default::default() }
    }

    /// The election timer ran out: a new term, a vote for itself, and a vote request to every
    /// other member.
    pub fn campaign(&mut self, now: Time, timeout: Duration, fsync: Duration, out: &mut Vec<Outgoing>) -> Changed {
        self.term += 1;
        self.role = Role::Candidate;
        self.voted_for = Some(self.me);
        self.leader = None;
        self.votes = [self.me].into();
        self.election_due = now + timeout;
        if self.votes.len() >= self.quorum() {
            return self.become_leader(now, timeout, fsync, out);
        }
        let (last_index, last_term) = (self.log.last_index(), self.log.last_term());
        for to in (0..self.size()).filter(|&to| to != self.me) {
            self.send(out, now, to, Body::Vote { last_index, last_term }, None);
        }
        Changed::default()
    }

    /// Won the election: appends an empty entry of its term (which commits everything before
    /// it once replicated) and tells every member at once.
    fn become_leader(&mut self, now: Time, election: Duration, fsync: Duration, out: &mut Vec<Outgoing>) -> Changed {
        self.role = Role::Leader;
        self.leader = Some(self.me);
        let last = self.log.last_index();
        self.next = vec![last + 1; self.size()];
        self.matched = vec![0; self.size()];
        self.active = vec![false; self.size()];
        self.check_due = now + election;
        self.append(now, None, fsync, out);
        Changed { became_leader: true, ..Default::default() }
    }

    /// A leader's proposal: a new entry in its log, sent to every follower.
    pub fn append(&mut self, now: Time, cause: Option<Seq>, fsync: Duration, out: &mut Vec<Outgoing>) -> u64 {
        let index = self.log.push(self.term, cause);
        self.send(out, now + fsync, self.me, Body::Persisted { index }, cause);
        self.broadcast(now, out);
        index
    }

    /// AppendEntries to every follower: what each is missing, or a heartbeat.
    pub fn broadcast(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        for to in (0..self.size()).filter(|&to| to != self.me) {
            self.send_append(now, to, out);
        }
        self.heartbeat_due = now + super::HEARTBEAT;
    }

    fn send_append(&self, now: Time, to: usize, out: &mut Vec<Outgoing>) {
        let prev_index = self.next[to].saturating_sub(1);
        let prev_term = self.log.term_at(prev_index).unwrap_or(0);
        let entries = self.log.from(self.next[to], MAX_BATCH);
        let cause = entries.last().and_then(|e| e.cause);
        self.send(out, now, to, Body::App { prev_index, prev_term, entries, commit: self.commit }, cause);
    }

    /// Handles one message delivered at `now`. `timeout` is a fresh randomized election
    /// timeout, in case the member resets its timer.
    pub fn step(
        &mut self,
        now: Time,
        m: Message,
        timeout: Duration,
        fsync: Duration,
        out: &mut Vec<Outgoing>,
    ) -> Changed {
        let mut changed = Changed::default();
        if m.term > self.term {
            let leader = matches!(m.body, Body::App { .. }).then_some(m.from);
            changed = self.become_follower(m.term, leader, now, timeout);
        } else if m.term < self.term && m.from != self.me {
            // A stale sender learns the newer term from the refusal.
            match m.body {
                Body::App { .. } => {
                    let index = self.log.last_index();
                    self.send(out, now, m.from, Body::AppResp { success: false, index }, m.cause)
                }
                Body::Vote { .. } => self.send(out, now, m.from, Body::VoteResp { granted: false }, None),
                _ => {}
            }
            return changed;
        }
        match m.body {
            Body::Vote { last_index, last_term } => {
                let free = self.voted_for.is_none_or(|v| v == m.from) && self.leader.is_none();
                let granted = free && self.log.is_behind(last_term, last_index);
                if granted {
                    self.voted_for = Some(m.from);
                    self.election_due = now + timeout;
                }
                self.send(out, now, m.from, Body::VoteResp { granted }, None);
            }
            Body::VoteResp { granted } => {
                if self.role == Role::Candidate && granted {
                    self.votes.insert(m.from);
                    if self.votes.len() >= self.quorum() {
                        let won = self.become_leader(now, super::ELECTION, fsync, out);
                        changed.became_leader = won.became_leader;
                    }
                }
            }
            Body::App { prev_index, prev_term, entries, commit } => {
                if self.role != Role::Follower {
                    self.role = Role::Follower;
                }
                self.leader = Some(m.from);
                self.election_due = now + timeout;
                if self.log.accept(prev_index, prev_term, &entries) {
                    let matched = prev_index + entries.len() as u64;
                    self.commit = self.commit.max(commit.min(matched));
                    // New entries are written to disk before the leader hears they are held.
                    let at = if entries.is_empty() { now } else { now + fsync };
                    self.send(out, at, m.from, Body::AppResp { success: true, index: matched }, m.cause);
                } else {
                    let index = self.log.last_index();
                    self.send(out, now, m.from, Body::AppResp { success: false, index }, m.cause);
                }
            }
            Body::AppResp { success, index } if self.role == Role::Leader => {
                self.active[m.from] = true;
                if success {
                    if index > self.matched[m.from] {
                        self.matched[m.from] = index;
                        self.next[m.from] = self.next[m.from].max(index + 1);
                    }
                    changed.committed = self.advance_commit();
                } else {
                    // Back up to where the follower's log ends and send from there.
                    self.next[m.from] = (index + 1).min(self.next[m.from].saturating_sub(1)).max(1);
                    self.send_append(now, m.from, out);
                }
            }
            Body::AppResp { .. } => {}
            Body::Persisted { index } => {
                if self.role == Role::Leader && index > self.matched[self.me] {
                    self.matched[self.me] = index;
                    changed.committed = self.advance_commit();
                }
            }
        }
        changed
    }

    /// Commits the highest entry of its own term a quorum holds.
    fn advance_commit(&mut self) -> Option<u64> {
        let mut held = self.matched.clone();
        held.sort_unstable_by(|a, b| b.cmp(a));
        let q = held[self.quorum() - 1];
        if q > self.commit && self.log.term_at(q) == Some(self.term) {
            self.commit = q;
            return Some(q);
        }
        None
    }

    /// The next instant one of its timers fires.
    pub fn next_timer(&self) -> Time {
        match self.role {
            Role::Leader => self.heartbeat_due.min(self.check_due),
            _ => self.election_due,
        }
    }

    /// Fires whichever timer is due at `now`.
    pub fn tick(&mut self, now: Time, timeout: Duration, fsync: Duration, out: &mut Vec<Outgoing>) -> Changed {
        match self.role {
            Role::Leader if self.check_due <= now => {
                let heard = self.active.iter().enumerate().filter(|(i, a)| **a || *i == self.me).count();
                self.active = vec![false; self.size()];
                self.check_due = now + super::ELECTION;
                if heard < self.quorum() {
                    return self.become_follower(self.term, None, now, timeout);
                }
                Changed::default()
            }
            Role::Leader => {
                self.broadcast(now, out);
                Changed::default()
            }
            _ => self.campaign(now, timeout, fsync, out),
        }
    }
}
