//! The CNI plugin's rules on a pod's request (see [`crate::cni`]): its DNS query to CoreDNS
//! (53/UDP, after kube-proxy's rules picked a CoreDNS pod) and its connection to whatever the
//! name and the node's Service rules lead to (the endpoint's address and port). A connection
//! the rules drop is never answered: the client waits until it gives up.

use super::Cluster;
use crate::api::Pod;
use crate::cni::Source;
use crate::proxy::{CurlResult, RouteError, parse_url};
use crate::sim::{Duration, Rng};

/// How long a connect waits when its SYNs go unanswered: Linux gives up after
/// `tcp_syn_retries` (6) retransmissions, about 127 s after the first.
pub const SYN_GIVE_UP: Duration = Duration::seconds(127);

/// Where a pod's packets come from: its own address, or its node's (host network).
pub fn source(pod: &Pod) -> Source<'_> {
    if pod.spec.host_network {
        Source::Node { name: &pod.spec.node_name, ip: &pod.status.pod_ip }
    } else {
        Source::Pod { node: &pod.spec.node_name, ip: &pod.status.pod_ip }
    }
}

fn node_of<'a>(from: &Source<'a>) -> &'a str {
    match *from {
        Source::Pod { node, .. } => node,
        Source::Node { name, .. } => name,
    }
}

/// Whether a DNS query from `from` to `server` gets through: to one of the CoreDNS pods the
/// node's rules send it to (or to `server` itself, a CoreDNS pod asked directly).
pub fn dns_allowed(cluster: &Cluster, from: Source, server: &str) -> bool {
    let targets = cluster.dns().endpoints(node_of(&from), server);
    if targets.is_empty() {
        // Nothing answers there anyway: the DNS path says so.
        return true;
    }
    let agents = cluster.cni_agents();
    targets.iter().any(|ip| crate::cni::check(&agents, from, ip, 53, "UDP").is_ok())
}

/// `curl` from `from` (a pod in `namespace`): the network's answer, unless the CNI agents'
/// rules drop the query for the name or the connection, which then time out.
pub fn curl_from(
    cluster: &Cluster,
    from: Source,
    namespace: &str,
    url: &str,
    host: Option<&str>,
    insecure: bool,
    rng: &mut Rng,
) -> CurlResult {
    let node = node_of(&from);
    if let Some(dropped) = dropped(cluster, from, namespace, url, rng.clone()) {
        return dropped;
    }
    super::network::curl_with_host(cluster, url, host, node, namespace, insecure, rng)
}

/// What curl gets when the rules drop its packets; `None` when they pass. Resolves and routes
/// as [`super::network::curl`] will, with the same draws.
fn dropped(cluster: &Cluster, from: Source, namespace: &str, url: &str, mut rng: Rng) -> Option<CurlResult> {
    let (_, host, port) = parse_url(url).ok()?;
    let node = node_of(&from);
    let dns = crate::api::well_known::KUBE_DNS_IP;
    let address = if host.parse::<std::net::Ipv4Addr>().is_ok() {
        host.clone()
    } else {
        if !dns_allowed(cluster, from, dns) {
            return Some(CurlResult {
                stderr: format!("curl: (6) Could not resolve host: {host}\n"),
                code: 6,
                waited: crate::dns::network::RESOLVER_TIMEOUT,
                ..Default::default()
            });
        }
        let addresses = cluster.dns().resolve(node, dns, &host, namespace).ok()?;
        addresses[rng.below(addresses.len() as u64) as usize].clone()
    };
    let (ip, port) = match cluster.kube_proxy(node)?.route(&address, port, &mut rng) {
        Ok(endpoint) => (endpoint.ip, endpoint.port),
        Err(RouteError::NoService) => (address, port),
        Err(RouteError::NoEndpoints { .. }) => return None,
    };
    let own = match from {
        Source::Pod { ip: me, .. } | Source::Node { ip: me, .. } => me == ip,
    };
    if own {
        // A pod's own address never leaves its network namespace.
        return None;
    }
    crate::cni::check(&cluster.cni_agents(), from, &ip, port, "TCP").err()?;
    let ms = SYN_GIVE_UP.as_millis();
    Some(CurlResult {
        stderr: format!(
            "curl: (28) Failed to connect to {host} port {port} after {ms} ms: Couldn't connect to server\n"
        ),
        code: 28,
        waited: SYN_GIVE_UP,
        ..Default::default()
    })
}
