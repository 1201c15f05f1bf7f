//! The kubelet's ConfigMap and Secret managers (and its reads of a pod's claims and their
//! volumes): a watch of each object the pods it runs refer
//! to (an env var's `configMapKeyRef`/`secretKeyRef`, `envFrom`, a `configMap`/`secret`
//! volume). The watch (a LIST and a WATCH of `metadata.name=NAME` in the pod's namespace, as
//! the node) opens when the first pod that needs the object is added and closes when the last
//! one goes. Variables and volume files are read from these caches; an object the watch has
//! not seen is not found. Pods that refer to nothing cost no request.

use crate::api::{Kind, Object, Pod};
use crate::apiserver::FieldSelector;
use crate::client::component::{Ctx, Informer};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One referenced object: its kind (ConfigMap or Secret), namespace and name.
pub type ObjectRef = (Kind, String, String);

#[derive(Debug, Default)]
pub struct References {
    watched: BTreeMap<ObjectRef, Watched>,
}

#[derive(Debug)]
struct Watched {
    informer: Informer,
    /// The pods (`namespace/name`) that refer to the object.
    pods: BTreeSet<String>,
}

impl References {
    /// Adds a pod's references: a watch opens for each object no other pod refers to yet.
    pub fn register(&mut self, pod_key: &str, pod: &Pod, ctx: &mut Ctx) {
        for object in referenced(pod) {
            let watched = self.watched.entry(object.clone()).or_insert_with(|| {
                let (kind, namespace, name) = &object;
                let fields = FieldSelector::equals("metadata.name", name);
                let mut informer = Informer::new(*kind).in_namespace(namespace).with_fields(fields).with_own_cache();
                // A failed LIST (the API is unreachable) is tried again at the next sync.
                let _ = informer.start(ctx);
                Watched { informer, pods: BTreeSet::new() }
            });
            watched.pods.insert(pod_key.to_string());
        }
        // A claim's volume, once the claim's watch has listed it bound: what the volume
        // manager reads to find where the volume is.
        for claim in crate::api::storage::pod_claims(pod) {
            let volume = match self.get(Kind::PersistentVolumeClaim, &pod.metadata.namespace, &claim).map(|o| &**o) {
                Some(Object::PersistentVolumeClaim(c)) if !c.spec.volume_name.is_empty() => c.spec.volume_name.clone(),
                _ => continue,
            };
            let watched =
                self.watched.entry((Kind::PersistentVolume, String::new(), volume.clone())).or_insert_with(|| {
                    let fields = FieldSelector::equals("metadata.name", &volume);
                    let mut informer = Informer::new(Kind::PersistentVolume).with_fields(fields).with_own_cache();
                    let _ = informer.start(ctx);
                    Watched { informer, pods: BTreeSet::new() }
                });
            watched.pods.insert(pod_key.to_string());
        }
    }

    /// Drops a pod's references: the watch of an object no pod refers to any more closes.
    pub fn unregister(&mut self, pod_key: &str, ctx: &mut Ctx) {
        self.watched.retain(|_, w| {
            w.pods.remove(pod_key);
            if w.pods.is_empty() {
                w.informer.stop(ctx);
            }
            !w.pods.is_empty()
        });
    }

    /// Applies what the watches saw; returns the pods whose referenced objects changed. A
    /// watch that could not be opened is tried again.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub fn sync(&mut self, ctx: &mut Ctx) -> BTreeSet<String> {
        let mut touched = BTreeSet::new();
        for w in self.watched.values_mut() {
            if w.informer.watch_id().is_none() {
                if w.informer.start(ctx).is_ok() {
                    touched.extend(w.pods.iter().cloned());
                }
                continue;
            }
            if !w.informer.sync(ctx).is_empty() {
                touched.extend(w.pods.iter().cloned());
            }
        }
        touched
    }

    /// Opens every watch afresh (the kubelet restarted: its watches closed with its process).
    pub fn restart(&mut self, ctx: &mut Ctx) {
        for w in self.watched.values_mut() {
            let _ = w.informer.start(ctx);
        }
    }

    /// The object as its watch last saw it (`None`: not found, or not referenced by any pod).
    pub fn get(&self, kind: Kind, namespace: &str, name: &str) -> Option<&Arc<Object>> {
        let key = (kind, namespace.to_string(), name.to_string());
        self.watched.get(&key)?.informer.get(namespace, name)
    }

    /// The informers, for the invariant checks (each cache agrees with the API).
    pub fn informers(&self) -> impl Iterator<Item = &Informer> {
        self.watched.values().map(|w| &w.informer).filter(|i| i.watch_id().is_some())
    }

    /// How many objects are watched.
    pub fn len(&self) -> usize {
        self.watched.len()
    }

    pub fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }
}

