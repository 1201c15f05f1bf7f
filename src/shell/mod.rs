//! The sandbox's command language, the same in the CLI, the page's terminal and lessons:
//! `kubectl …`, `sleep 30s` (advance virtual time), `sim …` (the sandbox itself), comments,
//! heredocs (`kubectl apply -f - <<EOF`), redirections, and the file commands of a home
//! directory (`cat <<EOF > web.yaml`, `ls`, `rm`: see `home` and `coreutils`).
//!
//! A session is its seed plus the commands it ran: replaying them rebuilds the same cluster,
//! which is how saved state and shared links work.

pub mod chaos;
pub mod completion;
pub mod coreutils;
pub mod export;
pub mod home;
pub mod node;
pub mod record_log;
pub mod redirect;

use crate::cluster::{Cluster, ClusterConfig, SETTLE_LIMIT};
use crate::kubectl::{self, Io, Output};
use crate::sim::Duration;
use crate::sim::limits::COMMAND_TIME_CAP;
use std::collections::BTreeMap;

pub use crate::util::command_line::{Command, parse_script, parse_transcript, shell_quote, split_words};
use crate::util::command_line::{heredoc_body, heredoc_word};

/// How long the cluster has been running when a session starts.
pub const BOOT_TIME: Duration = Duration::seconds(60);

pub const SIM_HELP: &str = "\
sim: control the sandbox itself (not part of Kubernetes)

  sim settle              run virtual time until the cluster has nothing left to do
  sim time                print the virtual time and etcd's revision
  sim etcd stop|start      stop etcd (every API request then fails) or start it again
  sim etcd stop|start|partition|heal|slow|fast MEMBER
                          one member of a several-member etcd (control-plane2…)
  sim export              print the objects you made, with the fields you set, as one
                          YAML file for kubectl apply -f on a real cluster
  sim record [COMPONENT] [--last N]
                          the last N (20) requests, watch notifications and decisions of
                          a component (kubelet/worker-1, kube-proxy/worker-1…), as its
                          client log at -v=6 would show them
  sim curl URL [--from NODE|pod/NAME] [-n NAMESPACE] [-k] [-H 'Host: NAME']
                          send an HTTP request from NODE (worker-1), or as the pod NAME in
                          NAMESPACE (default): cluster DNS, that node's kube-proxy rules,
                          the CNI plugin's NetworkPolicy rules
  sim ssh NODE            a root shell on the node (systemctl, journalctl -u kubelet,
                          crictl, iptables -t nat -L, /etc/kubernetes/manifests); exit
  sim help                this help

  sleep DURATION          let virtual time pass (30s, 2m, 1m30s, 500ms; at most 6h)

Files: your home directory is /home/student (at most 8 MiB; a file at most 3 MiB).
  cat <<EOF > web.yaml    write a file: type its lines, then a line EOF
  echo TEXT > FILE        also >> (add to it), 2> (errors), 2>&1, &>, < FILE
  ls [-l] [-a], cat, rm [-f] [-r], mkdir [-p], touch, cd, pwd
  kubectl apply -f web.yaml (or -f DIR, -R); kubectl get … -o yaml > FILE
  kubectl apply -f https://k8s.io/examples/…   the documentation's examples the sandbox
                          carries (controllers/nginx-deployment.yaml, pods/simple-pod.yaml,
                          service/nginx-service.yaml, application/deployment.yaml…); it has
                          no network for any other URL
";

/// The sandbox's own programs besides the file commands (`coreutils::PROGRAMS`): in a
/// pipeline's later stage they read the stage before as their standard input.
pub const PROGRAMS: &[&str] = &["kubectl", "k", "etcdctl", "sim", "sleep", "clear", "echo", "printf"];

/// Whether a word assigns a shell variable (`ETCDCTL_API=3`).
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else { return false };
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Where a stream of a command goes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Route {
    /// Standard output: the terminal, or the next stage of the pipeline.
    Out,
    /// Standard error: the terminal.
    Err,
    Null,
    File(String),
}

/// Where a stage's streams go, and the input a `<` gave it.
#[derive(Clone, Debug)]
struct Routes {
    stdout: Route,
    stderr: Route,
    stdin: Option<String>,
}

impl Default for Routes {
    fn default() -> Routes {
        Routes { stdout: Route::Out, stderr: Route::Err, stdin: None }
    }
}

