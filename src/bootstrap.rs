//! The Services a new cluster has before anyone types: kube-apiserver's own `kubernetes`
//! Service with the Endpoints and EndpointSlice its endpoint reconciler keeps, and the
//! `kube-dns` Service kubeadm's CoreDNS addon creates.

use crate::api::service::{
    EndpointAddress, EndpointConditions, EndpointPort, EndpointSubset, ServicePort, ServiceSpec, SliceEndpoint,
};
use crate::api::{EndpointSlice, Endpoints, IntOrString, Object, ObjectMeta, Service};
use crate::apiserver::{Reply, Request, Status};
use crate::kubelet::NodeConfig;

/// The `kubernetes` Service's address: the first of the service range.
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";
/// The cluster DNS Service's address (the kubelet's `clusterDNS`).
pub const KUBE_DNS_IP: &str = "10.96.0.10";
/// The port kube-apiserver listens on (`--secure-port`).
pub const API_SERVER_PORT: i32 = 6443;

/// kube-apiserver's `--advertise-address`: the control-plane node's address.
pub fn api_server_address() -> String {
    NodeConfig::new("control-plane", 0, 0, 0, 0).internal_ip
}

fn labels(pairs: &[(&str, &str)]) -> crate::api::Labels {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
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
            labels: labels(&[("component", "apiserver"), ("provider", "kubernetes")]),
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
            labels: labels(&[("endpointslice.kubernetes.io/skip-mirror", "true")]),
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
            labels: labels(&[("kubernetes.io/service-name", "kubernetes")]),
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
            ]),
            annotations: labels(&[("prometheus.io/port", "9153"), ("prometheus.io/scrape", "true")]),
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
        Object::Service(kubernetes),
        Object::Endpoints(endpoints),
        Object::EndpointSlice(slice),
        Object::Service(kube_dns),
    ] {
        let _ = send(Request::create(object));
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
        let svc = |ns: &str, name: &str| match cluster.api().peek(Kind::Service, ns, name).as_deref() {
            Some(Object::Service(s)) => s.clone(),
            _ => panic!("no Service {ns}/{name}"),
        };
        let kubernetes = svc("default", "kubernetes");
        assert_eq!(kubernetes.spec.cluster_ips, [KUBERNETES_SERVICE_IP]);
        assert_eq!(kubernetes.spec.ip_family_policy.as_deref(), Some("SingleStack"));
        assert_eq!(svc("kube-system", "kube-dns").spec.cluster_ip, KUBE_DNS_IP);
        let Some(Object::Endpoints(ep)) =
            cluster.api().peek(Kind::Endpoints, "default", "kubernetes").as_deref().cloned()
        else {
            panic!("no kubernetes Endpoints")
        };
        assert_eq!(ep.subsets[0].addresses[0].ip, "172.18.0.2");
        assert_eq!(ep.subsets[0].ports[0].port, Some(6443));
    }

    // The API server's Service allocators (`ApiServer::allocate_service_addresses`).

    fn service(name: &str, body: &str) -> Request {
        let yaml = format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n{body}");
        let value: serde_json::Value = serde_yaml::from_str(&yaml).unwrap();
        Request::create(Object::decode(Kind::Service, &value).unwrap())
    }

    fn create(cluster: &mut Cluster, name: &str, body: &str) -> Result<Service, Status> {
        let mut req = service(name, body);
        req.namespace = "default".into();
        match cluster.request(req)?.object().as_deref() {
            Some(Object::Service(s)) => Ok(s.clone()),
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
