//! The ValidatingAdmissionPolicy admission plugin: for each binding whose policy concerns the
//! request (its `matchConstraints`, the binding's `matchResources`, their namespace and object
//! selectors, the policy's `matchConditions`), the policy's CEL validations are evaluated with
//! `object`, `oldObject`, `params`, `request`, `namespaceObject` and `variables`; a failed
//! validation is acted on as the binding says — Deny refuses the request, Warn sends the
//! client a warning, Audit notes it — and an expression's error follows `failurePolicy`.

use super::Status;
use super::cel::{self, Activation, Val};
use crate::api::admission_policy::{MatchResources, ResourceRule, Validation};
use crate::api::meta::LabelSelector;
use crate::api::{Kind, Object, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding};
use crate::etcd::Etcd;
use crate::etcd::lookup_key::LookupKey;
use crate::util::json_macro::json;
use std::collections::BTreeMap;

const BINDINGS: &str = "/registry/validatingadmissionpolicybindings/";

/// What admission knows of one request.
pub struct Attributes<'a> {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'static str,
    pub kind: Kind,
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub object: Option<&'a Object>,
    pub old_object: Option<&'a Object>,
    pub user: &'a str,
    pub groups: &'a [String],
    pub dry_run: bool,
}

/// What the policies in force made of an allowed request.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    /// Sent back to the client (kubectl prints `Warning: …`).
    pub warnings: Vec<String>,
    /// For the record: each policy evaluated and what it found.
    pub notes: Vec<String>,
}

/// Evaluates every binding in force on the request: the refusal of the first Deny, or what
/// the others had to say.
pub fn admit(etcd: &Etcd, attrs: &Attributes) -> Result<Verdict, Status> {
    let mut verdict = Verdict::default();
    // Nothing to do on a cluster without bindings (most writes, on most clusters).
    if !etcd.any_under(BINDINGS) {
        return Ok(verdict);
    }
    let bindings: Vec<ValidatingAdmissionPolicyBinding> = etcd
        .range(BINDINGS)
        .filter_map(|(_, kv)| match &*kv.value {
            Object::ValidatingAdmissionPolicyBinding(b) => Some((**b).clone()),
            _ => None,
        })
        .collect();
    for binding in bindings {
        let key = LookupKey::etcd("validatingadmissionpolicies", "", &binding.spec.policy_name);
        let Some(Object::ValidatingAdmissionPolicy(policy)) = etcd.get(&key).map(|kv| &*kv.value) else { continue };
        check_binding(etcd, attrs, policy, &binding, &mut verdict)?;
    }
    Ok(verdict)
}

/// A failed validation: its message and the reason it refuses with.
struct Failure {
    message: String,
    reason: Option<String>,
}

fn check_binding(
    etcd: &Etcd,
    attrs: &Attributes,
    policy: &ValidatingAdmissionPolicy,
    binding: &ValidatingAdmissionPolicyBinding,
    verdict: &mut Verdict,
) -> Result<(), Status> {
    let namespace_object = namespace_object(etcd, attrs);
    let Some(constraints) = &policy.spec.match_constraints else { return Ok(()) };
    if !matches(constraints, attrs, namespace_object, true) {
        return Ok(());
    }
    if let Some(resources) = &binding.spec.match_resources {
        if !matches(resources, attrs, namespace_object, false) {
            return Ok(());
        }
    }
    let (policy_name, binding_name) = (&policy.metadata.name, &binding.metadata.name);
    let fail_closed = policy.spec.failure_policy.as_deref() != Some("Ignore");
    let deny = |message: String, reason: Option<&str>| refusal(attrs, policy_name, binding_name, &message, reason);
    // The parameters: none, one object, or each object a selector picks (checked in turn).
    let params = match parameters(etcd, attrs, policy, binding) {
        Ok(params) => params,
        Err(Some(why)) if fail_closed => return Err(deny(why, None)),
        Err(_) => return Ok(()),
    };
    let mut vars = BTreeMap::new();
    vars.insert("object".to_string(), attrs.object.map_or(Val::Null, |o| Val::from_json(&o.to_json_value())));
    vars.insert("oldObject".to_string(), attrs.old_object.map_or(Val::Null, |o| Val::from_json(&o.to_json_value())));
    vars.insert("request".to_string(), Val::from_json(&request(attrs)));
    vars.insert(
        "namespaceObject".to_string(),
        namespace_object.map_or(Val::Null, |o| Val::from_json(&o.to_json_value())),
    );
    let actions = &binding.spec.validation_actions;
    for param in params {
        vars.insert("params".to_string(), param);
        let failures = match evaluate(policy, &vars) {
            Ok(f) => f,
            Err(why) if fail_closed => return Err(deny(why, None)),
            Err(_) => continue,
        };
        if failures.is_empty() {
            verdict
                .notes
                .push(format!("ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}': allowed"));
        }
        for failure in failures {
            if actions.iter().any(|a| a == "Deny") {
                return Err(deny(failure.message, failure.reason.as_deref()));
            }
            if actions.iter().any(|a| a == "Warn") {
                verdict.warnings.push(format!(
                    "Validation failed for ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}': {}",
                    failure.message
                ));
            }
            if actions.iter().any(|a| a == "Audit") {
                verdict.notes.push(format!(
                    "audit annotation validation.policy.admission.k8s.io/validation_failure: policy '{policy_name}', binding '{binding_name}': {}",
                    failure.message
                ));
            }
        }
    }
    Ok(())
}

