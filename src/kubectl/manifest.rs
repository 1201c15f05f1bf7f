//! Reading manifests: YAML (or JSON) documents into typed-but-unvalidated bodies, with the
//! errors kubectl prints before anything reaches the API server.

use crate::api::Kind;
use crate::yaml::{self, YamlError};
use serde_json::Value;

/// One document of a manifest, mapped to a kind the API serves.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    pub kind: Kind,
    pub body: Value,
    /// The 1-based line where the document starts in its file.
    pub line: usize,
}

impl Document {
    pub fn name(&self) -> &str {
        self.body.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
    }
    pub fn namespace(&self) -> &str {
        self.body.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("")
    }
}

/// Splits a file into documents (skipping empty ones). A syntax error anywhere fails the
/// whole file, as kubectl does; so does a document whose kind the API does not serve.
pub fn parse(text: &str, source: &str) -> Result<Vec<Document>, String> {
    parse_each(text, source)?.into_iter().collect()
}

/// Splits a file into its objects, a `kind: List` into its items: each object mapped to a
/// kind the API serves, or kubectl's error for that one object (`resource mapping not
/// found`), which leaves the others to be sent. A syntax error fails the whole file.
pub fn parse_each(text: &str, source: &str) -> Result<Vec<Result<Document, String>>, String> {
    if let Some((_, rest)) = bad_separator(text) {
        return Err(format!("error: error parsing {source}: invalid Yaml document separator: {rest}"));
    }
    let mut docs = Vec::new();
    let starts = document_start_lines(text);
    for (index, doc) in yaml::documents(text).enumerate() {
        let line = starts.get(index).copied().unwrap_or(1);
        let value = match doc {
            Ok(v) => v,
            Err(e) => return Err(yaml_error(&e, text, source)),
        };
        if value.is_null() {
            continue;
        }
        if !value.is_object() {
            let line = kubectl_line(text, first_content_line(text, line));
            return Err(format!(
                "error: error parsing {source}: error converting YAML to JSON: yaml: unmarshal errors:\n  line {line}: cannot unmarshal !!{} into map[string]interface {{}}",
                match value {
                    Value::Array(_) => "seq",
                    Value::String(_) => "str",
                    _ => "int",
                }
            ));
        }
        // A list (`kind: List`, or what `kubectl get -o yaml` prints for several objects):
        // its items, each an object of its own.
        let kind_name = value.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind_name.ends_with("List") {
            if let Some(items) = value.get("items").and_then(Value::as_array) {
                for item in items {
                    docs.push(map_object(item.clone(), line, source));
                }
                continue;
            }
        }
        docs.push(map_object(value, line, source));
    }
    Ok(docs)
}

/// One object mapped to the kind the API serves under its `apiVersion` and `kind`.
fn map_object(value: Value, line: usize, source: &str) -> Result<Document, String> {
    let api_version = value.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind_name = value.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind_name.is_empty() || api_version.is_empty() {
        let missing = if kind_name.is_empty() { "kind" } else { "apiVersion" };
        return Err(format!(
            "error: error validating \"{source}\": error validating data: {missing} not set; if you choose to ignore these errors, turn validation off with --validate=false"
        ));
    }
    let Some(kind) = Kind::from_type_meta(api_version, kind_name) else {
        let name = value.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        let ns = value.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("");
        return Err(format!(
            "error: resource mapping not found for name: \"{name}\" namespace: \"{ns}\" from \"{source}\": no matches for kind \"{kind_name}\" in version \"{api_version}\"\nensure CRDs are installed first"
        ));
    };
    Ok(Document { kind, body: value, line })
}

/// kubectl splits a stream at lines that begin with `---` before any YAML is read, and such a
/// line may carry only spaces or a comment after it: the first that carries more (its 1-based
/// line and what it carries).
pub fn bad_separator(text: &str) -> Option<(usize, &str)> {
    text.lines().enumerate().find_map(|(i, line)| {
        let rest = line.strip_prefix("---")?.trim();
        (!rest.is_empty() && !rest.starts_with('#')).then_some((i + 1, rest))
    })
}

/// Where each `---`-separated document begins.
fn document_start_lines(text: &str) -> Vec<usize> {
    let mut starts = vec![1];
    for (i, line) in text.lines().enumerate() {
        if line.trim_end() == "---" || line.starts_with("--- ") {
            if i == 0 {
                starts[0] = 2;
            } else {
                starts.push(i + 2);
            }
        }
    }
    starts
}

