//! The names and addresses every part of the cluster agrees on: the API server's address and
//! port, the release it runs, the Service range's fixed addresses, the admin user kubeadm
//! writes into the kubeconfig, and the annotation `kubectl apply` keeps its last input in.

/// The Kubernetes release the control plane runs (its images' tag).
pub const KUBERNETES_VERSION: &str = "v1.35.0";
/// The port kube-apiserver listens on (`--secure-port`).
pub const API_SERVER_PORT: i32 = 6443;
/// The `kubernetes` Service's address: the first of the service range.
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";
/// The cluster DNS Service's address (the kubelet's `clusterDNS`).
pub const KUBE_DNS_IP: &str = "10.96.0.10";
/// The user of the admin kubeconfig `kubeadm init` writes (`kubectl` runs as it).
pub const ADMIN_USER: &str = "kubernetes-admin";
/// Where `kubectl apply` keeps the configuration it last applied.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The address of the `index`th node (the control plane is 0) on the nodes' network.
pub fn node_address(index: u32) -> String {
    format!("172.18.{}.{}", (index + 2) / 254, (index + 2) % 254)
}

/// kube-apiserver's `--advertise-address`: the control-plane node's address.
pub fn api_server_address() -> String {
    node_address(0)
}

/// Where clients reach the API (kubeadm's `controlPlaneEndpoint`, without the port): the
/// control-plane node's address when there is one, else the load balancer's in front of the
/// API servers, a machine of its own on the nodes' network after the control-plane nodes.
pub fn control_plane_endpoint(control_planes: u32, workers: u32) -> String {
    if control_planes > 1 { node_address(workers + control_planes) } else { api_server_address() }
}
