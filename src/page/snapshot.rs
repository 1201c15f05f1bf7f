//! Plain-data snapshots of the cluster for the page (its tables, node cards and events), built
//! from the core's own printers so the page and `kubectl` always agree. Serializable: they
//! are part of the frame the simulation sends the page (`crate::page::sim`).

use crate::api::{Kind, Object};
use crate::kubectl::{age, printers};
use crate::shell::Session;
use crate::sim::Time;
use crate::util::sort::StableSort;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PodRow {
    pub name: String,
    pub ready: String,
    pub status: String,
    pub restarts: String,
    pub age: String,
    pub node: String,
    /// Why a pod waits for a node: the scheduler's latest FailedScheduling message.
    pub why_pending: Option<String>,
    /// Its first container's image, and whether the registry stops serving it (`sim image`).
    pub image: String,
    pub image_broken: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventRow {
    pub last_seen: String,
    pub type_: String,
    pub reason: String,
    pub object: String,
    pub source: String,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeCard {
    pub name: String,
    pub status: String,
    pub roles: String,
    pub cpu_requested: i64,
    pub cpu_allocatable: i64,
    pub memory_requested: i64,
    pub memory_allocatable: i64,
    /// The first of its pods (name, status): at most [`CHIPS`].
    pub pods: Vec<(String, String)>,
    /// How many pods it runs in all.
    pub pod_count: usize,
    /// Its kubelet is stopped or cut off (`sim node stop|partition`).
    pub cut_off: bool,
    pub cordoned: bool,
}

/// One workload row: `deployment.apps/web` or `replicaset.apps/web-…`, with its cells.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRow {
    pub name: String,
    pub ready: String,
    pub detail: String,
    pub age: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    #[serde(with = "time_ms")]
    pub now: Time,
    pub revision: i64,
    pub workloads: Vec<WorkloadRow>,
    /// The first pods, at most [`POD_ROWS`]: a page of a thousand rows helps nobody and costs
    /// every frame.
    pub pods: Vec<PodRow>,
    /// How many pods the default namespace has in all.
    pub pod_count: usize,
    pub events: Vec<EventRow>,
    /// The node cards shown: all of them, up to [`NODE_CARDS`]; past that the ones in trouble
    /// (not Ready, kubelet cut off, cordoned) first.
    pub nodes: Vec<NodeCard>,
    /// The nodes with no card, and how many of them are Ready.
    #[serde(default)]
    pub nodes_left_out: (usize, usize),
}

/// The most rows the pod table shows.
pub const POD_ROWS: usize = 100;
/// The most pod chips a node card shows.
pub const CHIPS: usize = 12;
/// The most node cards the page draws: hundreds of cards with their controls and chips cost
/// every redraw, and `kubectl get nodes` lists them all.
pub const NODE_CARDS: usize = 30;
/// The most events the stream shows.
const EVENTS: usize = 60;

/// The status class a pod's STATUS column falls into, for colour and icon.
pub fn status_class(status: &str) -> &'static str {
    match status {
        "Running" => "running",
        "Completed" | "Succeeded" => "completed",
        "Pending" | "ContainerCreating" | "PodInitializing" => "pending",
        "Terminating" => "terminating",
        s if s.starts_with("Init:") => "pending",
        _ => "failed",
    }
}

pub fn snapshot(session: &Session) -> Snapshot {
    snapshot_at(session, None)
}

