//! etcdctl's writes — `put`, `del`, `snapshot save|restore` — and `sim etcd stop|start`.
//!
//! These go straight to the store, past the API server's authentication, admission and
//! validation (which is the lesson), yet the API server's watch cache watches etcd itself, so
//! every watcher still hears about a decodable change. A value nothing can decode is kept
//! as written; reads of it through the API fail and components never see it. A snapshot lives
//! in the session (its "file"); restoring one puts the whole keyspace back, and every watcher
//! hears the difference: lose etcd, lose the cluster; keep a backup, get it back.

use crate::api::{Kind, Object};
use crate::cluster::Cluster;
use crate::etcd::StoreSnapshot;
use crate::kubectl::Output;
use crate::util::sort::StableSort;
use std::collections::BTreeMap;

/// Snapshot files the session has saved, by path.
pub type SnapshotFiles = BTreeMap<String, StoreSnapshot>;

const WARNING: &str = "warning: etcdctl wrote to etcd directly: no authentication, admission or validation checked this write (the API server's watch cache still reports it to every watcher)\n";

/// Runs `etcdctl ARGS…`: writes and snapshots here, reads in [`crate::etcdctl`].
pub fn run(cluster: &mut Cluster, files: &mut SnapshotFiles, args: &[String], stdin: Option<&str>) -> Output {
    let positionals: Vec<&str> = positionals(args);
    let flag = |name: &str| {
        args.iter().any(|a| a == &format!("--{name}") || a.starts_with(&format!("--{name}=")) && !a.ends_with("=false"))
    };
    let known = |f: &str| {
        matches!(
            f,
            "prefix"
                | "from-key"
                | "prev-kv"
                | "rev"
                | "ignore-value"
                | "ignore-lease"
                | "lease"
                | "data-dir"
                | "name"
                | "initial-cluster"
                | "initial-cluster-token"
                | "initial-advertise-peer-urls"
                | "skip-hash-check"
                | "write-out"
                | "w"
        ) || crate::etcdctl::connection_flag(f).is_some()
    };
    if handles(args) {
        let unknown = args.iter().filter_map(|a| a.strip_prefix("--").or_else(|| a.strip_prefix('-'))).find(|f| {
            let name = f.split('=').next().unwrap_or_default();
            !name.is_empty() && !known(name)
        });
        if let Some(flag) = unknown {
            return error(&format!("unknown flag: --{}", flag.split('=').next().unwrap_or_default()));
        }
    }
    let reaches_etcd =
        !matches!(positionals.as_slice(), ["version", ..] | ["snapshot", "restore", ..] | [] | ["help", ..]);
    // A group's clock catches up with the present before etcdctl looks at it.
    cluster.with_api(|api, env| api.etcd_bypass().raft_mut().map(|g| g.advance_to(env.now)));
    let group_down = cluster.inspect().etcd().raft().is_some_and(|g| !g.has_quorum() || !g.links[0].running());
    if reaches_etcd && handles(args) && group_down {
        return error("context deadline exceeded");
    }
    if reaches_etcd && !cluster.inspect().etcd_running() {
        if positionals.as_slice() == ["endpoint", "health"] {
            return Output {
                stdout: "127.0.0.1:2379 is unhealthy: failed to commit proposal: context deadline exceeded\n".into(),
                stderr: "Error: unhealthy cluster\n".into(),
                code: 1,
                ..Default::default()
            };
        }
        return error("context deadline exceeded");
    }
    match positionals.as_slice() {
        ["put", key, value] => put(cluster, key, value),
        ["put", key] if stdin.is_some() => put(cluster, key, stdin.unwrap_or_default().trim_end_matches('\n')),
        ["put", ..] => error("put command needs 1 argument and input from stdin or 2 arguments"),
        ["del", key, range_end @ ..] if range_end.len() <= 1 => {
            del(cluster, key, range_end.first().copied(), flag("prefix"), flag("from-key"))
        }
        ["del", ..] => error("del command needs one argument as key and an optional argument as range_end"),
        ["watch", ..] => {
            let at = args.iter().position(|a| a == "watch").map_or(0, |i| i + 1);
            crate::etcdctl::watch::watch(cluster, &args[at..])
        }
        ["snapshot", "save", path] => save(cluster, files, path),
        ["snapshot", "save", ..] => error("snapshot save expects one argument"),
        ["snapshot", "restore", path] => {
            let data_dir = flag_value(args, "data-dir").unwrap_or_else(|| "default.etcd".to_string());
            restore(cluster, files, path, &data_dir)
        }
        ["snapshot", "restore", ..] => error("snapshot restore requires exactly one argument"),
        ["snapshot", "status", path] => {
            let deprecated = "Deprecated: Use `etcdutl snapshot status` instead.\n\n";
            let Some(s) = files.get(*path) else {
                return Output {
                    stdout: deprecated.into(),
                    stderr: format!("Error: stat {path}: no such file or directory\n"),
                    code: 1,
                    ..Default::default()
                };
            };
            let cells = [format!("{:x}", fingerprint(s)), s.revision.to_string(), s.keys().to_string(), size_text(s)];
            let body = if flag_value(args, "write-out").or_else(|| flag_value(args, "w")).as_deref() == Some("table") {
                status_table(&cells)
            } else {
                format!("{}\n", cells.join(", "))
            };
            Output { stdout: format!("{deprecated}{body}"), ..Default::default() }
        }
        _ => crate::etcdctl::run(cluster.inspect(), args),
    }
}

