//! NodeAffinity: `nodeSelector` and required node affinity decide where a pod may go;
//! preferred node affinity adds to a node's score.

use crate::api::Pod;
pub use crate::api::helpers::node_affinity::{fits, required_node_names};
use crate::api::helpers::node_affinity::{preferred_terms, required_terms, term_matches};
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, ScorePlugin};
use serde_json::Value;

pub struct NodeAffinity;

impl FilterPlugin for NodeAffinity {
    fn name(&self) -> &'static str {
        "NodeAffinity"
    }

    /// Nothing to match: no nodeSelector and no required terms.
    fn skips(&self, pod: &Pod) -> bool {
        pod.spec.node_selector.is_empty() && required_terms(&pod.spec).is_none()
    }

    fn filter(&self, pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        if fits(&pod.spec, &node.node.metadata.labels, node.name()) {
            Ok(())
        } else {
            Err(Rejection::unresolvable("node(s) didn't match Pod's node affinity/selector"))
        }
    }
}

impl ScorePlugin for NodeAffinity {
    fn name(&self) -> &'static str {
        "NodeAffinity"
    }

    fn weight(&self) -> i64 {
        2
    }

    /// No preferred term: every node scores 0.
    fn skips(&self, pod: &Pod) -> bool {
        preferred_terms(&pod.spec).is_none_or(|prefs| prefs.is_empty())
    }

    /// Raw score: the summed weights of the preferred terms this node matches.
    fn score(&self, pod: &Pod, node: &NodeInfo) -> i64 {
        let Some(prefs) = preferred_terms(&pod.spec) else {
            return 0;
        };
        prefs
            .iter()
            .filter(|p| p.get("preference").is_some_and(|t| term_matches(t, &node.node.metadata.labels, node.name())))
            .map(|p| p.get("weight").and_then(Value::as_i64).unwrap_or(0))
            .sum()
    }

    fn normalize(&self, scores: &mut [i64]) {
        let (_, max) = crate::scheduler::framework::min_max(scores);
        for s in scores.iter_mut() {
            *s = if max == 0 { 0 } else { *s * 100 / max };
        }
    }
}
