//! The terminal's scrollback: the lines a command and its output leave, kept bounded.

use crate::kubectl::Output;

/// Lines the scrollback keeps; older ones go.
pub const SCROLLBACK: usize = 400;

/// One line of the terminal's scrollback.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Line {
    Command(String),
    /// A line typed at a container shell's prompt, shown after that prompt (`/ # hostname`).
    Typed(String),
    Out(String),
    Err(String),
}

/// Appends what a command printed to the scrollback (warnings, output, errors), keeping it bounded.
pub fn push_output(sb: &mut Vec<Line>, out: &Output) {
    if !out.warnings.is_empty() {
        sb.push(Line::Err(out.warnings.trim_end().to_string()));
    }
    if !out.stdout.is_empty() {
        sb.push(Line::Out(out.stdout.trim_end().to_string()));
    }
    if !out.stderr.is_empty() {
        sb.push(Line::Err(out.stderr.trim_end().to_string()));
    }
    trim(sb);
}

/// Drops the oldest lines beyond `SCROLLBACK`.
pub fn trim(sb: &mut Vec<Line>) {
    let excess = sb.len().saturating_sub(SCROLLBACK);
    sb.drain(..excess);
}

/// An object `kubectl edit` opened in the editor: what was asked for, and the text as opened
/// (what a save compares the editor's text with).
#[derive(Debug, PartialEq, Eq)]
pub struct Editing {
    pub what: String,
    pub opened: String,
}

/// `kubectl edit TYPE NAME …` as the GET that fetches what the editor opens, or None for
/// any other command.
pub fn edit_as_get(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["kubectl" | "k", "edit", rest @ ..] if !rest.is_empty() && !line.contains('|') => {
            Some(format!("kubectl get {} -o yaml", rest.join(" ")))
        }
        _ => None,
    }
}
