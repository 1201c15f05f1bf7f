//! The crate's folders stack in layers, as `docs/architecture.md` draws them: a folder may
//! import folders in its own layer or below, never above, and no two folders import each
//! other, directly or round a loop. Read from the source's own `crate::` paths, test modules
//! and comments left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Bottom to top. Folders in one layer may use each other, as long as no loop forms.
const LAYERS: &[&[&str]] = &[
    &["sim"],
    &["util"],
    &["yaml"],
    &["api"],
    &["etcd"],
    &["record"],
    &["apiserver"],
    &["client"],
    &["dns", "proxy", "userland", "kubelet", "scheduler", "controllers"],
    &["cluster"],
    &["kubectl"],
    &["etcdctl"],
    &["shell"],
    &["lessons"],
    &["editor", "views"],
    &["page"],
    &["ui", "cli"],
];

/// Imports that still run the wrong way, each to be turned round (the list only shrinks).
const NOT_YET: &[(&str, &str)] = &[
    ("apiserver", "client"),
    ("proxy", "cluster"),
    ("userland", "cluster"),
    ("cluster", "userland"),
    ("kubelet", "userland"),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The source without comments and without its trailing `#[cfg(test)] mod tests`.
fn code_of(source: &str) -> String {
    let source = source.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    source.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The top-level modules a piece of code names through `crate::`.
fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Folder → the folders it imports, each with one file that does.
fn graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for path in all {
        let rel = path.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        let entry = graph.entry(top.clone()).or_default();
        for import in imports(&code) {
            if import != top && !NOT_YET.contains(&(top.as_str(), import.as_str())) {
                entry.entry(import).or_insert_with(|| rel.clone());
            }
        }
    }
    graph
}

#[test]
fn every_folder_has_a_layer() {
    let unplaced: Vec<String> = graph().into_keys().filter(|m| layer_of(m).is_none()).collect();
    assert!(unplaced.is_empty(), "folders missing from LAYERS (and from docs/architecture.md): {unplaced:?}");
}

#[test]
fn no_folder_imports_a_folder_above_it() {
    let mut upward = Vec::new();
    for (from, to) in graph() {
        let Some(low) = layer_of(&from) else { continue };
        for (target, file) in to {
            if layer_of(&target).is_some_and(|high| high > low) {
                upward.push(format!("{file} imports {target}, a layer above {from}"));
            }
        }
    }
    assert!(upward.is_empty(), "imports that run upwards:\n{}", upward.join("\n"));
}

#[test]
fn no_two_folders_import_each_other_even_round_a_loop() {
    let graph = graph();
    // Depth-first search for a back edge, keeping the path to name the loop.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, String>>,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|p| p == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if !done.insert(node.to_string()) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flat_map(|m| m.keys()) {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        let mut path = Vec::new();
        if let Some(cycle) = visit(node, &graph, &mut done, &mut path) {
            let links: Vec<String> =
                cycle.windows(2).map(|w| format!("{} → {} ({})", w[0], w[1], graph[&w[0]][&w[1]])).collect();
            panic!("an import loop:\n{}", links.join("\n"));
        }
    }
}
