//! `kubectl run NAME --image=IMAGE`: one Pod, built as kubectl's pod generator builds it
//! (label `run=NAME`, the container named after the pod, `dnsPolicy: ClusterFirst`), then POSTed.

use super::Output;
use super::args::Args;
use super::create::{
    CHANGE_CAUSE, DryRun, RECORD_DEPRECATED, apply_overrides, change_cause, check_output, print_object, save_config,
    split_at_dash, usage_error,
};
use super::object_watch::ObjectWatch;
use super::session::{Attach, RunAfter, container_id};
use crate::api::{Kind, Pod};
use crate::apiserver::{Body, ConnectTarget, Request, Subresource, Verb};
use crate::cluster::Cluster;
use crate::sim::Duration;
use crate::util::json_macro::json;
use serde_json::{Map, Value};

/// `--labels=a=b,c=d` into a map; kubectl's error for a malformed pair.
fn parse_labels(spec: &str) -> Result<Map<String, Value>, String> {
    let mut labels = Map::new();
    for pair in spec.split(',') {
        match pair.split_once('=') {
            Some((k, v)) if !k.is_empty() && !v.contains('=') => {
                labels.insert(k.to_string(), json!(v));
            }
            _ => return Err(format!("error: invalid label spec: {pair}")),
        }
    }
    Ok(labels)
}

/// `--env=NAME=VALUE`.
fn parse_env(env: &str) -> Result<Value, String> {
    let invalid = || format!("error: invalid env: {env}");
    let (name, value) = env.split_once('=').ok_or_else(invalid)?;
    let valid_name = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !valid_name {
        return Err(invalid());
    }
    Ok(json!({"name": name, "value": value}))
}

/// Whether `image` is a well-formed image reference (docker/distribution's grammar): an
/// optional registry host, lowercase path components, an optional tag and digest.
fn valid_reference(image: &str) -> bool {
    let (name_tag, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    if digest.is_some_and(|d| !d.split_once(':').is_some_and(|(a, h)| !a.is_empty() && h.len() >= 32)) {
        return false;
    }
    let slash = name_tag.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match name_tag[slash..].rfind(':') {
        Some(i) => (&name_tag[..slash + i], Some(&name_tag[slash + i + 1..])),
        None => (name_tag, None),
    };
    let tag_ok = |t: &str| {
        !t.is_empty()
            && t.len() <= 128
            && !t.starts_with(['.', '-'])
            && t.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
    };
    if tag.is_some_and(|t| !tag_ok(t)) {
        return false;
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    if parts.len() > 1 && (parts[0].contains(['.', ':']) || parts[0] == "localhost") {
        let host = parts.remove(0);
        if host.is_empty() || !host.chars().all(|c| c.is_ascii_alphanumeric() || "-.:".contains(c)) {
            return false;
        }
    }
    let edge = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let component_ok = |p: &str| {
        !p.is_empty()
            && p.starts_with(edge)
            && p.ends_with(edge)
            && p.chars().all(|c| edge(c) || "._-".contains(c))
            && !p.contains("..")
    };
    parts.iter().all(|p| component_ok(p))
}

/// Builds the pod kubectl would send.
fn build_pod(args: &Args, name: &str, extra: &[String]) -> Result<Value, String> {
    let image = args.get("image").unwrap_or("");
    let restart = match args.get("restart") {
        None => "Always",
        Some(p @ ("Always" | "OnFailure" | "Never")) => p,
        Some(other) => {
            return Err(format!("error: invalid restart policy: {other}\nSee 'kubectl run -h' for help and examples"));
        }
    };
    if let Some(p) = args.get("image-pull-policy") {
        if !matches!(p, "Always" | "IfNotPresent" | "Never") {
            return Err(format!("error: invalid image pull policy: {p}"));
        }
    }
    let labels = match args.get("labels") {
        Some(spec) if !spec.is_empty() => parse_labels(spec)?,
        _ => {
            let mut m = Map::new();
            m.insert("run".into(), json!(name));
            m
        }
    };
    let mut container = Map::new();
    if !extra.is_empty() {
        let field = if args.has("command") { "command" } else { "args" };
        container.insert(field.into(), json!(extra));
    }
    let envs = args.all("env").into_iter().map(parse_env).collect::<Result<Vec<_>, _>>()?;
    if !envs.is_empty() {
        container.insert("env".into(), Value::Array(envs));
    }
    container.insert("image".into(), json!(image));
    if let Some(p) = args.get("image-pull-policy") {
        container.insert("imagePullPolicy".into(), json!(p));
    }
    container.insert("name".into(), json!(name));
    if let Some(port) = args.get("port").filter(|p| !p.is_empty()) {
        let Ok(port) = port.parse::<i32>() else {
            return Err(format!("error: strconv.Atoi: parsing \"{port}\": invalid syntax"));
        };
        container.insert("ports".into(), json!([{"containerPort": port}]));
    }
    container.insert("resources".into(), json!({}));
    if args.has("stdin") {
        container.insert("stdin".into(), json!(true));
        container.insert("stdinOnce".into(), json!(true));
    }
    if args.has("tty") {
        container.insert("tty".into(), json!(true));
    }
    if args.has("privileged") {
        container.insert("securityContext".into(), json!({"privileged": true}));
    }
    let mut metadata = Map::new();
    let annotations = args.all("annotations");
    if !annotations.is_empty() {
        let mut m = Map::new();
        for a in annotations {
            let Some((k, v)) = a.split_once('=') else { return Err(format!("error: invalid annotation spec: {a}")) };
            m.insert(k.to_string(), json!(v));
        }
        metadata.insert("annotations".into(), Value::Object(m));
    }
    metadata.insert("labels".into(), Value::Object(labels));
    metadata.insert("name".into(), json!(name));
    Ok(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"containers": [container], "dnsPolicy": "ClusterFirst", "restartPolicy": restart},
        "status": {},
    }))
}

