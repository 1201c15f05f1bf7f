//! The little Markdown lessons are written in, read into blocks and inline spans the page
//! renders as text nodes: paragraphs, `###` headings, `-`/`1.` lists, fenced code, and inline
//! `code`, **strong**, *emphasis* and [links](https://…). Raw HTML is just text: nothing a
//! lesson file says can become markup or script on the page.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    Code(String),
    Strong(String),
    Em(String),
    /// Only `http(s)://` targets are links; anything else stays text.
    Link {
        text: String,
        url: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    Paragraph(Vec<Inline>),
    Heading(Vec<Inline>),
    List { ordered: bool, items: Vec<Vec<Inline>> },
    Code(String),
}

pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    let mut lines = text.lines().peekable();
    let flush = |para: &mut Vec<&str>, out: &mut Vec<Block>| {
        if !para.is_empty() {
            out.push(Block::Paragraph(inline(&para.join(" "))));
            para.clear();
        }
    };
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            flush(&mut para, &mut out);
            let mut code = Vec::new();
            for l in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    break;
                }
                code.push(l);
            }
            out.push(Block::Code(code.join("\n")));
        } else if trimmed.is_empty() {
            flush(&mut para, &mut out);
        } else if let Some(h) = trimmed.strip_prefix('#') {
            flush(&mut para, &mut out);
            out.push(Block::Heading(inline(h.trim_start_matches('#').trim())));
        } else if let Some((ordered, item)) = list_item(trimmed) {
            flush(&mut para, &mut out);
            let mut items = vec![item.to_string()];
            while let Some(next) = lines.peek() {
                let t = next.trim();
                match list_item(t) {
                    Some((o, i)) if o == ordered => items.push(i.to_string()),
                    // A continuation line of the item before.
                    None if !t.is_empty() && next.starts_with("  ") => {
                        if let Some(last) = items.last_mut() {
                            last.push(' ');
                            last.push_str(t);
                        }
                    }
                    _ => break,
                }
                lines.next();
            }
            out.push(Block::List { ordered, items: items.iter().map(|i| inline(i)).collect() });
        } else {
            para.push(trimmed);
        }
    }
    flush(&mut para, &mut out);
    out
}

fn list_item(line: &str) -> Option<(bool, &str)> {
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some((false, rest));
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        if let Some(rest) = line[digits..].strip_prefix(". ") {
            return Some((true, rest));
        }
    }
    None
}

/// Inline spans: `code` first (nothing inside it is special), then **strong**, *em*, links.
pub fn inline(text: &str) -> Vec<Inline> {
    let mut out: Vec<Inline> = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    let push_plain = |plain: &mut String, out: &mut Vec<Inline>| {
        if !plain.is_empty() {
            out.push(Inline::Text(std::mem::take(plain)));
        }
    };
    while let Some(c) = rest.chars().next() {
        let span = match c {
            '`' => rest[1..].find('`').map(|end| (Inline::Code(rest[1..1 + end].to_string()), end + 2)),
            '*' if rest.starts_with("**") => {
                rest[2..].find("**").map(|end| (Inline::Strong(rest[2..2 + end].to_string()), end + 4))
            }
            '*' | '_' => {
                rest[1..].find(c).filter(|end| *end > 0).map(|end| (Inline::Em(rest[1..1 + end].to_string()), end + 2))
            }
            '[' => link(rest),
            _ => None,
        };
        match span {
            Some((inline, len)) => {
                push_plain(&mut plain, &mut out);
                out.push(inline);
                rest = &rest[len..];
            }
            None => {
                plain.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    push_plain(&mut plain, &mut out);
    out
}

fn link(rest: &str) -> Option<(Inline, usize)> {
    let close = rest.find("](")?;
    let end = rest[close + 2..].find(')')? + close + 2;
    let text = rest[1..close].to_string();
    let url = rest[close + 2..end].to_string();
    let inline = if url.starts_with("https://") || url.starts_with("http://") {
        Inline::Link { text, url }
    } else {
        Inline::Text(text)
    };
    Some((inline, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_join_their_lines_and_code_spans_are_literal() {
        let b = blocks("The `kube-system` namespace\nholds **the control plane**.\n\nNext *one*.");
        assert_eq!(
            b,
            vec![
                Block::Paragraph(vec![
                    Inline::Text("The ".into()),
                    Inline::Code("kube-system".into()),
                    Inline::Text(" namespace holds ".into()),
                    Inline::Strong("the control plane".into()),
                    Inline::Text(".".into()),
                ]),
                Block::Paragraph(vec![
                    Inline::Text("Next ".into()),
                    Inline::Em("one".into()),
                    Inline::Text(".".into())
                ]),
            ]
        );
    }

    #[test]
    fn html_stays_text_and_only_web_links_are_links() {
        let b = inline("<script>alert(1)</script> [docs](https://kubernetes.io) [x](javascript:alert(1))");
        assert_eq!(b[0], Inline::Text("<script>alert(1)</script> ".into()));
        assert_eq!(b[1], Inline::Link { text: "docs".into(), url: "https://kubernetes.io".into() });
        assert!(b.iter().all(|i| !matches!(i, Inline::Link { url, .. } if url.starts_with("javascript"))));
    }

    #[test]
    fn lists_headings_and_fences_are_blocks() {
        let b = blocks("### Why\n- one\n- two\n  continued\n\n1. first\n2. second\n\n```\nkubectl get pods\n```");
        assert_eq!(b[0], Block::Heading(vec![Inline::Text("Why".into())]));
        assert_eq!(
            b[1],
            Block::List {
                ordered: false,
                items: vec![vec![Inline::Text("one".into())], vec![Inline::Text("two continued".into())]]
            }
        );
        assert!(matches!(&b[2], Block::List { ordered: true, items } if items.len() == 2));
        assert_eq!(b[3], Block::Code("kubectl get pods".into()));
    }

    #[test]
    fn unclosed_marks_are_plain_text_and_nothing_panics() {
        assert_eq!(inline("2 * 3 and `open"), vec![Inline::Text("2 * 3 and `open".into())]);
        for s in ["*", "**", "[", "[a](", "`", "_x", "é*ü*", "1.", "- ", "#"] {
            let _ = blocks(s);
        }
    }
}
