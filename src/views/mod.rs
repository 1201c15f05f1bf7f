//! View models the page draws: plain data read from the cluster and its record, never changing either.

pub mod caption;
pub mod etcd;
pub mod map;
pub mod reconcile;
pub mod record_log;
pub mod sequence;
pub mod shell;
pub mod speed;
