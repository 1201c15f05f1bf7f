//! Evaluating a CEL expression: values in, a value or an error out, every step charged to a
//! cost budget (CEL's per-expression cost limit), so no expression runs on.

use super::parse::{BinOp, Expr, Macro};
use super::{Val, regex};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Integer arithmetic as CEL does it, for either integer type: None on overflow, an error
/// (returned from the calling function) for division or modulus by zero.
macro_rules! checked {
    ($op:expr, $x:expr, $y:expr) => {
        match $op {
            Add => $x.checked_add($y),
            Sub => $x.checked_sub($y),
            Mul => $x.checked_mul($y),
            Div if $y == 0 => return Err("division by zero".into()),
            Rem if $y == 0 => return Err("modulus by zero".into()),
            Div => $x.checked_div($y),
            _ => $x.checked_rem($y),
        }
    };
}

/// The budget of one evaluation (upstream's per-expression limit is in the millions of cost
/// units; each step here is one unit, each character built one more).
pub const COST_LIMIT: u64 = 1_000_000;

/// What names an expression can read: its variables (`object`, `params`, …) and the policy's
/// `variables`, each evaluated already (an error is kept and raised where it is read).
pub struct Activation<'a> {
    pub vars: &'a BTreeMap<String, Val>,
    pub variables: &'a BTreeMap<String, Result<Val, String>>,
}

/// Evaluates `expr`.
pub fn evaluate(expr: &Expr, act: &Activation) -> Result<Val, String> {
    Eval { act, cost: 0, locals: Vec::new() }.eval(expr)
}

struct Eval<'a, 'b> {
    act: &'a Activation<'b>,
    cost: u64,
    locals: Vec<(String, Val)>,
}

fn no_overload(op: &str, args: &[&Val]) -> String {
    let types: Vec<&str> = args.iter().map(|v| v.type_name()).collect();
    format!("no such overload: {op}({})", types.join(", "))
}

impl Eval<'_, '_> {
    fn charge(&mut self, units: u64) -> Result<(), String> {
        self.cost = self.cost.saturating_add(units);
        if self.cost > COST_LIMIT {
            return Err("operation cancelled: actual cost limit exceeded".into());
        }
        Ok(())
    }