/// Whether `etcdctl ARGS` is one of the commands this module answers (or needs a live etcd).
pub fn handles(args: &[String]) -> bool {
    matches!(positionals(args).first(), Some(&("put" | "del" | "snapshot" | "watch")))
}

/// The words that are not flags (flags taking a value here are `--data-dir`, `-w`, `--lease`
/// and the connection flags, which come as `--flag=value` or `--flag value`).
fn positionals(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(flag) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) {
            let takes_value = matches!(
                flag,
                "data-dir"
                    | "write-out"
                    | "w"
                    | "lease"
                    | "name"
                    | "initial-cluster"
                    | "initial-cluster-token"
                    | "initial-advertise-peer-urls"
                    | "limit"
                    | "rev"
            ) || crate::etcdctl::connection_flag(flag) == Some(true);
            if takes_value {
                it.next();
            }
        } else {
            out.push(a.as_str());
        }
    }
    out
}

fn flag_value(args: &[String], name: &str) -> Option<String> {
    // A one-letter flag is written with one dash (`-w table`), a long one with two.
    let long = if name.len() == 1 { format!("-{name}") } else { format!("--{name}") };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix(&format!("{long}=")) {
            return Some(v.to_string());
        }
        if *a == long {
            return it.next().cloned();
        }
    }
    None
}

fn error(message: &str) -> Output {
    Output { stderr: format!("Error: {message}\n"), code: 1, ..Default::default() }
}

/// The kind, namespace and name a key under `/registry/` stands for, if it names one.
fn key_path(key: &str) -> Option<(Kind, String, String)> {
    let rest = key.strip_prefix("/registry/")?;
    let mut parts = rest.split('/');
    let resource = parts.next()?;
    let kind = Kind::ALL.iter().copied().find(|k| k.info().resource == resource && *k != Kind::ComponentStatus)?;
    let parts: Vec<&str> = parts.collect();
    match (kind.info().namespaced, parts.as_slice()) {
        (true, [ns, name]) if !ns.is_empty() && !name.is_empty() => Some((kind, ns.to_string(), name.to_string())),
        (false, [name]) if !name.is_empty() => Some((kind, String::new(), name.to_string())),
        _ => None,
    }
}

