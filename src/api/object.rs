//! The kinds the API serves, and `Object`: any one stored object, decoded strictly.

use super::*;
use serde::Serialize;
use serde_json::Value;

/// Everything kubectl and the API server need to know about a kind (its REST mapping).
#[derive(Debug)]
pub struct KindInfo {
    pub kind: &'static str,
    pub group: &'static str,
    pub version: &'static str,
    /// Plural resource name, as in URLs and RBAC: `pods`.
    pub resource: &'static str,
    pub singular: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub verbs: &'static [&'static str],
}

const ALL_VERBS: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/// The kinds the API serves, in one table: variant, Rust type, group, version, plural
/// resource, singular, whether namespaced, short names.
/// Gives an object's JSON when called: see `Object::json_source`.
pub type JsonSource = Box<dyn Fn() -> Value + Send>;

macro_rules! kinds {
    ($( $variant:ident($ty:ty) = $group:literal, $version:literal, $resource:literal, $singular:literal, $namespaced:literal, [$($short:literal),*]; )*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind { $($variant,)* Custom(super::custom::CustomKind) }

        impl Kind {
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),*];

            pub fn info(self) -> &'static KindInfo {
                match self {
                    $(Kind::$variant => {
                        static INFO: KindInfo = KindInfo {
                            kind: stringify!($variant),
                            group: $group,
                            version: $version,
                            resource: $resource,
                            singular: $singular,
                            namespaced: $namespaced,
                            short_names: &[$($short),*],
                            verbs: ALL_VERBS,
                        };
                        &INFO
                    })*
                    Kind::Custom(c) => c.info(),
                }
            }
        }

        /// One stored object of any kind.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum Object { $($variant($ty),)* Custom(Box<super::custom::CustomObject>) }

        macro_rules! each_kind {
            ($obj:expr, $inner:ident => $body:expr) => {
                match $obj { $(Object::$variant($inner) => $body,)* Object::Custom($inner) => $body }
            };
        }

        impl Object {
            pub fn kind(&self) -> Kind {
                match self { $(Object::$variant(_) => Kind::$variant,)* Object::Custom(o) => Kind::Custom(o.of) }
            }

            /// An empty object of `kind`, e.g. to check which fields a selector may name.
            pub fn empty(kind: Kind) -> Object {
                match kind {
                    $(Kind::$variant => Object::$variant(Default::default()),)*
                    Kind::Custom(c) => Object::Custom(Box::new(super::custom::CustomObject::empty(c))),
                }
            }

            /// A copy of the object, kept at its kind's own size (not the enum's), that gives
            /// the object's JSON when called (for work deferred until it is needed).
            pub fn json_source(&self) -> JsonSource {
                match self {
                    $(Object::$variant(o) => {
                        let copy = o.clone();
                        Box::new(move || serde_json::to_value(&copy).unwrap_or(Value::Null))
                    }),*
                    Object::Custom(o) => {
                        let copy = o.clone();
                        Box::new(move || serde_json::to_value(&copy).unwrap_or(Value::Null))
                    }
                }
            }

            /// Decodes a request body of a known kind strictly: unknown fields are errors,
            /// reported with their path the way the API server's strict field validation does.
            pub fn decode(kind: Kind, body: &Value) -> Result<Object, DecodeError> {
                if kind == Kind::HorizontalPodAutoscaler && body["apiVersion"] == "autoscaling/v1" {
                    return Ok(Object::HorizontalPodAutoscaler(strict(&super::autoscaling::v1_to_v2(body))?));
                }
                if let Kind::Custom(c) = kind {
                    return Ok(Object::Custom(Box::new(super::custom::CustomObject::decode(c, body)?)));
                }
                // Through a table, not a match: a match would be one body holding every kind's
                // decoder, which the page's worker compiles whole on the first object it decodes
                // (it compiles functions on their first call); the optimizer inlines a decoder
                // called from one place, but not one called through a table.
                const DECODERS: &[fn(&Value) -> Result<Object, DecodeError>] =
                    &[$(|body| Ok(Object::$variant(strict(body)?))),*];
                match Kind::ALL.iter().position(|k| *k == kind).and_then(|i| DECODERS.get(i)) {
                    Some(decode) => decode(body),
                    None => Err(DecodeError { message: format!("no decoder for {kind:?}") }),
                }
            }
        }
    };
}

