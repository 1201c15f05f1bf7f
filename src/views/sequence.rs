//! The sequence of one apply, as courses draw it: a swimlane per component, numbered arrows
//! top to bottom, one sentence each. Built from the record: the chain the latest kubectl write
//! set off, without the background chatter (Events, Lease renewals) and without the watch
//! notifications nobody acted on.

use super::caption::{caption, is_chatter, runtime_step, stored_change, subresource};
use super::flow::{is_raft, side_message};
use crate::api::Kind;
use crate::cluster::{Cluster, Role};
use crate::etcd::{ChangeKind, Etcd};
use crate::record::{ComponentId, Entry, Happening, Seq};
use crate::util::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet};

/// The diagram: lanes left to right, steps top to bottom.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sequence {
    pub lanes: Vec<Lane>,
    pub steps: Vec<SeqStep>,
}

/// One swimlane: a component, or etcd, or a node's container runtime.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Lane {
    /// `kubectl`, `kube-apiserver`, `etcd`, `replicaset-controller`, `kube-scheduler`,
    /// `kubelet/worker-2`, `containerd/worker-2`, `kube-proxy/worker-1`.
    pub key: String,
    /// What the lane's head shows: `you (kubectl)`, `kubelet worker-2`.
    pub title: String,
}

/// One numbered arrow (or, when `from == to`, a note on one lane).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeqStep {
    /// From 1, top to bottom.
    pub n: usize,
    /// The record entry it draws (a stored request draws two steps: the request, the put).
    pub seq: Seq,
    /// Lane indexes.
    pub from: usize,
    pub to: usize,
    /// Short, for the arrow: `POST deployments`, `put /registry/pods/default/web-x`,
    /// `watch: ADDED pod/web-x`, `bind pod/web-x → worker-2`.
    pub label: String,
    pub caption: String,
    /// etcd's revision after the entry: the cluster as it was at this step.
    pub revision: i64,
    /// Virtual time since the simulation began (`1m0.004s`).
    pub at: String,
}

/// Whether an entry is a kubectl write that succeeded: the start of a chain.
fn is_user_write(e: &Entry) -> bool {
    e.actor == ComponentId::USER
        && matches!(&e.what, Happening::Request { verb, code, .. }
            if matches!(*verb, "create" | "update" | "patch" | "delete") && *code < 400)
}

/// Everything the latest kubectl write set off, oldest first: the write itself (and the other
/// writes of the same command, made at the same virtual instant), then every entry whose cause
/// leads back to them, until `max` entries are found.
pub fn latest_write_tree(cluster: &Cluster, max: usize) -> Vec<&Entry> {
    let Some(last) = cluster.record.entries().rev().find(|e| is_user_write(e)) else { return Vec::new() };
    // One command's writes all happen at one virtual instant (a manifest with a Deployment
    // and a Service is two writes): follow them all.
    let first = cluster
        .record
        .entries()
        .rev()
        .skip_while(|e| e.seq > last.seq)
        .take_while(|e| e.time == last.time)
        .filter(|e| is_user_write(e))
        .last();
    let start = first.map_or(last.seq, |e| e.seq);
    let mut tree = BTreeSet::new();
    let mut chain = Vec::new();
    for entry in cluster.record.since(start.saturating_sub(1)) {
        if chain.len() >= max {
            break;
        }
        let root = is_user_write(entry) && entry.time == last.time;
        if root || entry.cause.is_some_and(|c| tree.contains(&c)) {
            tree.insert(entry.seq);
            chain.push(entry);
        }
    }
    chain
}

/// `entries` without the watch notifications no one in `entries` acted on.
pub fn acted_on(entries: Vec<&Entry>) -> Vec<&Entry> {
    let causes: BTreeSet<Seq> = entries.iter().filter_map(|e| e.cause).collect();
    entries.into_iter().filter(|e| !matches!(e.what, Happening::Notify { .. }) || causes.contains(&e.seq)).collect()
}

