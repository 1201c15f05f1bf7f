//! Verbs whose server side this sandbox does not run, answered as real kubectl answers a
//! cluster without it: `top`'s help, `autoscale`'s checks (its work is in `top.rs`), `edit` (no editor in a terminal without a screen),
//! `port-forward` (no machine of the student's to listen on), and every verb while the API
//! server cannot be reached.

use super::args::Args;
use super::{Output, namespace_flag};
use crate::api::Kind;
use crate::apiserver::Request;
use crate::cluster::Cluster;

/// While etcd is down the API server is not listening: every verb that needs the server gets
/// kubectl's connection error (`version` prints its own half first).
pub fn unreachable(cluster: &Cluster, verb: &str) -> Option<Output> {
    if cluster.api_server_listening() || matches!(verb, "config" | "help" | "completion" | "plugin") {
        return None;
    }
    let refused = crate::apiserver::Status::connection_refused(&cluster.api_endpoint()).message;
    let stdout = if verb == "version" {
        format!("Client Version: {}\nKustomize Version: v5.7.1\n", crate::kubelet::node_config::KUBELET_VERSION)
    } else {
        String::new()
    };
    Some(Output { stdout, stderr: format!("{refused}\n"), code: 1, ..Default::default() })
}

/// `kubectl top` without a resource (its help), or with one it does not know.
pub fn top(args: &Args) -> Output {
    match args.positionals.first().map(String::as_str) {
        None => Output::ok(TOP_HELP.into()),
        Some("node" | "nodes" | "no" | "pod" | "pods" | "po") => Output::err("error: Metrics API not available"),
        Some(other) => {
            Output::err(format!("error: unknown command \"{other}\"\nSee 'kubectl top -h' for help and examples"))
        }
    }
}

const TOP_HELP: &str = "Display resource (CPU/memory) usage.

 The top command allows you to see the resource consumption for nodes or pods.

 This command requires Metrics Server to be correctly configured and working on the server.

Available Commands:
  node          Display resource (CPU/memory) usage of nodes
  pod           Display resource (CPU/memory) usage of pods

Usage:
  kubectl top [flags] [options]

Use \"kubectl top <command> --help\" for more information about a given command.
Use \"kubectl options\" for a list of global command-line options (applies to all commands).
";

/// The object a `TYPE NAME` or `TYPE/NAME` pair names, fetched through the API.
fn target(cluster: &mut Cluster, args: &Args) -> Result<(Kind, String), Output> {
    let p = &args.positionals;
    let (resource, name) = match p.first().and_then(|t| t.split_once('/')) {
        Some((r, n)) => (r.to_string(), n.to_string()),
        None => match (p.first(), p.get(1)) {
            (Some(r), Some(n)) => (r.clone(), n.clone()),
            (Some(r), None) => {
                return Err(Output::err(format!(
                    "error: resource(s) were provided, but no name was specified\n(resource: {r})"
                )));
            }
            _ => {
                return Err(Output::err(
                    "error: You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'",
                ));
            }
        },
    };
    let Some(kind) = Kind::from_resource_arg(&resource) else {
        return Err(Output::err(format!("error: the server doesn't have a resource type \"{resource}\"")));
    };
    let namespace = if kind.info().namespaced { namespace_flag(args) } else { String::new() };
    match cluster.request(Request::get(kind, &namespace, &name)) {
        Ok(_) => Ok((kind, name)),
        Err(status) => Err(Output::err(status.kubectl_message())),
    }
}

