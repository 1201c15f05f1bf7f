//! kubectl: the command-line client, speaking to the simulated API server exactly as the real
//! one speaks to a cluster, and printing what the real one prints.

pub mod admission_printers;
pub mod age;
pub mod args;
mod attach;
pub mod auth;
pub mod autoscaling_printers;
mod create;
mod create_ingress;
mod create_policy;
mod create_rbac;
pub mod custom_printers;
mod debug;
pub mod describe;
mod describe_storage;
mod diff;
pub mod edit;
pub mod events;
mod exec;
pub mod explain;
mod explain_admission;
mod explain_autoscaling;
mod explain_custom;
mod explain_network_policy;
mod explain_networking;
mod explain_storage;
mod explain_webhooks;
mod expose;
mod imperative_flags;
pub mod info;
pub mod jsonpath;
mod label;
mod logs;
pub mod manifest;
pub mod merge;
mod network_policy;
pub mod networking_printers;
mod node_ops;
mod object_watch;
pub mod output;
pub mod policy_printers;
pub mod printers;
pub mod remote;
mod replace;
pub mod rollout;
mod run;
mod server_side;
pub mod session;
mod set;
pub mod storage_printers;
pub mod table;
mod top;
mod unserved;
pub mod verbose;
mod wait;
pub mod watch;
pub mod webhook_printers;
pub mod yaml;

use crate::api::{Kind, Object};
use crate::apiserver::{Body, FieldSelector, Reply, Request, Status};
use crate::cluster::Cluster;
use crate::sim::Duration;
use crate::util::sort::StableSort;
use args::Args;
use manifest::Document;
use serde_json::Value;
use std::sync::Arc;

pub use crate::api::well_known::LAST_APPLIED;

/// What a command printed, and how it exited.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
    /// Warnings from the server, which kubectl prints (to stderr) before its output.
    pub warnings: String,
    /// The command opened an interactive session (`exec -it`, `run -it`, `attach -it`): the
    /// terminal's next lines go to this shell.
    pub attach: Option<Box<session::Attach>>,
}

impl Output {
    fn ok(stdout: String) -> Output {
        Output { stdout, ..Default::default() }
    }
    fn err(stderr: impl Into<String>) -> Output {
        let mut stderr = stderr.into();
        if !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        Output { stderr, code: 1, ..Default::default() }
    }
    /// stdout then stderr, as a terminal shows them.
    pub fn combined(&self) -> String {
        format!("{}{}{}", self.warnings, self.stdout, self.stderr)
    }
}

/// Where `-f` reads from: standard input (`-f -`) and named files.
pub struct Io<'a> {
    pub stdin: Option<&'a str>,
    pub read_file: &'a dyn Fn(&str) -> Result<String, String>,
    /// The manifest files in a directory (`-f DIR`; with `recursive`, below it too), in
    /// lexical order.
    pub list_dir: &'a dyn Fn(&str, bool) -> Vec<String>,
}

impl Io<'_> {
    /// No standard input and no files.
    pub fn none() -> Io<'static> {
        Io {
            stdin: None,
            read_file: &|name| Err(format!("error: the path \"{name}\" does not exist")),
            list_dir: &|_, _| Vec::new(),
        }
    }
}

const VERBS: &[&str] = &["apply", "create", "get", "delete", "describe", "logs", "patch", "scale", "version"];
const IMPERATIVE_VERBS: &[&str] =
    &["run", "expose", "label", "annotate", "set", "taint", "cordon", "uncordon", "drain", "replace"];
/// Rollout, informational and events verbs.
const VERBS_B: &[&str] = &[
    "rollout",
    "events",
    "explain",
    "api-resources",
    "api-versions",
    "cluster-info",
    "config",
    "wait",
    "diff",
    "auth",
];
/// exec, watch and follow, and the verbs answered without their server side.
const VERBS_C: &[&str] = &["exec", "attach", "debug", "top", "edit", "autoscale", "port-forward"];

/// `kubectl get … -w` started and left open, for a terminal that shows rows as they come
/// (the page's); None when `words` is not such a command.
pub fn start_live_watch(cluster: &mut Cluster, words: &[String]) -> Option<Result<(Output, watch::LiveWatch), Output>> {
    // Output sent to a file (`> pods.txt`) is no live terminal: the command runs as any other.
    if words.iter().any(|w| w.starts_with('>') || w.starts_with('<') || w.starts_with("2>") || w.starts_with("&>")) {
        return None;
    }
    let (verb, rest) = args::split_verb(words)?;
    if verb != "get" {
        return None;
    }
    let mut args = Args::parse("get", &rest).ok()?;
    if !(args.has("watch") || args.has("watch-only")) || args.get("v").is_some() {
        return None;
    }
    if let Some(ns) = &cluster.context_namespace {
        args.set_context_namespace(ns);
    }
    if let Some(out) = unserved::unreachable(cluster, "get") {
        return Some(Err(out));
    }
    Some(watch::start(cluster, &args))
}

/// Every verb, for completion and "did you mean".
pub fn verb_names() -> Vec<&'static str> {
    let mut verbs: Vec<&str> = VERBS.iter().chain(IMPERATIVE_VERBS).chain(VERBS_B).chain(VERBS_C).copied().collect();
    verbs.stable_sort();
    verbs
}

/// Runs one kubectl command (the words after `kubectl`); the server's warnings come first,
/// as kubectl prints them (`Warning: …`).
pub fn run(cluster: &mut Cluster, words: &[String], io: &Io) -> Output {
    // Discovery: the custom resources the server lists, known for this command.
    let _discovery = crate::api::custom::Discovery::install(cluster.served_custom());
    cluster.take_api_warnings();
    let mut out = run_command(cluster, words, io);
    let warnings: String = cluster.take_api_warnings().iter().map(|w| format!("Warning: {w}\n")).collect();
    out.warnings = warnings + &out.warnings;
    out
}