/// The entries in the order things happened, each request's write to etcd as a step of its
/// own (`true`): a request, its admission webhooks' calls, its write, etcd's replication of it
/// (and an election it waited for), then what its write set off.
fn in_order(entries: Vec<&Entry>) -> Vec<(&Entry, bool)> {
    let mut used = vec![false; entries.len()];
    let mut out = Vec::with_capacity(entries.len() + 8);
    for i in 0..entries.len() {
        if used[i] {
            continue;
        }
        used[i] = true;
        let e = entries[i];
        out.push((e, false));
        if !matches!(e.what, Happening::Request { .. }) {
            continue;
        }
        let after = i + 1..entries.len();
        for j in after.clone() {
            if !used[j] && entries[j].cause == Some(e.seq) && is_webhook_note(entries[j]) {
                used[j] = true;
                out.push((entries[j], false));
            }
        }
        out.push((e, true));
        if let Some(last) = after.clone().rev().find(|&j| entries[j].cause == Some(e.seq) && is_raft(entries[j])) {
            for j in i + 1..=last {
                if !used[j] && is_raft(entries[j]) {
                    used[j] = true;
                    out.push((entries[j], false));
                }
            }
        }
    }
    out
}

/// One of the API server's notes of an admission webhook call.
fn is_webhook_note(entry: &Entry) -> bool {
    matches!(&entry.what, Happening::Decision { text } if entry.actor == ComponentId::API_SERVER && text.contains("AdmissionWebhook"))
}

/// How lanes sort: the fixed three, controllers, the scheduler, each node's kubelet and
/// runtime side by side, kube-proxies, then anything else.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    User,
    ApiServer,
    Etcd,
    /// One of etcd's members (several control planes), by first appearance.
    EtcdMember(usize),
    Controller(usize),
    Scheduler,
    /// Node (by first appearance), then 0 for the kubelet, 1 for its runtime.
    Node(usize, u8),
    KubeProxy(usize),
    /// A pod the API server calls (an admission webhook's backend).
    Backend(usize),
    Other(usize),
}

/// Lanes as they are first used, then sorted.
#[derive(Default)]
struct Lanes {
    /// key → (place, title)
    known: BTreeMap<String, (Place, String)>,
    nodes: Vec<String>,
    used: usize,
}

impl Lanes {
    fn node(&mut self, node: &str) -> usize {
        match self.nodes.iter().position(|n| n == node) {
            Some(i) => i,
            None => {
                self.nodes.push(node.to_string());
                self.nodes.len() - 1
            }
        }
    }

    fn add(&mut self, key: String, place: impl FnOnce(&mut Self, usize) -> Place, title: String) -> String {
        if !self.known.contains_key(&key) {
            let order = self.used;
            self.used += 1;
            let place = place(self, order);
            self.known.insert(key.clone(), (place, title));
        }
        key
    }

    fn component(&mut self, cluster: &Cluster, id: ComponentId) -> String {
        match cluster.component_role(id) {
            Some(Role::User) => self.add("kubectl".into(), |_, _| Place::User, "you (kubectl)".into()),
            Some(Role::ApiServer) => {
                self.add("kube-apiserver".into(), |_, _| Place::ApiServer, "kube-apiserver".into())
            }
            Some(Role::Scheduler) => {
                self.add("kube-scheduler".into(), |_, _| Place::Scheduler, "kube-scheduler".into())
            }
            Some(Role::Controller { name }) => self.add(name.clone(), |_, o| Place::Controller(o), name.clone()),
            Some(Role::Kubelet { node }) => {
                self.add(format!("kubelet/{node}"), |l, _| Place::Node(l.node(node), 0), format!("kubelet {node}"))
            }
            Some(Role::KubeProxy { node }) => {
                self.add(format!("kube-proxy/{node}"), |_, o| Place::KubeProxy(o), format!("kube-proxy {node}"))
            }
            Some(Role::Cni { node }) => {
                self.add(format!("calico-node/{node}"), |_, o| Place::Other(o), format!("calico-node {node}"))
            }
            Some(Role::CoreDns) => self.add("coredns".into(), |_, o| Place::Other(o), "coredns".into()),
            Some(Role::AddOn { name }) => self.add(name.clone(), |_, o| Place::Other(o), name.clone()),
            None => {
                let name = cluster.component_name(id).to_string();
                self.add(name.clone(), |_, o| Place::Other(o), name)
            }
        }
    }

