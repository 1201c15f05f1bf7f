//! local-path-provisioner (rancher.io/local-path), which kind runs as a Deployment in the
//! `local-path-storage` namespace: for each claim the PV controller hands to it, once the
//! scheduler has picked the claim's node, it makes a hostPath volume under
//! `/var/local-path-provisioner` on that node, pinned there by node affinity and named
//! `pvc-<claim uid>`; a released volume of its own with the Delete policy it deletes. It works
//! only while its pod runs, and only through the API.

use super::{Action, Reconciler, Synced};
use crate::api::storage::{PROVISIONED_BY_ANNOTATION, SELECTED_NODE_ANNOTATION, STORAGE_PROVISIONER_ANNOTATION};
use crate::api::{Kind, Object, ObjectMeta, PersistentVolume, PersistentVolumeClaim};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer};
use crate::util::json_macro::json;

/// The provisioner's name, as StorageClasses name it.
pub const PROVISIONER: &str = "rancher.io/local-path";
/// The namespace kind runs it in.
pub const NAMESPACE: &str = "local-path-storage";
/// Where on a node its volumes live.
pub const BASE_PATH: &str = "/var/local-path-provisioner";

pub struct LocalPathProvisioner {
    claims: Informer,
    volumes: Informer,
    classes: Informer,
    pods: Informer,
}

impl Default for LocalPathProvisioner {
    fn default() -> Self {
        LocalPathProvisioner {
            claims: Informer::new(Kind::PersistentVolumeClaim),
            volumes: Informer::new(Kind::PersistentVolume),
            classes: Informer::new(Kind::StorageClass),
            pods: Informer::new(Kind::Pod).in_namespace(NAMESPACE),
        }
    }
}

/// The directory a claim's volume gets on its node.
pub fn volume_path(claim: &PersistentVolumeClaim) -> String {
    format!("{BASE_PATH}/pvc-{}_{}_{}", claim.metadata.uid, claim.metadata.namespace, claim.metadata.name)
}

impl LocalPathProvisioner {
    /// Whether the provisioner's own pod is running and ready (the process is up).
    fn running(&self) -> bool {
        self.pods.cache.values().any(|o| {
            o.as_pod().is_some_and(|p| {
                p.metadata.labels.get("app").is_some_and(|a| a == "local-path-provisioner")
                    && p.metadata.deletion_timestamp.is_none()
                    && p.status.phase == "Running"
                    && p.condition("Ready").is_some_and(|c| c.status == "True")
            })
        })
    }

