//! What the python and perl interpreters do with the one-liners manifests hand them: print
//! literals, sleep, exit with a code, or fail on a script file the image does not have.
//!
//! A real interpreter is far beyond the sandbox; these are the statements the docs' and
//! tutorials' examples use. Any other statement runs as a no-op.

use super::script::Run;
use crate::sim::Duration;

/// `python …`: `-c CODE`, `-m http.server`, a script file, or nothing (no terminal: it reads
/// end of input and exits).
pub fn python(argv: &[String]) -> Run {
    python_with(argv, &[])
}

/// `python`, its `-c` program's `if` statements judged against the container's variables.
pub fn python_with(argv: &[String], env: &[(String, String)]) -> Run {
    let program = argv[0].rsplit('/').next().unwrap_or(&argv[0]);
    let args = &argv[1..];
    let flags_end = args.iter().position(|a| !a.starts_with('-') || a == "-c" || a == "-m").unwrap_or(args.len());
    match args.get(flags_end).map(String::as_str) {
        None => finished(Vec::new(), 0),
        Some("-c") => {
            let code = args.get(flags_end + 1).map_or("", String::as_str);
            program_run(&super::python_if::selected(code, env), python_statement)
        }
        // `python -m http.server`: serves until stopped (its startup line is buffered, as
        // Python buffers stdout without a terminal, so the log stays empty).
        Some("-m") if args.get(flags_end + 1).is_some_and(|m| m == "http.server") => Run::forever(Vec::new()),
        Some("-m") => {
            let module = args.get(flags_end + 1).map_or("", String::as_str);
            finished(vec![format!("{program}: No module named {module}")], 1)
        }
        Some(file) => {
            let path = if file.starts_with('/') { file.to_string() } else { format!("/{file}") };
            finished(vec![format!("{program}: can't open file '{path}': [Errno 2] No such file or directory")], 2)
        }
    }
}

/// The port `python -m http.server [PORT]` listens on (8000 unless given), when that is what
/// `argv` runs.
pub fn http_server_port(argv: &[String]) -> Option<u16> {
    let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p))?;
    let at = argv.iter().position(|a| a == "-m")?;
    if !program.starts_with("python") || argv.get(at + 1).is_none_or(|m| m != "http.server") {
        return None;
    }
    let mut rest = argv[at + 2..].iter();
    while let Some(word) = rest.next() {
        match word.as_str() {
            // Options with a value: the address to bind, the directory to serve, the protocol.
            "-b" | "--bind" | "-d" | "--directory" | "-p" | "--protocol" => {
                rest.next();
            }
            w if w.starts_with('-') => {}
            w => return w.parse().ok(),
        }
    }
    Some(8000)
}

/// `perl -e CODE` (and `-le`, `-wle`, …): `print`, `sleep`, `exit`. A script file the image does
/// not have fails as perl does.
pub fn perl(argv: &[String]) -> Run {
    let args = &argv[1..];
    match args.iter().position(|a| a.starts_with('-') && a.ends_with('e')) {
        Some(i) => {
            let newline = args[..=i].iter().any(|a| a.starts_with('-') && a.contains('l'));
            program_run(args.get(i + 1).map_or("", String::as_str), |s| perl_statement(s, newline))
        }
        None => match args.iter().find(|a| !a.starts_with('-')) {
            Some(file) => finished(vec![format!("Can't open perl script \"{file}\": No such file or directory")], 2),
            None => finished(Vec::new(), 0),
        },
    }
}

/// Whether the interpreter buffers what it prints until it exits, as python and perl do when
/// their output is not a terminal (a container's never is): unless told not to (`python -u`,
/// `PYTHONUNBUFFERED`, perl's `$| = 1`), a long-running process's prints do not reach the log.
pub fn buffers_output(argv: &[String], env: &[(String, String)]) -> bool {
    let Some(program) = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p)) else { return false };
    let args = &argv[1..];
    let flags = args.iter().take_while(|a| a.starts_with('-') && !a.starts_with("--"));
    if program.starts_with("python") {
        let unbuffered_flag = flags.take_while(|a| *a != "-c" && *a != "-m").any(|a| a.contains('u'));
        let unbuffered_env = env.iter().any(|(k, v)| k == "PYTHONUNBUFFERED" && !v.is_empty());
        return !unbuffered_flag && !unbuffered_env;
    }
    program == "perl" && !args.iter().any(|a| a.contains("$|"))
}

