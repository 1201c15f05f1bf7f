//! What a container's process does: a small reading of its command line and shell script,
//! enough to know how long it runs, what it prints and how it exits.

use super::banners;
use super::entrypoint;
use super::images::{App, Behaviour, ImageRef};
use crate::sim::Duration;
use crate::util::printing;

/// Starts a log line that stands for a command's output (`nslookup web`, `wget -qO- URL`,
/// `cat FILE`): what it prints depends on the cluster, so the cluster fills it in as the
/// container starts, from the same userland `kubectl exec` uses (see `userland::process`).
pub const PLACEHOLDER: char = '\u{0}';
/// After [`PLACEHOLDER`]: the command is the process's last, so its exit code is the process's.
pub const DECIDES_EXIT: char = '!';

/// The command a placeholder log line stands for, and whether its exit code ends the process.
pub fn placeholder(line: &str) -> Option<(&str, bool)> {
    let rest = line.strip_prefix(PLACEHOLDER)?;
    Some(match rest.strip_prefix(DECIDES_EXIT) {
        Some(cmd) => (cmd, true),
        None => (rest, false),
    })
}

/// The simulated life of one container process.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// How long it runs before exiting; `None` runs until stopped.
    pub lifetime: Option<Duration>,
    pub exit_code: i32,
    /// Lines written to stdout/stderr, each with its offset from the start.
    pub logs: Vec<(Duration, String)>,
    /// Whether it stops promptly on SIGTERM (a shell as PID 1 ignores it).
    pub honours_sigterm: bool,
    /// A loop that ends when something outside the container comes true.
    pub waits_for: Option<Wait>,
    /// Memory the process holds once running, in bytes (0: too little to matter); above the
    /// container's limit the kernel's OOM killer ends it.
    pub memory: u64,
}

/// `until nslookup NAME; do …; sleep N; done`: the loop checks every `period` whether `NAME`
/// resolves in the cluster's DNS, and the process exits (0) once it does. The kubelet, which
/// plays the container's part, makes the check.
#[derive(Clone, Debug, PartialEq)]
pub struct Wait {
    pub resolves: String,
    pub period: Duration,
}

impl Run {
    /// Output held in the process's buffer until it exits: written then, or never if it runs
    /// until stopped (a stopped process's buffer is lost).
    fn flush_at_exit(&mut self) {
        match self.lifetime {
            Some(end) => self.logs.iter_mut().for_each(|(at, _)| *at = end),
            None => self.logs.clear(),
        }
    }

    pub(crate) fn forever(logs: Vec<(Duration, String)>) -> Run {
        Run { lifetime: None, exit_code: 0, logs, honours_sigterm: true, waits_for: None, memory: 0 }
    }
}

/// Works out what a container does from its image's behaviour, its `command`/`args` (their
/// `$(VAR)` references already expanded) and its environment variables.
pub fn plan(
    behaviour: Behaviour,
    image: &ImageRef,
    command: &[String],
    args: &[String],
    env: &[(String, String)],
) -> Run {
    plan_with(behaviour, image, command, args, &|| env.to_vec())
}

/// `plan`, with the environment worked out by `env` only if the program reads it (a database
/// server's setup, an interpreter's buffering): a kubelet starting an nginx never needs it.
pub fn plan_with(
    behaviour: Behaviour,
    image: &ImageRef,
    command: &[String],
    args: &[String],
    env: &dyn Fn() -> Vec<(String, String)>,
) -> Run {
    let image_repo = image.repository.as_str();
    let argv = entrypoint::argv(image_repo, command, args);
    match behaviour {
        Behaviour::Pause => Run::forever(Vec::new()),
        Behaviour::Server { .. } if entrypoint::serves(image_repo, &argv) => server_run(image, &argv, env),
        Behaviour::Shell | Behaviour::Interpreter if argv.is_empty() => Run {
            lifetime: Some(Duration::millis(50)),
            exit_code: 0,
            logs: Vec::new(),
            honours_sigterm: true,
            waits_for: None,
            memory: 0,
        },
        _ => {
            // A python program's `if`s may read the environment (an indexed Job's index).
            let program = argv.first().map_or("", |p| p.rsplit('/').next().unwrap_or(p));
            let mut run = if program.starts_with("python") && argv.iter().any(|a| a.contains("os.")) {
                super::interpreters::python_with(&argv, &env())
            } else {
                run_argv(&argv)
            };
            if super::interpreters::buffers_output(&argv, &env()) {
                run.flush_at_exit();
            }
            run
        }
    }
}

/// Programs every general-purpose image ships beyond the userland's basic ones (coreutils or
/// BusyBox applets).
const COMMON_PROGRAMS: &[&str] = &[
    "tail", "head", "touch", "mkdir", "rm", "mv", "cp", "ln", "chmod", "kill", "test", "[", "expr", "seq", "yes", "wc",
    "grep", "sed", "awk", "sort", "cut", "tr", "tee", "dd", "find", "xargs", "basename", "dirname", "stat", "rev",
];

