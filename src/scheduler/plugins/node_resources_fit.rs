//! NodeResourcesFit: a pod fits where its cpu, memory and pod-count requests fit in what is
//! still allocatable; among those, LeastAllocated prefers the emptier nodes.

use crate::api::Pod;
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, ScorePlugin, nonzero_requests};

pub struct NodeResourcesFit;

/// The reasons a pod does not fit a node's free resources (empty when it fits).
pub fn insufficient(pod: &Pod, node: &NodeInfo) -> Vec<String> {
    let req = pod.requests();
    let mut reasons = Vec::new();
    if node.pods + 1 > node.allocatable_pods() {
        reasons.push("Too many pods".to_string());
    }
    if req.cpu_milli > 0 && node.requested_cpu + req.cpu_milli > node.allocatable_cpu() {
        reasons.push("Insufficient cpu".to_string());
    }
    if req.memory_bytes > 0 && node.requested_memory + req.memory_bytes > node.allocatable_memory() {
        reasons.push("Insufficient memory".to_string());
    }
    reasons
}

/// `(allocatable - requested) * 100 / allocatable`, 0 when over.
pub fn least_allocated(requested: i64, allocatable: i64) -> i64 {
    if allocatable <= 0 || requested > allocatable {
        return 0;
    }
    (allocatable - requested) * 100 / allocatable
}

impl FilterPlugin for NodeResourcesFit {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }

    fn filter(&self, pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        let reasons = insufficient(pod, node);
        if reasons.is_empty() { Ok(()) } else { Err(Rejection::unschedulable(reasons)) }
    }
}

impl ScorePlugin for NodeResourcesFit {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }

    fn weight(&self) -> i64 {
        1
    }

    fn score(&self, pod: &Pod, node: &NodeInfo) -> i64 {
        let (cpu, mem) = nonzero_requests(pod);
        let cpu_score = least_allocated(node.nonzero_cpu + cpu, node.allocatable_cpu());
        let mem_score = least_allocated(node.nonzero_memory + mem, node.allocatable_memory());
        (cpu_score + mem_score) / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_allocated_prefers_free_capacity() {
        assert_eq!(least_allocated(1000, 4000), 75);
        assert_eq!(least_allocated(0, 4000), 100);
        assert_eq!(least_allocated(5000, 4000), 0);
    }
}