/// POSTs `object` (or, for a client dry run, returns it as built).
fn send(
    cluster: &mut Cluster,
    args: &Args,
    kind: Kind,
    namespace: &str,
    mut object: Value,
    dry: DryRun,
) -> Result<Value, String> {
    if dry == DryRun::Client {
        return Ok(object);
    }
    save_config(args, &mut object);
    let mut req = Request::new(Verb::Create, kind, namespace, "").managed_by("kubectl-run");
    req.body = Some(Body::Json(object));
    req.dry_run = dry == DryRun::Server;
    match cluster.request(req) {
        Ok(reply) => Ok(reply.object().map(|o| o.to_json_value()).unwrap_or(Value::Null)),
        Err(status) => Err(status.kubectl_message()),
    }
}

/// `kubectl run NAME --image=IMAGE [--restart] [--labels] [--port] [--env] [--command] -- ARGS`.
pub(super) fn run(cluster: &mut Cluster, args: &Args, words: &[String]) -> Output {
    let Some(image) = args.get("image") else {
        return Output::err("error: required flag(s) \"image\" not set");
    };
    let (before_dash, _) = split_at_dash("run", args, words);
    if before_dash.is_empty() {
        return usage_error("run", "NAME is required for run");
    }
    if image.is_empty() {
        return Output::err("error: --image is required");
    }
    if !valid_reference(image) {
        return Output::err(format!("error: Invalid image name \"{image}\": invalid reference format"));
    }
    if args.has("tty") && !args.has("stdin") {
        return usage_error("run", "-i/--stdin is required for containers with -t/--tty=true");
    }
    if args.has("expose") && args.get("port").is_none_or(str::is_empty) {
        return usage_error("run", "--port must be set when exposing a service");
    }
    if let Some(r) = args.get("restart").filter(|r| !matches!(*r, "Always" | "OnFailure" | "Never")) {
        return usage_error("run", &format!("invalid restart policy: {r}"));
    }
    let dry = match DryRun::from_args(args) {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    let attach = args.has("attach") || args.has("stdin");
    if args.has("rm") && !attach {
        return usage_error("run", "--rm should only be used for attached containers");
    }
    if attach && dry != DryRun::None {
        return Output::err(
            "error: --dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)",
        );
    }
    if let Err(e) = check_output(args) {
        return Output::err(e);
    }
    let name = args.positionals[0].clone();
    let pod = match build_pod(args, &name, &args.positionals[1..]) {
        Ok(p) => p,
        Err(e) => return Output::err(e),
    };
    let mut pod = match apply_overrides(args, pod) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let cause = change_cause("run", args);
    if let Some(c) = &cause {
        pod["metadata"]["annotations"][CHANGE_CAUSE] = json!(c);
    }
    let namespace = super::namespace_flag(args);
    if args.get("namespace").is_some() {
        pod["metadata"]["namespace"] = json!(namespace);
    }
    let labels = pod["metadata"]["labels"].clone();
    let created = match send(cluster, args, Kind::Pod, &namespace, pod, dry) {
        Ok(p) => p,
        Err(e) => return Output::err(e),
    };
    let mut out = Output::default();
    if args.get("record").is_some() {
        out.warnings.push_str(RECORD_DEPRECATED);
    }
    if args.has("expose") {
        // The Service `run --expose` makes: selecting the pod's labels, port and target alike.
        let port: i32 = args.get("port").and_then(|p| p.parse().ok()).unwrap_or(0);
        let mut svc = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name},
            "spec": {"ports": [{"port": port, "protocol": "TCP", "targetPort": port}], "selector": labels},
            "status": {"loadBalancer": {}},
        });
        if args.get("namespace").is_some() {
            svc["metadata"]["namespace"] = json!(namespace);
        }
        if let Some(c) = &cause {
            svc["metadata"]["annotations"] = json!({CHANGE_CAUSE: c});
        }
        match send(cluster, args, Kind::Service, &namespace, svc, dry) {
            Ok(svc) => {
                out.stdout.push_str(&print_object(args, Kind::Service, &svc, "created", dry));
                if args.get("output") == Some("yaml") {
                    out.stdout.push_str("---\n");
                }
            }
            Err(e) => {
                out.stderr.push_str(&(e + "\n"));
                out.code = 1;
            }
        }
    }
    if attach {
        // Attached, kubectl shows the container's output instead of `pod/NAME created`.
        let restart = created.pointer("/spec/restartPolicy").and_then(Value::as_str).unwrap_or("Always").to_string();
        let attached = attach_to(cluster, args, &namespace, &name, &restart);
        out.stdout.push_str(&attached.stdout);
        out.stderr.push_str(&attached.stderr);
        out.code = attached.code;
        out.attach = attached.attach;
        return out;
    }
    out.stdout.push_str(&print_object(args, Kind::Pod, &created, "created", dry));
    out
}

