//! An interactive session: a terminal attached to a shell in a container (`kubectl exec -it
//! POD -- sh`, `kubectl run -it … -- sh`, `kubectl attach -it`). Each line typed runs in that
//! shell, which keeps its working directory and variables, until it exits or its container
//! stops; then kubectl returns and prints what it prints as it ends.

use super::Output;
use crate::api::Pod;
use crate::apiserver::ConnectTarget;
use crate::cluster::Cluster;
use crate::userland::{Container, ShellState};

/// Where a session's lines go: a stream (exec or attach) the API server opened to a
/// container instance through its kubelet, and the pod as it was then.
#[derive(Clone, Debug, PartialEq)]
pub struct Attach {
    pub stream: ConnectTarget,
    pub pod: Pod,
    /// The shell program, as typed (`sh`, `/bin/bash`).
    pub shell: String,
    /// Attached to the container's main process (PID 1) rather than a process `exec`
    /// started: `exit` then ends the container.
    pub main: Option<MainProcess>,
}

/// What ends with a container's main process, and what kubectl does after.
#[derive(Clone, Debug, PartialEq)]
pub struct MainProcess {
    pub restart_policy: String,
    /// Attached with a terminal (`-t`): kubectl then says how to resume.
    pub tty: bool,
    /// `kubectl run`'s work after the session (wait for the exit code, `--rm`), if it started it.
    pub run: Option<RunAfter>,
    pub quiet: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunAfter {
    pub rm: bool,
}

impl Attach {
    /// A shell `kubectl exec -it` started beside the container's process.
    pub fn exec(pod: &Pod, stream: ConnectTarget, shell: &str) -> Attach {
        Attach { stream, pod: pod.clone(), shell: shell.to_string(), main: None }
    }

    /// The container's own shell, PID 1.
    pub fn main(
        pod: &Pod,
        stream: ConnectTarget,
        shell: &str,
        run: Option<RunAfter>,
        tty: bool,
        quiet: bool,
    ) -> Attach {
        let restart_policy = pod.spec.restart_policy.clone().unwrap_or_else(|| "Always".to_string());
        Attach { main: Some(MainProcess { restart_policy, tty, run, quiet }), ..Attach::exec(pod, stream, shell) }
    }

    fn program(&self) -> &str {
        self.shell.rsplit('/').next().unwrap_or(&self.shell)
    }
}

/// The runtime's id of the container now running as `container` (a restart changes it).
pub(super) fn container_id(pod: &Pod, container: &str) -> String {
    pod.status
        .container_statuses
        .iter()
        .find(|s| s.name == container)
        .map(|s| s.container_id.clone())
        .unwrap_or_default()
}

/// The pod, while the attached process still runs in it (its stream is open).
fn live(cluster: &Cluster, t: &Attach) -> Option<Pod> {
    cluster.stream_open(&t.stream, true).then(|| t.pod.clone())
}

/// A session under way: its target, the shell's state and the prompt it shows.
#[derive(Clone, Debug)]
pub struct Session {
    target: Attach,
    state: ShellState,
    last_code: i32,
    prompt: String,
}

impl Session {
    pub fn new(cluster: &Cluster, target: Attach) -> Session {
        let mut s = Session { target, state: ShellState::default(), last_code: 0, prompt: String::new() };
        s.refresh_prompt(cluster);
        s
    }

    /// The pod the session's shell runs in, as it was when it attached.
    pub fn pod(&self) -> &Pod {
        &self.target.pod
    }

    /// The container shell's prompt (`/ # `, `root@web:/# `, `# `).
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    fn refresh_prompt(&mut self, cluster: &Cluster) {
        let Some(pod) = live(cluster, &self.target) else { return };
        let Some(spec) = pod.spec.containers.iter().find(|c| c.name == self.target.stream.container) else { return };
        let mut c = Container::new(cluster, &pod, spec, true);
        c.state = self.state.clone();
        self.prompt = c.prompt(self.target.program());
    }

    /// If the attached process has gone (its container stopped or restarted, its pod
    /// deleted), the session ends: what kubectl prints as it returns.
    pub fn check(&self, cluster: &mut Cluster) -> Option<Output> {
        if live(cluster, &self.target).is_some() {
            return None;
        }
        Some(match &self.target.main {
            // The shell exec started is killed with its container.
            None => {
                Output { stderr: "command terminated with exit code 137\n".into(), code: 137, ..Default::default() }
            }
            Some(main) => after_main(cluster, &self.target, main),
        })
    }

