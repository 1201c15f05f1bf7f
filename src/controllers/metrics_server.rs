//! metrics-server's process, which runs as a Deployment in kube-system: up while its pod is
//! running and ready, down otherwise (and then it remembers nothing). What it does while up —
//! scrape each kubelet every 15 s and answer the Metrics API — goes through the cluster
//! ([`crate::cluster::metrics`]) and the API server's aggregation layer
//! ([`crate::apiserver::aggregator`]), which share its memory as a handle. It learns of its
//! pod only through the API.

use super::{Action, Reconciler, Synced};
use crate::api::Kind;
use crate::apiserver::aggregator::MetricsBackend;
use crate::client::component::{Ctx, Delta, Informer};

/// Its decisions when its process comes up and when it goes.
pub const SERVING: &str = "metrics-server is serving: scraping kubelets every 15s";
pub const STOPPED: &str = "metrics-server stopped";

/// The label its pods carry.
pub const APP_LABEL: (&str, &str) = ("k8s-app", "metrics-server");

pub struct MetricsServer {
    pods: Informer,
    backend: MetricsBackend,
}

impl MetricsServer {
    pub fn new(backend: MetricsBackend) -> Self {
        MetricsServer { pods: Informer::new(Kind::Pod).in_namespace("kube-system"), backend }
    }

    /// Whether one of its pods is running and ready (the process is up and serving).
    fn running(&self) -> bool {
        self.pods.cache.values().any(|o| {
            o.as_pod().is_some_and(|p| {
                p.metadata.labels.get(APP_LABEL.0).is_some_and(|a| a == APP_LABEL.1)
                    && p.metadata.deletion_timestamp.is_none()
                    && p.status.phase == "Running"
                    && p.condition("Ready").is_some_and(|c| c.status == "True")
            })
        })
    }
}

impl Reconciler for MetricsServer {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.pods]
    }

    fn keys_for(&mut self, _informer: usize, delta: &Delta) -> Vec<String> {
        let ours = delta.object.meta().labels.get(APP_LABEL.0).is_some_and(|a| a == APP_LABEL.1);
        if ours { vec!["metrics-server".into()] } else { Vec::new() }
    }

    fn reconcile(&mut self, _key: &str, ctx: &mut Ctx) -> Synced {
        let up = self.running();
        if up != self.backend.is_up() {
            ctx.decide(|| {
                if up { "metrics-server is serving: scraping kubelets every 15s" } else { "metrics-server stopped" }
                    .into()
            });
            self.backend.set_up(up);
        }
        Ok(Action::AwaitChange)
    }
}
