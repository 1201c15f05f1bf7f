//! `kubectl attach POD [-c CONTAINER] [-i] [-t]`: connect to a container's main process (the
//! attach subresource). Without `-i` it streams the process's output from now on; with `-it`
//! on a container whose process is a shell reading its input, it opens an interactive
//! session with that shell.

use super::args::Args;
use super::session::Attach;
use super::{Output, namespace_flag};
use crate::apiserver::Subresource;
use crate::cluster::Cluster;

/// The query of an attach (or exec) stream as kubectl sends it: stdout always, stdin with
/// `-i`, a terminal with `-t` (which carries stderr too).
pub(super) fn stream_options(container: &str, stdin: bool, tty: bool) -> Vec<(&str, &str)> {
    let mut options = vec![("container", container)];
    if stdin {
        options.push(("stdin", "true"));
    }
    options.push(("stdout", "true"));
    if tty {
        options.push(("tty", "true"));
    } else {
        options.push(("stderr", "true"));
    }
    options
}

pub fn attach(cluster: &mut Cluster, args: &Args) -> Output {
    let Some(target) = args.positionals.first() else {
        return Output::err(
            "error: at least 1 argument is required for attach\nSee 'kubectl attach -h' for help and examples",
        );
    };
    let namespace = namespace_flag(args);
    let mut out = Output::default();
    let pod = match super::logs::one_pod(cluster, &namespace, target, &mut out) {
        Ok(pod) => pod,
        Err(e) => return e,
    };
    if matches!(pod.status.phase.as_str(), "Succeeded" | "Failed") {
        return Output::err(format!(
            "error: cannot attach a container in a completed pod; current phase is {}",
            pod.status.phase
        ));
    }
    let name = match args.get("container") {
        Some(c) => c.to_string(),
        None => pod
            .metadata
            .annotations
            .get("kubectl.kubernetes.io/default-container")
            .cloned()
            .or_else(|| pod.spec.containers.first().map(|c| c.name.clone()))
            .unwrap_or_default(),
    };
    let Some(spec) = pod.spec.containers.iter().find(|c| c.name == name) else {
        return Output::err(format!(
            "error: cannot attach to the container: container {name} not found in pod {}",
            pod.metadata.name
        ));
    };
    let quiet = args.has("quiet");
    if args.has("tty") && !spec.tty && !quiet {
        // Printed before what the container prints next, as a terminal shows it.
        out.stdout.push_str(&format!("error: Unable to use a TTY - container {name} did not allocate one\n"));
    }
    let options = stream_options(&name, args.has("stdin"), args.has("tty"));
    let target = match cluster.connect_stream(Subresource::Attach, &namespace, &pod.metadata.name, &options) {
        Ok(target) => target,
        Err(status) => {
            out.stderr.push_str(&(status.kubectl_message() + "\n"));
            out.code = 1;
            return out;
        }
    };
    let running = pod.status.container_statuses.iter().any(|s| s.name == name && s.state.running.is_some());
    if !running {
        out.stderr.push_str(&format!("error: unable to upgrade connection: container not found (\"{name}\")\n"));
        out.code = 1;
        return out;
    }
    if !quiet {
        out.stdout.push_str("If you don't see a command prompt, try pressing enter.\n");
    }
    let image = crate::kubelet::images::parse_reference(&spec.image);
    let shell = crate::kubelet::images::lookup(&image).ok().and_then(|info| {
        crate::kubelet::script::interactive_shell(info.behaviour, &image.repository, &spec.command, &spec.args)
    });
    match shell {
        Some(shell) if args.has("stdin") && spec.stdin && spec.tty => {
            out.attach = Some(Box::new(Attach::main(&pod, target, &shell, None, true, quiet)));
            out
        }
        _ => {
            let streamed = super::logs::follow_from_now(cluster, target);
            out.stdout.push_str(&streamed.stdout);
            out.stderr.push_str(&streamed.stderr);
            out
        }
    }
}
