//! PodTopologySpread: `topologySpreadConstraints` keep a workload's pods evenly spread over
//! topology domains (nodes, zones, ...). A `DoNotSchedule` constraint filters: a node is out
//! when placing the pod there would leave its domain more than `maxSkew` matching pods above
//! the emptiest eligible domain. A `ScheduleAnyway` constraint only scores: fewer matching
//! pods in the node's domain, better. Pods of a ReplicaSet, StatefulSet or
//! ReplicationController that set no constraints get the system defaults (spread by hostname
//! with maxSkew 3 and by zone with maxSkew 5, both `ScheduleAnyway`).
//!
//! Counts come from the scheduler's pod index: a selector is evaluated once per group of pods
//! sharing labels, and each node knows how many pods of each group it runs.

use crate::api::Pod;
use crate::api::meta::{LabelSelector, LabelSelectorRequirement};
use crate::scheduler::framework::{CountsById, FilterPlugin, LabelKey, NodeInfo, Rejection, ScorePlugin, Snapshot};
use crate::scheduler::plugins::node_affinity::NodeAffinity;
use crate::scheduler::plugins::taint_toleration::TaintToleration;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

pub const CONSTRAINTS_NOT_MATCH: &str = "node(s) didn't match pod topology spread constraints";
pub const MISSING_REQUIRED_LABEL: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";
pub const HOSTNAME: &str = "kubernetes.io/hostname";
pub const ZONE: &str = "topology.kubernetes.io/zone";

/// One entry of `spec.topologySpreadConstraints`, as the API defines it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpreadConstraint {
    #[serde(default)]
    pub max_skew: i64,
    #[serde(default)]
    pub topology_key: String,
    #[serde(default)]
    pub when_unsatisfiable: String,
    #[serde(default)]
    pub label_selector: Option<LabelSelector>,
    #[serde(default)]
    pub min_domains: Option<i64>,
    #[serde(default)]
    pub match_label_keys: Vec<String>,
    /// `Honor` (default): only nodes that pass the pod's node selector and required node
    /// affinity count as domains. `Ignore`: every node does.
    #[serde(default)]
    pub node_affinity_policy: Option<String>,
    /// `Ignore` (default): tainted nodes count as domains too. `Honor`: only nodes whose
    /// taints the pod tolerates.
    #[serde(default)]
    pub node_taints_policy: Option<String>,
}

/// A constraint ready to evaluate for one pod.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    pub max_skew: i64,
    /// Static text for the system defaults' keys (worked out for every pod scheduled).
    pub topology_key: Cow<'static, str>,
    /// Which pods count; `None` counts none. Shared: the system defaults' two constraints
    /// have one selector.
    pub selector: Option<Arc<LabelSelector>>,
    pub min_domains: i64,
    pub honor_node_affinity: bool,
    pub honor_taints: bool,
}

impl Constraint {
    /// Whether `node` is one of the domains this constraint spreads over (node inclusion
    /// policies).
    fn includes(&self, pod: &Pod, node: &NodeInfo) -> bool {
        (!self.honor_node_affinity || NodeAffinity.filter(pod, node).is_ok())
            && (!self.honor_taints || TaintToleration.filter(pod, node).is_ok())
    }

    /// The pod index groups this constraint counts: running pods in the pod's namespace that
    /// its selector matches. An empty selector counts nothing, as upstream's does.
    fn groups(&self, pod: &Pod, cluster: &Snapshot) -> Vec<usize> {
        match &self.selector {
            Some(s) if !s.match_labels.is_empty() || !s.match_expressions.is_empty() => {
                cluster.pods.matching(s, &|ns| ns == pod.metadata.namespace, false)
            }
            _ => Vec::new(),
        }
    }

    fn selects(&self, pod: &Pod) -> bool {
        self.selector.as_ref().is_some_and(|s| s.matches(&pod.metadata.labels))
    }
}

