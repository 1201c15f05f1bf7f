//! The messages Raft members send each other: values the network delivers on the virtual
//! clock.

use super::Seq;
use super::log::Entry;
use crate::sim::Time;

/// What a message asks or answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// RequestVote: a candidate asks for a vote, showing where its log ends.
    Vote {
        last_index: u64,
        last_term: u64,
    },
    VoteResp {
        granted: bool,
    },
    /// AppendEntries: the entries after `prev_index` (none for a heartbeat) and the leader's
    /// commit index.
    App {
        prev_index: u64,
        prev_term: u64,
        entries: Vec<Entry>,
        commit: u64,
    },
    /// The answer: on success, how far the follower's log now matches the leader's; on a
    /// refusal, where it ends (the leader backs up to send from there).
    AppResp {
        success: bool,
        index: u64,
    },
    /// A member's own disk finished writing its log up to `index` (a self-addressed note;
    /// a slow disk delays it).
    Persisted {
        index: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub from: usize,
    pub to: usize,
    pub term: u64,
    pub body: Body,
    /// When it left its sender (after the sender's disk, for an answer that waited for it).
    pub sent: Time,
    /// The API server request whose write this message replicates, if any.
    pub cause: Option<Seq>,
}

impl Message {
    /// etcd's name for the message type (raftpb's MsgVote, MsgApp…).
    pub fn kind(&self) -> &'static str {
        match &self.body {
            Body::Vote { .. } => "MsgVote",
            Body::VoteResp { .. } => "MsgVoteResp",
            Body::App { entries, .. } if entries.is_empty() => "MsgHeartbeat",
            Body::App { .. } => "MsgApp",
            Body::AppResp { .. } => "MsgAppResp",
            Body::Persisted { .. } => "persisted",
        }
    }

    /// Whether the message carries or acknowledges entries (what the page draws per write).
    pub fn replicates(&self) -> bool {
        match &self.body {
            Body::App { entries, .. } => !entries.is_empty(),
            Body::AppResp { .. } => self.cause.is_some(),
            Body::Vote { .. } | Body::VoteResp { .. } => true,
            Body::Persisted { .. } => false,
        }
    }
}
