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

const ETCD_MANIFEST: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  annotations:
    kubeadm.kubernetes.io/etcd.advertise-client-urls: https://{ADDRESS}:2379
  labels:
    component: etcd
    tier: control-plane
  name: etcd
  namespace: kube-system
spec:
  containers:
  - command:
    - etcd
    - --advertise-client-urls=https://{ADDRESS}:2379
    - --cert-file=/etc/kubernetes/pki/etcd/server.crt
    - --client-cert-auth=true
    - --data-dir=/var/lib/etcd
    - --experimental-initial-corrupt-check=true
    - --experimental-watch-progress-notify-interval=5s
    - --initial-advertise-peer-urls=https://{ADDRESS}:2380
    - --initial-cluster={NODE}=https://{ADDRESS}:2380
    - --key-file=/etc/kubernetes/pki/etcd/server.key
    - --listen-client-urls=https://127.0.0.1:2379,https://{ADDRESS}:2379
    - --listen-metrics-urls=http://127.0.0.1:2381
    - --listen-peer-urls=https://{ADDRESS}:2380
    - --name={NODE}
    - --peer-cert-file=/etc/kubernetes/pki/etcd/peer.crt
    - --peer-client-cert-auth=true
    - --peer-key-file=/etc/kubernetes/pki/etcd/peer.key
    - --peer-trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt
    - --snapshot-count=10000
    - --trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt
    image: registry.k8s.io/etcd:{ETCD_VERSION}
    imagePullPolicy: IfNotPresent
    livenessProbe:
      failureThreshold: 8
      httpGet:
        host: 127.0.0.1
        path: /livez
        port: 2381
        scheme: HTTP
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: etcd
    readinessProbe:
      failureThreshold: 3
      httpGet:
        host: 127.0.0.1
        path: /readyz
        port: 2381
        scheme: HTTP
      periodSeconds: 1
      timeoutSeconds: 15
    resources:
      requests:
        cpu: 100m
        memory: 100Mi
    startupProbe:
      failureThreshold: 24
      httpGet:
        host: 127.0.0.1
        path: /readyz
        port: 2381
        scheme: HTTP
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    volumeMounts:
    - mountPath: /var/lib/etcd
      name: etcd-data
    - mountPath: /etc/kubernetes/pki/etcd
      name: etcd-certs
  hostNetwork: true
  priority: 2000001000
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - hostPath:
      path: /etc/kubernetes/pki/etcd
      type: DirectoryOrCreate
    name: etcd-certs
  - hostPath:
      path: /var/lib/etcd
      type: DirectoryOrCreate
    name: etcd-data
"#;

const KUBE_APISERVER_MANIFEST: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  annotations:
    kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint: {ADDRESS}:6443
  labels:
    component: kube-apiserver
    tier: control-plane
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-apiserver
    - --advertise-address={ADDRESS}
    - --allow-privileged=true
    - --authorization-mode=Node,RBAC
    - --client-ca-file=/etc/kubernetes/pki/ca.crt
    - --enable-admission-plugins=NodeRestriction
    - --enable-bootstrap-token-auth=true
    - --etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt
    - --etcd-certfile=/etc/kubernetes/pki/apiserver-etcd-client.crt
    - --etcd-keyfile=/etc/kubernetes/pki/apiserver-etcd-client.key
    - --etcd-servers=https://127.0.0.1:2379
    - --kubelet-client-certificate=/etc/kubernetes/pki/apiserver-kubelet-client.crt
    - --kubelet-client-key=/etc/kubernetes/pki/apiserver-kubelet-client.key
    - --kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname
    - --proxy-client-cert-file=/etc/kubernetes/pki/front-proxy-client.crt
    - --proxy-client-key-file=/etc/kubernetes/pki/front-proxy-client.key
    - --requestheader-allowed-names=front-proxy-client
    - --requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt
    - --requestheader-extra-headers-prefix=X-Remote-Extra-
    - --requestheader-group-headers=X-Remote-Group
    - --requestheader-username-headers=X-Remote-User
    - --secure-port=6443
    - --service-account-issuer=https://kubernetes.default.svc.cluster.local
    - --service-account-key-file=/etc/kubernetes/pki/sa.pub
    - --service-account-signing-key-file=/etc/kubernetes/pki/sa.key
    - --service-cluster-ip-range=10.96.0.0/12
    - --tls-cert-file=/etc/kubernetes/pki/apiserver.crt
    - --tls-private-key-file=/etc/kubernetes/pki/apiserver.key
    image: registry.k8s.io/kube-apiserver:{VERSION}
    imagePullPolicy: IfNotPresent
    livenessProbe:
      failureThreshold: 8
      httpGet:
        host: {ADDRESS}
        path: /livez
        port: 6443
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: kube-apiserver
    readinessProbe:
      failureThreshold: 3
      httpGet:
        host: {ADDRESS}
        path: /readyz
        port: 6443
        scheme: HTTPS
      periodSeconds: 1
      timeoutSeconds: 15
    resources:
      requests:
        cpu: 250m
    startupProbe:
      failureThreshold: 24
      httpGet:
        host: {ADDRESS}
        path: /livez
        port: 6443
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    volumeMounts:
    - mountPath: /etc/ssl/certs
      name: ca-certs
      readOnly: true
    - mountPath: /etc/ca-certificates
      name: etc-ca-certificates
      readOnly: true
    - mountPath: /etc/kubernetes/pki
      name: k8s-certs
      readOnly: true
    - mountPath: /usr/local/share/ca-certificates
      name: usr-local-share-ca-certificates
      readOnly: true
    - mountPath: /usr/share/ca-certificates
      name: usr-share-ca-certificates
      readOnly: true
  hostNetwork: true
  priority: 2000001000
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - hostPath:
      path: /etc/ssl/certs
      type: DirectoryOrCreate
    name: ca-certs
  - hostPath:
      path: /etc/ca-certificates
      type: DirectoryOrCreate
    name: etc-ca-certificates
  - hostPath:
      path: /etc/kubernetes/pki
      type: DirectoryOrCreate
    name: k8s-certs
  - hostPath:
      path: /usr/local/share/ca-certificates
      type: DirectoryOrCreate
    name: usr-local-share-ca-certificates
  - hostPath:
      path: /usr/share/ca-certificates
      type: DirectoryOrCreate
    name: usr-share-ca-certificates
