//! Tab completion in a node shell: its programs, their subcommands and units, crictl's
//! container ids, and the node's paths.

use super::{NodeShell, PROGRAMS, fs};
use crate::cluster::Cluster;

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The words that could stand where the cursor is (`word`), after `before`, in `shell`.
pub fn candidates(cluster: &Cluster, shell: &NodeShell, before: &[&str], word: &str) -> Vec<String> {
    let Some((program, rest)) = before.split_first() else { return owned(PROGRAMS) };
    match (*program, rest) {
        ("systemctl", []) => owned(&["status", "stop", "start", "restart", "is-active"]),
        ("systemctl", [_]) => owned(&["kubelet", "containerd"]),
        ("journalctl", [.., "-u"]) => owned(&["kubelet", "containerd"]),
        ("journalctl", _) => owned(&["-u", "-n", "--no-pager"]),
        ("crictl", []) => owned(&["ps", "pods", "images", "logs"]),
        ("crictl", ["logs"]) => {
            let (out, _, _) = super::crictl::run(cluster, &shell.node, &["ps".into(), "-a".into()]);
            out.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(String::from).collect()
        }
        ("crictl", ["ps"]) => owned(&["-a"]),
        ("iptables", [.., "-t"]) => owned(&["nat"]),
        ("iptables", [.., "-L"]) => owned(&["KUBE-SERVICES", "KUBE-NODEPORTS"]),
        ("iptables", _) => owned(&["-t", "-L", "-n"]),
        ("ls" | "cat" | "mv" | "cp" | "rm" | "sed" | "grep" | "cd", _) => paths(cluster, shell, word),
        _ => Vec::new(),
    }
}

/// The node's paths under what has been typed (directories end in `/`).
fn paths(cluster: &Cluster, shell: &NodeShell, typed: &str) -> Vec<String> {
    let dir_end = typed.rfind('/').map_or(0, |i| i + 1);
    let dir = &typed[..dir_end];
    let abs = fs::resolve(shell.cwd(), if dir.is_empty() { "." } else { dir });
    let Ok(names) = fs::list(cluster, &shell.node, &abs) else { return Vec::new() };
    names
        .into_iter()
        .map(|n| {
            let full = fs::resolve(&abs, &n);
            let slash = if fs::is_dir(cluster, &shell.node, &full) { "/" } else { "" };
            format!("{dir}{n}{slash}")
        })
        .collect()
}
