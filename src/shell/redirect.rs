//! A shell's redirections: `> file`, `>> file`, `2> file`, `2>&1`, `&> file` and `< file`,
//! read out of a command line (outside quotes) before its words are split, as sh does.
//! A heredoc's `<<WORD` is taken out too: its body arrives as the command's standard input.

/// Where one redirection sends (or takes) a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A file, by the path typed.
    File(String),
    /// Another descriptor (`2>&1`: 1).
    Fd(u8),
}

/// One redirection: descriptor `fd` (0 input, 1 output, 2 errors; `&>` is both 1 and 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    pub fd: u8,
    pub append: bool,
    pub target: Target,
    /// `&>`: output and errors together.
    pub both: bool,
}

/// The line without its redirections, and the redirections in the order written.
/// Fails as sh does when an operator has no word after it.
pub fn split(line: &str) -> Result<(String, Vec<Redirect>), String> {
    let chars: Vec<char> = line.chars().collect();
    let mut text = String::new();
    let mut redirects = Vec::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if c == '\\' && q == '"' && i + 1 < chars.len() {
                text.push(c);
                i += 1;
                text.push(chars[i]);
                i += 1;
                continue;
            }
            text.push(c);
            i += 1;
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                text.push(c);
                i += 1;
            }
            '\\' => {
                text.push(c);
                if let Some(&n) = chars.get(i + 1) {
                    text.push(n);
                }
                i += 2;
            }
            '<' if chars.get(i + 1) == Some(&'<') => {
                // A heredoc: `<<WORD`, `<<-WORD`, `<< 'WORD'`; its body is the stdin.
                i += 2;
                if chars.get(i) == Some(&'-') {
                    i += 1;
                }
                let (_, next) = word(&chars, i)?;
                i = next;
            }
            '<' | '>' => {
                // A descriptor number directly before the operator, starting a word.
                let mut fd = if c == '<' { 0 } else { 1 };
                let mut both = false;
                if let Some(last) = text.chars().last() {
                    let at = text.chars().count() - 1;
                    let text_chars: Vec<char> = text.chars().collect();
                    let begins = at == 0 || text_chars[at - 1].is_whitespace();
                    if begins && (last == '1' || last == '2' || last == '0') {
                        fd = last as u8 - b'0';
                        text.pop();
                    } else if begins && last == '&' && c == '>' {
                        both = true;
                        text.pop();
                    }
                }
                i += 1;
                let mut append = false;
                if c == '>' && chars.get(i) == Some(&'>') {
                    append = true;
                    i += 1;
                }
                if chars.get(i) == Some(&'&') {
                    if let Some(d) = chars.get(i + 1).and_then(|d| d.to_digit(10)) {
                        redirects.push(Redirect { fd, append, target: Target::Fd(d as u8), both });
                        i += 2;
                        continue;
                    }
                }
                let (target, next) = word(&chars, i)?;
                i = next;
                redirects.push(Redirect { fd, append, target: Target::File(target), both });
                text.push(' ');
            }
            _ => {
                text.push(c);
                i += 1;
            }
        }
    }
    Ok((text.trim_end().to_string(), redirects))
}

/// The word from `i` (after spaces), with its quotes removed, and where it ends.
fn word(chars: &[char], mut i: usize) -> Result<(String, usize), String> {
    while chars.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    let mut out = String::new();
    let mut quote: Option<char> = None;
    while let Some(&c) = chars.get(i) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => {
                i += 1;
                if let Some(&n) = chars.get(i) {
                    out.push(n);
                }
            }
            (None, c) if c.is_whitespace() || "<>|;&".contains(c) => break,
            (None, c) => out.push(c),
        }
        i += 1;
    }
    if out.is_empty() {
        let token = match chars.get(i) {
            None => "newline".to_string(),
            Some(c) => c.to_string(),
        };
        return Err(format!("sh: syntax error near unexpected token `{token}'"));
    }
    Ok((out, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(fd: u8, append: bool, path: &str) -> Redirect {
        Redirect { fd, append, target: Target::File(path.into()), both: false }
    }

    #[test]
    fn output_redirections_leave_the_line_and_keep_their_order() {
        let (text, r) = split("kubectl get pod web -o yaml > pod.yaml 2>&1").unwrap();
        assert_eq!(text, "kubectl get pod web -o yaml");
        assert_eq!(
            r,
            vec![file(1, false, "pod.yaml"), Redirect { fd: 2, append: false, target: Target::Fd(1), both: false }]
        );
        let (text, r) = split("echo hi >>notes.txt").unwrap();
        assert_eq!((text.as_str(), r), ("echo hi", vec![file(1, true, "notes.txt")]));
    }

    #[test]
    fn a_heredoc_marker_goes_and_a_quoted_angle_bracket_stays() {
        let (text, r) = split("cat <<'EOF' > deployment.yaml").unwrap();
        assert_eq!((text.as_str(), r), ("cat", vec![file(1, false, "deployment.yaml")]));
        let (text, r) = split("kubectl apply -f - << EOF").unwrap();
        assert_eq!((text.as_str(), r.len()), ("kubectl apply -f -", 0));
        let (text, r) = split("grep '>' x \"a>b\"").unwrap();
        assert_eq!((text.as_str(), r.len()), ("grep '>' x \"a>b\"", 0));
    }

    #[test]
    fn errors_input_and_both_streams_have_their_descriptors() {
        let (text, r) = split("kubectl get pods 2>/dev/null").unwrap();
        assert_eq!((text.as_str(), r), ("kubectl get pods", vec![file(2, false, "/dev/null")]));
        let (_, r) = split("kubectl apply -f - < web.yaml").unwrap();
        assert_eq!(r, vec![file(0, false, "web.yaml")]);
        let (_, r) = split("kubectl get pods &> all.txt").unwrap();
        assert_eq!(r, vec![Redirect { fd: 1, append: false, target: Target::File("all.txt".into()), both: true }]);
        // A digit inside a word is the word's, not a descriptor.
        let (text, _) = split("echo a2>x").unwrap();
        assert_eq!(text, "echo a2");
    }

    #[test]
    fn an_operator_without_a_word_is_a_syntax_error() {
        assert_eq!(split("echo hi >").unwrap_err(), "sh: syntax error near unexpected token `newline'");
        assert_eq!(split("echo hi > |").unwrap_err(), "sh: syntax error near unexpected token `|'");
    }
}
