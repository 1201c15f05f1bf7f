//! `kubectl apply --server-side`: sends each manifest whole as an apply patch under a field
//! manager (`kubectl` unless `--field-manager`), and first moves an object that client-side
//! apply managed over to server-side apply, as kubectl does.

use super::args::Args;
use super::manifest::Document;
use super::{CSA_MANAGER, LAST_APPLIED, document_namespace};
use crate::api::{ManagedFieldsEntry, Object};
use crate::apiserver::field_manager::apply_set;
use crate::apiserver::patch::PatchType;
use crate::apiserver::{Request, Status};
use crate::cluster::Cluster;
use crate::util::json_macro::json;
use serde_json::Value;
use std::sync::Arc;

/// The field manager kubectl applies as by default.
pub const DEFAULT_MANAGER: &str = "kubectl";

/// Whether `--server-side` (or `--server-side=true`) was given.
pub fn wanted(args: &Args) -> bool {
    args.has("server-side")
}

/// The flag combinations kubectl refuses before sending anything.
pub fn check_flags(args: &Args) -> Result<(), String> {
    let server_side = wanted(args);
    if args.has("force-conflicts") && !server_side {
        return Err("error: --force-conflicts only works with --server-side".into());
    }
    if server_side && matches!(args.get("dry-run"), Some("client") | Some("true")) {
        return Err(
            "error: --dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)".into()
        );
    }
    if args.has("field-manager") && args.get("field-manager").is_none_or(str::is_empty) {
        return Err("error: --field-manager cannot be empty".into());
    }
    Ok(())
}

const CONFLICT_HELP: &str = "Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `--force-conflicts` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts";

pub fn apply_one(cluster: &mut Cluster, args: &Args, source: &str, doc: &Document) -> Result<String, String> {
    let kind = doc.kind;
    let namespace = document_namespace(args, doc)?;
    let name = doc.name().to_string();
    let type_name = format!("{}/{name}", kind.qualified_singular());
    if name.is_empty() {
        return Err(format!(
            "error: error when retrieving current configuration of \"{source}\": resource name may not be empty"
        ));
    }
    let manager = args.get("field-manager").unwrap_or(DEFAULT_MANAGER).to_string();
    let dry_run = args.get("dry-run") == Some("server");
    if let Ok(Some(live)) = cluster.request(Request::get(kind, &namespace, &name)).map(|r| r.object()) {
        upgrade_client_side_fields(cluster, &live, &manager, dry_run);
    }
    let mut req = Request::patch(kind, &namespace, &name, PatchType::Apply, doc.body.clone()).managed_by(&manager);
    req.force = args.has("force-conflicts");
    req.dry_run = dry_run;
    let suffix = if dry_run { " (server dry run)" } else { "" };
    match cluster.request(req) {
        Ok(_) => Ok(format!("{type_name} serverside-applied{suffix}")),
        Err(status) if status.code == 409 && status.message.starts_with("Apply failed") => {
            Err(format!("error: {}\n{CONFLICT_HELP}", status.message))
        }
        Err(status) => Err(error_text(&status, source)),
    }
}

fn error_text(status: &Status, source: &str) -> String {
    if status.reason == "Invalid" {
        status.kubectl_message()
    } else {
        format!("Error from server ({}): error when applying \"{source}\": {}", status.reason, status.message)
    }
}

/// An object last applied client-side keeps its fields under `kubectl-client-side-apply`;
/// switching to server-side apply, kubectl hands the fields of its last-applied
/// configuration to the server-side manager (one JSON patch of `managedFields`), so fields
/// dropped from the manifest later are removed rather than left behind.
fn upgrade_client_side_fields(cluster: &mut Cluster, live: &Arc<Object>, manager: &str, dry_run: bool) {
    let meta = live.meta();
    let entries = &meta.managed_fields;
    let is_csa =
        |e: &ManagedFieldsEntry| e.manager == CSA_MANAGER && e.operation == "Update" && e.subresource.is_empty();
    let Some(csa) = entries.iter().find(|e| is_csa(e)) else { return };
    let Some(last) = meta.annotations.get(LAST_APPLIED).and_then(|s| serde_json::from_str::<Value>(s).ok()) else {
        return;
    };
    let mut applied = apply_set(live.kind(), &last);
    let mut upgraded: Vec<ManagedFieldsEntry> = Vec::new();
    for e in entries.iter().filter(|e| !is_csa(e)) {
        if e.manager == manager && e.is_apply() {
            applied = applied.union(&e.fields_v1);
        } else {
            upgraded.push(e.clone());
        }
    }
    upgraded.insert(
        0,
        ManagedFieldsEntry {
            manager: manager.to_string(),
            operation: "Apply".into(),
            fields_v1: Arc::new(applied),
            time: csa.time,
            ..csa.clone()
        },
    );
    let patch = json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": meta.resource_version},
        {"op": "replace", "path": "/metadata/managedFields", "value": upgraded},
    ]);
    let mut req = Request::patch(live.kind(), &meta.namespace, &meta.name, PatchType::Json, patch).managed_by(manager);
    req.dry_run = dry_run;
    // If the object changed meanwhile, the apply goes ahead with the fields as they are.
    let _ = cluster.request(req);
}