/// A sandbox session: a cluster, the files it can read, and the commands it ran.
pub struct Session {
    pub cluster: Cluster,
    /// The files of the home directory (see [`home`]), by path under it.
    pub files: BTreeMap<String, String>,
    /// The rest of the shell's file system: directories made, times, the working directory.
    home: home::HomeState,
    /// Files `etcdctl snapshot save` wrote.
    pub snapshots: crate::etcdctl::snapshot::SnapshotFiles,
    log: Vec<Command>,
    /// The container shell the terminal is attached to, if any (`kubectl exec -it … -- sh`).
    attached: Option<kubectl::session::Session>,
    /// A shell on a node (`sim ssh NODE`, or `chroot /host` in a node's debugging pod).
    node_shell: Option<crate::shell::node::NodeShell>,
}

impl Session {
    pub fn new(seed: u64) -> Session {
        Session::with_config(ClusterConfig { seed, ..ClusterConfig::default() })
    }

    pub fn with_config(config: ClusterConfig) -> Session {
        let mut cluster = Cluster::new(config);
        cluster.etcdctl = Some(|store, args| {
            let out = crate::etcdctl::run(store, args);
            (out.stdout, out.stderr, out.code)
        });
        // A cluster is up for a while before anyone types, as a fresh kind cluster is.
        cluster.advance(BOOT_TIME);
        Session {
            cluster,
            files: BTreeMap::new(),
            home: home::HomeState::default(),
            snapshots: BTreeMap::new(),
            log: Vec::new(),
            attached: None,
            node_shell: None,
        }
    }

    /// The names a path being typed could complete to (`dep` → `deployment.yaml`, `k8s/`),
    /// from the directory it names: directories end in `/`; `dirs_only` for `cd`.
    pub fn path_candidates(&self, typed: &str, dirs_only: bool) -> Vec<String> {
        // Listing needs only the names, not the files' text.
        let mut names: BTreeMap<String, String> = self.files.keys().map(|k| (k.clone(), String::new())).collect();
        let mut state = self.home.clone();
        let fs = home::Fs { files: &mut names, state: &mut state, now: self.cluster.now() };
        let dir_end = typed.rfind('/').map_or(0, |i| i + 1);
        let dir = &typed[..dir_end];
        let Ok(entries) = fs.list(if dir.is_empty() { "." } else { dir }) else { return Vec::new() };
        entries
            .into_iter()
            .filter(|(_, is_dir)| *is_dir || !dirs_only)
            .map(|(name, is_dir)| format!("{dir}{name}{}", if is_dir { "/" } else { "" }))
            .collect()
    }

    /// The commands run so far, in order.
    pub fn log(&self) -> &[Command] {
        &self.log
    }

    /// Runs one command and returns what it printed. While attached to a container's shell,
    /// the line goes to that shell.
    pub fn execute(&mut self, command: &Command) -> Output {
        self.log.push(command.clone());
        let mut ended = self.poll().unwrap_or_default();
        if let Some(mut shell) = self.node_shell.take() {
            let stdin = command.heredoc.as_ref().map(|(_, body)| body.as_str());
            let (out, done) = shell.line(&mut self.cluster, &command.line, stdin);
            if !done {
                self.node_shell = Some(shell);
            }
            return out;
        }
        if let Some(node) = self.chroot_target(&command.line) {
            self.node_shell = Some(crate::shell::node::NodeShell::new(&node, true));
            return Output::default();
        }
        if let Some(mut attached) = self.attached.take() {
            let (out, done) = attached.line(&mut self.cluster, &command.line);
            if !done {
                self.attached = Some(attached);
            }
            return out;
        }
        let mut out = self.run_line(&command.line, command.heredoc.as_ref().map(|(_, body)| body.as_str()));
        if let Some(target) = out.attach.take() {
            self.attached = Some(kubectl::session::Session::new(&self.cluster, *target));
        }
        ended.stdout.push_str(&out.stdout);
        ended.stderr.push_str(&out.stderr);
        ended.warnings.push_str(&out.warnings);
        ended.code = out.code;
        ended
    }

    /// The node a line enters when it is `chroot /host` (or `chroot /host sh|bash`) typed in
    /// the shell of a pod `kubectl debug node/…` made.
    fn chroot_target(&self, line: &str) -> Option<String> {
        let words = split_words(line).ok()?;
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        if !matches!(
            words.as_slice(),
            ["chroot", "/host"] | ["chroot", "/host", "sh" | "bash" | "/bin/sh" | "/bin/bash"]
        ) {
            return None;
        }
        let pod = self.attached.as_ref()?.pod();
        crate::shell::node::debugs_node(pod).map(str::to_string)
    }

