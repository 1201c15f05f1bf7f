//! The kubelet's file source: the static pod manifests in the node's
//! `/etc/kubernetes/manifests`, read as text files on the node's disk. A file written, moved
//! or removed there (from a node shell) is noticed at the source's next check, every 20
//! seconds (`fileCheckFrequency`): a pod whose manifest went is stopped and its mirror pod
//! deleted; one whose manifest changed is stopped and started again from the new file; a
//! file that does not decode is reported and runs nothing.

use super::{Kubelet, cache_key};
use crate::api::{Kind, Object, Pod};
use crate::apiserver::Request;
use crate::client::component::Ctx;
use crate::sim::{Duration, Time};
use std::sync::Arc;

/// Where kubeadm writes the static pod manifests (the kubelet's `staticPodPath`).
pub const MANIFEST_DIR: &str = "/etc/kubernetes/manifests";
/// How often the file source looks at the folder again (`fileCheckFrequency`).
pub const FILE_CHECK_FREQUENCY: Duration = Duration::seconds(20);

/// A manifest file's text as the kubelet decodes it: one Pod, defaulted as the API server
/// would default it. The error is what the kubelet logs about the file.
pub fn decode_manifest(text: &str) -> Result<Pod, String> {
    let value: serde_json::Value = crate::yaml::from_str(text).map_err(|e| format!("{e}"))?;
    let kind = value.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    if kind != "Pod" {
        return Err(format!("invalid pod: the manifest's kind is {kind:?}, not \"Pod\""));
    }
    match Object::decode(Kind::Pod, &value).map_err(|e| e.message)? {
        Object::Pod(mut pod) => {
            if pod.metadata.name.is_empty() {
                return Err("invalid pod: metadata.name: Required value: name or generateName is required".into());
            }
            crate::apiserver::admission::default_pod(&mut pod);
            Ok(pod)
        }
        _ => Err("invalid pod".into()),
    }
}

impl Kubelet {
    /// Whether this node's kubelet reads its static pods from files on its disk (a node
    /// kubeadm set up with manifests) rather than from its configuration alone.
    pub fn has_manifest_dir(&self) -> bool {
        !self.config.manifest_files.is_empty()
    }

    /// A file of the node's own (see [`Kubelet::disk_files`]).
    pub fn node_file(&self, path: &str) -> Option<&String> {
        self.disk.get(path)
    }

