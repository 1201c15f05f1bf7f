//! The API server's table printers, as `kubectl get` shows them: each kind's columns,
//! `-o wide` extras, and the pod STATUS / READY / RESTARTS rules.

use super::age::age;
use crate::api::{Event, Kind, Lease, Namespace, Node, Object, Pod};
use crate::sim::Time;
use crate::util::sort::StableSort;

/// A table's column headers, for kinds whose columns are not fixed too (custom resources'
/// printer columns).
pub fn header_strings(kind: Kind, wide: bool) -> Vec<String> {
    match kind {
        Kind::Custom(c) => super::custom_printers::headers(c, wide),
        _ => headers(kind, wide).iter().map(|s| s.to_string()).collect(),
    }
}

/// A table's column headers (upper-cased) and which are `-o wide` only.
pub fn headers(kind: Kind, wide: bool) -> Vec<&'static str> {
    let (base, extra): (&[&str], &[&str]) = match kind {
        Kind::Pod => {
            (&["NAME", "READY", "STATUS", "RESTARTS", "AGE"], &["IP", "NODE", "NOMINATED NODE", "READINESS GATES"])
        }
        Kind::Node => (
            &["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
            &["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"],
        ),
        Kind::Namespace => (&["NAME", "STATUS", "AGE"], &[]),
        Kind::Event => (
            &["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
            &["SUBOBJECT", "SOURCE", "FIRST SEEN", "COUNT", "NAME"],
        ),
        Kind::Lease => (&["NAME", "HOLDER", "AGE"], &[]),
        Kind::Deployment => {
            (&["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"])
        }
        Kind::ReplicaSet | Kind::ReplicationController => {
            (&["NAME", "DESIRED", "CURRENT", "READY", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"])
        }
        Kind::DaemonSet => (
            &["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"],
            &["CONTAINERS", "IMAGES", "SELECTOR"],
        ),
        Kind::Job => (&["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        Kind::StatefulSet => (&["NAME", "READY", "AGE"], &["CONTAINERS", "IMAGES"]),
        Kind::CronJob => (
            &["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"],
            &["CONTAINERS", "IMAGES", "SELECTOR"],
        ),
        Kind::Service => (&["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], &["SELECTOR"]),
        Kind::Endpoints => (&["NAME", "ENDPOINTS", "AGE"], &[]),
        Kind::ComponentStatus => (&["NAME", "STATUS", "MESSAGE", "ERROR"], &[]),
        Kind::SelfSubjectAccessReview | Kind::SelfSubjectRulesReview => (&["NAME", "AGE"], &[]),
        Kind::EndpointSlice => (&["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"], &[]),
        Kind::ConfigMap => (&["NAME", "DATA", "AGE"], &[]),
        Kind::Secret => (&["NAME", "TYPE", "DATA", "AGE"], &[]),
        Kind::ServiceAccount => (&["NAME", "SECRETS", "AGE"], &[]),
        Kind::Role | Kind::ClusterRole | Kind::LimitRange => (&["NAME", "CREATED AT"], &[]),
        Kind::ResourceQuota => (&["NAME", "AGE", "REQUEST", "LIMIT"], &[]),
        Kind::PodDisruptionBudget => (&["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"], &[]),
        Kind::PriorityClass => (&["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"], &[]),
        Kind::NetworkPolicy => (&["NAME", "POD-SELECTOR", "AGE"], &[]),
        Kind::ValidatingWebhookConfiguration | Kind::MutatingWebhookConfiguration => {
            (super::webhook_printers::HEADERS, &[])
        }
        Kind::ValidatingAdmissionPolicy | Kind::ValidatingAdmissionPolicyBinding => {
            (super::admission_printers::headers(kind == Kind::ValidatingAdmissionPolicyBinding), &[])
        }
        Kind::RoleBinding | Kind::ClusterRoleBinding => {
            (&["NAME", "ROLE", "AGE"], &["USERS", "GROUPS", "SERVICEACCOUNTS"])
        }
        Kind::StorageClass | Kind::PersistentVolume | Kind::PersistentVolumeClaim => {
            super::storage_printers::headers(kind)
        }
        Kind::HorizontalPodAutoscaler | Kind::APIService | Kind::NodeMetrics | Kind::PodMetrics => {
            super::autoscaling_printers::headers(kind)
        }
        Kind::Ingress | Kind::IngressClass => super::networking_printers::headers(kind),
        Kind::CustomResourceDefinition | Kind::Custom(_) => (&["NAME", "CREATED AT"], &[]),
    };
    let mut h = base.to_vec();
    if wide {
        if kind == Kind::Event {
            // Wide event tables put the extras after OBJECT and before MESSAGE's end.
            return vec![
                "LAST SEEN",
                "TYPE",
                "REASON",
                "OBJECT",
                "SUBOBJECT",
                "SOURCE",
                "MESSAGE",
                "FIRST SEEN",
                "COUNT",
                "NAME",
            ];
        }
        h.extend_from_slice(extra);
    }
    h
}

/// The label columns kubectl adds after a kind's own: one per `-L KEY` (headed by the key's
/// last path segment, upper-cased), then LABELS for `--show-labels`.
pub struct LabelColumns {
    keys: Vec<String>,
    all: bool,
}

impl LabelColumns {
    pub fn from_args(args: &super::args::Args) -> LabelColumns {
        let keys = args
            .all("label-columns")
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_string)
            .collect();
        LabelColumns { keys, all: args.has("show-labels") }
    }

    pub fn headers(&self) -> Vec<String> {
        let mut out: Vec<String> = self.keys.iter().map(|k| k.rsplit('/').next().unwrap_or(k).to_uppercase()).collect();
        if self.all {
            out.push("LABELS".into());
        }
        out
    }

    pub fn cells(&self, labels: &crate::api::Labels) -> Vec<String> {
        let mut out: Vec<String> = self.keys.iter().map(|k| labels.get(k).cloned().unwrap_or_default()).collect();
        if self.all {
            let all: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push(if all.is_empty() { "<none>".into() } else { all.join(",") });
        }
        out
    }
}

/// One object's cells, in header order.
pub fn row(object: &Object, now: Time, wide: bool) -> Vec<String> {
    match object {
        Object::Pod(p) => pod_row(p, now, wide),
        Object::Node(n) => node_row(n, now, wide),
        Object::Namespace(n) => namespace_row(n, now),
        Object::Event(e) => event_row(e, now, wide),
        Object::Lease(l) => lease_row(l, now),
        Object::SelfSubjectAccessReview(r) => vec![r.metadata.name.clone(), "<unknown>".into()],
        Object::SelfSubjectRulesReview(r) => vec![r.metadata.name.clone(), "<unknown>".into()],
        Object::ComponentStatus(cs) => {
            let healthy = cs.conditions.iter().find(|c| c.type_ == "Healthy");
            let status = match healthy.map(|c| c.status.as_str()) {
                Some("True") => "Healthy",
                Some(_) => "Unhealthy",
                None => "Unknown",
            };
            let (message, error) =
                healthy.map_or((String::new(), String::new()), |c| (c.message.clone(), c.error.clone()));
            vec![cs.metadata.name.clone(), status.into(), message, error]
        }
        Object::Deployment(d) => {
            let s = &d.status;
            let mut row = vec![
                d.metadata.name.clone(),
                format!("{}/{}", s.ready_replicas.unwrap_or(0), d.spec.replicas.unwrap_or(1)),
                s.updated_replicas.unwrap_or(0).to_string(),
                s.available_replicas.unwrap_or(0).to_string(),
                age(d.metadata.creation_timestamp, now),
            ];
            if wide {
                row.extend(template_columns(&d.spec.template, d.spec.selector.as_ref()));
            }
            row
        }
        Object::ReplicaSet(rs) => {
            let mut row = vec![
                rs.metadata.name.clone(),
                rs.spec.replicas.unwrap_or(1).to_string(),
                rs.status.replicas.to_string(),
                rs.status.ready_replicas.unwrap_or(0).to_string(),
                age(rs.metadata.creation_timestamp, now),
            ];
            if wide {
                row.extend(template_columns(&rs.spec.template, rs.spec.selector.as_ref()));
            }
            row
        }
        Object::DaemonSet(ds) => {
            let s = &ds.status;
            let selector: Vec<String> =
                ds.spec.template.spec.node_selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let mut row = vec![
                ds.metadata.name.clone(),
                s.desired_number_scheduled.to_string(),
                s.current_number_scheduled.to_string(),
                s.number_ready.to_string(),
                s.updated_number_scheduled.unwrap_or(0).to_string(),
                s.number_available.unwrap_or(0).to_string(),
                if selector.is_empty() { "<none>".into() } else { selector.join(",") },
                age(ds.metadata.creation_timestamp, now),
            ];
            if wide {
                row.extend(template_columns(&ds.spec.template, ds.spec.selector.as_ref()));
            }
            row
        }
        Object::Job(job) => {
            let s = &job.status;
            let has = |t: &str| s.conditions.iter().any(|c| c.type_ == t && c.status == "True");
            let status = if has("Complete") {
                "Complete"
            } else if has("Failed") {
                "Failed"
            } else if job.metadata.deletion_timestamp.is_some() {
                "Terminating"
            } else if has("Suspended") {
                "Suspended"
            } else if has("FailureTarget") {
                "FailureTarget"
            } else if has("SuccessCriteriaMet") {
                "SuccessCriteriaMet"
            } else {
                "Running"
            };
            let succeeded = s.succeeded.unwrap_or(0);
            let completions = match (job.spec.completions, job.spec.parallelism) {
                (Some(c), _) => format!("{succeeded}/{c}"),
                (None, Some(p)) if p > 1 => format!("{succeeded}/1 of {p}"),
                (None, _) => format!("{succeeded}/1"),
            };
            let duration = match (s.start_time, s.completion_time) {
                (Some(start), Some(end)) => super::age::human_duration(end.since(start)),
                (Some(start), None) => super::age::human_duration(now.since(start)),
                _ => String::new(),
            };
            let mut row = vec![
                job.metadata.name.clone(),
                status.into(),
                completions,
                duration,
                age(job.metadata.creation_timestamp, now),
            ];
            if wide {
                row.extend(template_columns(&job.spec.template, job.spec.selector.as_ref()));
            }
            row
        }
        Object::Service(svc) => {
            let spec = &svc.spec;
            let type_ = spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
            let cluster_ip = if spec.cluster_ip.is_empty() { "<none>".to_string() } else { spec.cluster_ip.clone() };
            let external = match type_.as_str() {
                "ExternalName" => spec.external_name.clone().unwrap_or_default(),
                "LoadBalancer" => {
                    let ingress: Vec<String> = svc
                        .status
                        .load_balancer
                        .as_ref()
                        .and_then(|lb| lb.get("ingress"))
                        .and_then(|i| i.as_array())
                        .map(|a| {
                            a.iter().filter_map(|x| x.get("ip").and_then(|ip| ip.as_str()).map(String::from)).collect()
                        })
                        .unwrap_or_default();
                    let mut all = spec.external_ips.clone();
                    all.extend(ingress);
                    if all.is_empty() { "<pending>".into() } else { all.join(",") }
                }
                _ if !spec.external_ips.is_empty() => spec.external_ips.join(","),
                _ => "<none>".into(),
            };
            let ports: Vec<String> = spec
                .ports
                .iter()
                .map(|p| {
                    let proto = p.protocol.clone().unwrap_or_else(|| "TCP".into());
                    match p.node_port {
                        Some(np) => format!("{}:{np}/{proto}", p.port),
                        None => format!("{}/{proto}", p.port),
                    }
                })
                .collect();
            let mut row = vec![
                svc.metadata.name.clone(),
                type_,
                cluster_ip,
                external,
                if ports.is_empty() { "<none>".into() } else { ports.join(",") },
                age(svc.metadata.creation_timestamp, now),
            ];
            if wide {
                let sel: Vec<String> = spec.selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
                row.push(if sel.is_empty() { "<none>".into() } else { sel.join(",") });
            }
            row
        }
        Object::Endpoints(ep) => {
            let mut addrs = Vec::new();
            let mut count = 0;
            for subset in &ep.subsets {
                if subset.ports.is_empty() {
                    count += subset.addresses.len();
                    addrs.extend(subset.addresses.iter().map(|a| a.ip.clone()));
                } else {
                    for p in &subset.ports {
                        count += subset.addresses.len();
                        addrs.extend(subset.addresses.iter().map(|a| format!("{}:{}", a.ip, p.port.unwrap_or(0))));
                    }
                }
            }
            let cell = if ep.subsets.is_empty() {
                "<none>".to_string()
            } else if count > 3 {
                format!("{} + {} more...", addrs[..3].join(","), count - 3)
            } else {
                addrs.join(",")
            };
            vec![ep.metadata.name.clone(), cell, age(ep.metadata.creation_timestamp, now)]
        }
        Object::EndpointSlice(es) => {
            let ports: Vec<String> =
                es.ports.iter().map(|p| p.port.map_or("<unset>".into(), |n| n.to_string())).collect();
            let addrs: Vec<String> = es.endpoints.iter().flat_map(|e| e.addresses.iter().cloned()).collect();
            vec![
                es.metadata.name.clone(),
                es.address_type.clone(),
                if ports.is_empty() { "<unset>".into() } else { ports.join(",") },
                if addrs.is_empty() { "<unset>".into() } else { format_list(&addrs, 3) },
                age(es.metadata.creation_timestamp, now),
            ]
        }
        Object::ConfigMap(cm) => vec![
            cm.metadata.name.clone(),
            (cm.data.len() + cm.binary_data.len()).to_string(),
            age(cm.metadata.creation_timestamp, now),
        ],
        Object::Secret(sec) => vec![
            sec.metadata.name.clone(),
            if sec.type_.is_empty() { "Opaque".into() } else { sec.type_.clone() },
            sec.data.len().to_string(),
            age(sec.metadata.creation_timestamp, now),
        ],
        Object::ServiceAccount(sa) => {
            vec![sa.metadata.name.clone(), sa.secrets.len().to_string(), age(sa.metadata.creation_timestamp, now)]
        }
        Object::CronJob(cj) => {
            let mut row = vec![
                cj.metadata.name.clone(),
                cj.spec.schedule.clone(),
                cj.spec.time_zone.clone().unwrap_or_else(|| "<none>".into()),
                if cj.spec.suspend == Some(true) { "True".into() } else { "False".into() },
                cj.status.active.len().to_string(),
                cj.status.last_schedule_time.map_or("<none>".into(), |t| age(Some(t), now)),
                age(cj.metadata.creation_timestamp, now),
            ];
            if wide {
                row.extend(template_columns(
                    &cj.spec.job_template.spec.template,
                    cj.spec.job_template.spec.selector.as_ref(),
                ));
            }
            row
        }
        Object::StatefulSet(sts) => {
            let mut row = vec![
                sts.metadata.name.clone(),
                format!("{}/{}", sts.status.ready_replicas.unwrap_or(0), sts.spec.replicas.unwrap_or(1)),
                age(sts.metadata.creation_timestamp, now),
            ];
            if wide {
                row.extend(template_columns(&sts.spec.template, None).into_iter().take(2));
            }
            row
        }
        Object::ResourceQuota(q) => quota_row(q, now),
        Object::LimitRange(l) => role_row(&l.metadata),
        Object::Role(r) => role_row(&r.metadata),
        Object::ClusterRole(r) => role_row(&r.metadata),
        Object::RoleBinding(b) => binding_row(&b.metadata, &b.role_ref, &b.subjects, now, wide),
        Object::ClusterRoleBinding(b) => binding_row(&b.metadata, &b.role_ref, &b.subjects, now, wide),
        Object::StorageClass(_) | Object::PersistentVolume(_) | Object::PersistentVolumeClaim(_) => {
            super::storage_printers::row(object, now, wide)
        }
        Object::PodDisruptionBudget(p) => super::policy_printers::pdb_row(p, now),
        Object::Ingress(_) | Object::IngressClass(_) => super::networking_printers::row(object, now),
        Object::CustomResourceDefinition(_) | Object::Custom(_) => super::custom_printers::row(object, now, wide),
        Object::PriorityClass(p) => super::policy_printers::priority_class_row(p, now),
        Object::NetworkPolicy(p) => super::network_policy::row(p, now),
        Object::ValidatingWebhookConfiguration(_) | Object::MutatingWebhookConfiguration(_) => {
            super::webhook_printers::row(object, now)
        }
        Object::ValidatingAdmissionPolicy(_) | Object::ValidatingAdmissionPolicyBinding(_) => {
            super::admission_printers::row(object, now)
        }
        Object::ReplicationController(rc) => row(&Object::ReplicaSet(Box::new(rc.as_replica_set())), now, wide),
        Object::HorizontalPodAutoscaler(_) | Object::APIService(_) | Object::NodeMetrics(_) | Object::PodMetrics(_) => {
            super::autoscaling_printers::row(object, now)
        }
    }
}

/// A quota's row: `resource: used/hard` for each resource it caps, limits apart.
fn quota_row(q: &crate::api::ResourceQuota, now: Time) -> Vec<String> {
    let (mut requests, mut limits) = (Vec::new(), Vec::new());
    for (resource, hard) in &q.status.hard {
        let used = q.status.used.get(resource).map_or("0", |u| u.as_str());
        let cell = format!("{resource}: {used}/{hard}");
        if resource.starts_with("limits.") { limits.push(cell) } else { requests.push(cell) }
    }
    vec![q.metadata.name.clone(), age(q.metadata.creation_timestamp, now), requests.join(", "), limits.join(", ")]
}

/// A role's row: its name and when it was created (roles print no AGE).
fn role_row(meta: &crate::api::ObjectMeta) -> Vec<String> {
    vec![meta.name.clone(), meta.creation_timestamp.map(Time::rfc3339).unwrap_or_default()]
}

/// A binding's row: the role it grants as `Kind/name`; wide adds its users, groups and
/// service accounts (`namespace/name`).
fn binding_row(
    meta: &crate::api::ObjectMeta,
    role: &crate::api::RoleRef,
    subjects: &[crate::api::Subject],
    now: Time,
    wide: bool,
) -> Vec<String> {
    let mut row = vec![meta.name.clone(), format!("{}/{}", role.kind, role.name), age(meta.creation_timestamp, now)];
    if wide {
        let of = |kind: &str| -> String {
            let names: Vec<String> = subjects
                .iter()
                .filter(|s| s.kind == kind)
                .map(|s| if kind == "ServiceAccount" { format!("{}/{}", s.namespace, s.name) } else { s.name.clone() })
                .collect();
            names.join(", ")
        };
        row.extend([of("User"), of("Group"), of("ServiceAccount")]);
    }
    row
}

/// CONTAINERS, IMAGES and SELECTOR, as workloads' `-o wide` shows them.
fn template_columns(
    template: &crate::api::PodTemplateSpec,
    selector: Option<&crate::api::LabelSelector>,
) -> Vec<String> {
    let names: Vec<&str> = template.spec.containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = template.spec.containers.iter().map(|c| c.image.as_str()).collect();
    let sel = selector.map(|s| s.to_selector_string()).filter(|s| !s.is_empty()).unwrap_or_else(|| "<none>".into());
    vec![names.join(","), images.join(","), sel]
}

/// Up to `max` items joined with commas, then ` + N more...`, as endpoint lists print.
fn format_list(items: &[String], max: usize) -> String {
    if items.is_empty() {
        return "<none>".into();
    }
    let shown = items[..items.len().min(max)].join(",");
    if items.len() > max { format!("{shown} + {} more...", items.len() - max) } else { shown }
}

/// What the STATUS column says about a pod.
pub struct PodSummary {
    pub ready: usize,
    pub total: usize,
    pub status: String,
    pub restarts: i32,
    pub last_restart: Option<Time>,
}

pub fn summarize_pod(pod: &Pod) -> PodSummary {
    let st = &pod.status;
    let mut reason = if st.reason.is_empty() { st.phase.clone() } else { st.reason.clone() };
    if reason.is_empty() {
        reason = "Pending".into();
    }
    // A pod held back by scheduling gates says so.
    if st.conditions.iter().any(|c| c.type_ == "PodScheduled" && c.reason == "SchedulingGated") {
        reason = "SchedulingGated".into();
    }
    let mut restarts = 0;
    let mut ready = 0;
    let mut last_restart: Option<Time> = None;
    let mut initializing = false;
    let total_init = pod.spec.init_containers.len();
    // Sidecars (init containers that restart Always) count among the pod's containers.
    let is_sidecar = |name: &str| {
        pod.spec.init_containers.iter().any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"))
    };
    let sidecars = pod.spec.init_containers.iter().filter(|c| is_sidecar(&c.name)).count();
    for (i, c) in st.init_container_statuses.iter().enumerate() {
        restarts += c.restart_count;
        if let Some(t) = &c.last_state.terminated {
            last_restart = last_restart.max(t.finished_at);
        }
        // A started sidecar lets initialization go on; it counts as ready when it is.
        if is_sidecar(&c.name) && c.started == Some(true) {
            if c.ready {
                ready += 1;
            }
            continue;
        }
        if let Some(t) = &c.state.terminated {
            if t.exit_code == 0 {
                continue;
            }
            initializing = true;
            reason = if !t.reason.is_empty() {
                format!("Init:{}", t.reason)
            } else if let Some(sig) = t.signal {
                format!("Init:Signal:{sig}")
            } else {
                format!("Init:ExitCode:{}", t.exit_code)
            };
        } else if let Some(w) =
            c.state.waiting.as_ref().filter(|w| !w.reason.is_empty() && w.reason != "PodInitializing")
        {
            initializing = true;
            reason = format!("Init:{}", w.reason);
        } else {
            initializing = true;
            reason = format!("Init:{i}/{total_init}");
        }
        break;
    }
    let initialized = pod.condition("Initialized").is_some_and(|c| c.status == "True");
    if !initializing || initialized {
        let mut has_running = false;
        for c in st.container_statuses.iter().rev() {
            restarts += c.restart_count;
            if let Some(t) = &c.last_state.terminated {
                last_restart = last_restart.max(t.finished_at);
            }
            if let Some(w) = c.state.waiting.as_ref().filter(|w| !w.reason.is_empty()) {
                reason = w.reason.clone();
            } else if let Some(t) = &c.state.terminated {
                reason = if !t.reason.is_empty() {
                    t.reason.clone()
                } else if let Some(sig) = t.signal.filter(|s| *s != 0) {
                    format!("Signal:{sig}")
                } else {
                    format!("ExitCode:{}", t.exit_code)
                };
            } else if c.ready && c.state.running.is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if pod.condition("Ready").is_some_and(|c| c.status == "True") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    if pod.metadata.deletion_timestamp.is_some() {
        if st.reason == "NodeLost" {
            reason = "Unknown".into();
        } else if !pod.is_terminal() {
            reason = "Terminating".into();
        }
    }
    PodSummary { ready, total: pod.spec.containers.len() + sidecars, status: reason, restarts, last_restart }
}

fn pod_row(pod: &Pod, now: Time, wide: bool) -> Vec<String> {
    let s = summarize_pod(pod);
    let restarts = match s.last_restart {
        Some(t) if s.restarts > 0 => format!("{} ({} ago)", s.restarts, age(Some(t), now)),
        _ => s.restarts.to_string(),
    };
    let mut row = vec![
        pod.metadata.name.clone(),
        format!("{}/{}", s.ready, s.total),
        s.status,
        restarts,
        age(pod.metadata.creation_timestamp, now),
    ];
    if wide {
        let none = |s: &str| if s.is_empty() { "<none>".to_string() } else { s.to_string() };
        row.push(none(&pod.status.pod_ip));
        row.push(none(&pod.spec.node_name));
        row.push(none(&pod.status.nominated_node_name));
        row.push("<none>".into());
    }
    row
}

/// `Ready`, `NotReady` or `Unknown`, plus `,SchedulingDisabled` when cordoned.
pub fn node_status(node: &Node) -> String {
    let mut s = node.readiness().to_string();
    if node.spec.unschedulable {
        s.push_str(",SchedulingDisabled");
    }
    s
}

/// The ROLES column: `node-role.kubernetes.io/<role>` labels, else `<none>`.
pub fn node_roles(node: &Node) -> String {
    let mut roles: Vec<&str> = node
        .metadata
        .labels
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix("node-role.kubernetes.io/")
                .filter(|r| !r.is_empty())
                .or_else(|| (k == "kubernetes.io/role").then_some(v.as_str()))
        })
        .collect();
    roles.stable_sort();
    roles.dedup();
    if roles.is_empty() { "<none>".into() } else { roles.join(",") }
}

fn node_row(node: &Node, now: Time, wide: bool) -> Vec<String> {
    let info = node.status.node_info.clone().unwrap_or_default();
    let mut row = vec![
        node.metadata.name.clone(),
        node_status(node),
        node_roles(node),
        age(node.metadata.creation_timestamp, now),
        info.kubelet_version.clone(),
    ];
    if wide {
        let addr = |t: &str| {
            node.status.addresses.iter().find(|a| a.type_ == t).map_or("<none>".to_string(), |a| a.address.clone())
        };
        row.push(addr("InternalIP"));
        row.push(addr("ExternalIP"));
        row.push(info.os_image);
        row.push(info.kernel_version);
        row.push(info.container_runtime_version);
    }
    row
}

fn namespace_row(ns: &Namespace, now: Time) -> Vec<String> {
    let phase = if ns.status.phase.is_empty() { "Active" } else { &ns.status.phase };
    vec![ns.metadata.name.clone(), phase.to_string(), age(ns.metadata.creation_timestamp, now)]
}

fn lease_row(lease: &Lease, now: Time) -> Vec<String> {
    let holder = lease.spec.holder_identity.clone().unwrap_or_default();
    vec![lease.metadata.name.clone(), holder, age(lease.metadata.creation_timestamp, now)]
}

/// The OBJECT column of an event: `pod/web`.
pub fn event_target(e: &Event) -> String {
    let kind = e.involved_object.kind.to_lowercase();
    if e.involved_object.name.is_empty() { kind } else { format!("{kind}/{}", e.involved_object.name) }
}

fn event_row(e: &Event, now: Time, wide: bool) -> Vec<String> {
    let first = e.first_timestamp.or(e.event_time.map(|t| t.0));
    let last = e.last_timestamp.or(first);
    let count = e.count.filter(|c| *c > 0).unwrap_or(1);
    let message = e.message.trim().to_string();
    if wide {
        vec![
            age(last, now),
            e.type_.clone(),
            e.reason.clone(),
            event_target(e),
            e.involved_object.field_path.clone(),
            e.source_text(),
            message,
            age(first, now),
            count.to_string(),
            e.metadata.name.clone(),
        ]
    } else {
        let last_seen =
            if count > 1 { format!("{} (x{count} over {})", age(last, now), age(first, now)) } else { age(last, now) };
        vec![last_seen, e.type_.clone(), e.reason.clone(), event_target(e), message]
    }
}

/// `kind/name` as `-o name` and confirmations print it (`pod/web`, `deployment.apps/web`).
pub fn type_name(object: &Object) -> String {
    format!("{}/{}", object.kind().qualified_singular(), object.name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Container;
    use crate::api::pod::{ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus};

    fn pod_with(statuses: Vec<ContainerStatus>) -> Pod {
        let mut p = Pod::default();
        std::sync::Arc::make_mut(&mut p.spec).containers =
            statuses.iter().map(|s| Container { name: s.name.clone(), ..Default::default() }.into()).collect();
        std::sync::Arc::make_mut(&mut p.status).phase = "Running".into();
        std::sync::Arc::make_mut(&mut p.status).container_statuses = statuses;
        p
    }

    fn waiting(reason: &str) -> ContainerStatus {
        ContainerStatus {
            name: "c".into(),
            state: ContainerState {
                waiting: Some(ContainerStateWaiting { reason: reason.into(), message: String::new() }),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_waiting_reason_becomes_the_status() {
        assert_eq!(summarize_pod(&pod_with(vec![waiting("CrashLoopBackOff")])).status, "CrashLoopBackOff");
    }

    #[test]
    fn terminated_without_reason_prints_its_exit_code() {
        let mut s = waiting("");
        s.state = ContainerState {
            terminated: Some(Box::new(ContainerStateTerminated { exit_code: 3, ..Default::default() })),
            ..Default::default()
        };
        assert_eq!(summarize_pod(&pod_with(vec![s])).status, "ExitCode:3");
    }

    #[test]
    fn a_deleted_pod_is_terminating() {
        let mut p = pod_with(vec![]);
        p.metadata.deletion_timestamp = Some(Time(5));
        assert_eq!(summarize_pod(&p).status, "Terminating");
    }
}
