//! The VolumeBinding plugin: a pod's claims must exist and not be going away (PreFilter); a
//! claim bound to a volume pins the pod to the nodes the volume's node affinity admits, and a
//! claim whose class waits for its first consumer needs, on the node, an Available volume that
//! fits or a provisioner (Filter); once a node is chosen, such a claim gets the volume (its
//! claim reference) or the node (the selected-node annotation its provisioner waits for), and
//! the pod is bound only when all its claims are (PreBind).

use super::framework::{NodeInfo, Rejection};
use crate::api::storage::{SELECTED_NODE_ANNOTATION, pod_claims};
use crate::api::{Kind, Object, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass};
use crate::apiserver::{Request, Status};
use crate::client::component::{Ctx, Informer};
use crate::controllers::persistentvolume::best_match;
use std::collections::BTreeMap;

pub const CONFLICT: &str = "node(s) had volume node affinity conflict";
pub const NO_VOLUME: &str = "node(s) didn't find available persistent volumes to bind";
/// How long PreBind waits for a pod's claims to be bound (bindTimeoutSeconds).
pub const BIND_TIMEOUT: crate::sim::Duration = crate::sim::Duration::seconds(600);

/// What PreFilter found for one pod: the volumes its bound claims use, and its claims that wait
/// for a node (with whether their class provisions).
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub bound: Vec<PersistentVolume>,
    pub delayed: Vec<(PersistentVolumeClaim, bool)>,
    pub available: Vec<PersistentVolume>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.bound.is_empty() && self.delayed.is_empty()
    }

    /// The Filter: can this node serve every claim?
    pub fn filter(&self, node: &NodeInfo) -> Result<(), Rejection> {
        for pv in &self.bound {
            if !crate::api::storage::node_affinity_admits_with(pv.spec.node_affinity.as_ref(), |k| node.label(k)) {
                return Err(Rejection::unresolvable(CONFLICT));
            }
        }
        for (claim, provisions) in &self.delayed {
            if !provisions && best_match(self.available.iter(), claim, Some(node.name())).is_none() {
                return Err(Rejection::unresolvable(NO_VOLUME));
            }
        }
        Ok(())
    }
}

pub struct VolumeBinding {
    pub claims: Informer,
    pub volumes: Informer,
    pub classes: Informer,
    /// Pods whose node is chosen, waiting for their claims to be bound: key → (node, until
    /// when PreBind waits).
    pub waiting: BTreeMap<String, (String, crate::sim::Time)>,
}

impl Default for VolumeBinding {
    fn default() -> Self {
        VolumeBinding {
            claims: Informer::new(Kind::PersistentVolumeClaim),
            volumes: Informer::new(Kind::PersistentVolume),
            classes: Informer::new(Kind::StorageClass),
            waiting: BTreeMap::new(),
        }
    }
}

impl VolumeBinding {
    pub fn start(&mut self, ctx: &mut Ctx) {
        let _ = self.claims.start(ctx);
        let _ = self.volumes.start(ctx);
        let _ = self.classes.start(ctx);
    }

    /// Syncs the caches; the last change's record entry, if anything changed.
    pub fn sync(&mut self, ctx: &mut Ctx) -> Option<crate::record::Seq> {
        let mut last = None;
        for informer in [&mut self.claims, &mut self.volumes, &mut self.classes] {
            if let Some(d) = informer.sync(ctx).last() {
                last = Some(d.seq);
            }
        }
        last
    }

    fn claim(&self, namespace: &str, name: &str) -> Option<&PersistentVolumeClaim> {
        match self.claims.get(namespace, name).map(|o| &**o) {
            Some(Object::PersistentVolumeClaim(c)) => Some(c),
            _ => None,
        }
    }

    fn class(&self, name: &str) -> Option<&StorageClass> {
        match self.classes.get("", name).map(|o| &**o) {
            Some(Object::StorageClass(sc)) => Some(sc),
            _ => None,
        }
    }

    /// PreFilter: the pod's claims as they stand, or why no node can take it.
    pub fn pre_filter(&self, pod: &Pod) -> Result<Plan, String> {
        let mut plan = Plan::default();
        let ns = &pod.metadata.namespace;
        for name in pod_claims(pod) {
            let Some(claim) = self.claim(ns, &name) else {
                return Err(format!("persistentvolumeclaim \"{name}\" not found"));
            };
            if claim.metadata.deletion_timestamp.is_some() {
                return Err(format!("persistentvolumeclaim \"{name}\" is being deleted"));
            }
            if !claim.spec.volume_name.is_empty() {
                match self.volumes.get("", &claim.spec.volume_name).map(|o| &**o) {
                    Some(Object::PersistentVolume(pv)) => plan.bound.push((**pv).clone()),
                    _ => {
                        return Err(format!(
                            "persistentvolumeclaim \"{name}\" bound to non-existent persistentvolume \"{}\"",
                            claim.spec.volume_name
                        ));
                    }
                }
                continue;
            }
            let class = self.class(claim.class());
            if !class.is_some_and(StorageClass::waits_for_first_consumer) {
                return Err("pod has unbound immediate PersistentVolumeClaims".into());
            }
            plan.delayed.push((claim.clone(), class.is_some_and(StorageClass::provisions)));
        }
        if !plan.delayed.is_empty() {
            plan.available = self
                .volumes
                .cache
                .values()
                .filter_map(|o| match &**o {
                    Object::PersistentVolume(pv) if pv.spec.claim_ref.is_none() => Some((**pv).clone()),
                    _ => None,
                })
                .collect();
        }
        Ok(plan)
    }

