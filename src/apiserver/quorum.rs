//! The API server in front of an etcd of several members: each request first needs the Raft
//! group to have a quorum (a linearizable read asks the leader to confirm it still leads; a
//! write waits for its entry to commit), and the group's messages for each write are recorded
//! with the request as their cause. With one member (no group) nothing here runs.

use super::{ApiServer, Env, Request, Status, Verb, reviews};
use crate::api::Kind;
use crate::etcd::Revision;
use crate::etcd::raft::REQUEST_TIMEOUT;
use crate::record::{ComponentId, Happening, Seq};

impl ApiServer {
    /// Whether the group can serve `req` now: `Err` with etcd's timeout, which the API
    /// server passes on as it is (kubectl: `Error from server: etcdserver: request timed out`)
    /// once etcd's request timeout has passed: a write waits that long for its entry to
    /// commit, a linearizable read for the leader to confirm its lead.
    pub(super) fn quorum(&mut self, req: &Request, env: &mut Env, seq: Seq) -> Result<(), Status> {
        let Some(group) = self.etcd.raft_mut() else { return Ok(()) };
        let needs_store = !matches!(req.verb, Verb::Watch)
            && req.kind != Kind::ComponentStatus
            && !reviews::is_review(req.kind)
            && !Self::is_aggregated(req.kind);
        if !needs_store {
            group.advance_to(env.now);
            return Ok(());
        }
        let Err(message) = group.read(env.now) else { return Ok(()) };
        self.request_wait = self.request_wait + REQUEST_TIMEOUT;
        if env.record.enabled {
            let reachable = group.links.iter().filter(|l| l.reachable()).count();
            let text = format!(
                "etcd: no quorum ({reachable} of {} members reachable, {} needed): the request times out after {}",
                group.members.len(),
                group.quorum(),
                REQUEST_TIMEOUT.short()
            );
            env.record.push(
                env.now,
                self.etcd.revision(),
                ComponentId::API_SERVER,
                Some(seq),
                Happening::Decision { text },
            );
        }
        Err(Status::new(500, "", message.to_string()))
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

#[cfg(test)]
mod tests {
    use crate::cluster::ClusterConfig;
    use crate::record::Happening;
    use crate::shell::{Command, Session};

    fn session(control_planes: u32) -> Session {
        Session::with_config(ClusterConfig { control_planes, ..ClusterConfig::default() })
    }

    #[test]
    fn a_write_is_recorded_replicating_to_the_followers_with_its_request_as_cause() {
        let mut s = session(3);
        s.execute(&Command::new("kubectl create configmap one --from-literal=a=1"));
        let record = &s.cluster.record;
        let create = record
            .entries()
            .find(|e| matches!(&e.what, Happening::Request { verb: "create", name, .. } if name == "one"))
            .expect("the create");
        let replicated: Vec<String> = record
            .entries()
            .filter(|e| e.cause == Some(create.seq))
            .filter_map(|e| match &e.what {
                Happening::Decision { text } if text.starts_with("etcd: ") => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(replicated.iter().filter(|t| t.starts_with("etcd: MsgApp ")).count(), 2, "{replicated:?}");
        assert!(replicated.iter().any(|t| t.starts_with("etcd: MsgAppResp ")), "{replicated:?}");
        assert!(replicated.iter().any(|t| t.contains("committed index")), "{replicated:?}");
    }

    #[test]
    fn a_single_member_records_no_raft_messages() {
        let mut s = session(1);
        s.execute(&Command::new("kubectl create configmap one --from-literal=a=1"));
        assert!(s.cluster.inspect().etcd().raft().is_none());
        assert!(
            !s.cluster
                .record
                .entries()
                .any(|e| matches!(&e.what, Happening::Decision { text } if text.starts_with("etcd: ")))
        );
    }

    #[test]
    fn without_a_quorum_kubectl_gets_etcds_timeout_and_with_one_back_it_writes_again() {
        let mut s = session(3);
        for line in ["sim etcd stop control-plane2", "sim etcd stop control-plane3"] {
            s.execute(&Command::new(line));
        }
        let out = s.execute(&Command::new("kubectl get pods"));
        assert_eq!(out.stderr, "Error from server: etcdserver: request timed out\n");
        s.execute(&Command::new("sim etcd start control-plane3"));
        s.execute(&Command::new("sleep 5s"));
        let out = s.execute(&Command::new("kubectl create configmap back --from-literal=a=1"));
        assert_eq!(out.stdout, "configmap/back created\n", "{out:?}");
    }

    #[test]
    fn without_a_quorum_a_write_and_a_read_each_wait_etcds_request_timeout() {
        let mut s = session(3);
        for line in ["sim etcd stop control-plane2", "sim etcd stop control-plane3"] {
            s.execute(&Command::new(line));
        }
        for line in ["kubectl create configmap late --from-literal=a=1", "kubectl get configmaps"] {
            let before = s.cluster.now();
            let out = s.execute(&Command::new(line));
            assert!(out.stderr.ends_with(": etcdserver: request timed out\n"), "{line}: {out:?}");
            assert_eq!(s.cluster.now().since(before), crate::etcd::raft::REQUEST_TIMEOUT, "{line}");
        }
        // kubectl's own log says how long the round trip took.
        let out = s.execute(&Command::new("kubectl get configmaps -v=6"));
        let log = format!("{}{}", out.warnings, out.stderr);
        assert!(log.contains("status=\"500 Internal Server Error\" milliseconds=70"), "{log}");
    }

    #[test]
    fn stopping_a_control_plane_node_stops_its_etcd_member() {
        let mut s = session(3);
        s.execute(&Command::new("sim node stop control-plane"));
        let g = s.cluster.inspect().etcd().raft().expect("a group");
        assert!(!g.links[0].running());
        s.execute(&Command::new("sim node start control-plane"));
        assert!(s.cluster.inspect().etcd().raft().expect("a group").links[0].running());
    }
}
