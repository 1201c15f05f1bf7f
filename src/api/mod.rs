//! The object model: Kubernetes' API types, as manifests and the API server use them.

pub mod access_review;
pub mod admission_policy;
pub mod admission_webhook;
pub mod aggregation;
pub mod apps;
pub mod autoscaling;
pub mod batch;
pub mod component_status;
pub mod config;
pub mod crd;
pub mod custom;
pub mod disruption;
pub mod event;
pub mod helpers;
pub mod int_or_string;
pub mod lease;
pub mod managed_fields;
pub mod meta;
pub mod named_item;
pub mod namespace;
pub mod network_policy;
pub mod networking;
pub mod node;
pub mod object;
pub mod pod;
pub mod policy;
pub mod quantity;
pub mod rbac;
pub mod replication_controller;
pub mod scheduling;
pub mod service;
pub mod shared;
pub mod statefulset;
pub mod storage;
pub mod value_de;
pub mod well_known;

pub use access_review::{SelfSubjectAccessReview, SelfSubjectRulesReview};
pub use admission_policy::{ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding};
pub use admission_webhook::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration};
pub use aggregation::{ApiService, NodeMetrics, PodMetrics};
pub use apps::{DaemonSet, Deployment, PodTemplateSpec, ReplicaSet};
pub use autoscaling::HorizontalPodAutoscaler;
pub use batch::{CronJob, Job};
pub use component_status::ComponentStatus;
pub use config::{ConfigMap, Secret, ServiceAccount};
pub use crd::CustomResourceDefinition;
pub use custom::{CustomKind, CustomObject};
pub use disruption::PodDisruptionBudget;
pub use event::{Event, EventSource};
pub use int_or_string::IntOrString;
pub use lease::{Lease, LeaseSpec};
pub use managed_fields::{FieldSet, ManagedFieldsEntry};
pub use meta::{LabelSelector, Labels, ObjectMeta, ObjectReference, OwnerReference};
pub use named_item::NamedItem;
pub use namespace::Namespace;
pub use network_policy::NetworkPolicy;
pub use networking::{Ingress, IngressClass};
pub use node::{Node, NodeCondition, Taint};
pub use object::{DecodeError, Kind, KindInfo, Object};
pub use pod::{Container, Pod, PodCondition, PodSpec, PodStatus, Toleration};
pub use policy::{LimitRange, LimitRangeItem, ResourceQuota};
pub use quantity::Quantity;
pub use rbac::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject};
pub use replication_controller::ReplicationController;
pub use scheduling::PriorityClass;
pub use service::{EndpointSlice, Endpoints, Service};
pub use shared::Shared;
pub use statefulset::StatefulSet;
pub use storage::{PersistentVolume, PersistentVolumeClaim, StorageClass};

/// Adds `item` with room for it alone. For the lists an object's version keeps as long as it
/// lives (a pod's volumes, mounts, conditions), which a growing list would give room for four.
pub fn push_exact<T>(list: &mut Vec<T>, item: T) {
    list.reserve_exact(1);
    list.push(item);
}