    /// Opens a shell on a node (`sim ssh NODE`).
    fn ssh(&mut self, node: &str) -> Output {
        if self.cluster.kubelet(node).is_none() {
            return Output {
                stderr: format!("ssh: Could not resolve hostname {node}: Name or service not known\n"),
                code: 255,
                ..Default::default()
            };
        }
        self.node_shell = Some(crate::shell::node::NodeShell::new(node, false));
        Output::default()
    }

    /// Closes the terminal's input, as a one-shot `kubectl exec -it` from a script does when it
    /// returns: an attached shell reads end-of-file and exits as `exit` would. Returns what
    /// kubectl then prints (nothing when no shell was attached).
    pub fn hang_up(&mut self) -> Output {
        self.node_shell = None;
        match self.attached.take() {
            Some(mut attached) => attached.line(&mut self.cluster, "exit").0,
            None => Output::default(),
        }
    }

    /// Runs a command beside the terminal, as from a second terminal (the page's buttons and
    /// editor): a container shell the terminal is attached to stays attached and does not see it.
    pub fn execute_beside(&mut self, command: &Command) -> Output {
        let attached = self.attached.take();
        let node_shell = self.node_shell.take();
        let out = self.execute(command);
        if self.attached.is_none() {
            self.attached = attached;
        }
        if self.node_shell.is_none() {
            self.node_shell = node_shell;
        }
        out
    }

    /// Ends a session whose container has gone (time passed, the pod was deleted) and returns
    /// what kubectl printed as it returned; None while it goes on, or when not attached.
    pub fn poll(&mut self) -> Option<Output> {
        let out = self.attached.as_ref()?.check(&mut self.cluster)?;
        self.attached = None;
        self.node_shell = None;
        Some(out)
    }

    /// The shell on a node the terminal is in, if any (`sim ssh NODE`).
    pub fn node_shell(&self) -> Option<&crate::shell::node::NodeShell> {
        self.node_shell.as_ref()
    }

    /// The container shell's prompt while attached to one (`/ # `), else None (`$ `).
    pub fn prompt(&self) -> Option<&str> {
        if let Some(shell) = &self.node_shell {
            return Some(shell.prompt());
        }
        self.attached.as_ref().map(|a| a.prompt())
    }

    /// Runs a command that only looks (a lesson's check): it is not logged and nothing it
    /// sends is recorded, so the session and its record stay exactly as they were. The caller
    /// makes sure the command cannot write (see `lessons::check::read_only_problem`).
    pub fn inspect(&mut self, line: &str) -> Output {
        let hushed = self.cluster.record.hush();
        self.home.read_only = true;
        self.cluster.looking = true;
        let cwd = self.home.cwd.clone();
        let out = self.run_line(line, None);
        self.home.cwd = cwd;
        self.home.read_only = false;
        self.cluster.looking = false;
        self.cluster.record.resume(hushed);
        out
    }

    /// Runs a line: `$(...)` substitutions first, then a pipeline whose first stage is a
    /// sandbox command and whose later stages filter its output, run `xargs COMMAND`, or are
    /// sandbox commands reading it (`cat <<EOF | kubectl apply -f -`).
    /// Each stage's redirections (`> file`, `2>&1`, `< file`) apply to it, as sh applies them.
    fn run_line(&mut self, line: &str, stdin: Option<&str>) -> Output {
        let mut line = line.to_string();
        let mut stderr = String::new();
        while let Some((start, end, inner)) = crate::util::pipes::find_substitution(&line) {
            let out = self.run_line(&inner, None);
            stderr.push_str(&out.stderr);
            let value = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
            line.replace_range(start..end, &value);
        }
        let stages = crate::util::pipes::split_pipeline(&line);
        let last = stages.len() - 1;
        let mut out = Output { stderr, ..Default::default() };
        for (i, stage) in stages.iter().enumerate() {
            let (text, redirects) = match redirect::split(stage) {
                Ok(split) => split,
                Err(e) => return Output { stderr: out.stderr + &e + "\n", code: 2, ..Default::default() },
            };
            let routes = match self.open(&redirects) {
                Ok(routes) => routes,
                Err(e) => {
                    return Output { stderr: out.stderr + &e, code: 1, warnings: out.warnings, ..Default::default() };
                }
            };
            let tty = i == last && routes.stdout == Route::Out;
            let piped = if i == 0 { stdin.map(str::to_string) } else { Some(std::mem::take(&mut out.stdout)) };
            let input = routes.stdin.clone().or(piped);
            let result = if i == 0 {
                self.run_simple(&text, input.as_deref(), tty)
            } else {
                self.filter_stage(&text, input.as_deref().unwrap_or(""), tty)
            };
            let result = match self.route(result, &routes) {
                Ok(result) => result,
                Err(e) => Output { stderr: e, code: 1, ..Default::default() },
            };
            // A filter passes the command's status on; a stage that fails sets its own.
            let filtered = i > 0
                && result.code == 0
                && !matches!(text.split_whitespace().next(), Some(p) if p == "xargs" || PROGRAMS.contains(&p));
            out = Output {
                stdout: result.stdout,
                stderr: out.stderr + &result.stderr,
                code: if filtered { out.code } else { result.code },
                warnings: out.warnings + &result.warnings,
                attach: result.attach.or(out.attach),
            };
            let program = text.split_whitespace().next().unwrap_or("");
            if out.code == 127 && i > 0 && program != "xargs" && !PROGRAMS.contains(&program) {
                return Output { stdout: String::new(), ..out };
            }
        }
        out
    }

