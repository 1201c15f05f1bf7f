//! A container's environment as its processes see it: its own variables (`env`, `envFrom`,
//! resolved as the kubelet does) and the Service links the kubelet injects.

use super::Container;
use crate::kubelet::env::{NoObjects, Objects};

impl<'a> Container<'a> {
    /// What the kubelet running the pod knows of the cluster's objects (its Services, and the
    /// ConfigMaps and Secrets it watches for its pods): what the container's variables were
    /// built from. Nothing when no kubelet runs the pod.
    pub(super) fn with_objects<T>(&self, f: impl FnOnce(&dyn Objects) -> T) -> T {
        match self.world.kubelet(&self.pod.spec.node_name) {
            Some(kubelet) => f(&kubelet.objects()),
            None => f(&NoObjects),
        }
    }
}

impl Container<'_> {
    /// The container's environment as `env` prints it: PATH and HOSTNAME, the container's own
    /// variables, the Service links of its namespace (and the `kubernetes` Service's), HOME.
    pub(super) fn environment(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".to_string(), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string()),
            ("HOSTNAME".to_string(), self.hostname()),
        ];
        // The variables its process started with, as the kubelet built them.
        let (ns, name) = (&self.pod.metadata.namespace, &self.pod.metadata.name);
        let kubelet = self.world.kubelet(&self.pod.spec.node_name);
        match kubelet.and_then(|k| k.container_env(ns, name, &self.spec.name)) {
            Some(started) => env.extend(started.iter().cloned()),
            None => env.extend(self.with_objects(|o| crate::kubelet::env::declared(o, self.pod, self.spec))),
        }
        env.extend(self.service_links());
        env.push(("HOME".to_string(), self.user().home.to_string()));
        for (k, v) in &self.state.vars {
            env.retain(|(name, _)| name != k);
            env.push((k.clone(), v.clone()));
        }
        env
    }

    /// The container's command and args as its process got them: `$(VAR)` references
    /// expanded from its variables.
    pub(super) fn command_line(&self) -> (Vec<String>, Vec<String>) {
        self.with_objects(|o| crate::kubelet::env::command_line(o, self.pod, self.spec, self.started_at()))
    }

    /// When this container last started running, if it is running.
    pub(super) fn started_at(&self) -> Option<crate::sim::Time> {
        self.pod
            .status
            .container_statuses
            .iter()
            .find(|s| s.name == self.spec.name)
            .and_then(|s| s.state.running.as_ref())
            .and_then(|r| r.started_at)
    }

    /// The docker-style links the kubelet adds for every Service with a ClusterIP that existed
    /// when the container started (see `kubelet::env::service_links`).
    pub(super) fn service_links(&self) -> Vec<(String, String)> {
        self.with_objects(|o| crate::kubelet::env::service_links(o, self.pod, self.started_at()))
    }
}