// An `Object` is as large as its largest inline kind, and every stored version, request body
// and cache entry is one: the kinds larger than an Event (of which a cluster holds the most)
// are boxed, so a Pod or an Event is not padded to the size of a Job.
kinds! {
    Pod(Pod) = "", "v1", "pods", "pod", true, ["po"];
    Node(Box<Node>) = "", "v1", "nodes", "node", false, ["no"];
    Namespace(Namespace) = "", "v1", "namespaces", "namespace", false, ["ns"];
    Event(Event) = "", "v1", "events", "event", true, ["ev"];
    Service(Box<Service>) = "", "v1", "services", "service", true, ["svc"];
    Endpoints(Endpoints) = "", "v1", "endpoints", "endpoints", true, ["ep"];
    ConfigMap(ConfigMap) = "", "v1", "configmaps", "configmap", true, ["cm"];
    Secret(Secret) = "", "v1", "secrets", "secret", true, [];
    ServiceAccount(ServiceAccount) = "", "v1", "serviceaccounts", "serviceaccount", true, ["sa"];
    ResourceQuota(ResourceQuota) = "", "v1", "resourcequotas", "resourcequota", true, ["quota"];
    LimitRange(LimitRange) = "", "v1", "limitranges", "limitrange", true, ["limits"];
    Deployment(Box<Deployment>) = "apps", "v1", "deployments", "deployment", true, ["deploy"];
    ReplicaSet(Box<ReplicaSet>) = "apps", "v1", "replicasets", "replicaset", true, ["rs"];
    DaemonSet(Box<DaemonSet>) = "apps", "v1", "daemonsets", "daemonset", true, ["ds"];
    StatefulSet(Box<StatefulSet>) = "apps", "v1", "statefulsets", "statefulset", true, ["sts"];
    Job(Box<Job>) = "batch", "v1", "jobs", "job", true, [];
    CronJob(CronJob) = "batch", "v1", "cronjobs", "cronjob", true, ["cj"];
    EndpointSlice(EndpointSlice) = "discovery.k8s.io", "v1", "endpointslices", "endpointslice", true, [];
    Lease(Lease) = "coordination.k8s.io", "v1", "leases", "lease", true, [];
    Role(Role) = "rbac.authorization.k8s.io", "v1", "roles", "role", true, [];
    ClusterRole(ClusterRole) = "rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", false, [];
    RoleBinding(RoleBinding) = "rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", true, [];
    ClusterRoleBinding(ClusterRoleBinding) = "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", false, [];
    ComponentStatus(ComponentStatus) = "", "v1", "componentstatuses", "componentstatus", false, ["cs"];
    SelfSubjectAccessReview(Box<SelfSubjectAccessReview>) = "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview", false, [];
    SelfSubjectRulesReview(Box<SelfSubjectRulesReview>) = "authorization.k8s.io", "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview", false, [];
    StorageClass(StorageClass) = "storage.k8s.io", "v1", "storageclasses", "storageclass", false, ["sc"];
    PersistentVolume(Box<PersistentVolume>) = "", "v1", "persistentvolumes", "persistentvolume", false, ["pv"];
    PersistentVolumeClaim(Box<PersistentVolumeClaim>) = "", "v1", "persistentvolumeclaims", "persistentvolumeclaim", true, ["pvc"];
    PodDisruptionBudget(Box<PodDisruptionBudget>) = "policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", true, ["pdb"];
    PriorityClass(PriorityClass) = "scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", false, ["pc"];
    ReplicationController(Box<ReplicationController>) = "", "v1", "replicationcontrollers", "replicationcontroller", true, ["rc"];
    NetworkPolicy(Box<NetworkPolicy>) = "networking.k8s.io", "v1", "networkpolicies", "networkpolicy", true, ["netpol"];
    ValidatingAdmissionPolicy(Box<ValidatingAdmissionPolicy>) = "admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "validatingadmissionpolicy", false, [];
    ValidatingAdmissionPolicyBinding(Box<ValidatingAdmissionPolicyBinding>) = "admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings", "validatingadmissionpolicybinding", false, [];
    ValidatingWebhookConfiguration(Box<ValidatingWebhookConfiguration>) = "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "validatingwebhookconfiguration", false, [];
    MutatingWebhookConfiguration(Box<MutatingWebhookConfiguration>) = "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "mutatingwebhookconfiguration", false, [];
    HorizontalPodAutoscaler(Box<HorizontalPodAutoscaler>) = "autoscaling", "v2", "horizontalpodautoscalers", "horizontalpodautoscaler", true, ["hpa"];
    APIService(Box<ApiService>) = "apiregistration.k8s.io", "v1", "apiservices", "apiservice", false, [];
    NodeMetrics(Box<NodeMetrics>) = "metrics.k8s.io", "v1beta1", "nodes", "nodemetrics", false, [];
    PodMetrics(Box<PodMetrics>) = "metrics.k8s.io", "v1beta1", "pods", "podmetrics", true, [];
    IngressClass(IngressClass) = "networking.k8s.io", "v1", "ingressclasses", "ingressclass", false, [];
    Ingress(Box<Ingress>) = "networking.k8s.io", "v1", "ingresses", "ingress", true, ["ing"];
    CustomResourceDefinition(Box<CustomResourceDefinition>) = "apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition", false, ["crd", "crds"];
}

