//! The headless `kubeloop` command: run a script and print its transcript, or drive a saved
//! sandbox one command at a time from a real shell.

use crate::cluster::ClusterConfig;
use crate::shell::{Command, Session, shell_quote, split_words};
use std::io::Read;

const USAGE: &str = "\
kubeloop: a Kubernetes control plane and its nodes, simulated.

Usage:
  kubeloop [OPTIONS] run FILE|-             run a script, print its transcript
  kubeloop [OPTIONS] --state FILE CMD...    load the sandbox saved in FILE (new if missing),
                                           run one command, save it again
  kubeloop [OPTIONS] CMD...                 run one command in a fresh sandbox
  kubeloop lesson list                      the built-in lessons
  kubeloop lesson check FILE...             validate lesson files (errors as FILE:LINE: ...)
  kubeloop lesson run FILE|ID               run a lesson's solution step by step, printing
                                           each check before and after its step
  kubeloop help

Options (before the command):
  --seed N         the sandbox's seed (default 1): same seed, same commands, same cluster
  --events-etcd    keep Events in an etcd of their own, as large clusters do
                   (kube-apiserver --etcd-servers-overrides=/events#...): etcdctl
                   then shows none, kubectl still does
  --control-planes N
                   how many control-plane nodes (default 1; 3 is kubeadm's stacked
                   high-availability topology: control-plane, control-plane2,
                   control-plane3, API servers behind a load balancer, elected
                   kube-scheduler and kube-controller-manager leaders)

Commands are the sandbox's: kubectl ..., sleep 30s, sim settle, sim help.
With --state, `kubectl apply -f -` reads the manifest from standard input.
";

/// The saved form of a session: how its cluster was made and every command it ran.
#[derive(serde::Serialize, serde::Deserialize)]
struct State {
    seed: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    events_etcd: bool,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    control_planes: u32,
    commands: Vec<SavedCommand>,
}

impl State {
    fn config(&self) -> ClusterConfig {
        ClusterConfig {
            seed: self.seed,
            events_etcd: self.events_etcd,
            control_planes: self.control_planes,
            ..ClusterConfig::default()
        }
    }
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

use crate::cluster::control_plane::MAX_CONTROL_PLANES;

#[derive(serde::Serialize, serde::Deserialize)]
struct SavedCommand {
    line: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stdin: Option<String>,
    /// The files it read with `-f`, as they were then: replaying it later needs them even
    /// when they have changed or gone.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    files: std::collections::BTreeMap<String, String>,
}

/// The command line as text: an argument that is not UTF-8 keeps its characters and gets U+FFFD
/// for each byte that is not (a Go program like kubectl carries such bytes through; we
/// cannot hold them, and must not panic on them).
pub fn args_from_os(args: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<String> {
    args.into_iter().map(|a| a.into_string().unwrap_or_else(|a| a.to_string_lossy().into_owned())).collect()
}

/// A manifest read as bytes (standard input, a file) as text, or kubectl's error for bytes
/// that are not UTF-8: `error: error parsing STDIN: error converting YAML to JSON: yaml:
/// invalid leading UTF-8 octet`.
pub fn manifest_text(bytes: Vec<u8>, source: &str) -> Result<String, String> {
    match crate::yaml::utf8_problem(&bytes) {
        None => Ok(String::from_utf8(bytes).unwrap_or_default()),
        Some(problem) => Err(format!("error: error parsing {source}: error converting YAML to JSON: yaml: {problem}")),
    }
}

pub fn main(args: &[String]) -> i32 {
    let mut seed: u64 = 1;
    let mut events_etcd = false;
    let mut control_planes = 1;
    let mut state_file: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--seed" => {
                let Some(n) = args.get(i + 1).and_then(|s| s.parse().ok()) else {
                    eprintln!("kubeloop: --seed needs a number");
                    return 2;
                };
                seed = n;
                i += 2;
            }
            "--events-etcd" => {
                events_etcd = true;
                i += 1;
            }
            "--control-planes" => {
                let Some(n) =
                    args.get(i + 1).and_then(|s| s.parse().ok()).filter(|n| (1..=MAX_CONTROL_PLANES).contains(n))
                else {
                    eprintln!("kubeloop: --control-planes needs a number from 1 to {MAX_CONTROL_PLANES}");
                    return 2;
                };
                control_planes = n;
                i += 2;
            }
            "--state" => {
                let Some(f) = args.get(i + 1) else {
                    eprintln!("kubeloop: --state needs a file");
                    return 2;
                };
                state_file = Some(f.clone());
                i += 2;
            }
            _ => break,
        }
    }
    let rest = &args[i..];
    let fresh = State { seed, events_etcd, control_planes, commands: Vec::new() };
    match rest.first().map(String::as_str) {
        None | Some("help") | Some("--help") | Some("-h") => {
            print!("{USAGE}");
            0
        }
        Some("run") if state_file.is_none() => run_script(fresh.config(), rest.get(1).map(String::as_str)),
        Some("lesson") if state_file.is_none() => lesson(&rest[1..]),
        Some(_) => one_command(fresh, state_file.as_deref(), rest),
    }
}

