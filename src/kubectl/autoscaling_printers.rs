//! Aggregation and autoscaling as kubectl shows them: `get apiservices` (AVAILABLE as
//! `True` or `False (MissingEndpoints)`), `get hpa` (TARGETS as `cpu: 40%/50%`), the metrics
//! kinds' rows, and `describe hpa` with its metrics, conditions and events.

use super::age::age;
use super::describe::{annotations_multiline, events_section, labels_multiline, layout};
use crate::api::aggregation::{ApiService, NodeMetrics};
use crate::api::autoscaling::{HorizontalPodAutoscaler, MetricSpec};
use crate::api::{Event, Kind, Object};
use crate::sim::Time;
use std::fmt::Write;

pub fn headers(kind: Kind) -> (&'static [&'static str], &'static [&'static str]) {
    match kind {
        Kind::HorizontalPodAutoscaler => {
            (&["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"], &[])
        }
        Kind::APIService => (&["NAME", "SERVICE", "AVAILABLE", "AGE"], &[]),
        _ => (&["NAME", "CPU", "MEMORY", "WINDOW"], &[]),
    }
}

pub fn row(object: &Object, now: Time) -> Vec<String> {
    match object {
        Object::HorizontalPodAutoscaler(h) => hpa_row(h, now),
        Object::APIService(a) => api_service_row(a, now),
        Object::NodeMetrics(m) => metrics_row(m.metadata.name.clone(), node_usage(m), &m.window),
        Object::PodMetrics(m) => metrics_row(m.metadata.name.clone(), m.total(), &m.window),
        _ => Vec::new(),
    }
}

fn node_usage(m: &NodeMetrics) -> (i64, i64) {
    (m.usage.get("cpu").map_or(0, |q| q.milli()), m.usage.get("memory").map_or(0, |q| q.value()))
}

fn metrics_row(name: String, (cpu, memory): (i64, i64), window: &str) -> Vec<String> {
    vec![name, cpu_cell(cpu), memory_cell(memory), window.to_string()]
}

/// CPU as `kubectl top` prints it: whole millicores (`250m`).
pub fn cpu_cell(milli: i64) -> String {
    format!("{milli}m")
}

/// Memory as `kubectl top` prints it: whole mebibytes (`64Mi`).
pub fn memory_cell(bytes: i64) -> String {
    format!("{}Mi", bytes / (1 << 20))
}

fn hpa_row(h: &HorizontalPodAutoscaler, now: Time) -> Vec<String> {
    let r = &h.spec.scale_target_ref;
    vec![
        h.metadata.name.clone(),
        format!("{}/{}", r.kind, r.name),
        targets(h),
        h.min_replicas().to_string(),
        h.spec.max_replicas.to_string(),
        h.status.current_replicas.to_string(),
        age(h.metadata.creation_timestamp, now),
    ]
}

/// One metric's `current/target`, `<unknown>` while no current value is known.
fn metric_cell(h: &HorizontalPodAutoscaler, i: usize, spec: &MetricSpec) -> String {
    let Some(res) = &spec.resource else { return format!("<unsupported metric type {}>", spec.type_) };
    let current = h
        .status
        .current_metrics
        .get(i)
        .and_then(|m| m.resource.as_ref())
        .filter(|m| m.name == res.name)
        .map(|m| &m.current);
    let (now, target) = match (&res.target.average_utilization, &res.target.average_value) {
        (Some(t), _) => (current.and_then(|c| c.average_utilization).map(|u| format!("{u}%")), format!("{t}%")),
        (None, Some(v)) => (current.and_then(|c| c.average_value.as_ref()).map(|q| q.to_string()), v.to_string()),
        _ => (None, "<unknown>".into()),
    };
    format!("{}: {}/{}", res.name, now.unwrap_or_else(|| "<unknown>".into()), target)
}

/// TARGETS: each metric's cell, joined; past two, `+ N more...` as kubectl shortens it.
pub fn targets(h: &HorizontalPodAutoscaler) -> String {
    if h.spec.metrics.is_empty() {
        return "<none>".into();
    }
    let cells: Vec<String> = h.spec.metrics.iter().enumerate().map(|(i, m)| metric_cell(h, i, m)).collect();
    if cells.len() > 2 {
        return format!("{} + {} more...", cells[..2].join(", "), cells.len() - 2);
    }
    cells.join(", ")
}

fn api_service_row(a: &ApiService, now: Time) -> Vec<String> {
    let service = match &a.spec.service {
        Some(s) => format!("{}/{}", s.namespace, s.name),
        None => "Local".into(),
    };
    let available = match a.available() {
        Some(c) if c.status == "True" => "True".to_string(),
        Some(c) => format!("{} ({})", c.status, c.reason),
        None => "Unknown".into(),
    };
    vec![a.metadata.name.clone(), service, available, age(a.metadata.creation_timestamp, now)]
}

