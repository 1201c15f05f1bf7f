//! Validation of the RBAC kinds: names that are path segments, rules that say what they
//! allow, bindings whose role and subjects are well formed and whose role never changes.

use crate::api::{Object, PolicyRule, RoleRef, Subject};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// RBAC names only have to be usable in a URL path (`kubeadm:cluster-admins` is fine).
pub fn name_problem(name: &str) -> Option<&'static str> {
    match name {
        "." => Some("may not be '.'"),
        ".." => Some("may not be '..'"),
        _ if name.contains('/') => Some("may not contain '/'"),
        _ if name.contains('%') => Some("may not contain '%'"),
        _ => None,
    }
}

fn rule_errors(rule: &PolicyRule, path: &str, namespaced: bool, errors: &mut Vec<String>) {
    if rule.verbs.is_empty() {
        errors.push(format!("{path}.verbs: Required value: verbs must contain at least one value"));
    }
    if !rule.non_resource_urls.is_empty() {
        let urls = format!("[]string{{\"{}\"}}", rule.non_resource_urls.join("\", \""));
        if namespaced {
            errors.push(format!(
                "{path}.nonResourceURLs: Invalid value: {urls}: namespaced rules cannot apply to non-resource URLs"
            ));
        }
        if !rule.api_groups.is_empty() || !rule.resources.is_empty() || !rule.resource_names.is_empty() {
            errors.push(format!(
                "{path}.nonResourceURLs: Invalid value: {urls}: rules cannot apply to both regular resources and non-resource URLs"
            ));
        }
        return;
    }
    if rule.api_groups.is_empty() {
        errors.push(format!("{path}.apiGroups: Required value: resource rules must supply at least one api group"));
    }
    if rule.resources.is_empty() {
        errors.push(format!("{path}.resources: Required value: resource rules must supply at least one resource"));
    }
}

fn binding_errors(role: &RoleRef, subjects: &[Subject], namespaced: bool, errors: &mut Vec<String>) {
    if role.api_group != RBAC_GROUP {
        errors.push(format!(
            "roleRef.apiGroup: Unsupported value: \"{}\": supported values: \"{RBAC_GROUP}\"",
            role.api_group
        ));
    }
    match (role.kind.as_str(), namespaced) {
        ("ClusterRole", _) | ("Role", true) => {}
        (kind, true) => errors
            .push(format!("roleRef.kind: Unsupported value: \"{kind}\": supported values: \"Role\", \"ClusterRole\"")),
        (kind, false) => {
            errors.push(format!("roleRef.kind: Unsupported value: \"{kind}\": supported values: \"ClusterRole\""))
        }
    }
    if role.name.is_empty() {
        errors.push("roleRef.name: Required value".into());
    }
    for (i, s) in subjects.iter().enumerate() {
        let path = format!("subjects[{i}]");
        if s.name.is_empty() {
            errors.push(format!("{path}.name: Required value"));
        }
        match s.kind.as_str() {
            "ServiceAccount" => {
                if !s.api_group.is_empty() {
                    errors.push(format!(
                        "{path}.apiGroup: Unsupported value: \"{}\": supported values: \"\"",
                        s.api_group
                    ));
                }
                if !namespaced && s.namespace.is_empty() {
                    errors.push(format!("{path}.namespace: Required value"));
                }
            }
            "User" | "Group" => {
                if s.api_group != RBAC_GROUP {
                    errors.push(format!(
                        "{path}.apiGroup: Unsupported value: \"{}\": supported values: \"{RBAC_GROUP}\"",
                        s.api_group
                    ));
                }
            }
            kind => errors.push(format!(
                "{path}.kind: Unsupported value: \"{kind}\": supported values: \"ServiceAccount\", \"User\", \"Group\""
            )),
        }
    }
}

/// Field errors of an RBAC object (none for other kinds).
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn validate(object: &Object, errors: &mut Vec<String>) {
    match object {
        Object::Role(r) => {
            for (i, rule) in r.rules.iter().enumerate() {
                rule_errors(rule, &format!("rules[{i}]"), true, errors);
            }
        }
        Object::ClusterRole(r) => {
            for (i, rule) in r.rules.iter().enumerate() {
                rule_errors(rule, &format!("rules[{i}]"), false, errors);
            }
        }
        Object::RoleBinding(b) => binding_errors(&b.role_ref, &b.subjects, true, errors),
        Object::ClusterRoleBinding(b) => binding_errors(&b.role_ref, &b.subjects, false, errors),
        _ => {}
    }
}

/// A binding's role may not change: to grant another, make another binding.
pub fn validate_update(old: &Object, new: &Object) -> Vec<String> {
    let refs = match (old, new) {
        (Object::RoleBinding(o), Object::RoleBinding(n)) => (&o.role_ref, &n.role_ref),
        (Object::ClusterRoleBinding(o), Object::ClusterRoleBinding(n)) => (&o.role_ref, &n.role_ref),
        _ => return Vec::new(),
    };
    if refs.0 == refs.1 {
        return Vec::new();
    }
    let r = refs.1;
    vec![format!(
        "roleRef: Invalid value: rbac.RoleRef{{APIGroup:\"{}\", Kind:\"{}\", Name:\"{}\"}}: cannot change roleRef",
        r.api_group, r.kind, r.name
    )]
}

/// Defaulting: a User or Group subject without an API group is in RBAC's.
pub fn default_subjects(object: &mut Object) {
    let subjects = match object {
        Object::RoleBinding(b) => &mut b.subjects,
        Object::ClusterRoleBinding(b) => &mut b.subjects,
        _ => return,
    };
    for s in subjects.iter_mut().filter(|s| s.api_group.is_empty() && (s.kind == "User" || s.kind == "Group")) {
        s.api_group = RBAC_GROUP.into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ClusterRoleBinding, Role, RoleBinding};

    #[test]
    fn a_rule_without_verbs_or_resources_is_invalid_as_the_api_server_words_it() {
        let role = Object::Role(Role {
            rules: vec![PolicyRule { api_groups: vec![String::new()], ..Default::default() }],
            ..Default::default()
        });
        let mut errors = Vec::new();
        validate(&role, &mut errors);
        assert_eq!(
            errors,
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].resources: Required value: resource rules must supply at least one resource"
            ]
        );
    }

    #[test]
    fn a_cluster_role_binding_may_only_grant_a_cluster_role() {
        let b = Object::ClusterRoleBinding(ClusterRoleBinding {
            role_ref: RoleRef { api_group: RBAC_GROUP.into(), kind: "Role".into(), name: "x".into() },
            ..Default::default()
        });
        let mut errors = Vec::new();
        validate(&b, &mut errors);
        assert_eq!(errors, ["roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\""]);
    }

    #[test]
    fn a_bindings_role_cannot_change_but_its_subjects_can() {
        let role = |name: &str| RoleRef { api_group: RBAC_GROUP.into(), kind: "Role".into(), name: name.into() };
        let old = Object::RoleBinding(RoleBinding { role_ref: role("a"), ..Default::default() });
        let mut same = RoleBinding { role_ref: role("a"), ..Default::default() };
        same.subjects.push(Subject { kind: "User".into(), name: "jane".into(), ..Default::default() });
        assert!(validate_update(&old, &Object::RoleBinding(same)).is_empty());
        let changed = Object::RoleBinding(RoleBinding { role_ref: role("b"), ..Default::default() });
        assert_eq!(
            validate_update(&old, &changed),
            [
                "roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"Role\", Name:\"b\"}: cannot change roleRef"
            ]
        );
    }
}
