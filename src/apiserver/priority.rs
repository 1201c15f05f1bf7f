//! The Priority admission plugin: a new pod's `priorityClassName` is resolved into
//! `spec.priority` (and its class's preemption policy); a pod that names no class gets the
//! global default class, if one is marked; a class that does not exist refuses the pod. On
//! PriorityClasses it lets only one be the global default.

use crate::api::{Object, Pod, PriorityClass};
use crate::etcd::Etcd;
use std::sync::Arc;

const PREFIX: &str = "/registry/priorityclasses/";

fn classes(etcd: &Etcd) -> impl Iterator<Item = &PriorityClass> {
    etcd.range(PREFIX).filter_map(|(_, kv)| match kv.value.as_ref() {
        Object::PriorityClass(pc) => Some(pc),
        _ => None,
    })
}

/// The global default class: of several marked, the one of least value.
fn global_default(etcd: &Etcd) -> Option<&PriorityClass> {
    classes(etcd).filter(|pc| pc.global_default).min_by_key(|pc| pc.value)
}

/// Resolves the new pod's priority; `Err` is why the pod is refused (the text after
/// `pods "x" is forbidden: `).
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn admit_pod(etcd: &Etcd, pod: &mut Pod) -> Result<(), String> {
    let named = pod.spec.priority_class_name.clone().filter(|n| !n.is_empty());
    let (class, value, policy) = match &named {
        None => match global_default(etcd) {
            Some(pc) => (Some(pc.metadata.name.clone()), pc.value, pc.preemption_policy.clone()),
            None => (None, 0, None),
        },
        Some(name) => match etcd.get(&format!("{PREFIX}{name}")).map(|kv| kv.value.as_ref()) {
            Some(Object::PriorityClass(pc)) => (None, pc.value, pc.preemption_policy.clone()),
            _ => return Err(format!("no PriorityClass with name {name} was found")),
        },
    };
    if let Some(given) = pod.spec.priority.filter(|p| *p != value) {
        return Err(format!(
            "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
        ));
    }
    let spec = Arc::make_mut(&mut pod.spec);
    if class.is_some() {
        spec.priority_class_name = class;
    }
    spec.priority = Some(value);
    if policy.is_some() {
        spec.preemption_policy = policy;
    }
    Ok(())
}

/// A new class that would be a second global default is refused.
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn admit_class(etcd: &Etcd, pc: &PriorityClass) -> Result<(), String> {
    match global_default(etcd).filter(|existing| pc.global_default && existing.metadata.name != pc.metadata.name) {
        Some(existing) => Err(format!(
            "PriorityClass {} is already marked as default. Only one default can exist",
            existing.metadata.name
        )),
        None => Ok(()),
    }
}
