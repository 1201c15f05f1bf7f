//! `kubectl get`'s template output formats and sorting: `-o jsonpath=...`, `-o jsonpath-as-json=...`,
//! `-o custom-columns=HEADER:path,...` and `--sort-by=<jsonpath>`.

use super::jsonpath::{Template, relaxed, text_of};
use crate::api::Object;
use crate::util::sort::StableSort;
use serde_json::Value;
use std::cmp::Ordering;
use std::sync::Arc;

/// The `-o` formats this module prints.
pub fn is_template_format(output: &str) -> bool {
    let name = output.split_once('=').map_or(output, |(n, _)| n);
    matches!(name, "jsonpath" | "jsonpath-as-json" | "custom-columns")
}

/// Whether `get` should print "No resources found" for an empty result in this format.
pub fn is_tabular(output: &str) -> bool {
    output.starts_with("custom-columns")
}

/// Checks the format before any request is sent.
pub fn validate(output: &str) -> Result<(), String> {
    match output.split_once('=') {
        None if output.starts_with("jsonpath") => Err("error: template format specified but no template given".into()),
        None => Err("error: custom-columns format specified but no custom columns given".into()),
        Some(("jsonpath" | "jsonpath-as-json", t)) => {
            Template::parse(t).map(|_| ()).map_err(|e| format!("error: error parsing jsonpath {t}, {e}"))
        }
        Some((_, spec)) => columns(spec).map(|_| ()),
    }
}

fn columns(spec: &str) -> Result<Vec<(String, Template)>, String> {
    if spec.is_empty() {
        return Err("error: custom-columns format specified but no custom columns given".into());
    }
    spec.split(',')
        .map(|part| {
            let (header, path) =
                part.split_once(':').filter(|(h, p)| !h.is_empty() && !p.is_empty()).ok_or_else(|| {
                    format!("error: unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
                })?;
            let path = relaxed(path).map_err(|e| format!("error: {e}"))?;
            let t = Template::parse(&path).map_err(|e| format!("error: error parsing jsonpath {path}, {e}"))?;
            Ok((header.to_string(), t))
        })
        .collect()
}

/// Prints objects in a template format. `list` is whether the query named a type rather
/// than objects (then JSONPath sees a `List`).
pub fn print(output: &str, objects: &[Arc<Object>], list: bool, no_headers: bool) -> Result<String, String> {
    let values: Vec<Value> = objects.iter().map(|o| o.to_json_value()).collect();
    match output.split_once('=') {
        Some((format @ ("jsonpath" | "jsonpath-as-json"), t)) => {
            let template = Template::parse(t).map_err(|e| format!("error: error parsing jsonpath {t}, {e}"))?;
            let root = if values.len() == 1 && !list {
                values.into_iter().next().unwrap_or(Value::Null)
            } else {
                crate::util::json_macro::json!({"apiVersion": "v1", "items": values, "kind": "List", "metadata": {"resourceVersion": ""}})
            };
            let result = if format == "jsonpath" {
                template.execute(&root)
            } else {
                template.execute_json(&root).map(|values| super::to_json(&Value::Array(values)))
            };
            result.map_err(|e| format!("error: error executing jsonpath \"{t}\": Error executing template: {e}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{t}\n\tobject given to jsonpath engine was:\n\t\t{}\n\n", super::jsonpath::go_syntax(&root)))
        }
        Some((_, spec)) => {
            let cols = columns(spec)?;
            let mut rows: Vec<Vec<String>> = Vec::new();
            if !no_headers {
                rows.push(cols.iter().map(|(h, _)| h.clone()).collect());
            }
            for v in &values {
                let mut row = Vec::new();
                for (_, t) in &cols {
                    let found = t.values(v).unwrap_or_default();
                    let cells: Vec<String> = found.iter().map(|x| go_text(x)).collect();
                    row.push(if cells.is_empty() { "<none>".into() } else { cells.join(",") });
                }
                rows.push(row);
            }
            Ok(super::table::render(&rows))
        }
        None => validate(output).map(|_| String::new()),
    }
}

/// Prints one JSON value through `-o jsonpath=...` (for `config view`).
pub fn print_value(output: &str, value: &Value) -> super::Output {
    let t = output.strip_prefix("jsonpath=").unwrap_or("");
    if t.is_empty() {
        return super::Output::err("error: template format specified but no template given");
    }
    match Template::parse(t) {
        Ok(template) => match template.execute(value) {
            Ok(s) => super::Output::ok(s),
            Err(e) => {
                super::Output::err(format!("error: error executing jsonpath \"{t}\": Error executing template: {e}"))
            }
        },
        Err(e) => super::Output::err(format!("error: error parsing jsonpath {t}, {e}")),
    }
}

/// A value as Go's `%v` prints it in custom columns: `map[k:v]`, `[a b]`.
fn go_text(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", go_text(v))).collect();
            format!("map[{}]", parts.join(" "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(go_text).collect::<Vec<_>>().join(" ")),
        other => text_of(other),
    }
}

/// `--sort-by`: orders objects by the first value the path finds, numbers numerically.
pub fn sort(objects: &mut [Arc<Object>], expr: &str) -> Result<(), String> {
    let path = relaxed(expr).map_err(|e| format!("error: {e}"))?;
    let template = Template::parse(&path).map_err(|e| format!("error: error parsing jsonpath {path}, {e}"))?;
    let mut keyed: Vec<(Option<Value>, Arc<Object>)> = objects
        .iter()
        .map(|o| {
            let v = o.to_json_value();
            let key = template.values(&v).ok().and_then(|vals| vals.first().map(|x| (*x).clone()));
            (key, o.clone())
        })
        .collect();
    if !objects.is_empty() && keyed.iter().all(|(k, _)| k.is_none()) {
        return Err(format!("error: couldn't find any field with path \"{path}\" in the list of objects"));
    }
    keyed.stable_sort_by(|(a, _), (b, _)| compare(a.as_ref(), b.as_ref()));
    for (slot, (_, o)) in objects.iter_mut().zip(keyed) {
        *slot = o;
    }
    Ok(())
}

fn compare(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(Value::Number(x)), Some(Value::Number(y))) => {
            x.as_f64().partial_cmp(&y.as_f64()).unwrap_or(Ordering::Equal)
        }
        (Some(x), Some(y)) => text_of(x).cmp(&text_of(y)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_column_specs_need_a_header_and_a_path() {
        assert!(validate("custom-columns=NAME:.metadata.name,PHASE:status.phase").is_ok());
        assert_eq!(
            validate("custom-columns=NAME").unwrap_err(),
            "error: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"
        );
        assert_eq!(validate("jsonpath").unwrap_err(), "error: template format specified but no template given");
    }

    #[test]
    fn go_prints_maps_and_lists_its_own_way() {
        assert_eq!(go_text(&serde_json::json!({"a": "b", "c": 1})), "map[a:b c:1]");
        assert_eq!(go_text(&serde_json::json!(["x", "y"])), "[x y]");
    }
}
