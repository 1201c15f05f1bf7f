//! `kubectl logs`: one container's log, or several (`-l SELECTOR`, `--all-containers`,
//! `TYPE/NAME` of a workload), filtered by `--since`/`--since-time`/`--tail`, prefixed with
//! `--prefix` and `--timestamps`; with `-f`, the existing lines first, then new lines as
//! virtual time passes, until every followed container stops or the follow cap
//! ([`FOLLOW_CAP`], or `--request-timeout`) is reached.

use super::args::Args;
use super::args::parse_go_duration;
use super::{Output, namespace_flag};
use crate::api::{Kind, Object, Pod};
use crate::apiserver::{ConnectTarget, Reply, Request, Subresource};
use crate::cluster::Cluster;
use crate::sim::{Duration, Time};
use std::fmt::Write;

/// How long `logs -f` follows when nothing stops it (a terminal user would press Ctrl-C).
pub const FOLLOW_CAP: Duration = Duration::minutes(1);

/// One container's log stream: a `pods/<name>/log` request the API server connected to the
/// container's kubelet.
struct Stream {
    pod: String,
    container: String,
    target: ConnectTarget,
    printed: usize,
}

/// A container of a pod whose log is wanted, before its stream is opened.
struct Wanted {
    namespace: String,
    pod: String,
    container: String,
}

