//! Validation: the API server's checks of an object's fields, with upstream's error texts.

use crate::api::{Object, Pod};

const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

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

/// `<field>: Invalid value: "<value>": <detail>`
fn invalid(field: &str, value: &str, detail: &str) -> String {
    format!("{field}: Invalid value: \"{value}\": {detail}")
}

/// Field errors of a new or updated object, empty when it is valid.
pub fn validate(object: &Object) -> Vec<String> {
    let mut errors = Vec::new();
    let meta = object.meta();
    if meta.name.is_empty() {
        errors.push("metadata.name: Required value: name or generateName is required".into());
    } else if !is_dns_subdomain(&meta.name) {
        errors.push(invalid("metadata.name", &meta.name, DNS_SUBDOMAIN_MSG));
    }
    for (key, value) in &meta.labels {
        if value.len() > 63 {
            errors.push(invalid(&format!("metadata.labels"), value, "must be no more than 63 characters"));
        }
        if key.is_empty() {
            errors.push("metadata.labels: Invalid value: \"\": name part must be non-empty".into());
        }
    }
    if let Object::Pod(pod) = object {
        validate_pod(pod, &mut errors);
    }
    errors
}

fn validate_pod(pod: &Pod, errors: &mut Vec<String>) {
    let spec = &pod.spec;
    if spec.containers.is_empty() {
        errors.push("spec.containers: Required value".into());
    }
    let mut seen: Vec<&str> = Vec::new();
    let all = spec
        .init_containers
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("spec.initContainers[{i}]"), c))
        .chain(spec.containers.iter().enumerate().map(|(i, c)| (format!("spec.containers[{i}]"), c)));
    for (path, c) in all {
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
            let field = format!("{path}.ports[{j}].containerPort");
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
                "spec.restartPolicy: Unsupported value: \"{policy}\": supported values: \"Always\", \"OnFailure\", \"Never\""
            ));
        }
    }
}

/// Checks an update against the fields a pod may not change once created.
pub fn validate_pod_update(old: &Pod, new: &Pod) -> Vec<String> {
    let strip = |p: &Pod| {
        let mut spec = p.spec.clone();
        for c in spec.containers.iter_mut().chain(spec.init_containers.iter_mut()) {
            c.image.clear();
        }
        spec.active_deadline_seconds = None;
        spec.tolerations.clear();
        spec.termination_grace_period_seconds = None;
        spec
    };
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
        p.spec.containers = containers;
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
}
