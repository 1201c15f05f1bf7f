//! `kubectl set image TYPE/NAME CONTAINER=IMAGE`: read the object, change the images in its pod
//! template (or a pod's spec), and send a strategic merge patch holding only the changed
//! containers — for a Deployment that starts a rolling update, as on a real cluster.

use super::Output;
use super::args::Args;
use super::create::{CHANGE_CAUSE, DryRun, NO_RESOURCES, begin_write, change_cause, fetch_objects, print_object};
use crate::api::Kind;
use crate::apiserver::Request;
use crate::apiserver::patch::PatchType;
use crate::cluster::Cluster;
use crate::util::json_macro::json;
use serde_json::Value;
use std::collections::BTreeMap;

const SET_HELP: &str = "Configure application resources.\n\n These commands help you make changes to existing application resources.\n\nAvailable Commands:\n  env              Update environment variables on a pod template\n  image            Update the image of a pod template\n  resources        Update resource requests/limits on objects with pod templates\n  selector         Set the selector on a resource\n  serviceaccount   Update the service account of a resource\n  subject          Update the user, group, or service account in a role binding or cluster role binding\n\nUsage:\n  kubectl set SUBCOMMAND [options]\n\nUse \"kubectl set <command> --help\" for more information about a given command.\nUse \"kubectl options\" for a list of global command-line options (applies to all commands).\n";

/// `kubectl set SUBCOMMAND ...`.
pub(super) fn set(cluster: &mut Cluster, args: &Args) -> Output {
    match args.positionals.first().map(String::as_str) {
        None => Output::ok(SET_HELP.into()),
        Some("image") => set_image(cluster, args),
        Some(sub @ ("env" | "resources" | "selector" | "serviceaccount" | "sa" | "subject")) => {
            Output::err(format!("error: kubectl set {sub} is not supported in this sandbox"))
        }
        Some(other) => Output::err(format!(
            "error: unknown command \"{other}\" for \"kubectl set\"\n\nRun 'kubectl set --help' for usage."
        )),
    }
}

/// Where the pod template lives in each kind's JSON (`None`: not a pod or pod template).
fn pod_spec_path(kind: Kind) -> Option<&'static [&'static str]> {
    match kind {
        Kind::Pod => Some(&["spec"]),
        Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet | Kind::StatefulSet | Kind::Job => {
            Some(&["spec", "template", "spec"])
        }
        _ => None,
    }
}

/// Sets images in a pod spec's containers and init containers. Returns the strategic merge
/// patch of the pod spec (changed containers by name) and the names no container matched.
fn update_images(spec: &Value, images: &BTreeMap<String, String>) -> (Value, Vec<String>) {
    let mut patch = serde_json::Map::new();
    let mut missing = Vec::new();
    let mut found: BTreeMap<&str, bool> = crate::util::sort::btree_map(images.keys().map(|k| (k.as_str(), false)));
    for list in ["initContainers", "containers"] {
        let mut changed = Vec::new();
        for c in spec.get(list).and_then(Value::as_array).into_iter().flatten() {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            if let Some((key, image)) = images.get_key_value(name).or_else(|| images.get_key_value("*")) {
                found.insert(key.as_str(), true);
                if c.get("image").and_then(Value::as_str) != Some(image.as_str()) {
                    changed.push(json!({"image": image, "name": name}));
                }
            }
        }
        if !changed.is_empty() {
            patch.insert(list.into(), Value::Array(changed));
        }
    }
    for (name, hit) in found {
        if !hit {
            missing.push(name.to_string());
        }
    }
    (Value::Object(patch), missing)
}

/// Wraps a pod-spec patch at `path` (`spec.template.spec` for workloads).
fn nest(path: &[&str], inner: Value) -> Value {
    path.iter().rev().fold(inner, |acc, key| json!({ *key: acc }))
}

