//! What CoreDNS's `kubernetes` plugin answers, and which names a pod's resolver asks it, as
//! pure functions over a [`Catalog`] of Services and EndpointSlices: a Service's name gives
//! its ClusterIP, a headless Service's its ready endpoints' addresses, `<hostname>.<service>`
//! one endpoint's, an ExternalName Service's the name it points to (followed inside the
//! cluster), anything else NXDOMAIN. A pod's resolv.conf (`search <ns>.svc.cluster.local
//! svc.cluster.local cluster.local`, `ndots:5`) decides the candidates a short name tries.

use crate::api::{EndpointSlice, Service};
use std::fmt;

pub const CLUSTER_DOMAIN: &str = "cluster.local";
/// resolv.conf's `ndots`: names with fewer dots try the search list first.
pub const NDOTS: usize = 5;

/// Why a lookup gave no addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DnsError {
    /// No such name (NXDOMAIN), or a name with no addresses.
    NxDomain,
    /// No server answered: the nameserver's address leads to no ready CoreDNS.
    Timeout,
}

impl fmt::Display for DnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DnsError::NxDomain => "NXDOMAIN",
            DnsError::Timeout => "connection timed out; no servers could be reached",
        })
    }
}

/// The Services and EndpointSlices a DNS server answers from.
pub trait Catalog {
    fn service(&self, namespace: &str, name: &str) -> Option<&Service>;
    /// The slices labelled `kubernetes.io/service-name: <service>` in `namespace`.
    fn slices_of(&self, namespace: &str, service: &str) -> Vec<&EndpointSlice>;
    /// The Service whose ClusterIP is `ip`.
    fn service_with_ip(&self, ip: &str) -> Option<&Service>;
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
pub fn resolve(zone: &dyn Catalog, name: &str, namespace: &str) -> Result<Vec<String>, DnsError> {
    first_known(zone, candidates(name, namespace)).map(|(_, a)| a).ok_or(DnsError::NxDomain)
}

/// The first of `names` that has addresses, with them.
pub fn first_known(zone: &dyn Catalog, names: Vec<String>) -> Option<(String, Vec<String>)> {
    names.into_iter().find_map(|fqdn| lookup(zone, &fqdn, 0).ok().map(|a| (fqdn, a)))
}

/// The name a PTR lookup of `ip` answers: the Service whose ClusterIP it is
/// (`kube-dns.kube-system.svc.cluster.local`), or None.
pub fn reverse(zone: &dyn Catalog, ip: &str) -> Option<String> {
    let s = zone.service_with_ip(ip)?;
    Some(format!("{}.{}.svc.{CLUSTER_DOMAIN}", s.metadata.name, s.metadata.namespace))
}

/// Answers one fully qualified name (without the trailing dot).
pub fn lookup(zone: &dyn Catalog, fqdn: &str, depth: usize) -> Result<Vec<String>, DnsError> {
    let Some(rest) = fqdn.strip_suffix(&format!(".svc.{CLUSTER_DOMAIN}")) else { return Err(DnsError::NxDomain) };
    let labels: Vec<&str> = rest.split('.').collect();
    let (hostname, service, namespace) = match labels.as_slice() {
        [service, namespace] => (None, *service, *namespace),
        [hostname, service, namespace] => (Some(*hostname), *service, *namespace),
        _ => return Err(DnsError::NxDomain),
    };
    let Some(svc) = zone.service(namespace, service) else { return Err(DnsError::NxDomain) };
    if svc.spec.type_.as_deref() == Some("ExternalName") {
        // A CNAME; only names inside the cluster can be followed here.
        let target = svc.spec.external_name.clone().unwrap_or_default();
        let target = target.trim_end_matches('.');
        return if depth < 8 { lookup(zone, target, depth + 1) } else { Err(DnsError::NxDomain) };
    }
    let headless = svc.spec.cluster_ip == "None";
    let addresses: Vec<String> = match hostname {
        None if !headless => vec![svc.spec.cluster_ip.clone()],
        // Per-endpoint names exist for headless Services only.
        Some(_) if !headless => Vec::new(),
        _ => endpoint_addresses(zone, svc, hostname),
    };
    if addresses.is_empty() || addresses[0].is_empty() { Err(DnsError::NxDomain) } else { Ok(addresses) }
}

/// The ready addresses of a Service's EndpointSlices (all of them when it publishes not-ready
/// addresses), optionally only the endpoint with `hostname`.
fn endpoint_addresses(zone: &dyn Catalog, svc: &Service, hostname: Option<&str>) -> Vec<String> {
    let publish = svc.spec.publish_not_ready_addresses == Some(true);
    let mut addresses: Vec<String> = Vec::new();
    for slice in zone.slices_of(&svc.metadata.namespace, &svc.metadata.name) {
        for e in &slice.endpoints {
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
    use crate::dns::Index;

    fn service(namespace: &str, name: &str, ip: &str) -> Service {
        let mut s = Service::default();
        s.metadata.name = name.into();
        s.metadata.namespace = namespace.into();
        s.spec.cluster_ip = ip.into();
        s
    }

    fn slice(namespace: &str, service: &str, endpoints: &[(&str, Option<&str>, bool)]) -> EndpointSlice {
        let mut s = EndpointSlice::default();
        s.metadata.name = format!("{service}-abcde");
        s.metadata.namespace = namespace.into();
        s.metadata.labels.insert("kubernetes.io/service-name".into(), service.into());
        for (ip, hostname, ready) in endpoints {
            s.endpoints.push(crate::api::service::SliceEndpoint {
                addresses: vec![ip.to_string()],
                hostname: hostname.map(String::from),
                conditions: crate::api::service::EndpointConditions { ready: Some(*ready), ..Default::default() },
                ..Default::default()
            });
        }
        s
    }

    fn zone() -> Index {
        let mut external = service("default", "db", "");
        external.spec.type_ = Some("ExternalName".into());
        external.spec.external_name = Some("mysql.data.svc.cluster.local".into());
        Index::of(
            [
                service("kube-system", "kube-dns", "10.96.0.10"),
                service("default", "kubernetes", "10.96.0.1"),
                service("default", "nginx", "None"),
                service("data", "mysql", "10.96.7.7"),
                external,
            ],
            [slice("default", "nginx", &[("10.244.1.2", Some("web-0"), true), ("10.244.2.2", Some("web-1"), false)])],
        )
    }

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
        let zone = zone();
        let ip = Ok(vec!["10.96.0.10".to_string()]);
        assert_eq!(resolve(&zone, "kube-dns", "kube-system"), ip);
        assert_eq!(resolve(&zone, "kube-dns.kube-system", "default"), ip);
        assert_eq!(resolve(&zone, "kube-dns.kube-system.svc", "default"), ip);
        assert_eq!(resolve(&zone, "kube-dns.kube-system.svc.cluster.local", "default"), ip);
        assert_eq!(resolve(&zone, "KUBE-DNS.kube-system.svc.cluster.local.", "default"), ip);
        assert_eq!(resolve(&zone, "kube-dns", "default"), Err(DnsError::NxDomain));
        assert_eq!(resolve(&zone, "kubernetes", "default"), Ok(vec!["10.96.0.1".to_string()]));
        assert_eq!(resolve(&zone, "nosuch", "default"), Err(DnsError::NxDomain));
        assert_eq!(resolve(&zone, "example.com", "default"), Err(DnsError::NxDomain));
    }

    #[test]
    fn a_headless_service_answers_its_ready_endpoints_and_each_by_its_hostname() {
        let zone = zone();
        assert_eq!(resolve(&zone, "nginx", "default"), Ok(vec!["10.244.1.2".to_string()]));
        assert_eq!(resolve(&zone, "web-0.nginx", "default"), Ok(vec!["10.244.1.2".to_string()]));
        assert_eq!(resolve(&zone, "web-1.nginx", "default"), Err(DnsError::NxDomain), "not ready");
        assert_eq!(resolve(&zone, "web-0.kubernetes", "default"), Err(DnsError::NxDomain), "not headless");
    }

    #[test]
    fn an_external_name_inside_the_cluster_is_followed_and_a_cluster_ip_names_its_service() {
        let zone = zone();
        assert_eq!(resolve(&zone, "db", "default"), Ok(vec!["10.96.7.7".to_string()]));
        assert_eq!(reverse(&zone, "10.96.0.10").as_deref(), Some("kube-dns.kube-system.svc.cluster.local"));
        assert_eq!(reverse(&zone, "10.96.9.9"), None);
    }
}
