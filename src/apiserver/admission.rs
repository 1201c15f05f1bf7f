//! Mutating admission: defaulting and the built-in mutating plugins (ServiceAccount,
//! DefaultTolerationSeconds, Priority), applied to objects on their way into etcd.

use crate::api::named_item::NamedItem;
use crate::api::pod::{ContainerPort, Toleration};
use crate::api::{Kind, Object, Pod, PodSpec, push_exact};
use crate::sim::Rng;
use crate::util::json_macro::json;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// Characters of generated name suffixes (no vowels, no look-alikes).
pub const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The annotation that marks a pod as the kubelet's mirror of a static pod.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// The finalizer every namespace gets on create (`spec.finalizers`), removed by the namespace
/// controller once the namespace is empty.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

/// What a mutating plugin did, for the record.
pub type Mutations = Vec<&'static str>;

/// Applies the API's defaults and the mutating admission plugins to a new object.
/// The create-time admission plugins, on an object already defaulted (`default_object`).
pub fn admit_create(object: &mut Object, rng: &mut Rng) -> Mutations {
    let mut done = Vec::new();
    if let Object::Job(job) = object {
        if job.spec.manual_selector != Some(true) {
            generate_job_selector(job);
        }
    }
    if let Object::Namespace(ns) = object {
        // The namespace registry's PrepareForCreate: a new namespace is Active and carries the
        // `kubernetes` finalizer the namespace controller removes once it has emptied it.
        if !ns.spec.finalizers.iter().any(|f| f == NAMESPACE_FINALIZER) {
            ns.spec.finalizers.push(NAMESPACE_FINALIZER.into());
        }
        ns.status = crate::api::namespace::NamespaceStatus { phase: "Active".into(), ..Default::default() };
    }
    super::storage_admission::prepare_for_create(object);
    if let Object::Pod(pod) = object {
        done.push("defaulting");
        // A new pod's status is the registry's, not the client's: Pending, with its QoS class.
        pod.status = Arc::new(crate::api::PodStatus {
            phase: "Pending".into(),
            qos_class: crate::api::helpers::qos_class(pod).into(),
            conditions: scheduling_gated(pod),
            ..Default::default()
        });
        // The kubelet's copy of a static pod is admitted as it is: the ServiceAccount plugin
        // leaves mirror pods alone (a changed spec would make the kubelet recreate them).
        let mirror = pod.metadata.annotations.contains_key(MIRROR_POD_ANNOTATION);
        let spec = Arc::make_mut(&mut pod.spec);
        spec.enable_service_links.get_or_insert(true);
        spec.preemption_policy.get_or_insert_with(|| "PreemptLowerPriority".into());
        if !mirror && service_account(spec, rng) {
            done.push("ServiceAccount");
        }
        if default_toleration_seconds(spec) {
            done.push("DefaultTolerationSeconds");
        }
        priority(spec);
        done.push("Priority");
    }
    done
}

/// The condition a new pod with scheduling gates starts with (the pod registry's): not
/// scheduled, and why.
fn scheduling_gated(pod: &Pod) -> Vec<crate::api::PodCondition> {
    if pod.spec.scheduling_gates.is_empty() {
        return Vec::new();
    }
    vec![crate::api::PodCondition {
        type_: "PodScheduled".into(),
        status: "False".into(),
        reason: "SchedulingGated".into(),
        message: "Scheduling is blocked due to non-empty scheduling gates".into(),
        ..Default::default()
    }]
}

/// Whether admission may still change a new object of `kind` after its defaults are applied
/// (`admit_create`, LimitRanger, a Service's addresses): only then does its creator's record of
/// managed fields need a copy of it as it was sent.
pub fn changes_after_defaults(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Pod | Kind::Job | Kind::Namespace | Kind::Service | Kind::PersistentVolume | Kind::PersistentVolumeClaim
    )
}

/// The Job registry's selector generation: the template's pods are labelled with the Job's
/// name and uid (new and legacy keys), and the selector picks them by uid. Labels the user
/// already set are kept (validation rejects a mismatch upstream).
fn generate_job_selector(job: &mut crate::api::Job) {
    let (name, uid) = (job.metadata.name.clone(), job.metadata.uid.clone());
    let labels = &mut job.spec.template.metadata.labels;
    for (key, value) in [
        ("batch.kubernetes.io/job-name", &name),
        ("job-name", &name),
        ("batch.kubernetes.io/controller-uid", &uid),
        ("controller-uid", &uid),
    ] {
        labels.entry(key.into()).or_insert_with(|| value.clone());
    }
    let selector = job.spec.selector.get_or_insert_with(Default::default);
    selector.match_labels.entry("batch.kubernetes.io/controller-uid".into()).or_insert(uid);
    // A Job without labels of its own takes its template's (defaulting, which the API server
    // applies whenever it reads the object back).
    if job.metadata.labels.is_empty() {
        job.metadata.labels = job.spec.template.metadata.labels.clone();
    }
}

