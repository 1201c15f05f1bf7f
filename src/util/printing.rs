//! What `echo` and `printf` write: echo's `-n` (no newline) and `-e` (backslash escapes),
//! printf's format with its escapes and `%s`/`%d` conversions (the format used again while
//! arguments remain), as BusyBox and coreutils print them.

/// `echo ARGS…`: the words joined by spaces, then a newline unless `-n`.
pub fn echo(args: &[String]) -> String {
    let mut newline = true;
    let mut escapes = false;
    let mut words = args;
    while let Some(flag) = words.first().and_then(|w| w.strip_prefix('-')) {
        if flag.is_empty() || !flag.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        newline &= !flag.contains('n');
        escapes = flag.contains('e');
        words = &words[1..];
    }
    let text = words.join(" ");
    let mut out = if escapes { unescape(&text) } else { text };
    if newline {
        out.push('\n');
    }
    out
}

/// `printf FORMAT ARGS…`.
pub fn printf(args: &[String]) -> String {
    let Some((format, mut rest)) = args.split_first() else { return String::new() };
    let format = unescape(format);
    let mut out = String::new();
    loop {
        let mut used = 0;
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('s') => {
                    out.push_str(rest.get(used).map(String::as_str).unwrap_or(""));
                    used += 1;
                }
                Some('d' | 'i') => {
                    let n: i64 = rest.get(used).and_then(|a| a.trim().parse().ok()).unwrap_or(0);
                    out.push_str(&n.to_string());
                    used += 1;
                }
                Some(other) => {
                    out.push('%');
                    out.push(other);
                }
                None => out.push('%'),
            }
        }
        // The format is used again for arguments it did not take.
        if used == 0 || used >= rest.len() {
            break;
        }
        rest = &rest[used..];
    }
    out
}

/// Backslash escapes: `\n`, `\t`, `\\`, `\r`, `\a` kept out; others stay as written.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Output as log lines: a last line without its newline still counts.
pub fn lines(output: &str) -> Vec<String> {
    let body = output.strip_suffix('\n').unwrap_or(output);
    if output.is_empty() {
        return Vec::new();
    }
    body.split('\n').map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn echo_takes_n_and_e_flags_and_prints_other_dashes_as_words() {
        assert_eq!(echo(&words(&["-en", "\\n"])), "\n");
        assert_eq!(echo(&words(&["-n", "hi"])), "hi");
        assert_eq!(echo(&words(&["a\\tb"])), "a\\tb\n");
        assert_eq!(echo(&words(&["-x", "y"])), "-x y\n");
    }

    #[test]
    fn printf_interprets_escapes_and_reuses_its_format_for_remaining_arguments() {
        assert_eq!(printf(&words(&["A=https://x\\n"])), "A=https://x\n");
        assert_eq!(printf(&words(&["%s-%d\\n", "a", "1", "b", "2"])), "a-1\nb-2\n");
        assert_eq!(printf(&words(&["100%%\\n"])), "100%\n");
        assert_eq!(lines("\n"), vec![String::new()]);
        assert_eq!(lines("a\nb"), vec!["a".to_string(), "b".to_string()]);
    }
}