    /// Every file of the node's own, by absolute path.
    pub fn node_files(&self) -> impl Iterator<Item = (&String, &String)> + '_ {
        self.disk.iter()
    }

    /// Writes (or with `None` removes) a file on the node, as a shell on it does. A change in
    /// the manifests folder is read at the file source's next check.
    pub fn write_node_file(&mut self, path: &str, text: Option<String>, now: Time) {
        match text {
            Some(text) => {
                self.disk.insert(path.to_string(), text);
            }
            None => {
                self.disk.remove(path);
            }
        }
        if path.starts_with(&format!("{MANIFEST_DIR}/")) && self.has_manifest_dir() && self.manifest_check_at.is_none()
        {
            let since = now.since(self.started_at).0 % FILE_CHECK_FREQUENCY.0;
            self.manifest_check_at = Some(now + Duration(FILE_CHECK_FREQUENCY.0 - since));
        }
    }

    /// The manifests the node has: from its folder when it has one, else its configuration.
    /// Files that do not decode are left out, with why.
    fn manifests(&self) -> (Vec<Pod>, Vec<(String, String)>) {
        if !self.has_manifest_dir() {
            return (self.config.static_pods.clone(), Vec::new());
        }
        let (mut pods, mut errors) = (Vec::new(), Vec::new());
        for (name, text) in self.disk_files(MANIFEST_DIR) {
            // Only the folder's own files, not what is in folders below it; hidden files and
            // editors' backups are skipped, as the file source skips dot files.
            if name.contains('/') || name.starts_with('.') {
                continue;
            }
            match decode_manifest(text) {
                Ok(pod) => pods.push(pod),
                Err(e) => errors.push((format!("{MANIFEST_DIR}/{name}"), e)),
            }
        }
        (pods, errors)
    }

    /// Reads the manifests again (at start, and at the file source's check after a change):
    /// stops the static pods whose manifest went or changed, and deletes the mirror of one
    /// that went. A pod whose manifest is unchanged keeps running as it was.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn reload_static_pods(&mut self, ctx: &mut Ctx) {
        let old = std::mem::take(&mut self.static_pods);
        let (manifests, errors) = self.manifests();
        for (path, e) in errors {
            ctx.decide(|| format!("file source: could not process manifest file {path}: {e}"));
        }
        self.read_static_pods(&manifests, ctx.now);
        for (key, pod) in &old {
            match self.static_pods.get(key) {
                // Unchanged: the pod as it was first read (its config.seen stays).
                Some(new) if new.metadata.uid == pod.metadata.uid => {
                    self.static_pods.insert(key.clone(), pod.clone());
                }
                new => {
                    let gone = new.is_none();
                    self.manifests_changed = true;
                    let what = if gone { "removed from" } else { "changed in" };
                    ctx.decide(|| format!("file source: static pod {key} {what} {MANIFEST_DIR}: stopping it"));
                    self.stop_static_pod(key, gone, ctx);
                }
            }
        }
        if self.static_pods.keys().any(|k| !old.contains_key(k)) && !old.is_empty() {
            self.manifests_changed = true;
        }
    }

    /// Stops a static pod's containers (each running one is killed, as its events say) and,
    /// when its manifest went, deletes its mirror pod.
    fn stop_static_pod(&mut self, key: &str, delete_mirror: bool, ctx: &mut Ctx) {
        let mirror = self.pods.cache.get(key).cloned();
        if let Some(object) = &mirror {
            if let Some(pod) = object.as_pod().filter(|_| self.workers.contains_key(key)) {
                for status in pod.status.container_statuses.iter().filter(|s| s.state.running.is_some()) {
                    let field = format!("spec.containers{{{}}}", status.name);
                    ctx.decide(|| format!("{}stop container {}", super::RUNTIME_PREFIX, status.name));
                    let involved = Arc::new(Object::Pod(pod.clone()));
                    ctx.event(&involved, &field, "Normal", "Killing", format!("Stopping container {}", status.name));
                }
            }
        }
        self.drop_worker(key, ctx);
        if delete_mirror {
            if let Some(pod) = mirror.as_ref().and_then(|o| o.as_pod()) {
                let mut req = Request::delete(Kind::Pod, &pod.metadata.namespace, &pod.metadata.name);
                req.grace_period_seconds = Some(0);
                let _ = ctx.call(req);
            }
        }
    }

    /// Whether the control-plane component a static pod runs (its `component` label:
    /// `kube-scheduler`) is up: its pod runs from the current manifest with every container
    /// running and ready (its probes say the component serves). None while the manifests are as the node started with them: the component
    /// then runs as it always has.
    pub fn static_component_up(&self, component: &str) -> Option<bool> {
        if !self.manifests_changed {
            return None;
        }
        let Some((key, pod)) = self
            .static_pods
            .iter()
            .find(|(_, p)| p.metadata.labels.get("component").map(String::as_str) == Some(component))
        else {
            return Some(false);
        };
        let mirror = self.pods.cache.get(key).and_then(|o| o.as_pod());
        let current = mirror.is_some_and(|m| {
            m.metadata.annotations.get(crate::apiserver::admission::MIRROR_POD_ANNOTATION) == Some(&pod.metadata.uid)
        });
        let running = mirror.is_some_and(|m| {
            !m.status.container_statuses.is_empty()
                && m.status.container_statuses.iter().all(|s| s.state.running.is_some() && s.ready)
        });
        Some(current && running && self.workers.contains_key(key))
    }

    /// Whether the node runs the control-plane component whose static pod has the `component`
    /// label given (`kube-apiserver`, `etcd`): whether its manifest is in place and decodes.
    /// It does not wait for the pod's mirror in the API, which the API server's own pod cannot
    /// have while it is down. None while the manifests are as the node started with them.
    pub fn static_component_present(&self, component: &str) -> Option<bool> {
        if !self.manifests_changed {
            return None;
        }
        let has = |p: &Pod| p.metadata.labels.get("component").map(String::as_str) == Some(component);
        Some(self.static_pods.values().any(has))
    }

    /// Whether the runtime runs a pod here (it has a worker for it).
    pub fn runs_pod(&self, namespace: &str, name: &str) -> bool {
        self.workers.contains_key(&cache_key(namespace, name))
    }

    /// Whether a pod key names a static pod whose mirror is not (yet) the current manifest's.
    pub(super) fn stale_mirror(&self, key: &str, mirror: &Pod) -> bool {
        self.static_pods.get(key).is_some_and(|s| {
            mirror.metadata.annotations.get(crate::apiserver::admission::MIRROR_POD_ANNOTATION) != Some(&s.metadata.uid)
        })
    }
}
