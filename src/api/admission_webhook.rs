//! Dynamic admission (admissionregistration.k8s.io/v1): a ValidatingWebhookConfiguration or
//! MutatingWebhookConfiguration lists webhooks — HTTPS endpoints, usually a Service in the
//! cluster — that the API server sends an AdmissionReview for each request their rules match,
//! and whose answer allows, refuses or (mutating) patches the object.

use super::admission_policy::ResourceRule;
use super::meta::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValidatingWebhookConfiguration {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "validating_webhooks")]
    pub webhooks: Vec<Webhook>,
}

/// A validating webhook is a mutating one without `reinvocationPolicy`: strict decoding
/// refuses that field as unknown (with serde's words, which the decoder turns into a path).
fn validating_webhooks<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Webhook>, D::Error> {
    let hooks = Vec::<Webhook>::deserialize(d)?;
    if hooks.iter().any(|h| h.reinvocation_policy.is_some()) {
        return Err(serde::de::Error::custom(
            "unknown field `reinvocationPolicy`, expected one of `name`, `clientConfig`, `rules`, `failurePolicy`, `matchPolicy`, `namespaceSelector`, `objectSelector`, `sideEffects`, `timeoutSeconds`, `admissionReviewVersions`, `matchConditions`",
        ));
    }
    Ok(hooks)
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MutatingWebhookConfiguration {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<Webhook>,
}

/// One webhook of either configuration (a mutating one may also say `reinvocationPolicy`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Webhook {
    /// A qualified name of at least three segments (`pod-policy.example.com`).
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub client_config: ClientConfig,
    /// The resources and operations it is called for (the same shape as a policy's rules).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<ResourceRule>,
    /// `Fail` (the default) or `Ignore`: what a call that fails does to the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<String>,
    /// `Equivalent` (the default) or `Exact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<LabelSelector>,
    /// `None` or `NoneOnDryRun` (v1 allows no others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<String>,
    /// 1 to 30; 10 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub admission_review_versions: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_conditions: Vec<super::admission_policy::NamedExpression>,
    /// Mutating only: `Never` (the default) or `IfNeeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reinvocation_policy: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClientConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// The PEM bundle (base64) that signs the webhook's serving certificate.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ca_bundle: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceReference {
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 443 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

impl Webhook {
    /// The API's defaults for a webhook (`mutating` adds `reinvocationPolicy: Never`).
    pub fn set_defaults(&mut self, mutating: bool) {
        self.failure_policy.get_or_insert_with(|| "Fail".into());
        self.match_policy.get_or_insert_with(|| "Equivalent".into());
        self.namespace_selector.get_or_insert_with(LabelSelector::default);
        self.object_selector.get_or_insert_with(LabelSelector::default);
        self.timeout_seconds.get_or_insert(10);
        if mutating {
            self.reinvocation_policy.get_or_insert_with(|| "Never".into());
        }
        for rule in &mut self.rules {
            rule.scope.get_or_insert_with(|| "*".into());
        }
        if let Some(service) = &mut self.client_config.service {
            service.port.get_or_insert(443);
        }
    }

    /// Whether a failed call refuses the request (`Fail`) rather than letting it through.
    pub fn fails_closed(&self) -> bool {
        self.failure_policy.as_deref() != Some("Ignore")
    }

    pub fn timeout(&self) -> i32 {
        self.timeout_seconds.unwrap_or(10)
    }
}
