//! `kubectl describe` of the storage kinds: a claim (its class, status, volume, the pods that
//! use it), a volume (its claim, policy, node affinity and source) and a class.

use super::describe::{annotations_multiline, events_section, labels_multiline, layout};
use crate::api::storage::access_modes_short;
use crate::api::{Event, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass};
use crate::sim::Time;
use serde_json::Value;
use std::fmt::Write;

fn finalizers(out: &mut String, list: &[String]) {
    let _ = writeln!(out, "Finalizers:\t[{}]", list.join(" "));
}

pub fn describe_claim(pvc: &PersistentVolumeClaim, pods: &[Pod], events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &pvc.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    let _ = writeln!(out, "StorageClass:\t{}", pvc.class());
    let status = if m.deletion_timestamp.is_some() {
        format!("Terminating (lasts {})", super::age::age(m.deletion_timestamp, now))
    } else {
        pvc.status.phase.clone()
    };
    let _ = writeln!(out, "Status:\t{status}");
    let _ = writeln!(out, "Volume:\t{}", pvc.spec.volume_name);
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    finalizers(&mut out, &m.finalizers);
    let (capacity, modes) = if pvc.spec.volume_name.is_empty() {
        (String::new(), String::new())
    } else {
        (
            pvc.status.capacity.get("storage").map(|q| q.as_str().to_string()).unwrap_or_default(),
            access_modes_short(&pvc.status.access_modes),
        )
    };
    let _ = writeln!(out, "Capacity:\t{capacity}");
    let _ = writeln!(out, "Access Modes:\t{modes}");
    let _ = writeln!(out, "VolumeMode:\t{}", pvc.spec.volume_mode.as_deref().unwrap_or("Filesystem"));
    let users: Vec<&str> = pods
        .iter()
        .filter(|p| !p.is_terminal() && crate::api::storage::pod_claims(p).contains(&m.name))
        .map(|p| p.metadata.name.as_str())
        .collect();
    let _ = writeln!(out, "Used By:\t{}", if users.is_empty() { "<none>".to_string() } else { users.join("\n\t") });
    events_section(&mut out, events, now);
    layout(&out)
}

pub fn describe_volume(pv: &PersistentVolume, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &pv.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    finalizers(&mut out, &m.finalizers);
    let _ = writeln!(out, "StorageClass:\t{}", pv.spec.storage_class_name);
    let status = if m.deletion_timestamp.is_some() { "Terminating".to_string() } else { pv.status.phase.clone() };
    let _ = writeln!(out, "Status:\t{status}");
    let claim = pv.spec.claim_ref.as_ref().map(|r| format!("{}/{}", r.namespace, r.name)).unwrap_or_default();
    let _ = writeln!(out, "Claim:\t{claim}");
    let _ = writeln!(out, "Reclaim Policy:\t{}", pv.reclaim_policy());
    let _ = writeln!(out, "Access Modes:\t{}", access_modes_short(&pv.spec.access_modes));
    let _ = writeln!(out, "VolumeMode:\t{}", pv.spec.volume_mode.as_deref().unwrap_or("Filesystem"));
    let _ = writeln!(out, "Capacity:\t{}", pv.spec.capacity.get("storage").map(|q| q.as_str()).unwrap_or_default());
    let terms =
        pv.spec.node_affinity.as_ref().and_then(|a| a.pointer("/required/nodeSelectorTerms")).and_then(Value::as_array);
    match terms {
        None => {
            let _ = writeln!(out, "Node Affinity:\t<none>");
        }
        Some(terms) => {
            out.push_str("Node Affinity:\t\n  Required Terms:\t\n");
            for (i, term) in terms.iter().enumerate() {
                let exprs: Vec<String> = term
                    .get("matchExpressions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|e| {
                        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
                        let op = e.get("operator").and_then(Value::as_str).unwrap_or_default().to_lowercase();
                        let values: Vec<&str> = e
                            .get("values")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .collect();
                        format!("{key} {op} [{}]", values.join(", "))
                    })
                    .collect();
                let _ = writeln!(out, "    Term {i}:\t{}", exprs.join("\n\t"));
            }
        }
    }
    let _ = writeln!(out, "Message:\t{}", pv.status.message);
    out.push_str("Source:\n");
    if let Some(h) = &pv.spec.host_path {
        let _ = writeln!(out, "    Type:\tHostPath (bare host directory volume)");
        let _ = writeln!(out, "    Path:\t{}", h.get("path").and_then(Value::as_str).unwrap_or_default());
        let _ = writeln!(out, "    HostPathType:\t{}", h.get("type").and_then(Value::as_str).unwrap_or_default());
    } else if let Some(l) = &pv.spec.local {
        let _ = writeln!(out, "    Type:\tLocalVolume (a persistent volume backed by local storage on a node)");
        let _ = writeln!(out, "    Path:\t{}", l.get("path").and_then(Value::as_str).unwrap_or_default());
    } else if let Some(n) = &pv.spec.nfs {
        let _ = writeln!(out, "    Type:\tNFS (an NFS mount that lasts the lifetime of a pod)");
        let _ = writeln!(out, "    Server:\t{}", n.get("server").and_then(Value::as_str).unwrap_or_default());
        let _ = writeln!(out, "    Path:\t{}", n.get("path").and_then(Value::as_str).unwrap_or_default());
        let _ = writeln!(out, "    ReadOnly:\t{}", n.get("readOnly").and_then(Value::as_bool).unwrap_or(false));
    }
    events_section(&mut out, events, now);
    layout(&out)
}