impl Kind {
    /// `v1` for the core group, `group/version` otherwise.
    pub fn api_version(self) -> String {
        let info = self.info();
        // Joined rather than formatted: every write and event asks.
        if info.group.is_empty() { info.version.to_string() } else { [info.group, "/", info.version].concat() }
    }

    /// `pods` for the core group, `deployments.apps` otherwise, as error messages print it.
    pub fn qualified_resource(self) -> String {
        let info = self.info();
        if info.group.is_empty() { info.resource.to_string() } else { [info.resource, ".", info.group].concat() }
    }

    /// `pod` / `deployment.apps`, as kubectl's `TYPE/NAME` confirmations print it.
    pub fn qualified_singular(self) -> String {
        let info = self.info();
        if info.group.is_empty() { info.singular.to_string() } else { format!("{}.{}", info.singular, info.group) }
    }

    /// Finds the kind a manifest's `apiVersion` and `kind` name.
    pub fn from_type_meta(api_version: &str, kind: &str) -> Option<Kind> {
        // autoscaling/v1 HorizontalPodAutoscalers are served too, converted to v2.
        if api_version == "autoscaling/v1" && kind == "HorizontalPodAutoscaler" {
            return Some(Kind::HorizontalPodAutoscaler);
        }
        Kind::ALL.iter().copied().find(|k| k.info().kind == kind && k.api_version() == api_version).or_else(|| {
            let served = super::custom::Discovery::served();
            let found =
                served.iter().find(|s| s.kind.info().kind == kind && Kind::Custom(s.kind).api_version() == api_version);
            found.map(|s| Kind::Custom(s.kind))
        })
    }

    /// etcd's resource prefix: the plural for built-in kinds, `GROUP/PLURAL` for custom ones.
    pub fn storage_resource(self) -> &'static str {
        match self {
            Kind::Custom(c) => c.storage(),
            _ => self.info().resource,
        }
    }

    /// Finds the kind a command line names: plural, singular, short name or Kind, optionally
    /// qualified with its group (`deployments.apps`).
    pub fn from_resource_arg(arg: &str) -> Option<Kind> {
        let lower = arg.to_ascii_lowercase();
        let (name, group) = match lower.split_once('.') {
            Some((n, g)) => (n.to_string(), Some(g.to_string())),
            None => (lower, None),
        };
        let builtin = Kind::ALL.iter().copied().find(|k| {
            let info = k.info();
            let name_ok = info.resource == name
                || info.singular == name
                || info.short_names.contains(&name.as_str())
                || info.kind.eq_ignore_ascii_case(&name);
            name_ok
                && group.as_deref().is_none_or(|g| g == info.group || g == format!("{}.{}", info.version, info.group))
        });
        builtin.or_else(|| {
            // Then what discovery found: a group given in full (`websites.example.com`) names a
            // custom resource too.
            let served = super::custom::Discovery::served();
            let found = served.iter().filter(|s| s.preferred || group.as_deref().is_some()).find(|s| {
                let info = s.kind.info();
                let name_ok = info.resource == name
                    || info.singular == name
                    || s.short_names.contains(&name)
                    || info.kind.eq_ignore_ascii_case(&name);
                name_ok
                    && group
                        .as_deref()
                        .is_none_or(|g| g == info.group || g == format!("{}.{}", info.version, info.group))
            });
            found.map(|s| Kind::Custom(s.kind))
        })
    }
}

