//! `kubectl edit`, saved: the object as it was opened and as the student left it become a
//! two-way strategic merge patch, sent as a PATCH by the `kubectl-edit` field manager. Only
//! what the student changed travels, so a change made meanwhile by a controller is kept, and
//! nothing is sent at all when the text is unchanged.

use super::Output;
use crate::apiserver::Request;
use crate::apiserver::patch::{PatchType, merge_key};
use crate::cluster::Cluster;
use crate::util::command_line::{Command, shell_quote};
use serde_json::{Map, Value};

/// What kubectl puts above the object it opens.
pub const HEADER: &str = "# Please edit the object below. Lines beginning with a '#' will be ignored,\n\
# and an empty file will abort the edit. If an error occurs while saving this file will be\n\
# reopened with the relevant failures.\n\
#\n";

/// The field manager kubectl edit writes as.
pub const MANAGER: &str = "kubectl-edit";

/// How a save ended: what kubectl prints, and the request it sent as a command that sends
/// the same request again (to keep the session replayable), when it sent one.
#[derive(Debug)]
pub struct Saved {
    pub output: Output,
    pub replay: Option<Command>,
}

impl Saved {
    fn printed(output: Output) -> Saved {
        Saved { output, replay: None }
    }
}

/// The text without its comment lines, as kubectl compares and reads it.
pub fn strip_comments(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with('#')).map(|l| format!("{l}\n")).collect()
}

/// Saves an edit: `original` is the text that was opened, `edited` the text now.
pub fn save(cluster: &mut Cluster, original: &str, edited: &str) -> Saved {
    let (original, edited) = (strip_comments(original), strip_comments(edited));
    if edited.trim().is_empty() {
        return Saved::printed(Output::ok("Edit cancelled, saved file was empty.\n".into()));
    }
    if original == edited {
        return Saved::printed(Output::ok("Edit cancelled, no changes made.\n".into()));
    }
    let before = match single(&original) {
        Ok(doc) => doc,
        Err(e) => return Saved::printed(Output::err(e)),
    };
    let after = match single(&edited) {
        Ok(doc) => doc,
        Err(e) => return Saved::printed(Output::err(e)),
    };
    if before.kind != after.kind
        || before.name() != after.name()
        || before.body["apiVersion"] != after.body["apiVersion"]
    {
        return Saved::printed(Output::err("error: At least one of apiVersion, kind and name was changed"));
    }
    let patch = two_way_patch(&before.body, &after.body);
    if patch.as_object().is_none_or(Map::is_empty) {
        return Saved::printed(Output::ok("Edit cancelled, no changes made.\n".into()));
    }
    let (kind, name) = (before.kind, before.name().to_string());
    let namespace = if kind.info().namespaced { before.namespace().to_string() } else { String::new() };
    // Custom resources have no patch strategies: kubectl sends them a JSON merge patch.
    let patch_type = if matches!(kind, crate::api::Kind::Custom(_)) { PatchType::Merge } else { PatchType::Strategic };
    let request = Request::patch(kind, &namespace, &name, patch_type, patch.clone()).managed_by(MANAGER);
    let output = match cluster.request(request) {
        Ok(_) => Output::ok(format!("{}/{name} edited\n", kind.qualified_singular())),
        Err(status) => Output::err(status.kubectl_message()),
    };
    let mut line = format!("kubectl patch {} {}", kind.info().resource, shell_quote(&name));
    if !namespace.is_empty() {
        line.push_str(&format!(" -n {}", shell_quote(&namespace)));
    }
    let body = serde_json::to_string(&patch).unwrap_or_default();
    let flag = if patch_type == PatchType::Merge { "merge" } else { "strategic" };
    line.push_str(&format!(" --type={flag} --field-manager={MANAGER} -p {}", shell_quote(&body)));
    let replay = (output.code == 0).then(|| Command::new(&line));
    Saved { output, replay }
}