/// The defaults the API applies to any object it decodes (on create and on update).
pub fn default_object(object: &mut Object) {
    let intstr = |s: &str| Some(crate::api::IntOrString::String(s.into()));
    match object {
        // A pod made from a defaulted template already has its defaults: its spec, shared
        // with the template, is then not copied to default it again.
        Object::Pod(p) if pod_spec_defaulted(&p.spec) => {}
        Object::Pod(p) => default_pod_spec(Arc::make_mut(&mut p.spec)),
        Object::RoleBinding(_) | Object::ClusterRoleBinding(_) => super::rbac_validation::default_subjects(object),
        Object::LimitRange(range) => super::limit_ranger::default_limit_range(range),
        Object::CustomResourceDefinition(crd) => super::apiextensions::default_crd(crd),
        Object::StorageClass(_) | Object::PersistentVolume(_) | Object::PersistentVolumeClaim(_) => {
            super::storage_admission::default(object)
        }
        Object::NetworkPolicy(p) => crate::api::network_policy::default_policy(p),
        Object::ValidatingWebhookConfiguration(c) => c.webhooks.iter_mut().for_each(|h| h.set_defaults(false)),
        Object::MutatingWebhookConfiguration(c) => c.webhooks.iter_mut().for_each(|h| h.set_defaults(true)),
        Object::PriorityClass(pc) => {
            pc.preemption_policy.get_or_insert_with(|| "PreemptLowerPriority".into());
        }
        Object::Namespace(ns) if !ns.metadata.name.is_empty() => {
            ns.metadata.labels.insert("kubernetes.io/metadata.name".into(), ns.metadata.name.clone());
        }
        Object::Deployment(d) => {
            d.spec.replicas.get_or_insert(1);
            d.spec.revision_history_limit.get_or_insert(10);
            d.spec.progress_deadline_seconds.get_or_insert(600);
            let strategy = d.spec.strategy.get_or_insert_with(Default::default);
            let type_ = strategy.type_.get_or_insert_with(|| "RollingUpdate".into()).clone();
            if type_ == "RollingUpdate" {
                let ru = strategy.rolling_update.get_or_insert_with(Default::default);
                if ru.max_surge.is_none() {
                    ru.max_surge = intstr("25%");
                }
                if ru.max_unavailable.is_none() {
                    ru.max_unavailable = intstr("25%");
                }
            }
            default_pod_spec(Arc::make_mut(&mut d.spec.template.spec));
        }
        Object::StatefulSet(sts) => {
            let spec = &mut sts.spec;
            spec.replicas.get_or_insert(1);
            spec.pod_management_policy.get_or_insert_with(|| "OrderedReady".into());
            spec.revision_history_limit.get_or_insert(10);
            let strategy = spec.update_strategy.get_or_insert_with(Default::default);
            if strategy.type_.get_or_insert_with(|| "RollingUpdate".into()) == "RollingUpdate" {
                strategy.rolling_update.get_or_insert_with(Default::default).partition.get_or_insert(0);
            }
            spec.persistent_volume_claim_retention_policy
                .get_or_insert_with(|| json!({"whenDeleted": "Retain", "whenScaled": "Retain"}));
            for claim in &mut spec.volume_claim_templates {
                claim.spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
            }
            default_pod_spec(Arc::make_mut(&mut spec.template.spec));
        }
        Object::ReplicationController(rc) => {
            rc.spec.replicas.get_or_insert(1);
            // The selector, and the labels, default to the template's labels.
            if let Some(template) = rc.spec.template.as_mut() {
                if rc.spec.selector.is_empty() {
                    rc.spec.selector = (*template.metadata.labels).clone();
                }
                if rc.metadata.labels.is_empty() {
                    rc.metadata.labels = template.metadata.labels.clone();
                }
                default_pod_spec(Arc::make_mut(&mut template.spec));
            }
        }
        Object::ReplicaSet(rs) => {
            rs.spec.replicas.get_or_insert(1);
            default_pod_spec(Arc::make_mut(&mut rs.spec.template.spec));
        }
        Object::DaemonSet(ds) => {
            ds.spec.revision_history_limit.get_or_insert(10);
            ds.spec.update_strategy.get_or_insert_with(
                || json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}),
            );
            default_pod_spec(Arc::make_mut(&mut ds.spec.template.spec));
        }
        Object::Job(job) => {
            let spec = &mut job.spec;
            if spec.completions.is_none() && spec.parallelism.is_none() {
                spec.completions = Some(1);
            }
            spec.parallelism.get_or_insert(1);
            // With a limit per index, the Job's own is as good as none.
            spec.backoff_limit.get_or_insert(if spec.backoff_limit_per_index.is_some() { i32::MAX } else { 6 });
            spec.completion_mode.get_or_insert_with(|| "NonIndexed".into());
            spec.suspend.get_or_insert(false);
            spec.pod_replacement_policy.get_or_insert_with(|| "TerminatingOrFailed".into());
            default_pod_spec(Arc::make_mut(&mut spec.template.spec));
        }
        Object::CronJob(cj) => {
            let spec = &mut cj.spec;
            spec.concurrency_policy.get_or_insert_with(|| "Allow".into());
            spec.suspend.get_or_insert(false);
            spec.successful_jobs_history_limit.get_or_insert(3);
            spec.failed_jobs_history_limit.get_or_insert(1);
            default_pod_spec(Arc::make_mut(&mut spec.job_template.spec.template.spec));
        }
        Object::Service(svc) => {
            let spec = &mut svc.spec;
            let type_ = spec.type_.get_or_insert_with(|| "ClusterIP".into()).clone();
            spec.session_affinity.get_or_insert_with(|| "None".into());
            if type_ != "ExternalName" {
                spec.internal_traffic_policy.get_or_insert_with(|| "Cluster".into());
            }
            // Traffic from outside the cluster reaches any node's port and may cross nodes.
            if type_ == "NodePort" || type_ == "LoadBalancer" {
                spec.external_traffic_policy.get_or_insert_with(|| "Cluster".into());
            }
            if type_ == "LoadBalancer" {
                spec.allocate_load_balancer_node_ports.get_or_insert(true);
            }
            for port in &mut spec.ports {
                port.protocol.get_or_insert_with(|| "TCP".into());
                if port.target_port.is_none() {
                    port.target_port = Some(crate::api::IntOrString::Int(port.port));
                }
            }
        }
        Object::Secret(secret) => {
            if secret.type_.is_empty() {
                secret.type_ = "Opaque".into();
            }
            for (k, v) in std::mem::take(&mut secret.string_data) {
                secret.data.insert(k, crate::util::base64::encode(v.as_bytes()));
            }
        }
        _ => {}
    }
}