    fn provision(&mut self, namespace: &str, name: &str, ctx: &mut Ctx) -> Synced {
        let Some(object) = self.claims.get(namespace, name).cloned() else { return Ok(Action::AwaitChange) };
        let Object::PersistentVolumeClaim(claim) = &*object else { return Ok(Action::AwaitChange) };
        let ours = claim.metadata.annotations.get(STORAGE_PROVISIONER_ANNOTATION).is_some_and(|p| p == PROVISIONER);
        if !ours || !claim.spec.volume_name.is_empty() || claim.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let volume_name = format!("pvc-{}", claim.metadata.uid);
        if self.volumes.get("", &volume_name).is_some() {
            return Ok(Action::AwaitChange);
        }
        let class = match self.classes.get("", claim.class()).map(|o| &**o) {
            Some(Object::StorageClass(sc)) => sc.clone(),
            _ => return Ok(Action::AwaitChange),
        };
        let key = format!("{namespace}/{name}");
        ctx.event(
            &object,
            "",
            "Normal",
            "Provisioning",
            format!("External provisioner is provisioning volume for claim \"{key}\""),
        );
        let Some(node) = claim.metadata.annotations.get(SELECTED_NODE_ANNOTATION).cloned() else {
            ctx.event(
                &object,
                "",
                "Warning",
                "ProvisioningFailed",
                format!(
                    "failed to provision volume with StorageClass \"{}\": configuration error, no node was specified",
                    class.metadata.name
                ),
            );
            return Ok(Action::RequeueAfter(super::persistentvolume::SYNC_PERIOD));
        };
        let mut pv = PersistentVolume {
            metadata: ObjectMeta { name: volume_name.clone(), ..Default::default() },
            ..Default::default()
        };
        pv.metadata.annotations.insert("local.path.provisioner/selected-node".into(), node.clone());
        pv.metadata.annotations.insert(PROVISIONED_BY_ANNOTATION.into(), PROVISIONER.into());
        let spec = &mut pv.spec;
        spec.access_modes = claim.spec.access_modes.clone();
        if let Some(q) = claim.spec.resources.requests.get("storage") {
            spec.capacity.insert("storage".into(), q.clone());
        }
        spec.claim_ref = Some(crate::api::ObjectReference {
            kind: "PersistentVolumeClaim".into(),
            namespace: namespace.into(),
            name: name.into(),
            uid: claim.metadata.uid.clone(),
            api_version: "v1".into(),
            resource_version: claim.metadata.resource_version.clone(),
            ..Default::default()
        });
        spec.host_path = Some(json!({"path": volume_path(claim), "type": "DirectoryOrCreate"}));
        spec.node_affinity = Some(json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}));
        spec.persistent_volume_reclaim_policy = class.reclaim_policy.clone();
        spec.storage_class_name = class.metadata.name.clone();
        spec.volume_mode = claim.spec.volume_mode.clone();
        match ctx.call_object(Request::create(Object::PersistentVolume(Box::new(pv)))) {
            Ok(stored) => self.volumes.assume(stored),
            Err(status) if status.code == 409 => return Ok(Action::AwaitChange),
            Err(status) => return Err(status),
        }
        ctx.event(
            &object,
            "",
            "Normal",
            "ProvisioningSucceeded",
            format!("Successfully provisioned volume {volume_name}"),
        );
        Ok(Action::AwaitChange)
    }

    fn delete(&mut self, name: &str, ctx: &mut Ctx) -> Synced {
        let Some(object) = self.volumes.get("", name).cloned() else { return Ok(Action::AwaitChange) };
        let Object::PersistentVolume(pv) = &*object else { return Ok(Action::AwaitChange) };
        let ours = pv.metadata.annotations.get(PROVISIONED_BY_ANNOTATION).is_some_and(|p| p == PROVISIONER);
        if ours && pv.status.phase == "Released" && pv.reclaim_policy() == "Delete" {
            // Its directory is removed on the node (a helper pod's `rm -rf`), then the object.
            super::done_unless_failed(ctx.call(Request::delete(Kind::PersistentVolume, "", name)))?;
        }
        Ok(Action::AwaitChange)
    }
}

impl Reconciler for LocalPathProvisioner {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.claims, &mut self.volumes, &mut self.classes, &mut self.pods]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let o = &delta.object;
        match informer {
            0 => vec![format!("pvc/{}/{}", o.namespace(), o.name())],
            1 => vec![format!("pv/{}", o.name())],
            // Its own pod came up (or a class changed): everything is looked at again.
            _ => {
                let claims = self.claims.cache.values().map(|c| format!("pvc/{}/{}", c.namespace(), c.name()));
                let volumes = self.volumes.cache.values().map(|v| format!("pv/{}", v.name()));
                claims.chain(volumes).collect()
            }
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        if !self.running() {
            return Ok(Action::AwaitChange);
        }
        if let Some(rest) = key.strip_prefix("pvc/") {
            let (ns, name) = rest.split_once('/').unwrap_or(("", rest));
            return self.provision(ns, name, ctx);
        }
        if let Some(name) = key.strip_prefix("pv/") {
            return self.delete(name, ctx);
        }
        match key.split_once('/') {
            Some((ns, name)) => self.provision(ns, name, ctx),
            None => Ok(Action::AwaitChange),
        }
    }
}
