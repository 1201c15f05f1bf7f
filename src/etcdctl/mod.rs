//! etcdctl: etcd's own client, reading the keys the API server stores.
//!
//! It talks to etcd directly, not through the API server, which is why it shows the store's
//! layout (`/registry/<resource>/<namespace>/<name>`) and revisions. Values are printed as JSON,
//! as an API server started with `--storage-media-type=application/json` stores them (a default
//! cluster stores protobuf, which prints as binary). Writes (`put`, `del`, snapshots) live in
//! [`crate::etcdctl::snapshot`].

pub mod cluster;
pub mod snapshot;
pub mod watch;

use crate::apiserver::inspect::Inspect;
use crate::etcd::{EtcdError, Revision};
use crate::kubectl::Output;
use crate::util::sort::StableSort;
use std::fmt::Write;

pub(crate) const CLUSTER_ID: u64 = 14841639068965178418;
/// The member the sandbox's single-node etcd reports (the first member of a group keeps it).
const MEMBER_ID_DEC: u64 = crate::etcd::raft::FIRST_MEMBER_ID;
/// The same etcd release as the static pod's image (`registry.k8s.io/etcd:3.5.21-0`).
const VERSION: &str = "3.5.21";

/// etcdctl's global flags that take a value, which this sandbox accepts and ignores (how to
/// reach and authenticate to etcd, and how long to wait for it).
const CONNECTION_VALUES: &[&str] = &[
    "endpoints",
    "cacert",
    "cert",
    "key",
    "user",
    "password",
    "dial-timeout",
    "command-timeout",
    "keepalive-time",
    "keepalive-timeout",
];

/// etcdctl's global switches, accepted and ignored likewise.
const CONNECTION_SWITCHES: &[&str] = &["insecure-skip-tls-verify", "insecure-transport", "insecure-discovery"];

/// Whether `flag` is one of etcdctl's global connection flags, and whether it takes a value.
pub(crate) fn connection_flag(flag: &str) -> Option<bool> {
    if CONNECTION_VALUES.contains(&flag) {
        Some(true)
    } else if CONNECTION_SWITCHES.contains(&flag) {
        Some(false)
    } else {
        None
    }
}

/// Runs `etcdctl ARGS…` against the API server's store.
pub fn run(api: Inspect<'_>, args: &[String]) -> Output {
    let mut positionals = Vec::new();
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if let Some(flag) = word.strip_prefix("--").or_else(|| word.strip_prefix('-').filter(|f| f.len() == 1)) {
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None if takes_value(flag) => match words.next() {
                    Some(v) => (flag.to_string(), v.clone()),
                    None => return error(&format!("flag needs an argument: --{flag}")),
                },
                None => (flag.to_string(), "true".to_string()),
            };
            let name = if name == "w" { "write-out".to_string() } else { name };
            if !known(&name) {
                return error(&format!("unknown flag: --{name}"));
            }
            flags.push((name, value));
        } else {
            positionals.push(word.as_str());
        }
    }
    let format = flag_value(&flags, "write-out").unwrap_or("simple");
    let tables = matches!(positionals.as_slice(), ["member", "list"] | ["endpoint", "status" | "health"]);
    if !(matches!(format, "simple" | "json") || tables && format == "table") {
        return error(&format!("unsupported output format {format:?} (this sandbox prints simple and json)"));
    }
    let all = flag_value(&flags, "cluster").is_some_and(|v| v != "false");
    // The member beside etcdctl is stopped, or (for a read) the group has no quorum: the
    // request waits out etcdctl's command timeout.
    let no_quorum = api.etcd().raft().is_some_and(|g| !g.has_quorum());
    let waits = match positionals.as_slice() {
        ["version"] | [] => false,
        // Served by the local member alone (its own status, its member list).
        ["member" | "endpoint", ..] => !cluster::local_running(api.etcd()),
        _ => no_quorum || !cluster::local_running(api.etcd()),
    };
    if waits {
        return error("context deadline exceeded");
    }
    match positionals.as_slice() {
        ["get", key, range_end @ ..] if range_end.len() <= 1 => get(api, key, range_end.first().copied(), &flags, format),
        ["get", ..] => error("get command needs one argument as key and an optional argument as range_end"),
        ["member", "list"] => cluster::member_list(api.etcd(), format, &header(0).replace(",\"revision\":0", "")),
        ["endpoint", "status"] => endpoint_status(api, format, all),
        ["endpoint", "health"] => cluster::endpoint_health(api.etcd(), format, all),
        ["endpoint", ..] => error("endpoint takes one of: health, status"),
        ["version"] => Output { stdout: format!("etcdctl version: {VERSION}\nAPI version: 3.5\n"), ..Default::default() },
        [] => Output {
            stdout: "etcdctl: a simple command line client for etcd3.\n\nCommands this sandbox supports:\n  \
                     get KEY [RANGE_END] [--prefix] [--keys-only] [--print-value-only] [--limit N] [--rev N] [-w json]\n  \
                     put KEY VALUE\n  watch KEY [RANGE_END] [--prefix] [--rev N] [--prev-kv]\n  del KEY [RANGE_END] [--prefix]\n  snapshot save|restore|status FILE [--data-dir DIR]\n  \
                     member list\n  endpoint health|status\n  version\n"
                .into(),
            ..Default::default()
        },
        [other, ..] => error(&format!("unknown command \"{other}\" for \"etcdctl\"")),
    }
}

