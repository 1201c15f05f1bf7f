//! Container probes: what a liveness, readiness or startup check finds when it runs against a
//! container, and how the kubelet counts the results against the probe's thresholds.
//!
//! Pure logic: the pod worker runs probes on the virtual clock and acts on what they decide.
//! What a check finds comes from the image and script model:
//! - `httpGet` and `tcpSocket` reach the container when it runs a server image's own program
//!   (`images::server_ports`); anything else is `connection refused`. An HTTP answer is the
//!   server's (`images::http_answer`): nginx serves `/`, other paths are `404`.
//! - `exec` runs a few commands inside the container: `cat`, `ls`, `test`/`[`, `true`,
//!   `false`, `echo`, `sh -c` scripts of those, `wget`/`curl` to the container itself and
//!   `redis-cli ping`. Files exist while the container's own script has them
//!   (`touch /tmp/healthy; sleep 30; rm -f /tmp/healthy`); busybox-based images word their
//!   errors as busybox does, the others as GNU coreutils. Any other program is not found.
//! - `grpc` is answered by etcd on 2379 only; nothing else speaks the health protocol.
//!
//! Timing: a probe first runs `initialDelaySeconds` after its container started (but no
//! sooner than one second, when the kubelet's next relist sees the container running), then
//! every `periodSeconds`. Liveness and readiness probes wait for the startup probe to succeed
//! and count their delay from then. Checks answer at once: `timeoutSeconds` is not modelled.

use super::script::{self, FileSpan};
use crate::api::IntOrString;
use crate::api::pod::{ContainerPort, Probe};
use crate::sim::{Duration, Time};

/// Which of a container's probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeType {
    Liveness,
    Readiness,
    Startup,
}

impl ProbeType {
    /// As the kubelet's events name it: `Liveness probe failed: ...`.
    pub fn name(self) -> &'static str {
        match self {
            ProbeType::Liveness => "Liveness",
            ProbeType::Readiness => "Readiness",
            ProbeType::Startup => "Startup",
        }
    }
}

/// What one run of a probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// Failed, with the detail the `Unhealthy` event carries.
    Failure(String),
    /// The probe could not run at all (e.g. a named port the container does not have): the
    /// kubelet reports it and does not count it.
    Error(String),
}

/// The container instance a probe runs against.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    pub pod_ip: &'a str,
    /// A hostNetwork pod shares the node's addresses, loopback included.
    pub host_network: bool,
    pub container: &'a str,
    pub ports: &'a [ContainerPort],
    /// The image's repository as the catalog names it (`nginx`, `registry.k8s.io/etcd`).
    pub repository: &'a str,
    /// Ports its process listens on.
    pub listening: &'a [u16],
    /// Files its script writes.
    pub files: &'a [FileSpan],
    /// How long it has been running.
    pub age: Duration,
    /// Its process's arguments (`agnhost liveness` turns unhealthy after 10 seconds).
    pub args: &'a [String],
}

/// How long `agnhost liveness` answers `/healthz` with 200 before it answers 500.
const AGNHOST_HEALTHY_FOR: Duration = Duration::seconds(10);

/// What the container's server answers: its image's site, except that `agnhost liveness`
/// (the docs' HTTP liveness example) fails its health check once it has run 10 seconds.
fn answer(target: &Target, port: u16, tls: bool, path: &str) -> Result<u16, String> {
    let liveness_demo = super::images::App::of(target.repository) == Some(super::images::App::Agnhost)
        && target.args.first().is_some_and(|a| a == "liveness");
    if liveness_demo && !tls && path.split('?').next() == Some("/healthz") {
        return Ok(if target.age < AGNHOST_HEALTHY_FOR { 200 } else { 500 });
    }
    super::images::http_answer(target.repository, port, tls, path)
}

