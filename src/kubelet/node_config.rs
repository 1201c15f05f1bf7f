//! A machine's shape: what the kubelet registers as its Node object.

use crate::api::node::{NodeAddress, NodeSpec, NodeStatus, NodeSystemInfo};
use crate::api::{Labels, Node, NodeCondition, ObjectMeta, Pod, Quantity, Taint};
use crate::sim::Time;

pub const KUBELET_VERSION: &str = "v1.35.0";

#[derive(Clone, Debug, PartialEq)]
pub struct NodeConfig {
    pub name: String,
    pub cpu_milli: i64,
    pub memory_bytes: i64,
    pub max_pods: i64,
    pub labels: Labels,
    pub taints: Vec<Taint>,
    /// The node's pod CIDR, `10.244.<index>.0/24`.
    pub pod_cidr: String,
    pub internal_ip: String,
    /// The manifests in the node's `/etc/kubernetes/manifests`: static pods the kubelet runs
    /// itself and shows in the API as mirror pods.
    pub static_pods: Vec<Pod>,
    /// The manifests folder's files as kubeadm wrote them (file name, text): when there are
    /// any, the kubelet reads its static pods from these files on the node's disk instead.
    pub manifest_files: Vec<(String, String)>,
    /// Images already in the node's container runtime when it boots (canonical references).
    pub preloaded_images: Vec<String>,
}

impl NodeConfig {
    /// A worker (or control-plane node) numbered `index` in the cluster.
    pub fn new(name: &str, index: u32, cpu_milli: i64, memory_bytes: i64, max_pods: i64) -> Self {
        let mut labels = Labels::new();
        labels.insert("beta.kubernetes.io/arch".into(), "amd64".into());
        labels.insert("beta.kubernetes.io/os".into(), "linux".into());
        labels.insert("kubernetes.io/arch".into(), "amd64".into());
        labels.insert("kubernetes.io/hostname".into(), name.into());
        labels.insert("kubernetes.io/os".into(), "linux".into());
        NodeConfig {
            name: name.to_string(),
            cpu_milli,
            memory_bytes,
            max_pods,
            labels,
            taints: Vec::new(),
            pod_cidr: format!("10.244.{}.0/24", index % 256),
            internal_ip: crate::api::well_known::node_address(index),
            static_pods: Vec::new(),
            manifest_files: Vec::new(),
            preloaded_images: super::images::PRELOADED.iter().map(|i| i.to_string()).collect(),
        }
    }

    /// Marks the node as the control plane, as `kubeadm init` leaves it: its role label and
    /// NoSchedule taint, and the static pods (etcd, kube-apiserver, kube-controller-manager,
    /// kube-scheduler) kubeadm wrote into its manifests folder.
    pub fn control_plane(mut self, static_pods: Vec<crate::api::Pod>) -> Self {
        self.static_pods = static_pods;
        self.labels.insert("node-role.kubernetes.io/control-plane".into(), String::new());
        self.labels.insert("node.kubernetes.io/exclude-from-external-load-balancers".into(), String::new());
        self.taints.push(Taint {
            key: "node-role.kubernetes.io/control-plane".into(),
            value: String::new(),
            effect: "NoSchedule".into(),
            time_added: None,
        });
        self
    }

    /// Puts the manifests as files in the node's `/etc/kubernetes/manifests`, where the
    /// kubelet's file source reads them (and a shell on the node can edit them).
    pub fn with_manifest_files(mut self, files: Vec<(String, String)>) -> Self {
        self.manifest_files = files;
        self
    }

    /// The address a pod at position `n` of this node's CIDR gets (`10.244.1.n`).
    pub fn pod_ip(&self, n: u32) -> String {
        let base = self.pod_cidr.trim_end_matches(".0/24");
        format!("{base}.{n}")
    }

    /// The Node object the kubelet registers.
    pub fn node_object(&self, now: Time) -> Node {
        let mut capacity = std::collections::BTreeMap::new();
        capacity.insert("cpu".to_string(), Quantity::from_milli(self.cpu_milli));
        capacity.insert("memory".to_string(), Quantity::bytes(self.memory_bytes));
        capacity.insert("pods".to_string(), Quantity::units(self.max_pods));
        capacity.insert("ephemeral-storage".to_string(), Quantity::bytes(100 << 30));
        let allocatable = capacity.clone();
        let cond = |type_: &str, status: &str, reason: &str, message: &str| NodeCondition {
            type_: type_.into(),
            status: status.into(),
            last_heartbeat_time: Some(now),
            last_transition_time: Some(now),
            reason: reason.into(),
            message: message.into(),
        };
        Node {
            metadata: ObjectMeta {
                name: self.name.clone(),
                labels: self.labels.clone().into(),
                annotations: [("node.alpha.kubernetes.io/ttl".to_string(), "0".to_string())].into_iter().collect(),
                ..Default::default()
            },
            spec: NodeSpec {
                pod_cidr: self.pod_cidr.clone(),
                pod_cidrs: vec![self.pod_cidr.clone()],
                provider_id: format!("kubeloop://{}", self.name),
                taints: self.taints.clone(),
                ..Default::default()
            },
            status: NodeStatus {
                capacity,
                allocatable,
                conditions: vec![
                    cond(
                        "MemoryPressure",
                        "False",
                        "KubeletHasSufficientMemory",
                        "kubelet has sufficient memory available",
                    ),
                    cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
                ],
                addresses: vec![
                    NodeAddress { type_: "InternalIP".into(), address: self.internal_ip.clone() },
                    NodeAddress { type_: "Hostname".into(), address: self.name.clone() },
                ],
                node_info: Some(NodeSystemInfo {
                    machine_id: format!("{:032x}", fnv(&self.name)),
                    system_uuid: format!("{:032x}", fnv(&format!("uuid-{}", self.name))),
                    boot_id: format!("{:032x}", fnv(&format!("boot-{}", self.name))),
                    kernel_version: "6.8.0-51-generic".into(),
                    os_image: "Debian GNU/Linux 12 (bookworm)".into(),
                    container_runtime_version: "containerd://2.0.2".into(),
                    kubelet_version: KUBELET_VERSION.into(),
                    kube_proxy_version: String::new(),
                    operating_system: "linux".into(),
                    architecture: "amd64".into(),
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

fn fnv(s: &str) -> u128 {
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in s.bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    h
}