/// The last value given for a flag.
fn flag_value<'a>(flags: &'a [(String, String)], name: &str) -> Option<&'a str> {
    flags.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

fn takes_value(flag: &str) -> bool {
    matches!(flag, "limit" | "rev" | "write-out" | "w" | "sort-by" | "order") || connection_flag(flag) == Some(true)
}

fn known(name: &str) -> bool {
    takes_value(name)
        || connection_flag(name).is_some()
        || matches!(name, "prefix" | "keys-only" | "print-value-only" | "count-only" | "from-key" | "cluster")
}

fn error(message: &str) -> Output {
    Output { stderr: format!("Error: {message}\n"), code: 1, ..Default::default() }
}

/// One key as `get` prints it: with its revisions when reading the current state.
struct Entry {
    key: String,
    value: String,
    revisions: Option<(Revision, Revision, i64)>,
}

fn get(api: Inspect<'_>, key: &str, range_end: Option<&str>, flags: &[(String, String)], format: &str) -> Output {
    let etcd = api.etcd();
    let flag = |name: &str| flag_value(flags, name);
    let number =
        |name: &str| flag(name).map(|v| v.parse::<i64>().map_err(|_| format!("invalid argument {v:?} for --{name}")));
    let limit = match number("limit").transpose() {
        Ok(l) => l.filter(|l| *l > 0).map(|l| l as usize),
        Err(e) => return error(&e),
    };
    let rev = match number("rev").transpose() {
        Ok(r) => r.filter(|r| *r > 0),
        Err(e) => return error(&e),
    };
    let prefix = flag("prefix").is_some_and(|v| v != "false");
    let from_key = flag("from-key").is_some_and(|v| v != "false");
    let in_range = |k: &str| match (range_end, prefix, from_key) {
        (_, true, _) => k.starts_with(key),
        (_, _, true) => k >= key,
        (Some(end), _, _) => k >= key && k < end,
        (None, _, _) => k == key,
    };
    let mut entries: Vec<Entry> = match rev {
        Some(r) if r < etcd.revision() => match etcd.snapshot_at(r) {
            Ok(state) => state
                .iter()
                .filter(|(k, _)| in_range(k))
                .map(|(k, v)| Entry { key: k.clone(), value: stored_json(v), revisions: None })
                .collect(),
            Err(EtcdError::Compacted { .. }) => return error("etcdserver: mvcc: required revision has been compacted"),
            Err(_) => return error("etcdserver: mvcc: required revision is a future revision"),
        },
        Some(r) if r > etcd.revision() => return error("etcdserver: mvcc: required revision is a future revision"),
        _ => etcd
            .range(if prefix || range_end.is_some() || from_key { "" } else { key })
            .skip_while(|(k, _)| *k < key)
            .take_while(|(k, _)| from_key || range_end.is_some() || k.starts_with(key))
            .filter(|(k, _)| in_range(k))
            .map(|(k, kv)| Entry {
                key: k.to_string(),
                value: stored_json(&kv.value),
                revisions: Some((kv.create_revision, kv.mod_revision, kv.version)),
            })
            .chain(
                etcd.raw_range(if prefix || range_end.is_some() || from_key { "" } else { key })
                    .filter(|(k, _)| in_range(k))
                    .map(|(k, r)| Entry {
                        key: k.clone(),
                        value: r.value.clone(),
                        revisions: Some((r.create_revision, r.mod_revision, r.version)),
                    }),
            )
            .collect(),
    };
    entries.stable_sort_by(|a, b| a.key.cmp(&b.key));
    let count = entries.len();
    if let Some(limit) = limit {
        entries.truncate(limit);
    }
    let keys_only = flag("keys-only").is_some_and(|v| v != "false");
    let values_only = flag("print-value-only").is_some_and(|v| v != "false");
    let count_only = flag("count-only").is_some_and(|v| v != "false");
    let mut out = String::new();
    if format == "json" {
        let header = header(rev.unwrap_or(etcd.revision()).min(etcd.revision()));
        let kvs: Vec<String> = entries
            .iter()
            .map(|e| {
                let mut kv = format!("{{\"key\":\"{}\"", crate::util::base64::encode(e.key.as_bytes()));
                if let Some((create, modified, version)) = e.revisions {
                    let _ =
                        write!(kv, ",\"create_revision\":{create},\"mod_revision\":{modified},\"version\":{version}");
                }
                if !keys_only {
                    let _ = write!(kv, ",\"value\":\"{}\"", crate::util::base64::encode(e.value.as_bytes()));
                }
                kv + "}"
            })
            .collect();
        let more = if limit.is_some_and(|l| l < count) { ",\"more\":true" } else { "" };
        let kvs = if count_only || kvs.is_empty() { String::new() } else { format!(",\"kvs\":[{}]", kvs.join(",")) };
        let _ = writeln!(out, "{{{header}{kvs}{more},\"count\":{count}}}");
    } else if count_only {
        return error("--count-only is only for `--write-out=json`");
    } else {
        for e in &entries {
            if !values_only {
                let _ = writeln!(out, "{}", e.key);
            }
            if keys_only {
                out.push('\n');
            } else {
                let _ = writeln!(out, "{}", e.value);
            }
        }
    }
    Output { stdout: out, ..Default::default() }
}

