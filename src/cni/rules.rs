//! What a node's CNI agent programs for each pod it hosts, compiled from the NetworkPolicies,
//! Pods and Namespaces it has seen: for each direction, `None` when no policy isolates the
//! pod that way (everything passes), or the rules of every policy that does — a connection
//! passes when one rule allows it. Selectors are resolved to the pod addresses they pick now,
//! as felix turns them into IP sets; named ports to numbers.

use crate::api::network_policy::{NetworkPolicy, Peer, PolicyPort};
use crate::api::{IntOrString, Namespace, Pod};
use crate::apiserver::network_policy_validation::{cidr_contains, parse_cidr};
use std::collections::{BTreeMap, BTreeSet};

/// A pod as the agent programs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// `namespace/name`.
    pub pod: String,
    pub ip: String,
    /// Rules for connections to the pod; `None`: not isolated for ingress.
    pub ingress: Option<Vec<Rule>>,
    /// Rules for connections from the pod; `None`: not isolated for egress.
    pub egress: Option<Vec<Rule>>,
}

/// One rule of one policy: the peers and ports it allows (`None`: any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The policy it came from, `namespace/name`.
    pub policy: String,
    pub peers: Option<Vec<PeerSet>>,
    pub ports: Option<Vec<PortMatch>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerSet {
    /// The addresses of the pods the selectors picked.
    Pods(BTreeSet<String>),
    /// An IP block less its exceptions.
    Block { cidr: (u32, u8), except: Vec<(u32, u8)> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortMatch {
    /// A protocol's ports `from..=to` (every port when the rule names none).
    Range { protocol: String, from: u16, to: u16 },
    /// A named port: the number it has on each pod address that declares it.
    Named { protocol: String, at: BTreeMap<String, u16> },
}

impl PeerSet {
    fn contains(&self, ip: &str) -> bool {
        match self {
            PeerSet::Pods(ips) => ips.contains(ip),
            PeerSet::Block { cidr, except } => ip.parse::<std::net::Ipv4Addr>().is_ok_and(|a| {
                let a = u32::from(a);
                cidr_contains(*cidr, a) && !except.iter().any(|e| cidr_contains(*e, a))
            }),
        }
    }
}

impl PortMatch {
    fn matches(&self, ip: &str, port: u16, proto: &str) -> bool {
        match self {
            PortMatch::Range { protocol, from, to } => protocol == proto && (*from..=*to).contains(&port),
            PortMatch::Named { protocol, at } => protocol == proto && at.get(ip) == Some(&port),
        }
    }
}

impl Rule {
    /// Whether the rule allows a connection with `peer` at the far end, to `dest:port`.
    pub fn allows(&self, peer: &str, dest: &str, port: u16, proto: &str) -> bool {
        self.peers.as_ref().is_none_or(|p| p.iter().any(|s| s.contains(peer)))
            && self.ports.as_ref().is_none_or(|p| p.iter().any(|m| m.matches(dest, port, proto)))
    }
}

/// Whether a direction's rules (`None`: not isolated) let a connection through.
pub fn passes(rules: &Option<Vec<Rule>>, peer: &str, dest: &str, port: u16, proto: &str) -> bool {
    rules.as_ref().is_none_or(|rules| rules.iter().any(|r| r.allows(peer, dest, port, proto)))
}

/// Whether a pod is an endpoint the pod network carries: it has its own address.
fn on_pod_network(pod: &Pod) -> bool {
    !pod.status.pod_ip.is_empty() && !pod.spec.host_network && !pod.is_terminal()
}

/// The pods a peer picks, from the pods and namespaces seen, for a policy in `namespace`.
fn peer_set(peer: &Peer, namespace: &str, pods: &[&Pod], namespaces: &BTreeMap<&str, &Namespace>) -> Option<PeerSet> {
    if let Some(block) = &peer.ip_block {
        let cidr = parse_cidr(&block.cidr)?;
        let except = block.except.iter().filter_map(|e| parse_cidr(e)).collect();
        return Some(PeerSet::Block { cidr, except });
    }
    let in_namespace = |ns: &str| match &peer.namespace_selector {
        None => ns == namespace,
        Some(sel) => namespaces.get(ns).is_some_and(|n| sel.matches(&n.metadata.labels)),
    };
    let ips = pods
        .iter()
        .filter(|p| in_namespace(&p.metadata.namespace))
        .filter(|p| peer.pod_selector.as_ref().is_none_or(|s| s.matches(&p.metadata.labels)))
        .map(|p| p.status.pod_ip.clone())
        .collect();
    Some(PeerSet::Pods(ips))
}

/// The number a named port has on a pod, for `protocol`.
fn named_port(pod: &Pod, name: &str, protocol: &str) -> Option<u16> {
    pod.spec.containers.iter().flat_map(|c| c.ports.iter()).find_map(|p| {
        (p.name.as_deref() == Some(name) && p.protocol.as_deref().unwrap_or("TCP") == protocol)
            .then_some(p.container_port as u16)
    })
}

/// A rule's ports: numbers as they are; names resolved on `target` (the pod itself, for
/// ingress) or on every pod seen (for egress, where the far end decides).
fn port_matches(ports: &[PolicyPort], target: Option<&Pod>, pods: &[&Pod]) -> Option<Vec<PortMatch>> {
    if ports.is_empty() {
        return None;
    }
    let matches = ports
        .iter()
        .map(|p| {
            let protocol = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            match &p.port {
                None => PortMatch::Range { protocol, from: 1, to: u16::MAX },
                Some(IntOrString::Int(n)) => {
                    let from = (*n).clamp(0, 65535) as u16;
                    let to = p.end_port.map_or(from, |e| e.clamp(0, 65535) as u16);
                    PortMatch::Range { protocol, from, to }
                }
                Some(IntOrString::String(name)) => {
                    let candidates: Vec<&Pod> = match target {
                        Some(t) => vec![t],
                        None => pods.to_vec(),
                    };
                    let at = candidates
                        .iter()
                        .filter_map(|pod| Some((pod.status.pod_ip.clone(), named_port(pod, name, &protocol)?)))
                        .collect();
                    PortMatch::Named { protocol, at }
                }
            }
        })
        .collect();
    Some(matches)
}

/// What the agent on `node` programs for each of its pods, by pod address.
pub fn compile(
    node: &str,
    policies: &[&NetworkPolicy],
    pods: &[&Pod],
    namespaces: &[&Namespace],
) -> BTreeMap<String, Endpoint> {
    let network: Vec<&Pod> = pods.iter().copied().filter(|p| on_pod_network(p)).collect();
    let namespaces: BTreeMap<&str, &Namespace> = namespaces.iter().map(|n| (n.metadata.name.as_str(), *n)).collect();
    let mut endpoints = BTreeMap::new();
    for pod in network.iter().filter(|p| p.spec.node_name == node) {
        let ns = pod.metadata.namespace.as_str();
        let mut endpoint = Endpoint {
            pod: format!("{ns}/{}", pod.metadata.name),
            ip: pod.status.pod_ip.clone(),
            ingress: None,
            egress: None,
        };
        let selecting =
            policies.iter().filter(|p| p.metadata.namespace == ns && p.spec.pod_selector.matches(&pod.metadata.labels));
        for policy in selecting {
            let name = format!("{ns}/{}", policy.metadata.name);
            let (ingress, egress) = policy.spec.isolates();
            let peers_of = |peers: &[Peer]| {
                (!peers.is_empty())
                    .then(|| peers.iter().filter_map(|p| peer_set(p, ns, &network, &namespaces)).collect())
            };
            if ingress {
                let rules = endpoint.ingress.get_or_insert_with(Vec::new);
                for rule in policy.spec.ingress.iter().flatten() {
                    let ports = port_matches(&rule.ports, Some(pod), &network);
                    rules.push(Rule { policy: name.clone(), peers: peers_of(&rule.from), ports });
                }
            }
            if egress {
                let rules = endpoint.egress.get_or_insert_with(Vec::new);
                for rule in policy.spec.egress.iter().flatten() {
                    let ports = port_matches(&rule.ports, None, &network);
                    rules.push(Rule { policy: name.clone(), peers: peers_of(&rule.to), ports });
                }
            }
        }
        endpoints.insert(endpoint.ip.clone(), endpoint);
    }
    endpoints
}

/// The policies a direction's rules come from, in order, each once.
pub fn policy_names(rules: &[Rule]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for r in rules {
        if !names.contains(&r.policy.as_str()) {
            names.push(&r.policy);
        }
    }
    names
}

/// One line for the record: how the agent now treats a pod.
pub fn summary(e: &Endpoint) -> String {
    let side = |rules: &Option<Vec<Rule>>, what: &str| match rules {
        None => format!("{what} open"),
        Some(rules) => {
            let names: Vec<&str> = policy_names(rules).into_iter().map(|n| n.rsplit('/').next().unwrap_or(n)).collect();
            format!("{what} isolated by {} ({} allow rules)", names.join(", "), rules.len())
        }
    };
    format!("programmed {} ({}): {}; {}", e.pod, e.ip, side(&e.ingress, "ingress"), side(&e.egress, "egress"))
}
