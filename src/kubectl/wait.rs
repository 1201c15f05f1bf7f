//! `kubectl wait`: lets virtual time run until each object meets a condition — a status
//! condition (`--for=condition=Available`, `=False` for another status), its deletion
//! (`--for=delete`) or a JSONPath value (`--for=jsonpath='{.status.phase}'=Running`) — or the
//! timeout (30 s unless `--timeout`) passes. Objects are named (`pod/web`, `pods a b`) or
//! selected (`pods -l app=web`, `pods --all`), and waited for one after another.

use super::args::Args;
use super::jsonpath::{Template, relaxed, text_of};
use super::object_watch::ObjectWatch;
use super::{Output, namespace_flag, resolve_targets};
use crate::api::{Kind, Object};
use crate::apiserver::{Reply, Request};
use crate::cluster::Cluster;
use crate::sim::Duration;
use std::sync::Arc;

/// How long kubectl waits when no `--timeout` is given.
const DEFAULT_TIMEOUT: Duration = Duration::seconds(30);

/// What the objects are waited for.
enum Condition {
    Deleted,
    /// A status condition of this type with this status (compared without case).
    Status {
        type_: String,
        status: String,
    },
    /// A JSONPath's value, or any value at all.
    JsonPath {
        template: Template,
        value: Option<String>,
    },
}

impl Condition {
    fn parse(text: &str) -> Result<Condition, String> {
        if text.eq_ignore_ascii_case("delete") {
            return Ok(Condition::Deleted);
        }
        if let Some(rest) = text.strip_prefix("condition=") {
            let (type_, status) = rest.split_once('=').unwrap_or((rest, "true"));
            return Ok(Condition::Status { type_: type_.to_string(), status: status.to_string() });
        }
        if let Some(rest) = text.strip_prefix("jsonpath=") {
            // `{.status.phase}=Running`: the expression ends at its closing brace.
            let (expr, value) = match rest.rfind('}') {
                Some(end) => (&rest[..=end], rest[end + 1..].strip_prefix('=')),
                None => (rest, None),
            };
            if expr.is_empty() {
                return Err("error: jsonpath expression cannot be empty".into());
            }
            let template = relaxed(expr).and_then(|e| Template::parse(&e)).map_err(|e| format!("error: {e}"))?;
            return Ok(Condition::JsonPath { template, value: value.map(str::to_string) });
        }
        Err(format!("error: unrecognized condition: \"{text}\""))
    }

    /// Whether `object` (None: it is gone) meets the condition.
    fn met(&self, object: Option<&Object>) -> bool {
        match (self, object) {
            (Condition::Deleted, object) => object.is_none(),
            (_, None) => false,
            (Condition::Status { type_, status }, Some(o)) => {
                let value = o.to_json_value();
                let conditions = value.pointer("/status/conditions").and_then(|c| c.as_array());
                conditions.into_iter().flatten().any(|c| {
                    let field = |k: &str| c.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
                    field("type").eq_ignore_ascii_case(type_) && field("status").eq_ignore_ascii_case(status)
                })
            }
            (Condition::JsonPath { template, value }, Some(o)) => {
                let root = o.to_json_value();
                let Ok(found) = template.values(&root) else { return false };
                match value {
                    None => !found.is_empty(),
                    Some(want) => found.len() == 1 && text_of(found[0]) == *want,
                }
            }
        }
    }
}

