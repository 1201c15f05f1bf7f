//! NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory would be used in
//! similar proportions after placing the pod.

use crate::api::Pod;
use crate::scheduler::framework::{NodeInfo, ScorePlugin, Snapshot, nonzero_requests};

/// The pod's non-zero requests, worked out once per scheduling cycle.
#[derive(Default)]
pub struct BalancedAllocation {
    nonzero: (i64, i64),
}

/// `(1 - |cpuFraction - memFraction| / 2) * 100`, fractions capped at 1.
pub fn balance(cpu_fraction: f64, mem_fraction: f64) -> i64 {
    let (c, m) = (cpu_fraction.min(1.0), mem_fraction.min(1.0));
    ((1.0 - (c - m).abs() / 2.0) * 100.0) as i64
}

impl ScorePlugin for BalancedAllocation {
    fn name(&self) -> &'static str {
        "NodeResourcesBalancedAllocation"
    }

    fn weight(&self) -> i64 {
        1
    }

    fn pre_score(&mut self, pod: &Pod, _cluster: &Snapshot, _feasible: &[&NodeInfo]) {
        self.nonzero = nonzero_requests(pod);
    }

    fn score(&self, _pod: &Pod, node: &NodeInfo) -> i64 {
        let (cpu, mem) = self.nonzero;
        let frac = |used: i64, alloc: i64| if alloc <= 0 { 1.0 } else { used as f64 / alloc as f64 };
        balance(
            frac(node.nonzero_cpu + cpu, node.allocatable_cpu()),
            frac(node.nonzero_memory + mem, node.allocatable_memory()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_fractions_are_perfectly_balanced() {
        assert_eq!(balance(0.5, 0.5), 100);
        assert_eq!(balance(1.0, 0.0), 50);
    }
}
