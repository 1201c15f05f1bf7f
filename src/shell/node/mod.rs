//! Nodes as machines: a root shell on a node (`sim ssh NODE`, or `chroot /host` in the pod
//! `kubectl debug node/NODE` starts), where the node's services, runtime, rules and files
//! show: `systemctl`, `journalctl -u kubelet`, `crictl`, `iptables -t nat -L`, and the static
//! pod manifests in /etc/kubernetes/manifests, which the kubelet runs (edit or move one and
//! the kubelet stops or restarts that control-plane component at its next file check).

pub mod completion;
pub mod crictl;
pub mod fs;
pub mod iptables;
pub mod systemd;

use crate::cluster::Cluster;
use crate::kubectl::Output;

/// The programs a node shell runs, for completion.
pub const PROGRAMS: &[&str] = &[
    "systemctl",
    "journalctl",
    "crictl",
    "iptables",
    "iptables-save",
    "ls",
    "cat",
    "mv",
    "cp",
    "rm",
    "sed",
    "echo",
    "cd",
    "pwd",
    "hostname",
    "sleep",
    "exit",
];

/// A shell on a node.
#[derive(Clone, Debug)]
pub struct NodeShell {
    pub node: String,
    cwd: String,
    /// Entered by `chroot /host` from a debugging pod: `exit` goes back to the pod's shell,
    /// and the prompt is the host's plain `sh`'s.
    pub chroot: bool,
    last_code: i32,
    shown: String,
}

impl NodeShell {
    pub fn new(node: &str, chroot: bool) -> NodeShell {
        let cwd = if chroot { "/".into() } else { "/root".into() };
        let mut shell = NodeShell { node: node.to_string(), cwd, chroot, last_code: 0, shown: String::new() };
        shell.shown = shell.make_prompt();
        shell
    }

    /// The shell's working directory.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// `root@NODE:~# ` (bash, logged in), or `# ` (sh after chroot).
    pub fn prompt(&self) -> &str {
        &self.shown
    }

    fn make_prompt(&self) -> String {
        if self.chroot {
            return "# ".into();
        }
        let shown = match self.cwd.as_str() {
            "/root" => "~".to_string(),
            c => c.strip_prefix("/root/").map_or_else(|| c.to_string(), |r| format!("~/{r}")),
        };
        format!("root@{}:{shown}# ", self.node)
    }

    /// Runs a line (its heredoc body as the first command's input). Returns what it printed
    /// and whether the shell exited.
    pub fn line(&mut self, cluster: &mut Cluster, line: &str, stdin: Option<&str>) -> (Output, bool) {
        let mut all = Output::default();
        let mut stdin = stdin.map(str::to_string);
        // A comment: the rest of the line is for people.
        if line.trim_start().starts_with('#') {
            return (all, false);
        }
        // `$(command)`: what the command prints, its words joined by spaces.
        let mut line = line.to_string();
        let mut guard = 0;
        while let Some((start, end, inner)) = crate::util::pipes::find_substitution(&line) {
            guard += 1;
            if guard > 16 {
                break;
            }
            let out = self.pipeline(cluster, &inner, None);
            all.stderr.push_str(&out.stderr);
            let value = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
            line.replace_range(start..end, &value);
        }
        for (part, op) in crate::kubelet::script::commands(&line) {
            if !op.runs_after(self.last_code) || part.trim_start().starts_with('#') || part.trim().is_empty() {
                continue;
            }
            if part.trim() == "exit" || part.trim().starts_with("exit ") {
                if !self.chroot {
                    all.stdout.push_str("logout\n");
                }
                return (all, true);
            }
            let out = self.pipeline(cluster, &part, stdin.take());
            all.stdout.push_str(&out.stdout);
            all.stderr.push_str(&out.stderr);
            all.code = out.code;
            self.last_code = out.code;
        }
        self.shown = self.make_prompt();
        (all, false)
    }

