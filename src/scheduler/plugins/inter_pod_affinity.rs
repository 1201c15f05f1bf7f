//! InterPodAffinity: `podAffinity` puts a pod in the same topology domain (node, zone, ...) as
//! pods its terms select; `podAntiAffinity` keeps it out of domains that have them. Required
//! terms filter, and so do placed pods' required anti-affinity terms that select the incoming
//! pod (anti-affinity is symmetric). Preferred terms, of the pod and of placed pods, score.
//!
//! Counts come from the scheduler's pod index: a term's selector is evaluated once per group of
//! pods sharing labels, and each node knows how many pods of each group it runs.

use crate::api::Pod;
use crate::scheduler::framework::{
    AffinityTerm, FilterPlugin, NodeInfo, PodAffinityTerms, Rejection, ScorePlugin, Snapshot,
};
use std::collections::HashMap;

pub const AFFINITY_RULES_NOT_MATCH: &str = "node(s) didn't match pod affinity rules";
pub const ANTI_AFFINITY_RULES_NOT_MATCH: &str = "node(s) didn't match pod anti-affinity rules";
pub const EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: &str = "node(s) didn't satisfy existing pods anti-affinity rules";

/// What a placed pod's required affinity term adds to the score of its domain when it selects
/// the incoming pod (upstream's hardPodAffinityWeight).
const HARD_POD_AFFINITY_WEIGHT: i64 = 1;

/// A number per topology domain: topology key -> value -> count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopologyCounts(HashMap<String, HashMap<String, i64>>);

impl TopologyCounts {
    pub fn get(&self, key: &str, value: &str) -> i64 {
        self.0.get(key).and_then(|values| values.get(value)).copied().unwrap_or(0)
    }

