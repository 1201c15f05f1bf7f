//! Syntax highlighting for the manifest editor: YAML text cut into classed spans, line by line,
//! in one pass (keys, strings, numbers, booleans and null, comments, `---`, list dashes).
//!
//! It only colours: it never rejects text (the reader in `crate::yaml` does that), and the
//! spans of a line always join back into exactly that line.

use crate::yaml::resolve_plain;
use serde_json::Value;

/// What a span of text is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Indentation, spaces and anything not worth a colour.
    Plain,
    /// A mapping key (`name` in `name: web`).
    Key,
    /// A string: quoted, plain (`nginx:1.25`) or a block scalar's lines.
    Str,
    /// An integer or a float.
    Num,
    /// `true`, `false`, `null`, `~`.
    Lit,
    Comment,
    /// `---` and `...`, a document's start and end.
    Separator,
    /// The `-` of a list item.
    Dash,
    /// `:`, `|`, `>`, `?` and flow brackets and commas.
    Punct,
    /// Anchors, aliases, tags and directives (`&a`, `*a`, `!!str`, `%YAML`).
    Meta,
}

impl Class {
    /// The CSS class the page styles this span with (none for plain text).
    pub fn css(self) -> &'static str {
        match self {
            Class::Plain => "",
            Class::Key => "tk-key",
            Class::Str => "tk-str",
            Class::Num => "tk-num",
            Class::Lit => "tk-lit",
            Class::Comment => "tk-com",
            Class::Separator => "tk-sep",
            Class::Dash => "tk-dash",
            Class::Punct => "tk-punct",
            Class::Meta => "tk-meta",
        }
    }
}

/// A run of one line's text with its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span<'a> {
    pub class: Class,
    pub text: &'a str,
}

/// The spans of every line of `text` (lines split at `\n`; a final newline gives a last,
/// empty line, as a text area shows one).
pub fn highlight(text: &str) -> Vec<Vec<Span<'_>>> {
    let mut state = State::default();
    text.split('\n').map(|line| state.line(line)).collect()
}

/// What carries over from one line to the next.
#[derive(Default)]
struct State {
    /// Inside a block scalar (`|`, `>`) whose key or dash sits at this column.
    block: Option<usize>,
    /// Inside a quoted string that did not close on its line.
    quote: Option<u8>,
    /// Open flow brackets (`[`, `{`) not yet closed.
    flow: usize,
}

impl State {
    fn line<'a>(&mut self, line: &'a str) -> Vec<Span<'a>> {
        let mut lx = Lexer { s: line, pos: 0, spans: Vec::new() };
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(parent) = self.block {
            if line.trim().is_empty() || indent > parent {
                lx.take(indent, Class::Plain);
                lx.rest(Class::Str);
                return lx.spans;
            }
            self.block = None;
        }
        if let Some(q) = self.quote {
            match closing_quote(line, 0, q) {
                Some(end) => {
                    self.quote = None;
                    lx.take(end, Class::Str);
                    lx.after_value();
                }
                None => lx.rest(Class::Str),
            }
            return lx.spans;
        }
        if self.flow > 0 {
            lx.flow(self);
            return lx.spans;
        }
        if line.starts_with('%') {
            lx.rest(Class::Meta);
            return lx.spans;
        }
        for marker in ["---", "..."] {
            if line.starts_with(marker) && line[3..].chars().next().is_none_or(|c| c == ' ' || c == '\t') {
                lx.take(3, Class::Separator);
                lx.spaces();
                lx.value(self, 0);
                return lx.spans;
            }
        }
        lx.take(indent, Class::Plain);
        lx.node(self);
        lx.spans
    }
}

struct Lexer<'a> {
    s: &'a str,
    pos: usize,
    spans: Vec<Span<'a>>,
}