/// Why a container's process cannot start at all, as containerd reports it: its program is not
/// in the image. Only judged for the general-purpose images (shells and interpreters), whose
/// contents the sandbox knows; a server image's programs are its own.
pub fn start_error(behaviour: Behaviour, image: &ImageRef, argv: &[String]) -> Option<String> {
    if !matches!(behaviour, Behaviour::Shell | Behaviour::Interpreter) {
        return None;
    }
    let userland = crate::kubelet::image_family::Userland::of(image);
    if userland == crate::kubelet::image_family::Userland::Distroless {
        return None;
    }
    let path = argv.first()?;
    let program = path.rsplit('/').next().unwrap_or(path);
    let interpreter = match image.repository.as_str() {
        "python" => program.starts_with("python") || program.starts_with("pip"),
        "perl" => program == "perl" || program == "cpan",
        _ => false,
    };
    let known = userland.installed(program)
        || COMMON_PROGRAMS.contains(&program)
        || interpreter
        // Tools some of these images lack, given the benefit of the doubt.
        || matches!(program, "ps" | "ping" | "stress")
        || program.is_empty();
    if known {
        return None;
    }
    let why = if path.contains('/') {
        format!("stat {path}: no such file or directory")
    } else {
        "executable file not found in $PATH".to_string()
    };
    Some(format!(
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: \"{path}\": {why}: unknown"
    ))
}

/// A server image running its own program: it starts (its start lines in the log) and runs
/// until stopped, unless its setup refuses to go on (a database without its password).
fn server_run(image: &ImageRef, argv: &[String], env: &dyn Fn() -> Vec<(String, String)>) -> Run {
    let image_repo = image.repository.as_str();
    // Worked out only by the servers that look (a database checking for its password).
    let vars = std::cell::OnceCell::new();
    let env = || vars.get_or_init(env).as_slice();
    let set = |name: &str| env().iter().any(|(k, v)| k == name && !v.is_empty());
    let refusal = match image_repo {
        "mysql"
            if !(set("MYSQL_ROOT_PASSWORD")
                || set("MYSQL_ALLOW_EMPTY_PASSWORD")
                || set("MYSQL_RANDOM_ROOT_PASSWORD")) =>
        {
            Some(banners::mysql_refusal(&image.tag))
        }
        "postgres"
            if !(set("POSTGRES_PASSWORD")
                || env().iter().any(|(k, v)| k == "POSTGRES_HOST_AUTH_METHOD" && v == "trust")) =>
        {
            Some(banners::postgres_refusal())
        }
        // Its --target must be KIND/NAME (`deployment/coredns`); the docs leave <SCALE_TARGET>.
        "registry.k8s.io/cpa/cluster-proportional-autoscaler" => argv
            .iter()
            .find_map(|a| a.strip_prefix("--target="))
            .filter(|t| t.split('/').count() != 2 || t.contains(['<', '>']))
            .map(|t| vec![format!("target format error: {t}")]),
        // A control-plane component refuses a flag it does not have, as its command line does.
        r if component_flags(r).is_some() => {
            let known = component_flags(r).unwrap_or_default();
            argv.iter()
                .skip(1)
                .filter_map(|a| a.strip_prefix("--"))
                .map(|a| a.split('=').next().unwrap_or(a))
                .find(|f| !known.iter().any(|k| k == f))
                .map(|f| {
                    let program = r.rsplit('/').next().unwrap_or(r);
                    vec![format!("Error: unknown flag: --{f}"), "Usage:".into(), format!("  {program} [flags]")]
                })
        }
        _ => None,
    };
    if let Some(lines) = refusal {
        let at = Duration::millis(300);
        return Run {
            lifetime: Some(at),
            exit_code: 1,
            logs: lines.into_iter().map(|l| (at, l)).collect(),
            honours_sigterm: true,
            waits_for: None,
            memory: 0,
        };
    }
    // Node as PID 1 has no SIGTERM handler, and PID 1 ignores signals it does not
    // handle: the Node apps stop only when the grace period ends in SIGKILL.
    let node_app = matches!(App::of(image_repo), Some(App::Bootcamp | App::NodeHello));
    let logs = banners::start_lines(image_repo, &image.tag, argv)
        .into_iter()
        .map(|(ms, l)| (Duration::millis(ms), l))
        .collect();
    Run { honours_sigterm: !node_app, ..Run::forever(logs) }
}

/// The shell a container runs as its main process with nothing to do but read its input
/// (`sh`, or no command in an image whose default is a shell): what `kubectl run -it` and
/// `kubectl attach -it` talk to. Debian and Ubuntu images start bash, the others `sh`.
pub fn interactive_shell(
    behaviour: Behaviour,
    image_repo: &str,
    command: &[String],
    args: &[String],
) -> Option<String> {
    let argv = entrypoint::argv(image_repo, command, args);
    match argv.as_slice() {
        [] if behaviour == Behaviour::Shell => {
            // jessie-dnsutils keeps Debian's CMD (bash): the DNS page's pod runs `sleep infinity`.
            let bash = matches!(
                image_repo,
                "ubuntu"
                    | "bash"
                    | "debian"
                    | "centos"
                    | "fedora"
                    | "rockylinux"
                    | "registry.k8s.io/e2e-test-images/jessie-dnsutils"
            );
            Some(if bash { "bash" } else { "sh" }.to_string())
        }
        [shell] if matches!(shell.rsplit('/').next(), Some("sh" | "bash" | "ash")) => Some(shell.clone()),
        _ => None,
    }
}