fn run_command(cluster: &mut Cluster, words: &[String], io: &Io) -> Output {
    let Some((verb, rest)) = args::split_verb(words) else {
        if let Err(e) = args::global_flags_only(words) {
            return Output::err(e);
        }
        return Output::ok("kubectl controls the Kubernetes cluster manager.\n\nBasic Commands: apply, create, get, delete, describe, logs, patch, scale, version\n".into());
    };
    let verb = &verb;
    let mut args = match Args::parse(verb, &rest) {
        Ok(a) => a,
        Err(e) => return Output::err(e),
    };
    if let Some(ns) = &cluster.context_namespace {
        args.set_context_namespace(ns);
    }
    // `-v=6` and up: log every request this command sends, before its output.
    let level = match verbose::level(args.get("v")) {
        Ok(l) => l,
        Err(e) => return Output::err(e),
    };
    if level >= 6 && cluster.client_log.is_none() {
        cluster.client_log = Some(Vec::new());
        let mut out = run(cluster, words, io);
        let calls = cluster.client_log.take().unwrap_or_default();
        out.warnings = verbose::lines(level, &info::server(cluster), cluster.now(), &calls) + &out.warnings;
        return out;
    }
    if let Some(out) = unserved::unreachable(cluster, verb) {
        return out;
    }
    // `--as` / `--as-group`: every request this command sends impersonates that identity.
    match auth::impersonation(&args) {
        Err(e) => return Output::err(e),
        Ok(Some(who)) if cluster.acting_as.is_none() => {
            cluster.acting_as = Some(who);
            let out = run(cluster, words, io);
            cluster.acting_as = None;
            return out;
        }
        Ok(_) => {}
    }
    match verb.as_str() {
        "auth" => return auth::run(cluster, &args),
        "exec" => return exec::exec(cluster, &args, &rest, io.stdin),
        "attach" => return attach::attach(cluster, &args),
        "debug" => return debug::debug(cluster, &args),
        "top" => return top::top(cluster, &args),
        "edit" => return unserved::edit(cluster, &args),
        "autoscale" => return top::autoscale(cluster, &args),
        "port-forward" => return unserved::port_forward(cluster, &args),
        "rollout" => return rollout::run(cluster, &args),
        "wait" => return wait::run(cluster, &args),
        "diff" => return diff::run(cluster, &args, io),
        "events" => return events::run(cluster, &args),
        "explain" => return explain::run(&args),
        "api-resources" => return info::api_resources(&args),
        "api-versions" => return info::api_versions(),
        "cluster-info" => return info::cluster_info(cluster, &args),
        "config" => return info::config(cluster, &args),
        _ => {}
    }
    match verb.as_str() {
        "apply" => apply(cluster, &args, io, false),
        "create" if create::is_generator(&args) => create::create(cluster, &args, &rest),
        "create" => apply(cluster, &args, io, true),
        "run" => run::run(cluster, &args, &rest),
        "expose" => expose::expose(cluster, &args),
        "label" => label::label(cluster, &args, label::Field::Labels),
        "annotate" => label::label(cluster, &args, label::Field::Annotations),
        "set" => set::set(cluster, &args),
        "taint" => node_ops::taint(cluster, &args),
        "cordon" => node_ops::cordon(cluster, &args, true),
        "uncordon" => node_ops::cordon(cluster, &args, false),
        "drain" => node_ops::drain(cluster, &args),
        "replace" => replace::replace(cluster, &args, io),
        "get" => get(cluster, &args),
        "delete" => delete(cluster, &args, io),
        "describe" => describe(cluster, &args),
        "logs" => logs::logs(cluster, &args),
        "scale" => scale(cluster, &args),
        "patch" => patch(cluster, &args),
        "version" => Output::ok(format!(
            "Client Version: {v}\nKustomize Version: v5.7.1\nServer Version: {v}\n",
            v = crate::kubelet::node_config::KUBELET_VERSION
        )),
        other => {
            let suggestion = VERBS
                .iter()
                .chain(IMPERATIVE_VERBS)
                .chain(VERBS_B)
                .chain(VERBS_C)
                .find(|v| strsim(v, other) <= 2)
                .map(|v| format!("\n\nDid you mean this?\n\t{v}"))
                .unwrap_or_default();
            Output::err(format!(
                "error: unknown command \"{other}\" for \"kubectl\"{suggestion}\n\nRun 'kubectl --help' for usage."
            ))
        }
    }
}

/// The pods `owner` controls, as a describer lists them for its status line.
fn controlled_pods(cluster: &mut Cluster, owner: &Object) -> Vec<crate::api::Pod> {
    match cluster.request(Request::list(Kind::Pod, owner.namespace())) {
        Ok(Reply::List { items, .. }) => items
            .iter()
            .filter(|o| o.controller_ref().is_some_and(|r| r.uid == owner.meta().uid))
            .filter_map(|o| o.as_pod().cloned())
            .collect(),
        _ => Vec::new(),
    }
}

/// Edit distance, for "Did you mean this?".
fn strsim(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn namespace_flag(args: &Args) -> String {
    args.namespace().to_string()
}

/// Reads every `-f` source into documents, as kubectl's resource builder does; the first
/// error fails the command.
fn read_documents(args: &Args, io: &Io, verb: &str) -> Result<Vec<(String, Document)>, String> {
    let docs = read_each(args, io, verb)?.into_iter().collect::<Result<Vec<_>, _>>()?;
    if docs.is_empty() {
        return Err(format!("error: no objects passed to {verb}"));
    }
    Ok(docs)
}

/// One object read from a `-f` source (named as kubectl names it), or why it could not be.
type Sourced = Result<(String, Document), String>;

/// Reads every `-f` source (a file, a directory's manifests, `-` for standard input, a URL)
/// into its objects, in order: each one, or the error that stops it (a file that cannot be
/// read or parsed, an object of a kind the API does not serve), so that the rest still go.
fn read_each(args: &Args, io: &Io, verb: &str) -> Result<Vec<Sourced>, String> {
    let files = args.all("filename");
    if files.is_empty() {
        return Err("error: must specify one of -f and -k".into());
    }
    let mut docs = Vec::new();
    for file in files {
        let sources: Vec<Result<(String, String), String>> = if file == "-" {
            vec![Ok(("STDIN".to_string(), io.stdin.unwrap_or("").to_string()))]
        } else if remote::is_url(file) {
            vec![remote::fetch(file).map(|text| (file.to_string(), text))]
        } else {
            match (io.read_file)(file) {
                Ok(text) => vec![Ok((file.to_string(), text))],
                Err(e) => {
                    // A directory: each manifest file in it, in lexical order.
                    let listed = (io.list_dir)(file.trim_end_matches('/'), args.has("recursive"));
                    if listed.is_empty() && !e.ends_with("is a directory") {
                        vec![Err(e)]
                    } else {
                        listed.into_iter().map(|f| (io.read_file)(&f).map(|t| (f, t))).collect()
                    }
                }
            }
        };
        for source in sources {
            match source.and_then(|(source, text)| manifest::parse_each(&text, &source).map(|d| (source, d))) {
                Ok((source, each)) => docs.extend(each.into_iter().map(|d| d.map(|doc| (source.clone(), doc)))),
                Err(e) => docs.push(Err(e)),
            }
        }
    }
    if docs.is_empty() {
        return Err(format!("error: no objects passed to {verb}"));
    }
    Ok(docs)
}

fn dry_run_suffix(args: &Args) -> &'static str {
    match args.get("dry-run") {
        Some("server") => " (server dry run)",
        Some("client") | Some("true") => " (dry run)",
        _ => "",
    }
}

