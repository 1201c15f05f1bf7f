//! What the map's boxes say: each node's pods with a glyph and a colour for their status, the
//! latest request, etcd's revision, the scheduler's queue and a lane per controller that acted —
//! as the cluster is, or as etcd held it at an earlier revision.

use super::{Layout, MapSpec, layout};
use crate::record::Stage;

/// How a pod's status is drawn: a class for its colour and a glyph, so that colour is never the
/// only cue.
pub fn pod_look(status: &str, ready: bool) -> (&'static str, &'static str) {
    match status {
        "Running" if ready => ("running", "▶"),
        "Running" | "NotReady" => ("unready", "▷"),
        "Pending" => ("pending", "⧗"),
        "ContainerCreating" | "PodInitializing" => ("creating", "◐"),
        s if s.starts_with("Init:") && !s.contains("Err") && !s.contains("BackOff") => ("creating", "◐"),
        "Completed" | "Succeeded" => ("completed", "✓"),
        "Terminating" => ("terminating", "✕"),
        _ => ("failed", "!"),
    }
}

/// The legend under the map: each pod look, in words.
pub const LEGEND: &[(&str, &str, &str)] = &[
    ("pending", "⧗", "Pending"),
    ("creating", "◐", "ContainerCreating"),
    ("running", "▶", "Running, ready"),
    ("unready", "▷", "Running, not ready"),
    ("failed", "!", "CrashLoopBackOff / errors"),
    ("terminating", "✕", "Terminating"),
    ("completed", "✓", "Completed"),
];

/// One pod as a node box draws it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PodMark {
    pub name: String,
    pub status: String,
    /// Owned when it comes from a frame (the wire has no `'static` strings).
    pub class: std::borrow::Cow<'static, str>,
    pub glyph: std::borrow::Cow<'static, str>,
    pub ready: String,
    pub restarts: i32,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeView {
    pub name: String,
    pub status: String,
    pub ready: bool,
    /// Its kubelet is stopped or cut off (`sim node stop|partition`).
    pub cut_off: bool,
    /// The pods its box draws (a box: by name or as dots with a glyph).
    pub pods: Vec<PodMark>,
    /// A tile's pods (many nodes): each only its look, drawn as a plain dot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dots: Vec<std::borrow::Cow<'static, str>>,
    pub pod_count: usize,
}

/// The latest API request, as the API server's box shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RequestLine {
    pub text: String,
    pub refused_at: Option<Stage>,
    pub code: u16,
}

/// Everything the map draws that is not moving: the layout and what each box says.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Board {
    /// Shared: it changes far less often than what the boxes say (a frame carries it apart,
    /// only when it changed: `page::sim::Frame::layout`).
    #[serde(skip)]
    pub layout: std::rc::Rc<Layout>,
    pub request: Option<RequestLine>,
    /// The error kubectl printed for the latest refused request of the person at kubectl.
    pub refusal: Option<String>,
    pub revision: i64,
    pub keys: usize,
    pub waiting: usize,
    pub scheduler_last: String,
    /// Each lane's controller and its latest line (`web-7d4b: want 3 · have 2 → create 1`).
    pub lanes: Vec<(String, String)>,
    pub nodes: Vec<NodeView>,
    /// What CoreDNS's box says: what its caches hold, and whether queries reach it.
    pub coredns: String,
    /// Each add-on beside CoreDNS and its latest line, as the layout's `addons` are ordered.
    pub addons: Vec<(String, String)>,
    /// etcd's members when it is a Raft group (a cluster of several control-plane nodes);
    /// empty with one member.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub etcd_members: Vec<EtcdMember>,
    /// With several control-plane nodes: who leads, and which API servers serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ha: Option<HaView>,
    /// Whether an admission webhook is configured (the legend then explains its token).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub webhooks: bool,
}

/// A control plane of several nodes as its boxes say it: the node whose kube-scheduler and
/// kube-controller-manager hold their Leases (empty while none does), and each node's API
/// server and whether it serves.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HaView {
    pub scheduler_leader: String,
    pub manager_leader: String,
    pub api_servers: Vec<(String, bool)>,
}

