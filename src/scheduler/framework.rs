//! The scheduling framework: what a plugin sees of a node and of the cluster, and what it may
//! answer.

use crate::api::meta::{LabelSelector, LabelSelectorRequirement, Labels};
use crate::api::{Node, Pod};
use crate::client::object_cache::FastKeys;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Requests that count when a container names none, for scoring (upstream's non-zero defaults).
pub const DEFAULT_CPU_MILLI: i64 = 100;
pub const DEFAULT_MEMORY_BYTES: i64 = 200 * 1024 * 1024;

const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// The scheduler's view of one node: the node and what is already placed on it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub node: Arc<Node>,
    /// The scheduler's number for the node, unique while it knows the node (see
    /// [`PodIndex::on_nodes`]).
    pub id: u32,
    pub requested_cpu: i64,
    pub requested_memory: i64,
    /// Requests with the non-zero defaults applied, used for scoring.
    pub nonzero_cpu: i64,
    pub nonzero_memory: i64,
    pub pods: i64,
    /// Host ports in use, as (protocol, port).
    pub used_ports: Vec<(String, i32)>,
    /// How many of the node's pods fall in each group of the scheduler's [`PodIndex`].
    pub pod_groups: HashMap<usize, u32, BuildHasherDefault<GroupIdHasher>>,
    /// The node's allocatable cpu (milli), memory (bytes) and pods, read once per node version.
    allocatable: (i64, i64, i64),
    /// The node's hostname and zone labels, read once per node version: topology spread asks
    /// for them for every node it scores.
    hostname: Option<String>,
    zone: Option<String>,
    /// Whether the node is cordoned, and whether it has any taint: the filters ask for every
    /// node they visit, and the answer here spares a look at the node object itself.
    unschedulable: bool,
    tainted: bool,
}

impl NodeInfo {
    pub fn new(node: Arc<Node>) -> Self {
        NodeInfo {
            allocatable: Self::allocatable_of(&node),
            hostname: node.metadata.labels.get(HOSTNAME_LABEL).cloned(),
            zone: node.metadata.labels.get(ZONE_LABEL).cloned(),
            unschedulable: node.spec.unschedulable,
            tainted: !node.spec.taints.is_empty(),
            node,
            id: 0,
            requested_cpu: 0,
            requested_memory: 0,
            nonzero_cpu: 0,
            nonzero_memory: 0,
            pods: 0,
            used_ports: Vec::new(),
            pod_groups: HashMap::default(),
        }
    }

    pub fn name(&self) -> &str {
        &self.node.metadata.name
    }

    fn allocatable_of(node: &Node) -> (i64, i64, i64) {
        (
            node.allocatable("cpu").map_or(0, |q| q.milli()),
            node.allocatable("memory").map_or(0, |q| q.value()),
            node.allocatable("pods").map_or(110, |q| q.value()),
        )
    }

    /// A new version of the node (its pods stay counted).
    pub fn set_node(&mut self, node: Arc<Node>) {
        self.allocatable = Self::allocatable_of(&node);
        self.hostname = node.metadata.labels.get(HOSTNAME_LABEL).cloned();
        self.zone = node.metadata.labels.get(ZONE_LABEL).cloned();
        self.unschedulable = node.spec.unschedulable;
        self.tainted = !node.spec.taints.is_empty();
        self.node = node;
    }

    pub fn allocatable_cpu(&self) -> i64 {
        self.allocatable.0
    }

    pub fn allocatable_memory(&self) -> i64 {
        self.allocatable.1
    }

    pub fn allocatable_pods(&self) -> i64 {
        self.allocatable.2
    }

    /// Counts a pod onto (`sign` = 1) or off (`sign` = -1) this node.
    pub fn account(&mut self, pod: &Pod, sign: i64) {
        let req = pod.requests();
        let (cpu, mem) = nonzero_requests(pod);
        self.requested_cpu += sign * req.cpu_milli;
        self.requested_memory += sign * req.memory_bytes;
        self.nonzero_cpu += sign * cpu;
        self.nonzero_memory += sign * mem;
        self.pods += sign;
        for (proto, port) in host_ports(pod) {
            if sign > 0 {
                self.used_ports.push((proto, port));
            } else if let Some(i) = self.used_ports.iter().position(|p| *p == (proto.clone(), port)) {
                self.used_ports.swap_remove(i);
            }
        }
    }