fn run_argv(argv: &[String]) -> Run {
    let program = argv[0].rsplit('/').next().unwrap_or("");
    match program {
        "sh" | "bash" | "ash" => match argv.iter().position(|a| a == "-c") {
            Some(i) => run_script(argv.get(i + 1).map(String::as_str).unwrap_or("")),
            None => Run {
                lifetime: Some(Duration::millis(50)),
                exit_code: 0,
                logs: Vec::new(),
                honours_sigterm: false,
                waits_for: None,
                memory: 0,
            },
        },
        "perl" if argv.iter().any(|a| a.contains("bpi(")) => {
            let digits: usize =
                argv.iter().find_map(|a| a.split("bpi(").nth(1)?.split(')').next()?.parse().ok()).unwrap_or(100);
            // bpi(N) prints N significant digits.
            let pi = pi_digits(digits.clamp(2, 2000) - 1);
            let secs = 1 + digits as u64 / 300;
            Run {
                lifetime: Some(Duration::seconds(secs)),
                exit_code: 0,
                logs: vec![(Duration::seconds(secs), pi)],
                honours_sigterm: true,
                waits_for: None,
                memory: 0,
            }
        }
        "perl" => super::interpreters::perl(argv),
        p if p.starts_with("python") => super::interpreters::python(argv),
        // No shell: echo prints its arguments as they are (`$(VAR)` was expanded already).
        "echo" => Run {
            lifetime: Some(Duration::millis(10)),
            exit_code: 0,
            logs: printing::lines(&printing::echo(&argv[1..])).into_iter().map(|l| (Duration::ZERO, l)).collect(),
            honours_sigterm: true,
            waits_for: None,
            memory: 0,
        },
        // The CPU example's stress: `-cpus N` burns N CPUs until stopped.
        "stress" if argv[0] == "/stress" => Run::forever(banners::vish_stress(argv)),
        // The docs' memory examples: `stress --vm N --vm-bytes SIZE --vm-hang 1` holds N × SIZE.
        "stress" => {
            let flag = |name: &str| argv.iter().position(|a| a == name).and_then(|i| argv.get(i + 1));
            let workers: u64 = flag("--vm").and_then(|n| n.parse().ok()).unwrap_or(0);
            let each = flag("--vm-bytes").and_then(|b| stress_bytes(b)).unwrap_or(256 << 20);
            let line = format!("stress: info: [1] dispatching hogs: 0 cpu, 0 io, {workers} vm, 0 hdd");
            Run { memory: workers * each, ..Run::forever(vec![(Duration::ZERO, line)]) }
        }
        // `nginx -t` / `-T`: the configuration is tested (`-T` would print it too, left out here)
        // and nginx exits; `-v` / `-V` print the version and exit.
        "nginx" if argv[1..].iter().any(|a| matches!(a.as_str(), "-t" | "-T")) => Run {
            lifetime: Some(Duration::millis(40)),
            exit_code: 0,
            logs: [
                "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok",
                "nginx: configuration file /etc/nginx/nginx.conf test is successful",
            ]
            .map(|l| (Duration::millis(30), l.to_string()))
            .into(),
            honours_sigterm: true,
            waits_for: None,
            memory: 0,
        },
        "nginx" if argv[1..].iter().any(|a| matches!(a.as_str(), "-v" | "-V" | "-h" | "-?")) => Run {
            lifetime: Some(Duration::millis(20)),
            exit_code: 0,
            logs: vec![(Duration::millis(10), "nginx version: nginx".to_string())],
            honours_sigterm: true,
            waits_for: None,
            memory: 0,
        },
        "nginx" | "httpd" | "redis-server" | "httpd-foreground" | "fluentd" => Run::forever(Vec::new()),
        _ => run_script(&argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")),
    }
}

/// `stress`'s sizes: a number with an optional B, K, M or G (powers of 1024).
fn stress_bytes(text: &str) -> Option<u64> {
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: u64 = digits.parse().ok()?;
    let scale = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    Some(n * scale)
}

fn shell_quote(arg: &str) -> String {
    if arg.contains([' ', ';', '&', '|']) { format!("'{}'", arg.replace('\'', "")) } else { arg.to_string() }
}

/// A run's log lines with what the process reads at start filled in: `$HOSTNAME`, `$STARTED`
/// (an ISO time, as Node prints a date) and `$LOGTIME` (as Go's log package stamps a line).
///
/// The servers' own stamps: `$DATETIME` (`date --rfc-3339=seconds`, mysql's entrypoint),
/// `$MICROS` (mysqld), `$PGTIME` (postgres), `$MONGOTIME` (mongod's JSON), `$APACHETIME`
/// (Apache's error log) and `$GLOG` (glog's line header).
pub fn fill_in(run: &mut Run, hostname: &str, started: crate::sim::Time) {
    for (offset, line) in &mut run.logs {
        if line.contains('$') {
            let at = started + *offset;
            let iso = at.rfc3339();
            let (date, hms) = iso.trim_end_matches('Z').split_once('T').unwrap_or(("", ""));
            let log_time = format!("{} {hms}", date.replace('-', "/"));
            let millis = at.rfc3339_millis();
            let frac = millis.trim_end_matches('Z').rsplit('.').next().unwrap_or("000").to_string();
            let day = at.rfc1123z();
            let d: Vec<&str> = day.split([' ', ',']).filter(|w| !w.is_empty()).collect();
            let apache = match d.as_slice() {
                [weekday, dd, month, year, _, _] => format!("{weekday} {month} {dd} {hms}.{frac}000 {year}"),
                _ => day.clone(),
            };
            let glog = format!(
                "I{}{} {hms}.{frac}000       1",
                &date.get(5..7).unwrap_or("01"),
                date.get(8..10).unwrap_or("01")
            );
            *line = line
                .replace("$HOSTNAME", hostname)
                .replace("$STARTED", &started.rfc3339_millis())
                .replace("$LOGTIME", &log_time)
                .replace("$DATETIME", &format!("{date} {hms}+00:00"))
                .replace("$MICROS", &at.rfc3339_micros())
                .replace("$PGTIME", &format!("{date} {hms}.{frac} UTC"))
                .replace("$MONGOTIME", &format!("{date}T{hms}.{frac}+00:00"))
                .replace("$APACHETIME", &apache)
                .replace("$GLOG", &glog);
        }
    }
}

/// Reads a shell script statement by statement: `sleep`, `echo`, `exit`, `true`/`false`,
/// `while true; do ...; done` loops, `&&` / `||` / `;` sequencing.
pub fn run_script(script: &str) -> Run {
    walk(script).0
}

/// The ports a container's process listens on: those of a server image running its own
/// program (its default command, or the image's server binary named explicitly), or of
/// `python -m http.server`.
pub fn listening(behaviour: Behaviour, image_repo: &str, command: &[String], args: &[String]) -> Vec<u16> {
    if behaviour == Behaviour::Interpreter {
        return super::interpreters::http_server_port(&entrypoint::argv(image_repo, command, args))
            .into_iter()
            .collect();
    }
    let Behaviour::Server { port } = behaviour else { return Vec::new() };
    let argv = entrypoint::argv(image_repo, command, args);
    if !entrypoint::serves(image_repo, &argv) {
        return Vec::new();
    }
    if image_repo == super::admission_webhook::REPOSITORY {
        return vec![super::admission_webhook::Rules::from_args(argv.get(1..).unwrap_or_default()).port];
    }
    // http-echo listens where `-listen=:PORT` says.
    let listen = argv.iter().find_map(|a| a.strip_prefix("-listen=")?.rsplit(':').next()?.parse().ok());
    match listen {
        Some(p) if image_repo == "hashicorp/http-echo" => vec![p],
        _ => super::images::server_ports(image_repo, port),
    }
}

/// Runs a shell script's statements with `;`, `&&`, `||` and `exit N`, each simple command
/// through `run` (which returns its exit code and output). Returns the last exit code and all
/// the output, as `sh -c` in an `exec` probe would.
pub fn interpret(script: &str, run: &mut dyn FnMut(&[String]) -> (i32, String)) -> (i32, String) {
    let mut code = 0;
    let mut output = String::new();
    for (part, op) in commands(script) {
        if !op.runs_after(code) {
            continue;
        }
        let words = shell_words(&part);
        if words.first().is_some_and(|w| w == "exit") {
            let exit = words.get(1).and_then(|c| c.parse().ok()).unwrap_or(code);
            return (exit, output);
        }
        let (c, out) = run(&words);
        code = c;
        output.push_str(&out);
    }
    (code, output)
}

/// A script's simple commands in order, each with how it joins the one before it: statements
/// split at `;` and newlines, then at `&&` and `||`, never inside quotes. Every script runner
/// (a container's main process, an exec probe, `kubectl exec … sh -c`) reads scripts this way.
pub fn commands(script: &str) -> Vec<(String, Logic)> {
    split_statements(script)
        .iter()
        .flat_map(|stmt| split_logical(stmt).into_iter().map(|(part, op)| (part.to_string(), op)))
        .filter(|(part, _)| !part.is_empty())
        .collect()
}

/// Splits a command line into words as the shell does (quotes group, no expansion).
pub fn words(cmd: &str) -> Vec<String> {
    shell_words(cmd)
}

/// A file a container's script writes, and when (from the container's start) it exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpan {
    pub path: String,
    pub content: String,
    pub created: Duration,
    /// When the script removes it again, if it does.
    pub removed: Option<Duration>,
}

