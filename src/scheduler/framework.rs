//! The scheduling framework: what a plugin sees of a node, and what it may answer.

use crate::api::{Node, Pod};
use std::sync::Arc;

/// Requests that count when a container names none, for scoring (upstream's non-zero defaults).
pub const DEFAULT_CPU_MILLI: i64 = 100;
pub const DEFAULT_MEMORY_BYTES: i64 = 200 * 1024 * 1024;

/// The scheduler's view of one node: the node and what is already placed on it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub node: Arc<Node>,
    pub requested_cpu: i64,
    pub requested_memory: i64,
    /// Requests with the non-zero defaults applied, used for scoring.
    pub nonzero_cpu: i64,
    pub nonzero_memory: i64,
    pub pods: i64,
    /// Host ports in use, as (protocol, port).
    pub used_ports: Vec<(String, i32)>,
}

impl NodeInfo {
    pub fn new(node: Arc<Node>) -> Self {
        NodeInfo {
            node,
            requested_cpu: 0,
            requested_memory: 0,
            nonzero_cpu: 0,
            nonzero_memory: 0,
            pods: 0,
            used_ports: Vec::new(),
        }
    }

    pub fn name(&self) -> &str {
        &self.node.metadata.name
    }

    pub fn allocatable_cpu(&self) -> i64 {
        self.node.allocatable("cpu").map_or(0, |q| q.milli())
    }

    pub fn allocatable_memory(&self) -> i64 {
        self.node.allocatable("memory").map_or(0, |q| q.value())
    }

    pub fn allocatable_pods(&self) -> i64 {
        self.node.allocatable("pods").map_or(110, |q| q.value())
    }

    /// Counts a pod onto (`sign` = 1) or off (`sign` = -1) this node.
    pub fn account(&mut self, pod: &Pod, sign: i64) {
        let req = pod.requests();
        let (cpu, mem) = nonzero_requests(pod);
        self.requested_cpu += sign * req.cpu_milli;
        self.requested_memory += sign * req.memory_bytes;
        self.nonzero_cpu += sign * cpu;
        self.nonzero_memory += sign * mem;
        self.pods += sign;
        for (proto, port) in host_ports(pod) {
            if sign > 0 {
                self.used_ports.push((proto, port));
            } else if let Some(i) = self.used_ports.iter().position(|p| *p == (proto.clone(), port)) {
                self.used_ports.swap_remove(i);
            }
        }
    }
}

/// A pod's requests with upstream's defaults for containers that name none.
pub fn nonzero_requests(pod: &Pod) -> (i64, i64) {
    pod.spec.containers.iter().fold((0, 0), |(cpu, mem), c| {
        let r = &c.resources.requests;
        (
            cpu + r.get("cpu").map_or(DEFAULT_CPU_MILLI, |q| q.milli()),
            mem + r.get("memory").map_or(DEFAULT_MEMORY_BYTES, |q| q.value()),
        )
    })
}

/// The host ports a pod's containers ask for.
pub fn host_ports(pod: &Pod) -> Vec<(String, i32)> {
    pod.spec
        .containers
        .iter()
        .flat_map(|c| c.ports.iter())
        .filter_map(|p| {
            let port = p.host_port.filter(|&hp| hp > 0)?;
            Some((p.protocol.clone().unwrap_or_else(|| "TCP".into()), port))
        })
        .collect()
}

/// Why a node cannot take a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The reasons, as FailedScheduling counts them (`Insufficient cpu`, ...).
    pub reasons: Vec<String>,
    /// Whether preempting other pods could never help (taints, affinity, node name...).
    pub unresolvable: bool,
}

impl Rejection {
    pub fn unresolvable(reason: impl Into<String>) -> Self {
        Rejection { reasons: vec![reason.into()], unresolvable: true }
    }
    pub fn unschedulable(reasons: Vec<String>) -> Self {
        Rejection { reasons, unresolvable: false }
    }
}

/// A Filter extension point: can this node run this pod at all?
pub trait FilterPlugin {
    fn name(&self) -> &'static str;
    fn filter(&self, pod: &Pod, node: &NodeInfo) -> Result<(), Rejection>;
}

/// A Score extension point: how good is this feasible node, 0 to 100?
pub trait ScorePlugin {
    fn name(&self) -> &'static str;
    fn weight(&self) -> i64;
    fn score(&self, pod: &Pod, node: &NodeInfo) -> i64;
    /// Rescales raw scores across the feasible nodes to 0..=100 (default: leave them).
    fn normalize(&self, _scores: &mut [i64]) {}
}