    /// Adds `n` to the domain `node` is in for `key`, if the node has that label.
    pub fn add_at(&mut self, node: &NodeInfo, key: &str, n: i64) {
        let Some(value) = node.label(key) else { return };
        let values = match self.0.get_mut(key) {
            Some(values) => values,
            None => self.0.entry(key.to_string()).or_default(),
        };
        match values.get_mut(value) {
            Some(count) => *count += n,
            None => {
                values.insert(value.to_string(), n);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.values().all(HashMap::is_empty)
    }

    /// The sum over every topology key of the node's domain's number.
    pub fn sum_at(&self, node: &NodeInfo) -> i64 {
        self.0.iter().filter_map(|(key, values)| values.get(node.label(key)?)).sum()
    }
}

/// The pod index groups a term selects: pods in its namespaces that its selector matches,
/// terminating ones included.
fn groups(term: &AffinityTerm, cluster: &Snapshot) -> Vec<usize> {
    match &term.selector {
        Some(selector) => cluster.pods.matching(selector, &|ns| term.selects_namespace(ns), true),
        None => Vec::new(),
    }
}

fn selects(term: &AffinityTerm, pod: &Pod) -> bool {
    term.matches(&pod.metadata.namespace, &pod.metadata.labels)
}

#[derive(Debug, Default)]
struct FilterState {
    terms: PodAffinityTerms,
    /// Pods matching all the pod's required affinity terms, per domain of each term's key.
    affinity: TopologyCounts,
    /// Pods matching each required anti-affinity term, per domain of its key.
    anti_affinity: TopologyCounts,
    /// Placed pods whose required anti-affinity selects this pod, per domain of their keys.
    existing_anti_affinity: TopologyCounts,
    /// Whether the pod matches all of its own required affinity terms.
    matches_own_affinity: bool,
}

#[derive(Debug, Default)]
pub struct InterPodAffinity {
    filtering: FilterState,
    scores: TopologyCounts,
}

impl InterPodAffinity {
    /// Whether the node's domains hold pods for every required affinity term. The first pod of
    /// a group that wants to be with its own kind may go anywhere while no pod matches yet.
    fn satisfies_affinity(&self, node: &NodeInfo) -> bool {
        let state = &self.filtering;
        let mut pods_exist = true;
        for term in &state.terms.required_affinity {
            let Some(value) = node.label(&term.topology_key) else { return false };
            if state.affinity.get(&term.topology_key, value) <= 0 {
                pods_exist = false;
            }
        }
        pods_exist || (state.affinity.is_empty() && state.matches_own_affinity)
    }

    fn satisfies_anti_affinity(&self, node: &NodeInfo) -> bool {
        let state = &self.filtering;
        state.anti_affinity.is_empty()
            || !state.terms.required_anti_affinity.iter().any(|term| {
                node.label(&term.topology_key).is_some_and(|v| state.anti_affinity.get(&term.topology_key, v) > 0)
            })
    }

    fn satisfies_existing_anti_affinity(&self, node: &NodeInfo) -> bool {
        let counts = &self.filtering.existing_anti_affinity;
        counts.is_empty() || !node.node.metadata.labels.iter().any(|(k, v)| counts.get(k, v) > 0)
    }
}

impl FilterPlugin for InterPodAffinity {
    fn name(&self) -> &'static str {
        "InterPodAffinity"
    }

    fn pre_filter(&mut self, pod: &Pod, cluster: &Snapshot) {
        let terms = PodAffinityTerms::of(pod).unwrap_or_default();
        let mut state = FilterState::default();
        // Placed pods whose required anti-affinity selects the incoming pod.
        if cluster.pods.has_required_anti_affinity() {
            for placed in cluster.pods.with_affinity.values() {
                let Some(node) = cluster.nodes.get(&placed.node) else { continue };
                for term in placed.terms.required_anti_affinity.iter().filter(|t| selects(t, pod)) {
                    state.existing_anti_affinity.add_at(node, &term.topology_key, 1);
                }
            }
        }
        // Pods matching the incoming pod's required terms, per domain, across every node.
        if !terms.required_affinity.is_empty() || !terms.required_anti_affinity.is_empty() {
            let mut with_all: Vec<usize> = match terms.required_affinity.first() {
                Some(first) => groups(first, cluster),
                None => Vec::new(),
            };
            with_all.retain(|&id| {
                let group = cluster.pods.group(id);
                group.is_some_and(|g| terms.required_affinity.iter().all(|t| t.matches(&g.namespace, &g.labels)))
            });
            let anti: Vec<Vec<usize>> = terms.required_anti_affinity.iter().map(|t| groups(t, cluster)).collect();
            for info in cluster.nodes.values() {
                let n = info.pods_in(&with_all);
                if n > 0 {
                    for term in &terms.required_affinity {
                        state.affinity.add_at(info, &term.topology_key, n);
                    }
                }
                for (term, ids) in terms.required_anti_affinity.iter().zip(&anti) {
                    let n = info.pods_in(ids);
                    if n > 0 {
                        state.anti_affinity.add_at(info, &term.topology_key, n);
                    }
                }
            }
        }
        state.matches_own_affinity = terms.required_affinity.iter().all(|t| selects(t, pod));
        state.terms = terms;
        self.filtering = state;
    }

    /// No required term of its own, and no placed pod's required anti-affinity selects it.
    fn skips(&self, _pod: &Pod) -> bool {
        let state = &self.filtering;
        state.terms.required_affinity.is_empty()
            && state.terms.required_anti_affinity.is_empty()
            && state.existing_anti_affinity.is_empty()
    }

    fn filter(&self, _pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        if !self.satisfies_affinity(node) {
            return Err(Rejection::unresolvable(AFFINITY_RULES_NOT_MATCH));
        }
        if !self.satisfies_anti_affinity(node) {
            return Err(Rejection::unschedulable(vec![ANTI_AFFINITY_RULES_NOT_MATCH.into()]));
        }
        if !self.satisfies_existing_anti_affinity(node) {
            return Err(Rejection::unschedulable(vec![EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH.into()]));
        }
        Ok(())
    }
}

impl ScorePlugin for InterPodAffinity {
    fn name(&self) -> &'static str {
        "InterPodAffinity"
    }

    fn weight(&self) -> i64 {
        2
    }

    /// Per domain: the weights of the pod's preferred terms times the pods each selects there
    /// (anti-affinity subtracting), plus the terms of placed pods that select this pod.
    fn pre_score(&mut self, pod: &Pod, cluster: &Snapshot, _feasible: &[&NodeInfo]) {
        let mut scores = TopologyCounts::default();
        let terms = PodAffinityTerms::of(pod).unwrap_or_default();
        let preferred: Vec<(i64, &AffinityTerm, Vec<usize>)> = (terms.preferred_affinity.iter().map(|(w, t)| (*w, t)))
            .chain(terms.preferred_anti_affinity.iter().map(|(w, t)| (-*w, t)))
            .map(|(w, t)| (w, t, groups(t, cluster)))
            .collect();
        if !preferred.is_empty() {
            for info in cluster.nodes.values() {
                for (weight, term, ids) in &preferred {
                    let n = info.pods_in(ids);
                    if n > 0 {
                        scores.add_at(info, &term.topology_key, weight * n);
                    }
                }
            }
        }
        for placed in cluster.pods.with_affinity.values() {
            let Some(node) = cluster.nodes.get(&placed.node) else { continue };
            let t = &placed.terms;
            let weighted = (t.required_affinity.iter().map(|term| (HARD_POD_AFFINITY_WEIGHT, term)))
                .chain(t.preferred_affinity.iter().map(|(w, term)| (*w, term)))
                .chain(t.preferred_anti_affinity.iter().map(|(w, term)| (-*w, term)));
            for (weight, term) in weighted {
                if selects(term, pod) {
                    scores.add_at(node, &term.topology_key, weight);
                }
            }
        }
        self.scores = scores;
    }