/// Runs a probe's check once against `target`.
pub fn check(probe: &Probe, target: &Target) -> Outcome {
    if let Some(exec) = &probe.exec {
        return match run_exec(&exec.command, target) {
            (0, _) => Outcome::Success,
            (_, output) => Outcome::Failure(output.trim_end().to_string()),
        };
    }
    if let Some(http) = &probe.http_get {
        let port = match resolve_port(&http.port, target) {
            Ok(p) => p,
            Err(e) => return Outcome::Error(e),
        };
        let host = if http.host.is_empty() { target.pod_ip } else { http.host.as_str() };
        let tls = http.scheme.eq_ignore_ascii_case("HTTPS");
        let path = if http.path.starts_with('/') { http.path.clone() } else { format!("/{}", http.path) };
        let url = format!("{}://{host}:{port}{path}", if tls { "https" } else { "http" });
        if let Err(e) = connect(host, port, target) {
            return Outcome::Failure(format!("Get \"{url}\": {e}"));
        }
        return match answer(target, port, tls, &path) {
            Ok(code) if (200..400).contains(&code) => Outcome::Success,
            Ok(code) => Outcome::Failure(format!("HTTP probe failed with statuscode: {code}")),
            Err(e) => Outcome::Failure(format!("Get \"{url}\": {e}")),
        };
    }
    if let Some(tcp) = &probe.tcp_socket {
        let port = match resolve_port(&tcp.port, target) {
            Ok(p) => p,
            Err(e) => return Outcome::Error(e),
        };
        let host = if tcp.host.is_empty() { target.pod_ip } else { tcp.host.as_str() };
        return match connect(host, port, target) {
            Ok(()) => Outcome::Success,
            Err(e) => Outcome::Failure(e),
        };
    }
    if let Some(grpc) = &probe.grpc {
        let port = u16::try_from(grpc.port).unwrap_or(0);
        let serves_health = target.repository == "registry.k8s.io/etcd" && port == 2379;
        return if serves_health && target.listening.contains(&port) {
            Outcome::Success
        } else {
            Outcome::Failure(format!(
                "timeout: failed to connect service \"{}:{port}\" within {}s: context deadline exceeded",
                target.pod_ip,
                probe.timeout_seconds.max(1)
            ))
        };
    }
    Outcome::Error("missing probe handler".into())
}

/// A port number, or the number of the container port with that name.
fn resolve_port(port: &IntOrString, target: &Target) -> Result<u16, String> {
    match port {
        IntOrString::Int(n) => Ok(u16::try_from(*n).unwrap_or(0)),
        IntOrString::String(name) => match name.parse::<u16>() {
            Ok(n) => Ok(n),
            Err(_) => target
                .ports
                .iter()
                .find(|p| p.name.as_deref() == Some(name.as_str()))
                .and_then(|p| u16::try_from(p.container_port).ok())
                .ok_or_else(|| format!("couldn't find port: {name} in container {}", target.container)),
        },
    }
}

/// Opens a TCP connection from the node to `host:port`, as the kubelet does: Go's dial error
/// when nothing answers.
fn connect(host: &str, port: u16, target: &Target) -> Result<(), String> {
    let loopback = host == "127.0.0.1" || host == "localhost";
    let reaches_container = host == target.pod_ip || (target.host_network && loopback);
    if reaches_container && target.listening.contains(&port) {
        return Ok(());
    }
    if reaches_container || loopback {
        return Err(format!("dial tcp {host}:{port}: connect: connection refused"));
    }
    if host.parse::<std::net::Ipv4Addr>().is_ok() {
        Err(format!("dial tcp {host}:{port}: i/o timeout"))
    } else {
        Err(format!("dial tcp: lookup {host}: no such host"))
    }
}

/// Whether the image's tools are busybox's (their error messages differ from coreutils').
fn busybox(repository: &str) -> bool {
    matches!(repository, "busybox" | "registry.k8s.io/busybox" | "alpine")
}

/// Whether `program` exists in the image.
fn installed(repository: &str, program: &str) -> bool {
    // Distroless images: only their own binary.
    let distroless = repository.starts_with("registry.k8s.io/")
        && !matches!(repository, "registry.k8s.io/busybox" | "registry.k8s.io/hpa-example");
    if distroless {
        return false;
    }
    match program {
        "sh" | "cat" | "ls" | "test" | "[" | "true" | "false" | "echo" => true,
        "bash" => !busybox(repository),
        "wget" => busybox(repository),
        "curl" => repository == "nginx",
        "redis-cli" => repository == "redis",
        _ => false,
    }
}