/// A YAML syntax error in go-yaml's words: `yaml: line 3: mapping values are not allowed in this context`.
/// kubectl splits the file at its `---` lines before reading each document, so the line is
/// counted from the start of the failing document.
fn yaml_error(e: &YamlError, text: &str, source: &str) -> String {
    // A decoder error (excessive aliasing) has no line to translate.
    let line = if e.line == 0 { 0 } else { kubectl_line(text, e.line) };
    let e = YamlError { message: e.message.clone(), line };
    format!("error: error parsing {source}: error converting YAML to JSON: {e}")
}

/// A line of the file as kubectl numbers it in errors: from just after the last `---` line
/// above it (kubectl reads each document on its own).
pub fn kubectl_line(text: &str, line: usize) -> usize {
    let separator = text
        .lines()
        .take(line.saturating_sub(1))
        .enumerate()
        .filter(|(_, l)| l.strip_prefix("---").is_some_and(|rest| rest.trim().is_empty()))
        .map(|(i, _)| i + 1)
        .last()
        .unwrap_or(0);
    line.saturating_sub(separator).max(1)
}

/// The first line at or after `line` that holds more than blanks or a comment.
fn first_content_line(text: &str, line: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(line.saturating_sub(1))
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map_or(line, |(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_document_files_yield_each_object() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n---\n";
        let docs = parse(text, "x.yaml").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!((docs[0].kind, docs[0].name()), (Kind::Pod, "a"));
        assert_eq!((docs[1].kind, docs[1].line), (Kind::Namespace, 6));
    }

    #[test]
    fn a_separator_may_carry_a_comment_but_nothing_else() {
        let ns = |n: &str| format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {n}\n");
        let commented = format!("{}--- # the second\n{}---   \n{}", ns("a"), ns("b"), ns("c"));
        assert_eq!(parse(&commented, "x.yaml").unwrap().len(), 3);
        let text = format!("{}--- b\n{}", ns("a"), ns("b"));
        assert_eq!(
            parse(&text, "x.yaml").unwrap_err(),
            "error: error parsing x.yaml: invalid Yaml document separator: b"
        );
        let four = format!("{}----\n{}", ns("a"), ns("b"));
        assert_eq!(
            parse(&four, "x.yaml").unwrap_err(),
            "error: error parsing x.yaml: invalid Yaml document separator: -"
        );
    }

    #[test]
    fn bad_yaml_names_the_line() {
        let err = parse("apiVersion: v1\nkind: Pod\nmetadata: name: x\n", "STDIN").unwrap_err();
        assert!(err.starts_with("error: error parsing STDIN: error converting YAML to JSON: yaml: line 3: "), "{err}");
    }

    #[test]
    fn a_yaml_error_in_a_later_document_counts_lines_from_that_document_as_kubectl_does() {
        let text =
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Pod\nmetadata: name: x\n";
        let err = parse(text, "STDIN").unwrap_err();
        assert!(err.contains("yaml: line 3: mapping values"), "{err}");
        let err = parse("---\napiVersion: v1\nmetadata: name: x\n", "STDIN").unwrap_err();
        assert!(err.contains("yaml: line 2: "), "{err}");
        let err =
            parse("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n# list\n- x\n", "STDIN").unwrap_err();
        assert!(err.ends_with("  line 2: cannot unmarshal !!seq into map[string]interface {}"), "{err}");
    }

    #[test]
    fn unknown_kinds_are_not_mapped() {
        let err = parse("apiVersion: apps/v1\nkind: Deploymnt\nmetadata:\n  name: x\n", "web.yaml").unwrap_err();
        assert_eq!(
            err,
            "error: resource mapping not found for name: \"x\" namespace: \"\" from \"web.yaml\": no matches for kind \"Deploymnt\" in version \"apps/v1\"\nensure CRDs are installed first"
        );
    }

    #[test]
    fn a_list_is_read_as_its_items_and_an_unknown_kind_fails_only_itself() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n- apiVersion: x.io/v1\n  kind: Widget\n  metadata:\n    name: w\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n";
        let each = parse_each(text, "f.yaml").unwrap();
        let kinds: Vec<Result<Kind, &str>> =
            each.iter().map(|d| d.as_ref().map(|d| d.kind).map_err(|e| e.lines().next().unwrap_or(""))).collect();
        assert_eq!(
            kinds,
            vec![
                Ok(Kind::ConfigMap),
                Err(
                    "error: resource mapping not found for name: \"w\" namespace: \"\" from \"f.yaml\": no matches for kind \"Widget\" in version \"x.io/v1\""
                ),
                Ok(Kind::Secret)
            ]
        );
        assert!(parse(text, "f.yaml").is_err(), "read strictly, the unknown kind fails the file");
    }

    #[test]
    fn a_missing_kind_is_a_validation_error() {
        let err = parse("apiVersion: v1\nmetadata:\n  name: x\n", "STDIN").unwrap_err();
        assert!(err.contains("kind not set"));
    }
}
