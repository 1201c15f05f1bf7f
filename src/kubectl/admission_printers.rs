//! The admission policy kinds as `kubectl get` shows them: a policy's count of validations
//! and the kind of its parameters, a binding's policy and parameter reference.

use super::age::age;
use crate::api::Object;
use crate::sim::Time;

/// The columns of `kubectl get validatingadmissionpolicies` / `…bindings`.
pub fn headers(binding: bool) -> &'static [&'static str] {
    if binding { &["NAME", "POLICYNAME", "PARAMREF", "AGE"] } else { &["NAME", "VALIDATIONS", "PARAMKIND", "AGE"] }
}

/// A policy's row (NAME, VALIDATIONS, PARAMKIND, AGE) or a binding's (NAME, POLICYNAME,
/// PARAMREF, AGE); what is not set prints `<unset>`.
pub fn row(object: &Object, now: Time) -> Vec<String> {
    let age = age(object.meta().creation_timestamp, now);
    match object {
        Object::ValidatingAdmissionPolicy(p) => vec![
            p.metadata.name.clone(),
            p.spec.validations.len().to_string(),
            p.spec.param_kind.as_ref().map_or("<unset>".into(), |k| format!("{}/{}", k.api_version, k.kind)),
            age,
        ],
        Object::ValidatingAdmissionPolicyBinding(b) => {
            let param = match &b.spec.param_ref {
                Some(r) if !r.name.is_empty() && !r.namespace.is_empty() => format!("{}/{}", r.namespace, r.name),
                // Whether the parameter's kind is namespaced cannot be told from here.
                Some(r) if !r.name.is_empty() => format!("*/{}", r.name),
                Some(r) if r.selector.is_some() => {
                    r.selector.as_ref().map(|s| s.to_selector_string()).unwrap_or_default()
                }
                _ => "<unset>".into(),
            };
            vec![b.metadata.name.clone(), b.spec.policy_name.clone(), param, age]
        }
        _ => vec![object.name().to_string(), age],
    }
}
