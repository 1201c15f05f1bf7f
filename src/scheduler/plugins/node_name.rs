//! NodeName: a pod that names a node (`spec.nodeName` set before scheduling) fits only there.

use crate::api::Pod;
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection};

pub struct NodeName;

impl FilterPlugin for NodeName {
    fn name(&self) -> &'static str {
        "NodeName"
    }

    /// No node named.
    fn skips(&self, pod: &Pod) -> bool {
        pod.spec.node_name.is_empty()
    }

    fn filter(&self, pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        if !pod.spec.node_name.is_empty() && pod.spec.node_name != node.name() {
            return Err(Rejection::unresolvable("node(s) didn't match the requested node name"));
        }
        Ok(())
    }
}
