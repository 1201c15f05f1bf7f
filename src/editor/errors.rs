//! Which line of a manifest an error from `kubectl apply|create|replace|delete -f` is about:
//! reads kubectl's own error text (YAML syntax errors, unknown fields, invalid objects,
//! unknown kinds, errors naming an object) and finds the line in the manifest it sent.

use super::lines::{self, Document};
use crate::api::{Kind, Quantity};

/// A line of the manifest and the error that points at it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// 1-based, counted from the top of the whole text.
    pub line: usize,
    pub message: String,
}

impl Mark {
    /// The line number kubectl's message names when it differs from the mark's: kubectl
    /// counts a YAML error's line from the start of its document, not of the whole text.
    pub fn kubectl_line(&self) -> Option<usize> {
        let n: usize = between(&self.message, "yaml: line ", ":")?.parse().ok()?;
        (n != self.line).then_some(n)
    }
}

/// The lines `stderr` (what kubectl printed for `text`) points at, in line order; one mark per
/// line, its messages joined.
pub fn locate(text: &str, stderr: &str) -> Vec<Mark> {
    let docs = lines::documents(text);
    let mut marks: Vec<Mark> = Vec::new();
    let mut errors = stderr.lines().peekable();
    while let Some(error) = errors.next() {
        if let Some((kind, name, first)) = invalid_head(error) {
            let mut causes: Vec<&str> = Vec::new();
            if first.is_empty() {
                while let Some(cause) = errors.peek().and_then(|l| l.strip_prefix("* ")) {
                    causes.push(cause);
                    errors.next();
                }
            } else {
                causes.push(first);
            }
            let Some(doc) = find(&docs, Some(kind), Some(name)) else { continue };
            for cause in causes {
                let path = cause.split(": ").next().unwrap_or("");
                marks.push(Mark { line: doc.locate(path).line, message: cause.to_string() });
            }
        } else if error.contains("error converting YAML to JSON: ") {
            let mut message = error.to_string();
            if error.ends_with("unmarshal errors:") {
                if let Some(detail) = errors.next() {
                    message = format!("{message}\n{detail}");
                }
            }
            if let Some(line) = yaml_error_line(text, &docs) {
                marks.push(Mark { line, message });
            }
        } else if error.contains("invalid Yaml document separator: ") {
            if let Some((line, _)) = crate::kubectl::manifest::bad_separator(text) {
                marks.push(Mark { line, message: error.to_string() });
            }
        } else if let Some(kind) = between(error, " cannot be handled as a ", ":") {
            marks.extend(decode_marks(&docs, kind, error));
        } else if let Some(name) = between(error, "resource mapping not found for name: \"", "\"") {
            let kind = between(error, "no matches for kind \"", "\"");
            if let Some(doc) = docs.iter().find(|d| d.kind() == kind && d.name().unwrap_or("") == name) {
                marks.push(Mark { line: doc.locate("kind").line, message: error.to_string() });
            }
        } else if let Some(missing) = between(error, "error validating data: ", " not set") {
            if let Some(doc) = docs.iter().find(|d| d.scalar(missing).is_none()) {
                marks.push(Mark { line: doc.line, message: error.to_string() });
            }
        } else if let Some(ns) = between(error, "the namespace from the provided object \"", "\"") {
            if let Some(doc) = docs.iter().find(|d| d.scalar("metadata.namespace") == Some(ns)) {
                marks.push(Mark { line: doc.locate("metadata.namespace").line, message: error.to_string() });
            }
        } else if let Some((kind, name)) = named_object(error) {
            if let Some(doc) = find(&docs, Some(kind), Some(name)) {
                // A conflict is about the resourceVersion the text carries (kubectl edit's).
                let field = if error.contains("the object has been modified") {
                    "metadata.resourceVersion"
                } else {
                    "metadata.name"
                };
                marks.push(Mark { line: doc.locate(field).line, message: error.to_string() });
            } else if kind == "Namespace" {
                // `namespaces "x" not found`: the documents that name that namespace.
                let line = docs.iter().find(|d| d.scalar("metadata.namespace") == Some(name));
                if let Some(doc) = line {
                    marks.push(Mark { line: doc.locate("metadata.namespace").line, message: error.to_string() });
                }
            }
        }
    }
    // In line order, one mark per line (a few marks: no sort needed).
    let mut merged: Vec<Mark> = Vec::new();
    for mark in marks {
        let at = merged.partition_point(|m| m.line < mark.line);
        match merged.get_mut(at) {
            Some(same) if same.line == mark.line => {
                same.message.push('\n');
                same.message.push_str(&mark.message);
            }
            _ => merged.insert(at, mark),
        }
    }
    merged
}