/// How long `run` waits for the pod to start (`--pod-running-timeout`).
const POD_RUNNING_TIMEOUT: Duration = Duration::seconds(60);
/// How long the sandbox waits for an attached container to exit (kubectl would wait forever).
const ATTACH_LIMIT: Duration = Duration::seconds(600);

/// Runs the cluster until `done` holds for the pod (or it is gone, or `limit` passes).
fn wait_for_pod(
    cluster: &mut Cluster,
    namespace: &str,
    name: &str,
    limit: Duration,
    done: &dyn Fn(&Pod) -> bool,
) -> Option<Pod> {
    let deadline = cluster.now() + limit;
    let mut watch = ObjectWatch::open(cluster, Kind::Pod, namespace, name).ok()?;
    let pod = loop {
        let pod = watch.current.as_deref().and_then(|o| o.as_pod().cloned());
        match &pod {
            None => break None,
            Some(p) if done(p) => break pod,
            Some(_) if cluster.now() >= deadline => break pod,
            Some(_) => {}
        }
        cluster.step_toward(deadline);
        watch.poll(cluster);
    };
    watch.close(cluster);
    pod
}

/// POSTs `pods/NAME/attach` for the pod's container (named after it): the stream the API
/// server opens through the pod's kubelet.
fn connect_attach(cluster: &mut Cluster, args: &Args, namespace: &str, name: &str) -> Result<ConnectTarget, String> {
    let options = super::attach::stream_options(name, args.has("stdin"), args.has("tty"));
    cluster.connect_stream(Subresource::Attach, namespace, name, &options).map_err(|status| status.kubectl_message())
}

