//! Cluster DNS as CoreDNS's `kubernetes` plugin answers it, seen from a pod with the kubelet's
//! default resolv.conf (`search <ns>.svc.cluster.local svc.cluster.local cluster.local`,
//! `ndots:5`): a Service's name gives its ClusterIP, a headless Service's gives its ready
//! endpoints' addresses, `<hostname>.<service>` gives one endpoint's, anything else NXDOMAIN.
//!
//! For now this is a pure resolver reading Services and EndpointSlices straight from the API
//! server's store (`ApiServer::peek_list`), not a CoreDNS pod behind the `kube-dns` Service:
//! it answers even while no CoreDNS pod runs.

use crate::api::{EndpointSlice, Kind, Object, Service};
use crate::apiserver::ApiServer;
use std::fmt;

pub const CLUSTER_DOMAIN: &str = "cluster.local";
/// resolv.conf's `ndots`: names with fewer dots try the search list first.
pub const NDOTS: usize = 5;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DnsError {
    /// No such name (NXDOMAIN), or a name with no addresses.
    NxDomain,
}

impl fmt::Display for DnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NXDOMAIN")
    }
}

/// The names a lookup of `name` tries, in order, from a pod in `namespace`.
pub fn candidates(name: &str, namespace: &str) -> Vec<String> {
    let name = name.to_ascii_lowercase();
    if let Some(absolute) = name.strip_suffix('.') {
        return vec![absolute.to_string()];
    }
    let search = [format!("{namespace}.svc.{CLUSTER_DOMAIN}"), format!("svc.{CLUSTER_DOMAIN}"), CLUSTER_DOMAIN.into()];
    let searched = search.iter().map(|domain| format!("{name}.{domain}"));
    if name.matches('.').count() >= NDOTS {
        std::iter::once(name.clone()).chain(searched).collect()
    } else {
        searched.chain(std::iter::once(name.clone())).collect()
    }
}

/// Resolves `name` as a pod in `namespace` would: the addresses of the first candidate that
/// has any.
pub fn resolve(api: &ApiServer, name: &str, namespace: &str) -> Result<Vec<String>, DnsError> {
    candidates(name, namespace).iter().find_map(|fqdn| lookup(api, fqdn, 0).ok()).ok_or(DnsError::NxDomain)
}

/// The name a PTR lookup of `ip` answers: the Service whose ClusterIP it is
/// (`kube-dns.kube-system.svc.cluster.local`), or None.
pub fn reverse(api: &ApiServer, ip: &str) -> Option<String> {
    api.peek_list(Kind::Service, "").iter().find_map(|o| match o.as_ref() {
        Object::Service(s) if s.spec.cluster_ip == ip => {
            Some(format!("{}.{}.svc.{CLUSTER_DOMAIN}", s.metadata.name, s.metadata.namespace))
        }
        _ => None,
    })
}

/// Answers one fully qualified name (without the trailing dot).
pub fn lookup(api: &ApiServer, fqdn: &str, depth: usize) -> Result<Vec<String>, DnsError> {
    let Some(rest) = fqdn.strip_suffix(&format!(".svc.{CLUSTER_DOMAIN}")) else { return Err(DnsError::NxDomain) };
    let labels: Vec<&str> = rest.split('.').collect();
    let (hostname, service, namespace) = match labels.as_slice() {
        [service, namespace] => (None, *service, *namespace),
        [hostname, service, namespace] => (Some(*hostname), *service, *namespace),
        _ => return Err(DnsError::NxDomain),
    };
    let svc = match api.peek(Kind::Service, namespace, service).as_deref() {
        Some(Object::Service(s)) => s.clone(),
        _ => return Err(DnsError::NxDomain),
    };
    if svc.spec.type_.as_deref() == Some("ExternalName") {
        // A CNAME; only names inside the cluster can be followed here.
        let target = svc.spec.external_name.clone().unwrap_or_default();
        let target = target.trim_end_matches('.');
        return if depth < 8 { lookup(api, target, depth + 1) } else { Err(DnsError::NxDomain) };
    }
    let headless = svc.spec.cluster_ip == "None";
    let addresses: Vec<String> = match hostname {
        None if !headless => vec![svc.spec.cluster_ip.clone()],
        // Per-endpoint names exist for headless Services only.
        Some(_) if !headless => Vec::new(),
        _ => endpoint_addresses(api, &svc, hostname),
    };
    if addresses.is_empty() || addresses[0].is_empty() { Err(DnsError::NxDomain) } else { Ok(addresses) }
}

/// The ready addresses of a Service's EndpointSlices (all of them when it publishes not-ready
/// addresses), optionally only the endpoint with `hostname`.
fn endpoint_addresses(api: &ApiServer, svc: &Service, hostname: Option<&str>) -> Vec<String> {
    let publish = svc.spec.publish_not_ready_addresses == Some(true);
    let mut addresses: Vec<String> = Vec::new();
    for object in api.peek_list(Kind::EndpointSlice, &svc.metadata.namespace) {
        let Object::EndpointSlice(EndpointSlice { metadata, endpoints, .. }) = &*object else { continue };
        if metadata.labels.get("kubernetes.io/service-name") != Some(&svc.metadata.name) {
            continue;
        }
        for e in endpoints {
            let ready = publish || e.conditions.ready != Some(false);
            let named = hostname.is_none_or(|h| e.hostname.as_deref() == Some(h));
            if ready && named {
                for a in &e.addresses {
                    if !addresses.contains(a) {
                        addresses.push(a.clone());
                    }
                }
            }
        }
    }
    addresses
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Cluster, ClusterConfig};
    use crate::sim::Duration;

    #[test]
    fn short_names_try_the_callers_namespace_first_and_absolute_names_only_themselves() {
        assert_eq!(
            candidates("web", "default"),
            ["web.default.svc.cluster.local", "web.svc.cluster.local", "web.cluster.local", "web"]
        );
        assert_eq!(candidates("web.default.svc.cluster.local.", "x"), ["web.default.svc.cluster.local"]);
    }

    #[test]
    fn a_service_resolves_by_short_namespaced_and_full_name_and_unknown_names_do_not() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.settle(Duration::seconds(5));
        let api = cluster.api();
        let ip = Ok(vec!["10.96.0.10".to_string()]);
        assert_eq!(resolve(api, "kube-dns", "kube-system"), ip);
        assert_eq!(resolve(api, "kube-dns.kube-system", "default"), ip);
        assert_eq!(resolve(api, "kube-dns.kube-system.svc", "default"), ip);
        assert_eq!(resolve(api, "kube-dns.kube-system.svc.cluster.local", "default"), ip);
        assert_eq!(resolve(api, "KUBE-DNS.kube-system.svc.cluster.local.", "default"), ip);
        assert_eq!(resolve(api, "kube-dns", "default"), Err(DnsError::NxDomain));
        assert_eq!(resolve(api, "kubernetes", "default"), Ok(vec!["10.96.0.1".to_string()]));
        assert_eq!(resolve(api, "nosuch", "default"), Err(DnsError::NxDomain));
        assert_eq!(resolve(api, "example.com", "default"), Err(DnsError::NxDomain));
    }
}