    fn eval(&mut self, e: &Expr) -> Result<Val, String> {
        self.charge(1)?;
        match e {
            Expr::Lit(v) => Ok(v.clone()),
            Expr::Ident(name) => self.ident(name),
            Expr::Select(target, field) => {
                if let Expr::Ident(v) = &**target {
                    if v == "variables" && !self.locals.iter().any(|(n, _)| n == v) {
                        return match self.act.variables.get(field) {
                            Some(Ok(val)) => Ok(val.clone()),
                            Some(Err(e)) => Err(e.clone()),
                            None => Err(format!("undeclared reference to 'variables.{field}'")),
                        };
                    }
                }
                match self.eval(target)? {
                    Val::Map(m) => m.get(field).cloned().ok_or_else(|| format!("no such key: {field}")),
                    other => Err(format!("type '{}' does not support field selection", other.type_name())),
                }
            }
            Expr::Has(target, field) => match self.eval(target)? {
                Val::Map(m) => Ok(Val::Bool(m.get(field).is_some_and(|v| *v != Val::Null))),
                other => Err(format!("invalid type for field selection: {}", other.type_name())),
            },
            Expr::Index(target, index) => {
                let (t, i) = (self.eval(target)?, self.eval(index)?);
                match (&t, &i) {
                    (Val::List(items), Val::Int(_) | Val::Uint(_) | Val::Double(_)) => {
                        let n = as_index(&i).ok_or_else(|| format!("index out of range: {}", show(&i)))?;
                        items.get(n).cloned().ok_or_else(|| format!("index out of range: {}", show(&i)))
                    }
                    (Val::Map(m), Val::Str(k)) => m.get(k).cloned().ok_or_else(|| format!("no such key: {k}")),
                    _ => Err(no_overload("_[_]", &[&t, &i])),
                }
            }
            Expr::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.eval(item)?);
                }
                Ok(Val::List(Arc::new(out)))
            }
            Expr::Map(entries) => {
                let mut out = BTreeMap::new();
                for (k, v) in entries {
                    let key = match self.eval(k)? {
                        Val::Str(s) => s,
                        other => return Err(format!("unsupported map key type: {}", other.type_name())),
                    };
                    let value = self.eval(v)?;
                    if out.insert(key.clone(), value).is_some() {
                        return Err(format!("Failed with repeated key: {key}"));
                    }
                }
                Ok(Val::Map(Arc::new(out)))
            }
            Expr::Not(inner) => match self.eval(inner)? {
                Val::Bool(b) => Ok(Val::Bool(!b)),
                other => Err(no_overload("!_", &[&other])),
            },
            Expr::Neg(inner) => match self.eval(inner)? {
                Val::Int(n) => n.checked_neg().map(Val::Int).ok_or_else(|| "integer overflow".to_string()),
                Val::Double(n) => Ok(Val::Double(-n)),
                other => Err(no_overload("-_", &[&other])),
            },
            // CEL's logic is commutative over errors: a false side decides `&&` whatever the
            // other side did, a true side decides `||`.
            Expr::And(a, b) => self.logic(a, b, false),
            Expr::Or(a, b) => self.logic(a, b, true),
            Expr::Cond(c, t, f) => match self.eval(c)? {
                Val::Bool(true) => self.eval(t),
                Val::Bool(false) => self.eval(f),
                other => Err(no_overload("_?_:_", &[&other])),
            },
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                self.binary(*op, a, b)
            }
            Expr::Call(target, name, args) => {
                let target = match target {
                    Some(t) => Some(self.eval(t)?),
                    None => None,
                };
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                self.call(target, name, vals)
            }
            Expr::Comprehension(kind, range, var, body) => self.comprehension(*kind, range, var, body),
        }
    }

    fn ident(&self, name: &str) -> Result<Val, String> {
        if let Some((_, v)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            return Ok(v.clone());
        }
        self.act.vars.get(name).cloned().ok_or_else(|| format!("undeclared reference to '{name}' (in container '')"))
    }

    fn logic(&mut self, a: &Expr, b: &Expr, decisive: bool) -> Result<Val, String> {
        let left = self.eval(a);
        if left == Ok(Val::Bool(decisive)) {
            return left;
        }
        let right = self.eval(b);
        if right == Ok(Val::Bool(decisive)) {
            return right;
        }
        let op = if decisive { "_||_" } else { "_&&_" };
        match (left?, right?) {
            (Val::Bool(_), Val::Bool(_)) => Ok(Val::Bool(!decisive)),
            (l, r) => Err(no_overload(op, &[&l, &r])),
        }
    }

    fn binary(&mut self, op: BinOp, a: Val, b: Val) -> Result<Val, String> {
        use BinOp::*;
        match op {
            Eq | Ne => {
                let mut steps = 0;
                let same = equal(&a, &b, &mut steps);
                self.charge(steps)?;
                Ok(Val::Bool(same == (op == Eq)))
            }
            Lt | Le | Gt | Ge => {
                let name = match op {
                    Lt => "_<_",
                    Le => "_<=_",
                    Gt => "_>_",
                    _ => "_>=_",
                };
                let ord = compare(&a, &b).ok_or_else(|| no_overload(name, &[&a, &b]))?;
                Ok(Val::Bool(match op {
                    Lt => ord == Ordering::Less,
                    Le => ord != Ordering::Greater,
                    Gt => ord == Ordering::Greater,
                    _ => ord != Ordering::Less,
                }))
            }
            In => match &b {
                Val::List(items) => {
                    let mut steps = 0;
                    let found = items.iter().any(|i| equal(i, &a, &mut steps));
                    self.charge(steps)?;
                    Ok(Val::Bool(found))
                }
                Val::Map(m) => match &a {
                    Val::Str(k) => Ok(Val::Bool(m.contains_key(k))),
                    _ => Ok(Val::Bool(false)),
                },
                _ => Err(no_overload("@in", &[&a, &b])),
            },
            Add | Sub | Mul | Div | Rem => self.arithmetic(op, a, b),
        }
    }

    fn arithmetic(&mut self, op: BinOp, a: Val, b: Val) -> Result<Val, String> {
        use BinOp::*;
        let name = match op {
            Add => "_+_",
            Sub => "_-_",
            Mul => "_*_",
            Div => "_/_",
            _ => "_%_",
        };
        let overflow = || "integer overflow".to_string();
        match (a, b) {
            (Val::Int(x), Val::Int(y)) => checked!(op, x, y).map(Val::Int).ok_or_else(overflow),
            (Val::Uint(x), Val::Uint(y)) => checked!(op, x, y).map(Val::Uint).ok_or_else(overflow),
            (Val::Double(x), Val::Double(y)) => Ok(Val::Double(match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                _ => return Err(no_overload(name, &[&Val::Double(x), &Val::Double(y)])),
            })),
            (Val::Str(x), Val::Str(y)) if op == Add => {
                self.charge((x.len() + y.len()) as u64)?;
                Ok(Val::Str(x + &y))
            }
            (Val::List(x), Val::List(y)) if op == Add => {
                self.charge((x.len() + y.len()) as u64)?;
                let mut joined = Arc::unwrap_or_clone(x);
                joined.extend(y.iter().cloned());
                Ok(Val::List(Arc::new(joined)))
            }
            (a, b) => Err(no_overload(name, &[&a, &b])),
        }
    }

    fn call(&mut self, target: Option<Val>, name: &str, mut args: Vec<Val>) -> Result<Val, String> {
        // `size(x)` and `x.size()` alike; conversions are global functions.
        let (this, args) = match target {
            Some(t) => (t, args),
            None if !args.is_empty() => (args.remove(0), args),
            None => return Err(format!("undeclared reference to '{name}' (in container '')")),
        };
        match (name, &this, args.as_slice()) {
            ("size", Val::Str(s), []) => Ok(Val::Int(s.chars().count() as i64)),
            ("size", Val::List(l), []) => Ok(Val::Int(l.len() as i64)),
            ("size", Val::Map(m), []) => Ok(Val::Int(m.len() as i64)),
            ("startsWith", Val::Str(s), [Val::Str(p)]) => Ok(Val::Bool(s.starts_with(p.as_str()))),
            ("endsWith", Val::Str(s), [Val::Str(p)]) => Ok(Val::Bool(s.ends_with(p.as_str()))),
            ("contains", Val::Str(s), [Val::Str(p)]) => Ok(Val::Bool(s.contains(p.as_str()))),
            ("matches", Val::Str(s), [Val::Str(p)]) => regex::is_match(p, s).map(Val::Bool),
            ("lowerAscii", Val::Str(s), []) => Ok(Val::Str(s.to_ascii_lowercase())),
            ("upperAscii", Val::Str(s), []) => Ok(Val::Str(s.to_ascii_uppercase())),
            ("trim", Val::Str(s), []) => Ok(Val::Str(s.trim().to_string())),
            ("indexOf", Val::Str(s), [Val::Str(p)]) => {
                Ok(Val::Int(s.find(p.as_str()).map_or(-1, |i| s[..i].chars().count() as i64)))
            }
            ("split", Val::Str(s), [Val::Str(sep)]) => {
                self.charge(s.len() as u64)?;
                Ok(Val::List(Arc::new(s.split(sep.as_str()).map(|p| Val::Str(p.to_string())).collect())))
            }
            ("join", Val::List(items), []) | ("join", Val::List(items), [Val::Str(_)]) => {
                let sep = match args.first() {
                    Some(Val::Str(s)) => s.as_str(),
                    _ => "",
                };
                let parts: Result<Vec<String>, String> = items
                    .iter()
                    .map(|i| match i {
                        Val::Str(s) => Ok(s.clone()),
                        other => Err(no_overload("join", &[other])),
                    })
                    .collect();
                let joined = parts?.join(sep);
                self.charge(joined.len() as u64)?;
                Ok(Val::Str(joined))
            }
            ("replace", Val::Str(s), [Val::Str(from), Val::Str(to)]) => {
                let out = s.replace(from.as_str(), to);
                self.charge(out.len() as u64)?;
                Ok(Val::Str(out))
            }
            ("string", v, []) => v.to_text().map(Val::Str),
            ("int", v, []) => match v {
                Val::Int(n) => Ok(Val::Int(*n)),
                Val::Uint(n) => i64::try_from(*n).map(Val::Int).map_err(|_| "integer overflow".into()),
                Val::Double(d) if d.is_finite() && d.abs() < 9.2e18 => Ok(Val::Int(d.trunc() as i64)),
                Val::Str(s) => s.parse().map(Val::Int).map_err(|_| format!("cannot convert '{s}' to int")),
                other => Err(no_overload("int", &[other])),
            },
            ("uint", v, []) => match v {
                Val::Uint(n) => Ok(Val::Uint(*n)),
                Val::Int(n) => u64::try_from(*n).map(Val::Uint).map_err(|_| "unsigned integer overflow".into()),
                Val::Str(s) => s.parse().map(Val::Uint).map_err(|_| format!("cannot convert '{s}' to uint")),
                other => Err(no_overload("uint", &[other])),
            },
            ("double", v, []) => match v {
                Val::Double(d) => Ok(Val::Double(*d)),
                Val::Int(n) => Ok(Val::Double(*n as f64)),
                Val::Uint(n) => Ok(Val::Double(*n as f64)),
                Val::Str(s) => s.parse().map(Val::Double).map_err(|_| format!("cannot convert '{s}' to double")),
                other => Err(no_overload("double", &[other])),
            },
            ("bool", Val::Bool(b), []) => Ok(Val::Bool(*b)),
            ("bool", Val::Str(s), []) => match s.as_str() {
                "true" | "True" | "TRUE" | "t" | "1" => Ok(Val::Bool(true)),
                "false" | "False" | "FALSE" | "f" | "0" => Ok(Val::Bool(false)),
                _ => Err("type conversion error from 'string' to 'bool'".to_string()),
            },
            ("dyn", v, []) => Ok(v.clone()),
            _ => {
                let mut all = vec![&this];
                all.extend(args.iter());
                Err(no_overload(name, &all))
            }
        }
    }

    fn comprehension(&mut self, kind: Macro, range: &Expr, var: &str, body: &Expr) -> Result<Val, String> {
        let items: Vec<Val> = match self.eval(range)? {
            Val::List(items) => Arc::unwrap_or_clone(items),
            Val::Map(m) => m.keys().map(|k| Val::Str(k.clone())).collect(),
            other => {
                return Err(format!("expression of type '{}' cannot be range of a comprehension", other.type_name()));
            }
        };
        let mut out = Vec::new();
        let mut count = 0;
        // `all` and `exists` are decided by any false (true) element even past an error.
        let mut error = None;
        for item in items {
            self.charge(1)?;
            self.locals.push((var.to_string(), item.clone()));
            let result = self.eval(body);
            self.locals.pop();
            match (kind, result) {
                (Macro::All, Ok(Val::Bool(false))) => return Ok(Val::Bool(false)),
                (Macro::Exists, Ok(Val::Bool(true))) => return Ok(Val::Bool(true)),
                (Macro::All | Macro::Exists, Ok(Val::Bool(_))) => {}
                (Macro::All | Macro::Exists, Ok(other)) => {
                    error.get_or_insert_with(|| no_overload("_&&_", &[&other]));
                }
                (Macro::All | Macro::Exists, Err(e)) => {
                    error.get_or_insert(e);
                }
                (Macro::ExistsOne, Ok(Val::Bool(b))) => count += b as usize,
                (Macro::Filter, Ok(Val::Bool(b))) => {
                    if b {
                        out.push(item);
                    }
                }
                (Macro::Map, Ok(v)) => out.push(v),
                (_, Ok(other)) => return Err(no_overload("_&&_", &[&other])),
                (_, Err(e)) => return Err(e),
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        Ok(match kind {
            Macro::All => Val::Bool(true),
            Macro::Exists => Val::Bool(false),
            Macro::ExistsOne => Val::Bool(count == 1),
            Macro::Map | Macro::Filter => Val::List(Arc::new(out)),
        })
    }
}

fn as_index(v: &Val) -> Option<usize> {
    match v {
        Val::Int(n) => usize::try_from(*n).ok(),
        Val::Uint(n) => usize::try_from(*n).ok(),
        Val::Double(d) if d.fract() == 0.0 && *d >= 0.0 && *d < 1e15 => Some(*d as usize),
        _ => None,
    }
}

fn show(v: &Val) -> String {
    v.to_text().unwrap_or_else(|_| v.type_name().to_string())
}

/// Numbers compare across int, uint and double (CEL's heterogeneous equality).
fn number(v: &Val) -> Option<f64> {
    match v {
        Val::Int(n) => Some(*n as f64),
        Val::Uint(n) => Some(*n as f64),
        Val::Double(n) => Some(*n),
        _ => None,
    }
}

/// Deep equality; `steps` counts the values compared (charged to the budget).
fn equal(a: &Val, b: &Val, steps: &mut u64) -> bool {
    *steps += 1;
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => x == y,
        (Val::Uint(x), Val::Uint(y)) => x == y,
        (Val::List(x), Val::List(y)) if Arc::ptr_eq(x, y) => true,
        (Val::Map(x), Val::Map(y)) if Arc::ptr_eq(x, y) => true,
        (Val::List(x), Val::List(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| equal(a, b, steps)),
        (Val::Map(x), Val::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w, steps)))
        }
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