/// The defaults the API applies to every pod it decodes.
pub fn default_pod(pod: &mut Pod) {
    default_pod_spec(Arc::make_mut(&mut pod.spec));
}

fn default_pod_spec(spec: &mut PodSpec) {
    spec.restart_policy.get_or_insert_with(|| "Always".into());
    spec.termination_grace_period_seconds.get_or_insert(30);
    spec.dns_policy.get_or_insert_with(|| "ClusterFirst".into());
    spec.scheduler_name.get_or_insert_with(|| "default-scheduler".into());
    spec.security_context.get_or_insert_with(|| json!({}));
    for c in spec.init_containers.iter_mut().chain(spec.containers.iter_mut()).map(Arc::make_mut) {
        c.termination_message_path.get_or_insert_with(|| "/dev/termination-log".into());
        c.termination_message_policy.get_or_insert_with(|| "File".into());
        let default_policy = if image_tag_is_latest(&c.image) { "Always" } else { "IfNotPresent" };
        c.image_pull_policy.get_or_insert_with(|| default_policy.into());
        for port in &mut c.ports {
            default_port(port);
        }
        // A limit without its request: the request is the limit. (The requirements are
        // shared with the template: only a change copies them.)
        if c.resources.limits.keys().any(|r| !c.resources.requests.contains_key(r)) {
            let resources = &mut *c.resources;
            for (resource, limit) in &resources.limits {
                if !resources.requests.contains_key(resource) {
                    resources.requests.insert(resource.clone(), limit.clone());
                }
            }
        }
        for probe in [&mut c.liveness_probe, &mut c.readiness_probe, &mut c.startup_probe].into_iter().flatten() {
            probe.set_defaults();
        }
    }
}

