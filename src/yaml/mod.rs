//! A small YAML reader for manifests: YAML text into `serde_json::Value`s the way serde_yaml read them.
//!
//! Block and flow collections, plain / quoted / block (`|`, `>`) scalars, comments, anchors and
//! aliases, tags on scalars and multi-document streams. Plain scalars resolve as serde_yaml's
//! untagged scalars did (null, booleans, 0x/0o/0b and decimal integers, floats, else strings);
//! syntax errors carry libyaml's message and the 1-based line kubectl prints.

use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::collections::HashMap;

/// A syntax error: libyaml's words (`mapping values are not allowed in this context`) and line.
#[derive(Clone, Debug, PartialEq)]
pub struct YamlError {
    pub message: String,
    pub line: usize,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            // An error of the decoder, not of the text: go-yaml names no line for it.
            write!(f, "yaml: {}", self.message)
        } else {
            write!(f, "yaml: line {}: {}", self.line, self.message)
        }
    }
}

type Result<T> = std::result::Result<T, YamlError>;

/// Nesting deeper than this is an error rather than a stack overflow. go-yaml's scanner stops
/// at 10000 levels ("exceeded max depth of 10000"); the page's stack (and every recursive walk
/// of a value after the reader) holds far fewer, so ours stops sooner, in go-yaml's words.
pub const MAX_DEPTH: usize = 128;

/// go-yaml's guard against alias bombs ("billion laughs"), as the decision it makes: once a
/// document has decoded more than 1,000 nodes of which more than 100 came from expanding
/// aliases, the share that came from aliases may not pass 99% (documents up to 400,000 nodes),
/// falling evenly to 10% (4,000,000 nodes and more). An alias's size is known before it is
/// copied, so a refused expansion allocates nothing.
fn excessive_aliasing(aliased: usize, decoded: usize) -> bool {
    const LOW: f64 = 400_000.0;
    const HIGH: f64 = 4_000_000.0;
    if aliased <= 100 || decoded <= 1000 {
        return false;
    }
    let d = decoded as f64;
    let allowed = if d <= LOW {
        0.99
    } else if d >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * (d - LOW) / (HIGH - LOW)
    };
    aliased as f64 / d > allowed
}

/// What the alias guard refuses with (no line: go-yaml's decoder reports none).
pub const EXCESSIVE_ALIASING: &str = "document contains excessive aliasing";

/// Why `bytes` are not UTF-8, in libyaml's reader's words (go-yaml, and so kubectl, reports
/// them without a line), or None when they are.
pub fn utf8_problem(bytes: &[u8]) -> Option<&'static str> {
    let at = std::str::from_utf8(bytes).err()?.valid_up_to();
    let lead = bytes[at];
    let width = match lead {
        b if b & 0x80 == 0 => 1,
        b if b & 0xE0 == 0xC0 => 2,
        b if b & 0xF0 == 0xE0 => 3,
        b if b & 0xF8 == 0xF0 => 4,
        _ => return Some("invalid leading UTF-8 octet"),
    };
    let Some(sequence) = bytes.get(at..at + width) else { return Some("incomplete UTF-8 octet sequence") };
    if sequence[1..].iter().any(|b| b & 0xC0 != 0x80) {
        return Some("invalid trailing UTF-8 octet");
    }
    let lead_bits = u32::from(lead) & [0, 0x7F, 0x1F, 0x0F, 0x07][width];
    let value = sequence[1..].iter().fold(lead_bits, |v, b| (v << 6) | u32::from(b & 0x3F));
    let shortest = match value {
        0..=0x7F => 1,
        0x80..=0x7FF => 2,
        0x800..=0xFFFF => 3,
        _ => 4,
    };
    if shortest != width {
        return Some("invalid length of a UTF-8 sequence");
    }
    Some("invalid Unicode character")
}

/// Reads a single-document YAML text (an empty text is `null`).
pub fn from_str(text: &str) -> Result<Value> {
    let mut docs = documents(text);
    let first = docs.next().transpose()?.unwrap_or(Value::Null);
    match docs.next() {
        None => Ok(first),
        Some(Err(e)) => Err(e),
        Some(Ok(_)) => Err(YamlError {
            message: "deserializing from YAML containing more than one document is not supported".into(),
            line: 1,
        }),
    }
}

