//! `kubectl create deployment|namespace|configmap|secret generic|serviceaccount NAME`: the
//! objects kubectl builds from flags (as its generators do, field for field), POSTed to the
//! API server or, with `--dry-run=client`, only printed. Also the printing and dry-run
//! helpers the other imperative verbs share.

use super::args::Args;
use super::{Output, to_json, to_yaml};
use crate::api::{Kind, Object};
use crate::apiserver::{Body, Reply, Request, Verb};
use crate::cluster::Cluster;
use crate::util::json_macro::json;
use serde_json::{Map, Value};
use std::sync::Arc;

/// `--dry-run`: none, client (print only) or server (the API server runs everything but storage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DryRun {
    None,
    Client,
    Server,
}

impl DryRun {
    pub(super) fn from_args(args: &Args) -> Result<DryRun, String> {
        match args.get("dry-run") {
            None | Some("none") | Some("false") => Ok(DryRun::None),
            Some("client") | Some("true") => Ok(DryRun::Client),
            Some("server") => Ok(DryRun::Server),
            Some(other) => {
                Err(format!("error: Invalid dry-run value ({other}). Must be \"none\", \"server\", or \"client\"."))
            }
        }
    }

    /// What kubectl appends to its confirmation line.
    pub(super) fn suffix(self) -> &'static str {
        match self {
            DryRun::None => "",
            DryRun::Client => " (dry run)",
            DryRun::Server => " (server dry run)",
        }
    }
}

/// The resource builder's complaint when no resource is named.
pub(super) const NO_RESOURCES: &str = "error: You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'";

pub(super) const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";

/// With `--record`, the command line kubectl stores in `kubernetes.io/change-cause`:
/// `kubectl` and the arguments, then each flag as `--name=value`.
pub(super) fn change_cause(verb: &str, args: &Args) -> Option<String> {
    if !args.has("record") {
        return None;
    }
    let mut line = format!("kubectl {verb}");
    for p in &args.positionals {
        line.push(' ');
        line.push_str(p);
    }
    for (name, value) in args.flag_values() {
        line.push_str(&format!(" --{name}={value}"));
    }
    Some(line)
}

/// `--save-config`: the object as sent, remembered for a later `kubectl apply`.
pub(super) fn save_config(args: &Args, object: &mut Value) {
    if args.has("save-config") {
        let text = serde_json::to_string(&*object).unwrap_or_default() + "\n";
        super::set_annotation(object, super::LAST_APPLIED, &text);
    }
}

/// What kubectl prints first when `--record` is given.
pub(super) const RECORD_DEPRECATED: &str =
    "Flag --record has been deprecated, --record will be removed in the future\n";

/// `--overrides`: inline JSON merged (strategically) over the generated object.
pub(super) fn apply_overrides(args: &Args, object: Value) -> Result<Value, Output> {
    use crate::apiserver::patch::PatchType;
    let Some(text) = args.get("overrides") else { return Ok(object) };
    // `--override-type` is a JSON merge patch unless told otherwise: a list in the override
    // (such as `containers`) replaces the generated one.
    let kind = match args.get("override-type").unwrap_or("merge") {
        "merge" => PatchType::Merge,
        "strategic" => PatchType::Strategic,
        "json" => PatchType::Json,
        other => {
            return Err(Output::err(format!(
                "error: --override-type must be one of (json, merge, strategic), not \"{other}\""
            )));
        }
    };
    let patch: Value = serde_json::from_str(text).map_err(|e| Output::err(format!("error: {e}")))?;
    crate::apiserver::patch::apply(&object, kind, &patch).map_err(|e| Output::err(format!("error: {e}")))
}

