//! The StatefulSet controller: keeps pods `<set>-0` … `<set>-(n-1)`, each with its own claims
//! (`<template>-<pod>`, made before the pod and kept after it), its hostname and the headless
//! Service as its subdomain. With OrderedReady it makes one pod at a time, the next only once
//! every lower one is Running and Ready, and removes the highest first, one at a time; with
//! Parallel it makes and removes them all at once. A changed template rolls out from the
//! highest ordinal down to the partition, one pod at a time, each replaced by a pod of the new
//! revision (its `controller-revision-hash` label).

use super::deployment::template_hash;
use super::pods::{controller_ref, is_available};
use super::{Action, KeysFrom, Reconciler, Synced, keys_of_both, owner_key};
use crate::api::{Kind, Object, PersistentVolumeClaim, Pod, StatefulSet};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer};
use crate::sim::Duration;
use std::collections::BTreeMap;
use std::sync::Arc;

pub const REVISION_LABEL: &str = "controller-revision-hash";
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

pub struct StatefulSetController {
    sets: Informer,
    pods: Informer,
    claims: Informer,
    last: String,
}

impl Default for StatefulSetController {
    fn default() -> Self {
        StatefulSetController {
            sets: Informer::new(Kind::StatefulSet),
            pods: Informer::new(Kind::Pod),
            claims: Informer::new(Kind::PersistentVolumeClaim),
            last: String::new(),
        }
    }
}

/// The revision name of a set's current template: `<set>-<hash>`.
pub fn update_revision(sts: &StatefulSet) -> String {
    let collisions = sts.status.collision_count.filter(|&c| c > 0);
    format!("{}-{}", sts.metadata.name, template_hash(&sts.spec.template, collisions))
}

/// The ordinal in a pod's name, if the pod is named as the set's pods are.
fn ordinal(set: &str, pod: &str) -> Option<i32> {
    pod.strip_prefix(set)?.strip_prefix('-')?.parse().ok()
}

fn running_and_ready(pod: &Pod) -> bool {
    pod.status.phase == "Running" && pod.condition("Ready").is_some_and(|c| c.status == "True")
}

fn revision_of(pod: &Pod) -> &str {
    pod.metadata.labels.get(REVISION_LABEL).map_or("", String::as_str)
}

