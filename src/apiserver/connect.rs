//! The connect subresources, `pods/log`, `pods/exec` and `pods/attach`: the API server
//! authorizes and records the request like any other, finds the pod's node and container,
//! and answers with where to connect; the cluster then opens the stream through that node's
//! kubelet (the API server's own hop, recorded as such). Nothing here runs kubelet code.

use super::authorization::{self, Attributes};
use super::request::ConnectTarget;
use super::{ApiServer, Env, Reply, Request, Stage, StageResult, Status, Subresource, Verb};
use crate::api::pod::ContainerStatus;
use crate::api::{Object, Pod};

impl ApiServer {
    /// Where a connect request goes: 200 for a log, 101 (Switching Protocols) for a stream.
    /// A stream's WebSocket upgrade comes as a GET, authorized as `get`; like upstream (the
    /// AuthorizePodWebsocketUpgradeCreatePermission gate, on by default since 1.35) it must
    /// also be allowed to `create` the subresource, as the SPDY upgrade's POST is.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn connect(&self, req: &Request, env: &Env) -> StageResult<(u16, Reply)> {
        let sub = req.subresource.unwrap_or(Subresource::Log);
        if let (Some(who), true) = (&env.identity, sub != Subresource::Log && req.verb == Verb::Get) {
            let attrs = Attributes::new("create", req.kind, Some(sub.as_str()), &req.namespace, &req.name);
            if let Err(message) = authorization::authorize(&self.etcd, who, &attrs) {
                return Err((Stage::Authorization, Status::forbidden(message)));
            }
        }
        let object = self.get(req)?;
        let Some(pod) = object.as_pod() else { return Err((Stage::Storage, Status::internal("not a pod"))) };
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
        // A pod not yet on a node: its log is empty (no kubelet to ask); a stream has nowhere to go.
        if pod.spec.node_name.is_empty() && sub != Subresource::Log {
            return Err((
                Stage::Validation,
                Status::bad_request(format!("pod {} does not have a host assigned", pod.metadata.name)),
            ));
        }
        let status = pod
            .status
            .container_statuses
            .iter()
            .chain(&pod.status.init_container_statuses)
            .find(|s| s.name == container);
        if sub == Subresource::Log && !pod.spec.node_name.is_empty() {
            // What the kubelet answers for a log it cannot serve, which the API server relays.
            if let Some(message) = unserved_log(pod, &container, status, req.option("previous") == Some("true")) {
                return Err((Stage::Storage, Status::bad_request(message)));
            }
        }
        let container_id = status.map(|s| s.container_id.clone()).unwrap_or_default();
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

/// Why a container's log cannot be read, as the kubelet words it: the container has not
/// started (no instance yet), or `previous` asks for an instance before the current one and
/// there is none.
fn unserved_log(pod: &Pod, container: &str, status: Option<&ContainerStatus>, previous: bool) -> Option<String> {
    let name = &pod.metadata.name;
    if status.is_none_or(|s| s.container_id.is_empty()) {
        let reason =
            status.and_then(|s| s.state.waiting.as_ref()).map_or("ContainerCreating".to_string(), |w| w.reason.clone());
        let why = match reason.as_str() {
            "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName" | "ErrImageNeverPull" => {
                "trying and failing to pull image"
            }
            other => other,
        };
        return Some(format!("container \"{container}\" in pod \"{name}\" is waiting to start: {why}"));
    }
    (previous && status.is_some_and(|s| s.restart_count == 0))
        .then(|| format!("previous terminated container \"{container}\" in pod \"{name}\" not found"))
}

#[cfg(test)]
mod tests {
    use crate::apiserver::{Request, Subresource};
    use crate::record::{ComponentId, Happening};
    use crate::shell::{Command, Session};

    fn running_web() -> Session {
        let mut s = Session::new(4);
        for line in ["kubectl run web --image=nginx", "sleep 10s"] {
            s.execute(&Command::new(line));
        }
        s
    }

    fn run(s: &mut Session, line: &str) -> crate::kubectl::Output {
        s.execute(&Command::new(line))
    }

    #[test]
    fn a_log_request_is_recorded_then_the_api_server_calls_the_kubelet_of_the_pods_node() {
        let mut s = running_web();
        let target = s
            .cluster
            .connect(Request::connect(Subresource::Log, "default", "web", &[("container", "web")], false))
            .expect("connected");
        let last = s.cluster.record.last_seq();
        let call = s.cluster.record.get(last).expect("recorded").clone();
        let Happening::KubeletCall { to, method, path } = &call.what else { panic!("{call:?}") };
        assert_eq!(
            (call.actor, *method, path.as_str()),
            (ComponentId::API_SERVER, "GET", "/containerLogs/default/web/web")
        );
        assert_eq!(s.cluster.component_name(*to), format!("kubelet ({})", target.node));
        let asked = s.cluster.record.get(call.cause.expect("caused")).expect("the request").clone();
        assert!(
            matches!(&asked.what, Happening::Request { path, code: 200, .. } if path == "/api/v1/namespaces/default/pods/web/log?container=web")
        );
    }

