//! The one read-only window on the store, for what only looks or really reads etcd: etcdctl,
//! the page's views and time travel, `sim` commands, lesson checks and invariant tests.
//! Components and kubectl never hold it: they send requests, which the record keeps.

use super::ApiServer;
use crate::api::{Kind, Object};
use crate::etcd::Etcd;
use std::sync::Arc;

/// What may be read of the API server's store without a request. The cluster hands it out
/// (`Cluster::inspect`); it cannot write and leaves nothing in the record.
#[derive(Clone, Copy)]
pub struct Inspect<'a> {
    api: &'a ApiServer,
}

impl<'a> Inspect<'a> {
    pub(crate) fn new(api: &'a ApiServer) -> Self {
        Inspect { api }
    }

    /// The stored object at `kind/namespace/name`.
    pub fn get(&self, kind: Kind, namespace: &str, name: &str) -> Option<Arc<Object>> {
        self.api.peek(kind, namespace, name)
    }

    /// Every stored object of `kind` (in `namespace`, or all when empty), in key order.
    pub fn list(&self, kind: Kind, namespace: &str) -> Vec<Arc<Object>> {
        self.api.peek_list(kind, namespace)
    }

    /// etcd itself, as `etcdctl` and the storage views read it.
    pub fn etcd(&self) -> &'a Etcd {
        self.api.etcd()
    }

    /// etcd's current revision.
    pub fn revision(&self) -> i64 {
        self.api.etcd().revision()
    }

    /// Whether etcd is answering (`sim etcd stop` stops it).
    pub fn etcd_running(&self) -> bool {
        self.api.etcd_running()
    }

    /// How many Events went to the separate events storage, when the cluster keeps one.
    pub fn events_sent_away(&self) -> usize {
        self.api.events_sent_away()
    }
}
