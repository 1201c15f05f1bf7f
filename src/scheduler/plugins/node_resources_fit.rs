//! NodeResourcesFit: a pod fits where its cpu, memory and pod-count requests fit in what is
//! still allocatable; among those, LeastAllocated prefers the emptier nodes. A request for an
//! extended resource (`example.com/dongle`) fits only a node that advertises that much of it
//! (what other pods already hold of it is not counted).

use crate::api::Pod;
use crate::api::pod::PodRequests;
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, ScorePlugin, Snapshot, nonzero_requests};

/// The pod's requests are worked out once per scheduling cycle (PreFilter/PreScore), not per node.
#[derive(Default)]
pub struct NodeResourcesFit {
    requests: PodRequests,
    nonzero: (i64, i64),
    extended: Vec<(String, i64)>,
}

/// Whether a resource name is an extended resource: one in a domain of its own, not
/// Kubernetes' (`example.com/dongle`, `nvidia.com/gpu`).
fn is_extended(name: &str) -> bool {
    name.split_once('/').is_some_and(|(domain, _)| !domain.ends_with("kubernetes.io"))
}

/// The pod's requests of extended resources (its limits where it sets no request), summed
/// over its containers, or an init container's if that is more.
pub fn extended_requests(pod: &Pod) -> Vec<(String, i64)> {
    let mut total: std::collections::BTreeMap<String, i64> = Default::default();
    let amounts = |c: &crate::api::Container| {
        let names = c.resources.requests.keys().chain(c.resources.limits.keys()).filter(|n| is_extended(n));
        let amount =
            |n: &String| c.resources.requests.get(n).or_else(|| c.resources.limits.get(n)).map_or(0, |q| q.value());
        crate::util::sort::btree_map(names.map(|n| (n.clone(), amount(n))))
    };
    for c in &pod.spec.containers {
        for (name, n) in amounts(c) {
            *total.entry(name).or_default() += n;
        }
    }
    for c in &pod.spec.init_containers {
        for (name, n) in amounts(c) {
            let t = total.entry(name).or_default();
            *t = (*t).max(n);
        }
    }
    total.into_iter().filter(|(_, n)| *n > 0).collect()
}

/// The extended resources the node does not advertise enough of, as `Insufficient NAME`.
fn insufficient_extended(extended: &[(String, i64)], node: &NodeInfo) -> Vec<String> {
    extended
        .iter()
        .filter(|(name, n)| node.node.allocatable(name).map_or(0, |q| q.value()) < *n)
        .map(|(name, _)| format!("Insufficient {name}"))
        .collect()
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
        self.extended = extended_requests(pod);
    }

    fn filter(&self, _pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        // Fast path: nothing short, no reasons to spell out.
        let req = self.requests;
        if node.pods < node.allocatable_pods()
            && node.requested_cpu + req.cpu_milli <= node.allocatable_cpu()
            && node.requested_memory + req.memory_bytes <= node.allocatable_memory()
            && self.extended.is_empty()
        {
            return Ok(());
        }
        let mut reasons = insufficient(req, node);
        reasons.extend(insufficient_extended(&self.extended, node));
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

    #[test]
    fn extended_resource_requests_are_summed_and_kubernetes_own_names_are_not_extended() {
        let pod: Pod = serde_json::from_value(crate::util::json_macro::json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [
                {"name": "a", "image": "nginx", "resources": {"requests": {"example.com/dongle": "2", "cpu": "1"}}},
                {"name": "b", "image": "nginx", "resources": {"limits": {"example.com/dongle": "1", "hugepages-2Mi": "2Mi"}}}
            ]}
        }))
        .unwrap();
        assert_eq!(extended_requests(&pod), [("example.com/dongle".to_string(), 3)]);
        assert!(!is_extended("kubernetes.io/something") && is_extended("nvidia.com/gpu"));
    }
}