/// `kubectl port-forward TYPE/NAME [LOCAL:]REMOTE…`: the pod is found and its ports worked
/// out as kubectl does (a Service's port becomes its pods' target port), then there is no
/// machine of the student's to listen on: kubectl's "Forwarding from" lines are printed, and
/// the way to reach the app from inside the cluster instead.
pub fn port_forward(cluster: &mut Cluster, args: &Args) -> Output {
    let p = &args.positionals;
    // TYPE/NAME (or a pod's bare name), then the ports.
    if p.len() < 2 {
        return Output::err(
            "error: TYPE/NAME and list of ports are required for port-forward\nSee 'kubectl port-forward -h' for help and examples",
        );
    }
    let (first, ports) = (&p[0], &p[1..]);
    let namespace = namespace_flag(args);
    let mut found = Output::default();
    let pod = match super::logs::one_pod(cluster, &namespace, first, &mut found) {
        Ok(pod) => pod,
        Err(out) => return out,
    };
    // A Service's ports, to turn a Service port into its target port on the pod.
    let service = match first.split_once('/') {
        Some((r, n)) if Kind::from_resource_arg(r) == Some(Kind::Service) => cluster
            .request(Request::get(Kind::Service, &namespace, n))
            .ok()
            .and_then(|reply| reply.object())
            .and_then(|o| if let crate::api::Object::Service(s) = &*o { Some(s.clone()) } else { None }),
        _ => None,
    };
    let name = first.split_once('/').map_or(first.as_str(), |(_, n)| n);
    if pod.status.phase != "Running" {
        return Output::err(format!(
            "error: unable to forward port because pod is not running. Current status={}",
            pod.status.phase
        ));
    }
    let mut out = Output::default();
    let mut first_pair: Option<(i32, i32)> = None;
    for spec in ports {
        let (local, remote) = spec.split_once(':').unwrap_or((spec.as_str(), spec.as_str()));
        let Ok(remote_port) = remote.parse::<i32>() else {
            return Output::err(format!("error: Error parsing remote port '{remote}': invalid syntax"));
        };
        let target = match &service {
            Some(svc) => match svc.spec.ports.iter().find(|sp| sp.port == remote_port) {
                Some(sp) => match sp.target_port {
                    Some(crate::api::IntOrString::Int(n)) => n,
                    _ => remote_port,
                },
                None => {
                    return Output::err(format!("error: Service {name} does not have a service port {remote_port}"));
                }
            },
            None => remote_port,
        };
        first_pair.get_or_insert((remote_port, target));
        let local = if local.is_empty() { "37451" } else { local };
        out.stdout.push_str(&format!(
            "Forwarding from 127.0.0.1:{local} -> {target}\nForwarding from [::1]:{local} -> {target}\n"
        ));
    }
    let (remote, target) = first_pair.unwrap_or_default();
    let from_inside = match &service {
        Some(svc) => format!("sim curl http://{}:{remote}", svc.metadata.name),
        None => format!("sim curl http://{}:{target}", pod.status.pod_ip),
    };
    out.stderr = format!(
        "kubeloop: nothing listens on your machine's ports from a sandbox: reach pod {} from inside the cluster \
         instead ({from_inside}, or kubectl exec into another pod and curl it)\n",
        pod.metadata.name
    );
    out
}

/// `kubectl edit`: the object is fetched as kubectl would, then there is no editor to open.
pub fn edit(cluster: &mut Cluster, args: &Args) -> Output {
    if args.positionals.is_empty() && args.get("filename").is_none() {
        return Output::err(
            "error: You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'",
        );
    }
    if let Err(out) = target(cluster, args) {
        return out;
    }
    Output::err(
        "error: kubectl edit opens $EDITOR, and this terminal has none: in the page, kubectl edit opens \
         the object in the manifest editor; here, change it with kubectl patch, kubectl set or kubectl scale",
    )
}

/// `kubectl autoscale`'s checks: flags as kubectl checks them, then the target fetched and
/// checked to have a scale subresource. Gives the target's kind and name, `--min` (-1 when
/// unset) and `--max`.
pub fn autoscale_checks(cluster: &mut Cluster, args: &Args) -> Result<(Kind, String, i32, i32), Output> {
    let Some(max) = args.get("max") else { return Err(Output::err("error: required flag(s) \"max\" not set")) };
    let number = |flag: &str, v: &str| {
        v.parse::<i32>().map_err(|_| {
            Output::err(format!(
                "Error: invalid argument \"{v}\" for \"--{flag}\" flag: strconv.ParseInt: parsing \"{v}\": invalid syntax\nSee 'kubectl autoscale --help' for usage."
            ))
        })
    };
    let max = number("max", max)?;
    let min = args.get("min").map(|m| number("min", m)).transpose()?.unwrap_or(-1);
    if max < 1 {
        return Err(Output::err(format!("error: --max=MAXPODS is required and must be at least 1, max: {max}")));
    }
    if max < min {
        return Err(Output::err(format!(
            "error: --max=MAXPODS must be larger or equal to --min=MINPODS, max: {max}, min: {min}"
        )));
    }
    match target(cluster, args)? {
        (kind @ (Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet | Kind::ReplicationController), name) => {
            Ok((kind, name, min, max))
        }
        (kind, _) => Err(Output::err(format!(
            "error: cannot autoscale a {}: {} does not have a scale subresource",
            kind.info().kind,
            kind.qualified_resource()
        ))),
    }
}
