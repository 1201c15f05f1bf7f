//! YAML as kubectl prints it (go-yaml v2 through sigs.k8s.io/yaml): keys sorted, block style,
//! list items level with their key, strings double-quoted only when they would otherwise read
//! as something else, multi-line strings as `|` blocks.

use serde_json::Value;

pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        other => {
            out.push_str(&scalar(other, 0));
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, level: usize) {
    for (k, v) in map {
        indent(out, level);
        out.push_str(&string_scalar(k, level));
        out.push(':');
        write_value_after_key(out, v, level);
    }
}

fn write_value_after_key(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(out, m, level + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_seq(out, items, level);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other, level + 2));
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[Value], level: usize) {
    for item in items {
        indent(out, level);
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => {
                // The first key shares the dash's line; the rest align with it.
                let mut first = true;
                for (k, v) in m {
                    if !first {
                        indent(out, level + 2);
                    }
                    first = false;
                    out.push_str(&string_scalar(k, level + 2));
                    out.push(':');
                    write_value_after_key(out, v, level + 2);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_seq(out, inner, level + 2);
            }
            other => {
                out.push_str(&scalar(other, level + 2));
                out.push('\n');
            }
        }
    }
}

fn scalar(v: &Value, level: usize) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_scalar(s, level),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// Whether a plain (unquoted) scalar would be read back as something other than this string.
fn needs_quotes(s: &str) -> bool {
    if s.is_empty() || s.trim() != s {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    // YAML 1.1 booleans and nulls, numbers, timestamps.
    if matches!(lower.as_str(), "y" | "yes" | "n" | "no" | "true" | "false" | "on" | "off" | "null" | "~") {
        return true;
    }
    if looks_numeric(s) || looks_like_timestamp(s) {
        return true;
    }
    let first = s.chars().next().unwrap_or(' ');
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        // A dash or colon followed by a non-space is still plain (`-x` is not a list).
        let second = s.chars().nth(1);
        let plain_ok = matches!(first, '-' | '?' | ':') && second.is_some_and(|c| c != ' ');
        if !plain_ok {
            return true;
        }
    }
    s.contains(": ") || s.contains(" #") || s.ends_with(':') || s.chars().any(|c| c.is_control())
}

fn looks_numeric(s: &str) -> bool {
    let t = s.strip_prefix(['+', '-']).unwrap_or(s);
    if t.is_empty() {
        return false;
    }
    if t.parse::<f64>().is_ok() && !t.chars().any(|c| c.is_alphabetic() && c != 'e' && c != 'E') {
        return true;
    }
    matches!(t.to_ascii_lowercase().as_str(), ".inf" | ".nan")
        || t.starts_with("0x") && t[2..].chars().all(|c| c.is_ascii_hexdigit())
}

fn looks_like_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
}

fn string_scalar(s: &str, level: usize) -> String {
    if s.contains('\n') && !s.chars().any(|c| c.is_control() && c != '\n') {
        // A literal block; `|-` when it does not end in a newline.
        let chomp = if s.ends_with('\n') { "|" } else { "|-" };
        let mut out = String::from(chomp);
        for line in s.trim_end_matches('\n').split('\n') {
            out.push('\n');
            if !line.is_empty() {
                out.extend(std::iter::repeat_n(' ', level.max(2)));
                out.push_str(line);
            }
        }
        return out;
    }
    if needs_quotes(s) { serde_json::to_string(s).unwrap_or_default() } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ambiguous_strings_are_double_quoted() {
        let v = json!({"a": "2", "b": "True", "c": "2026-01-01T00:00:00Z", "d": "nginx:1.25", "e": "", "f": "yes", "g": "25%"});
        assert_eq!(
            to_yaml(&v),
            "a: \"2\"\nb: \"True\"\nc: \"2026-01-01T00:00:00Z\"\nd: nginx:1.25\ne: \"\"\nf: \"yes\"\ng: 25%\n"
        );
    }

    #[test]
    fn lists_sit_level_with_their_key() {
        let v = json!({"spec": {"containers": [{"image": "nginx", "name": "web", "ports": [{"containerPort": 80}]}], "empty": {}}});
        assert_eq!(
            to_yaml(&v),
            "spec:\n  containers:\n  - image: nginx\n    name: web\n    ports:\n    - containerPort: 80\n  empty: {}\n"
        );
    }

    #[test]
    fn multi_line_strings_are_literal_blocks() {
        let v = json!({"metadata": {"annotations": {"x": "{\"a\":1}\n"}}});
        assert_eq!(to_yaml(&v), "metadata:\n  annotations:\n    x: |\n      {\"a\":1}\n");
    }
}
