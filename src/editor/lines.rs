//! Where each field of a manifest sits: the lines of a YAML text's documents, and a field path
//! as the API server names fields in its errors (`spec.containers[0].image`,
//! `metadata.labels[app]`) mapped to the line that holds it.
//!
//! It reads block YAML by indentation only, never fails and never panics: text the reader
//! would reject still gets the lines it can make sense of.

use super::highlight::key_length;

/// One document of a manifest (documents with nothing but comments are skipped, as kubectl
/// skips them).
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The 1-based line of the document's first content line.
    pub line: usize,
    root: Node,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Map(Vec<(String, Entry)>),
    Seq(Vec<Entry>),
    /// A scalar's text (unquoted), or a value this outline does not look into.
    Scalar(String),
    Empty,
}

#[derive(Clone, Debug, PartialEq)]
struct Entry {
    line: usize,
    node: Node,
}

/// Where a field path led: the line of the deepest part of it that exists, and whether all
/// of it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    pub line: usize,
    pub exact: bool,
}

/// The documents of a `---`-separated text, in order.
pub fn documents(text: &str) -> Vec<Document> {
    let mut docs = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    let mut flush = |items: &mut Vec<Item>| {
        if !items.is_empty() {
            let line = items[0].line;
            let mut i = 0;
            let root = node(items, &mut i, None, 0);
            docs.push(Document { line, root });
            items.clear();
        }
    };
    for (n, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let line = n + 1;
        if raw.starts_with("---") && raw[3..].chars().next().is_none_or(|c| c == ' ' || c == '\t') {
            flush(&mut items);
            let rest = raw[3..].trim_start();
            if !rest.is_empty() && !rest.starts_with('#') {
                items.push(Item { line, indent: raw.len() - rest.len(), content: rest });
            }
            continue;
        }
        if raw == "..." || raw.starts_with("... ") {
            flush(&mut items);
            continue;
        }
        if raw.starts_with('%') && items.is_empty() {
            continue;
        }
        let content = raw.trim_start_matches(' ');
        if content.trim().is_empty() || content.starts_with('#') {
            continue;
        }
        items.push(Item { line, indent: raw.len() - content.len(), content });
    }
    flush(&mut items);
    docs
}

/// The line of `path` in the `document`-th document of `text` (counting from 0, documents
/// with content only): the deepest part of the path that exists, or None without that
/// document.
pub fn field_line(text: &str, document: usize, path: &str) -> Option<usize> {
    documents(text).get(document).map(|d| d.locate(path).line)
}

impl Document {
    /// The line of a field path, or of the deepest part of it that exists.
    pub fn locate(&self, path: &str) -> Located {
        let mut node = &self.root;
        let mut line = self.line;
        for segment in segments(path) {
            let next = match (node, &segment) {
                (Node::Map(entries), Segment::Name(key) | Segment::Bracket(key)) => {
                    entries.iter().find(|(k, _)| k == key).map(|(_, e)| e)
                }
                (Node::Seq(items), Segment::Bracket(index)) => index.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            };
            match next {
                Some(entry) => {
                    line = entry.line;
                    node = &entry.node;
                }
                None => return Located { line, exact: false },
            }
        }
        Located { line, exact: true }
    }

    /// A top-level scalar, like `kind` or `apiVersion`.
    pub fn scalar(&self, path: &str) -> Option<&str> {
        let mut node = &self.root;
        for segment in segments(path) {
            let (Node::Map(entries), Segment::Name(key)) = (node, &segment) else { return None };
            node = &entries.iter().find(|(k, _)| k == key)?.1.node;
        }
        match node {
            Node::Scalar(s) => Some(s),
            _ => None,
        }
    }

    pub fn kind(&self) -> Option<&str> {
        self.scalar("kind")
    }

    pub fn name(&self) -> Option<&str> {
        self.scalar("metadata.name")
    }

    /// Whether the document is a mapping (a list or a lone scalar is not an object).
    pub fn is_mapping(&self) -> bool {
        matches!(self.root, Node::Map(_))
    }

    /// The first scalar (in document order) for which `test(path, value)` holds, with its line.
    pub fn find_scalar(&self, test: &dyn Fn(&str, &str) -> bool) -> Option<usize> {
        fn walk(node: &Node, path: &str, line: usize, test: &dyn Fn(&str, &str) -> bool) -> Option<usize> {
            match node {
                Node::Scalar(s) => test(path, s).then_some(line),
                Node::Map(entries) => entries.iter().find_map(|(k, e)| {
                    let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    walk(&e.node, &p, e.line, test)
                }),
                Node::Seq(items) => {
                    items.iter().enumerate().find_map(|(i, e)| walk(&e.node, &format!("{path}[{i}]"), e.line, test))
                }
                Node::Empty => None,
            }
        }
        walk(&self.root, "", self.line, test)
    }
}

