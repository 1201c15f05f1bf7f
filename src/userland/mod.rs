//! A container's userland: what the programs an image ships print when they run in it, the
//! same whether `kubectl exec` starts them or they are the container's own process.
//!
//! The commands are a small set, answered from the cluster's state: `env` (the container's
//! variables and the Service links the kubelet injects), `cat` (/etc/hostname, /etc/hosts,
//! /etc/resolv.conf, the service account's files, ConfigMap and Secret volumes, a web server's
//! pages), `ls`, `hostname`, `echo`, `curl`/`wget` (cluster DNS, then the node's kube-proxy
//! rules to ready endpoints), `nslookup`, `ps`, and a shell's `cd`, `export` and `exit`. An
//! image without a command (all of them lack some; the control plane's distroless images have
//! no shell at all) fails as runc fails: exit code 126.

pub mod process;

use crate::api::{Kind, Object, Pod};
use crate::cluster::Cluster;
use crate::kubelet::images::{self, App, Behaviour};
use crate::sim::Duration;
use crate::sort::StableSort;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Whether a program is a shell (`sh`, `bash`, `ash`, by name or path).
pub fn is_shell(program: &str) -> bool {
    matches!(program.rsplit('/').next().unwrap_or(program), "sh" | "bash" | "ash")
}

/// What a command printed inside the container and its exit status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
    /// How long its `sleep`s took: a terminal waits that long for the prompt.
    pub slept: Duration,
    /// The shell ran `exit`.
    pub exited: bool,
}

/// What an interactive shell remembers between lines: its working directory and the
/// variables set or exported in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellState {
    pub cwd: Option<String>,
    pub vars: Vec<(String, String)>,
}

impl Run {
    fn ok(stdout: String) -> Run {
        Run { stdout, ..Default::default() }
    }
    fn fail(code: i32, stderr: String) -> Run {
        Run { stderr: stderr + "\n", code, ..Default::default() }
    }
}

/// The image family, which decides what is installed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Userland {
    /// busybox and alpine: BusyBox applets (wget, nslookup, ps…).
    Busybox,
    /// Debian or Ubuntu based, with curl (nginx, full python and perl images).
    DebianCurl,
    /// Debian or Ubuntu based, without network tools.
    Debian,
    /// No shell, no tools: distroless images and pause.
    Distroless,
}

/// One container's userland, as a process started in it (by `exec`, or as its main process)
/// sees it.
pub struct Container<'a> {
    cluster: &'a Cluster,
    pod: &'a Pod,
    spec: &'a crate::api::Container,
    image: images::ImageRef,
    /// `-t`: the command's output is a terminal (curl then shows no progress meter).
    tty: bool,
    /// The shell's working directory and variables.
    pub state: ShellState,
}

