//! The API server answering a plain HTTPS request from inside the cluster — `curl` in a pod
//! with its service account's token, as "Accessing the Kubernetes API from a Pod" does it:
//! the token authenticates, RBAC authorizes, and the answer is the JSON the API serves
//! (pretty-printed, as the API server does for curl).

use super::ApiServer;
use super::authorization::{self, Attributes, Identity};
use crate::api::{Kind, Object};
use crate::util::json_macro::json;
use serde_json::Value;

/// An answer: the HTTP status code and the body.
pub struct Answer {
    pub code: u16,
    pub body: String,
}

/// Answers `method path` sent with `token` (a service account's, from its projected volume).
pub fn answer(api: &ApiServer, method: &str, path: &str, token: Option<&str>) -> Answer {
    let who = match token {
        None => Identity { user: "system:anonymous".into(), groups: vec!["system:unauthenticated".into()] },
        Some(token) => match subject(token) {
            Some(user) => Identity::of(&user, &[]),
            None => return status(401, "Unauthorized", "Unauthorized", None),
        },
    };
    let path = path.split('?').next().unwrap_or(path);
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    match resource_request(&segments) {
        Some((group, namespace, resource, name)) => {
            resource_answer(api, &who, method, group, namespace, resource, name)
        }
        None => path_answer(api, &who, method, path),
    }
}

/// The user a service account token names (its `sub` claim), if it is one the cluster issued.
fn subject(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    // A JWT's parts are base64url without padding.
    let bytes = crate::util::base64::decode_with(payload, crate::util::base64::URL_SAFE)?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    let sub = claims.get("sub")?.as_str()?;
    sub.starts_with("system:serviceaccount:").then(|| sub.to_string())
}

/// `/api/v1/[namespaces/NS/]RESOURCE[/NAME]` or `/apis/GROUP/VERSION/…`: group, namespace,
/// resource and name.
fn resource_request<'a>(segments: &[&'a str]) -> Option<(&'a str, &'a str, &'a str, &'a str)> {
    let rest = match segments {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (group, rest) = rest;
    let (namespace, rest) = match rest {
        ["namespaces", ns, more @ ..] if !more.is_empty() => (*ns, more),
        _ => ("", rest),
    };
    match rest {
        [resource] => Some((group, namespace, resource, "")),
        [resource, name] => Some((group, namespace, resource, name)),
        _ => None,
    }
}

fn resource_answer(
    api: &ApiServer,
    who: &Identity,
    method: &str,
    group: &str,
    namespace: &str,
    resource: &str,
    name: &str,
) -> Answer {
    // The built-in resources, then the custom ones the API server serves.
    let served = api.served_custom();
    let custom = served.iter().filter(|s| s.preferred).map(|s| Kind::Custom(s.kind));
    let Some(kind) =
        Kind::ALL.iter().copied().chain(custom).find(|k| k.info().resource == resource && k.info().group == group)
    else {
        return status(404, "NotFound", "the server could not find the requested resource", None);
    };
    let verb = match (method, name.is_empty()) {
        ("GET", true) => "list",
        ("GET", false) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "deletecollection",
        ("DELETE", false) => "delete",
        _ => {
            return status(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
                None,
            );
        }
    };
    let attrs = Attributes::new(verb, kind, None, namespace, name);
    if let Err(message) = authorization::authorize(api.etcd(), who, &attrs) {
        return status(403, "Forbidden", &message, Some((name, resource)));
    }
    match verb {
        "get" => match api.peek(kind, namespace, name) {
            Some(object) => Answer { code: 200, body: pretty(&object.to_json_value()) },
            None => {
                let what = kind.qualified_resource();
                status(404, "NotFound", &format!("{what} \"{name}\" not found"), Some((name, resource)))
            }
        },
        "list" => {
            let list = List {
                kind: format!("{}List", kind.info().kind),
                api_version: kind.api_version(),
                metadata: json!({"resourceVersion": api.etcd().revision().to_string()}),
                items: api.peek_list(kind, namespace).iter().map(|o| list_item(o)).collect(),
            };
            Answer { code: 200, body: pretty(&list) }
        }
        // Allowed: a write from inside a container is beyond what the sandbox's userland does.
        _ => status(
            405,
            "MethodNotAllowed",
            "sim: RBAC allows this, but writes from inside a container are not simulated (use kubectl)",
            None,
        ),
    }
}

/// A list as the API serves it, its fields in the API's order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct List {
    kind: String,
    api_version: String,
    metadata: Value,
    items: Vec<Value>,
}

/// A list's item: the object without `kind` and `apiVersion`, which the list carries.
fn list_item(object: &Object) -> Value {
    let mut value = object.to_json_value();
    if let Value::Object(map) = &mut value {
        map.remove("kind");
        map.remove("apiVersion");
    }
    value
}