/// The objects a command names, as kubectl's resource builder finds them: `TYPE NAME...` and
/// `TYPE/NAME` by GET, a bare `TYPE` with `--all`, `-l` or `--field-selector` by LIST (across
/// namespaces with `-A`). Objects that cannot be read are reported in `out`.
pub(super) fn fetch_objects(
    cluster: &mut Cluster,
    args: &Args,
    resources: &[String],
    command: &str,
    out: &mut Output,
) -> Result<Vec<Arc<Object>>, Output> {
    let targets = super::resolve_targets(resources)
        .map_err(|e| Output::err(e.replace("kubectl get -h", &format!("kubectl {command} -h"))))?;
    let namespace = super::namespace_flag(args);
    let mut objects = Vec::new();
    for (kind, names) in targets {
        let ns = if !kind.info().namespaced || args.has("all-namespaces") { "" } else { namespace.as_str() };
        if names.is_empty() {
            if !args.has("all") && args.get("selector").is_none() && args.get("field-selector").is_none() {
                return Err(Output::err("error: resource(s) were provided, but no name was specified"));
            }
            let req = super::list_request(kind, ns, args).map_err(Output::err)?;
            match cluster.request(req) {
                Ok(Reply::List { items, .. }) => objects.extend(items),
                Ok(_) => {}
                Err(status) => return Err(Output::err(status.kubectl_message())),
            }
            continue;
        }
        for name in names {
            match cluster.request(Request::get(kind, ns, &name)) {
                Ok(reply) => objects.extend(reply.object()),
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                }
            }
        }
    }
    Ok(objects)
}

/// How a verb that may write starts: its `--dry-run` and `-o` checked, and its output begun
/// with kubectl's `--record` deprecation warning when that flag is given.
pub(super) fn begin_write(args: &Args) -> Result<(DryRun, Output), Output> {
    let dry = DryRun::from_args(args).map_err(Output::err)?;
    check_output(args).map_err(Output::err)?;
    let mut out = Output::default();
    if args.get("record").is_some() {
        out.warnings.push_str(RECORD_DEPRECATED);
    }
    Ok((dry, out))
}

/// Rejects an `-o` the imperative verbs cannot print.
pub(super) fn check_output(args: &Args) -> Result<(), String> {
    match args.get("output") {
        None | Some("yaml") | Some("json") | Some("name") => Ok(()),
        Some(other) => Err(format!(
            "error: unable to match a printer suitable for the output format \"{other}\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml"
        )),
    }
}

/// Prints an object the way kubectl's printer flags do: `TYPE/NAME operation (dry run)` by
/// default, or the object itself with `-o yaml|json|name`.
pub(super) fn print_object(args: &Args, kind: Kind, object: &Value, operation: &str, dry: DryRun) -> String {
    let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
    let mut shown = object.clone();
    super::hide_managed_fields(&mut shown, args);
    match args.get("output") {
        Some("yaml") => to_yaml(&shown),
        Some("json") => to_json(&shown),
        Some("name") => format!("{}/{name}\n", kind.qualified_singular()),
        _ => format!("{}/{name} {operation}{}\n", kind.qualified_singular(), dry.suffix()),
    }
}

/// Splits positionals at `--`: those before it (names) and those after (a command).
pub(super) fn split_at_dash(verb: &str, args: &Args, words: &[String]) -> (Vec<String>, Vec<String>) {
    let before = match words.iter().position(|w| w == "--") {
        Some(i) => Args::parse(verb, &words[..i]).map(|a| a.positionals.len()).unwrap_or(0),
        None => args.positionals.len(),
    };
    let before = before.min(args.positionals.len());
    (args.positionals[..before].to_vec(), args.positionals[before..].to_vec())
}

/// kubectl's usage errors: the message, then where to find help.
pub(super) fn usage_error(command: &str, message: &str) -> Output {
    Output::err(format!("error: {message}\nSee 'kubectl {command} -h' for help and examples"))
}

/// `--replicas=abc`: how cobra reports a flag value that is not a number (`shown` is the
/// flag as cobra names it, `-r, --replicas`).
pub(super) fn int_flag(args: &Args, flag: &str, shown: &str, command: &str) -> Result<Option<i32>, Output> {
    match args.get(flag) {
        None => Ok(None),
        Some(text) => text.parse::<i32>().map(Some).map_err(|_| {
            Output::err(format!(
                "Error: invalid argument \"{text}\" for \"{shown}\" flag: strconv.ParseInt: parsing \"{text}\": invalid syntax\nSee 'kubectl {command} --help' for usage."
            ))
        }),
    }
}

/// Whether `create` names one of the generators here (otherwise it is `create -f`).
pub(super) fn is_generator(args: &Args) -> bool {
    args.all("filename").is_empty()
        && args.positionals.first().is_some_and(|s| {
            matches!(
                s.as_str(),
                "deployment"
                    | "deploy"
                    | "namespace"
                    | "ns"
                    | "configmap"
                    | "cm"
                    | "secret"
                    | "serviceaccount"
                    | "sa"
                    | "job"
                    | "cronjob"
                    | "cj"
                    | "service"
                    | "svc"
                    | "quota"
                    | "resourcequota"
                    | "role"
                    | "clusterrole"
                    | "rolebinding"
                    | "clusterrolebinding"
                    | "poddisruptionbudget"
                    | "pdb"
                    | "priorityclass"
                    | "pc"
                    | "ingress"
                    | "ing"
            )
        })
}