/// The pod's own constraints with the given `whenUnsatisfiable`, `matchLabelKeys` joined into
/// their selectors with the pod's values.
pub fn constraints(pod: &Pod, when_unsatisfiable: &str) -> Vec<Constraint> {
    pod.spec
        .topology_spread_constraints
        .iter()
        .filter_map(|v| crate::api::value_de::from_value::<TopologySpreadConstraint>(v).ok())
        .filter(|c| c.when_unsatisfiable == when_unsatisfiable)
        .map(|c| {
            let mut selector = c.label_selector;
            if let Some(sel) = selector.as_mut() {
                for key in c.match_label_keys {
                    if let Some(value) = pod.metadata.labels.get(&key) {
                        sel.match_expressions.push(LabelSelectorRequirement {
                            key,
                            operator: "In".into(),
                            values: vec![value.clone()],
                        });
                    }
                }
            }
            Constraint {
                max_skew: c.max_skew,
                topology_key: c.topology_key.into(),
                selector: selector.map(Arc::new),
                min_domains: c.min_domains.unwrap_or(1),
                honor_node_affinity: c.node_affinity_policy.as_deref() != Some("Ignore"),
                honor_taints: c.node_taints_policy.as_deref() == Some("Honor"),
            }
        })
        .collect()
}

/// The system default constraints, for a pod that sets none and belongs to a ReplicaSet,
/// StatefulSet or ReplicationController. Upstream selects with the owning workloads' (and
/// Services') selectors; the pod's own labels stand in for them here, which for a
/// Deployment's pods is the same set (template labels plus `pod-template-hash`).
pub fn default_constraints(pod: &Pod) -> Vec<Constraint> {
    let owned = pod
        .metadata
        .owner_references
        .iter()
        .any(|o| matches!(o.kind.as_str(), "ReplicaSet" | "StatefulSet" | "ReplicationController"));
    if !owned || pod.metadata.labels.is_empty() {
        return Vec::new();
    }
    let selector = Arc::new(LabelSelector {
        match_labels: crate::api::Labels::clone(&pod.metadata.labels),
        match_expressions: Vec::new(),
    });
    [(HOSTNAME, 3), (ZONE, 5)]
        .into_iter()
        .map(|(key, max_skew)| Constraint {
            max_skew,
            topology_key: Cow::Borrowed(key),
            selector: Some(selector.clone()),
            min_domains: 1,
            honor_node_affinity: true,
            honor_taints: false,
        })
        .collect()
}

/// One constraint's matching pods per eligible domain, and the global minimum it is held to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DomainCounts {
    pub counts: HashMap<String, i64>,
}

impl DomainCounts {
    /// The global minimum: the fewest matching pods in any eligible domain, or 0 while there
    /// are fewer domains than `minDomains`. `None` when there is no domain at all.
    pub fn min(&self, min_domains: i64) -> Option<i64> {
        if (self.counts.len() as i64) < min_domains {
            return Some(0);
        }
        self.counts.values().copied().min()
    }
}

/// `matching pods in the domain + 1 if the pod matches itself - global minimum`.
pub fn skew(in_domain: i64, self_match: bool, global_min: i64) -> i64 {
    in_domain + self_match as i64 - global_min
}

/// The score one constraint gives a domain with `count` matching pods: fewer is better until
/// normalisation turns it around.
pub fn score_for_count(count: i64, max_skew: i64, weight: f64) -> f64 {
    count as f64 * weight + (max_skew - 1) as f64
}

/// `x.round() as i64` (halves away from zero), without the call into the C library that
/// `f64::round` is on a baseline x86-64 target: scoring rounds once for every node it scores.
pub fn round(x: f64) -> i64 {
    let whole = x as i64;
    let rest = x - whole as f64;
    if rest >= 0.5 {
        whole.saturating_add(1)
    } else if rest <= -0.5 {
        whole.saturating_sub(1)
    } else {
        whole
    }
}

/// How much a constraint weighs in scoring: `ln(domains + 2)`, so spreading over many
/// domains matters more than over few.
pub fn normalizing_weight(domains: usize) -> f64 {
    ((domains + 2) as f64).ln()
}