    /// Counts a pod of a [`PodIndex`] group onto (`sign` = 1) or off (`sign` = -1) this node.
    pub fn count_group(&mut self, group: usize, sign: i64) {
        let count = self.pod_groups.entry(group).or_default();
        *count = (*count as i64 + sign).max(0) as u32;
        if *count == 0 {
            self.pod_groups.remove(&group);
        }
    }

    /// How many of the node's pods are in any of `groups`.
    pub fn pods_in(&self, groups: &[usize]) -> i64 {
        groups.iter().map(|g| self.pod_groups.get(g).copied().unwrap_or(0) as i64).sum()
    }

    /// `spec.unschedulable` (cordoned).
    pub fn unschedulable(&self) -> bool {
        self.unschedulable
    }

    /// Whether `spec.taints` has any taint.
    pub fn tainted(&self) -> bool {
        self.tainted
    }

    /// The `kubernetes.io/hostname` label.
    pub fn hostname(&self) -> Option<&str> {
        self.hostname.as_deref()
    }

    pub fn label(&self, key: &str) -> Option<&str> {
        self.label_at(LabelKey::of(key))
    }

    /// The label under a key resolved once for many nodes.
    pub fn label_at(&self, key: LabelKey) -> Option<&str> {
        match key {
            LabelKey::Hostname => self.hostname.as_deref(),
            LabelKey::Zone => self.zone.as_deref(),
            LabelKey::Other(key) => self.node.metadata.labels.get(key).map(String::as_str),
        }
    }
}

/// A node label's key, told apart once from the two a [`NodeInfo`] keeps at hand: a plugin
/// asking hundreds of nodes for the same label compares the key's text once, not per node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKey<'a> {
    Hostname,
    Zone,
    Other(&'a str),
}

impl<'a> LabelKey<'a> {
    pub fn of(key: &'a str) -> Self {
        match key {
            HOSTNAME_LABEL => LabelKey::Hostname,
            ZONE_LABEL => LabelKey::Zone,
            _ => LabelKey::Other(key),
        }
    }
}

/// The least and the greatest of `scores` ((0, 0) for none), in one pass the compiler turns
/// into vector instructions (`Iterator::min` and `max` compare one score at a time through a
/// comparison function: at hundreds of nodes a plugin, that showed in profiles).
pub fn min_max(scores: &[i64]) -> (i64, i64) {
    if scores.is_empty() {
        return (0, 0);
    }
    scores.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &s| (lo.min(s), hi.max(s)))
}

/// A pod's requests with upstream's defaults for containers that name none.
pub fn nonzero_requests(pod: &Pod) -> (i64, i64) {
    pod.spec.containers.iter().fold((0, 0), |(cpu, mem), c| {
        let r = &c.resources.requests;
        (
            cpu + r.get("cpu").map_or(DEFAULT_CPU_MILLI, |q| q.milli()),
            mem + r.get("memory").map_or(DEFAULT_MEMORY_BYTES, |q| q.value()),
        )
    })
}

/// The host ports a pod's containers ask for.
pub fn host_ports(pod: &Pod) -> Vec<(String, i32)> {
    pod.spec
        .containers
        .iter()
        .flat_map(|c| c.ports.iter())
        .filter_map(|p| {
            let port = p.host_port.filter(|&hp| hp > 0)?;
            Some((p.protocol.clone().unwrap_or_else(|| "TCP".into()), port))
        })
        .collect()
}

/// Hashes [`PodIndex`] group ids, small integers, with one multiplication: scoring looks them
/// up for every node it visits, and the default hasher would cost more than the lookup.
#[derive(Clone, Copy, Debug, Default)]
pub struct GroupIdHasher(u64);

impl Hasher for GroupIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Counts by small integer ids (groups, nodes).
pub type CountsById<K> = HashMap<K, u32, BuildHasherDefault<GroupIdHasher>>;

