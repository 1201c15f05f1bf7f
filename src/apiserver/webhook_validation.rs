//! Validation of the webhook configurations (Validating/MutatingWebhookConfiguration), with
//! the API server's error texts: each webhook's name, client config, rules, policies, side
//! effects, timeout and AdmissionReview versions.

use super::validation::{DNS_SUBDOMAIN_MSG, is_dns_subdomain};
use crate::api::Object;
use crate::api::admission_webhook::Webhook;
use std::collections::BTreeSet;

/// Field errors of a webhook configuration (none for other kinds).
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn validate(object: &Object, errors: &mut Vec<String>) {
    let (webhooks, mutating) = match object {
        Object::ValidatingWebhookConfiguration(c) => (&c.webhooks, false),
        Object::MutatingWebhookConfiguration(c) => (&c.webhooks, true),
        _ => return,
    };
    let mut seen = BTreeSet::new();
    for (i, hook) in webhooks.iter().enumerate() {
        let at = format!("webhooks[{i}]");
        validate_webhook(hook, &at, mutating, errors);
        if !hook.name.is_empty() && !seen.insert(hook.name.as_str()) {
            errors.push(format!("{at}.name: Duplicate value: \"{}\"", hook.name));
        }
    }
}

fn unsupported(field: &str, value: &str, supported: &[&str]) -> String {
    let list: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
    format!("{field}: Unsupported value: \"{value}\": supported values: {}", list.join(", "))
}

fn validate_webhook(hook: &Webhook, at: &str, mutating: bool, errors: &mut Vec<String>) {
    // The name: a fully qualified domain name.
    if hook.name.is_empty() {
        errors.push(format!("{at}.name: Required value"));
    } else if !is_dns_subdomain(&hook.name) {
        errors.push(format!("{at}.name: Invalid value: \"{}\": {DNS_SUBDOMAIN_MSG}", hook.name));
    } else if hook.name.split('.').count() < 3 {
        errors.push(format!(
            "{at}.name: Invalid value: \"{}\": should be a domain with at least three segments separated by dots",
            hook.name
        ));
    }
    validate_client_config(hook, at, errors);
    for (r, rule) in hook.rules.iter().enumerate() {
        let rat = format!("{at}.rules[{r}]");
        for (list, field) in [(&rule.operations, "operations"), (&rule.api_groups, "apiGroups")]
            .into_iter()
            .chain([(&rule.api_versions, "apiVersions"), (&rule.resources, "resources")])
        {
            if list.is_empty() {
                errors.push(format!("{rat}.{field}: Required value"));
            }
        }
        for (o, op) in rule.operations.iter().enumerate() {
            if !["*", "CONNECT", "CREATE", "DELETE", "UPDATE"].contains(&op.as_str()) {
                errors.push(unsupported(
                    &format!("{rat}.operations[{o}]"),
                    op,
                    &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"],
                ));
            }
        }
        if let Some(scope) = rule.scope.as_deref().filter(|s| !["*", "Cluster", "Namespaced"].contains(s)) {
            errors.push(unsupported(&format!("{rat}.scope"), scope, &["*", "Cluster", "Namespaced"]));
        }
    }
    if let Some(p) = hook.failure_policy.as_deref().filter(|p| !["Fail", "Ignore"].contains(p)) {
        errors.push(unsupported(&format!("{at}.failurePolicy"), p, &["Fail", "Ignore"]));
    }
    if let Some(p) = hook.match_policy.as_deref().filter(|p| !["Equivalent", "Exact"].contains(p)) {
        errors.push(unsupported(&format!("{at}.matchPolicy"), p, &["Equivalent", "Exact"]));
    }
    match hook.side_effects.as_deref() {
        None | Some("") => {
            errors.push(format!("{at}.sideEffects: Required value: must specify one of None, NoneOnDryRun"))
        }
        Some("None" | "NoneOnDryRun") => {}
        Some(other) => errors.push(unsupported(&format!("{at}.sideEffects"), other, &["None", "NoneOnDryRun"])),
    }
    if let Some(t) = hook.timeout_seconds.filter(|t| !(1..=30).contains(t)) {
        errors.push(format!(
            "{at}.timeoutSeconds: Invalid value: {t}: the timeout value must be between 1 and 30 seconds"
        ));
    }
    let versions = &hook.admission_review_versions;
    if versions.is_empty() {
        errors.push(format!("{at}.admissionReviewVersions: Required value: must specify one of v1, v1beta1"));
    } else if !versions.iter().any(|v| v == "v1" || v == "v1beta1") {
        let list: Vec<String> = versions.iter().map(|v| format!("\"{v}\"")).collect();
        errors.push(format!(
            "{at}.admissionReviewVersions: Unsupported value: []string{{{}}}: must include at least one of v1, v1beta1",
            list.join(", ")
        ));
    }
    // (A validating webhook cannot have one: decoding refuses the field.)
    if let Some(p) = hook.reinvocation_policy.as_deref().filter(|p| mutating && !["IfNeeded", "Never"].contains(p)) {
        errors.push(unsupported(&format!("{at}.reinvocationPolicy"), p, &["IfNeeded", "Never"]));
    }
}