/// Counts each eligible domain's matching pods across every node (PreFilter). Nodes lacking
/// any of the constraints' topology keys are left out altogether.
pub fn count_domains(pod: &Pod, constraints: &[Constraint], cluster: &Snapshot) -> Vec<DomainCounts> {
    let groups: Vec<Vec<usize>> = constraints.iter().map(|c| c.groups(pod, cluster)).collect();
    let mut domains = vec![DomainCounts::default(); constraints.len()];
    for info in cluster.nodes.values() {
        if !constraints.iter().all(|c| info.label(&c.topology_key).is_some()) {
            continue;
        }
        for (i, c) in constraints.iter().enumerate() {
            if !c.includes(pod, info) {
                continue;
            }
            let value = info.label(&c.topology_key).unwrap_or_default();
            let n = info.pods_in(&groups[i]);
            match domains[i].counts.get_mut(value) {
                Some(count) => *count += n,
                None => {
                    domains[i].counts.insert(value.to_string(), n);
                }
            }
        }
    }
    domains
}

#[derive(Debug, Default)]
struct FilterState {
    constraints: Vec<Constraint>,
    domains: Vec<DomainCounts>,
    self_match: Vec<bool>,
}

#[derive(Debug, Default)]
struct ScoreState {
    /// Whether the pod has constraints to score by, its own or the system defaults.
    active: bool,
    /// The constraints some scored node has the topology key of.
    constraints: Vec<Constraint>,
    /// Whether nodes lacking a topology key are left out of scoring (not for system defaults,
    /// so nodes without a zone label are still spread by hostname).
    require_all_keys: bool,
    groups: Vec<Vec<usize>>,
    weights: Vec<f64>,
    /// Matching pods per domain, for the constraints not on hostname (those count per node).
    domains: Vec<DomainCounts>,
    /// Feasible nodes, by position, that get no score.
    ignored: Vec<bool>,
    /// Which constraints spread by hostname (worked out once, not per scored node).
    by_hostname: Vec<bool>,
    /// For a lone hostname constraint: its matching pods by node number, from the pod index
    /// (a small map, hot while every scored node looks itself up in it).
    host_counts: CountsById<u32>,
}

/// Whether the node has a label under every one of `keys`.
fn has_all_keys(node: &NodeInfo, keys: &[LabelKey]) -> bool {
    keys.iter().all(|k| node.label_at(*k).is_some())
}

#[derive(Debug, Default)]
pub struct PodTopologySpread {
    filtering: FilterState,
    scoring: ScoreState,
}

impl FilterPlugin for PodTopologySpread {
    fn name(&self) -> &'static str {
        "PodTopologySpread"
    }

    fn pre_filter(&mut self, pod: &Pod, cluster: &Snapshot) {
        let constraints = if pod.spec.topology_spread_constraints.is_empty() {
            Vec::new()
        } else {
            constraints(pod, "DoNotSchedule")
        };
        self.filtering = FilterState {
            domains: if constraints.is_empty() { Vec::new() } else { count_domains(pod, &constraints, cluster) },
            self_match: constraints.iter().map(|c| c.selects(pod)).collect(),
            constraints,
        };
    }

    /// No `DoNotSchedule` constraint.
    fn skips(&self, _pod: &Pod) -> bool {
        self.filtering.constraints.is_empty()
    }

    fn filter(&self, _pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        let state = &self.filtering;
        for (i, c) in state.constraints.iter().enumerate() {
            let Some(value) = node.label(&c.topology_key) else {
                return Err(Rejection::unresolvable(MISSING_REQUIRED_LABEL));
            };
            let Some(min) = state.domains[i].min(c.min_domains) else { continue };
            let in_domain = state.domains[i].counts.get(value).copied().unwrap_or(0);
            if skew(in_domain, state.self_match[i], min) > c.max_skew {
                return Err(Rejection::unschedulable(vec![CONSTRAINTS_NOT_MATCH.into()]));
            }
        }
        Ok(())
    }
}

