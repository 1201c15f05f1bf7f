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

mod dns_tools;
mod environment;
mod fetch;
mod files;
mod pages;
mod shell;
mod world;

pub use crate::kubelet::image_family::Userland;
pub use crate::util::printing;
pub use fetch::url_path;
pub use world::World;

use crate::api::Pod;
use crate::kubelet::images::{self, Behaviour};
use crate::sim::Duration;
use fetch::curl_output;

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

/// Who a container's processes run as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct User {
    pub name: &'static str,
    pub uid: u32,
    pub group: &'static str,
    pub gid: u32,
    pub home: &'static str,
}

impl User {
    pub fn is_root(&self) -> bool {
        self.uid == 0
    }
}

/// One container's userland, as a process started in it (by `exec`, or as its main process)
/// sees it.
pub struct Container<'a> {
    world: &'a dyn World,
    pod: &'a Pod,
    spec: &'a crate::api::Container,
    image: images::ImageRef,
    /// `-t`: the command's output is a terminal (curl then shows no progress meter).
    tty: bool,
    /// The shell's working directory and variables.
    pub state: ShellState,
}

impl<'a> Container<'a> {
    pub fn new(world: &'a dyn World, pod: &'a Pod, spec: &'a crate::api::Container, tty: bool) -> Container<'a> {
        let image = images::parse_reference(&spec.image);
        Container { world, pod, spec, image, tty, state: ShellState::default() }
    }

    /// The working directory: the shell's (after `cd`), else the container's `workingDir`.
    fn cwd(&self) -> &str {
        let image_workdir = if self.user().is_root() { "/" } else { self.user().home };
        self.state.cwd.as_deref().or(self.spec.working_dir.as_deref()).unwrap_or(image_workdir)
    }

    /// The user the image runs as (its `USER`): root, except curlimages/curl's curl_user.
    pub fn user(&self) -> User {
        match self.image.repository.as_str() {
            "curlimages/curl" => {
                User { name: "curl_user", uid: 100, group: "curl_group", gid: 101, home: "/home/curl_user" }
            }
            _ => User { name: "root", uid: 0, group: "root", gid: 0, home: "/root" },
        }
    }

    pub fn userland(&self) -> Userland {
        Userland::of(&self.image)
    }

    pub fn installed(&self, program: &str) -> bool {
        self.userland().installed(program)
    }

    /// Runs one command line (argv), as runc starts it: no shell unless the command is one.
    pub fn run(&mut self, argv: &[String]) -> Run {
        let program = argv[0].rsplit('/').next().unwrap_or(&argv[0]).to_string();
        // The etcd image is distroless but for etcd's own binaries: etcdctl reads the store.
        if program == "etcdctl" && self.image.repository == "registry.k8s.io/etcd" {
            let (stdout, stderr, code) = self.world.etcdctl(&argv[1..]);
            return Run { stdout, stderr, code, ..Default::default() };
        }
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
            // printenv NAME…: each value set, in order; 1 when any is not.
            "printenv" if !args.is_empty() => {
                let env = self.environment();
                let values: Vec<&String> =
                    args.iter().filter_map(|a| env.iter().rev().find(|(k, _)| k == a).map(|(_, v)| v)).collect();
                let code = i32::from(values.len() < args.len());
                Run { code, ..Run::ok(values.iter().map(|v| format!("{v}\n")).collect()) }
            }
            "env" | "printenv" => Run::ok(self.environment().into_iter().map(|(k, v)| format!("{k}={v}\n")).collect()),
            "echo" => Run::ok(printing::echo(&argv[1..])),
            "printf" => Run::ok(printing::printf(&argv[1..])),
            "hostname" => Run::ok(format!("{}\n", self.hostname())),
            "true" => Run::default(),
            "sleep" => match args.first().and_then(|d| crate::kubelet::script::sleep_duration(d)) {
                Some(slept) => Run { slept, ..Default::default() },
                None => Run::fail(1, "sleep: invalid number".into()),
            },
            "false" => Run { code: 1, ..Default::default() },
            "pwd" => Run::ok(format!("{}\n", self.cwd())),
            "whoami" => Run::ok(format!("{}\n", self.user().name)),
            "id" => {
                let User { name, uid, group, gid, .. } = self.user();
                Run::ok(format!("uid={uid}({name}) gid={gid}({group}) groups={gid}({group})\n"))
            }
            "uname" => Run::ok(if args.contains(&"-a") {
                format!("Linux {} 6.8.0-kubeloop #1 SMP x86_64 GNU/Linux\n", self.hostname())
            } else {
                "Linux\n".into()
            }),
            "date" => Run::ok(format!("{}\n", self.world.now().ctime(false))),
            "cat" => self.cat(&args),
            "rev" => self.rev(&args),
            "ls" => self.ls(&args),
            "ps" => self.ps(),
            // Without a URL curl only says how to get help (no progress meter).
            "curl" if !args.iter().any(|a| !a.starts_with('-')) => self.fetch(&args, false),
            "curl" => curl_output(self.fetch(&args, false), &args, self.tty),
            "wget" => self.fetch(&args, true),
            "nslookup" => self.nslookup(&args),
            "dig" => self.dig(&args),
            "host" => self.host(&args),
            _ => Run::fail(126, format!("{program}: not simulated")),
        }
    }

    /// The pod's hostname: the node's when the pod shares the node's network namespace.
    pub fn hostname(&self) -> String {
        if self.pod.spec.host_network && !self.pod.spec.node_name.is_empty() {
            return self.pod.spec.node_name.clone();
        }
        self.pod.spec.hostname.clone().unwrap_or_else(|| self.pod.metadata.name.clone())
    }

    pub fn busybox(&self) -> bool {
        matches!(self.userland(), Userland::Busybox | Userland::BusyboxCurl)
    }

    fn ps(&self) -> Run {
        let (command, args) = self.command_line();
        let mut argv = crate::kubelet::entrypoint::argv(&self.image.repository, &command, &args);
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
}

#[cfg(test)]
mod tests {
    use super::fetch::url_path;

    #[test]
    fn date_prints_as_busybox_and_gnu_date_do() {
        let t = crate::sim::Time::parse_rfc3339("2026-01-01T00:02:01Z").unwrap();
        assert_eq!(t.ctime(false), "Thu Jan  1 00:02:01 UTC 2026");
        assert_eq!(t.ctime(true), "Thu Jan 01 00:02:01 UTC 2026");
        let t = crate::sim::Time::parse_rfc3339("2026-03-15T12:00:00Z").unwrap();
        assert_eq!(t.ctime(false), "Sun Mar 15 12:00:00 UTC 2026");
    }

    #[test]
    fn url_paths_default_to_the_root() {
        assert_eq!(url_path("http://web"), "/");
        assert_eq!(url_path("web:8080/a/b?x=1"), "/a/b");
    }
}
