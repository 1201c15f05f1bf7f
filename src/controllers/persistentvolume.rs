//! The PersistentVolume controller (kube-controller-manager's persistentvolume-binder): binds
//! each claim to a volume that fits it (a volume pre-bound to it first, else the smallest
//! Available one of its class with the access modes and room it asks for), hands a claim no
//! volume fits to its class's provisioner, leaves a claim whose class waits for its first
//! consumer alone until the scheduler has picked a node, and releases a volume whose claim is
//! gone, then keeps it (Retain) or has it deleted (Delete).

use super::{Action, Reconciler, Synced};
use crate::api::storage::{
    BETA_STORAGE_PROVISIONER_ANNOTATION, BIND_COMPLETED_ANNOTATION, BOUND_BY_CONTROLLER_ANNOTATION,
    PROVISIONED_BY_ANNOTATION, SELECTED_NODE_ANNOTATION, STORAGE_PROVISIONER_ANNOTATION,
};
use crate::api::{Kind, Object, PersistentVolume, PersistentVolumeClaim, StorageClass};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer};
use crate::sim::Duration;
use std::sync::Arc;

/// How often the controller looks again at claims and volumes that wait (its sync period).
pub const SYNC_PERIOD: Duration = Duration::millis(15_000);

pub struct PersistentVolumeController {
    claims: Informer,
    volumes: Informer,
    classes: Informer,
}

impl Default for PersistentVolumeController {
    fn default() -> Self {
        PersistentVolumeController {
            claims: Informer::new(Kind::PersistentVolumeClaim),
            volumes: Informer::new(Kind::PersistentVolume),
            classes: Informer::new(Kind::StorageClass),
        }
    }
}

fn claim_of(o: &Object) -> Option<&PersistentVolumeClaim> {
    match o {
        Object::PersistentVolumeClaim(c) => Some(c),
        _ => None,
    }
}

fn volume_of(o: &Object) -> Option<&PersistentVolume> {
    match o {
        Object::PersistentVolume(v) => Some(v),
        _ => None,
    }
}

/// Whether a volume can serve a claim: same class, every access mode the claim asks for, and
/// at least the room it requests (upstream's findBestMatchForClaim, less selectors' details).
pub fn fits(pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
    pv.spec.storage_class_name == claim.class()
        && claim.spec.access_modes.iter().all(|m| pv.spec.access_modes.contains(m))
        && pv.capacity_bytes() >= claim.requested_bytes()
        && pv.spec.volume_mode == claim.spec.volume_mode
        && claim.spec.selector.as_ref().is_none_or(|s| s.matches(&pv.metadata.labels))
}

/// Whether the volume's claim reference names this claim (by uid once it has one).
pub fn pre_bound_to(pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
    pv.spec.claim_ref.as_ref().is_some_and(|r| {
        r.name == claim.metadata.name
            && r.namespace == claim.metadata.namespace
            && (r.uid.is_empty() || r.uid == claim.metadata.uid)
    })
}

/// The volume a claim should be bound to, if any: one pre-bound to it, else the smallest
/// Available volume that fits (on `node`, when the claim has one picked).
pub fn best_match<'a>(
    volumes: impl Iterator<Item = &'a PersistentVolume>,
    claim: &PersistentVolumeClaim,
    node: Option<&str>,
) -> Option<&'a PersistentVolume> {
    let mut best: Option<&PersistentVolume> = None;
    for pv in volumes {
        if pv.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if pre_bound_to(pv, claim) {
            return Some(pv);
        }
        let on_node = node.is_none_or(|n| {
            let labels = std::collections::BTreeMap::from([("kubernetes.io/hostname".to_string(), n.to_string())]);
            crate::api::storage::node_affinity_admits(pv.spec.node_affinity.as_ref(), &labels)
        });
        let free = pv.spec.claim_ref.is_none() && pv.status.phase == "Available";
        if free && fits(pv, claim) && on_node && best.is_none_or(|b| pv.capacity_bytes() < b.capacity_bytes()) {
            best = Some(pv);
        }
    }
    best
}

impl PersistentVolumeController {
    fn class(&self, name: &str) -> Option<StorageClass> {
        match self.classes.get("", name).map(|o| &**o) {
            Some(Object::StorageClass(sc)) => Some(sc.clone()),
            _ => None,
        }
    }

