//! `kubectl explain` schemas of the storage kinds (StorageClass, PersistentVolume and
//! PersistentVolumeClaim, with their specs and statuses) and of StatefulSets.

use super::explain::{API_VERSION, Field, KIND, METADATA};

pub(super) const TYPES: &[(&str, &str, &[Field])] = &[
    (
        "StorageClass",
        "StorageClass describes the parameters for a class of storage for which PersistentVolumes can be dynamically provisioned.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "allowVolumeExpansion",
                "boolean",
                false,
                "allowVolumeExpansion shows whether the storage class allow volume expand.",
            ),
            (
                "mountOptions",
                "[]string",
                false,
                "mountOptions controls the mountOptions for dynamically provisioned PersistentVolumes of this storage class.",
            ),
            (
                "parameters",
                "map[string]string",
                false,
                "parameters holds the parameters for the provisioner that should create volumes of this storage class.",
            ),
            ("provisioner", "string", true, "provisioner indicates the type of the provisioner."),
            (
                "reclaimPolicy",
                "string",
                false,
                "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.",
            ),
            (
                "volumeBindingMode",
                "string",
                false,
                "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound. When unset, VolumeBindingImmediate is used.",
            ),
        ],
    ),
    (
        "PersistentVolume",
        "PersistentVolume (PV) is a storage resource provisioned by an administrator.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "PersistentVolumeSpec",
                false,
                "spec defines a specification of a persistent volume owned by the cluster. Provisioned by an administrator.",
            ),
            (
                "status",
                "PersistentVolumeStatus",
                false,
                "status represents the current information/status for the persistent volume. Populated by the system. Read-only.",
            ),
        ],
    ),
    (
        "PersistentVolumeSpec",
        "PersistentVolumeSpec is the specification of a persistent volume.",
        &[
            ("accessModes", "[]string", false, "accessModes contains all ways the volume can be mounted."),
            (
                "capacity",
                "map[string]Quantity",
                false,
                "capacity is the description of the persistent volume's resources and capacity.",
            ),
            (
                "claimRef",
                "ObjectReference",
                false,
                "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
            ),
            ("hostPath", "HostPathVolumeSource", false, "hostPath represents a directory on the host."),
            (
                "nodeAffinity",
                "VolumeNodeAffinity",
                false,
                "nodeAffinity defines constraints that limit what nodes this volume can be accessed from.",
            ),
            (
                "persistentVolumeReclaimPolicy",
                "string",
                false,
                "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.",
            ),
            (
                "storageClassName",
                "string",
                false,
                "storageClassName is the name of StorageClass to which this persistent volume belongs.",
            ),
            (
                "volumeMode",
                "string",
                false,
                "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.",
            ),
        ],
    ),
    (
        "PersistentVolumeStatus",
        "PersistentVolumeStatus is the current status of a persistent volume.",
        &[
            (
                "lastPhaseTransitionTime",
                "string",
                false,
                "lastPhaseTransitionTime is the time the phase transitioned from one to another.",
            ),
            (
                "message",
                "string",
                false,
                "message is a human-readable message indicating details about why the volume is in this state.",
            ),
            (
                "phase",
                "string",
                false,
                "phase indicates if a volume is available, bound to a claim, or released by a claim.",
            ),
            (
                "reason",
                "string",
                false,
                "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
            ),
        ],
    ),
    (
        "PersistentVolumeClaim",
        "PersistentVolumeClaim is a user's request for and claim to a persistent volume",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "PersistentVolumeClaimSpec",
                false,
                "spec defines the desired characteristics of a volume requested by a pod author.",
            ),
            (
                "status",
                "PersistentVolumeClaimStatus",
                false,
                "status represents the current information/status of a persistent volume claim. Read-only.",
            ),
        ],
    ),
    (
        "PersistentVolumeClaimSpec",
        "PersistentVolumeClaimSpec describes the common attributes of storage devices and allows a Source for provider-specific attributes",
        &[
            ("accessModes", "[]string", false, "accessModes contains the desired access modes the volume should have."),
            (
                "resources",
                "VolumeResourceRequirements",
                false,
                "resources represents the minimum resources the volume should have.",
            ),
            ("selector", "LabelSelector", false, "selector is a label query over volumes to consider for binding."),
            (
                "storageClassName",
                "string",
                false,
                "storageClassName is the name of the StorageClass required by the claim.",
            ),
            (
                "volumeMode",
                "string",
                false,
                "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.",
            ),
            (
                "volumeName",
                "string",
                false,
                "volumeName is the binding reference to the PersistentVolume backing this claim.",
            ),
        ],
    ),
    (
        "VolumeResourceRequirements",
        "VolumeResourceRequirements describes the storage resource requirements for a volume.",
        &[
            (
                "limits",
                "map[string]Quantity",
                false,
                "Limits describes the maximum amount of compute resources allowed.",
            ),
            (
                "requests",
                "map[string]Quantity",
                false,
                "Requests describes the minimum amount of compute resources required.",
            ),
        ],
    ),
    (
        "PersistentVolumeClaimStatus",
        "PersistentVolumeClaimStatus is the current status of a persistent volume claim.",
        &[
            (
                "accessModes",
                "[]string",
                false,
                "accessModes contains the actual access modes the volume backing the PVC has.",
            ),
            (
                "capacity",
                "map[string]Quantity",
                false,
                "capacity represents the actual resources of the underlying volume.",
            ),
            ("phase", "string", false, "phase represents the current phase of PersistentVolumeClaim."),
        ],
    ),
    (
        "StatefulSet",
        "StatefulSet represents a set of pods with consistent identities.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "StatefulSetSpec", false, "Spec defines the desired identities of pods in this set."),
            ("status", "Object", false, "Status is the current status of Pods in this StatefulSet."),
        ],
    ),
    (
        "StatefulSetSpec",
        "A StatefulSetSpec is the specification of a StatefulSet.",
        &[
            (
                "minReadySeconds",
                "integer",
                false,
                "Minimum number of seconds for which a newly created pod should be ready without any of its container crashing for it to be considered available.",
            ),
            (
                "podManagementPolicy",
                "string",
                false,
                "podManagementPolicy controls how pods are created during initial scale up, when replacing pods on nodes, or when scaling down.",
            ),
            ("replicas", "integer", false, "replicas is the desired number of replicas of the given Template."),
            (
                "revisionHistoryLimit",
                "integer",
                false,
                "revisionHistoryLimit is the maximum number of revisions that will be maintained in the StatefulSet's revision history.",
            ),
            (
                "selector",
                "LabelSelector",
                true,
                "selector is a label query over pods that should match the replica count.",
            ),
            ("serviceName", "string", false, "serviceName is the name of the service that governs this StatefulSet."),
            (
                "template",
                "PodTemplateSpec",
                true,
                "template is the object that describes the pod that will be created if insufficient replicas are detected.",
            ),
            (
                "updateStrategy",
                "Object",
                false,
                "updateStrategy indicates the StatefulSetUpdateStrategy that will be employed to update Pods in the StatefulSet when a revision is made to Template.",
            ),
            (
                "volumeClaimTemplates",
                "[]PersistentVolumeClaim",
                false,
                "volumeClaimTemplates is a list of claims that pods are allowed to reference.",
            ),
        ],
    ),
];