/// The one object an edit holds, read as kubectl reads a manifest.
fn single(text: &str) -> Result<super::manifest::Document, String> {
    let mut docs = super::manifest::parse(text, "edited-file").map_err(|e| {
        // The editor reopens with the reason on top; here it is printed instead.
        match e.strip_prefix("error: error parsing edited-file: ") {
            Some(rest) => format!("error: The edited file had a syntax error: {rest}"),
            None => e,
        }
    })?;
    match docs.len() {
        1 => Ok(docs.remove(0)),
        0 => Err("error: Edit cancelled, saved file was empty.".into()),
        _ => Err("error: the edited file holds more than one object: kubectl edit saves the object it opened".into()),
    }
}

/// The strategic merge patch that turns `original` into `modified`: changed and added fields
/// with their new values, removed ones as `null`; lists merged by a key (containers by name,
/// ports by port, …) name only the items that changed, `$patch: delete` the ones removed, and
/// `$setElementOrder/<list>` the order; any other list is sent whole when it changed.
pub fn two_way_patch(original: &Value, modified: &Value) -> Value {
    match (original, modified) {
        (Value::Object(o), Value::Object(m)) => Value::Object(diff_maps(o, m)),
        _ => modified.clone(),
    }
}

fn diff_maps(original: &Map<String, Value>, modified: &Map<String, Value>) -> Map<String, Value> {
    let mut patch = Map::new();
    for (field, new) in modified {
        let Some(old) = original.get(field) else {
            patch.insert(field.clone(), new.clone());
            continue;
        };
        if old == new {
            continue;
        }
        match (old, new) {
            (Value::Object(o), Value::Object(n)) => {
                let inner = diff_maps(o, n);
                if !inner.is_empty() {
                    patch.insert(field.clone(), Value::Object(inner));
                }
            }
            (Value::Array(o), Value::Array(n)) => match merge_key(field, n).or_else(|| merge_key(field, o)) {
                Some(key) if keyed(o, key) && keyed(n, key) => {
                    let (items, order) = diff_keyed(o, n, key);
                    if !items.is_empty() {
                        patch.insert(field.clone(), Value::Array(items));
                    }
                    patch.insert(format!("$setElementOrder/{field}"), Value::Array(order));
                }
                _ => {
                    patch.insert(field.clone(), new.clone());
                }
            },
            _ => {
                patch.insert(field.clone(), new.clone());
            }
        }
    }
    for field in original.keys() {
        if !modified.contains_key(field) {
            patch.insert(field.clone(), Value::Null);
        }
    }
    patch
}

/// Whether every item of a list is an object carrying `key` (else it cannot be merged by it).
fn keyed(items: &[Value], key: &str) -> bool {
    items.iter().all(|i| i.get(key).is_some())
}

