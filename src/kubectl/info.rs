//! kubectl's informational verbs: `api-resources`, `api-versions`, `cluster-info`,
//! `config view|current-context|get-contexts` (the admin kubeconfig kubeadm writes for this
//! cluster).

use super::args::Args;
use super::{Output, to_json, to_yaml};
use crate::api::{Kind, LabelSelector};
use crate::apiserver::{Reply, Request, Subresource};
use crate::cluster::Cluster;
use crate::util::json_macro::json;
use crate::util::sort::StableSort;
use serde_json::Value;

pub const CLUSTER: &str = "kubernetes";
pub const USER: &str = crate::api::well_known::ADMIN_USER;
pub const CONTEXT: &str = "kubernetes-admin@kubernetes";

/// `https://<control-plane endpoint>:6443`, where kubectl sends its requests: the
/// control-plane node, or the load balancer in front of several.
pub fn server(cluster: &Cluster) -> String {
    format!("https://{}", cluster.api_endpoint())
}

/// `kubectl api-resources`.
pub fn api_resources(args: &Args) -> Output {
    let mut rows: Vec<(String, String, String, bool, String, String)> = Vec::new();
    for kind in Kind::ALL {
        let info = kind.info();
        rows.push((
            info.resource.to_string(),
            info.short_names.join(","),
            kind.api_version(),
            info.namespaced,
            info.kind.to_string(),
            info.group.to_string(),
        ));
    }
    // Then what discovery lists: the custom resources.
    for served in crate::api::custom::Discovery::served().iter().filter(|s| s.preferred) {
        let info = served.kind.info();
        rows.push((
            info.resource.to_string(),
            served.short_names.join(","),
            Kind::Custom(served.kind).api_version(),
            info.namespaced,
            info.kind.to_string(),
            info.group.to_string(),
        ));
    }
    if let Some(ns) = args.get("namespaced") {
        let want = match ns {
            "true" => true,
            "false" => false,
            other => {
                return Output::err(format!(
                    "error: invalid argument \"{other}\" for \"--namespaced\" flag: strconv.ParseBool: parsing \"{other}\": invalid syntax\nSee 'kubectl api-resources --help' for usage."
                ));
            }
        };
        rows.retain(|r| r.3 == want);
    }
    if let Some(group) = args.get("api-group") {
        rows.retain(|r| r.5 == group);
    }
    let wanted_verbs: Vec<&str> =
        args.all("verbs").iter().flat_map(|v| v.split(',')).filter(|v| !v.is_empty()).collect();
    if !wanted_verbs.is_empty() {
        rows.retain(|r| {
            let verbs = verbs_of(&r.0);
            wanted_verbs.iter().all(|w| verbs.contains(w))
        });
    }
    let sort_by = args.get("sort-by").unwrap_or("");
    if !matches!(sort_by, "" | "name" | "kind") {
        return Output::err("error: --sort-by accepts only name or kind");
    }
    rows.stable_sort_by(|a, b| {
        let key = |r: &(String, String, String, bool, String, String)| match sort_by {
            "name" => r.0.clone(),
            "kind" => r.4.clone(),
            _ => r.5.clone(),
        };
        key(a).cmp(&key(b)).then_with(|| a.0.cmp(&b.0))
    });
    let output = args.get("output").unwrap_or("");
    match output {
        "name" => {
            return Output::ok(
                rows.iter()
                    .map(|r| if r.5.is_empty() { format!("{}\n", r.0) } else { format!("{}.{}\n", r.0, r.5) })
                    .collect(),
            );
        }
        "" | "wide" => {}
        other => {
            return Output::err(format!("error: --output {other} is not available"));
        }
    }
    let wide = output == "wide";
    let mut table: Vec<Vec<String>> = Vec::new();
    if !args.has("no-headers") {
        let mut h: Vec<String> =
            ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"].iter().map(|s| s.to_string()).collect();
        if wide {
            h.push("VERBS".into());
            h.push("CATEGORIES".into());
        }
        table.push(h);
    }
    for r in rows {
        let mut row = vec![r.0.clone(), r.1, r.2, r.3.to_string(), r.4];
        if wide {
            row.push(verbs_of(&r.0).join(","));
            let all = [
                "pods",
                "replicationcontrollers",
                "services",
                "daemonsets",
                "deployments",
                "replicasets",
                "statefulsets",
                "jobs",
            ];
            let custom = crate::api::custom::Discovery::served()
                .iter()
                .find(|s| s.preferred && s.kind.info().resource == r.0 && s.kind.info().group == r.5)
                .map(|s| s.categories.join(","));
            match custom {
                Some(categories) => row.push(categories),
                None => row.push(if all.contains(&r.0.as_str()) { "all".into() } else { String::new() }),
            }
        }
        table.push(row);
    }
    Output::ok(super::table::render(&table))
}

