//! What a new cluster has before anyone types, as `kubeadm init` (which kind runs) leaves it:
//! kube-apiserver's own `kubernetes` Service with the Endpoints and EndpointSlice its endpoint
//! reconciler keeps; the static pod manifests of the control plane (etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler), which the control-plane node's kubelet runs; and
//! kubeadm's two add-ons in `kube-system`: kube-proxy (a DaemonSet) and CoreDNS (a Deployment
//! behind the `kube-dns` Service).

use crate::api::service::{
    EndpointAddress, EndpointConditions, EndpointPort, EndpointSubset, ServicePort, ServiceSpec, SliceEndpoint,
};
use crate::api::{EndpointSlice, Endpoints, IntOrString, Kind, Object, ObjectMeta, Pod, Service};
use crate::apiserver::{Reply, Request, Status};

pub use crate::api::well_known::{
    API_SERVER_PORT, KUBE_DNS_IP, KUBERNETES_SERVICE_IP, KUBERNETES_VERSION, api_server_address,
};

/// The etcd image kubeadm deploys (`registry.k8s.io/etcd:<ETCD_VERSION>`).
pub const ETCD_VERSION: &str = "3.5.21-0";
/// The CoreDNS image kubeadm deploys (`registry.k8s.io/coredns/coredns:<COREDNS_VERSION>`).
pub const COREDNS_VERSION: &str = "v1.12.0";