/// The field manager of client-side `kubectl apply`.
const CSA_MANAGER: &str = "kubectl-client-side-apply";

/// `kubectl apply -f` (and `kubectl create -f` when `create_only`).
fn apply(cluster: &mut Cluster, args: &Args, io: &Io, create_only: bool) -> Output {
    let verb = if create_only { "create" } else { "apply" };
    // Words beside the files are a usage error (without files, `create` first asks for them).
    if !args.positionals.is_empty() && (!create_only || !args.all("filename").is_empty()) {
        return Output::err(format!(
            "error: Unexpected args: [{}]\nSee 'kubectl {verb} -h' for help and examples",
            args.positionals.join(" ")
        ));
    }
    if let Err(e) = create::DryRun::from_args(args) {
        return Output::err(e);
    }
    let server_side = !create_only && server_side::wanted(args);
    if !create_only {
        if let Err(e) = server_side::check_flags(args) {
            return Output::err(e);
        }
    }
    let docs = match read_each(args, io, verb) {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    let mut out = Output::default();
    // What could not be read is reported after what was sent, as kubectl gathers the errors.
    let mut errors = String::new();
    for doc in docs {
        let (source, doc) = match doc {
            Ok(d) => d,
            Err(e) => {
                errors.push_str(&(e + "\n"));
                out.code = 1;
                continue;
            }
        };
        let result = if server_side {
            server_side::apply_one(cluster, args, &source, &doc)
        } else {
            apply_one(cluster, args, &source, &doc, create_only)
        };
        match result {
            Ok(line) => out.stdout.push_str(&(line + "\n")),
            Err(e) => {
                out.stderr.push_str(&(e + "\n"));
                out.code = 1;
            }
        }
    }
    out.stderr.push_str(&errors);
    out
}

fn server_error(status: &Status, action: &str, source: &str) -> String {
    if status.reason == "Invalid" {
        status.kubectl_message()
    } else if status.reason.is_empty() {
        format!("Error from server: error when {action} \"{source}\": {}", status.message)
    } else {
        format!("Error from server ({}): error when {action} \"{source}\": {}", status.reason, status.message)
    }
}

/// The namespace a manifest goes to: its own, or `-n`, or `default`; the two must agree.
fn document_namespace(args: &Args, doc: &Document) -> Result<String, String> {
    if !doc.kind.info().namespaced {
        return Ok(String::new());
    }
    let flag_ns = args.get("namespace");
    let doc_ns = doc.namespace();
    if let (false, Some(flag)) = (doc_ns.is_empty(), flag_ns) {
        if flag != doc_ns {
            return Err(format!(
                "error: the namespace from the provided object \"{doc_ns}\" does not match the namespace \"{flag}\". You must pass '--namespace={doc_ns}' to perform this operation."
            ));
        }
    }
    Ok(if doc_ns.is_empty() { args.namespace().to_string() } else { doc_ns.to_string() })
}

fn apply_one(
    cluster: &mut Cluster,
    args: &Args,
    source: &str,
    doc: &Document,
    create_only: bool,
) -> Result<String, String> {
    let kind = doc.kind;
    let namespace = document_namespace(args, doc)?;
    let body = doc.body.clone();
    let dry = dry_run_suffix(args);
    let server_dry = args.get("dry-run") == Some("server");
    let client_dry = !dry.is_empty() && !server_dry;
    let type_name = |name: &str| format!("{}/{name}", kind.qualified_singular());
    if create_only {
        if client_dry {
            return Ok(format!("{} created{dry}", type_name(doc.name())));
        }
        let mut req = Request::new(crate::apiserver::Verb::Create, kind, &namespace, "").managed_by("kubectl-create");
        req.body = Some(Body::Json(body));
        req.dry_run = server_dry;
        return match cluster.request(req) {
            Ok(reply) => Ok(format!(
                "{} created{dry}",
                type_name(reply.object().map(|o| o.name().to_string()).unwrap_or_default().as_str())
            )),
            Err(status) => Err(server_error(&status, "creating", source)),
        };
    }
    let name = doc.name().to_string();
    if name.is_empty() {
        let info = kind.info();
        let group_version = if info.group.is_empty() {
            format!("/{}", info.version)
        } else {
            format!("{}/{}", info.group, info.version)
        };
        return Err(format!(
            "error: error when retrieving current configuration of:\nResource: \"{group_version}, Resource={}\", GroupVersionKind: \"{group_version}, Kind={}\"\nName: \"\", Namespace: \"{namespace}\"\nfrom server for: \"{source}\": resource name may not be empty",
            info.resource, info.kind
        ));
    }
    let body = with_last_applied(body);
    let current = cluster.request(Request::get(kind, &namespace, &name));
    match current {
        Err(status) if status.reason == "NotFound" => {
            if client_dry {
                return Ok(format!("{} created{dry}", type_name(&name)));
            }
            let mut req = Request::new(crate::apiserver::Verb::Create, kind, &namespace, "").managed_by(CSA_MANAGER);
            req.body = Some(Body::Json(body));
            req.dry_run = server_dry;
            match cluster.request(req) {
                Ok(_) => Ok(format!("{} created{dry}", type_name(&name))),
                Err(status) => Err(server_error(&status, "creating", source)),
            }
        }
        Err(status) => Err(server_error(&status, "retrieving current configuration of", source)),
        Ok(reply) => {
            let live = reply.object().map(|o| o.to_json_value()).unwrap_or(Value::Null);
            let merged = merge::three_way(&live, last_applied_of(&live).as_ref(), &body);
            // kubectl sends nothing when the three-way patch is empty.
            if merged == live {
                return Ok(format!("{} unchanged{dry}", type_name(&name)));
            }
            if client_dry {
                return Ok(format!("{} configured{dry}", type_name(&name)));
            }
            let mut req = Request::new(crate::apiserver::Verb::Update, kind, &namespace, &name).managed_by(CSA_MANAGER);
            req.body = Some(Body::Json(merged));
            req.dry_run = server_dry;
            match cluster.request(req) {
                Ok(_) => Ok(format!("{} configured{dry}", type_name(&name))),
                Err(status) => Err(if status.reason == "Invalid" {
                    status.kubectl_message()
                } else {
                    format!(
                        "Error from server ({}): error when applying patch:\n{}\nto:\nResource: \"{}\", GroupVersionKind: \"{}, Kind={}\"\nName: \"{name}\", Namespace: \"{namespace}\"\nfor: \"{source}\": {}",
                        status.reason,
                        serde_json::to_string(&doc.body).unwrap_or_default(),
                        kind.qualified_resource(),
                        kind.api_version(),
                        kind.info().kind,
                        status.message
                    )
                }),
            }
        }
    }
}

/// A manifest as `kubectl apply` sends it: itself, as applied, remembered in the
/// last-applied annotation for the next three-way merge.
fn with_last_applied(mut body: Value) -> Value {
    if let Some(ann) = body.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) {
        ann.remove(LAST_APPLIED);
    }
    let last_applied = serde_json::to_string(&body).unwrap_or_default() + "\n";
    set_annotation(&mut body, LAST_APPLIED, &last_applied);
    body
}

