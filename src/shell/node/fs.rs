//! A node's file system as a root shell on it sees it: the files kubeadm and the packages
//! left (the kubelet's kubeconfig and configuration, its systemd drop-in, the control plane's
//! kubeconfigs), and the node's own disk, which holds the static pod manifests and whatever
//! the shell writes (`/tmp`, `/root`).

use crate::cluster::Cluster;
use crate::kubelet::file_source::MANIFEST_DIR;
use crate::util::path::ROOT_DIRS as ROOT;

/// The kubelet's systemd drop-in, as the kubeadm package installs it.
pub const DROP_IN: &str = "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf";

/// An absolute path without `.` and `..`, from `path` typed in `cwd`.
pub fn resolve(cwd: &str, path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else if path == "~" || path.starts_with("~/") {
        format!("/root{}", &path[1..])
    } else {
        format!("{cwd}/{path}")
    };
    crate::util::path::normalize(&joined)
}

fn kubeconfig(user: &str, server: &str) -> String {
    format!(
        "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n    server: {server}\n  name: kubernetes\ncontexts:\n- context:\n    cluster: kubernetes\n    user: {user}\n  name: {user}@kubernetes\ncurrent-context: {user}@kubernetes\nkind: Config\npreferences: {{}}\nusers:\n- name: {user}\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=\n"
    )
}

/// The files the node has from its installation, by absolute path.
fn installed(cluster: &Cluster, node: &str) -> Vec<(String, String)> {
    // kubeadm points the kubelet's and the admin's kubeconfigs at the control-plane endpoint
    // (the load balancer, with several API servers), the scheduler's and the controller
    // manager's at their own node's API server.
    let server = format!("https://{}", cluster.api_endpoint());
    let mut files = vec![
        ("/etc/hostname".to_string(), format!("{node}\n")),
        ("/etc/kubernetes/kubelet.conf".to_string(), kubeconfig(&format!("system:node:{node}"), &server)),
        ("/var/lib/kubelet/config.yaml".to_string(), KUBELET_CONFIG.to_string()),
        (DROP_IN.to_string(), DROP_IN_TEXT.to_string()),
        ("/etc/kubernetes/pki/ca.crt".to_string(), "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n".into()),
    ];
    if cluster.kubelet(node).is_some_and(|k| k.has_manifest_dir()) {
        let local = format!("https://{}:{}", cluster.kubelet(node).map_or("", |k| k.internal_ip()), 6443);
        for (file, user) in [
            ("admin.conf", "kubernetes-admin"),
            ("super-admin.conf", "kubernetes-super-admin"),
            ("controller-manager.conf", "system:kube-controller-manager"),
            ("scheduler.conf", "system:kube-scheduler"),
        ] {
            let server = if file.ends_with("admin.conf") { &server } else { &local };
            files.push((format!("/etc/kubernetes/{file}"), kubeconfig(user, server)));
        }
    }
    files
}

/// A file's text, or why it cannot be read (`No such file or directory`, `Is a directory`).
pub fn read(cluster: &Cluster, node: &str, path: &str) -> Result<String, &'static str> {
    if let Some(text) = cluster.kubelet(node).and_then(|k| k.node_file(path)) {
        return Ok(text.clone());
    }
    if let Some((_, text)) = installed(cluster, node).into_iter().find(|(p, _)| p == path) {
        return Ok(text);
    }
    if is_dir(cluster, node, path) { Err("Is a directory") } else { Err("No such file or directory") }
}

/// Every path the node has (files only), installed and written.
fn all_files(cluster: &Cluster, node: &str) -> Vec<String> {
    let mut paths: Vec<String> = installed(cluster, node).into_iter().map(|(p, _)| p).collect();
    if let Some(k) = cluster.kubelet(node) {
        paths.extend(k.node_files().map(|(p, _)| p.clone()));
    }
    paths
}

/// Whether a path is a directory: the top, one of its folders, or a folder a file is in.
pub fn is_dir(cluster: &Cluster, node: &str, path: &str) -> bool {
    if path == "/" || ROOT.iter().any(|d| path == format!("/{d}")) {
        return true;
    }
    let well_known = [MANIFEST_DIR, "/etc/kubernetes", "/var/lib/kubelet", "/etc/systemd/system", "/root", "/tmp"];
    if well_known.contains(&path) {
        return true;
    }
    let prefix = format!("{path}/");
    all_files(cluster, node).iter().any(|p| p.starts_with(&prefix))
}

/// The names in a directory, in order (folders and files alike).
pub fn list(cluster: &Cluster, node: &str, dir: &str) -> Result<Vec<String>, &'static str> {
    if !is_dir(cluster, node, dir) {
        return if read(cluster, node, dir).is_ok() {
            Ok(vec![dir.to_string()])
        } else {
            Err("No such file or directory")
        };
    }
    let mut names = std::collections::BTreeSet::new();
    if dir == "/" {
        names.extend(ROOT.iter().map(|d| d.to_string()));
    }
    let prefix = if dir == "/" { "/".to_string() } else { format!("{dir}/") };
    for p in all_files(cluster, node) {
        if let Some(rest) = p.strip_prefix(&prefix) {
            names.insert(rest.split('/').next().unwrap_or(rest).to_string());
        }
    }
    if dir == "/etc/kubernetes" && cluster.kubelet(node).is_some_and(|k| k.has_manifest_dir()) {
        names.insert("manifests".into());
    }
    Ok(names.into_iter().collect())
}

/// Writes a file on the node (None removes it).
pub fn write(cluster: &mut Cluster, node: &str, path: &str, text: Option<String>) {
    let now = cluster.now();
    if let Some(k) = cluster.kubelet_mut(node) {
        k.write_node_file(path, text, now);
    }
}

const KUBELET_CONFIG: &str = "apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cpuManagerReconcilePeriod: 0s
evictionPressureTransitionPeriod: 0s
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
httpCheckFrequency: 0s
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: \"0\"
    text:
      infoBufferSize: \"0\"
  verbosity: 0
memorySwap: {}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
";

const DROP_IN_TEXT: &str = "[Service]
Environment=\"KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf\"
Environment=\"KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml\"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
";
