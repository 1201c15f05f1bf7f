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
    /// An add-on running as pods (`local-path-provisioner`), not one of the manager's loops.
    pub addon: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlPlane {
    pub requests: Vec<RequestRow>,
    pub revision: i64,
    pub keys: usize,
    /// Pods no node has been chosen for yet: the first few, and how many in all.
    pub unscheduled: Vec<String>,
    pub waiting: usize,
    pub scheduler_decisions: Vec<String>,
    pub controllers: Vec<ControllerRow>,
}

/// How far back into the record the view looks (the record can be long; the map shows the latest).
const LOOK_BACK: usize = 3000;
const REQUESTS: usize = 6;
const DECISIONS: usize = 3;
/// Names listed of the pods waiting for a node, and of a controller's queued keys.
const NAMES: usize = 4;

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
            Some(role @ (Role::Controller { .. } | Role::AddOn { .. })) => {
                let name = role.control_loop().unwrap_or_default();
                let (lanes, mut queued) = cluster.component_state(id);
                if queued.len() > NAMES {
                    let more = queued.len() - NAMES;
                    queued.truncate(NAMES);
                    queued.push(format!("+{more} more"));
                }
                controllers.push(ControllerRow {
                    name: name.to_string(),
                    lanes,
                    queued,
                    decisions: decisions.get(&id).cloned().unwrap_or_default(),
                    addon: matches!(role, Role::AddOn { .. }),
                });
            }
            Some(Role::Scheduler) => scheduler_decisions = decisions.get(&id).cloned().unwrap_or_default(),
            _ => {}
        }
    }
    let pods = cluster.objects(Kind::Pod, "");
    let mut waiting = 0;
    let mut unscheduled = Vec::new();
    for p in pods.iter().filter_map(|o| o.as_pod()) {
        if p.spec.node_name.is_empty() && p.metadata.deletion_timestamp.is_none() {
            waiting += 1;
            if unscheduled.len() < NAMES {
                unscheduled.push(format!("{}/{}", p.metadata.namespace, p.metadata.name));
            }
        }
    }
    let etcd = cluster.inspect().etcd();
    ControlPlane {
        requests,
        revision: etcd.revision(),
        keys: etcd.range("/registry/").count(),
        unscheduled,
        waiting,
        scheduler_decisions,
        controllers,
    }
}

/// One object as the page's inspector shows it: its YAML (`kubectl get -o yaml`), its
/// `kubectl describe`, its owners up the chain (Deployment → ReplicaSet → Pod) and its events.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Inspection {
    pub title: String,
    pub yaml: String,
    pub describe: String,
    /// `kind/name` of each owner, nearest first.
    pub owners: Vec<String>,
    pub events: String,
}

/// Looks at one object the way kubectl would, without leaving a trace in the session.
pub fn inspect(session: &mut crate::shell::Session, kind: Kind, namespace: &str, name: &str) -> Inspection {
    let resource = kind.info().resource;
    let ns = if kind.info().namespaced { format!(" -n {namespace}") } else { String::new() };
    let shown = |out: crate::kubectl::Output| if out.stdout.is_empty() { out.stderr } else { out.stdout };
    let yaml = shown(session.inspect(&format!("kubectl get {resource} {name}{ns} -o yaml")));
    let describe = shown(session.inspect(&format!("kubectl describe {resource} {name}{ns}")));
    let events = shown(session.inspect(&format!("kubectl events --for {}/{name}{ns}", kind.info().singular)));
    let mut owners = Vec::new();
    let mut current = session.cluster.inspect().get(kind, namespace, name);
    while let Some(object) = current {
        let Some(owner) = object.meta().owner_references.iter().find(|o| o.controller == Some(true)).cloned() else {
            break;
        };
        owners.push(format!("{}/{}", owner.kind.to_lowercase(), owner.name));
        let Some(owner_kind) = Kind::ALL.iter().copied().find(|k| k.info().kind == owner.kind) else { break };
        current = session.cluster.inspect().get(owner_kind, namespace, &owner.name);
        if owners.len() > 8 {
            break;
        }
    }
    Inspection { title: format!("{}/{name}", kind.info().singular), yaml, describe, owners, events }
}

/// One link of a causal chain, captioned in plain words.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChainStep {
    /// The record entry it is.
    pub seq: crate::record::Seq,
    pub at: String,
    /// Who acted: `kubectl`, `kube-apiserver`, a controller, the scheduler, a kubelet.
    pub who: String,
    pub caption: String,
}

