//! kubectl's JSONPath templates (`-o jsonpath=`, `--sort-by`, custom columns): text with
//! `{...}` actions — paths (`.a.b`, `[0]`, `[*]`, `[1:3]`, `..name`, `['key']`, filters
//! `[?(@.type=="Ready")]`), quoted literals (`{"\n"}`) and `{range ...}...{end}`.

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Root,
    Current,
    Field(String),
    Recursive(String),
    Wildcard,
    Index(i64),
    Slice(Option<i64>, Option<i64>),
    Union(Vec<Step>),
    Filter(Box<Filter>),
}

#[derive(Clone, Debug, PartialEq)]
struct Filter {
    left: Vec<Step>,
    op: Option<(String, Operand)>,
}

#[derive(Clone, Debug, PartialEq)]
enum Operand {
    Literal(Value),
    Path(Vec<Step>),
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Text(String),
    Path(Vec<Step>),
    Range(Vec<Step>, Vec<Node>),
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    nodes: Vec<Node>,
}

impl Template {
    /// Parses a template; errors read as kubectl's (`error parsing jsonpath ...`).
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut stack: Vec<(Vec<Step>, Vec<Node>)> = Vec::new();
        let mut nodes: Vec<Node> = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                nodes.push(Node::Text(rest.to_string()));
                break;
            };
            if open > 0 {
                nodes.push(Node::Text(rest[..open].to_string()));
            }
            let inner_start = open + 1;
            let Some(close) = find_close(&rest[inner_start..]) else {
                // Upstream parses the action before it misses the brace.
                let action = rest[inner_start..].trim();
                let path = action.strip_prefix("range").map_or(action, str::trim_start);
                if !path.starts_with(['"', '\'']) {
                    parse_path(path)?;
                }
                return Err("unclosed action".into());
            };
            let action = rest[inner_start..inner_start + close].trim();
            rest = &rest[inner_start + close + 1..];
            if action == "end" {
                let Some((path, outer)) = stack.pop() else { return Err("not in range, nothing to end".into()) };
                let body = std::mem::replace(&mut nodes, outer);
                nodes.push(Node::Range(path, body));
            } else if let Some(path) = action.strip_prefix("range").filter(|p| p.starts_with([' ', '.', '$', '@', '[']))
            {
                let steps = parse_path(path.trim())?;
                stack.push((steps, std::mem::take(&mut nodes)));
            } else if action.starts_with('"') || action.starts_with('\'') {
                nodes.push(Node::Text(unquote(action)?));
            } else if action.is_empty() {
                continue;
            } else {
                nodes.push(Node::Path(parse_path(action)?));
            }
        }
        if !stack.is_empty() {
            return Err("unclosed range".into());
        }
        Ok(Template { nodes })
    }

    /// Runs the template over `root`, as kubectl prints it.
    pub fn execute(&self, root: &Value) -> Result<String, String> {
        let mut out = String::new();
        run_nodes(&self.nodes, root, root, &mut out)?;
        Ok(out)
    }

    /// Runs the template and collects every result as a JSON value (`-o jsonpath-as-json`).
    pub fn execute_json(&self, root: &Value) -> Result<Vec<Value>, String> {
        let mut out = Vec::new();
        collect_nodes(&self.nodes, root, root, &mut out)?;
        Ok(out)
    }

    /// Every value the template's first path finds (for sorting and custom columns).
    pub fn values<'a>(&self, root: &'a Value) -> Result<Vec<&'a Value>, String> {
        for node in &self.nodes {
            if let Node::Path(steps) = node {
                return eval(steps, root, root);
            }
        }
        Ok(Vec::new())
    }
}

/// kubectl's relaxed form for `--sort-by` and custom columns: `metadata.name`,
/// `.metadata.name`, `{metadata.name}` and `{.metadata.name}` all mean `{.metadata.name}`.
pub fn relaxed(expr: &str) -> Result<String, String> {
    let bad = || {
        "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'"
            .to_string()
    };
    let inner = match expr.strip_prefix('{') {
        Some(rest) => rest.strip_suffix('}').ok_or_else(bad)?,
        None => expr,
    };
    let inner = inner.strip_prefix('.').unwrap_or(inner);
    if inner.is_empty() || inner.contains(['{', '}']) {
        return Err(bad());
    }
    Ok(format!("{{.{inner}}}"))
}

fn find_close(text: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '}' => return Some(i),
                _ => {}
            },
        }
    }
    None
}

fn unquote(text: &str) -> Result<String, String> {
    let q = text.chars().next().unwrap_or('"');
    let body = text
        .strip_prefix(q)
        .and_then(|s| s.strip_suffix(q))
        .ok_or_else(|| format!("unterminated quoted string {text}"))?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    Ok(out)
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/')
}

