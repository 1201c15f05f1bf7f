//! NodeResourcesFit: a pod fits where its cpu, memory and pod-count requests fit in what is
//! still allocatable; among those, LeastAllocated prefers the emptier nodes.

use crate::api::Pod;
use crate::api::pod::PodRequests;
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, ScorePlugin, Snapshot, nonzero_requests};

/// The pod's requests are worked out once per scheduling cycle (PreFilter/PreScore), not per node.
#[derive(Default)]
pub struct NodeResourcesFit {
    requests: PodRequests,
    nonzero: (i64, i64),
}

/// The reasons a pod with these requests does not fit a node's free resources (empty when it fits).
pub fn insufficient(req: PodRequests, node: &NodeInfo) -> Vec<String> {
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

    fn pre_filter(&mut self, pod: &Pod, _cluster: &Snapshot) {
        self.requests = pod.requests();
    }

    fn filter(&self, _pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        // Fast path: nothing short, no reasons to spell out.
        let req = self.requests;
        if node.pods < node.allocatable_pods()
            && node.requested_cpu + req.cpu_milli <= node.allocatable_cpu()
            && node.requested_memory + req.memory_bytes <= node.allocatable_memory()
        {
            return Ok(());
        }
        let reasons = insufficient(req, node);
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

    fn pre_score(&mut self, pod: &Pod, _cluster: &Snapshot, _feasible: &[&NodeInfo]) {
        self.nonzero = nonzero_requests(pod);
    }

    fn score(&self, _pod: &Pod, node: &NodeInfo) -> i64 {
        let (cpu, mem) = self.nonzero;
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
