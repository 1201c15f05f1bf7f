//! AppArmor on the nodes: the profile a container asks for, and whether its node has it. A
//! fresh cluster's nodes load no profile of their own, so `RuntimeDefault` and `Unconfined`
//! work and a `Localhost` profile does not: the container runtime fails closed, refusing to
//! create the container (CreateContainerError), and the kubelet tries again after its sync
//! back-off.

use crate::api::{Container, Pod};
use serde_json::Value;

/// The annotation, before the `securityContext.appArmorProfile` field, that named a
/// container's profile (`localhost/NAME`, `runtime/default`, `unconfined`); still honoured.
const ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// The `Localhost` profile `container` of `pod` runs under, if any: the container's own
/// `appArmorProfile`, else the annotation naming it, else the pod's `appArmorProfile`.
pub fn localhost_profile(pod: &Pod, container: &Container) -> Option<String> {
    let annotation = pod.metadata.annotations.get(&[ANNOTATION_PREFIX, &container.name].concat());
    let chosen = profile_field(&container.security_context)
        .or_else(|| annotation.map(|value| value.strip_prefix("localhost/")))
        .or_else(|| profile_field(&pod.spec.security_context));
    chosen.flatten().map(str::to_string)
}

/// A security context's `appArmorProfile`: `Some(Some(name))` for a `Localhost` one,
/// `Some(None)` for another type, `None` when it names none.
fn profile_field(context: &Option<Value>) -> Option<Option<&str>> {
    let profile = context.as_ref()?.get("appArmorProfile")?;
    let kind = profile.get("type").and_then(Value::as_str).unwrap_or("");
    Some((kind == "Localhost").then(|| profile.get("localhostProfile").and_then(Value::as_str).unwrap_or("")))
}

/// What the runtime answers when asked to create a container under a profile no node has.
pub fn not_loaded(container_id: &str, profile: &str) -> String {
    format!(
        "failed to generate container \"{container_id}\" spec: failed to generate apparmor spec opts: \
         apparmor profile not found {profile}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_json::from_value(crate::yaml::from_str(yaml).unwrap()).unwrap()
    }

    #[test]
    fn a_localhost_profile_comes_from_the_container_the_annotation_or_the_pod_in_that_order() {
        let p = pod(&[
            "metadata:",
            "  name: p",
            "  annotations:",
            "    container.apparmor.security.beta.kubernetes.io/a: localhost/from-annotation",
            "spec:",
            "  securityContext:",
            "    appArmorProfile: {type: Localhost, localhostProfile: from-pod}",
            "  containers:",
            "  - {name: a, image: busybox}",
            "  - {name: b, image: busybox}",
            "  - {name: c, image: busybox, securityContext: {appArmorProfile: {type: RuntimeDefault}}}",
        ]
        .join("\n"));
        let names: Vec<_> = p.spec.containers.iter().map(|c| localhost_profile(&p, c)).collect();
        assert_eq!(names, [Some("from-annotation".to_string()), Some("from-pod".to_string()), None]);
    }

    #[test]
    fn runtime_default_and_unconfined_profiles_need_nothing_loaded() {
        let p = pod(&[
            "metadata:",
            "  name: p",
            "  annotations:",
            "    container.apparmor.security.beta.kubernetes.io/a: runtime/default",
            "    container.apparmor.security.beta.kubernetes.io/b: unconfined",
            "spec:",
            "  containers:",
            "  - {name: a, image: busybox}",
            "  - {name: b, image: busybox}",
        ]
        .join("\n"));
        assert!(p.spec.containers.iter().all(|c| localhost_profile(&p, c).is_none()));
    }
}
