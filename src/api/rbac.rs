//! Role-based access control (rbac.authorization.k8s.io/v1): Roles and ClusterRoles say what
//! may be done, RoleBindings and ClusterRoleBindings say to whom.

use super::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One permission: these verbs on these resources of these API groups (optionally only the
/// named objects), or on these non-resource URLs. `*` matches everything.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyRule {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    #[serde(default, rename = "nonResourceURLs", skip_serializing_if = "Vec::is_empty")]
    pub non_resource_urls: Vec<String>,
    #[serde(default)]
    pub verbs: Vec<String>,
}

fn covers(list: &[String], wanted: &str) -> bool {
    list.iter().any(|v| v == "*" || v == wanted)
}

impl PolicyRule {
    /// Whether the rule allows `verb` on `resource` (with its subresource, as `pods/log`) of
    /// `group`, for the object `name` (empty for lists and creates).
    pub fn allows(&self, verb: &str, group: &str, resource: &str, name: &str) -> bool {
        covers(&self.verbs, verb)
            && covers(&self.api_groups, group)
            && (covers(&self.resources, resource)
                || resource
                    .split_once('/')
                    .is_some_and(|(_, sub)| self.resources.iter().any(|r| *r == format!("*/{sub}"))))
            && (self.resource_names.is_empty() || (!name.is_empty() && self.resource_names.iter().any(|n| n == name)))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Role {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<PolicyRule>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterRole {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<PolicyRule>,
    /// Kept as written; the sandbox does not aggregate roles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation_rule: Option<Value>,
}

/// Who a binding grants to: a `User`, a `Group` or a `ServiceAccount` (with its namespace).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Subject {
    #[serde(default)]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// The role a binding grants: a `Role` (in the binding's namespace) or a `ClusterRole`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleRef {
    #[serde(default)]
    pub api_group: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
}

/// A RoleBinding or ClusterRoleBinding: the two kinds have the same fields (the role a
/// RoleBinding grants applies in its namespace only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Binding {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<Subject>,
    #[serde(default)]
    pub role_ref: RoleRef,
}

pub type RoleBinding = Binding;
pub type ClusterRoleBinding = Binding;

impl Subject {
    /// Whether this subject names the identity `user` with `groups`; `namespace` is the
    /// binding's, where a ServiceAccount subject without one lives.
    pub fn matches(&self, user: &str, groups: &[String], namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => self.name == user,
            "Group" => groups.contains(&self.name),
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() { namespace } else { &self.namespace };
                user.strip_prefix("system:serviceaccount:")
                    .and_then(|rest| rest.split_once(':'))
                    .is_some_and(|(n, name)| n == ns && name == self.name)
            }
            _ => false,
        }
    }

    /// `User "jane"`, as authorization reasons name a subject.
    pub fn describe(&self) -> String {
        match self.kind.as_str() {
            "ServiceAccount" => format!("ServiceAccount \"{}/{}\"", self.namespace, self.name),
            kind => format!("{kind} \"{}\"", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str], names: &[&str]) -> PolicyRule {
        let own = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        PolicyRule {
            api_groups: own(groups),
            resources: own(resources),
            verbs: own(verbs),
            resource_names: own(names),
            ..Default::default()
        }
    }

    #[test]
    fn a_rule_allows_its_verbs_on_its_resources_of_its_groups_only() {
        let r = rule(&[""], &["pods"], &["get", "list", "watch"], &[]);
        assert!(r.allows("list", "", "pods", ""));
        assert!(!r.allows("delete", "", "pods", "web"));
        assert!(!r.allows("list", "apps", "pods", ""));
        assert!(!r.allows("list", "", "services", ""));
        assert!(!r.allows("get", "", "pods/log", "web"), "a subresource needs its own rule");
    }

    #[test]
    fn wildcards_match_everything_and_resource_names_limit_to_named_objects() {
        assert!(rule(&["*"], &["*"], &["*"], &[]).allows("deletecollection", "apps", "deployments", ""));
        let named = rule(&[""], &["configmaps"], &["get"], &["app-config"]);
        assert!(named.allows("get", "", "configmaps", "app-config"));
        assert!(!named.allows("get", "", "configmaps", "other"));
        assert!(!named.allows("get", "", "configmaps", ""), "a named rule never allows a list");
    }

    #[test]
    fn service_account_subjects_match_their_system_user_name() {
        let sa = Subject { kind: "ServiceAccount".into(), name: "robot".into(), ..Default::default() };
        assert!(sa.matches("system:serviceaccount:dev:robot", &[], "dev"));
        assert!(!sa.matches("system:serviceaccount:prod:robot", &[], "dev"));
        let group = Subject { kind: "Group".into(), name: "devs".into(), ..Default::default() };
        assert!(group.matches("jane", &["devs".into()], ""));
    }
}