/// `kubectl wait`.
pub fn run(cluster: &mut Cluster, args: &Args) -> Output {
    let Some(for_) = args.get("for") else {
        return Output::err("error: --for must be specified");
    };
    let condition = match Condition::parse(for_) {
        Ok(c) => c,
        Err(e) => return Output::err(e),
    };
    // kubectl waits a week for a negative timeout: more than the sandbox runs for a command.
    if args.negative("timeout") {
        let text = args.get("timeout").unwrap_or_default();
        return Output::err(format!(
            "{} (a negative timeout waits a week)",
            crate::sim::limits::flag_over_cap("timeout", text)
        ));
    }
    let timeout = match args.duration("timeout", "wait") {
        Ok(d) => d.unwrap_or(DEFAULT_TIMEOUT),
        Err(e) => return Output::err(e),
    };
    let namespace = namespace_flag(args);
    let targets = match resolve_targets(&args.positionals) {
        Ok(t) => t,
        Err(e) => return Output::err(e.replace("kubectl get -h", "kubectl wait -h")),
    };
    // The objects, in order: named ones, or those a selector (or --all) finds now.
    let mut objects: Vec<(Kind, String, String)> = Vec::new();
    for (kind, names) in targets {
        let ns = if kind.info().namespaced { namespace.clone() } else { String::new() };
        if names.is_empty() {
            if args.get("selector").is_none() && !args.has("all") {
                return Output::err(format!(
                    "error: resource(s) were provided, but no name was specified\n(resource: {})",
                    kind.info().resource
                ));
            }
            let mut list = Request::list(kind, &ns);
            if let Some(sel) = args.get("selector") {
                match crate::api::meta::parse_selector(sel) {
                    Ok(s) => list.label_selector = Some(s),
                    Err(e) => return Output::err(format!("error: {e}")),
                }
            }
            match cluster.request(list) {
                Ok(Reply::List { items, .. }) => {
                    objects.extend(items.iter().map(|o| (kind, o.namespace().to_string(), o.name().to_string())))
                }
                Ok(_) => {}
                Err(status) => return Output::err(status.kubectl_message()),
            }
        } else {
            for name in names {
                // kubectl fetches named objects before it waits: one already gone is no error
                // when waiting for its deletion, and not waited for at all.
                if matches!(condition, Condition::Deleted)
                    && matches!(cluster.request(Request::get(kind, &ns, &name)), Err(s) if s.code == 404)
                {
                    continue;
                }
                objects.push((kind, ns.clone(), name));
            }
        }
    }
    // Waiting for deletion of what is already gone succeeds at once, silently (kubectl ignores
    // NotFound for `--for=delete`, by name or by selector alike).
    if objects.is_empty() && matches!(condition, Condition::Deleted) {
        return Output::default();
    }
    if objects.is_empty() {
        return Output::err("error: no matching resources found");
    }
    let deadline = cluster.now() + timeout;
    let mut out = Output::default();
    for (kind, ns, name) in objects {
        let get = |cluster: &mut Cluster| -> Result<Option<Arc<Object>>, String> {
            match cluster.request(Request::get(kind, &ns, &name)) {
                Ok(reply) => Ok(reply.object()),
                Err(status) if status.code == 404 => Ok(None),
                Err(status) => Err(status.kubectl_message()),
            }
        };
        let mut current = match get(cluster) {
            Ok(o) => o,
            Err(e) => return Output::err(e),
        };
        // Waiting for a condition on an object that is not there is an error at once.
        if current.is_none() && !matches!(condition, Condition::Deleted) {
            out.stderr.push_str(&format!(
                "Error from server (NotFound): {} \"{name}\" not found\n",
                kind.qualified_resource()
            ));
            out.code = 1;
            return out;
        }
        // Not met yet: kubectl lists and watches the object, looking again at each change.
        let mut watch: Option<ObjectWatch> = None;
        let timed_out = loop {
            if condition.met(current.as_deref()) {
                out.stdout.push_str(&format!("{}/{name} condition met\n", kind.qualified_singular()));
                break false;
            }
            if cluster.now() >= deadline {
                break true;
            }
            let w = match watch.as_mut() {
                Some(w) => w,
                None => match ObjectWatch::open(cluster, kind, &ns, &name) {
                    Ok(w) => {
                        current = w.current.clone();
                        watch.insert(w)
                    }
                    Err(status) => return Output::err(status.kubectl_message()),
                },
            };
            let seen = current.as_ref().map(|o| o.meta().resource_version.clone());
            cluster.step_toward(deadline);
            w.poll(cluster);
            if w.current.as_ref().map(|o| o.meta().resource_version.clone()) != seen {
                current = w.current.clone();
            }
        };
        if let Some(w) = watch {
            w.close(cluster);
        }
        if timed_out {
            out.stderr.push_str(&format!(
                "error: timed out waiting for the condition on {}/{name}\n",
                kind.qualified_resource()
            ));
            out.code = 1;
            return out;
        }
    }
    out
}
