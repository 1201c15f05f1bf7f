//! Validation: the API server's checks of an object's fields, with upstream's error texts.

use crate::api::{Object, Pod};

const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
pub(super) const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

pub fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// The most all of an object's annotations (keys and values) may hold, in bytes.
pub const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;
/// The most a ConfigMap's or Secret's data may hold, in bytes.
pub const MAX_DATA_BYTES: usize = 1024 * 1024;

/// `<field>: Too long: may not be more than <n> bytes` (upstream's words since 1.32; older
/// releases said `must have at most <n> bytes`).
fn too_long(field: &str, max: usize) -> String {
    format!("{field}: Too long: may not be more than {max} bytes")
}

/// How many bytes a base64 text decodes to.
fn decoded_len(text: &str) -> usize {
    let padding = text.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (text.len() / 4 * 3 + (text.len() % 4).saturating_sub(1)).saturating_sub(padding)
}

/// `<field>: Invalid value: "<value>": <detail>`
fn invalid(field: &str, value: &str, detail: &str) -> String {
    format!("{field}: Invalid value: \"{value}\": {detail}")
}

/// Field errors of a new or updated object, empty when it is valid.
pub fn validate(object: &Object) -> Vec<String> {
    let mut errors = validate_metadata(object);
    super::storage_admission::validate(object, &mut errors);
    super::networking_admission::validate(object, &mut errors);
    match object {
        Object::CustomResourceDefinition(crd) => errors.extend(super::apiextensions::validate_crd(crd)),
        Object::Pod(pod) => validate_pod_spec(&pod.spec, "spec", &mut errors),
        Object::Deployment(d) => {
            validate_replicas(d.spec.replicas, &mut errors);
            validate_workload(d.spec.selector.as_ref(), &d.spec.template, true, &mut errors);
        }
        Object::ReplicaSet(rs) => {
            validate_replicas(rs.spec.replicas, &mut errors);
            validate_workload(rs.spec.selector.as_ref(), &rs.spec.template, true, &mut errors);
        }
        Object::DaemonSet(ds) => validate_workload(ds.spec.selector.as_ref(), &ds.spec.template, true, &mut errors),
        Object::StatefulSet(sts) => {
            validate_replicas(sts.spec.replicas, &mut errors);
            validate_workload(sts.spec.selector.as_ref(), &sts.spec.template, true, &mut errors);
            if let Some(p) =
                sts.spec.pod_management_policy.as_deref().filter(|p| !["OrderedReady", "Parallel"].contains(p))
            {
                errors.push(format!(
                    "spec.podManagementPolicy: Unsupported value: \"{p}\": supported values: \"OrderedReady\", \"Parallel\""
                ));
            }
        }
        Object::Job(job) => {
            validate_pod_spec(&job.spec.template.spec, "spec.template.spec", &mut errors);
            if job.spec.completion_mode.as_deref() == Some("Indexed") && job.spec.completions.is_none() {
                errors.push("spec.completions: Required value: when completion mode is Indexed".into());
            }
            let policy = job.spec.template.spec.restart_policy.as_deref().unwrap_or("Always");
            if !["OnFailure", "Never"].contains(&policy) {
                errors.push(
                    "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
                        .to_string(),
                );
            }
        }
        Object::CronJob(cj) => {
            if cj.spec.schedule.is_empty() {
                errors.push("spec.schedule: Required value".into());
            } else if let Err(e) = crate::util::cron::parse(&cj.spec.schedule) {
                errors.push(invalid("spec.schedule", &cj.spec.schedule, &e));
            }
            if let Some(p) =
                cj.spec.concurrency_policy.as_deref().filter(|p| !["Allow", "Forbid", "Replace"].contains(p))
            {
                errors.push(format!(
                    "spec.concurrencyPolicy: Unsupported value: \"{p}\": supported values: \"Allow\", \"Forbid\", \"Replace\""
                ));
            }
            let template = &cj.spec.job_template.spec.template;
            validate_pod_spec(&template.spec, "spec.jobTemplate.spec.template.spec", &mut errors);
            let policy = template.spec.restart_policy.as_deref().unwrap_or("Always");
            if !["OnFailure", "Never"].contains(&policy) {
                errors.push(
                    "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
                        .to_string(),
                );
            }
            // A Job is named after its CronJob and the minute it was scheduled for (11 more
            // characters), and must fit in 63.
            if cj.metadata.name.len() > 52 {
                errors.push(invalid("metadata.name", &cj.metadata.name, "must be no more than 52 characters"));
            }
        }
        Object::ConfigMap(cm) => {
            // Both bags count; the error names no field (upstream passes an empty path).
            let total: usize = cm.data.values().chain(cm.binary_data.values()).map(String::len).sum();
            if total > MAX_DATA_BYTES {
                errors.push(too_long("[]", MAX_DATA_BYTES));
            }
        }
        Object::Secret(secret) => {
            let total: usize = secret.data.values().map(|v| decoded_len(v)).sum::<usize>()
                + secret.string_data.values().map(String::len).sum::<usize>();
            if total > MAX_DATA_BYTES {
                errors.push(too_long("data", MAX_DATA_BYTES));
            }
        }
        Object::Service(svc) => {
            if let Some(t) = svc.spec.type_.as_deref() {
                if !["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"].contains(&t) {
                    errors.push(format!(
                        "spec.type: Unsupported value: \"{t}\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""
                    ));
                }
            }
            if svc.spec.ports.is_empty()
                && svc.spec.type_.as_deref() != Some("ExternalName")
                && svc.spec.cluster_ip != "None"
            {
                errors.push("spec.ports: Required value".into());
            }
            for (i, p) in svc.spec.ports.iter().enumerate() {
                if !(1..=65535).contains(&p.port) {
                    errors.push(format!(
                        "spec.ports[{i}].port: Invalid value: {}: must be between 1 and 65535, inclusive",
                        p.port
                    ));
                }
            }
        }
        Object::ReplicationController(rc) => {
            validate_replicas(rc.spec.replicas, &mut errors);
            match &rc.spec.template {
                None => errors.push("spec.template: Required value".into()),
                Some(t) => validate_workload(
                    Some(&rc.as_replica_set().spec.selector.unwrap_or_default()),
                    t,
                    true,
                    &mut errors,
                ),
            }
        }
        Object::PodDisruptionBudget(pdb) => super::policy_validation::validate_pdb(pdb, &mut errors),
        Object::PriorityClass(pc) => super::policy_validation::validate_priority_class(pc, &mut errors),
        Object::NetworkPolicy(p) => super::network_policy_validation::validate(p, &mut errors),
        Object::ValidatingWebhookConfiguration(_) | Object::MutatingWebhookConfiguration(_) => {
            super::webhook_validation::validate(object, &mut errors)
        }
        _ => super::rbac_validation::validate(object, &mut errors),
    }
    errors
}

