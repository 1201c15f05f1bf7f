//! `iptables -t nat -L [CHAIN] [-n]` and `iptables-save` on a node: the nat rules its
//! kube-proxy (iptables mode) keeps for the Services it knows — one jump per Service port
//! from KUBE-SERVICES to a KUBE-SVC chain that picks an endpoint at random, and a KUBE-SEP
//! chain per endpoint that rewrites the destination. A Service port without ready endpoints
//! has no rule here (kube-proxy rejects it in the filter table instead).

use crate::cluster::Cluster;

/// One rule: its chain, target, protocol, destination and comment, and the match after.
struct Rule {
    chain: String,
    target: String,
    prot: &'static str,
    dst: String,
    comment: String,
    /// `(listing, save)` forms of the match after the comment: `tcp dpt:443`, `-m tcp --dport 443`.
    extra: (String, String),
}

/// A chain name's suffix as kube-proxy makes it: 16 characters of base32 from a hash.
fn chain_hash(text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in text.bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    (0..16).map(|i| char::from(ALPHABET[((h >> (i * 5)) & 31) as usize])).collect()
}

fn service_name(port: u16) -> String {
    match port {
        53 => "domain".into(),
        80 => "http".into(),
        443 => "https".into(),
        8080 => "http-alt".into(),
        p => p.to_string(),
    }
}

fn rules(cluster: &Cluster, node: &str) -> Vec<Rule> {
    let Some(proxy) = cluster.kube_proxy(node) else { return Vec::new() };
    let mut services = Vec::new();
    let mut chains = Vec::new();
    for r in proxy.rules() {
        let ready: Vec<_> = r.endpoints.iter().filter(|e| e.ready).collect();
        if ready.is_empty() {
            continue;
        }
        let name = if r.port_name.is_empty() { r.service.clone() } else { format!("{}:{}", r.service, r.port_name) };
        let prot = if r.protocol == "UDP" { "udp" } else { "tcp" };
        let svc = format!("KUBE-SVC-{}", chain_hash(&format!("{name}{prot}")));
        services.push(Rule {
            chain: "KUBE-SERVICES".into(),
            target: svc.clone(),
            prot,
            dst: r.cluster_ip.clone(),
            comment: format!("{name} cluster IP"),
            extra: (format!("{prot} dpt:{}", r.port), format!("-m {prot} --dport {}", r.port)),
        });
        let n = ready.len();
        for (i, e) in ready.iter().enumerate() {
            let sep = format!("KUBE-SEP-{}", chain_hash(&format!("{name}{prot}{e}")));
            let left = n - i;
            let extra = if left > 1 {
                let p = 1.0 / left as f64;
                (
                    format!("statistic mode random probability {p:.11}"),
                    format!("-m statistic --mode random --probability {p:.11}"),
                )
            } else {
                (String::new(), String::new())
            };
            chains.push(Rule {
                chain: svc.clone(),
                target: sep.clone(),
                prot: "all",
                dst: "0.0.0.0/0".into(),
                comment: format!("{name} -> {e}"),
                extra,
            });
            chains.push(Rule {
                chain: sep,
                target: "DNAT".into(),
                prot,
                dst: "0.0.0.0/0".into(),
                comment: name.clone(),
                extra: (format!("{prot} to:{e}"), format!("-m {prot} -j DNAT --to-destination {e}")),
            });
        }
    }
    services.push(Rule {
        chain: "KUBE-SERVICES".into(),
        target: "KUBE-NODEPORTS".into(),
        prot: "all",
        dst: "0.0.0.0/0".into(),
        comment: "kubernetes service nodeports; NOTE: this must be the last rule in this chain".into(),
        extra: ("ADDRTYPE match dst-type LOCAL".into(), "-m addrtype --dst-type LOCAL".into()),
    });
    services.extend(chains);
    services
}

