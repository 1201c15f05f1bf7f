//! `sim record`: the record as the components' own client logs would show it at `-v=6` — each
//! request a component sent with its URL and answer, each watch notification it received,
//! each call the API server made to it (a kubelet serving logs or exec), each decision it
//! wrote down — so a transcript can show who talked to whom.

use crate::apiserver::Status;
use crate::cluster::Cluster;
use crate::kubectl::verbose::{query_escape, quote, stamp_at};
use crate::record::{ComponentId, Entry, Happening};
use crate::sim::Time;

/// How many lines `sim record` prints when not told.
pub const DEFAULT_LAST: usize = 20;

pub const HELP: &str = "\
usage: sim record [COMPONENT] [--last N]
  the last N (20) requests, watch notifications and decisions of COMPONENT (all when
  omitted): kubelet/worker-1, kube-proxy/worker-1, kube-scheduler, replicaset-controller…
";

/// A component's name as a log prefix: `kubelet (worker-1)` becomes `kubelet/worker-1`.
pub fn short_name(name: &str) -> String {
    match name.split_once(" (") {
        Some((what, rest)) => format!("{what}/{}", rest.trim_end_matches(')')),
        None => name.to_string(),
    }
}

/// Whether `filter` names the component: its short name, or the start of it up to a `/`
/// (`kubelet` means every kubelet).
fn names(filter: &str, short: &str) -> bool {
    short == filter || short.strip_prefix(filter).is_some_and(|rest| rest.starts_with('/'))
}

/// The URL a request went to at `endpoint` (`host:port`), its query escaped as Go escapes it.
fn url(endpoint: &str, path: &str) -> String {
    let server = format!("https://{endpoint}");
    let Some((path, query)) = path.split_once('?') else { return format!("{server}{path}") };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) => format!("{k}={}", query_escape(v)),
            None => pair.to_string(),
        })
        .collect();
    format!("{server}{path}?{}", query.join("&"))
}

/// One entry as a log line of the component it concerns (the sender of a request, the
/// receiver of a notification, the author of a decision), with that component's name.
fn line(cluster: &Cluster, entry: &Entry) -> Option<(ComponentId, String)> {
    let (who, text) = match &entry.what {
        Happening::Request { method, path, code, message, .. } => {
            let status = if *code == 0 { String::new() } else { format!("{code} {}", Status::code_text(*code)) };
            let mut text = format!(
                "\"Response\" verb=\"{method}\" url=\"{}\" status=\"{status}\"",
                url(&cluster.client_endpoint(entry.actor), path)
            );
            if *code == 0 || *code >= 400 {
                text.push_str(&format!(" error={}", quote(message)));
            }
            // Behind the load balancer of several API servers: the one that served it.
            if let Some(node) =
                cluster.record.served_by(entry.seq).and_then(|i| cluster.control_plane_nodes().get(i as usize).cloned())
            {
                text.push_str(&format!(" apiserver=\"kube-apiserver-{node}\""));
            }
            (entry.actor, text)
        }
        Happening::Notify { to, event, kind, namespace, name } => {
            let object = if namespace.is_empty() { name.clone() } else { format!("{namespace}/{name}") };
            let text = format!(
                "\"Watch event\" type=\"{}\" kind=\"{}\" object=\"{object}\"",
                event.as_str(),
                kind.info().kind
            );
            (*to, text)
        }
        Happening::KubeletCall { to, method, path } => {
            (*to, format!("\"Served kube-apiserver\" verb=\"{method}\" path={}", quote(path)))
        }
        Happening::Decision { text } if !text.is_empty() => (entry.actor, format!("\"Decision\" {}", quote(text))),
        Happening::Decision { .. } => return None,
    };
    let short = short_name(cluster.component_name(who));
    Some((who, format!("{short}] {text}")))
}

/// `sim record [COMPONENT] [--last N]`: the lines, or the usage error.
pub fn run(cluster: &Cluster, args: &[String]) -> Result<String, String> {
    let mut filter = None;
    let mut last = DEFAULT_LAST;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--last" | "--tail" => {
                let n = words.next().ok_or_else(|| format!("sim record: {word} needs a number\n{HELP}"))?;
                last = n.parse().map_err(|_| format!("sim record: {word}: not a number: {n}\n"))?;
            }
            "-h" | "--help" => return Ok(HELP.to_string()),
            w if w.starts_with('-') => return Err(format!("sim record: unknown flag {w}\n{HELP}")),
            w if filter.is_none() => filter = Some(w.to_string()),
            w => return Err(format!("sim record: unexpected argument \"{w}\"\n{HELP}")),
        }
    }
    if let Some(f) = &filter
        && !cluster.component_ids().any(|id| names(f, &short_name(cluster.component_name(id))))
    {
        return Err(format!("sim record: no component named \"{f}\"\n{HELP}"));
    }
    let mut lines: Vec<(Time, String)> = cluster
        .record
        .entries()
        .rev()
        .filter_map(|e| Some((e.time, line(cluster, e)?)))
        .filter(|(_, (who, _))| filter.as_deref().is_none_or(|f| names(f, &short_name(cluster.component_name(*who)))))
        .map(|(time, (_, text))| (time, text))
        .take(last)
        .collect();
    lines.reverse();
    // Lines of one millisecond are told apart by their microseconds, in order.
    let mut out = String::new();
    let mut same_ms = (Time(u64::MAX), 0);
    for (time, text) in lines {
        same_ms = if same_ms.0 == time { (time, same_ms.1 + 1) } else { (time, 0) };
        out.push_str(&format!("{} {text}\n", stamp_at(time, same_ms.1)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterConfig;
    use crate::sim::Duration;

    #[test]
    fn a_kubelets_name_becomes_its_log_prefix() {
        assert_eq!(short_name("kubelet (worker-1)"), "kubelet/worker-1");
        assert_eq!(short_name("kube-scheduler"), "kube-scheduler");
        assert!(names("kubelet", "kubelet/worker-1"));
        assert!(!names("kube", "kubelet/worker-1"));
    }

    #[test]
    fn query_values_are_escaped_as_a_client_sends_them() {
        assert_eq!(
            url("172.18.0.2:6443", "/api/v1/pods?fieldSelector=spec.nodeName=worker-1&watch=true"),
            format!(
                "https://{}:{}/api/v1/pods?fieldSelector=spec.nodeName%3Dworker-1&watch=true",
                crate::api::well_known::api_server_address(),
                crate::api::well_known::API_SERVER_PORT
            )
        );
    }

    #[test]
    fn a_kubelets_log_shows_its_requests_and_the_notifications_it_received() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.advance(Duration::seconds(12));
        let log = run(&cluster, &["kubelet/worker-1".into(), "--last".into(), "500".into()]).unwrap();
        assert!(log.lines().all(|l| l.contains(" kubelet/worker-1] ")), "{log}");
        assert!(log.contains("\"Response\" verb=\"PUT\""), "heartbeats: {log}");
        assert!(log.contains("watch=true"), "its watches: {log}");
    }

    #[test]
    fn an_unknown_component_or_flag_is_refused_with_the_usage() {
        let cluster = Cluster::new(ClusterConfig::default());
        assert!(run(&cluster, &["nobody".into()]).unwrap_err().contains("no component named \"nobody\""));
        assert!(run(&cluster, &["--last".into(), "x".into()]).unwrap_err().contains("not a number"));
        assert!(run(&cluster, &["-q".into()]).unwrap_err().contains("unknown flag -q"));
    }
}