/// What a write that keeps the stored spec (a status update) is checked for, as upstream's
/// status-update validation does: the metadata. The spec was checked when it was stored.
pub fn validate_metadata(object: &Object) -> Vec<String> {
    let mut errors = Vec::new();
    let meta = object.meta();
    if meta.name.is_empty() {
        errors.push("metadata.name: Required value: name or generateName is required".into());
    } else if object.kind().info().group == "rbac.authorization.k8s.io" {
        if let Some(problem) = super::rbac_validation::name_problem(&meta.name) {
            errors.push(invalid("metadata.name", &meta.name, problem));
        }
    } else if !is_dns_subdomain(&meta.name) {
        errors.push(invalid("metadata.name", &meta.name, DNS_SUBDOMAIN_MSG));
    }
    let annotations: usize = meta.annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if annotations > MAX_ANNOTATIONS_BYTES {
        errors.push(too_long("metadata.annotations", MAX_ANNOTATIONS_BYTES));
    }
    for (key, value) in &meta.labels {
        if value.len() > 63 {
            errors.push(invalid("metadata.labels", value, "must be no more than 63 characters"));
        }
        if key.is_empty() {
            errors.push("metadata.labels: Invalid value: \"\": name part must be non-empty".into());
        }
    }
    errors
}

fn validate_replicas(replicas: Option<i32>, errors: &mut Vec<String>) {
    if let Some(r) = replicas.filter(|r| *r < 0) {
        errors.push(format!("spec.replicas: Invalid value: {r}: must be greater than or equal to 0"));
    }
}

