//! PATCH: the three patch formats the API server accepts — JSON merge patch (RFC 7386), JSON
//! patch (RFC 6902) and strategic merge patch, where lists Kubernetes knows a key for
//! (containers by `name`, ports by `containerPort`/`port`, ...) are merged element by element.

use serde_json::{Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    /// Server-side apply: the body is the applier's whole intent, not a change.
    Apply,
}

impl PatchType {
    /// kubectl's `--type` values.
    pub fn from_flag(value: &str) -> Option<PatchType> {
        match value {
            "json" => Some(PatchType::Json),
            "merge" => Some(PatchType::Merge),
            "strategic" => Some(PatchType::Strategic),
            _ => None,
        }
    }

    /// The request's Content-Type, as `kubectl -v=8` shows it.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

/// The key a list field's elements are merged by in a strategic merge, if Kubernetes merges
/// it by key: container ports by `containerPort`, a Service's ports by `port`.
pub fn merge_key(field: &str, items: &[Value]) -> Option<&'static str> {
    match field {
        "containers" | "initContainers" | "ephemeralContainers" | "volumes" | "env" | "imagePullSecrets" => {
            Some("name")
        }
        "volumeMounts" => Some("mountPath"),
        "ports" if items.iter().any(|p| p.get("containerPort").is_some()) => Some("containerPort"),
        "ports" => Some("port"),
        _ => None,
    }
}

/// Applies `patch` to `live`. Errors are the API server's messages.
pub fn apply(live: &Value, patch_type: PatchType, patch: &Value) -> Result<Value, String> {
    match patch_type {
        PatchType::Merge => {
            if !patch.is_object() {
                return Err("json: cannot unmarshal merge patch: not an object".into());
            }
            Ok(merge(live, patch))
        }
        PatchType::Strategic => {
            if !patch.is_object() {
                return Err("unable to find api field in struct: patch must be a JSON object".into());
            }
            Ok(strategic(live, patch, ""))
        }
        PatchType::Json => json_patch(live, patch),
        PatchType::Apply => Err("an apply patch is merged by the field manager".into()),
    }
}

/// RFC 7386: objects merge recursively, `null` removes, anything else replaces.
pub fn merge(target: &Value, patch: &Value) -> Value {
    let Value::Object(p) = patch else { return patch.clone() };
    let mut out = target.as_object().cloned().unwrap_or_default();
    for (k, v) in p {
        if v.is_null() {
            out.remove(k);
        } else {
            let merged = merge(out.get(k).unwrap_or(&Value::Null), v);
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

/// A strategic merge: as a merge patch, but keyed lists merge element by element, and an
/// element carrying `$patch: delete` removes its match.
fn strategic(target: &Value, patch: &Value, field: &str) -> Value {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            let mut out: Map<String, Value> = t.clone();
            for (k, v) in p {
                if k.starts_with('$') {
                    continue;
                }
                if v.is_null() {
                    out.remove(k);
                } else {
                    let merged = strategic(t.get(k).unwrap_or(&Value::Null), v, k);
                    out.insert(k.clone(), merged);
                }
            }
            for (k, order) in p {
                if let (Some(field), Value::Array(order)) = (k.strip_prefix("$setElementOrder/"), order) {
                    if let Some(Value::Array(items)) = out.get_mut(field) {
                        set_element_order(items, order);
                    }
                }
            }
            Value::Object(out)
        }
        (Value::Array(t), Value::Array(p)) => match merge_key(field, p).or_else(|| merge_key(field, t)) {
            Some(key) => {
                let mut out = t.clone();
                for el in p {
                    let k = el.get(key);
                    let at = out.iter().position(|x| k.is_some() && x.get(key) == k);
                    let delete = el.get("$patch").and_then(Value::as_str) == Some("delete");
                    match (at, delete) {
                        (Some(i), true) => {
                            out.remove(i);
                        }
                        (None, true) => {}
                        (Some(i), false) => out[i] = strategic(&out[i], el, ""),
                        (None, false) => out.push(strip_directives(el)),
                    }
                }
                Value::Array(out)
            }
            None => patch.clone(),
        },
        (_, p) => strip_directives(p),
    }
}

/// `$setElementOrder/<list>`: the items the order names come first, in its order (matched
/// by the one key each entry carries); items it does not name follow as they were.
fn set_element_order(items: &mut Vec<Value>, order: &[Value]) {
    let mut rest = std::mem::take(items);
    for entry in order {
        let Some((key, id)) = entry.as_object().and_then(|m| m.iter().next()) else { continue };
        if let Some(i) = rest.iter().position(|x| x.get(key) == Some(id)) {
            items.push(rest.remove(i));
        }
    }
    items.append(&mut rest);
}

fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(crate::util::sort::json_map(
            m.iter().filter(|(k, _)| !k.starts_with('$')).map(|(k, v)| (k.clone(), strip_directives(v))),
        )),
        other => other.clone(),
    }
}