/// What one statement does.
enum Step {
    Print(String),
    Sleep(Duration),
    /// `while True: …` and the like: runs until stopped.
    Forever,
    Exit(i32),
    Nothing,
}

/// Runs a program's statements (separated by `;` or new lines) in order.
fn program_run(code: &str, statement: impl Fn(&str) -> Step) -> Run {
    let (mut at, mut logs) = (Duration::ZERO, Vec::new());
    for s in code.split([';', '\n']).map(str::trim).filter(|s| !s.is_empty()) {
        match statement(s) {
            Step::Print(text) => logs.push((at, text)),
            Step::Sleep(d) => at = at + d,
            Step::Forever => return Run::forever(logs),
            Step::Exit(code) => return Run { lifetime: Some(at), exit_code: code, logs, ..Run::forever(Vec::new()) },
            Step::Nothing => {}
        }
    }
    Run { lifetime: Some(at + Duration::millis(30)), exit_code: 0, logs, ..Run::forever(Vec::new()) }
}

fn finished(lines: Vec<String>, code: i32) -> Run {
    let logs = lines.into_iter().map(|l| (Duration::ZERO, l)).collect();
    Run { lifetime: Some(Duration::millis(30)), exit_code: code, logs, ..Run::forever(Vec::new()) }
}

fn python_statement(s: &str) -> Step {
    let call = |name: &str| s.strip_prefix(name).and_then(|r| r.strip_prefix('(')).and_then(|r| r.strip_suffix(')'));
    if s.starts_with("while True") || s.starts_with("while 1") {
        return Step::Forever;
    }
    if let Some(inner) = call("print") {
        return Step::Print(split_args(inner).iter().map(|a| python_value(a)).collect::<Vec<_>>().join(" "));
    }
    if let Some(inner) = call("time.sleep").or_else(|| call("sleep")) {
        return inner.trim().parse::<f64>().map_or(Step::Nothing, |secs| Step::Sleep(seconds(secs)));
    }
    if let Some(inner) = call("sys.exit").or_else(|| call("exit")).or_else(|| call("quit")) {
        return Step::Exit(inner.trim().parse().unwrap_or(if inner.trim().is_empty() { 0 } else { 1 }));
    }
    Step::Nothing
}

/// A literal as `print` shows it: a string's text, a number as written.
fn python_value(arg: &str) -> String {
    let arg = arg.trim();
    let arg = arg.strip_prefix('f').filter(|r| r.starts_with(['"', '\''])).unwrap_or(arg);
    unquote(arg).unwrap_or_else(|| arg.to_string())
}

fn perl_statement(s: &str, newline: bool) -> Step {
    let rest = |word: &str| s.strip_prefix(word).filter(|r| r.is_empty() || r.starts_with([' ', '('])).map(str::trim);
    if s.starts_with("while (1)") || s.starts_with("while(1)") {
        return Step::Forever;
    }
    if let Some(args) = rest("print") {
        let args = args.strip_prefix('(').and_then(|a| a.strip_suffix(')')).unwrap_or(args);
        let text: String = split_args(args)
            .iter()
            .map(|a| unquote(a.trim()).unwrap_or_else(|| a.trim().to_string()).replace("\\n", "\n"))
            .collect();
        // Without -l, print writes no newline of its own: a line ends where the text does.
        let text = if newline { text } else { text.strip_suffix('\n').unwrap_or(&text).to_string() };
        return Step::Print(text);
    }
    if let Some(arg) = rest("sleep") {
        let arg = arg.trim_matches(['(', ')']);
        return arg.parse::<f64>().map_or(Step::Nothing, |secs| Step::Sleep(seconds(secs)));
    }
    if let Some(arg) = rest("exit") {
        return Step::Exit(arg.trim_matches(['(', ')']).parse().unwrap_or(0));
    }
    Step::Nothing
}