    fn pipeline(&mut self, cluster: &mut Cluster, part: &str, stdin: Option<String>) -> Output {
        let stages = crate::util::pipes::split_pipeline(part);
        let mut out = Output::default();
        let last = stages.len() - 1;
        for (i, stage) in stages.iter().enumerate() {
            let (text, redirects) = match crate::shell::redirect::split(stage) {
                Ok(s) => s,
                Err(e) => return Output { stderr: format!("bash: {e}\n"), code: 2, ..Default::default() },
            };
            let words = match crate::util::command_line::split_words(&text) {
                Ok(w) => w,
                Err(e) => return Output { stderr: format!("bash: {e}\n"), code: 2, ..Default::default() },
            };
            let input = if i == 0 { stdin.clone() } else { Some(std::mem::take(&mut out.stdout)) };
            let (stdout, stderr, code) = if i == 0 {
                self.run(cluster, &words, input.as_deref())
            } else {
                match crate::util::pipes::filter(&words, input.as_deref().unwrap_or("")) {
                    Ok(t) => {
                        let grep_none = words.first().is_some_and(|w| w == "grep") && t.is_empty();
                        (t, String::new(), i32::from(grep_none))
                    }
                    Err(e) => (String::new(), format!("{e}\n"), 127),
                }
            };
            out.stdout = stdout;
            out.stderr.push_str(&stderr);
            out.code = code;
            for r in &redirects {
                let crate::shell::redirect::Target::File(path) = &r.target else { continue };
                if path == "/dev/null" {
                    if r.fd == 2 || r.both {
                        out.stderr.clear();
                    }
                    if r.fd == 1 || r.both {
                        out.stdout.clear();
                    }
                    continue;
                }
                if r.fd == 1 && i == last {
                    let abs = fs::resolve(&self.cwd, path);
                    let mut text =
                        if r.append { fs::read(cluster, &self.node, &abs).unwrap_or_default() } else { String::new() };
                    text.push_str(&std::mem::take(&mut out.stdout));
                    fs::write(cluster, &self.node, &abs, Some(text));
                }
            }
        }
        out
    }