    /// A later stage of a pipeline: a sandbox command reading `input` (`cat <<EOF | kubectl
    /// apply -f -`), `xargs COMMAND…`, or a text filter over `input`.
    fn filter_stage(&mut self, stage: &str, input: &str, tty: bool) -> Output {
        let words = match split_words(stage) {
            Ok(w) => w,
            Err(e) => return Output { stderr: format!("sh: {e}\n"), code: 2, ..Default::default() },
        };
        let program = words.first().map(String::as_str).unwrap_or("");
        if PROGRAMS.contains(&program) || coreutils::PROGRAMS.contains(&program) {
            return self.run_simple(stage, Some(input), tty);
        }
        if words.first().is_some_and(|w| w == "xargs") {
            let args: Vec<String> = input.split_whitespace().map(String::from).collect();
            let mut next: Vec<String> = words[1..].to_vec();
            next.extend(args);
            let quoted: Vec<String> = next.iter().map(|w| shell_quote(w)).collect();
            return self.run_simple(&quoted.join(" "), None, false);
        }
        match crate::util::pipes::filter(&words, input) {
            Ok(text) => Output { stdout: text, ..Default::default() },
            Err(e) => Output { stderr: e + "\n", code: 127, ..Default::default() },
        }
    }

    /// The file system as a command sees it, lent out of the session for `f`.
    fn with_fs<R>(&mut self, f: impl FnOnce(&mut home::Fs, &mut Cluster) -> R) -> R {
        let mut files = std::mem::take(&mut self.files);
        let mut state = std::mem::take(&mut self.home);
        let now = self.cluster.now();
        let r = f(&mut home::Fs { files: &mut files, state: &mut state, now }, &mut self.cluster);
        self.files = files;
        self.home = state;
        r
    }

    /// Opens a stage's redirections in order, as sh does before the command runs: `>` makes
    /// or empties its file, `<` reads its file. Fails as sh fails, and the command then does
    /// not run.
    fn open(&mut self, redirects: &[redirect::Redirect]) -> Result<Routes, String> {
        let mut routes = Routes::default();
        for r in redirects {
            let path = match &r.target {
                redirect::Target::Fd(1) if r.fd == 2 => {
                    routes.stderr = routes.stdout.clone();
                    continue;
                }
                redirect::Target::Fd(2) if r.fd == 1 => {
                    routes.stdout = routes.stderr.clone();
                    continue;
                }
                redirect::Target::Fd(d) => return Err(format!("sh: {d}: Bad file descriptor\n")),
                redirect::Target::File(path) => path.clone(),
            };
            if r.fd == 0 {
                let read = self.with_fs(|fs, _| fs.read(&path).map(str::to_string));
                match read {
                    Ok(text) => routes.stdin = Some(text),
                    Err(e) => return Err(format!("sh: {path}: {}\n", e.text())),
                }
                continue;
            }
            let route = if path == "/dev/null" {
                Route::Null
            } else {
                if !r.append {
                    let made = self.with_fs(|fs, _| fs.write(&path, "", false));
                    if let Err(e) = made {
                        return Err(format!("sh: {path}: {}\n", e.text()));
                    }
                }
                Route::File(path)
            };
            if r.fd == 1 || r.both {
                routes.stdout = route.clone();
            }
            if r.fd == 2 || r.both {
                routes.stderr = route;
            }
        }
        Ok(routes)
    }

