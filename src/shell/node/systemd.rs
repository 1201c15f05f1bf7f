//! The node's services as systemd runs them: `systemctl status|stop|start|restart|is-active`
//! for kubelet and containerd, and `journalctl -u kubelet [-n N]`, whose lines are the
//! kubelet's klog lines derived from the record of what it did (the pods it was told of,
//! what it decided, its node's registration and status, the events it reported) and
//! systemd's own lines as the service started and stopped, stamped with the virtual clock.

use crate::cluster::{Cluster, Role};
use crate::record::{Happening, WatchEventType};
use crate::sim::Time;
use crate::util::sort::StableSort;

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const KUBELET_TITLE: &str = "kubelet.service - kubelet: The Kubernetes Node Agent";
const CONTAINERD_TITLE: &str = "containerd.service - containerd container runtime";

/// (month number, day, `HH:MM:SS`, microseconds) of a time.
fn parts(t: Time) -> (usize, String, String, String) {
    let s = t.rfc3339_micros();
    let month: usize = s[5..7].parse().unwrap_or(1);
    (month, s[8..10].to_string(), s[11..19].to_string(), s[20..26].to_string())
}

/// The journal's stamp: `Nov 28 06:00:01`.
fn journal_stamp(t: Time) -> String {
    let (m, d, hms, _) = parts(t);
    format!("{} {d} {hms}", MONTHS[m - 1])
}

/// klog's header: `I1128 06:00:01.123456     712 file.go:NN] `.
fn klog(level: char, t: Time, pid: u32, at: &str) -> String {
    let (m, d, hms, micros) = parts(t);
    format!("{level}{m:02}{d} {hms}.{micros} {pid:>7} {at}] ")
}

/// The kubelet's process id in its run that began at `start` (the n-th run).
fn kubelet_pid(node_index: usize, run: usize) -> u32 {
    (680 + node_index * 3 + run * 1187) as u32
}

fn node_index(cluster: &Cluster, node: &str) -> usize {
    cluster.kubelets().position(|k| k.node_name() == node).unwrap_or(0)
}

/// The kubelet's runs: (start, stop if it stopped).
fn runs(cluster: &Cluster, node: &str) -> Vec<(Time, Option<Time>)> {
    let Some(k) = cluster.kubelet(node) else { return Vec::new() };
    let mut out: Vec<(Time, Option<Time>)> = Vec::new();
    for (t, up) in k.lifecycle() {
        match (up, out.last_mut()) {
            (true, _) => out.push((*t, None)),
            (false, Some((_, stop @ None))) => *stop = Some(*t),
            _ => {}
        }
    }
    out
}

fn ago(now: Time, since: Time) -> String {
    let secs = now.since(since).as_millis() / 1000;
    match secs {
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}min {}s ago", s / 60, s % 60),
        s => format!("{}h {}min ago", s / 3600, (s % 3600) / 60),
    }
}

fn day_stamp(t: Time) -> String {
    // `Sat 2026-11-28 06:00:01 UTC`
    let ctime = t.ctime(true);
    let weekday = &ctime[..3];
    let s = t.rfc3339();
    format!("{weekday} {} {} UTC", &s[..10], &s[11..19])
}

