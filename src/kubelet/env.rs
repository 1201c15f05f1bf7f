//! A container's own environment variables, as the kubelet builds them before starting its
//! process: `envFrom` (every key of a ConfigMap or Secret, with its prefix) first, then `env`
//! in order (a literal `value`, its `$(VAR)` references expanded from the variables before
//! it, or `valueFrom`: the downward API, a ConfigMap's or Secret's key). A later variable of
//! the same name replaces an earlier one.

use super::expansion;
use crate::api::{Container, Kind, Object, Pod};
use crate::sim::Time;
use serde_json::Value;
use std::sync::Arc;

/// What the kubelet knows of the objects a container's environment is built from: the
/// Services its informer caches, the ConfigMaps and Secrets its managers watch.
pub trait Objects {
    /// The Services of a namespace, in name order.
    fn services(&self, namespace: &str) -> Vec<Arc<Object>>;
    /// A ConfigMap, Secret or Service, if known.
    fn object(&self, kind: Kind, namespace: &str, name: &str) -> Option<Arc<Object>>;
}

/// Nothing known: only literal values.
pub struct NoObjects;

impl Objects for NoObjects {
    fn services(&self, _: &str) -> Vec<Arc<Object>> {
        Vec::new()
    }
    fn object(&self, _: Kind, _: &str, _: &str) -> Option<Arc<Object>> {
        None
    }
}

/// The variables a container declares, resolved against the API server's objects; a value's
/// `$(VAR)` may also name a Service link.
pub fn declared(api: &dyn Objects, pod: &Pod, container: &Container) -> Vec<(String, String)> {
    let refers = container.env.iter().any(|v| v.value.as_ref().is_some_and(|v| v.contains("$(")));
    let links = if refers { service_links(api, pod, None) } else { Vec::new() };
    declared_over(api, pod, container, &links)
}

/// `declared`, with `base` (the Service links) as what a reference falls back to.
fn declared_over(
    api: &dyn Objects,
    pod: &Pod,
    container: &Container,
    base: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    let set = |env: &mut Vec<(String, String)>, name: String, value: String| {
        env.retain(|(k, _)| *k != name);
        env.push((name, value));
    };
    for source in &container.env_from {
        let prefix = text(source, "prefix");
        for (key, value) in source_keys(api, pod, source) {
            set(&mut env, format!("{prefix}{key}"), value);
        }
    }
    for var in &container.env {
        let value = match (&var.value, &var.value_from) {
            (Some(v), _) if base.is_empty() => expansion::expand(v, &env),
            (Some(v), _) => expansion::expand(v, &[base, &env].concat()),
            (None, Some(from)) => value_from(api, pod, from),
            (None, None) => String::new(),
        };
        set(&mut env, var.name.clone(), value);
    }
    env
}

/// The docker-style links the kubelet adds for every Service with a ClusterIP that existed
/// when the container started (`started`; `None`: every Service): its namespace's, plus
/// `kubernetes` from `default`. None when the pod sets `enableServiceLinks: false`.
pub fn service_links(api: &dyn Objects, pod: &Pod, started: Option<Time>) -> Vec<(String, String)> {
    if pod.spec.enable_service_links == Some(false) {
        return Vec::new();
    }
    let ns = &pod.metadata.namespace;
    let mut services: Vec<_> = api.services(ns);
    if ns != "default" {
        services.extend(api.object(Kind::Service, "default", "kubernetes"));
    }
    let mut out = Vec::new();
    for object in services {
        let Object::Service(svc) = &*object else { continue };
        let ip = &svc.spec.cluster_ip;
        let existed = match (svc.metadata.creation_timestamp, started) {
            (Some(created), Some(started)) => created <= started,
            _ => true,
        };
        if ip.is_empty() || ip == "None" || svc.spec.ports.is_empty() || !existed {
            continue;
        }
        let prefix = svc.metadata.name.to_ascii_uppercase().replace('-', "_");
        let first = &svc.spec.ports[0];
        out.push((format!("{prefix}_SERVICE_HOST"), ip.clone()));
        out.push((format!("{prefix}_SERVICE_PORT"), first.port.to_string()));
        for p in &svc.spec.ports {
            if let Some(name) = p.name.as_deref().filter(|n| !n.is_empty()) {
                out.push((
                    format!("{prefix}_SERVICE_PORT_{}", name.to_ascii_uppercase().replace('-', "_")),
                    p.port.to_string(),
                ));
            }
        }
        let proto = |p: &crate::api::service::ServicePort| p.protocol.clone().unwrap_or_else(|| "TCP".into());
        out.push((format!("{prefix}_PORT"), format!("{}://{ip}:{}", proto(first).to_lowercase(), first.port)));
        for p in &svc.spec.ports {
            let (proto, port) = (proto(p), p.port);
            let base = format!("{prefix}_PORT_{port}_{proto}");
            out.push((base.clone(), format!("{}://{ip}:{port}", proto.to_lowercase())));
            out.push((format!("{base}_PROTO"), proto.to_lowercase()));
            out.push((format!("{base}_PORT"), port.to_string()));
            out.push((format!("{base}_ADDR"), ip.clone()));
        }
    }
    out
}

