//! kube-proxy (iptables mode), one per node: watches Services and EndpointSlices and keeps the
//! node's rules — for each ClusterIP:port, the endpoints a connection may be sent to, as the
//! `KUBE-SVC-…` chains hold them (ready endpoints; serving-but-terminating ones only when none
//! is ready; only this node's for `internalTrafficPolicy: Local`), or a REJECT when there are
//! none. Rule syncs are rate-limited by `minSyncPeriod` (1s, burst 2).
//!
//! Also the sandbox's `sim curl`: a request from a pod on a node, its host resolved by
//! CoreDNS (reached through that node's rules, see [`crate::dns::network`]), routed by the
//! node's rules, and answered (or not) by whatever listens at the endpoint. Its rule for the
//! `kube-dns` Service's 53/UDP is what it tells the DNS path after each sync.

use crate::api::{EndpointSlice, Kind, Object, Service};
use crate::client::component::{Component, Ctx, Informer};
use crate::sim::{Duration, Rng, Time};
use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;

/// `iptables.minSyncPeriod`.
pub const MIN_SYNC_PERIOD: Duration = Duration::seconds(1);
/// How many syncs may run back to back before the rate limit applies.
const SYNC_BURST: u64 = 2;

/// One backend of a Service port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub ip: String,
    pub port: u16,
    /// The pod behind it (`namespace`, `name`), if the slice names one.
    pub pod: Option<(String, String)>,
    pub node_name: Option<String>,
    pub ready: bool,
    pub serving: bool,
    pub terminating: bool,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.ip, self.port)
    }
}

/// The rule for one Service port: where connections to `cluster_ip:port` go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRule {
    /// `namespace/name` and the port's name.
    pub service: String,
    pub port_name: String,
    pub cluster_ip: String,
    pub port: u16,
    pub protocol: String,
    /// What the KUBE-SVC chain jumps to; empty means REJECT.
    pub endpoints: Vec<Endpoint>,
}

/// Why a connection could not be routed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// No rule matches the address: the packet leaves the node and nothing answers.
    NoService,
    /// The Service has no endpoints to send to: rejected (connection refused).
    NoEndpoints { service: String },
}

pub struct KubeProxy {
    node: String,
    services: Informer,
    slices: Informer,
    /// `(clusterIP, port, protocol)` → rule.
    rules: BTreeMap<(String, u16, String), ServiceRule>,
    /// Changes seen but not yet in the rules.
    dirty: bool,
    /// Token bucket for the sync rate limit, in milliseconds of credit.
    credit_ms: u64,
    last_refill: Time,
    /// Where pods' DNS queries learn this node's route to CoreDNS.
    network: crate::dns::Network,
}

impl KubeProxy {
    pub fn new(node: &str) -> Self {
        KubeProxy {
            node: node.to_string(),
            services: Informer::new(Kind::Service),
            slices: Informer::new(Kind::EndpointSlice),
            rules: BTreeMap::new(),
            dirty: true,
            credit_ms: SYNC_BURST * MIN_SYNC_PERIOD.as_millis(),
            last_refill: Time::ZERO,
            network: crate::dns::Network::default(),
        }
    }

    /// Tells `network` where its rules send the cluster's DNS queries (see
    /// [`crate::dns::network`]).
    pub fn with_network(mut self, network: crate::dns::Network) -> Self {
        self.network = network;
        self
    }

    pub fn node_name(&self) -> &str {
        &self.node
    }

    /// The node's rules, in address order.
    pub fn rules(&self) -> impl Iterator<Item = &ServiceRule> {
        self.rules.values()
    }

    /// Where a TCP connection to `ip:port` goes: one of the rule's endpoints, each equally
    /// likely — as iptables' `statistic --mode random --probability 1/n, 1/(n-1), …, 1` rules
    /// pick them in turn.
    pub fn route(&self, ip: &str, port: u16, rng: &mut Rng) -> Result<Endpoint, RouteError> {
        let rule = self.rules.get(&(ip.to_string(), port, "TCP".to_string())).ok_or(RouteError::NoService)?;
        let n = rule.endpoints.len();
        for (i, endpoint) in rule.endpoints.iter().enumerate() {
            if i == n - 1 || rng.below((n - i) as u64) == 0 {
                return Ok(endpoint.clone());
            }
        }
        Err(RouteError::NoEndpoints { service: rule.service.clone() })
    }

