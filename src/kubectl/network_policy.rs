//! NetworkPolicies as kubectl shows them: `kubectl get netpol` (NAME, POD-SELECTOR, AGE) and
//! `describe`'s prose — which pods the policy picks, then for each direction the traffic it
//! still allows ("Allowing ingress traffic: …") or that it leaves alone ("Not affecting …").

use super::age::age;
use super::describe::{annotations_multiline, labels_multiline, layout};
use crate::api::network_policy::{NetworkPolicy, Peer, PolicyPort};
use crate::api::{Event, LabelSelector};
use crate::sim::Time;
use std::fmt::Write;

/// A selector as kubectl prints one, `<none>` when it selects everything.
fn selector(sel: &LabelSelector) -> String {
    let text = sel.to_selector_string();
    if text.is_empty() { "<none>".into() } else { text }
}

/// NAME, POD-SELECTOR, AGE.
pub fn row(policy: &NetworkPolicy, now: Time) -> Vec<String> {
    vec![
        policy.metadata.name.clone(),
        selector(&policy.spec.pod_selector),
        age(policy.metadata.creation_timestamp, now),
    ]
}

/// `kubectl describe networkpolicy`.
pub fn describe(policy: &NetworkPolicy, _events: &[Event], _now: Time) -> String {
    let mut out = String::new();
    let m = &policy.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    let created = m.creation_timestamp.map(|t| t.rfc3339()).unwrap_or_default();
    // Go's default time format: `2026-01-01 00:00:00 +0000 UTC`.
    let created =
        if created.len() >= 19 { format!("{} {} +0000 UTC", &created[..10], &created[11..19]) } else { created };
    let _ = writeln!(out, "Created on:\t{created}");
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let mut text = layout(&out);
    spec(&mut text, policy);
    text
}

/// The `Spec:` section, which kubectl writes without tab alignment.
fn spec(out: &mut String, policy: &NetworkPolicy) {
    let spec = &policy.spec;
    out.push_str("Spec:\n");
    let picks = selector(&spec.pod_selector);
    if picks == "<none>" {
        out.push_str("  PodSelector:     <none> (Allowing the specific traffic to all pods in this namespace)\n");
    } else {
        let _ = writeln!(out, "  PodSelector:     {picks}");
    }
    let (ingress, egress) = spec.isolates();
    if ingress {
        out.push_str("  Allowing ingress traffic:\n");
        let rules: Vec<(&[PolicyPort], &[Peer])> =
            spec.ingress.iter().flatten().map(|r| (r.ports.as_slice(), r.from.as_slice())).collect();
        rules_text(out, &rules, Direction::Ingress);
    } else {
        out.push_str("  Not affecting ingress traffic\n");
    }
    if egress {
        out.push_str("  Allowing egress traffic:\n");
        let rules: Vec<(&[PolicyPort], &[Peer])> =
            spec.egress.iter().flatten().map(|r| (r.ports.as_slice(), r.to.as_slice())).collect();
        rules_text(out, &rules, Direction::Egress);
    } else {
        out.push_str("  Not affecting egress traffic\n");
    }
    let _ = writeln!(out, "  Policy Types: {}", spec.policy_types.join(", "));
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Ingress,
    Egress,
}

