//! What the map's tests lay out and send: a few workers, and one message.

use super::MapSpec;
use crate::views::flow::{Message, Place};

/// `nodes` workers, each running `pods` pods; two controllers with lanes.
pub fn spec(nodes: usize, pods: usize) -> MapSpec {
    MapSpec {
        nodes: (0..nodes).map(|i| (format!("worker-{i}"), pods)).collect(),
        lanes: vec!["deployment-controller".into(), "replicaset-controller".into()],
        addons: vec!["local-path-provisioner".into()],
        cni: None,
        members: Vec::new(),
    }
}

/// A message from `from` to `to`, `progress` of the way.
pub fn message(from: Place, to: Place, stages: u8, refused: bool, progress: f64) -> Message {
    Message {
        id: 1,
        from,
        to,
        label: "x".into(),
        count: 1,
        stages,
        from_stage: 0,
        refused,
        progress,
        started_ms: 0.0,
        caption: String::new(),
    }
}