    fn sync_claim(&mut self, namespace: &str, name: &str, ctx: &mut Ctx) -> Synced {
        let Some(object) = self.claims.get(namespace, name).cloned() else { return Ok(Action::AwaitChange) };
        let Some(claim) = claim_of(&object) else { return Ok(Action::AwaitChange) };
        if claim.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        if !claim.spec.volume_name.is_empty() {
            return self.sync_bound_claim(&object, claim, ctx);
        }
        let class = self.class(claim.class());
        let delayed = class.as_ref().is_some_and(StorageClass::waits_for_first_consumer);
        let node = claim.metadata.annotations.get(SELECTED_NODE_ANNOTATION).cloned();
        let volumes: Vec<Arc<Object>> = self.volumes.cache.values().cloned().collect();
        let matched = best_match(volumes.iter().filter_map(|o| volume_of(o)), claim, node.as_deref())
            .filter(|pv| !delayed || node.is_some() || pre_bound_to(pv, claim))
            .cloned();
        if let Some(pv) = matched {
            self.bind(pv, claim.clone(), ctx)?;
            return Ok(Action::AwaitChange);
        }
        if delayed && node.is_none() {
            ctx.event(
                &object,
                "",
                "Normal",
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding".into(),
            );
            return Ok(Action::RequeueAfter(SYNC_PERIOD));
        }
        match class {
            Some(sc) if sc.provisions() => {
                if claim.metadata.annotations.get(STORAGE_PROVISIONER_ANNOTATION) != Some(&sc.provisioner) {
                    let mut updated = claim.clone();
                    for key in [STORAGE_PROVISIONER_ANNOTATION, BETA_STORAGE_PROVISIONER_ANNOTATION] {
                        updated.metadata.annotations.insert(key.into(), sc.provisioner.clone());
                    }
                    let stored = ctx.call_object(Request::update(Object::PersistentVolumeClaim(Box::new(updated))))?;
                    self.claims.assume(stored);
                }
                ctx.event(
                    &object,
                    "",
                    "Normal",
                    "ExternalProvisioning",
                    format!(
                        "Waiting for a volume to be created either by the external provisioner '{}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
                        sc.provisioner
                    ),
                );
            }
            // A class that provisions nothing, or none named: only a volume made by hand will do.
            _ if class.is_some() || claim.class().is_empty() => {
                ctx.event(
                    &object,
                    "",
                    "Normal",
                    "FailedBinding",
                    "no persistent volumes available for this claim and no storage class is set".into(),
                );
            }
            _ => {
                ctx.event(
                    &object,
                    "",
                    "Warning",
                    "ProvisioningFailed",
                    format!("storageclass.storage.k8s.io \"{}\" not found", claim.class()),
                );
            }
        }
        Ok(Action::RequeueAfter(SYNC_PERIOD))
    }

    /// A claim that names its volume: finish the binding from the volume's side, or report the
    /// volume lost.
    fn sync_bound_claim(&mut self, object: &Arc<Object>, claim: &PersistentVolumeClaim, ctx: &mut Ctx) -> Synced {
        let pv = self.volumes.get("", &claim.spec.volume_name).and_then(|o| volume_of(o)).cloned();
        match pv {
            None => {
                if claim.status.phase == "Bound" {
                    let mut lost = claim.clone();
                    lost.status.phase = "Lost".into();
                    let stored =
                        ctx.call_object(Request::update_status(Object::PersistentVolumeClaim(Box::new(lost))))?;
                    self.claims.assume(stored);
                    ctx.event(
                        object,
                        "",
                        "Warning",
                        "ClaimLost",
                        "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!".into(),
                    );
                }
                Ok(Action::AwaitChange)
            }
            Some(pv) => {
                let ours = pre_bound_to(&pv, claim);
                if pv.spec.claim_ref.is_none() || ours {
                    self.bind(pv, claim.clone(), ctx)?;
                } else {
                    ctx.event(
                        object,
                        "",
                        "Warning",
                        "FailedBinding",
                        "volume already bound to a different claim.".into(),
                    );
                }
                Ok(Action::AwaitChange)
            }
        }
    }