/// Why a node cannot take a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The reasons, as FailedScheduling counts them (`Insufficient cpu`, ...).
    pub reasons: Vec<String>,
    /// Whether preempting other pods could never help (taints, affinity, node name...).
    pub unresolvable: bool,
}

impl Rejection {
    pub fn unresolvable(reason: impl Into<String>) -> Self {
        Rejection { reasons: vec![reason.into()], unresolvable: true }
    }
    pub fn unschedulable(reasons: Vec<String>) -> Self {
        Rejection { reasons, unresolvable: false }
    }
}

/// What PreFilter and PreScore see of the whole cluster, as the scheduler keeps it between
/// cycles (upstream's snapshot): every node, and the placed pods indexed by their labels.
pub struct Snapshot<'a> {
    pub nodes: &'a super::node_table::NodeTable,
    pub pods: &'a PodIndex,
}

/// A Filter extension point: can this node run this pod at all?
pub trait FilterPlugin {
    fn name(&self) -> &'static str;
    /// PreFilter: runs once per scheduling cycle, before any node is filtered, to work out what
    /// needs the whole cluster (counts per topology domain). The plugin keeps the result for
    /// this cycle's `filter` calls, as upstream keeps it in the cycle state.
    fn pre_filter(&mut self, _pod: &Pod, _cluster: &Snapshot) {}
    /// Whether, after `pre_filter`, the plugin lets every node through for this pod (what
    /// upstream's PreFilter reports as `Skip`): its `filter` is not called this cycle.
    fn skips(&self, _pod: &Pod) -> bool {
        false
    }
    fn filter(&self, pod: &Pod, node: &NodeInfo) -> Result<(), Rejection>;
    /// What VolumeBinding's PreFilter found of the pod's claims, before the cycle's PreFilter
    /// (only VolumeBinding keeps it).
    fn set_volumes(&mut self, _plan: &super::volume_binding::Plan) {}
}

/// A Score extension point: how good is this feasible node, 0 to 100?
pub trait ScorePlugin {
    fn name(&self) -> &'static str;
    fn weight(&self) -> i64;
    /// PreScore: runs once per scheduling cycle with the feasible nodes, in the order `score`
    /// and `normalize` will see them; what it works out is kept for this cycle.
    fn pre_score(&mut self, _pod: &Pod, _cluster: &Snapshot, _feasible: &[&NodeInfo]) {}
    /// Whether, after `pre_score`, every node would score 0 once normalized (upstream's
    /// PreScore `Skip`): the plugin adds nothing this cycle, so it is not asked per node.
    fn skips(&self, _pod: &Pod) -> bool {
        false
    }
    fn score(&self, pod: &Pod, node: &NodeInfo) -> i64;
    /// Scores every node, in order, into `out`: one call per cycle, so that the per-node
    /// calls are made inside the plugin rather than dispatched one by one.
    fn score_all(&self, pod: &Pod, nodes: &[&NodeInfo], out: &mut Vec<i64>) {
        out.extend(nodes.iter().map(|node| self.score(pod, node)));
    }
    /// Rescales raw scores across the feasible nodes to 0..=100 (default: leave them).
    fn normalize(&self, _scores: &mut [i64]) {}
}

/// Placed pods that share a namespace, labels and whether they are terminating. Selectors are
/// evaluated once per group, never once per pod; each [`NodeInfo`] counts its pods per group.
#[derive(Clone, Debug)]
pub struct PodGroup {
    pub namespace: String,
    pub labels: Labels,
    pub terminating: bool,
    pods: u32,
    /// How many of the group's pods each node runs, by [`NodeInfo::id`]: small and hot while
    /// one pod is scored against hundreds of nodes, where each node's own `pod_groups` would
    /// be a cold lookup.
    on_nodes: CountsById<u32>,
}

/// A placed pod with pod affinity or anti-affinity terms, which the scheduling of every other
/// pod must consult (upstream's PodsWithAffinity).
#[derive(Clone, Debug)]
pub struct AffinityPod {
    pub node: String,
    pub terms: Arc<PodAffinityTerms>,
}

