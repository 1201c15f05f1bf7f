//! Faults the sandbox can inject, each a documented `sim` command: stop or start a node's
//! kubelet, partition a node from the API server, add or remove nodes.

use crate::api::Kind;
use crate::apiserver::Request;
use crate::cluster::{Cluster, Role};
use crate::kubectl::Output;
use crate::kubelet::NodeConfig;

pub const NODE_HELP: &str = "  sim node stop NAME      stop the node's kubelet: no heartbeats, no pod updates (one of
                          several control-plane nodes: its API server, scheduler and
                          controller manager stop too)
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
            crate::etcdctl::snapshot::node_changed(cluster, name, verb);
            let what = if verb == "stop" { "kubelet stopped" } else { "partitioned from the API server" };
            // A control-plane machine's own components go with it (when it is one of several:
            // the single control plane's stay, as they always have, for the lessons that stop it).
            if cluster.control_plane_nodes().len() > 1 && cluster.stop_control_plane(name) {
                let what = if verb == "stop" { "stopped" } else { "cut off" };
                return ok(format!(
                    "node/{name}: kubelet, etcd member, kube-apiserver, kube-scheduler and kube-controller-manager {what}; its heartbeats stop\n"
                ));
            }
            ok(format!("node/{name}: {what}; its heartbeats stop\n"))
        }
        ("start" | "heal", Some(id)) => {
            if cluster.is_running(id) {
                return err(format!("sim: node {name} is already up\n"));
            }
            cluster.start_component(id);
            crate::etcdctl::snapshot::node_changed(cluster, name, verb);
            if cluster.control_plane_nodes().len() > 1 {
                cluster.start_control_plane(name);
            }
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

pub const POD_HELP: &str = "  sim pod crash NAME [-n NAMESPACE] [-c CONTAINER]
                          kill the container's process (exit code 137); the kubelet
                          restarts it per the pod's restartPolicy, backing off
";

pub const IMAGE_HELP: &str =
    "  sim image break IMAGE   the registry stops serving IMAGE (nginx:1.25, or nginx for every
                          tag): new pulls fail; nodes that already have it keep it
  sim image fix IMAGE     the registry serves it again
";

/// Every fault command's help, as `sim help` lists them.
pub fn help() -> String {
    format!("{NODE_HELP}{POD_HELP}{IMAGE_HELP}{SCHEDULER_HELP}")
}

/// `sim pod crash NAME [-n NAMESPACE] [-c CONTAINER]`: the container's process dies at once,
/// as if killed on its node; its kubelet notices and handles it like any exit.
pub fn pod(cluster: &mut Cluster, args: &[String]) -> Output {
    let mut words = args.iter().map(String::as_str);
    let (mut verb, mut name, mut namespace, mut container) = (None, None, "default", None);
    while let Some(word) = words.next() {
        match word {
            "-n" | "--namespace" => namespace = words.next().unwrap_or(""),
            "-c" | "--container" => container = words.next(),
            w if verb.is_none() => verb = Some(w),
            w if name.is_none() => name = Some(w),
            _ => return err(format!("usage:\n{POD_HELP}")),
        }
    }
    let (Some("crash"), Some(name)) = (verb, name) else { return err(format!("usage:\n{POD_HELP}")) };
    // `pod/NAME`, as `kubectl get pods -o name` prints it, works too.
    let name = name.strip_prefix("pod/").or_else(|| name.strip_prefix("pods/")).unwrap_or(name);
    let Some(object) = cluster.inspect().get(Kind::Pod, namespace, name) else {
        return err(crate::apiserver::Status::not_found(Kind::Pod, name).kubectl_message() + "\n");
    };
    let Some(pod) = object.as_pod() else { return err(format!("sim: pod \"{name}\" not found\n")) };
    let container = match container {
        Some(c) => c.to_string(),
        None => pod.spec.containers.first().map(|c| c.name.clone()).unwrap_or_default(),
    };
    if !pod.spec.containers.iter().any(|c| c.name == container) {
        return err(format!("sim: container \"{container}\" is not valid for pod \"{name}\"\n"));
    }
    let node = pod.spec.node_name.clone();
    if node.is_empty() {
        return err(format!("sim: pod \"{name}\" is not scheduled to a node yet\n"));
    }
    let now = cluster.now();
    let Some(kubelet) = cluster.kubelet_mut(&node) else {
        return err(format!("sim: node {node} has no kubelet\n"));
    };
    match kubelet.crash(namespace, name, &container, now) {
        Ok(()) => ok(format!("pod/{name}: container {container} crashed (exit code 137)\n")),
        Err(e) => err(format!("sim: {e}\n")),
    }
}

/// `sim image break|fix IMAGE`: the registry stops (or starts again) serving an image.
pub fn image(cluster: &mut Cluster, args: &[String]) -> Output {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let registry = cluster.registry();
    match words.as_slice() {
        ["break", image] => match registry.break_image(image) {
            Ok(key) => ok(format!("image {key}: the registry stops serving it; nodes that have it keep it\n")),
            Err(e) => err(format!("sim: {e}\n")),
        },
        ["fix", image] => match registry.fix_image(image) {
            Ok(key) => ok(format!("image {key}: the registry serves it again\n")),
            Err(e) => err(format!("sim: {e}\n")),
        },
        _ => err(format!("usage:\n{IMAGE_HELP}")),
    }
}

pub const SCHEDULER_HELP: &str = "  sim scheduler slow DURATION  each scheduling cycle takes DURATION (pods queue up)
  sim scheduler normal         scheduling is instant again
";

/// `sim scheduler slow DURATION` / `sim scheduler normal`.
pub fn scheduler(cluster: &mut Cluster, args: &[String]) -> Output {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let cycle = match words.as_slice() {
        ["slow", d] => match crate::sim::Duration::parse(d) {
            Some(d) if d > crate::sim::Duration::ZERO => d,
            _ => return err(format!("sim: invalid duration \"{d}\"\n")),
        },
        ["normal"] => crate::sim::Duration::ZERO,
        _ => return err(format!("usage:\n{SCHEDULER_HELP}")),
    };
    let Some(scheduler) = cluster.component_mut::<crate::scheduler::Scheduler>() else {
        return err("sim: no scheduler in this cluster\n".into());
    };
    scheduler.cycle_time = cycle;
    if cycle == crate::sim::Duration::ZERO {
        ok("kube-scheduler: scheduling cycles are instant again\n".into())
    } else {
        ok(format!("kube-scheduler: each scheduling cycle now takes {cycle}\n"))
    }
}