fn verbs_of(resource: &str) -> &'static [&'static str] {
    if resource == "componentstatuses" {
        &["get", "list"]
    } else if resource.starts_with("selfsubject") {
        &["create"]
    } else {
        Kind::from_resource_arg(resource).map_or(&[][..], |k| k.info().verbs)
    }
}

/// `kubectl api-versions`.
pub fn api_versions() -> Output {
    let mut versions: Vec<String> = Kind::ALL.iter().map(|k| k.api_version()).collect();
    versions.stable_sort();
    versions.dedup();
    Output::ok(versions.into_iter().map(|v| v + "\n").collect())
}

/// `kubectl cluster-info`: the control plane, then every cluster Service in kube-system.
pub fn cluster_info(cluster: &mut Cluster, args: &Args) -> Output {
    // Like kubectl, other arguments are ignored.
    if args.positionals.first().is_some_and(|s| s == "dump") {
        return dump(cluster, args);
    }
    let server = server(cluster);
    let mut out = format!("Kubernetes control plane is running at {server}\n");
    let mut req = Request::list(Kind::Service, "kube-system");
    let mut selector = LabelSelector::default();
    selector.match_labels.insert("kubernetes.io/cluster-service".into(), "true".into());
    req.label_selector = Some(selector);
    match cluster.request(req) {
        Ok(Reply::List { items, .. }) => {
            for svc in items {
                let crate::api::Object::Service(s) = &*svc else { continue };
                let mut name = s.metadata.name.clone();
                if let Some(port) = s.spec.ports.first() {
                    let https = port.name.as_deref() == Some("https") || port.port == 443;
                    if let Some(p) = port.name.as_deref().filter(|p| !p.is_empty()) {
                        name = format!("{name}:{p}");
                    }
                    if https {
                        name = format!("https:{name}");
                    }
                }
                let title = s.metadata.labels.get("kubernetes.io/name").cloned().unwrap_or(s.metadata.name.clone());
                out.push_str(&format!(
                    "{title} is running at {server}/api/v1/namespaces/{}/services/{name}/proxy\n",
                    s.metadata.namespace
                ));
            }
        }
        Ok(_) => {}
        Err(status) => return Output::err(status.kubectl_message()),
    }
    out.push_str("\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.\n");
    Output::ok(out)
}

/// `kubectl cluster-info dump`: nodes, then each namespace's events, services, workloads and
/// pods as JSON lists, then every container's logs.
fn dump(cluster: &mut Cluster, args: &Args) -> Output {
    let namespaces: Vec<String> = if args.has("all-namespaces") {
        match cluster.request(Request::list(Kind::Namespace, "")) {
            Ok(Reply::List { items, .. }) => items.iter().map(|n| n.name().to_string()).collect(),
            _ => Vec::new(),
        }
    } else {
        let mut v = vec!["kube-system".to_string()];
        let ns = super::namespace_flag(args);
        if ns != "kube-system" {
            v.push(ns);
        }
        v
    };
    let mut out = String::new();
    let list = |cluster: &mut Cluster, kind: Kind, ns: &str, out: &mut String| -> Vec<crate::api::Pod> {
        match cluster.request(Request::list(kind, ns)) {
            Ok(Reply::List { items, revision }) => {
                let values: Vec<Value> = items.iter().map(|o| o.to_json_value()).collect();
                let value = json!({"apiVersion": kind.api_version(), "items": values,
                    "kind": format!("{}List", kind.info().kind), "metadata": {"resourceVersion": revision.to_string()}});
                out.push_str(&to_json(&value));
                items.iter().filter_map(|o| o.as_pod().cloned()).collect()
            }
            _ => Vec::new(),
        }
    };
    list(cluster, Kind::Node, "", &mut out);
    for ns in &namespaces {
        for kind in [Kind::Event, Kind::Service, Kind::DaemonSet, Kind::Deployment, Kind::ReplicaSet] {
            list(cluster, kind, ns, &mut out);
        }
        let pods = list(cluster, Kind::Pod, ns, &mut out);
        for pod in pods {
            for c in &pod.spec.containers {
                let (name, pod_name) = (&c.name, &pod.metadata.name);
                out.push_str(&format!("==== START logs for container {name} of pod {ns}/{pod_name} ====\n"));
                // Each container's log through `pods/<name>/log`, as the API server serves it.
                let log = Request::connect(Subresource::Log, ns, pod_name, &[("container", name.as_str())], false);
                let lines = cluster.connect(log).ok().and_then(|stream| cluster.stream_logs(&stream, false));
                for (_, line) in lines.unwrap_or_default() {
                    out.push_str(&line);
                    out.push('\n');
                }
                out.push_str(&format!("==== END logs for container {name} of pod {ns}/{pod_name} ====\n"));
            }
        }
    }
    Output::ok(out)
}

