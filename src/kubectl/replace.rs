//! `kubectl replace -f FILE`: PUT each object from the file over the stored one (a GET first
//! supplies the resourceVersion when the file has none), or with `--force` delete it and
//! create it again.

use super::Output;
use super::args::Args;
use super::create::{DryRun, check_output, print_object};
use crate::apiserver::{Body, Request, Verb};
use crate::cluster::Cluster;
use crate::sim::Duration;
use crate::util::json_macro::json;
use serde_json::Value;

/// `kubectl replace -f FILE [--force] [--grace-period] [--dry-run] [-o]`.
pub(super) fn replace(cluster: &mut Cluster, args: &Args, io: &super::Io) -> Output {
    if args.all("filename").is_empty() {
        return Output::err("error: must specify --filename to replace");
    }
    let docs = match super::read_documents(args, io, "replace") {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    let dry = match DryRun::from_args(args) {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    if let Err(e) = check_output(args) {
        return Output::err(e);
    }
    let flag_ns = super::namespace_flag(args);
    let mut out = Output::default();
    for (source, doc) in docs {
        let kind = doc.kind;
        let name = doc.name().to_string();
        let namespace = if !kind.info().namespaced {
            String::new()
        } else if doc.namespace().is_empty() {
            flag_ns.clone()
        } else {
            doc.namespace().to_string()
        };
        let mut body = doc.body.clone();
        if args.has("force") {
            let mut del = Request::delete(kind, &namespace, &name);
            del.grace_period_seconds = args.get("grace-period").and_then(|g| g.parse().ok());
            del.dry_run = dry != DryRun::None;
            match cluster.request(del) {
                Ok(_) => out.stdout.push_str(&format!("{} \"{name}\" deleted\n", kind.qualified_singular())),
                Err(status) if status.reason == "NotFound" => {}
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                    continue;
                }
            }
            // kubectl waits for the old object to be gone before creating the new one, asking
            // for it once a second until the API server answers NotFound.
            let deadline = cluster.now() + Duration::seconds(120);
            while dry == DryRun::None
                && cluster.request(Request::get(kind, &namespace, &name)).is_ok()
                && cluster.now() < deadline
            {
                cluster.advance(Duration::seconds(1).min(deadline.since(cluster.now())));
            }
            if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            let result = if dry == DryRun::Client {
                Ok(body)
            } else {
                let mut req = Request::new(Verb::Create, kind, &namespace, "").managed_by("kubectl-replace");
                req.body = Some(Body::Json(body));
                req.dry_run = dry == DryRun::Server;
                cluster.request(req).map(|r| r.object().map(|o| o.to_json_value()).unwrap_or(Value::Null))
            };
            match result {
                Ok(created) => out.stdout.push_str(&print_object(args, kind, &created, "replaced", dry)),
                Err(status) => {
                    out.stderr.push_str(&format!(
                        "Error from server ({}): error when creating \"{source}\": {}\n",
                        status.reason, status.message
                    ));
                    out.code = 1;
                }
            }
            continue;
        }
        // Without a resourceVersion in the file, kubectl reads the live one to replace it.
        let has_rv = body.pointer("/metadata/resourceVersion").and_then(Value::as_str).is_some_and(|s| !s.is_empty());
        if !has_rv {
            match cluster.request(Request::get(kind, &namespace, &name)) {
                Ok(reply) => {
                    let rv = reply.object().map(|o| o.meta().resource_version.clone()).unwrap_or_default();
                    if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
                        meta.insert("resourceVersion".into(), json!(rv));
                    }
                }
                Err(status) => {
                    out.stderr.push_str(&format!(
                        "Error from server ({}): error when replacing \"{source}\": {}\n",
                        status.reason, status.message
                    ));
                    out.code = 1;
                    continue;
                }
            }
        }
        if dry == DryRun::Client {
            out.stdout.push_str(&print_object(args, kind, &body, "replaced", dry));
            continue;
        }
        let mut req = Request::new(Verb::Update, kind, &namespace, &name).managed_by("kubectl-replace");
        req.body = Some(Body::Json(body));
        req.dry_run = dry == DryRun::Server;
        match cluster.request(req) {
            Ok(reply) => {
                let replaced = reply.object().map(|o| o.to_json_value()).unwrap_or(Value::Null);
                out.stdout.push_str(&print_object(args, kind, &replaced, "replaced", dry));
            }
            Err(status) if status.reason == "Invalid" => {
                out.stderr.push_str(&(status.kubectl_message() + "\n"));
                out.code = 1;
            }
            Err(status) => {
                out.stderr.push_str(&format!(
                    "Error from server ({}): error when replacing \"{source}\": {}\n",
                    status.reason, status.message
                ));
                out.code = 1;
            }
        }
    }
    out
}
