//! A container's shell reading a script or a terminal's lines: `;`, `&&`, `||`, `|` into its
//! text filters, `$VAR`, `$(command)`, `exit`, the builtins that change it (`cd`, `export`,
//! `NAME=value`) and the prompt it shows.

use super::files::{ROOT, absolute, is_dir};
use super::{Container, Run};
use std::collections::BTreeMap;

/// What one simple command came to.
enum Simple {
    /// An empty line.
    Nothing,
    /// `exit [N]`.
    Exit(Option<i32>),
    SyntaxError(Run),
    Ran(Run),
}

impl Container<'_> {
    /// `sh -c SCRIPT`: its commands joined by `;`, `&&` and `||` (read as every script in the
    /// sandbox is), each a pipeline of simple commands split into words; `exit N` ends it.
    pub fn script(&mut self, shell: &str, script: &str) -> Run {
        let mut all = Run::default();
        for (part, op) in crate::kubelet::script::commands(script) {
            // A comment: the rest of the line is for people.
            if !op.runs_after(all.code) || part.trim_start().starts_with('#') {
                continue;
            }
            let (part, errors) = self.substitute(shell, &part);
            all.stderr.push_str(&errors);
            let stages = crate::util::pipes::split_pipeline(&part);
            let run = match self.simple(shell, &stages[0]) {
                Simple::Nothing => continue,
                Simple::Exit(code) => {
                    all.code = code.unwrap_or(all.code);
                    all.exited = true;
                    break;
                }
                Simple::SyntaxError(run) => return run,
                Simple::Ran(run) => run,
            };
            let run = stages[1..].iter().fold(run, |run, stage| self.filter(shell, stage, run));
            all.stdout.push_str(&run.stdout);
            all.stderr.push_str(&run.stderr);
            all.code = run.code;
            all.slept = all.slept + run.slept;
        }
        all
    }

    /// One simple command: split into words, expanded, and run (a builtin, a program the image
    /// has, or `not found`).
    fn simple(&mut self, shell: &str, line: &str) -> Simple {
        let words = match crate::util::command_line::split_words(line.trim()) {
            Ok(w) => w,
            Err(_) => {
                return Simple::SyntaxError(Run::fail(2, format!("{shell}: syntax error: unterminated quoted string")));
            }
        };
        let words: Vec<String> = words.into_iter().map(|w| self.expand(&w)).collect();
        if words.is_empty() {
            return Simple::Nothing;
        }
        if words[0] == "exit" {
            return Simple::Exit(words.get(1).and_then(|c| c.parse().ok()));
        }
        let program = words[0].rsplit('/').next().unwrap_or(&words[0]).to_string();
        Simple::Ran(if let Some(run) = self.builtin(shell, &words) {
            run
        } else if self.installed(&program) {
            self.run(&words)
        } else {
            Run::fail(127, self.not_found(shell, &words[0]))
        })
    }

    /// A later stage of a pipeline: a text filter (`grep`, `head`, `wc -l`, …) reading what
    /// the stage before it printed. What went to stderr passes by.
    fn filter(&mut self, shell: &str, stage: &str, before: Run) -> Run {
        let words = match crate::util::command_line::split_words(stage.trim()) {
            Ok(w) => w.into_iter().map(|w| self.expand(&w)).collect::<Vec<String>>(),
            Err(_) => return Run::fail(2, format!("{shell}: syntax error: unterminated quoted string")),
        };
        let Some(program) = words.first() else { return before };
        let grep = program == "grep";
        // A distroless image has no programs at all; elsewhere the filters are the sandbox's.
        let answer = if self.userland() == super::Userland::Distroless {
            Err(String::new())
        } else {
            crate::util::pipes::filter(&words, &before.stdout)
        };
        let mut run = match answer {
            // grep that matched nothing ends the pipeline with 1.
            Ok(out) => Run { code: i32::from(grep && out.is_empty()), stdout: out, ..Run::default() },
            Err(message) if message.is_empty() || message.ends_with(": command not found") => {
                Run::fail(127, self.not_found(shell, program))
            }
            Err(message) => Run::fail(2, message),
        };
        run.stderr = before.stderr + &run.stderr;
        run.slept = before.slept;
        run
    }

    /// A shell's word that no program is: BusyBox ash, dash (Debian's sh) and bash each say it
    /// their way.
    fn not_found(&self, shell: &str, word: &str) -> String {
        match (shell, self.busybox()) {
            ("bash", _) => format!("bash: line 1: {word}: command not found"),
            (_, true) => format!("{shell}: {word}: not found"),
            _ => format!("{shell}: 1: {word}: not found"),
        }
    }

    /// Command substitution: each `$(command)` outside single quotes replaced by what the
    /// command prints, less its trailing newlines (`TOKEN=$(cat …/token)`). Returns the line
    /// and what the commands wrote to stderr.
    fn substitute(&mut self, shell: &str, line: &str) -> (String, String) {
        if !line.contains("$(") {
            return (line.to_string(), String::new());
        }
        let (mut out, mut errors) = (String::new(), String::new());
        let mut quoted = false;
        let mut rest = line;
        while let Some(c) = rest.chars().next() {
            if c == '\'' {
                quoted = !quoted;
            }
            if !quoted && rest.starts_with("$(") {
                // The matching parenthesis, counting nested ones.
                let mut depth = 0;
                let end = rest.char_indices().skip(1).find_map(|(i, ch)| {
                    match ch {
                        '(' => depth += 1,
                        ')' if depth == 1 => return Some(i),
                        ')' => depth -= 1,
                        _ => {}
                    }
                    None
                });
                if let Some(end) = end {
                    let run = self.script(shell, &rest[2..end]);
                    out.push_str(run.stdout.trim_end_matches('\n'));
                    errors.push_str(&run.stderr);
                    rest = &rest[end + 1..];
                    continue;
                }
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        (out, errors)
    }

    /// The shell's own commands that change it: `cd`, `export` and `NAME=value`.
    pub(super) fn builtin(&mut self, shell: &str, words: &[String]) -> Option<Run> {
        match words[0].as_str() {
            "cd" => {
                let home = self.user().home;
                let target = words.get(1).map_or(home, String::as_str);
                let path = crate::util::path::normalize(&absolute(target, Some(self.cwd())));
                let files = self.files();
                if path == "/root"
                    || path == home
                    || ROOT.iter().any(|d| path == format!("/{d}"))
                    || is_dir(&files, &path)
                {
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

    pub(super) fn set_var(&mut self, name: &str, value: &str) {
        self.state.vars.retain(|(k, _)| k != name);
        self.state.vars.push((name.to_string(), value.to_string()));
    }

    /// The prompt an interactive shell shows: BusyBox ash `/ # `, bash `root@POD:/# ` (on the
    /// RHEL family `[root@POD /]# `), and dash (Debian's `sh`) `# `. Home is `~`.
    pub fn prompt(&self, shell: &str) -> String {
        let cwd = self.cwd();
        let home = self.user().home;
        let shown = match cwd {
            c if c == home => "~".to_string(),
            c => c.strip_prefix(&format!("{home}/")).map_or_else(|| c.to_string(), |rest| format!("~/{rest}")),
        };
        // `#` for root, `$` for anyone else.
        let sign = if self.user().is_root() { '#' } else { '$' };
        let rhel = matches!(self.image.repository.as_str(), "centos" | "fedora" | "rockylinux");
        match (shell.rsplit('/').next().unwrap_or(shell), self.busybox()) {
            // The RHEL family's PS1 is `[\u@\h \W]\$ `: the directory's last name only.
            ("bash", _) if rhel => {
                let last = if shown == "/" { "/" } else { shown.rsplit('/').next().unwrap_or("/") };
                format!("[root@{} {last}]# ", self.hostname())
            }
            ("bash", _) => format!("root@{}:{shown}# ", self.hostname()),
            // busyboxplus sets its own PS1.
            (_, true) if self.image.repository == "radial/busyboxplus" => {
                format!("[ root@{}:{shown} ]$ ", self.hostname())
            }
            (_, true) => format!("{shown} {sign} "),
            _ => "# ".to_string(),
        }
    }

    /// `$VAR` and `${VAR}` from the container's environment, as the shell expands them.
    pub(super) fn expand(&self, word: &str) -> String {
        if !word.contains('$') {
            return word.to_string();
        }
        let mut env: BTreeMap<String, String> = crate::util::sort::btree_map(self.environment());
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
}

/// `NAME=value`, as a shell reads an assignment.
pub(super) fn assignment(word: &str) -> Option<(&str, &str)> {
    word.split_once('=').filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}
