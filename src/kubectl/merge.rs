//! Client-side apply's three-way merge: what changed between the last applied manifest and
//! the new one is applied to the live object, leaving fields the server or other clients set.
//! Lists that Kubernetes merges by key (containers by `name`, mounts by `mountPath`, ...) are
//! merged element by element; other lists are replaced whole when they changed.

use serde_json::{Map, Value};

use crate::apiserver::patch::merge_key;

/// Applies the change from `last` to `new` onto `live`.
pub fn three_way(live: &Value, last: Option<&Value>, new: &Value) -> Value {
    merge_value(live, last, new, "")
}

fn merge_value(live: &Value, last: Option<&Value>, new: &Value, field: &str) -> Value {
    match (live, new) {
        (Value::Object(l), Value::Object(n)) => {
            let last_map = last.and_then(Value::as_object);
            Value::Object(merge_maps(l, last_map, n))
        }
        (Value::Array(l), Value::Array(n)) => {
            if let Some(key) = merge_key(field, n) {
                Value::Array(merge_keyed_lists(l, last.and_then(Value::as_array), n, key))
            } else if last == Some(new) {
                live.clone()
            } else {
                new.clone()
            }
        }
        _ => {
            if last == Some(new) && live != new {
                // Unchanged in the manifest: whoever changed the live value keeps it.
                live.clone()
            } else {
                new.clone()
            }
        }
    }
}

fn merge_maps(
    live: &Map<String, Value>,
    last: Option<&Map<String, Value>>,
    new: &Map<String, Value>,
) -> Map<String, Value> {
    let mut out = live.clone();
    for (k, v) in new {
        let last_v = last.and_then(|m| m.get(k));
        let merged = match live.get(k) {
            Some(live_v) => merge_value(live_v, last_v, v, k),
            None => v.clone(),
        };
        out.insert(k.clone(), merged);
    }
    if let Some(last) = last {
        for k in last.keys() {
            if !new.contains_key(k) {
                out.remove(k);
            }
        }
    }
    out
}

fn merge_keyed_lists(live: &[Value], last: Option<&Vec<Value>>, new: &[Value], key: &str) -> Vec<Value> {
    let key_of = |v: &Value| v.get(key).cloned();
    let mut out: Vec<Value> = Vec::new();
    // Elements named in the new manifest, in its order, merged with their live versions.
    for n in new {
        let k = key_of(n);
        let live_el = live.iter().find(|l| k.is_some() && key_of(l) == k);
        let last_el = last.and_then(|ls| ls.iter().find(|l| k.is_some() && key_of(l) == k));
        out.push(match live_el {
            Some(l) => merge_value(l, last_el, n, ""),
            None => n.clone(),
        });
    }
    // Live elements the manifest never managed stay; ones it dropped go.
    for l in live {
        let k = key_of(l);
        let in_new = new.iter().any(|n| key_of(n) == k);
        let was_managed = last.is_some_and(|ls| ls.iter().any(|x| key_of(x) == k));
        if !in_new && !was_managed {
            out.push(l.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_defaults_survive_and_changed_fields_apply() {
        let live = json!({"spec": {"replicas": 3, "containers": [{"name": "c", "image": "nginx:1.24", "terminationMessagePath": "/dev/termination-log"}]}});
        let last = json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.24"}]}});
        let new = json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}});
        let merged = three_way(&live, Some(&last), &new);
        assert_eq!(
            merged,
            json!({"spec": {"replicas": 3, "containers": [{"name": "c", "image": "nginx:1.25", "terminationMessagePath": "/dev/termination-log"}]}})
        );
    }

    #[test]
    fn fields_removed_from_the_manifest_are_removed_from_the_object() {
        let live = json!({"metadata": {"labels": {"a": "1", "b": "2", "server": "x"}}});
        let last = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        let new = json!({"metadata": {"labels": {"a": "1"}}});
        assert_eq!(three_way(&live, Some(&last), &new), json!({"metadata": {"labels": {"a": "1", "server": "x"}}}));
    }

    #[test]
    fn service_ports_merge_by_port_keeping_allocated_node_ports() {
        let live = json!({"ports": [{"port": 80, "nodePort": 31132, "protocol": "TCP"}]});
        let last = json!({"ports": [{"port": 80}]});
        let new = json!({"ports": [{"port": 80}]});
        assert_eq!(three_way(&live, Some(&last), &new), live);
    }

    #[test]
    fn list_elements_added_by_the_server_are_kept() {
        let live = json!({"volumeMounts": [{"mountPath": "/data", "name": "d"}, {"mountPath": "/var/run/secrets", "name": "token"}]});
        let last = json!({"volumeMounts": [{"mountPath": "/data", "name": "d"}]});
        let new = json!({"volumeMounts": [{"mountPath": "/data", "name": "d"}]});
        assert_eq!(three_way(&live, Some(&last), &new), live);
    }
}