    /// One simple command on the node.
    fn run(&mut self, cluster: &mut Cluster, words: &[String], stdin: Option<&str>) -> (String, String, i32) {
        let Some(program) = words.first() else { return Default::default() };
        let args = &words[1..];
        let node = self.node.clone();
        let path = |p: &str| fs::resolve(&self.cwd, p);
        let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        match program.as_str() {
            "systemctl" => systemd::systemctl(cluster, &node, args),
            "journalctl" => systemd::journalctl(cluster, &node, args),
            "crictl" => crictl::run(cluster, &node, args),
            "iptables" => iptables::iptables(cluster, &node, args),
            "iptables-save" => iptables::save(cluster, &node),
            "hostname" => (format!("{node}\n"), String::new(), 0),
            "sleep" => {
                let ops: Vec<&str> = args.iter().map(String::as_str).collect();
                match crate::sim::time::parse_sleep_seconds(&ops) {
                    Ok(secs) if secs.is_finite() => {
                        let d = crate::sim::Duration::from_secs_f64_saturating(secs)
                            .min(crate::sim::limits::COMMAND_TIME_CAP);
                        cluster.advance(d);
                        Default::default()
                    }
                    _ => (String::new(), format!("sleep: invalid time interval '{}'\n", ops.join(" ")), 1),
                }
            }
            "pwd" => (format!("{}\n", self.cwd), String::new(), 0),
            "echo" => (crate::util::printing::echo(args), String::new(), 0),
            "cd" => {
                let target = path(operands.first().map_or("/root", |s| s.as_str()));
                if fs::is_dir(cluster, &node, &target) {
                    self.cwd = target;
                    Default::default()
                } else {
                    let t = operands.first().map_or("", |s| s.as_str());
                    (String::new(), format!("bash: cd: {t}: No such file or directory\n"), 1)
                }
            }
            "ls" => {
                let dirs: Vec<String> = if operands.is_empty() {
                    vec![self.cwd.clone()]
                } else {
                    operands.iter().map(|o| path(o)).collect()
                };
                let (mut out, mut err, mut code) = (String::new(), String::new(), 0);
                for (i, d) in dirs.iter().enumerate() {
                    match fs::list(cluster, &node, d) {
                        Ok(names) => {
                            if dirs.len() > 1 {
                                out.push_str(&format!("{}{}:\n", if i > 0 { "\n" } else { "" }, operands[i]));
                            }
                            let single = names.len() == 1 && names[0] == *d;
                            for n in names {
                                out.push_str(&format!("{}\n", if single { operands[i].to_string() } else { n }));
                            }
                        }
                        Err(e) => {
                            err.push_str(&format!("ls: cannot access '{}': {e}\n", operands[i]));
                            code = 2;
                        }
                    }
                }
                (out, err, code)
            }
            "cat" if operands.is_empty() => (stdin.unwrap_or("").to_string(), String::new(), 0),
            "cat" => {
                let (mut out, mut err, mut code) = (String::new(), String::new(), 0);
                for o in &operands {
                    match fs::read(cluster, &node, &path(o)) {
                        Ok(t) => out.push_str(&t),
                        Err(e) => {
                            err.push_str(&format!("cat: {o}: {e}\n"));
                            code = 1;
                        }
                    }
                }
                (out, err, code)
            }
            "mv" | "cp" if operands.len() == 2 => {
                let (from, to) = (path(operands[0]), path(operands[1]));
                let text = match fs::read(cluster, &node, &from) {
                    Ok(t) => t,
                    Err(e) => {
                        return (String::new(), format!("{program}: cannot stat '{}': {e}\n", operands[0]), 1);
                    }
                };
                let to = if fs::is_dir(cluster, &node, &to) {
                    format!("{}/{}", to.trim_end_matches('/'), from.rsplit('/').next().unwrap_or(""))
                } else {
                    to
                };
                fs::write(cluster, &node, &to, Some(text));
                if program == "mv" {
                    fs::write(cluster, &node, &from, None);
                }
                Default::default()
            }
            "mv" | "cp" => (String::new(), format!("{program}: the sandbox's {program} takes SOURCE DEST\n"), 1),
            "rm" => {
                let force = args.iter().any(|a| a.starts_with('-') && a.contains('f'));
                for o in &operands {
                    let p = path(o);
                    if cluster.kubelet(&node).and_then(|k| k.node_file(&p)).is_some() {
                        fs::write(cluster, &node, &p, None);
                    } else if !force {
                        return (String::new(), format!("rm: cannot remove '{o}': No such file or directory\n"), 1);
                    }
                }
                Default::default()
            }
            "sed" => self.sed(cluster, args),
            // A text filter reading a file named last (`grep image FILE`), else its input.
            "grep" | "head" | "tail" | "wc" | "sort" | "cut" | "uniq" => {
                let file = args.last().filter(|a| args.len() > 1 || !a.starts_with('-')).map(|a| path(a));
                let (words, input) = match file.as_deref().map(|f| (f, fs::read(cluster, &node, f))) {
                    Some((_, Ok(text))) if !(program == "grep" && args.len() == 1) => (&words[..words.len() - 1], text),
                    Some((_, Err(e))) if stdin.is_none() && !(program == "grep" && args.len() == 1) => {
                        let name = args.last().map_or("", String::as_str);
                        return (String::new(), format!("{program}: {name}: {e}\n"), 2);
                    }
                    _ => (words, stdin.unwrap_or("").to_string()),
                };
                match crate::util::pipes::filter(words, &input) {
                    Ok(t) => {
                        let code = i32::from(program == "grep" && t.is_empty());
                        (t, String::new(), code)
                    }
                    Err(e) => (String::new(), format!("{e}\n"), 2),
                }
            }
            "vi" | "vim" | "nano" => (
                String::new(),
                format!(
                    "{program}: the sandbox has no screen editor on nodes: use sed -i 's/OLD/NEW/' FILE, or cat > FILE <<EOF\n"
                ),
                1,
            ),
            "chroot" => (String::new(), "chroot: already on the node\n".into(), 1),
            other => (String::new(), format!("bash: {other}: command not found\n"), 127),
        }
    }