fn set_image(cluster: &mut Cluster, args: &Args) -> Output {
    let mut resources = Vec::new();
    let mut pairs = Vec::new();
    for word in &args.positionals[1..] {
        if word.contains('=') {
            pairs.push(word.clone());
        } else if !pairs.is_empty() {
            return Output::err(format!("error: all resources must be specified before image changes: {word}"));
        } else {
            resources.push(word.clone());
        }
    }
    let mut images = BTreeMap::new();
    let mut invalid = Vec::new();
    for p in &pairs {
        match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                images.insert(k.to_string(), v.to_string());
            }
            _ => invalid.push(p.clone()),
        }
    }
    if !invalid.is_empty() {
        return Output::err(format!("error: invalid image format: {}", invalid.join(", ")));
    }
    let mut problems = Vec::new();
    if args.has("all") && args.get("selector").is_some() {
        problems.push("cannot set --all and --selector at the same time".to_string());
    }
    if resources.is_empty() {
        return Output::err(NO_RESOURCES);
    }
    if images.is_empty() {
        problems.push("at least one image update is required".into());
    } else if images.len() > 1 && images.contains_key("*") {
        problems.push(
            "all containers are already specified by *, but saw more than one container_name=container_image pairs"
                .into(),
        );
    }
    match problems.len() {
        0 => {}
        1 => return Output::err(format!("error: {}", problems[0])),
        _ => return Output::err(format!("error: [{}]", problems.join(", "))),
    }
    let (dry, mut out) = match begin_write(args) {
        Ok(started) => started,
        Err(out) => return out,
    };
    let objects = match fetch_objects(cluster, args, &resources, "set image", &mut out) {
        Ok(o) => o,
        Err(e) => return e,
    };
    for object in objects {
        let kind = object.kind();
        let Some(path) = pod_spec_path(kind) else {
            out.stderr.push_str(&format!(
                "error: {}/{} the object is not a pod or does not have a pod template: *v1.{}\n",
                kind.info().resource,
                object.name(),
                kind.info().kind
            ));
            out.code = 1;
            continue;
        };
        let live = object.to_json_value();
        let spec = path.iter().fold(&live, |v, key| v.get(*key).unwrap_or(&Value::Null));
        let (spec_patch, missing) = update_images(spec, &images);
        for name in missing {
            out.stderr.push_str(&format!("error: unable to find container named \"{name}\"\n"));
            out.code = 1;
        }
        if spec_patch.as_object().is_none_or(|m| m.is_empty()) {
            continue; // no changes: kubectl sends nothing and prints nothing
        }
        let mut patch = nest(path, spec_patch);
        if let Some(cause) = change_cause("set", args) {
            patch["metadata"] = json!({"annotations": {CHANGE_CAUSE: cause}});
        }
        let result = if dry == DryRun::Client {
            crate::apiserver::patch::apply(&live, PatchType::Strategic, &patch).unwrap_or(live)
        } else {
            let mut req = Request::patch(kind, object.namespace(), object.name(), PatchType::Strategic, patch)
                .managed_by("kubectl-set");
            req.dry_run = dry == DryRun::Server;
            match cluster.request(req) {
                Ok(reply) => reply.object().map(|o| o.to_json_value()).unwrap_or(Value::Null),
                Err(status) => {
                    out.stderr.push_str(&format!(
                        "error: failed to patch image update to pod template: {}\n",
                        status.message
                    ));
                    out.code = 1;
                    continue;
                }
            }
        };
        out.stdout.push_str(&print_object(args, kind, &result, "image updated", dry));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn images(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn only_containers_whose_image_changes_are_in_the_patch() {
        let spec =
            json!({"containers": [{"name": "nginx", "image": "nginx:1.25"}, {"name": "log", "image": "busybox"}]});
        let (patch, missing) = update_images(&spec, &images(&[("nginx", "nginx:1.26"), ("log", "busybox")]));
        assert_eq!(patch, json!({"containers": [{"image": "nginx:1.26", "name": "nginx"}]}));
        assert!(missing.is_empty());
    }

    #[test]
    fn a_star_sets_every_container_and_unknown_names_are_reported() {
        let spec = json!({"initContainers": [{"name": "init", "image": "busybox"}], "containers": [{"name": "a", "image": "x"}]});
        let (patch, _) = update_images(&spec, &images(&[("*", "y")]));
        assert_eq!(
            patch,
            json!({"initContainers": [{"image": "y", "name": "init"}], "containers": [{"image": "y", "name": "a"}]})
        );
        let (_, missing) = update_images(&spec, &images(&[("nope", "y")]));
        assert_eq!(missing, ["nope"]);
    }

    #[test]
    fn the_patch_is_nested_under_the_pod_template() {
        let path = pod_spec_path(Kind::Deployment).unwrap();
        assert_eq!(nest(path, json!({"containers": []})), json!({"spec": {"template": {"spec": {"containers": []}}}}));
    }
}
