//! metrics-server's scrapes, carried by the cluster as it carries the API server's calls to
//! kubelets: every `--metric-resolution` (15 s), while metrics-server's process is up, it
//! calls each node's kubelet at `/metrics/resource` (a decision of metrics-server's in the
//! record per call) and keeps what
//! the kubelet reports in its memory, which the API server's aggregation layer reaches (see
//! [`crate::apiserver::aggregator`]). What a kubelet reports is what its running containers
//! use ([`crate::kubelet::usage`]): servers under the load that the cluster's load
//! generators send them through DNS and the nodes' kube-proxy rules.
//!
//! Also here: kube-apiserver's APIService availability check, once a second.

use super::{Cluster, Role, due};
use crate::api::aggregation::{ContainerMetrics, NodeMetrics, PodMetrics};
use crate::api::{ObjectMeta, Quantity};
use crate::kubelet::usage::{self, Workload};
use crate::record::Happening;
use crate::sim::{Duration, Time};
use std::collections::BTreeMap;

/// metrics-server's `--metric-resolution`.
pub const METRIC_RESOLUTION: Duration = Duration::seconds(15);
/// How often the aggregator's availability controller looks at the APIServices' endpoints.
pub const AVAILABILITY_CHECK: Duration = Duration::seconds(1);
/// What a node's own processes (systemd, containerd, the kubelet) use besides its pods.
const NODE_OVERHEAD: (i64, i64) = (28, 380 << 20);

/// The cluster's part in metrics: when each job is due, and each running container's
/// workload, worked out once per container instance.
#[derive(Default)]
pub struct Metrics {
    next_scrape: Time,
    next_check: Time,
    workloads: BTreeMap<(String, String), Workload>,
}

impl Cluster {
    /// The metrics jobs that are due by now: the availability check, then the scrape.
    pub(super) fn metrics_due(&mut self) {
        let start = Time::ZERO + AVAILABILITY_CHECK;
        if let Some(next) = due(self.now, self.metrics.next_check.max(start), AVAILABILITY_CHECK) {
            self.metrics.next_check = next;
            if self.as_api_server(|api, env| api.check_api_services(env)) > 0 {
                self.schedule_woken();
            }
        }
        let start = Time::ZERO + METRIC_RESOLUTION;
        if let Some(next) = due(self.now, self.metrics.next_scrape.max(start), METRIC_RESOLUTION) {
            self.metrics.next_scrape = next;
            self.scrape();
        }
    }

