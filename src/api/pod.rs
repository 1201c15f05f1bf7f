//! Pods (core/v1): the spec a user writes and the status the kubelet reports.

use super::int_or_string::IntOrString;
use super::meta::{ObjectMeta, is_false};
use super::named_item::NamedItem;
use super::quantity::Quantity;
use super::shared::Shared;
use crate::sim::Time;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

type Opaque = Option<Value>;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pod {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Shared between a pod's stored versions: status updates do not copy it.
    /// Change it with `Arc::make_mut`.
    #[serde(default)]
    pub spec: Arc<PodSpec>,
    /// Shared between a stored version and the copies made of it (caches, status views kept
    /// for managed fields): a pod is copied without its status. Change it with `Arc::make_mut`.
    #[serde(default, skip_serializing_if = "PodStatus::is_empty")]
    pub status: Arc<PodStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<Arc<Container>>,
    #[serde(default)]
    pub containers: Vec<Arc<Container>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_policy: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Deprecated alias of `serviceAccountName`, still accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automount_service_account_token: Option<bool>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_name: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub host_network: bool,
    /// `hostPID` (not camel case's `hostPid`), as the API spells it.
    #[serde(default, rename = "hostPID", skip_serializing_if = "is_false")]
    pub host_pid: bool,
    #[serde(default, rename = "hostIPC", skip_serializing_if = "is_false")]
    pub host_ipc: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_process_namespace: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Opaque,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdomain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Opaque,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// Shared between versions until changed (see [`Shared`]): binding a pod copies its
    /// spec, and every pod has admission's two default tolerations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Shared<Vec<Toleration>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_aliases: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_config: Opaque,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readiness_gates: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_service_links: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Opaque,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_constraints: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_hostname_as_fqdn: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Opaque,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_users: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scheduling_gates: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_claims: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Each keeps its fields other than the name shared: every pod's service-account token
    /// volume is one value under as many names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<NamedItem>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ephemeral_containers: Vec<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Container {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub image: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ContainerPort>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_from: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    /// Shared with the template and every copy of the container (the service-account mount
    /// copies each pod's containers): a pod's own requests cost a pointer, not a map.
    #[serde(default)]
    pub resources: Shared<ResourceRequirements>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resize_policy: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    /// As `PodSpec::volumes`: the token volume's mount is shared but for its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<NamedItem>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_devices: Vec<Value>,
    /// The probes are boxed: most containers have none, and each pod's own copy of its
    /// containers (see `resources`) would otherwise carry room for three.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness_probe: Option<Box<Probe>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_probe: Option<Box<Probe>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_probe: Option<Box<Probe>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Opaque,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_message_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_message_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Opaque,
    #[serde(default, skip_serializing_if = "is_false")]
    pub stdin: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub stdin_once: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub tty: bool,
}