fn parse_path(text: &str) -> Result<Vec<Step>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '$' => {
                steps.push(Step::Root);
                i += 1;
            }
            '@' => {
                steps.push(Step::Current);
                i += 1;
            }
            '.' => {
                i += 1;
                let recursive = chars.get(i) == Some(&'.');
                if recursive {
                    i += 1;
                }
                if chars.get(i) == Some(&'*') {
                    steps.push(Step::Wildcard);
                    i += 1;
                    continue;
                }
                // A name may hold escaped dots: `annotations.cronjob\.kubernetes\.io/instantiate`.
                let mut name = String::new();
                while i < chars.len() {
                    match chars[i] {
                        '\\' if chars.get(i + 1) == Some(&'.') => {
                            name.push('.');
                            i += 2;
                        }
                        c if is_name_char(c) => {
                            name.push(c);
                            i += 1;
                        }
                        _ => break,
                    }
                }
                if name.is_empty() {
                    if recursive || (i < chars.len() && chars[i] != '[') {
                        return Err(format!("unrecognized character in action: {}", chars.get(i).unwrap_or(&'.')));
                    }
                    continue;
                }
                steps.push(if recursive { Step::Recursive(name) } else { Step::Field(name) });
            }
            '[' => {
                let mut depth = 0;
                let mut quote: Option<char> = None;
                let start = i + 1;
                let mut end = None;
                for (j, &c) in chars.iter().enumerate().skip(i) {
                    match quote {
                        Some(q) if c == q => quote = None,
                        Some(_) => {}
                        None => match c {
                            '\'' | '"' => quote = Some(c),
                            '[' | '(' => depth += 1,
                            ']' | ')' => {
                                depth -= 1;
                                if depth == 0 {
                                    end = Some(j);
                                    break;
                                }
                            }
                            _ => {}
                        },
                    }
                }
                let end = end.ok_or_else(|| "unterminated array".to_string())?;
                let inner: String = chars[start..end].iter().collect();
                steps.push(parse_bracket(inner.trim())?);
                i = end + 1;
            }
            c if c.is_whitespace() => i += 1,
            c if is_name_char(c) && steps.is_empty() => {
                // A bare name at the start (`{metadata.name}`) reads as a field.
                let start = i;
                while i < chars.len() && is_name_char(chars[i]) {
                    i += 1;
                }
                steps.push(Step::Field(chars[start..i].iter().collect()));
            }
            c => return Err(format!("unrecognized character in action: U+{:04X} '{c}'", c as u32)),
        }
    }
    Ok(steps)
}

fn parse_bracket(inner: &str) -> Result<Step, String> {
    if inner == "*" || inner.is_empty() {
        return Ok(Step::Wildcard);
    }
    if let Some(filter) = inner.strip_prefix('?') {
        let body = filter
            .trim()
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .ok_or_else(|| format!("unrecognized filter: {inner}"))?;
        return Ok(Step::Filter(Box::new(parse_filter(body.trim())?)));
    }
    if inner.contains(',') {
        let parts: Result<Vec<Step>, String> = inner.split(',').map(|p| parse_bracket(p.trim())).collect();
        return Ok(Step::Union(parts?));
    }
    if inner.starts_with('\'') || inner.starts_with('"') {
        return Ok(Step::Field(unquote(inner)?));
    }
    if let Some((a, b)) = inner.split_once(':') {
        let b = b.split(':').next().unwrap_or("");
        let num = |s: &str| -> Result<Option<i64>, String> {
            let s = s.trim();
            if s.is_empty() { Ok(None) } else { s.parse().map(Some).map_err(|_| format!("invalid array index {s}")) }
        };
        return Ok(Step::Slice(num(a)?, num(b)?));
    }
    inner.parse::<i64>().map(Step::Index).map_err(|_| format!("invalid array index {inner}"))
}

fn parse_filter(body: &str) -> Result<Filter, String> {
    for op in ["==", "!=", "<=", ">=", "<", ">", "=~"] {
        if let Some((l, r)) = split_outside_quotes(body, op) {
            let left = parse_path(l.trim())?;
            let r = r.trim();
            let right = if r.starts_with('"') || r.starts_with('\'') {
                Operand::Literal(Value::String(unquote(r)?))
            } else if let Ok(n) = r.parse::<f64>() {
                Operand::Literal(crate::util::json_macro::json!(n))
            } else if r == "true" || r == "false" {
                Operand::Literal(Value::Bool(r == "true"))
            } else {
                Operand::Path(parse_path(r)?)
            };
            return Ok(Filter { left, op: Some((op.to_string(), right)) });
        }
    }
    Ok(Filter { left: parse_path(body)?, op: None })
}

fn split_outside_quotes<'a>(text: &'a str, op: &str) -> Option<(&'a str, &'a str)> {
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if text[i..].starts_with(op) => return Some((&text[..i], &text[i + op.len()..])),
            None => {}
        }
    }
    None
}

