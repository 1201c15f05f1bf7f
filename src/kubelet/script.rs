//! What a container's process does: a small reading of its command line and shell script,
//! enough to know how long it runs, what it prints and how it exits.

use super::images::Behaviour;
use crate::sim::Duration;

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
}

impl Run {
    fn forever(logs: Vec<(Duration, String)>) -> Run {
        Run { lifetime: None, exit_code: 0, logs, honours_sigterm: true }
    }
}

/// Works out what a container does from its image's behaviour and its `command`/`args`.
pub fn plan(behaviour: Behaviour, image_repo: &str, command: &[String], args: &[String]) -> Run {
    let mut argv: Vec<String> = command.to_vec();
    argv.extend(args.iter().cloned());
    match behaviour {
        Behaviour::Pause => Run::forever(Vec::new()),
        Behaviour::Server { .. } if command.is_empty() => Run::forever(server_banner(image_repo)),
        Behaviour::Shell | Behaviour::Interpreter if argv.is_empty() => {
            Run { lifetime: Some(Duration::millis(50)), exit_code: 0, logs: Vec::new(), honours_sigterm: true }
        }
        _ => run_argv(&argv),
    }
}

fn server_banner(repo: &str) -> Vec<(Duration, String)> {
    let line = match repo {
        "nginx" => "/docker-entrypoint.sh: Configuration complete; ready for start up",
        "httpd" => "AH00094: Command line: 'httpd -D FOREGROUND'",
        "redis" => "* Ready to accept connections tcp",
        _ => "started",
    };
    vec![(Duration::millis(20), line.to_string())]
}

fn run_argv(argv: &[String]) -> Run {
    let program = argv[0].rsplit('/').next().unwrap_or("");
    match program {
        "sh" | "bash" | "ash" => match argv.iter().position(|a| a == "-c") {
            Some(i) => run_script(argv.get(i + 1).map(String::as_str).unwrap_or("")),
            None => {
                Run { lifetime: Some(Duration::millis(50)), exit_code: 0, logs: Vec::new(), honours_sigterm: false }
            }
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
            }
        }
        "nginx" | "httpd" | "redis-server" | "httpd-foreground" | "fluentd" => Run::forever(Vec::new()),
        _ => run_script(&argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")),
    }
}

fn shell_quote(arg: &str) -> String {
    if arg.contains([' ', ';', '&', '|']) { format!("'{}'", arg.replace('\'', "")) } else { arg.to_string() }
}