fn run_script(config: ClusterConfig, file: Option<&str>) -> i32 {
    let script = match file {
        None | Some("-") => {
            let mut s = String::new();
            if std::io::stdin().read_to_string(&mut s).is_err() {
                eprintln!("kubeloop: cannot read standard input");
                return 1;
            }
            s
        }
        Some(path) => match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("kubeloop: {path}: {e}");
                return 1;
            }
        },
    };
    let mut session = Session::with_config(config);
    print!("{}", session.transcript(&script));
    0
}

/// One command in the sandbox `state_file` holds, or in a fresh one made as `fresh` says.
fn one_command(fresh: State, state_file: Option<&str>, words: &[String]) -> i32 {
    let state: State = match state_file.map(std::fs::read_to_string) {
        Some(Ok(text)) => match serde_json::from_str(&text) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("kubeloop: {}: not a kubeloop state file: {e}", state_file.unwrap_or(""));
                return 1;
            }
        },
        _ => fresh,
    };
    let mut session = Session::with_config(state.config());
    // Each call is a kubectl of its own: a shell it attached to has seen its input end.
    for saved in &state.commands {
        session.files = saved.files.clone();
        session.execute(&to_command(saved));
        session.hang_up();
    }
    let files = match read_local_files(words) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    session.files = files.clone();
    let line = words.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ");
    let wants_stdin = split_words(&line)
        .unwrap_or_default()
        .windows(2)
        .any(|w| (w[0] == "-f" || w[0] == "--filename") && w[1] == "-")
        || line.contains("--filename=-");
    let stdin = if wants_stdin {
        let mut bytes = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut bytes);
        match manifest_text(bytes, "STDIN") {
            Ok(text) => Some(text),
            Err(e) => {
                eprintln!("{e}");
                return 1;
            }
        }
    } else {
        None
    };
    let saved = SavedCommand { line, stdin, files };
    let mut out = session.execute(&to_command(&saved));
    let ended = session.hang_up();
    out.stdout.push_str(&ended.stdout);
    out.stderr.push_str(&ended.stderr);
    eprint!("{}", out.warnings);
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    if let Some(path) = state_file {
        let mut state = state;
        state.commands.push(saved);
        if let Ok(text) = serde_json::to_string_pretty(&state) {
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("kubeloop: cannot save {path}: {e}");
                return 1;
            }
        }
    }
    out.code
}

fn to_command(saved: &SavedCommand) -> Command {
    Command { line: saved.line.clone(), heredoc: saved.stdin.clone().map(|body| ("EOF".to_string(), body)) }
}

/// Files named with `-f` on this command line, read from the real disk (the CLI can); a file
/// that is not UTF-8 is reported as kubectl reports it.
fn read_local_files(words: &[String]) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut files = std::collections::BTreeMap::new();
    let mut paths: Vec<&str> = words
        .windows(2)
        .filter(|pair| (pair[0] == "-f" || pair[0] == "--filename") && pair[1] != "-")
        .map(|pair| pair[1].as_str())
        .collect();
    paths.extend(words.iter().filter_map(|w| w.strip_prefix("--filename=").or_else(|| w.strip_prefix("-f="))));
    for path in paths {
        read_path(std::path::Path::new(path), path.trim_end_matches('/'), &mut files, 0)?;
    }
    Ok(files)
}

/// A file, or every file below a directory (as `dir/name`), for `kubectl … -f PATH`.
fn read_path(
    path: &std::path::Path,
    name: &str,
    files: &mut std::collections::BTreeMap<String, String>,
    depth: u32,
) -> Result<(), String> {
    if path.is_file() {
        if let Ok(bytes) = std::fs::read(path) {
            files.insert(name.to_string(), manifest_text(bytes, name)?);
        }
    } else if let (Ok(entries), true) = (std::fs::read_dir(path), depth < 8) {
        for entry in entries.flatten() {
            let child = entry.file_name().to_string_lossy().into_owned();
            read_path(&entry.path(), &format!("{name}/{child}"), files, depth + 1)?;
        }
    }
    Ok(())
}

