//! Validation of NetworkPolicies, with upstream's error texts: ports (protocol, number or
//! name, `endPort`), peers (at least one selector or an IP block, never an IP block with a
//! selector), IP blocks (valid CIDRs, `except` strictly inside `cidr`) and `policyTypes`.

use crate::api::IntOrString;
use crate::api::LabelSelector;
use crate::api::network_policy::{IpBlock, NetworkPolicy, Peer, PolicyPort};

#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn validate(policy: &NetworkPolicy, errors: &mut Vec<String>) {
    let spec = &policy.spec;
    selector(&spec.pod_selector, "spec.podSelector", errors);
    for (i, rule) in spec.ingress.iter().flatten().enumerate() {
        for (j, port) in rule.ports.iter().enumerate() {
            validate_port(port, &format!("spec.ingress[{i}].ports[{j}]"), errors);
        }
        for (j, peer) in rule.from.iter().enumerate() {
            validate_peer(peer, &format!("spec.ingress[{i}].from[{j}]"), errors);
        }
    }
    for (i, rule) in spec.egress.iter().flatten().enumerate() {
        for (j, port) in rule.ports.iter().enumerate() {
            validate_port(port, &format!("spec.egress[{i}].ports[{j}]"), errors);
        }
        for (j, peer) in rule.to.iter().enumerate() {
            validate_peer(peer, &format!("spec.egress[{i}].to[{j}]"), errors);
        }
    }
    if spec.policy_types.len() > 2 {
        let list = spec.policy_types.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(",");
        errors.push(format!("spec.policyTypes: Invalid value: [{list}]: may not specify more than two policyTypes"));
        return;
    }
    for (i, t) in spec.policy_types.iter().enumerate() {
        if t != "Ingress" && t != "Egress" {
            errors.push(format!(
                "spec.policyTypes[{i}]: Unsupported value: \"{t}\": supported values: \"Ingress\", \"Egress\""
            ));
        }
    }
}

fn validate_port(port: &PolicyPort, path: &str, errors: &mut Vec<String>) {
    if let Some(p) = port.protocol.as_deref().filter(|p| !["TCP", "UDP", "SCTP"].contains(p)) {
        errors
            .push(format!("{path}.protocol: Unsupported value: \"{p}\": supported values: \"TCP\", \"UDP\", \"SCTP\""));
    }
    match (&port.port, port.end_port) {
        (Some(IntOrString::Int(n)), end) => {
            if !(1..=65535).contains(n) {
                errors.push(format!("{path}.port: Invalid value: {n}: must be between 1 and 65535, inclusive"));
            }
            if let Some(end) = end {
                if end < *n {
                    errors
                        .push(format!("{path}.endPort: Invalid value: {end}: must be greater than or equal to `port`"));
                }
                if !(1..=65535).contains(&end) {
                    errors
                        .push(format!("{path}.endPort: Invalid value: {end}: must be between 1 and 65535, inclusive"));
                }
            }
        }
        (Some(IntOrString::String(name)), end) => {
            if let Some(end) = end {
                errors.push(format!(
                    "{path}.endPort: Invalid value: {end}: may not be specified when `port` is non-numeric"
                ));
            }
            for problem in port_name_problems(name) {
                errors.push(format!("{path}.port: Invalid value: \"{name}\": {problem}"));
            }
        }
        (None, Some(end)) => errors
            .push(format!("{path}.endPort: Invalid value: {end}: may not be specified when `port` is not specified")),
        (None, None) => {}
    }
}

/// What is wrong with a port name (an IANA service name: at most 15 characters, lower-case
/// letters, digits and single inner hyphens, at least one letter).
pub fn port_name_problems(name: &str) -> Vec<&'static str> {
    let mut problems = Vec::new();
    if name.len() > 15 {
        problems.push("must be no more than 15 characters");
    }
    if !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        problems.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if name.contains("--") {
        problems.push("must not contain consecutive hyphens");
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        problems.push("must contain at least one letter (a-z)");
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("must not begin or end with a hyphen");
    }
    problems
}

fn validate_peer(peer: &Peer, path: &str, errors: &mut Vec<String>) {
    if let Some(s) = &peer.pod_selector {
        selector(s, &format!("{path}.podSelector"), errors);
    }
    if let Some(s) = &peer.namespace_selector {
        selector(s, &format!("{path}.namespaceSelector"), errors);
    }
    if let Some(block) = &peer.ip_block {
        validate_ip_block(block, &format!("{path}.ipBlock"), errors);
    }
    let count = [peer.pod_selector.is_some(), peer.namespace_selector.is_some(), peer.ip_block.is_some()]
        .iter()
        .filter(|b| **b)
        .count();
    if count == 0 {
        errors.push(format!("{path}: Required value: must specify a peer"));
    } else if count > 1 && peer.ip_block.is_some() {
        errors.push(format!("{path}: Forbidden: may not specify both ipBlock and another peer"));
    }
}