"#;

const KUBE_CONTROLLER_MANAGER_MANIFEST: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  labels:
    component: kube-controller-manager
    tier: control-plane
  name: kube-controller-manager
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-controller-manager
    - --allocate-node-cidrs=true
    - --authentication-kubeconfig=/etc/kubernetes/controller-manager.conf
    - --authorization-kubeconfig=/etc/kubernetes/controller-manager.conf
    - --bind-address=127.0.0.1
    - --client-ca-file=/etc/kubernetes/pki/ca.crt
    - --cluster-cidr=10.244.0.0/16
    - --cluster-name=kubernetes
    - --cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt
    - --cluster-signing-key-file=/etc/kubernetes/pki/ca.key
    - --controllers=*,bootstrapsigner,tokencleaner
    - --kubeconfig=/etc/kubernetes/controller-manager.conf
    - --leader-elect=true
    - --requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt
    - --root-ca-file=/etc/kubernetes/pki/ca.crt
    - --service-account-private-key-file=/etc/kubernetes/pki/sa.key
    - --service-cluster-ip-range=10.96.0.0/12
    - --use-service-account-credentials=true
    image: registry.k8s.io/kube-controller-manager:{VERSION}
    imagePullPolicy: IfNotPresent
    livenessProbe:
      failureThreshold: 8
      httpGet:
        host: 127.0.0.1
        path: /healthz
        port: 10257
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: kube-controller-manager
    resources:
      requests:
        cpu: 200m
    startupProbe:
      failureThreshold: 24
      httpGet:
        host: 127.0.0.1
        path: /healthz
        port: 10257
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    volumeMounts:
    - mountPath: /etc/ssl/certs
      name: ca-certs
      readOnly: true
    - mountPath: /etc/ca-certificates
      name: etc-ca-certificates
      readOnly: true
    - mountPath: /usr/libexec/kubernetes/kubelet-plugins/volume/exec
      name: flexvolume-dir
    - mountPath: /etc/kubernetes/pki
      name: k8s-certs
      readOnly: true
    - mountPath: /etc/kubernetes/controller-manager.conf
      name: kubeconfig
      readOnly: true
    - mountPath: /usr/local/share/ca-certificates
      name: usr-local-share-ca-certificates
      readOnly: true
    - mountPath: /usr/share/ca-certificates
      name: usr-share-ca-certificates
      readOnly: true
  hostNetwork: true
  priority: 2000001000
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - hostPath:
      path: /etc/ssl/certs
      type: DirectoryOrCreate
    name: ca-certs
  - hostPath:
      path: /etc/ca-certificates
      type: DirectoryOrCreate
    name: etc-ca-certificates
  - hostPath:
      path: /usr/libexec/kubernetes/kubelet-plugins/volume/exec
      type: DirectoryOrCreate
    name: flexvolume-dir
  - hostPath:
      path: /etc/kubernetes/pki
      type: DirectoryOrCreate
    name: k8s-certs
  - hostPath:
      path: /etc/kubernetes/controller-manager.conf
      type: FileOrCreate
    name: kubeconfig
  - hostPath:
      path: /usr/local/share/ca-certificates
      type: DirectoryOrCreate
    name: usr-local-share-ca-certificates
  - hostPath:
      path: /usr/share/ca-certificates
      type: DirectoryOrCreate
    name: usr-share-ca-certificates