#[inline(never)] // a part of the board, compiled on its own (see `acted`)
fn ha_view(cluster: &crate::cluster::Cluster) -> Option<HaView> {
    let api_servers = cluster.api_servers();
    if api_servers.len() < 2 {
        return None;
    }
    let leader = |name: &str| -> String {
        cluster
            .objects(crate::api::Kind::Lease, "kube-system")
            .iter()
            .find_map(|o| match &**o {
                crate::api::Object::Lease(l) if l.metadata.name == name => l.spec.holder_identity.clone(),
                _ => None,
            })
            .map(|holder| holder.split('_').next().unwrap_or_default().to_string())
            .unwrap_or_default()
    };
    Some(HaView {
        scheduler_leader: leader("kube-scheduler"),
        manager_leader: leader("kube-controller-manager"),
        api_servers,
    })
}

/// One member of etcd's Raft group as the etcd box shows it (as it is now).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EtcdMember {
    pub name: String,
    /// `leader`, `follower` or `candidate`.
    pub role: String,
    pub term: u64,
    /// The last index of its log, and the last it knows committed.
    pub index: u64,
    pub commit: u64,
    /// Why it cannot take part, if it cannot: `stopped`, `partitioned`; or `slow disk`.
    pub trouble: Option<String>,
}

/// etcd's members, when it has several.
#[inline(never)] // a part of the board, compiled on its own (see `acted`)
fn etcd_members(cluster: &crate::cluster::Cluster) -> Vec<EtcdMember> {
    use crate::etcd::raft::Role;
    let Some(group) = cluster.inspect().etcd().raft() else { return Vec::new() };
    group
        .members
        .iter()
        .zip(&group.links)
        .map(|(m, link)| EtcdMember {
            name: m.name.clone(),
            role: match m.role {
                Role::Leader => "leader",
                Role::Candidate => "candidate",
                Role::Follower => "follower",
            }
            .into(),
            term: m.term,
            index: m.log.last_index(),
            commit: m.commit,
            trouble: if link.stopped {
                Some("stopped".into())
            } else if link.partitioned {
                Some("partitioned".into())
            } else if link.slow_disk {
                Some("slow disk".into())
            } else {
                None
            },
        })
        .collect()
}

/// CoreDNS as its box says it (as it is now, whatever moment the rest shows).
#[inline(never)] // a part of the board, compiled on its own (see `acted`)
fn coredns_line(cluster: &crate::cluster::Cluster) -> String {
    let Some(coredns) = cluster.component::<crate::dns::CoreDns>() else { return String::new() };
    let (services, slices) = coredns.known();
    if cluster.dns().answering() {
        format!("caches {services} Services, {slices} EndpointSlices")
    } else {
        "no ready pod: lookups time out".into()
    }
}

/// The board for the cluster as it is.
pub fn board(cluster: &crate::cluster::Cluster) -> Board {
    board_at(cluster, None)
}

/// The components that have acted lately: written through the API or decided something the
/// record keeps (a controller has a lane once it has). Each part of the board is a function of
/// its own, kept out of `board_at` (`#[inline(never)]`): the page compiles a function whole the
/// first time it runs, and a hot one again, optimised (docs/architecture.md, "What the page
/// compiles").
#[inline(never)]
fn acted(cluster: &crate::cluster::Cluster) -> std::collections::BTreeSet<String> {
    let mut acted = std::collections::BTreeSet::new();
    for e in cluster.record.entries().rev().take(4000) {
        let wrote = match &e.what {
            crate::record::Happening::Request { verb, .. } => !matches!(*verb, "get" | "list" | "watch"),
            crate::record::Happening::Decision { text } => !text.is_empty(),
            crate::record::Happening::Notify { .. } | crate::record::Happening::KubeletCall { .. } => false,
        };
        if wrote {
            acted.insert(cluster.component_name(e.actor).to_string());
        }
    }
    acted
}

/// Each node's pods as the map marks them (at most 120 a node), how many each node has, and
/// how many pods no node has been chosen for.
struct PodsOnNodes {
    on_node: std::collections::BTreeMap<String, Vec<PodMark>>,
    counts: std::collections::BTreeMap<String, usize>,
    waiting: usize,
}