fn validate_client_config(hook: &Webhook, at: &str, errors: &mut Vec<String>) {
    let config = &hook.client_config;
    match (&config.url, &config.service) {
        (Some(url), None) => {
            let field = format!("{at}.clientConfig.url");
            match url.split_once("://") {
                Some(("https", rest)) => {
                    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
                    if host.is_empty() {
                        errors.push(format!("{field}: Invalid value: \"{url}\": host must be specified"));
                    } else if url.contains('#') {
                        errors.push(format!("{field}: Invalid value: \"{url}\": fragments are not permitted"));
                    } else if url.contains('?') {
                        errors.push(format!("{field}: Invalid value: \"{url}\": query parameters are not permitted"));
                    }
                }
                _ => errors.push(format!("{field}: Invalid value: \"{url}\": 'https' is the only allowed URL scheme")),
            }
        }
        (None, Some(service)) => {
            let field = format!("{at}.clientConfig.service");
            if service.name.is_empty() {
                errors.push(format!("{field}.name: Required value: service name is required"));
            }
            if service.namespace.is_empty() {
                errors.push(format!("{field}.namespace: Required value: service namespace is required"));
            }
            if let Some(port) = service.port.filter(|p| !(1..=65535).contains(p)) {
                errors.push(format!(
                    "{field}.port: Invalid value: {port}: port is not valid: must be between 1 and 65535, inclusive"
                ));
            }
            if let Some(path) = service.path.as_deref().filter(|p| !p.is_empty() && !p.starts_with('/')) {
                errors.push(format!("{field}.path: Invalid value: \"{path}\": must start with a '/'"));
            }
        }
        _ => errors.push(format!("{at}.clientConfig: Required value: exactly one of url or service is required")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::admission_webhook::{ServiceReference, ValidatingWebhookConfiguration};

    fn hook(name: &str) -> Webhook {
        let mut hook = Webhook {
            name: name.into(),
            side_effects: Some("None".into()),
            admission_review_versions: vec!["v1".into()],
            ..Default::default()
        };
        hook.client_config.service =
            Some(ServiceReference { namespace: "webhooks".into(), name: "policy".into(), ..Default::default() });
        hook.set_defaults(false);
        hook
    }

    fn errors_of(hooks: Vec<Webhook>) -> Vec<String> {
        let config = ValidatingWebhookConfiguration { webhooks: hooks, ..Default::default() };
        let mut errors = Vec::new();
        validate(&Object::ValidatingWebhookConfiguration(Box::new(config)), &mut errors);
        errors
    }

    #[test]
    fn a_webhook_named_with_three_segments_and_its_required_fields_is_valid() {
        assert_eq!(errors_of(vec![hook("pods.policy.example.com")]), Vec::<String>::new());
    }

    #[test]
    fn a_webhook_name_needs_three_segments_and_must_be_unique() {
        let errors = errors_of(vec![hook("policy.example"), hook("a.b.c"), hook("a.b.c")]);
        assert_eq!(
            errors,
            [
                "webhooks[0].name: Invalid value: \"policy.example\": should be a domain with at least three segments separated by dots",
                "webhooks[2].name: Duplicate value: \"a.b.c\"",
            ]
        );
    }

    #[test]
    fn side_effects_review_versions_and_the_timeout_are_checked() {
        let mut h = hook("a.b.c");
        h.side_effects = None;
        h.admission_review_versions.clear();
        h.timeout_seconds = Some(31);
        assert_eq!(
            errors_of(vec![h]),
            [
                "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
                "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
                "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
            ]
        );
    }

    #[test]
    fn a_client_config_names_a_service_or_an_https_url_not_both() {
        let mut h = hook("a.b.c");
        h.client_config.url = Some("https://example.com/x".into());
        assert_eq!(
            errors_of(vec![h.clone()]),
            ["webhooks[0].clientConfig: Required value: exactly one of url or service is required"]
        );
        h.client_config.service = None;
        h.client_config.url = Some("http://example.com/x".into());
        assert_eq!(
            errors_of(vec![h]),
            [
                "webhooks[0].clientConfig.url: Invalid value: \"http://example.com/x\": 'https' is the only allowed URL scheme"
            ]
        );
    }
}