/// The file at `path` as it is `at` after the container started, if the script made it.
pub fn file_at<'a>(files: &'a [FileSpan], path: &str, at: Duration) -> Option<&'a FileSpan> {
    files.iter().rev().find(|f| f.path == path && f.created <= at && f.removed.is_none_or(|r| at < r))
}

/// The files a container's script creates (`touch`, `echo ... > file`) and removes (`rm`):
/// what an `exec` probe such as `cat /tmp/healthy` finds. Servers and interpreters make none.
/// A loop's body is read for its first pass only.
pub fn files(behaviour: Behaviour, image_repo: &str, command: &[String], args: &[String]) -> Vec<FileSpan> {
    let argv = entrypoint::argv(image_repo, command, args);
    let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or("")).unwrap_or("");
    match behaviour {
        Behaviour::Server { .. } if entrypoint::serves(image_repo, &argv) => Vec::new(),
        Behaviour::Pause if command.is_empty() => Vec::new(),
        _ => match program {
            "" => Vec::new(),
            "sh" | "bash" | "ash" => match argv.iter().position(|a| a == "-c") {
                Some(i) => walk(argv.get(i + 1).map(String::as_str).unwrap_or("")).1,
                None => Vec::new(),
            },
            _ => walk(&argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")).1,
        },
    }
}