/// `kubectl describe hpa`: target, each metric's current and target, replica bounds, the
/// workload's current and desired pods, the conditions and the events.
pub fn describe_hpa(h: &HorizontalPodAutoscaler, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &h.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let _ = writeln!(out, "CreationTimestamp:\t{}", m.creation_timestamp.unwrap_or_default().rfc1123z());
    let r = &h.spec.scale_target_ref;
    let _ = writeln!(out, "Reference:\t{}/{}", r.kind, r.name);
    out.push_str("Metrics:\t( current / target )\n");
    for (i, spec) in h.spec.metrics.iter().enumerate() {
        let Some(res) = &spec.resource else { continue };
        let current = h.status.current_metrics.get(i).and_then(|m| m.resource.as_ref()).map(|m| &m.current);
        match (&res.target.average_utilization, &res.target.average_value) {
            (Some(t), _) => {
                let now = match current {
                    Some(c) => format!(
                        "{}% ({})",
                        c.average_utilization.unwrap_or(0),
                        c.average_value.as_ref().map_or("0".into(), |q| q.to_string())
                    ),
                    None => "<unknown>".into(),
                };
                let _ = writeln!(out, "  resource {} on pods  (as a percentage of request):\t{now} / {t}%", res.name);
            }
            (None, Some(v)) => {
                let now = current.and_then(|c| c.average_value.as_ref()).map_or("<unknown>".into(), |q| q.to_string());
                let _ = writeln!(out, "  resource {} on pods:\t{now} / {v}", res.name);
            }
            _ => {}
        }
    }
    let _ = writeln!(out, "Min replicas:\t{}", h.min_replicas());
    let _ = writeln!(out, "Max replicas:\t{}", h.spec.max_replicas);
    if let Some(b) = &h.spec.behavior {
        out.push_str("Behavior:\n");
        for (title, rules) in [("Scale Up", &b.scale_up), ("Scale Down", &b.scale_down)] {
            let Some(rules) = rules else { continue };
            let _ = writeln!(out, "  {title}:");
            if let Some(w) = rules.stabilization_window_seconds {
                let _ = writeln!(out, "    Stabilization Window: {w} seconds");
            }
            if let Some(p) = &rules.select_policy {
                let _ = writeln!(out, "    Select Policy: {p}");
            }
            out.push_str("    Policies:\n");
            for p in &rules.policies {
                let unit = if p.type_ == "Percent" { " Percent" } else { " Pods" };
                let _ = writeln!(
                    out,
                    "      - Type: {}  Value: {}{unit}  Period: {} seconds",
                    p.type_, p.value, p.period_seconds
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "{} pods:\t{} current / {} desired",
        r.kind, h.status.current_replicas, h.status.desired_replicas
    );
    if !h.status.conditions.is_empty() {
        out.push_str("Conditions:\n  Type\tStatus\tReason\tMessage\n  ----\t------\t------\t-------\n");
        for c in &h.status.conditions {
            let _ = writeln!(out, "  {}\t{}\t{}\t{}", c.type_, c.status, c.reason, c.message);
        }
    }
    events_section(&mut out, events, now);
    layout(&out)
}

/// `kubectl describe apiservice`.
pub fn describe_api_service(a: &ApiService, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &a.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let _ = writeln!(out, "API Version:\tapiregistration.k8s.io/v1");
    let _ = writeln!(out, "Kind:\tAPIService");
    out.push_str("Spec:\n");
    let _ = writeln!(out, "  Group:\t{}", a.spec.group);
    let _ = writeln!(out, "  Group Priority Minimum:\t{}", a.spec.group_priority_minimum);
    let _ = writeln!(out, "  Insecure Skip TLS Verify:\t{}", a.spec.insecure_skip_tls_verify);
    if let Some(s) = &a.spec.service {
        out.push_str("  Service:\n");
        let _ = writeln!(out, "    Name:\t{}", s.name);
        let _ = writeln!(out, "    Namespace:\t{}", s.namespace);
        let _ = writeln!(out, "    Port:\t{}", s.port.unwrap_or(443));
    }
    let _ = writeln!(out, "  Version:\t{}", a.spec.version);
    let _ = writeln!(out, "  Version Priority:\t{}", a.spec.version_priority);
    out.push_str("Status:\n  Conditions:\n");
    for c in &a.status.conditions {
        let _ = writeln!(out, "    Last Transition Time:\t{}", c.last_transition_time.unwrap_or_default().rfc3339());
        let _ = writeln!(out, "    Message:\t{}", c.message);
        let _ = writeln!(out, "    Reason:\t{}", c.reason);
        let _ = writeln!(out, "    Status:\t{}", c.status);
        let _ = writeln!(out, "    Type:\t{}", c.type_);
    }
    events_section(&mut out, events, now);
    layout(&out)
}