/// `kubectl create SUBCOMMAND NAME ...`.
pub(super) fn create(cluster: &mut Cluster, args: &Args, words: &[String]) -> Output {
    let (names, command) = split_at_dash("create", args, words);
    let sub = names.first().cloned().unwrap_or_default();
    let (path, kind) = match sub.as_str() {
        "deployment" | "deploy" => ("create deployment", Kind::Deployment),
        "namespace" | "ns" => ("create namespace", Kind::Namespace),
        "configmap" | "cm" => ("create configmap", Kind::ConfigMap),
        "serviceaccount" | "sa" => ("create serviceaccount", Kind::ServiceAccount),
        "job" => ("create job", Kind::Job),
        "cronjob" | "cj" => ("create cronjob", Kind::CronJob),
        "quota" | "resourcequota" => ("create quota", Kind::ResourceQuota),
        "role" => ("create role", Kind::Role),
        "clusterrole" => ("create clusterrole", Kind::ClusterRole),
        "rolebinding" => ("create rolebinding", Kind::RoleBinding),
        "clusterrolebinding" => ("create clusterrolebinding", Kind::ClusterRoleBinding),
        "poddisruptionbudget" | "pdb" => ("create poddisruptionbudget", Kind::PodDisruptionBudget),
        "priorityclass" | "pc" => ("create priorityclass", Kind::PriorityClass),
        "ingress" | "ing" => ("create ingress", Kind::Ingress),
        "service" | "svc" => match names.get(1).map(String::as_str) {
            Some("clusterip") => ("create service clusterip", Kind::Service),
            Some("nodeport") => ("create service nodeport", Kind::Service),
            Some("loadbalancer") => ("create service loadbalancer", Kind::Service),
            Some("externalname") => ("create service externalname", Kind::Service),
            Some(_) => {
                return usage_error("create service", &format!("unknown command \"{}\"", names[1..].join(" ")));
            }
            None => return Output::ok(SERVICE_HELP.into()),
        },
        _ => match names.get(1).map(String::as_str) {
            Some("generic") => ("create secret generic", Kind::Secret),
            Some(other @ ("tls" | "docker-registry")) => {
                return Output::err(format!("error: kubectl create secret {other} is not supported in this sandbox"));
            }
            _ => {
                return Output::ok(
                    "Create a secret with specified type.\n\n A docker-registry type secret is for accessing a container registry.\n\n A generic type secret indicate an Opaque secret type.\n\n A tls type secret holds TLS certificate and its associated key.\n\nAvailable Commands:\n  docker-registry   Create a secret for use with a Docker registry\n  generic           Create a secret from a local file, directory, or literal value\n  tls               Create a TLS secret\n\nUsage:\n  kubectl create secret (docker-registry | generic | tls) [options]\n\nUse \"kubectl create secret <command> --help\" for more information about a given command.\nUse \"kubectl options\" for a list of global command-line options (applies to all commands).\n".into(),
                );
            }
        },
    };
    if kind == Kind::Deployment && args.all("image").is_empty() {
        return Output::err("error: required flag(s) \"image\" not set");
    }
    if path == "create service externalname" && args.get("external-name").is_none() {
        return Output::err("error: required flag(s) \"external-name\" not set");
    }
    let skip = if matches!(kind, Kind::Secret | Kind::Service) { 2 } else { 1 };
    let names = &names[skip.min(names.len())..];
    if names.len() != 1 {
        return usage_error(path, &format!("exactly one NAME is required, got {}", names.len()));
    }
    let name = names[0].clone();
    let dry = match DryRun::from_args(args) {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    if let Err(e) = check_output(args) {
        return Output::err(e);
    }
    let built = match kind {
        Kind::Deployment => deployment(args, &name, &command, path),
        Kind::Namespace => {
            Ok(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "spec": {}, "status": {}}))
        }
        Kind::ConfigMap => config_map(args, &name),
        Kind::Secret => secret(args, &name),
        Kind::Job => job(cluster, args, &name, &command),
        Kind::CronJob => cron_job(args, &name, &command),
        Kind::Service => service(args, &name, path),
        Kind::ResourceQuota => quota(args, &name),
        Kind::Role | Kind::ClusterRole => super::create_rbac::role(args, &name, kind),
        Kind::RoleBinding | Kind::ClusterRoleBinding => super::create_rbac::binding(args, &name, kind),
        Kind::PodDisruptionBudget => super::create_policy::pdb(args, &name),
        Kind::PriorityClass => super::create_policy::priority_class(args, &name),
        Kind::Ingress => super::create_ingress::ingress(args, &name),
        _ => Ok(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})),
    };
    let mut object = match built {
        Ok(o) => o,
        Err(e) => return e,
    };
    let namespace = super::namespace_flag(args);
    // Like kubectl, name the namespace in the object only when it was given explicitly.
    if kind.info().namespaced && args.get("namespace").is_some() {
        object["metadata"]["namespace"] = json!(namespace);
    }
    if dry == DryRun::Client {
        return Output::ok(print_object(args, kind, &object, "created", dry));
    }
    save_config(args, &mut object);
    let mut req = Request::new(Verb::Create, kind, &namespace, "").managed_by("kubectl-create");
    req.body = Some(Body::Json(object));
    req.dry_run = dry == DryRun::Server;
    match cluster.request(req) {
        Ok(reply) => {
            let created = reply.object().map(|o| o.to_json_value()).unwrap_or(Value::Null);
            Output::ok(print_object(args, kind, &created, "created", dry))
        }
        // create namespace returns the server's error as it is; the others wrap it.
        Err(status)
            if matches!(kind, Kind::Namespace | Kind::ResourceQuota)
                || kind.info().group == "rbac.authorization.k8s.io" =>
        {
            Output::err(status.kubectl_message())
        }
        Err(status) => {
            let what = match kind {
                Kind::Deployment => "deployment: ".to_string(),
                Kind::ConfigMap => "configmap: ".to_string(),
                Kind::Secret => "secret ".to_string(),
                Kind::Job => "job: ".to_string(),
                Kind::CronJob => "cronjob: ".to_string(),
                Kind::Service => format!("{} service: ", object_type(path)),
                Kind::PodDisruptionBudget => "poddisruptionbudgets: ".to_string(),
                Kind::PriorityClass => "priorityclass: ".to_string(),
                _ => "serviceaccount: ".to_string(),
            };
            Output::err(format!("error: failed to create {what}{}", status.message))
        }
    }
}