"#;

const KUBE_SCHEDULER_MANIFEST: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  labels:
    component: kube-scheduler
    tier: control-plane
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-scheduler
    - --authentication-kubeconfig=/etc/kubernetes/scheduler.conf
    - --authorization-kubeconfig=/etc/kubernetes/scheduler.conf
    - --bind-address=127.0.0.1
    - --kubeconfig=/etc/kubernetes/scheduler.conf
    - --leader-elect=true
    image: registry.k8s.io/kube-scheduler:{VERSION}
    imagePullPolicy: IfNotPresent
    livenessProbe:
      failureThreshold: 8
      httpGet:
        host: 127.0.0.1
        path: /livez
        port: 10259
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: kube-scheduler
    readinessProbe:
      failureThreshold: 3
      httpGet:
        host: 127.0.0.1
        path: /readyz
        port: 10259
        scheme: HTTPS
      periodSeconds: 1
      timeoutSeconds: 15
    resources:
      requests:
        cpu: 100m
    startupProbe:
      failureThreshold: 24
      httpGet:
        host: 127.0.0.1
        path: /livez
        port: 10259
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    volumeMounts:
    - mountPath: /etc/kubernetes/scheduler.conf
      name: kubeconfig
      readOnly: true
  hostNetwork: true
  priority: 2000001000
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - hostPath:
      path: /etc/kubernetes/scheduler.conf
      type: FileOrCreate
    name: kubeconfig
"#;