/// `kubeloop lesson list|check|run`.
fn lesson(args: &[String]) -> i32 {
    use crate::lessons;
    let load = |name: &str| -> Result<lessons::Lesson, String> {
        match std::fs::read_to_string(name) {
            Ok(text) => lessons::parse(name, &text).map_err(|e| e.to_string()),
            Err(e) if !name.ends_with(".md") => {
                lessons::find(name).ok_or(format!("kubeloop: no lesson \"{name}\" ({e})"))
            }
            Err(e) => Err(format!("kubeloop: {name}: {e}")),
        }
    };
    match args.first().map(String::as_str) {
        Some("list") => {
            for (file, text) in lessons::builtin() {
                match lessons::parse(file, text) {
                    Ok(l) => println!("{:<34} {} ({} steps)", l.id, l.title, l.steps.len()),
                    Err(e) => println!("{e}"),
                }
            }
            0
        }
        Some("check") if args.len() > 1 => {
            let mut code = 0;
            // `lessons/*.md` names the authoring guide too; it is not a lesson.
            for name in args[1..].iter().filter(|n| !n.ends_with("README.md")) {
                match load(name) {
                    Ok(l) => {
                        let checks = l.steps.iter().map(|s| s.checks.len()).sum::<usize>();
                        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
                        println!("{}: ok, {}, {}", l.file, plural(l.steps.len(), "step"), plural(checks, "check"));
                    }
                    Err(e) => {
                        eprintln!("{e}");
                        code = 1;
                    }
                }
            }
            code
        }
        Some("run") if args.len() == 2 => {
            let lesson = match load(&args[1]) {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("{e}");
                    return 1;
                }
            };
            let run = lessons::run_solution(&lesson);
            println!("# {}", lesson.title);
            for (i, step) in run.steps.iter().enumerate() {
                println!("\n## {}. {}\n", i + 1, step.title);
                println!("before the solution:");
                print_results(&step.before);
                print!("{}", step.transcript);
                println!("after the solution:");
                print_results(&step.after);
            }
            let problems = run.problems();
            for p in &problems {
                eprintln!("{p}");
            }
            i32::from(!problems.is_empty())
        }
        _ => {
            eprintln!("usage: kubeloop lesson list | check FILE... | run FILE|ID");
            2
        }
    }
}

fn print_results(results: &[crate::lessons::CheckResult]) {
    for r in results {
        println!("  [{}] {}", if r.passed { "pass" } else { "fail" }, r.label);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_sandbox_remembers_its_events_etcd_and_older_saves_load_without_one() {
        let state = State { seed: 4, events_etcd: true, control_planes: 1, commands: Vec::new() };
        let text = serde_json::to_string(&state).unwrap();
        let loaded: State = serde_json::from_str(&text).unwrap();
        assert!(loaded.config().events_etcd);
        assert_eq!(loaded.config().seed, 4);
        let older: State = serde_json::from_str(r#"{"seed": 2, "commands": []}"#).unwrap();
        assert!(!older.config().events_etcd);
        let plain =
            serde_json::to_string(&State { seed: 2, events_etcd: false, control_planes: 1, commands: Vec::new() })
                .unwrap();
        assert!(!plain.contains("events_etcd"), "{plain}");
    }

    #[test]
    fn a_directory_given_with_f_is_applied_file_by_file_in_lexical_order() {
        let dir = std::env::temp_dir().join(format!("kubeloop-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let cm = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
        std::fs::write(dir.join("b.yaml"), cm("b")).unwrap();
        std::fs::write(dir.join("a.yml"), cm("a")).unwrap();
        std::fs::write(dir.join("sub/c.yaml"), cm("c")).unwrap();
        std::fs::write(dir.join("notes.txt"), "not a manifest").unwrap();
        let path = dir.to_string_lossy().into_owned();
        let words: Vec<String> = ["kubectl", "apply", "-f", &path].iter().map(|s| s.to_string()).collect();
        let mut session = Session::new(1);
        session.files = read_local_files(&words).unwrap();
        let out = session.execute(&Command::new(&format!("kubectl apply -f {path}")));
        assert_eq!(out.stdout, "configmap/a created\nconfigmap/b created\n");
        let out = session.execute(&Command::new(&format!("kubectl apply -f {path} -R")));
        assert_eq!(out.stdout, "configmap/a unchanged\nconfigmap/b unchanged\nconfigmap/c created\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_argument_that_is_not_utf8_is_carried_lossily_not_a_panic() {
        use std::os::unix::ffi::OsStringExt;
        let args =
            args_from_os([std::ffi::OsString::from("kubectl"), std::ffi::OsString::from_vec(b"get\xff".to_vec())]);
        assert_eq!(args, ["kubectl", "get\u{fffd}"]);
        // It reaches the sandbox like any other word (kubectl: unknown command).
        let _ = main(&args);
    }

    #[test]
    fn standard_input_that_is_not_utf8_is_reported_as_kubectl_reports_it() {
        assert_eq!(
            manifest_text(b"kind: \xffPod\n".to_vec(), "STDIN"),
            Err("error: error parsing STDIN: error converting YAML to JSON: yaml: invalid leading UTF-8 octet".into())
        );
        assert_eq!(manifest_text(b"kind: Pod\n".to_vec(), "STDIN"), Ok("kind: Pod\n".into()));
    }

    #[test]
    fn a_file_that_is_not_utf8_is_reported_as_kubectl_reports_it_not_skipped() {
        let dir = std::env::temp_dir().join(format!("kubeloop-utf8-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("bad.yaml");
        std::fs::write(&path, b"kind: \xffPod\n").unwrap();
        let path = path.to_string_lossy().into_owned();
        let words: Vec<String> = ["kubectl", "apply", "-f", &path].iter().map(|w| w.to_string()).collect();
        assert_eq!(
            read_local_files(&words),
            Err(format!(
                "error: error parsing {path}: error converting YAML to JSON: yaml: invalid leading UTF-8 octet"
            ))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