/// The configuration the last `kubectl apply` left on a live object, if any.
fn last_applied_of(live: &Value) -> Option<Value> {
    live.pointer(&format!("/metadata/annotations/{}", LAST_APPLIED.replace('/', "~1")))
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
}

fn set_annotation(body: &mut Value, key: &str, value: &str) {
    let Some(obj) = body.as_object_mut() else { return };
    let meta = obj.entry("metadata").or_insert_with(|| Value::Object(Default::default()));
    let Some(meta) = meta.as_object_mut() else { return };
    let ann = meta.entry("annotations").or_insert_with(|| Value::Object(Default::default()));
    if let Some(ann) = ann.as_object_mut() {
        ann.insert(key.to_string(), Value::String(value.to_string()));
    }
}

/// kubectl's refusal of a type given both apart and in `TYPE/NAME` form.
const MIXED_TYPE_FORMS: &str = "error: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'";

/// Resolves `TYPE NAME...`, `TYPE/NAME...` and `TYPE1,TYPE2` into (kind, names) pairs.
fn resolve_targets(positionals: &[String]) -> Result<Vec<(Kind, Vec<String>)>, String> {
    let unknown = |t: &str| format!("error: the server doesn't have a resource type \"{t}\"");
    if positionals.is_empty() {
        return Err("error: Required resource not specified.\nUse \"kubectl explain <resource>\" for a detailed description of that resource (e.g. kubectl explain pods).\nSee 'kubectl get -h' for help and examples".into());
    }
    // `TYPE/NAME` forms and a separate type do not mix (`kubectl delete pod pod/web`).
    if positionals.iter().any(|p| p.contains('/')) && !positionals.iter().all(|p| p.contains('/')) {
        return Err(MIXED_TYPE_FORMS.to_string());
    }
    if positionals[0].contains('/') {
        let mut out: Vec<(Kind, Vec<String>)> = Vec::new();
        for p in positionals {
            let Some((t, n)) = p.split_once('/') else { return Err(MIXED_TYPE_FORMS.to_string()) };
            if n.contains('/') {
                return Err("error: arguments in resource/name form may not have more than one slash".into());
            }
            if t.is_empty() || n.is_empty() || t.contains(',') {
                return Err("error: arguments in resource/name form must have a single resource and name".into());
            }
            let kind = Kind::from_resource_arg(t).ok_or_else(|| unknown(t))?;
            match out.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, names)) => names.push(n.to_string()),
                None => out.push((kind, vec![n.to_string()])),
            }
        }
        return Ok(out);
    }
    let names: Vec<String> = positionals[1..].to_vec();
    let mut out: Vec<(Kind, Vec<String>)> = Vec::new();
    for t in positionals[0].split(',') {
        // The `all` category: the workload kinds, in discovery order.
        let kinds: Vec<Kind> = if t == "all" {
            // Custom resources in the category too, as discovery lists them.
            let served = crate::api::custom::Discovery::served();
            let custom = served.iter().filter(|s| s.preferred && s.categories.iter().any(|c| c == "all"));
            ALL_CATEGORY.iter().copied().chain(custom.map(|s| Kind::Custom(s.kind))).collect()
        } else {
            vec![Kind::from_resource_arg(t).ok_or_else(|| unknown(t))?]
        };
        for kind in kinds {
            if !out.iter().any(|(k, _)| *k == kind) {
                out.push((kind, names.clone()));
            }
        }
    }
    Ok(out)
}

/// What `kubectl get all` lists: the kinds in the `all` category that this API serves.
const ALL_CATEGORY: &[Kind] = &[
    Kind::Pod,
    Kind::ReplicationController,
    Kind::Service,
    Kind::DaemonSet,
    Kind::Deployment,
    Kind::ReplicaSet,
    Kind::StatefulSet,
    Kind::CronJob,
    Kind::Job,
];

fn list_request(kind: Kind, namespace: &str, args: &Args) -> Result<Request, String> {
    let mut req = Request::list(kind, namespace);
    if let Some(sel) = args.get("selector") {
        req.label_selector = Some(crate::api::meta::parse_selector(sel).map_err(|e| format!("error: {e}"))?);
    }
    if let Some(sel) = args.get("field-selector") {
        req.field_selector = Some(FieldSelector::parse(sel).map_err(|e| format!("error: {e}"))?);
    }
    Ok(req)
}