/// One direction's rules: each rule's ports, then its peers, rules parted by a dashed line.
fn rules_text(out: &mut String, rules: &[(&[PolicyPort], &[Peer])], direction: Direction) {
    let ind = "    ";
    let (isolated, peer_word, any_peer) = match direction {
        Direction::Ingress => ("ingress", "From", "<any> (traffic not restricted by source)"),
        Direction::Egress => ("egress", "To", "<any> (traffic not restricted by destination)"),
    };
    if rules.is_empty() {
        let _ = writeln!(out, "{ind}<none> (Selected pods are isolated for {isolated} connectivity)");
        return;
    }
    for (i, (ports, peers)) in rules.iter().enumerate() {
        if ports.is_empty() {
            let _ = writeln!(out, "{ind}To Port: <any> (traffic allowed to all ports)");
        }
        for port in ports.iter() {
            let number = port.port.as_ref().map_or("<nil>".to_string(), |p| p.to_string());
            let _ = writeln!(out, "{ind}To Port: {number}/{}", port.protocol.as_deref().unwrap_or("TCP"));
        }
        if peers.is_empty() {
            let _ = writeln!(out, "{ind}{peer_word}: {any_peer}");
        }
        for peer in peers.iter() {
            let _ = writeln!(out, "{ind}{peer_word}:");
            if let Some(ns) = &peer.namespace_selector {
                let _ = writeln!(out, "{ind}  NamespaceSelector: {}", selector(ns));
            }
            if let Some(pods) = &peer.pod_selector {
                let _ = writeln!(out, "{ind}  PodSelector: {}", selector(pods));
            }
            if let Some(block) =
                peer.ip_block.as_ref().filter(|_| peer.pod_selector.is_none() && peer.namespace_selector.is_none())
            {
                let _ = writeln!(out, "{ind}  IPBlock:");
                let _ = writeln!(out, "{ind}    CIDR: {}", block.cidr);
                let _ = writeln!(out, "{ind}    Except: {}", block.except.join(", "));
            }
        }
        if i + 1 < rules.len() {
            let _ = writeln!(out, "{ind}----------");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(yaml: &str) -> NetworkPolicy {
        let mut p: NetworkPolicy = serde_json::from_value(crate::yaml::from_str(yaml).unwrap()).unwrap();
        crate::api::network_policy::default_policy(&mut p);
        p
    }

    #[test]
    fn a_default_deny_policy_reads_as_isolating_every_pod_for_ingress() {
        let p = policy("metadata: {name: default-deny, namespace: default}\nspec:\n  podSelector: {}\n");
        let text = describe(&p, &[], Time::ZERO);
        assert!(text.contains("Spec:\n  PodSelector:     <none> (Allowing the specific traffic to all pods in this namespace)\n  Allowing ingress traffic:\n    <none> (Selected pods are isolated for ingress connectivity)\n  Not affecting egress traffic\n  Policy Types: Ingress\n"), "{text}");
        assert_eq!(row(&p, Time::ZERO)[1], "<none>");
    }

    #[test]
    fn each_rule_lists_its_ports_then_its_peers_and_rules_are_parted_by_dashes() {
        let p = policy(
            "metadata: {name: db, namespace: prod}\nspec:\n  podSelector: {matchLabels: {role: db}}\n  ingress:\n  - from:\n    - ipBlock: {cidr: 172.17.0.0/16, except: [172.17.1.0/24]}\n    - namespaceSelector: {matchLabels: {project: myproject}}\n      podSelector: {matchLabels: {role: frontend}}\n    ports:\n    - port: 6379\n  - {}\n  egress:\n  - to:\n    - ipBlock: {cidr: 10.0.0.0/24}\n    ports:\n    - {protocol: TCP, port: 5978}\n",
        );
        let text = describe(&p, &[], Time::ZERO);
        let spec = &text[text.find("Spec:").unwrap()..];
        assert_eq!(
            spec,
            "Spec:\n  PodSelector:     role=db\n  Allowing ingress traffic:\n    To Port: 6379/TCP\n    From:\n      IPBlock:\n        CIDR: 172.17.0.0/16\n        Except: 172.17.1.0/24\n    From:\n      NamespaceSelector: project=myproject\n      PodSelector: role=frontend\n    ----------\n    To Port: <any> (traffic allowed to all ports)\n    From: <any> (traffic not restricted by source)\n  Allowing egress traffic:\n    To Port: 5978/TCP\n    To:\n      IPBlock:\n        CIDR: 10.0.0.0/24\n        Except: \n  Policy Types: Ingress, Egress\n"
        );
        assert_eq!(row(&p, Time::ZERO)[1], "role=db");
    }
}