#[inline(never)] // a part of the board, compiled on its own (see `acted`)
fn pods_on_nodes(pods: &[std::sync::Arc<crate::api::Object>]) -> PodsOnNodes {
    let mut out = PodsOnNodes { on_node: Default::default(), counts: Default::default(), waiting: 0 };
    for object in pods {
        let Some(pod) = object.as_pod() else { continue };
        if pod.spec.node_name.is_empty() {
            out.waiting += usize::from(pod.metadata.deletion_timestamp.is_none());
            continue;
        }
        *out.counts.entry(pod.spec.node_name.clone()).or_default() += 1;
        let list = out.on_node.entry(pod.spec.node_name.clone()).or_default();
        if list.len() >= 120 {
            continue;
        }
        let summary = crate::kubectl::printers::summarize_pod(pod);
        let (class, glyph) = pod_look(&summary.status, summary.ready == summary.total && summary.total > 0);
        list.push(PodMark {
            name: pod.metadata.name.clone(),
            ready: format!("{}/{}", summary.ready, summary.total),
            status: summary.status,
            class: class.into(),
            glyph: glyph.into(),
            restarts: summary.restarts,
        });
    }
    out
}

/// The board for the cluster as it is, or with its nodes and pods as etcd held them at an
/// earlier revision (a step of a followed chain, the time-travel scrubber).
pub fn board_at(cluster: &crate::cluster::Cluster, past: Option<i64>) -> Board {
    use crate::api::Kind;
    use crate::kubectl::printers;
    let view = crate::views::overview::control_plane(cluster);
    let history = past.and_then(|rev| cluster.inspect().etcd().snapshot_at(rev).ok());
    let objects = |kind: Kind| -> Vec<std::sync::Arc<crate::api::Object>> {
        match &history {
            None => cluster.objects(kind, ""),
            Some(state) => {
                let prefix = format!("/registry/{}/", kind.info().resource);
                state
                    .range(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, v)| v.clone())
                    .collect()
            }
        }
    };
    let acted = acted(cluster);
    let line = |c: &crate::views::overview::ControllerRow| {
        c.lanes
            .first()
            .cloned()
            .or_else(|| c.decisions.first().cloned())
            .or_else(|| c.queued.first().map(|q| format!("queued: {q}")))
            .unwrap_or_default()
    };
    let lanes: Vec<(String, String)> = view
        .controllers
        .iter()
        // The controller manager's own leader election is its box's header, not a lane.
        .filter(|c| c.name != "kube-controller-manager")
        .filter(|c| !c.addon && (acted.contains(&c.name) || !c.lanes.is_empty() || !c.queued.is_empty()))
        .map(|c| (c.name.clone(), line(c)))
        .collect();
    // Every add-on has its box from the start, whether or not it has acted yet.
    let addons: Vec<(String, String)> = view
        .controllers
        .iter()
        .filter(|c| c.addon)
        .map(|c| (c.name.clone(), Some(line(c)).filter(|l| !l.is_empty()).unwrap_or_else(|| "watching".into())))
        .collect();
    let PodsOnNodes { mut on_node, counts, waiting } = pods_on_nodes(&objects(Kind::Pod));
    let nodes: Vec<NodeView> = objects(Kind::Node)
        .iter()
        .filter_map(|o| o.as_node())
        .map(|n| {
            let name = n.metadata.name.clone();
            let status = printers::node_status(n);
            let kubelet = crate::cluster::Role::Kubelet { node: name.clone() };
            NodeView {
                ready: status.starts_with("Ready"),
                cut_off: cluster.find_component(&kubelet).is_some_and(|id| !cluster.is_running(id)),
                pods: on_node.remove(&name).unwrap_or_default(),
                dots: Vec::new(),
                pod_count: counts.get(&name).copied().unwrap_or(0),
                name,
                status,
            }
        })
        .collect();
    let spec = MapSpec {
        nodes: nodes.iter().map(|n| (n.name.clone(), n.pod_count)).collect(),
        lanes: lanes.iter().map(|(n, _)| n.clone()).collect(),
        addons: addons.iter().map(|(n, _)| n.clone()).collect(),
        cni: cluster
            .component_ids()
            .any(|id| matches!(cluster.component_role(id), Some(crate::cluster::Role::Cni { .. })))
            .then(|| crate::cni::NAME.to_string()),
        members: cluster
            .inspect()
            .etcd()
            .raft()
            .map(|g| g.members.iter().map(|m| m.name.clone()).collect())
            .unwrap_or_default(),
    };
    let request = view.requests.first().map(|r| RequestLine {
        text: format!("{} {} {} · {}", r.code, r.method, r.path, r.who),
        refused_at: r.refused_at.and_then(|label| Stage::ALL.iter().copied().find(|s| s.label() == label)),
        code: r.code,
    });
    let refusal = cluster.record.entries().rev().take(400).find_map(|e| match &e.what {
        crate::record::Happening::Request { failed_at: Some(_), message, .. }
            if e.actor == crate::record::ComponentId::USER =>
        {
            Some(message.clone())
        }
        _ => None,
    });
    let layout = layout(&spec);
    // A node's pods beyond what its box draws are only counted (`pod_count`): the board
    // carries no more than the map shows.
    let mut nodes = nodes;
    for (view, drawn) in nodes.iter_mut().zip(&layout.nodes) {
        view.pods.truncate(drawn.pod_room);
        if drawn.tile {
            view.dots = std::mem::take(&mut view.pods).into_iter().map(|p| p.class).collect();
        }
    }
    Board {
        layout: std::rc::Rc::new(layout),
        request,
        refusal,
        revision: past.filter(|_| history.is_some()).unwrap_or(view.revision),
        keys: view.keys,
        waiting,
        scheduler_last: view.scheduler_decisions.first().cloned().unwrap_or_default(),
        coredns: coredns_line(cluster),
        lanes,
        addons,
        nodes,
        etcd_members: etcd_members(cluster),
        ha: ha_view(cluster),
        webhooks: ["/registry/mutatingwebhookconfigurations/", "/registry/validatingwebhookconfigurations/"]
            .iter()
            .any(|prefix| cluster.inspect().etcd().any_under(prefix)),
    }
}

