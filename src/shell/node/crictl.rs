//! `crictl ps [-a]`, `crictl pods`, `crictl images` and `crictl logs ID` on a node: the
//! container runtime's view of what the node's kubelet runs, in crictl's table shapes
//! (columns at least 20 wide, 3 spaces apart; ids cut to 13 hex digits).

use crate::api::Pod;
use crate::cluster::Cluster;
use crate::sim::Time;
use crate::util::sort::StableSort;

/// crictl's tables: every column at least 20 wide, padded by 3.
fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> =
        (0..cols).map(|c| rows.iter().map(|r| r[c].chars().count() + 3).max().unwrap_or(0).max(20)).collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == cols {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// How long ago, as crictl says it (`About a minute ago`, `5 minutes ago`).
fn human(now: Time, then: Time) -> String {
    let s = now.since(then).as_millis() / 1000;
    let text = match s {
        0 => "Less than a second".to_string(),
        1 => "1 second".to_string(),
        s if s < 60 => format!("{s} seconds"),
        s if s < 120 => "About a minute".to_string(),
        s if s < 3600 => format!("{} minutes", s / 60),
        s if s < 7200 => "About an hour".to_string(),
        s => format!("{} hours", s / 3600),
    };
    format!("{text} ago")
}

fn short(id: &str) -> String {
    let hex = id.rsplit("://").next().unwrap_or(id);
    let hex = hex.rsplit(':').next().unwrap_or(hex);
    hex.chars().take(13).collect()
}

/// A pod's sandbox id: a stable hash of its uid, as 64 hex digits.
fn sandbox_id(pod: &Pod) -> String {
    let mut out = String::new();
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..4u8 {
        for b in pod.metadata.uid.bytes().chain([round]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
    }
    out
}

/// One container instance the runtime holds.
struct Instance {
    id: String,
    image: String,
    created: Time,
    running: bool,
    name: String,
    attempt: i32,
    pod: Pod,
}

fn pods(cluster: &Cluster, node: &str) -> Vec<Pod> {
    let Some(k) = cluster.kubelet(node) else { return Vec::new() };
    k.pods()
        .filter_map(|o| o.as_pod().cloned())
        .filter(|p| k.runs_pod(&p.metadata.namespace, &p.metadata.name))
        .collect()
}

fn instances(cluster: &Cluster, node: &str) -> Vec<Instance> {
    let mut out = Vec::new();
    for pod in pods(cluster, node) {
        for s in &pod.status.container_statuses {
            let image = short(s.image_id.rsplit("sha256:").next().unwrap_or(&s.image_id));
            if let Some(r) = &s.state.running {
                out.push(Instance {
                    id: s.container_id.clone(),
                    image: image.clone(),
                    created: r.started_at.unwrap_or(Time::ZERO),
                    running: true,
                    name: s.name.clone(),
                    attempt: s.restart_count,
                    pod: pod.clone(),
                });
            }
            if let Some(t) = &s.state.terminated {
                out.push(Instance {
                    id: t.container_id.clone(),
                    image: image.clone(),
                    created: t.started_at.unwrap_or(Time::ZERO),
                    running: false,
                    name: s.name.clone(),
                    attempt: s.restart_count,
                    pod: pod.clone(),
                });
            }
            if let Some(t) = &s.last_state.terminated {
                out.push(Instance {
                    id: t.container_id.clone(),
                    image,
                    created: t.started_at.unwrap_or(Time::ZERO),
                    running: false,
                    name: s.name.clone(),
                    attempt: s.restart_count - 1,
                    pod: pod.clone(),
                });
            }
        }
    }
    out.retain(|i| !i.id.is_empty());
    out.stable_sort_by(|a, b| b.created.cmp(&a.created).then(a.name.cmp(&b.name)));
    out
}

/// `crictl ARGS…` on `node`.
pub fn run(cluster: &Cluster, node: &str, args: &[String]) -> (String, String, i32) {
    let now = cluster.now();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["ps", flags @ ..] => {
            let all = flags.iter().any(|f| matches!(*f, "-a" | "--all"));
            let mut rows = vec![
                ["CONTAINER", "IMAGE", "CREATED", "STATE", "NAME", "ATTEMPT", "POD ID", "POD", "NAMESPACE"]
                    .map(String::from)
                    .to_vec(),
            ];
            for i in instances(cluster, node).into_iter().filter(|i| all || i.running) {
                rows.push(vec![
                    short(&i.id),
                    i.image,
                    human(now, i.created),
                    if i.running { "Running" } else { "Exited" }.into(),
                    i.name,
                    i.attempt.max(0).to_string(),
                    short(&sandbox_id(&i.pod)),
                    i.pod.metadata.name.clone(),
                    i.pod.metadata.namespace.clone(),
                ]);
            }
            (table(&rows), String::new(), 0)
        }
        ["pods", ..] => {
            let mut rows = vec![
                ["POD ID", "CREATED", "STATE", "NAME", "NAMESPACE", "ATTEMPT", "RUNTIME"].map(String::from).to_vec(),
            ];
            let mut ps = pods(cluster, node);
            ps.stable_sort_by(|a, b| {
                b.status.start_time.cmp(&a.status.start_time).then(a.metadata.name.cmp(&b.metadata.name))
            });
            for p in ps {
                let ready = !p.is_terminal();
                rows.push(vec![
                    short(&sandbox_id(&p)),
                    human(now, p.status.start_time.unwrap_or(Time::ZERO)),
                    if ready { "Ready" } else { "NotReady" }.into(),
                    p.metadata.name.clone(),
                    p.metadata.namespace.clone(),
                    "0".into(),
                    "(default)".into(),
                ]);
            }
            (table(&rows), String::new(), 0)
        }
        ["images", ..] | ["img", ..] => {
            let mut rows = vec![["IMAGE", "TAG", "IMAGE ID", "SIZE"].map(String::from).to_vec()];
            let images: Vec<String> =
                cluster.kubelet(node).map(|k| k.images().iter().cloned().collect()).unwrap_or_default();
            for canonical in images {
                let r = crate::kubelet::images::parse_reference(&canonical);
                let size = crate::kubelet::images::lookup(&r).map_or(0, |i| i.size);
                let (repo, _) = r.canonical.rsplit_once(':').unwrap_or((&r.canonical, ""));
                let digest = crate::kubelet::images::digest(&r);
                rows.push(vec![
                    repo.to_string(),
                    r.tag.clone(),
                    short(digest.rsplit("sha256:").next().unwrap_or("")),
                    format!("{:.1}MB", size as f64 / 1e6),
                ]);
            }
            (table(&rows), String::new(), 0)
        }
        ["logs", rest @ ..] => {
            let Some(id) = rest.iter().find(|w| !w.starts_with('-')) else {
                return (String::new(), "crictl logs: ID cannot be empty\n".into(), 1);
            };
            let found = instances(cluster, node).into_iter().find(|i| short(&i.id).starts_with(id) && id.len() >= 3);
            let Some(i) = found else {
                return (
                    String::new(),
                    format!(
                        "E{} \"ContainerStatus from runtime service failed\" err=\"rpc error: code = NotFound desc = an error occurred when try to find container \\\"{id}\\\": not found\" containerID=\"{id}\"\n",
                        &now.rfc3339()[5..10].replace('-', "")
                    ),
                    1,
                );
            };
            let previous = !i.running
                && i.pod.status.container_statuses.iter().any(|s| s.name == i.name && s.state.running.is_some());
            let lines = cluster
                .kubelet(node)
                .and_then(|k| k.logs(&i.pod.metadata.namespace, &i.pod.metadata.name, &i.name, previous, now))
                .unwrap_or_default();
            (lines.iter().map(|l| format!("{l}\n")).collect(), String::new(), 0)
        }
        _ => (String::new(), "crictl: the sandbox's crictl knows ps [-a], pods, images and logs ID\n".into(), 1),
    }
}