fn compare(a: &Val, b: &Val) -> Option<Ordering> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(y)),
        (Val::Uint(x), Val::Uint(y)) => Some(x.cmp(y)),
        (Val::Str(x), Val::Str(y)) => Some(x.cmp(y)),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        _ => number(a)?.partial_cmp(&number(b)?),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Val, eval_text};
    use crate::util::json_macro::json;
    use std::collections::BTreeMap;

    fn run(text: &str) -> Result<Val, String> {
        let object = json!({
            "metadata": {"name": "web", "labels": {"app": "web", "env": "prod"}},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [
                {"name": "a", "image": "nginx:1.27"}, {"name": "b", "image": "registry.k8s.io/pause:3.10"}
            ]}}}
        });
        let mut vars = BTreeMap::new();
        vars.insert("object".to_string(), Val::from_json(&object));
        vars.insert("params".to_string(), Val::from_json(&json!({"maxReplicas": 5})));
        eval_text(text, &vars)
    }

    #[test]
    fn the_examples_of_the_docs_evaluate_as_cel_does() {
        let t = Ok(Val::Bool(true));
        assert_eq!(run("object.spec.replicas <= 5"), t);
        assert_eq!(run("object.spec.replicas <= params.maxReplicas"), t);
        assert_eq!(run("has(object.metadata.labels) && 'app' in object.metadata.labels"), t);
        assert_eq!(run("!has(object.spec.paused)"), t);
        assert_eq!(run("object.spec.template.spec.containers.all(c, c.image.contains(':'))"), t);
        assert_eq!(run("object.spec.template.spec.containers.exists(c, c.image.startsWith('registry.k8s.io/'))"), t);
        assert_eq!(run("object.spec.template.spec.containers.exists_one(c, c.name == 'a')"), t);
        assert_eq!(run("size(object.spec.template.spec.containers) == 2"), t);
        assert_eq!(run("object.metadata.name.matches('^[a-z]+$')"), t);
        assert_eq!(run("object.spec.replicas > 2 ? 'many' : 'few'"), Ok(Val::Str("many".into())));
        assert_eq!(
            run("'replicas must be no greater than ' + string(params.maxReplicas)"),
            Ok(Val::Str("replicas must be no greater than 5".into()))
        );
        assert_eq!(run("object.spec.template.spec.containers.map(c, c.name)"), run("['a', 'b']"));
        assert_eq!(run("object.metadata.labels.filter(k, k.startsWith('e'))"), run("['env']"));
        assert_eq!(run("1 == 1.0 && 3u > 2 && [1, 2] + [3] == [1, 2, 3] && {'a': 1}['a'] == 1"), t);
    }

    #[test]
    fn missing_fields_and_bad_types_are_errors_that_a_false_side_of_and_absorbs() {
        assert_eq!(run("object.spec.paused"), Err("no such key: paused".into()));
        assert_eq!(run("false && object.spec.paused"), Ok(Val::Bool(false)));
        assert_eq!(run("object.spec.paused || true"), Ok(Val::Bool(true)));
        assert!(run("object.spec.replicas <= 'five'").unwrap_err().starts_with("no such overload"));
        assert!(run("nothing").unwrap_err().starts_with("undeclared reference to 'nothing'"));
        assert_eq!(run("1 / 0"), Err("division by zero".into()));
        assert_eq!(run("9223372036854775807 + 1"), Err("integer overflow".into()));
    }

    #[test]
    fn expressions_that_would_run_on_exceed_the_cost_budget() {
        let nested = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, \
            [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))";
        assert_eq!(run(nested), Err("operation cancelled: actual cost limit exceeded".into()));
        let growing = "['x'].map(a, ['x','x','x','x','x','x','x','x','x','x'].map(b, ['x','x','x','x','x','x','x','x','x','x']\
            .map(c, ['x','x','x','x','x','x','x','x','x','x'].map(d, ['x','x','x','x','x','x','x','x','x','x'].map(e, \
            ['x','x','x','x','x','x','x','x','x','x'].map(f, 'abcdefgh' + 'abcdefgh'))))))";
        assert!(run(growing).is_err());
    }
}
