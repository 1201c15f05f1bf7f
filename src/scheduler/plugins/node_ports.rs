//! NodePorts: two pods cannot bind the same host port on one node.

use crate::api::Pod;
use crate::scheduler::framework::{FilterPlugin, NodeInfo, Rejection, host_ports};

pub struct NodePorts;

impl FilterPlugin for NodePorts {
    fn name(&self) -> &'static str {
        "NodePorts"
    }

    fn filter(&self, pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        if host_ports(pod).iter().any(|p| node.used_ports.contains(p)) {
            return Err(Rejection::unschedulable(vec![
                "node(s) didn't have free ports for the requested pod ports".into(),
            ]));
        }
        Ok(())
    }
}
