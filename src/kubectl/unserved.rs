//! Verbs whose server side this sandbox does not run, answered as real kubectl answers a
//! cluster without it: `top` (no metrics-server, so no Metrics API), `autoscale` (no
//! HorizontalPodAutoscaler API), `edit` (no editor in a terminal without a screen), and every
//! verb while the API server cannot be reached.

use super::args::Args;
use super::{Output, namespace_flag};
use crate::api::Kind;
use crate::apiserver::{ApiServer, Request};
use crate::cluster::Cluster;

/// While etcd is down the API server is not listening: every verb that needs the server gets
/// kubectl's connection error (`version` prints its own half first).
pub fn unreachable(cluster: &Cluster, verb: &str) -> Option<Output> {
    if cluster.api().etcd_running() || matches!(verb, "config" | "help" | "completion" | "plugin") {
        return None;
    }
    let refused = ApiServer::refused().message;
    let stdout = if verb == "version" {
        format!("Client Version: {}\nKustomize Version: v5.7.1\n", crate::kubelet::node_config::KUBELET_VERSION)
    } else {
        String::new()
    };
    Some(Output { stdout, stderr: format!("{refused}\n"), code: 1, ..Default::default() })
}

/// `kubectl top node|pod`: without metrics-server the Metrics API is not served.
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

/// `kubectl autoscale`: flags checked as kubectl checks them, the target fetched, then the
/// HorizontalPodAutoscaler cannot be created: this API server does not serve autoscaling/v2.
pub fn autoscale(cluster: &mut Cluster, args: &Args) -> Output {
    let Some(max) = args.get("max") else { return Output::err("error: required flag(s) \"max\" not set") };
    let number = |flag: &str, v: &str| {
        v.parse::<i32>().map_err(|_| {
            Output::err(format!(
                "Error: invalid argument \"{v}\" for \"--{flag}\" flag: strconv.ParseInt: parsing \"{v}\": invalid syntax\nSee 'kubectl autoscale --help' for usage."
            ))
        })
    };
    let max = match number("max", max) {
        Ok(m) => m,
        Err(out) => return out,
    };
    let min = match args.get("min").map(|m| number("min", m)).transpose() {
        Ok(m) => m.unwrap_or(-1),
        Err(out) => return out,
    };
    if max < 1 {
        return Output::err(format!("error: --max=MAXPODS is required and must be at least 1, max: {max}"));
    }
    if max < min {
        return Output::err(format!(
            "error: --max=MAXPODS must be larger or equal to --min=MINPODS, max: {max}, min: {min}"
        ));
    }
    match target(cluster, args) {
        Err(out) => out,
        Ok((Kind::Deployment | Kind::ReplicaSet, _)) => {
            Output::err("error: no matches for kind \"HorizontalPodAutoscaler\" in version \"autoscaling/v2\"")
        }
        Ok((kind, _)) => Output::err(format!(
            "error: cannot autoscale a {}: {} does not have a scale subresource",
            kind.info().kind,
            kind.qualified_resource()
        )),
    }
}