/// The script's life, and the files it writes along the way.
fn walk(script: &str) -> (Run, Vec<FileSpan>) {
    let mut elapsed = Duration::ZERO;
    let mut logs = Vec::new();
    let mut files = Vec::new();
    let statements = split_statements(script);
    let mut last_code = 0;
    // The log line of the last command when that command's output is a placeholder.
    let mut last_placeholder: Option<usize> = None;
    let mut i = 0;
    while i < statements.len() {
        let stmt = statements[i].trim();
        i += 1;
        if stmt.is_empty() {
            continue;
        }
        if stmt.starts_with("while ") || stmt.starts_with("until ") || stmt.starts_with("for ") {
            // A loop: run its body a few times for the logs, then forever.
            let body: Vec<&str> = statements[i..]
                .iter()
                .map(|s| s.trim())
                .take_while(|s| *s != "done")
                .map(|s| s.strip_prefix("do ").unwrap_or(s))
                .collect();
            let mut period = Duration::ZERO;
            let mut lines = Vec::new();
            for s in &body {
                let (cmd, target) = redirection(s);
                let (d, out, _) = simple_command(&cmd);
                touch_files(&mut files, &cmd, target, &out, elapsed + period);
                period = period + d.unwrap_or(Duration::ZERO);
                if target.is_none() {
                    lines.extend(out);
                }
            }
            let period = if period == Duration::ZERO { Duration::seconds(1) } else { period };
            // `until nslookup NAME`: each round nslookup says it cannot find NAME, until it can.
            let waits_for = stmt.strip_prefix("until ").and_then(|cond| match shell_words(cond).as_slice() {
                [program, name] if program == "nslookup" => Some(Wait { resolves: name.clone(), period }),
                _ => None,
            });
            if let Some(w) = &waits_for {
                let dns = crate::api::well_known::KUBE_DNS_IP;
                let failed = [
                    format!("Server:\t\t{dns}"),
                    format!("Address:\t{dns}:53"),
                    String::new(),
                    format!("** server can't find {}: NXDOMAIN", w.resolves),
                    String::new(),
                ];
                lines.splice(0..0, failed);
            }
            for n in 0..20u64 {
                for line in &lines {
                    logs.push((elapsed + Duration(period.0 * n), line.clone()));
                }
            }
            return (Run { lifetime: None, exit_code: 0, logs, honours_sigterm: false, waits_for, memory: 0 }, files);
        }
        for (part, op) in split_logical(stmt) {
            if !op.runs_after(last_code) {
                continue;
            }
            if let Some(code) = part.strip_prefix("exit") {
                let code = code.trim().parse().unwrap_or(last_code);
                return (
                    Run {
                        lifetime: Some(elapsed),
                        exit_code: code,
                        logs,
                        honours_sigterm: false,
                        waits_for: None,
                        memory: 0,
                    },
                    files,
                );
            }
            let (cmd, target) = redirection(part);
            let (d, out, code) = simple_command(&cmd);
            touch_files(&mut files, &cmd, target, &out, elapsed);
            last_placeholder = None;
            if target.is_none() {
                for line in out {
                    if line.starts_with(PLACEHOLDER) {
                        last_placeholder = Some(logs.len());
                    }
                    logs.push((elapsed, line));
                }
            }
            match d {
                Some(d) => elapsed = elapsed + d,
                None => {
                    return (
                        Run { lifetime: None, exit_code: 0, logs, honours_sigterm: false, waits_for: None, memory: 0 },
                        files,
                    );
                }
            }
            last_code = code;
        }
    }
    if let Some(line) = last_placeholder.and_then(|i| logs.get_mut(i)) {
        line.1.insert(PLACEHOLDER.len_utf8(), DECIDES_EXIT);
    }
    let lifetime = Some(elapsed.max(Duration::millis(10)));
    (Run { lifetime, exit_code: last_code, logs, honours_sigterm: false, waits_for: None, memory: 0 }, files)
}

/// Splits `cmd > file` (or `>>`) into the command and the file its output goes to; other
/// redirections (`2>&1`, `2>/dev/null`) are dropped.
fn redirection(part: &str) -> (String, Option<&str>) {
    let mut words = part.split_whitespace().peekable();
    let mut kept = Vec::new();
    let mut target = None;
    while let Some(w) = words.next() {
        if w == ">" || w == ">>" || w == "1>" {
            target = words.next();
        } else if let Some(t) = w.strip_prefix(">>").or_else(|| w.strip_prefix('>')).filter(|t| !t.is_empty()) {
            target = Some(t);
        } else if w.starts_with("2>") || w == "&>" {
            if w == "2>" || w == "&>" {
                words.next();
            }
        } else {
            kept.push(w);
        }
    }
    (kept.join(" "), target.filter(|t| *t != "/dev/null"))
}

