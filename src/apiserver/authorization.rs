//! Authorization: who may do what. The control plane's own components act under the
//! bootstrap policy kubeadm sets up for them; everyone else (the person at kubectl, or whoever
//! kubectl impersonates with `--as`) is judged by RBAC over the stored Roles, ClusterRoles and
//! their bindings.

use crate::api::{Kind, Object, PolicyRule, RoleRef, Subject};

use crate::etcd::Etcd;

/// An authenticated identity: a user name and its groups.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub user: String,
    pub groups: Vec<String>,
}

impl Identity {
    /// The identity `user` authenticates as, with the groups its credentials carry (kubeadm's
    /// admin is in `kubeadm:cluster-admins`, a service account in its namespace's group) plus
    /// `extra` (what `--as-group` asks for) and `system:authenticated`.
    pub fn of(user: &str, extra: &[String]) -> Identity {
        let mut groups: Vec<String> = Vec::new();
        if extra.is_empty() {
            if user == crate::api::well_known::ADMIN_USER {
                groups.push("kubeadm:cluster-admins".into());
            } else if let Some(rest) = user.strip_prefix("system:serviceaccount:") {
                let namespace = rest.split(':').next().unwrap_or_default();
                groups.push("system:serviceaccounts".into());
                groups.push(format!("system:serviceaccounts:{namespace}"));
            } else if user.starts_with("system:node:") {
                groups.push("system:nodes".into());
            }
        } else {
            groups.extend(extra.iter().cloned());
        }
        if !groups.iter().any(|g| g == "system:authenticated") {
            groups.push("system:authenticated".into());
        }
        Identity { user: user.to_string(), groups }
    }
}

/// What a request asks to do, as authorizers see it.
#[derive(Clone, Debug)]
pub struct Attributes {
    pub verb: String,
    /// The API group: empty for the core group.
    pub group: String,
    /// The resource, with its subresource when there is one: `pods`, `pods/binding`.
    pub resource: String,
    /// Empty for cluster-scoped resources and for requests across all namespaces.
    pub namespace: String,
    /// Empty for lists, watches and creates.
    pub name: String,
}

impl Attributes {
    pub fn new(verb: &str, kind: Kind, subresource: Option<&str>, namespace: &str, name: &str) -> Attributes {
        let resource = match subresource {
            Some(sub) => format!("{}/{sub}", kind.info().resource),
            None => kind.info().resource.to_string(),
        };
        let group = kind.info().group.to_string();
        Attributes { verb: verb.into(), group, resource, namespace: namespace.into(), name: name.into() }
    }

    /// The API server's refusal: `pods "web" is forbidden: User "jane" cannot get resource
    /// "pods" in API group "" in the namespace "default"`.
    pub fn forbidden_message(&self, who: &Identity) -> String {
        let plural = self.resource.split('/').next().unwrap_or_default();
        let qualified = if self.group.is_empty() { plural.to_string() } else { format!("{plural}.{}", self.group) };
        let what = if self.name.is_empty() { qualified } else { format!("{qualified} \"{}\"", self.name) };
        let scope = if self.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace \"{}\"", self.namespace)
        };
        format!(
            "{what} is forbidden: User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {scope}",
            who.user, self.verb, self.resource, self.group
        )
    }
}

/// The rules `role` grants, read from the store (a RoleBinding's `Role` lives in its namespace).
fn rules_of(etcd: &Etcd, role: &RoleRef, namespace: &str) -> Vec<PolicyRule> {
    let (resource, ns) = match role.kind.as_str() {
        "Role" => ("roles", namespace),
        "ClusterRole" => ("clusterroles", ""),
        _ => return Vec::new(),
    };
    match etcd.get(&Etcd::key_for(resource, ns, &role.name)).map(|kv| kv.value.as_ref()) {
        Some(Object::Role(r)) => r.rules.clone(),
        Some(Object::ClusterRole(r)) => r.rules.clone(),
        _ => Vec::new(),
    }
}

/// Every rule `who` holds where `namespace` is concerned (cluster-wide grants, plus the
/// namespace's own when it is not empty), each with the reason it is held.
pub fn rules_for(etcd: &Etcd, who: &Identity, namespace: &str) -> Vec<(PolicyRule, String)> {
    let mut out = Vec::new();
    let mut grant = |binding: String, subjects: &[Subject], role: &RoleRef, ns: &str| {
        let Some(subject) = subjects.iter().find(|s| s.matches(&who.user, &who.groups, ns)) else { return };
        let reason = format!("RBAC: allowed by {binding} of {} \"{}\" to {}", role.kind, role.name, subject.describe());
        out.extend(rules_of(etcd, role, ns).into_iter().map(|r| (r, reason.clone())));
    };
    for (_, kv) in etcd.range("/registry/clusterrolebindings/") {
        if let Object::ClusterRoleBinding(b) = kv.value.as_ref() {
            grant(format!("ClusterRoleBinding \"{}\"", b.metadata.name), &b.subjects, &b.role_ref, "");
        }
    }
    if !namespace.is_empty() {
        for (_, kv) in etcd.range(&format!("/registry/rolebindings/{namespace}/")) {
            if let Object::RoleBinding(b) = kv.value.as_ref() {
                let binding = format!("RoleBinding \"{}/{namespace}\"", b.metadata.name);
                grant(binding, &b.subjects, &b.role_ref, namespace);
            }
        }
    }
    out
}

