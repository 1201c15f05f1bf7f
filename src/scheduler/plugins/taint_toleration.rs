//! TaintToleration: a node's NoSchedule/NoExecute taints repel pods that do not tolerate them;
//! PreferNoSchedule taints only lower the node's score.

use crate::api::{Pod, Taint, Toleration};
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, ScorePlugin};

pub struct TaintToleration;

/// Whether a toleration matches a taint (key, operator, value and effect).
pub fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    if !t.effect.is_empty() && t.effect != taint.effect {
        return false;
    }
    match t.operator.as_deref().unwrap_or("Equal") {
        "Exists" => t.key.is_empty() || t.key == taint.key,
        _ => t.key == taint.key && t.value == taint.value,
    }
}

pub fn tolerated(pod: &Pod, taint: &Taint) -> bool {
    pod.spec.tolerations.iter().any(|t| tolerates(t, taint))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint { key: key.into(), value: value.into(), effect: effect.into(), time_added: None }
    }

    #[test]
    fn exists_with_empty_key_tolerates_everything() {
        let t = Toleration { operator: Some("Exists".into()), ..Default::default() };
        assert!(tolerates(&t, &taint("a", "b", "NoSchedule")));
    }

    #[test]
    fn equal_needs_key_value_and_effect_to_match() {
        let t = Toleration { key: "k".into(), value: "v".into(), effect: "NoSchedule".into(), ..Default::default() };
        assert!(tolerates(&t, &taint("k", "v", "NoSchedule")));
        assert!(!tolerates(&t, &taint("k", "w", "NoSchedule")));
        assert!(!tolerates(&t, &taint("k", "v", "NoExecute")));
    }
}