/// `systemctl ARGS…` on `node`: what it prints and its exit status.
pub fn systemctl(cluster: &mut Cluster, node: &str, args: &[String]) -> (String, String, i32) {
    let words: Vec<&str> = args.iter().map(String::as_str).filter(|a| !a.starts_with('-')).collect();
    let unit = |u: &str| u.trim_end_matches(".service").to_string();
    match words.as_slice() {
        ["status", u, ..] if unit(u) == "kubelet" => kubelet_status(cluster, node),
        ["status", u, ..] if unit(u) == "containerd" => containerd_status(cluster),
        ["is-active", u] if unit(u) == "kubelet" => {
            if kubelet_running(cluster, node) { ("active\n".into(), String::new(), 0) } else { ("inactive\n".into(), String::new(), 3) }
        }
        ["is-active", u] if unit(u) == "containerd" => ("active\n".into(), String::new(), 0),
        [verb @ ("stop" | "start" | "restart"), u] if unit(u) == "kubelet" => {
            let Some(id) = cluster.find_component(&Role::Kubelet { node: node.to_string() }) else {
                return (String::new(), "Failed: no kubelet on this node\n".into(), 1);
            };
            if matches!(*verb, "stop" | "restart") && cluster.is_running(id) {
                cluster.stop_component(id);
            }
            if matches!(*verb, "start" | "restart") && !cluster.is_running(id) {
                cluster.start_component(id);
                // The process starts at once: its first run is now.
                cluster.advance(crate::sim::Duration::millis(1));
            }
            (String::new(), String::new(), 0)
        }
        [_, u, ..] if unit(u) == "containerd" => {
            (String::new(), "systemctl: the sandbox keeps containerd running (it holds every container on the node)\n".into(), 1)
        }
        ["status" | "stop" | "start" | "restart" | "is-active", u, ..] => {
            (String::new(), format!("Unit {}.service could not be found.\n", unit(u)), 4)
        }
        _ => (String::new(), "systemctl: this node's systemctl knows status, stop, start, restart and is-active (of kubelet and containerd)\n".into(), 1),
    }
}

fn kubelet_running(cluster: &Cluster, node: &str) -> bool {
    cluster.find_component(&Role::Kubelet { node: node.to_string() }).is_some_and(|id| cluster.is_running(id))
}

fn kubelet_status(cluster: &Cluster, node: &str) -> (String, String, i32) {
    let now = cluster.now();
    let runs = runs(cluster, node);
    let index = node_index(cluster, node);
    let run = runs.len().saturating_sub(1);
    let pid = kubelet_pid(index, run);
    let running = kubelet_running(cluster, node);
    let mut out = String::new();
    out.push_str(&format!("{} {KUBELET_TITLE}\n", if running { '●' } else { '○' }));
    out.push_str("     Loaded: loaded (/usr/lib/systemd/system/kubelet.service; enabled; preset: enabled)\n");
    out.push_str("    Drop-In: /usr/lib/systemd/system/kubelet.service.d\n             └─10-kubeadm.conf\n");
    let (start, stop) = runs.last().copied().unwrap_or((Time::ZERO, None));
    let exec = "/usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml --container-runtime-endpoint=unix:///run/containerd/containerd.sock --node-ip=";
    let ip = cluster.kubelet(node).map_or("", |k| k.internal_ip());
    match (running, stop) {
        (true, _) => {
            out.push_str(&format!("     Active: active (running) since {}; {}\n", day_stamp(start), ago(now, start)));
            out.push_str("       Docs: https://kubernetes.io/docs/\n");
            out.push_str(&format!("   Main PID: {pid} (kubelet)\n"));
            out.push_str("      Tasks: 14 (limit: 9371)\n     Memory: 41.2M\n");
            out.push_str(&format!("     CGroup: /system.slice/kubelet.service\n             └─{pid} {exec}{ip}\n"));
        }
        (false, stopped) => {
            let stopped = stopped.unwrap_or(now);
            out.push_str(&format!(
                "     Active: inactive (dead) since {}; {}\n",
                day_stamp(stopped),
                ago(now, stopped)
            ));
            out.push_str("       Docs: https://kubernetes.io/docs/\n");
            out.push_str(&format!("    Process: {pid} ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS (code=killed, signal=TERM)\n"));
            out.push_str(&format!("   Main PID: {pid} (code=killed, signal=TERM)\n"));
        }
    }
    let lines = journal(cluster, node);
    let tail: Vec<&String> = lines.iter().rev().take(10).collect();
    if !tail.is_empty() {
        out.push('\n');
        for l in tail.into_iter().rev() {
            out.push_str(l);
            out.push('\n');
        }
    }
    (out, String::new(), if running { 0 } else { 3 })
}

