//! The page's shell never drifts from the map: the SVG that `index.html` shows before the
//! simulator has loaded is `kubeloop::views::shell::shell_map_svg()`, laid out as the app's first
//! frame lays out the fresh cluster's map.
//!
//! Regenerate the copy in `index.html` after changing the map's geometry or its classes:
//!     UPDATE_SHELL=1 cargo test --test shell

use kubeloop::shell::Session;
use kubeloop::views::map::board;
use kubeloop::views::shell::{DEFAULT_NODES, shell_layout, shell_map_svg};

const BEGIN: &str = "<!-- shell-map:begin -->";
const END: &str = "<!-- shell-map:end -->";

fn index_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("index.html")
}

/// The text between the markers, and where it is.
fn between_markers(html: &str) -> (usize, usize) {
    let start = html.find(BEGIN).expect("index.html has no <!-- shell-map:begin --> marker") + BEGIN.len();
    let end = start + html[start..].find(END).expect("index.html has no <!-- shell-map:end --> marker");
    (start, end)
}

#[test]
fn the_shell_map_in_index_html_is_shell_map_svg() {
    let path = index_path();
    let html = std::fs::read_to_string(&path).expect("read index.html");
    let (start, end) = between_markers(&html);
    let expected = shell_map_svg();
    if html[start..end].trim() == expected {
        return;
    }
    if std::env::var_os("UPDATE_SHELL").is_some() {
        // Keeps the end marker's indentation.
        let indent: String = html[..end].chars().rev().take_while(|c| *c == ' ').collect();
        let updated = format!("{}\n{expected}\n{indent}{}", &html[..start], &html[end..]);
        std::fs::write(&path, updated).expect("write index.html");
        eprintln!("index.html: the shell's map rewritten from shell_map_svg()");
        return;
    }
    let ours: Vec<&str> = html[start..end].trim().lines().collect();
    let theirs: Vec<&str> = expected.lines().collect();
    let first = ours.iter().zip(&theirs).position(|(a, b)| a != b).unwrap_or(ours.len().min(theirs.len()));
    panic!(
        "index.html's shell map (between {BEGIN} and {END}) differs from shell_map_svg(), first at line {}:\n  \
         index.html:      {:?}\n  shell_map_svg(): {:?}\n\
         Regenerate it with: UPDATE_SHELL=1 cargo test --test shell",
        first + 1,
        ours.get(first).copied().unwrap_or("(end)"),
        theirs.get(first).copied().unwrap_or("(end)"),
    );
}

#[test]
fn the_shell_map_has_the_geometry_of_the_fresh_clusters_map() {
    let session = Session::new(1);
    let live = board(&session.cluster).layout;
    let shell = shell_layout();
    let names: Vec<&str> = live.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, DEFAULT_NODES, "the fresh cluster's nodes");
    // The same height (so the app's first frame is the shell's size), boxes, stages and edges;
    // only the controller lanes, which the shell leaves out, may differ.
    assert_eq!(live.height, shell.height, "the app's first map is not the shell's height");
    assert_eq!(live.stages, shell.stages);
    assert_eq!(live.edges, shell.edges);
    for (a, b) in live.nodes.iter().zip(&shell.nodes) {
        assert_eq!(
            (a.rect, a.kube_proxy, a.kubelet, a.runtime, a.title),
            (b.rect, b.kube_proxy, b.kubelet, b.runtime, b.title)
        );
    }
}

const WORKER_BEGIN: &str = "// worker-js:begin";
const WORKER_END: &str = "// worker-js:end";

#[test]
fn the_worker_script_in_index_html_is_src_ui_port_worker_js() {
    let path = index_path();
    let html = std::fs::read_to_string(&path).expect("read index.html");
    let expected = include_str!("../src/ui/port/worker.js").trim();
    let start = html.find(WORKER_BEGIN).expect("index.html has no worker-js:begin marker") + WORKER_BEGIN.len();
    let end = start + html[start..].find(WORKER_END).expect("index.html has no worker-js:end marker");
    if html[start..end].trim() == expected {
        return;
    }
    assert!(
        std::env::var_os("UPDATE_SHELL").is_some(),
        "index.html's copy of the worker script differs from src/ui/port/worker.js; \
         regenerate it with: UPDATE_SHELL=1 cargo test --test shell"
    );
    let indent: String = html[..end].chars().rev().take_while(|c| *c == ' ').collect();
    let updated = format!("{}\n{expected}\n{indent}{}", &html[..start], &html[end..]);
    std::fs::write(&path, updated).expect("write index.html");
}
