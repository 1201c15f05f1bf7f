//! The RBAC policy a new kubeadm cluster starts with: the user-facing ClusterRoles
//! (`cluster-admin`, `admin`, `edit`, `view`), what every signed-in user may do
//! (`system:basic-user`, `system:discovery`, `system:public-info-viewer`), and the bindings that
//! make kubeadm's admin, in group `kubeadm:cluster-admins`, a cluster admin.

use crate::api::{ClusterRole, ClusterRoleBinding, Object, ObjectMeta, PolicyRule, RoleRef, Subject};
use crate::apiserver::{Reply, Request, Status};

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

/// (API groups, resources, verbs): one rule each.
type Rules = &'static [(&'static [&'static str], &'static [&'static str], &'static [&'static str])];

/// What `view` may read: everything in a namespace but secrets and the RBAC objects.
const VIEW: Rules = &[
    (
        &[""],
        &[
            "bindings",
            "configmaps",
            "endpoints",
            "events",
            "limitranges",
            "namespaces",
            "namespaces/status",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "pods/log",
            "pods/status",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
            "serviceaccounts",
            "services",
            "services/status",
        ],
        READ,
    ),
    (
        &["apps"],
        &[
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ],
        READ,
    ),
    (&["autoscaling"], &["horizontalpodautoscalers", "horizontalpodautoscalers/status"], READ),
    (&["batch"], &["cronjobs", "cronjobs/status", "jobs", "jobs/status"], READ),
    (&["discovery.k8s.io"], &["endpointslices"], READ),
    (&["networking.k8s.io"], &["ingresses", "ingresses/status", "networkpolicies"], READ),
    (&["policy"], &["poddisruptionbudgets", "poddisruptionbudgets/status"], READ),
];

/// What `edit` adds to `view`: changing workloads and their configuration, secrets included.
const EDIT: Rules = &[
    (&[""], &["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"], READ),
    (&[""], &["serviceaccounts"], &["impersonate"]),
    (&[""], &["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"], WRITE),
    (&[""], &["pods/eviction", "serviceaccounts/token"], &["create"]),
    (
        &[""],
        &[
            "configmaps",
            "events",
            "persistentvolumeclaims",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "secrets",
            "serviceaccounts",
            "services",
            "services/proxy",
        ],
        WRITE,
    ),
    (
        &["apps"],
        &[
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ],
        WRITE,
    ),
    (&["autoscaling"], &["horizontalpodautoscalers"], WRITE),
    (&["batch"], &["cronjobs", "jobs"], WRITE),
    (&["networking.k8s.io"], &["ingresses", "networkpolicies"], WRITE),
    (&["policy"], &["poddisruptionbudgets"], WRITE),
];

/// What `admin` adds to `edit`: granting access within the namespace.
const ADMIN: Rules = &[
    (&["authorization.k8s.io"], &["localsubjectaccessreviews"], &["create"]),
    (
        &["rbac.authorization.k8s.io"],
        &["rolebindings", "roles"],
        &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    ),
];

/// What every signed-in user may do: ask what they themselves may do, and who they are.
const BASIC_USER: Rules = &[
    (&["authorization.k8s.io"], &["selfsubjectaccessreviews", "selfsubjectrulesreviews"], &["create"]),
    (&["authentication.k8s.io"], &["selfsubjectreviews"], &["create"]),
];

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn rules(tables: &[Rules]) -> Vec<PolicyRule> {
    tables
        .iter()
        .flat_map(|t| t.iter())
        .map(|(groups, resources, verbs)| PolicyRule {
            api_groups: strings(groups),
            resources: strings(resources),
            verbs: strings(verbs),
            ..Default::default()
        })
        .collect()
}

/// Bootstrap objects carry the label and annotation the API server's policy reconciler uses.
fn meta(name: &str) -> ObjectMeta {
    let mut meta = ObjectMeta { name: name.into(), ..Default::default() };
    meta.labels.insert("kubernetes.io/bootstrapping".into(), "rbac-defaults".into());
    meta.annotations.insert("rbac.authorization.kubernetes.io/autoupdate".into(), "true".into());
    meta
}

fn cluster_role(name: &str, rules: Vec<PolicyRule>) -> Object {
    Object::ClusterRole(ClusterRole { metadata: meta(name), rules, ..Default::default() })
}

fn binding(name: &str, groups: &[&str], role: &str) -> Object {
    let mut metadata = meta(name);
    if name.starts_with("kubeadm:") {
        // kubeadm's own binding is not part of the API server's defaults.
        metadata.labels.clear();
        metadata.annotations.clear();
    }
    Object::ClusterRoleBinding(ClusterRoleBinding {
        metadata,
        subjects: groups
            .iter()
            .map(|group| Subject {
                kind: "Group".into(),
                api_group: "rbac.authorization.k8s.io".into(),
                name: group.to_string(),
                ..Default::default()
            })
            .collect(),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: role.into(),
        },
        ..Default::default()
    })
}

/// Creates the policy through `send` (as kube-apiserver does at its first start, and kubeadm
/// for its admin binding).
pub fn create(send: &mut dyn FnMut(Request) -> Result<Reply, Status>) {
    let everything = vec![
        PolicyRule {
            api_groups: strings(&["*"]),
            resources: strings(&["*"]),
            verbs: strings(&["*"]),
            ..Default::default()
        },
        PolicyRule { non_resource_urls: strings(&["*"]), verbs: strings(&["*"]), ..Default::default() },
    ];
    let urls =
        |urls: &[&str]| PolicyRule { non_resource_urls: strings(urls), verbs: strings(&["get"]), ..Default::default() };
    let public = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    let mut discovery = vec!["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*"];
    discovery.extend(public);
    discovery.sort_unstable();
    let everyone = ["system:authenticated"];
    let objects = [
        cluster_role("admin", rules(&[VIEW, EDIT, ADMIN])),
        cluster_role("cluster-admin", everything),
        cluster_role("edit", rules(&[VIEW, EDIT])),
        cluster_role("system:basic-user", rules(&[BASIC_USER])),
        cluster_role("system:discovery", vec![urls(&discovery)]),
        cluster_role("system:public-info-viewer", vec![urls(&public)]),
        cluster_role("view", rules(&[VIEW])),
        binding("cluster-admin", &["system:masters"], "cluster-admin"),
        binding("kubeadm:cluster-admins", &["kubeadm:cluster-admins"], "cluster-admin"),
        binding("system:basic-user", &everyone, "system:basic-user"),
        binding("system:discovery", &everyone, "system:discovery"),
        binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
            "system:public-info-viewer",
        ),
    ];
    for object in objects {
        let _ = send(Request::create(object));
    }
}