    /// Binds the volume to the claim and the claim to the volume, writing only what differs.
    fn bind(
        &mut self,
        pv: PersistentVolume,
        claim: PersistentVolumeClaim,
        ctx: &mut Ctx,
    ) -> Result<(), crate::apiserver::Status> {
        let reference = claim.reference();
        let mut pv = pv;
        let ref_ok = pv.spec.claim_ref.as_ref().is_some_and(|r| r.uid == claim.metadata.uid);
        if !ref_ok {
            if pv.spec.claim_ref.is_none() {
                pv.metadata.annotations.insert(BOUND_BY_CONTROLLER_ANNOTATION.into(), "yes".into());
            }
            pv.spec.claim_ref = Some(reference);
            let stored = ctx.call_object(Request::update(Object::PersistentVolume(Box::new(pv.clone()))))?;
            if let Some(v) = volume_of(&stored) {
                pv = v.clone();
            }
            self.volumes.assume(stored);
        }
        if pv.status.phase != "Bound" {
            pv.status.phase = "Bound".into();
            pv.status.last_phase_transition_time = Some(ctx.now);
            let stored = ctx.call_object(Request::update_status(Object::PersistentVolume(Box::new(pv.clone()))))?;
            self.volumes.assume(stored);
        }
        let mut claim = claim;
        let annotated = claim.metadata.annotations.get(BIND_COMPLETED_ANNOTATION).is_some_and(|v| v == "yes");
        if claim.spec.volume_name != pv.metadata.name || !annotated {
            if claim.spec.volume_name.is_empty() {
                claim.metadata.annotations.insert(BOUND_BY_CONTROLLER_ANNOTATION.into(), "yes".into());
            }
            claim.spec.volume_name = pv.metadata.name.clone();
            claim.metadata.annotations.insert(BIND_COMPLETED_ANNOTATION.into(), "yes".into());
            let stored = ctx.call_object(Request::update(Object::PersistentVolumeClaim(Box::new(claim.clone()))))?;
            if let Some(c) = claim_of(&stored) {
                claim = c.clone();
            }
            self.claims.assume(stored);
        }
        if claim.status.phase != "Bound" || claim.status.capacity != pv.spec.capacity {
            claim.status.phase = "Bound".into();
            claim.status.access_modes = pv.spec.access_modes.clone();
            claim.status.capacity = pv.spec.capacity.clone();
            let stored = ctx.call_object(Request::update_status(Object::PersistentVolumeClaim(Box::new(claim))))?;
            self.claims.assume(stored);
        }
        Ok(())
    }

    fn sync_volume(&mut self, name: &str, ctx: &mut Ctx) -> Synced {
        let Some(object) = self.volumes.get("", name).cloned() else { return Ok(Action::AwaitChange) };
        let Some(pv) = volume_of(&object) else { return Ok(Action::AwaitChange) };
        if pv.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let Some(reference) = pv.spec.claim_ref.clone() else {
            if pv.status.phase != "Available" {
                self.set_phase(pv.clone(), "Available", "", ctx)?;
            }
            return Ok(Action::AwaitChange);
        };
        let claim = self.claims.get(&reference.namespace, &reference.name).and_then(|o| claim_of(o)).cloned();
        let claim = claim.filter(|c| reference.uid.is_empty() || c.metadata.uid == reference.uid);
        match claim {
            // Pre-bound by a user, the claim not yet bound: the claim's sync binds it.
            Some(c) if c.spec.volume_name.is_empty() => Ok(Action::AwaitChange),
            Some(c) if c.spec.volume_name == pv.metadata.name => {
                if pv.status.phase != "Bound" {
                    self.set_phase(pv.clone(), "Bound", "", ctx)?;
                }
                Ok(Action::AwaitChange)
            }
            Some(_) => Ok(Action::AwaitChange),
            // A claim named but never bound: the volume waits for it.
            None if reference.uid.is_empty() => {
                if pv.status.phase != "Available" {
                    self.set_phase(pv.clone(), "Available", "", ctx)?;
                }
                Ok(Action::AwaitChange)
            }
            None => self.reclaim(&object, pv.clone(), ctx),
        }
    }

