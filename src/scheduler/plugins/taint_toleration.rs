//! TaintToleration: a node's NoSchedule/NoExecute taints repel pods that do not tolerate them;
//! PreferNoSchedule taints only lower the node's score.

use crate::api::Pod;
pub use crate::api::helpers::tolerations::{tolerated, tolerates};
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, ScorePlugin};

pub struct TaintToleration;

impl FilterPlugin for TaintToleration {
    fn name(&self) -> &'static str {
        "TaintToleration"
    }

    fn filter(&self, pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        if !node.tainted() {
            return Ok(());
        }
        let untolerated = node
            .node
            .spec
            .taints
            .iter()
            .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
            .find(|t| !tolerated(pod, t));
        match untolerated {
            Some(t) => {
                Err(Rejection::unresolvable(format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value)))
            }
            None => Ok(()),
        }
    }
}

impl ScorePlugin for TaintToleration {
    fn name(&self) -> &'static str {
        "TaintToleration"
    }

    fn weight(&self) -> i64 {
        3
    }

    /// Raw score: how many PreferNoSchedule taints the pod does not tolerate.
    fn score(&self, pod: &Pod, node: &NodeInfo) -> i64 {
        if !node.tainted() {
            return 0;
        }
        node.node.spec.taints.iter().filter(|t| t.effect == "PreferNoSchedule" && !tolerated(pod, t)).count() as i64
    }

    /// Fewer intolerable taints is better: the best node gets 100.
    fn normalize(&self, scores: &mut [i64]) {
        let (_, max) = crate::scheduler::framework::min_max(scores);
        for s in scores.iter_mut() {
            *s = if max == 0 { 100 } else { 100 - *s * 100 / max };
        }
    }
}