#[cfg(test)]
mod tests {
    use crate::record::Stage;
    use crate::shell::{Command, Session};
    use crate::views::map::*;

    #[test]
    fn the_board_says_whether_a_webhook_is_configured_and_whether_etcd_is_a_raft_group() {
        let mut s = Session::new(1);
        let b = board(&s.cluster);
        assert!(!b.webhooks && b.etcd_members.is_empty(), "one control plane, no webhook");
        let manifest = "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: check
webhooks:
- name: check.example.com
  admissionReviewVersions: [\"v1\"]
  sideEffects: None
  clientConfig:
    service: {namespace: default, name: checker, path: /validate}
  rules:
  - apiGroups: [\"\"]
    apiVersions: [\"v1\"]
    operations: [\"CREATE\"]
    resources: [\"configmaps\"]
";
        let out =
            s.execute(&Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), manifest.into())) });
        assert_eq!(
            out.stdout, "validatingwebhookconfiguration.admissionregistration.k8s.io/check created\n",
            "{out:?}"
        );
        assert!(board(&s.cluster).webhooks);
    }

    #[test]
    fn the_board_of_an_applied_deployment_shows_its_pods_on_their_nodes_and_the_controllers_that_acted() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=3"));
        s.execute(&Command::new("sim settle"));
        let b = board(&s.cluster);
        let webs: Vec<&PodMark> = b.nodes.iter().flat_map(|n| &n.pods).filter(|p| p.name.starts_with("web-")).collect();
        assert_eq!(webs.len(), 3);
        assert!(webs.iter().all(|p| (&*p.class, &*p.glyph, p.ready.as_str()) == ("running", "▶", "1/1")), "{webs:?}");
        let lanes: Vec<&str> = b.lanes.iter().map(|(n, _)| n.as_str()).collect();
        assert!(lanes.contains(&"deployment-controller") && lanes.contains(&"replicaset-controller"), "{lanes:?}");
        assert_eq!(b.layout.lanes.len(), b.lanes.len().min(MAX_LANES));
        assert_eq!(b.layout.nodes.len(), 4);
    }

