//! The cluster's network as a pod's request crosses it: the name resolved by CoreDNS through
//! the node's rules, a ClusterIP routed by that node's kube-proxy, and whatever listens at the
//! endpoint — a pod's process as its kubelet started it, or kube-apiserver itself. Also what
//! a container's programs reach beyond their container (`userland::World`).

use super::Cluster;
use crate::apiserver::http::Answer;
use crate::dns::Network;
use crate::kubelet::Kubelet;
use crate::proxy::{CurlResult, Endpoint, RouteError, parse_url};
use crate::record::Seq;
use crate::sim::{Rng, Time};

/// Sends one HTTP(S) request from a pod in `namespace` on `node`: resolves the host with
/// cluster DNS, routes ClusterIPs with the node's kube-proxy rules (pod IPs directly), and
/// describes the answer of whatever listens at the endpoint in one line.
pub fn curl(cluster: &Cluster, url: &str, node: &str, namespace: &str, insecure: bool, rng: &mut Rng) -> CurlResult {
    curl_with_host(cluster, url, None, node, namespace, insecure, rng)
}

/// [`curl`] with a `Host:` header of its own (`curl -H 'Host: …'`), which an ingress
/// controller routes by.
pub fn curl_with_host(
    cluster: &Cluster,
    url: &str,
    host_header: Option<&str>,
    node: &str,
    namespace: &str,
    insecure: bool,
    rng: &mut Rng,
) -> CurlResult {
    let fail = |code: i32, message: String| CurlResult { stderr: format!("{message}\n"), code, ..Default::default() };
    let (scheme, host, port) = match parse_url(url) {
        Ok(parts) => parts,
        Err(message) => return fail(if message.starts_with("curl: (1)") { 1 } else { 3 }, message),
    };
    let Some(proxy) = cluster.kube_proxy(node) else {
        return fail(1, format!("sim curl: node \"{node}\" not found"));
    };
    let address = if host.parse::<std::net::Ipv4Addr>().is_ok() {
        host.clone()
    } else {
        // Asked of CoreDNS through the node's rules; when none answers, after the resolver's
        // timeout.
        match cluster.dns().resolve(node, crate::api::well_known::KUBE_DNS_IP, &host, namespace) {
            // DNS may hold several A records (a headless Service); curl takes the first, and
            // CoreDNS's `loadbalance` shuffles them.
            Ok(addresses) => addresses[rng.below(addresses.len() as u64) as usize].clone(),
            Err(crate::dns::DnsError::NxDomain) => return fail(6, format!("curl: (6) Could not resolve host: {host}")),
            Err(crate::dns::DnsError::Timeout) => {
                let waited = crate::dns::network::RESOLVER_TIMEOUT;
                return CurlResult { waited, ..fail(6, format!("curl: (6) Could not resolve host: {host}")) };
            }
        }
    };
    let refused =
        || fail(7, format!("curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server"));
    // A load balancer's address: the node's rules send it on to the Service's ClusterIP.
    let (address, port) = proxy.load_balancer_target(&address, port).unwrap_or((address, port));
    let (endpoint, via) = match proxy.route(&address, port, rng) {
        Ok(e) => (e, format!(" via {address}:{port}")),
        Err(RouteError::NoEndpoints { .. }) => return refused(),
        Err(RouteError::NoService) => {
            // Whatever pod holds the address, as the kubelet running it knows it.
            let pod = cluster.kubelets().find_map(|k| {
                k.pods().find(|p| p.as_pod().is_some_and(|p| p.status.pod_ip == address && !p.is_terminal())).cloned()
            });
            let api_server = address == crate::api::well_known::api_server_address();
            if pod.is_none() && !api_server {
                // Nothing on the path answers: the kernel gives up after its SYN retries.
                return fail(
                    28,
                    format!(
                        "curl: (28) Failed to connect to {host} port {port} after 127000 ms: Couldn't connect to server"
                    ),
                );
            }
            let pod = pod.and_then(|p| p.as_pod().map(|p| (p.metadata.namespace.clone(), p.metadata.name.clone())));
            let endpoint = Endpoint {
                ip: address.clone(),
                port,
                pod,
                node_name: None,
                ready: true,
                serving: true,
                terminating: false,
            };
            (endpoint, String::new())
        }
    };
    // kube-apiserver itself (the `kubernetes` Service's endpoint).
    if endpoint.pod.is_none() {
        let is_api = endpoint.ip == crate::api::well_known::api_server_address()
            && i32::from(endpoint.port) == crate::api::well_known::API_SERVER_PORT;
        if !is_api {
            return fail(
                28,
                format!(
                    "curl: (28) Failed to connect to {host} port {port} after 127000 ms: Couldn't connect to server"
                ),
            );
        }
        let from = format!("from kube-apiserver ({endpoint}){via}");
        return match (scheme.as_str(), insecure) {
            ("http", _) => CurlResult {
                stdout: format!("HTTP/1.0 400 Bad Request {from}: Client sent an HTTP request to an HTTPS server.\n"),
                ..Default::default()
            },
            (_, false) => fail(60, "curl: (60) SSL certificate problem: unable to get local issuer certificate".into()),
            (_, true) => CurlResult {
                stdout: format!("HTTP/2 403 {from}: forbidden: User \"system:anonymous\" cannot get path \"/\"\n"),
                ..Default::default()
            },
        };
    }
    let (pod_ns, pod_name) = endpoint.pod.clone().unwrap_or_default();
    // The pod's processes as the kubelet running it started them.
    let running = cluster.kubelets().find_map(|k| Some((k.pod(&pod_ns, &pod_name)?, k.objects())));
    let listener = running.and_then(|(object, objects)| {
        let pod = object.as_pod()?;
        pod.spec.containers.iter().find_map(|c| {
            let running = pod.status.container_statuses.iter().any(|s| s.name == c.name && s.state.running.is_some());
            let image = crate::kubelet::images::parse_reference(&c.image);
            let info = crate::kubelet::images::lookup(&image).ok()?;
            // The process got its command line with `$(VAR)` expanded.
            let (command, args) = crate::kubelet::env::command_line(&objects, pod, c, None);
            let ports = crate::kubelet::script::listening(info.behaviour, info.repository, &command, &args);
            (running && ports.contains(&endpoint.port)).then_some(info.repository)
        })
    });
    let from = format!("from pod {pod_name} ({}){via}", endpoint.ip);
    match listener {
        None => refused(),
        Some(_) if scheme == "https" => fail(1, format!("sim curl: TLS to pods is not simulated ({from})")),
        Some(crate::controllers::ingress_nginx::IMAGE) => {
            let path = crate::userland::url_path(url);
            super::ingress::serve(cluster, &pod_name, &endpoint.ip, host_header.unwrap_or(&host), &path, node, rng)
        }
        Some(r) if crate::kubelet::images::speaks_http(r) => {
            CurlResult { stdout: format!("HTTP/1.1 200 OK {from}\n"), ..Default::default() }
        }
        // Redis and memcached answer a request line with an error line, mysqld greets with
        // its handshake: none of it HTTP. Postgres closes the connection.
        Some("redis" | "mysql" | "memcached") => fail(1, "curl: (1) Received HTTP/0.9 when not allowed".into()),
        Some("postgres") => fail(52, "curl: (52) Empty reply from server".into()),
        Some(other) => fail(1, format!("sim curl: {other} does not speak HTTP ({from})")),
    }
}