    fn etcd(&mut self) -> String {
        self.add("etcd".into(), |_, _| Place::Etcd, "etcd".into())
    }

    /// The lane of a place on the map (an etcd member, a webhook's pod, the API server).
    fn place(&mut self, cluster: &Cluster, place: &crate::views::flow::Place) -> String {
        use crate::views::flow::Place as On;
        match place {
            On::EtcdMember(name) => {
                self.add(format!("etcd/{name}"), |_, o| Place::EtcdMember(o), format!("etcd {name}"))
            }
            On::Pod { pod, .. } => {
                self.add(format!("pod/{pod}"), |_, o| Place::Backend(o), format!("webhook pod {pod}"))
            }
            On::Etcd => self.etcd(),
            _ => self.component(cluster, ComponentId::API_SERVER),
        }
    }

    fn runtime(&mut self, node: &str) -> String {
        self.add(format!("containerd/{node}"), |l, _| Place::Node(l.node(node), 1), format!("containerd {node}"))
    }

    /// The lanes `drafts` use, in drawing order, and each key's index.
    fn finish(self, drafts: &[Draft]) -> (Vec<Lane>, BTreeMap<String, usize>) {
        let used: BTreeSet<&str> = drafts.iter().flat_map(|d| [d.from.as_str(), d.to.as_str()]).collect();
        let mut lanes: Vec<(Place, String, String)> = self
            .known
            .into_iter()
            .filter(|(key, _)| used.contains(key.as_str()))
            .map(|(key, (place, title))| (place, key, title))
            .collect();
        lanes.stable_sort();
        let index = lanes.iter().enumerate().map(|(i, (_, key, _))| (key.clone(), i)).collect();
        (lanes.into_iter().map(|(_, key, title)| Lane { key, title }).collect(), index)
    }
}

/// A step before its lanes have indexes.
struct Draft {
    seq: Seq,
    from: String,
    to: String,
    label: String,
    caption: String,
    revision: i64,
    at: String,
}

/// The sequence of the chain the latest kubectl write set off, at most `limit` steps.
pub fn sequence(cluster: &Cluster, limit: usize) -> Sequence {
    // Chatter and unheeded notifications make up most of a chain: look well past `limit`.
    let tree = latest_write_tree(cluster, limit.saturating_mul(24).max(256));
    let kept: Vec<&Entry> =
        tree.into_iter().filter(|e| !is_chatter(cluster, e) || runtime_step(cluster, e).is_some()).collect();
    let kept = in_order(acted_on(kept));
    let mut lanes = Lanes::default();
    let mut drafts: Vec<Draft> = Vec::new();
    for (entry, stored) in kept {
        if drafts.len() >= limit {
            break;
        }
        let at = entry.time.since(crate::sim::Time::ZERO).to_string();
        let mut push = |from: String, to: String, label: String, caption: String| {
            drafts.push(Draft { seq: entry.seq, from, to, label, caption, revision: entry.revision, at: at.clone() });
        };
        if stored {
            // (A kubelet's Event told as its runtime's step draws no write of its own.)
            if let Some((label, text)) = storage(cluster, entry).filter(|_| runtime_step(cluster, entry).is_none()) {
                let (api, etcd) = (lanes.component(cluster, ComponentId::API_SERVER), lanes.etcd());
                push(api, etcd, label, text);
            }
            continue;
        }
        // etcd's Raft messages and the admission webhooks' calls, between their own lanes.
        if let Some(m) = side_message(cluster, entry) {
            let (from, to) = (lanes.place(cluster, &m.from), lanes.place(cluster, &m.to));
            push(from, to, m.label, m.caption);
            continue;
        }
        if let Some(step) = runtime_step(cluster, entry) {
            let kubelet = lanes.component(cluster, entry.actor);
            let runtime = lanes.runtime(&step.node);
            let (from, to) = if step.answer { (runtime, kubelet) } else { (kubelet, runtime) };
            push(from, to, step.label, step.caption);
            continue;
        }
        match &entry.what {
            Happening::Request { .. } => {
                let from = lanes.component(cluster, entry.actor);
                let api = lanes.component(cluster, ComponentId::API_SERVER);
                push(from, api, request_label(cluster, entry), caption(cluster, entry));
            }
            Happening::Notify { to, event, kind, name, .. } => {
                let api = lanes.component(cluster, ComponentId::API_SERVER);
                let to = lanes.component(cluster, *to);
                let label = format!("watch: {} {}/{name}", event.as_str(), kind.info().singular);
                push(api, to, label, caption(cluster, entry));
            }
            Happening::Decision { text } => {
                let lane = lanes.component(cluster, entry.actor);
                push(lane.clone(), lane, decision_label(text), caption(cluster, entry));
            }
            Happening::KubeletCall { to, method, path } => {
                let api = lanes.component(cluster, ComponentId::API_SERVER);
                let to = lanes.component(cluster, *to);
                push(api, to, format!("{method} {path}"), caption(cluster, entry));
            }
        }
    }
    drafts.truncate(limit);
    let (lanes, index) = lanes.finish(&drafts);
    let steps = drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| SeqStep {
            n: i + 1,
            seq: d.seq,
            from: index.get(&d.from).copied().unwrap_or(0),
            to: index.get(&d.to).copied().unwrap_or(0),
            label: d.label,
            caption: d.caption,
            revision: d.revision,
            at: d.at,
        })
        .collect();
    Sequence { lanes, steps }
}