/// One part of a field path: `.name` or `[key]` / `[0]`.
#[derive(Debug, PartialEq)]
enum Segment {
    Name(String),
    Bracket(String),
}

fn segments(path: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if !current.is_empty() {
                    out.push(Segment::Name(std::mem::take(&mut current)));
                }
            }
            '[' => {
                if !current.is_empty() {
                    out.push(Segment::Name(std::mem::take(&mut current)));
                }
                out.push(Segment::Bracket(chars.by_ref().take_while(|c| *c != ']').collect()));
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(Segment::Name(current));
    }
    out
}

/// A line with content: where it is, its indentation and the text after it.
#[derive(Clone, Copy)]
struct Item<'a> {
    line: usize,
    indent: usize,
    content: &'a str,
}

fn is_dash(content: &str) -> bool {
    content == "-" || content.starts_with("- ") || content.starts_with("-\t")
}

/// Nesting deeper than this is not looked into (the reader refuses it anyway): the outline
/// recurses once per level, and the page's stack is small.
const MAX_DEPTH: usize = crate::yaml::MAX_DEPTH;

/// A node starting at `items[*i]`, if it is indented deeper than `parent`; `depth` levels
/// down.
fn node(items: &mut [Item], i: &mut usize, parent: Option<usize>, depth: usize) -> Node {
    let Some(first) = items.get(*i).copied() else { return Node::Empty };
    if parent.is_some_and(|p| first.indent <= p) {
        return Node::Empty;
    }
    if depth >= MAX_DEPTH {
        // Too deep to outline: the node's lines, and every deeper one, are skipped.
        *i += 1;
        skip_deeper(items, i, parent.unwrap_or(first.indent.saturating_sub(1)).min(first.indent.saturating_sub(1)));
        return Node::Empty;
    }
    if is_dash(first.content) {
        return seq(items, i, first.indent, depth);
    }
    if key_length(first.content).is_some() {
        return map(items, i, first.indent, depth);
    }
    // A scalar or flow collection, maybe over several lines.
    *i += 1;
    skip_deeper(items, i, parent.unwrap_or(first.indent.saturating_sub(1)).min(first.indent.saturating_sub(1)));
    Node::Scalar(scalar_text(first.content))
}

fn map(items: &mut [Item], i: &mut usize, indent: usize, depth: usize) -> Node {
    let mut entries = Vec::new();
    while let Some(item) = items.get(*i).copied() {
        if item.indent != indent || is_dash(item.content) {
            break;
        }
        let Some(len) = key_length(item.content) else { break };
        let key = unquote(&item.content[..len]);
        let after = item.content[len..].trim_start();
        let value = after.strip_prefix(':').unwrap_or(after);
        let value = strip_properties(strip_comment(value).trim());
        *i += 1;
        let child = if value.is_empty() {
            match items.get(*i) {
                Some(next) if next.indent > indent => node(items, i, Some(indent), depth + 1),
                Some(next) if next.indent == indent && is_dash(next.content) => seq(items, i, indent, depth + 1),
                _ => Node::Empty,
            }
        } else {
            // An inline value; lines deeper than the key are its continuation (or a block
            // scalar's body).
            skip_deeper(items, i, indent);
            if value.starts_with(['|', '>']) { Node::Scalar(String::new()) } else { Node::Scalar(scalar_text(value)) }
        };
        entries.push((key, Entry { line: item.line, node: child }));
    }
    Node::Map(entries)
}

fn seq(items: &mut [Item], i: &mut usize, indent: usize, depth: usize) -> Node {
    let mut entries = Vec::new();
    while let Some(item) = items.get(*i).copied() {
        if item.indent != indent || !is_dash(item.content) {
            break;
        }
        let rest = item.content[1..].trim_start_matches([' ', '\t']);
        let child = if rest.is_empty() || rest.starts_with('#') {
            *i += 1;
            node(items, i, Some(indent), depth + 1)
        } else {
            // A compact node (`- name: x`, `- - a`): read it as if it started on its own
            // line at its column.
            let column = item.indent + (item.content.len() - rest.len());
            items[*i] = Item { line: item.line, indent: column, content: rest };
            node(items, i, Some(indent), depth + 1)
        };
        entries.push(Entry { line: item.line, node: child });
    }
    Node::Seq(entries)
}

/// Skips the lines indented deeper than `indent`.
fn skip_deeper(items: &[Item], i: &mut usize, indent: usize) {
    while items.get(*i).is_some_and(|it| it.indent > indent) {
        *i += 1;
    }
}

fn strip_comment(value: &str) -> &str {
    if value.starts_with(['"', '\'']) {
        return value;
    }
    match value.find(" #").or_else(|| value.find("\t#")) {
        Some(at) => &value[..at],
        None => value,
    }
}

