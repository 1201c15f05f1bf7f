//! The API server's side of storage: the defaults of StorageClasses, PersistentVolumes and
//! claims, the DefaultStorageClass admission plugin (a claim that names no class gets the
//! default one), and the checks of their fields, in upstream's words.

use crate::api::storage::DEFAULT_CLASS_ANNOTATION;
use crate::api::{Object, PersistentVolumeClaim};
use crate::etcd::Etcd;

const ACCESS_MODES: &[&str] = &["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];

/// The defaults the API gives the storage kinds as it decodes them.
pub fn default(object: &mut Object) {
    match object {
        Object::StorageClass(sc) => {
            sc.reclaim_policy.get_or_insert_with(|| "Delete".into());
            sc.volume_binding_mode.get_or_insert_with(|| "Immediate".into());
        }
        Object::PersistentVolume(pv) => {
            pv.spec.persistent_volume_reclaim_policy.get_or_insert_with(|| "Retain".into());
            pv.spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
        }
        Object::PersistentVolumeClaim(pvc) => {
            pvc.spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
        }
        _ => {}
    }
}

/// What the registries set on a new PV or claim (it starts Pending), and the finalizer the
/// StorageObjectInUseProtection plugin adds.
pub fn prepare_for_create(object: &mut Object) {
    let finalizer = match object {
        Object::PersistentVolume(pv) => {
            pv.status = Default::default();
            pv.status.phase = "Pending".into();
            crate::api::storage::PV_PROTECTION_FINALIZER
        }
        Object::PersistentVolumeClaim(pvc) => {
            pvc.status = Default::default();
            pvc.status.phase = "Pending".into();
            crate::api::storage::PVC_PROTECTION_FINALIZER
        }
        _ => return,
    };
    let finalizers = &mut object.meta_mut().finalizers;
    if !finalizers.iter().any(|f| f == finalizer) {
        finalizers.push(finalizer.into());
    }
}

/// DefaultStorageClass: a new claim that leaves `storageClassName` out gets the default class
/// (the newest one, if several are marked). Returns whether it set one.
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn default_class(etcd: &Etcd, pvc: &mut PersistentVolumeClaim) -> bool {
    if pvc.spec.storage_class_name.is_some() {
        return false;
    }
    let prefix = "/registry/storageclasses/";
    if !etcd.any_under(prefix) {
        return false;
    }
    let default = etcd
        .range(prefix)
        .filter_map(|(_, kv)| match &*kv.value {
            Object::StorageClass(sc) if sc.is_default() => Some(sc.clone()),
            _ => None,
        })
        .max_by(|a, b| a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp));
    match default {
        Some(sc) => {
            pvc.spec.storage_class_name = Some(sc.metadata.name.clone());
            true
        }
        None => false,
    }
}

/// Field errors of a storage object (empty when valid).
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn validate(object: &Object, errors: &mut Vec<String>) {
    match object {
        Object::StorageClass(sc) => {
            if sc.provisioner.is_empty() {
                errors.push("provisioner: Required value".into());
            }
            if let Some(p) = sc.reclaim_policy.as_deref().filter(|p| !["Delete", "Retain"].contains(p)) {
                errors.push(format!(
                    "reclaimPolicy: Unsupported value: \"{p}\": supported values: \"Delete\", \"Retain\""
                ));
            }
            if let Some(m) =
                sc.volume_binding_mode.as_deref().filter(|m| !["Immediate", "WaitForFirstConsumer"].contains(m))
            {
                errors.push(format!(
                    "volumeBindingMode: Unsupported value: \"{m}\": supported values: \"Immediate\", \"WaitForFirstConsumer\""
                ));
            }
            let _ = DEFAULT_CLASS_ANNOTATION;
        }
        Object::PersistentVolume(pv) => {
            access_modes(&pv.spec.access_modes, "spec.accessModes", errors);
            if !pv.spec.capacity.contains_key("storage") {
                errors.push("spec.capacity: Required value".into());
            }
            let spec = &pv.spec;
            let sources = [
                &spec.host_path,
                &spec.local,
                &spec.nfs,
                &spec.csi,
                &spec.iscsi,
                &spec.fc,
                &spec.cephfs,
                &spec.rbd,
                &spec.aws_elastic_block_store,
                &spec.gce_persistent_disk,
                &spec.azure_disk,
                &spec.azure_file,
            ];
            match sources.iter().filter(|s| s.is_some()).count() {
                0 => errors.push("spec: Required value: must specify a volume type".into()),
                1 => {}
                _ => errors.push("spec: Forbidden: may not specify more than 1 volume type".into()),
            }
            if let Some(p) = spec
                .persistent_volume_reclaim_policy
                .as_deref()
                .filter(|p| !["Delete", "Recycle", "Retain"].contains(p))
            {
                errors.push(format!(
                    "spec.persistentVolumeReclaimPolicy: Unsupported value: \"{p}\": supported values: \"Delete\", \"Recycle\", \"Retain\""
                ));
            }
            if spec.local.is_some() && spec.node_affinity.is_none() {
                errors.push("spec.nodeAffinity: Required value: Local volume requires node affinity".into());
            }
        }
        Object::PersistentVolumeClaim(pvc) => {
            access_modes(&pvc.spec.access_modes, "spec.accessModes", errors);
            if !pvc.spec.resources.requests.contains_key("storage") {
                errors.push("spec.resources[storage]: Required value".into());
            }
        }
        _ => {}
    }
}