fn seconds(secs: f64) -> Duration {
    Duration((secs.clamp(0.0, 1e9) * 1000.0) as u64)
}

/// The text of a quoted string literal, or None for anything else.
fn unquote(arg: &str) -> Option<String> {
    let quote = arg.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = arg.strip_prefix(quote)?.strip_suffix(quote)?;
    Some(inner.to_string())
}

/// Arguments separated by commas outside quotes.
fn split_args(text: &str) -> Vec<String> {
    let (mut out, mut current, mut quote) = (Vec::new(), String::new(), None);
    for ch in text.chars() {
        match (ch, quote) {
            ('"' | '\'', None) => {
                quote = Some(ch);
                current.push(ch);
            }
            (c, Some(q)) if c == q => {
                quote = None;
                current.push(ch);
            }
            (',', None) => out.push(std::mem::take(&mut current)),
            _ => current.push(ch),
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn lines(run: &Run) -> Vec<&str> {
        run.logs.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn python_prints_literals_sleeps_and_exits_with_the_code_it_is_given() {
        let run = python(&argv(&["python", "-c", "import time; print('hello', 42); time.sleep(2); exit(3)"]));
        assert_eq!(lines(&run), ["hello 42"]);
        assert_eq!((run.lifetime, run.exit_code), (Some(Duration::seconds(2)), 3));
    }

    #[test]
    fn python_without_a_terminal_exits_at_once_and_a_missing_script_fails_with_errno_2() {
        assert_eq!(python(&argv(&["python3"])).exit_code, 0);
        let run = python(&argv(&["python", "app.py"]));
        assert_eq!(lines(&run), ["python: can't open file '/app.py': [Errno 2] No such file or directory"]);
        assert_eq!(run.exit_code, 2);
    }

    #[test]
    fn python_loops_and_its_http_server_run_until_stopped() {
        assert_eq!(python(&argv(&["python", "-c", "while True: pass"])).lifetime, None);
        assert_eq!(python(&argv(&["python3", "-m", "http.server", "8080"])).lifetime, None);
    }

    #[test]
    fn python_and_perl_hold_their_output_until_exit_unless_told_not_to() {
        let run = |words: &[&str]| argv(words);
        assert!(buffers_output(&run(&["python", "-c", "print(1)"]), &[]));
        assert!(!buffers_output(&run(&["python", "-u", "-c", "print(1)"]), &[]));
        assert!(!buffers_output(&run(&["python3", "-c", "print(1)"]), &[("PYTHONUNBUFFERED".into(), "1".into())]));
        assert!(buffers_output(&run(&["perl", "-le", "print 1"]), &[]));
        assert!(!buffers_output(&run(&["perl", "-le", "$| = 1; print 1"]), &[]));
        assert!(!buffers_output(&run(&["sh", "-c", "echo 1"]), &[]));
    }

    #[test]
    fn python_http_server_listens_on_8000_or_the_port_it_is_given() {
        assert_eq!(http_server_port(&argv(&["python", "-m", "http.server"])), Some(8000));
        assert_eq!(http_server_port(&argv(&["python3", "-m", "http.server", "-b", "0.0.0.0", "9000"])), Some(9000));
        assert_eq!(http_server_port(&argv(&["python", "-c", "print(1)"])), None);
    }

    #[test]
    fn perl_prints_with_or_without_its_own_newline() {
        assert_eq!(lines(&perl(&argv(&["perl", "-le", "print \"hi\""]))), ["hi"]);
        assert_eq!(lines(&perl(&argv(&["perl", "-e", "print \"a\\n\"; sleep 1; exit 4"]))), ["a"]);
        assert_eq!(perl(&argv(&["perl", "-e", "exit 4"])).exit_code, 4);
    }
}