/// The policy's checks with one set of parameters: the failed validations, or the error that
/// stopped them (to be handled by `failurePolicy`). A false match condition skips them all.
fn evaluate(policy: &ValidatingAdmissionPolicy, vars: &BTreeMap<String, Val>) -> Result<Vec<Failure>, String> {
    let mut variables = BTreeMap::new();
    for variable in &policy.spec.variables {
        let value = {
            let act = Activation { vars, variables: &variables };
            cel::parse(&variable.expression).and_then(|e| cel::evaluate(&e, &act))
        };
        variables.insert(variable.name.clone(), value);
    }
    let act = Activation { vars, variables: &variables };
    for condition in &policy.spec.match_conditions {
        match cel::parse(&condition.expression).and_then(|e| cel::evaluate(&e, &act)) {
            Ok(Val::Bool(true)) => {}
            Ok(Val::Bool(false)) => return Ok(Vec::new()),
            Ok(other) => {
                return Err(format!(
                    "matchCondition '{}' must evaluate to bool, got {}",
                    condition.name,
                    other.type_name()
                ));
            }
            Err(e) => return Err(format!("failed to evaluate matchCondition '{}': {e}", condition.name)),
        }
    }
    let mut failures = Vec::new();
    for validation in &policy.spec.validations {
        let expression = validation.expression.trim();
        match cel::parse(expression).and_then(|e| cel::evaluate(&e, &act)) {
            Ok(Val::Bool(true)) => {}
            Ok(Val::Bool(false)) => {
                failures.push(Failure { message: failure_message(validation, &act), reason: validation.reason.clone() })
            }
            Ok(other) => {
                return Err(format!(
                    "expression '{expression}' resulted in error: expected a bool, got {}",
                    other.type_name()
                ));
            }
            Err(e) => return Err(format!("expression '{expression}' resulted in error: {e}")),
        }
    }
    Ok(failures)
}

/// `messageExpression` when it gives a string that is not blank, else `message`, else the
/// expression itself.
fn failure_message(validation: &Validation, act: &Activation) -> String {
    if !validation.message_expression.is_empty() {
        if let Ok(Val::Str(s)) = cel::parse(&validation.message_expression).and_then(|e| cel::evaluate(&e, act)) {
            if !s.trim().is_empty() && !s.contains('\n') {
                return s;
            }
        }
    }
    if !validation.message.is_empty() {
        return validation.message.clone();
    }
    format!("failed expression: {}", validation.expression.trim())
}

/// The refusal: a Forbidden-worded message whose reason (Invalid unless the validation names
/// another) sets the code, with the policy's words as the one cause.
fn refusal(attrs: &Attributes, policy: &str, binding: &str, message: &str, reason: Option<&str>) -> Status {
    let message = format!("ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {message}");
    let (code, reason) = match reason.unwrap_or("Invalid") {
        "Unauthorized" => (401, "Unauthorized"),
        "Forbidden" => (403, "Forbidden"),
        "RequestEntityTooLarge" => (413, "RequestEntityTooLarge"),
        _ => (422, "Invalid"),
    };
    let resource = attrs.kind.qualified_resource();
    let mut status = Status::invalid(attrs.kind, attrs.name, vec![format!(": {message}")]);
    status.code = code;
    status.reason = reason;
    status.message = format!("{resource} \"{}\" is forbidden: {message}", attrs.name);
    // kubectl names the resource (not the kind) of a refusal that came from admission.
    status.kind = attrs.kind.info().resource.to_string();
    if reason != "Invalid" {
        status.kind.clear();
    }
    status
}

pub(super) fn namespace_object<'e>(etcd: &'e Etcd, attrs: &Attributes) -> Option<&'e Object> {
    if attrs.namespace.is_empty() || !attrs.kind.info().namespaced {
        return None;
    }
    etcd.get(&LookupKey::etcd("namespaces", "", attrs.namespace)).map(|kv| &*kv.value)
}

