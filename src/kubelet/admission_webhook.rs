//! `kubeloop/admission-webhook`: the sandbox's own admission webhook server. It answers
//! AdmissionReviews POSTed over HTTPS (port 8443 unless `--port`) by simple rules its flags
//! set: at `/validate` it refuses objects without a label or with images from other
//! registries, and warns about `:latest` images; at `/mutate` it answers with a JSONPatch
//! adding labels, annotations and default resource requests. `--delay` makes it answer late.
//!
//! Flags (each may be repeated; lists are comma-separated):
//! - `--port=8443`: where it listens.
//! - `--require-label=KEY`: refuse objects without the label KEY.
//! - `--allowed-registries=PREFIX[,PREFIX]`: refuse pods (and pod templates) with an image
//!   that starts with none of them.
//! - `--warn-latest`: allow, with a warning, an image tagged `:latest` or not at all.
//! - `--add-label=KEY=VALUE`, `--add-annotation=KEY=VALUE`: set them on the object (mutate).
//! - `--default-requests=cpu=100m,memory=64Mi`: give containers without requests these.
//! - `--delay=15s`: answer only after this long (to see a webhook's timeout).

use crate::api::Pod;
use crate::apiserver::webhooks::{PodReply, ReviewAnswer as Answer};
use serde_json::{Value, json};

/// The image's repository (as the catalog names it).
pub const REPOSITORY: &str = "kubeloop/admission-webhook";
/// Where it listens by default.
pub const DEFAULT_PORT: u16 = 8443;

/// What the server was told by its flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rules {
    pub port: u16,
    pub require_labels: Vec<String>,
    pub allowed_registries: Vec<String>,
    pub warn_latest: bool,
    pub add_labels: Vec<(String, String)>,
    pub add_annotations: Vec<(String, String)>,
    pub default_requests: Vec<(String, String)>,
    /// Seconds before it answers.
    pub delay: u64,
}