pub fn logs(cluster: &mut Cluster, args: &Args) -> Output {
    let namespace = namespace_flag(args);
    let selector = args.get("selector");
    if selector.is_some() && !args.positionals.is_empty() {
        return Output::err(
            "error: only a selector (-l) or a POD name is allowed\nSee 'kubectl logs -h' for help and examples",
        );
    }
    if selector.is_none() && args.positionals.is_empty() {
        return Output::err(
            "error: expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command\nSee 'kubectl logs -h' for help and examples",
        );
    }
    // The client's timeout is read before any request is sent.
    let cap = match args.request_timeout() {
        Ok(cap) => cap.unwrap_or(FOLLOW_CAP),
        Err(e) => return Output::err(e),
    };
    let since = match args.get("since").map(|s| (s, parse_go_duration(s))) {
        None => None,
        Some((_, Some(d))) => Some(d),
        Some((s, None)) => {
            return Output::err(format!(
                "Error: invalid argument \"{s}\" for \"--since\" flag: time: invalid duration \"{s}\"\nSee 'kubectl logs --help' for usage."
            ));
        }
    };
    let since_time = match args.get("since-time").map(|s| (s, Time::parse_rfc3339(s))) {
        None => None,
        Some((_, Some(t))) => Some(t),
        Some((s, None)) => {
            return Output::err(format!(
                "error: parsing time \"{s}\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"{s}\" as \"2006\""
            ));
        }
    };
    if since.is_some() && since_time.is_some() {
        return Output::err("error: at most one of `sinceTime` or `sinceSeconds` may be specified");
    }
    let follow = args.has("follow");
    let all_containers = args.has("all-containers");
    if all_containers && args.get("container").is_some() {
        return Output::err("error: --container cannot be used with --all-containers");
    }
    let mut out = Output::default();
    // The pods: by name, by a workload's selector (its first pod), or by -l.
    let pods: Vec<Pod> = if let Some(sel) = selector {
        let mut list = Request::list(Kind::Pod, &namespace);
        list.label_selector = match crate::api::meta::parse_selector(sel) {
            Ok(s) => Some(s),
            Err(e) => return Output::err(format!("error: {e}")),
        };
        match cluster.request(list) {
            Ok(Reply::List { items, .. }) => items.iter().filter_map(|o| o.as_pod().cloned()).collect(),
            Ok(_) => Vec::new(),
            Err(status) => return Output::err(status.kubectl_message()),
        }
    } else {
        match one_pod(cluster, &namespace, &args.positionals[0], &mut out) {
            Ok(pod) => vec![pod],
            Err(e) => return e,
        }
    };
    if selector.is_some() && pods.is_empty() {
        out.stdout.push_str(&format!("No resources found in {namespace} namespace.\n"));
        return out;
    }
    let mut wanted = Vec::new();
    for pod in &pods {
        let names: Vec<String> = if all_containers {
            // Init containers first, as kubectl streams them.
            pod.spec.init_containers.iter().chain(&pod.spec.containers).map(|c| c.name.clone()).collect()
        } else if let Some(c) = args.get("container") {
            if !pod.spec.containers.iter().chain(&pod.spec.init_containers).any(|x| x.name == c) {
                let all: Vec<&str> = pod.spec.containers.iter().map(|c| c.name.as_str()).collect();
                return Output::err(format!(
                    "error: container {c} is not valid for pod {}{}",
                    pod.metadata.name,
                    if selector.is_some() { format!(" out of: {}", all.join(", ")) } else { String::new() }
                ));
            }
            vec![c.to_string()]
        } else if (pod.spec.containers.len() == 1 && pod.spec.init_containers.is_empty()) || selector.is_some() {
            pod.spec.containers.first().map(|c| vec![c.name.clone()]).unwrap_or_default()
        } else {
            // The default container annotation, else the first, as kubectl says on stderr
            // (naming every container, init containers marked).
            let names: Vec<&str> = pod.spec.containers.iter().map(|c| c.name.as_str()).collect();
            let all: Vec<String> = pod
                .spec
                .containers
                .iter()
                .map(|c| c.name.clone())
                .chain(pod.spec.init_containers.iter().map(|c| format!("{} (init)", c.name)))
                .collect();
            let default = pod
                .metadata
                .annotations
                .get("kubectl.kubernetes.io/default-container")
                .filter(|d| names.contains(&d.as_str()))
                .cloned()
                .or_else(|| names.first().map(|n| n.to_string()));
            let Some(default) = default else {
                return Output::err(format!("error: pod {} has no containers", pod.metadata.name));
            };
            let _ = writeln!(out.stderr, "Defaulted container \"{default}\" out of: {}", all.join(", "));
            vec![default]
        };
        for container in names {
            wanted.push(Wanted {
                namespace: pod.metadata.namespace.clone(),
                pod: pod.metadata.name.clone(),
                container,
            });
        }
    }
    let max_requests = args.get("max-log-requests").and_then(|m| m.parse::<usize>().ok()).unwrap_or(5);
    if follow && wanted.len() > max_requests {
        return Output::err(format!(
            "error: you are attempting to follow {} log streams, but maximum allowed concurrency is {max_requests}, use --max-log-requests to increase the limit",
            wanted.len()
        ));
    }
    let previous = args.has("previous");
    let tail = args.get("tail").and_then(|t| t.parse::<i64>().ok()).unwrap_or(if selector.is_some() { 10 } else { -1 });
    let now = cluster.now();
    let from = since.map(|d| Time(now.0.saturating_sub(d.as_millis()))).or(since_time);
    let prefix = args.has("prefix");
    let timestamps = args.has("timestamps");
    let mut streams = Vec::new();
    for w in wanted {
        let mut options = vec![("container", w.container.as_str())];
        if follow {
            options.push(("follow", "true"));
        }
        if previous {
            options.push(("previous", "true"));
        }
        if let Some(s) = args.get("since") {
            options.push(("sinceSeconds", s));
        }
        if let Some(t) = args.get("since-time") {
            options.push(("sinceTime", t));
        }
        let tail_lines = tail.to_string();
        if tail >= 0 {
            options.push(("tailLines", tail_lines.as_str()));
        }
        if timestamps {
            options.push(("timestamps", "true"));
        }
        let target = match cluster.connect(Request::connect(Subresource::Log, &w.namespace, &w.pod, &options, false)) {
            Ok(target) => target,
            Err(status) => {
                let e = status.kubectl_message();
                if (selector.is_some() || all_containers) && status.message.contains(" is waiting to start: ") {
                    // Several streams: kubectl reports the one that cannot start and goes on.
                    out.stderr.push_str(&e);
                    out.stderr.push('\n');
                    out.code = 1;
                    continue;
                }
                return Output { stdout: out.stdout, stderr: out.stderr + &e + "\n", code: 1, ..Default::default() };
            }
        };
        streams.push(Stream { pod: w.pod, container: w.container, target, printed: 0 });
        let Some(stream) = streams.last_mut() else { break };
        let Some(lines) = read(cluster, stream, previous) else {
            let e = format!(
                "Error from server (BadRequest): previous terminated container \"{}\" in pod \"{}\" not found",
                stream.container, stream.pod
            );
            return Output { stdout: out.stdout, stderr: out.stderr + &e + "\n", code: 1, ..Default::default() };
        };
        let lines: Vec<(Time, String)> = lines.into_iter().filter(|(t, _)| from.is_none_or(|f| *t >= f)).collect();
        let skip = if tail >= 0 { lines.len().saturating_sub(tail as usize) } else { 0 };
        stream.printed = read(cluster, stream, previous).map_or(0, |l| l.len());
        for (t, line) in lines.into_iter().skip(skip) {
            out.stdout.push_str(&format_line(stream, t, &line, prefix, timestamps));
        }
    }
    if !follow || previous {
        return out;
    }
    let deadline = now + cap;
    loop {
        let running = streams.iter().any(|s| is_running(cluster, s));
        if !running || cluster.now() >= deadline {
            if running {
                let _ = writeln!(
                    out.stderr,
                    "kubeloop: stopped following after {cap} of virtual time (as Ctrl-C would; --request-timeout sets it)"
                );
            }
            return out;
        }
        cluster.step_toward(deadline);
        for stream in &mut streams {
            let Some(lines) = read(cluster, stream, false) else { continue };
            // A restarted container starts a new log: follow stops at the old one's end.
            if lines.len() < stream.printed {
                stream.printed = lines.len();
            }
            for (t, line) in &lines[stream.printed..] {
                out.stdout.push_str(&format_line(stream, *t, line, prefix, timestamps));
            }
            stream.printed = lines.len();
        }
    }
}