/// A controller's selector and pod template: the selector is required and must select the
/// template's labels; the template is a valid pod that always restarts.
fn validate_workload(
    selector: Option<&crate::api::LabelSelector>,
    template: &crate::api::PodTemplateSpec,
    always_restart: bool,
    errors: &mut Vec<String>,
) {
    match selector {
        None => errors.push("spec.selector: Required value".into()),
        Some(sel) if sel.match_labels.is_empty() && sel.match_expressions.is_empty() => {
            errors.push("spec.selector: Invalid value: \"null\": empty selector is invalid for deployment".into())
        }
        Some(sel) if !sel.matches(&template.metadata.labels) => {
            let labels = serde_json::to_string(&template.metadata.labels).unwrap_or_default();
            errors.push(format!(
                "spec.template.metadata.labels: Invalid value: {labels}: `selector` does not match template `labels`"
            ));
        }
        _ => {}
    }
    validate_pod_spec(&template.spec, "spec.template.spec", errors);
    if always_restart {
        if let Some(p) = template.spec.restart_policy.as_deref().filter(|p| *p != "Always") {
            errors.push(format!(
                "spec.template.spec.restartPolicy: Unsupported value: \"{p}\": supported values: \"Always\""
            ));
        }
    }
}

/// `spec.containers[0]`, written out only when an error names it.
struct ContainerPath<'a> {
    prefix: &'a str,
    list: &'static str,
    index: usize,
}

impl std::fmt::Display for ContainerPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}[{}]", self.prefix, self.list, self.index)
    }
}

fn validate_pod_spec(spec: &crate::api::PodSpec, prefix: &str, errors: &mut Vec<String>) {
    if spec.containers.is_empty() {
        errors.push(format!("{prefix}.containers: Required value"));
    }
    if !spec.scheduling_gates.is_empty() && !spec.node_name.is_empty() {
        errors.push(format!("{prefix}.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"));
    }
    let mut seen: Vec<&str> = Vec::new();
    // A container's path is spelled out only for an error: every pod write is validated.
    let all = spec
        .init_containers
        .iter()
        .enumerate()
        .map(|(i, c)| ("initContainers", i, c))
        .chain(spec.containers.iter().enumerate().map(|(i, c)| ("containers", i, c)));
    for (list, i, c) in all {
        let path = ContainerPath { prefix, list, index: i };
        if c.name.is_empty() {
            errors.push(format!("{path}.name: Required value"));
        } else if !is_dns_label(&c.name) {
            errors.push(invalid(&format!("{path}.name"), &c.name, DNS_LABEL_MSG));
        } else if seen.contains(&c.name.as_str()) {
            errors.push(format!("{path}.name: Duplicate value: \"{}\"", c.name));
        } else {
            seen.push(&c.name);
        }
        if c.image.trim().is_empty() {
            errors.push(format!("{path}.image: Required value"));
        }
        for (j, port) in c.ports.iter().enumerate() {
            let field = format_args!("{path}.ports[{j}].containerPort");
            if port.container_port == 0 {
                errors.push(format!("{field}: Required value"));
            } else if !(1..=65535).contains(&port.container_port) {
                errors.push(format!(
                    "{field}: Invalid value: {}: must be between 1 and 65535, inclusive",
                    port.container_port
                ));
            }
        }
        if let Some(policy) = &c.image_pull_policy {
            if !["Always", "IfNotPresent", "Never"].contains(&policy.as_str()) {
                errors.push(format!(
                    "{path}.imagePullPolicy: Unsupported value: \"{policy}\": supported values: \"Always\", \"IfNotPresent\", \"Never\""
                ));
            }
        }
        for (resource, request) in &c.resources.requests {
            if let Some(limit) = c.resources.limits.get(resource) {
                if request.milli() > limit.milli() {
                    errors.push(format!(
                        "{path}.resources.requests: Invalid value: \"{request}\": must be less than or equal to {resource} limit of {limit}"
                    ));
                }
            }
        }
    }
    if let Some(policy) = &spec.restart_policy {
        if !["Always", "OnFailure", "Never"].contains(&policy.as_str()) {
            errors.push(format!(
                "{prefix}.restartPolicy: Unsupported value: \"{policy}\": supported values: \"Always\", \"OnFailure\", \"Never\""
            ));
        }
    }
}