/// Whether `default_pod_spec` would leave `spec` as it is: every field it defaults is set.
/// (Conservatively, a container with a probe counts as not defaulted.)
fn pod_spec_defaulted(spec: &PodSpec) -> bool {
    spec.restart_policy.is_some()
        && spec.termination_grace_period_seconds.is_some()
        && spec.dns_policy.is_some()
        && spec.scheduler_name.is_some()
        && spec.security_context.is_some()
        && spec.init_containers.iter().chain(&spec.containers).all(|c| {
            c.termination_message_path.is_some()
                && c.termination_message_policy.is_some()
                && c.image_pull_policy.is_some()
                && c.ports.iter().all(|p| p.protocol.is_some())
                && c.resources.limits.keys().all(|r| c.resources.requests.contains_key(r))
                && c.liveness_probe.is_none()
                && c.readiness_probe.is_none()
                && c.startup_probe.is_none()
        })
}

fn default_port(port: &mut ContainerPort) {
    port.protocol.get_or_insert_with(|| "TCP".into());
}

/// Whether an image reference means `:latest` (an explicit `latest`, or no tag and no digest).
pub fn image_tag_is_latest(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

/// ServiceAccount admission: the `default` account and its projected API token volume.
fn service_account(spec: &mut PodSpec, rng: &mut Rng) -> bool {
    let name =
        spec.service_account_name.clone().or_else(|| spec.service_account.clone()).unwrap_or_else(|| "default".into());
    spec.service_account_name = Some(name.clone());
    spec.service_account = Some(name);
    if spec.automount_service_account_token == Some(false) {
        return true;
    }
    let mount_path = "/var/run/secrets/kubernetes.io/serviceaccount";
    let already = spec
        .containers
        .iter()
        .any(|c| c.volume_mounts.iter().any(|m| m.get("mountPath").and_then(|p| p.as_str()) == Some(mount_path)));
    if already {
        return true;
    }
    let volume = format!("kube-api-access-{}", rng.string(NAME_ALPHABET, 5));
    // What every pod's token volume and mount hold besides their names: one value for all.
    static VOLUME: OnceLock<Arc<Value>> = OnceLock::new();
    static MOUNT: OnceLock<Arc<Value>> = OnceLock::new();
    let source = VOLUME.get_or_init(|| {
        Arc::new(json!({
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                ]
            }
        }))
    });
    push_exact(&mut spec.volumes, NamedItem::new(volume.clone(), source.clone()));
    let at = MOUNT.get_or_init(|| Arc::new(json!({"readOnly": true, "mountPath": mount_path})));
    let mount = NamedItem::new(volume, at.clone());
    for c in spec.init_containers.iter_mut().chain(spec.containers.iter_mut()).map(Arc::make_mut) {
        push_exact(&mut c.volume_mounts, mount.clone());
    }
    true
}

/// DefaultTolerationSeconds: tolerate a not-ready or unreachable node for five minutes.
fn default_toleration_seconds(spec: &mut PodSpec) -> bool {
    let missing = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"].map(|key| {
        let tolerated = spec.tolerations.iter().any(|t| {
            (t.key == key || (t.key.is_empty() && t.operator.as_deref() == Some("Exists")))
                && (t.effect.is_empty() || t.effect == "NoExecute")
        });
        (!tolerated).then_some(key)
    });
    let adding = missing.iter().flatten().count();
    if adding == 0 {
        // (Not even a reservation: the list may be shared with the template.)
        return false;
    }
    // Room for what is added, no more (as `push_exact`).
    let tolerations = &mut *spec.tolerations;
    tolerations.reserve_exact(adding);
    for key in missing.into_iter().flatten() {
        tolerations.push(Toleration {
            key: key.into(),
            operator: Some("Exists".into()),
            value: String::new(),
            effect: "NoExecute".into(),
            toleration_seconds: Some(300),
        });
    }
    true
}