/// What `$(VAR)` in a container's command and args can name as its process starts: the
/// Service links, then the container's own variables (which win).
pub fn for_expansion(
    api: &dyn Objects,
    pod: &Pod,
    container: &Container,
    started: Option<Time>,
) -> Vec<(String, String)> {
    let mut env = service_links(api, pod, started);
    env.extend(declared_over(api, pod, container, &env));
    env
}

/// A container's command and args as its process got them, `$(VAR)` expanded (the variables
/// are only looked up when a word refers to one).
pub fn command_line(
    api: &dyn Objects,
    pod: &Pod,
    container: &Container,
    started: Option<Time>,
) -> (Vec<String>, Vec<String>) {
    let (command, args) = (&container.command, &container.args);
    if !command.iter().chain(args).any(|w| w.contains("$(")) {
        return (command.clone(), args.clone());
    }
    let env = for_expansion(api, pod, container, started);
    (expansion::expand_all(command, &env), expansion::expand_all(args, &env))
}

/// The variables a container declares with literal values only (no cluster to ask).
pub fn literal(container: &Container) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    for var in &container.env {
        let value = var.value.as_deref().map(|v| expansion::expand(v, &env)).unwrap_or_default();
        env.push((var.name.clone(), value));
    }
    env
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(|x| x.as_str()).unwrap_or_default().to_string()
}

/// An `envFrom` source's keys and values: a ConfigMap's data, a Secret's decoded data.
fn source_keys(api: &dyn Objects, pod: &Pod, source: &Value) -> Vec<(String, String)> {
    let ns = &pod.metadata.namespace;
    if let Some(r) = source.get("configMapRef")
        && let Some(Object::ConfigMap(cm)) = api.object(Kind::ConfigMap, ns, &text(r, "name")).as_deref()
    {
        return cm.data.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    }
    if let Some(r) = source.get("secretRef")
        && let Some(Object::Secret(secret)) = api.object(Kind::Secret, ns, &text(r, "name")).as_deref()
    {
        return secret.data.iter().map(|(k, v)| (k.clone(), decode(v))).collect();
    }
    Vec::new()
}

/// Why a container cannot be configured: the first variable (in the order the kubelet builds
/// them, `envFrom` then `env`) whose ConfigMap or Secret, or its key, is missing and not
/// `optional`, in the kubelet's words (`configmap "x" not found`, `couldn't find key k in
/// ConfigMap default/x`). `None` when every reference is found (or the container has none).
pub fn config_error(api: &dyn Objects, pod: &Pod, container: &Container) -> Option<String> {
    if container.env_from.is_empty() && container.env.iter().all(|v| v.value_from.is_none()) {
        return None;
    }
    let ns = &pod.metadata.namespace;
    let optional = |r: &Value| r.get("optional").and_then(Value::as_bool) == Some(true);
    for source in &container.env_from {
        for (field, kind) in [("configMapRef", Kind::ConfigMap), ("secretRef", Kind::Secret)] {
            if let Some(r) = source.get(field)
                && api.object(kind, ns, &text(r, "name")).is_none()
                && !optional(r)
            {
                return Some(not_found(kind, &text(r, "name")));
            }
        }
    }
    for from in container.env.iter().filter_map(|v| v.value_from.as_ref()) {
        for (field, kind) in [("configMapKeyRef", Kind::ConfigMap), ("secretKeyRef", Kind::Secret)] {
            let Some(r) = from.get(field) else { continue };
            let (name, key) = (text(r, "name"), text(r, "key"));
            let has_key = match api.object(kind, ns, &name).as_deref() {
                None if optional(r) => continue,
                None => return Some(not_found(kind, &name)),
                Some(Object::ConfigMap(cm)) => cm.data.contains_key(&key),
                Some(Object::Secret(secret)) => secret.data.contains_key(&key),
                Some(_) => false,
            };
            if !has_key && !optional(r) {
                return Some(format!("couldn't find key {key} in {} {ns}/{name}", kind.info().kind));
            }
        }
    }
    None
}

/// The kubelet's "not found" for a ConfigMap or Secret its managers do not hold (their
/// resource is named in the singular: `configmap "x" not found`).
pub fn not_found(kind: Kind, name: &str) -> String {
    let what = if kind == Kind::Secret { "secret" } else { "configmap" };
    format!("{what} \"{name}\" not found")
}

fn decode(data: &str) -> String {
    String::from_utf8_lossy(&crate::util::base64::decode(data).unwrap_or_default()).into_owned()
}