    /// Where this node's rules send a connection to a load balancer's address (`KUBE-EXT`
    /// chains for a `type: LoadBalancer` Service's `status.loadBalancer.ingress[].ip`): the
    /// Service's ClusterIP and port, whose rule picks the endpoint.
    pub fn load_balancer_target(&self, ip: &str, port: u16) -> Option<(String, u16)> {
        self.services.cache.values().find_map(|o| {
            let Object::Service(svc) = &**o else { return None };
            if svc.spec.type_.as_deref() != Some("LoadBalancer")
                || !crate::controllers::service_lb::lb_ips(svc).iter().any(|a| a == ip)
            {
                return None;
            }
            let p = svc.spec.ports.iter().find(|p| p.port == i32::from(port))?;
            Some((svc.spec.cluster_ip.clone(), p.port as u16))
        })
    }

    /// Builds every rule from the caches, as a full iptables sync does.
    fn build_rules(&self) -> BTreeMap<(String, u16, String), ServiceRule> {
        let mut rules = BTreeMap::new();
        for object in self.services.cache.values() {
            let Object::Service(svc) = &**object else { continue };
            let has_ip = !svc.spec.cluster_ip.is_empty() && svc.spec.cluster_ip != "None";
            if !has_ip || svc.spec.type_.as_deref() == Some("ExternalName") {
                continue;
            }
            let slices: Vec<&EndpointSlice> = self
                .slices
                .cache
                .values()
                .filter_map(|o| if let Object::EndpointSlice(s) = &**o { Some(s) } else { None })
                .filter(|s| s.metadata.namespace == svc.metadata.namespace)
                .filter(|s| s.metadata.labels.get("kubernetes.io/service-name") == Some(&svc.metadata.name))
                .collect();
            for port in &svc.spec.ports {
                let protocol = port.protocol.clone().unwrap_or_else(|| "TCP".into());
                let name = port.name.clone().unwrap_or_default();
                let rule = ServiceRule {
                    service: format!("{}/{}", svc.metadata.namespace, svc.metadata.name),
                    port_name: name.clone(),
                    cluster_ip: svc.spec.cluster_ip.clone(),
                    port: port.port as u16,
                    protocol: protocol.clone(),
                    endpoints: self.chain(svc, &slices, &name, &protocol),
                };
                rules.insert((rule.cluster_ip.clone(), rule.port, protocol), rule);
            }
        }
        rules
    }

    /// The endpoints a Service port's chain jumps to.
    fn chain(&self, svc: &Service, slices: &[&EndpointSlice], port_name: &str, protocol: &str) -> Vec<Endpoint> {
        let mut all: BTreeMap<String, Endpoint> = BTreeMap::new();
        for slice in slices {
            let Some(port) = slice
                .ports
                .iter()
                .find(|p| {
                    p.name.as_deref().unwrap_or("") == port_name && p.protocol.as_deref().unwrap_or("TCP") == protocol
                })
                .and_then(|p| p.port)
            else {
                continue;
            };
            for e in &slice.endpoints {
                let Some(ip) = e.addresses.first() else { continue };
                let endpoint = Endpoint {
                    ip: ip.clone(),
                    port: port as u16,
                    pod: e
                        .target_ref
                        .as_ref()
                        .filter(|r| r.kind == "Pod")
                        .map(|r| (r.namespace.clone(), r.name.clone())),
                    node_name: e.node_name.clone(),
                    ready: e.conditions.ready != Some(false),
                    serving: e.conditions.serving != Some(false),
                    terminating: e.conditions.terminating == Some(true),
                };
                all.entry(endpoint.to_string()).or_insert(endpoint);
            }
        }
        let local_only = svc.spec.internal_traffic_policy.as_deref() == Some("Local");
        let candidates: Vec<Endpoint> =
            all.into_values().filter(|e| !local_only || e.node_name.as_deref() == Some(self.node.as_str())).collect();
        let ready: Vec<Endpoint> = candidates.iter().filter(|e| e.ready).cloned().collect();
        if !ready.is_empty() {
            return ready;
        }
        candidates.into_iter().filter(|e| e.serving && e.terminating).collect()
    }

