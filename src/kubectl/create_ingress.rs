//! `kubectl create ingress NAME --rule=host/path=service:port[,tls[=secret]]`: an Ingress
//! from rules on the command line, as kubectl builds it (a path ending in `*` is a Prefix
//! path, any other Exact).

use super::Output;
use super::args::Args;
use serde_json::{Value, json};

/// `service:port` as a backend (`port` a number or a port's name).
fn backend(text: &str) -> Option<Value> {
    let (service, port) = text.split_once(':')?;
    if service.is_empty() || port.is_empty() {
        return None;
    }
    let port = match port.parse::<i64>() {
        Ok(n) => json!({"number": n}),
        Err(_) => json!({"name": port}),
    };
    Some(json!({"service": {"name": service, "port": port}}))
}

/// One `--rule`: (host, path, path type, backend, TLS secret if `,tls`).
type Rule = (String, String, &'static str, Value, Option<String>);

fn parse_rule(text: &str) -> Option<Rule> {
    let (route, tls) = match text.split_once(',') {
        Some((r, "tls")) => (r, Some(String::new())),
        Some((r, t)) => (r, Some(t.strip_prefix("tls=")?.to_string())),
        None => (text, None),
    };
    let (place, target) = route.split_once('=')?;
    let slash = place.find('/')?;
    let (host, path) = place.split_at(slash);
    let (path, path_type) = match path.strip_suffix('*') {
        Some(p) => (p.to_string(), "Prefix"),
        None => (path.to_string(), "Exact"),
    };
    Some((host.to_string(), path, path_type, backend(target)?, tls))
}

pub fn ingress(args: &Args, name: &str) -> Result<Value, Output> {
    let rules = args.all("rule");
    let default = args.get("default-backend").filter(|d| !d.is_empty());
    if rules.is_empty() && default.is_none() {
        return Err(Output::err(
            "error: not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)",
        ));
    }
    let mut spec = json!({});
    if let Some(class) = args.get("class").filter(|c| !c.is_empty()) {
        spec["ingressClassName"] = json!(class);
    }
    if let Some(d) = default {
        let b = backend(d).ok_or_else(|| {
            Output::err(format!("error: default-backend {d} is invalid and should be in format service:port"))
        })?;
        spec["defaultBackend"] = b;
    }
    let mut out_rules: Vec<Value> = Vec::new();
    let mut tls: Vec<Value> = Vec::new();
    for text in rules {
        let (host, path, path_type, backend, secret) = parse_rule(text).ok_or_else(|| {
            Output::err(format!(
                "error: rule {text} is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]"
            ))
        })?;
        let entry = json!({"path": path, "pathType": path_type, "backend": backend});
        match out_rules.iter_mut().find(|r| r["host"].as_str().unwrap_or("") == host) {
            Some(rule) => {
                if let Some(paths) = rule["http"]["paths"].as_array_mut() {
                    paths.push(entry);
                }
            }
            None => {
                let mut rule = json!({"http": {"paths": [entry]}});
                if !host.is_empty() {
                    rule["host"] = json!(host);
                }
                out_rules.push(rule);
            }
        }
        if let Some(secret) = secret {
            let mut t = json!({});
            if !host.is_empty() {
                t["hosts"] = json!([host]);
            }
            if !secret.is_empty() {
                t["secretName"] = json!(secret);
            }
            tls.push(t);
        }
    }
    if !out_rules.is_empty() {
        spec["rules"] = json!(out_rules);
    }
    if !tls.is_empty() {
        spec["tls"] = json!(tls);
    }
    let mut metadata = json!({"name": name});
    for a in args.all("annotation") {
        if let Some((k, v)) = a.split_once('=') {
            metadata["annotations"][k] = json!(v);
        }
    }
    Ok(
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": metadata, "spec": spec, "status": {"loadBalancer": {}}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_path_ending_in_a_star_is_a_prefix_and_any_other_exact() {
        let (host, path, t, b, tls) = parse_rule("foo.com/bar*=svc:8080").unwrap();
        assert_eq!((host.as_str(), path.as_str(), t, tls), ("foo.com", "/bar", "Prefix", None));
        assert_eq!(b["service"]["port"]["number"], 8080);
        let (host, path, t, b, _) = parse_rule("/exact=svc:http").unwrap();
        assert_eq!((host.as_str(), path.as_str(), t), ("", "/exact", "Exact"));
        assert_eq!(b["service"]["port"]["name"], "http");
        assert!(parse_rule("nopath=svc:80").is_none());
    }
}