const SERVICE_HELP: &str = "Create a service using a specified subcommand.\n\nAliases:\nservice, svc\n\nAvailable Commands:\n  clusterip      Create a ClusterIP service\n  externalname   Create an ExternalName service\n  loadbalancer   Create a LoadBalancer service\n  nodeport       Create a NodePort service\n\nUsage:\n  kubectl create service [flags] [options]\n\nUse \"kubectl create service <command> --help\" for more information about a given command.\nUse \"kubectl options\" for a list of global command-line options (applies to all commands).\n";

/// The Service type a `create service SUBCOMMAND` makes.
fn object_type(path: &str) -> &'static str {
    match path.rsplit(' ').next() {
        Some("nodeport") => "NodePort",
        Some("loadbalancer") => "LoadBalancer",
        Some("externalname") => "ExternalName",
        _ => "ClusterIP",
    }
}

/// `create job NAME --image=IMAGE [-- COMMAND]`: a Job whose pod never restarts.
fn job(cluster: &mut Cluster, args: &Args, name: &str, command: &[String]) -> Result<Value, Output> {
    let image = args.get("image").unwrap_or("");
    let from = args.get("from");
    if image.is_empty() == from.is_none() {
        return Err(Output::err("error: either --image or --from must be specified"));
    }
    if let Some(from) = from {
        return job_from_cron_job(cluster, args, name, from);
    }
    let container = job_container(image, name, command);
    Ok(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {"metadata": {}, "spec": {"containers": [container], "restartPolicy": "Never"}}},
        "status": {},
    }))
}

/// The one container `create job` and `create cronjob` put in a template, named after the
/// object, with `-- COMMAND` as its command.
fn job_container(image: &str, name: &str, command: &[String]) -> Map<String, Value> {
    let mut container = Map::new();
    if !command.is_empty() {
        container.insert("command".into(), json!(command));
    }
    container.insert("image".into(), json!(image));
    container.insert("name".into(), json!(name));
    container.insert("resources".into(), json!({}));
    container
}

