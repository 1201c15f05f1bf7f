use super::rules::{compile, passes};
use super::*;
use crate::api::network_policy::{NetworkPolicy, default_policy};
use crate::api::{Namespace, Pod};

fn policy(yaml: &str) -> NetworkPolicy {
    let mut p: NetworkPolicy = serde_json::from_value(crate::yaml::from_str(yaml).unwrap()).unwrap();
    default_policy(&mut p);
    p
}

fn pod(ns: &str, name: &str, node: &str, ip: &str, labels: &[(&str, &str)]) -> Pod {
    let mut p = Pod::default();
    p.metadata.namespace = ns.into();
    p.metadata.name = name.into();
    p.metadata.labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    std::sync::Arc::make_mut(&mut p.spec).node_name = node.into();
    std::sync::Arc::make_mut(&mut p.status).pod_ip = ip.into();
    p
}

fn namespace(name: &str, labels: &[(&str, &str)]) -> Namespace {
    let mut n = Namespace::default();
    n.metadata.name = name.into();
    n.metadata.labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    n
}

/// An agent on `node` that has seen these objects.
fn agent(node: &str, policies: &[NetworkPolicy], pods: &[Pod], namespaces: &[Namespace]) -> CalicoNode {
    let mut a = CalicoNode::new(node);
    let policies: Vec<&NetworkPolicy> = policies.iter().collect();
    let pods: Vec<&Pod> = pods.iter().collect();
    let namespaces: Vec<&Namespace> = namespaces.iter().collect();
    a.endpoints = compile(node, &policies, &pods, &namespaces);
    a
}

struct World {
    pods: Vec<Pod>,
    namespaces: Vec<Namespace>,
}

fn world() -> World {
    World {
        pods: vec![
            pod("default", "web", "worker-1", "10.244.1.2", &[("app", "web")]),
            pod("default", "client", "worker-2", "10.244.2.2", &[("role", "client")]),
            pod("default", "other", "worker-2", "10.244.2.3", &[]),
            pod("prod", "api", "worker-2", "10.244.2.4", &[("role", "client")]),
        ],
        namespaces: vec![namespace("default", &[]), namespace("prod", &[("team", "prod")])],
    }
}

fn verdict(w: &World, policies: &[NetworkPolicy], from: &str, to: &str, port: u16) -> Result<(), Denied> {
    let agents =
        [agent("worker-1", policies, &w.pods, &w.namespaces), agent("worker-2", policies, &w.pods, &w.namespaces)];
    let agents: Vec<&CalicoNode> = agents.iter().collect();
    let sender = w.pods.iter().find(|p| p.status.pod_ip == from).unwrap();
    check(&agents, Source::Pod { node: &sender.spec.node_name, ip: from }, to, port, "TCP")
}

#[test]
fn pods_no_policy_selects_accept_everything() {
    let w = world();
    assert_eq!(verdict(&w, &[], "10.244.2.3", "10.244.1.2", 80), Ok(()));
    let unrelated =
        policy("metadata: {name: db, namespace: default}\nspec:\n  podSelector: {matchLabels: {app: db}}\n");
    assert_eq!(verdict(&w, &[unrelated], "10.244.2.3", "10.244.1.2", 80), Ok(()));
}

#[test]
fn a_default_deny_ingress_policy_drops_every_connection_to_the_namespaces_pods() {
    let w = world();
    let deny =
        policy("metadata: {name: deny, namespace: default}\nspec:\n  podSelector: {}\n  policyTypes: [Ingress]\n");
    assert_eq!(
        verdict(&w, &[deny], "10.244.2.2", "10.244.1.2", 80),
        Err(Denied::Ingress { pod: "default/web".into() })
    );
}

#[test]
fn an_allow_rule_lets_only_the_labelled_pods_in_on_its_port() {
    let w = world();
    let deny = policy("metadata: {name: deny, namespace: default}\nspec:\n  podSelector: {}\n");
    let allow = policy(
        "metadata: {name: allow, namespace: default}\nspec:\n  podSelector: {matchLabels: {app: web}}\n  ingress:\n  - from:\n    - podSelector: {matchLabels: {role: client}}\n    ports:\n    - port: 80\n",
    );
    let both = [deny, allow];
    assert_eq!(verdict(&w, &both, "10.244.2.2", "10.244.1.2", 80), Ok(()));
    assert!(verdict(&w, &both, "10.244.2.2", "10.244.1.2", 8080).is_err(), "another port");
    assert!(verdict(&w, &both, "10.244.2.3", "10.244.1.2", 80).is_err(), "an unlabelled pod");
    assert!(verdict(&w, &both, "10.244.2.4", "10.244.1.2", 80).is_err(), "the label in another namespace");
}

