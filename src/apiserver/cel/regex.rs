//! The regular expressions CEL's `matches()` takes (RE2 syntax, the common part): literals,
//! `.`, classes `[a-z]` `[^…]`, `\d \w \s` and their negations, anchors `^ $`, groups `( )`
//! with `|`, and the repeats `* + ? {m} {m,} {m,n}` (greedy or lazy). Matching backtracks
//! within a step budget (on texts of bounded length), so a pathological pattern fails with an error instead of running on.

const MAX_PATTERN: usize = 256;
/// Longest text matched: matching recurses once per character, and the page's stack is small.
const MAX_TEXT: usize = 512;
const MAX_REPEAT: u32 = 1000;
const STEP_BUDGET: u64 = 200_000;

#[derive(Clone, Debug)]
enum Node {
    Char(char),
    Any,
    Class(Vec<(char, char)>, bool),
    Start,
    End,
    Group(Vec<Vec<Node>>),
    Repeat(Box<Node>, u32, Option<u32>, bool),
}

/// Whether `pattern` matches somewhere in `text` (as RE2's `MatchString`).
pub fn is_match(pattern: &str, text: &str) -> Result<bool, String> {
    if pattern.len() > MAX_PATTERN {
        return Err("regex is too long".into());
    }
    if text.chars().count() > MAX_TEXT {
        return Err(format!("matches() takes strings of at most {MAX_TEXT} characters"));
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut pos = 0;
    let alternatives = alternation(&chars, &mut pos, 0)?;
    if pos != chars.len() {
        return Err(format!("error parsing regexp: unexpected ): `{pattern}`"));
    }
    let seq = vec![Node::Group(alternatives)];
    let text: Vec<char> = text.chars().collect();
    let mut steps = 0;
    for start in 0..=text.len() {
        if matches_at(&seq, &text, start, &mut steps, &mut |_, _| Ok(true))? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn bad(pattern: &[char]) -> String {
    format!("error parsing regexp: invalid pattern: `{}`", pattern.iter().collect::<String>())
}

fn alternation(p: &[char], pos: &mut usize, depth: usize) -> Result<Vec<Vec<Node>>, String> {
    if depth > 50 {
        return Err("error parsing regexp: expression nests too deeply".into());
    }
    let mut alts = vec![Vec::new()];
    while *pos < p.len() {
        let c = p[*pos];
        if c == ')' {
            break;
        }
        *pos += 1;
        let atom = match c {
            '|' => {
                alts.push(Vec::new());
                continue;
            }
            '(' => {
                if p.get(*pos) == Some(&'?') && p.get(*pos + 1) == Some(&':') {
                    *pos += 2;
                }
                let inner = alternation(p, pos, depth + 1)?;
                if p.get(*pos) != Some(&')') {
                    return Err(format!("error parsing regexp: missing closing ): `{}`", p.iter().collect::<String>()));
                }
                *pos += 1;
                Node::Group(inner)
            }
            '.' => Node::Any,
            '^' => Node::Start,
            '$' => Node::End,
            '[' => class(p, pos)?,
            '\\' => escape(p, pos)?,
            '*' | '+' | '?' | '{' => {
                return Err(format!("error parsing regexp: missing argument to repetition operator: `{c}`"));
            }
            _ => Node::Char(c),
        };
        let atom = repeat(p, pos, atom)?;
        if let Some(seq) = alts.last_mut() {
            seq.push(atom);
        }
    }
    Ok(alts)
}

fn repeat(p: &[char], pos: &mut usize, atom: Node) -> Result<Node, String> {
    let (min, max) = match p.get(*pos) {
        Some('*') => (0, None),
        Some('+') => (1, None),
        Some('?') => (0, Some(1)),
        Some('{') => {
            let close = p[*pos..].iter().position(|c| *c == '}').ok_or_else(|| bad(p))? + *pos;
            let inside: String = p[*pos + 1..close].iter().collect();
            let (lo, hi) = match inside.split_once(',') {
                Some((lo, "")) => (lo.parse().map_err(|_| bad(p))?, None),
                Some((lo, hi)) => (lo.parse().map_err(|_| bad(p))?, Some(hi.parse().map_err(|_| bad(p))?)),
                None => {
                    let n = inside.parse().map_err(|_| bad(p))?;
                    (n, Some(n))
                }
            };
            if lo > MAX_REPEAT || hi.is_some_and(|h| h > MAX_REPEAT || h < lo) {
                return Err(format!("error parsing regexp: invalid repeat count: `{{{inside}}}`"));
            }
            *pos = close;
            (lo, hi)
        }
        _ => return Ok(atom),
    };
    *pos += 1;
    let lazy = p.get(*pos) == Some(&'?');
    if lazy {
        *pos += 1;
    }
    Ok(Node::Repeat(Box::new(atom), min, max, lazy))
}

fn shorthand(c: char) -> Option<(Vec<(char, char)>, bool)> {
    let digits = vec![('0', '9')];
    let word = vec![('0', '9'), ('a', 'z'), ('A', 'Z'), ('_', '_')];
    let space = vec![(' ', ' '), ('\t', '\r')];
    Some(match c {
        'd' => (digits, false),
        'D' => (digits, true),
        'w' => (word, false),
        'W' => (word, true),
        's' => (space, false),
        'S' => (space, true),
        _ => return None,
    })
}

fn escape(p: &[char], pos: &mut usize) -> Result<Node, String> {
    let c = *p.get(*pos).ok_or_else(|| "error parsing regexp: trailing backslash at end of expression".to_string())?;
    *pos += 1;
    if let Some((ranges, negated)) = shorthand(c) {
        return Ok(Node::Class(ranges, negated));
    }
    Ok(Node::Char(match c {
        'n' => '\n',
        't' => '\t',
        c if c.is_ascii_alphanumeric() => {
            return Err(format!("error parsing regexp: invalid escape sequence: `\\{c}`"));
        }
        c => c,
    }))
}

fn class(p: &[char], pos: &mut usize) -> Result<Node, String> {
    let negated = p.get(*pos) == Some(&'^');
    if negated {
        *pos += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *p.get(*pos).ok_or_else(|| "error parsing regexp: missing closing ]".to_string())?;
        *pos += 1;
        if c == ']' && !first {
            break;
        }
        first = false;
        let lo = if c == '\\' {
            let e = *p.get(*pos).ok_or_else(|| bad(p))?;
            *pos += 1;
            if let Some((more, false)) = shorthand(e) {
                ranges.extend(more);
                continue;
            }
            match e {
                'n' => '\n',
                't' => '\t',
                e => e,
            }
        } else {
            c
        };
        if p.get(*pos) == Some(&'-') && p.get(*pos + 1).is_some_and(|c| *c != ']') {
            let hi = p[*pos + 1];
            *pos += 2;
            if hi < lo {
                return Err(format!("error parsing regexp: invalid character class range: `{lo}-{hi}`"));
            }
            ranges.push((lo, hi));
        } else {
            ranges.push((lo, lo));
        }
    }
    Ok(Node::Class(ranges, negated))
}

type Cont<'a> = dyn FnMut(usize, &mut u64) -> Result<bool, String> + 'a;

/// Whether `seq` matches at `at` with the rest (`k`) matching after it.
fn matches_at(seq: &[Node], text: &[char], at: usize, steps: &mut u64, k: &mut Cont) -> Result<bool, String> {
    *steps += 1;
    if *steps > STEP_BUDGET {
        return Err("regex match exceeded its step budget".into());
    }
    let Some((node, rest)) = seq.split_first() else { return k(at, steps) };
    let one = |at: usize| -> Option<usize> {
        let c = *text.get(at)?;
        let ok = match node {
            Node::Char(x) => *x == c,
            Node::Any => c != '\n',
            Node::Class(ranges, negated) => ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated,
            _ => false,
        };
        ok.then_some(at + 1)
    };
    match node {
        Node::Start => at == 0 && matches_at(rest, text, at, steps, k)?,
        Node::End => at == text.len() && matches_at(rest, text, at, steps, k)?,
        Node::Group(alts) => {
            for alt in alts {
                if matches_at(alt, text, at, steps, &mut |end, steps: &mut u64| matches_at(rest, text, end, steps, k))?
                {
                    return Ok(true);
                }
            }
            false
        }
        Node::Repeat(inner, min, max, lazy) => repeat_at(inner, *min, *max, *lazy, rest, text, at, steps, k, 0)?,
        _ => match one(at) {
            Some(next) => matches_at(rest, text, next, steps, k)?,
            None => false,
        },
    }
    .then_some(true)
    .map_or(Ok(false), Ok)
}

#[allow(clippy::too_many_arguments)]
fn repeat_at(
    inner: &Node,
    min: u32,
    max: Option<u32>,
    lazy: bool,
    rest: &[Node],
    text: &[char],
    at: usize,
    steps: &mut u64,
    k: &mut Cont,
    count: u32,
) -> Result<bool, String> {
    *steps += 1;
    if *steps > STEP_BUDGET || count > MAX_REPEAT.max(text.len() as u32 + 1) {
        return Err("regex match exceeded its step budget".into());
    }
    let may_stop = count >= min;
    let may_go = max.is_none_or(|m| count < m);
    if lazy && may_stop && matches_at(rest, text, at, steps, k)? {
        return Ok(true);
    }
    if may_go {
        let once = std::slice::from_ref(inner);
        let more = matches_at(once, text, at, steps, &mut |end, steps: &mut u64| {
            // An empty pass would repeat forever: only a pass that consumed goes round again.
            if end == at && count >= min {
                return Ok(false);
            }
            repeat_at(inner, min, max, lazy, rest, text, end, steps, k, count + 1)
        })?;
        if more {
            return Ok(true);
        }
    }
    if !lazy && may_stop {
        return matches_at(rest, text, at, steps, k);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::is_match;

    #[test]
    fn patterns_match_as_re2_finds_them_anywhere_unless_anchored() {
        assert_eq!(is_match("^[a-z]+$", "nginx"), Ok(true));
        assert_eq!(is_match("^[a-z]+$", "Nginx"), Ok(false));
        assert_eq!(is_match("prod", "my-prod-app"), Ok(true));
        assert_eq!(is_match(r"^\d{3}-\d{2,}$", "123-45"), Ok(true));
        assert_eq!(is_match("^(a|bc)*d$", "abcbcad"), Ok(true));
        assert_eq!(is_match("^registry\\.k8s\\.io/.*", "registry.k8s.io/pause:3.10"), Ok(true));
        assert_eq!(is_match("^.*:latest$", "nginx:1.27"), Ok(false));
        assert_eq!(is_match("a.+?b", "axxb"), Ok(true));
    }

    #[test]
    fn bad_or_pathological_patterns_are_errors_not_hangs() {
        assert!(is_match("(", "x").is_err());
        assert!(is_match("[a-", "x").is_err());
        assert!(is_match("*a", "x").is_err());
        assert!(is_match("a{5000}", "x").is_err());
        let slow = is_match("^(a+)+$", &("a".repeat(40) + "b"));
        assert!(slow.is_err() || slow == Ok(false));
        assert!(is_match("(a*)*b", &"a".repeat(200)).is_err() || is_match("(a*)*b", &"a".repeat(200)) == Ok(false));
    }
}
