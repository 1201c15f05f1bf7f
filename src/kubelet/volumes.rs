//! The files the kubelet writes into a pod's `configMap`, `secret` and `downwardAPI` volumes as
//! it mounts them (and again at each periodic sync of the pod, so a changed ConfigMap shows up
//! in the container up to a minute or so later): one file per key, or per listed item, read
//! from what its managers watch, not from the store.

use super::env::{Objects, not_found};
use crate::api::{Kind, Object, Pod};
use serde_json::Value;
use std::collections::BTreeMap;

/// A volume's files: path inside the volume → content.
pub type Files = BTreeMap<String, String>;

/// Every mounted volume's files, by volume name.
pub type Mounted = BTreeMap<String, Files>;

/// How the kubelet's volume reconciler waits between tries of a mount that failed: from half
/// a second, doubling, up to 2m2s.
pub const RETRY_INITIAL: crate::sim::Duration = crate::sim::Duration::millis(500);
pub const RETRY_MAX: crate::sim::Duration = crate::sim::Duration::millis(122_000);

/// Whether a pod has a volume whose files the kubelet writes (and refreshes).
pub fn has_projected_files(pod: &Pod) -> bool {
    pod.spec.volumes.iter().any(|v| {
        ["configMap", "secret", "downwardAPI"].iter().any(|k| v.get(k).is_some())
            || (v.get("projected").is_some() && !service_account_volume(v))
    })
}

/// The `kube-api-access-*` volume admission gives every pod (its files are the container's
/// service account files, shown apart).
fn service_account_volume(volume: &crate::api::NamedItem) -> bool {
    volume.get("name").and_then(Value::as_str).is_some_and(|n| n.starts_with("kube-api-access-"))
}

/// Sets up every such volume of the pod: their files, or the first failure as the volume's name
/// and the event's message (`MountVolume.SetUp failed for volume "cfg" : configmap "x" not
/// found`).
pub fn mount(objects: &dyn Objects, pod: &Pod) -> Result<Mounted, (String, String)> {
    let mut mounted = Mounted::new();
    for volume in &pod.spec.volumes {
        let name = volume.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        match contents(objects, pod, volume) {
            None => {}
            Some(Ok(files)) => {
                mounted.insert(name, files);
            }
            Some(Err(why)) => {
                let message = format!("MountVolume.SetUp failed for volume \"{name}\" : {why}");
                return Err((name, message));
            }
        }
    }
    Ok(mounted)
}

/// One volume's files (`None`: not a volume of these kinds).
fn contents(objects: &dyn Objects, pod: &Pod, volume: &crate::api::NamedItem) -> Option<Result<Files, String>> {
    let ns = &pod.metadata.namespace;
    let optional = |s: &Value| s.get("optional").and_then(Value::as_bool) == Some(true);
    if let Some(source) = volume.get("configMap") {
        let name = text(source, "name");
        let data = match objects.object(Kind::ConfigMap, ns, &name).as_deref() {
            Some(Object::ConfigMap(cm)) => cm.data.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ if optional(source) => Files::new(),
            _ => return Some(Err(not_found(Kind::ConfigMap, &name))),
        };
        return Some(project(source, data, "configmap references non-existent config key"));
    }
    if let Some(source) = volume.get("secret") {
        let name = text(source, "secretName");
        let data = match objects.object(Kind::Secret, ns, &name).as_deref() {
            Some(Object::Secret(secret)) => secret.data.iter().map(|(k, v)| (k.clone(), decode(v))).collect(),
            _ if optional(source) => Files::new(),
            _ => return Some(Err(not_found(Kind::Secret, &name))),
        };
        return Some(project(source, data, "references non-existent secret key"));
    }
    if let Some(source) = volume.get("downwardAPI") {
        return Some(Ok(downward_files(pod, source)));
    }
    if let Some(projected) = volume.get("projected").filter(|_| !service_account_volume(volume)) {
        // Each source's files, side by side in the one directory.
        let mut files = Files::new();
        for source in projected.get("sources").and_then(Value::as_array).into_iter().flatten() {
            let one = if let Some(cm) = source.get("configMap") {
                Some(crate::api::NamedItem::from(serde_json::json!({"name": "", "configMap": cm})))
            } else if let Some(secret) = source.get("secret") {
                let mut secret = secret.clone();
                if let Some(obj) = secret.as_object_mut() {
                    let name = obj.remove("name").unwrap_or(Value::Null);
                    obj.insert("secretName".into(), name);
                }
                Some(crate::api::NamedItem::from(serde_json::json!({"name": "", "secret": secret})))
            } else if let Some(d) = source.get("downwardAPI") {
                files.extend(downward_files(pod, d));
                continue;
            } else if let Some(token) = source.get("serviceAccountToken") {
                files.insert(
                    text(token, "path"),
                    "eyJhbGciOiJSUzI1NiIsImtpZCI6Imt1YmVsb29wIn0.projected.c2ltdWxhdGVk".into(),
                );
                continue;
            } else {
                continue;
            };
            let Some(one) = one else { continue };
            match contents(objects, pod, &one) {
                Some(Ok(more)) => files.extend(more),
                Some(Err(why)) => return Some(Err(why)),
                None => {}
            }
        }
        return Some(Ok(files));
    }
    None
}

