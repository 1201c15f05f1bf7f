//! Export for a real cluster: the objects the student made, each cut down to the fields they
//! set — read from `metadata.managedFields`, where every write names its field manager — as
//! one multi-document YAML file for `kubectl apply -f`.
//!
//! An object is the student's when a manager other than the cluster's own components (the
//! controller manager, scheduler, kubelets, API server) owns some of it, it has no owner
//! (ReplicaSets and Pods of a Deployment come back by themselves), and it lives outside the
//! system namespaces. What the cluster filled in — status, uid, resourceVersion, a Service's
//! allocated ClusterIP, a Pod's node — belongs to other managers or to none, so it is left out
//! without a list of fields to strip.

use crate::api::managed_fields::FieldSet;
use crate::api::{Kind, Object};
use crate::cluster::Cluster;
use crate::util::sort::StableSort;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Managers that are the cluster's own components, not a person or their tools.
const SYSTEM_MANAGERS: &[&str] =
    &["kube-controller-manager", "kube-scheduler", "kubelet", "kube-apiserver", "kube-proxy"];

/// Namespaces the cluster brings with it; nothing in them is exported.
const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "kube-public", "kube-node-lease"];

/// Annotations tools write for themselves, which `kubectl apply` writes again. (The label
/// `kubernetes.io/metadata.name` of a Namespace is the API server's, and goes too.)
const TOOL_ANNOTATIONS: &[&str] =
    &["kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision"];

/// The order objects go in the file: namespaces first, then what workloads refer to.
const ORDER: &[Kind] = &[
    Kind::Namespace,
    Kind::ServiceAccount,
    Kind::ClusterRole,
    Kind::Role,
    Kind::ClusterRoleBinding,
    Kind::RoleBinding,
    Kind::Secret,
    Kind::ConfigMap,
    Kind::Service,
    Kind::Deployment,
    Kind::DaemonSet,
    Kind::ReplicaSet,
    Kind::CronJob,
    Kind::Job,
    Kind::Pod,
];

/// The exported objects, in apply order, as JSON values.
pub fn objects(cluster: &Cluster) -> Vec<Value> {
    let mut found: Vec<(usize, String, String, Value)> = Vec::new();
    for (_, kv) in cluster.inspect().etcd().range("/registry/") {
        if let Some(value) = exported(&kv.value) {
            let kind = kv.value.kind();
            let rank = ORDER.iter().position(|k| *k == kind).unwrap_or(ORDER.len());
            found.push((rank, kv.value.namespace().to_string(), kv.value.name().to_string(), value));
        }
    }
    found.stable_sort_by(|a, b| (a.0, &a.1, &a.2).cmp(&(b.0, &b.1, &b.2)));
    found.into_iter().map(|(_, _, _, v)| v).collect()
}

/// The file: a comment saying what it is, then one YAML document per object.
pub fn bundle(cluster: &Cluster) -> String {
    to_file(&objects(cluster))
}

/// The file for objects already exported (see [`objects`]).
pub fn to_file(objects: &[Value]) -> String {
    let mut out = format!(
        "# Exported from kubeloop: {} object(s) you created, with the fields you set.\n\
         # On a real cluster: kubectl apply -f kubeloop-export.yaml\n",
        objects.len()
    );
    for object in objects {
        out.push_str("---\n");
        out.push_str(&crate::kubectl::yaml::to_yaml(object));
    }
    out
}

/// `sim export`: the bundle on stdout, for `kubeloop --state FILE sim export > bundle.yaml`.
pub fn command(cluster: &Cluster, args: &[String]) -> crate::kubectl::Output {
    match args {
        [] => crate::kubectl::Output { stdout: bundle(cluster), ..Default::default() },
        [extra, ..] => crate::kubectl::Output {
            stderr: format!("sim export: unexpected argument \"{extra}\"; see 'sim help'\n"),
            code: 2,
            ..Default::default()
        },
    }
}