/// RFC 6902: a list of `add`, `remove`, `replace`, `move`, `copy` and `test` operations.
pub fn json_patch(live: &Value, ops: &Value) -> Result<Value, String> {
    let Some(ops) = ops.as_array() else {
        return Err("json: cannot unmarshal object into Go value of type jsonpatch.Patch".into());
    };
    let mut doc = live.clone();
    for op in ops {
        let name = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = op.get("path").and_then(Value::as_str).ok_or("missing path")?;
        match name {
            "add" => add(&mut doc, path, op.get("value").cloned().unwrap_or(Value::Null))?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                remove(&mut doc, path)?;
                add(&mut doc, path, op.get("value").cloned().unwrap_or(Value::Null))?;
            }
            "move" | "copy" => {
                let from = op.get("from").and_then(Value::as_str).ok_or("missing from")?;
                let value = doc.pointer(from).cloned().ok_or_else(|| format!("doc is missing from path: {from}"))?;
                if name == "move" {
                    remove(&mut doc, from)?;
                }
                add(&mut doc, path, value)?;
            }
            "test" => {
                let want = op.get("value").unwrap_or(&Value::Null);
                if doc.pointer(path) != Some(want) {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(doc)
}

fn split_pointer(path: &str) -> Result<(String, String), String> {
    let (parent, last) = path.rsplit_once('/').ok_or_else(|| format!("invalid JSON pointer: {path}"))?;
    Ok((parent.to_string(), last.replace("~1", "/").replace("~0", "~")))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split_pointer(path)?;
    match doc.pointer_mut(&parent) {
        Some(Value::Object(m)) => {
            m.insert(last, value);
            Ok(())
        }
        Some(Value::Array(a)) => {
            let i = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>().map_err(|_| format!("invalid index: {last}"))?
            };
            if i > a.len() {
                return Err(format!("add operation does not apply: doc is missing path: {path}"));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(format!("add operation does not apply: doc is missing path: \"{path}\": missing value")),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split_pointer(path)?;
    let missing = || format!("remove operation does not apply: doc is missing path: \"{path}\": missing value");
    match doc.pointer_mut(&parent) {
        Some(Value::Object(m)) => m.remove(&last).ok_or_else(missing),
        Some(Value::Array(a)) => {
            let i = last.parse::<usize>().map_err(|_| missing())?;
            if i < a.len() { Ok(a.remove(i)) } else { Err(missing()) }
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patches_replace_lists_and_null_removes() {
        let live = json!({"spec": {"replicas": 3, "paused": true, "containers": [{"name": "a"}, {"name": "b"}]}});
        let out = merge(&live, &json!({"spec": {"replicas": 5, "paused": null, "containers": [{"name": "c"}]}}));
        assert_eq!(out, json!({"spec": {"replicas": 5, "containers": [{"name": "c"}]}}));
    }

    #[test]
    fn strategic_patches_merge_containers_by_name() {
        let live = json!({"containers": [{"name": "web", "image": "nginx:1.24", "ports": [{"containerPort": 80}]}, {"name": "log", "image": "busybox"}]});
        let patch =
            json!({"containers": [{"name": "web", "image": "nginx:1.25"}, {"name": "log", "$patch": "delete"}]});
        let out = apply(&live, PatchType::Strategic, &patch).unwrap();
        assert_eq!(
            out,
            json!({"containers": [{"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]})
        );
    }

    #[test]
    fn json_patches_add_replace_remove_and_test() {
        let live = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"items": [1, 2]}});
        let ops = json!([
            {"op": "add", "path": "/metadata/labels/b~1c", "value": "2"},
            {"op": "replace", "path": "/spec/items/0", "value": 9},
            {"op": "add", "path": "/spec/items/-", "value": 3},
            {"op": "remove", "path": "/metadata/labels/a"},
            {"op": "test", "path": "/spec/items/1", "value": 2}
        ]);
        let out = json_patch(&live, &ops).unwrap();
        assert_eq!(out, json!({"metadata": {"labels": {"b/c": "2"}}, "spec": {"items": [9, 2, 3]}}));
        assert!(json_patch(&live, &json!([{"op": "remove", "path": "/nope"}])).is_err());
        assert!(json_patch(&live, &json!({"op": "add"})).is_err());
    }
}
