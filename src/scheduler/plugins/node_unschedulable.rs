//! NodeUnschedulable: cordoned nodes take no new pods, unless the pod tolerates the
//! `node.kubernetes.io/unschedulable` taint.

use crate::api::Pod;
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, Snapshot};

/// Whether the pod tolerates cordoned nodes, worked out once per scheduling cycle.
#[derive(Default)]
pub struct NodeUnschedulable {
    tolerated: bool,
}

impl FilterPlugin for NodeUnschedulable {
    fn name(&self) -> &'static str {
        "NodeUnschedulable"
    }

    fn pre_filter(&mut self, pod: &Pod, _cluster: &Snapshot) {
        self.tolerated = pod.spec.tolerations.iter().any(|t| {
            (t.key == "node.kubernetes.io/unschedulable"
                || (t.key.is_empty() && t.operator.as_deref() == Some("Exists")))
                && (t.effect.is_empty() || t.effect == "NoSchedule")
        });
    }

    fn filter(&self, _pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        let tolerated = self.tolerated;
        if node.unschedulable() && !tolerated {
            return Err(Rejection::unresolvable("node(s) were unschedulable"));
        }
        Ok(())
    }
}
