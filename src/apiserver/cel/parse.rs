//! CEL's grammar: the text of an expression read into a tree, with its macros (`has`, `all`,
//! `exists`, `exists_one`, `map`, `filter`) recognised as they are read. Bounded: the text's
//! length and the tree's depth have limits, and a bad expression is an error, never a panic.

use super::Val;

/// Longest expression read (upstream bounds an expression's cost, not its text; the page's
/// input is bounded here too).
pub const MAX_EXPRESSION_LEN: usize = 10_000;
/// Deepest nesting read (CEL's parser stops at a recursion depth of its own).
const MAX_DEPTH: usize = 100;

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(Val),
    Ident(String),
    Select(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    /// A function call: `f(args)` or `target.f(args)`.
    Call(Option<Box<Expr>>, String, Vec<Expr>),
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `has(x.field)`.
    Has(Box<Expr>, String),
    /// `range.all(var, body)` and the other comprehension macros.
    Comprehension(Macro, Box<Expr>, String, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Macro {
    All,
    Exists,
    ExistsOne,
    Map,
    Filter,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Ident(String),
    Punct(&'static str),
}

const PUNCTS: &[&str] = &[
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", ",", "(", ")", "[", "]",
    "{", "}",
];

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            if c == '0' && chars.get(i + 1).is_some_and(|x| *x == 'x' || *x == 'X') {
                i += 2;
                while i < chars.len() && chars[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let digits: String = chars[start + 2..i].iter().collect();
                let n = i64::from_str_radix(&digits, 16).map_err(|_| format!("invalid int literal {digits}"))?;
                toks.push(Tok::Int(n));
                continue;
            }
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let mut float = false;
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                float = true;
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                float = true;
                i += 1;
                if i < chars.len() && (chars[i] == '+' || chars[i] == '-') {
                    i += 1;
                }
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let digits: String = chars[start..i].iter().collect();
            if float {
                toks.push(Tok::Double(digits.parse().map_err(|_| format!("invalid double literal {digits}"))?));
            } else if i < chars.len() && (chars[i] == 'u' || chars[i] == 'U') {
                i += 1;
                toks.push(Tok::Uint(digits.parse().map_err(|_| format!("invalid uint literal {digits}"))?));
            } else {
                toks.push(Tok::Int(digits.parse().map_err(|_| format!("invalid int literal {digits}"))?));
            }
            continue;
        }
        let raw = (c == 'r' || c == 'R') && matches!(chars.get(i + 1), Some('\'' | '"'));
        if c == '\'' || c == '"' || raw {
            if raw {
                i += 1;
            }
            let quote = chars[i];
            let triple = chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote);
            i += if triple { 3 } else { 1 };
            let mut s = String::new();
            loop {
                let Some(&ch) = chars.get(i) else { return Err("unterminated string literal".into()) };
                if ch == quote && (!triple || (chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote))) {
                    i += if triple { 3 } else { 1 };
                    break;
                }
                if ch == '\n' && !triple {
                    return Err("unterminated string literal".into());
                }
                if ch == '\\' && !raw {
                    let Some(&e) = chars.get(i + 1) else { return Err("unterminated string literal".into()) };
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '\\' | '\'' | '"' | '`' | '?' => e,
                        _ => return Err(format!("invalid escape sequence \\{e}")),
                    });
                    i += 2;
                    continue;
                }
                s.push(ch);
                i += 1;
            }
            toks.push(Tok::Str(s));
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            toks.push(Tok::Ident(chars[start..i].iter().collect()));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            Some(p) => {
                toks.push(Tok::Punct(p));
                i += p.len();
            }
            None => return Err(format!("Syntax error: token recognition error at: '{c}'")),
        }
    }
    Ok(toks)
}