/// `create job NAME --from=cronjob/X`: a Job from the CronJob's template, now, marked as
/// started by hand and owned by the CronJob.
fn job_from_cron_job(cluster: &mut Cluster, args: &Args, name: &str, from: &str) -> Result<Value, Output> {
    let (type_, source) = from.split_once('/').unwrap_or((from, ""));
    let kind = Kind::from_resource_arg(type_)
        .ok_or_else(|| Output::err(format!("error: the server doesn't have a resource type \"{type_}\"")))?;
    if kind != Kind::CronJob {
        return Err(Output::err(format!(
            "error: from must be an existing cronjob: unknown object type {}",
            kind.info().kind
        )));
    }
    let namespace = super::namespace_flag(args);
    let object = match cluster.request(Request::get(Kind::CronJob, &namespace, source)) {
        Ok(reply) => reply.object(),
        Err(status) => return Err(Output::err(status.kubectl_message())),
    };
    let Some(Object::CronJob(cj)) = object.as_deref() else {
        return Err(Output::err("error: from must be an existing cronjob"));
    };
    let template = &cj.spec.job_template;
    let mut annotations = template.metadata.annotations.clone();
    annotations.insert("cronjob.kubernetes.io/instantiate".into(), "manual".into());
    Ok(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "annotations": annotations,
            "labels": template.metadata.labels,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": cj.metadata.name,
                "uid": cj.metadata.uid, "controller": true}],
        },
        "spec": template.spec,
    }))
}

/// `create cronjob NAME --image=IMAGE --schedule='*/1 * * * *' [--restart=OnFailure] [-- COMMAND]`.
fn cron_job(args: &Args, name: &str, command: &[String]) -> Result<Value, Output> {
    let (Some(image), Some(schedule)) = (args.get("image"), args.get("schedule")) else {
        let missing: Vec<&str> = ["image", "schedule"].into_iter().filter(|f| args.get(f).is_none()).collect();
        return Err(Output::err(format!("error: required flag(s) \"{}\" not set", missing.join("\", \""))));
    };
    let restart = args.get("restart").unwrap_or("OnFailure");
    if !["OnFailure", "Never"].contains(&restart) {
        return Err(Output::err(format!("error: invalid restart policy: {restart}")));
    }
    let container = job_container(image, name, command);
    Ok(json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "jobTemplate": {"metadata": {"name": name}, "spec": {"template": {"metadata": {},
                "spec": {"containers": [container], "restartPolicy": restart}}}},
            "schedule": schedule,
        },
        "status": {},
    }))
}

/// `create service clusterip|nodeport|loadbalancer|externalname NAME --tcp=PORT[:TARGET]`:
/// selector and labels `app=NAME`, one port per `--tcp`, named after it.
fn service(args: &Args, name: &str, path: &str) -> Result<Value, Output> {
    let type_ = object_type(path);
    let cluster_ip = args.get("clusterip");
    let specs: Vec<&str> = args.all("tcp").into_iter().flat_map(|v| v.split(',')).filter(|s| !s.is_empty()).collect();
    if specs.is_empty() && type_ != "ExternalName" && cluster_ip != Some("None") {
        return Err(Output::err("error: at least one tcp port specifier must be provided"));
    }
    let node_port = int_flag(args, "node-port", "--node-port", path)?.filter(|p| *p != 0);
    let mut ports = Vec::new();
    for spec in specs {
        let (port_text, target_text) = spec.split_once(':').unwrap_or((spec, spec));
        let port: u16 = port_text.parse().map_err(|e: std::num::ParseIntError| {
            let why = if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) {
                "value out of range"
            } else {
                "invalid syntax"
            };
            Output::err(format!("error: strconv.ParseUint: parsing \"{port_text}\": {why}"))
        })?;
        let target = target_text.parse::<i64>().map(|n| json!(n)).unwrap_or_else(|_| json!(target_text));
        let mut p = Map::new();
        p.insert("name".into(), json!(spec.replace(':', "-")));
        if let Some(np) = node_port {
            p.insert("nodePort".into(), json!(np));
        }
        p.insert("port".into(), json!(port));
        p.insert("protocol".into(), json!("TCP"));
        p.insert("targetPort".into(), target);
        ports.push(Value::Object(p));
    }
    let mut spec = Map::new();
    if let Some(ip) = cluster_ip {
        spec.insert("clusterIP".into(), json!(ip));
    }
    if let Some(ext) = args.get("external-name") {
        spec.insert("externalName".into(), json!(ext));
    }
    if !ports.is_empty() {
        spec.insert("ports".into(), Value::Array(ports));
    }
    spec.insert("selector".into(), json!({"app": name}));
    spec.insert("type".into(), json!(type_));
    Ok(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"labels": {"app": name}, "name": name},
        "spec": spec,
        "status": {"loadBalancer": {}},
    }))
}

