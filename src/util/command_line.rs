//! Command lines as a shell reads them: one per line, heredoc bodies attached, words split at
//! spaces with quotes grouping and backslashes escaping, and quoted again for display.

/// One command line, with its heredoc body if it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub line: String,
    pub heredoc: Option<(String, String)>,
}

impl Command {
    pub fn new(line: &str) -> Command {
        Command { line: line.to_string(), heredoc: None }
    }

    /// The command as a transcript shows it: the line, then the heredoc and its terminator.
    pub fn display(&self) -> String {
        match &self.heredoc {
            Some((word, body)) => format!("{}\n{body}{word}", self.line),
            None => self.line.clone(),
        }
    }
}

/// Splits a script into commands: one per line, heredoc bodies attached, blank lines dropped.
pub fn parse_script(script: &str) -> Vec<Command> {
    let mut commands = Vec::new();
    let mut lines = script.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            continue;
        }
        let line = line.strip_prefix("$ ").unwrap_or(line);
        let heredoc = heredoc_word(line).map(|word| {
            let body = heredoc_body(&mut lines, &word);
            (word, body)
        });
        commands.push(Command { line: line.to_string(), heredoc });
    }
    commands
}

/// The commands of a transcript: lines starting with `$ ` (with their heredocs); every other
/// line is output and is skipped.
pub fn parse_transcript(transcript: &str) -> Vec<Command> {
    let mut commands = Vec::new();
    let mut lines = transcript.lines();
    while let Some(line) = lines.next() {
        let Some(line) = line.strip_prefix("$ ") else { continue };
        let heredoc = heredoc_word(line).map(|word| {
            let body = heredoc_body(&mut lines, &word);
            (word, body)
        });
        commands.push(Command { line: line.to_string(), heredoc });
    }
    commands
}

/// The lines up to the heredoc's terminator `word` (which is consumed), each with its newline.
pub fn heredoc_body<'a>(lines: &mut impl Iterator<Item = &'a str>, word: &str) -> String {
    let mut body = String::new();
    for l in lines.by_ref() {
        if l.trim_end() == word {
            break;
        }
        body.push_str(l);
        body.push('\n');
    }
    body
}

/// The terminator of `<<EOF` / `<<'EOF'` / `<<-EOF` in a line, if any (`cat <<'EOF' > f`:
/// `EOF`).
pub fn heredoc_word(line: &str) -> Option<String> {
    let pos = line.find("<<")?;
    let rest = line[pos + 2..].trim_start_matches('-').trim_start();
    let token = rest.split(|c: char| c.is_whitespace() || "<>|;&".contains(c)).next()?;
    let word: String = token.chars().filter(|c| *c != '\'' && *c != '"').collect();
    (!word.is_empty()).then_some(word)
}

/// Quotes a word for a command line only when it needs it.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Shell-style word splitting: spaces separate, quotes group, backslash escapes.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            // In double quotes a backslash escapes only `$`, a backquote, `"`, `\` and a line
            // break; before anything else it stays (`"a\nb"` is `a\nb`, for printf to read).
            (Some('"'), '\\') => match chars.next() {
                Some('\n') => {}
                Some(n @ ('$' | '`' | '"' | '\\')) => cur.push(n),
                Some(n) => {
                    cur.push('\\');
                    cur.push(n);
                }
                None => cur.push('\\'),
            },
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    in_word = true;
                }
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
    if quote.is_some() {
        return Err("unexpected EOF while looking for matching quote".into());
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heredocs_word_ends_where_a_redirection_begins_and_loses_its_quotes() {
        assert_eq!(heredoc_word("cat <<'EOF' > deployment.yaml").as_deref(), Some("EOF"));
        assert_eq!(heredoc_word("cat <<EOF>web.yaml").as_deref(), Some("EOF"));
        assert_eq!(heredoc_word("kubectl apply -f - << \"END\"").as_deref(), Some("END"));
        assert_eq!(heredoc_word("cat > f <<-EOF").as_deref(), Some("EOF"));
        assert_eq!(heredoc_word("echo <<"), None);
    }
}