/// Applies what one command does to files at `at`: `touch`, `rm`, and output sent to a file.
fn touch_files(files: &mut Vec<FileSpan>, cmd: &str, target: Option<&str>, out: &[String], at: Duration) {
    let words = shell_words(cmd);
    let create = |files: &mut Vec<FileSpan>, path: &str, content: String| {
        if file_at(files, path, at).is_none() {
            files.push(FileSpan { path: path.to_string(), content, created: at, removed: None });
        }
    };
    match words.first().map(String::as_str) {
        Some("touch") => {
            words[1..].iter().filter(|w| !w.starts_with('-')).for_each(|p| create(files, p, String::new()))
        }
        Some("rm") => {
            for path in words[1..].iter().filter(|w| !w.starts_with('-')) {
                if let Some(f) = files.iter_mut().rev().find(|f| f.path == *path && f.removed.is_none()) {
                    f.removed = Some(at);
                }
            }
        }
        _ => {}
    }
    if let Some(path) = target {
        let written: Vec<&str> = out.iter().map(String::as_str).filter(|l| !l.starts_with(PLACEHOLDER)).collect();
        create(files, path, written.join("\n"));
    }
}

/// How a simple command joins the one before it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Logic {
    /// `;`, a newline, or the first command: runs whatever came before.
    Seq,
    /// `&&`: runs only after a success.
    And,
    /// `||`: runs only after a failure.
    Or,
}

impl Logic {
    /// Whether the command runs, given the exit code of the one before.
    pub fn runs_after(self, code: i32) -> bool {
        match self {
            Logic::Seq => true,
            Logic::And => code == 0,
            Logic::Or => code != 0,
        }
    }
}

fn split_statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in script.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, ';' | '\n') => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// Splits a statement at `&&` and `||` outside quotes.
fn split_logical(stmt: &str) -> Vec<(&str, Logic)> {
    let mut out = Vec::new();
    let mut op = Logic::Seq;
    let mut start = 0;
    let mut quote: Option<u8> = None;
    let bytes = stmt.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if (c == b'&' || c == b'|') && bytes.get(i + 1) == Some(&c) => {
                out.push((stmt[start..i].trim(), op));
                op = if c == b'&' { Logic::And } else { Logic::Or };
                i += 2;
                start = i;
                continue;
            }
            None => {}
        }
        i += 1;
    }
    out.push((stmt[start..].trim(), op));
    out
}

/// One simple command: how long it takes (`None`: forever), what it prints, its exit code.
fn simple_command(cmd: &str) -> (Option<Duration>, Vec<String>, i32) {
    let words: Vec<String> = shell_words(cmd);
    // `/bin/sleep` is `sleep`.
    let Some(program) = words.first().map(|w| w.rsplit('/').next().unwrap_or(w)) else {
        return (Some(Duration::ZERO), vec![], 0);
    };
    match program {
        "sleep" => match words.get(1).map(String::as_str) {
            Some("infinity") => (None, vec![], 0),
            Some(arg) => (Some(sleep_duration(arg).unwrap_or(Duration::ZERO)), vec![], 0),
            None => (Some(Duration::ZERO), vec!["sleep: missing operand".into()], 1),
        },
        // `$VAR` is the container's environment, which the cluster knows.
        "echo" | "printf" if cmd.contains('$') => (Some(Duration::ZERO), vec![format!("{PLACEHOLDER}{cmd}")], 0),
        "echo" => (Some(Duration::ZERO), printing::lines(&printing::echo(&words[1..])), 0),
        "printf" => (Some(Duration::ZERO), printing::lines(&printing::printf(&words[1..])), 0),
        "true" | ":" => (Some(Duration::ZERO), vec![], 0),
        "false" => (Some(Duration::ZERO), vec![], 1),
        "tail" if words.iter().any(|w| w == "-f" || w == "-F") => (None, vec![], 0),
        // What these print depends on the cluster: a placeholder the cluster fills in.
        "cat" | "ls" | "env" | "printenv" | "hostname" | "wget" | "curl" | "nslookup" | "ps" | "id" | "whoami"
        | "uname" | "pwd" | "rev" => (Some(Duration::millis(10)), vec![format!("{PLACEHOLDER}{cmd}")], 0),
        "date" => (Some(Duration::ZERO), vec![format!("{PLACEHOLDER}{cmd}")], 0),
        "touch" | "mkdir" | "rm" | "ping" => (Some(Duration::millis(10)), vec![], 0),
        other => (Some(Duration::ZERO), vec![format!("sh: {other}: not found")], 127),
    }
}

/// `sleep`'s operand: seconds or a Go-style duration, and BusyBox's and coreutils' days (`1d`).
pub fn sleep_duration(arg: &str) -> Option<Duration> {
    match arg.strip_suffix('d').map(str::parse::<f64>) {
        Some(Ok(days)) if days >= 0.0 && days.is_finite() => Some(Duration((days * 86_400_000.0) as u64)),
        _ => Duration::parse(arg),
    }
}

