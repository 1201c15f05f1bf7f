//! A container's environment as its processes see it: its own variables (`env`, `envFrom`,
//! resolved as the kubelet does) and the Service links the kubelet injects.

use super::Container;
use crate::api::{Kind, Object};

impl Container<'_> {
    /// The container's environment as `env` prints it: PATH and HOSTNAME, the container's own
    /// variables, the Service links of its namespace (and the `kubernetes` Service's), HOME.
    pub(super) fn environment(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".to_string(), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string()),
            ("HOSTNAME".to_string(), self.hostname()),
        ];
        env.extend(crate::kubelet::env::declared(self.cluster.api(), self.pod, self.spec));
        if self.pod.spec.enable_service_links != Some(false) {
            env.extend(self.service_links());
        }
        env.push(("HOME".to_string(), "/root".to_string()));
        for (k, v) in &self.state.vars {
            env.retain(|(name, _)| name != k);
            env.push((k.clone(), v.clone()));
        }
        env
    }

    /// The container's command and args as its process got them: `$(VAR)` references
    /// expanded from its variables.
    pub(super) fn command_line(&self) -> (Vec<String>, Vec<String>) {
        use crate::kubelet::expansion::expand_all;
        let env = crate::kubelet::env::declared(self.cluster.api(), self.pod, self.spec);
        (expand_all(&self.spec.command, &env), expand_all(&self.spec.args, &env))
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
    /// when the container started: its namespace's, plus `kubernetes` from `default`.
    pub(super) fn service_links(&self) -> Vec<(String, String)> {
        let api = self.cluster.api();
        let ns = &self.pod.metadata.namespace;
        let started = self.started_at();
        let mut services: Vec<_> = api.peek_list(Kind::Service, ns);
        if ns != "default" {
            services.extend(api.peek(Kind::Service, "default", "kubernetes"));
        }
        let mut out = Vec::new();
        for object in services {
            let Object::Service(svc) = &*object else { continue };
            let ip = &svc.spec.cluster_ip;
            let existed = match (svc.metadata.creation_timestamp, started) {
                (Some(created), Some(started)) => created <= started,
                _ => true,
            };
            if ip.is_empty() || ip == "None" || svc.spec.ports.is_empty() || !existed {
                continue;
            }
            let prefix = svc.metadata.name.to_ascii_uppercase().replace('-', "_");
            let first = &svc.spec.ports[0];
            out.push((format!("{prefix}_SERVICE_HOST"), ip.clone()));
            out.push((format!("{prefix}_SERVICE_PORT"), first.port.to_string()));
            for p in &svc.spec.ports {
                if let Some(name) = p.name.as_deref().filter(|n| !n.is_empty()) {
                    out.push((
                        format!("{prefix}_SERVICE_PORT_{}", name.to_ascii_uppercase().replace('-', "_")),
                        p.port.to_string(),
                    ));
                }
            }
            let proto = |p: &crate::api::service::ServicePort| p.protocol.clone().unwrap_or_else(|| "TCP".into());
            out.push((format!("{prefix}_PORT"), format!("{}://{ip}:{}", proto(first).to_lowercase(), first.port)));
            for p in &svc.spec.ports {
                let (proto, port) = (proto(p), p.port);
                let base = format!("{prefix}_PORT_{port}_{proto}");
                out.push((base.clone(), format!("{}://{ip}:{port}", proto.to_lowercase())));
                out.push((format!("{base}_PROTO"), proto.to_lowercase()));
                out.push((format!("{base}_PORT"), port.to_string()));
                out.push((format!("{base}_ADDR"), ip.clone()));
            }
        }
        out
    }
}
