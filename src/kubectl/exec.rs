//! `kubectl exec POD [-c CONTAINER] -- COMMAND [ARGS…]`: a command run inside a simulated
//! container, with what that container's image ships (see `userland`).
//!
//! kubectl GETs the pod through the API server, then POSTs `pods/<name>/exec`: the API server
//! authorizes it and connects the stream through the pod's kubelet, which runs the command in
//! the container. `-it` with a shell opens an interactive session: the terminal's next lines go
//! to that shell until it exits (see `session`).

use super::args::Args;
use super::session::Attach;
use super::{Output, namespace_flag};
use crate::apiserver::Subresource;
use crate::cluster::Cluster;
use crate::userland::{Container, is_shell};
use std::fmt::Write;

/// `kubectl exec`. `words` are the raw words after the verb, to find `--`.
pub fn exec(cluster: &mut Cluster, args: &Args, words: &[String], io_stdin: Option<&str>) -> Output {
    let command: Vec<String> = match words.iter().position(|w| w == "--") {
        Some(i) => words[i + 1..].to_vec(),
        None if args.positionals.len() > 1 => {
            return Output::err(
                "error: exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\nSee 'kubectl exec -h' for help and examples",
            );
        }
        None => Vec::new(),
    };
    let targets = args.positionals.len().saturating_sub(command.len());
    let Some(target) = args.positionals[..targets].first() else {
        return Output::err("error: pod, type/name or --filename must be specified");
    };
    if command.is_empty() {
        return Output::err("error: you must specify at least one command for the container");
    }
    let namespace = namespace_flag(args);
    // A pod by name, or the first pod of a workload (`deploy/web`), fetched through the API.
    let mut found = Output::default();
    let pod = match super::logs::one_pod(cluster, &namespace, target, &mut found) {
        Ok(pod) => pod,
        Err(e) => return e,
    };
    if matches!(pod.status.phase.as_str(), "Succeeded" | "Failed") {
        return Output::err(format!(
            "error: cannot exec into a container in a completed pod; current phase is {}",
            pod.status.phase
        ));
    }
    let mut out = Output::default();
    let container = match args.get("container") {
        Some(c) => c.to_string(),
        None => {
            let default = pod
                .metadata
                .annotations
                .get("kubectl.kubernetes.io/default-container")
                .cloned()
                .or_else(|| pod.spec.containers.first().map(|c| c.name.clone()))
                .unwrap_or_default();
            if pod.spec.containers.len() > 1 && !args.has("quiet") {
                let all: Vec<&str> = pod.spec.containers.iter().map(|c| c.name.as_str()).collect();
                out.stderr = format!("Defaulted container \"{default}\" out of: {}\n", all.join(", "));
            }
            default
        }
    };
    let status = pod.status.container_statuses.iter().find(|s| s.name == container);
    let Some(spec) = pod.spec.containers.iter().find(|c| c.name == container) else {
        out.stderr.push_str(&format!("error: unable to upgrade connection: container not found (\"{container}\")\n"));
        out.code = 1;
        return out;
    };
    // The API server authorizes the stream (`get` and `create` on pods/exec for the WebSocket
    // upgrade, `create` for the SPDY one kubectl falls back to) and connects it through the
    // pod's kubelet, which then finds (or not) the container running.
    let mut options: Vec<(&str, &str)> = command.iter().map(|c| ("command", c.as_str())).collect();
    options.extend(super::attach::stream_options(&container, args.has("stdin"), args.has("tty")));
    let stream = match cluster.connect_stream(Subresource::Exec, &pod.metadata.namespace, &pod.metadata.name, &options)
    {
        Ok(stream) => stream,
        Err(status) => {
            out.stderr.push_str(&(status.kubectl_message() + "\n"));
            out.code = 1;
            return out;
        }
    };
    match status {
        Some(s) if s.state.running.is_some() => {}
        Some(s) if !s.container_id.is_empty() => {
            out.stderr.push_str(
                "error: Internal error occurred: error executing command in container: container is not created or running\n",
            );
            out.code = 1;
            return out;
        }
        _ => {
            out.stderr
                .push_str(&format!("error: unable to upgrade connection: container not found (\"{container}\")\n"));
            out.code = 1;
            return out;
        }
    }
    let mut container = Container::new(cluster, &pod, spec, args.has("tty"));
    let program = command[0].rsplit('/').next().unwrap_or(&command[0]).to_string();
    if args.has("stdin") && command.len() == 1 && is_shell(&program) && container.installed(&program) {
        match io_stdin {
            // Lines piped in (a heredoc) are the shell's script.
            Some(script) => {
                let result = container.script(&program, script);
                return waited(cluster, finish(out, &result), &result);
            }
            None => {
                out.attach = Some(Box::new(Attach::exec(&pod, stream, &command[0])));
                return out;
            }
        }
    }
    let result = container.run(&command);
    waited(cluster, finish(out, &result), &result)
}

/// The command's waits (a timeout, a `sleep`) pass in virtual time before kubectl returns,
/// within what one command may let pass.
fn waited(cluster: &mut Cluster, out: Output, result: &crate::userland::Run) -> Output {
    if result.slept > crate::sim::Duration::ZERO {
        cluster.advance(result.slept.min(crate::sim::limits::COMMAND_TIME_CAP));
    }
    out
}

/// What the command printed, and kubectl's note of a non-zero exit.
fn finish(mut out: Output, result: &crate::userland::Run) -> Output {
    out.stdout.push_str(&result.stdout);
    out.stderr.push_str(&result.stderr);
    if result.code != 0 {
        let _ = writeln!(out.stderr, "command terminated with exit code {}", result.code);
        out.code = result.code;
    }
    out
}

#[cfg(test)]
mod tests {
    fn session(lines: &[&str]) -> crate::shell::Session {
        let mut s = crate::shell::Session::new(4);
        for line in lines {
            s.execute(&crate::shell::Command::new(line));
        }
        s
    }

    #[test]
    fn a_command_the_image_lacks_fails_as_runc_does_with_exit_code_126() {
        let mut s = session(&["kubectl run box --image=busybox -- sleep 3600", "sleep 10s"]);
        let out = s.execute(&crate::shell::Command::new("kubectl exec box -- curl http://x"));
        assert_eq!(out.code, 126);
        assert!(
            out.stderr
                .ends_with("executable file not found in $PATH: unknown\ncommand terminated with exit code 126\n")
        );
    }

    #[test]
    fn a_container_sees_the_service_links_of_services_that_existed_when_it_started() {
        let mut s = session(&[
            "kubectl create service clusterip early --tcp=80:80",
            "kubectl run box --image=busybox -- sleep 3600",
            "sleep 10s",
            "kubectl create service clusterip late --tcp=80:80",
        ]);
        let env = s.execute(&crate::shell::Command::new("kubectl exec box -- env")).stdout;
        assert!(env.contains("EARLY_SERVICE_PORT=80\n"), "{env}");
        assert!(env.contains("KUBERNETES_SERVICE_HOST=10.96.0.1\n"), "{env}");
        assert!(!env.contains("LATE_"), "{env}");
    }
}
