//! Faults the sandbox can inject, each a documented `sim` command: stop or start a node's
//! kubelet, partition a node from the API server, add or remove nodes.

use crate::api::Kind;
use crate::apiserver::Request;
use crate::cluster::{Cluster, Role};
use crate::kubectl::Output;
use crate::kubelet::NodeConfig;

pub const NODE_HELP: &str = "  sim node stop NAME      stop the node's kubelet: no heartbeats, no pod updates
  sim node start NAME     start it again: it re-registers and catches up
  sim node partition NAME cut the node off from the API server (its pods keep running)
  sim node heal NAME      reconnect it
  sim node add NAME       add a worker (4 CPU, 8Gi, 110 pods)
  sim node remove NAME    stop the node's kubelet and delete its Node object
";

fn ok(text: String) -> Output {
    Output { stdout: text, ..Default::default() }
}

fn err(text: String) -> Output {
    Output { stderr: text, code: 1, ..Default::default() }
}

/// `sim node …`.
pub fn node(cluster: &mut Cluster, args: &[String]) -> Output {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let (verb, name) = match words.as_slice() {
        [verb, name] => (*verb, *name),
        _ => return err(format!("usage:\n{NODE_HELP}")),
    };
    let kubelet = cluster.find_component(&Role::Kubelet { node: name.to_string() });
    match (verb, kubelet) {
        ("add", Some(_)) => err(format!("sim: node {name} already exists\n")),
        ("add", None) => {
            if !crate::apiserver::validation::is_dns_subdomain(name) {
                return err(format!("sim: invalid node name \"{name}\"\n"));
            }
            let index = cluster.component_ids().count() as u32;
            let config = cluster.config();
            let node = NodeConfig::new(
                name,
                index,
                config.worker_cpu_milli,
                config.worker_memory_bytes,
                config.worker_max_pods,
            );
            cluster.add_node(node);
            ok(format!("node/{name} added: its kubelet is registering\n"))
        }
        (_, None) => err(format!("sim: no node named \"{name}\"\n")),
        ("stop" | "partition", Some(id)) => {
            if !cluster.is_running(id) {
                return err(format!("sim: node {name} is already cut off\n"));
            }
            cluster.stop_component(id);
            let what = if verb == "stop" { "kubelet stopped" } else { "partitioned from the API server" };
            ok(format!("node/{name}: {what}; its heartbeats stop\n"))
        }
        ("start" | "heal", Some(id)) => {
            if cluster.is_running(id) {
                return err(format!("sim: node {name} is already up\n"));
            }
            cluster.start_component(id);
            let what = if verb == "start" { "kubelet started" } else { "reconnected to the API server" };
            ok(format!("node/{name}: {what}\n"))
        }
        ("remove", Some(id)) => {
            cluster.stop_component(id);
            match cluster.request(Request::delete(Kind::Node, "", name)) {
                Ok(_) => ok(format!("node/{name} removed\n")),
                Err(status) => err(status.kubectl_message() + "\n"),
            }
        }
        _ => err(format!("sim: unknown node command \"{verb}\"\n{NODE_HELP}")),
    }
}