pub fn describe_class(sc: &StorageClass, events: &[Event], now: Time) -> String {
    let mut out = String::new();
    let m = &sc.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "IsDefaultClass:\t{}", if sc.is_default() { "Yes" } else { "No" });
    let pairs: Vec<String> = m.annotations.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(out, "Annotations:\t{}", pairs.join(","));
    let _ = writeln!(out, "Provisioner:\t{}", sc.provisioner);
    let params: Vec<String> = sc.parameters.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(out, "Parameters:\t{}", if params.is_empty() { "<none>".to_string() } else { params.join(",") });
    let expansion = sc.allow_volume_expansion.map_or("<unset>".to_string(), |b| b.to_string());
    let _ = writeln!(out, "AllowVolumeExpansion:\t{expansion}");
    let options = if sc.mount_options.is_empty() { "<none>".to_string() } else { sc.mount_options.join(", ") };
    let _ = writeln!(out, "MountOptions:\t{options}");
    let _ = writeln!(out, "ReclaimPolicy:\t{}", sc.reclaim_policy.as_deref().unwrap_or("Delete"));
    let _ = writeln!(out, "VolumeBindingMode:\t{}", sc.volume_binding_mode.as_deref().unwrap_or("Immediate"));
    events_section(&mut out, events, now);
    layout(&out)
}

/// `kubectl describe statefulset`: its replicas, update strategy, pods, template and claim
/// templates.
pub fn describe_stateful_set(sts: &crate::api::StatefulSet, pods: &[Pod], events: &[Event], now: Time) -> String {
    use super::describe::{pod_template, pods_status, selector_text};
    let mut out = String::new();
    let m = &sts.metadata;
    let _ = writeln!(out, "Name:\t{}", m.name);
    let _ = writeln!(out, "Namespace:\t{}", m.namespace);
    let _ = writeln!(out, "CreationTimestamp:\t{}", m.creation_timestamp.unwrap_or_default().rfc1123z());
    let _ = writeln!(out, "Selector:\t{}", selector_text(sts.spec.selector.as_ref()));
    labels_multiline(&mut out, "Labels", &m.labels);
    annotations_multiline(&mut out, "Annotations", &m.annotations);
    let _ = writeln!(out, "Replicas:\t{} desired | {} total", sts.spec.replicas.unwrap_or(1), sts.status.replicas);
    let strategy = sts.spec.update_strategy.as_ref();
    let _ = writeln!(out, "Update Strategy:\t{}", strategy.and_then(|s| s.type_.as_deref()).unwrap_or("RollingUpdate"));
    if let Some(p) = strategy.and_then(|s| s.rolling_update.as_ref()).and_then(|r| r.partition) {
        let _ = writeln!(out, "  Partition:\t{p}");
    }
    pods_status(&mut out, pods);
    pod_template(&mut out, &sts.spec.template);
    if sts.spec.volume_claim_templates.is_empty() {
        let _ = writeln!(out, "Volume Claims:\t<none>");
    } else {
        out.push_str("Volume Claims:\n");
        for t in &sts.spec.volume_claim_templates {
            let _ = writeln!(out, "  Name:\t{}", t.metadata.name);
            let _ = writeln!(out, "  StorageClass:\t{}", t.class());
            let mut indented = String::new();
            labels_multiline(&mut indented, "  Labels", &t.metadata.labels);
            annotations_multiline(&mut indented, "  Annotations", &t.metadata.annotations);
            out.push_str(&indented);
            let capacity = t.spec.resources.requests.get("storage").map(|q| q.as_str()).unwrap_or_default();
            let _ = writeln!(out, "  Capacity:\t{capacity}");
            let _ = writeln!(out, "  Access Modes:\t[{}]", t.spec.access_modes.join(" "));
        }
    }
    events_section(&mut out, events, now);
    layout(&out)
}
