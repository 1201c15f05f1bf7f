//! The API server's side of Ingress: the DefaultIngressClass admission plugin (a new Ingress
//! that names no class gets the one marked default) and the checks of Ingresses' and
//! IngressClasses' fields, in upstream's words.

use super::validation::{DNS_SUBDOMAIN_MSG, is_dns_subdomain};
use crate::api::networking::{CLASS_ANNOTATION, HttpIngressPath, IngressBackend};
use crate::api::{Ingress, Object};
use crate::etcd::Etcd;

const PATH_TYPES: &str = "\"Exact\", \"ImplementationSpecific\", \"Prefix\"";

/// DefaultIngressClass: a new Ingress without `ingressClassName` (nor the older annotation)
/// gets the default class, the newest if several are marked. Returns whether it set one.
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn default_class(etcd: &Etcd, ing: &mut Ingress) -> bool {
    if ing.spec.ingress_class_name.is_some() || ing.metadata.annotations.contains_key(CLASS_ANNOTATION) {
        return false;
    }
    let prefix = "/registry/ingressclasses/";
    if !etcd.any_under(prefix) {
        return false;
    }
    let default = etcd
        .range(prefix)
        .filter_map(|(_, kv)| match &*kv.value {
            Object::IngressClass(c) if c.is_default() => Some(c.clone()),
            _ => None,
        })
        .max_by(|a, b| a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp));
    match default {
        Some(c) => {
            ing.spec.ingress_class_name = Some(c.metadata.name.clone());
            true
        }
        None => false,
    }
}

/// Field errors of an Ingress or IngressClass (none for other kinds).
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn validate(object: &Object, errors: &mut Vec<String>) {
    match object {
        Object::IngressClass(c) => {
            let controller = &c.spec.controller;
            if controller.is_empty() {
                errors.push("spec.controller: Required value".into());
            } else if !controller
                .split_once('/')
                .is_some_and(|(domain, path)| is_dns_subdomain(domain) && !path.is_empty())
            {
                errors.push(format!(
                    "spec.controller: Invalid value: \"{controller}\": must be a domain-prefixed path (such as \"acme.io/foo\")"
                ));
            }
        }
        Object::Ingress(ing) => validate_ingress(ing, errors),
        _ => {}
    }
}

fn validate_ingress(ing: &Ingress, errors: &mut Vec<String>) {
    let spec = &ing.spec;
    if spec.rules.is_empty() && spec.default_backend.is_none() {
        errors.push("spec: Invalid value: \"\": either `defaultBackend` or `rules` must be specified".into());
    }
    if let Some(class) = spec.ingress_class_name.as_deref().filter(|c| !is_dns_subdomain(c)) {
        errors.push(format!("spec.ingressClassName: Invalid value: \"{class}\": {DNS_SUBDOMAIN_MSG}"));
    }
    if let Some(b) = &spec.default_backend {
        validate_backend(b, "spec.defaultBackend", errors);
    }
    for (i, rule) in spec.rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        let host = rule.host.as_str();
        if !host.is_empty() {
            if host.parse::<std::net::IpAddr>().is_ok() {
                errors.push(format!("{at}.host: Invalid value: \"{host}\": must be a DNS name, not an IP address"));
            } else if !is_dns_subdomain(host.strip_prefix("*.").unwrap_or(host)) {
                errors.push(format!("{at}.host: Invalid value: \"{host}\": {DNS_SUBDOMAIN_MSG}"));
            }
        }
        let Some(http) = &rule.http else { continue };
        if http.paths.is_empty() {
            errors.push(format!("{at}.http.paths: Required value"));
        }
        for (j, path) in http.paths.iter().enumerate() {
            validate_path(path, &format!("{at}.http.paths[{j}]"), errors);
        }
    }
}

fn validate_path(path: &HttpIngressPath, at: &str, errors: &mut Vec<String>) {
    match path.path_type.as_deref() {
        None => errors.push(format!("{at}.pathType: Required value: pathType must be specified")),
        Some("Exact" | "Prefix") => {
            if !path.path.starts_with('/') {
                errors.push(format!("{at}.path: Invalid value: \"{}\": must be an absolute path", path.path));
            }
            for bad in ["//", "/./", "/../", "%2f", "%2F"] {
                if path.path.contains(bad) {
                    errors.push(format!("{at}.path: Invalid value: \"{}\": must not contain '{bad}'", path.path));
                }
            }
            if path.path.ends_with("/..") || path.path.ends_with("/.") {
                let end = if path.path.ends_with("/..") { "/.." } else { "/." };
                errors.push(format!("{at}.path: Invalid value: \"{}\": cannot end with '{end}'", path.path));
            }
        }
        Some("ImplementationSpecific") => {
            if !path.path.is_empty() && !path.path.starts_with('/') {
                errors.push(format!("{at}.path: Invalid value: \"{}\": must be an absolute path", path.path));
            }
        }
        Some(other) => {
            errors.push(format!("{at}.pathType: Unsupported value: \"{other}\": supported values: {PATH_TYPES}"))
        }
    }
    validate_backend(&path.backend, &format!("{at}.backend"), errors);
}

fn validate_backend(backend: &IngressBackend, at: &str, errors: &mut Vec<String>) {
    match (&backend.service, &backend.resource) {
        (Some(_), Some(_)) => {
            errors.push(format!("{at}: Invalid value: \"\": cannot set both resource and service backends"))
        }
        (None, None) => errors.push(format!("{at}: Invalid value: \"\": resource or service backend is required")),
        (None, Some(_)) => {}
        (Some(svc), None) => {
            if svc.name.is_empty() {
                errors.push(format!("{at}.service.name: Required value"));
            } else if !super::validation::is_dns_label(&svc.name) {
                errors.push(format!(
                    "{at}.service.name: Invalid value: \"{}\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                    svc.name
                ));
            }
            let port = &svc.port;
            match (port.number.filter(|n| *n != 0), port.name.is_empty()) {
                (Some(_), false) => errors
                    .push(format!("{at}.service.port: Invalid value: \"\": cannot set both port name & port number")),
                (None, true) => {
                    errors.push(format!("{at}.service.port.name: Required value: port name or number is required"))
                }
                (Some(n), true) if !(1..=65535).contains(&n) => errors.push(format!(
                    "{at}.service.port.number: Invalid value: {n}: must be between 1 and 65535, inclusive"
                )),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors_of(spec: serde_json::Value) -> Vec<String> {
        let body =
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "x"}, "spec": spec});
        let object = Object::decode(crate::api::Kind::Ingress, &body).unwrap();
        let mut errors = Vec::new();
        validate(&object, &mut errors);
        errors
    }

    #[test]
    fn a_path_without_a_path_type_is_refused() {
        let errors = errors_of(json!({"rules": [{"http": {"paths": [{"path": "/",
            "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}));
        assert_eq!(errors, ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]);
    }

    #[test]
    fn a_prefix_path_must_be_absolute_and_a_host_may_not_be_an_ip() {
        let errors = errors_of(json!({"rules": [{"host": "10.0.0.1", "http": {"paths": [{"path": "foo",
            "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}));
        assert_eq!(
            errors,
            [
                "spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
                "spec.rules[0].http.paths[0].path: Invalid value: \"foo\": must be an absolute path"
            ]
        );
    }

    #[test]
    fn an_ingress_needs_rules_or_a_default_backend() {
        assert_eq!(errors_of(json!({})).len(), 1);
    }
}