/// The documents of a `---`-separated stream, read lazily; reading stops at the first error.
pub fn documents(text: &str) -> Documents<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = if text.contains('\r') { Cow::Owned(text.replace("\r\n", "\n")) } else { Cow::Borrowed(text) };
    Documents {
        p: Parser {
            s: text,
            pos: 0,
            line: 1,
            line_start: 0,
            anchors: HashMap::new(),
            depth: 0,
            read_any: false,
            decoded: 0,
            aliased: 0,
        },
        done: false,
    }
}

/// Iterator over a stream's documents (see [`documents`]).
pub struct Documents<'a> {
    p: Parser<'a>,
    done: bool,
}

impl Iterator for Documents<'_> {
    type Item = Result<Value>;

    fn next(&mut self) -> Option<Result<Value>> {
        if self.done {
            return None;
        }
        let result = self.p.document();
        match result {
            Ok(None) => {
                self.done = true;
                None
            }
            Ok(Some(v)) => Some(Ok(v)),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Where a node sits, which decides what may follow it on its line.
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// The top of a document.
    Doc,
    /// After `key:`: an implicit key may not start on the same line.
    MapValue,
    /// After `- `: a compact mapping (`- name: x`) may start on the same line.
    SeqItem,
}

struct Parser<'a> {
    s: Cow<'a, str>,
    pos: usize,
    line: usize,
    line_start: usize,
    /// Each anchor's value and how many nodes it holds.
    anchors: HashMap<String, (Value, usize)>,
    depth: usize,
    /// Nodes of the current document so far (keys and alias expansions included), and how
    /// many of those came from expanding aliases: the alias guard's two counts.
    decoded: usize,
    aliased: usize,
    /// Whether a document has begun (an empty stream still yields one `null` document).
    read_any: bool,
}

fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0)
}

fn is_flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