/// Why a request body could not be turned into an object (the API server's decode stage).
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeError {
    pub message: String,
}

impl Object {
    /// Whether the kind has a `status` that only the status subresource may change.
    pub fn has_status(kind: Kind) -> bool {
        matches!(
            kind,
            Kind::Pod
                | Kind::Node
                | Kind::Namespace
                | Kind::Service
                | Kind::Deployment
                | Kind::ReplicaSet
                | Kind::DaemonSet
                | Kind::Job
                | Kind::PersistentVolume
                | Kind::PersistentVolumeClaim
                | Kind::StatefulSet
                | Kind::PodDisruptionBudget
                | Kind::ReplicationController
                | Kind::HorizontalPodAutoscaler
                | Kind::APIService
                | Kind::Ingress
                | Kind::CustomResourceDefinition
        )
    }

    pub fn meta(&self) -> &ObjectMeta {
        each_kind!(self, o => &o.metadata)
    }

    pub fn meta_mut(&mut self) -> &mut ObjectMeta {
        each_kind!(self, o => &mut o.metadata)
    }

    pub fn name(&self) -> &str {
        &self.meta().name
    }

    pub fn namespace(&self) -> &str {
        &self.meta().namespace
    }

    /// Fills in `apiVersion` and `kind`, as every object the API returns carries them.
    pub fn set_type_meta(&mut self) {
        let of = self.kind();
        let (group, version, kind) = (of.info().group, of.info().version, of.info().kind);
        // Most objects written back already carry theirs: they are compared, not rebuilt.
        let wanted = |v: &str| {
            if group.is_empty() {
                v == version
            } else {
                v.strip_prefix(group).and_then(|r| r.strip_prefix('/')) == Some(version)
            }
        };
        each_kind!(self, o => {
            if !wanted(&o.api_version) {
                o.api_version = of.api_version();
            }
            if o.kind != kind {
                o.kind = kind.to_string();
            }
        })
    }

    pub fn as_pod(&self) -> Option<&Pod> {
        if let Object::Pod(p) = self { Some(p) } else { None }
    }

    pub fn as_node(&self) -> Option<&Node> {
        if let Object::Node(n) = self { Some(n) } else { None }
    }

    pub fn as_event(&self) -> Option<&Event> {
        if let Object::Event(e) = self { Some(e) } else { None }
    }

    pub fn as_replica_set(&self) -> Option<&ReplicaSet> {
        if let Object::ReplicaSet(r) = self { Some(r) } else { None }
    }

    pub fn as_deployment(&self) -> Option<&Deployment> {
        if let Object::Deployment(d) = self { Some(d) } else { None }
    }

    /// The owner reference that marks this object's controller, if any.
    pub fn controller_ref(&self) -> Option<&OwnerReference> {
        self.meta().owner_references.iter().find(|o| o.controller == Some(true))
    }