/// The object a written value decodes to, as the API server would read it back: the key says
/// which kind, namespace and name it is.
fn decode(key: &str, value: &str) -> Option<Object> {
    let (kind, namespace, name) = key_path(key)?;
    let json: serde_json::Value = serde_json::from_str(value).ok()?;
    let mut object = Object::decode(kind, &json).ok()?;
    object.set_type_meta();
    let meta = object.meta_mut();
    meta.namespace = namespace;
    meta.name = name;
    Some(object)
}

fn put(cluster: &mut Cluster, key: &str, value: &str) -> Output {
    let (key, value) = (key.to_string(), value.to_string());
    cluster.with_api(|api, env| match decode(&key, &value) {
        Some(object) => {
            let change = api.etcd_bypass().put_object(&key, object);
            api.publish_direct(change, &format!("etcdctl put {key} (straight to etcd)"), env);
        }
        None => {
            if let Some(change) = api.etcd_bypass().put_raw(&key, value) {
                api.publish_direct(change, &format!("etcdctl put {key}: a value no one can decode"), env);
            }
        }
    });
    Output { stdout: "OK\n".into(), stderr: WARNING.into(), ..Default::default() }
}

fn del(cluster: &mut Cluster, key: &str, range_end: Option<&str>, prefix: bool, from_key: bool) -> Output {
    let etcd = cluster.inspect().etcd();
    let in_range = |k: &str| match (range_end, prefix, from_key) {
        (_, true, _) => k.starts_with(key),
        (_, _, true) => k >= key,
        (Some(end), _, _) => k >= key && k < end,
        (None, _, _) => k == key,
    };
    let mut keys: Vec<String> = etcd
        .range("")
        .map(|(k, _)| k)
        .chain(etcd.raw_range("").map(|(k, _)| k.as_str()))
        .filter(|k| in_range(k))
        .map(str::to_string)
        .collect();
    keys.stable_sort();
    let count = keys.len();
    cluster.with_api(|api, env| {
        for key in keys {
            if let Some(Some(change)) = api.etcd_bypass().delete_any(&key) {
                api.publish_direct(change, &format!("etcdctl del {key} (straight to etcd)"), env);
            }
        }
    });
    let stderr = if count > 0 { WARNING.to_string() } else { String::new() };
    Output { stdout: format!("{count}\n"), stderr, ..Default::default() }
}

/// A timestamp as etcd's JSON logger prints it.
fn log_time(cluster: &Cluster) -> String {
    cluster.now().rfc3339_micros()
}

fn save(cluster: &mut Cluster, files: &mut SnapshotFiles, path: &str) -> Output {
    let snapshot = cluster.inspect().etcd().snapshot();
    let ts = log_time(cluster);
    let size = size_text(&snapshot);
    let endpoint = "127.0.0.1:2379";
    let stderr = format!(
        "{{\"level\":\"info\",\"ts\":\"{ts}\",\"caller\":\"snapshot/v3_snapshot.go:65\",\"msg\":\"created temporary db file\",\"path\":\"{path}.part\"}}\n\
         {{\"level\":\"info\",\"ts\":\"{ts}\",\"logger\":\"client\",\"caller\":\"v3@v3.5.21/maintenance.go:212\",\"msg\":\"opened snapshot stream; downloading\"}}\n\
         {{\"level\":\"info\",\"ts\":\"{ts}\",\"caller\":\"snapshot/v3_snapshot.go:73\",\"msg\":\"fetching snapshot\",\"endpoint\":\"{endpoint}\"}}\n\
         {{\"level\":\"info\",\"ts\":\"{ts}\",\"logger\":\"client\",\"caller\":\"v3@v3.5.21/maintenance.go:220\",\"msg\":\"completed snapshot read; closing\"}}\n\
         {{\"level\":\"info\",\"ts\":\"{ts}\",\"caller\":\"snapshot/v3_snapshot.go:88\",\"msg\":\"fetched snapshot\",\"endpoint\":\"{endpoint}\",\"size\":\"{size}\",\"took\":\"now\"}}\n\
         {{\"level\":\"info\",\"ts\":\"{ts}\",\"caller\":\"snapshot/v3_snapshot.go:97\",\"msg\":\"saved\",\"path\":\"{path}\"}}\n"
    );
    files.insert(path.to_string(), snapshot);
    Output { stdout: format!("Snapshot saved at {path}\n"), stderr, ..Default::default() }
}