/// CEL's `request`: the admission request's attributes.
pub(super) fn request(attrs: &Attributes) -> serde_json::Value {
    let info = attrs.kind.info();
    json!({
        "operation": attrs.operation,
        "name": attrs.name,
        "namespace": attrs.namespace,
        "subResource": attrs.subresource,
        "dryRun": attrs.dry_run,
        "kind": {"group": info.group, "version": info.version, "kind": info.kind},
        "resource": {"group": info.group, "version": info.version, "resource": info.resource},
        "userInfo": {"username": attrs.user, "groups": attrs.groups},
    })
}

/// Whether a policy's constraints (`policy`: resource rules required) or a binding's match
/// resources (rules optional: none means all the policy matches) take in the request.
pub(super) fn matches(
    resources: &MatchResources,
    attrs: &Attributes,
    namespace: Option<&Object>,
    policy: bool,
) -> bool {
    let rules_ok = if resources.resource_rules.is_empty() {
        !policy
    } else {
        resources.resource_rules.iter().any(|r| rule_matches(r, attrs))
    };
    if !rules_ok || resources.exclude_resource_rules.iter().any(|r| rule_matches(r, attrs)) {
        return false;
    }
    if let Some(selector) = &resources.namespace_selector {
        let labels = match (attrs.kind, namespace) {
            // A namespace is matched by its own labels; other cluster-scoped objects always.
            (Kind::Namespace, _) => attrs.object.or(attrs.old_object).map(|o| o.meta().labels.clone()),
            (_, Some(ns)) => Some(ns.meta().labels.clone()),
            _ if !attrs.kind.info().namespaced => None,
            _ => Some(Default::default()),
        };
        if let Some(labels) = labels {
            if !selector.matches(&labels) {
                return false;
            }
        }
    }
    if let Some(selector) = &resources.object_selector {
        let any = [attrs.object, attrs.old_object].into_iter().flatten().any(|o| selector.matches(&o.meta().labels));
        if !any {
            return false;
        }
    }
    true
}

fn rule_matches(rule: &ResourceRule, attrs: &Attributes) -> bool {
    let info = attrs.kind.info();
    let any = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
    // `*` is every resource (not its subresources); `deployments/*` every subresource of
    // deployments; `*/scale` the scale subresource of any resource.
    let resource_ok = rule.resources.iter().any(|r| match r.split_once('/') {
        None => (r == "*" || r == info.resource) && attrs.subresource.is_empty(),
        Some((res, sub)) => {
            (res == "*" || res == info.resource)
                && !attrs.subresource.is_empty()
                && (sub == "*" || sub == attrs.subresource)
        }
    });
    let scope_ok = match rule.scope.as_deref() {
        Some("Cluster") => !info.namespaced,
        Some("Namespaced") => info.namespaced,
        _ => true,
    };
    any(&rule.api_groups, info.group)
        && any(&rule.api_versions, info.version)
        && any(&rule.operations, attrs.operation)
        && resource_ok
        && scope_ok
        && (rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == attrs.name))
}

/// The parameters a binding gives its policy's checks: `[null]` when the policy takes none;
/// the objects `paramRef` names or selects otherwise. `Err(Some(why))` refuses (subject to
/// `failurePolicy`); `Err(None)` lets the request through unchecked.
fn parameters(
    etcd: &Etcd,
    attrs: &Attributes,
    policy: &ValidatingAdmissionPolicy,
    binding: &ValidatingAdmissionPolicyBinding,
) -> Result<Vec<Val>, Option<String>> {
    let Some(param_kind) = &policy.spec.param_kind else { return Ok(vec![Val::Null]) };
    let Some(param_ref) = &binding.spec.param_ref else {
        return Err(Some(format!(
            "failed to configure binding: binding '{}' has no paramRef, which policy '{}' needs",
            binding.metadata.name, policy.metadata.name
        )));
    };
    let Some(kind) = Kind::from_type_meta(&param_kind.api_version, &param_kind.kind) else {
        return Err(Some(format!(
            "failed to configure policy: failed to find resource referenced by paramKind: '{}, Kind={}'",
            param_kind.api_version, param_kind.kind
        )));
    };
    let namespace = match (kind.info().namespaced, param_ref.namespace.as_str()) {
        (false, _) => "",
        (true, "") => attrs.namespace,
        (true, ns) => ns,
    };
    let resource = kind.info().resource;
    let found: Vec<Val> = if !param_ref.name.is_empty() {
        etcd.get(&LookupKey::etcd(resource, namespace, &param_ref.name))
            .map(|kv| Val::from_json(&kv.value.to_json_value()))
            .into_iter()
            .collect()
    } else {
        let selector = param_ref.selector.clone().unwrap_or_else(LabelSelector::default);
        let prefix = if namespace.is_empty() {
            format!("/registry/{resource}/")
        } else {
            format!("/registry/{resource}/{namespace}/")
        };
        etcd.range(&prefix)
            .filter(|(_, kv)| selector.matches(&kv.value.meta().labels))
            .map(|(_, kv)| Val::from_json(&kv.value.to_json_value()))
            .collect()
    };
    if !found.is_empty() {
        return Ok(found);
    }
    match param_ref.parameter_not_found_action.as_deref() {
        Some("Allow") => Err(None),
        _ => Err(Some("no params found for policy binding with `Deny` parameterNotFoundAction".into())),
    }
}

