//! Cluster DNS: CoreDNS (a component behind the `kube-dns` Service, answering from its own
//! watches), the pure answers of its `kubernetes` plugin and a pod's resolver, and the path a
//! pod's query takes to it through its node's kube-proxy rules.

pub mod coredns;
mod index;
pub mod network;
mod resolver;

pub use coredns::CoreDns;
pub use index::Index;
pub use network::Network;
pub use resolver::{CLUSTER_DOMAIN, Catalog, DnsError, NDOTS, candidates, first_known, lookup, resolve, reverse};
