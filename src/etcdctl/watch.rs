//! `etcdctl watch KEY [RANGE_END] [--prefix] [--rev N] [--prev-kv]`: etcd's own watch,
//! printing each change to the keys as it happens while virtual time passes — what the API
//! server's watch cache sees — until [`WATCH_CAP`] of virtual time has passed.

use crate::cluster::Cluster;
use crate::etcd::{ChangeKind, EtcdError, Revision};
use crate::kubectl::Output;
use crate::sim::Duration;
use std::fmt::Write;

/// How long `etcdctl watch` runs (a terminal user would press Ctrl-C).
pub const WATCH_CAP: Duration = Duration::minutes(1);

/// Runs the watch. `args` are etcdctl's words after `watch`.
pub fn watch(cluster: &mut Cluster, args: &[String]) -> Output {
    let mut keys = Vec::new();
    let (mut prefix, mut prev_kv, mut rev) = (false, false, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--prefix" => prefix = true,
            "--prev-kv" => prev_kv = true,
            "--rev" => rev = it.next().and_then(|r| r.parse::<Revision>().ok()),
            s if s.starts_with("--rev=") => rev = s["--rev=".len()..].parse::<Revision>().ok(),
            s if s.starts_with("--") => {}
            s => keys.push(s.to_string()),
        }
    }
    let Some(key) = keys.first().cloned() else {
        return Output {
            stderr: "Error: watch in non-interactive mode requires one or two arguments as key and an optional argument as range_end\n".into(),
            code: 1,
            ..Default::default()
        };
    };
    let range_end = keys.get(1).cloned();
    let in_range = |k: &str| match (&range_end, prefix) {
        (_, true) => k.starts_with(&key),
        (Some(end), _) => k >= key.as_str() && k < end.as_str(),
        (None, _) => k == key,
    };
    let mut seen = rev.map_or(cluster.inspect().etcd().revision(), |r| r - 1);
    let deadline = cluster.now() + WATCH_CAP;
    let mut out = Output::default();
    loop {
        let etcd = cluster.inspect().etcd();
        let changes = match etcd.changes_since(seen.min(etcd.revision())) {
            Ok(c) => c,
            Err(EtcdError::Compacted { compacted }) => {
                let _ = writeln!(
                    out.stderr,
                    "watch was canceled (etcdserver: mvcc: required revision has been compacted)\nError: watch is canceled by the server (compacted at {compacted})"
                );
                out.code = 1;
                return out;
            }
            Err(_) => {
                seen = etcd.revision();
                continue;
            }
        };
        for change in changes.filter(|c| in_range(&c.key)) {
            let kind = if change.kind == ChangeKind::Put { "PUT" } else { "DELETE" };
            out.stdout.push_str(kind);
            out.stdout.push('\n');
            if prev_kv {
                if let Some(prev) = change.prev.as_ref().filter(|_| !change.created) {
                    let _ = writeln!(out.stdout, "{}\n{}", change.key, crate::etcdctl::stored_json(prev));
                }
            }
            let value =
                if change.kind == ChangeKind::Put { crate::etcdctl::stored_json(&change.value) } else { String::new() };
            let _ = writeln!(out.stdout, "{}\n{value}", change.key);
        }
        seen = etcd.revision();
        if cluster.now() >= deadline {
            break;
        }
        cluster.step_toward(deadline);
    }
    let _ = writeln!(out.stderr, "kubeloop: stopped watching after {WATCH_CAP} of virtual time (as Ctrl-C would)");
    out
}
