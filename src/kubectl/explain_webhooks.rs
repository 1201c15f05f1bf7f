//! `kubectl explain` schemas of the webhook configurations: Validating- and
//! MutatingWebhookConfiguration, their webhooks, client configs and rules.

use super::explain::{API_VERSION, Field, KIND, METADATA};

/// A webhook's fields; the mutating one adds `reinvocationPolicy`.
macro_rules! webhook_fields {
    ($($extra:expr),*) => {
        &[
            ("admissionReviewVersions", "[]string", true, "The AdmissionReview versions the webhook understands, in order of preference (v1, v1beta1)."),
            ("clientConfig", "WebhookClientConfig", true, "How the API server reaches the webhook: a Service in the cluster or an https URL."),
            ("failurePolicy", "string", false, "Fail (the default) or Ignore: whether a call that fails refuses the request or lets it through."),
            ("matchConditions", "[]MatchCondition", false, "CEL conditions a request must all meet for the webhook to be called."),
            ("matchPolicy", "string", false, "Exact, or Equivalent (the default): whether a request for another version of a listed resource is sent too."),
            ("name", "string", true, "The webhook's name, a domain name of at least three segments (pod-policy.example.com)."),
            ("namespaceSelector", "LabelSelector", false, "The labels of the namespaces whose objects are sent; empty sends all."),
            ("objectSelector", "LabelSelector", false, "The labels of the objects (new or old) that are sent; empty sends all."),
            $($extra,)*
            ("rules", "[]RuleWithOperations", false, "The operations on resources the webhook is called for."),
            ("sideEffects", "string", true, "None or NoneOnDryRun: whether calling the webhook changes anything elsewhere."),
            ("timeoutSeconds", "integer", false, "How long the API server waits for an answer, 1 to 30 seconds (10 by default)."),
        ]
    };
}

pub(super) const TYPES: &[(&str, &str, &[Field])] = &[
    (
        "ValidatingWebhookConfiguration",
        "Webhooks the API server calls in validating admission; any of them may refuse a request.",
        &[API_VERSION, KIND, METADATA, ("webhooks", "[]ValidatingWebhook", false, "The webhooks, called in order.")],
    ),
    (
        "MutatingWebhookConfiguration",
        "Webhooks the API server calls in mutating admission; they may change the object (with a JSONPatch) or refuse the request.",
        &[API_VERSION, KIND, METADATA, ("webhooks", "[]MutatingWebhook", false, "The webhooks, called in order.")],
    ),
    ("ValidatingWebhook", "One validating webhook: where it is, and which requests it is sent.", webhook_fields!()),
    (
        "MutatingWebhook",
        "One mutating webhook: where it is, and which requests it is sent.",
        webhook_fields!((
            "reinvocationPolicy",
            "string",
            false,
            "Never (the default) or IfNeeded: whether the webhook is called again when a later one changed the object."
        )),
    ),
    (
        "WebhookClientConfig",
        "Where the webhook listens: exactly one of service and url.",
        &[
            ("caBundle", "string", false, "The PEM certificates (base64) that sign the webhook's serving certificate."),
            ("service", "ServiceReference", false, "A Service in the cluster, reached over https."),
            ("url", "string", false, "An https URL outside the cluster (no query or fragment)."),
        ],
    ),
    (
        "ServiceReference",
        "A Service that serves the webhook.",
        &[
            ("name", "string", true, "The Service's name."),
            ("namespace", "string", true, "The Service's namespace."),
            ("path", "string", false, "The URL path the API server posts to."),
            ("port", "integer", false, "The Service port, 443 by default."),
        ],
    ),
    (
        "RuleWithOperations",
        "Operations on resources: each list may be * for all.",
        &[
            ("apiGroups", "[]string", false, "The API groups (\"\" is the core group)."),
            ("apiVersions", "[]string", false, "The API versions."),
            ("operations", "[]string", false, "CREATE, UPDATE, DELETE, CONNECT or *."),
            ("resources", "[]string", false, "The resources (pods), their subresources (pods/status), or *."),
            ("scope", "string", false, "Cluster, Namespaced or * (the default)."),
        ],
    ),
];
