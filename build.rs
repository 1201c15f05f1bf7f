//! Embeds every lesson: each `lessons/*.md` (but the README and the template) becomes an entry
//! of `BUILTIN` in `$OUT_DIR/lessons_index.rs`, so a new lesson is a new Markdown file.

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
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("lessons_index.rs"), code).expect("write lessons_index.rs");
}
