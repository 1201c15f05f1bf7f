//! The shell around commands, the sandbox's and a container's `sh` alike: `$(...)`
//! substitution, `|` pipelines, and the text filters students reach for (`head`, `tail`, `grep`, `wc -l`, `sort`, `awk '{print $N}'`,
//! `cut`, `xargs`), so that `kubectl get pods -o name | head -1 | xargs kubectl delete` works.

use crate::util::sort::StableSort;

/// Splits a line at unquoted `|`.
pub fn split_pipeline(line: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') if chars.get(i + 1) == Some(&'(') => {
                depth += 1;
                cur.push(c);
                cur.push('(');
                i += 2;
                continue;
            }
            (None, ')') if depth > 0 => depth -= 1,
            (None, '|') if depth == 0 && chars.get(i + 1) != Some(&'|') => {
                parts.push(std::mem::take(&mut cur).trim().to_string());
                i += 1;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        i += 1;
    }
    parts.push(cur.trim().to_string());
    parts
}

/// Finds the first `$(...)` outside single quotes: (start, end exclusive, inner command).
pub fn find_substitution(line: &str) -> Option<(usize, usize, String)> {
    let bytes = line.as_bytes();
    let mut in_single = false;
    let mut i = 0;
    while i + 1 < bytes.len() {
        match bytes[i] {
            b'\'' => in_single = !in_single,
            b'$' if !in_single && bytes[i + 1] == b'(' => {
                let mut depth = 1;
                let mut j = i + 2;
                while j < bytes.len() {
                    match bytes[j] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some((i, j + 1, line[i + 2..j].to_string()));
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                return None;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `line` holds `pattern`: text as written, anchored at the start by `^` and at the
/// end by `$` (the part of grep's regular expressions that commands use most).
fn line_matches(line: &str, pattern: &str) -> bool {
    let (start, rest) = match pattern.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, pattern),
    };
    let (end, text) = match rest.strip_suffix('$') {
        Some(text) => (true, text),
        None => (false, rest),
    };
    match (start, end) {
        (true, true) => line == text,
        (true, false) => line.starts_with(text),
        (false, true) => line.ends_with(text),
        (false, false) => line.contains(text),
    }
}

/// Applies one filter stage to `input`. `Err` is the shell's complaint.
pub fn filter(words: &[String], input: &str) -> Result<String, String> {
    let Some(program) = words.first() else { return Ok(input.to_string()) };
    let lines: Vec<&str> = input.lines().collect();
    let count_arg = |default: usize| -> usize {
        let mut n = default;
        let mut iter = words[1..].iter();
        while let Some(w) = iter.next() {
            if w == "-n" {
                n = iter.next().and_then(|v| v.parse().ok()).unwrap_or(n);
            } else if let Some(v) = w.strip_prefix("-n").or_else(|| w.strip_prefix('-')) {
                n = v.parse().unwrap_or(n);
            }
        }
        n
    };
    let join = |ls: Vec<&str>| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    match program.as_str() {
        "head" => Ok(join(lines.into_iter().take(count_arg(10)).collect())),
        "tail" => {
            let n = count_arg(10);
            Ok(join(lines[lines.len().saturating_sub(n)..].to_vec()))
        }
        "grep" => {
            let (mut invert, mut ignore_case, mut count) = (false, false, false);
            let mut max: Option<usize> = None;
            let mut after = 0usize;
            // `-e P` may come several times: a line matching any of them matches.
            let mut patterns: Vec<&String> = Vec::new();
            let mut pattern: Option<&String> = None;
            let mut iter = words[1..].iter();
            while let Some(w) = iter.next() {
                if w == "-e" {
                    patterns.extend(iter.next());
                } else if let Some(n) = w.strip_prefix("-m") {
                    // `-m N` or `-mN`: stop after N matching lines.
                    let n = if n.is_empty() { iter.next().map(String::as_str).unwrap_or("") } else { n };
                    max = Some(n.parse().map_err(|_| format!("grep: invalid max count: '{n}'"))?);
                } else if let Some(n) = w.strip_prefix("-A") {
                    // `-A N`: N lines of context after each match.
                    let n = if n.is_empty() { iter.next().map(String::as_str).unwrap_or("") } else { n };
                    after = n.parse().map_err(|_| format!("grep: {n}: invalid context length argument"))?;
                } else if let Some(flags) = w.strip_prefix('-').filter(|f| !f.is_empty()) {
                    for f in flags.chars() {
                        match f {
                            'v' => invert = true,
                            'i' => ignore_case = true,
                            'c' => count = true,
                            'E' | 'F' => {}
                            other => {
                                return Err(format!(
                                    "grep: option -{other} is not supported here (only -v -i -c -m -A -e -E)"
                                ));
                            }
                        }
                    }
                } else if pattern.is_none() {
                    pattern = Some(w);
                }
            }
            if patterns.is_empty() {
                let Some(pattern) = pattern else {
                    return Err("usage: grep [-vic] PATTERN".into());
                };
                patterns.push(pattern);
            }
            let matches = |l: &str| {
                patterns.iter().any(|p| {
                    if ignore_case { line_matches(&l.to_lowercase(), &p.to_lowercase()) } else { line_matches(l, p) }
                })
            };
            let hits: Vec<usize> =
                (0..lines.len()).filter(|&i| matches(lines[i]) != invert).take(max.unwrap_or(usize::MAX)).collect();
            if count {
                return Ok(format!("{}\n", hits.len()));
            }
            // Each match with its `-A` lines after it; groups that do not touch are set
            // apart by `--`, as GNU grep does.
            let mut out: Vec<&str> = Vec::new();
            let mut shown_to: Option<usize> = None;
            for &i in &hits {
                let start = shown_to.map_or(i, |end| i.max(end + 1));
                if after > 0 && shown_to.is_some_and(|end| i > end + 1) {
                    out.push("--");
                }
                let end = (i + after).min(lines.len() - 1);
                if start <= end {
                    out.extend(&lines[start..=end]);
                }
                shown_to = Some(shown_to.map_or(end, |e| e.max(end)));
            }
            Ok(join(out))
        }
        "wc" => {
            // Lines count newlines, as wc does (a last line without one is not counted).
            let counts =
                [('l', input.matches('\n').count()), ('w', input.split_whitespace().count()), ('c', input.len())];
            let asked: Vec<usize> = counts
                .iter()
                .filter(|(flag, _)| words[1..].iter().any(|w| w.starts_with('-') && w.contains(*flag)))
                .map(|(_, n)| *n)
                .collect();
            Ok(match asked.as_slice() {
                [] => format!("{:>7} {:>7} {:>7}\n", counts[0].1, counts[1].1, counts[2].1),
                [one] => format!("{one}\n"),
                many => many.iter().map(|n| format!("{n:>7}")).collect::<Vec<_>>().join(" ") + "\n",
            })
        }
        // BusyBox's and util-linux's `rev`: each line's characters in reverse order.
        "rev" => Ok(lines.iter().map(|l| l.chars().rev().collect::<String>() + "\n").collect()),
        "sort" => {
            let mut sorted = lines;
            sorted.stable_sort();
            if words.iter().any(|w| w == "-r") {
                sorted.reverse();
            }
            Ok(join(sorted))
        }
        "uniq" => {
            // Runs of equal lines, each with its length.
            let mut runs: Vec<(&str, usize)> = Vec::new();
            for l in lines {
                match runs.last_mut() {
                    Some((last, n)) if *last == l => *n += 1,
                    _ => runs.push((l, 1)),
                }
            }
            Ok(if words.iter().any(|w| w == "-c") {
                runs.iter().map(|(l, n)| format!("{n:>7} {l}\n")).collect()
            } else {
                join(runs.into_iter().map(|(l, _)| l).collect())
            })
        }
        "awk" => {
            let program = words.get(1).map(String::as_str).unwrap_or("");
            let field: Option<usize> = program
                .trim_matches(|c| c == '{' || c == '}' || c == ' ')
                .strip_prefix("print $")
                .and_then(|n| n.trim().parse().ok());
            let Some(field) = field else { return Err("awk: only '{print $N}' is supported here".to_string()) };
            Ok(lines
                .iter()
                .map(|l| {
                    let v = if field == 0 {
                        l.to_string()
                    } else {
                        l.split_whitespace().nth(field - 1).unwrap_or("").to_string()
                    };
                    v + "\n"
                })
                .collect())
        }
        "cut" => {
            let mut delim = '\t';
            let mut field = 1usize;
            let mut chars: Option<(usize, usize)> = None;
            let mut iter = words[1..].iter();
            while let Some(w) = iter.next() {
                if let Some(range) = w.strip_prefix("-c") {
                    // `-c N`, `-cN-M`, `-c-M`, `-cN-`: characters N to M, counted from 1.
                    let range = if range.is_empty() { iter.next().map(String::as_str).unwrap_or("") } else { range };
                    let bad = || format!("cut: invalid byte or character range: '{range}'");
                    let number = |t: &str, default: usize| {
                        if t.is_empty() { Ok(default) } else { t.parse::<usize>().map_err(|_| bad()) }
                    };
                    let (from, to) = match range.split_once('-') {
                        Some((a, b)) => (number(a, 1)?, number(b, usize::MAX)?),
                        None => {
                            let n = number(range, 0)?;
                            (n, n)
                        }
                    };
                    if from == 0 {
                        return Err("cut: fields and positions are numbered from 1".into());
                    }
                    chars = Some((from, to));
                    continue;
                }
                if let Some(d) = w.strip_prefix("-d") {
                    delim = if d.is_empty() {
                        iter.next().and_then(|x| x.chars().next()).unwrap_or('\t')
                    } else {
                        d.chars().next().unwrap_or('\t')
                    };
                } else if let Some(f) = w.strip_prefix("-f") {
                    let f = if f.is_empty() { iter.next().map(String::as_str).unwrap_or("1") } else { f };
                    field = f.parse().unwrap_or(1);
                }
            }
            if let Some((from, to)) = chars {
                return Ok(lines
                    .iter()
                    .map(|l| format!("{}\n", l.chars().skip(from - 1).take(to - from + 1).collect::<String>()))
                    .collect());
            }
            Ok(lines
                .iter()
                .map(|l| format!("{}\n", l.split(delim).nth(field.saturating_sub(1)).unwrap_or("")))
                .collect())
        }
        "cat" => Ok(input.to_string()),
        // tr SET1 SET2 (ranges such as a-z), or tr -d SET.
        "tr" => {
            let sets: Vec<Vec<char>> = words[1..].iter().filter(|w| !w.starts_with('-')).map(|w| char_set(w)).collect();
            if words[1..].iter().any(|w| w == "-d") {
                let gone = sets.first().cloned().unwrap_or_default();
                return Ok(input.chars().filter(|c| !gone.contains(c)).collect());
            }
            let (Some(from), Some(to)) = (sets.first(), sets.get(1)) else {
                return Err("tr: missing operand".into());
            };
            let map = |c: char| match from.iter().position(|f| *f == c) {
                Some(i) => to.get(i).or(to.last()).copied().unwrap_or(c),
                None => c,
            };
            Ok(input.chars().map(map).collect())
        }
        "base64" => {
            if words[1..].iter().any(|w| matches!(w.as_str(), "-d" | "--decode")) {
                let bytes = crate::util::base64::decode(input).ok_or_else(|| "base64: invalid input".to_string())?;
                Ok(String::from_utf8_lossy(&bytes).into_owned())
            } else {
                // GNU base64 wraps its output at 76 columns.
                let encoded = crate::util::base64::encode(input.as_bytes());
                let wrapped: Vec<String> =
                    encoded.as_bytes().chunks(76).map(|c| String::from_utf8_lossy(c).into_owned()).collect();
                Ok(join(wrapped.iter().map(String::as_str).collect()))
            }
        }
        other => Err(format!("sh: {other}: command not found")),
    }
}

/// A `tr` set: its characters, with ranges (`a-z`) spelled out and `\n` a line break.
fn char_set(spec: &str) -> Vec<char> {
    let chars: Vec<char> = spec.replace("\\n", "\n").chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match (chars.get(i + 1), chars.get(i + 2)) {
            (Some('-'), Some(&end)) if chars[i] <= end => {
                out.extend(chars[i]..=end);
                i += 3;
            }
            _ => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tr_maps_ranges_and_deletes_sets() {
        assert_eq!(filter(&w("tr a-z A-Z"), "hello\n").unwrap(), "HELLO\n");
        assert_eq!(filter(&w("tr -d l"), "hello").unwrap(), "heo");
        assert_eq!(filter(&w("tr ',' '\\n'"), "a,b").unwrap(), "a\nb");
    }

    fn w(s: &str) -> Vec<String> {
        crate::util::command_line::split_words(s).unwrap()
    }

    #[test]
    fn base64_decodes_what_a_secret_holds_and_encodes_with_a_newline() {
        assert_eq!(filter(&w("base64 --decode"), "UyFCXCpkJHpEc2I9").unwrap(), "S!B\\*d$zDsb=");
        assert_eq!(filter(&w("base64 -d"), "YWRtaW4=\n").unwrap(), "admin");
        assert_eq!(filter(&w("base64"), "admin").unwrap(), "YWRtaW4=\n");
        assert_eq!(filter(&w("base64 -d"), "not base64!").unwrap_err(), "base64: invalid input");
    }

    #[test]
    fn pipelines_split_at_unquoted_bars_only() {
        assert_eq!(split_pipeline("a | b 'x|y' | c"), ["a", "b 'x|y'", "c"]);
        assert_eq!(split_pipeline("a $(b | c) | d"), ["a $(b | c)", "d"]);
    }

    #[test]
    fn substitutions_are_found_with_nested_parens() {
        let (s, e, inner) = find_substitution("kubectl delete $(kubectl get pods -o name | head -1)").unwrap();
        assert_eq!(inner, "kubectl get pods -o name | head -1");
        assert_eq!((s, e), (15, 52));
    }

    #[test]
    fn filters_do_what_the_shell_would() {
        let text = "NAME\nweb-1\nweb-2\ndb-1\n";
        assert_eq!(filter(&w("head -2"), text).unwrap(), "NAME\nweb-1\n");
        assert_eq!(filter(&w("head -n 1"), text).unwrap(), "NAME\n");
        assert_eq!(filter(&w("tail -1"), text).unwrap(), "db-1\n");
        assert_eq!(filter(&w("grep web"), text).unwrap(), "web-1\nweb-2\n");
        assert_eq!(filter(&w("grep -v web"), text).unwrap(), "NAME\ndb-1\n");
        assert_eq!(filter(&w("grep -m1 web"), text).unwrap(), "web-1\n");
        assert_eq!(filter(&w("grep -e db -e NAME"), text).unwrap(), "NAME\ndb-1\n");
        assert_eq!(filter(&w("grep -A1 web-1"), text).unwrap(), "web-1\nweb-2\n");
        assert_eq!(filter(&w("grep -A 1 -e NAME -e db"), text).unwrap(), "NAME\nweb-1\n--\ndb-1\n");
        assert_eq!(filter(&w("grep -A2 web"), text).unwrap(), "web-1\nweb-2\ndb-1\n");
        assert_eq!(filter(&w("grep -m 1 -v web"), text).unwrap(), "NAME\n");
        assert_eq!(filter(&w("uniq -c"), "a\na\nb\na\n").unwrap(), "      2 a\n      1 b\n      1 a\n");
        assert_eq!(filter(&w("uniq"), "a\na\nb\n").unwrap(), "a\nb\n");
        assert_eq!(filter(&w("cut -c1-4"), "3.14159\nab\n").unwrap(), "3.14\nab\n");
        assert_eq!(filter(&w("cut -c 3-"), "3.14159\n").unwrap(), "14159\n");
        assert_eq!(filter(&w("cut -c2"), "xyz\n").unwrap(), "y\n");
        assert!(filter(&w("cut -c0-2"), "xyz\n").is_err());
        assert_eq!(filter(&w("wc -l"), text).unwrap(), "4\n");
        assert_eq!(filter(&w("awk '{print $1}'"), "a b\nc d\n").unwrap(), "a\nc\n");
        assert_eq!(filter(&w("cut -d / -f 2"), "pod/web\n").unwrap(), "web\n");
        assert!(filter(&w("nope"), text).is_err());
    }
}
