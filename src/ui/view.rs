//! The page's snapshots of the cluster: plain data, built natively in `crate::page::snapshot`
//! (what the simulation sends the page in each frame).

pub use crate::page::snapshot::*;