fn labels(pairs: &[(&str, &str)]) -> crate::api::Labels {
    crate::util::sort::btree_map(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn port(name: &str, protocol: &str, port: i32) -> ServicePort {
    ServicePort {
        name: Some(name.into()),
        protocol: Some(protocol.into()),
        port,
        target_port: Some(IntOrString::Int(port)),
        ..Default::default()
    }
}

/// Creates the bootstrap Services (and the `kubernetes` Service's endpoints) through `send`,
/// which sends a request as kube-apiserver.
pub fn cluster_services(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    let address = api_server_address();
    let kubernetes = Service {
        metadata: ObjectMeta {
            name: "kubernetes".into(),
            namespace: "default".into(),
            labels: labels(&[("component", "apiserver"), ("provider", "kubernetes")]).into(),
            ..Default::default()
        },
        spec: ServiceSpec {
            cluster_ip: KUBERNETES_SERVICE_IP.into(),
            ports: vec![ServicePort {
                target_port: Some(IntOrString::Int(API_SERVER_PORT)),
                ..port("https", "TCP", 443)
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    let https = EndpointPort {
        name: Some("https".into()),
        port: Some(API_SERVER_PORT),
        protocol: Some("TCP".into()),
        app_protocol: None,
    };
    let endpoints = Endpoints {
        metadata: ObjectMeta {
            name: "kubernetes".into(),
            namespace: "default".into(),
            labels: labels(&[("endpointslice.kubernetes.io/skip-mirror", "true")]).into(),
            ..Default::default()
        },
        subsets: vec![EndpointSubset {
            addresses: vec![EndpointAddress { ip: address.clone(), ..Default::default() }],
            not_ready_addresses: Vec::new(),
            ports: vec![https.clone()],
        }],
        ..Default::default()
    };
    let slice = EndpointSlice {
        metadata: ObjectMeta {
            name: "kubernetes".into(),
            namespace: "default".into(),
            labels: labels(&[("kubernetes.io/service-name", "kubernetes")]).into(),
            ..Default::default()
        },
        address_type: "IPv4".into(),
        endpoints: vec![SliceEndpoint {
            addresses: vec![address],
            conditions: EndpointConditions { ready: Some(true), ..Default::default() },
            ..Default::default()
        }],
        ports: vec![https],
        ..Default::default()
    };
    let kube_dns = Service {
        metadata: ObjectMeta {
            name: "kube-dns".into(),
            namespace: "kube-system".into(),
            labels: labels(&[
                ("k8s-app", "kube-dns"),
                ("kubernetes.io/cluster-service", "true"),
                ("kubernetes.io/name", "CoreDNS"),
            ])
            .into(),
            annotations: labels(&[("prometheus.io/port", "9153"), ("prometheus.io/scrape", "true")]).into(),
            ..Default::default()
        },
        spec: ServiceSpec {
            cluster_ip: KUBE_DNS_IP.into(),
            selector: labels(&[("k8s-app", "kube-dns")]),
            ports: vec![port("dns", "UDP", 53), port("dns-tcp", "TCP", 53), port("metrics", "TCP", 9153)],
            ..Default::default()
        },
        ..Default::default()
    };
    for object in [
        Object::Service(Box::new(kubernetes)),
        Object::Endpoints(endpoints),
        Object::EndpointSlice(slice),
        Object::Service(Box::new(kube_dns)),
    ] {
        let _ = send(Request::create(object));
    }
}

/// Decodes a built-in manifest; they are written here, so a failure is a bug.
fn manifest(kind: Kind, yaml: &str) -> Object {
    let value: serde_json::Value = crate::yaml::from_str(yaml).expect("built-in manifest is YAML");
    Object::decode(kind, &value).unwrap_or_else(|e| panic!("built-in {kind:?} manifest: {}", e.message))
}

// ---------------------------------------------------------------------------------------------
// The control plane's static pods: /etc/kubernetes/manifests on the control-plane node.
// ---------------------------------------------------------------------------------------------

// The manifests are data (`manifests/`, YAML as kubeadm writes it), with `{ADDRESS}`, `{NODE}`,
// `{VERSION}` and `{ETCD_VERSION}` filled in here.
const ETCD_MANIFEST: &str = include_str!("manifests/etcd.yaml");
const KUBE_APISERVER_MANIFEST: &str = include_str!("manifests/kube-apiserver.yaml");
const KUBE_CONTROLLER_MANAGER_MANIFEST: &str = include_str!("manifests/kube-controller-manager.yaml");
const KUBE_SCHEDULER_MANIFEST: &str = include_str!("manifests/kube-scheduler.yaml");

/// The manifest files `kubeadm init` writes into a control-plane node's
/// `/etc/kubernetes/manifests` (file name, text), for a node named `node` at `address`.
pub fn control_plane_manifest_files(node: &str, address: &str) -> Vec<(String, String)> {
    let names = ["etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"];
    let texts = [ETCD_MANIFEST, KUBE_APISERVER_MANIFEST, KUBE_CONTROLLER_MANAGER_MANIFEST, KUBE_SCHEDULER_MANIFEST];
    names.iter().zip(texts).map(|(name, text)| (name.to_string(), fill_manifest(text, node, address))).collect()
}

fn fill_manifest(text: &str, node: &str, address: &str) -> String {
    text.replace("{ADDRESS}", address)
        .replace("{NODE}", node)
        .replace("{VERSION}", KUBERNETES_VERSION)
        .replace("{ETCD_VERSION}", ETCD_VERSION)
}

/// The static pods `kubeadm init` writes on a control-plane node named `node` whose address is
/// `address`, as the kubelet reads them from disk (not yet defaulted or named after the node).
pub fn control_plane_static_pods(node: &str, address: &str) -> Vec<Pod> {
    [ETCD_MANIFEST, KUBE_APISERVER_MANIFEST, KUBE_CONTROLLER_MANAGER_MANIFEST, KUBE_SCHEDULER_MANIFEST]
        .iter()
        .map(|text| {
            let text = fill_manifest(text, node, address);
            match manifest(Kind::Pod, &text) {
                Object::Pod(mut pod) => {
                    crate::apiserver::admission::default_pod(&mut pod);
                    pod
                }
                _ => unreachable!("a Pod manifest decodes to a Pod"),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// kubeadm's add-ons: kube-proxy and CoreDNS, with their service accounts and configuration.
// ---------------------------------------------------------------------------------------------

const KUBE_PROXY_CONFIGMAP: &str = include_str!("manifests/kube-proxy-configmap.yaml");
const KUBE_PROXY_DAEMONSET: &str = include_str!("manifests/kube-proxy-daemonset.yaml");
const COREDNS_CONFIGMAP: &str = include_str!("manifests/coredns-configmap.yaml");
/// What CoreDNS's `kubernetes` plugin may read: list and watch, nothing more.
const COREDNS_CLUSTERROLE: &str = include_str!("manifests/coredns-clusterrole.yaml");
const COREDNS_CLUSTERROLEBINDING: &str = include_str!("manifests/coredns-clusterrolebinding.yaml");
const COREDNS_DEPLOYMENT: &str = include_str!("manifests/coredns-deployment.yaml");

/// Creates kubeadm's add-ons in `kube-system` through `send` (as kube-apiserver, standing in
/// for `kubeadm init`): the `kube-proxy` and `coredns` service accounts and ConfigMaps, the
/// kube-proxy DaemonSet and the CoreDNS Deployment. Their controllers then create the pods.
/// (CoreDNS's ClusterRole and binding: [`coredns_rbac`].) kube-proxy's kubeconfig points at
/// `endpoint`, the control-plane endpoint's host.
pub fn kube_system_addons(endpoint: &str, send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    let fill = |text: &str| {
        text.replace("{ADDRESS}", endpoint)
            .replace("{VERSION}", KUBERNETES_VERSION)
            .replace("{COREDNS_VERSION}", COREDNS_VERSION)
    };
    let account = |name: &str| {
        Object::ServiceAccount(crate::api::ServiceAccount {
            metadata: ObjectMeta { name: name.into(), namespace: "kube-system".into(), ..Default::default() },
            ..Default::default()
        })
    };
    let objects = [
        account("kube-proxy"),
        manifest(Kind::ConfigMap, &fill(KUBE_PROXY_CONFIGMAP)),
        manifest(Kind::DaemonSet, &fill(KUBE_PROXY_DAEMONSET)),
        account("coredns"),
        manifest(Kind::ConfigMap, &fill(COREDNS_CONFIGMAP)),
        manifest(Kind::Deployment, &fill(COREDNS_DEPLOYMENT)),
    ];
    for object in objects {
        let _ = send(Request::create(object));
    }
}

/// Creates, through `send`, the `system:coredns` ClusterRole and its binding to CoreDNS's
/// service account, as kubeadm's CoreDNS add-on phase does: what lets CoreDNS list and watch
/// Services and EndpointSlices.
pub fn coredns_rbac(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    for object in [
        manifest(Kind::ClusterRole, COREDNS_CLUSTERROLE),
        manifest(Kind::ClusterRoleBinding, COREDNS_CLUSTERROLEBINDING),
    ] {
        let _ = send(Request::create(object));
    }
}

// ---------------------------------------------------------------------------------------------
// The CNI plugin: Calico's node agent, which enforces NetworkPolicies (kind's own kindnet
// does not), as its manifest installs it.
// ---------------------------------------------------------------------------------------------

const CALICO_NODE_CLUSTERROLE: &str = include_str!("manifests/calico-node-clusterrole.yaml");
const CALICO_NODE_CLUSTERROLEBINDING: &str = include_str!("manifests/calico-node-clusterrolebinding.yaml");
const CALICO_NODE_DAEMONSET: &str = include_str!("manifests/calico-node-daemonset.yaml");
/// The Calico release the cluster runs.
pub const CALICO_VERSION: &str = "v3.29.3";

/// Creates, through `send`, the `calico-node` service account, its rights (reading pods,
/// namespaces and NetworkPolicies) and its DaemonSet in `kube-system`. The agent each of its
/// pods stands for is [`crate::cni::CalicoNode`].
pub fn cni_plugin(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    let account = Object::ServiceAccount(crate::api::ServiceAccount {
        metadata: ObjectMeta { name: "calico-node".into(), namespace: "kube-system".into(), ..Default::default() },
        ..Default::default()
    });
    for object in [
        account,
        manifest(Kind::ClusterRole, CALICO_NODE_CLUSTERROLE),
        manifest(Kind::ClusterRoleBinding, CALICO_NODE_CLUSTERROLEBINDING),
        manifest(Kind::DaemonSet, &CALICO_NODE_DAEMONSET.replace("{CALICO_VERSION}", CALICO_VERSION)),
    ] {
        let _ = send(Request::create(object));
    }
}

// ---------------------------------------------------------------------------------------------
// kind's storage: the `standard` default StorageClass and local-path-provisioner.
// ---------------------------------------------------------------------------------------------

const STANDARD_STORAGECLASS: &str = include_str!("manifests/standard-storageclass.yaml");
const LOCAL_PATH_CLUSTERROLE: &str = include_str!("manifests/local-path-clusterrole.yaml");
const LOCAL_PATH_CLUSTERROLEBINDING: &str = include_str!("manifests/local-path-clusterrolebinding.yaml");
const LOCAL_PATH_CONFIGMAP: &str = include_str!("manifests/local-path-configmap.yaml");
const LOCAL_PATH_DEPLOYMENT: &str = include_str!("manifests/local-path-deployment.yaml");
/// The namespace kind runs its provisioner in.
pub const LOCAL_PATH_NAMESPACE: &str = crate::controllers::local_path::NAMESPACE;
/// Who local-path-provisioner is to the API server: its pod's service account.
pub const LOCAL_PATH_USER: &str = "system:serviceaccount:local-path-storage:local-path-provisioner-service-account";

/// Creates, through `send`, what `kind create cluster` applies after kubeadm: the
/// `local-path-storage` namespace with local-path-provisioner's account, rights, configuration
/// and Deployment, and the `standard` StorageClass it serves, marked as the default.
pub fn kind_storage(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    let namespace = Object::Namespace(crate::api::Namespace {
        metadata: ObjectMeta { name: LOCAL_PATH_NAMESPACE.into(), ..Default::default() },
        ..Default::default()
    });
    let account = Object::ServiceAccount(crate::api::ServiceAccount {
        metadata: ObjectMeta {
            name: "local-path-provisioner-service-account".into(),
            namespace: LOCAL_PATH_NAMESPACE.into(),
            ..Default::default()
        },
        ..Default::default()
    });
    for object in [
        namespace,
        account,
        manifest(Kind::ClusterRole, LOCAL_PATH_CLUSTERROLE),
        manifest(Kind::ClusterRoleBinding, LOCAL_PATH_CLUSTERROLEBINDING),
        manifest(Kind::ConfigMap, LOCAL_PATH_CONFIGMAP),
        manifest(Kind::Deployment, LOCAL_PATH_DEPLOYMENT),
        manifest(Kind::StorageClass, STANDARD_STORAGECLASS),
    ] {
        let _ = send(Request::create(object));
    }
}

// ---------------------------------------------------------------------------------------------
// metrics-server: the add-on behind the Metrics API (`kubectl top`, the HPA).
// ---------------------------------------------------------------------------------------------

const METRICS_SERVER: &str = include_str!("manifests/metrics-server.yaml");
/// Who metrics-server is to the API server: its pod's service account.
pub const METRICS_SERVER_USER: &str = "system:serviceaccount:kube-system:metrics-server";

/// Creates, through `send`, metrics-server's release manifest (`components.yaml`, with the
/// `--kubelet-insecure-tls` a kind cluster needs): its account and rights, its Service and
/// Deployment in kube-system, and the APIService that registers `metrics.k8s.io` with the
/// API server's aggregator.
pub fn metrics_server(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    for document in crate::yaml::documents(METRICS_SERVER) {
        let Ok(value) = document else { continue };
        let kind =
            Kind::from_type_meta(value["apiVersion"].as_str().unwrap_or(""), value["kind"].as_str().unwrap_or(""));
        if let Some(object) = kind.and_then(|k| Object::decode(k, &value).ok()) {
            let _ = send(Request::create(object));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ingress-nginx, installed as its "cloud" deploy manifest installs it, with its class the default.
// ---------------------------------------------------------------------------------------------

const INGRESS_NGINX_DEPLOYMENT: &str = include_str!("manifests/ingress-nginx-deployment.yaml");
const INGRESS_NGINX_SERVICE: &str = include_str!("manifests/ingress-nginx-service.yaml");
const INGRESS_NGINX_CLASS: &str = include_str!("manifests/ingress-nginx-ingressclass.yaml");

/// Creates, through `send`, the `ingress-nginx` namespace with the controller's account, its
/// Deployment and LoadBalancer Service, and the `nginx` IngressClass, marked as the default.
pub fn ingress_nginx(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    let ns = crate::controllers::ingress_nginx::NAMESPACE;
    let mut labels = std::collections::BTreeMap::new();
    for (k, v) in [("app.kubernetes.io/instance", "ingress-nginx"), ("app.kubernetes.io/name", "ingress-nginx")] {
        labels.insert(k.into(), v.into());
    }
    let namespace = Object::Namespace(crate::api::Namespace {
        metadata: ObjectMeta { name: ns.into(), labels: labels.clone().into(), ..Default::default() },
        ..Default::default()
    });
    let account = Object::ServiceAccount(crate::api::ServiceAccount {
        metadata: ObjectMeta {
            name: "ingress-nginx".into(),
            namespace: ns.into(),
            labels: labels.into(),
            ..Default::default()
        },
        ..Default::default()
    });
    for object in [
        namespace,
        account,
        manifest(Kind::Service, INGRESS_NGINX_SERVICE),
        manifest(Kind::Deployment, INGRESS_NGINX_DEPLOYMENT),
        manifest(Kind::IngressClass, INGRESS_NGINX_CLASS),
    ] {
        let _ = send(Request::create(object));
    }
}

/// Creates the built-in PriorityClasses (`system-node-critical`, `system-cluster-critical`),
/// as kube-apiserver's post-start hook does, through `send`.
pub fn system_priority_classes(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    for (name, value, description) in crate::api::scheduling::SYSTEM_CLASSES {
        let pc = crate::api::PriorityClass {
            metadata: ObjectMeta { name: name.to_string(), ..Default::default() },
            value: *value,
            description: description.to_string(),
            ..Default::default()
        };
        let _ = send(Request::create(Object::PriorityClass(pc)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Kind;
    use crate::cluster::{Cluster, ClusterConfig};
    use crate::sim::Duration;

    #[test]
    fn a_new_cluster_has_the_kubernetes_and_kube_dns_services() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.settle(Duration::seconds(30));
        let svc = |ns: &str, name: &str| match cluster.inspect().get(Kind::Service, ns, name).as_deref() {
            Some(Object::Service(s)) => s.clone(),
            _ => panic!("no Service {ns}/{name}"),
        };
        let kubernetes = svc("default", "kubernetes");
        assert_eq!(kubernetes.spec.cluster_ips, [KUBERNETES_SERVICE_IP]);
        assert_eq!(kubernetes.spec.ip_family_policy.as_deref(), Some("SingleStack"));
        assert_eq!(svc("kube-system", "kube-dns").spec.cluster_ip, KUBE_DNS_IP);
        let Some(Object::Endpoints(ep)) =
            cluster.inspect().get(Kind::Endpoints, "default", "kubernetes").as_deref().cloned()
        else {
            panic!("no kubernetes Endpoints")
        };
        assert_eq!(ep.subsets[0].addresses[0].ip, "172.18.0.2");
        assert_eq!(ep.subsets[0].ports[0].port, Some(6443));
    }

    fn pods(cluster: &Cluster, ns: &str) -> Vec<crate::api::Pod> {
        cluster.objects(Kind::Pod, ns).iter().filter_map(|o| o.as_pod().cloned()).collect()
    }

    #[test]
    fn a_new_cluster_runs_the_control_plane_kube_proxy_coredns_and_metrics_server_in_kube_system() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.advance(Duration::seconds(60));
        let pods = pods(&cluster, "kube-system");
        let names: Vec<&str> = pods.iter().map(|p| p.metadata.name.as_str()).collect();
        for name in [
            "etcd-control-plane",
            "kube-apiserver-control-plane",
            "kube-controller-manager-control-plane",
            "kube-scheduler-control-plane",
        ] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        assert_eq!(names.iter().filter(|n| n.starts_with("kube-proxy-")).count(), 4);
        assert_eq!(names.iter().filter(|n| n.starts_with("coredns-")).count(), 2);
        assert_eq!(names.iter().filter(|n| n.starts_with("calico-node-")).count(), 4);
        assert_eq!(names.iter().filter(|n| n.starts_with("metrics-server-")).count(), 1);
        assert_eq!(pods.len(), 15);
        for pod in &pods {
            assert_eq!(pod.status.phase, "Running", "{}", pod.metadata.name);
            assert!(pod.status.container_statuses.iter().all(|c| c.ready), "{} not ready", pod.metadata.name);
        }
        // Host-network pods have their node's address; CoreDNS pods have pod addresses.
        for pod in pods.iter().filter(|p| p.spec.host_network) {
            assert_eq!(pod.status.pod_ip, pod.status.host_ip, "{}", pod.metadata.name);
        }
        for pod in pods.iter().filter(|p| p.metadata.name.starts_with("coredns-")) {
            assert!(pod.status.pod_ip.starts_with("10.244."), "{}", pod.status.pod_ip);
            assert_eq!(pod.spec.priority, Some(2_000_000_000));
        }
        // The kube-dns Service has the CoreDNS pods behind it.
        let slices = cluster.objects(Kind::EndpointSlice, "kube-system");
        let Some(Object::EndpointSlice(slice)) = slices.first().map(|s| (**s).clone()) else {
            panic!("no kube-dns EndpointSlice")
        };
        assert_eq!(slice.endpoints.len(), 2);
        assert_eq!(cluster.check_invariants(true), Vec::<String>::new());
    }

    #[test]
    fn control_plane_pods_are_mirror_pods_of_the_node_with_kubeadm_manifests() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.advance(Duration::seconds(60));
        let Some(Object::Pod(pod)) =
            cluster.inspect().get(Kind::Pod, "kube-system", "kube-apiserver-control-plane").as_deref().cloned()
        else {
            panic!("no kube-apiserver mirror pod")
        };
        let annotations = &pod.metadata.annotations;
        assert_eq!(annotations["kubernetes.io/config.source"], "file");
        assert_eq!(annotations["kubernetes.io/config.mirror"], annotations["kubernetes.io/config.hash"]);
        assert_eq!(annotations["kubernetes.io/config.hash"].len(), 32);
        let owner = &pod.metadata.owner_references[0];
        assert_eq!((owner.kind.as_str(), owner.name.as_str(), owner.controller), ("Node", "control-plane", Some(true)));
        assert_eq!(pod.metadata.labels["component"], "kube-apiserver");
        assert_eq!(pod.metadata.labels["tier"], "control-plane");
        assert_eq!(pod.spec.priority_class_name.as_deref(), Some("system-node-critical"));
        assert_eq!(pod.spec.priority, Some(2_000_001_000));
        assert!(pod.spec.host_network);
        assert_eq!(pod.status.pod_ip, "172.18.0.2");
        let command = &pod.spec.containers[0].command;
        assert_eq!(command[0], "kube-apiserver");
        assert!(command.contains(&"--advertise-address=172.18.0.2".to_string()));
        assert!(command.contains(&"--etcd-servers=https://127.0.0.1:2379".to_string()));
        // Static pods name no service account: admission leaves mirror pods alone.
        assert_eq!(pod.spec.service_account_name, None);
        assert!(pod.spec.volumes.iter().all(|v| v.get("projected").is_none()));
    }

    #[test]
    fn a_deleted_mirror_pod_comes_back_while_its_containers_keep_running() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.advance(Duration::seconds(60));
        let before = cluster.inspect().get(Kind::Pod, "kube-system", "etcd-control-plane").unwrap();
        let container = |p: &Object| p.as_pod().unwrap().status.container_statuses[0].container_id.clone();
        cluster.request(Request::delete(Kind::Pod, "kube-system", "etcd-control-plane")).unwrap();
        cluster.advance(Duration::seconds(2));
        let after =
            cluster.inspect().get(Kind::Pod, "kube-system", "etcd-control-plane").expect("mirror pod re-created");
        assert_ne!(after.meta().uid, before.meta().uid);
        assert_eq!(container(&after), container(&before));
        assert_eq!(after.as_pod().unwrap().status.phase, "Running");
        let killed =
            cluster.objects(Kind::Event, "kube-system").iter().any(|e| e.as_event().unwrap().reason == "Killing");
        assert!(!killed, "the static pod's containers were stopped");
    }

    // The API server's Service allocators (`ApiServer::allocate_service_addresses`).

    fn service(name: &str, body: &str) -> Request {
        let yaml = format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n{body}");
        let value: serde_json::Value = crate::yaml::from_str(&yaml).unwrap();
        Request::create(Object::decode(Kind::Service, &value).unwrap())
    }

    fn create(cluster: &mut Cluster, name: &str, body: &str) -> Result<Service, Status> {
        let mut req = service(name, body);
        req.namespace = "default".into();
        match cluster.request(req)?.object().as_deref() {
            Some(Object::Service(s)) => Ok(Service::clone(s)),
            _ => panic!("not a Service"),
        }
    }

    #[test]
    fn cluster_ip_and_node_port_allocation_never_repeats_a_live_one() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        let mut ips = std::collections::BTreeSet::new();
        let mut ports = std::collections::BTreeSet::new();
        for i in 0..300 {
            let svc = create(&mut cluster, &format!("s{i}"), "  type: NodePort\n  ports:\n  - port: 80\n").unwrap();
            let ip: std::net::Ipv4Addr = svc.spec.cluster_ip.parse().unwrap();
            assert_eq!(u32::from(ip) >> 20, u32::from(std::net::Ipv4Addr::new(10, 96, 0, 0)) >> 20, "{ip}");
            assert!(!["10.96.0.0", KUBERNETES_SERVICE_IP, KUBE_DNS_IP].contains(&svc.spec.cluster_ip.as_str()));
            assert!(ips.insert(svc.spec.cluster_ip.clone()), "{ip} given twice");
            let np = svc.spec.ports[0].node_port.unwrap();
            assert!((30000..=32767).contains(&np) && ports.insert(np), "nodePort {np}");
            assert_eq!(svc.spec.cluster_ips, std::slice::from_ref(&svc.spec.cluster_ip));
            assert_eq!(svc.spec.ip_families, ["IPv4"]);
        }
    }

    #[test]
    fn a_requested_address_in_use_is_invalid_until_its_service_is_deleted() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        let err = create(&mut cluster, "dns2", "  clusterIP: 10.96.0.10\n  ports:\n  - port: 53\n").unwrap_err();
        assert_eq!((err.code, err.reason), (422, "Invalid"));
        assert_eq!(
            err.message,
            "Service \"dns2\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.96.0.10\"}: failed to allocate IP 10.96.0.10: provided IP is already allocated"
        );
        let a = create(
            &mut cluster,
            "a",
            "  clusterIP: 10.96.5.5\n  type: NodePort\n  ports:\n  - port: 80\n    nodePort: 30080\n",
        );
        assert!(a.is_ok());
        let err =
            create(&mut cluster, "b", "  type: NodePort\n  ports:\n  - port: 80\n    nodePort: 30080\n").unwrap_err();
        assert!(
            err.message.ends_with("spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated")
        );
        let err = create(&mut cluster, "c", "  clusterIP: 10.0.0.1\n  ports:\n  - port: 80\n").unwrap_err();
        assert!(err.message.contains("is not in the valid range"), "{}", err.message);
        cluster.request(Request::delete(Kind::Service, "default", "a")).unwrap();
        let again = create(
            &mut cluster,
            "d",
            "  clusterIP: 10.96.5.5\n  type: NodePort\n  ports:\n  - port: 80\n    nodePort: 30080\n",
        );
        assert_eq!(again.unwrap().spec.cluster_ip, "10.96.5.5");
        let headless = create(&mut cluster, "h", "  clusterIP: None\n  selector:\n    app: h\n").unwrap();
        assert_eq!(headless.spec.cluster_ips, ["None"]);
    }
}