    /// Sends a command's output where its redirections say: what stays is what the terminal
    /// (or the next stage) gets.
    fn route(&mut self, mut out: Output, routes: &Routes) -> Result<Output, String> {
        let stdout = std::mem::take(&mut out.stdout);
        // Warnings are printed to stderr before the output: they stay apart on a terminal.
        let warnings = if routes.stderr == Route::Err { String::new() } else { std::mem::take(&mut out.warnings) };
        let stderr = warnings + &std::mem::take(&mut out.stderr);
        let mut error = String::new();
        for (text, route) in [(stdout, &routes.stdout), (stderr, &routes.stderr)] {
            match route {
                Route::Err => out.stderr.push_str(&text),
                Route::Out => out.stdout.push_str(&text),
                Route::Null => {}
                Route::File(path) => {
                    if text.is_empty() {
                        continue;
                    }
                    if let Err(e) = self.with_fs(|fs, _| fs.write(path, &text, true)) {
                        error.push_str(&format!("sh: {path}: {}\n", e.text()));
                        out.code = 1;
                    }
                }
            }
        }
        out.stderr.push_str(&error);
        Ok(out)
    }

    /// Runs one sandbox command (no pipes, no redirections); `tty` when its output goes to the
    /// terminal.
    fn run_simple(&mut self, line: &str, stdin: Option<&str>, tty: bool) -> Output {
        if line.trim_start().starts_with('#') {
            return Output::default();
        }
        let words = match split_words(line) {
            Ok(w) => w,
            Err(e) => return Output { stderr: format!("sh: {e}\n"), code: 2, ..Default::default() },
        };
        // `NAME=value command…`: the variables are the command's environment, which none of the
        // sandbox's programs read (`ETCDCTL_API=3 etcdctl …`, as etcd's docs write it).
        let assignments = words.iter().take_while(|w| is_assignment(w)).count();
        let words = &words[assignments.min(words.len())..];
        let Some(program) = words.first().map(String::as_str) else { return Output::default() };
        if program.starts_with('#') {
            return Output::default();
        }
        let rest = &words[1..];
        match program {
            "kubectl" | "k" => self.with_fs(|fs, cluster| {
                let fs = &*fs;
                let read = move |name: &str| -> Result<String, String> {
                    // A name kept as given (the CLI's files), else the path it resolves to.
                    if let Some(text) = fs.files.get(name) {
                        return Ok(text.clone());
                    }
                    match fs.read(name) {
                        Ok(text) => Ok(text.to_string()),
                        Err(home::FsError::IsADirectory) => Err(format!("error: the path \"{name}\" is a directory")),
                        Err(_) => Err(format!("error: the path \"{name}\" does not exist")),
                    }
                };
                let list = move |dir: &str, recursive: bool| -> Vec<String> {
                    fs.files_under(dir, recursive)
                        .into_iter()
                        .filter(|k| [".yaml", ".yml", ".json"].iter().any(|ext| k.ends_with(ext)))
                        .collect()
                };
                kubectl::run(cluster, rest, &Io { stdin, read_file: &read, list_dir: &list })
            }),
            "sleep" => self.sleep(rest),
            "sim" => self.sim(rest),
            "etcdctl" => crate::etcdctl::snapshot::run(&mut self.cluster, &mut self.snapshots, rest, stdin),
            "clear" => Output::default(),
            "echo" => Output { stdout: crate::util::printing::echo(rest), ..Default::default() },
            "printf" => Output { stdout: crate::util::printing::printf(rest), ..Default::default() },
            p if coreutils::PROGRAMS.contains(&p) => self.with_fs(|fs, _| coreutils::run(p, rest, stdin, fs, tty)),
            // A text filter reads its input from `<` or a heredoc as from a pipe (`wc -l < f`).
            _ if stdin.is_some() => match crate::util::pipes::filter(words, stdin.unwrap_or("")) {
                Ok(text) => Output { stdout: text, ..Default::default() },
                Err(e) => Output { stderr: e + "\n", code: 127, ..Default::default() },
            },
            other => Output { stderr: format!("sh: {other}: command not found\n"), code: 127, ..Default::default() },
        }
    }