fn restore(cluster: &mut Cluster, files: &SnapshotFiles, path: &str, data_dir: &str) -> Output {
    let Some(snapshot) = files.get(path).cloned() else {
        return Output {
            stdout: "Deprecated: Use `etcdutl snapshot restore` instead.\n\n".into(),
            stderr: format!("Error: open {path}: no such file or directory\n"),
            code: 1,
            ..Default::default()
        };
    };
    let ts = cluster.now().rfc3339();
    let dirs = format!(
        "\"path\": \"{path}\", \"wal-dir\": \"{data_dir}/member/wal\", \"data-dir\": \"{data_dir}\", \"snap-dir\": \"{data_dir}/member/snap\""
    );
    let stdout = format!(
        "Deprecated: Use `etcdutl snapshot restore` instead.\n\n\
         {ts}\tinfo\tsnapshot/v3_snapshot.go:260\trestoring snapshot\t{{{dirs}}}\n\
         {ts}\tinfo\tmembership/store.go:141\tTrimming membership information from the backend...\n\
         {ts}\tinfo\tmembership/cluster.go:421\tadded member\t{{\"cluster-id\": \"cdf818194e3a8c32\", \"local-member-id\": \"0\", \"added-peer-id\": \"8e9e05c52164694d\", \"added-peer-peer-urls\": [\"http://localhost:2380\"]}}\n\
         {ts}\tinfo\tsnapshot/v3_snapshot.go:287\trestored snapshot\t{{{dirs}}}\n"
    );
    let changed = restore_into(cluster, &snapshot);
    let stderr = format!(
        "kubeloop: the running etcd now serves {data_dir} (in a real cluster: point the etcd static pod's --data-dir at it); {changed} keys went back to revision {}\n",
        snapshot.revision
    );
    Output { stdout, stderr, ..Default::default() }
}

/// Puts the store back to `snapshot`, key by key, as a restored etcd started with
/// `--bump-revision --mark-compacted` serves it: revisions only move forward, and each watcher
/// hears every difference. Returns how many keys changed.
pub fn restore_into(cluster: &mut Cluster, snapshot: &StoreSnapshot) -> usize {
    let etcd = cluster.inspect().etcd();
    let mut gone: Vec<String> =
        etcd.range("").map(|(k, _)| k.to_string()).filter(|k| !snapshot.objects.contains_key(k)).collect();
    gone.extend(etcd.raw_range("").map(|(k, _)| k.clone()).filter(|k| !snapshot.raw.contains_key(k)));
    let back: Vec<(String, Object)> = snapshot
        .objects
        .iter()
        .filter(|(k, v)| etcd.get(k).is_none_or(|kv| !same_object(&kv.value, v)))
        .map(|(k, v)| (k.clone(), (**v).clone()))
        .collect();
    let raw: Vec<(String, String)> = snapshot
        .raw
        .iter()
        .filter(|(k, v)| etcd.raw(k).is_none_or(|r| &r.value != *v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let count = gone.len() + back.len() + raw.len();
    cluster.with_api(|api, env| {
        for key in gone {
            if let Some(Some(change)) = api.etcd_bypass().delete_any(&key) {
                api.publish_direct(change, &format!("snapshot restore: {key} is not in the snapshot"), env);
            }
        }
        for (key, object) in back {
            let change = api.etcd_bypass().put_object(&key, object);
            api.publish_direct(change, &format!("snapshot restore: {key} back as it was"), env);
        }
        for (key, value) in raw {
            if let Some(change) = api.etcd_bypass().put_raw(&key, value) {
                api.publish_direct(change, &format!("snapshot restore: {key}"), env);
            }
        }
        let revision = api.revision();
        api.etcd_bypass().compact(revision);
    });
    count
}

/// Whether two stored objects are the same write (the same value, whatever its revision).
fn same_object(a: &Object, b: &Object) -> bool {
    a.meta().resource_version == b.meta().resource_version && a == b
}

/// `snapshot status -w table`: etcdctl's bordered table, headers centered, every cell
/// right-aligned (its table printer aligns them all right).
fn status_table(cells: &[String; 4]) -> String {
    let heads = ["HASH", "REVISION", "TOTAL KEYS", "TOTAL SIZE"];
    let widths: Vec<usize> = heads.iter().zip(cells).map(|(h, c)| h.len().max(c.len()) + 2).collect();
    let rule = format!("+{}+\n", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("+"));
    let centered = |text: &str, w: usize| {
        let left = (w - text.len()) / 2;
        format!("{}{text}{}", " ".repeat(left), " ".repeat(w - text.len() - left))
    };
    let head: Vec<String> = heads.iter().zip(&widths).map(|(h, w)| centered(h, *w)).collect();
    let row: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:>0$} ", w - 1)).collect();
    format!("{rule}|{}|\n{rule}|{}|\n{rule}", head.join("|"), row.join("|"))
}

/// A stable fingerprint of a snapshot, in place of the file's hash.
fn fingerprint(s: &StoreSnapshot) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for key in s.objects.keys().chain(s.raw.keys()) {
        for b in key.bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    }
    h ^ s.revision as u32
}

