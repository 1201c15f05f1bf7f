//! Node maintenance as kubectl does it: `taint` (strategic patch of `spec.taints`), `cordon`
//! and `uncordon` (patch of `spec.unschedulable`), and `drain` — cordon, then sort the node's
//! pods through kubectl's filters (DaemonSet-managed, mirror, local storage, unreplicated),
//! evict the rest through the Eviction API and wait for each to be gone.

use super::Output;
use super::args::Args;
use super::create::{DryRun, usage_error};
use crate::api::{Kind, Node, Pod, Taint};
use crate::apiserver::patch::PatchType;
use crate::apiserver::{FieldSelector, Reply, Request};
use crate::cluster::Cluster;
use crate::sim::Duration;
use crate::util::json_macro::json;
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// taint

/// One taint as the command line gives it: `key=value:Effect`, `key:Effect` or (to remove) `key`.
fn parse_taint(spec: &str) -> Result<Taint, String> {
    let invalid = || format!("invalid taint spec: {spec}");
    let parts: Vec<&str> = spec.split(':').collect();
    let (key, value, effect) = match parts.as_slice() {
        [key] => (*key, "", ""),
        [kv, effect] => {
            if !matches!(*effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
                return Err(format!("invalid taint effect: {effect}, unsupported taint effect"));
            }
            let kv: Vec<&str> = kv.split('=').collect();
            match kv.as_slice() {
                [k] => (*k, "", *effect),
                [k, v] => (*k, *v, *effect),
                _ => return Err(invalid()),
            }
        }
        _ => return Err(invalid()),
    };
    let key_errors = qualified_name_errors(key);
    if !key_errors.is_empty() {
        return Err(format!("{}, {}", invalid(), key_errors.join("; ")));
    }
    let value_errors = super::label::label_value_errors(value);
    if !value_errors.is_empty() {
        return Err(format!("{}, {}", invalid(), value_errors.join("; ")));
    }
    Ok(Taint { key: key.into(), value: value.into(), effect: effect.into(), time_added: None })
}

