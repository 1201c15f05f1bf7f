//! The connect subresources, `pods/log`, `pods/exec` and `pods/attach`: the API server
//! authorizes and records the request like any other, finds the pod's node and container,
//! and answers with where to connect; the cluster then opens the stream through that node's
//! kubelet (the API server's own hop, recorded as such). Nothing here runs kubelet code.

use super::request::ConnectTarget;
use super::{ApiServer, Reply, Request, Stage, StageResult, Status, Subresource};
use crate::api::Object;

impl ApiServer {
    /// Where a connect request goes: 200 for a log, 101 (Switching Protocols) for a stream.
    pub(super) fn connect(&self, req: &Request) -> StageResult<(u16, Reply)> {
        let object = self.get(req)?;
        let Some(pod) = object.as_pod() else { return Err((Stage::Storage, Status::internal("not a pod"))) };
        let sub = req.subresource.unwrap_or(Subresource::Log);
        let names: Vec<&str> =
            pod.spec.containers.iter().chain(&pod.spec.init_containers).map(|c| c.name.as_str()).collect();
        let container = match req.option("container") {
            Some(c) => c.to_string(),
            None if pod.spec.containers.len() == 1 => pod.spec.containers[0].name.clone(),
            None => {
                let all: Vec<&str> = pod.spec.containers.iter().map(|c| c.name.as_str()).collect();
                return Err((
                    Stage::Validation,
                    Status::bad_request(format!(
                        "a container name must be specified for pod {}, choose one of: [{}]",
                        pod.metadata.name,
                        all.join(" ")
                    )),
                ));
            }
        };
        if !names.contains(&container.as_str()) {
            return Err((
                Stage::Validation,
                Status::bad_request(format!("container {container} is not valid for pod {}", pod.metadata.name)),
            ));
        }
        if pod.spec.node_name.is_empty() {
            return Err((
                Stage::Validation,
                Status::bad_request(format!("pod {} does not have a host assigned", pod.metadata.name)),
            ));
        }
        let container_id = pod
            .status
            .container_statuses
            .iter()
            .chain(&pod.status.init_container_statuses)
            .find(|s| s.name == container)
            .map(|s| s.container_id.clone())
            .unwrap_or_default();
        let (ns, name) = (&pod.metadata.namespace, &pod.metadata.name);
        let kubelet_path = match sub {
            Subresource::Exec => format!("/exec/{ns}/{name}/{container}"),
            Subresource::Attach => format!("/attach/{ns}/{name}/{container}"),
            _ => format!("/containerLogs/{ns}/{name}/{container}"),
        };
        let target = ConnectTarget {
            subresource: sub,
            node: pod.spec.node_name.clone(),
            namespace: ns.clone(),
            pod: name.clone(),
            uid: pod.metadata.uid.clone(),
            container,
            container_id,
            kubelet_path,
        };
        Ok((if sub == Subresource::Log { 200 } else { 101 }, Reply::Connect(target)))
    }

    /// Whether a stream the API server proxies to a kubelet is still open: its pod is still
    /// there (the same pod, not being deleted) and its container runs — with `same_instance`,
    /// the very instance connected to, as an exec or attach stream ends with its process.
    pub fn stream_open(&self, target: &ConnectTarget, same_instance: bool) -> bool {
        let Some(object) = self.peek(crate::api::Kind::Pod, &target.namespace, &target.pod) else { return false };
        let Object::Pod(pod) = object.as_ref() else { return false };
        let running = pod
            .status
            .container_statuses
            .iter()
            .chain(&pod.status.init_container_statuses)
            .find(|c| c.name == target.container)
            .is_some_and(|c| c.state.running.is_some() && (!same_instance || c.container_id == target.container_id));
        if same_instance {
            running && pod.metadata.uid == target.uid && pod.metadata.deletion_timestamp.is_none()
        } else {
            running
        }
    }
}
