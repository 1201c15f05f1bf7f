//! `kubectl get` columns of the storage kinds: StorageClasses (the default marked in NAME),
//! PersistentVolumes and PersistentVolumeClaims, as the API server's table printers fill them.

use super::age::age;
use crate::api::storage::access_modes_short;
use crate::api::{Kind, Object};
use crate::sim::Time;

/// A storage kind's headers and its `-o wide` extras.
pub fn headers(kind: Kind) -> (&'static [&'static str], &'static [&'static str]) {
    match kind {
        Kind::StorageClass => {
            (&["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"], &[])
        }
        Kind::PersistentVolume => (
            &[
                "NAME",
                "CAPACITY",
                "ACCESS MODES",
                "RECLAIM POLICY",
                "STATUS",
                "CLAIM",
                "STORAGECLASS",
                "VOLUMEATTRIBUTESCLASS",
                "REASON",
                "AGE",
            ],
            &["VOLUMEMODE"],
        ),
        _ => (
            &["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"],
            &["VOLUMEMODE"],
        ),
    }
}

/// One storage object's cells, in header order.
pub fn row(object: &Object, now: Time, wide: bool) -> Vec<String> {
    let unset = |v: Option<&String>| v.filter(|s| !s.is_empty()).cloned().unwrap_or_else(|| "<unset>".into());
    match object {
        Object::StorageClass(sc) => {
            let name =
                if sc.is_default() { format!("{} (default)", sc.metadata.name) } else { sc.metadata.name.clone() };
            vec![
                name,
                sc.provisioner.clone(),
                sc.reclaim_policy.clone().unwrap_or_else(|| "Delete".into()),
                sc.volume_binding_mode.clone().unwrap_or_else(|| "Immediate".into()),
                sc.allow_volume_expansion.unwrap_or(false).to_string(),
                age(sc.metadata.creation_timestamp, now),
            ]
        }
        Object::PersistentVolume(pv) => {
            let claim = pv.spec.claim_ref.as_ref().map(|r| format!("{}/{}", r.namespace, r.name)).unwrap_or_default();
            let phase =
                if pv.metadata.deletion_timestamp.is_some() { "Terminating".into() } else { pv.status.phase.clone() };
            let mut row = vec![
                pv.metadata.name.clone(),
                pv.spec.capacity.get("storage").map(|q| q.as_str().to_string()).unwrap_or_else(|| "0".into()),
                access_modes_short(&pv.spec.access_modes),
                pv.spec.persistent_volume_reclaim_policy.clone().unwrap_or_default(),
                phase,
                claim,
                pv.spec.storage_class_name.clone(),
                unset(pv.spec.volume_attributes_class_name.as_ref()),
                pv.status.reason.clone(),
                age(pv.metadata.creation_timestamp, now),
            ];
            if wide {
                row.push(unset(pv.spec.volume_mode.as_ref()));
            }
            row
        }
        Object::PersistentVolumeClaim(pvc) => {
            let phase =
                if pvc.metadata.deletion_timestamp.is_some() { "Terminating".into() } else { pvc.status.phase.clone() };
            let (capacity, modes) = if pvc.spec.volume_name.is_empty() {
                (String::new(), String::new())
            } else {
                (
                    pvc.status.capacity.get("storage").map(|q| q.as_str().to_string()).unwrap_or_else(|| "0".into()),
                    access_modes_short(&pvc.status.access_modes),
                )
            };
            let mut row = vec![
                pvc.metadata.name.clone(),
                phase,
                pvc.spec.volume_name.clone(),
                capacity,
                modes,
                pvc.class().to_string(),
                unset(pvc.spec.volume_attributes_class_name.as_ref()),
                age(pvc.metadata.creation_timestamp, now),
            ];
            if wide {
                row.push(unset(pvc.spec.volume_mode.as_ref()));
            }
            row
        }
        _ => Vec::new(),
    }
}