/// Drops leading anchors and tags (`&a`, `!!str`) from a value.
fn strip_properties(mut value: &str) -> &str {
    while value.starts_with(['&', '!']) {
        value = value.find([' ', '\t']).map_or("", |at| value[at..].trim_start());
    }
    value
}

fn scalar_text(text: &str) -> String {
    unquote(strip_comment(text).trim())
}

fn unquote(text: &str) -> String {
    let t = text.trim();
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        t[1..t.len() - 1].replace("\\\"", "\"").replace("\\\\", "\\")
    } else if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') {
        t[1..t.len() - 1].replace("''", "'")
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPLOYMENT: &str = "# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: -1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        command:
        - sh
        - -c
        - |
          echo hi
          echo 'a: b'
      - name: sidecar
        imagee: busybox
---
apiVersion: v1
kind: Service
metadata:
  name: \"web\"
spec:
  ports:
  - port: 80
";

    #[test]
    fn a_field_path_maps_to_the_line_of_its_key() {
        assert_eq!(field_line(DEPLOYMENT, 0, "spec.replicas"), Some(7));
        assert_eq!(field_line(DEPLOYMENT, 0, "spec.template.spec.containers[0].image"), Some(17));
        assert_eq!(field_line(DEPLOYMENT, 0, "spec.template.spec.containers[1].imagee"), Some(25));
        assert_eq!(field_line(DEPLOYMENT, 0, "spec.template.metadata.labels"), Some(13));
    }

    #[test]
    fn list_items_are_found_by_index_and_block_scalars_are_skipped() {
        assert_eq!(field_line(DEPLOYMENT, 0, "spec.template.spec.containers[0].command[2]"), Some(21));
        assert_eq!(field_line(DEPLOYMENT, 0, "spec.template.spec.containers[1]"), Some(24));
        assert_eq!(field_line(DEPLOYMENT, 0, "spec.template.spec.containers[1].name"), Some(24));
    }

    #[test]
    fn a_missing_field_points_at_the_deepest_part_that_exists() {
        let doc = &documents(DEPLOYMENT)[0];
        assert_eq!(doc.locate("spec.template.spec.containers[1].image"), Located { line: 24, exact: false });
        assert_eq!(doc.locate("spec.strategy.type"), Located { line: 6, exact: false });
        assert_eq!(doc.locate("status"), Located { line: 2, exact: false });
        assert_eq!(doc.locate("spec.template.spec.containers[9]"), Located { line: 15, exact: false });
    }

    #[test]
    fn each_document_counts_lines_from_the_top_of_the_file() {
        let docs = documents(DEPLOYMENT);
        assert_eq!(docs.len(), 2);
        assert_eq!((docs[0].line, docs[1].line), (2, 27));
        assert_eq!((docs[1].kind(), docs[1].name()), (Some("Service"), Some("web")));
        assert_eq!(field_line(DEPLOYMENT, 1, "spec.ports[0].port"), Some(33));
        assert_eq!(field_line(DEPLOYMENT, 2, "spec"), None);
    }

    #[test]
    fn map_keys_in_brackets_and_sequences_at_their_keys_indent_are_found() {
        let text = "metadata:\n  labels:\n    app.kubernetes.io/name: web\nspec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 80\n";
        let doc = &documents(text)[0];
        assert_eq!(doc.locate("metadata.labels[app.kubernetes.io/name]").line, 3);
        assert_eq!(doc.locate("spec.containers[0].ports[0].containerPort"), Located { line: 8, exact: true });
    }

    #[test]
    fn empty_documents_and_comments_are_not_documents() {
        let docs = documents("# only a comment\n---\n---\nkind: Pod\n...\n");
        assert_eq!(docs.len(), 1);
        assert_eq!((docs[0].line, docs[0].kind()), (4, Some("Pod")));
        assert!(!documents("- a\n- b\n")[0].is_mapping());
    }

    #[test]
    fn scalars_are_found_by_a_test_on_their_path_and_value() {
        let doc = &documents(DEPLOYMENT)[0];
        assert_eq!(doc.find_scalar(&|path, v| path.ends_with(".image") && v.contains(':')), Some(17));
    }

    #[test]
    fn any_text_is_read_without_panicking() {
        let samples =
            ["", "-", "- -\n  -", ":", "a:\n- b\n -c\n  d: [\n", "\t- x: y\n  ? z", "key: |\n\u{e9}\n---x\n--- - a\n"];
        for s in samples {
            let docs = documents(s);
            for d in &docs {
                let _ = d.locate("a.b[0].c[x]");
                let _ = d.kind();
            }
        }
        assert_eq!(documents("--- - a\n")[0].locate("[0]").line, 1);
    }
}