/// The arrow's words for a request: `POST deployments`, `bind pod/web-x → worker-2`,
/// `PUT pods/web-x/status`, and how a refusal ended.
fn request_label(cluster: &Cluster, entry: &Entry) -> String {
    let Happening::Request { method, verb, path, kind, name, code, failed_at, .. } = &entry.what else {
        return String::new();
    };
    let resource = kind.info().resource;
    let sub = subresource(path);
    let mut label = match (*verb, sub) {
        ("create", Some("binding")) => {
            let node = stored_change(cluster, entry).and_then(|c| c.value.as_pod().map(|p| p.spec.node_name.clone()));
            match node.filter(|n| !n.is_empty()) {
                Some(node) => format!("bind pod/{name} → {node}"),
                None => format!("bind pod/{name}"),
            }
        }
        ("create", Some("eviction")) => format!("evict pod/{name}"),
        ("create", _) => format!("POST {resource}"),
        ("list", _) => format!("LIST {resource}"),
        ("watch", _) => format!("WATCH {resource}"),
        (_, Some(sub)) => format!("{method} {resource}/{name}/{sub}"),
        _ if name.is_empty() => format!("{method} {resource}"),
        _ => format!("{method} {resource}/{name}"),
    };
    match failed_at {
        Some(_) if *code == 0 => label.push_str(" ✗ connection refused"),
        Some(stage) => label.push_str(&format!(" ✗ {code} {}", stage.label())),
        None if *code >= 400 => label.push_str(&format!(" ✗ {code}")),
        None => {}
    }
    label
}

/// The API server's write to etcd for a stored request: its label and sentence.
fn storage(cluster: &Cluster, entry: &Entry) -> Option<(String, String)> {
    let Happening::Request { kind, namespace, name, .. } = &entry.what else { return None };
    let change = stored_change(cluster, entry)?;
    let object = match kind {
        Kind::Pod => format!("pod {name}"),
        k => format!("{} {name}", k.info().kind),
    };
    let ns = if kind.info().namespaced { namespace.as_str() } else { "" };
    let key =
        if change.key.is_empty() { Etcd::key_for(kind.info().resource, ns, name) } else { change.key.to_string() };
    Some(match change.kind {
        ChangeKind::Put => (
            format!("put {key}"),
            format!("The API server writes {object} to etcd under {key}; etcd's revision is now {}.", change.revision),
        ),
        ChangeKind::Delete => (
            format!("delete {key}"),
            format!("The API server deletes {key} from etcd; etcd's revision is now {}.", change.revision),
        ),
    })
}

