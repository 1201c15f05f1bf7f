//! The files a container can read: what the kubelet mounts (hosts, resolv.conf, the service
//! account, ConfigMap and Secret volumes), the image's own, and what its script wrote; `cat`
//! and `ls` over them.

use super::pages::{HTTPD_INDEX, NGINX_50X, NGINX_INDEX};
use super::{Container, Run};
use crate::api::{Kind, Object};
use crate::kubelet::images;
use crate::util::sort::StableSort;
use std::collections::BTreeMap;
use std::fmt::Write;

impl Container<'_> {
    /// The files the container can read: what the kubelet mounts, and the image's own.
    pub(super) fn files(&self) -> BTreeMap<String, String> {
        let pod = self.pod;
        let ns = &pod.metadata.namespace;
        let mut files = BTreeMap::new();
        files.insert("/etc/hostname".to_string(), format!("{}\n", self.hostname()));
        let mut hosts = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n".to_string();
        let _ = writeln!(hosts, "{}\t{}", pod.status.pod_ip, self.hostname());
        files.insert("/etc/hosts".to_string(), hosts);
        // The cluster DNS Service's address, as the kubelet knows it.
        let dns = self.with_objects(|o| o.object(Kind::Service, "kube-system", "kube-dns"));
        let nameserver = dns.and_then(|s| match &*s {
            Object::Service(s) => Some(s.spec.cluster_ip.clone()),
            _ => None,
        });
        files.insert(
            "/etc/resolv.conf".to_string(),
            format!(
                "search {ns}.svc.cluster.local svc.cluster.local cluster.local\nnameserver {}\noptions ndots:5\n",
                nameserver.unwrap_or_else(|| "10.96.0.10".into())
            ),
        );
        let sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
        if pod.spec.automount_service_account_token != Some(false) {
            let sa = pod.spec.service_account_name.clone().unwrap_or_else(|| "default".into());
            files.insert(format!("{sa_dir}/namespace"), ns.clone());
            files.insert(format!("{sa_dir}/ca.crt"), CA_CRT.to_string());
            let claims = format!(
                "{{\"aud\":[\"https://kubernetes.default.svc.cluster.local\"],\"iss\":\"https://kubernetes.default.svc.cluster.local\",\"sub\":\"system:serviceaccount:{ns}:{sa}\"}}"
            );
            let token = format!(
                "eyJhbGciOiJSUzI1NiIsImtpZCI6Imt1YmVsb29wIn0.{}.c2ltdWxhdGVk",
                crate::util::base64::encode_with(claims.as_bytes(), crate::util::base64::URL_SAFE, false)
            );
            files.insert(format!("{sa_dir}/token"), token);
        }
        match self.image.repository.as_str() {
            "nginx" | "registry.k8s.io/nginx-slim" => {
                files.insert("/usr/share/nginx/html/index.html".into(), NGINX_INDEX.into());
                files.insert("/usr/share/nginx/html/50x.html".into(), NGINX_50X.into());
            }
            "httpd" => {
                files.insert("/usr/local/apache2/htdocs/index.html".into(), HTTPD_INDEX.into());
            }
            _ => {}
        }
        // What the container's own script wrote so far (`touch /tmp/healthy`, `echo > file`).
        let started = self.started_at();
        if let (Ok(info), Some(started)) = (images::lookup(&self.image), started) {
            let age = self.world.now().since(started);
            // The postStart hook's command runs as the container starts, beside its process.
            let hook: Option<Vec<String>> = self
                .spec
                .lifecycle
                .as_ref()
                .and_then(|l| l.pointer("/postStart/exec/command"))
                .and_then(|c| c.as_array())
                .map(|words| words.iter().filter_map(|w| w.as_str().map(String::from)).collect());
            let (command, args) = self.command_line();
            let repo = info.repository;
            let mut scripts = vec![crate::kubelet::script::files(info.behaviour, repo, &command, &args)];
            if let Some(hook) = hook.filter(|h| !h.is_empty()) {
                scripts.push(crate::kubelet::script::files(images::Behaviour::Shell, "busybox", &hook, &[]));
            }
            for spans in &scripts {
                for span in spans {
                    if let Some(f) = crate::kubelet::script::file_at(spans, &span.path, age) {
                        // The model keeps a written file's lines without the last newline.
                        let content = if f.content.is_empty() { String::new() } else { format!("{}\n", f.content) };
                        files.insert(f.path.clone(), content);
                    }
                }
            }
        }
        // ConfigMap, Secret and downward API volumes: the files the kubelet wrote into each
        // as it set it up (or last refreshed it), under the mount path.
        let kubelet = self.world.kubelet(&pod.spec.node_name);
        let written = kubelet.and_then(|k| k.volume_files(ns, &pod.metadata.name));
        let shared = match kubelet {
            Some(k) if pod.spec.containers.len() + pod.spec.init_containers.len() > 1 => {
                k.written_files(ns, &pod.metadata.name, self.world.now())
            }
            _ => Vec::new(),
        };
        for mount in &self.spec.volume_mounts {
            let (Some(name), Some(path)) =
                (mount.get("name").and_then(|v| v.as_str()), mount.get("mountPath").and_then(|v| v.as_str()))
            else {
                continue;
            };
            let Some(volume) = pod.spec.volumes.iter().find(|v| v.get("name").and_then(|n| n.as_str()) == Some(name))
            else {
                continue;
            };
            let path = path.trim_end_matches('/');
            let sub = mount.get("subPath").and_then(|v| v.as_str());
            // A volume mounted over the image's own files hides them.
            if sub.is_none() {
                let prefix = format!("{path}/");
                files.retain(|k, _| !(k.starts_with(&prefix) && IMAGE_FILES.contains(&k.as_str())));
            }
            // What the pod's other containers wrote into the same volume, under their mounts.
            for (other, wrote) in &shared {
                if other.name == self.spec.name {
                    continue;
                }
                for m in other.volume_mounts.iter().filter(|m| m.get("name").and_then(|n| n.as_str()) == Some(name)) {
                    let Some(at) = m.get("mountPath").and_then(|p| p.as_str()) else { continue };
                    let at = format!("{}/", at.trim_end_matches('/'));
                    for (p, content) in wrote.iter().filter_map(|(p, c)| p.strip_prefix(&at).map(|r| (r, c))) {
                        files.entry(format!("{path}/{p}")).or_insert_with(|| content.clone());
                    }
                }
            }
            let mut add = |key: &str, value: String| match sub {
                Some(s) if s == key => {
                    files.insert(path.to_string(), value);
                }
                Some(_) => {}
                None => {
                    files.insert(format!("{path}/{key}"), value);
                }
            };
            if let Some(files) = written.and_then(|w| w.get(name)) {
                for (k, v) in files {
                    add(k, v.clone());
                }
            } else if volume.get("emptyDir").is_some() {
                files.insert(format!("{path}/"), String::new());
            } else if let Some(dir) = kubelet.and_then(|k| k.volume_host_dir(ns, volume)) {
                // A hostPath or claim volume: the node's directory, as earlier pods left it
                // (what this container wrote itself stays on top).
                files.entry(format!("{path}/")).or_default();
                for (rest, content) in kubelet.into_iter().flat_map(|k| k.disk_files(&dir)) {
                    files.entry(format!("{path}/{rest}")).or_insert_with(|| content.clone());
                }
            }
        }
        files
    }

    pub(super) fn cat(&self, args: &[&str]) -> Run {
        let files = self.files();
        let mut run = Run::default();
        for file in args.iter().filter(|a| !a.starts_with('-')) {
            let path = absolute(file, Some(self.cwd()));
            match files.get(&path) {
                Some(text) if !path.ends_with('/') => run.stdout.push_str(text),
                _ if is_dir(&files, &path) => {
                    let _ = writeln!(run.stderr, "cat: read error: Is a directory");
                    run.code = 1;
                }
                _ => {
                    if self.busybox() {
                        let _ = writeln!(run.stderr, "cat: can't open '{file}': No such file or directory");
                    } else {
                        let _ = writeln!(run.stderr, "cat: {file}: No such file or directory");
                    }
                    run.code = 1;
                }
            }
        }
        run
    }

    /// `rev FILE…` (a BusyBox applet, util-linux's elsewhere): each line of the files with its
    /// characters in reverse order.
    pub(super) fn rev(&self, args: &[&str]) -> Run {
        let mut run = self.cat(args);
        run.stderr = run.stderr.replace("cat:", "rev:");
        run.stdout = run.stdout.lines().map(|l| l.chars().rev().chain(['\n']).collect::<String>()).collect();
        run
    }

    /// Where the node's root filesystem is mounted in this container (a hostPath volume of
    /// `/`), if it is.
    fn node_root_at(&self) -> Option<String> {
        let volume = self
            .pod
            .spec
            .volumes
            .iter()
            .find(|v| v.get("hostPath").and_then(|h| h.get("path")).and_then(|p| p.as_str()) == Some("/"))?;
        let name = volume.get("name").and_then(|n| n.as_str())?;
        self.spec
            .volume_mounts
            .iter()
            .find(|m| m.get("name").and_then(|n| n.as_str()) == Some(name))
            .and_then(|m| m.get("mountPath").and_then(|p| p.as_str()))
            .map(|p| p.trim_end_matches('/').to_string())
    }

    pub(super) fn ls(&self, args: &[&str]) -> Run {
        let files = self.files();
        let dirs: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
        let dirs = if dirs.is_empty() { vec![self.cwd()] } else { dirs };
        let mut run = Run::default();
        for (i, dir) in dirs.iter().enumerate() {
            let path = absolute(dir, Some(self.cwd()));
            // The root, or the node's root where a hostPath volume of `/` is mounted (the node
            // debugger's /host).
            let root = path == "/" || self.node_root_at().is_some_and(|at| path == at);
            let mut names: Vec<String> = if root { ROOT.iter().map(|s| s.to_string()).collect() } else { Vec::new() };
            let prefix = format!("{}/", path.trim_end_matches('/'));
            for file in files.keys() {
                if let Some(rest) = file.strip_prefix(&prefix) {
                    let first = rest.split('/').next().unwrap_or_default();
                    if !first.is_empty() && !names.iter().any(|n| n == first) {
                        names.push(first.to_string());
                    }
                }
            }
            if path == "/etc" {
                names.extend(["os-release", "passwd", "group"].map(String::from));
            }
            if files.contains_key(&path) && !path.ends_with('/') {
                let _ = writeln!(run.stdout, "{dir}");
                continue;
            }
            let known = path == "/root" || path == self.user().home || ROOT.iter().any(|d| path == format!("/{d}"));
            if names.is_empty() && !files.contains_key(&prefix) && !known {
                if self.busybox() {
                    let _ = writeln!(run.stderr, "ls: {dir}: No such file or directory");
                } else {
                    let _ = writeln!(run.stderr, "ls: cannot access '{dir}': No such file or directory");
                }
                run.code = if self.busybox() { 1 } else { 2 };
                continue;
            }
            names.stable_sort();
            names.dedup();
            if dirs.len() > 1 {
                let _ = writeln!(run.stdout, "{}{dir}:", if i > 0 { "\n" } else { "" });
            }
            for n in names {
                let _ = writeln!(run.stdout, "{n}");
            }
        }
        run
    }
}

/// The web servers' pages the images ship, which a volume mounted over them hides.
const IMAGE_FILES: &[&str] =
    &["/usr/share/nginx/html/index.html", "/usr/share/nginx/html/50x.html", "/usr/local/apache2/htdocs/index.html"];

pub(super) use crate::util::path::ROOT_DIRS as ROOT;

pub(super) const CA_CRT: &str = "-----BEGIN CERTIFICATE-----\nMIIDBTCCAe2gAwIBAgIIkubeloopkubeloopMA0GCSqGSIb3DQEBCwUAMBUxEzARBgNV\nBAMTCmt1YmVybmV0ZXMwHhcNMjYwMTAxMDAwMDAwWhcNMzYwMTAxMDAwMDAwWjAV\n-----END CERTIFICATE-----\n";

pub(super) fn absolute(path: &str, working_dir: Option<&str>) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", working_dir.unwrap_or("").trim_end_matches('/'))
    };
    if joined.len() > 1 { joined.trim_end_matches('/').to_string() } else { joined }
}

pub(super) fn is_dir(files: &BTreeMap<String, String>, path: &str) -> bool {
    let prefix = format!("{}/", path.trim_end_matches('/'));
    path == "/" || files.keys().any(|k| k.starts_with(&prefix))
}
