//! `kubectl label` and `kubectl annotate`: read each object (GET, or LIST for `-l`/`--all`),
//! change its labels or annotations locally, and send the difference as a JSON merge patch,
//! as kubectl does; with its messages (`labeled`, `unlabeled`, `not labeled`, `annotated`)
//! and its refusal to overwrite without `--overwrite`.

use super::Output;
use super::args::Args;
use super::create::{CHANGE_CAUSE, DryRun, begin_write, change_cause, fetch_objects, print_object};
use crate::apiserver::Request;
use crate::apiserver::patch::PatchType;
use crate::cluster::Cluster;
use crate::util::json_macro::json;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Which map the command edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Labels,
    Annotations,
}

impl Field {
    fn noun(self) -> &'static str {
        match self {
            Field::Labels => "label",
            Field::Annotations => "annotation",
        }
    }
    fn key(self) -> &'static str {
        match self {
            Field::Labels => "labels",
            Field::Annotations => "annotations",
        }
    }
}

const LABEL_VALUE_ERROR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// apimachinery's IsValidLabelValue.
pub(super) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let ok = value.is_empty()
        || (value.starts_with(alnum) && value.ends_with(alnum) && value.chars().all(|c| alnum(c) || "-_.".contains(c)));
    if !ok {
        errs.push(LABEL_VALUE_ERROR.to_string());
    }
    errs
}

/// The changes a command line asks for: keys to set and keys to remove.
#[derive(Debug, Default, PartialEq)]
struct Changes {
    set: BTreeMap<String, String>,
    remove: Vec<String>,
}

/// Splits label/annotation arguments into changes, with kubectl's errors.
fn parse_changes(field: Field, specs: &[String]) -> Result<Changes, String> {
    let mut changes = Changes::default();
    let mut invalid = Vec::new();
    for spec in specs {
        match field {
            Field::Labels => {
                if spec.contains('=') {
                    let parts: Vec<&str> = spec.split('=').collect();
                    if parts.len() != 2 {
                        return Err(format!("invalid label spec: {spec}"));
                    }
                    let errs = label_value_errors(parts[1]);
                    if !errs.is_empty() {
                        return Err(format!("invalid label value: \"{spec}\": {}", errs.join(";")));
                    }
                    changes.set.insert(parts[0].to_string(), parts[1].to_string());
                } else if let Some(key) = spec.strip_suffix('-') {
                    changes.remove.push(key.to_string());
                } else {
                    return Err(format!("unknown label spec: {spec}"));
                }
            }
            Field::Annotations => {
                if spec.contains('=') && !spec.starts_with('=') {
                    let (k, v) = spec.split_once('=').unwrap_or_default();
                    changes.set.insert(k.to_string(), v.to_string());
                } else if spec.ends_with('-') && spec != "-" {
                    changes.remove.push(spec[..spec.len() - 1].to_string());
                } else {
                    invalid.push(spec.clone());
                }
            }
        }
    }
    if !invalid.is_empty() {
        return Err(format!("invalid annotation format: {}", invalid.join(", ")));
    }
    let both: Vec<&str> = changes.remove.iter().filter(|k| changes.set.contains_key(*k)).map(String::as_str).collect();
    if !both.is_empty() {
        return Err(match field {
            Field::Labels => "can not both modify and remove a label in the same command".to_string(),
            Field::Annotations => format!(
                "can not both modify and remove the following annotation(s) in the same command: {}",
                both.join(", ")
            ),
        });
    }
    Ok(changes)
}

/// Applies the changes to a copy of `current`; refuses to overwrite without `--overwrite`.
fn apply_changes(
    field: Field,
    current: &BTreeMap<String, String>,
    changes: &Changes,
    overwrite: bool,
) -> Result<BTreeMap<String, String>, String> {
    if !overwrite {
        let taken: Vec<String> = changes
            .set
            .keys()
            .filter(|k| !(field == Field::Annotations && *k == "kubernetes.io/change-cause"))
            .filter_map(|k| current.get(k).map(|v| format!("'{k}' already has a value ({v})")))
            .collect();
        match (field, taken.len()) {
            (_, 0) => {}
            (Field::Labels, 1) => return Err(format!("{}, and --overwrite is false", taken[0])),
            (Field::Labels, _) => {
                let each: Vec<String> = taken.iter().map(|t| format!("{t}, and --overwrite is false")).collect();
                return Err(format!("[{}]", each.join(", ")));
            }
            (Field::Annotations, _) => {
                return Err(format!(
                    "--overwrite is false but found the following declared annotation(s): {}",
                    taken.join("; ")
                ));
            }
        }
    }
    let mut next = current.clone();
    for (k, v) in &changes.set {
        next.insert(k.clone(), v.clone());
    }
    for k in &changes.remove {
        next.remove(k);
    }
    Ok(next)
}