/// A claim's spec may not change once created, but for the volume it is bound to (once), its
/// storage request while bound (a resize) and its attributes class.
pub fn validate_claim_update(old: &PersistentVolumeClaim, new: &PersistentVolumeClaim) -> Vec<String> {
    let mut before = old.spec.clone();
    if before.volume_name.is_empty() {
        before.volume_name.clone_from(&new.spec.volume_name);
    }
    if before.storage_class_name.is_none() {
        before.storage_class_name.clone_from(&new.spec.storage_class_name);
    }
    if !old.spec.volume_name.is_empty() {
        before.resources = new.spec.resources.clone();
    }
    before.volume_attributes_class_name.clone_from(&new.spec.volume_attributes_class_name);
    if before == new.spec {
        return Vec::new();
    }
    vec!["spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims".into()]
}

fn access_modes(modes: &[String], field: &str, errors: &mut Vec<String>) {
    if modes.is_empty() {
        errors.push(format!("{field}: Required value: at least 1 access mode is required"));
    }
    for m in modes.iter().filter(|m| !ACCESS_MODES.contains(&m.as_str())) {
        errors.push(format!(
            "{field}: Unsupported value: \"{m}\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""
        ));
    }
    if modes.iter().any(|m| m == "ReadWriteOncePod") && modes.len() > 1 {
        errors.push(format!("{field}: Forbidden: may not use ReadWriteOncePod with other access modes"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(yaml: &str) -> Object {
        let value: serde_json::Value = crate::yaml::from_str(yaml).expect("yaml");
        Object::decode(crate::api::Kind::PersistentVolumeClaim, &value).expect("decodes")
    }

    #[test]
    fn a_claim_without_access_modes_or_a_storage_request_is_refused_with_both_reasons() {
        let mut errors = Vec::new();
        validate(&claim("metadata: {name: c}\nspec: {}\n"), &mut errors);
        assert_eq!(
            errors,
            [
                "spec.accessModes: Required value: at least 1 access mode is required",
                "spec.resources[storage]: Required value"
            ]
        );
    }

    #[test]
    fn a_new_claim_is_pending_and_filesystem_by_default() {
        let mut c =
            claim("metadata: {name: c}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n");
        default(&mut c);
        prepare_for_create(&mut c);
        let Object::PersistentVolumeClaim(c) = c else { unreachable!() };
        assert_eq!((c.status.phase.as_str(), c.spec.volume_mode.as_deref()), ("Pending", Some("Filesystem")));
    }

    #[test]
    fn a_claims_spec_takes_its_volume_once_and_a_new_request_only_while_bound() {
        let Object::PersistentVolumeClaim(old) =
            claim("metadata: {name: c}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n")
        else {
            unreachable!()
        };
        let mut bound = old.clone();
        bound.spec.volume_name = "pv1".into();
        assert!(validate_claim_update(&old, &bound).is_empty(), "binding names the volume");
        let mut bigger = old.clone();
        bigger.spec.resources.requests.insert("storage".into(), crate::api::Quantity::parse("2Gi").expect("2Gi"));
        assert_eq!(validate_claim_update(&old, &bigger).len(), 1, "not while unbound");
        let mut bigger_bound = bound.clone();
        bigger_bound.spec.resources = bigger.spec.resources.clone();
        assert!(validate_claim_update(&bound, &bigger_bound).is_empty());
        let mut other_modes = bound.clone();
        other_modes.spec.access_modes = vec!["ReadWriteMany".into()];
        assert_eq!(validate_claim_update(&bound, &other_modes).len(), 1);
    }
}