/// The container name kubectl derives from an image: the last path element without its tag
/// or digest; a name with `_` or `.` gets dashes and a random suffix.
pub(super) fn container_name(image: &str, salt: u64) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    let mut name = last.split(':').next().unwrap_or(last);
    name = name.split('@').next().unwrap_or(name);
    if name.contains(['_', '.']) {
        let mut rng = crate::sim::Rng::new(salt);
        format!("{}-{}", name.replace(['_', '.'], "-"), rng.string(b"bcdfghjklmnpqrstvwxz2456789", 5))
    } else {
        name.to_string()
    }
}

fn deployment(args: &Args, name: &str, command: &[String], path: &str) -> Result<Value, Output> {
    let images = args.all("image");
    let replicas = int_flag(args, "replicas", "-r, --replicas", path)?.unwrap_or(1);
    let port = int_flag(args, "port", "--port", path)?;
    if images.len() > 1 && !command.is_empty() {
        return Err(Output::err("error: cannot specify multiple --image options and command"));
    }
    let salt = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let mut containers = Vec::new();
    // `--image` is a string slice: each value may hold several images separated by commas.
    for (i, image) in images.iter().flat_map(|v| v.split(',')).enumerate() {
        let mut c = Map::new();
        if !command.is_empty() {
            c.insert("command".into(), json!(command));
        }
        c.insert("image".into(), json!(image));
        c.insert("name".into(), json!(container_name(image, salt.wrapping_add(i as u64))));
        if i == 0 {
            if let Some(p) = port.filter(|p| *p >= 0) {
                c.insert("ports".into(), json!([{"containerPort": p}]));
            }
        }
        c.insert("resources".into(), json!({}));
        containers.push(Value::Object(c));
    }
    let labels = json!({"app": name});
    Ok(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": labels, "name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "strategy": {},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}},
        },
        "status": {},
    }))
}

/// `--from-literal=key=value`: split at the first `=`; a leading `=` or none is an error.
fn literal(source: &str) -> Result<(String, String), Output> {
    match source.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(Output::err(format!("error: invalid literal source {source}, expected key=value"))),
    }
}

/// A ConfigMap or Secret key: alphanumerics, `-`, `_` and `.`, at most 253 characters.
fn key_errors(key: &str) -> Option<String> {
    if key.is_empty() || key.len() > 253 || !key.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        Some("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".into())
    } else if key == "." || key == ".." || key.starts_with("..") {
        Some("must not be '.' or '..'".into())
    } else {
        None
    }
}

fn check_sources(args: &Args) -> Result<(), Output> {
    if !args.all("from-file").is_empty() || !args.all("from-env-file").is_empty() {
        return Err(Output::err(
            "error: --from-file and --from-env-file are not supported in this sandbox; use --from-literal",
        ));
    }
    Ok(())
}