    /// Takes what the watches brought; syncs the rules when the rate limit allows.
    fn sync(&mut self, ctx: &mut Ctx) -> Option<Time> {
        let changed = !self.services.sync(ctx).is_empty() | !self.slices.sync(ctx).is_empty();
        self.dirty |= changed;
        let full = SYNC_BURST * MIN_SYNC_PERIOD.as_millis();
        self.credit_ms = (self.credit_ms + ctx.now.since(self.last_refill).as_millis()).min(full);
        self.last_refill = ctx.now;
        if !self.dirty {
            return None;
        }
        let period = MIN_SYNC_PERIOD.as_millis();
        if self.credit_ms < period {
            return Some(ctx.now + Duration::millis(period - self.credit_ms));
        }
        self.credit_ms -= period;
        self.dirty = false;
        let rules = self.build_rules();
        let mut services: Vec<&str> = Vec::new();
        for (key, rule) in rules.iter().chain(self.rules.iter()) {
            let (old, new) = (self.rules.get(key), rules.get(key));
            if old != new && !services.contains(&rule.service.as_str()) {
                services.push(&rule.service);
            }
        }
        let texts: Vec<String> = services
            .iter()
            .map(|service| {
                let mine: Vec<&ServiceRule> = rules.values().filter(|r| r.service == *service).collect();
                if mine.is_empty() {
                    return format!("removed rules for {service}");
                }
                let ports: Vec<String> = mine
                    .iter()
                    .map(|r| {
                        let to = if r.endpoints.is_empty() {
                            "REJECT (no endpoints)".to_string()
                        } else {
                            r.endpoints.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ")
                        };
                        format!("{}:{}/{} → {to}", r.cluster_ip, r.port, r.protocol)
                    })
                    .collect();
                let count: usize = mine.iter().map(|r| r.endpoints.len().max(1)).sum();
                format!("synced {count} rules for {service}: {}", ports.join("; "))
            })
            .collect();
        for text in texts {
            ctx.decide(|| text);
        }
        self.rules = rules;
        let dns = self
            .rules
            .values()
            .filter(|r| r.service == crate::dns::network::KUBE_DNS && r.port == 53 && r.protocol == "UDP");
        let routes = dns.map(|r| (r.cluster_ip.clone(), r.endpoints.iter().map(|e| e.ip.clone()).collect())).collect();
        self.network.set_routes(&self.node, routes);
        None
    }
}

