//! `kubectl get` and `describe` of Ingresses and IngressClasses: the columns the API server's
//! table printers fill (CLASS, HOSTS, ADDRESS, PORTS) and describe's Rules with each backend's
//! endpoints.

use super::age::age;
use super::describe::{annotations_multiline, events_section, labels_multiline, layout};
use crate::api::networking::IngressBackend;
use crate::api::{EndpointSlice, Event, Ingress, IngressClass, Kind, Object, Service};
use crate::sim::Time;
use std::fmt::Write;

pub fn headers(kind: Kind) -> (&'static [&'static str], &'static [&'static str]) {
    match kind {
        Kind::IngressClass => (&["NAME", "CONTROLLER", "PARAMETERS", "AGE"], &[]),
        _ => (&["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"], &[]),
    }
}

/// The hosts of an Ingress's rules as HOSTS lists them: `*` for a rule without one, at most
/// three and then how many more.
pub fn hosts(ing: &Ingress) -> String {
    let list: Vec<&str> =
        ing.spec.rules.iter().map(|r| if r.host.is_empty() { "*" } else { r.host.as_str() }).collect();
    if list.is_empty() {
        return "*".into();
    }
    let mut text = list.iter().take(3).copied().collect::<Vec<_>>().join(",");
    if list.len() > 3 {
        let _ = write!(text, " + {} more...", list.len() - 3);
    }
    text
}

pub fn row(object: &Object, now: Time) -> Vec<String> {
    match object {
        Object::IngressClass(c) => {
            let parameters = match &c.spec.parameters {
                Some(p) => {
                    let kind = p.get("kind").and_then(|v| v.as_str()).unwrap_or_default();
                    let group = p.get("apiGroup").and_then(|v| v.as_str()).unwrap_or_default();
                    let name = p.get("name").and_then(|v| v.as_str()).unwrap_or_default();
                    if group.is_empty() { format!("{kind}/{name}") } else { format!("{kind}.{group}/{name}") }
                }
                None => "<none>".into(),
            };
            vec![
                c.metadata.name.clone(),
                c.spec.controller.clone(),
                parameters,
                age(c.metadata.creation_timestamp, now),
            ]
        }
        Object::Ingress(ing) => {
            let ports = if ing.spec.tls.is_empty() { "80" } else { "80, 443" };
            vec![
                ing.metadata.name.clone(),
                ing.class().unwrap_or("<none>").to_string(),
                hosts(ing),
                ing.addresses().join(","),
                ports.into(),
                age(ing.metadata.creation_timestamp, now),
            ]
        }
        _ => Vec::new(),
    }
}

/// What describe prints for one backend: `service:port (endpoint, …)`, or why it has none.
fn backend_text(backend: &IngressBackend, services: &[Service], slices: &[EndpointSlice]) -> String {
    let Some(svc) = &backend.service else {
        return match &backend.resource {
            Some(r) => {
                let kind = r.get("kind").and_then(|v| v.as_str()).unwrap_or_default();
                let group = r.get("apiGroup").and_then(|v| v.as_str()).unwrap_or_default();
                let name = r.get("name").and_then(|v| v.as_str()).unwrap_or_default();
                format!("APIGroup: {group}, Kind: {kind}, Name: {name}")
            }
            None => String::new(),
        };
    };
    let port = svc.port.text();
    let Some(service) = services.iter().find(|s| s.metadata.name == svc.name) else {
        return format!("{}:{port} (<error: services \"{}\" not found>)", svc.name, svc.name);
    };
    let Some(sp) = service.spec.ports.iter().find(|p| {
        Some(p.port) == svc.port.number || (!svc.port.name.is_empty() && p.name.as_deref() == Some(&svc.port.name))
    }) else {
        return format!("{}:{port} ()", svc.name);
    };
    let port_name = sp.name.clone().unwrap_or_default();
    let mut endpoints = Vec::new();
    for slice in slices.iter().filter(|s| s.metadata.labels.get("kubernetes.io/service-name") == Some(&svc.name)) {
        let Some(p) = slice.ports.iter().find(|p| p.name.clone().unwrap_or_default() == port_name).and_then(|p| p.port)
        else {
            continue;
        };
        for e in slice.endpoints.iter().filter(|e| e.conditions.ready != Some(false)) {
            for a in &e.addresses {
                endpoints.push(format!("{a}:{p}"));
            }
        }
    }
    let mut list = endpoints.iter().take(3).cloned().collect::<Vec<_>>().join(",");
    if endpoints.len() > 3 {
        let _ = write!(list, " + {} more...", endpoints.len() - 3);
    }
    format!("{}:{port} ({list})", svc.name)
}

/// `kubectl describe ingress`: its address, class, default backend and rules, each path's
/// backend with the endpoints behind it.
pub fn describe_ingress(
    ing: &Ingress,
    services: &[Service],
    slices: &[EndpointSlice],
    events: &[Event],
    now: Time,
) -> String {
    let mut out = String::new();
    let m = &ing.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    labels_multiline(&mut out, "Labels", &m.labels);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    let _ = writeln!(out, "Address:\t{}", ing.addresses().join(","));
    let _ = writeln!(out, "Ingress Class:\t{}", ing.spec.ingress_class_name.as_deref().unwrap_or("<none>"));
    let default = match &ing.spec.default_backend {
        Some(b) => backend_text(b, services, slices),
        None => "<default>".into(),
    };
    let _ = writeln!(out, "Default backend:\t{default}");
    if !ing.spec.tls.is_empty() {
        out.push_str("TLS:\n");
        for t in &ing.spec.tls {
            let secret = t.secret_name.as_deref().unwrap_or_default();
            if t.hosts.is_empty() {
                let _ = writeln!(out, "  {secret} SNI routes");
            } else {
                let _ = writeln!(out, "  {secret} terminates {}", t.hosts.join(","));
            }
        }
    }
    out.push_str("Rules:\n  Host\tPath\tBackends\n  ----\t----\t--------\n");
    let mut count = 0;
    for rule in &ing.spec.rules {
        let Some(http) = &rule.http else { continue };
        count += 1;
        let host = if rule.host.is_empty() { "*" } else { rule.host.as_str() };
        let _ = writeln!(out, "  {host}\t");
        for p in &http.paths {
            let _ = writeln!(out, "    \t{} \t{}", p.path, backend_text(&p.backend, services, slices));
        }
    }
    if count == 0 {
        let _ = writeln!(out, "  *\t*\t{default}");
    }
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    events_section(&mut out, events, now);
    layout(&out)
}

/// `kubectl describe ingressclass`.
pub fn describe_ingress_class(c: &IngressClass, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &c.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let _ = writeln!(out, "Controller:\t{}", c.spec.controller);
    events_section(&mut out, events, now);
    layout(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::networking::IngressRule;

    #[test]
    fn hosts_lists_a_rule_without_a_host_as_a_star_and_at_most_three() {
        let mut ing = Ingress::default();
        assert_eq!(hosts(&ing), "*");
        for h in ["a.example", "", "c.example", "d.example"] {
            ing.spec.rules.push(IngressRule { host: h.into(), http: None });
        }
        assert_eq!(hosts(&ing), "a.example,*,c.example + 1 more...");
    }
}