fn shell_words(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in cmd.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// π to `n` decimal places (a spigot algorithm), as the docs' Job example prints it.
pub fn pi_digits(n: usize) -> String {
    let len = n * 10 / 3 + 2;
    let mut a = vec![2u32; len];
    let mut digits = String::with_capacity(n + 2);
    let mut predigit_nines = 0;
    let mut predigit: Option<u32> = None;
    for _ in 0..=n {
        let mut carry = 0u32;
        for i in (0..len).rev() {
            let x = a[i] * 10 + carry * (i as u32 + 1);
            let denom = 2 * i as u32 + 1;
            a[i] = x % denom;
            carry = x / denom;
        }
        a[0] = carry % 10;
        let q = carry / 10;
        match q {
            9 => predigit_nines += 1,
            10 => {
                if let Some(p) = predigit {
                    digits.push(char::from_digit(p + 1, 10).unwrap_or('0'));
                }
                for _ in 0..predigit_nines {
                    digits.push('0');
                }
                predigit = Some(0);
                predigit_nines = 0;
            }
            _ => {
                if let Some(p) = predigit {
                    digits.push(char::from_digit(p, 10).unwrap_or('0'));
                }
                predigit = Some(q);
                for _ in 0..predigit_nines {
                    digits.push('9');
                }
                predigit_nines = 0;
            }
        }
    }
    if let Some(p) = predigit {
        digits.push(char::from_digit(p, 10).unwrap_or('0'));
    }
    let digits: String = digits.chars().take(n + 1).collect();
    format!("{}.{}", &digits[..1], &digits[1..])
}

/// The flags a control-plane component's image accepts (by repository,
/// `registry.k8s.io/kube-scheduler`): those kubeadm's manifest gives it and a few common ones.
/// None for any other image.
fn component_flags(repository: &str) -> Option<Vec<String>> {
    let text = match repository {
        "registry.k8s.io/kube-apiserver" => include_str!("../cluster/manifests/kube-apiserver.yaml"),
        "registry.k8s.io/kube-controller-manager" => include_str!("../cluster/manifests/kube-controller-manager.yaml"),
        "registry.k8s.io/kube-scheduler" => include_str!("../cluster/manifests/kube-scheduler.yaml"),
        _ => return None,
    };
    let mut flags: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- --"))
        .map(|f| f.split('=').next().unwrap_or(f).to_string())
        .collect();
    for common in
        ["v", "vmodule", "config", "feature-gates", "profiling", "secure-port", "leader-elect", "logging-format"]
    {
        flags.push(common.to_string());
    }
    Some(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_splits_into_commands_at_separators_outside_quotes() {
        let parts = commands("echo 'a;b && c' ; ls && cat x || echo \"x||y\"\nexit 2");
        let texts: Vec<&str> = parts.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(texts, ["echo 'a;b && c'", "ls", "cat x", "echo \"x||y\"", "exit 2"]);
        let ops: Vec<Logic> = parts.iter().map(|(_, op)| *op).collect();
        assert_eq!(ops, [Logic::Seq, Logic::Seq, Logic::And, Logic::Or, Logic::Seq]);
    }

    #[test]
    fn or_runs_after_a_failure_and_and_after_a_success() {
        let mut ran = Vec::new();
        let (code, _) = interpret("false || echo a && echo b; false && echo c", &mut |w| {
            ran.push(w.join(" "));
            (if w[0] == "false" { 1 } else { 0 }, String::new())
        });
        assert_eq!(ran, ["false", "echo a", "echo b", "false"]);
        assert_eq!(code, 1);
    }

    fn image(name: &str) -> ImageRef {
        crate::kubelet::images::parse_reference(name)
    }

    fn sh(script: &str) -> Run {
        plan(Behaviour::Shell, &image("busybox"), &["sh".into(), "-c".into()], &[script.into()], &[])
    }

    #[test]
    fn a_script_runs_as_long_as_its_sleeps_and_exits_with_its_code() {
        let run = sh("echo hello; sleep 5; exit 3");
        assert_eq!(run.lifetime, Some(Duration::seconds(5)));
        assert_eq!(run.exit_code, 3);
        assert_eq!(run.logs, vec![(Duration::ZERO, "hello".to_string())]);
    }

    #[test]
    fn sleep_takes_days_as_busybox_does() {
        assert_eq!(sh("sleep 1d").lifetime, Some(Duration::seconds(86_400)));
        assert_eq!(sh("sleep 1h").lifetime, Some(Duration::seconds(3_600)));
    }

    #[test]
    fn loops_and_sleep_infinity_run_forever() {
        assert_eq!(sh("while true; do echo tick; sleep 1; done").lifetime, None);
        assert_eq!(sh("sleep infinity").lifetime, None);
        assert_eq!(sh("while true; do echo tick; sleep 1; done").logs[1].0, Duration::seconds(1));
    }

    #[test]
    fn touch_and_rm_give_a_file_its_lifetime() {
        let files = files(
            Behaviour::Shell,
            "busybox",
            &[],
            &["/bin/sh".into(), "-c".into(), "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600".into()],
        );
        let at = |s| file_at(&files, "/tmp/healthy", Duration::seconds(s)).is_some();
        assert!(at(0) && at(29) && at(30));
        assert!(!at(31) && !at(600));
    }

    #[test]
    fn output_sent_to_a_file_lands_in_the_file_not_the_log() {
        let run = sh("echo ok > /tmp/ready; echo done");
        assert_eq!(run.logs, vec![(Duration::ZERO, "done".to_string())]);
        let files = files(Behaviour::Shell, "busybox", &["sh".into(), "-c".into(), "echo ok > /tmp/ready".into()], &[]);
        assert_eq!(file_at(&files, "/tmp/ready", Duration::seconds(1)).map(|f| f.content.as_str()), Some("ok"));
    }

    #[test]
    fn a_server_listens_only_when_it_runs_its_own_program() {
        assert_eq!(listening(Behaviour::Server { port: 80 }, "nginx", &[], &[]), vec![80]);
        assert!(listening(Behaviour::Server { port: 80 }, "nginx", &["sh".into()], &["-c".into()]).is_empty());
        assert_eq!(listening(Behaviour::Server { port: 2379 }, "registry.k8s.io/etcd", &["etcd".into()], &[]).len(), 3);
    }

    #[test]
    fn a_command_whose_output_depends_on_the_cluster_leaves_a_placeholder_that_decides_the_exit_when_last() {
        let run = sh("nslookup web; echo done; cat /etc/hostname");
        let lines: Vec<Option<(&str, bool)>> = run.logs.iter().map(|(_, l)| placeholder(l)).collect();
        assert_eq!(lines, [Some(("nslookup web", false)), None, Some(("cat /etc/hostname", true))]);
        assert_eq!(run.logs[1].1, "done");
    }

    #[test]
    fn a_shell_alone_reads_its_input_and_with_a_script_it_does_not() {
        let shell = |argv: &[&str]| {
            let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
            interactive_shell(Behaviour::Shell, "busybox", &argv, &[])
        };
        assert_eq!(shell(&[]).as_deref(), Some("sh"));
        assert_eq!(shell(&["/bin/bash"]).as_deref(), Some("/bin/bash"));
        assert_eq!(shell(&["sh", "-c", "echo hi"]), None);
        assert_eq!(interactive_shell(Behaviour::Shell, "ubuntu", &[], &[]).as_deref(), Some("bash"));
    }

    #[test]
    fn and_or_follow_exit_codes() {
        assert_eq!(sh("false && exit 5 || exit 7").exit_code, 7);
        assert_eq!(sh("nosuchcmd").exit_code, 127);
    }

    #[test]
    fn servers_run_until_stopped_and_bare_shells_exit_at_once() {
        assert_eq!(plan(Behaviour::Server { port: 80 }, &image("nginx"), &[], &[], &[]).lifetime, None);
        assert_eq!(plan(Behaviour::Shell, &image("busybox"), &[], &[], &[]).exit_code, 0);
        assert!(plan(Behaviour::Shell, &image("busybox"), &[], &[], &[]).lifetime.is_some());
    }

    #[test]
    fn a_server_image_running_its_own_binary_runs_until_stopped() {
        let argv = ["kube-apiserver".to_string(), "--secure-port=6443".to_string()];
        assert_eq!(
            plan(Behaviour::Server { port: 6443 }, &image("registry.k8s.io/kube-apiserver"), &argv, &[], &[]).lifetime,
            None
        );
        let proxy = ["/usr/local/bin/kube-proxy".to_string()];
        assert_eq!(
            plan(Behaviour::Server { port: 10256 }, &image("registry.k8s.io/kube-proxy"), &proxy, &[], &[]).lifetime,
            None
        );
    }

    #[test]
    fn a_database_without_its_password_variable_logs_why_and_exits_1() {
        let mysql = Behaviour::Server { port: 3306 };
        let run = plan(mysql, &image("mysql:8.0"), &[], &[], &[]);
        assert_eq!((run.lifetime.is_some(), run.exit_code), (true, 1));
        assert!(run.logs.iter().any(|(_, l)| l.contains("password option is not specified")));
        let env = [("MYSQL_ROOT_PASSWORD".to_string(), "secret".to_string())];
        let run = plan(mysql, &image("mysql:8.0"), &[], &[], &env);
        assert_eq!(run.lifetime, None);
        assert!(run.logs.last().is_some_and(|(_, l)| l.contains("ready for connections")));
        let trust = [("POSTGRES_HOST_AUTH_METHOD".to_string(), "trust".to_string())];
        assert_eq!(plan(Behaviour::Server { port: 5432 }, &image("postgres:16"), &[], &[], &trust).lifetime, None);
        assert_eq!(plan(Behaviour::Server { port: 5432 }, &image("postgres:16"), &[], &[], &[]).exit_code, 1);
    }

    #[test]
    fn a_server_image_given_a_program_as_args_runs_that_program_instead_of_serving() {
        let nginx = Behaviour::Server { port: 80 };
        let args: Vec<String> = ["curl", "-s", "http://web"].iter().map(|s| s.to_string()).collect();
        let run = plan(nginx, &image("nginx"), &[], &args, &[]);
        assert_eq!(
            run.logs.iter().map(|(_, l)| placeholder(l)).collect::<Vec<_>>(),
            [Some(("curl -s http://web", true))]
        );
        assert!(listening(nginx, "nginx", &[], &args).is_empty());
        let echo = ["-listen=:8080".to_string(), "-text=hi".to_string()];
        assert_eq!(listening(Behaviour::Server { port: 5678 }, "hashicorp/http-echo", &[], &echo), vec![8080]);
    }

    #[test]
    fn the_pi_job_prints_pi() {
        assert_eq!(pi_digits(10), "3.1415926535");
        let run = plan(
            Behaviour::Interpreter,
            &image("perl"),
            &["perl".into(), "-Mbignum=bpi".into(), "-wle".into(), "print bpi(2000)".into()],
            &[],
            &[],
        );
        assert_eq!(run.exit_code, 0);
        assert!(run.logs[0].1.starts_with("3.14159265358979"));
        assert_eq!(run.logs[0].1.len(), 2001);
    }
}
