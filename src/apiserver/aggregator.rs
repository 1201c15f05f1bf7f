//! kube-apiserver's aggregation layer: a request for a group the API server does not serve
//! itself (`metrics.k8s.io`) is looked up among the APIServices and, when the one for its
//! group/version is Available, proxied to the Service it names — metrics-server — whose
//! answer is passed back. The hop is recorded as the API server's call to that component.
//!
//! What metrics-server holds in memory (its last scrapes) is reached through a
//! [`MetricsBackend`] handle that metrics-server's process and the API server share: the
//! connection between them, as `dns::Network` is a pod's path to CoreDNS. Nothing here is
//! stored in etcd. The availability controller that sets each APIService's Available
//! condition from its Service's endpoints is also here.

use super::{ApiServer, Env, Reply, Request, Stage, StageResult, Status, Verb};
use crate::api::aggregation::{ApiService, ApiServiceCondition, NodeMetrics, PodMetrics};
use crate::api::{Kind, Object};
use crate::record::{ComponentId, Happening, Seq};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The group the aggregator proxies (the only one an add-on registers here).
pub const METRICS_GROUP: &str = "metrics.k8s.io";
/// The APIService that registers it.
pub const METRICS_API_SERVICE: &str = "v1beta1.metrics.k8s.io";

/// metrics-server's memory, as the API server's proxy reaches it.
#[derive(Clone, Default)]
pub struct MetricsBackend(Arc<std::sync::Mutex<Memory>>);

impl std::fmt::Debug for MetricsBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsBackend")
    }
}

#[derive(Default)]
struct Memory {
    /// The component serving it (for the record's hop), once the cluster has one.
    server: Option<ComponentId>,
    /// Whether its process is up (its pod running).
    up: bool,
    /// Per node: the node's usage and its pods', from the last scrape.
    nodes: BTreeMap<String, Scrape>,
}

#[derive(Default)]
struct Scrape {
    node: Option<Arc<Object>>,
    pods: BTreeMap<(String, String), Arc<Object>>,
    /// How many scrapes in a row have reached the node: a rate needs two points, so a node
    /// (and a pod) is served from its second scrape on.
    node_points: u32,
    pod_points: BTreeMap<(String, String), u32>,
}

impl MetricsBackend {
    /// The memory, whoever held it last (a poisoned lock still holds it).
    fn mem(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_server(&self, id: ComponentId) {
        self.mem().server = Some(id);
    }

    pub fn server(&self) -> Option<ComponentId> {
        self.mem().server
    }

    /// metrics-server's process started or stopped; stopped, it forgets everything.
    pub fn set_up(&self, up: bool) {
        let mut m = self.mem();
        if !up {
            m.nodes.clear();
        }
        m.up = up;
    }

    pub fn is_up(&self) -> bool {
        self.mem().up
    }

    /// One scrape of a node's kubelet: its usage and its pods' (`None` when the kubelet did
    /// not answer: the node's earlier points are dropped).
    pub fn scraped(&self, node: &str, sample: Option<(NodeMetrics, Vec<PodMetrics>)>) {
        let mut m = self.mem();
        let Some((node_metrics, pods)) = sample else {
            m.nodes.remove(node);
            return;
        };
        let scrape = m.nodes.entry(node.to_string()).or_default();
        scrape.node_points = scrape.node_points.saturating_add(1);
        scrape.node = Some(Arc::new(Object::NodeMetrics(Box::new(node_metrics))));
        let mut points = BTreeMap::new();
        let mut fresh = BTreeMap::new();
        for pod in pods {
            let key = (pod.metadata.namespace.clone(), pod.metadata.name.clone());
            points.insert(key.clone(), scrape.pod_points.get(&key).copied().unwrap_or(0).saturating_add(1));
            fresh.insert(key, Arc::new(Object::PodMetrics(Box::new(pod))));
        }
        scrape.pod_points = points;
        scrape.pods = fresh;
    }

    /// The NodeMetrics served (nodes scraped at least twice).
    pub fn node_metrics(&self) -> Vec<Arc<Object>> {
        let m = self.mem();
        m.nodes.values().filter(|s| s.node_points >= 2).filter_map(|s| s.node.clone()).collect()
    }

    /// The PodMetrics served in `namespace` (all when empty), in namespace/name order.
    pub fn pod_metrics(&self, namespace: &str) -> Vec<Arc<Object>> {
        let m = self.mem();
        let mut all: BTreeMap<(String, String), Arc<Object>> = BTreeMap::new();
        for s in m.nodes.values() {
            for (key, pod) in &s.pods {
                if s.pod_points.get(key).copied().unwrap_or(0) >= 2 && (namespace.is_empty() || key.0 == namespace) {
                    all.insert(key.clone(), pod.clone());
                }
            }
        }
        all.into_values().collect()
    }
}

/// The message a client gets when the APIService is not available.
pub fn unavailable(kind: Kind) -> Status {
    Status::new(
        503,
        "ServiceUnavailable",
        format!("the server is currently unable to handle the request (get {})", kind.qualified_resource()),
    )
}

impl ApiServer {
    /// Whether the request is for an aggregated group.
    pub(super) fn is_aggregated(kind: Kind) -> bool {
        kind.info().group == METRICS_GROUP
    }

