//! The API server in front of an etcd of several members: each request first needs the Raft
//! group to have a quorum (a linearizable read asks the leader to confirm it still leads; a
//! write waits for its entry to commit), and the group's messages for each write are recorded
//! with the request as their cause. With one member (no group) nothing here runs.

use super::{ApiServer, Env, Request, Status, Verb, reviews};
use crate::api::Kind;
use crate::etcd::Revision;
use crate::record::{ComponentId, Happening, Seq};

impl ApiServer {
    /// Whether the group can serve `req` now: `Err` with etcd's timeout, which the API
    /// server passes on as it is (kubectl: `Error from server: etcdserver: request timed out`).
    pub(super) fn quorum(&mut self, req: &Request, env: &mut Env) -> Result<(), Status> {
        let Some(group) = self.etcd.raft_mut() else { return Ok(()) };
        let needs_store = !matches!(req.verb, Verb::Watch)
            && req.kind != Kind::ComponentStatus
            && !reviews::is_review(req.kind)
            && !Self::is_aggregated(req.kind);
        if !needs_store {
            group.advance_to(env.now);
            return Ok(());
        }
        group.read(env.now).map_err(|message| Status::new(500, "", message.to_string()))
    }

    /// Replicates the writes `req` (record entry `seq`) made since the store was at `before`,
    /// and records what the group did meanwhile.
    pub(super) fn replicate(&mut self, before: Revision, env: &mut Env, seq: Seq) {
        let after = self.etcd.revision();
        let Some(group) = self.etcd.raft_mut() else { return };
        if after > before {
            // The pre-check found a quorum, so the entries commit (a few milliseconds on).
            let _ = group.propose(env.now, Some(seq), (after - before) as u64);
        }
        let notes = group.take_notes();
        if env.record.enabled {
            for (cause, text) in notes {
                env.record.push(env.now, after, ComponentId::API_SERVER, cause, Happening::Decision { text });
            }
        }
    }
}