/// `run -i`/`-t`/`--attach`: wait for the pod to run, then attach to its container. A shell
/// reading its input (`-it … -- sh`) opens an interactive session; any other process's
/// output is shown until it exits (or the sandbox's cap), then, with `--rm`, the pod deleted.
fn attach_to(cluster: &mut Cluster, args: &Args, namespace: &str, name: &str, restart: &str) -> Output {
    let running_or_done = |p: &Pod| p.status.phase == "Running" || p.is_terminal();
    let pod = wait_for_pod(cluster, namespace, name, POD_RUNNING_TIMEOUT, &running_or_done);
    let quiet = args.has("quiet");
    let mut out = Output::default();
    match &pod {
        None => {
            return with_rm(cluster, args, namespace, name, fail(out, format!("error: pods \"{name}\" not found"), 1));
        }
        Some(p) if !running_or_done(p) => {
            return with_rm(
                cluster,
                args,
                namespace,
                name,
                fail(out, "error: timed out waiting for the condition".into(), 1),
            );
        }
        Some(p) => {
            if let Some(shell) = interactive(p).filter(|_| args.has("stdin") && p.status.phase == "Running") {
                let stream = match connect_attach(cluster, args, namespace, name) {
                    Ok(stream) => stream,
                    Err(e) => return with_rm(cluster, args, namespace, name, fail(out, e, 1)),
                };
                if !quiet {
                    out.stderr.push_str("If you don't see a command prompt, try pressing enter.\n");
                }
                let after = Some(RunAfter { rm: args.has("rm") });
                out.attach = Some(Box::new(Attach::main(p, stream, &shell, after, args.has("tty"), quiet)));
                return out;
            }
        }
    }
    let stream = match connect_attach(cluster, args, namespace, name) {
        Ok(stream) => stream,
        Err(e) => return with_rm(cluster, args, namespace, name, fail(out, e, 1)),
    };
    let first = pod.as_ref().map(|p| container_id(p, name)).unwrap_or_default();
    // The attached stream ends with the process: the pod's end (Never, OnFailure) or, for a
    // container that restarts, the end of the instance attached to.
    let ended = |p: &Pod| match restart {
        "Always" => container_id(p, name) != first || !running(p, name),
        _ => p.is_terminal(),
    };
    let pod = wait_for_pod(cluster, namespace, name, ATTACH_LIMIT, &ended);
    let restarted = pod.as_ref().is_some_and(|p| container_id(p, name) != first);
    let lines = cluster.stream_logs(&stream, restarted).unwrap_or_default();
    for (_, line) in lines {
        out.stdout.push_str(&line);
        out.stdout.push('\n');
    }
    if pod.as_ref().is_some_and(|p| !ended(p)) {
        out = fail(
            out,
            format!(
                "kubeloop: stopped following pod/{name} after {ATTACH_LIMIT} of virtual time (as Ctrl-C would); it is still running (see kubectl logs {name})"
            ),
            1,
        );
        return with_rm(cluster, args, namespace, name, out);
    }
    let end = after_attach(cluster, namespace, name, restart, args.has("rm"), quiet);
    out.stdout.push_str(&end.stdout);
    out.stderr.push_str(&end.stderr);
    out.code = end.code;
    out
}

fn fail(mut out: Output, message: String, code: i32) -> Output {
    out.stderr.push_str(&(message + "\n"));
    out.code = code;
    out
}

/// The shell a pod's (first) container runs reading its input, if it does.
pub(super) fn interactive(pod: &Pod) -> Option<String> {
    let c = pod.spec.containers.first()?;
    if !c.stdin {
        return None;
    }
    let image = crate::kubelet::images::parse_reference(&c.image);
    let behaviour = crate::kubelet::images::lookup(&image).ok()?.behaviour;
    crate::kubelet::script::interactive_shell(behaviour, &image.repository, &c.command, &c.args)
}

fn running(pod: &Pod, container: &str) -> bool {
    pod.status.container_statuses.iter().any(|s| s.name == container && s.state.running.is_some())
}

/// Deletes the pod for `--rm` after a failed attach, keeping the failure last.
fn with_rm(cluster: &mut Cluster, args: &Args, namespace: &str, name: &str, out: Output) -> Output {
    if !args.has("rm") {
        return out;
    }
    let deleted = delete_pod(cluster, namespace, name, args.has("quiet"));
    Output { stdout: out.stdout + &deleted, ..out }
}