/// The JSON merge patch from one map to another, under `metadata.<labels|annotations>`.
fn merge_patch(field: Field, old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> Value {
    let mut diff = Map::new();
    for (k, v) in new {
        if old.get(k) != Some(v) {
            diff.insert(k.clone(), json!(v));
        }
    }
    for k in old.keys() {
        if !new.contains_key(k) {
            diff.insert(k.clone(), Value::Null);
        }
    }
    if diff.is_empty() {
        return json!({});
    }
    if new.is_empty() {
        return json!({"metadata": {field.key(): null}});
    }
    json!({"metadata": {field.key(): diff}})
}

/// `kubectl label|annotate TYPE NAME k=v k2- [--overwrite] [-l SELECTOR | --all]`.
pub(super) fn label(cluster: &mut Cluster, args: &Args, field: Field) -> Output {
    let verb = if field == Field::Labels { "label" } else { "annotate" };
    // Resources come first, then the changes.
    let mut resources = Vec::new();
    let mut specs = Vec::new();
    for word in &args.positionals {
        let is_change = word.contains('=') || word.ends_with('-');
        if is_change {
            specs.push(word.clone());
        } else if !specs.is_empty() {
            return Output::err(format!(
                "error: all resources must be specified before {} changes: {word}",
                field.noun()
            ));
        } else {
            resources.push(word.clone());
        }
    }
    let all = args.has("all");
    if all && args.get("selector").is_some() {
        return Output::err("error: cannot set --all and --selector at the same time");
    }
    if resources.is_empty() {
        return Output::err("error: one or more resources must be specified as <resource> <name> or <resource>/<name>");
    }
    let list = args.has("list");
    if list && args.get("output").is_some() {
        return Output::err("error: --list and --output may not be specified together");
    }
    if specs.is_empty() && !list {
        return Output::err(format!("error: at least one {} update is required", field.noun()));
    }
    let changes = match parse_changes(field, &specs) {
        Ok(c) => c,
        Err(e) => return Output::err(format!("error: {e}")),
    };
    let (dry, mut out) = match begin_write(args) {
        Ok(started) => started,
        Err(out) => return out,
    };
    let objects = match fetch_objects(cluster, args, &resources, verb, &mut out) {
        Ok(o) => o,
        Err(e) => return e,
    };
    // Nothing selected: kubectl label and annotate print nothing (unlike get and delete).
    let single = objects.len() == 1;
    for object in objects {
        if list && specs.is_empty() {
            // --list: each key=value, under a heading when several objects are listed.
            let map = match field {
                Field::Labels => &object.meta().labels,
                Field::Annotations => &object.meta().annotations,
            };
            let indent = if single { "" } else { " " };
            if !single {
                let info = object.kind().info();
                let what = if field == Field::Labels { "labels" } else { "annotations" };
                out.stdout.push_str(&format!("Listing {what} for {}.{}/{}:\n", info.kind, info.group, object.name()));
            }
            for (k, v) in map {
                out.stdout.push_str(&format!("{indent}{k}={v}\n"));
            }
            continue;
        }
        let meta = object.meta();
        let current = match field {
            Field::Labels => &meta.labels,
            Field::Annotations => &meta.annotations,
        };
        if field == Field::Labels && dry != DryRun::Client {
            for key in changes.remove.iter().filter(|k| !current.contains_key(*k)) {
                out.stdout.push_str(&format!("label \"{key}\" not found.\n"));
            }
        }
        let next = match apply_changes(field, current, &changes, args.has("overwrite")) {
            Ok(n) => n,
            Err(e) => {
                out.stderr.push_str(&format!("error: {e}\n"));
                out.code = 1;
                continue;
            }
        };
        let operation = match field {
            Field::Annotations => "annotated",
            Field::Labels => {
                // kubectl compares the object's JSON before and after: shorter means unlabeled.
                let old_len = serde_json::to_string(current).map_or(0, |s| s.len());
                let new_len = serde_json::to_string(&next).map_or(0, |s| s.len());
                if next == **current {
                    "not labeled"
                } else if !args.has("overwrite") && new_len < old_len {
                    "unlabeled"
                } else {
                    "labeled"
                }
            }
        };
        let kind = object.kind();
        let cause = change_cause(verb, args);
        let mut next = next;
        if let (Field::Annotations, Some(c)) = (field, &cause) {
            next.insert(CHANGE_CAUSE.to_string(), c.clone());
        }
        let result = if dry == DryRun::Client {
            let mut value = object.to_json_value();
            value["metadata"][field.key()] = json!(next);
            if let (Field::Labels, Some(c)) = (field, &cause) {
                value["metadata"]["annotations"][CHANGE_CAUSE] = json!(c);
            }
            value
        } else {
            let mut patch = merge_patch(field, current, &next);
            if let (Field::Labels, Some(c)) = (field, &cause) {
                // --record: the command line joins the patch, in the annotations.
                patch["metadata"]["annotations"] = json!({CHANGE_CAUSE: c});
            }
            let manager = if matches!(field, Field::Labels) { "kubectl-label" } else { "kubectl-annotate" };
            let mut req =
                Request::patch(kind, object.namespace(), object.name(), PatchType::Merge, patch).managed_by(manager);
            req.dry_run = dry == DryRun::Server;
            match cluster.request(req) {
                Ok(reply) => reply.object().map(|o| o.to_json_value()).unwrap_or(Value::Null),
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                    continue;
                }
            }
        };
        out.stdout.push_str(&print_object(args, kind, &result, operation, dry));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn label_arguments_set_or_remove_keys() {
        let c = parse_changes(Field::Labels, &specs("tier=front env-")).unwrap();
        assert_eq!(c.set, map(&[("tier", "front")]));
        assert_eq!(c.remove, ["env"]);
        assert_eq!(parse_changes(Field::Labels, &specs("a=b=c")).unwrap_err(), "invalid label spec: a=b=c");
        assert_eq!(
            parse_changes(Field::Labels, &specs("a=b a-")).unwrap_err(),
            "can not both modify and remove a label in the same command"
        );
        assert!(parse_changes(Field::Labels, &specs("a=-x")).unwrap_err().starts_with("invalid label value: \"a=-x\""));
    }

    #[test]
    fn annotation_values_may_contain_equals_signs() {
        let c = parse_changes(Field::Annotations, &specs("note=a=b")).unwrap();
        assert_eq!(c.set, map(&[("note", "a=b")]));
        assert_eq!(parse_changes(Field::Annotations, &specs("note")).unwrap_err(), "invalid annotation format: note");
    }

    #[test]
    fn an_existing_label_is_not_overwritten_without_overwrite() {
        let current = map(&[("app", "web")]);
        let changes = parse_changes(Field::Labels, &specs("app=api")).unwrap();
        assert_eq!(
            apply_changes(Field::Labels, &current, &changes, false).unwrap_err(),
            "'app' already has a value (web), and --overwrite is false"
        );
        assert_eq!(apply_changes(Field::Labels, &current, &changes, true).unwrap(), map(&[("app", "api")]));
    }

    #[test]
    fn the_merge_patch_sets_changed_keys_and_nulls_removed_ones() {
        let old = map(&[("a", "1"), ("b", "2")]);
        let new = map(&[("a", "1"), ("c", "3")]);
        assert_eq!(merge_patch(Field::Labels, &old, &new), json!({"metadata": {"labels": {"b": null, "c": "3"}}}));
        assert_eq!(merge_patch(Field::Labels, &old, &old), json!({}));
        assert_eq!(merge_patch(Field::Annotations, &old, &BTreeMap::new()), json!({"metadata": {"annotations": null}}));
    }
}