fn containerd_status(cluster: &Cluster) -> (String, String, i32) {
    let now = cluster.now();
    let out = format!(
        "● {CONTAINERD_TITLE}\n     Loaded: loaded (/usr/lib/systemd/system/containerd.service; enabled; preset: enabled)\n     Active: active (running) since {}; {}\n       Docs: https://containerd.io\n   Main PID: 104 (containerd)\n      Tasks: 62\n     Memory: 128.4M\n     CGroup: /system.slice/containerd.service\n             └─104 /usr/local/bin/containerd\n",
        day_stamp(Time::ZERO),
        ago(now, Time::ZERO)
    );
    (out, String::new(), 0)
}

/// `journalctl ARGS…`: `-u kubelet` (or containerd) with `-n N`/`--lines N`; `-f` is not
/// simulated (the lines so far are shown).
pub fn journalctl(cluster: &Cluster, node: &str, args: &[String]) -> (String, String, i32) {
    let (mut unit, mut last) = (None, None);
    let mut it = args.iter().map(String::as_str);
    while let Some(a) = it.next() {
        match a {
            "-u" | "--unit" => unit = it.next(),
            "-n" | "--lines" => last = it.next().and_then(|n| n.parse::<usize>().ok()),
            a if a.starts_with("-n") && a.len() > 2 => last = a[2..].parse().ok(),
            a if a.starts_with("--unit=") => unit = Some(&a[7..]),
            "--no-pager" | "-f" | "--follow" | "-l" | "--full" | "-e" => {}
            other => {
                return (String::new(), format!("journalctl: the sandbox's journalctl does not take {other}\n"), 1);
            }
        }
    }
    let lines = match unit.map(|u| u.trim_end_matches(".service")) {
        Some("kubelet") => journal(cluster, node),
        Some("containerd") => Vec::new(),
        Some(_) => return ("-- No entries --\n".into(), String::new(), 0),
        None => journal(cluster, node),
    };
    if lines.is_empty() {
        return ("-- No entries --\n".into(), String::new(), 0);
    }
    let skip = last.map_or(0, |n| lines.len().saturating_sub(n));
    (lines[skip..].iter().map(|l| format!("{l}\n")).collect(), String::new(), 0)
}