/// Checks an update against the fields that may not change once created.
pub fn validate_update(old: &Object, new: &Object) -> Vec<String> {
    let immutable = |old: Option<&crate::api::LabelSelector>, new: Option<&crate::api::LabelSelector>| {
        if old != new {
            let value = serde_json::to_string(&new).unwrap_or_default();
            vec![format!("spec.selector: Invalid value: {value}: field is immutable")]
        } else {
            Vec::new()
        }
    };
    match (old, new) {
        (Object::CustomResourceDefinition(o), Object::CustomResourceDefinition(n)) => {
            super::apiextensions::validate_crd_update(o, n)
        }
        (Object::Pod(o), Object::Pod(n)) => validate_pod_update(o, n),
        (Object::Deployment(o), Object::Deployment(n)) => immutable(o.spec.selector.as_ref(), n.spec.selector.as_ref()),
        (Object::ReplicaSet(o), Object::ReplicaSet(n)) => immutable(o.spec.selector.as_ref(), n.spec.selector.as_ref()),
        (Object::DaemonSet(o), Object::DaemonSet(n)) => immutable(o.spec.selector.as_ref(), n.spec.selector.as_ref()),
        (Object::Job(o), Object::Job(n)) if o.spec.template != n.spec.template => {
            vec!["spec.template: Invalid value: {...}: field is immutable".into()]
        }
        (Object::PersistentVolumeClaim(o), Object::PersistentVolumeClaim(n)) => {
            super::storage_admission::validate_claim_update(o, n)
        }
        (Object::PriorityClass(o), Object::PriorityClass(n)) => {
            super::policy_validation::validate_priority_class_update(o, n)
        }
        _ => super::rbac_validation::validate_update(old, new),
    }
}