    /// The volume's claim is gone: it is Released, then kept or deleted as its policy says.
    fn reclaim(&mut self, object: &Arc<Object>, pv: PersistentVolume, ctx: &mut Ctx) -> Synced {
        if pv.status.phase == "Failed" {
            return Ok(Action::AwaitChange);
        }
        let mut pv = pv;
        if pv.status.phase != "Released" {
            pv = self.set_phase(pv, "Released", "", ctx)?;
        }
        match pv.reclaim_policy() {
            "Delete" => {
                if pv.metadata.annotations.contains_key(PROVISIONED_BY_ANNOTATION) {
                    // Its provisioner deletes it (and what it holds).
                    return Ok(Action::AwaitChange);
                }
                let message = format!(
                    "error getting deleter volume plugin for volume \"{}\": no deletable volume plugin matched",
                    pv.metadata.name
                );
                self.set_phase(pv, "Failed", &message, ctx)?;
                ctx.event(object, "", "Warning", "VolumeFailedDelete", message);
            }
            "Recycle" => {
                let message = format!("No recycler plugin found for the volume \"{}\"!", pv.metadata.name);
                self.set_phase(pv, "Failed", &message, ctx)?;
                ctx.event(object, "", "Warning", "VolumeFailedRecycle", message);
            }
            _ => {}
        }
        Ok(Action::AwaitChange)
    }

    fn set_phase(
        &mut self,
        mut pv: PersistentVolume,
        phase: &str,
        message: &str,
        ctx: &mut Ctx,
    ) -> Result<PersistentVolume, crate::apiserver::Status> {
        pv.status.phase = phase.into();
        pv.status.message = message.into();
        pv.status.last_phase_transition_time = Some(ctx.now);
        let stored = ctx.call_object(Request::update_status(Object::PersistentVolume(Box::new(pv.clone()))))?;
        if let Some(v) = volume_of(&stored) {
            pv = v.clone();
        }
        self.volumes.assume(stored);
        Ok(pv)
    }
}