/// RBAC's answer: `Ok(reason)` naming the binding that allows it, or `Err(message)`.
pub fn authorize(etcd: &Etcd, who: &Identity, attrs: &Attributes) -> Result<String, String> {
    rules_for(etcd, who, &attrs.namespace)
        .into_iter()
        .find(|(rule, _)| rule.allows(&attrs.verb, &attrs.group, &attrs.resource, &attrs.name))
        .map(|(_, reason)| reason)
        .ok_or_else(|| attrs.forbidden_message(who))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::{Reply, Request};
    use crate::cluster::{Cluster, ClusterConfig};

    fn cluster() -> Cluster {
        Cluster::new(ClusterConfig { workers: 1, ..ClusterConfig::default() })
    }

    fn apply(cluster: &mut Cluster, yaml: &str) {
        let value: serde_json::Value = crate::yaml::from_str(yaml).expect("yaml");
        let kind = crate::api::Kind::ALL.iter().find(|k| k.info().kind == value["kind"]).copied().expect("kind");
        let object = Object::decode(kind, &value).expect("decodes");
        cluster.request(Request::create(object)).expect("created");
    }

    fn can(cluster: &Cluster, user: &str, verb: &str, kind: Kind, namespace: &str) -> bool {
        let attrs = Attributes::new(verb, kind, None, namespace, "");
        authorize(cluster.inspect().etcd(), &Identity::of(user, &[]), &attrs).is_ok()
    }

    #[test]
    fn the_admin_is_allowed_through_kubeadms_cluster_admins_binding() {
        let c = cluster();
        let attrs = Attributes::new("delete", Kind::Node, None, "", "worker-1");
        let reason = authorize(c.inspect().etcd(), &Identity::of("kubernetes-admin", &[]), &attrs).expect("allowed");
        assert_eq!(
            reason,
            "RBAC: allowed by ClusterRoleBinding \"kubeadm:cluster-admins\" of ClusterRole \"cluster-admin\" to Group \"kubeadm:cluster-admins\""
        );
    }

    #[test]
    fn a_user_without_bindings_is_refused_with_the_api_servers_words() {
        let c = cluster();
        let attrs = Attributes::new("list", Kind::Pod, None, "default", "");
        assert_eq!(
            authorize(c.inspect().etcd(), &Identity::of("jane", &[]), &attrs),
            Err("pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"".into())
        );
        let node = Attributes::new("get", Kind::Node, None, "", "worker-1");
        assert_eq!(
            authorize(c.inspect().etcd(), &Identity::of("jane", &[]), &node),
            Err("nodes \"worker-1\" is forbidden: User \"jane\" cannot get resource \"nodes\" in API group \"\" at the cluster scope".into())
        );
    }

    #[test]
    fn a_role_binding_grants_its_roles_rules_in_its_namespace_only() {
        let mut c = cluster();
        apply(
            &mut c,
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: pod-reader, namespace: default}\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get, watch, list]\n",
        );
        apply(
            &mut c,
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: read-pods, namespace: default}\nsubjects:\n- kind: User\n  name: jane\n  apiGroup: rbac.authorization.k8s.io\nroleRef:\n  kind: Role\n  name: pod-reader\n  apiGroup: rbac.authorization.k8s.io\n",
        );
        assert!(can(&c, "jane", "list", Kind::Pod, "default"));
        assert!(!can(&c, "jane", "delete", Kind::Pod, "default"));
        assert!(!can(&c, "jane", "list", Kind::Pod, "kube-system"));
        assert!(!can(&c, "jane", "list", Kind::Pod, ""), "listing across namespaces needs a cluster-wide grant");
        let _ = matches!(c.request(Request::list(Kind::Pod, "default")), Ok(Reply::List { .. }));
    }

    #[test]
    fn a_role_binding_to_a_cluster_role_grants_it_in_the_bindings_namespace() {
        let mut c = cluster();
        apply(
            &mut c,
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: dev-view, namespace: kube-system}\nsubjects:\n- kind: ServiceAccount\n  name: robot\n  namespace: default\nroleRef:\n  kind: ClusterRole\n  name: view\n  apiGroup: rbac.authorization.k8s.io\n",
        );
        let robot = "system:serviceaccount:default:robot";
        assert!(can(&c, robot, "list", Kind::Deployment, "kube-system"));
        assert!(!can(&c, robot, "list", Kind::Secret, "kube-system"), "view does not read secrets");
        assert!(!can(&c, robot, "list", Kind::Deployment, "default"));
    }
}