/// `The Deployment "web" is invalid: ` and what follows it on the line.
fn invalid_head(error: &str) -> Option<(&str, &str, &str)> {
    let rest = error.strip_prefix("The ")?;
    let (kind, rest) = rest.split_once(" \"")?;
    let (name, rest) = rest.split_once("\" is invalid:")?;
    Some((kind, name, rest.trim()))
}

/// The text between `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let len = text[from..].find(end)?;
    Some(&text[from..from + len])
}

/// The document of that kind and name (either may be unknown).
fn find<'d>(docs: &'d [Document], kind: Option<&str>, name: Option<&str>) -> Option<&'d Document> {
    docs.iter().find(|d| kind.is_none_or(|k| d.kind() == Some(k)) && name.is_none_or(|n| d.name() == Some(n)))
}

/// Where the reader stopped: the first document that is not YAML, or not a mapping.
fn yaml_error_line(text: &str, docs: &[Document]) -> Option<usize> {
    for doc in crate::yaml::documents(text) {
        if let Err(e) = doc {
            // An error without a line (excessive aliasing) marks the first document.
            return Some(if e.line == 0 { docs.first().map_or(1, |d| d.line) } else { e.line });
        }
    }
    docs.iter().find(|d| !d.is_mapping()).map(|d| d.line)
}

/// `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "x"`:
/// the API server could not decode a body. Its message names no object, so the field decides
/// which document of that kind it was.
fn decode_marks(docs: &[Document], kind: &str, error: &str) -> Vec<Mark> {
    let of_kind: Vec<&Document> = docs.iter().filter(|d| d.kind() == Some(kind)).collect();
    let mut marks = Vec::new();
    let mut rest = error;
    let mut fields = Vec::new();
    while let Some(at) = rest.find(" field \"") {
        let after = &rest[at + " field \"".len()..];
        let Some(end) = after.find('"') else { break };
        fields.push(&after[..end]);
        rest = &after[end..];
    }
    for field in fields {
        let found = of_kind.iter().map(|d| d.locate(field)).find(|l| l.exact);
        if let Some(line) = found.map(|l| l.line).or_else(|| of_kind.first().map(|d| d.locate(field).line)) {
            marks.push(Mark { line, message: error.to_string() });
        }
    }
    if marks.is_empty() && error.contains("quantities must match") {
        let bad_quantity = |path: &str, value: &str| {
            (path.contains("resources.") || path.contains(".capacity.") || path.contains("sizeLimit"))
                && Quantity::parse(value).is_err()
        };
        if let Some(line) = of_kind.iter().find_map(|d| d.find_scalar(&bad_quantity)) {
            marks.push(Mark { line, message: error.to_string() });
        }
    }
    if marks.is_empty() {
        if let [only] = of_kind.as_slice() {
            marks.push(Mark { line: only.line, message: error.to_string() });
        }
    }
    marks
}

