//! The default scheduling plugins, one module each, in upstream's order.

pub mod balanced_allocation;
pub mod inter_pod_affinity;
pub mod node_affinity;
pub mod node_name;
pub mod node_ports;
pub mod node_resources_fit;
pub mod node_unschedulable;
pub mod pod_topology_spread;
pub mod taint_toleration;

use super::framework::{FilterPlugin, ScorePlugin};

/// The filters of the default profile, in the order they run.
pub fn default_filters() -> Vec<Box<dyn FilterPlugin>> {
    vec![
        Box::new(node_unschedulable::NodeUnschedulable::default()),
        Box::new(node_name::NodeName),
        Box::new(taint_toleration::TaintToleration),
        Box::new(node_affinity::NodeAffinity),
        Box::new(node_ports::NodePorts::default()),
        Box::new(node_resources_fit::NodeResourcesFit::default()),
        Box::new(super::volume_binding::VolumeBindingFilter::default()),
        Box::new(pod_topology_spread::PodTopologySpread::default()),
        Box::new(inter_pod_affinity::InterPodAffinity::default()),
    ]
}

/// The scorers of the default profile, with their weights.
pub fn default_scorers() -> Vec<Box<dyn ScorePlugin>> {
    vec![
        Box::new(taint_toleration::TaintToleration),
        Box::new(node_affinity::NodeAffinity),
        Box::new(node_resources_fit::NodeResourcesFit::default()),
        Box::new(pod_topology_spread::PodTopologySpread::default()),
        Box::new(inter_pod_affinity::InterPodAffinity::default()),
        Box::new(balanced_allocation::BalancedAllocation::default()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Pod;
    use crate::scheduler::framework::{PodIndex, Snapshot};
    use crate::scheduler::node_table::NodeTable;

    /// The names of the default filters that skip `pod` after PreFilter on an empty cluster.
    fn skipped(pod: &Pod) -> Vec<&'static str> {
        let (nodes, pods) = (NodeTable::default(), PodIndex::default());
        let cluster = Snapshot { nodes: &nodes, pods: &pods };
        let mut filters = default_filters();
        filters.iter_mut().for_each(|f| f.pre_filter(pod, &cluster));
        filters.iter().filter(|f| f.skips(pod)).map(|f| f.name()).collect()
    }

    #[test]
    fn a_plain_pod_skips_the_filters_it_gives_nothing_to_check_and_a_node_selector_brings_node_affinity_back() {
        let mut pod = Pod::default();
        assert_eq!(
            skipped(&pod),
            ["NodeName", "NodeAffinity", "NodePorts", "VolumeBinding", "PodTopologySpread", "InterPodAffinity"]
        );
        std::sync::Arc::make_mut(&mut pod.spec).node_selector.insert("disktype".into(), "ssd".into());
        assert_eq!(skipped(&pod), ["NodeName", "NodePorts", "VolumeBinding", "PodTopologySpread", "InterPodAffinity"]);
    }

    #[test]
    fn a_plain_pod_is_not_scored_by_node_affinity_or_inter_pod_affinity_which_would_give_every_node_0() {
        let (nodes, pods) = (NodeTable::default(), PodIndex::default());
        let cluster = Snapshot { nodes: &nodes, pods: &pods };
        let pod = Pod::default();
        let mut scorers = default_scorers();
        scorers.iter_mut().for_each(|s| s.pre_score(&pod, &cluster, &[]));
        let skipped: Vec<&str> = scorers.iter().filter(|s| s.skips(&pod)).map(|s| s.name()).collect();
        assert_eq!(skipped, ["NodeAffinity", "InterPodAffinity"]);
    }
}
