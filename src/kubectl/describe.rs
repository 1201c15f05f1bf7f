//! `kubectl describe`: the long, human view of an object, ending with the Events that say
//! which component did what to it.

use super::age::age;
use super::printers::node_roles;
use super::table::tabwrite;
use crate::api::{
    Deployment, EndpointSlice, Event, LabelSelector, Labels, Lease, NamedItem, Node, Pod, PodTemplateSpec, Quantity,
    ReplicaSet, Service, Taint, Toleration,
};
use crate::sim::Time;
use crate::util::sort::StableSort;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Marks where upstream flushes its tabwriter: alignment restarts after it.
const FLUSH: &str = "\u{c}";

/// Lays out describe text: tabwriter with padding 2, restarting at each flush.
pub fn layout(text: &str) -> String {
    text.split(FLUSH).map(|part| tabwrite(part, 0, 2)).collect()
}

pub(super) fn labels_multiline(out: &mut String, title: &str, labels: &Labels) {
    let _ = write!(out, "{title}:\t");
    if labels.is_empty() {
        out.push_str("<none>\n");
        return;
    }
    for (i, (k, v)) in labels.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        let _ = writeln!(out, "{k}={v}");
    }
}

pub(super) fn annotations_multiline(out: &mut String, title: &str, annotations: &BTreeMap<String, String>) {
    let _ = write!(out, "{title}:\t");
    let shown: Vec<_> =
        annotations.iter().filter(|(k, _)| *k != "kubectl.kubernetes.io/last-applied-configuration").collect();
    if shown.is_empty() {
        out.push_str("<none>\n");
        return;
    }
    for (i, (k, v)) in shown.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        let value = if v.len() > 200 {
            format!("{}...", &v[..v.char_indices().nth(200).map_or(v.len(), |(i, _)| i)])
        } else {
            v.to_string()
        };
        let _ = writeln!(out, "{k}: {value}");
    }
}

fn tolerations_multiline(out: &mut String, tolerations: &[Toleration]) {
    tolerations_titled(out, "Tolerations", tolerations);
}

fn tolerations_titled(out: &mut String, title: &str, tolerations: &[Toleration]) {
    let _ = write!(out, "{title}:\t");
    if tolerations.is_empty() {
        out.push_str("<none>\n");
        return;
    }
    for (i, t) in tolerations.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        out.push_str(&t.key);
        if !t.value.is_empty() {
            let _ = write!(out, "={}", t.value);
        }
        if !t.effect.is_empty() {
            let _ = write!(out, ":{}", t.effect);
        }
        if t.operator.as_deref() == Some("Exists") && t.value.is_empty() {
            out.push_str(if t.key.is_empty() && t.effect.is_empty() { "op=Exists" } else { " op=Exists" });
        }
        if let Some(s) = t.toleration_seconds {
            let _ = write!(out, " for {s}s");
        }
        out.push('\n');
    }
}

fn taints_multiline(out: &mut String, taints: &[Taint]) {
    out.push_str("Taints:\t");
    if taints.is_empty() {
        out.push_str("<none>\n");
        return;
    }
    for (i, t) in taints.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        if t.value.is_empty() {
            let _ = writeln!(out, "{}:{}", t.key, t.effect);
        } else {
            let _ = writeln!(out, "{}={}:{}", t.key, t.value, t.effect);
        }
    }
}

