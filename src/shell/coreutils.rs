//! The file commands of the student's own shell, as GNU coreutils and bash print them:
//! `cat`, `ls [-l] [-a]`, `rm [-f] [-r]`, `mkdir [-p]`, `touch`, `pwd`, `cd`, on the home
//! directory (`shell::home`).

use crate::kubectl::Output;
use crate::shell::home::{Fs, FsError, HOME, USER};
use crate::util::sort::StableSort;
use std::fmt::Write;

/// The programs answered here.
pub const PROGRAMS: &[&str] = &["cat", "ls", "rm", "mkdir", "touch", "pwd", "cd"];

/// What `cat` without input says: the sandbox's terminal sends a command no typed input.
pub const NO_INPUT: &str = "cat: (the sandbox's terminal sends no typed input to a command: end the line with <<EOF, type the text, then a line EOF)\n";

/// Runs one of [`PROGRAMS`]; `tty` when its output goes to the terminal (`ls` then prints in
/// columns), not to a pipe or a file.
pub fn run(program: &str, args: &[String], stdin: Option<&str>, fs: &mut Fs, tty: bool) -> Output {
    match program {
        "cat" => cat(args, stdin, fs),
        "ls" => ls(args, fs, tty),
        "rm" => rm(args, fs),
        "mkdir" => mkdir(args, fs),
        "touch" => touch(args, fs),
        "pwd" => Output { stdout: format!("{}\n", fs.state.cwd), ..Default::default() },
        "cd" => cd(args, fs),
        other => Output { stderr: format!("sh: {other}: command not found\n"), code: 127, ..Default::default() },
    }
}

/// Splits `-rf`-style flags from operands (`--` ends the flags); an unknown letter is the
/// error coreutils prints.
fn flags<'a>(program: &str, args: &'a [String], known: &str) -> Result<(String, Vec<&'a str>), String> {
    let mut letters = String::new();
    let mut operands = Vec::new();
    let mut ended = false;
    for arg in args {
        if ended || arg == "-" || !arg.starts_with('-') {
            operands.push(arg.as_str());
        } else if arg == "--" {
            ended = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            let letter = match (program, long) {
                ("rm", "force") => 'f',
                ("rm" | "ls", "recursive") => 'r',
                ("mkdir", "parents") => 'p',
                ("ls", "all") => 'a',
                _ => {
                    return Err(format!(
                        "{program}: unrecognized option '{arg}'\nTry '{program} --help' for more information.\n"
                    ));
                }
            };
            letters.push(letter);
        } else {
            for c in arg[1..].chars() {
                if !known.contains(c) {
                    return Err(format!(
                        "{program}: invalid option -- '{c}'\nTry '{program} --help' for more information.\n"
                    ));
                }
                letters.push(c);
            }
        }
    }
    Ok((letters, operands))
}

fn fail(stderr: String, code: i32) -> Output {
    Output { stderr, code, ..Default::default() }
}

/// `cat [FILE]…`: the files one after another; none, or `-`, is standard input.
fn cat(args: &[String], stdin: Option<&str>, fs: &Fs) -> Output {
    let (_, mut operands) = match flags("cat", args, "") {
        Ok(f) => f,
        Err(e) => return fail(e, 1),
    };
    if operands.is_empty() {
        operands.push("-");
    }
    let mut out = Output::default();
    for name in operands {
        if name == "-" {
            match stdin {
                Some(text) => out.stdout.push_str(text),
                // The terminal hands a command no input but a heredoc's.
                None => out.stderr.push_str(NO_INPUT),
            }
            continue;
        }
        match fs.read(name) {
            Ok(text) => out.stdout.push_str(text),
            Err(e) => {
                let _ = writeln!(out.stderr, "cat: {name}: {}", e.text());
                out.code = 1;
            }
        }
    }
    out
}

