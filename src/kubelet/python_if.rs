//! Which lines of a `python -c` program run: `if` statements over the container's environment
//! (`if int(os.environ.get("JOB_COMPLETION_INDEX")) % 2 == 0:`), with their indented blocks
//! or one-line bodies and an `else:`. A condition the sandbox cannot work out is false.

/// The program's statements that run, in order, one a line (blocks flattened).
pub fn selected(code: &str, env: &[(String, String)]) -> String {
    // Open `if`/`else` blocks: their header's indentation, and whether their body runs.
    let mut blocks: Vec<(usize, bool)> = Vec::new();
    // The last `if` at each indentation: whether its block was reached, and whether it ran.
    let mut last_if: std::collections::BTreeMap<usize, (bool, bool)> = Default::default();
    let mut out = Vec::new();
    for line in code.lines() {
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        while blocks.last().is_some_and(|(at, _)| *at >= indent) {
            blocks.pop();
        }
        let active = blocks.iter().all(|(_, runs)| *runs);
        if text == "else:" {
            let taken = last_if.remove(&indent).is_some_and(|(reached, ran)| reached && !ran);
            blocks.push((indent, taken));
            continue;
        }
        if let Some(rest) = text.strip_prefix("if ") {
            let Some((condition, body)) = split_header(rest) else { continue };
            let holds = active && condition_holds(condition, env);
            if body.is_empty() {
                blocks.push((indent, holds));
            } else if holds {
                out.push(body.to_string());
            }
            last_if.insert(indent, (active, holds));
            continue;
        }
        if active {
            out.push(text.to_string());
        }
    }
    out.join("\n")
}

/// `COND: BODY` → (COND, BODY), the colon found outside quotes and brackets.
fn split_header(rest: &str) -> Option<(&str, &str)> {
    let (mut depth, mut quote) = (0i32, None);
    for (i, ch) in rest.char_indices() {
        match (ch, quote) {
            ('"' | '\'', None) => quote = Some(ch),
            (c, Some(q)) if c == q => quote = None,
            ('(' | '[' | '{', None) => depth += 1,
            (')' | ']' | '}', None) => depth -= 1,
            (':', None) if depth == 0 => return Some((rest[..i].trim(), rest[i + 1..].trim())),
            _ => {}
        }
    }
    None
}

#[derive(Clone, Debug, PartialEq)]
enum Value {
    Int(i64),
    Str(String),
}

fn condition_holds(condition: &str, env: &[(String, String)]) -> bool {
    for op in ["==", "!=", "<=", ">=", "<", ">"] {
        if let Some((left, right)) = condition.split_once(op) {
            let (Some(a), Some(b)) = (value(left, env), value(right, env)) else { return false };
            return match (op, &a, &b) {
                ("==", ..) => a == b,
                ("!=", ..) => a != b,
                ("<=", Value::Int(x), Value::Int(y)) => x <= y,
                (">=", Value::Int(x), Value::Int(y)) => x >= y,
                ("<", Value::Int(x), Value::Int(y)) => x < y,
                (">", Value::Int(x), Value::Int(y)) => x > y,
                _ => false,
            };
        }
    }
    false
}

/// A term, or `TERM % N`.
fn value(text: &str, env: &[(String, String)]) -> Option<Value> {
    let text = text.trim();
    if let Some((left, right)) = text.rsplit_once('%') {
        let (Value::Int(a), Value::Int(b)) = (value(left, env)?, value(right, env)?) else { return None };
        return (b != 0).then(|| Value::Int(a.rem_euclid(b)));
    }
    if let Ok(n) = text.parse() {
        return Some(Value::Int(n));
    }
    if let Some(inner) = text.strip_prefix("int(").and_then(|t| t.strip_suffix(')')) {
        let Value::Str(s) = value(inner, env)? else { return None };
        return s.trim().parse().ok().map(Value::Int);
    }
    let quoted = |t: &str| {
        let q = t.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        t.strip_prefix(q)?.strip_suffix(q).map(str::to_string)
    };
    if let Some(s) = quoted(text) {
        return Some(Value::Str(s));
    }
    let name = ["os.environ.get(", "os.getenv("]
        .iter()
        .find_map(|p| text.strip_prefix(p).and_then(|t| t.strip_suffix(')')))
        .map(|args| args.split(',').next().unwrap_or(""))
        .or_else(|| text.strip_prefix("os.environ[").and_then(|t| t.strip_suffix(']')))?;
    let name = quoted(name.trim())?;
    env.iter().find(|(k, _)| *k == name).map(|(_, v)| Value::Str(v.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(index: &str) -> Vec<(String, String)> {
        vec![("JOB_COMPLETION_INDEX".into(), index.into())]
    }

    const PROGRAM: &str = "import os, sys\nprint(\"Hello world\")\nif int(os.environ.get(\"JOB_COMPLETION_INDEX\")) % 2 == 0:\n  sys.exit(1)\n";

    #[test]
    fn an_if_block_runs_only_when_its_condition_over_the_environment_holds() {
        assert_eq!(selected(PROGRAM, &env("2")), "import os, sys\nprint(\"Hello world\")\nsys.exit(1)");
        assert_eq!(selected(PROGRAM, &env("3")), "import os, sys\nprint(\"Hello world\")");
    }

    #[test]
    fn else_runs_when_the_if_did_not_and_one_line_bodies_work_too() {
        let code = "if os.environ['MODE'] == 'fail': sys.exit(2)\nif os.getenv(\"MODE\") != \"ok\":\n    print('bad')\nelse:\n    print('good')\nprint('end')";
        let mode = |m: &str| vec![("MODE".to_string(), m.to_string())];
        assert_eq!(selected(code, &mode("ok")), "print('good')\nprint('end')");
        assert_eq!(selected(code, &mode("fail")), "sys.exit(2)\nprint('bad')\nprint('end')");
    }

    #[test]
    fn a_condition_the_sandbox_cannot_work_out_is_false() {
        assert_eq!(selected("if random.random() < 0.5:\n  sys.exit(1)\nprint(1)", &[]), "print(1)");
        assert_eq!(selected("if int(os.environ.get('MISSING')) == 1:\n  sys.exit(1)", &[]), "");
    }
}