/// Priority admission: the built-in priority classes, zero otherwise.
fn priority(spec: &mut PodSpec) {
    let value = match spec.priority_class_name.as_deref() {
        Some("system-node-critical") => 2_000_001_000,
        Some("system-cluster-critical") => 2_000_000_000,
        _ => 0,
    };
    spec.priority.get_or_insert(value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Container;

    #[test]
    fn admission_changes_no_new_object_after_its_defaults_but_of_the_kinds_it_names() {
        // A created object of any other kind has its managed fields read from the stored
        // object (see `changes_after_defaults`): admission must leave it as it was defaulted.
        for &kind in Kind::ALL {
            let mut object = Object::empty(kind);
            object.meta_mut().name = "x".into();
            object.meta_mut().namespace = if kind.info().namespaced { "default".into() } else { String::new() };
            default_object(&mut object);
            let defaulted = object.clone();
            admit_create(&mut object, &mut Rng::new(1));
            assert!(
                changes_after_defaults(kind) || object == defaulted,
                "admission changed a new {kind:?}, which changes_after_defaults does not name"
            );
        }
    }

    fn pod(image: &str) -> Pod {
        let mut p = Pod::default();
        Arc::make_mut(&mut p.spec)
            .containers
            .push(Container { name: "c".into(), image: image.into(), ..Default::default() }.into());
        p
    }

    #[test]
    fn latest_or_untagged_images_are_always_pulled() {
        assert!(image_tag_is_latest("nginx"));
        assert!(image_tag_is_latest("nginx:latest"));
        assert!(!image_tag_is_latest("nginx:1.25"));
        assert!(image_tag_is_latest("localhost:5000/app"));
        assert!(!image_tag_is_latest("nginx@sha256:abc"));
    }

    #[test]
    fn new_jobs_get_a_selector_on_their_uid_and_labelled_templates() {
        let mut job = crate::api::Job::default();
        job.metadata.name = "pi".into();
        job.metadata.uid = "u-1".into();
        job.spec.template.metadata.labels.insert("app".into(), "pi".into());
        let mut obj = Object::Job(Box::new(job));
        admit_create(&mut obj, &mut Rng::new(1));
        let Object::Job(job) = obj else { unreachable!() };
        let selector = job.spec.selector.unwrap();
        assert_eq!(selector.match_labels.len(), 1);
        assert_eq!(selector.match_labels["batch.kubernetes.io/controller-uid"], "u-1");
        let labels = &job.spec.template.metadata.labels;
        assert_eq!(labels["batch.kubernetes.io/job-name"], "pi");
        assert_eq!(labels["job-name"], "pi");
        assert_eq!(labels["batch.kubernetes.io/controller-uid"], "u-1");
        assert_eq!(labels["controller-uid"], "u-1");
        assert_eq!(labels["app"], "pi");
    }

    #[test]
    fn jobs_with_a_manual_selector_keep_theirs() {
        let mut job = crate::api::Job::default();
        job.spec.manual_selector = Some(true);
        let mut obj = Object::Job(Box::new(job));
        admit_create(&mut obj, &mut Rng::new(1));
        let Object::Job(job) = obj else { unreachable!() };
        assert!(job.spec.selector.is_none());
        assert!(job.spec.template.metadata.labels.is_empty());
    }

    #[test]
    fn a_pods_copy_of_its_templates_container_shares_the_requests_and_keeps_no_spare_room() {
        let mut template = pod("nginx:1.25");
        let c = Arc::make_mut(&mut Arc::make_mut(&mut template.spec).containers[0]);
        c.resources.requests.insert("cpu".into(), crate::api::Quantity::parse("10m").unwrap());
        let mut obj = Object::Pod(template.clone());
        default_object(&mut obj);
        admit_create(&mut obj, &mut Rng::new(1));
        let (made, from) = (&obj.as_pod().unwrap().spec, &template.spec);
        // The service-account mount copies the container, not its requirements.
        assert!(!Arc::ptr_eq(&made.containers[0], &from.containers[0]));
        assert!(crate::api::Shared::ptr_eq(&made.containers[0].resources, &from.containers[0].resources));
        assert_eq!(made.containers[0].volume_mounts.capacity(), 1);
        assert_eq!(made.volumes.capacity(), 1);
        assert_eq!(made.tolerations.capacity(), 2);
    }

    #[test]
    fn new_pods_get_defaults_service_account_and_default_tolerations() {
        let mut obj = Object::Pod(pod("nginx:1.25"));
        default_object(&mut obj);
        let done = admit_create(&mut obj, &mut Rng::new(1));
        assert_eq!(done, ["defaulting", "ServiceAccount", "DefaultTolerationSeconds", "Priority"]);
        let p = obj.as_pod().unwrap();
        assert_eq!(p.spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(p.spec.containers[0].image_pull_policy.as_deref(), Some("IfNotPresent"));
        assert_eq!(p.spec.service_account_name.as_deref(), Some("default"));
        assert_eq!(p.spec.tolerations.len(), 2);
        assert_eq!(p.spec.tolerations[0].toleration_seconds, Some(300));
        assert_eq!(p.spec.volumes.len(), 1);
        assert_eq!(p.spec.priority, Some(0));
    }
}