impl<'a> Container<'a> {
    pub fn new(cluster: &'a Cluster, pod: &'a Pod, spec: &'a crate::api::Container, tty: bool) -> Container<'a> {
        let image = images::parse_reference(&spec.image);
        Container { cluster, pod, spec, image, tty, state: ShellState::default() }
    }

    /// The working directory: the shell's (after `cd`), else the container's `workingDir`.
    fn cwd(&self) -> &str {
        self.state.cwd.as_deref().or(self.spec.working_dir.as_deref()).unwrap_or("/")
    }

    pub fn userland(&self) -> Userland {
        let (repo, tag) = (self.image.repository.as_str(), self.image.tag.as_str());
        // The tutorials' apps: the Node apps and the guestbook frontend (PHP) on Debian with
        // curl, hello-app on Alpine, agnhost and echoserver on Debian.
        if let Some(app) = App::of(repo) {
            return match app {
                App::HelloApp => Userland::Busybox,
                App::Agnhost | App::Echoserver => Userland::Debian,
                App::Bootcamp | App::NodeHello | App::GuestbookFrontend => Userland::DebianCurl,
            };
        }
        match repo {
            "busybox" | "registry.k8s.io/busybox" | "alpine" | "polinux/stress" => Userland::Busybox,
            _ if tag.contains("alpine") => Userland::Busybox,
            "nginx" | "registry.k8s.io/hpa-example" => Userland::DebianCurl,
            "python" | "perl" if !tag.contains("slim") => Userland::DebianCurl,
            r if r.starts_with("registry.k8s.io/") => Userland::Distroless,
            _ => Userland::Debian,
        }
    }

    pub fn installed(&self, program: &str) -> bool {
        let basic = [
            "sh", "ls", "cat", "env", "printenv", "echo", "hostname", "true", "false", "pwd", "whoami", "id", "sleep",
            "uname", "date",
        ];
        match self.userland() {
            Userland::Distroless => false,
            Userland::Busybox => basic.contains(&program) || matches!(program, "wget" | "nslookup" | "ps" | "ash"),
            Userland::DebianCurl => basic.contains(&program) || matches!(program, "bash" | "curl"),
            Userland::Debian => basic.contains(&program) || program == "bash",
        }
    }

    /// Runs one command line (argv), as runc starts it: no shell unless the command is one.
    pub fn run(&mut self, argv: &[String]) -> Run {
        let program = argv[0].rsplit('/').next().unwrap_or(&argv[0]).to_string();
        if !self.installed(&program) {
            let p = &argv[0];
            let why = if p.contains('/') {
                format!("stat {p}: no such file or directory")
            } else {
                "executable file not found in $PATH".to_string()
            };
            return Run::fail(
                126,
                format!(
                    "OCI runtime exec failed: exec failed: unable to start container process: exec: \"{p}\": {why}: unknown"
                ),
            );
        }
        let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
        match program.as_str() {
            "sh" | "bash" | "ash" => match args.as_slice() {
                ["-c", script, ..] => self.script(&program, script),
                // No terminal and no input: the shell reads nothing and exits.
                [] => Run::default(),
                [file, ..] => Run::fail(127, format!("{program}: {file}: not found")),
            },
            "env" | "printenv" => match args.first() {
                Some(var) if program == "printenv" => match self.environment().into_iter().find(|(k, _)| k == var) {
                    Some((_, v)) => Run::ok(format!("{v}\n")),
                    None => Run { code: 1, ..Default::default() },
                },
                _ => Run::ok(self.environment().into_iter().map(|(k, v)| format!("{k}={v}\n")).collect()),
            },
            "echo" => Run::ok(format!("{}\n", args.join(" "))),
            "hostname" => Run::ok(format!("{}\n", self.hostname())),
            "true" => Run::default(),
            "sleep" => match args.first().and_then(|d| Duration::parse(d)) {
                Some(slept) => Run { slept, ..Default::default() },
                None => Run::fail(1, "sleep: invalid number".into()),
            },
            "false" => Run { code: 1, ..Default::default() },
            "pwd" => Run::ok(format!("{}\n", self.cwd())),
            "whoami" => Run::ok("root\n".into()),
            "id" => Run::ok("uid=0(root) gid=0(root) groups=0(root)\n".into()),
            "uname" => Run::ok(if args.contains(&"-a") {
                format!("Linux {} 6.8.0-kubeloop #1 SMP x86_64 GNU/Linux\n", self.hostname())
            } else {
                "Linux\n".into()
            }),
            "date" => Run::ok(format!("{}\n", self.cluster.now().rfc1123z())),
            "cat" => self.cat(&args),
            "ls" => self.ls(&args),
            "ps" => self.ps(),
            "curl" => curl_output(self.fetch(&args, false), &args, self.tty),
            "wget" => self.fetch(&args, true),
            "nslookup" => self.nslookup(&args),
            _ => Run::fail(126, format!("{program}: not simulated")),
        }
    }

    /// `sh -c SCRIPT`: its simple commands joined by `;`, `&&` and `||` (read as every
    /// script in the sandbox is), each split into words; `exit N` ends it.
    pub fn script(&mut self, shell: &str, script: &str) -> Run {
        let mut all = Run::default();
        for (part, op) in crate::kubelet::script::commands(script) {
            // A comment: the rest of the line is for people.
            if !op.runs_after(all.code) || part.trim_start().starts_with('#') {
                continue;
            }
            let words = match crate::shell::split_words(part.trim()) {
                Ok(w) => w,
                Err(_) => return Run::fail(2, format!("{shell}: syntax error: unterminated quoted string")),
            };
            let words: Vec<String> = words.into_iter().map(|w| self.expand(&w)).collect();
            if words.is_empty() {
                continue;
            }
            if words[0] == "exit" {
                all.code = words.get(1).and_then(|c| c.parse().ok()).unwrap_or(all.code);
                all.exited = true;
                break;
            }
            let program = words[0].rsplit('/').next().unwrap_or(&words[0]).to_string();
            let run = if let Some(run) = self.builtin(shell, &words) {
                run
            } else if self.installed(&program) {
                self.run(&words)
            } else {
                // BusyBox ash, dash (Debian's sh) and bash each say it their way.
                let message = match (shell, self.busybox()) {
                    ("bash", _) => format!("bash: line 1: {}: command not found", words[0]),
                    (_, true) => format!("{shell}: {}: not found", words[0]),
                    _ => format!("{shell}: 1: {}: not found", words[0]),
                };
                Run::fail(127, message)
            };
            all.stdout.push_str(&run.stdout);
            all.stderr.push_str(&run.stderr);
            all.code = run.code;
            all.slept = all.slept + run.slept;
        }
        all
    }

    /// The shell's own commands that change it: `cd`, `export` and `NAME=value`.
    fn builtin(&mut self, shell: &str, words: &[String]) -> Option<Run> {
        match words[0].as_str() {
            "cd" => {
                let target = words.get(1).map_or("/root", String::as_str);
                let path = normalize(&absolute(target, Some(self.cwd())));
                let files = self.files();
                if path == "/root" || ROOT.iter().any(|d| path == format!("/{d}")) || is_dir(&files, &path) {
                    self.state.cwd = Some(path);
                    return Some(Run::default());
                }
                let message = match (shell, self.busybox()) {
                    ("bash", _) => format!("bash: cd: {target}: No such file or directory"),
                    (_, true) => format!("{shell}: cd: can't cd to {target}: No such file or directory"),
                    _ => format!("{shell}: 1: cd: can't cd to {target}"),
                };
                Some(Run::fail(if shell == "bash" || self.busybox() { 1 } else { 2 }, message))
            }
            "export" => {
                for w in &words[1..] {
                    if let Some((k, v)) = assignment(w) {
                        self.set_var(k, v);
                    }
                }
                Some(Run::default())
            }
            w if words.len() == 1 && assignment(w).is_some() => {
                let (k, v) = assignment(w)?;
                self.set_var(k, v);
                Some(Run::default())
            }
            _ => None,
        }
    }

    fn set_var(&mut self, name: &str, value: &str) {
        self.state.vars.retain(|(k, _)| k != name);
        self.state.vars.push((name.to_string(), value.to_string()));
    }

    /// The prompt an interactive shell shows: BusyBox ash `/ # `, bash `root@POD:/# `, and
    /// dash (Debian's `sh`) `# `. Home is `~`.
    pub fn prompt(&self, shell: &str) -> String {
        let cwd = self.cwd();
        let shown = match cwd {
            "/root" => "~".to_string(),
            c => c.strip_prefix("/root/").map_or_else(|| c.to_string(), |rest| format!("~/{rest}")),
        };
        match (shell.rsplit('/').next().unwrap_or(shell), self.busybox()) {
            ("bash", _) => format!("root@{}:{shown}# ", self.hostname()),
            (_, true) => format!("{shown} # "),
            _ => "# ".to_string(),
        }
    }

    /// `$VAR` and `${VAR}` from the container's environment, as the shell expands them.
    fn expand(&self, word: &str) -> String {
        if !word.contains('$') {
            return word.to_string();
        }
        let mut env: BTreeMap<String, String> = crate::sort::btree_map(self.environment());
        env.extend(self.state.vars.iter().cloned());
        let mut out = String::new();
        let mut chars = word.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            let braced = chars.peek() == Some(&'{');
            if braced {
                chars.next();
            }
            let mut name = String::new();
            while let Some(&n) = chars.peek() {
                if n.is_ascii_alphanumeric() || n == '_' {
                    name.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            if braced && chars.peek() == Some(&'}') {
                chars.next();
            }
            if name.is_empty() {
                out.push('$');
            } else {
                out.push_str(env.get(&name).map_or("", String::as_str));
            }
        }
        out
    }

    pub fn hostname(&self) -> String {
        self.pod.spec.hostname.clone().unwrap_or_else(|| self.pod.metadata.name.clone())
    }

    /// The container's environment as `env` prints it: PATH and HOSTNAME, the container's own
    /// variables, the Service links of its namespace (and the `kubernetes` Service's), HOME.
    fn environment(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".to_string(), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string()),
            ("HOSTNAME".to_string(), self.hostname()),
        ];
        for var in &self.spec.env {
            let value = match (&var.value, &var.value_from) {
                (Some(v), _) => v.clone(),
                (None, Some(from)) => self.value_from(from),
                (None, None) => String::new(),
            };
            env.push((var.name.clone(), value));
        }
        if self.pod.spec.enable_service_links != Some(false) {
            env.extend(self.service_links());
        }
        env.push(("HOME".to_string(), "/root".to_string()));
        for (k, v) in &self.state.vars {
            env.retain(|(name, _)| name != k);
            env.push((k.clone(), v.clone()));
        }
        env
    }

    /// `valueFrom`: the downward API's common fields, ConfigMap and Secret keys.
    fn value_from(&self, from: &serde_json::Value) -> String {
        let api = self.cluster.api();
        let ns = &self.pod.metadata.namespace;
        let s = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or_default().to_string();
        if let Some(field) = from.get("fieldRef") {
            return match s(field, "fieldPath").as_str() {
                "metadata.name" => self.pod.metadata.name.clone(),
                "metadata.namespace" => ns.clone(),
                "metadata.uid" => self.pod.metadata.uid.clone(),
                "spec.nodeName" => self.pod.spec.node_name.clone(),
                "spec.serviceAccountName" => self.pod.spec.service_account_name.clone().unwrap_or_default(),
                "status.podIP" => self.pod.status.pod_ip.clone(),
                "status.hostIP" => self.pod.status.host_ip.clone(),
                _ => String::new(),
            };
        }
        if let Some(r) = from.get("configMapKeyRef") {
            if let Some(Object::ConfigMap(cm)) = api.peek(Kind::ConfigMap, ns, &s(r, "name")).as_deref() {
                return cm.data.get(&s(r, "key")).cloned().unwrap_or_default();
            }
        }
        if let Some(r) = from.get("secretKeyRef") {
            if let Some(Object::Secret(secret)) = api.peek(Kind::Secret, ns, &s(r, "name")).as_deref() {
                let data = secret.data.get(&s(r, "key")).cloned().unwrap_or_default();
                return String::from_utf8_lossy(&base64_decode(&data)).into_owned();
            }
        }
        String::new()
    }

    /// When this container last started running, if it is running.
    fn started_at(&self) -> Option<crate::sim::Time> {
        self.pod
            .status
            .container_statuses
            .iter()
            .find(|s| s.name == self.spec.name)
            .and_then(|s| s.state.running.as_ref())
            .and_then(|r| r.started_at)
    }

    /// The docker-style links the kubelet adds for every Service with a ClusterIP that existed
    /// when the container started: its namespace's, plus `kubernetes` from `default`.
    fn service_links(&self) -> Vec<(String, String)> {
        let api = self.cluster.api();
        let ns = &self.pod.metadata.namespace;
        let started = self.started_at();
        let mut services: Vec<_> = api.peek_list(Kind::Service, ns);
        if ns != "default" {
            services.extend(api.peek(Kind::Service, "default", "kubernetes"));
        }
        let mut out = Vec::new();
        for object in services {
            let Object::Service(svc) = &*object else { continue };
            let ip = &svc.spec.cluster_ip;
            let existed = match (svc.metadata.creation_timestamp, started) {
                (Some(created), Some(started)) => created <= started,
                _ => true,
            };
            if ip.is_empty() || ip == "None" || svc.spec.ports.is_empty() || !existed {
                continue;
            }
            let prefix = svc.metadata.name.to_ascii_uppercase().replace('-', "_");
            let first = &svc.spec.ports[0];
            out.push((format!("{prefix}_SERVICE_HOST"), ip.clone()));
            out.push((format!("{prefix}_SERVICE_PORT"), first.port.to_string()));
            for p in &svc.spec.ports {
                if let Some(name) = p.name.as_deref().filter(|n| !n.is_empty()) {
                    out.push((
                        format!("{prefix}_SERVICE_PORT_{}", name.to_ascii_uppercase().replace('-', "_")),
                        p.port.to_string(),
                    ));
                }
            }
            let proto = |p: &crate::api::service::ServicePort| p.protocol.clone().unwrap_or_else(|| "TCP".into());
            out.push((format!("{prefix}_PORT"), format!("{}://{ip}:{}", proto(first).to_lowercase(), first.port)));
            for p in &svc.spec.ports {
                let (proto, port) = (proto(p), p.port);
                let base = format!("{prefix}_PORT_{port}_{proto}");
                out.push((base.clone(), format!("{}://{ip}:{port}", proto.to_lowercase())));
                out.push((format!("{base}_PROTO"), proto.to_lowercase()));
                out.push((format!("{base}_PORT"), port.to_string()));
                out.push((format!("{base}_ADDR"), ip.clone()));
            }
        }
        out
    }

    /// The files the container can read: what the kubelet mounts, and the image's own.
    fn files(&self) -> BTreeMap<String, String> {
        let pod = self.pod;
        let ns = &pod.metadata.namespace;
        let mut files = BTreeMap::new();
        files.insert("/etc/hostname".to_string(), format!("{}\n", self.hostname()));
        let mut hosts = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n".to_string();
        let _ = writeln!(hosts, "{}\t{}", pod.status.pod_ip, self.hostname());
        files.insert("/etc/hosts".to_string(), hosts);
        let dns = self.cluster.api().peek(Kind::Service, "kube-system", "kube-dns");
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
                crate::apiserver::admission::base64(claims.as_bytes()).trim_end_matches('=')
            );
            files.insert(format!("{sa_dir}/token"), token);
        }
        match self.image.repository.as_str() {
            "nginx" => {
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
            let age = self.cluster.now().since(started);
            // The postStart hook's command runs as the container starts, beside its process.
            let hook: Option<Vec<String>> = self
                .spec
                .lifecycle
                .as_ref()
                .and_then(|l| l.pointer("/postStart/exec/command"))
                .and_then(|c| c.as_array())
                .map(|words| words.iter().filter_map(|w| w.as_str().map(String::from)).collect());
            let mut scripts = vec![crate::kubelet::script::files(info.behaviour, &self.spec.command, &self.spec.args)];
            if let Some(hook) = hook.filter(|h| !h.is_empty()) {
                scripts.push(crate::kubelet::script::files(images::Behaviour::Shell, &hook, &[]));
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
        // ConfigMap and Secret volumes: one file per key under the mount path.
        let api = self.cluster.api();
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
            let mut add = |key: &str, value: String| match sub {
                Some(s) if s == key => {
                    files.insert(path.to_string(), value);
                }
                Some(_) => {}
                None => {
                    files.insert(format!("{path}/{key}"), value);
                }
            };
            if let Some(source) = volume.get("configMap") {
                let cm_name = source.get("name").and_then(|n| n.as_str()).unwrap_or_default();
                if let Some(Object::ConfigMap(cm)) = api.peek(Kind::ConfigMap, ns, cm_name).as_deref() {
                    for (k, v) in &cm.data {
                        add(k, v.clone());
                    }
                }
            } else if let Some(source) = volume.get("secret") {
                let secret_name = source.get("secretName").and_then(|n| n.as_str()).unwrap_or_default();
                if let Some(Object::Secret(secret)) = api.peek(Kind::Secret, ns, secret_name).as_deref() {
                    for (k, v) in &secret.data {
                        add(k, String::from_utf8_lossy(&base64_decode(v)).into_owned());
                    }
                }
            } else if volume.get("emptyDir").is_some() {
                files.insert(format!("{path}/"), String::new());
            }
        }
        files
    }

    pub fn busybox(&self) -> bool {
        self.userland() == Userland::Busybox
    }

    fn cat(&self, args: &[&str]) -> Run {
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

    fn ls(&self, args: &[&str]) -> Run {
        let files = self.files();
        let dirs: Vec<&str> = args.iter().copied().filter(|a| !a.starts_with('-')).collect();
        let dirs = if dirs.is_empty() { vec![self.cwd()] } else { dirs };
        let mut run = Run::default();
        for (i, dir) in dirs.iter().enumerate() {
            let path = absolute(dir, Some(self.cwd()));
            let mut names: Vec<String> =
                if path == "/" { ROOT.iter().map(|s| s.to_string()).collect() } else { Vec::new() };
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
            let known = path == "/root" || ROOT.iter().any(|d| path == format!("/{d}"));
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

    fn ps(&self) -> Run {
        let mut argv: Vec<String> = self.spec.command.clone();
        argv.extend(self.spec.args.iter().cloned());
        if argv.is_empty() {
            argv.push(match images::lookup(&self.image).map(|i| i.behaviour) {
                Ok(Behaviour::Shell) => "sh".to_string(),
                _ => self.image.repository.rsplit('/').next().unwrap_or_default().to_string(),
            });
        }
        Run::ok(format!(
            "PID   USER     TIME  COMMAND\n    1 root      0:00 {}\n    7 root      0:00 ps\n",
            argv.join(" ")
        ))
    }

    /// `curl URL` / `wget -qO- URL`: through cluster DNS and this node's kube-proxy rules.
    fn fetch(&mut self, args: &[&str], wget: bool) -> Run {
        let Some(url) = args.iter().copied().find(|a| !a.starts_with('-') && *a != "-") else {
            return if wget {
                Run::fail(
                    1,
                    "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: wget [-cqS] [-O FILE] URL"
                        .into(),
                )
            } else {
                Run::fail(2, "curl: try 'curl --help' or 'curl --manual' for more information".into())
            };
        };
        let quiet_body = !wget || args.iter().any(|a| a.contains("O-") || *a == "-O" || a.starts_with("-qO"));
        let (host, port, path) = match crate::kube_proxy::parse_url(url) {
            Ok((_, host, port)) => (host, port, url_path(url)),
            Err(e) => return Run::fail(3, e),
        };
        // The container's own loopback is its pod's network namespace: the pod itself.
        let own = if matches!(host.as_str(), "localhost" | "127.0.0.1") && !self.pod.status.pod_ip.is_empty() {
            Some(url.replacen(host.as_str(), &self.pod.status.pod_ip, 1))
        } else {
            None
        };
        let url = own.as_deref().unwrap_or(url);
        let seq = self.cluster.record.last_seq();
        let mut rng = crate::sim::Rng::stream(self.cluster.seed(), &format!("exec {seq} {url}"));
        let result = crate::kube_proxy::curl(
            self.cluster,
            url,
            &self.pod.spec.node_name,
            &self.pod.metadata.namespace,
            args.contains(&"-k"),
            &mut rng,
        );
        if result.code != 0 {
            let message = result.stderr.trim_end().to_string();
            if !wget {
                return match message.strip_prefix("sim curl: ") {
                    Some(_) => Run::fail(56, "curl: (56) Recv failure: Connection reset by peer".into()),
                    None => Run::fail(result.code, message),
                };
            }
            let text = match result.code {
                6 => format!("wget: bad address '{host}'"),
                7 => format!(
                    "wget: can't connect to remote host ({}): Connection refused",
                    resolve_for_wget(self, &host)
                ),
                28 => "wget: download timed out".to_string(),
                _ => "wget: error getting response: Connection reset by peer".to_string(),
            };
            return Run::fail(1, text);
        }
        // Which server answered: the pod the sim request reached.
        let Some(server) = served_by(self.cluster, &result.stdout) else {
            // The API server, over plain HTTP or TLS.
            return Run::ok(result.stdout);
        };
        let repository = server.image.repository.as_str();
        let code = images::http_answer(repository, server.port, false, &path).unwrap_or(404);
        let query = url.split_once('?').map_or("", |(_, q)| q);
        let body = match (repository, code) {
            ("nginx", 200) if path == "/50x.html" => NGINX_50X.to_string(),
            ("nginx", 200) => NGINX_INDEX.to_string(),
            ("httpd", 200) => HTTPD_INDEX.to_string(),
            ("registry.k8s.io/hpa-example", 200) => "OK!".to_string(),
            ("nginx", _) => NGINX_404.to_string(),
            (_, 200) => {
                app_page(&server, &self.pod.status.pod_ip, &path, query, self.cluster.now()).unwrap_or_default()
            }
            _ if server.app == Some(App::Agnhost) => "404 page not found\n".to_string(),
            (_, _) => HTTPD_404.replace("PATH", &path),
        };
        if code != 200 && wget {
            return Run::fail(1, format!("wget: server returned error: HTTP/1.1 {code} Not Found"));
        }
        let size = body.len();
        let mut run = Run::ok(if quiet_body { body } else { String::new() });
        if wget && !args.iter().any(|a| a.starts_with("-q")) {
            // BusyBox wget's progress, on stderr; without -O- the page goes to a file.
            let ip = resolve_for_wget(self, &host);
            let file = if quiet_body { "-".to_string() } else { file_name(&path) };
            let (start, end) = if quiet_body {
                ("writing to stdout\n".to_string(), "written to stdout\n".to_string())
            } else {
                (format!("saving to '{file}'\n"), format!("'{file}' saved\n"))
            };
            run.stderr = format!(
                "Connecting to {host} ({ip}:{port})\n{start}{file:<20} 100% |{}| {size:>5}  0:00:00 ETA\n{end}",
                "*".repeat(32)
            );
        }
        run
    }

    fn nslookup(&self, args: &[&str]) -> Run {
        let Some(name) = args.iter().copied().find(|a| !a.starts_with('-')) else {
            return Run::fail(1, "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]".into());
        };
        let files = self.files();
        let server = files
            .get("/etc/resolv.conf")
            .and_then(|r| r.lines().find_map(|l| l.strip_prefix("nameserver ")).map(String::from))
            .unwrap_or_default();
        let mut out = format!("Server:\t\t{server}\nAddress:\t{server}:53\n\n");
        let api = self.cluster.api();
        let ns = &self.pod.metadata.namespace;
        let found = crate::dns::candidates(name, ns)
            .into_iter()
            .find_map(|fqdn| crate::dns::lookup(api, &fqdn, 0).ok().map(|a| (fqdn, a)));
        match found {
            Some((fqdn, addresses)) => {
                for a in addresses {
                    let _ = writeln!(out, "Name:\t{fqdn}\nAddress: {a}\n");
                }
                Run::ok(out)
            }
            None => {
                let _ = writeln!(out, "** server can't find {name}: NXDOMAIN\n");
                Run { stdout: out, code: 1, ..Default::default() }
            }
        }
    }
}

/// What curl adds when its output is not a terminal (as under `kubectl exec` without `-t`):
/// the progress meter on stderr unless `-s`; with `-s`, errors only with `-S`. Writing to a
/// terminal (`-t`), it shows no meter.
fn curl_output(mut run: Run, args: &[&str], tty: bool) -> Run {
    let short = |c: char| args.iter().any(|a| !a.starts_with("--") && a.starts_with('-') && a.contains(c));
    let silent = short('s') || args.contains(&"--silent");
    let show_error = short('S') || args.contains(&"--show-error");
    if tty && !silent {
        return run;
    }
    if silent {
        if !show_error {
            run.stderr.clear();
        }
        return run;
    }
    let size = run.stdout.len();
    let progress = if run.code == 0 {
        let speed = format!("{}k", (size * 1000 / 1024).max(1));
        format!("100 {size:>5}  100 {size:>5}    0     0  {speed:>5}      0 --:--:-- --:--:-- --:--:-- {speed:>5}\n")
    } else {
        "  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0\n".to_string()
    };
    run.stderr = format!(
        "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n{progress}{}",
        run.stderr
    );
    run
}

/// `NAME=value`, as a shell reads an assignment.
fn assignment(word: &str) -> Option<(&str, &str)> {
    word.split_once('=').filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// A path without `.` and `..` segments.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

fn absolute(path: &str, working_dir: Option<&str>) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", working_dir.unwrap_or("").trim_end_matches('/'))
    };
    if joined.len() > 1 { joined.trim_end_matches('/').to_string() } else { joined }
}

fn is_dir(files: &BTreeMap<String, String>, path: &str) -> bool {
    let prefix = format!("{}/", path.trim_end_matches('/'));
    path == "/" || files.keys().any(|k| k.starts_with(&prefix))
}

/// The file wget saves a path to: its last segment, `index.html` for a directory.
fn file_name(path: &str) -> String {
    match path.rsplit('/').next() {
        Some(last) if !last.is_empty() => last.to_string(),
        _ => "index.html".to_string(),
    }
}

/// The path of a URL (`/` when it has none).
fn url_path(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find('/') {
        Some(i) => rest[i..].split(['?', '#']).next().unwrap_or("/").to_string(),
        None => "/".to_string(),
    }
}

/// The address wget names when a connection is refused: the resolved one.
fn resolve_for_wget(container: &Container, host: &str) -> String {
    if host.parse::<std::net::Ipv4Addr>().is_ok() {
        return host.to_string();
    }
    crate::dns::resolve(container.cluster.api(), host, &container.pod.metadata.namespace)
        .ok()
        .and_then(|a| a.into_iter().next())
        .unwrap_or_else(|| host.to_string())
}

/// The image repository and port of the server in the pod that answered a `sim curl` request (its one-line summary
/// names the pod and its IP), if a pod answered.
/// The server that answered: its pod, image and port.
struct Server {
    pod: String,
    image: images::ImageRef,
    port: u16,
    /// Which tutorial app it is, if one.
    app: Option<App>,
}

fn served_by(cluster: &Cluster, summary: &str) -> Option<Server> {
    let rest = summary.split(" from pod ").nth(1)?;
    let (name, rest) = rest.split_once(" (")?;
    let ip = rest.split(')').next()?;
    let pod = cluster
        .api()
        .peek_list(Kind::Pod, "")
        .into_iter()
        .find(|p| p.name() == name && p.as_pod().is_some_and(|p| p.status.pod_ip == ip))?;
    let pod = pod.as_pod()?;
    pod.spec.containers.iter().find_map(|c| {
        let image = images::parse_reference(&c.image);
        let info = images::lookup(&image).ok()?;
        let port = *crate::kubelet::script::listening(info.behaviour, info.repository, &c.command, &c.args).first()?;
        Some(Server { pod: name.to_string(), app: App::of(&image.repository), image, port })
    })
}

/// The page a tutorial app answers with, if it is one (it names the pod that answered, so a
/// student sees a Service spread requests).
fn app_page(server: &Server, client: &str, path: &str, query: &str, now: crate::sim::Time) -> Option<String> {
    let (pod, tag) = (&server.pod, server.image.tag.as_str());
    Some(match server.app? {
        App::Bootcamp => {
            let version = tag.trim_start_matches('v');
            format!("Hello Kubernetes bootcamp! | Running on: {pod} | v={version}\n")
        }
        App::HelloApp => format!("Hello, world!\nVersion: {tag}.0\nHostname: {pod}\n"),
        App::NodeHello => "Hello Kubernetes!".to_string(),
        App::Agnhost => match path {
            "/hostname" => pod.to_string(),
            "/echo" => query.split('&').find_map(|kv| kv.strip_prefix("msg=")).unwrap_or_default().to_string(),
            "/healthz" | "/readyz" => "ok".to_string(),
            _ => format!("NOW: {}", now.rfc3339()),
        },
        App::Echoserver => format!(
            "CLIENT VALUES:\nclient_address={client}\ncommand=GET\nreal path={path}\nquery={}\nrequest_version=1.1\n\n\
             SERVER VALUES:\nserver_version=nginx: 1.10.0 - lua: 10001\n\nHEADERS RECEIVED:\naccept=*/*\n\
             user-agent=curl/8.5.0\nBODY:\n-no body in request-",
            if query.is_empty() { "nil" } else { query }
        ),
        App::GuestbookFrontend => GUESTBOOK_INDEX.to_string(),
    })
}

/// Standard base64 (with or without padding) to bytes; anything else is skipped.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let sextets: Vec<u8> = text.bytes().filter_map(value).collect();
    let mut out = Vec::with_capacity(sextets.len() * 3 / 4);
    for chunk in sextets.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, s)| n | (u32::from(*s) << (18 - 6 * i)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    out
}

const ROOT: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys",
    "tmp", "usr", "var",
];

const CA_CRT: &str = "-----BEGIN CERTIFICATE-----\nMIIDBTCCAe2gAwIBAgIIkubeloopkubeloopMA0GCSqGSIb3DQEBCwUAMBUxEzARBgNV\nBAMTCmt1YmVybmV0ZXMwHhcNMjYwMTAxMDAwMDAwWhcNMzYwMTAxMDAwMDAwWjAV\n-----END CERTIFICATE-----\n";

const NGINX_INDEX: &str = "<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href=\"http://nginx.org/\">nginx.org</a>.<br/>
Commercial support is available at
<a href=\"http://nginx.com/\">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
";

const NGINX_50X: &str = "<!DOCTYPE html>
<html>
<head>
<title>Error</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>An error occurred.</h1>
<p>Sorry, the page you are looking for is currently unavailable.<br/>
Please try again later.</p>
<p>If you are the system administrator of this resource then you should check
the error log for details.</p>
<p><em>Faithfully yours, nginx.</em></p>
</body>
</html>
";

const NGINX_404: &str = "<html>
<head><title>404 Not Found</title></head>
<body>
<center><h1>404 Not Found</h1></center>
<hr><center>nginx</center>
</body>
</html>
";

/// The guestbook frontend's page (its script then talks to Redis through guestbook.php).
const GUESTBOOK_INDEX: &str = "<html ng-app=\"redis\">\n  <head>\n    <title>Guestbook</title>\n  </head>\n  <body ng-controller=\"RedisCtrl\">\n    <div style=\"width: 50%; margin-left: 20px\">\n      <h2>Guestbook</h2>\n    <form>\n    <fieldset>\n    <input ng-model=\"msg\" placeholder=\"Messages\" class=\"form-control\" type=\"text\" name=\"input\"><br>\n    <button type=\"button\" class=\"btn btn-primary\" ng-click=\"controller.onRedis()\">Submit</button>\n    </fieldset>\n    </form>\n    </div>\n  </body>\n</html>\n";

const HTTPD_INDEX: &str = "<html><body><h1>It works!</h1></body></html>\n";

const HTTPD_404: &str = "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">
<html><head>
<title>404 Not Found</title>
</head><body>
<h1>Not Found</h1>
<p>The requested URL was not found on this server.</p>
</body></html>
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(base64_decode("aGVsbG8="), b"hello");
        assert_eq!(base64_decode("aGVsbG8"), b"hello");
        assert_eq!(base64_decode(""), b"");
    }

    #[test]
    fn url_paths_default_to_the_root() {
        assert_eq!(url_path("http://web"), "/");
        assert_eq!(url_path("web:8080/a/b?x=1"), "/a/b");
    }
}
