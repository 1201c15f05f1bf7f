//! A container's environment as its processes see it: its own variables, `valueFrom`
//! (downward API, ConfigMap and Secret keys) and the Service links the kubelet injects.

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
        for var in &self.spec.env {
            let value = match (&var.value, &var.value_from) {
                (Some(v), _) => v.clone(),
                (None, Some(from)) => self.value_from(from),
                (None, None) => String::new(),
            };
            env.push((var.name.clone(), value));
        }
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

    /// `valueFrom`: the downward API's common fields, ConfigMap and Secret keys.
    pub(super) fn value_from(&self, from: &serde_json::Value) -> String {
        let api = self.cluster.api();
        let ns = &self.pod.metadata.namespace;
        let s = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or_default().to_string();
        if let Some(field) = from.get("fieldRef") {
            return match s(field, "fieldPath").as_str() {
                "metadata.name" => self.pod.metadata.name.clone(),
                "metadata.namespace" => ns.clone(),
                "metadata.uid" => self.pod.metadata.uid.clone(),
                "spec.nodeName" => self.pod.spec.node_name.clone(),
                "spec.serviceAccountName" => self.pod.spec.service_account_name.clone().unwrap_or_default(),
                "status.podIP" => self.pod.status.pod_ip.clone(),
                "status.hostIP" => self.pod.status.host_ip.clone(),
                _ => String::new(),
            };
        }
        if let Some(r) = from.get("configMapKeyRef") {
            if let Some(Object::ConfigMap(cm)) = api.peek(Kind::ConfigMap, ns, &s(r, "name")).as_deref() {
                return cm.data.get(&s(r, "key")).cloned().unwrap_or_default();
            }
        }
        if let Some(r) = from.get("secretKeyRef") {
            if let Some(Object::Secret(secret)) = api.peek(Kind::Secret, ns, &s(r, "name")).as_deref() {
                let data = secret.data.get(&s(r, "key")).cloned().unwrap_or_default();
                return String::from_utf8_lossy(&crate::base64::decode(&data).unwrap_or_default()).into_owned();
            }
        }
        String::new()
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
