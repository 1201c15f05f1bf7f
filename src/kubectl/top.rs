//! `kubectl top node|pod` through the Metrics API (served by metrics-server behind the API
//! server's aggregation layer), and `kubectl autoscale`, which creates an autoscaling/v2
//! HorizontalPodAutoscaler for a workload.

use super::args::Args;
use super::autoscaling_printers::{cpu_cell, memory_cell};
use super::{Output, namespace_flag};
use crate::api::{Kind, Object};
use crate::apiserver::Request;
use crate::cluster::Cluster;
use crate::util::json_macro::json;
use crate::util::sort::StableSort;

/// kubectl's own columns: each cell followed by a tab, padded to the widest plus three.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..columns).map(|i| rows.iter().filter_map(|r| r.get(i)).map(String::len).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            out.push_str(&format!("{cell:<w$}", w = widths[i] + 3));
        }
        out.push('\n');
    }
    out
}

/// The Metrics API's list of `kind`, or kubectl's error when it is not served.
fn metrics(
    cluster: &mut Cluster,
    kind: Kind,
    namespace: &str,
    args: &Args,
) -> Result<Vec<std::sync::Arc<Object>>, Output> {
    let mut req = Request::list(kind, namespace);
    if let Some(sel) = args.get("selector") {
        req.label_selector =
            Some(crate::api::meta::parse_selector(sel).map_err(|e| Output::err(format!("error: {e}")))?);
    }
    match cluster.request(req) {
        Ok(crate::apiserver::Reply::List { items, .. }) => Ok(items),
        Ok(_) => Ok(Vec::new()),
        Err(s) if s.code == 404 || s.code == 503 => Err(Output::err("error: Metrics API not available")),
        Err(s) => Err(Output::err(s.kubectl_message())),
    }
}

/// `kubectl top node|pod`.
pub fn top(cluster: &mut Cluster, args: &Args) -> Output {
    match args.positionals.first().map(String::as_str) {
        None => super::unserved::top(args),
        Some("node" | "nodes" | "no") => top_node(cluster, args),
        Some("pod" | "pods" | "po") => top_pod(cluster, args),
        Some(_) => super::unserved::top(args),
    }
}

fn sort(rows: &mut [(i64, i64, Vec<String>)], args: &Args) {
    match args.get("sort-by") {
        Some("cpu") => rows.stable_sort_by_key(|r| std::cmp::Reverse(r.0)),
        Some("memory") => rows.stable_sort_by_key(|r| std::cmp::Reverse(r.1)),
        _ => {}
    }
}