/// `kubectl get`.
fn get(cluster: &mut Cluster, args: &Args) -> Output {
    if args.has("watch") || args.has("watch-only") {
        return watch::get_watch(cluster, args);
    }
    let targets = match resolve_targets(&args.positionals) {
        Ok(t) => t,
        Err(e) => return Output::err(e),
    };
    let all_ns = args.has("all-namespaces");
    let namespace = namespace_flag(args);
    let output = args.get("output").unwrap_or("");
    if output::is_template_format(output) {
        if let Err(e) = output::validate(output) {
            return Output::err(e);
        }
    } else if !matches!(output, "" | "wide" | "yaml" | "json" | "name") {
        return Output::err(format!(
            "error: unable to match a printer suitable for the output format \"{output}\", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"
        ));
    }
    let wide = output == "wide";
    let multi = targets.len() > 1;
    let mut out = Output::default();
    if targets.iter().any(|(k, _)| *k == Kind::Endpoints) {
        // The API server's deprecation warning, which kubectl prints.
        out.warnings.push_str("Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n");
    }
    if targets.iter().any(|(k, _)| *k == Kind::ComponentStatus) {
        out.warnings.push_str("Warning: v1 ComponentStatus is deprecated in v1.19+\n");
    }
    let mut objects_out: Vec<Arc<Object>> = Vec::new();
    let mut tables: Vec<String> = Vec::new();
    for (kind, names) in targets {
        let ns = if kind.info().namespaced && !all_ns { namespace.clone() } else { String::new() };
        let mut objects = Vec::new();
        if names.is_empty() {
            let req = match list_request(kind, &ns, args) {
                Ok(r) => r,
                Err(e) => return Output::err(e),
            };
            match cluster.request(req) {
                Ok(Reply::List { items, .. }) => objects = items,
                Ok(_) => {}
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                }
            }
        } else {
            for name in names {
                match cluster.request(Request::get(kind, &ns, &name)) {
                    Ok(reply) => objects.extend(reply.object()),
                    Err(status) => {
                        if !args.has("ignore-not-found") {
                            out.stderr.push_str(&(status.kubectl_message() + "\n"));
                            out.code = 1;
                        }
                    }
                }
            }
        }
        if objects.is_empty() {
            continue;
        }
        if let Some(key) = args.get("sort-by") {
            if let Err(e) = output::sort(&mut objects, key) {
                return Output::err(e);
            }
        }
        if matches!(output, "yaml" | "json" | "name") || output::is_template_format(output) {
            objects_out.extend(objects);
            continue;
        }
        let now = cluster.now();
        let label_columns = printers::LabelColumns::from_args(args);
        let mut rows = Vec::new();
        if !args.has("no-headers") {
            let mut header: Vec<String> = printers::header_strings(kind, wide);
            if all_ns && kind.info().namespaced {
                header.insert(0, "NAMESPACE".into());
            }
            header.extend(label_columns.headers());
            rows.push(header);
        }
        for obj in &objects {
            let mut row = printers::row(obj, now, wide);
            if multi {
                row[0] = printers::type_name(obj);
            }
            if all_ns && kind.info().namespaced {
                row.insert(0, obj.namespace().to_string());
            }
            row.extend(label_columns.cells(&obj.meta().labels));
            rows.push(row);
        }
        tables.push(table::render(&rows));
    }
    match output {
        "name" => out.stdout = objects_out.iter().map(|o| printers::type_name(o) + "\n").collect(),
        "yaml" | "json" => {
            let values: Vec<Value> = objects_out.iter().map(|o| printable(o, args)).collect();
            let value = if values.len() == 1 && !is_list_query(args) {
                values.into_iter().next().unwrap_or(Value::Null)
            } else {
                crate::util::json_macro::json!({"apiVersion": "v1", "items": values, "kind": "List", "metadata": {"resourceVersion": ""}})
            };
            if objects_out.is_empty() && !is_list_query(args) {
                // Only errors were printed.
            } else {
                out.stdout = if output == "json" { to_json(&value) } else { to_yaml(&value) };
            }
        }
        o if output::is_template_format(o) => {
            if !objects_out.is_empty() || is_list_query(args) {
                match output::print(o, &objects_out, is_list_query(args), args.has("no-headers")) {
                    Ok(text) => out.stdout = text,
                    Err(e) => {
                        out.stderr.push_str(&(e + "\n"));
                        out.code = 1;
                    }
                }
            }
            if objects_out.is_empty() && output::is_tabular(o) {
                out.stdout.clear();
            }
        }
        _ => out.stdout = tables.join("\n"),
    }
    if out.stdout.is_empty()
        && out.code == 0
        && !matches!(output, "yaml" | "json")
        && (!output::is_template_format(output) || output::is_tabular(output))
    {
        out.stderr = if all_ns
            || args
                .positionals
                .first()
                .and_then(|t| Kind::from_resource_arg(t.split(',').next().unwrap_or("")))
                .is_some_and(|k| !k.info().namespaced)
        {
            "No resources found\n".into()
        } else {
            format!("No resources found in {namespace} namespace.\n")
        };
    }
    out
}

/// An object as `-o yaml|json` prints it: without `managedFields` unless
/// `--show-managed-fields`.
fn printable(object: &Object, args: &Args) -> Value {
    let mut value = object.to_json_value();
    hide_managed_fields(&mut value, args);
    value
}

/// kubectl's printers leave `metadata.managedFields` out unless `--show-managed-fields`.
pub(crate) fn hide_managed_fields(value: &mut Value, args: &Args) {
    if !args.has("show-managed-fields") {
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
    }
}

fn is_list_query(args: &Args) -> bool {
    args.positionals.len() == 1 && !args.positionals[0].contains('/')
}

