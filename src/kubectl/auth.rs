//! `kubectl auth`: `can-i` asks whether the current identity (or whom `--as` names) may do
//! something, `can-i --list` shows everything it may do in a namespace, and `whoami` shows
//! the identity itself.

use super::args::Args;
use super::{Output, table};
use crate::api::{Kind, Object, PolicyRule};
use crate::apiserver::authorization::{Attributes, Identity};
use crate::apiserver::{Body, Request, Status, Verb};
use crate::cluster::Cluster;
use crate::util::json_macro::json;
use crate::util::sort::StableSort;

/// The identity kubectl's requests carry now: whom `--as` impersonates, or the admin.
fn identity(cluster: &Cluster) -> Identity {
    cluster.acting_as.clone().unwrap_or_else(|| Identity::of(super::info::USER, &[]))
}

pub fn run(cluster: &mut Cluster, args: &Args) -> Output {
    match args.positionals.first().map(String::as_str) {
        Some("can-i") => can_i(cluster, args),
        Some("whoami") => whoami(cluster, args),
        Some(other) => Output::err(format!(
            "error: unknown command \"{other}\" for \"kubectl auth\"\n\nRun 'kubectl auth --help' for usage."
        )),
        None => Output::ok(
            "Inspect authorization.\n\nAvailable Commands:\n  can-i         Check whether an action is allowed\n  reconcile     Reconciles rules for RBAC role, role binding, cluster role, and cluster role binding objects\n  whoami        Experimental: Check self subject attributes\n\nUsage:\n  kubectl auth [flags] [options]\n"
                .into(),
        ),
    }
}

fn whoami(cluster: &Cluster, args: &Args) -> Output {
    let who = identity(cluster);
    let groups = format!("[{}]", who.groups.join(" "));
    match args.get("output") {
        Some("json") | Some("yaml") => {
            let review = serde_json::json!({
                "kind": "SelfSubjectReview",
                "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": null},
                "status": {"userInfo": {"username": who.user, "groups": who.groups}}
            });
            if args.get("output") == Some("json") {
                Output::ok(format!("{}\n", serde_json::to_string_pretty(&review).unwrap_or_default()))
            } else {
                Output::ok(crate::kubectl::yaml::to_yaml(&review))
            }
        }
        _ => {
            let rows = vec![
                vec!["ATTRIBUTE".to_string(), "VALUE".to_string()],
                vec!["Username".into(), who.user.clone()],
                vec!["Groups".into(), groups],
            ];
            Output::ok(table::render(&rows))
        }
    }
}

fn can_i(cluster: &mut Cluster, args: &Args) -> Output {
    let namespace = if args.has("all-namespaces") { String::new() } else { args.namespace().to_string() };
    if args.has("list") {
        return list(cluster, &namespace);
    }
    let words = &args.positionals[1..];
    let (verb, target) = match words {
        [verb, target] => (verb.as_str(), target.as_str()),
        [_] | [] => {
            return Output::err(
                "error: you must specify two arguments: verb resource or verb resource/resourceName.\nSee 'kubectl auth can-i -h' for help and examples",
            );
        }
        _ => {
            return Output::err(
                "error: you must specify two or three arguments: verb, resource, and optional resourceName\nSee 'kubectl auth can-i -h' for help and examples",
            );
        }
    };
    let mut out = Output::default();
    if target.starts_with('/') {
        return answer(out, ask_url(cluster, verb, target));
    }
    let (type_, name) = target.split_once('/').unwrap_or((target, ""));
    let attrs = match Kind::from_resource_arg(type_) {
        Some(kind) => {
            let ns = if kind.info().namespaced { namespace.as_str() } else { "" };
            Attributes::new(verb, kind, args.get("subresource"), ns, name)
        }
        None if type_ == "*" || type_.starts_with("*.") => {
            unknown_attrs(verb, type_, args.get("subresource"), &namespace, name)
        }
        None => {
            out.warnings.push_str(&format!("Warning: the server doesn't have a resource type '{type_}'\n"));
            unknown_attrs(verb, type_, args.get("subresource"), &namespace, name)
        }
    };
    answer(out, ask(cluster, &attrs))
}

/// `yes`, or `no` with exit code 1, or the request's error.
fn answer(mut out: Output, allowed: Result<bool, Status>) -> Output {
    match allowed {
        Ok(true) => out.stdout.push_str("yes\n"),
        Ok(false) => {
            out.stdout.push_str("no\n");
            out.code = 1;
        }
        Err(status) => {
            out.stderr.push_str(&status.kubectl_message());
            out.stderr.push('\n');
            out.code = 1;
        }
    }
    out
}

/// POSTs a SelfSubjectAccessReview about a non-resource URL (`/healthz`).
fn ask_url(cluster: &mut Cluster, verb: &str, path: &str) -> Result<bool, Status> {
    let body = json!({
        "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": {"nonResourceAttributes": {"path": path, "verb": verb}}, "status": {"allowed": false},
    });
    let reply = cluster.request(review_request(Kind::SelfSubjectAccessReview, body))?;
    Ok(matches!(reply.object().as_deref(), Some(Object::SelfSubjectAccessReview(r)) if r.status.allowed))
}