/// `kubectl attach` without a shell to talk to: the container's output from now on, as
/// virtual time passes, until its process ends (or the follow cap, as Ctrl-C would).
pub(super) fn follow_from_now(cluster: &mut Cluster, target: ConnectTarget) -> Output {
    let mut out = Output::default();
    let mut stream = Stream { pod: target.pod.clone(), container: target.container.clone(), target, printed: 0 };
    stream.printed = read(cluster, &stream, false).map_or(0, |l| l.len());
    let deadline = cluster.now() + FOLLOW_CAP;
    loop {
        if !is_running(cluster, &stream) {
            return out;
        }
        if cluster.now() >= deadline {
            let _ = writeln!(
                out.stderr,
                "kubeloop: stopped following after {FOLLOW_CAP} of virtual time (as Ctrl-C would)"
            );
            return out;
        }
        cluster.step_toward(deadline);
        let Some(lines) = read(cluster, &stream, false) else { continue };
        if lines.len() < stream.printed {
            // The process ended and a new instance started: the attached stream has ended.
            return out;
        }
        for (t, line) in &lines[stream.printed..] {
            out.stdout.push_str(&format_line(&stream, *t, line, false, false));
        }
        stream.printed = lines.len();
    }
}

/// The pod a `POD`, `pod/NAME` or workload `TYPE/NAME` argument names.
pub(super) fn one_pod(cluster: &mut Cluster, namespace: &str, target: &str, out: &mut Output) -> Result<Pod, Output> {
    let (kind, name) = match target.split_once('/') {
        Some((r, n)) => match Kind::from_resource_arg(r) {
            Some(k) => (k, n),
            None => return Err(Output::err(format!("error: the server doesn't have a resource type \"{r}\""))),
        },
        None => (Kind::Pod, target),
    };
    let object = match cluster.request(Request::get(kind, namespace, name)) {
        Ok(reply) => reply.object(),
        Err(status) => return Err(Output::err(status.kubectl_message())),
    };
    let Some(object) = object else { return Err(Output::err("error: not found")) };
    if let Some(pod) = object.as_pod() {
        return Ok(pod.clone());
    }
    let selector = match &*object {
        Object::Deployment(d) => d.spec.selector.clone(),
        Object::ReplicaSet(r) => r.spec.selector.clone(),
        Object::DaemonSet(d) => d.spec.selector.clone(),
        Object::Job(j) => j.spec.selector.clone(),
        Object::Service(svc) if !svc.spec.selector.is_empty() => {
            Some(crate::api::LabelSelector { match_labels: svc.spec.selector.clone(), ..Default::default() })
        }
        _ => None,
    };
    let Some(selector) = selector else {
        return Err(Output::err(format!("error: cannot get the logs from {}", kind.qualified_resource())));
    };
    let mut list = Request::list(Kind::Pod, namespace);
    list.label_selector = Some(selector);
    let pods: Vec<Pod> = match cluster.request(list) {
        Ok(Reply::List { items, .. }) => items.iter().filter_map(|o| o.as_pod().cloned()).collect(),
        _ => Vec::new(),
    };
    let Some(first) = pods.first().cloned() else {
        return Err(Output::err(format!(
            "error: timed out waiting for the condition on {}/{name}",
            kind.qualified_resource()
        )));
    };
    if pods.len() > 1 {
        let _ = writeln!(out.stderr, "Found {} pods, using pod/{}", pods.len(), first.metadata.name);
    }
    Ok(first)
}

fn read(cluster: &Cluster, s: &Stream, previous: bool) -> Option<Vec<(Time, String)>> {
    cluster.stream_logs(&s.target, previous)
}

/// Whether the followed container is still running: its stream is still open.
fn is_running(cluster: &Cluster, s: &Stream) -> bool {
    cluster.stream_open(&s.target, false)
}

fn format_line(s: &Stream, t: Time, line: &str, prefix: bool, timestamps: bool) -> String {
    let mut out = String::new();
    if prefix {
        let _ = write!(out, "[pod/{}/{}] ", s.pod, s.container);
    }
    if timestamps {
        let _ = write!(out, "{} ", t.rfc3339_micros().replace('Z', "000Z"));
    }
    out.push_str(line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use crate::shell::{Command, Session};

    #[test]
    fn following_a_container_that_exits_stops_when_it_does() {
        let mut s = Session::new(4);
        s.execute(&Command::new(
            "kubectl run once --image=busybox --restart=Never -- sh -c 'echo one; sleep 3; echo two'",
        ));
        s.execute(&Command::new("sleep 2s"));
        let out = s.execute(&Command::new("kubectl logs once -f"));
        assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("one\ntwo\n", ""));
    }

    #[test]
    fn since_keeps_only_the_lines_written_in_that_window() {
        let mut s = Session::new(4);
        s.execute(&Command::new("kubectl run tick --image=busybox -- sh -c 'while true; do echo tick; sleep 5; done'"));
        s.execute(&Command::new("sleep 30s"));
        let all = s.execute(&Command::new("kubectl logs tick")).stdout.lines().count();
        let recent = s.execute(&Command::new("kubectl logs tick --since=11s")).stdout.lines().count();
        assert!(all >= 5 && (2..=3).contains(&recent), "{all} lines, {recent} recent");
    }
}