/// The Events section, sorted by when they last happened.
pub fn events_section(out: &mut String, events: &[Event], now: Time) {
    if events.is_empty() {
        out.push_str("Events:\t<none>\n");
        return;
    }
    out.push_str(FLUSH);
    let mut sorted: Vec<&Event> = events.iter().collect();
    sorted.stable_sort_by_key(|e| e.last_seen());
    out.push_str("Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
    out.push_str("  ----\t------\t----\t----\t-------\n");
    for e in sorted {
        let first = e.event_time.map(|t| t.0).or(e.first_timestamp);
        let interval = match e.count {
            Some(n) if n > 1 => format!("{} (x{n} over {})", age(e.last_timestamp, now), age(first, now)),
            _ => age(first, now),
        };
        let source = if e.source.component.is_empty() { &e.reporting_component } else { &e.source.component };
        let _ = writeln!(out, "  {}\t{}\t{}\t{}\t{}", e.type_, e.reason, interval, source, e.message.trim());
    }
}

fn state_lines(out: &mut String, title: &str, state: &crate::api::pod::ContainerState) {
    if let Some(r) = &state.running {
        let _ = writeln!(out, "    {title}:\tRunning");
        let _ = writeln!(out, "      Started:\t{}", r.started_at.unwrap_or_default().rfc1123z());
    } else if let Some(w) = &state.waiting {
        let _ = writeln!(out, "    {title}:\tWaiting");
        if !w.reason.is_empty() {
            let _ = writeln!(out, "      Reason:\t{}", w.reason);
        }
    } else if let Some(t) = &state.terminated {
        let _ = writeln!(out, "    {title}:\tTerminated");
        if !t.reason.is_empty() {
            let _ = writeln!(out, "      Reason:\t{}", t.reason);
        }
        if !t.message.is_empty() {
            let _ = writeln!(out, "      Message:\t{}", t.message);
        }
        let _ = writeln!(out, "      Exit Code:\t{}", t.exit_code);
        if let Some(sig) = t.signal.filter(|s| *s > 0) {
            let _ = writeln!(out, "      Signal:\t{sig}");
        }
        // A process that never started (a StartError) has the Unix epoch as its start.
        let started = t.started_at.map_or_else(|| "Thu, 01 Jan 1970 00:00:00 +0000".to_string(), |s| s.rfc1123z());
        let _ = writeln!(out, "      Started:\t{started}");
        let _ = writeln!(out, "      Finished:\t{}", t.finished_at.unwrap_or_default().rfc1123z());
    } else {
        let _ = writeln!(out, "    {title}:\tWaiting");
    }
}

fn containers_section(out: &mut String, title: &str, pod: &Pod, init: bool) {
    let (specs, statuses) = if init {
        (&pod.spec.init_containers, &pod.status.init_container_statuses)
    } else {
        (&pod.spec.containers, &pod.status.container_statuses)
    };
    containers(out, title, specs, Some(statuses), "");
}

/// An `envFrom` source as describe lists it: `NAME\tConfigMap\tOptional: false`, with its
/// prefix when it has one.
fn env_from_text(source: &Value) -> String {
    let (kind, r) = match (source.get("configMapRef"), source.get("secretRef")) {
        (Some(r), _) => ("ConfigMap", r),
        (None, Some(r)) => ("Secret", r),
        (None, None) => ("", source),
    };
    let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
    let optional = r.get("optional").and_then(Value::as_bool).unwrap_or(false);
    match source.get("prefix").and_then(Value::as_str).filter(|p| !p.is_empty()) {
        Some(prefix) => format!("{name}\t{kind} with prefix '{prefix}'\tOptional: {optional}"),
        None => format!("{name}\t{kind}\tOptional: {optional}"),
    }
}

/// Where a `valueFrom` variable's value comes from, as describe shows it.
fn value_from_text(from: Option<&Value>) -> String {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let optional = |v: &Value| v.get("optional").and_then(Value::as_bool).unwrap_or(false);
    let Some(from) = from else { return String::new() };
    if let Some(f) = from.get("fieldRef") {
        let version = f.get("apiVersion").and_then(Value::as_str).unwrap_or("v1");
        return format!(" ({version}:{})", text(f, "fieldPath"));
    }
    if let Some(r) = from.get("resourceFieldRef") {
        return format!(" ({})", text(r, "resource"));
    }
    if let Some(r) = from.get("configMapKeyRef") {
        let (key, name) = (text(r, "key"), text(r, "name"));
        return format!("<set to the key '{key}' of config map '{name}'>\tOptional: {}", optional(r));
    }
    if let Some(r) = from.get("secretKeyRef") {
        let (key, name) = (text(r, "key"), text(r, "name"));
        return format!("<set to the key '{key}' in secret '{name}'>\tOptional: {}", optional(r));
    }
    String::new()
}

/// Containers as describe lists them; `space` indents a pod template's (with no statuses).
fn containers(
    out: &mut String,
    title: &str,
    specs: &[std::sync::Arc<crate::api::Container>],
    statuses: Option<&Vec<crate::api::pod::ContainerStatus>>,
    space: &str,
) {
    let _ = writeln!(out, "{space}{title}:");
    let name_indent = if space.is_empty() { "" } else { " " };
    for c in specs {
        let status = statuses.and_then(|st| st.iter().find(|s| s.name == c.name));
        let _ = writeln!(out, "  {name_indent}{}:", c.name);
        if let Some(s) = status {
            let _ = writeln!(out, "    Container ID:\t{}", s.container_id);
        }
        let _ = writeln!(out, "    Image:\t{}", c.image);
        if let Some(s) = status {
            let _ = writeln!(out, "    Image ID:\t{}", s.image_id);
        }
        let proto = |p: &crate::api::pod::ContainerPort| p.protocol.clone().unwrap_or_else(|| "TCP".into());
        let ports: Vec<String> = c.ports.iter().map(|p| format!("{}/{}", p.container_port, proto(p))).collect();
        let host_ports: Vec<String> =
            c.ports.iter().map(|p| format!("{}/{}", p.host_port.unwrap_or(0), proto(p))).collect();
        let none = |v: &[String]| if v.is_empty() { "<none>".to_string() } else { v.join(", ") };
        let _ = writeln!(out, "    {}:\t{}", if ports.len() > 1 { "Ports" } else { "Port" }, none(&ports));
        let _ = writeln!(
            out,
            "    {}:\t{}",
            if host_ports.len() > 1 { "Host Ports" } else { "Host Port" },
            none(&host_ports)
        );
        if !c.command.is_empty() {
            out.push_str("    Command:\n");
            for line in c.command.iter().flat_map(|c| c.split('\n')) {
                let _ = writeln!(out, "      {line}");
            }
        }
        if !c.args.is_empty() {
            out.push_str("    Args:\n");
            for line in c.args.iter().flat_map(|c| c.split('\n')) {
                let _ = writeln!(out, "      {line}");
            }
        }
        if let Some(s) = status {
            state_lines(out, "State", &s.state);
            if s.last_state.terminated.is_some() {
                state_lines(out, "Last State", &s.last_state);
            }
            let _ = writeln!(out, "    Ready:\t{}", if s.ready { "True" } else { "False" });
            let _ = writeln!(out, "    Restart Count:\t{}", s.restart_count);
        }
        for (title, list) in [("Limits", &c.resources.limits), ("Requests", &c.resources.requests)] {
            if !list.is_empty() {
                let _ = writeln!(out, "    {title}:");
                for (name, q) in list {
                    let _ = writeln!(out, "      {name}:\t{q}");
                }
            }
        }
        for (title, probe) in
            [("Liveness", &c.liveness_probe), ("Readiness", &c.readiness_probe), ("Startup", &c.startup_probe)]
        {
            if let Some(p) = probe {
                let _ = writeln!(out, "    {title}:\t{}", p.describe());
            }
        }
        if !c.env_from.is_empty() {
            out.push_str("    Environment Variables from:\n");
            for source in &c.env_from {
                let _ = writeln!(out, "      {}", env_from_text(source));
            }
        }
        if c.env.is_empty() {
            out.push_str("    Environment:\t<none>\n");
        } else {
            out.push_str("    Environment:\n");
            for e in &c.env {
                match &e.value {
                    Some(v) => {
                        for (i, line) in v.split('\n').enumerate() {
                            if i == 0 {
                                let _ = writeln!(out, "      {}:\t{line}", e.name);
                            } else {
                                let _ = writeln!(out, "      \t{line}");
                            }
                        }
                    }
                    None if e.value_from.is_some() => {
                        let _ = writeln!(out, "      {}:\t{}", e.name, value_from_text(e.value_from.as_ref()));
                    }
                    None => {
                        let _ = writeln!(out, "      {}:\t", e.name);
                    }
                }
            }
        }
        let mut mounts: Vec<&NamedItem> = c.volume_mounts.iter().collect();
        mounts.stable_sort_by_key(|m| m.get("mountPath").and_then(Value::as_str).unwrap_or("").to_string());
        if mounts.is_empty() {
            out.push_str("    Mounts:\t<none>\n");
        } else {
            out.push_str("    Mounts:\n");
            for m in mounts {
                let path = m.get("mountPath").and_then(Value::as_str).unwrap_or("");
                let name = m.get("name").and_then(Value::as_str).unwrap_or("");
                let ro = m.get("readOnly").and_then(Value::as_bool).unwrap_or(false);
                let _ = writeln!(out, "      {path} from {name} ({})", if ro { "ro" } else { "rw" });
            }
        }
    }
}

fn volumes_section(out: &mut String, volumes: &[NamedItem]) {
    volumes_with_indent(out, volumes, "");
}

fn volumes_with_indent(out: &mut String, volumes: &[NamedItem], space: &str) {
    if volumes.is_empty() {
        let _ = writeln!(out, "{space}Volumes:\t<none>");
        return;
    }
    let _ = writeln!(out, "{space}Volumes:");
    for v in volumes {
        let _ = writeln!(out, "  {}:", v.get("name").and_then(Value::as_str).unwrap_or(""));
        if let Some(projected) = v.get("projected") {
            out.push_str("    Type:\tProjected (a volume that contains injected data from multiple sources)\n");
            for source in projected.get("sources").and_then(Value::as_array).into_iter().flatten() {
                if let Some(t) = source.get("serviceAccountToken") {
                    let _ = writeln!(
                        out,
                        "    TokenExpirationSeconds:\t{}",
                        t.get("expirationSeconds").and_then(Value::as_i64).unwrap_or(3607)
                    );
                } else if let Some(cm) = source.get("configMap") {
                    let _ =
                        writeln!(out, "    ConfigMapName:\t{}", cm.get("name").and_then(Value::as_str).unwrap_or(""));
                    let optional =
                        cm.get("optional").and_then(Value::as_bool).map_or("<nil>".to_string(), |b| b.to_string());
                    let _ = writeln!(out, "    ConfigMapOptional:\t{optional}");
                } else if source.get("downwardAPI").is_some() {
                    out.push_str("    DownwardAPI:\ttrue\n");
                }
            }
        } else if let Some(empty) = v.get("emptyDir") {
            out.push_str("    Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n");
            let _ = writeln!(out, "    Medium:\t{}", empty.get("medium").and_then(Value::as_str).unwrap_or(""));
            let _ = writeln!(
                out,
                "    SizeLimit:\t{}",
                empty.get("sizeLimit").and_then(Value::as_str).unwrap_or("<unset>")
            );
        } else if let Some(cm) = v.get("configMap") {
            out.push_str("    Type:\tConfigMap (a volume populated by a ConfigMap)\n");
            let _ = writeln!(out, "    Name:\t{}", cm.get("name").and_then(Value::as_str).unwrap_or(""));
            let _ = writeln!(out, "    Optional:\t{}", cm.get("optional").and_then(Value::as_bool).unwrap_or(false));
        } else if let Some(host) = v.get("hostPath") {
            out.push_str("    Type:\tHostPath (bare host directory volume)\n");
            let _ = writeln!(out, "    Path:\t{}", host.get("path").and_then(Value::as_str).unwrap_or(""));
            let _ = writeln!(out, "    HostPathType:\t{}", host.get("type").and_then(Value::as_str).unwrap_or(""));
        }
    }
}

pub fn describe_pod(pod: &Pod, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &pod.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    if let Some(p) = pod.spec.priority {
        let _ = writeln!(out, "Priority:\t{p}");
    }
    if let Some(pc) = pod.spec.priority_class_name.as_ref().filter(|s| !s.is_empty()) {
        let _ = writeln!(out, "Priority Class Name:\t{pc}");
    }
    if let Some(sa) = pod.spec.service_account_name.as_ref().filter(|s| !s.is_empty()) {
        let _ = writeln!(out, "Service Account:\t{sa}");
    }
    if pod.spec.node_name.is_empty() {
        out.push_str("Node:\t<none>\n");
    } else {
        let _ = writeln!(out, "Node:\t{}/{}", pod.spec.node_name, pod.status.host_ip);
    }
    if let Some(t) = pod.status.start_time {
        let _ = writeln!(out, "Start Time:\t{}", t.rfc1123z());
    }
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    match m.deletion_timestamp {
        Some(deadline) if !pod.is_terminal() => {
            let lasts = super::age::human_duration(deadline.since(now));
            let _ = writeln!(out, "Status:\tTerminating (lasts {lasts})");
            let _ = writeln!(out, "Termination Grace Period:\t{}s", m.deletion_grace_period_seconds.unwrap_or(0));
        }
        _ => {
            let _ = writeln!(out, "Status:\t{}", pod.status.phase);
        }
    }
    if !pod.status.reason.is_empty() {
        let _ = writeln!(out, "Reason:\t{}", pod.status.reason);
    }
    if !pod.status.message.is_empty() {
        let _ = writeln!(out, "Message:\t{}", pod.status.message);
    }
    let _ = writeln!(out, "IP:\t{}", pod.status.pod_ip);
    if pod.status.pod_ips.is_empty() {
        out.push_str("IPs:\t<none>\n");
    } else {
        out.push_str("IPs:\n");
        for ip in &pod.status.pod_ips {
            let _ = writeln!(out, "  IP:\t{}", ip.ip);
        }
    }
    if let Some(owner) = m.owner_references.iter().find(|o| o.controller == Some(true)) {
        let _ = writeln!(out, "Controlled By:\t{}/{}", owner.kind, owner.name);
    }
    if !pod.status.nominated_node_name.is_empty() {
        let _ = writeln!(out, "NominatedNodeName:\t{}", pod.status.nominated_node_name);
    }
    if !pod.spec.init_containers.is_empty() {
        containers_section(&mut out, "Init Containers", pod, true);
    }
    containers_section(&mut out, "Containers", pod, false);
    if !pod.status.conditions.is_empty() {
        out.push_str("Conditions:\n  Type\tStatus\n");
        for c in &pod.status.conditions {
            let _ = writeln!(out, "  {} \t{} ", c.type_, c.status);
        }
    }
    volumes_section(&mut out, &pod.spec.volumes);
    let qos = if pod.status.qos_class.is_empty() { crate::api::helpers::qos_class(pod) } else { &pod.status.qos_class };
    let _ = writeln!(out, "QoS Class:\t{qos}");
    labels_multiline(&mut out, "Node-Selectors", &pod.spec.node_selector);
    tolerations_multiline(&mut out, &pod.spec.tolerations);
    events_section(&mut out, events, now);
    layout(&out)
}

fn sum_requests(pods: &[Pod]) -> (i64, i64, i64, i64) {
    let mut totals = (0, 0, 0, 0);
    for p in pods {
        for c in &p.spec.containers {
            let r = &c.resources;
            totals.0 += r.requests.get("cpu").map_or(0, Quantity::milli);
            totals.1 += r.limits.get("cpu").map_or(0, Quantity::milli);
            totals.2 += r.requests.get("memory").map_or(0, Quantity::value);
            totals.3 += r.limits.get("memory").map_or(0, Quantity::value);
        }
    }
    totals
}

fn percent(part: i64, whole: i64) -> i64 {
    if whole == 0 { 0 } else { (part as f64 / whole as f64 * 100.0) as i64 }
}

pub fn describe_node(node: &Node, lease: Option<&Lease>, pods: &[Pod], events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &node.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Roles:\t{}", node_roles(node));
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let _ = writeln!(out, "CreationTimestamp:\t{}", m.creation_timestamp.unwrap_or_default().rfc1123z());
    taints_multiline(&mut out, &node.spec.taints);
    let _ = writeln!(out, "Unschedulable:\t{}", node.spec.unschedulable);
    out.push_str("Lease:\n");
    let spec = lease.map(|l| &l.spec);
    let _ = writeln!(
        out,
        "  HolderIdentity:\t{}",
        spec.and_then(|s| s.holder_identity.clone()).unwrap_or_else(|| "<unset>".into())
    );
    let _ = writeln!(
        out,
        "  AcquireTime:\t{}",
        spec.and_then(|s| s.acquire_time).map_or("<unset>".into(), |t| t.0.rfc1123z())
    );
    let _ =
        writeln!(out, "  RenewTime:\t{}", spec.and_then(|s| s.renew_time).map_or("<unset>".into(), |t| t.0.rfc1123z()));
    if !node.status.conditions.is_empty() {
        out.push_str("Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n");
        out.push_str("  ----\t------\t-----------------\t------------------\t------\t-------\n");
        for c in &node.status.conditions {
            let _ = writeln!(
                out,
                "  {} \t{} \t{} \t{} \t{} \t{}",
                c.type_,
                c.status,
                c.last_heartbeat_time.unwrap_or_default().rfc1123z(),
                c.last_transition_time.unwrap_or_default().rfc1123z(),
                c.reason,
                c.message
            );
        }
    }
    out.push_str("Addresses:\n");
    for a in &node.status.addresses {
        let _ = writeln!(out, "  {}:\t{}", a.type_, a.address);
    }
    for (title, list) in [("Capacity", &node.status.capacity), ("Allocatable", &node.status.allocatable)] {
        if !list.is_empty() {
            let _ = writeln!(out, "{title}:");
            for (name, q) in list {
                let _ = writeln!(out, "  {name}:\t{q}");
            }
        }
    }
    let info = node.status.node_info.clone().unwrap_or_default();
    out.push_str("System Info:\n");
    for (k, v) in [
        ("Machine ID", &info.machine_id),
        ("System UUID", &info.system_uuid),
        ("Boot ID", &info.boot_id),
        ("Kernel Version", &info.kernel_version),
        ("OS Image", &info.os_image),
        ("Operating System", &info.operating_system),
        ("Architecture", &info.architecture),
        ("Container Runtime Version", &info.container_runtime_version),
        ("Kubelet Version", &info.kubelet_version),
        ("Kube-Proxy Version", &info.kube_proxy_version),
    ] {
        let _ = writeln!(out, "  {k}:\t{v}");
    }
    if !node.spec.pod_cidr.is_empty() {
        let _ = writeln!(out, "PodCIDR:\t{}", node.spec.pod_cidr);
    }
    if !node.spec.pod_cidrs.is_empty() {
        let _ = writeln!(out, "PodCIDRs:\t{}", node.spec.pod_cidrs.join(","));
    }
    if !node.spec.provider_id.is_empty() {
        let _ = writeln!(out, "ProviderID:\t{}", node.spec.provider_id);
    }
    let alloc_cpu = node.allocatable("cpu").map_or(0, Quantity::milli);
    let alloc_mem = node.allocatable("memory").map_or(0, Quantity::value);
    let _ = writeln!(out, "Non-terminated Pods:\t({} in total)", pods.len());
    out.push_str("  Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n");
    out.push_str("  ---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n");
    for p in pods {
        let (cr, cl, mr, ml) = sum_requests(std::slice::from_ref(p));
        let _ = writeln!(
            out,
            "  {}\t{}\t\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{}",
            p.metadata.namespace,
            p.metadata.name,
            Quantity::from_milli(cr),
            percent(cr, alloc_cpu),
            Quantity::from_milli(cl),
            percent(cl, alloc_cpu),
            Quantity::bytes(mr),
            percent(mr, alloc_mem),
            Quantity::bytes(ml),
            percent(ml, alloc_mem),
            age(p.metadata.creation_timestamp, now)
        );
    }
    let (cr, cl, mr, ml) = sum_requests(pods);
    out.push_str("Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n");
    out.push_str("  Resource\tRequests\tLimits\n");
    out.push_str("  --------\t--------\t------\n");
    let _ = writeln!(
        out,
        "  cpu\t{} ({}%)\t{} ({}%)",
        Quantity::from_milli(cr),
        percent(cr, alloc_cpu),
        Quantity::from_milli(cl),
        percent(cl, alloc_cpu)
    );
    let _ = writeln!(
        out,
        "  memory\t{} ({}%)\t{} ({}%)",
        Quantity::bytes(mr),
        percent(mr, alloc_mem),
        Quantity::bytes(ml),
        percent(ml, alloc_mem)
    );
    out.push_str("  ephemeral-storage\t0 (0%)\t0 (0%)\n");
    events_section(&mut out, events, now);
    layout(&out)
}

/// A pod template, as workloads' descriptions show it.
pub(crate) fn pod_template(out: &mut String, t: &PodTemplateSpec) {
    out.push_str("Pod Template:\n");
    labels_multiline(out, "  Labels", &t.metadata.labels);
    if !t.metadata.annotations.is_empty() {
        annotations_multiline(out, "  Annotations", &t.metadata.annotations);
    }
    if let Some(sa) = t.spec.service_account_name.as_ref().filter(|s| !s.is_empty()) {
        let _ = writeln!(out, "  Service Account:\t{sa}");
    }
    if !t.spec.init_containers.is_empty() {
        containers(out, "Init Containers", &t.spec.init_containers, None, "  ");
    }
    containers(out, "Containers", &t.spec.containers, None, "  ");
    volumes_with_indent(out, &t.spec.volumes, "  ");
    if let Some(pc) = t.spec.priority_class_name.as_ref().filter(|s| !s.is_empty()) {
        let _ = writeln!(out, "  Priority Class Name:\t{pc}");
    }
    labels_multiline(out, "  Node-Selectors", &t.spec.node_selector);
    tolerations_titled(out, "  Tolerations", &t.spec.tolerations);
}

pub(super) fn selector_text(sel: Option<&LabelSelector>) -> String {
    sel.map(|s| s.to_selector_string()).filter(|s| !s.is_empty()).unwrap_or_else(|| "<none>".into())
}

fn workload_conditions(out: &mut String, conds: &[crate::api::apps::WorkloadCondition]) {
    if conds.is_empty() {
        return;
    }
    out.push_str("Conditions:\n  Type\tStatus\tReason\n");
    out.push_str("  ----\t------\t------\n");
    for c in conds {
        let _ = writeln!(out, "  {} \t{}\t{}", c.type_, c.status, c.reason);
    }
}

fn replica_sets_line(sets: &[&ReplicaSet]) -> String {
    if sets.is_empty() {
        return "<none>".into();
    }
    sets.iter()
        .map(|rs| {
            format!("{} ({}/{} replicas created)", rs.metadata.name, rs.status.replicas, rs.spec.replicas.unwrap_or(0))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `kubectl describe deployment`: `old` and `new` are its ReplicaSets.
pub fn describe_deployment(
    d: &Deployment,
    new: Option<&ReplicaSet>,
    old: &[&ReplicaSet],
    events: &[Event],
    now: Time,
) -> String {
    let mut out = String::new();
    let m = &d.metadata;
    let st = &d.status;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    let _ = writeln!(out, "CreationTimestamp:\t{}", m.creation_timestamp.unwrap_or_default().rfc1123z());
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let _ = writeln!(out, "Selector:\t{}", selector_text(d.spec.selector.as_ref()));
    let _ = writeln!(
        out,
        "Replicas:\t{} desired | {} updated | {} total | {} available | {} unavailable",
        d.spec.replicas.unwrap_or(1),
        st.updated_replicas.unwrap_or(0),
        st.replicas.unwrap_or(0),
        st.available_replicas.unwrap_or(0),
        st.unavailable_replicas.unwrap_or(0)
    );
    let strategy = d.spec.strategy.clone().unwrap_or_default();
    let _ = writeln!(out, "StrategyType:\t{}", strategy.type_.clone().unwrap_or_else(|| "RollingUpdate".into()));
    let _ = writeln!(out, "MinReadySeconds:\t{}", d.spec.min_ready_seconds.unwrap_or(0));
    if let Some(ru) = &strategy.rolling_update {
        let show = |v: &Option<crate::api::IntOrString>| v.as_ref().map_or("0".to_string(), |x| x.to_string());
        let _ = writeln!(
            out,
            "RollingUpdateStrategy:\t{} max unavailable, {} max surge",
            show(&ru.max_unavailable),
            show(&ru.max_surge)
        );
    }
    pod_template(&mut out, &d.spec.template);
    workload_conditions(&mut out, &st.conditions);
    let old_with_pods: Vec<&ReplicaSet> = old.iter().copied().filter(|rs| rs.spec.replicas.unwrap_or(0) != 0).collect();
    let _ = writeln!(out, "OldReplicaSets:\t{}", replica_sets_line(&old_with_pods));
    let _ = writeln!(out, "NewReplicaSet:\t{}", replica_sets_line(&new.into_iter().collect::<Vec<_>>()));
    events_section(&mut out, events, now);
    layout(&out)
}

/// `kubectl describe replicaset`: `pods` are the ones it controls.
pub fn describe_replica_set(rs: &ReplicaSet, pods: &[Pod], events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &rs.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    let _ = writeln!(out, "Selector:\t{}", selector_text(rs.spec.selector.as_ref()));
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    if let Some(owner) = m.owner_references.iter().find(|o| o.controller == Some(true)) {
        let _ = writeln!(out, "Controlled By:\t{}/{}", owner.kind, owner.name);
    }
    let _ = writeln!(out, "Replicas:\t{} current / {} desired", rs.status.replicas, rs.spec.replicas.unwrap_or(1));
    pods_status(&mut out, pods);
    pod_template(&mut out, &rs.spec.template);
    workload_conditions(&mut out, &rs.status.conditions);
    events_section(&mut out, events, now);
    layout(&out)
}

/// `Pods Status: 2 Running / 0 Waiting / 0 Succeeded / 0 Failed`.
pub(super) fn pods_status(out: &mut String, pods: &[Pod]) {
    let count = |phase: &str| pods.iter().filter(|p| p.status.phase == phase).count();
    let waiting = pods.iter().filter(|p| p.status.phase == "Pending" || p.status.phase.is_empty()).count();
    let _ = writeln!(
        out,
        "Pods Status:\t{} Running / {waiting} Waiting / {} Succeeded / {} Failed",
        count("Running"),
        count("Succeeded"),
        count("Failed")
    );
}

/// `kubectl describe daemonset`: how many nodes should run its pod, and how many do.
pub fn describe_daemon_set(ds: &crate::api::DaemonSet, pods: &[Pod], events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &ds.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    let _ = writeln!(out, "Selector:\t{}", selector_text(ds.spec.selector.as_ref()));
    let node_selector: Vec<String> =
        ds.spec.template.spec.node_selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let node_selector = if node_selector.is_empty() { "<none>".to_string() } else { node_selector.join(",") };
    let _ = writeln!(out, "Node-Selector:\t{node_selector}");
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let st = &ds.status;
    let _ = writeln!(out, "Desired Number of Nodes Scheduled: {}", st.desired_number_scheduled);
    let _ = writeln!(out, "Current Number of Nodes Scheduled: {}", st.current_number_scheduled);
    let _ =
        writeln!(out, "Number of Nodes Scheduled with Up-to-date Pods: {}", st.updated_number_scheduled.unwrap_or(0));
    let _ = writeln!(out, "Number of Nodes Scheduled with Available Pods: {}", st.number_available.unwrap_or(0));
    let _ = writeln!(out, "Number of Nodes Misscheduled: {}", st.number_misscheduled);
    pods_status(&mut out, pods);
    pod_template(&mut out, &ds.spec.template);
    events_section(&mut out, events, now);
    layout(&out)
}

/// `kubectl describe job`: parallelism and completions, when it ran, and its pods' counts.
pub fn describe_job(job: &crate::api::Job, pods: &[Pod], events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &job.metadata;
    let spec = &job.spec;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    let _ = writeln!(out, "Selector:\t{}", selector_text(spec.selector.as_ref()));
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    if let Some(owner) = m.owner_references.iter().find(|o| o.controller == Some(true)) {
        let _ = writeln!(out, "Controlled By:\t{}/{}", owner.kind, owner.name);
    }
    let unset = |v: Option<i32>| v.map_or("<unset>".to_string(), |n| n.to_string());
    let _ = writeln!(out, "Parallelism:\t{}", unset(spec.parallelism));
    let _ = writeln!(out, "Completions:\t{}", unset(spec.completions));
    let _ = writeln!(out, "Completion Mode:\t{}", spec.completion_mode.as_deref().unwrap_or("NonIndexed"));
    let _ = writeln!(out, "Suspend:\t{}", spec.suspend.unwrap_or(false));
    let _ = writeln!(out, "Backoff Limit:\t{}", spec.backoff_limit.unwrap_or(6));
    if let Some(start) = job.status.start_time {
        let _ = writeln!(out, "Start Time:\t{}", start.rfc1123z());
        if let Some(done) = job.status.completion_time {
            let _ = writeln!(out, "Completed At:\t{}", done.rfc1123z());
            let _ = writeln!(out, "Duration:\t{}", super::age::human_duration(done.since(start)));
        }
    }
    let ready = pods.iter().filter(|p| p.is_ready()).count();
    let _ = writeln!(
        out,
        "Pods Statuses:\t{} Active ({ready} Ready) / {} Succeeded / {} Failed",
        job.status.active.unwrap_or(0),
        job.status.succeeded.unwrap_or(0),
        job.status.failed.unwrap_or(0)
    );
    pod_template(&mut out, &spec.template);
    events_section(&mut out, events, now);
    layout(&out)
}

/// `kubectl describe cronjob`: its schedule and policies, the Job template, and its active Jobs.
pub fn describe_cron_job(cj: &crate::api::CronJob, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &cj.metadata;
    let spec = &cj.spec;
    let job = &spec.job_template.spec;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let _ = writeln!(out, "Schedule:\t{}", spec.schedule);
    let _ = writeln!(out, "Concurrency Policy:\t{}", spec.concurrency_policy.as_deref().unwrap_or("Allow"));
    let _ = writeln!(out, "Suspend:\t{}", if spec.suspend == Some(true) { "True" } else { "False" });
    let unset = |v: Option<i64>| v.map_or("<unset>".to_string(), |n| n.to_string());
    let _ =
        writeln!(out, "Successful Job History Limit:\t{}", unset(spec.successful_jobs_history_limit.map(i64::from)));
    let _ = writeln!(out, "Failed Job History Limit:\t{}", unset(spec.failed_jobs_history_limit.map(i64::from)));
    let _ = writeln!(out, "Starting Deadline Seconds:\t{}", unset(spec.starting_deadline_seconds));
    let selector = job.selector.as_ref().map_or("<unset>".to_string(), |s| selector_text(Some(s)));
    let _ = writeln!(out, "Selector:\t{selector}");
    let _ = writeln!(out, "Parallelism:\t{}", unset(job.parallelism.map(i64::from)));
    let _ = writeln!(out, "Completions:\t{}", unset(job.completions.map(i64::from)));
    pod_template(&mut out, &job.template);
    let last = cj.status.last_schedule_time.map_or("<unset>".to_string(), |t| t.rfc1123z());
    let _ = writeln!(out, "Last Schedule Time:\t{last}");
    let active: Vec<&str> = cj.status.active.iter().map(|r| r.name.as_str()).collect();
    let active = if active.is_empty() { "<none>".to_string() } else { active.join(", ") };
    let _ = writeln!(out, "Active Jobs:\t{active}");
    events_section(&mut out, events, now);
    layout(&out)
}

/// `kubectl describe service`: its addresses, each port with the endpoints behind it (from
/// the Service's EndpointSlices: the ready ones, at most three, then how many more), and its
/// policies.
pub fn describe_service(svc: &Service, slices: &[EndpointSlice], events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &svc.metadata;
    let spec = &svc.spec;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let selector: Vec<String> = spec.selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(out, "Selector:\t{}", if selector.is_empty() { "<none>".into() } else { selector.join(",") });
    let _ = writeln!(out, "Type:\t{}", spec.type_.as_deref().unwrap_or("ClusterIP"));
    if let Some(policy) = &spec.ip_family_policy {
        let _ = writeln!(out, "IP Family Policy:\t{policy}");
    }
    if !spec.ip_families.is_empty() {
        let _ = writeln!(out, "IP Families:\t{}", spec.ip_families.join(","));
    }
    let _ = writeln!(out, "IP:\t{}", spec.cluster_ip);
    if !spec.cluster_ips.is_empty() {
        let _ = writeln!(out, "IPs:\t{}", spec.cluster_ips.join(","));
    }
    if !spec.external_ips.is_empty() {
        let _ = writeln!(out, "External IPs:\t{}", spec.external_ips.join(","));
    }
    if let Some(list) = svc.status.load_balancer.as_ref().and_then(|lb| lb.get("ingress")?.as_array().cloned()) {
        let shown: Vec<String> = list
            .iter()
            .filter_map(|i| {
                let ip = i.get("ip").or_else(|| i.get("hostname"))?.as_str()?;
                Some(match i.get("ipMode").and_then(|m| m.as_str()) {
                    Some(mode) => format!("{ip} ({mode})"),
                    None => ip.to_string(),
                })
            })
            .collect();
        let _ = writeln!(out, "LoadBalancer Ingress:\t{}", shown.join(", "));
    }
    if let Some(ip) = spec.load_balancer_ip.as_deref().filter(|ip| !ip.is_empty()) {
        let _ = writeln!(out, "IP:\t{ip}");
    }
    if let Some(name) = spec.external_name.as_deref().filter(|n| !n.is_empty()) {
        let _ = writeln!(out, "External Name:\t{name}");
    }
    for sp in &spec.ports {
        let name = sp.name.as_deref().filter(|n| !n.is_empty()).unwrap_or("<unset>");
        let protocol = sp.protocol.as_deref().unwrap_or("TCP");
        let _ = writeln!(out, "Port:\t{name}  {}/{protocol}", sp.port);
        let target = sp.target_port.as_ref().map_or(sp.port.to_string(), |t| t.to_string());
        let _ = writeln!(out, "TargetPort:\t{target}/{protocol}");
        if let Some(node_port) = sp.node_port.filter(|p| *p != 0) {
            let _ = writeln!(out, "NodePort:\t{name}  {node_port}/{protocol}");
        }
        if spec.external_name.is_none() {
            let _ = writeln!(out, "Endpoints:\t{}", endpoints_of(slices, sp.name.as_deref().unwrap_or("")));
        }
    }
    let _ = writeln!(out, "Session Affinity:\t{}", spec.session_affinity.as_deref().unwrap_or("None"));
    if let Some(policy) = &spec.external_traffic_policy {
        let _ = writeln!(out, "External Traffic Policy:\t{policy}");
    }
    if let Some(policy) = &spec.internal_traffic_policy {
        let _ = writeln!(out, "Internal Traffic Policy:\t{policy}");
    }
    if let Some(port) = spec.health_check_node_port.filter(|p| *p != 0) {
        let _ = writeln!(out, "HealthCheck NodePort:\t{port}");
    }
    if !spec.load_balancer_source_ranges.is_empty() {
        let _ = writeln!(out, "LoadBalancer Source Ranges:\t{}", spec.load_balancer_source_ranges.join(","));
    }
    events_section(&mut out, events, now);
    layout(&out)
}

/// The ready endpoints serving the Service port named `port_name`, as `ip:port` joined by
/// commas: the first three, then `+ N more...`.
fn endpoints_of(slices: &[EndpointSlice], port_name: &str) -> String {
    const SHOWN: usize = 3;
    let mut all = Vec::new();
    for slice in slices {
        let Some(port) = slice.ports.iter().find(|p| p.name.as_deref().unwrap_or("") == port_name) else { continue };
        let Some(number) = port.port else { continue };
        for e in slice.endpoints.iter().filter(|e| e.conditions.ready != Some(false)) {
            all.extend(e.addresses.iter().map(|a| format!("{a}:{number}")));
        }
    }
    let mut text = all.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(",");
    if all.len() > SHOWN {
        let _ = write!(text, " + {} more...", all.len() - SHOWN);
    }
    text
}

/// A ConfigMap: each key, a `----` rule and its value; binary keys by size.
pub fn describe_config_map(cm: &crate::api::ConfigMap, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", cm.metadata.name);
    let _ = writeln!(out, "Namespace:\t{}", cm.metadata.namespace);
    labels_multiline(&mut out, "Labels", &cm.metadata.labels);
    annotations_multiline(&mut out, "Annotations", &cm.metadata.annotations);
    out.push_str("\nData\n====\n");
    for (k, v) in &cm.data {
        let _ = writeln!(out, "{k}:\n----\n{v}");
    }
    out.push_str("\nBinaryData\n====\n");
    for (k, v) in &cm.binary_data {
        let size = crate::util::base64::decode(v).map_or(0, |b| b.len());
        let _ = writeln!(out, "{k}: {size} bytes");
    }
    out.push('\n');
    events_section(&mut out, events, now);
    layout(&out)
}

/// A Secret: its type and each key's size, never the values.
pub fn describe_secret(secret: &crate::api::Secret) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", secret.metadata.name);
    let _ = writeln!(out, "Namespace:\t{}", secret.metadata.namespace);
    labels_multiline(&mut out, "Labels", &secret.metadata.labels);
    annotations_multiline(&mut out, "Annotations", &secret.metadata.annotations);
    let type_ = if secret.type_.is_empty() { "Opaque" } else { &secret.type_ };
    let _ = writeln!(out, "\nType:\t{type_}\n\nData\n====");
    for (k, v) in &secret.data {
        let size = crate::util::base64::decode(v).map_or(0, |b| b.len());
        let _ = writeln!(out, "{k}:\t{size} bytes");
    }
    layout(&out)
}

/// A ServiceAccount: its pull secrets, mountable secrets and tokens.
pub fn describe_service_account(sa: &crate::api::ServiceAccount, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", sa.metadata.name);
    let _ = writeln!(out, "Namespace:\t{}", sa.metadata.namespace);
    labels_multiline(&mut out, "Labels", &sa.metadata.labels);
    annotations_multiline(&mut out, "Annotations", &sa.metadata.annotations);
    let names = |list: &[serde_json::Value]| -> String {
        let names: Vec<&str> = list.iter().filter_map(|s| s.get("name").and_then(|n| n.as_str())).collect();
        if names.is_empty() { "<none>".to_string() } else { names.join("\n\t") }
    };
    let _ = writeln!(out, "Image pull secrets:\t{}", names(&sa.image_pull_secrets));
    let _ = writeln!(out, "Mountable secrets:\t{}", names(&sa.secrets));
    out.push_str("Tokens:\t<none>\n");
    events_section(&mut out, events, now);
    layout(&out)
}

/// A Namespace: its phase and conditions, then its quotas and limit ranges.
pub fn describe_namespace(
    ns: &crate::api::Namespace,
    quotas: &[crate::api::ResourceQuota],
    ranges: &[crate::api::LimitRange],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", ns.metadata.name);
    labels_multiline(&mut out, "Labels", &ns.metadata.labels);
    annotations_multiline(&mut out, "Annotations", &ns.metadata.annotations);
    let phase = if ns.status.phase.is_empty() { "Active" } else { &ns.status.phase };
    let _ = writeln!(out, "Status:\t{phase}");
    if !ns.status.conditions.is_empty() {
        out.push_str("Conditions:\n");
        out.push_str("  Type\tStatus\tLastTransitionTime\tReason\tMessage\n");
        out.push_str("  ----\t------\t------------------\t------\t-------\n");
        for c in &ns.status.conditions {
            let _ = writeln!(
                out,
                "  {}\t{}\t{}\t{}\t{}",
                c.type_,
                c.status,
                c.last_transition_time.unwrap_or_default().rfc1123z(),
                c.reason,
                c.message
            );
        }
    }
    out.push('\n');
    if quotas.is_empty() {
        out.push_str("No resource quota.\n");
    } else {
        out.push_str("Resource Quotas\n");
        for q in quotas {
            let _ = writeln!(out, "  Name:\t{}", q.metadata.name);
            out.push_str("  Resource\tUsed\tHard\n  --------\t---\t---\n");
            for (resource, hard) in &q.status.hard {
                let used = q.status.used.get(resource).map_or("0", |u| u.as_str());
                let _ = writeln!(out, "  {resource}\t{used}\t{hard}");
            }
        }
    }
    out.push('\n');
    if ranges.is_empty() {
        out.push_str("No LimitRange resource.\n");
    } else {
        out.push_str(
            "Resource Limits\n Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n",
        );
        out.push_str(" ----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n");
        for range in ranges {
            limit_rows(&mut out, range, " ");
        }
    }
    layout(&out)
}

/// A ResourceQuota: each resource it caps, used against hard.
pub fn describe_quota(q: &crate::api::ResourceQuota) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", q.metadata.name);
    let _ = writeln!(out, "Namespace:\t{}", q.metadata.namespace);
    if !q.spec.scopes.is_empty() {
        let _ = writeln!(out, "Scopes:\t{}", q.spec.scopes.join(", "));
    }
    out.push_str("Resource\tUsed\tHard\n--------\t----\t----\n");
    for (resource, hard) in &q.status.hard {
        let used = q.status.used.get(resource).map_or("0", |u| u.as_str());
        let _ = writeln!(out, "{resource}\t{used}\t{hard}");
    }
    layout(&out)
}

/// A LimitRange: per type and resource, its bounds and defaults (`-` where it sets none).
pub fn describe_limit_range(range: &crate::api::LimitRange) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", range.metadata.name);
    let _ = writeln!(out, "Namespace:\t{}", range.metadata.namespace);
    out.push_str("Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n");
    out.push_str("----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n");
    limit_rows(&mut out, range, "");
    layout(&out)
}

fn limit_rows(out: &mut String, range: &crate::api::LimitRange, indent: &str) {
    for item in &range.spec.limits {
        let maps = [&item.min, &item.max, &item.default_request, &item.default, &item.max_limit_request_ratio];
        let resources: std::collections::BTreeSet<&String> = maps.iter().flat_map(|m| m.keys()).collect();
        for resource in resources {
            let cell = |m: &std::collections::BTreeMap<String, crate::api::Quantity>| {
                m.get(resource).map_or("-".to_string(), |q| q.to_string())
            };
            let _ = writeln!(
                out,
                "{indent}{}\t{resource}\t{}\t{}\t{}\t{}\t{}",
                item.type_,
                cell(&item.min),
                cell(&item.max),
                cell(&item.default_request),
                cell(&item.default),
                cell(&item.max_limit_request_ratio)
            );
        }
    }
}

/// A Role or ClusterRole: its rules, one row per resource.
pub fn describe_role(meta: &crate::api::ObjectMeta, rules: &[crate::api::PolicyRule]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", meta.name);
    labels_multiline(&mut out, "Labels", &meta.labels);
    annotations_multiline(&mut out, "Annotations", &meta.annotations);
    out.push_str("PolicyRule:\n");
    out.push_str("  Resources\tNon-Resource URLs\tResource Names\tVerbs\n");
    out.push_str("  ---------\t-----------------\t--------------\t-----\n");
    for row in super::auth::rule_rows(rules) {
        let _ = writeln!(out, "  {}", row.join("\t"));
    }
    layout(&out)
}

/// A RoleBinding or ClusterRoleBinding: the role it grants and to whom.
pub fn describe_binding(
    meta: &crate::api::ObjectMeta,
    role: &crate::api::RoleRef,
    subjects: &[crate::api::Subject],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Name:\t{}", meta.name);
    labels_multiline(&mut out, "Labels", &meta.labels);
    annotations_multiline(&mut out, "Annotations", &meta.annotations);
    out.push_str("Role:\n");
    let _ = writeln!(out, "  Kind:\t{}", role.kind);
    let _ = writeln!(out, "  Name:\t{}", role.name);
    out.push_str("Subjects:\n");
    out.push_str("  Kind\tName\tNamespace\n");
    out.push_str("  ----\t----\t---------\n");
    for s in subjects {
        let _ = writeln!(out, "  {}\t{}\t{}", s.kind, s.name, s.namespace);
    }
    layout(&out)
}

/// A short generic description for kinds without their own describer.
pub fn describe_generic(object: &crate::api::Object, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = object.meta();
    let _ = writeln!(out, "Name:\t{}", m.name);
    if !m.namespace.is_empty() {
        let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    }
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    events_section(&mut out, events, now);
    layout(&out)
}