impl<'a> Lexer<'a> {
    fn rest_str(&self) -> &'a str {
        &self.s[self.pos..]
    }

    /// Takes `len` more bytes as one span (nothing if empty).
    fn take(&mut self, len: usize, class: Class) {
        let end = (self.pos + len).min(self.s.len());
        if end > self.pos {
            self.spans.push(Span { class, text: &self.s[self.pos..end] });
            self.pos = end;
        }
    }

    fn rest(&mut self, class: Class) {
        self.take(self.s.len() - self.pos, class);
    }

    fn spaces(&mut self) {
        let r = self.rest_str();
        self.take(r.len() - r.trim_start_matches([' ', '\t']).len(), Class::Plain);
    }

    /// A block node on a line: list dashes, then a `key: value` or a lone value.
    fn node(&mut self, state: &mut State) {
        loop {
            let r = self.rest_str();
            if r == "-" || r.starts_with("- ") || r.starts_with("-\t") {
                let column = self.pos;
                self.take(1, Class::Dash);
                self.spaces();
                if self.pos == self.s.len() {
                    return;
                }
                if !self.rest_str().starts_with('-') {
                    return self.key_or_value(state, column);
                }
            } else {
                let column = self.pos;
                return self.key_or_value(state, column);
            }
        }
    }

    fn key_or_value(&mut self, state: &mut State, column: usize) {
        let r = self.rest_str();
        if r.starts_with('#') {
            return self.rest(Class::Comment);
        }
        if r == "?" || r.starts_with("? ") {
            self.take(1, Class::Punct);
            self.spaces();
            return self.value(state, column);
        }
        match key_length(r) {
            Some(len) => {
                let key_column = self.pos;
                self.take(len, Class::Key);
                self.spaces();
                self.take(1, Class::Punct);
                self.spaces();
                self.value(state, key_column);
            }
            None => self.value(state, column),
        }
    }

    /// A value after `key:`, `- ` or `---`; `column` is where its key or dash sits.
    fn value(&mut self, state: &mut State, column: usize) {
        // Anchors, aliases and tags come first.
        while matches!(self.rest_str().as_bytes().first(), Some(b'&' | b'*' | b'!')) {
            let r = self.rest_str();
            let len = r.find([' ', '\t']).unwrap_or(r.len());
            self.take(len, Class::Meta);
            self.spaces();
        }
        let r = self.rest_str();
        match r.as_bytes().first() {
            None => {}
            Some(b'#') => self.rest(Class::Comment),
            Some(b'|' | b'>') => {
                let len = 1 + r[1..].len()
                    - r[1..].trim_start_matches(['+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']).len();
                self.take(len, Class::Punct);
                self.after_value();
                state.block = Some(column);
            }
            Some(&q @ (b'"' | b'\'')) => match closing_quote(r, 1, q) {
                Some(end) => {
                    self.take(end, Class::Str);
                    self.after_value();
                }
                None => {
                    self.rest(Class::Str);
                    state.quote = Some(q);
                }
            },
            Some(b'[' | b'{') => self.flow(state),
            Some(_) => {
                let len = plain_length(r, false);
                let class = scalar_class(&r[..len]);
                self.take(len, class);
                self.after_value();
            }
        }
    }

    /// What may follow a value on its line: spaces and a comment (anything else stays plain).
    fn after_value(&mut self) {
        self.spaces();
        if self.rest_str().starts_with('#') {
            self.rest(Class::Comment);
        } else {
            self.rest(Class::Plain);
        }
    }

    /// Inside `[...]` or `{...}`, which may run over several lines.
    fn flow(&mut self, state: &mut State) {
        while self.pos < self.s.len() {
            let r = self.rest_str();
            let b = r.as_bytes()[0];
            match b {
                b' ' | b'\t' => self.spaces(),
                b'[' | b'{' => {
                    state.flow += 1;
                    self.take(1, Class::Punct);
                }
                b']' | b'}' => {
                    state.flow = state.flow.saturating_sub(1);
                    self.take(1, Class::Punct);
                    if state.flow == 0 {
                        return self.after_value();
                    }
                }
                b',' | b':' | b'?' => self.take(1, Class::Punct),
                b'#' => self.rest(Class::Comment),
                b'"' | b'\'' => match closing_quote(r, 1, b) {
                    Some(end) => self.take(end, self.flow_class(end)),
                    None => {
                        // A quoted string over several lines inside a flow: the lines after it
                        // are coloured as a string until it closes.
                        self.rest(Class::Str);
                        state.quote = Some(b);
                        return;
                    }
                },
                b'&' | b'*' | b'!' => {
                    let len = r.find([' ', '\t', ',', ']', '}']).unwrap_or(r.len()).max(1);
                    self.take(len, Class::Meta);
                }
                _ => {
                    let len = plain_length(r, true).max(r.chars().next().map_or(1, char::len_utf8));
                    let class = self.flow_class(len);
                    self.take(len, class);
                }
            }
        }
    }

    /// A scalar of `len` bytes inside a flow: a key if a `:` follows it, else by its value.
    fn flow_class(&self, len: usize) -> Class {
        let r = self.rest_str();
        let after = r[len..].trim_start_matches([' ', '\t']);
        if after.starts_with(':') {
            Class::Key
        } else if r.starts_with(['"', '\'']) {
            Class::Str
        } else {
            scalar_class(&r[..len])
        }
    }
}