/// An object as the API server writes it: without resourceVersion, which etcd's own
/// mod_revision supplies when the object is read back.
pub fn stored_json(object: &crate::api::Object) -> String {
    let mut value = object.to_json_value();
    if let Some(meta) = value.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("resourceVersion");
    }
    value.to_string()
}

fn header(revision: Revision) -> String {
    format!(
        "\"header\":{{\"cluster_id\":{CLUSTER_ID},\"member_id\":{MEMBER_ID_DEC},\"revision\":{revision},\"raft_term\":2}}"
    )
}

fn endpoint_status(api: Inspect<'_>, format: &str, all: bool) -> Output {
    let etcd = api.etcd();
    // A rough size: what the keys and their JSON values would take on disk.
    let size: usize = etcd.range("").map(|(k, kv)| k.len() + kv.value.to_json_value().to_string().len()).sum();
    cluster::endpoint_status(etcd, format, all, &human_size(size), size, VERSION)
}

/// Sizes as etcdctl prints them (`20 kB`, `3.1 MB`).
fn human_size(bytes: usize) -> String {
    match bytes {
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1_000_000.0),
        b if b >= 1_000 => format!("{} kB", b / 1_000),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_in_decimal_units() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(20_480), "20 kB");
        assert_eq!(human_size(3_100_000), "3.1 MB");
    }
}