/// A keyed list's changed, added and deleted items, and the order of the new list.
fn diff_keyed(original: &[Value], modified: &[Value], key: &str) -> (Vec<Value>, Vec<Value>) {
    let mut items = Vec::new();
    let mut order = Vec::new();
    for new in modified {
        let id = &new[key];
        let mut only_key = Map::new();
        only_key.insert(key.to_string(), id.clone());
        order.push(Value::Object(only_key.clone()));
        match original.iter().find(|o| &o[key] == id) {
            Some(old) if old == new => {}
            Some(old) => {
                let mut change = two_way_patch(old, new);
                if let Value::Object(m) = &mut change {
                    m.insert(key.to_string(), id.clone());
                }
                items.push(change);
            }
            None => items.push(new.clone()),
        }
    }
    for old in original {
        let id = &old[key];
        if !modified.iter().any(|n| &n[key] == id) {
            let mut delete = Map::new();
            delete.insert("$patch".into(), Value::String("delete".into()));
            delete.insert(key.to_string(), id.clone());
            items.push(Value::Object(delete));
        }
    }
    (items, order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::Session;
    use serde_json::json;

    #[test]
    fn an_unchanged_object_gives_an_empty_patch() {
        let o = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}});
        assert_eq!(two_way_patch(&o, &o), json!({}));
    }

    #[test]
    fn changed_fields_carry_their_new_value_and_removed_ones_null() {
        let o = json!({"metadata": {"labels": {"app": "web", "tier": "fe"}}, "spec": {"replicas": 3}});
        let m = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"replicas": 5, "paused": true}});
        assert_eq!(
            two_way_patch(&o, &m),
            json!({"metadata": {"labels": {"tier": null}}, "spec": {"replicas": 5, "paused": true}})
        );
    }

    #[test]
    fn a_container_changes_by_name_and_the_list_keeps_its_order() {
        let o = json!({"containers": [{"name": "a", "image": "nginx:1.25"}, {"name": "b", "image": "busybox"}]});
        let m = json!({"containers": [{"name": "a", "image": "nginx:1.26"}, {"name": "b", "image": "busybox"}]});
        assert_eq!(
            two_way_patch(&o, &m),
            json!({
                "containers": [{"name": "a", "image": "nginx:1.26"}],
                "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}]
            })
        );
    }

    #[test]
    fn a_removed_container_is_deleted_by_its_key() {
        let o = json!({"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]});
        let m = json!({"containers": [{"name": "a", "image": "x"}]});
        assert_eq!(
            two_way_patch(&o, &m),
            json!({
                "containers": [{"$patch": "delete", "name": "b"}],
                "$setElementOrder/containers": [{"name": "a"}]
            })
        );
    }

    #[test]
    fn a_list_without_a_merge_key_is_sent_whole() {
        let o = json!({"args": ["a", "b"]});
        let m = json!({"args": ["a", "c"]});
        assert_eq!(two_way_patch(&o, &m), json!({"args": ["a", "c"]}));
    }

    #[test]
    fn applying_the_patch_to_the_original_gives_the_edited_object() {
        let o = json!({"spec": {"containers": [
            {"name": "a", "image": "x", "ports": [{"containerPort": 80}]},
            {"name": "b", "image": "y"}
        ]}});
        let m = json!({"spec": {"containers": [
            {"name": "c", "image": "z"},
            {"name": "a", "image": "x2", "ports": [{"containerPort": 80}, {"containerPort": 443}]}
        ]}});
        let patch = two_way_patch(&o, &m);
        let patched = crate::apiserver::patch::apply(&o, PatchType::Strategic, &patch).unwrap();
        assert_eq!(patched, m);
    }

    const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
";

    /// A sandbox with the Deployment running, and the text `kubectl edit` opens for it.
    fn opened() -> (Session, String) {
        let mut s = Session::new(1);
        let apply = Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), WEB.into())) };
        assert_eq!(s.execute(&apply).code, 0);
        s.execute(&Command::new("sleep 20s"));
        let text = format!("{HEADER}{}", s.execute(&Command::new("kubectl get deployment web -o yaml")).stdout);
        (s, text)
    }

    fn run(s: &mut Session, line: &str) -> String {
        s.execute(&Command::new(line)).stdout
    }

    #[test]
    fn saving_an_edit_patches_only_what_changed_as_kubectl_edit() {
        let (mut s, text) = opened();
        let edited =
            text.replace("image: nginx:1.25", "image: nginx:1.26").replacen("  replicas: 2\n", "  replicas: 3\n", 1);
        let saved = save(&mut s.cluster, &text, &edited);
        assert_eq!(saved.output.stdout, "deployment.apps/web edited\n", "{:?}", saved.output);
        let replay = saved.replay.expect("a replayable request").line;
        assert!(
            replay.starts_with(
                "kubectl patch deployments web -n default --type=strategic --field-manager=kubectl-edit -p '{"
            ),
            "{replay}"
        );
        assert_eq!(run(&mut s, "kubectl get deployment web -o jsonpath={.spec.replicas}"), "3");
        let managers = run(
            &mut s,
            "kubectl get deployment web -o jsonpath={.metadata.managedFields[*].manager} --show-managed-fields",
        );
        assert!(managers.contains("kubectl-edit"), "{managers}");
        s.execute(&Command::new("sleep 60s"));
        assert!(run(&mut s, "kubectl get pods -o wide").contains("Running"));
        assert!(run(&mut s, "kubectl rollout history deployment web").contains("2 "));
    }

    #[test]
    fn a_change_made_while_the_editor_was_open_is_kept() {
        let (mut s, text) = opened();
        // Someone scales the Deployment meanwhile; the edit touches only its labels.
        assert_eq!(s.execute(&Command::new("kubectl scale deployment web --replicas=4")).code, 0);
        let edited = text.replace("  name: web\n", "  labels:\n    team: blue\n  name: web\n");
        let saved = save(&mut s.cluster, &text, &edited);
        assert_eq!(saved.output.code, 0, "{:?}", saved.output);
        assert_eq!(run(&mut s, "kubectl get deployment web -o jsonpath={.spec.replicas}"), "4");
        assert_eq!(run(&mut s, "kubectl get deployment web -o jsonpath={.metadata.labels.team}"), "blue");
    }

    #[test]
    fn the_replayed_request_leaves_a_fresh_sandbox_in_the_same_state() {
        let (mut s, text) = opened();
        let saved = save(&mut s.cluster, &text, &text.replace("nginx:1.25", "nginx:1.26"));
        let (mut again, _) = opened();
        assert_eq!(again.execute(&saved.replay.unwrap()).stdout, "deployment.apps/web patched\n");
        let spec = |s: &mut Session| {
            run(s, "kubectl get deployment web -o jsonpath={.spec.template.spec.containers[0].image}")
        };
        assert_eq!(spec(&mut s), spec(&mut again));
        let managers =
            "kubectl get deployment web -o jsonpath={.metadata.managedFields[*].manager} --show-managed-fields";
        assert_eq!(run(&mut s, managers), run(&mut again, managers));
    }

    #[test]
    fn unchanged_empty_and_renamed_edits_send_nothing() {
        let (mut s, text) = opened();
        let before = s.cluster.inspect().etcd().revision();
        let unchanged = save(&mut s.cluster, &text, &format!("# my note\n{text}"));
        assert_eq!(unchanged.output.stdout, "Edit cancelled, no changes made.\n");
        assert!(unchanged.replay.is_none());
        assert_eq!(save(&mut s.cluster, &text, "# nothing\n").output.stdout, "Edit cancelled, saved file was empty.\n");
        let renamed = save(&mut s.cluster, &text, &text.replace("  name: web\n", "  name: web2\n"));
        assert_eq!(renamed.output.stderr, "error: At least one of apiVersion, kind and name was changed\n");
        assert_eq!(s.cluster.inspect().etcd().revision(), before);
    }

    #[test]
    fn an_invalid_edit_gets_the_servers_reasons_and_a_broken_one_its_syntax_error() {
        let (mut s, text) = opened();
        let invalid = save(&mut s.cluster, &text, &text.replacen("  replicas: 2\n", "  replicas: -1\n", 1));
        assert!(
            invalid.output.stderr.starts_with("The Deployment \"web\" is invalid: spec.replicas: Invalid value: -1"),
            "{}",
            invalid.output.stderr
        );
        assert!(invalid.replay.is_none());
        let broken = save(&mut s.cluster, &text, &text.replace("kind: Deployment", "kind: [Deployment"));
        assert!(
            broken
                .output
                .stderr
                .starts_with("error: The edited file had a syntax error: error converting YAML to JSON: yaml: line "),
            "{}",
            broken.output.stderr
        );
    }

    #[test]
    fn comment_lines_are_not_part_of_the_object() {
        assert_eq!(strip_comments("# head\na: 1\n  # inner\nb: 2\n"), "a: 1\nb: 2\n");
    }
}