impl crate::userland::World for Cluster {
    fn now(&self) -> Time {
        Cluster::now(self)
    }
    fn seed(&self) -> u64 {
        Cluster::seed(self)
    }
    fn last_seq(&self) -> Seq {
        self.record.last_seq()
    }
    fn kubelet(&self, node: &str) -> Option<&Kubelet> {
        Cluster::kubelet(self, node)
    }
    fn kubelets(&self) -> Vec<&Kubelet> {
        Cluster::kubelets(self).collect()
    }
    fn dns(&self) -> &Network {
        Cluster::dns(self)
    }
    fn curl(&self, url: &str, node: &str, namespace: &str, insecure: bool, rng: &mut Rng) -> CurlResult {
        curl(self, url, node, namespace, insecure, rng)
    }
    fn curl_from_pod(
        &self,
        pod: &crate::api::Pod,
        url: &str,
        host: Option<&str>,
        insecure: bool,
        rng: &mut Rng,
    ) -> CurlResult {
        let from = super::policy::source(pod);
        super::policy::curl_from(self, from, &pod.metadata.namespace, url, host, insecure, rng)
    }
    fn dns_allowed(&self, pod: &crate::api::Pod, server: &str) -> bool {
        super::policy::dns_allowed(self, super::policy::source(pod), server)
    }
    fn curl_with_host(
        &self,
        url: &str,
        host: Option<&str>,
        node: &str,
        namespace: &str,
        insecure: bool,
        rng: &mut Rng,
    ) -> CurlResult {
        curl_with_host(self, url, host, node, namespace, insecure, rng)
    }
    fn answer_http(&self, method: &str, path: &str, token: Option<&str>) -> Answer {
        crate::apiserver::http::answer(&self.api, method, path, token)
    }
    fn etcdctl(&self, args: &[String]) -> (String, String, i32) {
        match self.etcdctl {
            Some(etcdctl) => etcdctl(self.inspect(), args),
            None => (String::new(), "etcdctl: not available here\n".into(), 1),
        }
    }
}