fn size_text(s: &StoreSnapshot) -> String {
    let bytes: usize = s.objects.iter().map(|(k, v)| k.len() + v.to_json_value().to_string().len()).sum::<usize>()
        + s.raw.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
    match bytes {
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1_000_000.0),
        b if b >= 1_000 => format!("{} kB", b / 1_000),
        b => format!("{b} B"),
    }
}

/// `sim etcd stop|start`: etcd's process, and with it every API request; with a member's
/// name (`sim etcd stop control-plane2`), `partition|heal` and `slow|fast`: one member of a
/// Raft group.
pub fn sim(cluster: &mut Cluster, args: &[String]) -> Output {
    let ok = |s: &str| Output { stdout: s.to_string(), ..Default::default() };
    if let [verb, member] = args {
        return sim_member(cluster, verb, member);
    }
    match args.first().map(String::as_str) {
        Some("stop") => {
            cluster.with_api(|api, _| api.set_etcd_running(false));
            ok("etcd stopped: the API server has no store, so every request fails until `sim etcd start`\n")
        }
        Some("start") => {
            cluster.with_api(|api, _| api.set_etcd_running(true));
            ok("etcd started\n")
        }
        _ => {
            Output { stderr: format!("sim etcd: expected stop or start\n{MEMBER_HELP}"), code: 2, ..Default::default() }
        }
    }
}

pub const MEMBER_HELP: &str = "  sim etcd stop|start MEMBER      stop or start one etcd member (control-plane2…)
  sim etcd partition|heal MEMBER  cut one member off from the others, or reconnect it
  sim etcd slow|fast MEMBER       give a member a slow disk (each log write takes 1.5 s), or a
                                  healthy one again
";