    /// Runs one line in the shell. Returns what it printed and whether the session ended.
    pub fn line(&mut self, cluster: &mut Cluster, line: &str) -> (Output, bool) {
        let Some(pod) = live(cluster, &self.target) else {
            return (self.check(cluster).unwrap_or_default(), true);
        };
        let Some(spec) = pod.spec.containers.iter().find(|c| c.name == self.target.stream.container) else {
            return (Output::default(), true);
        };
        let shell = self.target.program().to_string();
        let mut c = Container::new(cluster, &pod, spec, true);
        c.state = self.state.clone();
        // The shell runs the whole line, pipes included.
        let run = c.script(&shell, line);
        let prompt = self.prompt.clone();
        self.state = c.state;
        // A container's own shell writes to its terminal, which the container's log records:
        // the echo of each line typed and what it printed.
        if self.target.main.is_some() {
            let mut lines = vec![format!("{prompt}{line}")];
            lines.extend(run.stdout.lines().chain(run.stderr.lines()).map(String::from));
            cluster.stream_echo(&self.target.stream, &lines);
        }
        let mut out = Output { stdout: run.stdout, stderr: run.stderr, code: run.code, ..Default::default() };
        // The terminal waits as long as the line slept, within what one command may let pass.
        let cap = crate::sim::limits::COMMAND_TIME_CAP;
        if run.slept > cap {
            out.stderr.push_str(&format!(
                "kubeloop: the sandbox runs at most {} of virtual time per command; this line slept {} and was cut short\n",
                cap.short(),
                if run.slept == crate::sim::Duration::MAX { "forever".to_string() } else { run.slept.to_string() }
            ));
        }
        if run.slept > crate::sim::Duration::ZERO {
            cluster.advance(run.slept.min(cap));
        }
        if run.exited {
            // `exit` alone exits with the status of the command before it.
            let code = if line.trim() == "exit" { self.last_code } else { run.code };
            let end = self.exit(cluster, code);
            out.stdout.push_str(&end.stdout);
            out.stderr.push_str(&end.stderr);
            out.code = end.code;
            return (out, true);
        }
        self.last_code = run.code;
        if let Some(end) = self.check(cluster) {
            out.stdout.push_str(&end.stdout);
            out.stderr.push_str(&end.stderr);
            out.code = end.code;
            return (out, true);
        }
        self.refresh_prompt(cluster);
        (out, false)
    }

    /// The shell exits with `code`: kubectl returns with it (exec), or the container's process
    /// ends (attached to PID 1).
    fn exit(&self, cluster: &mut Cluster, code: i32) -> Output {
        let mut out = Output::default();
        // Interactive bash says so as it exits.
        if self.target.program() == "bash" {
            out.stdout.push_str("exit\n");
        }
        let Some(main) = &self.target.main else {
            if code != 0 {
                out.stderr.push_str(&format!("command terminated with exit code {code}\n"));
                out.code = code;
            }
            return out;
        };
        let t = &self.target;
        if live(cluster, t).is_some() {
            cluster.stream_exit(&t.stream, code);
        }
        let after = after_main(cluster, t, main);
        out.stdout.push_str(&after.stdout);
        out.stderr.push_str(&after.stderr);
        out.code = after.code;
        out
    }
}

/// What kubectl prints when the session with a container's main process ends: how to
/// resume (a container that restarts), then `run`'s own ending (`--rm`, the exit code).
fn after_main(cluster: &mut Cluster, t: &Attach, main: &MainProcess) -> Output {
    let mut out = Output::default();
    if main.restart_policy == "Always" && main.tty && !main.quiet {
        out.stdout.push_str(&format!(
            "Session ended, resume using 'kubectl attach {} -c {} -i -t' command when the pod is running\n",
            t.stream.pod, t.stream.container
        ));
    }
    if let Some(run) = &main.run {
        let s = &t.stream;
        let end = super::run::after_attach(cluster, &s.namespace, &s.pod, &main.restart_policy, run.rm, main.quiet);
        out.stdout.push_str(&end.stdout);
        out.stderr.push_str(&end.stderr);
        out.code = end.code;
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::shell::{Command, Session};

    fn session(lines: &[&str]) -> Session {
        let mut s = Session::new(3);
        for line in lines {
            s.execute(&Command::new(line));
        }
        s
    }

    #[test]
    fn a_shell_session_keeps_its_directory_and_variables_until_exit() {
        let mut s = session(&["kubectl run b --image=busybox -- sleep 3600", "sleep 10s", "kubectl exec -it b -- sh"]);
        assert_eq!(s.prompt(), Some("/ # "));
        s.execute(&Command::new("cd /etc"));
        assert_eq!(s.prompt(), Some("/etc # "));
        s.execute(&Command::new("export A=1"));
        assert_eq!(s.execute(&Command::new("echo $A; pwd")).stdout, "1\n/etc\n");
        let out = s.execute(&Command::new("exit 3"));
        assert_eq!((out.stderr.as_str(), out.code), ("command terminated with exit code 3\n", 3));
        assert_eq!(s.prompt(), None);
    }

    #[test]
    fn deleting_the_pod_ends_the_session_as_its_container_is_killed() {
        let mut s = session(&["kubectl run b --image=busybox -- sleep 3600", "sleep 10s", "kubectl exec -it b -- sh"]);
        s.cluster.request(crate::apiserver::Request::delete(crate::api::Kind::Pod, "default", "b")).unwrap();
        let out = s.poll().unwrap();
        assert_eq!((out.stderr.as_str(), out.code), ("command terminated with exit code 137\n", 137));
        assert_eq!(s.prompt(), None);
    }

    #[test]
    fn exit_in_a_run_it_shell_ends_the_container_and_rm_deletes_the_pod() {
        let mut s = session(&["kubectl run -it --rm t --image=busybox -- sh"]);
        assert_eq!(s.prompt(), Some("/ # "));
        let out = s.execute(&Command::new("exit"));
        assert_eq!(
            out.stdout,
            "Session ended, resume using 'kubectl attach t -c t -i -t' command when the pod is running\npod \"t\" deleted\n"
        );
        assert!(s.cluster.inspect().get(crate::api::Kind::Pod, "default", "t").is_none());
    }
}