/// The object as the student wrote it, or `None` when it is not theirs to export.
fn exported(object: &Object) -> Option<Value> {
    let meta = object.meta();
    let kind = object.kind();
    if matches!(kind, Kind::Event | Kind::Node | Kind::Lease | Kind::ComponentStatus)
        || !meta.owner_references.is_empty()
        || SYSTEM_NAMESPACES.contains(&meta.namespace.as_str())
        || (kind == Kind::Namespace && (meta.name == "default" || SYSTEM_NAMESPACES.contains(&meta.name.as_str())))
        || meta.deletion_timestamp.is_some()
    {
        return None;
    }
    let mut owned = FieldSet::default();
    for entry in meta.managed_fields.iter() {
        if !SYSTEM_MANAGERS.contains(&entry.manager.as_str()) && entry.subresource != "status" {
            owned = owned.union(&entry.fields_v1);
        }
    }
    if owned.is_empty() {
        return None;
    }
    let live = object.to_json_value();
    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::String(kind.api_version()));
    out.insert("kind".into(), Value::String(kind.info().kind.to_string()));
    let mut metadata = match project(live.get("metadata").unwrap_or(&Value::Null), owned.children.get("f:metadata")) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(Value::Object(labels)) = metadata.get_mut("labels") {
        labels.remove("kubernetes.io/metadata.name");
        if labels.is_empty() {
            metadata.remove("labels");
        }
    }
    if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
        annotations.retain(|k, _| !TOOL_ANNOTATIONS.contains(&k.as_str()));
        if annotations.is_empty() {
            metadata.remove("annotations");
        }
    }
    metadata.insert("name".into(), Value::String(meta.name.clone()));
    if !meta.namespace.is_empty() {
        metadata.insert("namespace".into(), Value::String(meta.namespace.clone()));
    }
    out.insert("metadata".into(), Value::Object(metadata));
    for (step, set) in &owned.children {
        let Some(field) = step.strip_prefix("f:") else { continue };
        if matches!(field, "metadata" | "status" | "apiVersion" | "kind") {
            continue;
        }
        if let Some(v) = live.get(field).and_then(|v| project(v, Some(set))) {
            out.insert(field.to_string(), v);
        }
    }
    if kind == Kind::Secret {
        // `stringData` is write-only: the server keeps it as `data`, which its author set.
        for field in ["data", "type"] {
            if let Some(v) = live.get(field) {
                out.insert(field.to_string(), v.clone());
            }
        }
    }
    Some(Value::Object(out))
}

/// The part of `value` the set covers: a member leaf keeps its whole value, a path keeps only
/// what lies below it. List items keep their key fields so they still say which item they are.
fn project(value: &Value, set: Option<&FieldSet>) -> Option<Value> {
    let set = set?;
    if set.children.is_empty() {
        return set.member.then(|| value.clone());
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (step, child) in &set.children {
                let Some(field) = step.strip_prefix("f:") else { continue };
                if let Some(v) = map.get(field).and_then(|v| project(v, Some(child))) {
                    out.insert(field.to_string(), v);
                }
            }
            (set.member || !out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(items) => {
            let steps = ItemSteps::new(set);
            let kept: Vec<Value> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let (step, child) = steps.find(i, item)?;
                    let mut kept = project(item, Some(child)).unwrap_or_else(|| Value::Object(Map::new()));
                    with_key_fields(&mut kept, item, step);
                    Some(kept)
                })
                .collect();
            (set.member || !kept.is_empty()).then_some(Value::Array(kept))
        }
        other => set.member.then(|| other.clone()),
    }
}

/// A list's steps (`i:0`, `k:{"port":80}`, `v:"x"`), read once and indexed, so that finding
/// each item's step is a lookup rather than a pass over every step (which made a long list
/// quadratic): the first step in order that names the item, as `item_matches` decides.
struct ItemSteps<'s> {
    steps: Vec<(&'s String, &'s FieldSet)>,
    by_index: HashMap<usize, usize>,
    /// Key steps grouped by the fields they key by: those fields, and each step's values.
    by_keys: Vec<(Vec<String>, HashMap<String, usize>)>,
    by_value: HashMap<String, usize>,
}