/// The object an API error names: `deployments.apps "web" not found`, `pods "web" already
/// exists`, `Operation cannot be fulfilled on pods "web": ...`.
fn named_object(error: &str) -> Option<(&'static str, &str)> {
    let mut rest = error;
    while let Some(open) = rest.find(" \"") {
        let word_start = rest[..open].rfind(' ').map_or(0, |s| s + 1);
        let resource = &rest[word_start..open];
        let after = &rest[open + 2..];
        let close = after.find('"')?;
        let name = &after[..close];
        if let Some(kind) = Kind::from_resource_arg(resource).filter(|_| !resource.is_empty()) {
            if resource.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                return Some((kind.info().kind, name));
            }
        }
        rest = &after[close..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    /// What `kubectl <verb> -f -` prints on stderr for `manifest` in a fresh sandbox.
    fn stderr_of(verb: &str, manifest: &str) -> String {
        let mut session = Session::new(1);
        let command = Command { line: format!("kubectl {verb} -f -"), heredoc: Some(("EOF".into(), manifest.into())) };
        session.execute(&command).stderr
    }

    fn lines_of(marks: &[Mark]) -> Vec<usize> {
        marks.iter().map(|m| m.line).collect()
    }

    #[test]
    fn a_separator_carrying_text_is_marked_where_it_is() {
        let text = format!("{POD}--- oops\n{POD}");
        assert_eq!(lines_of(&locate(&text, &stderr_of("apply", &text))), [9]);
    }

    const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: nginx:1.25
";

    const DEPLOYMENT: &str = "apiVersion: apps/v1
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
      labels:
        app: x
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
";

    #[test]
    fn a_yaml_syntax_error_marks_the_line_the_reader_stopped_at() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: name: web\n";
        let marks = locate(text, &stderr_of("apply", text));
        assert_eq!(lines_of(&marks), [3]);
        assert!(
            marks[0].message.starts_with("error: error parsing STDIN: error converting YAML to JSON: yaml: line 3: ")
        );
    }

    #[test]
    fn a_yaml_error_in_a_later_document_marks_its_line_in_the_whole_text() {
        let text = format!("{POD}---\napiVersion: v1\nkind: Pod\nmetadata: name: x\n");
        let marks = locate(&text, &stderr_of("apply", &text));
        assert_eq!(lines_of(&marks), [12]);
        // kubectl counts the line from the start of the failing document.
        assert!(marks[0].message.contains("yaml: line 3: "), "{}", marks[0].message);
        assert_eq!(marks[0].kubectl_line(), Some(3));
    }

    #[test]
    fn an_unknown_field_marks_its_key() {
        let text = POD.replace("image:", "imagee:");
        let marks = locate(&text, &stderr_of("apply", &text));
        assert_eq!(lines_of(&marks), [8]);
        assert!(marks[0].message.ends_with("strict decoding error: unknown field \"spec.containers[0].imagee\""));
    }

    #[test]
    fn an_unknown_field_in_the_second_of_two_pods_marks_that_pod() {
        let text = format!("{POD}---\n{}", POD.replace("name: web", "name: two").replace("image:", "imagee:"));
        let marks = locate(&text, &stderr_of("apply", &text));
        assert_eq!(lines_of(&marks), [17]);
    }

    #[test]
    fn each_cause_of_an_invalid_object_marks_its_field() {
        let text = DEPLOYMENT;
        let marks = locate(text, &stderr_of("apply", text));
        assert_eq!(lines_of(&marks), [6, 12]);
        assert_eq!(marks[0].message, "spec.replicas: Invalid value: -1: must be greater than or equal to 0");
        assert!(marks[1].message.starts_with("spec.template.metadata.labels: Invalid value: "));
    }

    #[test]
    fn a_single_cause_on_the_invalid_line_itself_is_marked() {
        let text = POD.replace("    image: nginx:1.25\n", "");
        let stderr = stderr_of("apply", &text);
        assert!(stderr.starts_with("The Pod \"web\" is invalid: spec.containers[0].image: Required value"), "{stderr}");
        assert_eq!(lines_of(&locate(&text, &stderr)), [7]);
    }

    #[test]
    fn an_unknown_kind_marks_its_kind_line() {
        let text = format!("{POD}---\napiVersion: apps/v1\nkind: Deploymnt\nmetadata:\n  name: x\n");
        let marks = locate(&text, &stderr_of("apply", &text));
        assert_eq!(lines_of(&marks), [11]);
    }

    #[test]
    fn a_bad_quantity_marks_the_value_that_is_not_one() {
        let text = format!("{POD}    resources:\n      requests:\n        cpu: 1 core\n");
        let marks = locate(&text, &stderr_of("apply", &text));
        assert_eq!(lines_of(&marks), [11]);
    }

    #[test]
    fn deleting_what_does_not_exist_marks_its_name() {
        let text = format!("{POD}---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n");
        let marks = locate(&text, &stderr_of("delete", &text));
        assert_eq!(lines_of(&marks), [4, 13]);
        assert_eq!(
            marks[1].message,
            "Error from server (NotFound): error when deleting \"STDIN\": deployments.apps \"api\" not found"
        );
    }

    #[test]
    fn a_namespace_that_does_not_exist_marks_the_line_naming_it() {
        let text = POD.replace("  name: web\n", "  name: web\n  namespace: nowhere\n");
        let stderr = stderr_of("apply", &text);
        assert!(stderr.contains("namespaces \"nowhere\" not found"), "{stderr}");
        assert_eq!(lines_of(&locate(&text, &stderr)), [5]);
    }

    #[test]
    fn a_conflict_marks_the_resource_version_the_text_carries() {
        let text = POD.replace("  name: web\n", "  name: web\n  resourceVersion: \"1\"\n");
        let stderr = "Error from server (Conflict): error when replacing \"STDIN\": Operation cannot be fulfilled on pods \"web\": the object has been modified; please apply your changes to the latest version and try again";
        assert_eq!(lines_of(&locate(&text, stderr)), [5]);
    }

    #[test]
    fn a_missing_kind_marks_its_document() {
        let text = format!("{POD}---\napiVersion: v1\nmetadata:\n  name: x\n");
        assert_eq!(lines_of(&locate(&text, &stderr_of("apply", &text))), [10]);
    }

    #[test]
    fn mangled_manifests_never_panic_the_editors_readers() {
        let stderr = "The Pod \"web\" is invalid: \n* spec.containers[0].image: Required value\n\
            Error from server (BadRequest): error when creating \"STDIN\": Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.x[3].y\"\n\
            error: error parsing STDIN: error converting YAML to JSON: yaml: line 2: x\n\
            Error from server (NotFound): pods \"web\" not found";
        let pieces = [
            ":", "- ", " ", "\n", "\"", "'", "[", "]", "{", "}", "|", ">", "#", "&a ", "*", "!", "---\n", "\t",
            "\u{e9}",
        ];
        let mut seed = 7u64;
        let mut next = move |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n.max(1)
        };
        let samples = [POD, DEPLOYMENT, include_str!("../../tests/scenarios/service_routing.txt")];
        for example in samples {
            for _ in 0..150 {
                let mut text: Vec<char> = example.chars().collect();
                for _ in 0..1 + next(6) {
                    let at = next(text.len() + 1);
                    if next(2) == 0 && at < text.len() {
                        text.remove(at);
                    } else {
                        text.splice(at..at, pieces[next(pieces.len())].chars());
                    }
                }
                let text: String = text.into_iter().collect();
                let _ = super::super::highlight::highlight(&text);
                for mark in locate(&text, stderr) {
                    assert!(mark.line >= 1 && mark.line <= text.split('\n').count(), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn output_that_names_nothing_in_the_manifest_marks_nothing() {
        assert!(locate(POD, "error: something else\nThe Pod \"other\" is invalid: x: Required value").is_empty());
        assert!(locate("", "").is_empty());
        assert!(
            locate("a: [", "error: error parsing STDIN: error converting YAML to JSON: yaml: line 1: x").len() == 1
        );
    }

    /// A manifest of `lines` comment lines after a ConfigMap's head (about 60 bytes a line).
    fn commented(lines: usize) -> String {
        let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n");
        for i in 0..lines {
            text.push_str(&format!("# comment line {i}, padded out with a few more words to be long\n"));
        }
        text
    }

    #[test]
    fn a_200_kb_manifest_of_comments_is_applied_highlighted_and_marked_in_linear_time() {
        let text = commented(3300).replace("name: c", "name: C");
        assert!(text.len() > 200_000);
        let mut timings = Vec::new();
        let started = std::time::Instant::now();
        let stderr = stderr_of("apply", &text);
        timings.push(("apply", started.elapsed()));
        let started = std::time::Instant::now();
        let _ = super::super::highlight::highlight(&text);
        timings.push(("highlight", started.elapsed()));
        let started = std::time::Instant::now();
        let _ = lines::documents(&text);
        timings.push(("outline", started.elapsed()));
        let started = std::time::Instant::now();
        let marks = locate(&text, &stderr);
        timings.push(("locate", started.elapsed()));
        assert_eq!(lines_of(&marks), [4], "{stderr}");
        eprintln!("{timings:?}");
        for (what, took) in timings {
            // Each takes 1 to 50 ms in a debug build; the bound leaves room for a loaded machine.
            assert!(took < std::time::Duration::from_secs(3), "{what} took {took:?}");
        }
    }

    #[test]
    fn a_manifest_nested_thousands_of_levels_is_outlined_and_marked_on_a_small_stack() {
        let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n");
        // 2,000 levels of indentation (2 MB); flow and compact ones 10,000 deep.
        for i in 0..2_000 {
            text.push_str(&" ".repeat(i + 1));
            text.push_str("k:\n");
        }
        let flow = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\ndata: {}\n", "[".repeat(10_000));
        let seq = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n{}x\n", "- ".repeat(10_000));
        // A page's stack, not a native thread's 8 MiB.
        let handle = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                let mut all = Vec::new();
                for text in [text, flow, seq] {
                    let stderr = "error: error parsing STDIN: error converting YAML to JSON: yaml: line 132: exceeded max depth of 128";
                    let _ = super::super::highlight::highlight(&text);
                    let outline = lines::documents(&text);
                    all.push((outline.len(), lines_of(&locate(&text, stderr))));
                }
                all
            })
            .unwrap();
        let all = handle.join().expect("no stack overflow");
        assert_eq!(all.len(), 3);
        assert!(all.iter().all(|(docs, marks)| *docs == 1 && marks.len() == 1), "{all:?}");
    }
}