    /// No domain counts anything: every node scores 0, which normalizes to 0.
    fn skips(&self, _pod: &Pod) -> bool {
        self.scores.is_empty()
    }

    fn score(&self, _pod: &Pod, node: &NodeInfo) -> i64 {
        self.scores.sum_at(node)
    }

    /// Min-max scaling to 0..=100; all equal gives 0.
    fn normalize(&self, scores: &mut [i64]) {
        let (min, max) = crate::scheduler::framework::min_max(scores);
        for s in scores.iter_mut() {
            *s = if max > min { (100.0 * ((*s - min) as f64 / (max - min) as f64)) as i64 } else { 0 };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Node;
    use crate::api::meta::Labels;
    use crate::scheduler::framework::PodIndex;
    use crate::scheduler::node_table::NodeTable;
    use serde_json::json;
    use std::sync::Arc;

    const HOSTNAME: &str = "kubernetes.io/hostname";

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn node(name: &str) -> NodeInfo {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n.metadata.labels = labels(&[(HOSTNAME, name)]).into();
        NodeInfo::new(Arc::new(n))
    }

    fn pod(ns: &str, name: &str, app: &str, affinity: Option<serde_json::Value>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = ns.into();
        p.metadata.labels = labels(&[("app", app)]).into();
        Arc::make_mut(&mut p.spec).affinity = affinity;
        p
    }

    fn term(app: &str) -> serde_json::Value {
        json!({"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME})
    }

    fn required(kind: &str, app: &str) -> Option<serde_json::Value> {
        Some(json!({kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term(app)]}}))
    }

    fn preferred(kind: &str, app: &str, weight: i64) -> Option<serde_json::Value> {
        Some(json!({kind: {"preferredDuringSchedulingIgnoredDuringExecution":
            [{"weight": weight, "podAffinityTerm": term(app)}]}}))
    }

    struct Cluster {
        nodes: NodeTable,
        index: PodIndex,
    }

    impl Cluster {
        fn new(names: &[&str]) -> Self {
            Cluster { nodes: names.iter().map(|n| node(n)).collect(), index: PodIndex::default() }
        }
        fn place(&mut self, p: &Pod, node: &str) {
            let g = self.index.add(p);
            self.nodes.get_mut(node).unwrap().count_group(g, 1);
            if let Some(terms) = PodAffinityTerms::of(p) {
                self.index.add_affinity_pod(
                    &format!("{}/{}", p.metadata.namespace, p.metadata.name),
                    node,
                    Arc::new(terms),
                );
            }
        }
        fn snapshot(&self) -> Snapshot<'_> {
            Snapshot { nodes: &self.nodes, pods: &self.index }
        }
        /// Each node's rejection reason, or "ok".
        fn filter(&self, p: &Pod) -> Vec<String> {
            let mut plugin = InterPodAffinity::default();
            plugin.pre_filter(p, &self.snapshot());
            self.nodes
                .values()
                .map(|n| plugin.filter(p, n).map_or_else(|r| r.reasons[0].clone(), |_| "ok".into()))
                .collect()
        }
        fn scores(&self, p: &Pod) -> Vec<i64> {
            let mut plugin = InterPodAffinity::default();
            let feasible: Vec<&NodeInfo> = self.nodes.values().collect();
            plugin.pre_score(p, &self.snapshot(), &feasible);
            let mut scores: Vec<i64> = feasible.iter().map(|n| ScorePlugin::score(&plugin, p, n)).collect();
            plugin.normalize(&mut scores);
            scores
        }
    }

    #[test]
    fn a_term_selects_pods_of_the_pods_own_namespace_unless_it_names_others() {
        let p = pod("shop", "cache", "cache", None);
        let t = AffinityTerm::parse(&term("web"), &p);
        assert!(t.matches("shop", &labels(&[("app", "web")])));
        assert!(!t.matches("default", &labels(&[("app", "web")])));
        let all = AffinityTerm::parse(
            &json!({"labelSelector": {"matchLabels": {"app": "web"}},
            "namespaceSelector": {}, "topologyKey": HOSTNAME}),
            &p,
        );
        assert!(all.matches("default", &labels(&[("app", "web")])));
        let named = AffinityTerm::parse(
            &json!({"labelSelector": {}, "namespaceSelector":
            {"matchLabels": {"kubernetes.io/metadata.name": "default"}}, "topologyKey": HOSTNAME}),
            &p,
        );
        assert!(named.matches("default", &labels(&[])));
        assert!(!named.matches("shop", &labels(&[])));
    }

    #[test]
    fn a_term_without_a_label_selector_selects_no_pod() {
        let p = pod("default", "x", "x", None);
        let t = AffinityTerm::parse(&json!({"topologyKey": HOSTNAME}), &p);
        assert!(!t.matches("default", &labels(&[("app", "web")])));
    }

    #[test]
    fn required_anti_affinity_keeps_a_pod_off_nodes_running_a_match() {
        let mut c = Cluster::new(&["w1", "w2", "w3"]);
        c.place(&pod("default", "web-1", "web", None), "w1");
        c.place(&pod("other", "web-x", "web", None), "w3");
        let incoming = pod("default", "web-2", "web", required("podAntiAffinity", "web"));
        assert_eq!(c.filter(&incoming), ["node(s) didn't match pod anti-affinity rules", "ok", "ok"]);
    }

    #[test]
    fn placed_pods_anti_affinity_repels_the_pods_it_selects() {
        let mut c = Cluster::new(&["w1", "w2"]);
        c.place(&pod("default", "loner", "loner", required("podAntiAffinity", "web")), "w1");
        assert_eq!(
            c.filter(&pod("default", "web-1", "web", None)),
            ["node(s) didn't satisfy existing pods anti-affinity rules", "ok"]
        );
        assert_eq!(c.filter(&pod("default", "db-1", "db", None)), ["ok", "ok"]);
    }

    #[test]
    fn required_affinity_co_locates_with_a_matching_pod() {
        let mut c = Cluster::new(&["w1", "w2", "w3"]);
        c.place(&pod("default", "web-1", "web", None), "w2");
        let cache = pod("default", "cache", "cache", required("podAffinity", "web"));
        let no = "node(s) didn't match pod affinity rules";
        assert_eq!(c.filter(&cache), [no, "ok", no]);
        assert_eq!(Cluster::new(&["w1"]).filter(&cache), [no], "no web pod anywhere: nowhere to go");
    }

    #[test]
    fn the_first_pod_of_a_self_affine_group_may_go_anywhere() {
        let c = Cluster::new(&["w1", "w2"]);
        let first = pod("default", "web-1", "web", required("podAffinity", "web"));
        assert_eq!(c.filter(&first), ["ok", "ok"]);
    }

    #[test]
    fn preferred_terms_score_domains_by_weight_and_matching_pods() {
        let mut c = Cluster::new(&["w1", "w2", "w3"]);
        c.place(&pod("default", "web-1", "web", None), "w1");
        c.place(&pod("default", "web-2", "web", None), "w1");
        c.place(&pod("default", "web-3", "web", None), "w2");
        assert_eq!(c.scores(&pod("default", "c", "cache", preferred("podAffinity", "web", 10))), [100, 50, 0]);
        assert_eq!(c.scores(&pod("default", "c", "cache", preferred("podAntiAffinity", "web", 10))), [0, 50, 100]);
        assert_eq!(c.scores(&pod("default", "c", "cache", None)), [0, 0, 0]);
    }

    #[test]
    fn placed_pods_preferred_and_required_terms_score_the_incoming_pod() {
        let mut c = Cluster::new(&["w1", "w2"]);
        c.place(&pod("default", "fan", "fan", preferred("podAffinity", "web", 5)), "w2");
        assert_eq!(c.scores(&pod("default", "web-1", "web", None)), [0, 100]);
        let mut c = Cluster::new(&["w1", "w2"]);
        c.place(&pod("default", "shy", "shy", preferred("podAntiAffinity", "web", 5)), "w2");
        assert_eq!(c.scores(&pod("default", "web-1", "web", None)), [100, 0]);
    }
}