/// The ConfigMaps and Secrets a pod refers to, each once, in order.
pub fn referenced(pod: &Pod) -> BTreeSet<ObjectRef> {
    let mut out = BTreeSet::new();
    let ns = &pod.metadata.namespace;
    let mut add = |kind: Kind, name: Option<&str>| {
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            out.insert((kind, ns.clone(), name.to_string()));
        }
    };
    let name = |v: &serde_json::Value, key: &str| v.get(key).and_then(|n| n.as_str()).map(str::to_owned);
    for c in pod.spec.init_containers.iter().chain(pod.spec.containers.iter()) {
        for source in &c.env_from {
            if let Some(r) = source.get("configMapRef") {
                add(Kind::ConfigMap, name(r, "name").as_deref());
            }
            if let Some(r) = source.get("secretRef") {
                add(Kind::Secret, name(r, "name").as_deref());
            }
        }
        for from in c.env.iter().filter_map(|v| v.value_from.as_ref()) {
            if let Some(r) = from.get("configMapKeyRef") {
                add(Kind::ConfigMap, name(r, "name").as_deref());
            }
            if let Some(r) = from.get("secretKeyRef") {
                add(Kind::Secret, name(r, "name").as_deref());
            }
        }
    }
    for volume in &pod.spec.volumes {
        if let Some(source) = volume.get("configMap") {
            add(Kind::ConfigMap, name(source, "name").as_deref());
        }
        if let Some(source) = volume.get("secret") {
            add(Kind::Secret, name(source, "secretName").as_deref());
        }
        if let Some(source) = volume.get("persistentVolumeClaim") {
            add(Kind::PersistentVolumeClaim, name(source, "claimName").as_deref());
        }
        // A projected volume's ConfigMaps and Secrets (not the service account's own volume,
        // whose CA ConfigMap every namespace has).
        let own = volume.get("name").and_then(|n| n.as_str()).is_some_and(|n| n.starts_with("kube-api-access-"));
        let sources = volume.get("projected").and_then(|p| p.get("sources")).and_then(|s| s.as_array());
        for source in sources.into_iter().flatten().filter(|_| !own) {
            if let Some(r) = source.get("configMap") {
                add(Kind::ConfigMap, name(r, "name").as_deref());
            }
            if let Some(r) = source.get("secret") {
                add(Kind::Secret, name(r, "name").as_deref());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_refers_to_the_config_maps_and_secrets_of_its_variables_and_volumes_each_once() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "team"},
            "spec": {
                "containers": [{"name": "c", "image": "busybox",
                    "envFrom": [{"configMapRef": {"name": "settings"}}],
                    "env": [{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}},
                            {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}]}],
                "volumes": [{"name": "cfg", "configMap": {"name": "files"}}, {"name": "tmp", "emptyDir": {}}]
            }
        }))
        .expect("pod");
        let refs: Vec<(Kind, String)> = referenced(&pod).into_iter().map(|(k, _, n)| (k, n)).collect();
        assert_eq!(
            refs,
            [(Kind::Secret, "db".into()), (Kind::ConfigMap, "files".into()), (Kind::ConfigMap, "settings".into())]
                .into_iter()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_pod_without_references_refers_to_nothing() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx", "env": [{"name": "A", "value": "1"}]}]}
        }))
        .expect("pod");
        assert!(referenced(&pod).is_empty());
    }

    fn create(cluster: &mut crate::cluster::Cluster, value: serde_json::Value) {
        let kind = Kind::ALL.iter().find(|k| k.info().kind == value["kind"]).copied().expect("kind");
        let object = Object::decode(kind, &value).expect("decodes");
        cluster.request(crate::apiserver::Request::create(object)).expect("created");
    }

    fn user(name: &str) -> serde_json::Value {
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "worker-1", "containers": [{"name": "c", "image": "busybox:1.36",
                "command": ["sleep", "3600"],
                "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}]}]}})
    }

    #[test]
    fn pods_that_refer_to_one_config_map_share_one_watch_which_closes_when_the_last_goes() {
        use crate::cluster::{Cluster, ClusterConfig};
        let mut cluster = Cluster::new(ClusterConfig { workers: 1, ..ClusterConfig::default() });
        cluster.settle(crate::sim::Duration::minutes(1));
        // The node's own pods' (kube-proxy's ConfigMap, say).
        let before = cluster.kubelet("worker-1").expect("kubelet").references.len();
        create(
            &mut cluster,
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default"}, "data": {"mode": "fast"}}),
        );
        create(&mut cluster, user("a"));
        create(&mut cluster, user("b"));
        cluster.settle(crate::sim::Duration::minutes(1));
        let kubelet = cluster.kubelet("worker-1").expect("kubelet");
        assert_eq!(kubelet.references.len(), before + 1);
        let cm = kubelet.references.get(Kind::ConfigMap, "default", "settings").expect("watched");
        assert_eq!(cm.name(), "settings");
        assert_eq!(kubelet.container_env("default", "a", "c"), Some(&[("MODE".to_string(), "fast".to_string())][..]));
        for name in ["a", "b"] {
            let mut delete = crate::apiserver::Request::delete(Kind::Pod, "default", name);
            delete.grace_period_seconds = Some(0);
            cluster.request(delete).expect("deleted");
        }
        cluster.settle(crate::sim::Duration::minutes(1));
        assert_eq!(cluster.kubelet("worker-1").expect("kubelet").references.len(), before);
        assert!(cluster.check_invariants(true).is_empty(), "{:?}", cluster.check_invariants(true));
    }
}
