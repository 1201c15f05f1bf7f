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