#[cfg(test)]
mod tests {
    use crate::record::{Happening, Stage};
    use crate::shell::Session;

    const POLICY: &str = "kubectl apply -f - <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cap
spec:
  failurePolicy: FAILURE
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
    objectSelector:
      matchLabels: {capped: 'yes'}
  validations:
  - expression: EXPRESSION
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cap-binding
spec:
  policyName: cap
  validationActions: [ACTIONS]
EOF
";

    fn session(expression: &str, actions: &str, failure: &str) -> Session {
        let mut s = Session::new(1);
        let script = POLICY.replace("EXPRESSION", expression).replace("ACTIONS", actions).replace("FAILURE", failure);
        let out = s.transcript(&script);
        assert!(
            out.contains("validatingadmissionpolicybinding.admissionregistration.k8s.io/cap-binding created"),
            "{out}"
        );
        s
    }

    const CAPPED: &str = "kubectl apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {capped: 'yes'}}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
EOF
";

    fn apply(s: &mut Session, replicas: u32) -> String {
        s.transcript(&CAPPED.replace("REPLICAS", &replicas.to_string()))
    }

    #[test]
    fn a_denied_write_is_refused_at_validating_admission_with_the_servers_message() {
        let mut s = session("object.spec.replicas <= 5", "Deny", "Fail");
        let out = apply(&mut s, 6);
        assert!(
            out.contains("The deployments \"web\" is invalid: : ValidatingAdmissionPolicy 'cap' with binding 'cap-binding' denied request: failed expression: object.spec.replicas <= 5"),
            "{out}"
        );
        let refused = s.cluster.record.entries().rev().find_map(|e| match &e.what {
            Happening::Request { verb: "create", code, failed_at, .. } => Some((*code, *failed_at)),
            _ => None,
        });
        assert_eq!(refused, Some((422, Some(Stage::ValidatingAdmission))));
        assert!(apply(&mut s, 5).contains("deployment.apps/web created"));
    }

    #[test]
    fn objects_the_object_selector_leaves_out_are_not_checked() {
        let mut s = session("object.spec.replicas <= 5", "Deny", "Fail");
        let out = s.transcript("kubectl create deployment free --image=nginx --replicas=9\n");
        assert!(out.contains("deployment.apps/free created"), "{out}");
    }

    #[test]
    fn warn_lets_the_write_through_and_kubectl_prints_the_warning_first() {
        let mut s = session("object.spec.replicas <= 5", "Warn", "Fail");
        let out = apply(&mut s, 6);
        assert!(
            out.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'cap' with binding 'cap-binding': failed expression: object.spec.replicas <= 5\ndeployment.apps/web created"),
            "{out}"
        );
    }

    #[test]
    fn an_expression_error_refuses_when_failure_policy_is_fail_and_passes_when_ignore() {
        let mut s = session("object.spec.missing > 1", "Deny", "Fail");
        let out = apply(&mut s, 1);
        assert!(out.contains("expression 'object.spec.missing > 1' resulted in error: no such key: missing"), "{out}");
        let mut s = session("object.spec.missing > 1", "Deny", "Ignore");
        assert!(apply(&mut s, 1).contains("deployment.apps/web created"));
    }

    #[test]
    fn an_expression_that_does_not_parse_or_runs_on_never_panics_and_follows_failure_policy() {
        let mut s = session(
            "\"[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))\"",
            "Deny",
            "Fail",
        );
        assert!(apply(&mut s, 1).contains("actual cost limit exceeded"));
        let mut s = session("\"object.spec.replicas <=\"", "Deny", "Fail");
        assert!(apply(&mut s, 1).contains("resulted in error: Syntax error"));
    }
}