/// POSTs a SelfSubjectAccessReview asking about `attrs`; the authorizer's yes or no.
fn ask(cluster: &mut Cluster, attrs: &Attributes) -> Result<bool, Status> {
    let (resource, subresource) = attrs.resource.split_once('/').unwrap_or((&attrs.resource, ""));
    let mut asked = serde_json::Map::new();
    for (key, value) in [
        ("namespace", attrs.namespace.as_str()),
        ("verb", attrs.verb.as_str()),
        ("group", attrs.group.as_str()),
        ("resource", resource),
        ("subresource", subresource),
        ("name", attrs.name.as_str()),
    ] {
        if !value.is_empty() {
            asked.insert(key.into(), value.into());
        }
    }
    let body = json!({
        "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": {"resourceAttributes": asked}, "status": {"allowed": false},
    });
    let reply = cluster.request(review_request(Kind::SelfSubjectAccessReview, body))?;
    Ok(matches!(reply.object().as_deref(), Some(Object::SelfSubjectAccessReview(r)) if r.status.allowed))
}

/// POST of a review (cluster-scoped, never stored) with `body`.
fn review_request(kind: Kind, body: serde_json::Value) -> Request {
    let mut req = Request::new(Verb::Create, kind, "", "");
    req.body = Some(Body::Json(body));
    req
}

/// Attributes for a resource the API does not serve (`foos`, `*`, `deployments.apps` typed
/// with an unknown group): the words as given.
fn unknown_attrs(verb: &str, type_: &str, sub: Option<&str>, namespace: &str, name: &str) -> Attributes {
    let (resource, group) = type_.split_once('.').unwrap_or((type_, ""));
    let resource = match sub {
        Some(s) => format!("{resource}/{s}"),
        None => resource.to_string(),
    };
    Attributes { verb: verb.into(), group: group.into(), resource, namespace: namespace.into(), name: name.into() }
}

/// Rules as `can-i --list` and `describe role` show them, one row per resource
/// (`resource.group`) and per non-resource URL: Resources, Non-Resource URLs, Resource Names,
/// Verbs. Resource rows come first, ordered by group then resource; repeats are dropped.
pub fn rule_rows(rules: &[PolicyRule]) -> Vec<Vec<String>> {
    let brackets = |items: &[String]| format!("[{}]", items.join(" "));
    let mut resource_rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut url_rows: Vec<Vec<String>> = Vec::new();
    for rule in rules {
        for url in &rule.non_resource_urls {
            let row = vec![String::new(), format!("[{url}]"), "[]".into(), brackets(&rule.verbs)];
            if !url_rows.contains(&row) {
                url_rows.push(row);
            }
        }
        for group in &rule.api_groups {
            for resource in &rule.resources {
                let name = if group.is_empty() { resource.clone() } else { format!("{resource}.{group}") };
                let row = vec![name, "[]".into(), brackets(&rule.resource_names), brackets(&rule.verbs)];
                if !resource_rows.iter().any(|(_, r)| *r == row) {
                    resource_rows.push((format!("{group}/{resource}"), row));
                }
            }
        }
    }
    resource_rows.stable_sort();
    url_rows.stable_sort();
    resource_rows.into_iter().map(|(_, row)| row).chain(url_rows).collect()
}

/// `can-i --list`: everything the identity may do in the namespace, as a
/// SelfSubjectRulesReview the API server answers.
fn list(cluster: &mut Cluster, namespace: &str) -> Output {
    let body = json!({
        "kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": {"namespace": namespace}, "status": {"resourceRules": null, "nonResourceRules": null, "incomplete": false},
    });
    let status = match cluster.request(review_request(Kind::SelfSubjectRulesReview, body)) {
        Ok(reply) => match reply.object().as_deref() {
            Some(Object::SelfSubjectRulesReview(r)) => r.status.clone(),
            _ => Default::default(),
        },
        Err(status) => return Output::err(status.kubectl_message()),
    };
    let resource_rules = status.resource_rules.into_iter().map(|r| PolicyRule {
        api_groups: r.api_groups,
        resources: r.resources,
        resource_names: r.resource_names,
        verbs: r.verbs,
        ..Default::default()
    });
    let url_rules = status.non_resource_rules.into_iter().map(|r| PolicyRule {
        non_resource_urls: r.non_resource_urls,
        verbs: r.verbs,
        ..Default::default()
    });
    let rules: Vec<PolicyRule> = resource_rules.chain(url_rules).collect();
    let mut rows = vec![vec![
        "Resources".to_string(),
        "Non-Resource URLs".to_string(),
        "Resource Names".to_string(),
        "Verbs".to_string(),
    ]];
    rows.extend(rule_rows(&rules));
    Output::ok(table::render(&rows))
}

/// `--as` and `--as-group`: the identity kubectl's requests will impersonate, if any.
pub fn impersonation(args: &Args) -> Result<Option<Identity>, String> {
    let groups: Vec<String> = args.all("as-group").iter().map(|g| g.to_string()).collect();
    match args.get("as") {
        Some(user) if !user.is_empty() => Ok(Some(Identity::of(user, &groups))),
        _ if !groups.is_empty() => {
            Err("error: requesting uid, groups or user-extra for \"\" without impersonating a user".into())
        }
        _ => Ok(None),
    }
}