/// A downward API source's files: one per listed item.
fn downward_files(pod: &Pod, source: &Value) -> Files {
    let mut files = Files::new();
    for item in source.get("items").and_then(Value::as_array).into_iter().flatten() {
        let field = item.pointer("/fieldRef/fieldPath").and_then(Value::as_str).unwrap_or_default();
        files.insert(text(item, "path"), downward(pod, field));
    }
    files
}

/// The keys a volume shows: every key, or only the listed `items`, each at its `path`.
fn project(source: &Value, data: Files, missing: &str) -> Result<Files, String> {
    let Some(items) = source.get("items").and_then(Value::as_array) else { return Ok(data) };
    let optional = source.get("optional").and_then(Value::as_bool) == Some(true);
    let mut files = Files::new();
    for item in items {
        let key = text(item, "key");
        match data.get(&key) {
            Some(value) => {
                files.insert(text(item, "path"), value.clone());
            }
            None if optional => {}
            None => return Err(format!("{missing}: {key}")),
        }
    }
    Ok(files)
}

/// A downward API file: the pod's name, namespace, uid, its labels or annotations as
/// `key="value"` lines, or one of them (`metadata.annotations['key']`) as its bare value.
fn downward(pod: &Pod, field: &str) -> String {
    let pairs =
        |map: &BTreeMap<String, String>| map.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect::<Vec<_>>().join("\n");
    match field {
        "metadata.name" => pod.metadata.name.clone(),
        "metadata.namespace" => pod.metadata.namespace.clone(),
        "metadata.uid" => pod.metadata.uid.clone(),
        "metadata.labels" => pairs(&pod.metadata.labels),
        "metadata.annotations" => pairs(&pod.metadata.annotations),
        keyed => super::env::downward_key(pod, keyed).unwrap_or_default(),
    }
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn decode(data: &str) -> String {
    String::from_utf8_lossy(&crate::util::base64::decode(data).unwrap_or_default()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubelet::env::NoObjects;
    use std::sync::Arc;

    fn pod(volumes: Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "volumes": volumes}
        }))
        .expect("pod")
    }

    struct One(Arc<Object>);
    impl Objects for One {
        fn services(&self, _: &str) -> Vec<Arc<Object>> {
            Vec::new()
        }
        fn object(&self, kind: Kind, _: &str, name: &str) -> Option<Arc<Object>> {
            (self.0.kind() == kind && self.0.name() == name).then(|| self.0.clone())
        }
    }

    fn config_map(name: &str, data: &[(&str, &str)]) -> One {
        let data: BTreeMap<String, String> = data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let cm = serde_json::json!({"metadata": {"name": name, "namespace": "default"}, "data": data});
        One(Arc::new(Object::ConfigMap(serde_json::from_value(cm).expect("cm"))))
    }

    #[test]
    fn a_config_map_volume_of_a_missing_config_map_fails_to_mount_in_the_kubelets_words() {
        let p = pod(serde_json::json!([{"name": "cfg", "configMap": {"name": "settings"}}]));
        assert_eq!(
            mount(&NoObjects, &p),
            Err((
                "cfg".into(),
                "MountVolume.SetUp failed for volume \"cfg\" : configmap \"settings\" not found".into()
            ))
        );
    }

    #[test]
    fn an_optional_missing_config_map_mounts_as_an_empty_volume() {
        let p = pod(serde_json::json!([{"name": "cfg", "configMap": {"name": "settings", "optional": true}}]));
        assert_eq!(mount(&NoObjects, &p), Ok(Mounted::from([("cfg".into(), Files::new())])));
    }

    #[test]
    fn a_config_map_volume_has_a_file_per_key_or_per_listed_item() {
        let objects = config_map("settings", &[("mode", "fast"), ("level", "3")]);
        let all = pod(serde_json::json!([{"name": "cfg", "configMap": {"name": "settings"}}]));
        assert_eq!(mount(&objects, &all).expect("mounted")["cfg"].len(), 2);
        let listed = pod(serde_json::json!([{"name": "cfg", "configMap": {"name": "settings",
            "items": [{"key": "mode", "path": "conf/mode.txt"}]}}]));
        assert_eq!(
            mount(&objects, &listed).expect("mounted")["cfg"],
            Files::from([("conf/mode.txt".into(), "fast".into())])
        );
        let wrong = pod(serde_json::json!([{"name": "cfg", "configMap": {"name": "settings",
            "items": [{"key": "nope", "path": "x"}]}}]));
        assert!(mount(&objects, &wrong).is_err_and(|(_, m)| m.ends_with("non-existent config key: nope")));
    }

    #[test]
    fn a_downward_api_volume_writes_the_pods_labels_as_key_value_lines() {
        let p = pod(serde_json::json!([{"name": "info", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}}]));
        let files = &mount(&NoObjects, &p).expect("mounted")["info"];
        assert_eq!(files["labels"], "app=\"web\"");
        assert_eq!(files["name"], "p");
    }

    #[test]
    fn a_downward_api_file_of_one_annotation_holds_its_bare_value() {
        let mut pod = Pod::default();
        pod.metadata.annotations.insert("batch.kubernetes.io/job-completion-index".into(), "3".into());
        assert_eq!(downward(&pod, "metadata.annotations['batch.kubernetes.io/job-completion-index']"), "3");
        assert_eq!(downward(&pod, "metadata.annotations['missing']"), "");
    }
}
