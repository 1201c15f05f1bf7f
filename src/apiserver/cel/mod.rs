//! The Common Expression Language, as the API server evaluates it for admission policies: the
//! subset kubernetes.io's examples use — literals, field selection, indexing, arithmetic,
//! comparisons, `in`, `&&`/`||`/`!`, the ternary, `has()`, `size()`, the comprehension macros
//! (`all`, `exists`, `exists_one`, `map`, `filter`), string functions (`startsWith`,
//! `endsWith`, `contains`, `matches`, …) and conversions. Evaluation is bounded by a cost
//! budget as CEL's is: an expression never panics and never runs on.

pub mod eval;
pub mod parse;
pub mod regex;

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use eval::{Activation, evaluate};
pub use parse::{Expr, parse};

/// A CEL value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    /// Lists and maps are shared: reading `object` in a loop copies nothing.
    List(Arc<Vec<Val>>),
    Map(Arc<BTreeMap<String, Val>>),
}

impl Val {
    /// A JSON document as CEL sees it (numbers that fit are ints).
    pub fn from_json(v: &Value) -> Val {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => Val::Int(i),
                (None, Some(u), _) => Val::Uint(u),
                (_, _, f) => Val::Double(f.unwrap_or(0.0)),
            },
            Value::String(s) => Val::Str(s.clone()),
            Value::Array(items) => Val::List(Arc::new(items.iter().map(Val::from_json).collect())),
            Value::Object(fields) => {
                Val::Map(Arc::new(fields.iter().map(|(k, v)| (k.clone(), Val::from_json(v))).collect()))
            }
        }
    }

    /// CEL's name of the value's type, as its error messages print it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null_type",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Uint(_) => "uint",
            Val::Double(_) => "double",
            Val::Str(_) => "string",
            Val::List(_) => "list",
            Val::Map(_) => "map",
        }
    }

    /// The value as `string()` converts it.
    pub fn to_text(&self) -> Result<String, String> {
        Ok(match self {
            Val::Str(s) => s.clone(),
            Val::Int(n) => n.to_string(),
            Val::Uint(n) => n.to_string(),
            Val::Double(n) => format_double(*n),
            Val::Bool(b) => b.to_string(),
            Val::Null => return Err("no such overload: string(null_type)".into()),
            other => return Err(format!("no such overload: string({})", other.type_name())),
        })
    }
}

fn format_double(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e21 { format!("{n:.0}") } else { n.to_string() }
}

/// Compiles and evaluates `text` against `vars` (a convenience for tests and one-off checks).
pub fn eval_text(text: &str, vars: &BTreeMap<String, Val>) -> Result<Val, String> {
    let expr = parse(text)?;
    evaluate(&expr, &Activation { vars, variables: &BTreeMap::new() })
}