/// Runs a command in the container as an `exec` probe does: its exit code and output.
fn run_exec(argv: &[String], target: &Target) -> (i32, String) {
    let Some(first) = argv.first() else { return (1, String::new()) };
    let program = first.rsplit('/').next().unwrap_or("");
    if !installed(target.repository, program) {
        return (
            126,
            format!(
                "OCI runtime exec failed: exec failed: unable to start container process: exec: \"{first}\": executable file not found in $PATH: unknown"
            ),
        );
    }
    match program {
        "sh" | "bash" => match argv.iter().position(|a| a == "-c") {
            Some(i) => {
                let script = argv.get(i + 1).map(String::as_str).unwrap_or("");
                script::interpret(script, &mut |words| {
                    let program = words.first().map(|w| w.rsplit('/').next().unwrap_or("")).unwrap_or("");
                    if installed(target.repository, program) {
                        run_exec(words, target)
                    } else if busybox(target.repository) {
                        (127, format!("sh: {program}: not found\n"))
                    } else {
                        (127, format!("sh: 1: {program}: not found\n"))
                    }
                })
            }
            None => (0, String::new()),
        },
        _ => command(program, &argv[1..], target),
    }
}

/// One program of the image, with its arguments.
fn command(program: &str, args: &[String], t: &Target) -> (i32, String) {
    let bb = busybox(t.repository);
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    match program {
        "true" => (0, String::new()),
        "false" => (1, String::new()),
        "echo" => (0, format!("{}\n", args.join(" "))),
        "cat" => {
            let mut out = String::new();
            let mut code = 0;
            for path in operands {
                match lookup(path, t) {
                    Some(content) => out.push_str(&content),
                    None => {
                        code = 1;
                        out.push_str(&if bb {
                            format!("cat: can't open '{path}': No such file or directory\n")
                        } else {
                            format!("cat: {path}: No such file or directory\n")
                        });
                    }
                }
            }
            (code, out)
        }
        "ls" => {
            let mut out = String::new();
            let mut code = 0;
            for path in operands {
                if lookup(path, t).is_some() {
                    out.push_str(&format!("{path}\n"));
                } else {
                    code = if bb { 1 } else { 2 };
                    out.push_str(&if bb {
                        format!("ls: {path}: No such file or directory\n")
                    } else {
                        format!("ls: cannot access '{path}': No such file or directory\n")
                    });
                }
            }
            (code, out)
        }
        "test" | "[" => {
            let args: Vec<&str> = args.iter().map(String::as_str).filter(|a| *a != "]").collect();
            let (negate, args) = match args.split_first() {
                Some((&"!", rest)) => (true, rest.to_vec()),
                _ => (false, args),
            };
            let holds = match args.as_slice() {
                [flag, path] if ["-f", "-e", "-s", "-r"].contains(flag) => lookup(path, t).is_some(),
                [flag, path] if *flag == "-d" => is_standard_dir(path),
                [word] => !word.is_empty(),
                _ => false,
            };
            (if holds != negate { 0 } else { 1 }, String::new())
        }
        "wget" | "curl" => {
            let Some(url) = operands.first() else { return (1, String::new()) };
            // `curl` fails on an error status only with `--fail`/`-f`; `wget` always does.
            let fail = program == "wget"
                || args
                    .iter()
                    .any(|a| a == "--fail" || (a.starts_with('-') && !a.starts_with("--") && a.contains('f')));
            fetch(program, url, fail, t)
        }
        "redis-cli" => {
            if t.listening.contains(&6379) {
                (0, "PONG\n".into())
            } else {
                (1, "Could not connect to Redis at 127.0.0.1:6379: Connection refused\n".into())
            }
        }
        other => (127, format!("sh: {other}: not found\n")),
    }
}

