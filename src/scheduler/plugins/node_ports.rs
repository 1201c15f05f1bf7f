//! NodePorts: two pods cannot bind the same host port on one node.

use crate::api::Pod;
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, Snapshot, host_ports};

/// The host ports the pod asks for, worked out once per scheduling cycle (upstream's
/// PreFilter state).
#[derive(Default)]
pub struct NodePorts {
    wanted: Vec<(String, i32)>,
}

impl FilterPlugin for NodePorts {
    fn name(&self) -> &'static str {
        "NodePorts"
    }

    fn pre_filter(&mut self, pod: &Pod, _cluster: &Snapshot) {
        self.wanted = host_ports(pod);
    }

    /// No host port asked for.
    fn skips(&self, _pod: &Pod) -> bool {
        self.wanted.is_empty()
    }

    fn filter(&self, _pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        if self.wanted.iter().any(|p| node.used_ports.contains(p)) {
            return Err(Rejection::unschedulable(vec![
                "node(s) didn't have free ports for the requested pod ports".into(),
            ]));
        }
        Ok(())
    }
}