/// JSON as kubectl prints it: four-space indentation.
pub fn to_json(value: &Value) -> String {
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
    if serde::Serialize::serialize(value, &mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(buf).unwrap_or_default() + "\n"
}

/// YAML as kubectl prints it.
pub fn to_yaml(value: &Value) -> String {
    yaml::to_yaml(value)
}

/// `kubectl delete`.
fn delete(cluster: &mut Cluster, args: &Args, io: &Io) -> Output {
    let namespace = namespace_flag(args);
    let mut targets: Vec<(Kind, String, String)> = Vec::new();
    // The file each target came from (`-f`), which kubectl names in its errors.
    let mut sources: Vec<String> = Vec::new();
    let mut out = Output::default();
    let mut read_errors = String::new();
    if !args.all("filename").is_empty() {
        match read_each(args, io, "delete") {
            Ok(docs) => {
                // What cannot be read is reported; the rest is deleted.
                for doc in docs {
                    let (source, d) = match doc {
                        Ok(doc) => doc,
                        Err(e) => {
                            read_errors.push_str(&(e + "\n"));
                            continue;
                        }
                    };
                    sources.push(source);
                    let ns = if d.kind.info().namespaced {
                        if d.namespace().is_empty() { namespace.clone() } else { d.namespace().to_string() }
                    } else {
                        String::new()
                    };
                    targets.push((d.kind, ns, d.name().to_string()));
                }
            }
            Err(e) => return Output::err(e),
        }
    } else {
        let resolved = match resolve_targets(&args.positionals) {
            Ok(t) => t,
            Err(e) => return Output::err(e.replace("kubectl get -h", "kubectl delete -h")),
        };
        for (kind, names) in resolved {
            let ns = if kind.info().namespaced { namespace.clone() } else { String::new() };
            if names.is_empty() {
                if !args.has("all") && args.get("selector").is_none() && args.get("field-selector").is_none() {
                    return Output::err("error: resource(s) were provided, but no name was specified");
                }
                // -A: the list spans every namespace.
                let list_ns = if args.has("all-namespaces") { "" } else { ns.as_str() };
                let req = match list_request(kind, list_ns, args) {
                    Ok(r) => r,
                    Err(e) => return Output::err(e),
                };
                if let Ok(Reply::List { items, .. }) = cluster.request(req) {
                    for o in items {
                        targets.push((kind, o.namespace().to_string(), o.name().to_string()));
                    }
                }
            } else {
                for n in names {
                    targets.push((kind, ns.clone(), n));
                }
            }
        }
        if targets.is_empty() {
            out.stderr = "No resources found\n".to_string();
            return out;
        }
    }
    let grace = if args.has("now") {
        Some(1)
    } else {
        args.get("grace-period").and_then(|g| g.parse::<i64>().ok()).filter(|g| *g >= 0)
    };
    // --grace-period=0 without --force means "as fast as possible", which kubectl sends as 1.
    let grace = match grace {
        Some(0) if !args.has("force") => Some(1),
        g => g,
    };
    if args.has("force") && grace == Some(0) {
        out.warnings.push_str("Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n");
    }
    let propagation = match args.get("cascade") {
        None => None,
        Some(v) => match crate::apiserver::Propagation::from_cascade(v) {
            Some(p) => Some(p),
            None => {
                return Output::err(format!(
                    "error: invalid cascade value ({v}). Must be \"background\", \"foreground\", or \"orphan\"."
                ));
            }
        },
    };
    let dry = dry_run_suffix(args);
    let mut deleted: Vec<(Kind, String, String)> = Vec::new();
    for (i, (kind, ns, name)) in targets.into_iter().enumerate() {
        let mut req = Request::delete(kind, &ns, &name);
        req.grace_period_seconds = grace;
        req.propagation = propagation;
        req.dry_run = !dry.is_empty();
        match cluster.request(req) {
            Ok(_) => {
                out.stdout.push_str(&format!("{} \"{name}\" deleted{dry}\n", kind.qualified_singular()));
                deleted.push((kind, ns, name));
            }
            Err(status) if status.reason == "NotFound" && args.has("ignore-not-found") => {}
            Err(status) => {
                let message = match sources.get(i) {
                    Some(source) => server_error(&status, "deleting", source),
                    None => status.kubectl_message(),
                };
                out.stderr.push_str(&(message + "\n"));
                out.code = 1;
            }
        }
    }
    // Like kubectl, wait for the objects to be gone (pods first stop their containers),
    // listing and watching each in turn.
    let wait = args.get("wait").is_none_or(|w| w != "false") && dry.is_empty();
    if wait && !deleted.is_empty() {
        let deadline = cluster.now() + Duration::seconds(120);
        for (kind, ns, name) in &deleted {
            let Ok(mut watch) = object_watch::ObjectWatch::open(cluster, *kind, ns, name) else { continue };
            while cluster.now() < deadline && watch.current.is_some() && cluster.step() {
                watch.poll(cluster);
            }
            watch.close(cluster);
        }
    }
    if !read_errors.is_empty() {
        out.stderr.push_str(&read_errors);
        out.code = 1;
    }
    out
}

fn events_for(cluster: &mut Cluster, object: &Object) -> Vec<crate::api::Event> {
    let meta = object.meta();
    let ns = if meta.namespace.is_empty() { "" } else { &meta.namespace };
    let mut selector = FieldSelector::equals("involvedObject.name", &meta.name);
    for (f, v) in [
        ("involvedObject.namespace", meta.namespace.as_str()),
        ("involvedObject.kind", object.kind().info().kind),
        ("involvedObject.uid", meta.uid.as_str()),
    ] {
        if !v.is_empty() {
            selector.requirements.push(crate::apiserver::fields::FieldRequirement {
                field: f.into(),
                equals: true,
                value: v.into(),
            });
        }
    }
    let req = Request::list(Kind::Event, ns).with_fields(selector);
    match cluster.request(req) {
        Ok(Reply::List { items, .. }) => items.iter().filter_map(|e| e.as_event().cloned()).collect(),
        _ => Vec::new(),
    }
}

fn strip_hash(t: &crate::api::PodTemplateSpec) -> crate::api::PodTemplateSpec {
    let mut t = t.clone();
    t.metadata.labels.remove("pod-template-hash");
    t
}

/// `kubectl describe`.
fn describe(cluster: &mut Cluster, args: &Args) -> Output {
    let targets = match resolve_targets(&args.positionals) {
        Ok(t) => t,
        Err(e) => return Output::err(e),
    };
    let namespace = namespace_flag(args);
    let mut out = Output::default();
    let mut texts = Vec::new();
    for (kind, names) in targets {
        let ns = if kind.info().namespaced { namespace.clone() } else { String::new() };
        let objects: Vec<Arc<Object>> = if names.is_empty() {
            match list_request(kind, &ns, args).ok().map(|r| cluster.request(r)) {
                Some(Ok(Reply::List { items, .. })) => items,
                _ => Vec::new(),
            }
        } else {
            let mut found = Vec::new();
            for n in &names {
                match cluster.request(Request::get(kind, &ns, n)) {
                    Ok(reply) => found.extend(reply.object()),
                    Err(status) => {
                        out.stderr.push_str(&(status.kubectl_message() + "\n"));
                        out.code = 1;
                    }
                }
            }
            found
        };
        for object in objects {
            let events = events_for(cluster, &object);
            let now = cluster.now();
            let text = match &*object {
                Object::Pod(p) => describe::describe_pod(p, &events, now),
                Object::Node(n) => {
                    let lease = cluster
                        .request(Request::get(Kind::Lease, "kube-node-lease", &n.metadata.name))
                        .ok()
                        .and_then(Reply::object);
                    let lease =
                        lease.as_deref().and_then(|l| if let Object::Lease(l) = l { Some(l.clone()) } else { None });
                    let mut selector = FieldSelector::equals("spec.nodeName", &n.metadata.name);
                    for phase in ["Succeeded", "Failed"] {
                        selector.requirements.push(crate::apiserver::fields::FieldRequirement {
                            field: "status.phase".into(),
                            equals: false,
                            value: phase.into(),
                        });
                    }
                    let pods: Vec<crate::api::Pod> =
                        match cluster.request(Request::list(Kind::Pod, "").with_fields(selector)) {
                            Ok(Reply::List { items, .. }) => items.iter().filter_map(|p| p.as_pod().cloned()).collect(),
                            _ => Vec::new(),
                        };
                    describe::describe_node(n, lease.as_ref(), &pods, &events, now)
                }
                Object::Deployment(d) => {
                    let all = rollout::replica_sets_of(cluster, d);
                    let wanted = strip_hash(&d.spec.template);
                    let new = all.iter().find(|rs| strip_hash(&rs.spec.template) == wanted);
                    let old: Vec<&crate::api::ReplicaSet> =
                        all.iter().filter(|rs| new.is_none_or(|n| n.metadata.uid != rs.metadata.uid)).collect();
                    describe::describe_deployment(d, new, &old, &events, now)
                }
                Object::ReplicaSet(rs) => {
                    let pods = controlled_pods(cluster, &object);
                    describe::describe_replica_set(rs, &pods, &events, now)
                }
                Object::ReplicationController(rc) => {
                    let pods = controlled_pods(cluster, &object);
                    describe::describe_replica_set(&rc.as_replica_set(), &pods, &events, now)
                }
                Object::DaemonSet(ds) => {
                    let pods = controlled_pods(cluster, &object);
                    describe::describe_daemon_set(ds, &pods, &events, now)
                }
                Object::Job(job) => {
                    let pods = controlled_pods(cluster, &object);
                    describe::describe_job(job, &pods, &events, now)
                }
                Object::CronJob(cj) => describe::describe_cron_job(cj, &events, now),
                Object::Service(svc) => {
                    let mut list = Request::list(Kind::EndpointSlice, &svc.metadata.namespace);
                    list.label_selector = crate::api::meta::parse_selector(&format!(
                        "{}={}",
                        crate::controllers::endpointslice::LABEL_SERVICE_NAME,
                        svc.metadata.name
                    ))
                    .ok();
                    let slices: Vec<crate::api::EndpointSlice> = match cluster.request(list) {
                        Ok(Reply::List { items, .. }) => items
                            .iter()
                            .filter_map(|o| if let Object::EndpointSlice(s) = &**o { Some(s.clone()) } else { None })
                            .collect(),
                        _ => Vec::new(),
                    };
                    describe::describe_service(svc, &slices, &events, now)
                }
                Object::ConfigMap(cm) => describe::describe_config_map(cm, &events, now),
                Object::Secret(secret) => describe::describe_secret(secret),
                Object::ServiceAccount(sa) => describe::describe_service_account(sa, &events, now),
                Object::Role(r) => describe::describe_role(&r.metadata, &r.rules),
                Object::ClusterRole(r) => describe::describe_role(&r.metadata, &r.rules),
                Object::RoleBinding(b) => describe::describe_binding(&b.metadata, &b.role_ref, &b.subjects),
                Object::ClusterRoleBinding(b) => describe::describe_binding(&b.metadata, &b.role_ref, &b.subjects),
                Object::ResourceQuota(q) => describe::describe_quota(q),
                Object::LimitRange(l) => describe::describe_limit_range(l),
                Object::Namespace(ns) => {
                    let of = |cluster: &mut Cluster, kind: Kind| match cluster
                        .request(Request::list(kind, &ns.metadata.name))
                    {
                        Ok(Reply::List { items, .. }) => items,
                        _ => Vec::new(),
                    };
                    let quotas: Vec<crate::api::ResourceQuota> = of(cluster, Kind::ResourceQuota)
                        .iter()
                        .filter_map(|o| if let Object::ResourceQuota(q) = &**o { Some(q.clone()) } else { None })
                        .collect();
                    let ranges: Vec<crate::api::LimitRange> = of(cluster, Kind::LimitRange)
                        .iter()
                        .filter_map(|o| if let Object::LimitRange(l) = &**o { Some(l.clone()) } else { None })
                        .collect();
                    describe::describe_namespace(ns, &quotas, &ranges)
                }
                Object::PersistentVolumeClaim(pvc) => {
                    let pods: Vec<crate::api::Pod> =
                        match cluster.request(Request::list(Kind::Pod, &pvc.metadata.namespace)) {
                            Ok(Reply::List { items, .. }) => items.iter().filter_map(|p| p.as_pod().cloned()).collect(),
                            _ => Vec::new(),
                        };
                    describe_storage::describe_claim(pvc, &pods, &events, now)
                }
                Object::PersistentVolume(pv) => describe_storage::describe_volume(pv, &events, now),
                Object::StatefulSet(sts) => {
                    let pods = controlled_pods(cluster, &object);
                    describe_storage::describe_stateful_set(sts, &pods, &events, now)
                }
                Object::StorageClass(sc) => describe_storage::describe_class(sc, &events, now),
                Object::Ingress(ing) => {
                    let ns = &ing.metadata.namespace;
                    let mut list = |kind| match cluster.request(Request::list(kind, ns)) {
                        Ok(Reply::List { items, .. }) => items,
                        _ => Vec::new(),
                    };
                    let services: Vec<crate::api::Service> = list(Kind::Service)
                        .iter()
                        .filter_map(|o| if let Object::Service(s) = &**o { Some((**s).clone()) } else { None })
                        .collect();
                    let slices: Vec<crate::api::EndpointSlice> = list(Kind::EndpointSlice)
                        .iter()
                        .filter_map(|o| if let Object::EndpointSlice(s) = &**o { Some(s.clone()) } else { None })
                        .collect();
                    networking_printers::describe_ingress(ing, &services, &slices, &events, now)
                }
                Object::IngressClass(c) => networking_printers::describe_ingress_class(c, &events, now),
                Object::PodDisruptionBudget(p) => policy_printers::describe_pdb(p, &events, now),
                Object::PriorityClass(p) => policy_printers::describe_priority_class(p, &events, now),
                Object::NetworkPolicy(p) => network_policy::describe(p, &events, now),
                Object::HorizontalPodAutoscaler(h) => autoscaling_printers::describe_hpa(h, &events, now),
                Object::APIService(a) => autoscaling_printers::describe_api_service(a, &events, now),
                Object::Custom(_) | Object::CustomResourceDefinition(_) => {
                    custom_printers::describe(&object, &events, now)
                }
                Object::ValidatingWebhookConfiguration(_) | Object::MutatingWebhookConfiguration(_) => {
                    webhook_printers::describe(&object, &events, now)
                }
                other => describe::describe_generic(other, &events, now),
            };
            texts.push(text);
        }
    }
    out.stdout = texts.join("\n\n");
    if out.stdout.is_empty() && out.code == 0 {
        out.stderr = format!("No resources found in {namespace} namespace.\n");
    }
    out
}

/// `kubectl patch TYPE NAME -p PATCH [--type strategic|merge|json] [--subresource status]`.
fn patch(cluster: &mut Cluster, args: &Args) -> Output {
    use crate::apiserver::patch::PatchType;
    let Some(text) = args.get("patch") else {
        return Output::err("error: must specify --patch or --patch-file containing the contents of the patch");
    };
    let type_flag = args.get("type").unwrap_or("strategic");
    let Some(patch_type) = PatchType::from_flag(type_flag) else {
        return Output::err(format!(
            "error: --type must be one of [json merge strategic], not \"{type_flag}\"\nSee 'kubectl patch -h' for help and examples"
        ));
    };
    // kubectl accepts the patch as JSON or YAML.
    let value: Value = match crate::yaml::from_str(text).ok() {
        Some(v) if !v.is_null() => v,
        _ => {
            return Output::err(format!("error: unable to parse \"{text}\": yaml: did not find expected node content"));
        }
    };
    let targets = match resolve_targets(&args.positionals) {
        Ok(t) => t,
        Err(e) => return Output::err(e.replace("kubectl get -h", "kubectl patch -h")),
    };
    let namespace = namespace_flag(args);
    let mut out = Output::default();
    for (kind, names) in targets {
        if names.is_empty() {
            return Output::err("error: resource(s) were provided, but no name was specified");
        }
        let ns = if kind.info().namespaced { namespace.clone() } else { String::new() };
        for name in names {
            // Like kubectl, fetch the object first: its answer is what "(no change)" compares to.
            let before = cluster
                .request(Request::get(kind, &ns, &name))
                .ok()
                .and_then(|r| r.object().map(|o| o.to_json_value()));
            let manager = args.get("field-manager").unwrap_or("kubectl-patch");
            let mut req = Request::patch(kind, &ns, &name, patch_type, value.clone()).managed_by(manager);
            if args.get("subresource") == Some("status") {
                req.subresource = Some(crate::apiserver::Subresource::Status);
            }
            // Client dry-run also asks the server to dry-run: only the server can apply a patch.
            let dry_run = dry_run_suffix(args);
            req.dry_run = !dry_run.is_empty();
            match cluster.request(req) {
                Ok(reply) => {
                    let after = reply.object().map(|o| o.to_json_value());
                    let unchanged = before.is_some() && after == before;
                    let suffix = if unchanged { " (no change)" } else { "" };
                    out.stdout.push_str(&format!("{}/{name} patched{suffix}{dry_run}\n", kind.qualified_singular()));
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

/// `kubectl scale TYPE NAME --replicas=N` (Deployments and ReplicaSets).
fn scale(cluster: &mut Cluster, args: &Args) -> Output {
    let Some(replicas) = args.get("replicas") else {
        return Output::err("error: required flag(s) \"replicas\" not set");
    };
    let Ok(replicas) = replicas.parse::<i32>() else {
        return Output::err(format!(
            "error: invalid argument \"{replicas}\" for \"--replicas\" flag: strconv.ParseInt: parsing \"{replicas}\": invalid syntax\nSee 'kubectl scale --help' for usage."
        ));
    };
    if replicas < 0 {
        return Output::err(
            "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0",
        );
    }
    let targets = match resolve_targets(&args.positionals) {
        Ok(t) => t,
        Err(e) => return Output::err(e.replace("kubectl get -h", "kubectl scale -h")),
    };
    let namespace = namespace_flag(args);
    let mut out = Output::default();
    for (kind, names) in targets {
        // A kind without a scale subresource (pods, services, …) is found, then its /scale is
        // not: the API server answers 404, as a real one does.
        if names.is_empty() {
            return Output::err("error: resource(s) were provided, but no name was specified");
        }
        for name in names {
            let current = match cluster.request(Request::get(kind, &namespace, &name)) {
                Ok(reply) => reply.object(),
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                    continue;
                }
            };
            let Some(object) = current else { continue };
            let current_replicas = match &*object {
                Object::Deployment(d) => d.spec.replicas,
                Object::ReplicaSet(rs) => rs.spec.replicas,
                Object::StatefulSet(sts) => sts.spec.replicas,
                Object::ReplicationController(rc) => rc.spec.replicas,
                _ => None,
            };
            if let Some(expected) = args.get("current-replicas").and_then(|c| c.parse::<i32>().ok()) {
                if current_replicas != Some(expected) {
                    out.stderr.push_str(&format!(
                        "error: Expected replicas to be {expected}, was {}\n",
                        current_replicas.unwrap_or(0)
                    ));
                    out.code = 1;
                    continue;
                }
            }
            // Only the replica count is sent, through the scale subresource.
            match cluster.request(Request::scale(kind, &namespace, &name, replicas).managed_by("kubectl-scale")) {
                Ok(_) => out.stdout.push_str(&format!("{}/{name} scaled\n", kind.qualified_singular())),
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

    fn targets(args: &[&str]) -> Result<Vec<(Kind, Vec<String>)>, String> {
        resolve_targets(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn a_type_given_apart_and_in_type_slash_name_form_is_refused_whichever_comes_first() {
        assert_eq!(targets(&["pod", "pod/x"]).unwrap_err(), MIXED_TYPE_FORMS);
        assert_eq!(targets(&["pod/x", "web"]).unwrap_err(), MIXED_TYPE_FORMS);
        assert_eq!(targets(&["pod/x", "deploy/web"]).unwrap().len(), 2);
    }

    #[test]
    fn a_watch_whose_output_goes_to_a_file_is_not_left_open_in_the_terminal() {
        let mut cluster = Cluster::new(crate::cluster::ClusterConfig::default());
        let words = |line: &str| line.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert!(start_live_watch(&mut cluster, &words("get pods -w")).is_some());
        assert!(start_live_watch(&mut cluster, &words("get pods -w > pods.txt")).is_none());
        assert!(start_live_watch(&mut cluster, &words("get pods -w 2>&1")).is_none());
    }

    #[test]
    fn a_type_slash_name_needs_one_type_one_name_and_one_slash() {
        let single = "error: arguments in resource/name form must have a single resource and name";
        assert_eq!(targets(&["pods/"]).unwrap_err(), single);
        assert_eq!(targets(&["/web"]).unwrap_err(), single);
        assert_eq!(targets(&["po,svc/web"]).unwrap_err(), single);
        assert_eq!(
            targets(&["pods/web/x"]).unwrap_err(),
            "error: arguments in resource/name form may not have more than one slash"
        );
    }
}