    /// `sleep DURATION…`: lets virtual time pass, at most [`COMMAND_TIME_CAP`] of it.
    fn sleep(&mut self, args: &[String]) -> Output {
        let fail = |stderr: String| Output { stderr, code: 1, ..Default::default() };
        let operands: Vec<&str> = args.iter().map(String::as_str).collect();
        if operands.is_empty() {
            return fail("sleep: missing operand\nTry 'sleep --help' for more information.\n".into());
        }
        let secs = match crate::sim::time::parse_sleep_seconds(&operands) {
            Ok(secs) => secs,
            Err(bad) => {
                return fail(format!(
                    "sleep: invalid time interval '{bad}'\nTry 'sleep --help' for more information.\n"
                ));
            }
        };
        let d = Duration::from_secs_f64_saturating(secs);
        if !secs.is_finite() || d > COMMAND_TIME_CAP {
            return fail(format!(
                "sleep: the sandbox runs at most {} of virtual time per command (asked for {})\n",
                COMMAND_TIME_CAP.short(),
                operands.join(" ")
            ));
        }
        self.cluster.advance(d);
        Output::default()
    }

    fn sim(&mut self, args: &[String]) -> Output {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let ok = |s: String| Output { stdout: s, ..Default::default() };
        match words.as_slice() {
            ["settle"] => {
                let (took, unsettled) = self.cluster.settle_reporting(SETTLE_LIMIT);
                if unsettled.is_empty() {
                    ok(format!("settled after {took} of virtual time\n"))
                } else {
                    let who = unsettled.join(", ");
                    let verb = if unsettled.len() == 1 { "still has" } else { "still have" };
                    ok(format!("not settled after {took} of virtual time (the limit): {who} {verb} work\n"))
                }
            }
            ["time"] => ok(format!(
                "virtual time {} (revision {})\n",
                self.cluster.now().since(crate::sim::Time::ZERO),
                self.cluster.inspect().etcd().revision()
            )),
            ["node", ..] => crate::shell::chaos::node(&mut self.cluster, &args[1..]),
            ["ssh", node] => self.ssh(node),
            ["pod", ..] => crate::shell::chaos::pod(&mut self.cluster, &args[1..]),
            ["image", ..] => crate::shell::chaos::image(&mut self.cluster, &args[1..]),
            ["scheduler", ..] => crate::shell::chaos::scheduler(&mut self.cluster, &args[1..]),
            ["etcd", ..] => crate::etcdctl::snapshot::sim(&mut self.cluster, &args[1..]),
            ["export", ..] => crate::shell::export::command(&self.cluster, &args[1..]),
            ["record", ..] => match crate::shell::record_log::run(&self.cluster, &args[1..]) {
                Ok(text) => ok(text),
                Err(text) => Output { stderr: text, code: 2, ..Default::default() },
            },
            ["curl", rest @ ..] => {
                let (mut url, mut node, mut namespace, mut insecure) = (None, "worker-1", "default", false);
                let mut host = None;
                let mut it = rest.iter();
                while let Some(word) = it.next() {
                    match *word {
                        "--from" => node = it.next().copied().unwrap_or(""),
                        "-n" | "--namespace" => namespace = it.next().copied().unwrap_or(""),
                        "-k" | "--insecure" => insecure = true,
                        "-H" | "--header" => {
                            let header = it.next().copied().unwrap_or("");
                            if let Some((k, v)) =
                                header.split_once(':').filter(|(k, _)| k.trim().eq_ignore_ascii_case("host"))
                            {
                                let _ = k;
                                host = Some(v.trim());
                            }
                        }
                        "-s" | "--silent" | "-S" | "-sS" => {}
                        w if url.is_none() && !w.starts_with('-') => url = Some(w),
                        w => {
                            return Output {
                                stderr: format!("sim curl: unexpected argument \"{w}\"; see 'sim help'\n"),
                                code: 2,
                                ..Default::default()
                            };
                        }
                    }
                }
                let Some(url) = url else {
                    return Output { stderr: "sim curl: no URL specified\n".into(), code: 2, ..Default::default() };
                };
                // Each request draws from its own stream, so looking never changes the cluster.
                let mut rng = crate::sim::Rng::stream(self.cluster.seed(), &format!("sim curl {}", self.log.len()));
                let r = match node.strip_prefix("pod/") {
                    // Sent as a pod: from its address, in its namespace, on its node.
                    Some(name) => {
                        let found = self.cluster.kubelets().find_map(|k| k.pod(namespace, name));
                        let Some(pod) = found.as_ref().and_then(|p| p.as_pod()).filter(|p| !p.status.pod_ip.is_empty())
                        else {
                            return Output {
                                stderr: format!(
                                    "sim curl: pod \"{name}\" is not running in namespace \"{namespace}\"\n"
                                ),
                                code: 1,
                                ..Default::default()
                            };
                        };
                        let from = crate::cluster::policy::source(pod);
                        crate::cluster::policy::curl_from(&self.cluster, from, namespace, url, host, insecure, &mut rng)
                    }
                    // Sent from the node itself: the pod network's rules see the node's address.
                    None => {
                        let ip = self.cluster.kubelet(node).map(|k| k.internal_ip().to_string()).unwrap_or_default();
                        let from = crate::cni::Source::Node { name: node, ip: &ip };
                        crate::cluster::policy::curl_from(&self.cluster, from, namespace, url, host, insecure, &mut rng)
                    }
                };
                Output { stdout: r.stdout, stderr: r.stderr, code: r.code, ..Default::default() }
            }
            [] | ["help"] => ok(format!("{SIM_HELP}{}", crate::shell::chaos::help())),
            _ => Output {
                stderr: format!("sim: unknown command \"{}\"; see 'sim help'\n", words.join(" ")),
                code: 1,
                ..Default::default()
            },
        }
    }