impl Reconciler for PersistentVolumeController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.claims, &mut self.volumes, &mut self.classes]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let o = &delta.object;
        match informer {
            0 => {
                let mut keys = vec![format!("pvc/{}/{}", o.namespace(), o.name())];
                if let Some(c) = claim_of(o).filter(|c| !c.spec.volume_name.is_empty()) {
                    keys.push(format!("pv/{}", c.spec.volume_name));
                }
                // Volumes pre-bound to it wait for it.
                for v in self.volumes.cache.values().filter_map(|v| volume_of(v)) {
                    if let Some(r) = &v.spec.claim_ref {
                        if r.namespace == o.namespace() && r.name == o.name() {
                            let key = format!("pv/{}", v.metadata.name);
                            if !keys.contains(&key) {
                                keys.push(key);
                            }
                        }
                    }
                }
                keys
            }
            1 => {
                let mut keys = vec![format!("pv/{}", o.name())];
                if let Some(r) = volume_of(o).and_then(|v| v.spec.claim_ref.as_ref()) {
                    keys.push(format!("pvc/{}/{}", r.namespace, r.name));
                }
                // A volume that appears or frees up may fit a claim that waits.
                for c in self.claims.cache.values().filter_map(|c| claim_of(c)) {
                    if c.spec.volume_name.is_empty() {
                        let key = format!("pvc/{}/{}", c.metadata.namespace, c.metadata.name);
                        if !keys.contains(&key) {
                            keys.push(key);
                        }
                    }
                }
                keys
            }
            _ => self
                .claims
                .cache
                .values()
                .filter_map(|c| claim_of(c))
                .filter(|c| c.spec.volume_name.is_empty() && c.class() == o.name())
                .map(|c| format!("pvc/{}/{}", c.metadata.namespace, c.metadata.name))
                .collect(),
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        if let Some(rest) = key.strip_prefix("pvc/") {
            let (ns, name) = rest.split_once('/').unwrap_or(("", rest));
            return self.sync_claim(ns, name, ctx);
        }
        if let Some(name) = key.strip_prefix("pv/") {
            return self.sync_volume(name, ctx);
        }
        // A key from the initial list: the claims' cache keys are `namespace/name`.
        match key.split_once('/') {
            Some((ns, name)) => self.sync_claim(ns, name, ctx),
            None => Ok(Action::AwaitChange),
        }
    }

    fn on_start(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::Session;

    fn run(s: &mut Session, script: &str) -> String {
        s.transcript(script)
    }

    fn claim_phase(s: &Session, name: &str) -> String {
        match s.cluster.objects(Kind::PersistentVolumeClaim, "default").iter().find(|o| o.name() == name).map(|o| &**o)
        {
            Some(Object::PersistentVolumeClaim(c)) => c.status.phase.clone(),
            _ => "gone".into(),
        }
    }

    fn volume(name: &str, class: &str, size: &str, modes: &[&str]) -> PersistentVolume {
        let mut pv = PersistentVolume::default();
        pv.metadata.name = name.into();
        pv.spec.storage_class_name = class.into();
        pv.spec.capacity.insert("storage".into(), crate::api::Quantity::parse(size).expect("size"));
        pv.spec.access_modes = modes.iter().map(|m| m.to_string()).collect();
        pv.spec.volume_mode = Some("Filesystem".into());
        pv.status.phase = "Available".into();
        pv
    }

    fn claim(class: &str, size: &str, modes: &[&str]) -> PersistentVolumeClaim {
        let mut c = PersistentVolumeClaim::default();
        c.metadata.name = "c".into();
        c.metadata.namespace = "default".into();
        c.spec.storage_class_name = Some(class.into());
        c.spec.resources.requests.insert("storage".into(), crate::api::Quantity::parse(size).expect("size"));
        c.spec.access_modes = modes.iter().map(|m| m.to_string()).collect();
        c.spec.volume_mode = Some("Filesystem".into());
        c
    }

    #[test]
    fn the_smallest_available_volume_of_the_claims_class_with_its_access_modes_wins() {
        let volumes = [
            volume("big", "", "10Gi", &["ReadWriteOnce"]),
            volume("small", "", "2Gi", &["ReadWriteOnce"]),
            volume("too-small", "", "1Gi", &["ReadWriteOnce"]),
            volume("read-only", "", "2Gi", &["ReadOnlyMany"]),
            volume("other-class", "fast", "2Gi", &["ReadWriteOnce"]),
        ];
        let c = claim("", "2Gi", &["ReadWriteOnce"]);
        assert_eq!(best_match(volumes.iter(), &c, None).map(|v| v.metadata.name.as_str()), Some("small"));
        let many = claim("", "1Gi", &["ReadWriteMany"]);
        assert!(best_match(volumes.iter(), &many, None).is_none());
    }

    #[test]
    fn a_claim_of_the_default_class_waits_for_its_first_consumer_and_says_so() {
        let mut s = Session::new(1);
        let out = run(
            &mut s,
            "kubectl apply -f - <<EOF\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\nEOF\nsleep 20s\nkubectl get events -o custom-columns=REASON:.reason,FROM:.source.component\n",
        );
        assert_eq!(claim_phase(&s, "data"), "Pending");
        let said =
            out.lines().any(|l| l.starts_with("WaitForFirstConsumer") && l.ends_with("persistentvolume-controller"));
        assert!(said, "{out}");
        assert!(!out.contains("ExternalProvisioning"), "nothing is provisioned before a pod uses it: {out}");
    }

    #[test]
    fn a_volume_made_by_hand_binds_its_claim_and_retain_keeps_it_released_when_the_claim_goes() {
        let mut s = Session::new(1);
        run(
            &mut s,
            "kubectl apply -f - <<EOF\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv1\nspec:\n  storageClassName: manual\n  capacity:\n    storage: 5Gi\n  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /mnt/data\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: claim1\nspec:\n  storageClassName: manual\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\nEOF\nsleep 5s\n",
        );
        assert_eq!(claim_phase(&s, "claim1"), "Bound");
        run(&mut s, "kubectl delete pvc claim1\nsleep 5s\n");
        let pv = s.cluster.objects(Kind::PersistentVolume, "");
        let phase =
            pv.iter().find_map(|o| volume_of(o).filter(|v| v.metadata.name == "pv1").map(|v| v.status.phase.clone()));
        assert_eq!(phase.as_deref(), Some("Released"));
    }
}