    /// The object as JSON with keys sorted, as the API serves it.
    pub fn to_json_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

fn strict<T: serde::de::DeserializeOwned>(body: &Value) -> Result<T, DecodeError> {
    super::value_de::from_value(body).map_err(|err| decode_error(&err, body))
}

/// The API server's message for a body `T` could not be decoded from.
#[inline(never)]
fn decode_error(err: &serde_json::Error, body: &Value) -> DecodeError {
    let message = err.to_string();
    let message = match unknown_field_name(&message) {
        Some(field) => {
            let path = unknown_field_path(body, field, &expected_fields(&message)).unwrap_or_else(|| field.to_string());
            format!("strict decoding error: unknown field \"{path}\"")
        }
        None => message,
    };
    DecodeError { message }
}

/// The field names serde lists after "expected one of" in an unknown-field error.
fn expected_fields(serde_message: &str) -> Vec<&str> {
    serde_message
        .split_once("expected one of ")
        .or_else(|| serde_message.split_once("expected "))
        .map(|(_, list)| list.split(", ").map(|f| f.trim_matches('`')).collect())
        .unwrap_or_default()
}

/// Where in `body` a map holds the unknown `field` next to known ones: the map whose other
/// keys are all among `expected` (so the right one of several same-named keys is found).
/// Returns a path like `spec.containers[0].imagee`.
fn unknown_field_path(body: &Value, field: &str, expected: &[&str]) -> Option<String> {
    match body {
        Value::Object(map) => {
            if map.contains_key(field) && map.keys().all(|k| k == field || expected.contains(&k.as_str())) {
                return Some(field.to_string());
            }
            map.iter().find_map(|(k, v)| unknown_field_path(v, field, expected).map(|p| format!("{k}.{p}")))
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
            let inner = unknown_field_path(v, field, expected)?;
            // Array elements join their parent's key without a dot: containers[0].image
            Some(format!("[{i}].{inner}"))
        }),
        _ => None,
    }
    .map(|p| p.replace(".[", "["))
}

fn unknown_field_name(serde_message: &str) -> Option<&str> {
    let rest = serde_message.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_decodes_through_its_own_entry_of_the_decoder_table() {
        for &kind in Kind::ALL {
            let body = serde_json::to_value(Object::empty(kind)).unwrap();
            let decoded = Object::decode(kind, &body).unwrap_or_else(|e| panic!("{kind:?}: {}", e.message));
            assert_eq!(decoded.kind(), kind);
        }
    }

    #[test]
    fn an_object_is_no_larger_than_an_event_so_a_stored_version_takes_a_512_byte_block() {
        // `Arc<Object>` adds two counters; the allocator's size class above 448 bytes is 512.
        assert!(std::mem::size_of::<Object>() <= std::mem::size_of::<crate::api::Event>() + 8);
        assert!(std::mem::size_of::<Object>() + 16 <= 512, "Object is {} bytes", std::mem::size_of::<Object>());
    }

    #[test]
    fn resource_args_accept_plural_singular_short_and_kind() {
        for arg in ["pods", "pod", "po", "Pod", "PODS"] {
            assert_eq!(Kind::from_resource_arg(arg), Some(Kind::Pod), "{arg}");
        }
        assert_eq!(Kind::from_resource_arg("leases.coordination.k8s.io"), Some(Kind::Lease));
        assert_eq!(Kind::from_resource_arg("pods.apps"), None);
        assert_eq!(Kind::from_resource_arg("podz"), None);
    }

    #[test]
    fn type_meta_maps_to_kinds() {
        assert_eq!(Kind::from_type_meta("v1", "Pod"), Some(Kind::Pod));
        assert_eq!(Kind::from_type_meta("coordination.k8s.io/v1", "Lease"), Some(Kind::Lease));
        assert_eq!(Kind::from_type_meta("apps/v1", "Pod"), None);
    }

    #[test]
    fn unknown_fields_are_rejected_with_their_path() {
        let body = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
            "spec": {"containers": [{"name": "c", "image": "nginx", "imagee": "typo"}]}});
        let err = Object::decode(Kind::Pod, &body).unwrap_err();
        assert_eq!(err.message, "strict decoding error: unknown field \"spec.containers[0].imagee\"");
    }

    #[test]
    fn a_real_pod_manifest_decodes() {
        let body = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "nginx", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2",
                "ports": [{"containerPort": 80}],
                "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}]}});
        let obj = Object::decode(Kind::Pod, &body).unwrap();
        let pod = obj.as_pod().unwrap();
        assert_eq!(pod.requests().cpu_milli, 250);
        assert_eq!(pod.requests().memory_bytes, 64 << 20);
    }
}