impl Rules {
    /// The rules a command line gives (`--flag=value` or `--flag value`); unknown flags are
    /// ignored, as the server only logs them.
    pub fn from_args(args: &[String]) -> Rules {
        let mut rules = Rules { port: DEFAULT_PORT, ..Default::default() };
        let mut words = args.iter().peekable();
        while let Some(word) = words.next() {
            let Some(flag) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else { continue };
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n, v.to_string()),
                None if flag == "warn-latest" => (flag, String::new()),
                None => (flag, words.next().cloned().unwrap_or_default()),
            };
            let pairs = |v: &str| -> Vec<(String, String)> {
                v.split(',')
                    .filter_map(|p| p.split_once('='))
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .filter(|(k, _)| !k.is_empty())
                    .collect()
            };
            match name {
                "port" => rules.port = value.parse().unwrap_or(DEFAULT_PORT),
                "require-label" => rules.require_labels.push(value),
                "allowed-registries" => {
                    rules.allowed_registries.extend(value.split(',').filter(|r| !r.is_empty()).map(String::from))
                }
                "warn-latest" => rules.warn_latest = value != "false",
                "add-label" => rules.add_labels.extend(pairs(&value)),
                "add-annotation" => rules.add_annotations.extend(pairs(&value)),
                "default-requests" => rules.default_requests.extend(pairs(&value)),
                "delay" => {
                    rules.delay =
                        crate::sim::time::parse_go_nanos(&value).map_or(0, |n| n.max(0) as u64 / 1_000_000_000)
                }
                _ => {}
            }
        }
        rules
    }

    /// The line it logs as it starts.
    pub fn banner(&self) -> String {
        format!("$LOGTIME admission-webhook: serving AdmissionReviews over TLS on :{} (/validate, /mutate)", self.port)
    }

    /// The answer to a review POSTed at `path` about `object` (the request's new object, or
    /// the old one on DELETE). `None`: the path is not served (404).
    pub fn review(&self, path: &str, object: &Value) -> Option<Answer> {
        match path {
            "/validate" => Some(self.validate(object)),
            "/mutate" => Some(self.mutate(object)),
            _ => None,
        }
    }

    fn validate(&self, object: &Value) -> Answer {
        let deny = |message: String| Answer { allowed: false, message, ..Default::default() };
        let labels = &object["metadata"]["labels"];
        for key in &self.require_labels {
            if labels.get(key).is_none() {
                return deny(format!("missing required label \"{key}\""));
            }
        }
        let mut warnings = Vec::new();
        for (at, image) in images(object) {
            if !self.allowed_registries.is_empty() && !self.allowed_registries.iter().any(|r| image.starts_with(r)) {
                return deny(format!(
                    "{at}: image \"{image}\" is not from an allowed registry ({})",
                    self.allowed_registries.join(", ")
                ));
            }
            if self.warn_latest && crate::apiserver::admission::image_tag_is_latest(&image) {
                warnings.push(format!("{at}: image \"{image}\" uses the latest tag"));
            }
        }
        Answer { allowed: true, warnings, ..Default::default() }
    }

    fn mutate(&self, object: &Value) -> Answer {
        let mut patch = Vec::new();
        for (field, pairs) in [("labels", &self.add_labels), ("annotations", &self.add_annotations)] {
            let existing = &object["metadata"][field];
            let mut fresh = serde_json::Map::new();
            for (key, value) in pairs {
                if existing.is_object() {
                    let path = format!("/metadata/{field}/{}", key.replace('~', "~0").replace('/', "~1"));
                    patch.push(json!({"op": "add", "path": path, "value": value}));
                } else {
                    fresh.insert(key.clone(), json!(value));
                }
            }
            if !fresh.is_empty() {
                patch.push(json!({"op": "add", "path": format!("/metadata/{field}"), "value": fresh}));
            }
        }
        if !self.default_requests.is_empty() {
            for (pointer, container) in containers(object) {
                let requests = &container["resources"]["requests"];
                let missing: serde_json::Map<String, Value> = self
                    .default_requests
                    .iter()
                    .filter(|(r, _)| requests.get(r).is_none())
                    .map(|(r, q)| (r.clone(), json!(q)))
                    .collect();
                if missing.is_empty() {
                    continue;
                }
                if requests.is_object() {
                    for (r, q) in missing {
                        patch.push(
                            json!({"op": "add", "path": format!("{pointer}/resources/requests/{r}"), "value": q}),
                        );
                    }
                } else if container["resources"].is_object() {
                    patch.push(json!({"op": "add", "path": format!("{pointer}/resources/requests"), "value": missing}));
                } else {
                    patch.push(
                        json!({"op": "add", "path": format!("{pointer}/resources"), "value": {"requests": missing}}),
                    );
                }
            }
        }
        Answer { allowed: true, patch, ..Default::default() }
    }
}

/// Where a pod's containers are in an object: a pod's, or a workload's template's.
fn pod_spec_pointer(object: &Value) -> Option<&'static str> {
    ["/spec", "/spec/template/spec", "/spec/jobTemplate/spec/template/spec"]
        .into_iter()
        .find(|p| object.pointer(&format!("{p}/containers")).is_some_and(Value::is_array))
}

/// Each container of the object's pod spec, with its JSON pointer.
fn containers(object: &Value) -> Vec<(String, &Value)> {
    let Some(spec) = pod_spec_pointer(object) else { return Vec::new() };
    let mut all = Vec::new();
    for list in ["initContainers", "containers"] {
        if let Some(Value::Array(items)) = object.pointer(&format!("{spec}/{list}")) {
            all.extend(items.iter().enumerate().map(|(i, c)| (format!("{spec}/{list}/{i}"), c)));
        }
    }
    all
}