/// Checks an update against the fields a pod may not change once created.
pub fn validate_pod_update(old: &Pod, new: &Pod) -> Vec<String> {
    // Most updates (every status write) carry the stored spec itself: nothing to compare.
    if std::sync::Arc::ptr_eq(&old.spec, &new.spec) {
        return Vec::new();
    }
    let strip = |p: &Pod| {
        let mut spec = (*p.spec).clone();
        for c in spec.containers.iter_mut().chain(spec.init_containers.iter_mut()).map(std::sync::Arc::make_mut) {
            c.image.clear();
        }
        spec.active_deadline_seconds = None;
        spec.tolerations.clear();
        spec.scheduling_gates.clear();
        spec.termination_grace_period_seconds = None;
        spec
    };
    // Scheduling gates may only be removed.
    let gate = |g: &serde_json::Value| g.get("name").and_then(|n| n.as_str()).unwrap_or_default().to_string();
    let before: Vec<String> = old.spec.scheduling_gates.iter().map(gate).collect();
    let added: Vec<String> = new
        .spec
        .scheduling_gates
        .iter()
        .enumerate()
        .filter(|(_, g)| !before.contains(&gate(g)))
        .map(|(i, g)| {
            format!(
                "spec.schedulingGates[{i}].name: Forbidden: only deletion is allowed, but found new scheduling gate '{}'",
                gate(g)
            )
        })
        .collect();
    if !added.is_empty() {
        return added;
    }
    if strip(old) != strip(new) {
        vec!["spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)".into()]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Container, ObjectMeta};

    fn pod_named(name: &str, containers: Vec<Container>) -> Object {
        let mut p = Pod { metadata: ObjectMeta { name: name.into(), ..Default::default() }, ..Default::default() };
        std::sync::Arc::make_mut(&mut p.spec).containers = containers.into_iter().map(Into::into).collect();
        Object::Pod(p)
    }

    #[test]
    fn a_pod_without_containers_is_invalid() {
        assert_eq!(validate(&pod_named("web", vec![])), ["spec.containers: Required value"]);
    }

    #[test]
    fn container_names_and_images_are_required_and_unique() {
        let c = |n: &str, i: &str| Container { name: n.into(), image: i.into(), ..Default::default() };
        let errs = validate(&pod_named("web", vec![c("", "nginx"), c("a", ""), c("a", "x")]));
        assert_eq!(
            errs,
            [
                "spec.containers[0].name: Required value",
                "spec.containers[1].image: Required value",
                "spec.containers[2].name: Duplicate value: \"a\""
            ]
        );
    }

    #[test]
    fn uppercase_names_are_not_dns_subdomains() {
        let errs =
            validate(&pod_named("Web", vec![Container { name: "c".into(), image: "i".into(), ..Default::default() }]));
        assert!(errs[0].starts_with("metadata.name: Invalid value: \"Web\": a lowercase RFC 1123 subdomain"));
    }

    #[test]
    fn annotations_over_256_kib_in_all_are_too_long() {
        let mut pod = pod_named("web", vec![Container { name: "c".into(), image: "i".into(), ..Default::default() }]);
        let Object::Pod(p) = &mut pod else { unreachable!() };
        p.metadata.annotations.insert("a".into(), "x".repeat(MAX_ANNOTATIONS_BYTES - 1));
        assert!(validate(&pod).is_empty(), "exactly at the limit is fine");
        let Object::Pod(p) = &mut pod else { unreachable!() };
        p.metadata.annotations.insert("b".into(), "y".into());
        assert_eq!(validate(&pod), ["metadata.annotations: Too long: may not be more than 262144 bytes"]);
    }

    #[test]
    fn config_map_and_secret_data_over_1_mib_is_too_long() {
        use crate::api::{ConfigMap, Secret};
        let meta = ObjectMeta { name: "big".into(), ..Default::default() };
        let mut cm = ConfigMap { metadata: meta.clone(), ..Default::default() };
        cm.data.insert("a".into(), "x".repeat(MAX_DATA_BYTES / 2));
        cm.binary_data.insert("b".into(), "y".repeat(MAX_DATA_BYTES / 2));
        assert!(validate(&Object::ConfigMap(cm.clone())).is_empty());
        cm.data.insert("c".into(), "z".into());
        assert_eq!(validate(&Object::ConfigMap(cm)), ["[]: Too long: may not be more than 1048576 bytes"]);
        // A Secret counts the bytes its base64 stands for.
        let mut secret = Secret { metadata: meta, ..Default::default() };
        secret.data.insert("a".into(), crate::util::base64::encode(&vec![7u8; MAX_DATA_BYTES]));
        assert!(validate(&Object::Secret(secret.clone())).is_empty());
        secret.data.insert("b".into(), "QQ==".into());
        assert_eq!(validate(&Object::Secret(secret)), ["data: Too long: may not be more than 1048576 bytes"]);
    }

    #[test]
    fn scheduling_gates_may_only_be_removed() {
        let gated = |names: &[&str]| {
            let mut p = Pod::default();
            std::sync::Arc::make_mut(&mut p.spec).scheduling_gates =
                names.iter().map(|n| serde_json::json!({"name": n})).collect();
            p
        };
        assert!(validate_pod_update(&gated(&["a", "b"]), &gated(&["b"])).is_empty());
        assert_eq!(
            validate_pod_update(&gated(&["a"]), &gated(&["a", "c"])),
            ["spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'c'"]
        );
    }
}