/// The static pods `kubeadm init` writes on a control-plane node named `node` whose address is
/// `address`, as the kubelet reads them from disk (not yet defaulted or named after the node).
pub fn control_plane_static_pods(node: &str, address: &str) -> Vec<Pod> {
    [ETCD_MANIFEST, KUBE_APISERVER_MANIFEST, KUBE_CONTROLLER_MANAGER_MANIFEST, KUBE_SCHEDULER_MANIFEST]
        .iter()
        .map(|text| {
            let text = text
                .replace("{ADDRESS}", address)
                .replace("{NODE}", node)
                .replace("{VERSION}", KUBERNETES_VERSION)
                .replace("{ETCD_VERSION}", ETCD_VERSION);
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

const KUBE_PROXY_CONFIGMAP: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  labels:
    app: kube-proxy
  name: kube-proxy
  namespace: kube-system
data:
  config.conf: |-
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    bindAddress: 0.0.0.0
    clientConnection:
      kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
    clusterCIDR: 10.244.0.0/16
    kind: KubeProxyConfiguration
    mode: iptables
  kubeconfig.conf: |-
    apiVersion: v1
    kind: Config
    clusters:
    - cluster:
        certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
        server: https://{ADDRESS}:6443
      name: default
    contexts:
    - context:
        cluster: default
        namespace: default
        user: default
      name: default
    current-context: default
    users:
    - name: default
      user:
        tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
"#;

const KUBE_PROXY_DAEMONSET: &str = r#"
apiVersion: apps/v1
kind: DaemonSet
metadata:
  labels:
    k8s-app: kube-proxy
  name: kube-proxy
  namespace: kube-system
spec:
  selector:
    matchLabels:
      k8s-app: kube-proxy
  template:
    metadata:
      labels:
        k8s-app: kube-proxy
    spec:
      containers:
      - command:
        - /usr/local/bin/kube-proxy
        - --config=/var/lib/kube-proxy/config.conf
        - --hostname-override=$(NODE_NAME)
        env:
        - name: NODE_NAME
          valueFrom:
            fieldRef:
              apiVersion: v1
              fieldPath: spec.nodeName
        image: registry.k8s.io/kube-proxy:{VERSION}
        imagePullPolicy: IfNotPresent
        name: kube-proxy
        securityContext:
          privileged: true
        volumeMounts:
        - mountPath: /var/lib/kube-proxy
          name: kube-proxy
        - mountPath: /run/xtables.lock
          name: xtables-lock
        - mountPath: /lib/modules
          name: lib-modules
          readOnly: true
      hostNetwork: true
      nodeSelector:
        kubernetes.io/os: linux
      priorityClassName: system-node-critical
      serviceAccountName: kube-proxy
      tolerations:
      - operator: Exists
      volumes:
      - configMap:
          name: kube-proxy
        name: kube-proxy
      - hostPath:
          path: /run/xtables.lock
          type: FileOrCreate
        name: xtables-lock
      - hostPath:
          path: /lib/modules
        name: lib-modules
  updateStrategy:
    rollingUpdate:
      maxSurge: 0
      maxUnavailable: 1
    type: RollingUpdate
"#;

const COREDNS_CONFIGMAP: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: kube-system
data:
  Corefile: |
    .:53 {
        errors
        health {
           lameduck 5s
        }
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
           pods insecure
           fallthrough in-addr.arpa ip6.arpa
           ttl 30
        }
        prometheus :9153
        forward . /etc/resolv.conf {
           max_concurrent 1000
        }
        cache 30 {
           disable success cluster.local
           disable denial cluster.local
        }
        loop
        reload
        loadbalance
    }
"#;

/// What CoreDNS's `kubernetes` plugin may read: list and watch, nothing more.
const COREDNS_CLUSTERROLE: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups:
  - ""
  resources:
  - endpoints
  - services
  - pods
  - namespaces
  verbs:
  - list
  - watch
- apiGroups:
  - discovery.k8s.io
  resources:
  - endpointslices
  verbs:
  - list
  - watch
"#;

const COREDNS_CLUSTERROLEBINDING: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
- kind: ServiceAccount
  name: coredns
  namespace: kube-system
"#;

const COREDNS_DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    k8s-app: kube-dns
  name: coredns
  namespace: kube-system
spec:
  replicas: 2
  selector:
    matchLabels:
      k8s-app: kube-dns
  strategy:
    rollingUpdate:
      maxUnavailable: 1
    type: RollingUpdate
  template:
    metadata:
      labels:
        k8s-app: kube-dns
    spec:
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - podAffinityTerm:
              labelSelector:
                matchExpressions:
                - key: k8s-app
                  operator: In
                  values:
                  - kube-dns
              topologyKey: kubernetes.io/hostname
            weight: 100
      containers:
      - args:
        - -conf
        - /etc/coredns/Corefile
        image: registry.k8s.io/coredns/coredns:{COREDNS_VERSION}
        imagePullPolicy: IfNotPresent
        livenessProbe:
          failureThreshold: 5
          httpGet:
            path: /health
            port: 8080
            scheme: HTTP
          initialDelaySeconds: 60
          successThreshold: 1
          timeoutSeconds: 5
        name: coredns
        ports:
        - containerPort: 53
          name: dns
          protocol: UDP
        - containerPort: 53
          name: dns-tcp
          protocol: TCP
        - containerPort: 9153
          name: metrics
          protocol: TCP
        readinessProbe:
          httpGet:
            path: /ready
            port: 8181
            scheme: HTTP
        resources:
          limits:
            memory: 170Mi
          requests:
            cpu: 100m
            memory: 70Mi
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            add:
            - NET_BIND_SERVICE
            drop:
            - ALL
          readOnlyRootFilesystem: true
        volumeMounts:
        - mountPath: /etc/coredns
          name: config-volume
          readOnly: true
      dnsPolicy: Default
      nodeSelector:
        kubernetes.io/os: linux
      priorityClassName: system-cluster-critical
      serviceAccountName: coredns
      tolerations:
      - key: CriticalAddonsOnly
        operator: Exists
      - effect: NoSchedule
        key: node-role.kubernetes.io/control-plane
      volumes:
      - configMap:
          items:
          - key: Corefile
            path: Corefile
          name: coredns
        name: config-volume
"#;

/// Creates kubeadm's add-ons in `kube-system` through `send` (as kube-apiserver, standing in
/// for `kubeadm init`): the `kube-proxy` and `coredns` service accounts and ConfigMaps, the
/// kube-proxy DaemonSet and the CoreDNS Deployment. Their controllers then create the pods.
/// (CoreDNS's ClusterRole and binding: [`coredns_rbac`].)
pub fn kube_system_addons(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    let fill = |text: &str| {
        text.replace("{ADDRESS}", &api_server_address())
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
    fn a_new_cluster_runs_the_control_plane_kube_proxy_and_coredns_in_kube_system() {
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
        assert_eq!(pods.len(), 10);
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