/// `wget`/`curl` of a URL from inside the container: only the container itself (localhost)
/// is modelled.
fn fetch(program: &str, url: &str, fail: bool, t: &Target) -> (i32, String) {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let (hostport, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let (host, port) = hostport.rsplit_once(':').map_or((hostport, 80), |(h, p)| (h, p.parse().unwrap_or(80)));
    let local = matches!(host, "localhost" | "127.0.0.1") || host == t.pod_ip;
    let wget = program == "wget";
    if !local || !t.listening.contains(&port) {
        return if wget {
            (1, format!("wget: can't connect to remote host ({host}): Connection refused\n"))
        } else {
            (7, format!("curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server\n"))
        };
    }
    match answer(t, port, false, &path) {
        Ok(code) if code < 400 || !fail => (0, String::new()),
        Ok(code) if wget => (1, format!("wget: server returned error: HTTP/1.1 {code} {}\n", reason(code))),
        Ok(code) => (22, format!("curl: (22) The requested URL returned error: {code}\n")),
        Err(_) if wget => (1, "wget: error getting response\n".into()),
        Err(_) => (52, "curl: (52) Empty reply from server\n".into()),
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Error",
    }
}

/// The content of a file as the container sees it now: one its script wrote, or one every
/// image has.
fn lookup(path: &str, t: &Target) -> Option<String> {
    if let Some(file) = script::file_at(t.files, path, t.age) {
        return Some(if file.content.is_empty() { String::new() } else { format!("{}\n", file.content) });
    }
    let standard = ["/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/etc/passwd", "/proc/1/status"];
    if standard.contains(&path) || is_standard_dir(path) {
        return Some(String::new());
    }
    None
}

fn is_standard_dir(path: &str) -> bool {
    matches!(path.trim_end_matches('/'), "" | "/tmp" | "/etc" | "/proc" | "/usr" | "/bin" | "/var" | "/dev" | "/root")
}

/// One probe of one container instance: when it runs next, and the run of results that
/// decides the kubelet's view (consecutive results must reach the probe's thresholds).
#[derive(Clone, Debug, PartialEq)]
pub struct Prober {
    pub kind: ProbeType,
    pub spec: Probe,
    /// When it runs next; `None` while it is not running (before its container starts,
    /// while it waits for the startup probe, after it has decided to restart the container).
    pub next_at: Option<Time>,
    last: Option<bool>,
    streak: i32,
    /// What the kubelet acts on: `None` until the thresholds have decided anything.
    pub result: Option<bool>,
    /// Whether it has run on this container instance.
    pub ran: bool,
}

impl Prober {
    pub fn new(kind: ProbeType, spec: &Probe) -> Prober {
        let mut spec = spec.clone();
        spec.set_defaults();
        Prober { kind, spec, next_at: None, last: None, streak: 0, result: None, ran: false }
    }

    /// Starts probing a container that started (or passed its startup probe) at `at`.
    pub fn start(&mut self, at: Time) {
        let delay = Duration::seconds(self.spec.initial_delay_seconds.max(0) as u64).max(Duration::seconds(1));
        *self = Prober { next_at: Some(at + delay), ..Prober::new(self.kind, &self.spec) };
    }

    /// Stops probing (the container stopped, or is being restarted by this probe).
    pub fn stop(&mut self) {
        self.next_at = None;
    }

    pub fn period(&self) -> Duration {
        Duration::seconds(self.spec.period_seconds.max(1) as u64)
    }

    pub fn due(&self, now: Time) -> bool {
        self.next_at.is_some_and(|t| t <= now)
    }

    /// Counts one result at `now` and schedules the next run. Returns the result when the
    /// thresholds make it the kubelet's view (`failureThreshold` failures or
    /// `successThreshold` successes in a row), every time they do.
    pub fn record(&mut self, success: bool, now: Time) -> Option<bool> {
        self.ran = true;
        if let Some(mut next) = self.next_at {
            while next <= now {
                next = next + self.period();
            }
            self.next_at = Some(next);
        }
        if self.last == Some(success) {
            self.streak += 1;
        } else {
            self.last = Some(success);
            self.streak = 1;
        }
        let needed = if success { self.spec.success_threshold } else { self.spec.failure_threshold };
        if self.streak < needed.max(1) {
            return None;
        }
        self.result = Some(success);
        Some(success)
    }

    /// Schedules the next run after a run whose result does not count (an error).
    pub fn skip(&mut self, now: Time) {
        if let Some(mut next) = self.next_at {
            while next <= now {
                next = next + self.period();
            }
            self.next_at = Some(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::pod::{ExecAction, HttpGetAction, TcpSocketAction};
    use crate::kubelet::images::Behaviour;

    fn busybox_script(script: &str) -> Vec<FileSpan> {
        script::files(Behaviour::Shell, "busybox", &[], &["/bin/sh".into(), "-c".into(), script.into()])
    }

    fn target<'a>(repository: &'a str, listening: &'a [u16], files: &'a [FileSpan], age: u64) -> Target<'a> {
        Target {
            pod_ip: "10.244.1.2",
            host_network: false,
            container: "app",
            ports: &[],
            repository,
            listening,
            files,
            age: Duration::seconds(age),
            args: &[],
        }
    }

    fn exec(command: &[&str]) -> Probe {
        Probe {
            exec: Some(ExecAction { command: command.iter().map(|s| s.to_string()).collect() }),
            ..Default::default()
        }
    }

    fn http(port: i32, path: &str) -> Probe {
        Probe {
            http_get: Some(HttpGetAction {
                path: path.into(),
                port: IntOrString::Int(port),
                host: String::new(),
                scheme: "HTTP".into(),
                http_headers: Vec::new(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn cat_finds_the_file_only_while_the_script_keeps_it() {
        let files = busybox_script("touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600");
        let probe = exec(&["cat", "/tmp/healthy"]);
        assert_eq!(check(&probe, &target("registry.k8s.io/busybox", &[], &files, 5)), Outcome::Success);
        assert_eq!(check(&probe, &target("registry.k8s.io/busybox", &[], &files, 30)), Outcome::Success);
        assert_eq!(
            check(&probe, &target("registry.k8s.io/busybox", &[], &files, 35)),
            Outcome::Failure("cat: can't open '/tmp/healthy': No such file or directory".into())
        );
    }

    #[test]
    fn coreutils_images_word_a_missing_file_their_own_way() {
        let probe = exec(&["cat", "/tmp/healthy"]);
        assert_eq!(
            check(&probe, &target("nginx", &[80], &[], 5)),
            Outcome::Failure("cat: /tmp/healthy: No such file or directory".into())
        );
    }

    #[test]
    fn sh_scripts_in_exec_probes_follow_exit_codes() {
        let files = busybox_script("echo ok > /tmp/ready; sleep 3600");
        let t = target("busybox", &[], &files, 5);
        assert_eq!(check(&exec(&["sh", "-c", "test -f /tmp/ready && exit 0 || exit 1"]), &t), Outcome::Success);
        assert_eq!(check(&exec(&["sh", "-c", "test -f /tmp/nope"]), &t), Outcome::Failure(String::new()));
        assert_eq!(check(&exec(&["cat", "/tmp/ready"]), &t), Outcome::Success);
        assert_eq!(check(&exec(&["sh", "-c", "pg_isready"]), &t), Outcome::Failure("sh: pg_isready: not found".into()));
    }

    #[test]
    fn programs_an_image_lacks_cannot_be_exec_ed() {
        assert_eq!(
            check(&exec(&["curl", "-f", "http://localhost/"]), &target("busybox", &[], &[], 5)),
            Outcome::Failure("OCI runtime exec failed: exec failed: unable to start container process: exec: \"curl\": executable file not found in $PATH: unknown".into())
        );
        assert_eq!(
            check(&exec(&["curl", "-f", "http://localhost/"]), &target("nginx", &[80], &[], 5)),
            Outcome::Success
        );
    }

    #[test]
    fn nginx_answers_its_site_and_404_elsewhere() {
        let t = target("nginx", &[80], &[], 5);
        assert_eq!(check(&http(80, "/"), &t), Outcome::Success);
        assert_eq!(check(&http(80, "/healthz"), &t), Outcome::Failure("HTTP probe failed with statuscode: 404".into()));
    }

    #[test]
    fn a_port_nobody_listens_on_refuses_the_connection() {
        let t = target("nginx", &[80], &[], 5);
        assert_eq!(
            check(&http(8080, "/"), &t),
            Outcome::Failure(
                "Get \"http://10.244.1.2:8080/\": dial tcp 10.244.1.2:8080: connect: connection refused".into()
            )
        );
        let tcp = Probe {
            tcp_socket: Some(TcpSocketAction { port: IntOrString::Int(8080), host: String::new() }),
            ..Default::default()
        };
        assert_eq!(check(&tcp, &t), Outcome::Failure("dial tcp 10.244.1.2:8080: connect: connection refused".into()));
        let tcp = Probe {
            tcp_socket: Some(TcpSocketAction { port: IntOrString::Int(80), host: String::new() }),
            ..Default::default()
        };
        assert_eq!(check(&tcp, &t), Outcome::Success);
    }

    #[test]
    fn named_ports_resolve_through_the_container_s_ports() {
        let ports = [ContainerPort { name: Some("http".into()), container_port: 80, ..Default::default() }];
        let t = Target { ports: &ports, ..target("nginx", &[80], &[], 5) };
        let mut probe = http(0, "/");
        probe.http_get.as_mut().unwrap().port = IntOrString::String("http".into());
        assert_eq!(check(&probe, &t), Outcome::Success);
        probe.http_get.as_mut().unwrap().port = IntOrString::String("web".into());
        assert!(matches!(check(&probe, &t), Outcome::Error(_)));
    }

    #[test]
    fn a_plain_server_fails_an_https_probe() {
        let mut probe = http(80, "/");
        probe.http_get.as_mut().unwrap().scheme = "HTTPS".into();
        assert_eq!(
            check(&probe, &target("nginx", &[80], &[], 5)),
            Outcome::Failure("Get \"https://10.244.1.2:80/\": http: server gave HTTP response to HTTPS client".into())
        );
    }

    #[test]
    fn failures_count_only_once_the_threshold_is_reached_in_a_row() {
        let mut p = Prober::new(ProbeType::Liveness, &exec(&["true"]));
        let t0 = Time::ZERO;
        p.start(t0);
        assert_eq!(p.next_at, Some(t0 + Duration::seconds(1)));
        assert_eq!(p.record(false, t0 + Duration::seconds(1)), None);
        assert_eq!(p.record(false, t0 + Duration::seconds(11)), None);
        assert_eq!(p.record(true, t0 + Duration::seconds(21)), Some(true));
        assert_eq!(p.record(false, t0 + Duration::seconds(31)), None);
        assert_eq!(p.record(false, t0 + Duration::seconds(41)), None);
        assert_eq!(p.record(false, t0 + Duration::seconds(51)), Some(false));
        assert_eq!(p.next_at, Some(t0 + Duration::seconds(61)));
    }

    #[test]
    fn the_first_run_waits_the_initial_delay_then_every_period() {
        let mut probe = exec(&["true"]);
        probe.initial_delay_seconds = 5;
        probe.period_seconds = 5;
        let mut p = Prober::new(ProbeType::Readiness, &probe);
        p.start(Time::ZERO + Duration::seconds(2));
        assert_eq!(p.next_at, Some(Time::ZERO + Duration::seconds(7)));
        assert!(!p.due(Time::ZERO + Duration::seconds(6)));
        assert_eq!(p.record(true, Time::ZERO + Duration::seconds(7)), Some(true));
        assert_eq!(p.next_at, Some(Time::ZERO + Duration::seconds(12)));
    }

    #[test]
    fn several_successes_may_be_needed_to_become_ready() {
        let mut probe = exec(&["true"]);
        probe.success_threshold = 2;
        let mut p = Prober::new(ProbeType::Readiness, &probe);
        p.start(Time::ZERO);
        assert_eq!(p.record(true, Time::ZERO + Duration::seconds(1)), None);
        assert_eq!(p.result, None);
        assert_eq!(p.record(true, Time::ZERO + Duration::seconds(11)), Some(true));
    }
}