/// One member of the group: stopped, partitioned, or on a slow disk.
fn sim_member(cluster: &mut Cluster, verb: &str, member: &str) -> Output {
    let fail = |s: String| Output { stderr: s, code: 1, ..Default::default() };
    if !matches!(verb, "stop" | "start" | "partition" | "heal" | "slow" | "fast") {
        return fail(format!("sim etcd: unknown command \"{verb}\"\n{MEMBER_HELP}"));
    }
    let found = cluster.inspect().etcd().raft().map(|g| g.find(member));
    let i = match found {
        Some(Some(i)) => i,
        Some(None) => return fail(format!("sim etcd: no member named \"{member}\"\n")),
        None if member == "control-plane" && matches!(verb, "stop" | "start") => {
            return sim(cluster, &[verb.to_string()]);
        }
        None => {
            return fail(
                "sim etcd: etcd has one member here (control-plane); a cluster with control-planes: 3 has three\n"
                    .to_string(),
            );
        }
    };
    let was_leader = cluster.with_api(|api, env| {
        let Some(g) = api.etcd_bypass().raft_mut() else { return false };
        g.advance_to(env.now);
        let was_leader = g.leader() == Some(i);
        match verb {
            "stop" | "start" => g.set_stopped(i, verb == "stop", env.now),
            "partition" | "heal" => g.set_partitioned(i, verb == "partition", env.now),
            _ => g.set_slow_disk(i, verb == "slow", env.now),
        }
        was_leader
    });
    let lost = if was_leader && matches!(verb, "stop" | "partition") {
        " (it was the leader: the others elect a new one once an election timeout passes without its heartbeats)"
    } else {
        ""
    };
    let what = match verb {
        "stop" => "stopped",
        "start" => "started: it rejoins as a follower and catches up from the leader",
        "partition" => "partitioned from the other members",
        "heal" => "reconnected to the other members",
        "slow" => "on a slow disk: each write to its log takes 1.5 s",
        _ => "on a healthy disk again",
    };
    Output { stdout: format!("etcd member {member} {what}{lost}\n"), ..Default::default() }
}