impl<'s> ItemSteps<'s> {
    fn new(set: &'s FieldSet) -> Self {
        let mut this =
            ItemSteps { steps: Vec::new(), by_index: HashMap::new(), by_keys: Vec::new(), by_value: HashMap::new() };
        for (order, (step, child)) in set.children.iter().enumerate() {
            this.steps.push((step, child));
            if let Some(i) = step.strip_prefix("i:").and_then(|i| i.parse().ok()) {
                this.by_index.entry(i).or_insert(order);
            } else if let Some(keys) = step.strip_prefix("k:") {
                let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(keys) else { continue };
                let names: Vec<String> = keys.keys().cloned().collect();
                let values: Vec<&Value> = keys.values().collect();
                let lookup = serde_json::to_string(&values).unwrap_or_default();
                let at = match this.by_keys.iter().position(|(n, _)| *n == names) {
                    Some(at) => at,
                    None => {
                        this.by_keys.push((names, HashMap::new()));
                        this.by_keys.len() - 1
                    }
                };
                this.by_keys[at].1.entry(lookup).or_insert(order);
            } else if let Some(v) = step.strip_prefix("v:") {
                if let Ok(v) = serde_json::from_str::<Value>(v) {
                    this.by_value.entry(serde_json::to_string(&v).unwrap_or_default()).or_insert(order);
                }
            }
        }
        this
    }

    fn find(&self, index: usize, item: &Value) -> Option<(&'s String, &'s FieldSet)> {
        let mut first = self.by_index.get(&index).copied();
        let mut consider = |order: Option<&usize>| {
            if let Some(&order) = order {
                first = Some(first.map_or(order, |f: usize| f.min(order)));
            }
        };
        for (names, steps) in &self.by_keys {
            // An item without `protocol` is keyed as TCP, its default.
            let tcp = Value::String("TCP".into());
            let values: Option<Vec<&Value>> =
                names.iter().map(|n| item.get(n).or_else(|| (n == "protocol").then_some(&tcp))).collect();
            if let Some(values) = values {
                consider(steps.get(&serde_json::to_string(&values).unwrap_or_default()));
            }
        }
        if !self.by_value.is_empty() {
            consider(self.by_value.get(&serde_json::to_string(item).unwrap_or_default()));
        }
        first.map(|order| self.steps[order])
    }
}

/// Copies the fields a `k:{...}` step keys the item by from the live item into the kept one.
fn with_key_fields(kept: &mut Value, item: &Value, step: &str) {
    let Some(keys) = step.strip_prefix("k:") else { return };
    let (Ok(Value::Object(keys)), Value::Object(kept), Value::Object(item)) =
        (serde_json::from_str::<Value>(keys), kept, item)
    else {
        return;
    };
    for key in keys.keys() {
        if let Some(v) = item.get(key) {
            kept.entry(key.clone()).or_insert_with(|| v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    fn run(session: &mut Session, line: &str) -> crate::kubectl::Output {
        session.execute(&Command { line: line.into(), heredoc: None })
    }

    fn apply(session: &mut Session, manifest: &str) {
        let out = session
            .execute(&Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), manifest.into())) });
        assert_eq!(out.code, 0, "{}", out.stderr);
    }

    const SHOP: &str = "\
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector:
    app: web
  ports:
  - port: 80