fn kubeconfig(server: &str, namespace: Option<&str>) -> Value {
    let mut context = json!({"cluster": CLUSTER, "user": USER});
    if let Some(ns) = namespace {
        context["namespace"] = json!(ns);
    }
    json!({
        "apiVersion": "v1",
        "clusters": [{"cluster": {"certificate-authority-data": "DATA+OMITTED", "server": server}, "name": CLUSTER}],
        "contexts": [{"context": context, "name": CONTEXT}],
        "current-context": CONTEXT,
        "kind": "Config",
        "preferences": {},
        "users": [{"name": USER, "user": {"client-certificate-data": "DATA+OMITTED", "client-key-data": "DATA+OMITTED"}}],
    })
}

/// `kubectl config SUBCOMMAND`.
pub fn config(cluster: &mut Cluster, args: &Args) -> Output {
    let namespace = cluster.context_namespace.clone();
    let Some(sub) = args.positionals.first() else {
        return Output::ok("Modify kubeconfig files using subcommands like \"kubectl config set current-context my-context\".\n\nAvailable Commands:\n  current-context   Display the current-context\n  get-clusters      Display clusters defined in the kubeconfig\n  get-contexts      Describe one or many contexts\n  get-users         Display users defined in the kubeconfig\n  set-context       Set a context entry in kubeconfig\n  use-context       Set the current-context in a kubeconfig file\n  view              Display merged kubeconfig settings or a specified kubeconfig file\n\nUsage:\n  kubectl config SUBCOMMAND [options]\n".into());
    };
    match sub.as_str() {
        "view" => match args.get("output").unwrap_or("yaml") {
            "yaml" => Output::ok(to_yaml(&kubeconfig(&server(cluster), namespace.as_deref()))),
            "json" => Output::ok(to_json(&kubeconfig(&server(cluster), namespace.as_deref()))),
            o if o.starts_with("jsonpath") => {
                super::output::print_value(o, &kubeconfig(&server(cluster), namespace.as_deref()))
            }
            other => Output::err(format!(
                "error: unable to match a printer suitable for the output format \"{other}\", allowed formats are: json,jsonpath,yaml"
            )),
        },
        "current-context" => Output::ok(format!("{CONTEXT}\n")),
        "get-contexts" => {
            if let Some(name) = args.positionals.get(1).filter(|n| *n != CONTEXT) {
                let mut out = Output::err(format!("error: context {name} not found"));
                out.stdout = super::table::render(&[["CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"]
                    .map(String::from)
                    .to_vec()]);
                return out;
            }
            if args.get("output") == Some("name") {
                return Output::ok(format!("{CONTEXT}\n"));
            }
            let mut rows = Vec::new();
            if !args.has("no-headers") {
                rows.push(["CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"].map(String::from).to_vec());
            }
            rows.push(vec!["*".into(), CONTEXT.into(), CLUSTER.into(), USER.into(), namespace.unwrap_or_default()]);
            Output::ok(super::table::render(&rows))
        }
        "set-context" => {
            let name = match args.positionals.get(1) {
                Some(n) => n.as_str(),
                None if args.has("current") => CONTEXT,
                None => return Output::err("error: you must specify a non-empty context name or --current"),
            };
            if name != CONTEXT {
                return Output::err(format!(
                    "error: the sandbox's kubeconfig has one context, \"{CONTEXT}\"; set its namespace with --current"
                ));
            }
            if let Some(ns) = args.get("namespace") {
                cluster.context_namespace = Some(ns.to_string()).filter(|n| !n.is_empty());
            }
            Output::ok(format!("Context \"{CONTEXT}\" modified.\n"))
        }
        "use-context" => match args.positionals.get(1) {
            Some(n) if n == CONTEXT => Output::ok(format!("Switched to context \"{CONTEXT}\".\n")),
            Some(n) => Output::err(format!("error: no context exists with the name: \"{n}\"")),
            None => {
                Output::err("error: Unexpected args: []\nSee 'kubectl config use-context -h' for help and examples")
            }
        },
        "get-clusters" => Output::ok(format!("NAME\n{CLUSTER}\n")),
        "get-users" => Output::ok(format!("NAME\n{USER}\n")),
        other => {
            Output::err(format!("error: unknown command \"{other}\"\nSee 'kubectl config -h' for help and examples"))
        }
    }
}