/// apimachinery's IsQualifiedName: an optional DNS-subdomain prefix and `/`, then a name part.
fn qualified_name_errors(key: &str) -> Vec<String> {
    const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let parts: Vec<&str> = key.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => {
            return vec![format!(
                "{NAME_PART} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    let mut errs = Vec::new();
    if let Some(p) = prefix {
        let ok = !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                    && l.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                    && l.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            });
        if !ok {
            errs.push("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string());
        }
    }
    if name.is_empty() {
        errs.push("name part must be non-empty".into());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".into());
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let well_formed =
        name.starts_with(alnum) && name.ends_with(alnum) && name.chars().all(|c| alnum(c) || "-_.".contains(c));
    if !name.is_empty() && !well_formed {
        errs.push(NAME_PART.into());
    }
    errs
}

/// `key=value:Effect`, `key:Effect` or `key`, as Taint.ToString prints them.
fn taint_string(t: &Taint) -> String {
    match (t.value.is_empty(), t.effect.is_empty()) {
        (true, true) => t.key.clone(),
        (false, true) => format!("{}={}:", t.key, t.value),
        (true, false) => format!("{}:{}", t.key, t.effect),
        (false, false) => format!("{}={}:{}", t.key, t.value, t.effect),
    }
}

/// Splits taint arguments into taints to add and to remove.
fn parse_taints(specs: &[String]) -> Result<(Vec<Taint>, Vec<Taint>), String> {
    let (mut add, mut remove) = (Vec::<Taint>::new(), Vec::new());
    for spec in specs {
        if let Some(s) = spec.strip_suffix('-') {
            let t = parse_taint(s)?;
            remove.push(Taint { value: String::new(), ..t });
        } else {
            let t = parse_taint(spec)?;
            if t.effect.is_empty() {
                return Err(format!("invalid taint spec: {spec}"));
            }
            if add.iter().any(|a| a.key == t.key && a.effect == t.effect) {
                // Go prints the Taint struct with %v.
                return Err(format!(
                    "duplicated taints with the same key and effect: {{{} {} {} <nil>}}",
                    t.key, t.value, t.effect
                ));
            }
            add.push(t);
        }
    }
    Ok((add, remove))
}

/// The node's new taints and kubectl's word for the change (`tainted`, `untainted`, `modified`).
fn reorganize(
    node: &str,
    old: &[Taint],
    add: &[Taint],
    remove: &[Taint],
    overwrite: bool,
) -> Result<(&'static str, Vec<Taint>), String> {
    if !overwrite {
        let exists: Vec<&str> = add
            .iter()
            .filter(|t| old.iter().any(|o| o.key == t.key && o.effect == t.effect))
            .map(|t| t.key.as_str())
            .collect();
        if !exists.is_empty() {
            return Err(format!(
                "node {node} already has {} taint(s) with same effect(s) and --overwrite is false",
                exists.join(",")
            ));
        }
    }
    let mut taints: Vec<Taint> = add.to_vec();
    for o in old {
        if !taints.iter().any(|t| t.key == o.key && t.effect == o.effect) {
            taints.push(o.clone());
        }
    }
    let added = taints.len() != old.len();
    let mut errors = Vec::new();
    let mut deleted = false;
    for r in remove {
        let before = taints.len();
        taints.retain(|t| !(t.key == r.key && (r.effect.is_empty() || t.effect == r.effect)));
        deleted = taints.len() != before;
        if !deleted {
            errors.push(format!("taint \"{}\" not found", taint_string(r)));
        }
    }
    match errors.len() {
        0 => {}
        1 => return Err(errors.remove(0)),
        _ => return Err(format!("[{}]", errors.join(", "))),
    }
    let operation = if (added && deleted) || overwrite {
        "modified"
    } else if added {
        "tainted"
    } else {
        "untainted"
    };
    Ok((operation, taints))
}

fn taints_json(taints: &[Taint]) -> Value {
    if taints.is_empty() { Value::Null } else { serde_json::to_value(taints).unwrap_or(Value::Null) }
}

/// `kubectl taint nodes NAME... KEY=VALUE:EFFECT | KEY:EFFECT- ... [--overwrite] [--all] [-l]`.
pub(super) fn taint(cluster: &mut Cluster, args: &Args) -> Output {
    let mut resources = Vec::new();
    let mut specs = Vec::new();
    for word in &args.positionals {
        let is_taint = word.contains(['=', ':']) || word.ends_with('-');
        if is_taint {
            specs.push(word.clone());
        } else if !specs.is_empty() {
            return Output::err(format!("error: all resources must be specified before taint changes: {word}"));
        } else {
            resources.push(word.clone());
        }
    }
    if resources.is_empty() {
        return Output::err("error: one or more resources must be specified as <resource> <name>");
    }
    if specs.is_empty() {
        return Output::err("error: at least one taint update is required");
    }
    let (add, remove) = match parse_taints(&specs) {
        Ok(p) => p,
        Err(e) => return usage_error("taint", &e),
    };
    let resource_type = resources[0].to_ascii_lowercase();
    match Kind::from_resource_arg(&resource_type) {
        Some(Kind::Node) => {}
        Some(_) => {
            return Output::err(format!("error: invalid resource type {resource_type}, only node types are supported"));
        }
        None => return Output::err(format!("error: the server doesn't have a resource type \"{resource_type}\"")),
    }
    let conflicts: Vec<String> = add
        .iter()
        .flat_map(|a| remove.iter().filter(move |r| r.key == a.key && (r.effect.is_empty() || r.effect == a.effect)))
        .map(|r| format!("{{\"{}\":\"{}\"}}", r.key, r.effect))
        .collect();
    if !conflicts.is_empty() {
        return Output::err(format!(
            "error: can not both modify and remove the following taint(s) in the same command: {}",
            conflicts.join(", ")
        ));
    }
    let all = args.has("all");
    let selector = args.get("selector");
    if all && selector.is_some() {
        return Output::err("error: setting 'all' parameter with a non empty selector is prohibited");
    }
    if !all && selector.is_none() && resources.len() < 2 {
        return Output::err("error: at least one resource name must be specified since 'all' parameter is not set");
    }
    let dry = match DryRun::from_args(args) {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    let nodes = match nodes_named(cluster, args, &resources[1..]) {
        Ok(n) => n,
        Err(out) => return out,
    };
    let mut out = Output::default();
    for node in nodes {
        let name = node.metadata.name.clone();
        let (operation, taints) = match reorganize(&name, &node.spec.taints, &add, &remove, args.has("overwrite")) {
            Ok(r) => r,
            Err(e) => {
                out.stderr.push_str(&format!("error: {e}\n"));
                out.code = 1;
                continue;
            }
        };
        if dry != DryRun::Client {
            let patch = json!({"spec": {"taints": taints_json(&taints)}});
            let mut req =
                Request::patch(Kind::Node, "", &name, PatchType::Strategic, patch).managed_by("kubectl-taint");
            req.dry_run = dry == DryRun::Server;
            if let Err(status) = cluster.request(req) {
                out.stderr.push_str(&(status.kubectl_message() + "\n"));
                out.code = 1;
                continue;
            }
        }
        out.stdout.push_str(&format!("node/{name} {operation}{}\n", dry.suffix()));
    }
    out
}

/// The nodes a command names (`NAME`, `node/NAME`), or all of them / those `-l` selects.
fn nodes_named(cluster: &mut Cluster, args: &Args, names: &[String]) -> Result<Vec<Node>, Output> {
    if names.is_empty() {
        let req = super::list_request(Kind::Node, "", args).map_err(Output::err)?;
        return match cluster.request(req) {
            Ok(Reply::List { items, .. }) => Ok(items.iter().filter_map(|o| o.as_node().cloned()).collect()),
            Ok(_) => Ok(Vec::new()),
            Err(status) => Err(Output::err(status.kubectl_message())),
        };
    }
    let mut nodes = Vec::new();
    for name in names {
        let name = name.strip_prefix("nodes/").or_else(|| name.strip_prefix("node/")).unwrap_or(name);
        match cluster.request(Request::get(Kind::Node, "", name)) {
            Ok(reply) => nodes.extend(reply.object().and_then(|o| o.as_node().cloned())),
            Err(status) => return Err(Output::err(status.kubectl_message())),
        }
    }
    Ok(nodes)
}

// ---------------------------------------------------------------------------------------
// cordon, uncordon

/// Cordons or uncordons each node, printing kubectl's line for each.
fn cordon_nodes(cluster: &mut Cluster, nodes: &[Node], desired: bool, dry: DryRun, out: &mut Output) {
    let (done, already) = if desired { ("cordoned", "already cordoned") } else { ("uncordoned", "already uncordoned") };
    for node in nodes {
        let name = &node.metadata.name;
        if node.spec.unschedulable == desired {
            out.stdout.push_str(&format!("node/{name} {already}{}\n", dry.suffix()));
            continue;
        }
        if dry != DryRun::Client {
            let value = if desired { json!(true) } else { Value::Null };
            let mut req =
                Request::patch(Kind::Node, "", name, PatchType::Strategic, json!({"spec": {"unschedulable": value}}))
                    .managed_by("kubectl-cordon");
            req.dry_run = dry == DryRun::Server;
            if let Err(status) = cluster.request(req) {
                let verb = if desired { "cordon" } else { "uncordon" };
                out.stderr.push_str(&format!("error: unable to {verb} node \"{name}\": {}\n", status.message));
                out.code = 1;
                continue;
            }
        }
        out.stdout.push_str(&format!("node/{name} {done}{}\n", dry.suffix()));
    }
}

/// `kubectl cordon NODE` / `kubectl uncordon NODE`.
pub(super) fn cordon(cluster: &mut Cluster, args: &Args, desired: bool) -> Output {
    let verb = if desired { "cordon" } else { "uncordon" };
    if args.positionals.is_empty() && args.get("selector").is_none() {
        return usage_error(verb, &format!("USAGE: {verb} NODE [flags]"));
    }
    if !args.positionals.is_empty() && args.get("selector").is_some() {
        return usage_error(verb, "cannot specify both a node name and a --selector option");
    }
    let dry = match DryRun::from_args(args) {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    let nodes = match nodes_named(cluster, args, &args.positionals) {
        Ok(n) => n,
        Err(out) => return out,
    };
    let mut out = Output::default();
    cordon_nodes(cluster, &nodes, desired, dry, &mut out);
    out
}

// ---------------------------------------------------------------------------------------
// drain

const DAEMONSET_FATAL: &str = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)";
const DAEMONSET_WARNING: &str = "ignoring DaemonSet-managed Pods";
const LOCAL_STORAGE_FATAL: &str = "Pods with local storage (use --delete-emptydir-data to override)";
const UNMANAGED_FATAL: &str = "cannot delete Pods that declare no controller (use --force to override)";
const UNMANAGED_WARNING: &str = "deleting Pods that declare no controller";

/// What the drain filters decided for one pod.
#[derive(Clone, Debug, PartialEq)]
enum Verdict {
    Delete,
    Skip,
    /// Delete or not, with a warning.
    Warn(bool, String),
    /// Refuse to drain the node.
    Fail(String),
}

impl Verdict {
    fn deletes(&self) -> bool {
        matches!(self, Verdict::Delete | Verdict::Warn(true, _))
    }
}

/// kubectl's drain options that the filters read.
#[derive(Clone, Copy, Debug, Default)]
struct DrainFlags {
    force: bool,
    ignore_daemonsets: bool,
    delete_emptydir_data: bool,
}

/// The filters in kubectl's order (DaemonSet, mirror pod, local storage, unreplicated); the
/// first that refuses deletion decides, otherwise the last.
/// `daemonset_exists` answers whether the pod's DaemonSet is still there (Err: the GET's error).
fn judge(pod: &Pod, flags: DrainFlags, daemonset_exists: &mut dyn FnMut(&str) -> Result<(), String>) -> Verdict {
    let finished = pod.is_terminal();
    let controller = pod.metadata.owner_references.iter().find(|o| o.controller == Some(true));
    let daemonset = match controller {
        Some(c) if c.kind == "DaemonSet" && !finished => match daemonset_exists(&c.name) {
            Err(e) if flags.force && e.contains("not found") => Verdict::Warn(true, e),
            Err(e) => Verdict::Fail(e),
            Ok(()) if !flags.ignore_daemonsets => Verdict::Fail(DAEMONSET_FATAL.into()),
            Ok(()) => Verdict::Warn(false, DAEMONSET_WARNING.into()),
        },
        _ => Verdict::Delete,
    };
    if !daemonset.deletes() {
        return daemonset;
    }
    if pod.metadata.annotations.contains_key(crate::apiserver::admission::MIRROR_POD_ANNOTATION) {
        return Verdict::Skip;
    }
    let local = pod.spec.volumes.iter().any(|v| v.get("emptyDir").is_some());
    if local && !finished && !flags.delete_emptydir_data {
        return Verdict::Fail(LOCAL_STORAGE_FATAL.into());
    }
    // A later filter's verdict replaces an earlier warning, as in kubectl.
    match (finished || controller.is_some(), flags.force) {
        (true, _) => Verdict::Delete,
        (false, true) => Verdict::Warn(true, UNMANAGED_WARNING.into()),
        (false, false) => Verdict::Fail(UNMANAGED_FATAL.into()),
    }
}

/// Groups `ns/name` by message, in the order messages first appear.
fn group(items: &[(String, String)]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (msg, pod) in items {
        match groups.iter_mut().find(|(m, _)| m == msg) {
            Some((_, pods)) => pods.push(pod.clone()),
            None => groups.push((msg.clone(), vec![pod.clone()])),
        }
    }
    groups
}

/// Go's aggregate error text: one message alone, several in brackets.
fn aggregate(messages: &[String]) -> String {
    if messages.len() == 1 { messages[0].clone() } else { format!("[{}]", messages.join(", ")) }
}

/// The pods `drain` would delete from `node`, its warnings, or why it refuses.
fn pods_for_deletion(
    cluster: &mut Cluster,
    node: &str,
    flags: DrainFlags,
    pod_selector: Option<&str>,
) -> Result<(Vec<Pod>, String), String> {
    let mut req = Request::list(Kind::Pod, "").with_fields(FieldSelector::equals("spec.nodeName", node));
    if let Some(sel) = pod_selector {
        req.label_selector = Some(crate::api::meta::parse_selector(sel)?);
    }
    let pods: Vec<Pod> = match cluster.request(req) {
        Ok(Reply::List { items, .. }) => items.iter().filter_map(|o| o.as_pod().cloned()).collect(),
        Ok(_) => Vec::new(),
        Err(status) => return Err(status.message),
    };
    let (mut delete, mut warnings, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    for pod in pods {
        let ns = pod.metadata.namespace.clone();
        let mut exists =
            |ds: &str| cluster.request(Request::get(Kind::DaemonSet, &ns, ds)).map(|_| ()).map_err(|s| s.message);
        let verdict = judge(&pod, flags, &mut exists);
        let id = format!("{}/{}", pod.metadata.namespace, pod.metadata.name);
        match &verdict {
            Verdict::Warn(_, msg) => warnings.push((msg.clone(), id)),
            Verdict::Fail(msg) => errors.push((msg.clone(), id)),
            _ => {}
        }
        if verdict.deletes() {
            delete.push(pod);
        }
    }
    if !errors.is_empty() {
        let messages: Vec<String> = group(&errors)
            .into_iter()
            .map(|(msg, pods)| {
                let prefix = if msg.to_lowercase().starts_with("cannot delete") { "" } else { "cannot delete " };
                format!("{prefix}{msg}: {}", pods.join(", "))
            })
            .collect();
        return Err(aggregate(&messages));
    }
    let warning =
        group(&warnings).into_iter().map(|(msg, pods)| format!("{msg}: {}", pods.join(", "))).collect::<Vec<_>>();
    Ok((delete, warning.join("; ")))
}

/// How long drain waits when `--timeout` is not given. kubectl would wait forever; the sandbox
/// gives up after this much virtual time so the page never hangs.
const DEFAULT_DRAIN_WAIT: Duration = Duration(300_000);

/// How long drain waits before it asks again for an eviction a disruption budget refused.
const EVICTION_RETRY: Duration = Duration(5_000);

/// Where one pod of a drain stands.
enum Drained {
    /// Its eviction is to be asked for (again) at this time.
    Evict(crate::sim::Time),
    /// Evicted or deleted: waiting for the pod of this uid to be gone.
    Waiting(String),
    Done,
}

/// Evicts (or deletes) the pods and waits for each to be gone, printing as kubectl does.
/// kubectl works on every pod at once: an eviction a disruption budget refuses (429) is asked
/// for again every 5 seconds, and every pod evicted is looked for once a second until it is
/// gone (or replaced by a new pod of the same name).
fn evict_and_wait(
    cluster: &mut Cluster,
    args: &Args,
    pods: &[Pod],
    timeout: Duration,
    dry: DryRun,
    out: &mut Output,
) -> Result<(), String> {
    let grace = args.get("grace-period").and_then(|g| g.parse::<i64>().ok()).filter(|g| *g >= 0);
    let disable_eviction = args.has("disable-eviction");
    let done_word = if disable_eviction { "deleted" } else { "evicted" };
    let mut state: Vec<Drained> = pods.iter().map(|_| Drained::Evict(cluster.now())).collect();
    let mut errors = Vec::new();
    let mut dry_done: Vec<String> = Vec::new();
    let deadline = cluster.now() + timeout;
    loop {
        for (pod, st) in pods.iter().zip(state.iter_mut()) {
            let (ns, name) = (pod.metadata.namespace.as_str(), pod.metadata.name.as_str());
            let Drained::Evict(at) = *st else { continue };
            if at > cluster.now() {
                continue;
            }
            let result = if disable_eviction {
                let mut req = Request::delete(Kind::Pod, ns, name);
                req.grace_period_seconds = grace;
                req.dry_run = dry == DryRun::Server;
                cluster.request(req)
            } else {
                out.stdout.push_str(&format!("evicting pod {ns}/{name}{}\n", dry.suffix()));
                let mut req = Request::evict(ns, name, grace);
                req.dry_run = dry == DryRun::Server;
                cluster.request(req)
            };
            *st = match result {
                Ok(_) if dry == DryRun::Server => {
                    dry_done.push(format!("pod/{name} {done_word}{}\n", dry.suffix()));
                    Drained::Done
                }
                Ok(_) => Drained::Waiting(pod.metadata.uid.clone()),
                Err(status) if status.reason == "NotFound" => Drained::Done,
                Err(status) if status.code == 429 => {
                    // kubectl writes this to stderr; in a terminal it shows among the others.
                    out.stdout.push_str(&format!(
                        "error when evicting pods/\"{name}\" -n \"{ns}\" (will retry after 5s): {}\n",
                        status.message
                    ));
                    Drained::Evict(cluster.now() + EVICTION_RETRY)
                }
                Err(status) => {
                    errors.push(format!("error when evicting pods/\"{name}\" -n \"{ns}\": {}", status.message));
                    Drained::Done
                }
            };
        }
        for line in dry_done.drain(..) {
            out.stdout.push_str(&line);
        }
        for (pod, st) in pods.iter().zip(state.iter_mut()) {
            let Drained::Waiting(uid) = st else { continue };
            let (ns, name) = (&pod.metadata.namespace, &pod.metadata.name);
            let gone = match cluster.request(Request::get(Kind::Pod, ns, name)) {
                Ok(reply) => reply.object().is_none_or(|o| o.meta().uid != *uid),
                Err(status) => status.code == 404,
            };
            if gone {
                out.stdout.push_str(&format!("pod/{name} {done_word}\n"));
                *st = Drained::Done;
            }
        }
        if state.iter().all(|s| matches!(s, Drained::Done)) || cluster.now() >= deadline {
            break;
        }
        cluster.advance(Duration::seconds(1).min(deadline.since(cluster.now())));
    }
    for (pod, st) in pods.iter().zip(&state) {
        let (ns, name) = (&pod.metadata.namespace, &pod.metadata.name);
        match st {
            Drained::Evict(_) => errors
                .push(format!("error when evicting pods/\"{name}\" -n \"{ns}\": global timeout reached: {timeout}")),
            Drained::Waiting(_) => errors
                .push(format!("error when waiting for pod \"{name}\" terminating: global timeout reached: {timeout}")),
            Drained::Done => {}
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(aggregate(&errors)) }
}

/// `kubectl drain NODE [--ignore-daemonsets] [--delete-emptydir-data] [--force] [--grace-period]
/// [--timeout] [--pod-selector] [--disable-eviction] [--dry-run]`.
pub(super) fn drain(cluster: &mut Cluster, args: &Args) -> Output {
    if args.positionals.is_empty() && args.get("selector").is_none() {
        return usage_error("drain", "USAGE: drain NODE [flags]");
    }
    if !args.positionals.is_empty() && args.get("selector").is_some() {
        return usage_error("drain", "cannot specify both a node name and a --selector option");
    }
    let dry = match DryRun::from_args(args) {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    let timeout = match args.duration("timeout", "drain") {
        Ok(Some(d)) if d != Duration::ZERO => d,
        Ok(_) => DEFAULT_DRAIN_WAIT,
        Err(e) => return Output::err(e),
    };
    if let Some(sel) = args.get("pod-selector") {
        if crate::api::meta::parse_selector(sel).is_err() {
            return Output::err("error: --pod-selector=<pod_selector> must be a valid label selector");
        }
    }
    let mut out = Output::default();
    if args.has("delete-local-data") {
        out.stderr.push_str("Flag --delete-local-data has been deprecated, This option is deprecated and will be deleted. Use --delete-emptydir-data.\n");
    }
    let flags = DrainFlags {
        force: args.has("force"),
        ignore_daemonsets: args.has("ignore-daemonsets"),
        delete_emptydir_data: args.has("delete-emptydir-data") || args.has("delete-local-data"),
    };
    let nodes = match nodes_named(cluster, args, &args.positionals) {
        Ok(n) => n,
        Err(e) => {
            out.stderr.push_str(&e.stderr);
            out.code = 1;
            return out;
        }
    };
    cordon_nodes(cluster, &nodes, true, dry, &mut out);
    let mut failed = Vec::new();
    for node in &nodes {
        let name = &node.metadata.name;
        let result = pods_for_deletion(cluster, name, flags, args.get("pod-selector")).and_then(|(pods, warning)| {
            if !warning.is_empty() {
                // kubectl writes this to stderr; in a terminal it shows between the lines around it.
                out.stdout.push_str(&format!("Warning: {warning}\n"));
            }
            if dry == DryRun::Client {
                for pod in &pods {
                    out.stdout.push_str(&format!(
                        "evicting pod {}/{} (dry run)\n",
                        pod.metadata.namespace, pod.metadata.name
                    ));
                }
                return Ok(());
            }
            evict_and_wait(cluster, args, &pods, timeout, dry, &mut out).inspect_err(|e| {
                // The node's pods as the API server lists them now: those of the drain still there.
                let on_node = Request::list(Kind::Pod, "").with_fields(FieldSelector::equals("spec.nodeName", name));
                let listed: Vec<(String, String)> = match cluster.request(on_node) {
                    Ok(Reply::List { items, .. }) => {
                        items.iter().map(|o| (o.namespace().to_string(), o.name().to_string())).collect()
                    }
                    _ => Vec::new(),
                };
                let left: Vec<String> = pods
                    .iter()
                    .filter(|p| listed.iter().any(|(ns, n)| *ns == p.metadata.namespace && *n == p.metadata.name))
                    .map(|p| format!("pod/{}\n", p.metadata.name))
                    .collect();
                if !left.is_empty() {
                    out.stderr.push_str(&format!(
                        "There are pending pods in node \"{name}\" when an error occurred: {e}\n{}",
                        left.concat()
                    ));
                }
            })
        });
        match result {
            Ok(()) => out.stdout.push_str(&format!("node/{name} drained{}\n", dry.suffix())),
            Err(e) => {
                out.stderr.push_str(&format!(
                    "error: unable to drain node \"{name}\" due to error: {e}, continuing command...\n"
                ));
                failed.push((name.clone(), e));
            }
        }
    }
    if !failed.is_empty() {
        out.stderr.push_str("There are pending nodes to be drained:\n");
        for (name, _) in &failed {
            out.stderr.push_str(&format!(" {name}\n"));
        }
        for (_, e) in &failed {
            out.stderr.push_str(&format!("{e}\n"));
        }
        out.code = 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::OwnerReference;

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint { key: key.into(), value: value.into(), effect: effect.into(), time_added: None }
    }

    #[test]
    fn taint_specs_parse_in_all_three_forms() {
        assert_eq!(parse_taint("dedicated=gpu:NoSchedule").unwrap(), taint("dedicated", "gpu", "NoSchedule"));
        assert_eq!(parse_taint("dedicated:NoExecute").unwrap(), taint("dedicated", "", "NoExecute"));
        assert_eq!(parse_taint("dedicated").unwrap(), taint("dedicated", "", ""));
        assert_eq!(
            parse_taint("a:Sometimes").unwrap_err(),
            "invalid taint effect: Sometimes, unsupported taint effect"
        );
        assert_eq!(parse_taint("a=b=c:NoSchedule").unwrap_err(), "invalid taint spec: a=b=c:NoSchedule");
        assert!(parse_taint("a=b").unwrap_err().starts_with("invalid taint spec: a=b, name part must consist of"));
    }

    #[test]
    fn adding_a_taint_needs_an_effect_and_removing_matches_key_and_effect() {
        let specs: Vec<String> = ["x=y", "old:NoSchedule-"].iter().map(|s| s.to_string()).collect();
        assert!(parse_taints(&specs[..1]).unwrap_err().starts_with("invalid taint spec: x=y, name part"));
        let (add, remove) = parse_taints(&specs[1..]).unwrap();
        assert!(add.is_empty());
        assert_eq!(remove, [taint("old", "", "NoSchedule")]);
    }

    #[test]
    fn reorganizing_taints_reports_tainted_untainted_and_refuses_duplicates() {
        let old = vec![taint("a", "1", "NoSchedule")];
        let (op, taints) = reorganize("n", &old, &[taint("b", "", "NoExecute")], &[], false).unwrap();
        assert_eq!(op, "tainted");
        assert_eq!(taints, [taint("b", "", "NoExecute"), taint("a", "1", "NoSchedule")]);
        let (op, taints) = reorganize("n", &old, &[], &[taint("a", "", "")], false).unwrap();
        assert_eq!((op, taints.len()), ("untainted", 0));
        assert_eq!(
            reorganize("n", &old, &[taint("a", "2", "NoSchedule")], &[], false).unwrap_err(),
            "node n already has a taint(s) with same effect(s) and --overwrite is false"
        );
        assert_eq!(
            reorganize("n", &old, &[], &[taint("z", "", "NoSchedule")], false).unwrap_err(),
            "taint \"z:NoSchedule\" not found"
        );
        let (op, taints) = reorganize("n", &old, &[taint("a", "2", "NoSchedule")], &[], true).unwrap();
        assert_eq!((op, taints), ("modified", vec![taint("a", "2", "NoSchedule")]));
    }

    fn pod(owner: Option<&str>) -> Pod {
        let mut p = Pod::default();
        p.metadata.namespace = "default".into();
        p.metadata.name = "p".into();
        if let Some(kind) = owner {
            p.metadata.owner_references.push(OwnerReference {
                kind: kind.into(),
                name: "owner".into(),
                controller: Some(true),
                ..Default::default()
            });
        }
        p
    }

    #[test]
    fn drain_refuses_daemonset_pods_unless_ignored_and_then_leaves_them() {
        let mut exists = |_: &str| Ok(());
        let flags = DrainFlags::default();
        assert_eq!(judge(&pod(Some("DaemonSet")), flags, &mut exists), Verdict::Fail(DAEMONSET_FATAL.into()));
        let flags = DrainFlags { ignore_daemonsets: true, ..flags };
        assert_eq!(judge(&pod(Some("DaemonSet")), flags, &mut exists), Verdict::Warn(false, DAEMONSET_WARNING.into()));
        assert_eq!(judge(&pod(Some("ReplicaSet")), flags, &mut exists), Verdict::Delete);
    }

    #[test]
    fn drain_deletes_unmanaged_pods_only_with_force() {
        let mut exists = |_: &str| Ok(());
        assert_eq!(judge(&pod(None), DrainFlags::default(), &mut exists), Verdict::Fail(UNMANAGED_FATAL.into()));
        let force = DrainFlags { force: true, ..Default::default() };
        assert_eq!(judge(&pod(None), force, &mut exists), Verdict::Warn(true, UNMANAGED_WARNING.into()));
    }

    #[test]
    fn mirror_pods_are_skipped_silently() {
        let mut p = pod(Some("Node"));
        p.metadata.annotations.insert(crate::apiserver::admission::MIRROR_POD_ANNOTATION.into(), "x".into());
        assert_eq!(judge(&p, DrainFlags::default(), &mut |_| Ok(())), Verdict::Skip);
    }

    #[test]
    fn refusals_group_pods_by_reason_with_cannot_delete_in_front() {
        let items = vec![
            (DAEMONSET_FATAL.to_string(), "kube-system/a".to_string()),
            (UNMANAGED_FATAL.to_string(), "default/b".to_string()),
            (DAEMONSET_FATAL.to_string(), "kube-system/c".to_string()),
        ];
        let groups = group(&items);
        assert_eq!(
            groups[0],
            (DAEMONSET_FATAL.to_string(), vec!["kube-system/a".to_string(), "kube-system/c".to_string()])
        );
        assert_eq!(aggregate(&["x".into()]), "x");
        assert_eq!(aggregate(&["x".into(), "y".into()]), "[x, y]");
    }
}