    /// Runs a script and returns its transcript: each command after `$ `, then its output.
    /// A script may also be a transcript (lines starting `$ `): then only those lines run.
    pub fn transcript(&mut self, script: &str) -> String {
        let is_transcript = script.lines().any(|l| l.starts_with("$ "));
        if is_transcript {
            return self.replay(script);
        }
        self.run_commands(&parse_script(script))
    }

    /// Runs commands and returns their transcript: each after the prompt it was typed at
    /// (`$ `, or a container shell's while attached), then its output.
    pub fn run_commands(&mut self, commands: &[Command]) -> String {
        let mut out = String::new();
        for command in commands {
            self.echo(command, &mut out);
        }
        out
    }

    /// Appends what a terminal shows for one command: anything printed as a session ended
    /// while idle, the prompt and the command, then its output.
    fn echo(&mut self, command: &Command, out: &mut String) {
        if let Some(ended) = self.poll() {
            out.push_str(&ended.combined());
        }
        out.push_str(self.prompt().unwrap_or("$ "));
        out.push_str(&command.display());
        out.push('\n');
        out.push_str(&self.execute(command).combined());
    }

    /// Runs a transcript's commands and returns the new transcript. Which lines are commands
    /// depends on the session: those after `$ `, and while attached to a container's shell,
    /// those after its prompt (`/ # hostname`); every other line is output.
    pub fn replay(&mut self, transcript: &str) -> String {
        let mut out = String::new();
        let mut lines = transcript.lines();
        while let Some(line) = lines.next() {
            if let Some(ended) = self.poll() {
                out.push_str(&ended.combined());
            }
            let prompt = self.prompt().unwrap_or("$ ").to_string();
            let typed = match line.strip_prefix(prompt.as_str()) {
                Some(typed) => typed,
                // An empty line typed at a prompt loses its trailing space in a file.
                None if (self.attached.is_some() || self.node_shell.is_some()) && line == prompt.trim_end() => "",
                None => continue,
            };
            let heredoc =
                heredoc_word(typed).filter(|_| self.attached.is_none() || self.node_shell.is_some()).map(|word| {
                    let body = heredoc_body(&mut lines, &word);
                    (word, body)
                });
            let command = Command { line: typed.to_string(), heredoc };
            out.push_str(&prompt);
            out.push_str(&command.display());
            out.push('\n');
            out.push_str(&self.execute(&command).combined());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backslash_in_double_quotes_escapes_only_what_the_shell_gives_meaning() {
        assert_eq!(split_words(r#"printf "a\nb" "\"q\" \$x \\""#).unwrap(), ["printf", r"a\nb", r#""q" $x \"#]);
        assert_eq!(split_words(r"echo a\ b").unwrap(), ["echo", "a b"]);
    }

    #[test]
    fn heredocs_attach_to_their_command() {
        let cmds = parse_script("kubectl apply -f - <<EOF\nkind: Pod\nEOF\n$ sleep 5s\n");
        assert_eq!(cmds.len(), 2);
        assert_eq!(cmds[0].heredoc, Some(("EOF".to_string(), "kind: Pod\n".to_string())));
        assert_eq!(cmds[1].line, "sleep 5s");
    }

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(split_words("a 'b c' \"d\\\"e\" f\\ g").unwrap(), ["a", "b c", "d\"e", "f g"]);
        assert!(split_words("echo 'open").is_err());
    }

    #[test]
    fn a_command_beside_the_terminal_runs_in_the_sandbox_and_leaves_the_container_shell_attached() {
        let mut s = Session::new(2);
        for line in ["kubectl run b --image=busybox -- sleep 3600", "sleep 10s", "kubectl exec -it b -- sh"] {
            s.execute(&Command::new(line));
        }
        assert_eq!(s.execute(&Command::new("sim time")).stderr, "sh: sim: not found\n");
        assert!(s.execute_beside(&Command::new("sim time")).stdout.starts_with("virtual time"));
        assert_eq!(s.prompt(), Some("/ # "));
    }

    #[test]
    fn hanging_up_ends_the_attached_shell_as_end_of_input_does() {
        let mut s = Session::new(2);
        for line in ["kubectl run b --image=busybox -- sleep 3600", "sleep 10s", "kubectl exec -it b -- sh"] {
            s.execute(&Command::new(line));
        }
        assert_eq!(s.prompt(), Some("/ # "));
        s.hang_up();
        assert_eq!(s.prompt(), None);
        assert!(s.execute(&Command::new("sim time")).stdout.starts_with("virtual time"));
        assert_eq!(s.hang_up().stdout, "", "nothing is attached any more");
    }

    #[test]
    fn a_transcript_reads_lines_typed_at_a_container_prompt_back_as_commands() {
        let mut s = Session::new(2);
        let script =
            "kubectl run b --image=busybox -- sleep 3600\nsleep 10s\nkubectl exec -it b -- sh\ncd /tmp\npwd\nexit\n";
        let transcript = s.transcript(script);
        assert!(transcript.contains("/ # cd /tmp\n/tmp # pwd\n/tmp\n/tmp # exit\n"), "{transcript}");
        assert_eq!(Session::new(2).replay(&transcript), transcript);
    }

    #[test]
    fn a_heredoc_piped_into_kubectl_is_its_standard_input() {
        let mut s = Session::new(1);
        let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: piped\n";
        let command =
            Command { line: "cat <<EOF | kubectl apply -f -".into(), heredoc: Some(("EOF".into(), body.into())) };
        assert_eq!(s.execute(&command).stdout, "configmap/piped created\n");
        s.execute(&Command::new("kubectl get cm piped -o yaml > piped.yaml"));
        assert_eq!(s.execute(&Command::new("kubectl apply -f - < piped.yaml")).stdout, "configmap/piped configured\n");
    }

    #[test]
    fn errors_sent_to_standard_output_go_down_the_pipe_and_to_the_file() {
        let mut s = Session::new(1);
        let out = s.execute(&Command::new("kubectl get pod nope 2>&1 | grep -c NotFound"));
        assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("1\n", ""));
        let out = s.execute(&Command::new("kubectl get pod nope 2>&1 > out.txt"));
        assert_eq!(out.stdout, "Error from server (NotFound): pods \"nope\" not found\n", "2>&1 took the terminal");
        let out = s.execute(&Command::new("kubectl get pod nope > out.txt 2>&1"));
        assert_eq!(out.combined(), "");
        assert_eq!(
            s.execute(&Command::new("cat out.txt")).stdout,
            "Error from server (NotFound): pods \"nope\" not found\n"
        );
        let out = s.execute(&Command::new("echo oops >&2"));
        assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", "oops\n"));
    }

    #[test]
    fn variables_set_before_a_command_are_its_environment_and_do_not_hide_it() {
        let mut s = Session::new(1);
        let out = s.execute(&Command::new("ETCDCTL_API=3 etcdctl version"));
        assert!(out.stdout.starts_with("etcdctl version"), "{out:?}");
        assert_eq!(s.execute(&Command::new("A=1")).combined(), "");
        assert!(!is_assignment("--replicas=3") && !is_assignment("1A=2") && is_assignment("_x=y"));
    }

    #[test]
    fn unknown_programs_are_not_found() {
        let mut s = Session::new(1);
        let out = s.execute(&Command::new("kubctl get pods"));
        assert_eq!((out.stderr.as_str(), out.code), ("sh: kubctl: command not found\n", 127));
    }
}
