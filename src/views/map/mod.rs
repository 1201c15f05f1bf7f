//! The architecture map, as every course draws it: you and kubectl on the left (CoreDNS, the
//! DNS add-on, above them, another client of the API server), the control
//! plane's box with kube-apiserver at its hub (its request stages inside), etcd beside it and
//! reachable only through it, the scheduler and the controller manager above it, and below,
//! one box per worker node with its kube-proxy, kubelet, container runtime and pods.
//!
//! Pure geometry in the SVG's own units (a fixed width, a height that grows with the nodes):
//! where each box sits, which edges join them — only the connections a cluster really has —
//! and where a message travelling an edge is at a given moment. The page draws from this;
//! tests read it natively.

mod board;
#[cfg(test)]
mod fixtures;
mod geometry;
mod tokens;

pub use board::*;
pub use geometry::*;
pub use tokens::*;