/// The placed pods, indexed for the plugins that count pods across the cluster
/// (PodTopologySpread, InterPodAffinity). Kept up to date as pods are placed and removed.
#[derive(Debug, Default)]
pub struct PodIndex {
    groups: Vec<Option<PodGroup>>,
    free: Vec<usize>,
    /// namespace -> labels -> group id, [live, terminating].
    ids: HashMap<String, HashMap<Labels, [Option<usize>; 2], FastKeys>, FastKeys>,
    /// label key -> value -> the groups carrying that label.
    by_label: HashMap<String, HashMap<String, Vec<usize>, FastKeys>, FastKeys>,
    /// Pods with pod (anti-)affinity terms, by `namespace/name`.
    pub with_affinity: BTreeMap<String, AffinityPod>,
    with_required_anti_affinity: usize,
}

impl PodIndex {
    /// Counts a placed pod into its group; returns the group's id.
    pub fn add(&mut self, pod: &Pod) -> usize {
        let terminating = pod.metadata.deletion_timestamp.is_some();
        let meta = &pod.metadata;
        let slot = self
            .ids
            .get(&meta.namespace)
            .and_then(|by_labels| by_labels.get(&meta.labels))
            .and_then(|ids| ids[terminating as usize]);
        let id = match slot {
            Some(id) => id,
            None => {
                let group = PodGroup {
                    namespace: meta.namespace.clone(),
                    labels: Labels::clone(&meta.labels),
                    terminating,
                    pods: 0,
                    on_nodes: CountsById::default(),
                };
                let id = match self.free.pop() {
                    Some(id) => {
                        self.groups[id] = Some(group);
                        id
                    }
                    None => {
                        self.groups.push(Some(group));
                        self.groups.len() - 1
                    }
                };
                self.ids.entry(meta.namespace.clone()).or_default().entry(Labels::clone(&meta.labels)).or_default()
                    [terminating as usize] = Some(id);
                for (k, v) in &meta.labels {
                    self.by_label.entry(k.clone()).or_default().entry(v.clone()).or_default().push(id);
                }
                id
            }
        };
        if let Some(group) = self.groups[id].as_mut() {
            group.pods += 1;
        }
        id
    }

    /// Counts a pod out of its group, forgetting the group when it empties.
    pub fn remove(&mut self, id: usize) {
        let Some(group) = self.groups.get_mut(id).and_then(Option::as_mut) else { return };
        group.pods = group.pods.saturating_sub(1);
        if group.pods > 0 {
            return;
        }
        let Some(group) = self.groups[id].take() else { return };
        self.free.push(id);
        if let Some(by_labels) = self.ids.get_mut(&group.namespace) {
            if let Some(ids) = by_labels.get_mut(&group.labels) {
                ids[group.terminating as usize] = None;
                if ids.iter().all(Option::is_none) {
                    by_labels.remove(&group.labels);
                }
            }
            if by_labels.is_empty() {
                self.ids.remove(&group.namespace);
            }
        }
        for (k, v) in &group.labels {
            if let Some(values) = self.by_label.get_mut(k) {
                if let Some(list) = values.get_mut(v) {
                    list.retain(|&g| g != id);
                    if list.is_empty() {
                        values.remove(v);
                    }
                }
                if values.is_empty() {
                    self.by_label.remove(k);
                }
            }
        }
    }

    /// Counts a pod of `group` onto (`sign` = 1) or off (`sign` = -1) a node, both ways: in
    /// the node's counts per group and in the group's counts per node, which so agree.
    pub fn count_on(&mut self, info: &mut NodeInfo, group: usize, sign: i64) {
        info.count_group(group, sign);
        self.count_on_node(group, info.id, sign);
    }

    /// The group's side of [`PodIndex::count_on`]: its count on the node numbered `node`.
    fn count_on_node(&mut self, group: usize, node: u32, sign: i64) {
        let Some(group) = self.groups.get_mut(group).and_then(Option::as_mut) else { return };
        let count = group.on_nodes.entry(node).or_default();
        *count = (*count as i64 + sign).max(0) as u32;
        if *count == 0 {
            group.on_nodes.remove(&node);
        }
    }