fn run_nodes(nodes: &[Node], root: &Value, current: &Value, out: &mut String) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Path(steps) => {
                let values = eval(steps, root, current)?;
                let texts: Vec<String> = values.iter().map(|v| text_of(v)).collect();
                out.push_str(&texts.join(" "));
            }
            Node::Range(steps, body) => {
                let values = eval(steps, root, current)?;
                // `range` over one array iterates its elements.
                let items: Vec<&Value> = if values.len() == 1 {
                    match values[0] {
                        Value::Array(a) => a.iter().collect(),
                        v => vec![v],
                    }
                } else {
                    values
                };
                for item in items {
                    run_nodes(body, root, item, out)?;
                }
            }
        }
    }
    Ok(())
}

fn collect_nodes(nodes: &[Node], root: &Value, current: &Value, out: &mut Vec<Value>) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push(Value::String(t.clone())),
            Node::Path(steps) => out.extend(eval(steps, root, current)?.into_iter().cloned()),
            Node::Range(steps, body) => {
                let values = eval(steps, root, current)?;
                let items: Vec<&Value> = match values.as_slice() {
                    [Value::Array(a)] => a.iter().collect(),
                    _ => values,
                };
                for item in items {
                    collect_nodes(body, root, item, out)?;
                }
            }
        }
    }
    Ok(())
}

/// A value as JSONPath prints it: strings bare, everything else as compact JSON.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// A value as Go's `%#v` prints an unstructured object (kubectl's jsonpath debug output).
pub fn go_syntax(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap_or_default(), go_syntax(v)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Array(a) => format!("[]interface {{}}{{{}}}", a.iter().map(go_syntax).collect::<Vec<_>>().join(", ")),
        Value::Null => "interface {}(nil)".into(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn eval<'a>(steps: &[Step], root: &'a Value, current: &'a Value) -> Result<Vec<&'a Value>, String> {
    let mut values: Vec<&Value> = vec![current];
    for step in steps {
        let mut next = Vec::new();
        for v in values {
            apply(step, root, v, &mut next)?;
        }
        values = next;
    }
    Ok(values)
}

fn apply<'a>(step: &Step, root: &'a Value, v: &'a Value, next: &mut Vec<&'a Value>) -> Result<(), String> {
    match step {
        Step::Root => next.push(root),
        Step::Current => next.push(v),
        Step::Field(name) => {
            if let Some(x) = v.get(name.as_str()) {
                next.push(x);
            }
        }
        Step::Recursive(name) => collect_recursive(v, name, next),
        Step::Wildcard => match v {
            Value::Array(a) => next.extend(a.iter()),
            Value::Object(m) => next.extend(m.values()),
            _ => {}
        },
        Step::Index(i) => {
            if let Value::Array(a) = v {
                let len = a.len() as i64;
                let idx = if *i < 0 { len + i } else { *i };
                if idx < 0 || idx >= len {
                    return Err(format!("array index out of bounds: index {i}, length {len}"));
                }
                next.push(&a[idx as usize]);
            }
        }
        Step::Slice(from, to) => {
            if let Value::Array(a) = v {
                let len = a.len() as i64;
                let clamp = |x: i64| if x < 0 { (len + x).max(0) } else { x.min(len) };
                let from = clamp(from.unwrap_or(0));
                let to = clamp(to.unwrap_or(len));
                if from < to {
                    next.extend(a[from as usize..to as usize].iter());
                }
            }
        }
        Step::Union(parts) => {
            for p in parts {
                apply(p, root, v, next)?;
            }
        }
        Step::Filter(filter) => {
            let items: Vec<&Value> = match v {
                Value::Array(a) => a.iter().collect(),
                Value::Object(m) => m.values().collect(),
                _ => Vec::new(),
            };
            for item in items {
                if filter_matches(filter, root, item)? {
                    next.push(item);
                }
            }
        }
    }
    Ok(())
}

fn collect_recursive<'a>(v: &'a Value, name: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.get(name) {
                out.push(x);
            }
            for child in m.values() {
                collect_recursive(child, name, out);
            }
        }
        Value::Array(a) => {
            for child in a {
                collect_recursive(child, name, out);
            }
        }
        _ => {}
    }
}

