//! Embeds every lesson: each `lessons/*.md` (but the README and the template) becomes an entry
//! of `BUILTIN` in `$OUT_DIR/lessons_index.rs`, so a new lesson is a new Markdown file; its
//! front matter's title, summary and track also go into `INDEX`, all the page embeds (it fetches a
//! lesson's text when the student opens it).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&root).join("lessons");
    println!("cargo:rerun-if-changed=lessons");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".md") && n != "README.md" && n != "TEMPLATE.md")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut code =
        String::from("/// Every built-in lesson: its path in the repository and its text, in file-name order.\n");
    code.push_str("pub static BUILTIN: &[(&str, &str)] = &[\n");
    for name in &names {
        let path = dir.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        let _ =
            writeln!(code, "    ({:?}, include_str!({:?})),", format!("lessons/{name}"), path.display().to_string());
    }
    code.push_str("];\n");
    code.push_str("/// Every built-in lesson's id, title, summary and track (its front matter), in file-name order.\n");
    code.push_str("pub static INDEX: &[(&str, &str, &str, &str)] = &[\n");
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        let field = |key: &str| {
            front_matter(&text)
                .find_map(|line| line.strip_prefix(key).and_then(|v| v.strip_prefix(':')).map(|v| unquote(v.trim())))
                .unwrap_or_default()
        };
        let id = name.trim_end_matches(".md");
        let _ = writeln!(code, "    ({id:?}, {:?}, {:?}, {:?}),", field("title"), field("summary"), field("track"));
    }
    code.push_str("];\n");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("lessons_index.rs"), code).expect("write lessons_index.rs");
}

/// The lines between a lesson's opening `---` and the next.
fn front_matter(text: &str) -> impl Iterator<Item = &str> {
    let mut lines = text.lines();
    let opened = lines.next().map(str::trim_end) == Some("---");
    lines.take_while(move |l| opened && l.trim_end() != "---")
}

/// A front matter value without the quotes around it, as the lesson parser reads it.
fn unquote(v: &str) -> String {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_string();
        }
    }
    v.to_string()
}