/// The byte length of a key at the start of `r`, when `r` is `key: ...` (or `key:` alone).
pub(crate) fn key_length(r: &str) -> Option<usize> {
    let bytes = r.as_bytes();
    let key_end = match bytes.first()? {
        &q @ (b'"' | b'\'') => closing_quote(r, 1, q)?,
        b'[' | b'{' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' => return None,
        _ => {
            let mut i = 0;
            loop {
                match bytes.get(i) {
                    None => return None,
                    Some(b':') if bytes.get(i + 1).is_none_or(|c| *c == b' ' || *c == b'\t') => break,
                    Some(b'#') if i > 0 && matches!(bytes[i - 1], b' ' | b'\t') => return None,
                    Some(_) => i += 1,
                }
            }
            return Some(r[..i].trim_end().len());
        }
    };
    let after = &r[key_end..];
    let gap = after.len() - after.trim_start_matches([' ', '\t']).len();
    let colon = key_end + gap;
    let follows_colon = bytes.get(colon + 1).is_none_or(|c| *c == b' ' || *c == b'\t');
    (bytes.get(colon) == Some(&b':') && follows_colon).then_some(key_end)
}

/// Where a quoted string that opens at `r[start - 1]` with `q` ends (just past its closing
/// quote), or None if it does not close on this line. `start` is 0 for a continued string.
fn closing_quote(r: &str, start: usize, q: u8) -> Option<usize> {
    let bytes = r.as_bytes();
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if q == b'"' => i += 2,
            b'\'' if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == q => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The length of a plain scalar at the start of `r`: up to a ` #` comment, the line's end,
/// or (inside a flow) a `,`, bracket or `: `. Trailing spaces are not part of it.
fn plain_length(r: &str, flow: bool) -> usize {
    let bytes = r.as_bytes();
    let mut end = bytes.len();
    for (i, &b) in bytes.iter().enumerate() {
        let after_space = i > 0 && matches!(bytes[i - 1], b' ' | b'\t');
        if b == b'#' && after_space {
            end = i;
            break;
        }
        if flow
            && (matches!(b, b',' | b'[' | b']' | b'{' | b'}')
                || (b == b':' && bytes.get(i + 1).is_none_or(|c| matches!(c, b' ' | b'\t' | b',' | b']' | b'}'))))
        {
            end = i;
            break;
        }
    }
    r[..end].trim_end().len()
}

/// A plain scalar's class, by how the reader resolves it.
fn scalar_class(text: &str) -> Class {
    match resolve_plain(text) {
        Value::Null | Value::Bool(_) => Class::Lit,
        Value::Number(_) => Class::Num,
        _ if text == ".nan" || text == ".NaN" || text == ".NAN" => Class::Num,
        _ => Class::Str,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line's spans as (class, text), without plain ones.
    fn coloured(line: &str) -> Vec<(Class, &str)> {
        let lines = highlight(line);
        lines[0].iter().filter(|s| s.class != Class::Plain).map(|s| (s.class, s.text)).collect()
    }

    #[test]
    fn keys_and_plain_strings_get_their_classes() {
        assert_eq!(
            coloured("  image: nginx:1.25"),
            [(Class::Key, "image"), (Class::Punct, ":"), (Class::Str, "nginx:1.25")]
        );
    }

    #[test]
    fn numbers_booleans_and_null_are_told_apart_from_strings() {
        assert_eq!(coloured("replicas: 3")[2], (Class::Num, "3"));
        assert_eq!(coloured("f: 1.5e3")[2], (Class::Num, "1.5e3"));
        assert_eq!(coloured("stdin: true")[2], (Class::Lit, "true"));
        assert_eq!(coloured("x: ~")[2], (Class::Lit, "~"));
        assert_eq!(coloured("cpu: \"16\"")[2], (Class::Str, "\"16\""));
        assert_eq!(coloured("v: 0123")[2], (Class::Str, "0123"));
    }

    #[test]
    fn comments_end_a_line_but_a_hash_inside_a_word_does_not() {
        assert_eq!(
            coloured("a: b # note"),
            [(Class::Key, "a"), (Class::Punct, ":"), (Class::Str, "b"), (Class::Comment, "# note")]
        );
        assert_eq!(coloured("a: b#c")[2], (Class::Str, "b#c"));
        assert_eq!(coloured("# whole line"), [(Class::Comment, "# whole line")]);
    }

    #[test]
    fn list_dashes_precede_compact_mappings() {
        assert_eq!(
            coloured("- name: nginx"),
            [(Class::Dash, "-"), (Class::Key, "name"), (Class::Punct, ":"), (Class::Str, "nginx")]
        );
        assert_eq!(coloured("- - 1"), [(Class::Dash, "-"), (Class::Dash, "-"), (Class::Num, "1")]);
        assert_eq!(coloured("-1"), [(Class::Num, "-1")]);
    }

    #[test]
    fn document_separators_are_marked() {
        assert_eq!(coloured("---"), [(Class::Separator, "---")]);
        assert_eq!(coloured("--- # next"), [(Class::Separator, "---"), (Class::Comment, "# next")]);
        assert_eq!(coloured("----"), [(Class::Str, "----")]);
    }

    #[test]
    fn flow_collections_colour_their_items() {
        assert_eq!(
            coloured("command: [\"sh\", -c, 3]"),
            [
                (Class::Key, "command"),
                (Class::Punct, ":"),
                (Class::Punct, "["),
                (Class::Str, "\"sh\""),
                (Class::Punct, ","),
                (Class::Str, "-c"),
                (Class::Punct, ","),
                (Class::Num, "3"),
                (Class::Punct, "]"),
            ]
        );
        assert_eq!(coloured("l: {app: web}")[3], (Class::Key, "app"));
    }

    #[test]
    fn block_scalars_colour_their_indented_lines_as_strings() {
        let lines = highlight("script: |\n  echo a: b\n\n  - x\nnext: 1");
        assert_eq!(lines[1].iter().find(|s| s.class != Class::Plain).unwrap().text, "echo a: b");
        assert_eq!(lines[3][1], Span { class: Class::Str, text: "- x" });
        assert_eq!(lines[4][0], Span { class: Class::Key, text: "next" });
    }

    #[test]
    fn quoted_strings_may_hold_colons_hashes_and_escaped_quotes() {
        assert_eq!(coloured("a: \"x: # \\\" y\"")[2], (Class::Str, "\"x: # \\\" y\""));
        assert_eq!(coloured("'it''s': ok")[0], (Class::Key, "'it''s'"));
    }

    #[test]
    fn a_string_left_open_continues_on_the_next_line() {
        let lines = highlight("a: \"one\n two\"\nb: 1");
        assert_eq!(lines[1][0], Span { class: Class::Str, text: " two\"" });
        assert_eq!(lines[2][0], Span { class: Class::Key, text: "b" });
    }

    #[test]
    fn anchors_aliases_and_tags_are_meta() {
        assert_eq!(coloured("a: &x !!str 5")[2..], [(Class::Meta, "&x"), (Class::Meta, "!!str"), (Class::Num, "5")]);
    }

    #[test]
    fn a_final_newline_gives_an_empty_last_line() {
        assert_eq!(highlight("a: 1\n").len(), 2);
        assert!(highlight("").len() == 1 && highlight("")[0].is_empty());
    }

    #[test]
    fn every_line_joins_back_into_its_text_whatever_the_input() {
        let samples = [
            include_str!("../../tests/scenarios/pod_lifecycle.txt"),
            "a: [1, {b: \"c\", d: 'e''f'}, [g]]\n- - -\n? k\n: v\n%YAML 1.2\n--- |\n x\n...\n",
            "\"unterminated\n'also\n[ { ] } ] ]\n: : :\n-\t- \u{e9}t\u{e9}: caf\u{e9} # \u{1f600}\n\\\\\"\n",
            "key:\"no space\"\n  - a: |+2\n      body\n  x: >-\n\tz\n#\n&a *b !c",
        ];
        for sample in samples {
            let lines = highlight(sample);
            let joined: Vec<String> = lines.iter().map(|l| l.iter().map(|s| s.text).collect()).collect();
            assert_eq!(joined.join("\n"), sample);
            assert!(lines.iter().flatten().all(|s| !s.text.is_empty()));
        }
        // Every prefix of a tricky text, cut at each character.
        let tricky = samples[2];
        for (i, _) in tricky.char_indices() {
            let part = &tricky[..i];
            let joined: Vec<String> = highlight(part).iter().map(|l| l.iter().map(|s| s.text).collect()).collect();
            assert_eq!(joined.join("\n"), part);
        }
    }
}