    /// How many of a group's pods each node runs, by node number.
    pub fn on_nodes(&self, group: usize) -> Option<&CountsById<u32>> {
        self.group(group).map(|g| &g.on_nodes)
    }

    pub fn group(&self, id: usize) -> Option<&PodGroup> {
        self.groups.get(id).and_then(Option::as_ref)
    }

    /// The groups in a namespace `namespaces` accepts whose labels `selector` matches;
    /// terminating pods' groups only when `terminating` is true.
    pub fn matching(
        &self,
        selector: &LabelSelector,
        namespaces: &dyn Fn(&str) -> bool,
        terminating: bool,
    ) -> Vec<usize> {
        let with_label = |k: &str, v: &str| -> &[usize] {
            self.by_label.get(k).and_then(|values| values.get(v)).map_or(&[], Vec::as_slice)
        };
        // Narrow the search by a label every match must carry: the rarest of matchLabels,
        // or else the values of the first `In` requirement.
        let candidates: Vec<usize> = if !selector.match_labels.is_empty() {
            let rarest = selector.match_labels.iter().map(|(k, v)| with_label(k, v)).min_by_key(|l| l.len());
            rarest.unwrap_or(&[]).to_vec()
        } else if let Some(req) = selector.match_expressions.iter().find(|r| r.operator == "In") {
            let mut ids: Vec<usize> = req.values.iter().flat_map(|v| with_label(&req.key, v)).copied().collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        } else {
            (0..self.groups.len()).collect()
        };
        candidates
            .into_iter()
            .filter(|&id| {
                self.group(id).is_some_and(|g| {
                    (terminating || !g.terminating) && namespaces(&g.namespace) && selector.matches(&g.labels)
                })
            })
            .collect()
    }

    /// Notes a placed pod's pod (anti-)affinity terms.
    pub fn add_affinity_pod(&mut self, key: &str, node: &str, terms: Arc<PodAffinityTerms>) {
        self.remove_affinity_pod(key);
        if !terms.required_anti_affinity.is_empty() {
            self.with_required_anti_affinity += 1;
        }
        self.with_affinity.insert(key.to_string(), AffinityPod { node: node.to_string(), terms });
    }

    pub fn remove_affinity_pod(&mut self, key: &str) {
        if let Some(old) = self.with_affinity.remove(key) {
            if !old.terms.required_anti_affinity.is_empty() {
                self.with_required_anti_affinity -= 1;
            }
        }
    }

    /// Whether any placed pod has required anti-affinity terms.
    pub fn has_required_anti_affinity(&self) -> bool {
        self.with_required_anti_affinity > 0
    }
}

/// The label every namespace carries with its own name. The scheduler keeps no namespace
/// cache, so a `namespaceSelector` is matched against this label alone.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// One pod affinity or anti-affinity term, parsed: which pods it selects and over which
/// topology (upstream's framework.AffinityTerm).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AffinityTerm {
    /// `None` (no `labelSelector`) selects no pod; an empty selector selects every pod.
    pub selector: Option<LabelSelector>,
    pub namespaces: Vec<String>,
    /// An empty selector selects every namespace.
    pub namespace_selector: Option<LabelSelector>,
    pub topology_key: String,
}

impl AffinityTerm {
    pub fn selects_namespace(&self, namespace: &str) -> bool {
        self.namespaces.iter().any(|n| n == namespace)
            || self.namespace_selector.as_ref().is_some_and(|s| {
                s.match_labels.is_empty() && s.match_expressions.is_empty()
                    || s.matches(&Labels::from([(NAMESPACE_NAME_LABEL.to_string(), namespace.to_string())]))
            })
    }