    /// `sed [-i] 's/OLD/NEW/[g]' FILE`: literal text, each line.
    fn sed(&mut self, cluster: &mut Cluster, args: &[String]) -> (String, String, i32) {
        let in_place = args.iter().any(|a| a == "-i");
        let rest: Vec<&String> = args.iter().filter(|a| *a != "-i" && *a != "-e").collect();
        let (Some(script), Some(file)) = (rest.first(), rest.get(1)) else {
            return (String::new(), "sed: the sandbox's sed takes [-i] 's/OLD/NEW/[g]' FILE\n".into(), 1);
        };
        let Some(body) = script.strip_prefix('s') else {
            return (
                String::new(),
                format!("sed: -e expression #1, char 1: unknown command: `{}'\n", script.chars().next().unwrap_or(' ')),
                1,
            );
        };
        let Some(delim) = body.chars().next() else {
            return (String::new(), "sed: -e expression #1, char 1: unterminated `s' command\n".into(), 1);
        };
        let fields: Vec<&str> = body[delim.len_utf8()..].split(delim).collect();
        if fields.len() < 3 {
            return (String::new(), "sed: -e expression #1, char 5: unterminated `s' command\n".into(), 1);
        }
        let (old, global) = (fields[0], fields[2].contains('g'));
        // GNU sed reads `\n` in the replacement as a newline.
        let new = fields[1].replace("\\n", "\n");
        let new = new.as_str();
        let path = fs::resolve(&self.cwd, file);
        let text = match fs::read(cluster, &self.node, &path) {
            Ok(t) => t,
            Err(e) => return (String::new(), format!("sed: can't read {file}: {e}\n"), 2),
        };
        let edited: String = text
            .split_inclusive('\n')
            .map(|l| {
                if old.is_empty() {
                    l.to_string()
                } else if global {
                    l.replace(old, new)
                } else {
                    l.replacen(old, new, 1)
                }
            })
            .collect();
        if in_place {
            if edited != text {
                fs::write(cluster, &self.node, &path, Some(edited));
            }
            Default::default()
        } else {
            (edited, String::new(), 0)
        }
    }
}

/// Whether a pod is one `kubectl debug node/…` made: the node's root mounted at /host.
pub fn debugs_node(pod: &crate::api::Pod) -> Option<&str> {
    let host_root = pod
        .spec
        .volumes
        .iter()
        .any(|v| v.get("hostPath").and_then(|h| h.get("path")).and_then(|p| p.as_str()) == Some("/"));
    (host_root && !pod.spec.node_name.is_empty()).then_some(pod.spec.node_name.as_str())
}

#[cfg(test)]
mod tests {
    use crate::shell::{Command, Session};

    fn on_control_plane() -> Session {
        let mut s = Session::new(1);
        s.execute(&Command::new("sim ssh control-plane"));
        s
    }

    fn scheduler_running(s: &Session) -> bool {
        let id = s.cluster.find_component(&crate::cluster::Role::Scheduler).unwrap();
        s.cluster.is_running(id)
    }