/// `metadata.annotations['key']` or `metadata.labels['key']`: that one value.
pub(super) fn downward_key(pod: &Pod, path: &str) -> Option<String> {
    let (map, rest): (&crate::api::Labels, &str) = if let Some(rest) = path.strip_prefix("metadata.annotations[") {
        (&pod.metadata.annotations, rest)
    } else {
        (&*pod.metadata.labels, path.strip_prefix("metadata.labels[")?)
    };
    let key = rest.strip_suffix(']')?.trim_matches(|c| c == '\'' || c == '"');
    map.get(key).cloned()
}

/// `valueFrom`: the downward API's common fields, a ConfigMap's or Secret's key.
pub fn value_from(api: &dyn Objects, pod: &Pod, from: &Value) -> String {
    let ns = &pod.metadata.namespace;
    if let Some(field) = from.get("fieldRef") {
        return match text(field, "fieldPath").as_str() {
            "metadata.name" => pod.metadata.name.clone(),
            "metadata.namespace" => ns.clone(),
            "metadata.uid" => pod.metadata.uid.clone(),
            "spec.nodeName" => pod.spec.node_name.clone(),
            "spec.serviceAccountName" => pod.spec.service_account_name.clone().unwrap_or_default(),
            "status.podIP" => pod.status.pod_ip.clone(),
            "status.hostIP" => pod.status.host_ip.clone(),
            path => downward_key(pod, path).unwrap_or_default(),
        };
    }
    if let Some(r) = from.get("configMapKeyRef")
        && let Some(Object::ConfigMap(cm)) = api.object(Kind::ConfigMap, ns, &text(r, "name")).as_deref()
    {
        return cm.data.get(&text(r, "key")).cloned().unwrap_or_default();
    }
    if let Some(r) = from.get("secretKeyRef")
        && let Some(Object::Secret(secret)) = api.object(Kind::Secret, ns, &text(r, "name")).as_deref()
    {
        return decode(secret.data.get(&text(r, "key")).map(String::as_str).unwrap_or_default());
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::pod::EnvVar;

    #[test]
    fn a_literal_value_expands_references_to_the_variables_before_it() {
        let var = |name: &str, value: &str| EnvVar { name: name.into(), value: Some(value.into()), value_from: None };
        let c = Container {
            env: vec![var("GREETING", "hello"), var("MESSAGE", "$(GREETING) world"), var("LATER", "$(AFTER)")],
            ..Default::default()
        };
        let env = literal(&c);
        assert_eq!(env[1].1, "hello world");
        assert_eq!(env[2].1, "$(AFTER)");
    }
}

#[cfg(test)]
mod config_error_tests {
    use super::*;

    struct Settings(Option<Arc<Object>>);

    impl Objects for Settings {
        fn services(&self, _: &str) -> Vec<Arc<Object>> {
            Vec::new()
        }
        fn object(&self, kind: Kind, _: &str, name: &str) -> Option<Arc<Object>> {
            self.0.clone().filter(|o| o.kind() == kind && o.name() == name)
        }
    }

    fn container(env: serde_json::Value) -> Container {
        serde_json::from_value(serde_json::json!({"name": "c", "image": "busybox", "env": env})).expect("container")
    }

    fn pod() -> Pod {
        serde_json::from_value(serde_json::json!({"metadata": {"name": "p", "namespace": "default"}})).expect("pod")
    }

    fn settings() -> Settings {
        let cm =
            serde_json::json!({"metadata": {"name": "settings", "namespace": "default"}, "data": {"mode": "fast"}});
        Settings(Some(Arc::new(Object::ConfigMap(serde_json::from_value(cm).expect("cm")))))
    }

    fn key_ref(name: &str, key: &str, optional: bool) -> serde_json::Value {
        serde_json::json!([{"name": "V", "valueFrom": {"configMapKeyRef": {"name": name, "key": key, "optional": optional}}}])
    }

    #[test]
    fn a_missing_config_map_or_key_is_a_config_error_in_the_kubelets_words() {
        let c = container(key_ref("settings", "mode", false));
        assert_eq!(config_error(&Settings(None), &pod(), &c), Some("configmap \"settings\" not found".into()));
        let c = container(key_ref("settings", "level", false));
        assert_eq!(
            config_error(&settings(), &pod(), &c),
            Some("couldn't find key level in ConfigMap default/settings".into())
        );
        let secret =
            container(serde_json::json!([{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}}]));
        assert_eq!(config_error(&settings(), &pod(), &secret), Some("secret \"db\" not found".into()));
    }

    #[test]
    fn optional_references_and_found_keys_are_no_error() {
        assert_eq!(config_error(&Settings(None), &pod(), &container(key_ref("settings", "mode", true))), None);
        assert_eq!(config_error(&settings(), &pod(), &container(key_ref("settings", "level", true))), None);
        assert_eq!(config_error(&settings(), &pod(), &container(key_ref("settings", "mode", false))), None);
        let from: Container = serde_json::from_value(serde_json::json!({"name": "c", "image": "busybox",
            "envFrom": [{"configMapRef": {"name": "gone", "optional": true}}]}))
        .expect("container");
        assert_eq!(config_error(&Settings(None), &pod(), &from), None);
    }
}