/// A health check the kubelet runs against a container: one handler (`exec`, `httpGet`,
/// `tcpSocket` or `grpc`) and its timing. Zero means unset for the int fields, as in the
/// API (`omitempty`); the API server fills in the defaults (`set_defaults`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Probe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<HttpGetAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<TcpSocketAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<GrpcAction>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub initial_delay_seconds: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timeout_seconds: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub period_seconds: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub success_threshold: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failure_threshold: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecAction {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpGetAction {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// A number, or the name of one of the container's ports.
    #[serde(default = "no_port")]
    pub port: IntOrString,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheme: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_headers: Vec<HttpHeader>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpHeader {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TcpSocketAction {
    #[serde(default = "no_port")]
    pub port: IntOrString,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrpcAction {
    #[serde(default)]
    pub port: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
}

fn no_port() -> IntOrString {
    IntOrString::Int(0)
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl Probe {
    /// The API server's defaults: timeout 1s, period 10s, success 1, failure 3; an HTTP
    /// check's path `/` and scheme `HTTP`.
    pub fn set_defaults(&mut self) {
        for (field, default) in [
            (&mut self.timeout_seconds, 1),
            (&mut self.period_seconds, 10),
            (&mut self.success_threshold, 1),
            (&mut self.failure_threshold, 3),
        ] {
            if *field == 0 {
                *field = default;
            }
        }
        if let Some(http) = &mut self.http_get {
            if http.path.is_empty() {
                http.path = "/".into();
            }
            if http.scheme.is_empty() {
                http.scheme = "HTTP".into();
            }
        }
    }

    /// The probe in one line, as `kubectl describe pod` prints it after `Liveness:`:
    /// `exec [cat /tmp/healthy] delay=5s timeout=1s period=5s #success=1 #failure=3`.
    pub fn describe(&self) -> String {
        let handler = if let Some(exec) = &self.exec {
            format!("exec [{}]", exec.command.join(" "))
        } else if let Some(http) = &self.http_get {
            let scheme = if http.scheme.is_empty() { "http".to_string() } else { http.scheme.to_lowercase() };
            format!("http-get {scheme}://{}:{}{}", http.host, http.port, http.path)
        } else if let Some(tcp) = &self.tcp_socket {
            format!("tcp-socket {}:{}", tcp.host, tcp.port)
        } else if let Some(grpc) = &self.grpc {
            format!("grpc <pod>:{} {}", grpc.port, grpc.service.as_deref().unwrap_or(""))
        } else {
            "unknown".to_string()
        };
        format!(
            "{handler} delay={}s timeout={}s period={}s #success={} #failure={}",
            self.initial_delay_seconds,
            self.timeout_seconds,
            self.period_seconds,
            self.success_threshold,
            self.failure_threshold
        )
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerPort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_port: Option<i32>,
    pub container_port: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnvVar {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Opaque,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceRequirements {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Value>,
}

impl ResourceRequirements {
    pub fn is_empty(&self) -> bool {
        self.limits.is_empty() && self.requests.is_empty() && self.claims.is_empty()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Toleration {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub effect: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodStatus {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<PodCondition>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub nominated_node_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty", rename = "hostIP")]
    pub host_ip: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "hostIPs")]
    pub host_ips: Vec<IpEntry>,
    #[serde(default, skip_serializing_if = "String::is_empty", rename = "podIP")]
    pub pod_ip: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "podIPs")]
    pub pod_ips: Vec<IpEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_container_statuses: Vec<ContainerStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_statuses: Vec<ContainerStatus>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub qos_class: String,
}

impl PodStatus {
    pub fn is_empty(&self) -> bool {
        *self == PodStatus::default()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpEntry {
    pub ip: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodCondition {
    /// Static text for the types and statuses the cluster itself writes (every pod status the
    /// kubelet works out has five conditions), copied only when read from a manifest.
    #[serde(rename = "type")]
    pub type_: Cow<'static, str>,
    pub status: Cow<'static, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerStatus {
    pub name: String,
    #[serde(default)]
    pub state: ContainerState,
    #[serde(default, skip_serializing_if = "ContainerState::is_empty")]
    pub last_state: ContainerState,
    #[serde(default)]
    pub ready: bool,
    #[serde(default)]
    pub restart_count: i32,
    #[serde(default)]
    pub image: String,
    #[serde(default, rename = "imageID")]
    pub image_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty", rename = "containerID")]
    pub container_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<ContainerStateWaiting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<ContainerStateRunning>,
    /// Boxed: the largest state and the rarest, and every container status has two states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<Box<ContainerStateTerminated>>,
}

impl ContainerState {
    pub fn is_empty(&self) -> bool {
        *self == ContainerState::default()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerStateWaiting {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerStateRunning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerStateTerminated {
    pub exit_code: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    #[serde(default, skip_serializing_if = "String::is_empty", rename = "containerID")]
    pub container_id: String,
}

/// CPU and memory a pod asks for, in milli-cores and bytes, as the scheduler counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodRequests {
    pub cpu_milli: i64,
    pub memory_bytes: i64,
}

impl Pod {
    /// The pod's effective requests: the sum over containers, or the largest init container if
    /// that is bigger (init containers run one at a time).
    pub fn requests(&self) -> PodRequests {
        fn get<'a>(c: &'a Container, name: &str) -> Option<&'a Quantity> {
            c.resources.requests.get(name)
        }
        let sum = |cs: &[Arc<Container>]| {
            cs.iter().fold(PodRequests::default(), |acc, c| PodRequests {
                cpu_milli: acc.cpu_milli + get(c, "cpu").map_or(0, Quantity::milli),
                memory_bytes: acc.memory_bytes + get(c, "memory").map_or(0, Quantity::value),
            })
        };
        let regular = sum(&self.spec.containers);
        let init = self.spec.init_containers.iter().fold(PodRequests::default(), |acc, c| PodRequests {
            cpu_milli: acc.cpu_milli.max(get(c, "cpu").map_or(0, Quantity::milli)),
            memory_bytes: acc.memory_bytes.max(get(c, "memory").map_or(0, Quantity::value)),
        });
        PodRequests {
            cpu_milli: regular.cpu_milli.max(init.cpu_milli),
            memory_bytes: regular.memory_bytes.max(init.memory_bytes),
        }
    }

    pub fn condition(&self, type_: &str) -> Option<&PodCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    pub fn is_ready(&self) -> bool {
        self.condition("Ready").is_some_and(|c| c.status == "True")
    }

    /// Whether the pod has finished for good (phase Succeeded or Failed).
    pub fn is_terminal(&self) -> bool {
        matches!(self.status.phase.as_str(), "Succeeded" | "Failed")
    }

    pub fn restart_policy(&self) -> &str {
        self.spec.restart_policy.as_deref().unwrap_or("Always")
    }
}

/// Sets or replaces a condition, keeping its transition time when the status is unchanged.
pub fn set_condition(conditions: &mut Vec<PodCondition>, mut cond: PodCondition, now: Time) {
    match conditions.iter_mut().find(|c| c.type_ == cond.type_) {
        Some(existing) => {
            cond.last_transition_time =
                if existing.status == cond.status { existing.last_transition_time } else { Some(now) };
            *existing = cond;
        }
        None => {
            cond.last_transition_time = Some(now);
            super::push_exact(conditions, cond);
        }
    }
}