    #[test]
    fn a_manifest_written_with_a_heredoc_is_read_at_the_next_file_check() {
        let mut s = on_control_plane();
        assert_eq!(s.prompt(), Some("root@control-plane:~# "));
        let text = s.execute(&Command::new("cat /etc/kubernetes/manifests/kube-scheduler.yaml")).stdout;
        let broken = text.replace("--leader-elect=true", "--leader-elect=true\n    - --no-such-flag");
        let command = Command {
            line: "cat > /etc/kubernetes/manifests/kube-scheduler.yaml".into(),
            heredoc: Some(("EOF".into(), broken.clone())),
        };
        s.execute(&command);
        assert_eq!(s.execute(&Command::new("cat /etc/kubernetes/manifests/kube-scheduler.yaml")).stdout, broken);
        assert!(scheduler_running(&s), "nothing changes before the file source looks");
        s.execute(&Command::new("sleep 30s"));
        assert!(!scheduler_running(&s), "the new pod's container exits: the scheduler is down");
        s.execute(&Command::new("exit"));
        let logs = s.execute(&Command::new("kubectl logs -n kube-system kube-scheduler-control-plane")).stdout;
        assert!(logs.starts_with("Error: unknown flag: --no-such-flag\n"), "{logs}");
    }

    #[test]
    fn a_manifest_that_does_not_decode_stops_its_pod_and_the_journal_says_why() {
        let mut s = on_control_plane();
        s.execute(&Command::new("echo 'kind: [' > /etc/kubernetes/manifests/kube-scheduler.yaml"));
        s.execute(&Command::new("sleep 20s"));
        assert!(!scheduler_running(&s));
        let journal = s.execute(&Command::new("journalctl -u kubelet | grep 'Could not process'")).stdout;
        assert!(journal.contains("path=\"/etc/kubernetes/manifests/kube-scheduler.yaml\""), "{journal}");
        assert_eq!(s.execute(&Command::new("crictl ps | grep -c kube-scheduler")).stdout, "0\n");
    }

    #[test]
    fn systemctl_stops_and_starts_the_nodes_kubelet() {
        let mut s = Session::new(1);
        s.execute(&Command::new("sim ssh worker-1"));
        s.execute(&Command::new("systemctl stop kubelet"));
        let id = s.cluster.find_component(&crate::cluster::Role::Kubelet { node: "worker-1".into() }).unwrap();
        assert!(!s.cluster.is_running(id));
        let status = s.execute(&Command::new("systemctl status kubelet"));
        assert_eq!(status.code, 3);
        assert!(status.stdout.contains("Active: inactive (dead) since"), "{}", status.stdout);
        s.execute(&Command::new("systemctl start kubelet"));
        assert!(s.cluster.is_running(id));
        assert_eq!(s.execute(&Command::new("systemctl is-active kubelet")).stdout, "active\n");
        let out = s.execute(&Command::new("exit"));
        assert_eq!((out.stdout.as_str(), s.prompt()), ("logout\n", None));
    }

    #[test]
    fn without_the_controller_managers_manifest_no_controller_runs_until_it_is_back() {
        let mut s = on_control_plane();
        s.execute(&Command::new("mv /etc/kubernetes/manifests/kube-controller-manager.yaml /root/"));
        s.execute(&Command::new("sleep 20s"));
        s.execute(&Command::new("exit"));
        s.execute(&Command::new("kubectl create deployment web --image=nginx"));
        s.execute(&Command::new("sleep 10s"));
        assert_eq!(s.execute(&Command::new("kubectl get rs -o name")).stdout, "", "no deployment controller");
        s.execute(&Command::new("sim ssh control-plane"));
        s.execute(&Command::new("mv kube-controller-manager.yaml /etc/kubernetes/manifests/"));
        s.execute(&Command::new("sleep 45s"));
        s.execute(&Command::new("exit"));
        let rs = s.execute(&Command::new("kubectl get rs -o name")).stdout;
        assert!(rs.starts_with("replicaset.apps/web-"), "{rs}");
    }

    #[test]
    fn sim_ssh_to_a_node_that_does_not_exist_fails_as_ssh_does() {
        let mut s = Session::new(1);
        let out = s.execute(&Command::new("sim ssh nosuch"));
        assert_eq!(out.code, 255);
        assert_eq!(s.prompt(), None);
    }
}