    /// One scrape of every kubelet by metrics-server, if its process is up.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn scrape(&mut self) {
        let backend = self.api.metrics.clone();
        let Some(server) = backend.server() else { return };
        if !backend.is_up() {
            self.metrics.workloads.clear();
            return;
        }
        // Each running container's workload (known ones kept, gone ones forgotten).
        let mut workloads = BTreeMap::new();
        let mut known = std::mem::take(&mut self.metrics.workloads);
        let mut generators: Vec<(String, String, String, f64)> = Vec::new();
        for kubelet in self.kubelets() {
            for r in usage::running(kubelet) {
                let w = match known.remove(&r.key) {
                    Some(w) => w,
                    None => usage::workload_of(kubelet, &r),
                };
                if let Some((url, rate)) = w.sends() {
                    let from = (kubelet.node_name().to_string(), r.pod.metadata.namespace.clone());
                    generators.push((from.0, from.1, url.to_string(), rate));
                }
                workloads.insert(r.key.clone(), w);
            }
        }
        self.metrics.workloads = workloads;
        let received = self.deliver(&generators);
        let nodes: Vec<(u32, String)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.role {
                Role::Kubelet { node } => Some((i as u32, node.clone())),
                _ => None,
            })
            .collect();
        let revision = self.api.revision();
        for (idx, node) in nodes {
            let kubelet = crate::record::ComponentId(idx);
            let up = self.is_running(kubelet);
            // metrics-server's own call to the kubelet's port, in its words (the record's
            // `KubeletCall` is the API server's hop for a client).
            let text = if self.record.enabled {
                let ip = self.kubelet(&node).map(|k| k.config.internal_ip.clone()).unwrap_or_default();
                let url = format!("https://{ip}:10250/metrics/resource");
                if up {
                    format!("scrape node {node}: GET {url}")
                } else {
                    format!(
                        "scrape node {node} failed: Get \"{url}\": dial tcp {ip}:10250: connect: connection refused"
                    )
                }
            } else {
                String::new()
            };
            self.record.push(self.now, revision, server, None, Happening::Decision { text });
            let sample = if up { self.sample(&node, &received) } else { None };
            backend.scraped(&node, sample);
        }
    }

    /// Requests a second reaching each pod (`namespace`, `name`) from the load generators:
    /// each generator's URL resolved from its node, its rate spread over the endpoints its
    /// node's kube-proxy sends that Service's port to.
    fn deliver(&self, generators: &[(String, String, String, f64)]) -> BTreeMap<(String, String), f64> {
        let mut received: BTreeMap<(String, String), f64> = BTreeMap::new();
        for (node, namespace, url, rate) in generators {
            let Ok((_, host, port)) = crate::proxy::parse_url(url) else { continue };
            let address = if host.parse::<std::net::Ipv4Addr>().is_ok() {
                host.clone()
            } else {
                match self.dns().resolve(node, crate::api::well_known::KUBE_DNS_IP, &host, namespace) {
                    Ok(addresses) => addresses[0].clone(),
                    Err(_) => continue,
                }
            };
            let Some(proxy) = self.kube_proxy(node) else { continue };
            let rule = proxy.rules().find(|r| r.cluster_ip == address && r.port == port);
            let pods: Vec<(String, String)> = match rule {
                Some(rule) => rule.endpoints.iter().filter(|e| e.ready).filter_map(|e| e.pod.clone()).collect(),
                None => self
                    .kubelets()
                    .find_map(|k| {
                        k.pods().find_map(|p| {
                            let p = p.as_pod()?;
                            (p.status.pod_ip == address)
                                .then(|| (p.metadata.namespace.clone(), p.metadata.name.clone()))
                        })
                    })
                    .into_iter()
                    .collect(),
            };
            for pod in &pods {
                *received.entry(pod.clone()).or_default() += rate / pods.len() as f64;
            }
        }
        received
    }

    /// What `node`'s kubelet reports at `/metrics/resource`: each running container's usage,
    /// its pods' and the node's.
    fn sample(&self, node: &str, received: &BTreeMap<(String, String), f64>) -> Option<(NodeMetrics, Vec<PodMetrics>)> {
        let kubelet = self.kubelet(node)?;
        let mut pods: BTreeMap<(String, String), PodMetrics> = BTreeMap::new();
        let (mut cpu, mut memory) = NODE_OVERHEAD;
        for r in usage::running(kubelet) {
            let key = (r.pod.metadata.namespace.clone(), r.pod.metadata.name.clone());
            let load = received.get(&key).copied().unwrap_or(0.0);
            let (c, m) = match self.metrics.workloads.get(&r.key) {
                Some(w) => w.usage(load, r.container),
                None => usage::workload_of(kubelet, &r).usage(load, r.container),
            };
            cpu += c;
            memory += m;
            let pod = pods.entry(key.clone()).or_insert_with(|| PodMetrics {
                api_version: "metrics.k8s.io/v1beta1".into(),
                kind: "PodMetrics".into(),
                metadata: ObjectMeta {
                    name: key.1.clone(),
                    namespace: key.0.clone(),
                    labels: r.pod.metadata.labels.clone(),
                    creation_timestamp: Some(self.now),
                    ..Default::default()
                },
                timestamp: Some(self.now),
                window: "15s".into(),
                containers: Vec::new(),
            });
            let mut use_ = BTreeMap::new();
            use_.insert("cpu".to_string(), Quantity::from_milli(c));
            use_.insert("memory".to_string(), Quantity::bytes(m));
            pod.containers.push(ContainerMetrics { name: r.container.name.clone(), usage: use_ });
        }
        let mut use_ = BTreeMap::new();
        use_.insert("cpu".to_string(), Quantity::from_milli(cpu));
        use_.insert("memory".to_string(), Quantity::bytes(memory));
        let node_metrics = NodeMetrics {
            api_version: "metrics.k8s.io/v1beta1".into(),
            kind: "NodeMetrics".into(),
            metadata: ObjectMeta { name: node.to_string(), creation_timestamp: Some(self.now), ..Default::default() },
            timestamp: Some(self.now),
            window: "15s".into(),
            usage: use_,
        };
        Some((node_metrics, pods.into_values().collect()))
    }
}