    /// PreBind: gives each waiting claim its volume or its node. Returns whether the pod's
    /// claims are all bound already (else it waits for them).
    pub fn pre_bind(&mut self, plan: &Plan, node: &str, ctx: &mut Ctx) -> Result<bool, Status> {
        let mut taken: Vec<String> = Vec::new();
        for (claim, _) in &plan.delayed {
            let free = plan.available.iter().filter(|pv| !taken.contains(&pv.metadata.name));
            if let Some(pv) = best_match(free, claim, Some(node)) {
                let mut pv = pv.clone();
                taken.push(pv.metadata.name.clone());
                pv.spec.claim_ref = Some(claim.reference());
                pv.metadata
                    .annotations
                    .insert(crate::api::storage::BOUND_BY_CONTROLLER_ANNOTATION.into(), "yes".into());
                let stored = ctx.call_object(Request::update(Object::PersistentVolume(Box::new(pv))))?;
                self.volumes.assume(stored);
            } else if claim.metadata.annotations.get(SELECTED_NODE_ANNOTATION).is_none_or(|n| n != node) {
                let mut claim = claim.clone();
                claim.metadata.annotations.insert(SELECTED_NODE_ANNOTATION.into(), node.into());
                let stored = ctx.call_object(Request::update(Object::PersistentVolumeClaim(Box::new(claim))))?;
                self.claims.assume(stored);
            }
        }
        Ok(plan.delayed.is_empty())
    }

    /// When the earliest waiting pod's PreBind gives up.
    pub fn next_deadline(&self) -> Option<crate::sim::Time> {
        self.waiting.values().map(|(_, t)| *t).min()
    }

    /// Whether every claim of the pod is bound.
    pub fn all_bound(&self, pod: &Pod) -> bool {
        pod_claims(pod).iter().all(|name| self.claim(&pod.metadata.namespace, name).is_some_and(|c| c.is_bound()))
    }
}

/// VolumeBinding as a filter of the default profile: the plan's verdict on each node.
#[derive(Default)]
pub struct VolumeBindingFilter {
    plan: Plan,
}

impl super::framework::FilterPlugin for VolumeBindingFilter {
    fn name(&self) -> &'static str {
        "VolumeBinding"
    }

    fn set_volumes(&mut self, plan: &Plan) {
        self.plan = plan.clone();
    }

    fn skips(&self, _pod: &Pod) -> bool {
        self.plan.is_empty()
    }

    fn filter(&self, _pod: &Pod, node: &NodeInfo) -> Result<(), Rejection> {
        self.plan.filter(node)
    }
}

#[cfg(test)]
mod tests {
    use crate::shell::Session;

    #[test]
    fn a_pod_is_bound_only_once_the_provisioner_has_made_its_claims_volume_on_the_chosen_node() {
        let mut s = Session::new(1);
        let out = s.transcript(
            "kubectl apply -f - <<EOF\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n    command: [sleep, \"3600\"]\n    volumeMounts:\n    - name: d\n      mountPath: /d\n  volumes:\n  - name: d\n    persistentVolumeClaim:\n      claimName: data\nEOF\nsleep 10s\nkubectl get pod p -o jsonpath={.spec.nodeName}\nkubectl get pvc data -o jsonpath={.metadata.annotations.volume\\.kubernetes\\.io/selected-node}\n",
        );
        let pod = s.cluster.objects(crate::api::Kind::Pod, "default");
        let node =
            pod.iter().find_map(|o| o.as_pod().filter(|p| p.metadata.name == "p")).map(|p| p.spec.node_name.clone());
        let claims = s.cluster.objects(crate::api::Kind::PersistentVolumeClaim, "default");
        let claim = claims.iter().find_map(|o| match &**o {
            crate::api::Object::PersistentVolumeClaim(c) => Some(c.clone()),
            _ => None,
        });
        let claim = claim.expect("the claim");
        let node = node.expect("the pod");
        assert!(node.starts_with("worker-"), "{out}");
        assert_eq!(claim.metadata.annotations.get(super::SELECTED_NODE_ANNOTATION), Some(&node));
        assert!(claim.is_bound(), "bound before the pod was");
        let volumes = s.cluster.objects(crate::api::Kind::PersistentVolume, "");
        let pinned = volumes.iter().any(|o| match &**o {
            crate::api::Object::PersistentVolume(pv) => {
                pv.metadata.name == claim.spec.volume_name
                    && crate::api::storage::node_affinity_admits(
                        pv.spec.node_affinity.as_ref(),
                        &[("kubernetes.io/hostname".to_string(), node.clone())].into(),
                    )
            }
            _ => false,
        });
        assert!(pinned, "the volume is pinned to the pod's node");
    }
}