impl Parser<'_> {
    fn at(&self, offset: usize) -> u8 {
        self.s.as_bytes().get(self.pos + offset).copied().unwrap_or(0)
    }

    fn peek(&self) -> u8 {
        self.at(0)
    }

    fn eof(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn col(&self) -> isize {
        (self.pos - self.line_start) as isize
    }

    fn err<T>(&self, message: &str) -> Result<T> {
        Err(YamlError { message: message.to_string(), line: self.line })
    }

    /// Moves past one byte (or one whole UTF-8 character), keeping line bookkeeping.
    fn bump(&mut self) {
        let c = self.peek();
        if c == b'\n' {
            self.pos += 1;
            self.line += 1;
            self.line_start = self.pos;
        } else if c < 0x80 {
            self.pos += 1;
        } else {
            let width = self.s[self.pos..].chars().next().map_or(1, char::len_utf8);
            self.pos += width;
        }
    }

    fn skip_inline_ws(&mut self) {
        while matches!(self.peek(), b' ' | b'\t') {
            self.pos += 1;
        }
    }

    /// Skips the rest of a line's comment, if the cursor is at one.
    fn skip_comment(&mut self) {
        if self.peek() == b'#' {
            while !self.eof() && self.peek() != b'\n' {
                self.bump();
            }
        }
    }

    /// Whether the cursor is at the end of its line's content (comment, newline or end).
    fn at_line_end(&self) -> bool {
        matches!(self.peek(), b'#' | b'\n' | 0)
    }

    /// Skips whitespace, comments and line breaks up to the next content. Tabs may not indent.
    fn skip_to_content(&mut self) -> Result<()> {
        loop {
            self.skip_inline_ws();
            match self.peek() {
                b'#' => self.skip_comment(),
                b'\n' => {
                    self.bump();
                    let mut i = 0;
                    while self.at(i) == b' ' {
                        i += 1;
                    }
                    if self.at(i) == b'\t' {
                        let mut j = i;
                        while matches!(self.at(j), b' ' | b'\t') {
                            j += 1;
                        }
                        if !matches!(self.at(j), b'\n' | b'#' | 0) {
                            self.pos += i;
                            return self.err("found character that cannot start any token");
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Whether the cursor is at its line's first content (a nested block ended before it).
    fn at_line_content_start(&self) -> bool {
        !self.eof() && self.peek() != b'\n' && self.s.as_bytes()[self.line_start..self.pos].iter().all(|&b| b == b' ')
    }

    /// Whether the cursor is at a `---` or `...` marker in column 0.
    fn at_doc_marker(&self) -> bool {
        self.col() == 0
            && ((self.at(0) == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                || (self.at(0) == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
            && is_blank(self.at(3))
    }

    fn at_doc_start(&self) -> bool {
        self.at_doc_marker() && self.peek() == b'-'
    }

    /// Reads the next document; `None` at the end of the stream.
    fn document(&mut self) -> Result<Option<Value>> {
        self.skip_to_content()?;
        loop {
            // `...` ends a document; directives (`%YAML`) are skipped.
            if self.at_doc_marker() && self.peek() == b'.' {
                self.pos += 3;
                self.skip_to_content()?;
            } else if self.col() == 0 && self.peek() == b'%' {
                while !self.eof() && self.peek() != b'\n' {
                    self.bump();
                }
                self.skip_to_content()?;
            } else {
                break;
            }
        }
        if self.eof() {
            // A stream without documents reads as one empty document, as libyaml's did.
            let first = !self.read_any;
            self.read_any = true;
            return Ok(first.then_some(Value::Null));
        }
        self.read_any = true;
        if self.at_doc_start() {
            self.pos += 3;
        }
        self.anchors.clear();
        self.decoded = 0;
        self.aliased = 0;
        let value = self.node(-1, Ctx::Doc)?;
        self.skip_to_content()?;
        if !self.eof() && !self.at_doc_marker() {
            return self.err("did not find expected <document start>");
        }
        Ok(Some(value))
    }

    /// Reads one block node whose parent collection is indented `parent` columns; the cursor is
    /// just after `key:`, `- `, `---`, or at the start of a document.
    fn node(&mut self, parent: isize, ctx: Ctx) -> Result<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.depth_error();
        }
        self.decoded += 1;
        let result = self.node_inner(parent, ctx);
        self.depth -= 1;
        result
    }

    /// Moves to the node's content if it is on a later line; false when the node is empty.
    fn find_content(&mut self, parent: isize, ctx: Ctx, fresh: &mut bool) -> Result<bool> {
        self.skip_inline_ws();
        if !self.at_line_end() {
            return Ok(true);
        }
        self.skip_to_content()?;
        *fresh = true;
        if self.eof() || self.at_doc_marker() {
            return Ok(false);
        }
        let col = self.col();
        let indentless_seq = ctx == Ctx::MapValue && col == parent && self.peek() == b'-' && is_blank(self.at(1));
        Ok(col > parent || indentless_seq)
    }

    fn node_inner(&mut self, parent: isize, ctx: Ctx) -> Result<Value> {
        let start = self.decoded - 1;
        let mut fresh = false;
        if !self.find_content(parent, ctx, &mut fresh)? {
            return Ok(Value::Null);
        }
        let mut start_col = self.col();
        let mut anchor = None;
        let mut tag = None;
        while matches!(self.peek(), b'&' | b'!') {
            self.property(&mut anchor, &mut tag);
            if !self.find_content(parent, ctx, &mut fresh)? {
                return Ok(self.anchored(anchor, Value::Null, start));
            }
            if fresh {
                start_col = self.col();
            }
        }
        let c = self.peek();
        let value = if c == b'-' && is_blank(self.at(1)) {
            if ctx == Ctx::MapValue && !fresh {
                return self.err("block sequence entries are not allowed in this context");
            }
            self.block_sequence(self.col(), parent)?
        } else if c == b'|' || c == b'>' {
            self.block_scalar(parent)?
        } else {
            let (first, plain) = match c {
                b'*' => (self.alias()?, None),
                b'[' | b'{' => (self.flow_node(0)?, None),
                b'"' | b'\'' => (Value::String(self.quoted()?), None),
                _ => {
                    let text = self.plain_segment(false)?;
                    (Value::Null, Some(text))
                }
            };
            self.skip_inline_ws();
            if self.peek() == b':' && is_blank(self.at(1)) {
                if ctx == Ctx::MapValue && !fresh {
                    return self.err("mapping values are not allowed in this context");
                }
                let key = match plain {
                    Some(text) => text,
                    None => self.key(first)?,
                };
                self.block_mapping(start_col, key)?
            } else {
                match plain {
                    Some(text) => {
                        let text = self.plain_continuation(text, parent)?;
                        resolve_tagged(&text, tag.as_deref())
                    }
                    None => first,
                }
            }
        };
        Ok(self.anchored(anchor, value, start))
    }

    fn depth_error<T>(&self) -> Result<T> {
        self.err(&format!("exceeded max depth of {MAX_DEPTH}"))
    }

    fn key(&self, v: Value) -> Result<String> {
        match key_string(v) {
            Some(k) => Ok(k),
            None => self.err("mapping key is not a string"),
        }
    }

    /// Remembers the value under its anchor, with its size: the nodes decoded since `start`.
    fn anchored(&mut self, anchor: Option<String>, value: Value, start: usize) -> Value {
        if let Some(name) = anchor {
            let size = self.decoded - start;
            self.anchors.insert(name, (value.clone(), size));
        }
        value
    }

    /// Reads `&name`, `!tag` or `*name` up to the next blank or flow indicator.
    fn word(&mut self) -> String {
        let start = self.pos;
        self.bump();
        while !is_blank(self.peek()) && !is_flow_indicator(self.peek()) {
            self.bump();
        }
        self.s[start..self.pos].to_string()
    }

    fn alias(&mut self) -> Result<Value> {
        let word = self.word();
        let Some(&(_, size)) = self.anchors.get(&word[1..]) else { return self.err("unknown anchor") };
        // Counted, and refused, before anything is copied.
        self.decoded += size;
        self.aliased += size;
        if excessive_aliasing(self.aliased, self.decoded) {
            return Err(YamlError { message: EXCESSIVE_ALIASING.into(), line: 0 });
        }
        Ok(self.anchors[&word[1..]].0.clone())
    }

    /// A block mapping whose keys sit in column `col`; its first key has been read.
    fn block_mapping(&mut self, col: isize, first_key: String) -> Result<Value> {
        let mut map = Map::new();
        let mut key = first_key;
        loop {
            self.bump(); // the ':'
            self.decoded += 1; // the key
            let value = self.node(col, Ctx::MapValue)?;
            map.insert(key, value);
            if !self.at_line_content_start() {
                self.skip_inline_ws();
                if !self.at_line_end() {
                    return self.err("did not find expected key");
                }
                self.skip_to_content()?;
            }
            if self.eof() || self.at_doc_marker() || self.col() < col {
                return Ok(Value::Object(map));
            }
            if self.col() > col || (self.peek() == b'-' && is_blank(self.at(1))) {
                return self.err("did not find expected key");
            }
            key = self.mapping_key()?;
        }
    }

    /// A key at the start of a mapping line, up to and not including its `:`.
    fn mapping_key(&mut self) -> Result<String> {
        let key = match self.peek() {
            b'"' | b'\'' => self.quoted()?,
            b'[' | b'{' => {
                let v = self.flow_node(0)?;
                self.key(v)?
            }
            b'*' => {
                let v = self.alias()?;
                self.key(v)?
            }
            _ => self.plain_segment(false)?,
        };
        self.skip_inline_ws();
        if self.peek() == b':' && is_blank(self.at(1)) { Ok(key) } else { self.err("could not find expected ':'") }
    }

    /// A block sequence whose `-` entries sit in column `col`.
    fn block_sequence(&mut self, col: isize, parent: isize) -> Result<Value> {
        let mut items = Vec::new();
        loop {
            self.bump(); // the '-'
            items.push(self.node(col, Ctx::SeqItem)?);
            if !self.at_line_content_start() {
                self.skip_inline_ws();
                if !self.at_line_end() {
                    return self.err("did not find expected '-' indicator");
                }
                self.skip_to_content()?;
            }
            if self.eof() || self.at_doc_marker() || self.col() < col {
                return Ok(Value::Array(items));
            }
            if self.col() == col && self.peek() == b'-' && is_blank(self.at(1)) {
                continue;
            }
            if self.col() == col && col == parent {
                // An indentless sequence (`key:` then `- a` in the key's column) ends here.
                return Ok(Value::Array(items));
            }
            return self.err("did not find expected '-' indicator");
        }
    }

    /// The rest of one line of a plain scalar: up to `: `, ` #`, the line's end or (in flow
    /// context) a flow indicator. Trailing blanks are dropped.
    fn plain_segment(&mut self, flow: bool) -> Result<String> {
        let c = self.peek();
        if matches!(c, b'@' | b'`') || (!flow && matches!(c, b']' | b'}' | b',')) {
            return self.err("found character that cannot start any token");
        }
        if matches!(c, b'|' | b'>' | b'%') && flow {
            return self.err("found character that cannot start any token");
        }
        let start = self.pos;
        let mut end = self.pos;
        loop {
            let c = self.peek();
            if c == 0 || c == b'\n' {
                break;
            }
            if c == b':' && (is_blank(self.at(1)) || (flow && is_flow_indicator(self.at(1)))) {
                break;
            }
            if flow && is_flow_indicator(c) {
                break;
            }
            if matches!(c, b' ' | b'\t') {
                if self.at(1) == b'#' {
                    break;
                }
                self.pos += 1;
                continue;
            }
            self.bump();
            end = self.pos;
        }
        Ok(self.s[start..end].to_string())
    }

    /// Joins the lines that continue a plain scalar (indented deeper than `parent`): one line
    /// break folds to a space, each empty line to a newline.
    fn plain_continuation(&mut self, mut text: String, parent: isize) -> Result<String> {
        loop {
            self.skip_inline_ws();
            if self.peek() != b'\n' {
                return Ok(text);
            }
            // Look ahead without consuming: the next non-empty line and the empty ones before it.
            let save = (self.pos, self.line, self.line_start);
            let mut breaks = 0;
            loop {
                self.bump(); // '\n'
                breaks += 1;
                self.skip_inline_ws();
                if self.peek() != b'\n' {
                    break;
                }
            }
            let indent = {
                let mut i = self.line_start;
                while self.s.as_bytes().get(i) == Some(&b' ') {
                    i += 1;
                }
                (i - self.line_start) as isize
            };
            let marker = {
                let rest = &self.s.as_bytes()[self.line_start..];
                (rest.starts_with(b"---") || rest.starts_with(b"...")) && is_blank(rest.get(3).copied().unwrap_or(0))
            };
            if self.eof() || self.peek() == b'#' || indent <= parent || marker {
                (self.pos, self.line, self.line_start) = save;
                return Ok(text);
            }
            if breaks == 1 {
                text.push(' ');
            } else {
                text.extend(std::iter::repeat_n('\n', breaks - 1));
            }
            let segment = self.plain_segment(false)?;
            text.push_str(&segment);
            if self.peek() == b':' {
                return self.err("mapping values are not allowed in this context");
            }
            if self.peek() == b'#' || (matches!(self.peek(), b' ' | b'\t') && self.at(1) == b'#') {
                return Ok(text);
            }
        }
    }

    /// A single- or double-quoted scalar, the cursor at its opening quote.
    fn quoted(&mut self) -> Result<String> {
        let quote = self.peek();
        self.bump();
        let mut out = String::new();
        loop {
            let c = self.peek();
            if self.eof() {
                return self.err("found unexpected end of stream");
            }
            if c == quote {
                if quote == b'\'' && self.at(1) == b'\'' {
                    out.push('\'');
                    self.pos += 2;
                    continue;
                }
                self.bump();
                return Ok(out);
            }
            match c {
                b'\\' if quote == b'"' => {
                    self.bump();
                    if self.peek() == b'\n' {
                        self.bump();
                        self.skip_inline_ws();
                        continue;
                    }
                    self.escape(&mut out)?;
                }
                b'\n' | b' ' | b'\t' => {
                    // Blanks before a line break are dropped; the break folds.
                    let start = self.pos;
                    while matches!(self.peek(), b' ' | b'\t') {
                        self.pos += 1;
                    }
                    if self.peek() != b'\n' {
                        out.push_str(&self.s[start..self.pos]);
                        continue;
                    }
                    let mut breaks = 0;
                    while self.peek() == b'\n' {
                        self.bump();
                        breaks += 1;
                        if self.at_doc_marker() {
                            return self.err("found unexpected document indicator");
                        }
                        self.skip_inline_ws();
                    }
                    if breaks == 1 {
                        out.push(' ');
                    } else {
                        out.extend(std::iter::repeat_n('\n', breaks - 1));
                    }
                }
                _ => {
                    let start = self.pos;
                    self.bump();
                    out.push_str(&self.s[start..self.pos]);
                }
            }
        }
    }

    /// One escape of a double-quoted scalar, the cursor after its backslash.
    fn escape(&mut self, out: &mut String) -> Result<()> {
        let c = self.peek();
        let simple = match c {
            b'0' => Some('\0'),
            b'a' => Some('\x07'),
            b'b' => Some('\x08'),
            b't' | b'\t' => Some('\t'),
            b'n' => Some('\n'),
            b'v' => Some('\x0b'),
            b'f' => Some('\x0c'),
            b'r' => Some('\r'),
            b'e' => Some('\x1b'),
            b' ' => Some(' '),
            b'"' => Some('"'),
            b'/' => Some('/'),
            b'\\' => Some('\\'),
            b'N' => Some('\u{85}'),
            b'_' => Some('\u{a0}'),
            b'L' => Some('\u{2028}'),
            b'P' => Some('\u{2029}'),
            _ => None,
        };
        if let Some(ch) = simple {
            self.bump();
            out.push(ch);
            return Ok(());
        }
        let digits = match c {
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => return self.err("found unknown escape character"),
        };
        let hex = self.s.get(self.pos + 1..self.pos + 1 + digits).unwrap_or("");
        match u32::from_str_radix(hex, 16).ok().filter(|_| hex.len() == digits).and_then(char::from_u32) {
            Some(ch) => {
                out.push(ch);
                self.pos += 1 + digits;
                Ok(())
            }
            None => self.err("did not find expected hexdecimal number"),
        }
    }

    /// A literal (`|`) or folded (`>`) block scalar, the cursor at its indicator.
    fn block_scalar(&mut self, parent: isize) -> Result<Value> {
        let folded = self.peek() == b'>';
        self.bump();
        let (mut chomp, mut explicit) = (b' ', 0usize);
        for _ in 0..2 {
            match self.peek() {
                b'-' | b'+' => {
                    chomp = self.peek();
                    self.bump();
                }
                c @ b'1'..=b'9' => {
                    explicit = usize::from(c - b'0');
                    self.bump();
                }
                _ => {}
            }
        }
        self.skip_inline_ws();
        self.skip_comment();
        if !matches!(self.peek(), b'\n' | 0) {
            return self.err("did not find expected comment or line break");
        }
        let base = parent.max(0) as usize;
        let mut indent = if explicit > 0 { base + explicit } else { 0 };
        // Collect the lines that belong to the scalar.
        let mut lines: Vec<(usize, usize)> = Vec::new();
        let mut end = (self.pos, self.line, self.line_start);
        while self.peek() == b'\n' {
            self.bump();
            let line_start = self.pos;
            let line_end = self.s[line_start..].find('\n').map_or(self.s.len(), |i| line_start + i);
            let line = &self.s[line_start..line_end];
            let spaces = line.len() - line.trim_start_matches(' ').len();
            let empty = line.trim_start_matches(' ').is_empty();
            if self.at_doc_marker() {
                break;
            }
            if !empty {
                if indent == 0 {
                    indent = spaces.max(1);
                    if (indent as isize) <= parent {
                        break;
                    }
                }
                if spaces < indent {
                    break;
                }
            }
            lines.push((line_start, line_end));
            self.pos = line_end;
            end = (self.pos, self.line, self.line_start);
        }
        (self.pos, self.line, self.line_start) = end;
        let content: Vec<&str> = lines.iter().map(|&(a, b)| self.s[a..b].get(indent..).unwrap_or("")).collect();
        let last = content.iter().rposition(|l| !l.is_empty());
        let (body, trailing) = match last {
            Some(i) => (&content[..=i], content.len() - i - 1),
            None => (&content[..0], content.len()),
        };
        let mut out = String::new();
        if folded {
            let mut prev_more = false;
            let mut breaks = 0;
            let mut first = true;
            for line in body {
                if line.is_empty() {
                    breaks += 1;
                    continue;
                }
                let more = line.starts_with([' ', '\t']);
                if first {
                    out.extend(std::iter::repeat_n('\n', breaks));
                } else if !more && !prev_more {
                    if breaks == 0 {
                        out.push(' ');
                    } else {
                        out.extend(std::iter::repeat_n('\n', breaks));
                    }
                } else {
                    out.extend(std::iter::repeat_n('\n', breaks + 1));
                }
                out.push_str(line);
                prev_more = more;
                breaks = 0;
                first = false;
            }
        } else {
            out = body.join("\n");
        }
        match chomp {
            b'-' => {}
            b'+' => {
                if !body.is_empty() {
                    out.push('\n');
                }
                out.extend(std::iter::repeat_n('\n', trailing));
            }
            _ => {
                if !body.is_empty() {
                    out.push('\n');
                }
            }
        }
        Ok(Value::String(out))
    }

    /// Skips blanks, line breaks and comments inside a flow collection.
    fn skip_flow_ws(&mut self) -> Result<()> {
        loop {
            match self.peek() {
                b' ' | b'\t' | b'\n' => self.bump(),
                b'#' => self.skip_comment(),
                _ => return Ok(()),
            }
            if self.at_doc_marker() {
                return self.err("found unexpected document indicator");
            }
        }
    }

    /// Reads one node property at the cursor: `&anchor` or a `!tag`.
    fn property(&mut self, anchor: &mut Option<String>, tag: &mut Option<String>) {
        let is_anchor = self.peek() == b'&';
        let word = self.word();
        if is_anchor {
            *anchor = Some(word[1..].to_string());
        } else {
            *tag = Some(word);
        }
    }

    /// One node inside (or opening) a flow collection.
    fn flow_node(&mut self, depth: usize) -> Result<Value> {
        if self.depth + depth > MAX_DEPTH {
            return self.depth_error();
        }
        self.decoded += 1;
        let start = self.decoded - 1;
        let mut anchor = None;
        let mut tag = None;
        while matches!(self.peek(), b'&' | b'!') {
            self.property(&mut anchor, &mut tag);
            self.skip_flow_ws()?;
        }
        let value = match self.peek() {
            b'[' => self.flow_sequence(depth)?,
            b'{' => self.flow_mapping(depth)?,
            b'"' | b'\'' => Value::String(self.quoted()?),
            b'*' => self.alias()?,
            0 => return self.err("did not find expected node content"),
            b',' | b']' | b'}' => Value::Null,
            _ => {
                let text = self.plain_segment(true)?;
                resolve_tagged(&text, tag.as_deref())
            }
        };
        Ok(self.anchored(anchor, value, start))
    }

    fn flow_sequence(&mut self, depth: usize) -> Result<Value> {
        self.bump(); // '['
        let mut items = Vec::new();
        loop {
            self.skip_flow_ws()?;
            if self.peek() == b']' {
                self.bump();
                return Ok(Value::Array(items));
            }
            let item = self.flow_node(depth + 1)?;
            self.skip_flow_ws()?;
            let item = if self.peek() == b':' {
                // A single-pair mapping: `[a: 1]`.
                self.bump();
                self.skip_flow_ws()?;
                let value = self.flow_node(depth + 1)?;
                let key = self.key(item)?;
                let mut map = Map::new();
                map.insert(key, value);
                self.skip_flow_ws()?;
                Value::Object(map)
            } else {
                item
            };
            items.push(item);
            match self.peek() {
                b',' => self.bump(),
                b']' => {}
                _ => return self.err("did not find expected ',' or ']'"),
            }
        }
    }

    fn flow_mapping(&mut self, depth: usize) -> Result<Value> {
        self.bump(); // '{'
        let mut map = Map::new();
        loop {
            self.skip_flow_ws()?;
            if self.peek() == b'}' {
                self.bump();
                return Ok(Value::Object(map));
            }
            let key_value = match self.peek() {
                b'"' | b'\'' => {
                    self.decoded += 1;
                    Value::String(self.quoted()?)
                }
                _ => self.flow_node(depth + 1)?,
            };
            let key = match key_value {
                Value::String(s) => s,
                other => self.key(other)?,
            };
            self.skip_flow_ws()?;
            let value = if self.peek() == b':' {
                self.bump();
                self.skip_flow_ws()?;
                self.flow_node(depth + 1)?
            } else {
                Value::Null
            };
            map.insert(key, value);
            self.skip_flow_ws()?;
            match self.peek() {
                b',' => self.bump(),
                b'}' => {}
                _ => return self.err("did not find expected ',' or '}'"),
            }
        }
    }
}

/// A scalar used as a mapping key, as text (serde_yaml read keys as strings).
fn key_string(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        Value::Null => Some(String::new()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A plain scalar with an optional tag (`!!str 1`); unknown tags are ignored.
fn resolve_tagged(text: &str, tag: Option<&str>) -> Value {
    match tag {
        Some("!!str") => Value::String(text.to_string()),
        _ => resolve_plain(text),
    }
}

/// An untagged plain scalar, resolved as serde_yaml did.
pub fn resolve_plain(text: &str) -> Value {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Value::Null;
    }
    match text {
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(n) = parse_unsigned(text) {
        return Value::Number(n.into());
    }
    if let Some(n) = parse_negative(text) {
        return Value::Number(n.into());
    }
    if !digits_but_not_number(text) {
        if let Some(f) = parse_f64(text) {
            return Number::from_f64(f).map_or(Value::Null, Value::Number);
        }
    }
    Value::String(text.to_string())
}

fn radix_prefixed<T>(s: &str, parse: fn(&str, u32) -> std::result::Result<T, std::num::ParseIntError>) -> Option<T> {
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = s.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(n) = parse(rest, radix) {
                return Some(n);
            }
        }
    }
    None
}

fn parse_unsigned(scalar: &str) -> Option<u64> {
    let unpositive = scalar.strip_prefix('+').unwrap_or(scalar);
    if let Some(n) = radix_prefixed(unpositive, u64::from_str_radix) {
        return Some(n);
    }
    if unpositive.starts_with(['+', '-']) || digits_but_not_number(scalar) {
        return None;
    }
    unpositive.parse().ok()
}

fn parse_negative(scalar: &str) -> Option<i64> {
    let rest = scalar.strip_prefix('-')?;
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        let negative = rest.strip_prefix(prefix).map(|digits| format!("-{digits}"));
        if let Some(n) = negative.and_then(|n| i64::from_str_radix(&n, radix).ok()) {
            return Some(n);
        }
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    scalar.parse().ok()
}

fn parse_f64(scalar: &str) -> Option<f64> {
    let unpositive = match scalar.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => scalar,
    };
    if matches!(unpositive, ".inf" | ".Inf" | ".INF") {
        return Some(f64::INFINITY);
    }
    if matches!(scalar, "-.inf" | "-.Inf" | "-.INF") {
        return Some(f64::NEG_INFINITY);
    }
    if matches!(scalar, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN);
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Leading zeros then digits (`0123`) is a string in YAML 1.2.
fn digits_but_not_number(scalar: &str) -> bool {
    let s = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests;