#[test]
fn a_namespace_selector_picks_pods_by_their_namespaces_labels() {
    let w = world();
    let allow = policy(
        "metadata: {name: from-prod, namespace: default}\nspec:\n  podSelector: {matchLabels: {app: web}}\n  ingress:\n  - from:\n    - namespaceSelector: {matchLabels: {team: prod}}\n",
    );
    assert_eq!(verdict(&w, std::slice::from_ref(&allow), "10.244.2.4", "10.244.1.2", 80), Ok(()));
    assert!(verdict(&w, &[allow], "10.244.2.2", "10.244.1.2", 80).is_err());
}

#[test]
fn egress_rules_are_enforced_on_the_senders_node_and_ip_blocks_honour_their_exceptions() {
    let w = world();
    let egress = policy(
        "metadata: {name: out, namespace: default}\nspec:\n  podSelector: {matchLabels: {role: client}}\n  egress:\n  - to:\n    - ipBlock: {cidr: 10.244.0.0/16, except: [10.244.2.0/24]}\n",
    );
    assert_eq!(egress.spec.policy_types, ["Ingress", "Egress"]);
    let only_egress = policy(
        "metadata: {name: out, namespace: default}\nspec:\n  podSelector: {matchLabels: {role: client}}\n  policyTypes: [Egress]\n  egress:\n  - to:\n    - ipBlock: {cidr: 10.244.0.0/16, except: [10.244.2.0/24]}\n",
    );
    assert_eq!(verdict(&w, std::slice::from_ref(&only_egress), "10.244.2.2", "10.244.1.2", 80), Ok(()));
    assert_eq!(
        verdict(&w, &[only_egress], "10.244.2.2", "10.244.2.3", 80),
        Err(Denied::Egress { pod: "default/client".into() })
    );
}

#[test]
fn named_ports_resolve_on_the_pod_that_declares_them() {
    let mut w = world();
    let spec = std::sync::Arc::make_mut(&mut w.pods[0].spec);
    let mut c = crate::api::Container::default();
    c.ports.push(crate::api::pod::ContainerPort {
        name: Some("http".into()),
        container_port: 8080,
        host_port: None,
        protocol: None,
        host_ip: None,
    });
    spec.containers.push(c.into());
    let allow = policy(
        "metadata: {name: http, namespace: default}\nspec:\n  podSelector: {matchLabels: {app: web}}\n  ingress:\n  - ports:\n    - port: http\n",
    );
    assert_eq!(verdict(&w, std::slice::from_ref(&allow), "10.244.2.3", "10.244.1.2", 8080), Ok(()));
    assert!(verdict(&w, &[allow], "10.244.2.3", "10.244.1.2", 80).is_err());
}

#[test]
fn a_node_always_reaches_its_own_pods_but_not_isolated_pods_elsewhere() {
    let w = world();
    let deny = policy("metadata: {name: deny, namespace: default}\nspec:\n  podSelector: {}\n");
    let agents = [agent("worker-1", std::slice::from_ref(&deny), &w.pods, &w.namespaces)];
    let agents: Vec<&CalicoNode> = agents.iter().collect();
    let local = Source::Node { name: "worker-1", ip: "172.18.0.3" };
    let remote = Source::Node { name: "worker-2", ip: "172.18.0.4" };
    assert_eq!(check(&agents, local, "10.244.1.2", 80, "TCP"), Ok(()));
    assert!(check(&agents, remote, "10.244.1.2", 80, "TCP").is_err());
}

#[test]
fn an_empty_rule_list_isolates_and_an_empty_rule_allows_all() {
    assert!(passes(&None, "1.2.3.4", "5.6.7.8", 80, "TCP"));
    assert!(!passes(&Some(Vec::new()), "1.2.3.4", "5.6.7.8", 80, "TCP"));
    let open = rules::Rule { policy: "default/all".into(), peers: None, ports: None };
    assert!(passes(&Some(vec![open]), "1.2.3.4", "5.6.7.8", 80, "TCP"));
}