fn filter_matches(filter: &Filter, root: &Value, item: &Value) -> Result<bool, String> {
    let left = eval(&filter.left, root, item)?;
    let Some((op, right)) = &filter.op else { return Ok(!left.is_empty()) };
    let rights: Vec<Value> = match right {
        Operand::Literal(v) => vec![v.clone()],
        Operand::Path(p) => eval(p, root, item)?.into_iter().cloned().collect(),
    };
    for l in &left {
        for r in &rights {
            if compare(l, op, r) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

fn compare(l: &Value, op: &str, r: &Value) -> bool {
    use std::cmp::Ordering;
    let ord = match (l, r) {
        (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
        _ => None,
    };
    match (op, ord) {
        ("==", Some(o)) => o == Ordering::Equal,
        ("!=", Some(o)) => o != Ordering::Equal,
        ("!=", None) => true,
        ("<", Some(o)) => o == Ordering::Less,
        (">", Some(o)) => o == Ordering::Greater,
        ("<=", Some(o)) => o != Ordering::Greater,
        (">=", Some(o)) => o != Ordering::Less,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list() -> Value {
        json!({"kind": "List", "items": [
            {"metadata": {"name": "a", "labels": {"app": "web"}}, "status": {"conditions": [
                {"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]},
             "spec": {"replicas": 3}},
            {"metadata": {"name": "b"}, "status": {"conditions": [{"type": "Ready", "status": "False"}]},
             "spec": {"replicas": 1}},
        ]})
    }

    fn run(t: &str) -> String {
        Template::parse(t).unwrap().execute(&list()).unwrap()
    }

    #[test]
    fn escaped_dots_belong_to_the_field_name() {
        let value = serde_json::json!({"metadata": {"annotations": {"a.b/c": "yes"}}, "data": {"tls.crt": "x"}});
        let run = |t: &str| Template::parse(t).unwrap().execute(&value).unwrap();
        assert_eq!(run("{.metadata.annotations.a\\.b/c}"), "yes");
        assert_eq!(run("{.data.tls\\.crt}"), "x");
    }

    #[test]
    fn wildcards_join_results_with_spaces() {
        assert_eq!(run("{.items[*].metadata.name}"), "a b");
    }

    #[test]
    fn ranges_repeat_their_body_for_each_item() {
        assert_eq!(run("{range .items[*]}{.metadata.name}{\"\\n\"}{end}"), "a\nb\n");
        assert_eq!(run("{range .items[*]}[{.metadata.name}]{end}"), "[a][b]");
    }

    #[test]
    fn indexes_slices_and_negative_indexes_pick_items() {
        assert_eq!(run("{.items[0].metadata.name}"), "a");
        assert_eq!(run("{.items[-1].metadata.name}"), "b");
        assert_eq!(run("{.items[0:1].metadata.name}"), "a");
    }

    #[test]
    fn filters_select_matching_elements() {
        assert_eq!(run("{.items[0].status.conditions[?(@.type==\"Ready\")].status}"), "True");
        assert_eq!(run("{.items[?(@.spec.replicas>2)].metadata.name}"), "a");
        assert_eq!(run("{.items[?(@.metadata.labels)].metadata.name}"), "a");
    }

    #[test]
    fn missing_keys_print_nothing_and_objects_print_as_json() {
        assert_eq!(run("{.items[1].metadata.labels}"), "");
        assert_eq!(run("{.items[0].metadata.labels}"), "{\"app\":\"web\"}");
        assert_eq!(run("x={.kind}"), "x=List");
    }

    #[test]
    fn json_output_collects_every_result() {
        let t = Template::parse("{.items[*].metadata.name}").unwrap();
        assert_eq!(t.execute_json(&list()).unwrap(), vec![json!("a"), json!("b")]);
    }

    #[test]
    fn recursive_descent_finds_every_name() {
        assert_eq!(run("{..name}"), "a b");
    }

    #[test]
    fn range_needs_no_space_before_its_path() {
        assert_eq!(run("{range.items[*]}{.metadata.name}{end}"), "ab");
    }

    #[test]
    fn an_unclosed_array_is_reported_before_the_unclosed_action() {
        assert_eq!(Template::parse("{.items[0").unwrap_err(), "unterminated array");
        assert_eq!(Template::parse("{.items[0]").unwrap_err(), "unclosed action");
    }

    #[test]
    fn bad_templates_are_errors() {
        assert!(Template::parse("{.items[0}").is_err());
        assert!(Template::parse("{range .items[*]}{.x}").is_err());
        assert!(Template::parse("{end}").is_err());
        assert!(Template::parse("{.items[5]}").unwrap().execute(&list()).is_err());
    }

    #[test]
    fn relaxed_paths_gain_braces_and_a_leading_dot() {
        assert_eq!(relaxed("metadata.name").unwrap(), "{.metadata.name}");
        assert_eq!(relaxed(".metadata.name").unwrap(), "{.metadata.name}");
        assert_eq!(relaxed("{.metadata.name}").unwrap(), "{.metadata.name}");
        assert_eq!(relaxed("{metadata.name}").unwrap(), "{.metadata.name}");
        assert!(relaxed("{.metadata").unwrap_err().starts_with("unexpected path string"));
    }
}
