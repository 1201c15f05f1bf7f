//! `kubectl create role|clusterrole|rolebinding|clusterrolebinding`: RBAC objects from flags.

use super::Output;
use super::args::Args;
use crate::api::Kind;
use serde_json::{Value, json};

const RBAC: &str = "rbac.authorization.k8s.io";
const RESOURCE_VERBS: &[&str] = &[
    "*",
    "get",
    "delete",
    "list",
    "create",
    "update",
    "patch",
    "watch",
    "proxy",
    "deletecollection",
    "use",
    "bind",
    "escalate",
    "impersonate",
];

/// A flag given several times or as a comma list: `--verb=get --verb=list,watch`.
fn listed(args: &Args, flag: &str) -> Vec<String> {
    args.all(flag).iter().flat_map(|v| v.split(',')).filter(|v| !v.is_empty()).map(str::to_string).collect()
}

/// `--resource=pods,deployments.apps,pods/log`: (group, resource) pairs, the resource keeping its
/// subresource; a resource the API does not serve is refused as kubectl's mapper refuses it.
fn resources(args: &Args) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for given in listed(args, "resource") {
        let (name, sub) = match given.split_once('/') {
            Some((n, s)) => (n.to_string(), Some(s.to_string())),
            None => (given.clone(), None),
        };
        let (group, plural) = if name == "*" {
            (String::new(), "*".to_string())
        } else {
            let kind = Kind::from_resource_arg(&name)
                .ok_or_else(|| format!("error: the server doesn't have a resource type \"{name}\""))?;
            (kind.info().group.to_string(), kind.info().resource.to_string())
        };
        let resource = match sub {
            Some(s) => format!("{plural}/{s}"),
            None => plural,
        };
        out.push((group, resource));
    }
    Ok(out)
}

/// The rules of a role made from flags: one rule per API group, in the order groups appear.
pub fn role(args: &Args, name: &str, kind: Kind) -> Result<Value, Output> {
    let verbs = listed(args, "verb");
    if verbs.is_empty() {
        return Err(Output::err("error: at least one verb must be specified"));
    }
    let urls = listed(args, "non-resource-url");
    let targets = resources(args).map_err(Output::err)?;
    if targets.is_empty() && (kind == Kind::Role || urls.is_empty()) {
        return Err(Output::err("error: at least one resource must be specified"));
    }
    if let Some(bad) = verbs.iter().find(|v| !targets.is_empty() && !RESOURCE_VERBS.contains(&v.as_str())) {
        return Err(Output::err(format!("error: invalid verb: '{bad}'")));
    }
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (group, resource) in targets {
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, list)) => list.push(resource),
            None => groups.push((group, vec![resource])),
        }
    }
    let names = listed(args, "resource-name");
    let mut rules: Vec<Value> = groups
        .into_iter()
        .map(|(group, resources)| {
            let mut rule = json!({"apiGroups": [group], "resources": resources, "verbs": verbs});
            if !names.is_empty() {
                rule["resourceNames"] = json!(names);
            }
            rule
        })
        .collect();
    if !urls.is_empty() {
        rules.push(json!({"nonResourceURLs": urls, "verbs": verbs}));
    }
    Ok(json!({
        "apiVersion": format!("{RBAC}/v1"),
        "kind": kind.info().kind,
        "metadata": {"name": name},
        "rules": rules,
    }))
}

/// A binding made from flags: `--role` or `--clusterrole`, and its users, groups and service
/// accounts (`namespace:name`).
pub fn binding(args: &Args, name: &str, kind: Kind) -> Result<Value, Output> {
    let (role_kind, role) = match (args.get("role"), args.get("clusterrole"), kind) {
        (_, None, Kind::ClusterRoleBinding) => {
            return Err(Output::err("error: required flag(s) \"clusterrole\" not set"));
        }
        (Some(r), None, _) => ("Role", r),
        (None, Some(r), _) => ("ClusterRole", r),
        _ => return Err(Output::err("error: exactly one of clusterrole or role must be specified")),
    };
    let mut subjects: Vec<Value> = Vec::new();
    for user in listed(args, "user") {
        subjects.push(json!({"kind": "User", "apiGroup": RBAC, "name": user}));
    }
    for group in listed(args, "group") {
        subjects.push(json!({"kind": "Group", "apiGroup": RBAC, "name": group}));
    }
    for account in listed(args, "serviceaccount") {
        let Some((namespace, sa)) = account.split_once(':').filter(|(n, s)| !n.is_empty() && !s.is_empty()) else {
            return Err(Output::err(format!("error: serviceaccount must be <namespace>:<name>, got \"{account}\"")));
        };
        subjects.push(json!({"kind": "ServiceAccount", "name": sa, "namespace": namespace}));
    }
    let mut object = json!({
        "apiVersion": format!("{RBAC}/v1"),
        "kind": kind.info().kind,
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role},
    });
    if !subjects.is_empty() {
        object["subjects"] = json!(subjects);
    }
    Ok(object)
}
