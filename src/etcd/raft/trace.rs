//! What the group did, for the page's picture of Raft (members, terms, and each write's
//! messages): every message that votes or replicates, every leader change and commit, with
//! the virtual instant and the API server request that caused it.

use super::Seq;
use crate::sim::Time;

/// One thing that happened in the group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traced {
    /// When it was delivered (or lost), or happened.
    pub at: Time,
    /// When a message left its sender (`at` for a leader change or a commit).
    pub sent: Time,
    /// Sender and receiver (the same member for a leader change or a commit).
    pub from: usize,
    pub to: usize,
    /// etcd's message type (`MsgApp`, `MsgAppResp`, `MsgVote`, `MsgVoteResp`), or `leader`
    /// and `commit`.
    pub kind: &'static str,
    pub term: u64,
    /// The last log index the message carries or acknowledges (the commit index for `commit`).
    pub index: u64,
    /// The request whose write this replicates, when one did.
    pub cause: Option<Seq>,
    /// Whether the network delivered it (a message to or from a stopped or partitioned
    /// member is lost).
    pub delivered: bool,
}

/// How many traced happenings the group keeps.
pub const TRACE_LIMIT: usize = 4096;
