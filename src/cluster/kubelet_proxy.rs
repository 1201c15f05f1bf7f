//! The API server's hop to a kubelet for the connect subresources (`pods/log`, `pods/exec`,
//! `pods/attach`). kubectl sends the request; the API server authorizes and records it and
//! answers where to connect ([`ConnectTarget`]); the cluster then records the API server's
//! call to that node's kubelet and carries the stream between them. Once open, a stream
//! carries data (log lines, typed input, a process's exit) without further requests, as a
//! real stream does; it closes when the API server finds its container gone.

use crate::apiserver::{ConnectTarget, Reply, Request, Status, Subresource};
use crate::cluster::{Cluster, Role};
use crate::record::{ComponentId, Happening};
use crate::sim::Time;

impl Cluster {
    /// Opens an exec or attach stream as kubectl does: the WebSocket upgrade (a GET) first,
    /// then, when that is refused, the SPDY upgrade (a POST), whose answer stands.
    pub fn connect_stream(
        &mut self,
        sub: Subresource,
        namespace: &str,
        pod: &str,
        options: &[(&str, &str)],
    ) -> Result<ConnectTarget, Status> {
        match self.connect(Request::connect(sub, namespace, pod, options, false)) {
            Err(status) if status.code != 0 => self.connect(Request::connect(sub, namespace, pod, options, true)),
            answer => answer,
        }
    }

    /// Sends a connect request as kubectl; when the API server allows it, records its call to
    /// the kubelet of the pod's node and returns the open stream's target.
    pub fn connect(&mut self, req: Request) -> Result<ConnectTarget, Status> {
        let target = match self.request(req)? {
            Reply::Connect(target) => target,
            _ => return Err(Status::internal("the API server did not connect the stream")),
        };
        if target.node.is_empty() {
            // A log of a pod no node runs yet: the API server answers it empty itself.
            return Ok(target);
        }
        let Some(kubelet) = self.find_component(&Role::Kubelet { node: target.node.clone() }) else {
            return Err(Status::internal(format!("no kubelet serves node {}", target.node)));
        };
        let asked = self.record.last_seq();
        let revision = self.record.get(asked).map_or(0, |e| e.revision);
        let method = if target.subresource == Subresource::Log { "GET" } else { "POST" };
        let what = Happening::KubeletCall { to: kubelet, method, path: target.kubelet_path.clone() };
        self.record.push(self.now(), revision, ComponentId::API_SERVER, Some(asked), what);
        if !self.is_running(kubelet) {
            // Nothing listens on the kubelet's port: the API server relays what its dial did.
            let ip = self.kubelet(&target.node).map(|k| k.config.internal_ip.clone()).unwrap_or_default();
            let dial = format!("dial tcp {ip}:10250: connect: connection refused");
            let message = match target.subresource {
                Subresource::Log => format!("Get \"https://{ip}:10250{}\": {dial}", target.kubelet_path),
                _ => format!("error dialing backend: {dial}"),
            };
            return Err(Status::internal(message));
        }
        Ok(target)
    }

    /// The log lines the stream's container wrote so far (or its previous instance's), each
    /// with when it was written, as its kubelet serves them.
    pub fn stream_logs(&self, target: &ConnectTarget, previous: bool) -> Option<Vec<(Time, String)>> {
        if target.node.is_empty() {
            return Some(Vec::new());
        }
        self.kubelet(&target.node)?.logs_timed(&target.namespace, &target.pod, &target.container, previous, self.now())
    }

    /// Whether the stream is still open (see [`crate::apiserver::ApiServer::stream_open`]).
    pub fn stream_open(&self, target: &ConnectTarget, same_instance: bool) -> bool {
        self.api.stream_open(target, same_instance)
    }

    /// Lines the attached terminal shows of a container's own shell (the echo of what was
    /// typed and what it printed), which the container's log keeps.
    pub fn stream_echo(&mut self, target: &ConnectTarget, lines: &[String]) {
        let now = self.now();
        if let Some(kubelet) = self.kubelet_unwoken_mut(&target.node) {
            kubelet.append_logs(&target.namespace, &target.pod, &target.container, lines, now);
        }
    }

    /// The attached main process exits with `code` (its shell read `exit`).
    pub fn stream_exit(&mut self, target: &ConnectTarget, code: i32) {
        let now = self.now();
        if let Some(kubelet) = self.kubelet_mut(&target.node) {
            let _ = kubelet.exit_process(&target.namespace, &target.pod, &target.container, code, now);
        }
    }
}
