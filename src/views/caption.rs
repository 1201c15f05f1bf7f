//! Interim captions (replaced by the helper's sentences on merge).

use crate::cluster::Cluster;
use crate::record::{Entry, Happening};

pub fn caption(cluster: &Cluster, entry: &Entry) -> String {
    crate::overview::caption_of(cluster, entry)
}

pub fn caption_wave(cluster: &Cluster, entries: &[&Entry]) -> String {
    entries.first().map(|e| caption(cluster, e)).unwrap_or_default()
}

pub fn is_chatter(_cluster: &Cluster, entry: &Entry) -> bool {
    match &entry.what {
        Happening::Request { kind, .. } | Happening::Notify { kind, .. } => {
            matches!(kind, crate::api::Kind::Event | crate::api::Kind::Lease)
        }
        Happening::Decision { .. } => false,
    }
}