/// `ls [-l] [-a] [-1] [PATH]…`: files named first, then each directory's entries.
fn ls(args: &[String], fs: &Fs, tty: bool) -> Output {
    let (letters, mut operands) = match flags("ls", args, "la1AhR") {
        Ok(f) => f,
        Err(e) => return fail(e, 2),
    };
    let long = letters.contains('l');
    let all = letters.contains('a');
    let one = letters.contains('1') || !tty;
    if operands.is_empty() {
        operands.push(".");
    }
    let mut out = Output::default();
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for name in &operands {
        if !fs.exists(name) {
            let _ = writeln!(out.stderr, "ls: cannot access '{name}': No such file or directory");
            out.code = 2;
        } else if fs.is_dir(name) {
            dirs.push(*name);
        } else {
            files.push(*name);
        }
    }
    let show = |entries: &[(String, String)], out: &mut Output| {
        if long {
            for (_, line) in entries {
                out.stdout.push_str(line);
                out.stdout.push('\n');
            }
        } else {
            let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
            out.stdout.push_str(&columns(&names, one));
        }
    };
    let file_entries: Vec<(String, String)> = files.iter().map(|f| (f.to_string(), long_line(fs, f, f))).collect();
    show(&file_entries, &mut out);
    let headed = operands.len() > 1;
    for (i, dir) in dirs.iter().enumerate() {
        if i > 0 || !files.is_empty() {
            out.stdout.push('\n');
        }
        if headed {
            let _ = writeln!(out.stdout, "{dir}:");
        }
        let Ok(mut entries) = fs.list(dir) else { continue };
        entries.stable_sort_by_key(|(name, _)| collation_key(name));
        if all {
            entries.insert(0, ("..".to_string(), true));
            entries.insert(0, (".".to_string(), true));
        }
        let base = dir.trim_end_matches('/');
        let lines: Vec<(String, String)> =
            entries.iter().map(|(name, _)| (name.clone(), long_line(fs, &format!("{base}/{name}"), name))).collect();
        if long {
            let blocks: u64 = entries.iter().map(|(name, _)| blocks(fs, &format!("{base}/{name}"))).sum();
            let _ = writeln!(out.stdout, "total {blocks}");
        }
        show(&lines, &mut out);
    }
    out
}

/// The order `ls` lists names in under a UTF-8 locale (en_US.UTF-8, as most terminals run):
/// letters and digits first, without regard to case or punctuation (`config.yaml`, `extra`,
/// `README.txt`); the name itself breaks ties.
fn collation_key(name: &str) -> (String, String) {
    let letters: String = name.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
    (letters, name.to_string())
}

/// The 1 KiB blocks a file takes on disk (a 4 KiB block each started), as `ls -l`'s total
/// counts them.
fn blocks(fs: &Fs, path: &str) -> u64 {
    let size = if fs.is_dir(path) { 4096 } else { fs.read(path).map_or(0, str::len) as u64 };
    size.div_ceil(4096) * 4
}

/// One `ls -l` line: mode, links, owner, group, size, time, name.
fn long_line(fs: &Fs, path: &str, name: &str) -> String {
    let dir = fs.is_dir(path);
    let (mode, links, size) = if dir {
        let subdirs = fs.list(path).map_or(0, |e| e.iter().filter(|(_, d)| *d).count());
        ("drwxr-xr-x", 2 + subdirs, 4096)
    } else {
        ("-rw-r--r--", 1, fs.read(path).map_or(0, str::len))
    };
    let owner = if fs.key(path).starts_with('/') && !fs.key(path).starts_with("/tmp/") { "root" } else { USER };
    // `Thu Jan  1 00:02:01 UTC 2026` → `Jan  1 00:02`.
    let ctime = fs.modified(path).ctime(false);
    let when = ctime.get(4..16).unwrap_or("");
    format!("{mode} {links} {owner} {owner} {size:>5} {when} {name}")
}

