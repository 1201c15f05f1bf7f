//! `kubectl expose deployment|replicaset|pod|service NAME --port=N`: a Service built from the
//! exposed object as kubectl builds it — the selector copied from the object's selector (or a
//! pod's labels), the object's labels, the port and protocol read from its containers when
//! `--port` is not given, `targetPort` defaulting to the port — then POSTed.

use super::Output;
use super::args::Args;
use super::create::{
    CHANGE_CAUSE, DryRun, NO_RESOURCES, apply_overrides, begin_write, change_cause, print_object, save_config,
    usage_error,
};
use crate::api::{Kind, Object};
use crate::apiserver::{Body, Request, Verb};
use crate::cluster::Cluster;
use crate::util::json_macro::json;
use serde_json::{Map, Value};

/// What kubectl reads from the exposed object: selector, labels, ports with their protocols.
#[derive(Debug, Default, PartialEq)]
struct Exposed {
    selector: Vec<(String, String)>,
    labels: Vec<(String, String)>,
    ports: Vec<(i32, String)>,
}

fn container_ports(spec: &crate::api::PodSpec) -> Vec<(i32, String)> {
    spec.containers
        .iter()
        .flat_map(|c| c.ports.iter())
        .map(|p| (p.container_port, p.protocol.clone().unwrap_or_else(|| "TCP".into())))
        .collect()
}

fn pairs(map: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Reads selector, labels and ports from an object kubectl can expose.
fn introspect(object: &Object) -> Result<Exposed, String> {
    let labels = pairs(&object.meta().labels);
    let from_selector = |sel: Option<&crate::api::LabelSelector>| -> Result<Vec<(String, String)>, String> {
        let sel = sel.cloned().unwrap_or_default();
        if !sel.match_expressions.is_empty() {
            return Err(format!(
                "couldn't convert expressions - \"{}\" to map-based selector format",
                sel.to_selector_string()
            ));
        }
        Ok(pairs(&sel.match_labels))
    };
    match object {
        Object::Deployment(d) => Ok(Exposed {
            selector: from_selector(d.spec.selector.as_ref())?,
            labels,
            ports: container_ports(&d.spec.template.spec),
        }),
        Object::ReplicaSet(rs) => Ok(Exposed {
            selector: from_selector(rs.spec.selector.as_ref())?,
            labels,
            ports: container_ports(&rs.spec.template.spec),
        }),
        Object::Pod(p) => {
            if p.metadata.labels.is_empty() {
                return Err("the pod has no labels and cannot be exposed".into());
            }
            Ok(Exposed { selector: labels.clone(), labels, ports: container_ports(&p.spec) })
        }
        Object::Service(s) => {
            if s.spec.selector.is_empty() {
                return Err("the service has no pod selector set".into());
            }
            let ports =
                s.spec.ports.iter().map(|p| (p.port, p.protocol.clone().unwrap_or_else(|| "TCP".into()))).collect();
            Ok(Exposed { selector: pairs(&s.spec.selector), labels, ports })
        }
        other => {
            let info = other.kind().info();
            let group_kind =
                if info.group.is_empty() { info.kind.to_string() } else { format!("{}.{}", info.kind, info.group) };
            Err(format!("cannot expose a {group_kind}"))
        }
    }
}

/// `k=v,k2=v2` for `--selector` and `--labels` (equality only).
fn parse_map(spec: &str) -> Result<Vec<(String, String)>, String> {
    spec.split(',')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
            _ => Err(format!("invalid label spec: {pair}")),
        })
        .collect()
}

fn to_map(pairs: &[(String, String)]) -> Value {
    Value::Object(crate::util::sort::json_map(pairs.iter().map(|(k, v)| (k.clone(), json!(v)))))
}

/// The Service kubectl generates for the exposed object and flags.
fn build_service(args: &Args, name: &str, exposed: &Exposed) -> Result<Value, String> {
    let selector = match args.get("selector") {
        Some(s) => parse_map(s)?,
        None => exposed.selector.clone(),
    };
    let labels = match args.get("labels") {
        Some(s) => parse_map(s)?,
        None => exposed.labels.clone(),
    };
    let ports: Vec<(i32, String)> = match args.get("port") {
        Some(text) => {
            let mut out = Vec::new();
            for p in text.split(',') {
                let port: i32 = p.parse().map_err(|_| format!("strconv.Atoi: parsing \"{p}\": invalid syntax"))?;
                let protocol = exposed.ports.iter().find(|(n, _)| *n == port).map_or("TCP", |(_, pr)| pr.as_str());
                out.push((port, protocol.to_string()));
            }
            out
        }
        None => exposed.ports.clone(),
    };
    let protocol_flag = args.get("protocol");
    let target = args.get("target-port").or(args.get("container-port"));
    let service_ports: Vec<Value> = ports
        .iter()
        .enumerate()
        .map(|(i, (port, protocol))| {
            let mut p = Map::new();
            if ports.len() > 1 {
                p.insert("name".into(), json!(format!("port-{}", i + 1)));
            }
            p.insert("port".into(), json!(port));
            p.insert("protocol".into(), json!(protocol_flag.unwrap_or(protocol)));
            let target = match target {
                Some(t) => t.parse::<i64>().map(|n| json!(n)).unwrap_or_else(|_| json!(t)),
                None => json!(port),
            };
            p.insert("targetPort".into(), target);
            Value::Object(p)
        })
        .collect();
    let mut spec = Map::new();
    if let Some(ip) = args.get("cluster-ip") {
        spec.insert("clusterIP".into(), json!(ip));
    }
    if let Some(ip) = args.get("external-ip") {
        spec.insert("externalIPs".into(), json!([ip]));
    }
    if args.get("type") == Some("LoadBalancer") {
        if let Some(ip) = args.get("load-balancer-ip") {
            spec.insert("loadBalancerIP".into(), json!(ip));
        }
    }
    spec.insert("ports".into(), Value::Array(service_ports));
    spec.insert("selector".into(), to_map(&selector));
    if let Some(a) = args.get("session-affinity") {
        spec.insert("sessionAffinity".into(), json!(a));
    }
    if let Some(t) = args.get("type") {
        spec.insert("type".into(), json!(t));
    }
    let mut metadata = Map::new();
    if !labels.is_empty() {
        metadata.insert("labels".into(), to_map(&labels));
    }
    metadata.insert("name".into(), json!(name));
    Ok(
        json!({"apiVersion": "v1", "kind": "Service", "metadata": metadata, "spec": spec, "status": {"loadBalancer": {}}}),
    )
}