    /// Proxies a request for an aggregated group to the Service its APIService names.
    pub(super) fn aggregate(&mut self, req: &Request, env: &mut Env, seq: Seq) -> StageResult<(u16, Reply)> {
        let info = req.kind.info();
        let name = format!("{}.{}", info.version, info.group);
        let not_found = || {
            (Stage::Storage, Status::new(404, "NotFound", "the server could not find the requested resource".into()))
        };
        let Some(object) = self.peek(Kind::APIService, "", &name) else { return Err(not_found()) };
        let Object::APIService(service) = &*object else { return Err(not_found()) };
        if service.available().is_none_or(|c| c.status != "True") {
            return Err((Stage::Storage, unavailable(req.kind)));
        }
        if !matches!(req.verb, Verb::Get | Verb::List) {
            return Err((
                Stage::Authorization,
                Status::method_not_allowed("the server does not allow this method on the requested resource"),
            ));
        }
        // The hop to metrics-server, through its Service.
        if let Some(to) = self.metrics.server() {
            let what = Happening::KubeletCall { to, method: "GET", path: req.path() };
            env.record.push(env.now, self.etcd.revision(), ComponentId::API_SERVER, Some(seq), what);
        }
        if !self.metrics.is_up() {
            return Err((Stage::Storage, unavailable(req.kind)));
        }
        let items = match req.kind {
            Kind::NodeMetrics => self.metrics.node_metrics(),
            _ => self.metrics.pod_metrics(&req.namespace),
        };
        let items: Vec<Arc<Object>> = items
            .into_iter()
            .filter(|o| req.label_selector.as_ref().is_none_or(|s| self.labels_match(req.kind, o, s)))
            .collect();
        match req.verb {
            Verb::Get => items
                .into_iter()
                .find(|o| o.name() == req.name)
                .map(|o| (200, Reply::Object(o)))
                .ok_or_else(|| (Stage::Storage, Status::not_found(req.kind, &req.name))),
            _ => Ok((200, Reply::List { items, revision: self.etcd.revision() })),
        }
    }

    /// A metrics object matches a label selector by its node's or pod's labels, as
    /// metrics-server selects them.
    fn labels_match(&self, kind: Kind, metrics: &Object, selector: &crate::api::LabelSelector) -> bool {
        let of = if kind == Kind::NodeMetrics { Kind::Node } else { Kind::Pod };
        self.peek(of, metrics.namespace(), metrics.name()).is_some_and(|o| selector.matches(&o.meta().labels))
    }

    /// The availability controller's pass: each APIService backed by a Service is Available
    /// when that Service has a ready endpoint, and not (`MissingEndpoints`) when it has none.
    /// Writes only what changed; returns how many it wrote.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub fn check_api_services(&mut self, env: &mut Env) -> usize {
        let mut written = 0;
        if self.etcd_down {
            // Its writes would fail; it looks again once the store is back.
            return 0;
        }
        for object in self.peek_list(Kind::APIService, "") {
            let Object::APIService(service) = &*object else { continue };
            let Some(backend) = &service.spec.service else { continue };
            let ready = self.peek_list(Kind::EndpointSlice, &backend.namespace).iter().any(|o| {
                let Object::EndpointSlice(slice) = &**o else { return false };
                slice.metadata.labels.get("kubernetes.io/service-name") == Some(&backend.name)
                    && slice.endpoints.iter().any(|e| e.conditions.ready != Some(false))
            });
            let (status, reason, message) = if ready {
                ("True", "Passed", "all checks passed".to_string())
            } else {
                (
                    "False",
                    "MissingEndpoints",
                    format!(
                        "endpoints for service/{} in \"{}\" have no addresses with port name \"https\"",
                        backend.name, backend.namespace
                    ),
                )
            };
            if service.available().is_some_and(|c| c.status == status && c.reason == reason) {
                continue;
            }
            let mut updated: ApiService = (**service).clone();
            updated.status.conditions = vec![ApiServiceCondition {
                type_: "Available".into(),
                status: status.into(),
                last_transition_time: Some(env.now),
                reason: reason.into(),
                message,
            }];
            let req = Request::update_status(Object::APIService(Box::new(updated)));
            if self.handle(req, env).is_ok() {
                written += 1;
            }
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str) -> PodMetrics {
        let mut p = PodMetrics::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p
    }

    #[test]
    fn a_pod_is_served_from_its_second_scrape_on() {
        let backend = MetricsBackend::default();
        backend.set_up(true);
        backend.scraped("worker-1", Some((NodeMetrics::default(), vec![pod("web")])));
        assert!(backend.pod_metrics("default").is_empty());
        assert!(backend.node_metrics().is_empty());
        backend.scraped("worker-1", Some((NodeMetrics::default(), vec![pod("web"), pod("new")])));
        let served: Vec<String> = backend.pod_metrics("").iter().map(|o| o.name().to_string()).collect();
        assert_eq!(served, ["web"]);
        assert_eq!(backend.node_metrics().len(), 1);
    }

    #[test]
    fn a_stopped_metrics_server_forgets_what_it_scraped() {
        let backend = MetricsBackend::default();
        backend.set_up(true);
        for _ in 0..2 {
            backend.scraped("worker-1", Some((NodeMetrics::default(), vec![pod("web")])));
        }
        assert_eq!(backend.pod_metrics("default").len(), 1);
        backend.set_up(false);
        backend.set_up(true);
        assert!(backend.pod_metrics("default").is_empty());
    }

    #[test]
    fn a_kubelet_that_does_not_answer_drops_its_nodes_points() {
        let backend = MetricsBackend::default();
        backend.set_up(true);
        for _ in 0..2 {
            backend.scraped("worker-1", Some((NodeMetrics::default(), vec![pod("web")])));
        }
        backend.scraped("worker-1", None);
        assert!(backend.pod_metrics("").is_empty());
    }
}