    #[test]
    fn a_user_who_may_read_pods_but_not_their_logs_is_refused_at_pods_log() {
        let mut s = running_web();
        run(&mut s, "kubectl create role pod-reader --verb=get --resource=pods");
        run(&mut s, "kubectl create rolebinding jane-pods --role=pod-reader --user=jane");
        let before = s.cluster.record.last_seq();
        let out = run(&mut s, "kubectl logs web --as=jane");
        assert_eq!(
            out.stderr,
            "Error from server (Forbidden): pods \"web\" is forbidden: User \"jane\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"default\"\n"
        );
        let kubelet_calls =
            s.cluster.record.since(before).filter(|e| matches!(e.what, Happening::KubeletCall { .. })).count();
        assert_eq!(kubelet_calls, 0, "a refused request never reaches the kubelet");
        run(&mut s, "kubectl create role log-reader --verb=get --resource=pods/log");
        run(&mut s, "kubectl create rolebinding jane-logs --role=log-reader --user=jane");
        assert_eq!(run(&mut s, "kubectl logs web --as=jane").code, 0);
    }

    #[test]
    fn a_websocket_exec_needs_create_as_well_as_get_and_the_spdy_fallback_needs_create_alone() {
        let mut s = running_web();
        run(&mut s, "kubectl create role pod-reader --verb=get --resource=pods");
        run(&mut s, "kubectl create rolebinding jane-pods --role=pod-reader --user=jane");
        run(&mut s, "kubectl create role exec-get --verb=get --resource=pods/exec");
        run(&mut s, "kubectl create rolebinding jane-exec-get --role=exec-get --user=jane");
        let out = run(&mut s, "kubectl exec web --as=jane -- echo hi");
        assert!(out.stderr.contains("cannot create resource \"pods/exec\""), "{}", out.stderr);
        run(&mut s, "kubectl create role exec-create --verb=create --resource=pods/exec");
        run(&mut s, "kubectl create rolebinding jane-exec-create --role=exec-create --user=jane");
        run(&mut s, "kubectl delete rolebinding jane-exec-get");
        s.cluster.client_log = Some(Vec::new());
        let out = run(&mut s, "kubectl exec web --as=jane -- echo hi");
        assert_eq!((out.stdout.as_str(), out.code), ("hi\n", 0));
        let log = s.cluster.client_log.take().unwrap_or_default();
        let codes: Vec<(&str, u16)> = log
            .iter()
            .filter(|c| c.request.subresource == Some(Subresource::Exec))
            .map(|c| (c.request.verb.method(), c.result.as_ref().map_or_else(|e| e.code, |_| 101)))
            .collect();
        assert_eq!(codes, [("GET", 403), ("POST", 101)]);
    }

    #[test]
    fn a_stream_closes_when_its_container_instance_is_gone() {
        let mut s = running_web();
        let target = s
            .cluster
            .connect(Request::connect(Subresource::Attach, "default", "web", &[("container", "web")], false))
            .expect("connected");
        assert!(s.cluster.stream_open(&target, true));
        run(&mut s, "kubectl delete pod web --wait=false");
        assert!(!s.cluster.stream_open(&target, true));
    }

    #[test]
    fn the_previous_log_of_a_container_that_never_restarted_is_not_found_and_forbidden_comes_first() {
        let mut s = running_web();
        let out = run(&mut s, "kubectl logs web --previous");
        assert_eq!(
            out.stderr,
            "Error from server (BadRequest): previous terminated container \"web\" in pod \"web\" not found\n"
        );
        run(&mut s, "kubectl run stuck --image=nginx:no-such-tag");
        assert_eq!(run(&mut s, "kubectl logs stuck").stdout, "", "not yet on a node: an empty log");
        run(&mut s, "sleep 5s");
        run(&mut s, "kubectl create role pod-reader --verb=get --resource=pods");
        run(&mut s, "kubectl create rolebinding jane-pods --role=pod-reader --user=jane");
        let out = run(&mut s, "kubectl logs stuck --as=jane");
        assert!(out.stderr.contains("cannot get resource \"pods/log\""), "{}", out.stderr);
        let out = run(&mut s, "kubectl logs stuck");
        assert!(out.stderr.contains("is waiting to start"), "{}", out.stderr);
    }

    #[test]
    fn with_the_pods_kubelet_down_the_api_server_relays_its_failed_dial() {
        let mut s = running_web();
        let node = run(&mut s, "kubectl get pod web -o jsonpath={.spec.nodeName}").stdout;
        let ip = run(&mut s, &format!("kubectl get node {node} -o jsonpath={{.status.addresses[0].address}}")).stdout;
        run(&mut s, &format!("sim node stop {node}"));
        let out = run(&mut s, "kubectl logs web");
        assert_eq!(
            out.stderr,
            format!(
                "Error from server: Get \"https://{ip}:10250/containerLogs/default/web/web\": dial tcp {ip}:10250: connect: connection refused\n"
            )
        );
        let out = run(&mut s, "kubectl exec web -- echo hi");
        assert_eq!(
            out.stderr,
            format!("Error from server: error dialing backend: dial tcp {ip}:10250: connect: connection refused\n")
        );
    }
}