    /// Whether the term selects a pod with these namespace and labels.
    pub fn matches(&self, namespace: &str, labels: &Labels) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(labels)) && self.selects_namespace(namespace)
    }

    /// Parses a `podAffinityTerm` of `pod`: namespaces default to the pod's own, and
    /// `matchLabelKeys`/`mismatchLabelKeys` join the selector with the pod's values.
    pub fn parse(term: &Value, pod: &Pod) -> AffinityTerm {
        let selector = |field: &str| {
            term.get(field)
                .filter(|v| !v.is_null())
                .and_then(|v| crate::api::value_de::from_value::<LabelSelector>(v).ok())
        };
        let strings = |field: &str| -> Vec<String> {
            term.get(field)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
                .unwrap_or_default()
        };
        let mut parsed = AffinityTerm {
            selector: selector("labelSelector"),
            namespaces: strings("namespaces"),
            namespace_selector: selector("namespaceSelector"),
            topology_key: term.get("topologyKey").and_then(Value::as_str).unwrap_or("").to_string(),
        };
        if parsed.namespaces.is_empty() && parsed.namespace_selector.is_none() {
            parsed.namespaces.push(pod.metadata.namespace.clone());
        }
        if let Some(sel) = parsed.selector.as_mut() {
            for (field, operator) in [("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")] {
                for key in strings(field) {
                    if let Some(value) = pod.metadata.labels.get(&key) {
                        sel.match_expressions.push(LabelSelectorRequirement {
                            key,
                            operator: operator.into(),
                            values: vec![value.clone()],
                        });
                    }
                }
            }
        }
        parsed
    }
}

/// A pod's `podAffinity` and `podAntiAffinity`, parsed (preferred terms with their weights).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodAffinityTerms {
    pub required_affinity: Vec<AffinityTerm>,
    pub required_anti_affinity: Vec<AffinityTerm>,
    pub preferred_affinity: Vec<(i64, AffinityTerm)>,
    pub preferred_anti_affinity: Vec<(i64, AffinityTerm)>,
}