/// The kubelet unit's journal on `node`, oldest first.
pub fn journal(cluster: &Cluster, node: &str) -> Vec<String> {
    let Some(id) = cluster.find_component(&Role::Kubelet { node: node.to_string() }) else { return Vec::new() };
    let index = node_index(cluster, node);
    let runs = runs(cluster, node);
    let run_at = |t: Time| runs.iter().rposition(|(s, _)| *s <= t).unwrap_or(0);
    let mut lines: Vec<(Time, u8, String)> = Vec::new();
    let header = |t: Time| format!("{} {node} kubelet[{}]: ", journal_stamp(t), kubelet_pid(index, run_at(t)));
    let systemd = |t: Time, text: &str| format!("{} {node} systemd[1]: {text}", journal_stamp(t));
    for (i, (start, stop)) in runs.iter().enumerate() {
        lines.push((*start, 0, systemd(*start, &format!("Started {KUBELET_TITLE}."))));
        let pid = kubelet_pid(index, i);
        let version = crate::kubelet::node_config::KUBELET_VERSION;
        lines.push((
            *start,
            1,
            format!(
                "{}{}\"Kubelet version\" kubeletVersion=\"{version}\"",
                header(*start),
                klog('I', *start, pid, "server.go:530")
            ),
        ));
        if let Some(t) = stop {
            lines.push((*t, 2, systemd(*t, &format!("Stopping {KUBELET_TITLE}..."))));
            lines.push((*t, 3, systemd(*t, "kubelet.service: Deactivated successfully.")));
            lines.push((*t, 4, systemd(*t, &format!("Stopped {KUBELET_TITLE}."))));
        }
    }
    for e in cluster.record.entries() {
        let t = e.time;
        let pid = kubelet_pid(index, run_at(t));
        let text = match &e.what {
            Happening::Notify { to, event, kind: crate::api::Kind::Pod, namespace, name } if *to == id => match event {
                WatchEventType::Added => format!(
                    "{}\"SyncLoop ADD\" source=\"api\" pods=[\"{namespace}/{name}\"]",
                    klog('I', t, pid, "kubelet.go:2453")
                ),
                WatchEventType::Deleted => format!(
                    "{}\"SyncLoop REMOVE\" source=\"api\" pods=[\"{namespace}/{name}\"]",
                    klog('I', t, pid, "kubelet.go:2469")
                ),
                _ => continue,
            },
            Happening::Request { method: "POST", kind: crate::api::Kind::Node, code, .. }
                if e.actor == id && *code < 300 =>
            {
                format!(
                    "{}\"Successfully registered node\" node=\"{node}\"",
                    klog('I', t, pid, "kubelet_node_status.go:78")
                )
            }
            Happening::Request { path, code, message, .. }
                if e.actor == id && path.ends_with(&format!("/nodes/{node}/status")) =>
            {
                if *code < 300 && *code > 0 {
                    format!(
                        "{}\"Updated node status\" node=\"{node}\"",
                        klog('I', t, pid, "kubelet_node_status.go:508")
                    )
                } else {
                    format!(
                        "{}\"Error updating node status, will retry\" err=\"{message}\"",
                        klog('E', t, pid, "kubelet_node_status.go:535")
                    )
                }
            }
            Happening::Decision { text } if e.actor == id => {
                if text.starts_with(crate::kubelet::RUNTIME_PREFIX) {
                    continue;
                }
                if let Some(rest) = text.strip_prefix("file source: could not process manifest file ") {
                    let (path, err) = rest.split_once(": ").unwrap_or((rest, ""));
                    format!(
                        "{}\"Could not process manifest file\" err=\"{}\" path=\"{path}\"",
                        klog('E', t, pid, "file.go:187"),
                        err.replace('"', "\\\"")
                    )
                } else if let Some(rest) = text.strip_prefix("failed to update lease, ") {
                    format!(
                        "{}\"Failed to update lease\" err=\"{}\"",
                        klog('E', t, pid, "controller.go:145"),
                        rest.replace('"', "\\\"")
                    )
                } else {
                    format!("{}\"{}\"", klog('I', t, pid, "kubelet.go:2380"), text.replace('"', "\\\""))
                }
            }
            _ => continue,
        };
        lines.push((t, 5, format!("{}{text}", header(t))));
    }
    for ev in cluster.objects(crate::api::Kind::Event, "") {
        let Some(ev) = ev.as_event() else { continue };
        if ev.source.host != node || ev.source.component != "kubelet" {
            continue;
        }
        let Some(t) = ev.last_timestamp.or(ev.first_timestamp) else { continue };
        let pid = kubelet_pid(index, run_at(t));
        let o = &ev.involved_object;
        let object = if o.namespace.is_empty() { o.name.clone() } else { format!("{}/{}", o.namespace, o.name) };
        let level = if ev.type_ == "Warning" { 'W' } else { 'I' };
        let field = o.field_path.as_str();
        lines.push((
            t,
            6,
            format!(
                "{}{}\"Event occurred\" object=\"{object}\" fieldPath=\"{field}\" kind=\"{}\" apiVersion=\"{}\" type=\"{}\" reason=\"{}\" message=\"{}\"",
                header(t),
                klog(level, t, pid, "event.go:389"),
                o.kind,
                o.api_version,
                ev.type_,
                ev.reason,
                ev.message.replace('"', "\\\"")
            ),
        ));
    }
    lines.stable_sort_by_key(|l| (l.0, l.1));
    lines.into_iter().map(|(_, _, l)| l).collect()
}