/// Everything the latest kubectl write set off — the requests, watch notifications and
/// decisions whose causes lead back to it — in order, each captioned: "follow this apply".
/// A watch notification nobody acted on (a garbage collector told of a new Deployment it has
/// nothing to do with) is left out: the chain is the notifications that woke someone to act.
pub fn follow_latest_write(cluster: &Cluster, limit: usize) -> Vec<ChainStep> {
    // Looks further than `limit`: the notifications left out make room.
    let tree = crate::views::sequence::latest_write_tree(cluster, limit.saturating_mul(8));
    crate::views::sequence::acted_on(tree).into_iter().take(limit).map(|e| caption(cluster, e)).collect()
}

fn caption(cluster: &Cluster, entry: &crate::record::Entry) -> ChainStep {
    let who = match entry.actor {
        ComponentId::USER => "kubectl".to_string(),
        id => cluster.component_name(id).to_string(),
    };
    let caption = match &entry.what {
        Happening::Request { method, path, code, failed_at, kind, name, .. } => match failed_at {
            Some(stage) => format!("asks the API server to {method} {path}: refused at {} ({code})", stage.label()),
            None => format!(
                "asks the API server: {method} {path} → {code}; etcd stores {} {name} at revision {}",
                kind.info().kind,
                entry.revision
            ),
        },
        Happening::Notify { to, event, kind, namespace, name } => format!(
            "the API server tells {} through its watch: {} {} {}",
            cluster.component_name(*to),
            event.as_str(),
            kind.info().kind,
            if namespace.is_empty() { name.clone() } else { format!("{namespace}/{name}") }
        ),
        Happening::Decision { text } => format!("decides: {text}"),
        Happening::KubeletCall { to, method, path } => {
            format!("calls {}'s API for the client: {method} {path}", cluster.component_name(*to))
        }
    };
    ChainStep {
        seq: entry.seq,
        at: crate::kubectl::age::human_duration(entry.time.since(crate::sim::Time::ZERO)),
        who,
        caption,
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
    fn inspecting_a_pod_shows_its_yaml_describe_owner_chain_and_events_without_a_trace() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=1"));
        s.execute(&Command::new("sim settle"));
        let pod = s.cluster.objects(Kind::Pod, "default")[0].name().to_string();
        let (log, last) = (s.log().len(), s.cluster.record.last_seq());
        let view = inspect(&mut s, Kind::Pod, "default", &pod);
        assert!(view.yaml.starts_with("apiVersion: v1\nkind: Pod\n"), "{}", view.yaml);
        assert!(view.describe.starts_with("Name:") && view.describe.contains(&pod), "{}", view.describe);
        assert_eq!(view.owners.len(), 2);
        assert!(view.owners[0].starts_with("replicaset/web-") && view.owners[1] == "deployment/web");
        assert!(view.events.contains("Started"), "{}", view.events);
        assert_eq!((s.log().len(), s.cluster.record.last_seq()), (log, last));
    }

    #[test]
    fn following_an_apply_walks_from_kubectl_to_the_kubelet() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=1"));
        s.execute(&Command::new("kubectl create service clusterip web --tcp=80"));
        s.execute(&Command::new("sim settle"));
        let chain = follow_latest_write(&s.cluster, 400);
        assert_eq!(chain[0].who, "kubectl");
        assert!(
            chain[0]
                .caption
                .contains("POST /apis/apps/v1/namespaces/default/deployments?fieldManager=kubectl-create → 201"),
            "{:?}",
            chain[0]
        );
        let who: Vec<&str> = chain.iter().map(|c| c.who.as_str()).collect();
        let first = |name: &str| who.iter().position(|w| w.starts_with(name));
        let (d, r, sched, kubelet) =
            (first("deployment"), first("replicaset"), first("kube-scheduler"), first("kubelet"));
        assert!(d < r && r < sched && sched < kubelet, "{who:?}");
        // Only notifications someone acted on: the garbage collector hears of the Deployment
        // but does nothing, so the chain skips it; the deployment controller's is there.
        assert!(chain.iter().all(|c| !c.caption.contains("tells garbage-collector")), "{chain:#?}");
        assert!(chain.iter().any(|c| c.caption.contains("tells deployment-controller through its watch: ADDED")));
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