impl PodAffinityTerms {
    /// The pod's terms, or `None` when it has none.
    pub fn of(pod: &Pod) -> Option<PodAffinityTerms> {
        let affinity = pod.spec.affinity.as_ref()?;
        let required = |path: &str| -> Vec<AffinityTerm> {
            let terms = affinity.pointer(path).and_then(Value::as_array);
            terms.into_iter().flatten().map(|t| AffinityTerm::parse(t, pod)).collect()
        };
        let preferred = |path: &str| -> Vec<(i64, AffinityTerm)> {
            let terms = affinity.pointer(path).and_then(Value::as_array);
            terms
                .into_iter()
                .flatten()
                .filter_map(|w| {
                    let weight = w.get("weight").and_then(Value::as_i64).unwrap_or(0);
                    Some((weight, AffinityTerm::parse(w.get("podAffinityTerm")?, pod)))
                })
                .collect()
        };
        let terms = PodAffinityTerms {
            required_affinity: required("/podAffinity/requiredDuringSchedulingIgnoredDuringExecution"),
            required_anti_affinity: required("/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution"),
            preferred_affinity: preferred("/podAffinity/preferredDuringSchedulingIgnoredDuringExecution"),
            preferred_anti_affinity: preferred("/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution"),
        };
        (terms != PodAffinityTerms::default()).then_some(terms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Time;

    #[test]
    fn min_max_finds_the_least_and_greatest_score_and_zeroes_for_none() {
        assert_eq!(min_max(&[]), (0, 0));
        assert_eq!(min_max(&[7]), (7, 7));
        assert_eq!(min_max(&[3, -2, 9, 9, 0]), (-2, 9));
        let many: Vec<i64> = (0..1000).map(|i| (i * 7919) % 1013 - 500).collect();
        assert_eq!(min_max(&many), (*many.iter().min().unwrap(), *many.iter().max().unwrap()));
    }

    fn pod(ns: &str, pairs: &[(&str, &str)]) -> Pod {
        let mut p = Pod::default();
        p.metadata.namespace = ns.into();
        p.metadata.labels = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        p
    }

    fn selector(pairs: &[(&str, &str)]) -> LabelSelector {
        LabelSelector {
            match_labels: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            match_expressions: Vec::new(),
        }
    }

    #[test]
    fn pods_with_the_same_namespace_and_labels_share_a_group_until_the_last_leaves() {
        let mut index = PodIndex::default();
        let a = index.add(&pod("default", &[("app", "web")]));
        let b = index.add(&pod("default", &[("app", "web")]));
        let other_ns = index.add(&pod("shop", &[("app", "web")]));
        assert_eq!(a, b);
        assert_ne!(a, other_ns);
        index.remove(a);
        assert!(index.group(a).is_some(), "one pod is still in it");
        index.remove(a);
        assert!(index.group(a).is_none());
        assert!(index.matching(&selector(&[("app", "web")]), &|_| true, true) == vec![other_ns]);
    }

    #[test]
    fn matching_groups_filter_by_namespace_selector_and_terminating() {
        let mut index = PodIndex::default();
        let web = index.add(&pod("default", &[("app", "web"), ("tier", "front")]));
        let db = index.add(&pod("default", &[("app", "db")]));
        let mut leaving = pod("default", &[("app", "web"), ("tier", "front")]);
        leaving.metadata.deletion_timestamp = Some(Time::ZERO);
        let terminating = index.add(&leaving);
        let ns = |n: &str| n == "default";
        assert_eq!(index.matching(&selector(&[("tier", "front")]), &ns, false), vec![web]);
        assert_eq!(index.matching(&selector(&[("tier", "front")]), &ns, true), vec![web, terminating]);
        let any_app = LabelSelector {
            match_expressions: vec![LabelSelectorRequirement {
                key: "app".into(),
                operator: "Exists".into(),
                values: vec![],
            }],
            ..Default::default()
        };
        assert_eq!(index.matching(&any_app, &ns, false), vec![web, db]);
        assert!(index.matching(&any_app, &|n| n == "shop", true).is_empty());
    }

    #[test]
    fn nodes_count_their_pods_per_group() {
        let mut info = NodeInfo::new(Arc::new(Node::default()));
        info.count_group(3, 1);
        info.count_group(3, 1);
        info.count_group(5, 1);
        assert_eq!(info.pods_in(&[3]), 2);
        assert_eq!(info.pods_in(&[3, 5, 7]), 3);
        info.count_group(5, -1);
        assert!(!info.pod_groups.contains_key(&5));
    }

    #[test]
    fn a_group_counts_its_pods_on_each_node_and_forgets_a_node_left_without_any() {
        let mut index = PodIndex::default();
        let web = index.add(&pod("default", &[("app", "web")]));
        index.count_on_node(web, 7, 1);
        index.count_on_node(web, 7, 1);
        index.count_on_node(web, 9, 1);
        index.count_on_node(web, 9, -1);
        let on_nodes = index.on_nodes(web).cloned().unwrap_or_default();
        assert_eq!(on_nodes.get(&7), Some(&2));
        assert!(!on_nodes.contains_key(&9));
        index.count_on_node(99, 7, 1);
        assert!(index.on_nodes(99).is_none(), "no such group: nothing counted");
    }

    #[test]
    fn affinity_terms_parse_required_and_weighted_preferred_terms() {
        let mut p = pod("default", &[("app", "web"), ("pod-template-hash", "abc")]);
        Arc::make_mut(&mut p.spec).affinity = Some(serde_json::json!({
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "matchLabelKeys": ["pod-template-hash"],
                    "topologyKey": "kubernetes.io/hostname"}],
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "topology.kubernetes.io/zone"}}]
            }
        }));
        let terms = PodAffinityTerms::of(&p).unwrap();
        let required = &terms.required_anti_affinity[0];
        assert_eq!(required.namespaces, vec!["default".to_string()]);
        assert!(required.matches("default", &p.metadata.labels));
        let other_revision = pod("default", &[("app", "web"), ("pod-template-hash", "xyz")]);
        assert!(!required.matches("default", &other_revision.metadata.labels), "matchLabelKeys pins the hash");
        assert_eq!(terms.preferred_anti_affinity[0].0, 50);
        assert!(terms.required_affinity.is_empty() && terms.preferred_affinity.is_empty());
        assert_eq!(PodAffinityTerms::of(&pod("default", &[])), None);
    }
}