fn delete_pod(cluster: &mut Cluster, namespace: &str, name: &str, quiet: bool) -> String {
    let mut req = Request::delete(Kind::Pod, namespace, name);
    req.grace_period_seconds = None;
    if cluster.request(req).is_ok() {
        let _ = wait_for_pod(cluster, namespace, name, Duration::seconds(120), &|_| false);
        if !quiet {
            return format!("pod \"{name}\" deleted\n");
        }
    }
    String::new()
}

/// What `run` does once its attached process has ended: with restart policy Never or
/// OnFailure, wait for the pod's end to learn the exit code; with `--rm`, delete the pod; a
/// failed pod is an error carrying the container's exit code.
pub(super) fn after_attach(
    cluster: &mut Cluster,
    namespace: &str,
    name: &str,
    restart: &str,
    rm: bool,
    quiet: bool,
) -> Output {
    let mut out = Output::default();
    let wait_for_exit = matches!(restart, "Never" | "OnFailure");
    let exited = |p: &Pod| if restart == "OnFailure" { p.status.phase == "Succeeded" } else { p.is_terminal() };
    let pod = if wait_for_exit { wait_for_pod(cluster, namespace, name, ATTACH_LIMIT, &exited) } else { None };
    let mut failure = None;
    if let Some(p) = pod.as_ref().filter(|p| exited(p) && p.status.phase == "Failed") {
        let state = p.status.container_statuses.first().and_then(|s| s.state.terminated.clone());
        let code = state.as_ref().map_or(1, |t| t.exit_code);
        let reason = state.map(|t| t.reason).unwrap_or_default();
        failure = Some((format!("error: pod {namespace}/{name} terminated ({reason})"), code.max(1)));
    }
    if rm {
        out.stdout.push_str(&delete_pod(cluster, namespace, name, quiet));
    }
    if let Some((message, code)) = failure {
        out = fail(out, message, code);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Args {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        Args::parse("run", &words).unwrap()
    }

    #[test]
    fn a_run_pod_is_labelled_run_name_and_its_container_is_named_after_the_pod() {
        let pod = build_pod(&args("web --image=nginx"), "web", &[]).unwrap();
        assert_eq!(pod["metadata"]["labels"], json!({"run": "web"}));
        assert_eq!(pod["spec"]["containers"][0]["name"], "web");
        assert_eq!(pod["spec"]["restartPolicy"], "Always");
        assert_eq!(pod["spec"]["dnsPolicy"], "ClusterFirst");
    }

    #[test]
    fn words_after_the_dash_are_args_unless_command_is_given() {
        let extra = vec!["sleep".to_string(), "60".to_string()];
        let pod = build_pod(&args("b --image=busybox"), "b", &extra).unwrap();
        assert_eq!(pod["spec"]["containers"][0]["args"], json!(["sleep", "60"]));
        let pod = build_pod(&args("b --image=busybox --command"), "b", &extra).unwrap();
        assert_eq!(pod["spec"]["containers"][0]["command"], json!(["sleep", "60"]));
    }

    #[test]
    fn image_references_follow_the_registry_grammar() {
        for ok in ["nginx", "nginx:1.25", "registry.k8s.io/pause:3.10", "localhost:5000/app", "busybox:Latest"] {
            assert!(valid_reference(ok), "{ok}");
        }
        for bad in ["Nginx", "nginx:", ":1.0", "a//b", "nginx:1.25:x", "-x"] {
            assert!(!valid_reference(bad), "{bad}");
        }
    }

    #[test]
    fn labels_replace_the_run_label_and_bad_specs_are_refused() {
        let pod = build_pod(&args("w --image=nginx --labels=app=web,tier=front"), "w", &[]).unwrap();
        assert_eq!(pod["metadata"]["labels"], json!({"app": "web", "tier": "front"}));
        assert_eq!(
            build_pod(&args("w --image=nginx --labels=app"), "w", &[]).unwrap_err(),
            "error: invalid label spec: app"
        );
        assert_eq!(build_pod(&args("w --image=nginx --env=X"), "w", &[]).unwrap_err(), "error: invalid env: X");
        assert_eq!(
            build_pod(&args("w --image=nginx --restart=Sometimes"), "w", &[]).unwrap_err(),
            "error: invalid restart policy: Sometimes\nSee 'kubectl run -h' for help and examples"
        );
    }
}
