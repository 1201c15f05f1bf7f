//! View models the page draws: plain data read from the cluster and its record, never changing either.

pub mod caption;
pub mod etcd;
pub mod examples;
pub mod flow;
pub mod map;
pub mod overview;
pub mod reconcile;
pub mod sequence;
pub mod shell;
pub mod speed;