impl ScorePlugin for PodTopologySpread {
    fn name(&self) -> &'static str {
        "PodTopologySpread"
    }

    fn weight(&self) -> i64 {
        2
    }

    fn pre_score(&mut self, pod: &Pod, cluster: &Snapshot, feasible: &[&NodeInfo]) {
        let own = !pod.spec.topology_spread_constraints.is_empty();
        let constraints = if own { constraints(pod, "ScheduleAnyway") } else { default_constraints(pod) };
        let mut state = ScoreState { active: !constraints.is_empty(), require_all_keys: own, ..ScoreState::default() };
        if own {
            let keys: Vec<LabelKey> = constraints.iter().map(|c| LabelKey::of(&c.topology_key)).collect();
            state.ignored = feasible.iter().map(|n| !has_all_keys(n, &keys)).collect();
        }
        let ignored = |i: usize| state.ignored.get(i).copied().unwrap_or(false);
        let scored = || feasible.iter().enumerate().filter(|(i, _)| !ignored(*i)).map(|(_, n)| *n);
        // Each constraint with its weight and the domains of the scored nodes (hostname domains
        // are the nodes themselves). One that no scored node has the key of scores nothing.
        let mut wanted = false;
        for c in constraints {
            let mut counts = HashMap::new();
            let size = if c.topology_key == HOSTNAME {
                if !scored().any(|n| n.hostname().is_some()) {
                    continue;
                }
                scored().count()
            } else {
                // The domains: the distinct values, plus one for nodes without the key (an
                // empty value and a missing one are the same domain).
                let mut missing = false;
                let key = LabelKey::of(&c.topology_key);
                for n in scored() {
                    match n.label_at(key) {
                        Some(v) => {
                            if !counts.contains_key(v) {
                                counts.insert(v.to_string(), 0);
                            }
                        }
                        None => missing = true,
                    }
                }
                if counts.is_empty() {
                    continue;
                }
                counts.len() + usize::from(missing && !counts.contains_key(""))
            };
            wanted |= !counts.is_empty();
            let same = state.constraints.iter().position(|o| o.selector == c.selector);
            let groups = match same {
                Some(i) => state.groups[i].clone(),
                None => c.groups(pod, cluster),
            };
            state.weights.push(normalizing_weight(size));
            state.domains.push(DomainCounts { counts });
            state.groups.push(groups);
            state.by_hostname.push(c.topology_key == HOSTNAME);
            state.constraints.push(c);
        }
        if let ([true], [groups]) = (&state.by_hostname[..], &state.groups[..]) {
            for on_nodes in groups.iter().filter_map(|g| cluster.pods.on_nodes(*g)) {
                if state.host_counts.is_empty() {
                    state.host_counts = on_nodes.clone();
                } else {
                    on_nodes.iter().for_each(|(node, n)| *state.host_counts.entry(*node).or_default() += n);
                }
            }
        }
        // Matching pods per domain, over every node, for the domains of the scored nodes.
        if wanted {
            let keys: Vec<LabelKey> = state.constraints.iter().map(|c| LabelKey::of(&c.topology_key)).collect();
            for info in cluster.nodes.values() {
                // (With the pod's own constraints every one is kept once a node is scored, so
                // these are all its keys, as upstream requires.)
                if state.require_all_keys && !has_all_keys(info, &keys) {
                    continue;
                }
                for (i, c) in state.constraints.iter().enumerate() {
                    if keys[i] == LabelKey::Hostname || !c.includes(pod, info) {
                        continue;
                    }
                    let Some(value) = info.label_at(keys[i]) else { continue };
                    if let Some(count) = state.domains[i].counts.get_mut(value) {
                        *count += info.pods_in(&state.groups[i]);
                    }
                }
            }
        }
        self.scoring = state;
    }

    /// Raw score: for each constraint the node's domain has a value for, its matching pods
    /// times the constraint's weight, plus `maxSkew - 1`. Lower is better. (Ignored nodes are
    /// zeroed by `normalize`.)
    fn score(&self, _pod: &Pod, node: &NodeInfo) -> i64 {
        let state = &self.scoring;
        let mut score = 0.0;
        for (i, c) in state.constraints.iter().enumerate() {
            let by_hostname = state.by_hostname[i];
            let label = if by_hostname { node.hostname() } else { node.label(&c.topology_key) };
            let Some(value) = label else { continue };
            let count = if by_hostname {
                node.pods_in(&state.groups[i])
            } else {
                state.domains[i].counts.get(value).copied().unwrap_or(0)
            };
            score += score_for_count(count, c.max_skew, state.weights[i]);
        }
        round(score)
    }

    /// As `score` for each node; the system defaults on nodes without zone labels leave one
    /// constraint, by hostname, which is scored without the per-constraint bookkeeping.
    fn score_all(&self, pod: &Pod, nodes: &[&NodeInfo], out: &mut Vec<i64>) {
        let state = &self.scoring;
        if let ([c], [true], [groups], [weight]) =
            (&state.constraints[..], &state.by_hostname[..], &state.groups[..], &state.weights[..])
        {
            let floor = (c.max_skew - 1) as f64;
            out.extend(nodes.iter().map(|node| match node.hostname() {
                Some(_) => {
                    let count = state.host_counts.get(&node.id).copied().unwrap_or(0) as i64;
                    debug_assert_eq!(count, node.pods_in(groups), "the pod index and the node disagree");
                    round(count as f64 * weight + floor)
                }
                None => 0,
            }));
            return;
        }
        out.extend(nodes.iter().map(|node| self.score(pod, node)));
    }

    /// `100 * (max + min - score) / max`: the node with fewest matching pods gets the most;
    /// ignored nodes get 0.
    fn normalize(&self, scores: &mut [i64]) {
        let state = &self.scoring;
        if !state.active {
            return;
        }
        let scale = |s: i64, min: i64, max: i64| if max == 0 { 100 } else { 100 * (max + min - s) / max };
        if !state.ignored.iter().any(|i| *i) {
            // No node ignored (always so for the system defaults): one plain pass each. Raw
            // scores take few values (most nodes run none of the pod's group), so a division is
            // only made when the value changes from the node before.
            let (min, max) = crate::scheduler::framework::min_max(scores);
            let mut last = (min, scale(min, min, max));
            for s in scores.iter_mut() {
                if *s != last.0 {
                    last = (*s, scale(*s, min, max));
                }
                *s = last.1;
            }
            return;
        }
        let ignored = |i: usize| state.ignored.get(i).copied().unwrap_or(false);
        let valid = || scores.iter().enumerate().filter(|(i, _)| !ignored(*i)).map(|(_, s)| *s);
        let (min, max) = (valid().min().unwrap_or(0), valid().max().unwrap_or(0));
        for (i, s) in scores.iter_mut().enumerate() {
            *s = if ignored(i) { 0 } else { scale(*s, min, max) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::meta::Labels;
    use crate::api::{Node, OwnerReference, Taint};
    use crate::scheduler::framework::PodIndex;
    use crate::scheduler::node_table::NodeTable;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn node(name: &str, zone: Option<&str>) -> NodeInfo {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n.metadata.labels = labels(&[(HOSTNAME, name)]).into();
        if let Some(z) = zone {
            n.metadata.labels.insert(ZONE.into(), z.into());
        }
        NodeInfo::new(Arc::new(n))
    }

    fn pod(name: &str, app: &str) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.labels = labels(&[("app", app)]).into();
        p
    }

    fn spread(p: &mut Pod, constraints: serde_json::Value) {
        Arc::make_mut(&mut p.spec).topology_spread_constraints = constraints.as_array().unwrap().clone();
    }

    /// Nodes and the pods placed on them, as the scheduler keeps them.
    struct Cluster {
        nodes: NodeTable,
        index: PodIndex,
    }

    impl Cluster {
        fn new(nodes: Vec<NodeInfo>) -> Self {
            let numbered = nodes.into_iter().zip(0..).map(|(mut n, id)| {
                n.id = id;
                n
            });
            Cluster { nodes: numbered.collect(), index: PodIndex::default() }
        }
        fn place(&mut self, p: &Pod, node: &str) {
            let g = self.index.add(p);
            let info = self.nodes.get_mut(node).unwrap();
            info.account(p, 1);
            self.index.count_on(info, g, 1);
        }
        fn snapshot(&self) -> Snapshot<'_> {
            Snapshot { nodes: &self.nodes, pods: &self.index }
        }
        fn filter(&self, p: &Pod) -> BTreeMap<String, Result<(), Rejection>> {
            let mut plugin = PodTopologySpread::default();
            plugin.pre_filter(p, &self.snapshot());
            self.nodes.iter().map(|(n, info)| (n.to_string(), plugin.filter(p, info))).collect()
        }
        fn scores(&self, p: &Pod) -> Vec<i64> {
            let mut plugin = PodTopologySpread::default();
            let feasible: Vec<&NodeInfo> = self.nodes.values().collect();
            plugin.pre_score(p, &self.snapshot(), &feasible);
            let mut scores: Vec<i64> = feasible.iter().map(|n| ScorePlugin::score(&plugin, p, n)).collect();
            let mut all = Vec::new();
            plugin.score_all(p, &feasible, &mut all);
            assert_eq!(all, scores, "scoring every node at once agrees with scoring them one by one");
            plugin.normalize(&mut scores);
            scores
        }
    }

    fn hostname_spread(max_skew: i64) -> serde_json::Value {
        json!([{"maxSkew": max_skew, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}}}])
    }

    #[test]
    fn rounding_matches_the_standard_librarys_halves_away_from_zero() {
        let mut samples = vec![0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, 4503599627370495.5, 1e300, -1e300];
        samples.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MAX, f64::MIN_POSITIVE]);
        samples.extend((0..20_000).map(|i| (i as f64 - 10_000.0) * 0.037 + normalizing_weight(i % 5000)));
        for x in samples {
            assert_eq!(round(x), x.round() as i64, "{x}");
        }
    }

    #[test]
    fn skew_is_the_domains_matching_pods_plus_the_pod_itself_minus_the_global_minimum() {
        assert_eq!(skew(2, true, 1), 2);
        assert_eq!(skew(2, false, 1), 1);
        assert_eq!(skew(0, true, 0), 1);
    }

    #[test]
    fn fewer_domains_than_min_domains_hold_the_global_minimum_at_zero() {
        let d = DomainCounts { counts: [("a".to_string(), 2), ("b".to_string(), 3)].into() };
        assert_eq!(d.min(1), Some(2));
        assert_eq!(d.min(3), Some(0));
        assert_eq!(DomainCounts::default().min(1), Some(0), "no domain at all: fewer than one");
    }

    #[test]
    fn a_node_whose_domain_would_exceed_max_skew_is_filtered_out() {
        let mut c = Cluster::new(vec![node("w1", None), node("w2", None), node("w3", None)]);
        c.place(&pod("a", "web"), "w1");
        c.place(&pod("b", "web"), "w2");
        c.place(&pod("other", "db"), "w3");
        let mut incoming = pod("c", "web");
        spread(&mut incoming, hostname_spread(1));
        let result = c.filter(&incoming);
        let rejected = Rejection::unschedulable(vec![CONSTRAINTS_NOT_MATCH.into()]);
        assert_eq!(result["w1"], Err(rejected.clone()));
        assert_eq!(result["w2"], Err(rejected));
        assert_eq!(result["w3"], Ok(()), "the db pod does not count");
    }

    #[test]
    fn a_node_without_the_topology_key_is_rejected_as_missing_the_label() {
        let mut c = Cluster::new(vec![node("w1", Some("a")), node("w2", None)]);
        c.place(&pod("a", "web"), "w1");
        let mut incoming = pod("c", "web");
        spread(
            &mut incoming,
            json!([{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}}}]),
        );
        let result = c.filter(&incoming);
        assert_eq!(result["w2"], Err(Rejection::unresolvable(MISSING_REQUIRED_LABEL)));
        assert_eq!(result["w1"], Ok(()), "the only zone is also the emptiest");
    }

    #[test]
    fn tainted_nodes_count_as_empty_domains_unless_the_taints_policy_is_honor() {
        let mut cp = node("cp", None);
        let mut tainted = (*cp.node).clone();
        tainted.spec.taints = vec![Taint {
            key: "node-role.kubernetes.io/control-plane".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        }];
        cp.set_node(Arc::new(tainted));
        let mut c = Cluster::new(vec![cp, node("w1", None), node("w2", None)]);
        c.place(&pod("a", "web"), "w1");
        c.place(&pod("b", "web"), "w2");
        let mut incoming = pod("c", "web");
        spread(&mut incoming, hostname_spread(1));
        assert!(c.filter(&incoming)["w1"].is_err(), "the empty control-plane node holds the minimum at 0");
        let mut honoring = pod("c", "web");
        let mut constraints = hostname_spread(1);
        constraints[0]["nodeTaintsPolicy"] = json!("Honor");
        spread(&mut honoring, constraints);
        assert_eq!(c.filter(&honoring)["w1"], Ok(()));
    }

    #[test]
    fn match_label_keys_narrow_the_selector_to_the_pods_own_values() {
        let mut p = pod("c", "web");
        p.metadata.labels.insert("pod-template-hash".into(), "abc".into());
        spread(
            &mut p,
            json!([{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["pod-template-hash"]}]),
        );
        let c = &constraints(&p, "ScheduleAnyway")[0];
        let mut old = pod("old", "web");
        old.metadata.labels.insert("pod-template-hash".into(), "xyz".into());
        assert!(!c.selects(&old));
        assert!(c.selects(&p));
        assert!(constraints(&p, "DoNotSchedule").is_empty());
    }

    #[test]
    fn replica_set_pods_without_constraints_get_the_system_defaults() {
        let mut p = pod("c", "web");
        assert!(default_constraints(&p).is_empty(), "a bare pod is not spread");
        p.metadata.owner_references =
            vec![OwnerReference { kind: "ReplicaSet".into(), name: "web-1".into(), ..Default::default() }].into();
        let d = default_constraints(&p);
        assert_eq!((d[0].topology_key.as_ref(), d[0].max_skew), (HOSTNAME, 3));
        assert_eq!((d[1].topology_key.as_ref(), d[1].max_skew), (ZONE, 5));
    }

    #[test]
    fn scoring_prefers_the_nodes_with_fewer_matching_pods() {
        let mut c = Cluster::new(vec![node("w1", None), node("w2", None), node("w3", None)]);
        let mut owned = pod("a", "web");
        owned.metadata.owner_references =
            vec![OwnerReference { kind: "ReplicaSet".into(), ..Default::default() }].into();
        c.place(&owned, "w1");
        c.place(&owned, "w1");
        c.place(&owned, "w2");
        // Three domains: weight ln(5); raw scores 2*1.609+2=5, 1.609+2=4 (rounded), 2.
        assert_eq!(c.scores(&owned), vec![100 * (5 + 2 - 5) / 5, 100 * (5 + 2 - 4) / 5, 100]);
        // No node has a zone label: the zone default is skipped, not every node ignored.
        assert_eq!(c.scores(&pod("bare", "web")), vec![0, 0, 0], "no constraints, no score");
    }

    #[test]
    fn own_schedule_anyway_constraints_ignore_nodes_without_the_key() {
        let mut c = Cluster::new(vec![node("w1", Some("a")), node("w2", Some("b")), node("w3", None)]);
        c.place(&pod("x", "web"), "w1");
        let mut p = pod("c", "web");
        spread(
            &mut p,
            json!([{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": "web"}}}]),
        );
        // Zone weight ln(4): a = 1.386 -> 1, b = 0; normalized 100*(1+0-s)/1.
        assert_eq!(c.scores(&p), vec![0, 100, 0]);
    }
}
