//! The storage object in-use protection controllers of kube-controller-manager: a claim being
//! deleted keeps its `kubernetes.io/pvc-protection` finalizer (and so stays Terminating) while
//! a pod that has not finished uses it; a volume being deleted keeps
//! `kubernetes.io/pv-protection` while it is Bound to a claim. Admission puts both finalizers
//! on every new claim and volume.

use super::{Action, Reconciler, Synced};
use crate::api::{Kind, Object};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer};

use crate::api::storage::{PV_PROTECTION_FINALIZER as PV_PROTECTION, PVC_PROTECTION_FINALIZER as PVC_PROTECTION};

/// pvc-protection-controller.
pub struct PvcProtectionController {
    claims: Informer,
    pods: Informer,
}

impl Default for PvcProtectionController {
    fn default() -> Self {
        PvcProtectionController { claims: Informer::new(Kind::PersistentVolumeClaim), pods: Informer::new(Kind::Pod) }
    }
}

impl PvcProtectionController {
    /// Whether a pod that has not finished mounts the claim.
    fn in_use(&self, namespace: &str, name: &str) -> bool {
        self.pods.cache.values().filter_map(|o| o.as_pod()).any(|p| {
            p.metadata.namespace == namespace
                && !p.is_terminal()
                && crate::api::storage::pod_claims(p).iter().any(|c| c == name)
        })
    }
}

impl Reconciler for PvcProtectionController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.claims, &mut self.pods]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let o = &delta.object;
        match informer {
            0 => vec![format!("{}/{}", o.namespace(), o.name())],
            _ => {
                let mut keys: Vec<String> = Vec::new();
                for pod in [Some(&delta.object), delta.old.as_ref()].into_iter().flatten().filter_map(|o| o.as_pod()) {
                    for claim in crate::api::storage::pod_claims(pod) {
                        let key = format!("{}/{claim}", pod.metadata.namespace);
                        if !keys.contains(&key) {
                            keys.push(key);
                        }
                    }
                }
                keys
            }
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        let Some(object) = self.claims.get(ns, name).cloned() else { return Ok(Action::AwaitChange) };
        let Object::PersistentVolumeClaim(claim) = &*object else { return Ok(Action::AwaitChange) };
        let protected = claim.metadata.finalizers.iter().any(|f| f == PVC_PROTECTION);
        if claim.metadata.deletion_timestamp.is_none() || !protected || self.in_use(ns, name) {
            return Ok(Action::AwaitChange);
        }
        let mut released = (**claim).clone();
        released.metadata.finalizers.retain(|f| f != PVC_PROTECTION);
        let request = Request::update(Object::PersistentVolumeClaim(Box::new(released)));
        super::done_unless_failed(ctx.call(request))?;
        Ok(Action::AwaitChange)
    }
}

/// pv-protection-controller.
pub struct PvProtectionController {
    volumes: Informer,
}

impl Default for PvProtectionController {
    fn default() -> Self {
        PvProtectionController { volumes: Informer::new(Kind::PersistentVolume) }
    }
}

impl Reconciler for PvProtectionController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.volumes]
    }

    fn keys_for(&mut self, _informer: usize, delta: &Delta) -> Vec<String> {
        vec![delta.object.name().to_string()]
    }

    fn reconcile(&mut self, name: &str, ctx: &mut Ctx) -> Synced {
        let Some(object) = self.volumes.get("", name).cloned() else { return Ok(Action::AwaitChange) };
        let Object::PersistentVolume(pv) = &*object else { return Ok(Action::AwaitChange) };
        let protected = pv.metadata.finalizers.iter().any(|f| f == PV_PROTECTION);
        if pv.metadata.deletion_timestamp.is_none() || !protected || pv.status.phase == "Bound" {
            return Ok(Action::AwaitChange);
        }
        let mut released = (**pv).clone();
        released.metadata.finalizers.retain(|f| f != PV_PROTECTION);
        super::done_unless_failed(ctx.call(Request::update(Object::PersistentVolume(Box::new(released)))))?;
        Ok(Action::AwaitChange)
    }
}
