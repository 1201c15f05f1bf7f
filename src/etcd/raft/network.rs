//! The network between members and each member's machine: stopped, partitioned from the
//! others, or with a slow disk (its writes to the log take long to reach the platter).

use crate::sim::Duration;

/// How long a message takes between two members (one way).
pub const LATENCY: Duration = Duration::millis(1);
/// How long a healthy disk takes to write (fdatasync) the log.
pub const FSYNC: Duration = Duration::millis(1);
/// How long a slow disk takes: over etcd's 1 s "slow fdatasync" warning, under its 7 s
/// request timeout.
pub const SLOW_FSYNC: Duration = Duration::millis(1500);

/// One member's machine and its link to the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Link {
    /// The member's process is stopped (or its node is).
    pub stopped: bool,
    /// It is cut off from every other member.
    pub partitioned: bool,
    pub slow_disk: bool,
}

impl Link {
    /// Whether the member runs at all (a partitioned member runs, alone).
    pub fn running(&self) -> bool {
        !self.stopped
    }

    /// Whether it can talk to the other members.
    pub fn reachable(&self) -> bool {
        !self.stopped && !self.partitioned
    }

    pub fn fsync(&self) -> Duration {
        if self.slow_disk { SLOW_FSYNC } else { FSYNC }
    }
}

/// Whether a message from `a` reaches `b` (a member always reaches itself while it runs).
pub fn delivers(links: &[Link], from: usize, to: usize) -> bool {
    match (links.get(from), links.get(to)) {
        (Some(a), Some(b)) if from == to => a.running() && b.running(),
        (Some(a), Some(b)) => a.reachable() && b.reachable(),
        _ => false,
    }
}
