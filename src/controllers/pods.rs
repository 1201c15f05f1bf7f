//! Helpers the workload controllers share: pods from templates, owner references, and what
//! makes a pod active, ready or available.

use crate::api::pod::Pod;
use crate::api::{Object, ObjectMeta, OwnerReference, PodTemplateSpec};
use crate::sim::{Duration, Time};

/// An owner reference marking `owner` as the controller of a dependent.
pub fn controller_ref(owner: &Object) -> OwnerReference {
    OwnerReference {
        api_version: owner.kind().api_version(),
        kind: owner.kind().info().kind.to_string(),
        name: owner.name().to_string(),
        uid: owner.meta().uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A new pod from a template, named `<prefix>-<random>` by the API server.
pub fn pod_from_template(template: &PodTemplateSpec, owner: &Object, generate_name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            generate_name: generate_name.to_string(),
            namespace: owner.namespace().to_string(),
            labels: template.metadata.labels.clone(),
            annotations: template.metadata.annotations.clone(),
            finalizers: template.metadata.finalizers.clone(),
            owner_references: vec![controller_ref(owner)].into(),
            ..Default::default()
        },
        spec: template.spec.clone(),
        ..Default::default()
    }
}

/// Not finished and not being deleted: a pod that counts toward replicas.
pub fn is_active(pod: &Pod) -> bool {
    !pod.is_terminal() && pod.metadata.deletion_timestamp.is_none()
}

/// When the pod last became Ready, if it is Ready.
pub fn ready_since(pod: &Pod) -> Option<Time> {
    let c = pod.condition("Ready").filter(|c| c.status == "True")?;
    Some(c.last_transition_time.unwrap_or_default())
}

/// Ready for at least `min_ready` (and so available).
pub fn is_available(pod: &Pod, min_ready: Duration, now: Time) -> bool {
    ready_since(pod).is_some_and(|t| now.since(t) >= min_ready)
}

/// Creates `pod` through the API for `owner`, reporting `SuccessfulCreate` or `FailedCreate`
/// on the owner as the workload controllers do; the refusal, if it was refused.
pub fn create_reporting(
    ctx: &mut crate::client::component::Ctx,
    owner: &std::sync::Arc<Object>,
    pod: Pod,
) -> Result<(), crate::apiserver::Status> {
    match ctx.call_object(crate::apiserver::Request::create(Object::Pod(pod))) {
        Ok(p) => {
            ctx.event(owner, "", "Normal", "SuccessfulCreate", ["Created pod: ", p.name()].concat());
            Ok(())
        }
        Err(status) => {
            ctx.event(owner, "", "Warning", "FailedCreate", format!("Error creating: {}", status.message));
            Err(status)
        }
    }
}

/// Creates pods as controllers do, in batches of 1, 2, 4, … until `count` are made, stopping
/// at the first refusal (`create` says whether one was made); returns how many were made.
pub fn slow_start(count: usize, mut create: impl FnMut() -> bool) -> usize {
    let mut created = 0;
    let mut batch = 1;
    while created < count {
        for _ in 0..batch.min(count - created) {
            if !create() {
                return created;
            }
            created += 1;
        }
        batch *= 2;
    }
    created
}