fn top_node(cluster: &mut Cluster, args: &Args) -> Output {
    let items = match metrics(cluster, Kind::NodeMetrics, "", args) {
        Ok(items) => items,
        Err(out) => return out,
    };
    let name = args.positionals.get(1);
    let items: Vec<_> = items.into_iter().filter(|o| name.is_none_or(|n| o.name() == n)).collect();
    if items.is_empty() {
        if let Some(n) = name {
            return Output::err(format!("Error from server (NotFound): nodemetrics.metrics.k8s.io \"{n}\" not found"));
        }
        return Output::err("error: metrics not available yet");
    }
    let nodes = match cluster.request(Request::list(Kind::Node, "")) {
        Ok(crate::apiserver::Reply::List { items, .. }) => items,
        _ => Vec::new(),
    };
    let mut rows = Vec::new();
    for item in &items {
        let Object::NodeMetrics(m) = &**item else { continue };
        let cpu = m.usage.get("cpu").map_or(0, |q| q.milli());
        let memory = m.usage.get("memory").map_or(0, |q| q.value());
        let node = nodes.iter().find_map(|n| n.as_node().filter(|n| n.metadata.name == m.metadata.name));
        let alloc =
            |r: &str, f: fn(&crate::api::Quantity) -> i64| node.and_then(|n| n.status.allocatable.get(r)).map_or(0, f);
        let pct = |used: i64, of: i64| if of > 0 { format!("{}%", used * 100 / of) } else { "<unknown>".into() };
        let (cpu_alloc, mem_alloc) = (alloc("cpu", |q| q.milli()), alloc("memory", |q| q.value()));
        let row = vec![
            m.metadata.name.clone(),
            cpu_cell(cpu),
            pct(cpu, cpu_alloc),
            memory_cell(memory),
            pct(memory, mem_alloc),
        ];
        rows.push((cpu, memory, row));
    }
    sort(&mut rows, args);
    let mut table_rows = Vec::new();
    if !args.has("no-headers") {
        table_rows.push(["NAME", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%"].map(String::from).to_vec());
    }
    table_rows.extend(rows.into_iter().map(|(_, _, r)| r));
    Output::ok(table(&table_rows))
}

fn top_pod(cluster: &mut Cluster, args: &Args) -> Output {
    let all = args.has("all-namespaces");
    let namespace = if all { String::new() } else { namespace_flag(args) };
    let items = match metrics(cluster, Kind::PodMetrics, &namespace, args) {
        Ok(items) => items,
        Err(out) => return out,
    };
    let name = args.positionals.get(1);
    let items: Vec<_> = items.into_iter().filter(|o| name.is_none_or(|n| o.name() == n)).collect();
    if items.is_empty() {
        // Pods there but no metrics: they are too new to have been scraped twice.
        let pods = match name {
            Some(n) => cluster.request(Request::get(Kind::Pod, &namespace, n)).is_ok(),
            None => {
                let mut req = Request::list(Kind::Pod, &namespace);
                req.label_selector = args.get("selector").and_then(|s| crate::api::meta::parse_selector(s).ok());
                matches!(cluster.request(req), Ok(crate::apiserver::Reply::List { items, .. }) if !items.is_empty())
            }
        };
        if pods {
            return Output::err("error: metrics not available yet");
        }
        if let Some(n) = name {
            return Output::err(format!(
                "Error from server (NotFound): podmetrics.metrics.k8s.io \"{namespace}/{n}\" not found"
            ));
        }
        let stderr =
            if all { "No resources found\n".into() } else { format!("No resources found in {namespace} namespace.\n") };
        return Output { stderr, ..Default::default() };
    }
    let containers = args.has("containers");
    let mut rows = Vec::new();
    for item in &items {
        let Object::PodMetrics(m) = &**item else { continue };
        let lead = |row: &mut Vec<String>| {
            if all {
                row.push(m.metadata.namespace.clone());
            }
        };
        if containers {
            for c in &m.containers {
                let (cpu, memory) =
                    (c.usage.get("cpu").map_or(0, |q| q.milli()), c.usage.get("memory").map_or(0, |q| q.value()));
                let mut row = Vec::new();
                lead(&mut row);
                row.extend([m.metadata.name.clone(), c.name.clone(), cpu_cell(cpu), memory_cell(memory)]);
                rows.push((cpu, memory, row));
            }
        } else {
            let (cpu, memory) = m.total();
            let mut row = Vec::new();
            lead(&mut row);
            row.extend([m.metadata.name.clone(), cpu_cell(cpu), memory_cell(memory)]);
            rows.push((cpu, memory, row));
        }
    }
    sort(&mut rows, args);
    let mut table_rows = Vec::new();
    if !args.has("no-headers") {
        let mut h: Vec<String> = Vec::new();
        if all {
            h.push("NAMESPACE".into());
        }
        if containers {
            h.extend(["POD".into(), "NAME".into()]);
        } else {
            h.push("NAME".into());
        }
        h.extend(["CPU(cores)".into(), "MEMORY(bytes)".into()]);
        table_rows.push(h);
    }
    table_rows.extend(rows.into_iter().map(|(_, _, r)| r));
    Output::ok(table(&table_rows))
}

/// A `--cpu`/`--memory` value as a metric target: `50%` is utilization, else an average value
/// (memory without a unit in mebibytes).
fn target(resource: &str, value: &str) -> Result<serde_json::Value, Output> {
    if let Some(p) = value.strip_suffix('%') {
        let n: i64 = p.parse().map_err(|_| Output::err(format!("error: invalid {resource} value {value:?}")))?;
        return Ok(json!({"type": "Utilization", "averageUtilization": n}));
    }
    let text = if resource == "memory" && value.chars().all(|c| c.is_ascii_digit()) {
        format!("{value}Mi")
    } else {
        value.to_string()
    };
    crate::api::Quantity::parse(&text).map_err(|e| Output::err(format!("error: {e}")))?;
    Ok(json!({"type": "AverageValue", "averageValue": text}))
}

/// `kubectl autoscale TYPE NAME --min=N --max=M [--cpu=50%|--cpu-percent=50] [--memory=…]`.
pub fn autoscale(cluster: &mut Cluster, args: &Args) -> Output {
    let checked = match super::unserved::autoscale_checks(cluster, args) {
        Ok(checked) => checked,
        Err(out) => return out,
    };
    let (kind, name, min, max) = checked;
    let mut warnings = String::new();
    let mut metrics = Vec::new();
    let cpu = match (args.get("cpu"), args.get("cpu-percent")) {
        (Some(v), _) => Some(v.to_string()),
        (None, Some(p)) => {
            warnings.push_str("Flag --cpu-percent has been deprecated, Use --cpu with percentage or resource quantity format (e.g., '70%' for utilization or '500m' for milliCPU).\n");
            p.parse::<i64>().ok().filter(|n| *n >= 0).map(|n| format!("{n}%"))
        }
        _ => None,
    };
    for (resource, value) in [("cpu", cpu), ("memory", args.get("memory").map(String::from))] {
        if let Some(v) = value {
            match target(resource, &v) {
                Ok(t) => metrics.push(json!({"type": "Resource", "resource": {"name": resource, "target": t}})),
                Err(out) => return out,
            }
        }
    }
    let hpa_name = args.get("name").unwrap_or(&name).to_string();
    let namespace = namespace_flag(args);
    let mut body = json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": hpa_name, "namespace": namespace},
        "spec": {"scaleTargetRef": {"apiVersion": kind.api_version(), "kind": kind.info().kind, "name": name},
                 "maxReplicas": max},
    });
    if min >= 0 {
        body["spec"]["minReplicas"] = json!(min);
    }
    if !metrics.is_empty() {
        body["spec"]["metrics"] = serde_json::Value::Array(metrics);
    }
    let mut req = Request::create(Object::HorizontalPodAutoscaler(Box::default()));
    req.body = Some(crate::apiserver::Body::Json(body));
    req.namespace = namespace;
    req.field_manager = Some("kubectl-autoscale".into());
    let mut out = match cluster.request(req) {
        Ok(_) => Output::ok(format!("horizontalpodautoscaler.autoscaling/{hpa_name} autoscaled\n")),
        Err(status) => Output::err(status.kubectl_message()),
    };
    out.warnings = warnings;
    out
}