/// Each container's image, with the field it is at (`spec.containers[0].image`).
fn images(object: &Value) -> Vec<(String, String)> {
    containers(object)
        .into_iter()
        .map(|(pointer, c)| {
            let mut at = String::new();
            for part in pointer.trim_start_matches('/').split('/') {
                if part.parse::<usize>().is_ok() {
                    at.push_str(&format!("[{part}]"));
                } else {
                    if !at.is_empty() {
                        at.push('.');
                    }
                    at.push_str(part);
                }
            }
            (format!("{at}.image"), c["image"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

/// What a pod answers to an AdmissionReview POSTed at `port` and `path` (the cluster
/// network as the API server's webhook client reaches it): this image's container listening
/// there answers by its rules; another server there speaks plain HTTP; nothing there refuses
/// the connection. `ip` is the pod's address, for the error texts.
pub fn call(pod: &Pod, ip: &str, port: i32, path: &str, object: &Value) -> Result<PodReply, String> {
    use super::images::{Behaviour, CATALOG, parse_reference};
    for c in &pod.spec.containers {
        let repository = parse_reference(&c.image).repository;
        if repository == REPOSITORY {
            let argv = super::entrypoint::argv(&repository, &c.command, &c.args);
            let rules = Rules::from_args(argv.get(1..).unwrap_or_default());
            if i32::from(rules.port) == port {
                return Ok(PodReply { delay: rules.delay, answer: rules.review(path, object) });
            }
            continue;
        }
        let catalog = CATALOG.iter().find(|i| i.repository == repository);
        let listens =
            matches!(catalog.map(|i| i.behaviour), Some(Behaviour::Server { port: p }) if i32::from(p) == port);
        if listens || (catalog.is_some() && c.ports.iter().any(|p| p.container_port == port)) {
            return Err("http: server gave HTTP response to HTTPS client".into());
        }
    }
    Err(format!("dial tcp {ip}:{port}: connect: connection refused"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(line: &str) -> Rules {
        Rules::from_args(&line.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    fn pod(labels: Value, image: &str) -> Value {
        json!({"metadata": {"name": "p", "labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}})
    }

    #[test]
    fn flags_set_the_rules_and_the_port_defaults_to_8443() {
        let r = rules("--require-label=team --allowed-registries=registry.k8s.io/,docker.io/ --delay 15s");
        assert_eq!(r.port, 8443);
        assert_eq!(r.require_labels, ["team"]);
        assert_eq!(r.allowed_registries, ["registry.k8s.io/", "docker.io/"]);
        assert_eq!(r.delay, 15);
    }

    #[test]
    fn a_pod_without_the_required_label_is_refused_and_one_with_it_allowed() {
        let r = rules("--require-label=team");
        let no = r.review("/validate", &pod(json!({"run": "p"}), "nginx")).unwrap();
        assert_eq!((no.allowed, no.message.as_str()), (false, "missing required label \"team\""));
        assert!(r.review("/validate", &pod(json!({"team": "a"}), "nginx")).unwrap().allowed);
        assert_eq!(r.review("/other", &pod(json!({}), "nginx")), None);
    }

    #[test]
    fn images_from_other_registries_are_refused_and_latest_ones_warned_about() {
        let r = rules("--allowed-registries=registry.k8s.io/ --warn-latest");
        let no = r.review("/validate", &pod(json!({}), "nginx:1.25")).unwrap();
        assert_eq!(
            no.message,
            "spec.containers[0].image: image \"nginx:1.25\" is not from an allowed registry (registry.k8s.io/)"
        );
        let yes = r.review("/validate", &pod(json!({}), "registry.k8s.io/pause")).unwrap();
        assert_eq!(yes.warnings, ["spec.containers[0].image: image \"registry.k8s.io/pause\" uses the latest tag"]);
    }

    #[test]
    fn the_mutating_answer_is_a_json_patch_of_labels_and_default_requests() {
        let r = rules("--add-label=team=web --default-requests=cpu=100m");
        let answer = r.review("/mutate", &pod(json!({"run": "p"}), "nginx")).unwrap();
        assert_eq!(
            answer.patch,
            [
                json!({"op": "add", "path": "/metadata/labels/team", "value": "web"}),
                json!({"op": "add", "path": "/spec/containers/0/resources", "value": {"requests": {"cpu": "100m"}}}),
            ]
        );
    }
}