/// The cluster as it is, or as it was at an earlier etcd revision (time travel: etcd keeps
/// every revision since its last compaction). Ages are as of that moment.
pub fn snapshot_at(session: &Session, past: Option<i64>) -> Snapshot {
    let cluster = &session.cluster;
    let history = past.and_then(|rev| cluster.inspect().etcd().snapshot_at(rev).ok());
    let objects = |kind: Kind, namespace: &str| -> Vec<std::sync::Arc<Object>> {
        match &history {
            None => cluster.objects(kind, namespace),
            Some(state) => {
                let prefix = if namespace.is_empty() {
                    format!("/registry/{}/", kind.info().resource)
                } else {
                    format!("/registry/{}/{namespace}/", kind.info().resource)
                };
                state
                    .range(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, v)| v.clone())
                    .collect()
            }
        }
    };
    let revision = match (past, &history) {
        (Some(rev), Some(_)) => rev,
        _ => cluster.inspect().etcd().revision(),
    };
    // The moment of that revision: the last record entry at or before it.
    let now = match history {
        Some(_) => cluster.record.entries().rev().find(|e| e.revision <= revision).map_or(cluster.now(), |e| e.time),
        None => cluster.now(),
    };
    let pods_all = objects(Kind::Pod, "");
    let event_objects = objects(Kind::Event, "");
    // Newest first; within one millisecond, the later write (higher resourceVersion) first.
    // Each key is worked out once (there are thousands of events in a big cluster).
    let mut keyed: Vec<_> = event_objects
        .iter()
        .filter_map(|e| e.as_event())
        .map(|e| (std::cmp::Reverse((e.last_seen(), e.metadata.resource_version.parse::<i64>().unwrap_or(0))), e))
        .collect();
    keyed.stable_sort_by_key(|(key, _)| *key);
    let events: Vec<&crate::api::Event> = keyed.into_iter().map(|(_, e)| e).collect();
    let pod_count = pods_all.iter().filter(|o| o.namespace() == "default").count();
    let broken = cluster.registry().broken();
    let pods = pods_all
        .iter()
        .filter(|o| o.namespace() == "default")
        .take(POD_ROWS)
        .map(|o| {
            let image = o.as_pod().and_then(|p| p.spec.containers.first()).map(|c| c.image.clone()).unwrap_or_default();
            // `nginx` broken breaks every tag of it.
            let image_broken = broken
                .iter()
                .any(|b| *b == image || image.strip_prefix(b.as_str()).is_some_and(|t| t.starts_with(':')));
            let row = printers::row(o, now, true);
            let unbound = o.as_pod().is_some_and(|p| p.spec.node_name.is_empty());
            let why_pending = unbound
                .then(|| {
                    events.iter().find(|e| {
                        e.reason == "FailedScheduling"
                            && e.involved_object.name == o.name()
                            && e.involved_object.namespace == o.namespace()
                    })
                })
                .flatten()
                .map(|e| e.message.clone());
            PodRow {
                why_pending,
                image,
                image_broken,
                name: row[0].clone(),
                ready: row[1].clone(),
                status: row[2].clone(),
                restarts: row[3].clone(),
                age: row[4].clone(),
                node: row[6].clone(),
            }
        })
        .collect();
    let events = events
        .iter()
        .take(EVENTS)
        .map(|e| EventRow {
            last_seen: age::age(Some(e.last_seen()), now),
            type_: e.type_.clone(),
            reason: e.reason.clone(),
            object: printers::event_target(e),
            source: e.source.component.clone(),
            message: e.message.clone(),
        })
        .collect();
    // Each node's pods, in one pass over the pods.
    let mut by_node: std::collections::BTreeMap<&str, Vec<&Object>> = std::collections::BTreeMap::new();
    for p in &pods_all {
        if let Some(pod) = p.as_pod().filter(|pod| !pod.spec.node_name.is_empty() && !pod.is_terminal()) {
            by_node.entry(pod.spec.node_name.as_str()).or_default().push(&**p);
        }
    }
    let all_nodes = objects(Kind::Node, "");
    let all_nodes: Vec<&crate::api::node::Node> = all_nodes.iter().filter_map(|o| o.as_node()).collect();
    let troubled = |n: &crate::api::node::Node| {
        let kubelet = crate::cluster::Role::Kubelet { node: n.metadata.name.clone() };
        !printers::node_status(n).starts_with("Ready")
            || n.spec.unschedulable
            || cluster.find_component(&kubelet).is_some_and(|id| !cluster.is_running(id))
    };
    let shown: Vec<&crate::api::node::Node> = if all_nodes.len() <= NODE_CARDS {
        all_nodes.clone()
    } else {
        let mut picked: Vec<&crate::api::node::Node> = all_nodes.iter().copied().filter(|n| troubled(n)).collect();
        picked.extend(all_nodes.iter().copied().filter(|n| !troubled(n)));
        picked.truncate(NODE_CARDS);
        picked
    };
    let left_out = all_nodes.len() - shown.len();
    let ready_left_out = all_nodes
        .iter()
        .filter(|n| !shown.iter().any(|s| s.metadata.name == n.metadata.name))
        .filter(|n| printers::node_status(n).starts_with("Ready"))
        .count();
    let nodes = shown
        .iter()
        .map(|n| {
            let on_node: &[&Object] = by_node.get(n.metadata.name.as_str()).map_or(&[], Vec::as_slice);
            let (cpu, mem) = on_node.iter().filter_map(|p| p.as_pod()).fold((0, 0), |(c, m), p| {
                let r = p.requests();
                (c + r.cpu_milli, m + r.memory_bytes)
            });
            let kubelet = crate::cluster::Role::Kubelet { node: n.metadata.name.clone() };
            NodeCard {
                cut_off: cluster.find_component(&kubelet).is_some_and(|id| !cluster.is_running(id)),
                cordoned: n.spec.unschedulable,
                name: n.metadata.name.clone(),
                status: printers::node_status(n),
                roles: printers::node_roles(n),
                cpu_requested: cpu,
                cpu_allocatable: n.allocatable("cpu").map_or(0, |q| q.milli()),
                memory_requested: mem,
                memory_allocatable: n.allocatable("memory").map_or(0, |q| q.value()),
                pod_count: on_node.len(),
                pods: on_node
                    .iter()
                    .take(CHIPS)
                    .filter_map(|p| p.as_pod())
                    .map(|p| (p.metadata.name.clone(), printers::summarize_pod(p).status))
                    .collect(),
            }
        })
        .collect();
    let mut workloads = Vec::new();
    for kind in [Kind::Deployment, Kind::ReplicaSet] {
        for o in objects(kind, "default") {
            let row = printers::row(&o, now, false);
            let (ready, detail, age) = match kind {
                Kind::Deployment => {
                    (row[1].clone(), format!("{} up-to-date · {} available", row[2], row[3]), row[4].clone())
                }
                _ => (
                    format!("{}/{}", row[3], row[1]),
                    format!("desired {} · current {}", row[1], row[2]),
                    row[4].clone(),
                ),
            };
            workloads.push(WorkloadRow { name: printers::type_name(&o), ready, detail, age });
        }
    }
    Snapshot { now, revision, workloads, pods, pod_count, events, nodes, nodes_left_out: (left_out, ready_left_out) }
}