/// `create quota NAME --hard=pods=2,requests.cpu=1 [--scopes=...]`.
fn quota(args: &Args, name: &str) -> Result<Value, Output> {
    let mut hard = Map::new();
    for pair in args.all("hard").iter().flat_map(|v| v.split(',')).filter(|p| !p.is_empty()) {
        let Some((resource, value)) = pair.split_once('=') else {
            return Err(Output::err(format!("error: invalid resource specification: {pair}")));
        };
        if crate::api::Quantity::parse(value).is_err() {
            return Err(Output::err(format!("error: {}", crate::api::quantity::QUANTITY_ERROR)));
        }
        hard.insert(resource.trim().to_string(), json!(value));
    }
    let mut spec = json!({"hard": hard});
    let scopes: Vec<&str> = args.all("scopes").iter().flat_map(|v| v.split(',')).filter(|s| !s.is_empty()).collect();
    if !scopes.is_empty() {
        spec["scopes"] = json!(scopes);
    }
    Ok(json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": spec, "status": {}}))
}

fn config_map(args: &Args, name: &str) -> Result<Value, Output> {
    check_sources(args)?;
    let mut data = Map::new();
    for source in args.all("from-literal") {
        let (key, value) = literal(source)?;
        if let Some(e) = key_errors(&key) {
            return Err(Output::err(format!("error: \"{key}\" is not a valid key name for a ConfigMap: {e}")));
        }
        if data.contains_key(&key) {
            return Err(Output::err(format!(
                "error: cannot add key \"{key}\", another key by that name already exists in Data for ConfigMap \"{name}\""
            )));
        }
        data.insert(key, json!(value));
    }
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    if !data.is_empty() {
        cm["data"] = Value::Object(data);
    }
    Ok(cm)
}

fn secret(args: &Args, name: &str) -> Result<Value, Output> {
    check_sources(args)?;
    let mut data = Map::new();
    for source in args.all("from-literal") {
        let (key, value) = literal(source)?;
        if let Some(e) = key_errors(&key) {
            return Err(Output::err(format!("error: \"{key}\" is not valid key name for a Secret {e}")));
        }
        if data.contains_key(&key) {
            return Err(Output::err(format!("error: cannot add key {key}, another key by that name already exists")));
        }
        data.insert(key, json!(crate::util::base64::encode(value.as_bytes())));
    }
    let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}});
    if !data.is_empty() {
        secret["data"] = Value::Object(data);
    }
    if let Some(t) = args.get("type") {
        secret["type"] = json!(t);
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_names_drop_the_registry_path_tag_and_digest() {
        assert_eq!(container_name("nginx:1.25", 0), "nginx");
        assert_eq!(container_name("registry.k8s.io/pause:3.10", 0), "pause");
        assert_eq!(container_name("busybox@sha256:abc", 0), "busybox");
        assert_eq!(container_name("localhost:5000/team/app", 0), "app");
    }

    #[test]
    fn container_names_with_dots_or_underscores_get_dashes_and_a_random_suffix() {
        let name = container_name("my_app.v2:1", 7);
        assert!(name.starts_with("my-app-v2-"), "{name}");
        assert_eq!(name.len(), "my-app-v2-".len() + 5);
    }

    #[test]
    fn record_stores_the_command_line_with_flags_spelled_out() {
        let words: Vec<String> =
            "image deployment/web nginx=nginx:1.26 --record".split_whitespace().map(String::from).collect();
        let args = Args::parse("set", &words).unwrap();
        assert_eq!(
            change_cause("set", &args).as_deref(),
            Some("kubectl set image deployment/web nginx=nginx:1.26 --record=true")
        );
        assert_eq!(change_cause("set", &Args::parse("set", &words[..3]).unwrap()), None);
    }

    #[test]
    fn overrides_merge_over_the_generated_object() {
        let words: Vec<String> = vec![r#"--overrides={"spec":{"nodeName":"w"}}"#.into()];
        let args = Args::parse("run", &words).unwrap();
        let merged = apply_overrides(&args, json!({"spec": {"containers": []}})).unwrap();
        assert_eq!(merged, json!({"spec": {"containers": [], "nodeName": "w"}}));
    }

    #[test]
    fn service_ports_are_named_after_their_tcp_spec_and_default_the_target_to_the_port() {
        let words: Vec<String> = ["--tcp=80:8080,443", "--node-port=30080"].iter().map(|s| s.to_string()).collect();
        let args = Args::parse("create", &words).unwrap();
        let svc = service(&args, "web", "create service nodeport").unwrap();
        assert_eq!(
            svc["spec"]["ports"],
            json!([
                {"name": "80-8080", "nodePort": 30080, "port": 80, "protocol": "TCP", "targetPort": 8080},
                {"name": "443", "nodePort": 30080, "port": 443, "protocol": "TCP", "targetPort": 443},
            ])
        );
        assert_eq!(svc["spec"]["type"], "NodePort");
        assert_eq!(svc["spec"]["selector"], json!({"app": "web"}));
    }

    #[test]
    fn literal_sources_split_at_the_first_equals_sign() {
        assert_eq!(literal("a=b=c").ok(), Some(("a".into(), "b=c".into())));
        assert!(literal("=x").is_err());
        assert!(literal("novalue").is_err());
    }
}