/// Reads an expression.
pub fn parse(text: &str) -> Result<Expr, String> {
    if text.len() > MAX_EXPRESSION_LEN {
        return Err(format!("expression is too long ({} > {MAX_EXPRESSION_LEN} characters)", text.len()));
    }
    let toks = lex(text)?;
    let mut p = Parser { toks, pos: 0, depth: 0 };
    let e = p.expr()?;
    match p.peek() {
        None => Ok(e),
        Some(t) => Err(format!("Syntax error: extraneous input {}", show(t))),
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Int(n) => format!("'{n}'"),
        Tok::Uint(n) => format!("'{n}u'"),
        Tok::Double(n) => format!("'{n}'"),
        Tok::Str(s) => format!("'\"{s}\"'"),
        Tok::Ident(s) => format!("'{s}'"),
        Tok::Punct(p) => format!("'{p}'"),
    }
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }
    fn eat(&mut self, p: &str) -> bool {
        let yes = self.is(p);
        if yes {
            self.pos += 1;
        }
        yes
    }
    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            return Ok(());
        }
        Err(match self.peek() {
            Some(t) => format!("Syntax error: mismatched input {} expecting '{p}'", show(t)),
            None => format!("Syntax error: mismatched input '<EOF>' expecting '{p}'"),
        })
    }

    /// One level deeper in the tree being built, within the limit.
    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression nested too deeply".into());
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression nested too deeply".into());
        }
        let cond = self.or()?;
        let e = if self.eat("?") {
            let then = self.or()?;
            self.expect(":")?;
            let otherwise = self.expr()?;
            Expr::Cond(Box::new(cond), Box::new(then), Box::new(otherwise))
        } else {
            cond
        };
        self.depth -= 1;
        Ok(e)
    }

    fn or(&mut self) -> Result<Expr, String> {
        let (mut e, depth) = (self.and()?, self.depth);
        while self.eat("||") {
            self.enter()?;
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        self.depth = depth;
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let (mut e, depth) = (self.relation()?, self.depth);
        while self.eat("&&") {
            self.enter()?;
            e = Expr::And(Box::new(e), Box::new(self.relation()?));
        }
        self.depth = depth;
        Ok(e)
    }

    fn relation(&mut self) -> Result<Expr, String> {
        let (mut e, depth) = (self.addition()?, self.depth);
        loop {
            let op = match self.peek() {
                Some(Tok::Punct("==")) => BinOp::Eq,
                Some(Tok::Punct("!=")) => BinOp::Ne,
                Some(Tok::Punct("<")) => BinOp::Lt,
                Some(Tok::Punct("<=")) => BinOp::Le,
                Some(Tok::Punct(">")) => BinOp::Gt,
                Some(Tok::Punct(">=")) => BinOp::Ge,
                Some(Tok::Ident(w)) if w == "in" => BinOp::In,
                _ => {
                    self.depth = depth;
                    return Ok(e);
                }
            };
            self.pos += 1;
            self.enter()?;
            e = Expr::Binary(op, Box::new(e), Box::new(self.addition()?));
        }
    }

    fn addition(&mut self) -> Result<Expr, String> {
        let (mut e, depth) = (self.multiplication()?, self.depth);
        loop {
            let op = if self.eat("+") {
                BinOp::Add
            } else if self.eat("-") {
                BinOp::Sub
            } else {
                self.depth = depth;
                return Ok(e);
            };
            self.enter()?;
            e = Expr::Binary(op, Box::new(e), Box::new(self.multiplication()?));
        }
    }

    fn multiplication(&mut self) -> Result<Expr, String> {
        let (mut e, depth) = (self.unary()?, self.depth);
        loop {
            let op = if self.eat("*") {
                BinOp::Mul
            } else if self.eat("/") {
                BinOp::Div
            } else if self.eat("%") {
                BinOp::Rem
            } else {
                self.depth = depth;
                return Ok(e);
            };
            self.enter()?;
            e = Expr::Binary(op, Box::new(e), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression nested too deeply".into());
        }
        let e = self.unary_inner();
        self.depth -= 1;
        e
    }

    fn unary_inner(&mut self) -> Result<Expr, String> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            // A negative literal is read as one (so the smallest int can be written).
            return Ok(match self.peek() {
                Some(Tok::Int(n)) if *n >= 0 && !self.toks.get(self.pos + 1).is_some_and(|t| *t == Tok::Punct(".")) => {
                    let n = *n;
                    self.pos += 1;
                    Expr::Lit(Val::Int(-n))
                }
                _ => Expr::Neg(Box::new(self.unary()?)),
            });
        }
        self.member()
    }

    fn member(&mut self) -> Result<Expr, String> {
        let (mut e, depth) = (self.primary()?, self.depth);
        loop {
            if self.is(".") || self.is("[") {
                self.enter()?;
            }
            if self.eat(".") {
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    return Err("Syntax error: expected a field or method name after '.'".into());
                };
                self.pos += 1;
                if self.eat("(") {
                    let args = self.args(")")?;
                    e = method_or_macro(e, name, args)?;
                } else {
                    e = Expr::Select(Box::new(e), name);
                }
            } else if self.eat("[") {
                let index = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(index));
            } else {
                self.depth = depth;
                return Ok(e);
            }
        }
    }

    fn args(&mut self, close: &str) -> Result<Vec<Expr>, String> {
        let mut args = Vec::new();
        if self.eat(close) {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat(close) {
                return Ok(args);
            }
            self.expect(",")?;
            if self.eat(close) {
                return Ok(args);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(tok) = self.peek().cloned() else {
            return Err("Syntax error: mismatched input '<EOF>'".into());
        };
        self.pos += 1;
        Ok(match tok {
            Tok::Int(n) => Expr::Lit(Val::Int(n)),
            Tok::Uint(n) => Expr::Lit(Val::Uint(n)),
            Tok::Double(n) => Expr::Lit(Val::Double(n)),
            Tok::Str(s) => Expr::Lit(Val::Str(s)),
            Tok::Ident(w) => match w.as_str() {
                "true" => Expr::Lit(Val::Bool(true)),
                "false" => Expr::Lit(Val::Bool(false)),
                "null" => Expr::Lit(Val::Null),
                _ if self.eat("(") => {
                    let mut args = self.args(")")?;
                    if w == "has" {
                        return match (args.pop(), args.is_empty()) {
                            (Some(Expr::Select(target, field)), true) => Ok(Expr::Has(target, field)),
                            _ => Err("invalid argument to has() macro".into()),
                        };
                    }
                    Expr::Call(None, w, args)
                }
                _ => Expr::Ident(w),
            },
            Tok::Punct("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                e
            }
            Tok::Punct("[") => {
                self.depth += 1;
                let items = self.args("]")?;
                self.depth -= 1;
                Expr::List(items)
            }
            Tok::Punct("{") => {
                let mut entries = Vec::new();
                if !self.eat("}") {
                    loop {
                        let key = self.expr()?;
                        self.expect(":")?;
                        let value = self.expr()?;
                        entries.push((key, value));
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                        if self.eat("}") {
                            break;
                        }
                    }
                }
                Expr::Map(entries)
            }
            Tok::Punct(".") if matches!(self.peek(), Some(Tok::Ident(_))) => return self.primary(),
            other => return Err(format!("Syntax error: mismatched input {}", show(&other))),
        })
    }
}

fn method_or_macro(target: Expr, name: String, mut args: Vec<Expr>) -> Result<Expr, String> {
    let kind = match name.as_str() {
        "all" => Macro::All,
        "exists" => Macro::Exists,
        "exists_one" => Macro::ExistsOne,
        "map" => Macro::Map,
        "filter" => Macro::Filter,
        _ => return Ok(Expr::Call(Some(Box::new(target)), name, args)),
    };
    if args.len() != 2 {
        return Err(format!("{name}() macro takes two arguments: a variable name and an expression"));
    }
    let body = args.pop().unwrap_or(Expr::Lit(Val::Null));
    let Some(Expr::Ident(var)) = args.pop() else {
        return Err(format!("argument to {name}() macro is not a simple name"));
    };
    Ok(Expr::Comprehension(kind, Box::new(target), var, Box::new(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_binds_multiplication_before_comparison_before_and() {
        let e = parse("1 + 2 * 3 <= 7 && true").unwrap();
        assert!(matches!(e, Expr::And(..)));
    }

    #[test]
    fn macros_are_recognised_as_they_are_read() {
        assert!(matches!(parse("has(object.spec)").unwrap(), Expr::Has(..)));
        assert!(matches!(parse("[1].all(x, x > 0)").unwrap(), Expr::Comprehension(Macro::All, ..)));
        assert!(parse("has(object)").is_err());
    }

    #[test]
    fn bad_text_is_an_error_never_a_panic() {
        for text in ["", "(", "1 +", "'open", "a.", "{1:}", "x ? y", "#", "[1,,]", "a.all(1, 2)", "\"\\q\""] {
            assert!(parse(text).is_err(), "{text}");
        }
        let deep = "(".repeat(5000) + &")".repeat(5000);
        assert!(parse(&deep).is_err());
        assert!(parse(&"!".repeat(5000)).is_err());
        assert!(parse(&"[".repeat(5000)).is_err());
        assert!(parse(&"1+".repeat(10_000)).is_err());
        assert!(parse(&format!("1{}", "+1".repeat(1000))).is_err());
        assert!(parse(&format!("a{}", ".b".repeat(1000))).is_err());
    }
}