/// Virtual time on the wire: milliseconds since the simulation began.
mod time_ms {
    use crate::sim::Time;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(t.0)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        u64::deserialize(d).map(Time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    #[test]
    fn a_big_cluster_shows_a_bounded_number_of_node_cards_those_in_trouble_first() {
        let mut s = Session::new(1);
        for i in 4..=40 {
            s.execute(&Command::new(&format!("sim node add worker-{i}")));
        }
        s.execute(&Command::new("sleep 10s"));
        s.execute(&Command::new("kubectl cordon worker-39"));
        s.execute(&Command::new("sim node stop worker-40"));
        let snap = snapshot(&s);
        assert_eq!(snap.nodes.len(), NODE_CARDS);
        let names: Vec<&str> = snap.nodes.iter().map(|n| n.name.as_str()).collect();
        assert!(names[..2].contains(&"worker-39") && names[..2].contains(&"worker-40"), "{names:?}");
        let all = 41;
        assert_eq!(snap.nodes_left_out.0, all - NODE_CARDS);
        assert_eq!(snap.nodes_left_out.1, all - NODE_CARDS, "the ones left out are all Ready");
    }

    #[test]
    fn a_small_cluster_shows_every_node_in_order() {
        let snap = snapshot(&Session::new(1));
        let names: Vec<&str> = snap.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["control-plane", "worker-1", "worker-2", "worker-3"]);
        assert_eq!(snap.nodes_left_out, (0, 0));
    }
}