/// The claims of pod `pod` of the set, one per template: `<template>-<pod>`.
fn claims_for(sts: &StatefulSet, pod: &str) -> Vec<PersistentVolumeClaim> {
    sts.spec
        .volume_claim_templates
        .iter()
        .map(|t| {
            let mut claim = t.clone();
            claim.api_version.clear();
            claim.kind.clear();
            claim.metadata.name = format!("{}-{pod}", t.metadata.name);
            claim.metadata.namespace = sts.metadata.namespace.clone();
            if let Some(selector) = &sts.spec.selector {
                for (k, v) in &selector.match_labels {
                    claim.metadata.labels.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            claim.status = Default::default();
            claim
        })
        .collect()
}

/// Pod `ordinal` of the set, at `revision`.
fn new_pod(sts: &StatefulSet, owner: &Object, ordinal: i32, revision: &str) -> Pod {
    let name = format!("{}-{ordinal}", sts.metadata.name);
    let template = &sts.spec.template;
    let mut pod = Pod::default();
    pod.metadata.name = name.clone();
    pod.metadata.namespace = sts.metadata.namespace.clone();
    pod.metadata.labels = template.metadata.labels.clone();
    pod.metadata.annotations = template.metadata.annotations.clone();
    pod.metadata.labels.insert(REVISION_LABEL.into(), revision.into());
    pod.metadata.labels.insert(POD_NAME_LABEL.into(), name.clone());
    pod.metadata.labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    pod.metadata.owner_references = vec![controller_ref(owner)].into();
    let mut spec = (*template.spec).clone();
    spec.hostname = Some(name.clone());
    if !sts.spec.service_name.is_empty() {
        spec.subdomain = Some(sts.spec.service_name.clone());
    }
    for t in &sts.spec.volume_claim_templates {
        let volume = crate::api::NamedItem::from(serde_json::json!({
            "name": t.metadata.name,
            "persistentVolumeClaim": {"claimName": format!("{}-{name}", t.metadata.name)}
        }));
        match spec.volumes.iter_mut().find(|v| v.get("name").and_then(|n| n.as_str()) == Some(&t.metadata.name)) {
            Some(existing) => *existing = volume,
            None => spec.volumes.push(volume),
        }
    }
    pod.spec = Arc::new(spec);
    pod
}

impl StatefulSetController {
    fn create_pod(
        &mut self,
        object: &Arc<Object>,
        sts: &StatefulSet,
        ord: i32,
        revision: &str,
        ctx: &mut Ctx,
    ) -> Synced {
        let name = format!("{}-{ord}", sts.metadata.name);
        for claim in claims_for(sts, &name) {
            if self.claims.get(&claim.metadata.namespace, &claim.metadata.name).is_some() {
                continue;
            }
            let claim_name = claim.metadata.name.clone();
            match ctx.call_object(Request::create(Object::PersistentVolumeClaim(Box::new(claim)))) {
                Ok(stored) => {
                    self.claims.assume(stored);
                    ctx.event(
                        object,
                        "",
                        "Normal",
                        "SuccessfulCreate",
                        format!("create Claim {claim_name} Pod {name} in StatefulSet {} success", sts.metadata.name),
                    );
                }
                Err(status) if status.code == 409 => {}
                Err(status) => {
                    ctx.event(
                        object,
                        "",
                        "Warning",
                        "FailedCreate",
                        format!(
                            "create Claim {claim_name} for Pod {name} in StatefulSet {} failed error: {}",
                            sts.metadata.name, status.message
                        ),
                    );
                    return Err(status);
                }
            }
        }
        let pod = new_pod(sts, object, ord, revision);
        match ctx.call_object(Request::create(Object::Pod(pod))) {
            Ok(stored) => {
                self.pods.assume(stored);
                ctx.event(
                    object,
                    "",
                    "Normal",
                    "SuccessfulCreate",
                    format!("create Pod {name} in StatefulSet {} successful", sts.metadata.name),
                );
                Ok(Action::AwaitChange)
            }
            Err(status) if status.code == 409 => Ok(Action::AwaitChange),
            Err(status) => {
                ctx.event(
                    object,
                    "",
                    "Warning",
                    "FailedCreate",
                    format!("create Pod {name} in StatefulSet {} failed error: {}", sts.metadata.name, status.message),
                );
                Err(status)
            }
        }
    }

    fn delete_pod(&mut self, object: &Arc<Object>, sts: &StatefulSet, pod: &str, ctx: &mut Ctx) -> Synced {
        super::done_unless_failed(ctx.call(Request::delete(Kind::Pod, &sts.metadata.namespace, pod)))?;
        ctx.event(
            object,
            "",
            "Normal",
            "SuccessfulDelete",
            format!("delete Pod {pod} in StatefulSet {} successful", sts.metadata.name),
        );
        Ok(Action::AwaitChange)
    }

    /// Creates, replaces and removes pods as the policy allows; what it did, for the lane.
    fn sync_pods(
        &mut self,
        object: &Arc<Object>,
        sts: &StatefulSet,
        ctx: &mut Ctx,
    ) -> Result<String, crate::apiserver::Status> {
        let name = &sts.metadata.name;
        let revision = update_revision(sts);
        let replicas = sts.spec.replicas.unwrap_or(1).max(0);
        let parallel = sts.parallel();
        let mut pods: BTreeMap<i32, Pod> = BTreeMap::new();
        for o in self.pods.owned_by(&sts.metadata.uid) {
            if let Some(p) = o.as_pod() {
                if let Some(ord) = ordinal(name, &p.metadata.name) {
                    pods.insert(ord, p.clone());
                }
            }
        }
        let mut did = Vec::new();
        // Pods 0..replicas: made in order (or all at once), failed ones replaced.
        let mut blocked = false;
        for ord in 0..replicas {
            match pods.get(&ord) {
                None => {
                    self.create_pod(object, sts, ord, &revision, ctx)?;
                    did.push(format!("create {name}-{ord}"));
                    if !parallel {
                        return Ok(did.join(", "));
                    }
                }
                Some(p) if p.metadata.deletion_timestamp.is_some() => {
                    if !parallel {
                        return Ok(format!("wait for {name}-{ord} to go"));
                    }
                    blocked = true;
                }
                Some(p) if p.is_terminal() => {
                    self.delete_pod(object, sts, &p.metadata.name, ctx)?;
                    did.push(format!("replace {name}-{ord}"));
                    if !parallel {
                        return Ok(did.join(", "));
                    }
                }
                Some(p) if !running_and_ready(p) => {
                    if !parallel {
                        return Ok(format!("wait for {name}-{ord} to be Ready"));
                    }
                    blocked = true;
                }
                Some(_) => {}
            }
        }
        // Pods beyond the count: the highest first, one at a time (or all at once).
        let condemned: Vec<&Pod> = pods.range(replicas..).rev().map(|(_, p)| p).collect();
        if !condemned.is_empty() {
            if parallel {
                for p in condemned.iter().filter(|p| p.metadata.deletion_timestamp.is_none()) {
                    self.delete_pod(object, sts, &p.metadata.name.clone(), ctx)?;
                    did.push(format!("delete {}", p.metadata.name));
                }
                return Ok(did.join(", "));
            }
            if blocked || condemned.iter().any(|p| p.metadata.deletion_timestamp.is_some()) {
                return Ok("wait for a pod to go".into());
            }
            let highest = condemned[0].metadata.name.clone();
            self.delete_pod(object, sts, &highest, ctx)?;
            return Ok(format!("delete {highest}"));
        }
        // A new revision: the highest pod at or above the partition not yet at it is replaced,
        // once every pod is Running and Ready.
        if sts.rolls() && !blocked && did.is_empty() {
            let partition = sts.partition();
            let stale = pods.range(partition.max(0)..replicas).rev().find(|(_, p)| revision_of(p) != revision);
            if let Some((_, p)) = stale {
                let all_ready = pods.range(..replicas).all(|(_, p)| running_and_ready(p));
                if all_ready {
                    let pod = p.metadata.name.clone();
                    self.delete_pod(object, sts, &pod, ctx)?;
                    return Ok(format!("update {pod}"));
                }
            }
        }
        Ok(did.join(", "))
    }

    fn update_status(&mut self, sts: &StatefulSet, ctx: &mut Ctx) -> Result<(), crate::apiserver::Status> {
        let revision = update_revision(sts);
        let pods: Vec<Pod> = self
            .pods
            .owned_by(&sts.metadata.uid)
            .iter()
            .filter_map(|o| o.as_pod().cloned())
            .filter(|p| ordinal(&sts.metadata.name, &p.metadata.name).is_some() && !p.is_terminal())
            .collect();
        let current_revision =
            if sts.status.current_revision.is_empty() { revision.clone() } else { sts.status.current_revision.clone() };
        let count = |f: &dyn Fn(&Pod) -> bool| pods.iter().filter(|p| f(p)).count() as i32;
        let min_ready = Duration::seconds(sts.spec.min_ready_seconds.unwrap_or(0).max(0) as u64);
        let updated = count(&|p| revision_of(p) == revision);
        let replicas = sts.spec.replicas.unwrap_or(1);
        // Every pod at the new revision: it is the current one.
        let current_revision =
            if updated == replicas && pods.len() as i32 == replicas { revision.clone() } else { current_revision };
        let mut status = sts.status.clone();
        status.observed_generation = Some(sts.metadata.generation);
        status.replicas = pods.len() as i32;
        status.ready_replicas = Some(count(&|p| running_and_ready(p)));
        status.available_replicas = Some(count(&|p| running_and_ready(p) && is_available(p, min_ready, ctx.now)));
        status.current_replicas = Some(count(&|p| revision_of(p) == current_revision));
        status.updated_replicas = Some(updated);
        status.current_revision = current_revision;
        status.update_revision = revision;
        status.collision_count.get_or_insert(0);
        if status != sts.status {
            let mut updated = sts.clone();
            updated.status = status;
            let stored = ctx.call_object(Request::update_status(Object::StatefulSet(Box::new(updated))))?;
            self.sets.assume(stored);
        }
        Ok(())
    }
}

impl Reconciler for StatefulSetController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.sets, &mut self.pods, &mut self.claims]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        match informer {
            0 => vec![crate::client::component::cache_key(delta.object.namespace(), delta.object.name())],
            1 => keys_of_both(delta, KeysFrom::Owners, |o| owner_key(o, "StatefulSet")),
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        let Some(object) = self.sets.get(ns, name).cloned() else { return Ok(Action::AwaitChange) };
        let Object::StatefulSet(sts) = &*object else { return Ok(Action::AwaitChange) };
        if sts.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let sts = (**sts).clone();
        let did = self.sync_pods(&object, &sts, ctx)?;
        let want = sts.spec.replicas.unwrap_or(1);
        let have = self.pods.owned_by(&sts.metadata.uid).len();
        self.last = format!(
            "{name}: want {want} · have {have}{}",
            if did.is_empty() { String::new() } else { format!(" → {did}") }
        );
        self.update_status(&sts, ctx)?;
        Ok(Action::AwaitChange)
    }

    fn summary(&self) -> String {
        self.last.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pods_ordinal_is_read_from_its_name_after_the_sets() {
        assert_eq!(ordinal("web", "web-0"), Some(0));
        assert_eq!(ordinal("web", "web-12"), Some(12));
        assert_eq!(ordinal("web", "web-x"), None);
        assert_eq!(ordinal("web", "webby-1"), None);
    }

    fn pods(s: &crate::shell::Session) -> Vec<String> {
        let mut names: Vec<String> = s
            .cluster
            .objects(Kind::Pod, "default")
            .iter()
            .filter_map(|o| o.as_pod())
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .map(|p| p.metadata.name.clone())
            .collect();
        names.sort();
        names
    }

    const SET: &str = "kubectl apply -f - <<EOF\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: c\n        image: nginx:1.25\nEOF\n";

    #[test]
    fn ordered_pods_come_one_at_a_time_and_go_highest_first() {
        let mut s = crate::shell::Session::new(1);
        s.transcript(SET);
        s.transcript("sleep 1s\n");
        assert_eq!(pods(&s), ["web-0"], "web-1 waits for web-0 to be Ready");
        s.transcript("sleep 30s\n");
        assert_eq!(pods(&s), ["web-0", "web-1", "web-2"]);
        s.transcript("kubectl scale sts web --replicas=1\nsleep 100ms\n");
        assert_eq!(pods(&s), ["web-0", "web-1"], "web-2 goes first");
        s.transcript("sleep 30s\n");
        assert_eq!(pods(&s), ["web-0"]);
    }
}