/// A selector's expressions: known operators, values only where the operator takes them.
fn selector(sel: &LabelSelector, path: &str, errors: &mut Vec<String>) {
    for (i, req) in sel.match_expressions.iter().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        match req.operator.as_str() {
            "In" | "NotIn" if req.values.is_empty() => errors
                .push(format!("{at}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'")),
            "Exists" | "DoesNotExist" if !req.values.is_empty() => errors.push(format!(
                "{at}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            op => errors.push(format!("{at}.operator: Invalid value: \"{op}\": not a valid selector operator")),
        }
    }
}

/// An IPv4 CIDR as `(network, prefix length)`; the address may have host bits set, as the
/// legacy field allows.
pub fn parse_cidr(text: &str) -> Option<(u32, u8)> {
    let (ip, len) = text.split_once('/')?;
    let ip: std::net::Ipv4Addr = ip.parse().ok()?;
    let len: u8 = len.parse().ok().filter(|l| *l <= 32)?;
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    Some((u32::from(ip) & mask, len))
}

/// Whether an IPv4 address lies in a CIDR.
pub fn cidr_contains(cidr: (u32, u8), ip: u32) -> bool {
    let mask = if cidr.1 == 0 { 0 } else { u32::MAX << (32 - cidr.1) };
    ip & mask == cidr.0
}

fn validate_ip_block(block: &IpBlock, path: &str, errors: &mut Vec<String>) {
    const BAD: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
    if block.cidr.is_empty() {
        errors.push(format!("{path}.cidr: Required value"));
        return;
    }
    let Some(cidr) = parse_cidr(&block.cidr) else {
        errors.push(format!("{path}.cidr: Invalid value: \"{}\": {BAD}", block.cidr));
        return;
    };
    for (i, except) in block.except.iter().enumerate() {
        match parse_cidr(except) {
            None => errors.push(format!("{path}.except[{i}]: Invalid value: \"{except}\": {BAD}")),
            Some(inner) if !cidr_contains(cidr, inner.0) || cidr.1 >= inner.1 => errors
                .push(format!("{path}.except[{i}]: Invalid value: \"{except}\": must be a strict subset of `cidr`")),
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(yaml: &str) -> Vec<String> {
        let p: NetworkPolicy = serde_json::from_value(crate::yaml::from_str(yaml).unwrap()).unwrap();
        let mut errors = Vec::new();
        validate(&p, &mut errors);
        errors
    }

    #[test]
    fn a_peer_needs_a_selector_or_a_block_and_a_block_stands_alone() {
        let errors = errors_of(
            "spec:\n  ingress:\n  - from:\n    - {}\n    - ipBlock: {cidr: 10.0.0.0/8}\n      podSelector: {}\n",
        );
        assert_eq!(
            errors,
            [
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer"
            ]
        );
    }

    #[test]
    fn ports_are_checked_for_protocol_range_name_and_end_port() {
        let errors = errors_of(
            "spec:\n  egress:\n  - ports:\n    - {protocol: ICMP, port: 0}\n    - {port: http, endPort: 90}\n    - {port: 100, endPort: 80}\n    - {port: Web_Port}\n",
        );
        assert_eq!(errors.len(), 5, "{errors:#?}");
        assert!(errors[0].starts_with("spec.egress[0].ports[0].protocol: Unsupported value: \"ICMP\""));
        assert!(errors[1].ends_with("must be between 1 and 65535, inclusive"));
        assert!(errors[2].ends_with("may not be specified when `port` is non-numeric"));
        assert!(errors[3].ends_with("must be greater than or equal to `port`"));
        assert!(errors[4].ends_with("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"));
    }

    #[test]
    fn an_except_must_lie_strictly_inside_its_cidr() {
        let errors = errors_of(
            "spec:\n  ingress:\n  - from:\n    - ipBlock: {cidr: 172.17.0.0/16, except: [172.17.1.0/24, 10.0.0.0/24, 172.17.0.0/16]}\n",
        );
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors.iter().all(|e| e.ends_with("must be a strict subset of `cidr`")));
        assert_eq!(
            errors_of("spec:\n  ingress:\n  - from:\n    - ipBlock: {cidr: 300.0.0.0/8}\n"),
            [
                "spec.ingress[0].from[0].ipBlock.cidr: Invalid value: \"300.0.0.0/8\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
            ]
        );
    }

    #[test]
    fn policy_types_are_ingress_or_egress() {
        assert_eq!(
            errors_of("spec:\n  policyTypes: [Ingress, Both]\n"),
            ["spec.policyTypes[1]: Unsupported value: \"Both\": supported values: \"Ingress\", \"Egress\""]
        );
    }
}
