//! The control plane at a glance, as the page's map draws it: the API server's latest
//! requests with the pipeline stage that answered, etcd's revision, the scheduler's queue,
//! and for each controller its lanes (desired against actual), its work queue and what it
//! last decided — all read from the cluster and its record, never changing either.

use crate::api::Kind;
use crate::cluster::{Cluster, Role};
use crate::record::{ComponentId, Happening};
use std::collections::BTreeMap;

/// One API request as the map lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRow {
    pub who: String,
    pub method: &'static str,
    pub path: String,
    pub code: u16,
    /// The pipeline stage that refused it (`validation`, …), if one did.
    pub refused_at: Option<&'static str>,
}

/// A controller's lane in the controller manager.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerRow {
    pub name: String,
    pub lanes: Vec<String>,
    pub queued: Vec<String>,
    /// Its latest decisions, newest first.
    pub decisions: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlPlane {
    pub requests: Vec<RequestRow>,
    pub revision: i64,
    pub keys: usize,
    /// Pods no node has been chosen for yet.
    pub unscheduled: Vec<String>,
    pub scheduler_decisions: Vec<String>,
    pub controllers: Vec<ControllerRow>,
}

/// How far back into the record the view looks (the record can be long; the map shows the latest).
const LOOK_BACK: usize = 3000;
const REQUESTS: usize = 6;
const DECISIONS: usize = 3;

pub fn control_plane(cluster: &Cluster) -> ControlPlane {
    let mut requests = Vec::new();
    let mut decisions: BTreeMap<ComponentId, Vec<String>> = BTreeMap::new();
    for entry in cluster.record.entries().rev().take(LOOK_BACK) {
        match &entry.what {
            Happening::Request { method, path, code, failed_at, verb, .. }
                if requests.len() < REQUESTS && *verb != "watch" && *code != 0 =>
            {
                requests.push(RequestRow {
                    who: cluster.component_name(entry.actor).to_string(),
                    method,
                    path: path.clone(),
                    code: *code,
                    refused_at: failed_at.map(|s| s.label()),
                });
            }
            Happening::Decision { text } if !text.is_empty() => {
                let list = decisions.entry(entry.actor).or_default();
                if list.len() < DECISIONS {
                    list.push(text.clone());
                }
            }
            _ => {}
        }
    }
    let mut controllers = Vec::new();
    let mut scheduler_decisions = Vec::new();
    for id in cluster.component_ids() {
        match cluster.component_role(id) {
            Some(Role::Controller { name }) => {
                let (lanes, queued) = cluster.component_state(id);
                controllers.push(ControllerRow {
                    name: name.clone(),
                    lanes,
                    queued,
                    decisions: decisions.get(&id).cloned().unwrap_or_default(),
                });
            }
            Some(Role::Scheduler) => scheduler_decisions = decisions.get(&id).cloned().unwrap_or_default(),
            _ => {}
        }
    }
    let unscheduled = cluster
        .objects(Kind::Pod, "")
        .iter()
        .filter_map(|o| o.as_pod())
        .filter(|p| p.spec.node_name.is_empty() && p.metadata.deletion_timestamp.is_none())
        .map(|p| format!("{}/{}", p.metadata.namespace, p.metadata.name))
        .collect();
    let etcd = cluster.api().etcd();
    ControlPlane {
        requests,
        revision: etcd.revision(),
        keys: etcd.range("/registry/").count(),
        unscheduled,
        scheduler_decisions,
        controllers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    #[test]
    fn a_deleted_pod_shows_in_the_replicaset_lane_as_want_3_have_2_create_1() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=3"));
        s.execute(&Command::new("sim settle"));
        let pod = s.cluster.objects(Kind::Pod, "default")[0].name().to_string();
        s.execute(&Command::new(&format!("kubectl delete pod {pod} --wait=false")));
        // Step until the ReplicaSet controller has reconciled once.
        let mut seen = None;
        for _ in 0..200 {
            s.cluster.step();
            let view = control_plane(&s.cluster);
            let rs = view.controllers.iter().find(|c| c.name == "replicaset-controller").unwrap();
            if let Some(lane) = rs.lanes.iter().find(|l| l.contains("create 1")) {
                seen = Some((lane.clone(), rs.decisions.clone()));
                break;
            }
        }
        let (lane, decisions) = seen.expect("the ReplicaSet lane showed the repair");
        assert!(lane.ends_with("want 3 · have 2 → create 1"), "{lane}");
        assert!(decisions[0].contains("want 3, have 2: create 1"), "{decisions:?}");
    }

    #[test]
    fn a_refused_request_shows_the_stage_that_refused_it() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment bad --image=nginx --replicas=-1"));
        let view = control_plane(&s.cluster);
        let last = &view.requests[0];
        assert_eq!((last.method, last.code, last.refused_at), ("POST", 422, Some("validation")));
        assert!(view.revision > 0 && view.keys > 10);
    }
}