/// `iptables ARGS…`.
pub fn iptables(cluster: &Cluster, node: &str, args: &[String]) -> (String, String, i32) {
    let (mut table, mut list, mut chain, mut numeric) = ("filter", false, None, false);
    let mut it = args.iter().map(String::as_str);
    while let Some(a) = it.next() {
        match a {
            "-t" | "--table" => table = it.next().unwrap_or(""),
            "-L" | "--list" => list = true,
            "-n" | "--numeric" => numeric = true,
            "-nL" | "-Ln" => {
                list = true;
                numeric = true;
            }
            "-v" | "--line-numbers" => {}
            c if list && chain.is_none() && !c.starts_with('-') => chain = Some(c.to_string()),
            other => {
                return (
                    String::new(),
                    format!("iptables: the sandbox lists rules only (-t nat -L [CHAIN] [-n]), not {other}\n"),
                    2,
                );
            }
        }
    }
    if !list {
        return (String::new(), "iptables: the sandbox lists rules only (-t nat -L [CHAIN] [-n])\n".into(), 2);
    }
    if table != "nat" {
        return (
            "Chain INPUT (policy ACCEPT)\ntarget     prot opt source               destination\n".to_string(),
            String::new(),
            0,
        );
    }
    let rules = rules(cluster, node);
    let mut names: Vec<String> = vec!["KUBE-SERVICES".into()];
    for r in &rules {
        if !names.contains(&r.chain) {
            names.push(r.chain.clone());
        }
    }
    if let Some(c) = &chain {
        if !names.contains(c) && c != "KUBE-NODEPORTS" {
            return (String::new(), "iptables: No chain/target/match by that name.\n".to_string(), 1);
        }
        names = vec![c.clone()];
    }
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let refs = if name == "KUBE-SERVICES" { 2 } else { 1 };
        out.push_str(&format!(
            "Chain {name} ({refs} references)\ntarget     prot opt source               destination\n"
        ));
        for r in rules.iter().filter(|r| &r.chain == name) {
            let any = if numeric { "0.0.0.0/0" } else { "anywhere" };
            let dst = if r.dst == "0.0.0.0/0" { any.to_string() } else { r.dst.clone() };
            let mut extra = r.extra.0.clone();
            if !numeric {
                if let Some((head, port)) = extra.rsplit_once("dpt:") {
                    extra = format!("{head}dpt:{}", port.parse().map_or(port.to_string(), service_name));
                }
            }
            let line = format!(
                "{:<10} {:<4} {:<3} {:<20} {:<20} /* {} */ {extra}",
                r.target, r.prot, "--", any, dst, r.comment
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    (out, String::new(), 0)
}

/// `iptables-save`: the nat table's kube-proxy chains and rules, as it saves them.
pub fn save(cluster: &Cluster, node: &str) -> (String, String, i32) {
    let rules = rules(cluster, node);
    let mut out = String::from(
        "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-SERVICES - [0:0]\n",
    );
    let mut chains: Vec<&str> = rules.iter().map(|r| r.chain.as_str()).filter(|c| *c != "KUBE-SERVICES").collect();
    chains.dedup();
    for c in &chains {
        out.push_str(&format!(":{c} - [0:0]\n"));
    }
    out.push_str("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
    out.push_str("-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n");
    for r in &rules {
        let dst = if r.dst == "0.0.0.0/0" { String::new() } else { format!(" -d {}/32", r.dst) };
        let prot = if r.prot == "all" { String::new() } else { format!(" -p {}", r.prot) };
        let extra = if r.extra.1.is_empty() { String::new() } else { format!(" {}", r.extra.1) };
        let jump = if r.target == "DNAT" { String::new() } else { format!(" -j {}", r.target) };
        out.push_str(&format!("-A {}{dst}{prot} -m comment --comment \"{}\"{extra}{jump}\n", r.chain, r.comment));
    }
    out.push_str("COMMIT\n");
    (out, String::new(), 0)
}