/// Names as `ls` prints them: one a line into a pipe, else in as many columns (filled down,
/// two spaces apart) as fit an 80-character terminal.
fn columns(names: &[&str], one: bool) -> String {
    if names.is_empty() {
        return String::new();
    }
    if one {
        return names.iter().map(|n| format!("{n}\n")).collect();
    }
    let width = |n: &str| n.chars().count();
    // No more columns than names of one character each fit (GNU ls's bound too).
    for cols in (1..=names.len().min(80 / 3 + 1)).rev() {
        let rows = names.len().div_ceil(cols);
        let cols = names.len().div_ceil(rows);
        let widths: Vec<usize> =
            (0..cols).map(|c| names.iter().skip(c * rows).take(rows).map(|n| width(n)).max().unwrap_or(0)).collect();
        let total: usize = widths.iter().sum::<usize>() + 2 * (cols - 1);
        if total > 80 && cols > 1 {
            continue;
        }
        let mut out = String::new();
        for r in 0..rows {
            let mut line = String::new();
            for (c, w) in widths.iter().enumerate() {
                if let Some(name) = names.get(c * rows + r) {
                    if !line.is_empty() {
                        line.push_str("  ");
                    }
                    let _ = write!(line, "{name:<w$}");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        return out;
    }
    String::new()
}

/// `rm [-f] [-r] FILE…`.
fn rm(args: &[String], fs: &mut Fs) -> Output {
    let (letters, operands) = match flags("rm", args, "frRiv") {
        Ok(f) => f,
        Err(e) => return fail(e, 1),
    };
    let force = letters.contains('f');
    let recursive = letters.contains('r') || letters.contains('R');
    if operands.is_empty() {
        return if force {
            Output::default()
        } else {
            fail("rm: missing operand\nTry 'rm --help' for more information.\n".into(), 1)
        };
    }
    let mut out = Output::default();
    for name in operands {
        if matches!(name.trim_end_matches('/').rsplit('/').next(), Some("." | "..")) {
            let _ = writeln!(out.stderr, "rm: refusing to remove '.' or '..' directory: skipping '{name}'");
            out.code = 1;
            continue;
        }
        match fs.remove(name, recursive) {
            Ok(()) => {}
            Err(FsError::NotFound) if force => {}
            Err(e) => {
                let _ = writeln!(out.stderr, "rm: cannot remove '{name}': {}", e.text());
                out.code = 1;
            }
        }
    }
    out
}

/// `mkdir [-p] DIR…`.
fn mkdir(args: &[String], fs: &mut Fs) -> Output {
    let (letters, operands) = match flags("mkdir", args, "pv") {
        Ok(f) => f,
        Err(e) => return fail(e, 1),
    };
    if operands.is_empty() {
        return fail("mkdir: missing operand\nTry 'mkdir --help' for more information.\n".into(), 1);
    }
    let mut out = Output::default();
    for name in operands {
        if let Err(e) = fs.mkdir(name, letters.contains('p')) {
            let _ = writeln!(out.stderr, "mkdir: cannot create directory ‘{name}’: {}", e.text());
            out.code = 1;
        }
    }
    out
}

/// `touch FILE…`: makes each file that does not exist, empty.
fn touch(args: &[String], fs: &mut Fs) -> Output {
    let (_, operands) = match flags("touch", args, "") {
        Ok(f) => f,
        Err(e) => return fail(e, 1),
    };
    if operands.is_empty() {
        return fail("touch: missing file operand\nTry 'touch --help' for more information.\n".into(), 1);
    }
    let mut out = Output::default();
    for name in operands {
        let result = if fs.exists(name) { Ok(()) } else { fs.write(name, "", true) };
        if let Err(e) = result {
            if e != FsError::IsADirectory {
                let _ = writeln!(out.stderr, "touch: cannot touch '{name}': {}", e.text());
                out.code = 1;
            }
        }
    }
    out
}

/// `cd [DIR]`: the home directory without one.
fn cd(args: &[String], fs: &mut Fs) -> Output {
    match args {
        [] => {
            fs.state.cwd = HOME.to_string();
            Output::default()
        }
        [dir] => match fs.cd(dir) {
            Ok(()) => Output::default(),
            Err(e) => fail(format!("sh: cd: {dir}: {}\n", e.text()), 1),
        },
        _ => fail("sh: cd: too many arguments\n".into(), 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::home::HomeState;
    use std::collections::BTreeMap;

    fn shell() -> (BTreeMap<String, String>, HomeState) {
        (BTreeMap::new(), HomeState::default())
    }

    fn run_in(files: &mut BTreeMap<String, String>, state: &mut HomeState, line: &str) -> Output {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        let mut fs = Fs { files, state, now: crate::sim::Time::ZERO };
        run(&words[0], &words[1..], None, &mut fs, true)
    }

    #[test]
    fn missing_files_are_reported_as_coreutils_reports_them() {
        let (mut files, mut state) = shell();
        let out = run_in(&mut files, &mut state, "cat x.yaml");
        assert_eq!((out.stderr.as_str(), out.code), ("cat: x.yaml: No such file or directory\n", 1));
        let out = run_in(&mut files, &mut state, "ls x");
        assert_eq!((out.stderr.as_str(), out.code), ("ls: cannot access 'x': No such file or directory\n", 2));
        let out = run_in(&mut files, &mut state, "rm x");
        assert_eq!(out.stderr, "rm: cannot remove 'x': No such file or directory\n");
        assert_eq!(run_in(&mut files, &mut state, "rm -f x").code, 0);
        assert_eq!(
            run_in(&mut files, &mut state, "rm").stderr,
            "rm: missing operand\nTry 'rm --help' for more information.\n"
        );
        let out = run_in(&mut files, &mut state, "cd nowhere");
        assert_eq!(out.stderr, "sh: cd: nowhere: No such file or directory\n");
    }

    #[test]
    fn ls_prints_columns_on_a_terminal_and_long_lines_with_l() {
        let (mut files, mut state) = shell();
        files.insert("web.yaml".into(), "x".repeat(120));
        files.insert("db.yaml".into(), String::new());
        run_in(&mut files, &mut state, "mkdir k8s");
        assert_eq!(run_in(&mut files, &mut state, "ls").stdout, "db.yaml  k8s  web.yaml\n");
        assert_eq!(
            run_in(&mut files, &mut state, "ls -l").stdout,
            "total 8\n\
             -rw-r--r-- 1 student student     0 Jan  1 00:00 db.yaml\n\
             drwxr-xr-x 2 student student  4096 Jan  1 00:00 k8s\n\
             -rw-r--r-- 1 student student   120 Jan  1 00:00 web.yaml\n"
        );
        assert_eq!(run_in(&mut files, &mut state, "pwd").stdout, "/home/student\n");
        files.insert("README.md".into(), String::new());
        assert_eq!(run_in(&mut files, &mut state, "ls").stdout, "db.yaml  k8s  README.md  web.yaml\n");
        assert_eq!(
            run_in(&mut files, &mut state, "ls -z").stderr,
            "ls: invalid option -- 'z'\nTry 'ls --help' for more information.\n"
        );
    }

    #[test]
    fn mkdir_refuses_an_existing_directory_without_p() {
        let (mut files, mut state) = shell();
        assert_eq!(run_in(&mut files, &mut state, "mkdir a").code, 0);
        assert_eq!(
            run_in(&mut files, &mut state, "mkdir a").stderr,
            "mkdir: cannot create directory ‘a’: File exists\n"
        );
        assert_eq!(run_in(&mut files, &mut state, "mkdir -p a/b/c").code, 0);
        assert_eq!(
            run_in(&mut files, &mut state, "mkdir x/y").stderr,
            "mkdir: cannot create directory ‘x/y’: No such file or directory\n"
        );
        assert_eq!(run_in(&mut files, &mut state, "rm a").stderr, "rm: cannot remove 'a': Is a directory\n");
        assert_eq!(run_in(&mut files, &mut state, "rm -rf a").code, 0);
        assert_eq!(
            run_in(&mut files, &mut state, "rm -rf .").stderr,
            "rm: refusing to remove '.' or '..' directory: skipping '.'\n"
        );
        assert_eq!(run_in(&mut files, &mut state, "ls").stdout, "");
    }
}
