//! networking.k8s.io/v1 Ingress and IngressClass: HTTP routes by host and path to Services,
//! served by whichever ingress controller the Ingress's class names.

use super::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The annotation that marks the IngressClass new Ingresses get when they name none.
pub const DEFAULT_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";
/// The older way to name an Ingress's class.
pub const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressClass {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: IngressClassSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressClassSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub controller: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

impl IngressClass {
    pub fn is_default(&self) -> bool {
        self.metadata.annotations.get(DEFAULT_CLASS_ANNOTATION).is_some_and(|v| v == "true")
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ingress {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: IngressSpec,
    #[serde(default)]
    pub status: IngressStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress_class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_backend: Option<IngressBackend>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tls: Vec<IngressTls>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<IngressRule>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressTls {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_name: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressRule {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpIngressRuleValue>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpIngressRuleValue {
    #[serde(default)]
    pub paths: Vec<HttpIngressPath>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpIngressPath {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_type: Option<String>,
    #[serde(default)]
    pub backend: IngressBackend,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressBackend {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<IngressServiceBackend>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressServiceBackend {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub port: ServiceBackendPort,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceBackendPort {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<i32>,
}

impl ServiceBackendPort {
    /// `80` or `http`, as kubectl prints a backend's port.
    pub fn text(&self) -> String {
        match self.number {
            Some(n) if n != 0 => n.to_string(),
            _ => self.name.clone(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<IngressLoadBalancerStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressLoadBalancerStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ingress: Vec<IngressLoadBalancerIngress>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressLoadBalancerIngress {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ip: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hostname: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<Value>,
}

impl Ingress {
    /// The class the Ingress names: its field, else the older annotation.
    pub fn class(&self) -> Option<&str> {
        self.spec
            .ingress_class_name
            .as_deref()
            .or_else(|| self.metadata.annotations.get(CLASS_ANNOTATION).map(|s| s.as_str()))
    }

    /// The addresses its status holds (IPs, else hostnames), as ADDRESS lists them.
    pub fn addresses(&self) -> Vec<String> {
        let Some(lb) = &self.status.load_balancer else { return Vec::new() };
        lb.ingress.iter().map(|i| if i.ip.is_empty() { i.hostname.clone() } else { i.ip.clone() }).collect()
    }
}

/// Whether a request path matches an Ingress path of `path_type`, as ingress-nginx matches:
/// Exact is equality; Prefix matches whole `/`-separated elements (`/foo` matches `/foo` and
/// `/foo/bar`, not `/foobar`); ImplementationSpecific is nginx's plain prefix location.
pub fn path_matches(path_type: &str, rule_path: &str, request_path: &str) -> bool {
    let rule_path = if rule_path.is_empty() { "/" } else { rule_path };
    match path_type {
        "Exact" => request_path == rule_path,
        "Prefix" => {
            let trimmed = rule_path.trim_end_matches('/');
            trimmed.is_empty()
                || request_path == trimmed
                || request_path.strip_prefix(trimmed).is_some_and(|rest| rest.starts_with('/'))
        }
        _ => request_path.starts_with(rule_path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_path_matches_whole_path_elements_only() {
        assert!(path_matches("Prefix", "/foo", "/foo"));
        assert!(path_matches("Prefix", "/foo", "/foo/bar"));
        assert!(path_matches("Prefix", "/foo/", "/foo"));
        assert!(!path_matches("Prefix", "/foo", "/foobar"));
        assert!(path_matches("Prefix", "/", "/anything"));
    }

    #[test]
    fn an_exact_path_matches_only_itself_and_implementation_specific_is_a_plain_prefix() {
        assert!(path_matches("Exact", "/foo", "/foo"));
        assert!(!path_matches("Exact", "/foo", "/foo/"));
        assert!(path_matches("ImplementationSpecific", "/foo", "/foobar"));
    }
}
