//! Questions about API objects that several components ask alike (upstream keeps them in
//! component-helpers): a pod's QoS class, whether it tolerates a taint, whether its node
//! affinity admits a node.

pub mod node_affinity;
pub mod qos;
pub mod tolerations;

pub use qos::qos_class;