/// `kubectl expose TYPE NAME [--port] [--target-port] [--type] [--name] [--selector] [--labels]`.
pub(super) fn expose(cluster: &mut Cluster, args: &Args) -> Output {
    if args.positionals.is_empty() {
        return Output::err(NO_RESOURCES);
    }
    let targets = match super::resolve_targets(&args.positionals) {
        Ok(t) => t,
        Err(e) => return Output::err(e.replace("kubectl get -h", "kubectl expose -h")),
    };
    let (dry, mut out) = match begin_write(args) {
        Ok(started) => started,
        Err(out) => return out,
    };
    let namespace = super::namespace_flag(args);
    for (kind, names) in targets {
        if names.is_empty() {
            return usage_error("expose", "resource(s) were provided, but no name was specified");
        }
        for object_name in names {
            let object = match cluster.request(Request::get(kind, &namespace, &object_name)) {
                Ok(reply) => reply.object(),
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                    continue;
                }
            };
            let Some(object) = object else { continue };
            let exposed = match introspect(&object) {
                Ok(e) => e,
                Err(e) if e.starts_with("cannot expose") => return Output::err(format!("error: {e}")),
                Err(e) if args.get("selector").is_none() => {
                    return usage_error(
                        "expose",
                        &format!("couldn't retrieve selectors via --selector flag or introspection: {e}"),
                    );
                }
                Err(_) => Exposed::default(),
            };
            if args.get("port").is_none() && exposed.ports.is_empty() && args.get("cluster-ip") != Some("None") {
                return usage_error("expose", "couldn't find port via --port flag or introspection");
            }
            let name = args.get("name").map(str::to_string).unwrap_or_else(|| object_name.chars().take(63).collect());
            let service = match build_service(args, &name, &exposed) {
                Ok(s) => s,
                Err(e) => return Output::err(format!("error: {e}")),
            };
            let mut service = match apply_overrides(args, service) {
                Ok(s) => s,
                Err(e) => return e,
            };
            if let Some(cause) = change_cause("expose", args) {
                service["metadata"]["annotations"] = json!({CHANGE_CAUSE: cause});
            }
            if dry == DryRun::Client {
                if args.get("namespace").is_some() {
                    service["metadata"]["namespace"] = json!(namespace);
                }
                out.stdout.push_str(&print_object(args, Kind::Service, &service, "exposed", dry));
                continue;
            }
            save_config(args, &mut service);
            let mut req = Request::new(Verb::Create, Kind::Service, &namespace, "").managed_by("kubectl-expose");
            req.body = Some(Body::Json(service));
            req.dry_run = dry == DryRun::Server;
            match cluster.request(req) {
                Ok(reply) => {
                    let created = reply.object().map(|o| o.to_json_value()).unwrap_or(Value::Null);
                    out.stdout.push_str(&print_object(args, Kind::Service, &created, "exposed", dry));
                }
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Args {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        Args::parse("expose", &words).unwrap()
    }

    fn web() -> Exposed {
        Exposed {
            selector: vec![("app".into(), "web".into())],
            labels: vec![("app".into(), "web".into())],
            ports: vec![(80, "TCP".into())],
        }
    }

    #[test]
    fn the_target_port_defaults_to_the_port() {
        let svc = build_service(&args("deploy web --port=8080"), "web", &web()).unwrap();
        assert_eq!(svc["spec"]["ports"], json!([{"port": 8080, "protocol": "TCP", "targetPort": 8080}]));
        assert_eq!(svc["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(svc["metadata"]["labels"], json!({"app": "web"}));
    }

    #[test]
    fn a_named_target_port_stays_a_string_and_a_number_a_number() {
        let svc = build_service(&args("deploy web --port=80 --target-port=http"), "web", &web()).unwrap();
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], json!("http"));
        let svc = build_service(&args("deploy web --port=80 --target-port=8080"), "web", &web()).unwrap();
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], json!(8080));
    }

    #[test]
    fn several_introspected_ports_are_named_port_1_port_2() {
        let mut exposed = web();
        exposed.ports.push((443, "TCP".into()));
        let svc = build_service(&args("deploy web"), "web", &exposed).unwrap();
        assert_eq!(
            svc["spec"]["ports"][1],
            json!({"name": "port-2", "port": 443, "protocol": "TCP", "targetPort": 443})
        );
    }

    #[test]
    fn only_workloads_pods_and_services_can_be_exposed() {
        let node = Object::empty(Kind::Node);
        assert_eq!(introspect(&node).unwrap_err(), "cannot expose a Node");
        let ds = Object::empty(Kind::DaemonSet);
        assert_eq!(introspect(&ds).unwrap_err(), "cannot expose a DaemonSet.apps");
        let pod = Object::empty(Kind::Pod);
        assert_eq!(introspect(&pod).unwrap_err(), "the pod has no labels and cannot be exposed");
    }
}
