//! The code has the architecture it teaches, read from the source (test modules and comments
//! left out):
//! - the folders stack in layers, as `docs/architecture.md` draws them: a folder may import
//!   folders in its own layer or below, never above, and no two folders import each other,
//!   directly or round a loop;
//! - only the API server touches etcd: components get a `Ctx` whose API they can only send
//!   requests to (its field is private, so the compiler holds them to it), and what reads the
//!   store directly goes through `Cluster::inspect()`, called only by the readers named here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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
    &["dns", "proxy", "cni", "userland", "kubelet", "scheduler", "controllers"],
    &["cluster"],
    &["kubectl"],
    &["etcdctl"],
    &["shell"],
    &["lessons"],
    &["editor", "views"],
    &["page"],
    &["ui", "cli"],
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

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
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
            if import != top {
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

/// Who may look at the store without a request, and why.
const INSPECTORS: &[(&str, &str)] = &[
    ("src/etcdctl/", "etcd's own client talks to etcd, not to the API server"),
    ("src/views/", "the page's views draw the cluster without changing the record"),
    ("src/ui/", "the page draws the cluster and travels back in time"),
    ("src/page/", "the page's state shows the cluster"),
    ("src/lessons/", "a lesson's checks only look"),
    ("src/shell/", "the sandbox's own `sim` commands, completion and saved sessions"),
    ("src/cluster/", "the world checks its own invariants"),
    ("src/cli.rs", "the headless CLI's own output"),
];

/// Who may write etcd behind the API server's back: etcdctl, as the real one can.
const BYPASSERS: &[&str] = &["src/apiserver/", "src/etcdctl/", "src/cluster/"];

/// Where the API server itself may be named: its folder, the world that holds it, and the
/// client library whose `Ctx` wraps it.
const HOLDERS: &[&str] = &["src/apiserver/", "src/cluster/", "src/client/", "src/etcdctl/"];

/// Every source file, as `src/…` and its code.
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(&root.join("src"), &mut all);
    all.into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            (rel, code_of(&std::fs::read_to_string(&p).unwrap()))
        })
        .collect()
}

fn offenders(word: &str, allowed: &[&str]) -> Vec<String> {
    sources()
        .into_iter()
        .filter(|(path, code)| code.contains(word) && !allowed.iter().any(|a| path.starts_with(a)))
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn only_the_named_readers_inspect_the_store() {
    let allowed: Vec<&str> = INSPECTORS.iter().map(|(p, _)| *p).collect();
    let mut found = offenders(".inspect()", &allowed);
    // `Cluster::objects` reads the store through the same handle.
    found.extend(offenders(".objects(Kind::", &allowed));
    found.extend(offenders(".objects(crate::api::Kind::", &allowed));
    assert!(found.is_empty(), "these read the store without a request: {found:?}");
}

#[test]
fn only_etcdctl_writes_etcd_behind_the_api_servers_back() {
    let found = offenders("etcd_bypass", BYPASSERS);
    assert!(found.is_empty(), "these write etcd directly: {found:?}");
}

#[test]
fn no_component_kubectl_or_container_names_the_api_server() {
    let mut found = offenders("apiserver::ApiServer", HOLDERS);
    found.extend(offenders("&ApiServer", HOLDERS));
    found.extend(offenders("&mut ApiServer", HOLDERS));
    found.extend(offenders("with_api(", HOLDERS));
    found.extend(offenders(".api()", HOLDERS));
    assert!(found.is_empty(), "these reach the API server other than by a request: {found:?}");
}