/// What stopping, starting, partitioning or healing a node does to the etcd member on it.
pub fn node_changed(cluster: &mut Cluster, node: &str, verb: &str) {
    let Some(i) = cluster.inspect().etcd().raft().and_then(|g| g.find(node)) else { return };
    cluster.with_api(|api, env| {
        let Some(g) = api.etcd_bypass().raft_mut() else { return };
        match verb {
            "stop" | "start" | "remove" => g.set_stopped(i, verb != "start", env.now),
            "partition" | "heal" => g.set_partitioned(i, verb == "partition", env.now),
            _ => {}
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_under_the_registry_name_their_object() {
        assert_eq!(key_path("/registry/pods/default/web"), Some((Kind::Pod, "default".into(), "web".into())));
        assert_eq!(key_path("/registry/nodes/worker-1"), Some((Kind::Node, String::new(), "worker-1".into())));
        assert_eq!(key_path("/registry/pods/web"), None);
        assert_eq!(key_path("foo"), None);
    }

    #[test]
    fn values_that_are_not_objects_do_not_decode() {
        assert!(decode("/registry/pods/default/x", "garbage").is_none());
        assert!(decode("/registry/pods/default/x", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}").is_some());
        assert!(decode("foo", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}").is_none());
    }

    fn session() -> crate::shell::Session {
        let mut s = crate::shell::Session::new(3);
        for line in ["kubectl create deployment web --image=nginx --replicas=2", "sim settle"] {
            s.execute(&crate::shell::Command::new(line));
        }
        s
    }

    fn run(s: &mut crate::shell::Session, line: &str) -> Output {
        s.execute(&crate::shell::Command::new(line))
    }

    #[test]
    fn a_pod_deleted_straight_from_etcd_is_replaced_by_its_replicaset() {
        let mut s = session();
        let pods = run(&mut s, "kubectl get pods -o name").stdout;
        let first = pods.lines().next().unwrap().trim_start_matches("pod/").to_string();
        let out = run(&mut s, &format!("etcdctl del /registry/pods/default/{first}"));
        assert_eq!(out.stdout, "1\n");
        assert!(out.stderr.contains("no authentication, admission or validation"));
        run(&mut s, "sim settle");
        let after = run(&mut s, "kubectl get pods -o name").stdout;
        assert_eq!(after.lines().count(), 2);
        assert!(!after.contains(&first));
    }

    #[test]
    fn restoring_a_snapshot_brings_a_deleted_deployment_and_its_pods_back() {
        let mut s = session();
        let pods = run(&mut s, "kubectl get pods -o name").stdout;
        assert_eq!(run(&mut s, "etcdctl snapshot save snap.db").stdout, "Snapshot saved at snap.db\n");
        run(&mut s, "kubectl delete deployment web");
        run(&mut s, "sim settle");
        assert_eq!(run(&mut s, "kubectl get pods -o name").stdout, "");
        assert_eq!(run(&mut s, "etcdctl snapshot restore snap.db").code, 0);
        run(&mut s, "sim settle");
        assert_eq!(run(&mut s, "kubectl get pods -o name").stdout, pods);
        assert!(run(&mut s, "kubectl get deployment web").stdout.contains("2/2"));
    }

    #[test]
    fn snapshot_status_as_a_table_right_aligns_every_cell_under_centered_headers() {
        let cells = ["2a268d0d".to_string(), "453".into(), "232".into(), "404 kB".into()];
        assert_eq!(
            status_table(&cells),
            "+----------+----------+------------+------------+
|   HASH   | REVISION | TOTAL KEYS | TOTAL SIZE |
+----------+----------+------------+------------+
| 2a268d0d |      453 |        232 |     404 kB |
+----------+----------+------------+------------+
"
        );
        let mut s = session();
        run(&mut s, "etcdctl snapshot save snap.db");
        for flags in ["-w table", "-w=table", "--write-out=table", "--write-out table"] {
            let out = run(&mut s, &format!("etcdctl snapshot status snap.db {flags}")).stdout;
            assert!(out.contains("|   HASH   | REVISION | TOTAL KEYS | TOTAL SIZE |\n"), "{flags}: {out}");
        }
    }

    #[test]
    fn while_etcd_is_stopped_kubectl_finds_no_server_and_etcdctl_times_out() {
        let mut s = session();
        run(&mut s, "sim etcd stop");
        let out = run(&mut s, "kubectl get pods");
        assert!(out.stderr.starts_with("The connection to the server 172.18.0.2:6443 was refused"), "{out:?}");
        assert_eq!(run(&mut s, "etcdctl get / --prefix").stderr, "Error: context deadline exceeded\n");
        run(&mut s, "sim etcd start");
        assert_eq!(run(&mut s, "kubectl get pods -o name").stdout.lines().count(), 2);
    }

    #[test]
    fn wiping_every_key_leaves_the_components_waiting_not_spinning() {
        let mut s = session();
        assert_ne!(run(&mut s, "etcdctl del \"\" --from-key").stdout, "0\n");
        let before = s.cluster.record.last_seq();
        run(&mut s, "sleep 30s");
        let requests = s.cluster.record.last_seq() - before;
        assert!(requests < 5_000, "{requests} record entries in 30 s");
        // The RBAC policy was in etcd too: kubeadm's admin is now an ordinary user.
        assert!(run(&mut s, "kubectl get pods -A").stderr.contains("is forbidden: User \"kubernetes-admin\""));
    }

    #[test]
    fn pods_that_started_while_etcd_was_down_report_running_once_it_is_back() {
        let mut s = crate::shell::Session::new(3);
        for line in [
            "kubectl create deployment web --image=nginx --replicas=3",
            "sleep 1500ms",
            "sim etcd stop",
            "sleep 20s",
            "sim etcd start",
            "sleep 30s",
        ] {
            run(&mut s, line);
        }
        let deploy = run(&mut s, "kubectl get deployment web").stdout;
        assert!(deploy.contains(" 3/3 "), "{deploy}");
    }

    #[test]
    fn a_deployment_created_just_before_etcd_stops_rolls_out_once_it_is_back() {
        for wait in ["1ms", "2ms", "5ms"] {
            let mut s = crate::shell::Session::new(3);
            run(&mut s, "kubectl create deployment web --image=nginx --replicas=3");
            for line in [
                format!("sleep {wait}"),
                "sim etcd stop".into(),
                "sleep 30s".into(),
                "sim etcd start".into(),
                "sleep 60s".into(),
            ] {
                run(&mut s, &line);
            }
            let deploy = run(&mut s, "kubectl get deployment web").stdout;
            assert!(deploy.contains(" 3/3 "), "after {wait}: {deploy}");
        }
    }
}