";

    #[test]
    fn the_export_holds_what_the_student_made_and_nothing_the_cluster_made() {
        let mut session = Session::new(7);
        apply(&mut session, SHOP);
        run(&mut session, "sim settle");
        let kinds: Vec<String> = objects(&session.cluster)
            .iter()
            .map(|o| format!("{}/{}", o["kind"].as_str().unwrap_or(""), o["metadata"]["name"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(kinds, ["Namespace/shop", "Service/web", "Deployment/web"]);
    }

    #[test]
    fn an_exported_object_keeps_the_fields_its_author_set_and_drops_what_the_cluster_filled_in() {
        let mut session = Session::new(7);
        apply(&mut session, SHOP);
        run(&mut session, "sim settle");
        run(&mut session, "kubectl scale deployment web -n shop --replicas=4");
        let all = objects(&session.cluster);
        let deployment = all.iter().find(|o| o["kind"] == "Deployment").expect("exported");
        assert_eq!(deployment["spec"]["replicas"], 4, "kubectl scale is the student's change too");
        assert_eq!(deployment["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.25");
        assert_eq!(deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"], 80);
        assert!(deployment.get("status").is_none());
        for server_set in ["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "annotations"]
        {
            assert!(deployment["metadata"].get(server_set).is_none(), "{server_set} is the server's");
        }
        let service = all.iter().find(|o| o["kind"] == "Service").expect("exported");
        assert!(service["spec"].get("clusterIP").is_none(), "the allocated ClusterIP stays behind");
        assert_eq!(service["spec"]["ports"][0]["port"], 80);
    }

    #[test]
    fn the_bundle_applies_on_a_fresh_cluster_to_the_same_objects() {
        let mut session = Session::new(7);
        apply(&mut session, SHOP);
        run(&mut session, "kubectl create configmap settings -n shop --from-literal=color=blue");
        run(&mut session, "kubectl run solo --image=busybox -- sleep 3600");
        let secret =
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: shop\nstringData:\n  user: admin\n";
        let out = session.execute(&Command {
            line: "kubectl apply --server-side -f -".into(),
            heredoc: Some(("EOF".into(), secret.into())),
        });
        assert_eq!(out.code, 0, "{}", out.stderr);
        run(&mut session, "sim settle");
        let bundle = bundle(&session.cluster);
        assert!(bundle.starts_with("# Exported from kubeloop: 6 object(s)"), "{bundle}");
        assert!(!bundle.contains("kubernetes.io/metadata.name"), "the API server's label stays behind");

        let mut fresh = Session::new(8);
        let out = fresh.execute(&Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), bundle)) });
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(
            out.stdout,
            "namespace/shop created\nsecret/creds created\nconfigmap/settings created\nservice/web created\n\
             deployment.apps/web created\npod/solo created\n"
        );
        let user = run(&mut fresh, "kubectl get secret creds -n shop -o jsonpath={.data.user}");
        assert_eq!(user.stdout, "YWRtaW4=", "the secret's data comes along though it was applied as stringData");
        run(&mut fresh, "sim settle");
        let pods = run(&mut fresh, "kubectl get pods -n shop --no-headers");
        assert_eq!(pods.stdout.lines().filter(|l| l.contains("Running")).count(), 2, "{}", pods.stdout);
    }

    #[test]
    fn sim_export_takes_no_arguments() {
        let mut session = Session::new(7);
        let out = run(&mut session, "sim export now");
        assert_eq!(out.code, 2);
        assert_eq!(out.stderr, "sim export: unexpected argument \"now\"; see 'sim help'\n");
        let empty = run(&mut session, "sim export");
        assert_eq!(
            empty.stdout.lines().next(),
            Some("# Exported from kubeloop: 0 object(s) you created, with the fields you set.")
        );
    }

    #[test]
    fn exporting_a_service_of_ten_thousand_ports_takes_linear_time() {
        let mut session = Session::new(7);
        let ports: String = (1..=10_000).map(|p| format!("  - port: {p}\n    name: p{p}\n")).collect();
        // Created, not applied: applied, its last-applied annotation would be over 256 KiB.
        let manifest = format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: many\nspec:\n  ports:\n{ports}");
        let out =
            session.execute(&Command { line: "kubectl create -f -".into(), heredoc: Some(("EOF".into(), manifest)) });
        assert_eq!(out.code, 0, "{}", out.stderr);
        let started = std::time::Instant::now();
        let all = objects(&session.cluster);
        let file = to_file(&all);
        let took = started.elapsed();
        assert!(file.contains("name: p10000"));
        let service = all.iter().find(|o| o["kind"] == "Service").expect("exported");
        let exported = service["spec"]["ports"].as_array().expect("ports");
        assert_eq!(exported.len(), 10_000);
        assert_eq!(exported[9_999]["port"], 10_000);
        assert_eq!(exported[9_999]["name"], "p10000");
        // About 0.2 s alone in a debug build (a pass over every step per item took minutes);
        // the bound leaves room for a loaded machine.
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }
}