impl Component for KubeProxy {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        let _ = self.services.start(ctx);
        let _ = self.slices.start(ctx);
        self.last_refill = ctx.now;
        self.dirty = true;
        Some(ctx.now)
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.sync(ctx)
    }

    fn busy(&self) -> bool {
        self.dirty
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What `sim curl` printed and its exit status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CurlResult {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
    /// How long it waited for an answer that never came (the resolver's timeout, when no
    /// CoreDNS could be reached).
    pub waited: Duration,
}

/// A URL's parts as curl reads them: scheme (default http), host, port (default by scheme).
pub fn parse_url(url: &str) -> Result<(String, String, u16), String> {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s.to_ascii_lowercase(), r),
        None => ("http".to_string(), url),
    };
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err(format!("curl: (1) Protocol \"{scheme}\" not supported")),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => match p.parse::<u16>() {
            Ok(p) => (h, p),
            Err(_) => {
                return Err("curl: (3) URL rejected: Port number was not a decimal number between 0 and 65535".into());
            }
        },
        None => (authority, default_port),
    };
    if host.is_empty() {
        return Err("curl: (3) URL rejected: No host part in the URL".into());
    }
    Ok((scheme, host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(endpoints: Vec<Endpoint>) -> KubeProxy {
        let mut proxy = KubeProxy::new("worker-1");
        let r = ServiceRule {
            service: "default/web".into(),
            port_name: String::new(),
            cluster_ip: "10.96.12.34".into(),
            port: 80,
            protocol: "TCP".into(),
            endpoints,
        };
        proxy.rules.insert(("10.96.12.34".into(), 80, "TCP".into()), r);
        proxy
    }

    fn ep(ip: &str, ready: bool) -> Endpoint {
        Endpoint {
            ip: ip.into(),
            port: 80,
            pod: None,
            node_name: Some("worker-1".into()),
            ready,
            serving: ready,
            terminating: !ready,
        }
    }

    #[test]
    fn route_spreads_connections_evenly_over_the_chains_endpoints() {
        let proxy = rule(vec![ep("10.244.1.2", true), ep("10.244.2.2", true), ep("10.244.3.2", true)]);
        let mut rng = Rng::new(7);
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for _ in 0..3000 {
            *counts.entry(proxy.route("10.96.12.34", 80, &mut rng).unwrap().ip).or_default() += 1;
        }
        assert_eq!(counts.len(), 3);
        assert!(counts.values().all(|&c| (850..1150).contains(&c)), "{counts:?}");
    }

    #[test]
    fn route_chooses_only_ready_endpoints_and_refuses_when_there_are_none() {
        let mut proxy = KubeProxy::new("worker-1");
        let mut svc = Service::default();
        svc.metadata.name = "web".into();
        svc.metadata.namespace = "default".into();
        let mut slice = EndpointSlice::default();
        slice.metadata.namespace = "default".into();
        slice.metadata.labels.insert("kubernetes.io/service-name".into(), "web".into());
        slice.ports.push(crate::api::service::EndpointPort {
            name: Some(String::new()),
            port: Some(80),
            protocol: Some("TCP".into()),
            app_protocol: None,
        });
        for (ip, ready) in [("10.244.1.2", true), ("10.244.2.2", false), ("10.244.3.2", true)] {
            slice.endpoints.push(crate::api::service::SliceEndpoint {
                addresses: vec![ip.into()],
                conditions: crate::api::service::EndpointConditions {
                    ready: Some(ready),
                    serving: Some(ready),
                    terminating: Some(false),
                },
                ..Default::default()
            });
        }
        let chain = proxy.chain(&svc, &[&slice], "", "TCP");
        let ips: Vec<&str> = chain.iter().map(|e| e.ip.as_str()).collect();
        assert_eq!(ips, ["10.244.1.2", "10.244.3.2"]);
        proxy.rules = rule(chain).rules;
        let mut rng = Rng::new(1);
        for _ in 0..200 {
            assert_ne!(proxy.route("10.96.12.34", 80, &mut rng).unwrap().ip, "10.244.2.2");
        }
        let proxy = rule(Vec::new());
        assert_eq!(
            proxy.route("10.96.12.34", 80, &mut rng),
            Err(RouteError::NoEndpoints { service: "default/web".into() })
        );
        assert_eq!(proxy.route("10.96.99.99", 80, &mut rng), Err(RouteError::NoService));
    }

    #[test]
    fn terminating_endpoints_still_serving_are_used_only_when_none_is_ready() {
        let proxy = KubeProxy::new("worker-1");
        let svc = Service::default();
        let mut slice = EndpointSlice::default();
        slice.ports.push(crate::api::service::EndpointPort { port: Some(80), ..Default::default() });
        slice.endpoints.push(crate::api::service::SliceEndpoint {
            addresses: vec!["10.244.1.2".into()],
            conditions: crate::api::service::EndpointConditions {
                ready: Some(false),
                serving: Some(true),
                terminating: Some(true),
            },
            ..Default::default()
        });
        assert_eq!(proxy.chain(&svc, &[&slice], "", "TCP").len(), 1);
    }

    #[test]
    fn urls_default_their_scheme_and_port() {
        assert_eq!(
            parse_url("http://web.default.svc.cluster.local/").unwrap(),
            ("http".into(), "web.default.svc.cluster.local".into(), 80)
        );
        assert_eq!(parse_url("10.96.12.34:8080").unwrap(), ("http".into(), "10.96.12.34".into(), 8080));
        assert_eq!(parse_url("https://kubernetes").unwrap().2, 443);
        assert!(parse_url("ftp://x").is_err());
    }
}