/// Paths that are not resources (`/api`, `/version`, `/healthz`), as the bootstrap
/// ClusterRoles `system:discovery` and `system:public-info-viewer` grant them.
fn path_answer(api: &ApiServer, who: &Identity, method: &str, path: &str) -> Answer {
    let verb = method.to_ascii_lowercase();
    let allowed = authorization::rules_for(api.etcd(), who, "").iter().any(|(rule, _)| {
        rule.verbs.iter().any(|v| *v == verb || v == "*")
            && rule
                .non_resource_urls
                .iter()
                .any(|u| u == path || u == "*" || u.strip_suffix('*').is_some_and(|prefix| path.starts_with(prefix)))
    });
    if !allowed {
        let message = format!("forbidden: User \"{}\" cannot {verb} path \"{path}\"", who.user);
        return status(403, "Forbidden", &message, Some(("", "")));
    }
    let address =
        format!("{}:{}", crate::api::well_known::api_server_address(), crate::api::well_known::API_SERVER_PORT);
    match path.trim_end_matches('/') {
        "/api" => Answer {
            code: 200,
            body: format!(
                "{{\n  \"kind\": \"APIVersions\",\n  \"versions\": [\n    \"v1\"\n  ],\n  \"serverAddressByClientCIDRs\": [\n    {{\n      \"clientCIDR\": \"0.0.0.0/0\",\n      \"serverAddress\": \"{address}\"\n    }}\n  ]\n}}\n"
            ),
        },
        "/version" => {
            let version = crate::api::well_known::KUBERNETES_VERSION;
            let mut parts = version.trim_start_matches('v').split('.');
            let (major, minor) = (parts.next().unwrap_or("1"), parts.next().unwrap_or(""));
            Answer {
                code: 200,
                body: format!(
                    "{{\n  \"major\": \"{major}\",\n  \"minor\": \"{minor}\",\n  \"gitVersion\": \"{version}\",\n  \"platform\": \"linux/amd64\"\n}}\n"
                ),
            }
        }
        "/healthz" | "/livez" | "/readyz" => Answer { code: 200, body: "ok".into() },
        _ => Answer { code: 404, body: "404 page not found\n".into() },
    }
}

/// A `Status` object, as the API server answers a request it refuses: its fields in the API's
/// order (kind, apiVersion, metadata, status, message, reason, details, code).
fn status(code: u16, reason: &str, message: &str, details: Option<(&str, &str)>) -> Answer {
    let text = |s: &str| Value::String(s.to_string()).to_string();
    let mut body = format!(
        "{{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {{}},\n  \"status\": \"Failure\",\n  \"message\": {},\n  \"reason\": {},\n",
        text(message),
        text(reason)
    );
    match details {
        Some(("", "")) => body.push_str("  \"details\": {},\n"),
        Some((name, kind)) => {
            let name = if name.is_empty() { String::new() } else { format!("\n    \"name\": {},", text(name)) };
            body.push_str(&format!("  \"details\": {{{name}\n    \"kind\": {}\n  }},\n", text(kind)));
        }
        None => {}
    }
    body.push_str(&format!("  \"code\": {code}\n}}\n"));
    Answer { code, body }
}

/// JSON indented by two spaces, as the API server writes it for curl, and a final newline.
fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_the_service_account_in_its_sub_claim() {
        let claims = r#"{"sub":"system:serviceaccount:team:builder"}"#;
        let token = format!(
            "e30.{}.c2ln",
            crate::util::base64::encode_with(claims.as_bytes(), crate::util::base64::URL_SAFE, false)
        );
        assert_eq!(subject(&token).as_deref(), Some("system:serviceaccount:team:builder"));
        assert_eq!(subject("not-a-token"), None);
    }

    #[test]
    fn resource_paths_give_group_namespace_resource_and_name() {
        fn parse(path: &'static str) -> Option<(&'static str, &'static str, &'static str, &'static str)> {
            resource_request(&path.split('/').filter(|s| !s.is_empty()).collect::<Vec<_>>())
        }
        assert_eq!(parse("/api/v1/namespaces/default/pods"), Some(("", "default", "pods", "")));
        assert_eq!(parse("/api/v1/namespaces/default/pods/web"), Some(("", "default", "pods", "web")));
        assert_eq!(parse("/api/v1/namespaces"), Some(("", "", "namespaces", "")));
        assert_eq!(parse("/api/v1/namespaces/default"), Some(("", "", "namespaces", "default")));
        assert_eq!(parse("/apis/apps/v1/deployments"), Some(("apps", "", "deployments", "")));
        assert_eq!(parse("/api"), None);
    }
}