    #[test]
    fn a_refused_apply_is_on_the_board_with_its_stage_and_kubectls_error() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment bad --image=nginx --replicas=-1"));
        let b = board(&s.cluster);
        let r = b.request.expect("the latest request");
        assert_eq!((r.code, r.refused_at), (422, Some(Stage::Validation)));
        assert!(b.refusal.unwrap().contains("spec.replicas"));
    }

    #[test]
    fn a_big_clusters_tiles_carry_each_pod_only_as_its_look() {
        let mut s = Session::new(1);
        for i in 4..=10 {
            s.execute(&Command::new(&format!("sim node add worker-{i}")));
        }
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=20"));
        s.execute(&Command::new("sim settle"));
        let b = board(&s.cluster);
        assert!(b.layout.nodes.len() > MAX_BOXES && b.layout.nodes.iter().all(|n| n.tile));
        assert!(b.nodes.iter().all(|n| n.pods.is_empty()), "a tile lists no pods by name");
        let dots: usize = b.nodes.iter().map(|n| n.dots.len()).sum();
        let counted: usize = b.nodes.iter().map(|n| n.pod_count).sum();
        assert!(dots >= 20 && dots <= counted, "{dots} dots of {counted} pods");
        assert!(b.nodes.iter().flat_map(|n| &n.dots).any(|look| look == "running"));
    }

    #[test]
    fn every_pod_status_has_its_own_glyph() {
        let glyphs: Vec<&str> = LEGEND.iter().map(|(_, g, _)| *g).collect();
        let mut unique = glyphs.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), glyphs.len());
        assert_eq!(pod_look("CrashLoopBackOff", false), ("failed", "!"));
        assert_eq!(pod_look("ContainerCreating", false), ("creating", "◐"));
    }

    #[test]
    fn with_three_control_planes_the_controller_managers_election_is_its_header_not_three_lanes() {
        let config = crate::cluster::ClusterConfig { seed: 1, control_planes: 3, ..Default::default() };
        let mut s = Session::with_config(config);
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25"));
        s.execute(&Command::new("sim settle"));
        let b = board(&s.cluster);
        let lanes: Vec<&str> = b.lanes.iter().map(|(n, _)| n.as_str()).collect();
        assert!(!lanes.contains(&"kube-controller-manager"), "{lanes:?}");
        assert!(lanes.contains(&"deployment-controller"), "{lanes:?}");
        assert!(!b.ha.expect("an HA view").manager_leader.is_empty());
    }

    #[test]
    fn the_board_at_an_earlier_revision_shows_the_pods_as_they_were() {
        let mut s = Session::new(1);
        let before = s.cluster.inspect().etcd().revision();
        s.execute(&Command::new("kubectl run web --image=nginx:1.25"));
        s.execute(&Command::new("sim settle"));
        let now = board(&s.cluster);
        assert!(now.nodes.iter().flat_map(|n| &n.pods).any(|p| p.name == "web"));
        let then = board_at(&s.cluster, Some(before));
        assert!(then.nodes.iter().flat_map(|n| &n.pods).all(|p| p.name != "web"));
        assert_eq!(then.revision, before);
    }

    #[test]
    fn the_scheduler_box_counts_the_pods_waiting_for_a_node_at_the_moment_shown() {
        let mut s = Session::new(1);
        let manifest = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: huge\nspec:\n  containers:\n  - name: app\n    image: nginx\n    resources:\n      requests:\n        cpu: \"64\"\n";
        s.execute(&Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), manifest.into())) });
        s.execute(&Command::new("sim settle"));
        assert_eq!(board(&s.cluster).waiting, 1);
        let before = s.cluster.inspect().etcd().revision();
        s.execute(&Command::new("kubectl delete pod huge --now"));
        s.execute(&Command::new("sim settle"));
        assert_eq!((board(&s.cluster).waiting, board_at(&s.cluster, Some(before)).waiting), (0, 1));
    }
}