/// Reads a shell script statement by statement: `sleep`, `echo`, `exit`, `true`/`false`,
/// `while true; do ...; done` loops, `&&` / `||` / `;` sequencing.
pub fn run_script(script: &str) -> Run {
    let mut elapsed = Duration::ZERO;
    let mut logs = Vec::new();
    let statements = split_statements(script);
    let mut last_code = 0;
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
                let (d, out, _) = simple_command(s);
                period = period + d.unwrap_or(Duration::ZERO);
                lines.extend(out);
            }
            let period = if period == Duration::ZERO { Duration::seconds(1) } else { period };
            for n in 0..20u64 {
                for line in &lines {
                    logs.push((elapsed + Duration(period.0 * n), line.clone()));
                }
            }
            return Run { lifetime: None, exit_code: 0, logs, honours_sigterm: false };
        }
        for (part, op) in split_logical(stmt) {
            let run = match op {
                Logic::And => last_code == 0,
                Logic::Or => last_code != 0,
                Logic::Seq => true,
            };
            if !run {
                continue;
            }
            if let Some(code) = part.strip_prefix("exit") {
                let code = code.trim().parse().unwrap_or(last_code);
                return Run { lifetime: Some(elapsed), exit_code: code, logs, honours_sigterm: false };
            }
            let (d, out, code) = simple_command(part);
            for line in out {
                logs.push((elapsed, line));
            }
            match d {
                Some(d) => elapsed = elapsed + d,
                None => return Run { lifetime: None, exit_code: 0, logs, honours_sigterm: false },
            }
            last_code = code;
        }
    }
    Run { lifetime: Some(elapsed.max(Duration::millis(10))), exit_code: last_code, logs, honours_sigterm: false }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Logic {
    Seq,
    And,
    Or,
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

fn split_logical(stmt: &str) -> Vec<(&str, Logic)> {
    let mut out = Vec::new();
    let mut rest = stmt;
    let mut op = Logic::Seq;
    loop {
        let and = rest.find("&&");
        let or = rest.find("||");
        let next = match (and, or) {
            (Some(a), Some(o)) => Some(if a < o { (a, Logic::And) } else { (o, Logic::Or) }),
            (Some(a), None) => Some((a, Logic::And)),
            (None, Some(o)) => Some((o, Logic::Or)),
            (None, None) => None,
        };
        match next {
            Some((pos, next_op)) => {
                out.push((rest[..pos].trim(), op));
                op = next_op;
                rest = &rest[pos + 2..];
            }
            None => {
                out.push((rest.trim(), op));
                return out;
            }
        }
    }
}

/// One simple command: how long it takes (`None`: forever), what it prints, its exit code.
fn simple_command(cmd: &str) -> (Option<Duration>, Vec<String>, i32) {
    let words: Vec<String> = shell_words(cmd);
    let Some(program) = words.first().map(String::as_str) else {
        return (Some(Duration::ZERO), vec![], 0);
    };
    match program {
        "sleep" => match words.get(1).map(String::as_str) {
            Some("infinity") => (None, vec![], 0),
            Some(arg) => (Some(Duration::parse(arg).unwrap_or(Duration::ZERO)), vec![], 0),
            None => (Some(Duration::ZERO), vec!["sleep: missing operand".into()], 1),
        },
        "echo" => (Some(Duration::ZERO), vec![words[1..].join(" ")], 0),
        "true" | ":" => (Some(Duration::ZERO), vec![], 0),
        "false" => (Some(Duration::ZERO), vec![], 1),
        "date" => (Some(Duration::ZERO), vec!["Thu Jan  1 00:00:00 UTC 2026".into()], 0),
        "tail" if words.iter().any(|w| w == "-f") => (None, vec![], 0),
        "cat" | "ls" | "env" | "printenv" | "hostname" | "touch" | "mkdir" | "rm" | "wget" | "nslookup" | "ping" => {
            (Some(Duration::millis(10)), vec![], 0)
        }
        other => (Some(Duration::ZERO), vec![format!("sh: {other}: not found")], 127),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Run {
        plan(Behaviour::Shell, "busybox", &["sh".into(), "-c".into()], &[script.into()])
    }

    #[test]
    fn a_script_runs_as_long_as_its_sleeps_and_exits_with_its_code() {
        let run = sh("echo hello; sleep 5; exit 3");
        assert_eq!(run.lifetime, Some(Duration::seconds(5)));
        assert_eq!(run.exit_code, 3);
        assert_eq!(run.logs, vec![(Duration::ZERO, "hello".to_string())]);
    }

    #[test]
    fn loops_and_sleep_infinity_run_forever() {
        assert_eq!(sh("while true; do echo tick; sleep 1; done").lifetime, None);
        assert_eq!(sh("sleep infinity").lifetime, None);
        assert_eq!(sh("while true; do echo tick; sleep 1; done").logs[1].0, Duration::seconds(1));
    }

    #[test]
    fn and_or_follow_exit_codes() {
        assert_eq!(sh("false && exit 5 || exit 7").exit_code, 7);
        assert_eq!(sh("nosuchcmd").exit_code, 127);
    }

    #[test]
    fn servers_run_until_stopped_and_bare_shells_exit_at_once() {
        assert_eq!(plan(Behaviour::Server { port: 80 }, "nginx", &[], &[]).lifetime, None);
        assert_eq!(plan(Behaviour::Shell, "busybox", &[], &[]).exit_code, 0);
        assert!(plan(Behaviour::Shell, "busybox", &[], &[]).lifetime.is_some());
    }

    #[test]
    fn the_pi_job_prints_pi() {
        assert_eq!(pi_digits(10), "3.1415926535");
        let run = plan(
            Behaviour::Interpreter,
            "perl",
            &["perl".into(), "-Mbignum=bpi".into(), "-wle".into(), "print bpi(2000)".into()],
            &[],
        );
        assert_eq!(run.exit_code, 0);
        assert!(run.logs[0].1.starts_with("3.14159265358979"));
        assert_eq!(run.logs[0].1.len(), 2001);
    }
}