/// A decision's note, short: `3/4 fit → worker-2`, `want 3, have 0: create 3`.
fn decision_label(text: &str) -> String {
    if let Some((head, node)) = text.rsplit_once("; picked ") {
        let fit = head.split(": ").nth(1).and_then(|r| r.split(" nodes feasible").next()).unwrap_or("");
        return format!("{fit} fit → {node}");
    }
    if let Some((_, message)) = text.split_once(" is unschedulable: ") {
        let first = message.split(':').next().unwrap_or(message);
        return format!("unschedulable: {first}");
    }
    // "<Kind> <key>: what it does" → what it does.
    let mut words = text.splitn(2, ' ');
    let head = words.next().unwrap_or("");
    if head.chars().next().is_some_and(|c| c.is_uppercase()) {
        if let Some((_, rest)) = text.split_once(": ") {
            return rest.to_string();
        }
    }
    text.to_string()
}

/// The chain's first lanes and steps as text, for tests and the terminal.
pub fn describe(seq: &Sequence) -> Vec<String> {
    seq.steps
        .iter()
        .map(|s| {
            let key = |i: usize| seq.lanes.get(i).map_or("?", |l| l.key.as_str());
            format!("{:>3}. {} → {}: {}", s.n, key(s.from), key(s.to), s.label)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    fn applied(replicas: u32) -> Session {
        let mut s = Session::new(1);
        s.execute(&Command::new(&format!("kubectl create deployment web --image=nginx:1.25 --replicas={replicas}")));
        s.execute(&Command::new("sim settle"));
        s
    }

    fn keys(seq: &Sequence) -> Vec<&str> {
        seq.lanes.iter().map(|l| l.key.as_str()).collect()
    }

    #[test]
    fn the_sequence_of_an_apply_goes_kubectl_apiserver_etcd_then_deployment_replicaset_scheduler_kubelet() {
        let s = applied(3);
        let seq = sequence(&s.cluster, 500);
        // Each lane's first arrival (as sender or receiver), in step order.
        let mut arrivals: Vec<&str> = Vec::new();
        for step in &seq.steps {
            for lane in [step.from, step.to] {
                let key = seq.lanes[lane].key.as_str();
                if !arrivals.contains(&key) {
                    arrivals.push(key);
                }
            }
        }
        let short: Vec<&str> = arrivals.iter().map(|k| k.split('/').next().unwrap()).collect();
        let mut order: Vec<&str> = Vec::new();
        for k in short {
            if order.last() != Some(&k) && !order.contains(&k) {
                order.push(k);
            }
        }
        assert_eq!(
            order,
            [
                "kubectl",
                "kube-apiserver",
                "etcd",
                "deployment-controller",
                "replicaset-controller",
                "kube-scheduler",
                "kubelet",
                "containerd"
            ],
            "{:#?}",
            describe(&seq)
        );
        // Lanes are drawn in the course's order, each node's kubelet beside its runtime.
        let lanes = keys(&seq);
        assert_eq!(
            lanes[..6],
            ["kubectl", "kube-apiserver", "etcd", "deployment-controller", "replicaset-controller", "kube-scheduler"]
        );
        for pair in lanes[6..].chunks(2) {
            let node = pair[0].strip_prefix("kubelet/").expect("a kubelet lane");
            assert_eq!(pair[1], format!("containerd/{node}"));
        }
        assert_eq!(lanes.len(), 12, "{lanes:?}");
        // Numbered from 1, top to bottom.
        assert!(seq.steps.iter().enumerate().all(|(i, s)| s.n == i + 1));
        assert_eq!(seq.steps[0].label, "POST deployments");
        assert!(seq.steps[0].caption.starts_with("You (kubectl) ask the API server to create Deployment web"));
    }

    #[test]
    fn a_stored_request_draws_a_put_to_etcd() {
        let s = applied(1);
        let seq = sequence(&s.cluster, 500);
        let lane = |key: &str| seq.lanes.iter().position(|l| l.key == key).unwrap();
        let (kubectl, api, etcd) = (lane("kubectl"), lane("kube-apiserver"), lane("etcd"));
        let (first, second) = (&seq.steps[0], &seq.steps[1]);
        assert_eq!((first.from, first.to), (kubectl, api));
        assert_eq!((second.from, second.to), (api, etcd));
        assert_eq!(second.seq, first.seq);
        assert_eq!(second.label, "put /registry/deployments/default/web");
        assert_eq!(
            second.caption,
            format!(
                "The API server writes Deployment web to etcd under /registry/deployments/default/web; etcd's revision is now {}.",
                second.revision
            )
        );
        // Every request that was stored draws its put right after it; nothing else reaches etcd.
        for (i, step) in seq.steps.iter().enumerate() {
            if step.to == etcd {
                assert_eq!(seq.steps[i - 1].to, api);
                assert_eq!(seq.steps[i - 1].seq, step.seq);
                assert_eq!(step.from, api);
            }
            if step.from == etcd {
                panic!("etcd sends nothing: {step:?}");
            }
        }
        let bind = seq.steps.iter().position(|s| s.label.starts_with("bind pod/web-")).unwrap();
        assert!(seq.steps[bind].label.contains(" → worker-"), "{:?}", seq.steps[bind]);
        assert!(seq.steps[bind + 1].label.starts_with("put /registry/pods/default/web-"));
    }

    #[test]
    fn a_refused_request_draws_one_arrow_labelled_with_its_refusal_and_no_put() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=1"));
        s.execute(&Command::new("sim settle"));
        s.execute(&Command::new("kubectl scale deployment web --replicas=-1"));
        let seq = sequence(&s.cluster, 500);
        // The scale was refused, so the chain is still the create's: refusals start no chain.
        assert_eq!(seq.steps[0].label, "POST deployments");
        let refused = crate::record::Entry {
            seq: 0,
            time: crate::sim::Time::ZERO,
            revision: 1,
            actor: ComponentId::USER,
            cause: None,
            what: Happening::Request {
                method: "POST",
                verb: "create",
                path: "/apis/apps/v1/namespaces/default/deployments".into(),
                kind: Kind::Deployment,
                namespace: "default".into(),
                name: "bad".into(),
                code: 422,
                failed_at: Some(crate::record::Stage::Validation),
                message: "nope".into(),
            },
        };
        assert_eq!(request_label(&s.cluster, &refused), "POST deployments ✗ 422 validation");
        assert!(storage(&s.cluster, &refused).is_none());
    }

    #[test]
    fn lanes_only_for_components_that_acted() {
        let s = applied(1);
        let seq = sequence(&s.cluster, 500);
        let lanes = keys(&seq);
        // One pod: one node's kubelet and runtime; no garbage collector, no kube-proxy, no
        // node lifecycle controller (they heard of the Deployment but did nothing about it).
        assert_eq!(lanes.len(), 8, "{lanes:?}");
        for absent in ["garbage-collector", "node-lifecycle-controller", "taint-eviction-controller", "kube-proxy"] {
            assert!(lanes.iter().all(|l| !l.starts_with(absent)), "{absent} in {lanes:?}");
        }
        for (i, _) in seq.lanes.iter().enumerate() {
            assert!(seq.steps.iter().any(|s| s.from == i || s.to == i), "lane {} unused", seq.lanes[i].key);
        }
        // No chatter: no Events, no Leases.
        assert!(seq.steps.iter().all(|s| !s.label.contains("events") && !s.label.contains("leases")));
    }

    #[test]
    fn the_kubelet_has_its_runtime_pull_and_start_the_container() {
        let s = applied(1);
        let seq = sequence(&s.cluster, 500);
        let labels: Vec<&str> = seq.steps.iter().map(|s| s.label.as_str()).collect();
        let at = |l: &str| labels.iter().position(|x| *x == l).unwrap_or_else(|| panic!("{l} not in {labels:#?}"));
        assert!(at("pull nginx:1.25") < at("image pulled"));
        assert!(at("image pulled") < at("create container nginx"));
        assert!(at("create container nginx") < at("start container nginx"));
        let pulled = &seq.steps[at("image pulled")];
        assert!(seq.lanes[pulled.from].key.starts_with("containerd/"));
        assert!(seq.lanes[pulled.to].key.starts_with("kubelet/"));
        // The story ends with the kubelet reporting the pod Running.
        assert!(seq.steps.iter().any(|s| s.caption.contains(" is Running (1/1 ready)")));
    }

    #[test]
    fn notifications_come_from_the_api_server_and_decisions_are_notes() {
        let s = applied(1);
        let seq = sequence(&s.cluster, 500);
        let api = seq.lanes.iter().position(|l| l.key == "kube-apiserver").unwrap();
        for step in &seq.steps {
            if step.label.starts_with("watch: ") {
                assert_eq!(step.from, api);
                assert!(step.caption.starts_with("The API server tells "), "{step:?}");
            }
        }
        assert!(seq.steps.iter().any(|s| s.label == "watch: ADDED deployment/web"));
        let note = seq.steps.iter().find(|s| s.label.ends_with("want 1, have 0: create 1")).unwrap();
        assert_eq!(note.from, note.to);
        assert!(seq.steps.iter().any(|s| s.label.starts_with("3/4 fit → worker-") && s.from == s.to));
    }

    #[test]
    fn on_three_control_planes_the_write_is_put_then_replicated_between_the_etcd_members_lanes() {
        let mut s = Session::with_config(crate::cluster::ClusterConfig { control_planes: 3, ..Default::default() });
        s.execute(&Command::new("kubectl create configmap one --from-literal=a=1"));
        let seq = sequence(&s.cluster, 40);
        let lane = |i: usize| seq.lanes[i].key.as_str();
        let steps: Vec<(&str, &str, &str)> =
            seq.steps.iter().map(|st| (lane(st.from), lane(st.to), st.label.as_str())).collect();
        let put = steps.iter().position(|s| s.2.starts_with("put /registry/configmaps/default/one")).expect("the put");
        let appends: Vec<usize> = (0..steps.len()).filter(|&i| steps[i].2.starts_with("append ")).collect();
        assert_eq!(appends.len(), 2, "{steps:#?}");
        assert!(appends.iter().all(|&i| i > put && steps[i].0.starts_with("etcd/") && steps[i].1.starts_with("etcd/")));
        assert!(steps.iter().any(|s| s.2.starts_with("ack ")), "{steps:#?}");
        assert_eq!(
            steps.iter().filter(|s| s.0 == "kube-apiserver" && s.0 == s.1).count(),
            0,
            "no raw notes: {steps:#?}"
        );
    }

    #[test]
    fn a_limit_cuts_the_sequence_and_no_write_draws_nothing() {
        let s = applied(3);
        let seq = sequence(&s.cluster, 5);
        assert_eq!(seq.steps.len(), 5);
        assert!(seq.lanes.iter().all(|l| {
            seq.steps.iter().any(|s| {
                s.from == seq.lanes.iter().position(|x| x == l).unwrap()
                    || s.to == seq.lanes.iter().position(|x| x == l).unwrap()
            })
        }));
        let fresh = Session::new(1);
        assert_eq!(sequence(&fresh.cluster, 100), Sequence::default());
    }

    #[test]
    fn deleting_a_pod_draws_its_container_stopped_and_its_key_deleted_from_etcd() {
        let mut s = applied(1);
        let pod = s.cluster.objects(Kind::Pod, "default")[0].name().to_string();
        s.execute(&Command::new(&format!("kubectl delete pod {pod} --wait=false")));
        s.execute(&Command::new("sim settle"));
        let seq = sequence(&s.cluster, 500);
        let labels: Vec<&str> = seq.steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels[0], format!("DELETE pods/{pod}"));
        assert_eq!(labels[1], format!("put /registry/pods/default/{pod}"), "marked for deletion first");
        assert!(
            seq.steps[0]
                .caption
                .ends_with(&format!("marked it for deletion in etcd at revision {}.", seq.steps[0].revision))
        );
        let at = |l: &str| labels.iter().position(|x| *x == l).unwrap_or_else(|| panic!("{l} not in {labels:#?}"));
        assert!(at("want 1, have 0: create 1") < at("stop container nginx"));
        assert!(at("stop container nginx") < at(&format!("delete /registry/pods/default/{pod}")));
        // The replacement runs at the end.
        assert!(at("stop container nginx") < at("start container nginx"));
    }
}
