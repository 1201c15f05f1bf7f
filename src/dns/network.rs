//! The path of a pod's DNS query: from the pod to the nameserver in its resolv.conf (the
//! `kube-dns` Service's ClusterIP), through its own node's kube-proxy rules for that address's
//! 53/UDP, to a ready CoreDNS pod, which answers from its caches. A node whose rules have no
//! endpoint there (CoreDNS scaled to zero, or none of its pods ready) drops the query: the
//! resolver times out.
//!
//! Both ends publish here what the query path needs from them, as they change: each
//! kube-proxy, after a rule sync, where its node sends `kube-dns`'s 53/UDP; CoreDNS, after
//! each sync of its watches, its indexes. Nothing here reads the API server. One `Network`
//! is shared (as a handle) by the cluster, its kube-proxies, kubelets (a container's `until
//! nslookup NAME` loop asks here) and CoreDNS.

use super::index::Index;
use super::resolver::{self, DnsError};
use std::cell::{RefCell, RefMut};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The Service behind the cluster's DNS address.
pub const KUBE_DNS: &str = "kube-system/kube-dns";
/// How long a resolver waits for a server that does not answer before it gives up: glibc's
/// and BIND's 5 s per try, two tries (resolv.conf's `timeout:5 attempts:2`).
pub const RESOLVER_TIMEOUT: crate::sim::Duration = crate::sim::Duration::seconds(10);

#[derive(Clone, Default)]
pub struct Network(Rc<RefCell<State>>);

#[derive(Default)]
struct State {
    /// CoreDNS's indexes, as its last sync left them.
    zone: Index,
    /// Node → the `kube-dns` ClusterIP → the CoreDNS endpoints its 53/UDP rule sends to.
    routes: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Network")
    }
}

impl Network {
    /// kube-proxy on `node` synced its rules: `routes` is where `kube-dns`'s 53/UDP goes now.
    pub fn set_routes(&self, node: &str, routes: BTreeMap<String, Vec<String>>) {
        self.0.borrow_mut().routes.insert(node.to_string(), routes);
    }

    /// CoreDNS's indexes, to bring up to date.
    pub(super) fn zone_mut(&self) -> RefMut<'_, Index> {
        RefMut::map(self.0.borrow_mut(), |s| &mut s.zone)
    }

    /// Whether a query from a pod on `node` to `server` port 53/UDP reaches a CoreDNS pod:
    /// through the node's rule for the `kube-dns` ClusterIP, or sent to a CoreDNS pod's own
    /// address.
    pub fn reaches(&self, node: &str, server: &str) -> bool {
        let state = self.0.borrow();
        match state.routes.get(node).and_then(|r| r.get(server)) {
            Some(endpoints) => !endpoints.is_empty(),
            None => state.routes.values().flat_map(|r| r.values()).any(|eps| eps.iter().any(|e| e == server)),
        }
    }

    /// The CoreDNS pods a query from `node` to `server` is sent to: those its rule for the
    /// address leads to, or `server` itself when it is a CoreDNS pod.
    pub fn endpoints(&self, node: &str, server: &str) -> Vec<String> {
        let state = self.0.borrow();
        match state.routes.get(node).and_then(|r| r.get(server)) {
            Some(endpoints) => endpoints.clone(),
            None if state.routes.values().flat_map(|r| r.values()).flatten().any(|e| e == server) => {
                vec![server.to_string()]
            }
            None => Vec::new(),
        }
    }

    /// Whether any node's rules lead a query to a CoreDNS pod.
    pub fn answering(&self) -> bool {
        self.0.borrow().routes.values().flat_map(|r| r.values()).any(|eps| !eps.is_empty())
    }

    /// What CoreDNS answers `ask` from its indexes, when a query from `node` to `server`
    /// reaches it.
    pub fn ask<R>(&self, node: &str, server: &str, ask: impl FnOnce(&Index) -> R) -> Result<R, DnsError> {
        if !self.reaches(node, server) {
            return Err(DnsError::Timeout);
        }
        Ok(ask(&self.0.borrow().zone))
    }

    /// Resolves `name` as a pod in `namespace` on `node` with `server` in its resolv.conf.
    pub fn resolve(&self, node: &str, server: &str, name: &str, namespace: &str) -> Result<Vec<String>, DnsError> {
        self.ask(node, server, |zone| resolver::resolve(zone, name, namespace))?
    }

    /// The first of `names` that has addresses, with them (None: every one is NXDOMAIN).
    pub fn first_known(
        &self,
        node: &str,
        server: &str,
        names: Vec<String>,
    ) -> Result<Option<(String, Vec<String>)>, DnsError> {
        self.ask(node, server, |zone| resolver::first_known(zone, names))
    }

    /// The PTR answer for `ip` (None: no Service has it).
    pub fn reverse(&self, node: &str, server: &str, ip: &str) -> Result<Option<String>, DnsError> {
        self.ask(node, server, |zone| resolver::reverse(zone, ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Service;

    #[test]
    fn a_query_is_answered_only_where_the_nodes_rules_lead_to_a_coredns_pod() {
        let network = Network::default();
        let mut dns = Service::default();
        dns.metadata.name = "kube-dns".into();
        dns.metadata.namespace = "kube-system".into();
        dns.spec.cluster_ip = "10.96.0.10".into();
        *network.zone_mut() = Index::of([dns], []);
        let answer = Ok(vec!["10.96.0.10".to_string()]);
        let ask = |node: &str, server: &str| network.resolve(node, server, "kube-dns.kube-system", "default");
        assert_eq!(ask("worker-1", "10.96.0.10"), Err(DnsError::Timeout), "no rules synced yet");
        network.set_routes("worker-1", BTreeMap::from([("10.96.0.10".into(), vec!["10.244.2.3".into()])]));
        network.set_routes("worker-2", BTreeMap::from([("10.96.0.10".into(), Vec::new())]));
        assert_eq!(ask("worker-1", "10.96.0.10"), answer);
        assert_eq!(ask("worker-2", "10.96.0.10"), Err(DnsError::Timeout), "its rule rejects");
        assert_eq!(ask("worker-2", "10.244.2.3"), answer, "straight to a CoreDNS pod");
        assert_eq!(ask("worker-1", "8.8.8.8"), Err(DnsError::Timeout), "nothing answers there");
    }
}
