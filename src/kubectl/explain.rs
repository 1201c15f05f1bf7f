//! `kubectl explain KIND[.field.path] [--recursive]`: field documentation in kubectl's
//! plaintext layout (KIND / VERSION / FIELD / DESCRIPTION / FIELDS), from a compact schema of
//! the main fields with the first sentence of upstream's descriptions.

use super::Output;
use super::args::Args;
use crate::api::Kind;

/// One field: name, type as explain prints it, required, description.
pub(super) type Field = (&'static str, &'static str, bool, &'static str);

pub(super) const API_VERSION: Field = (
    "apiVersion",
    "string",
    false,
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.",
);
pub(super) const KIND: Field = (
    "kind",
    "string",
    false,
    "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.",
);
pub(super) const METADATA: Field = ("metadata", "ObjectMeta", false, "Standard object's metadata.");

/// Object types: name, description, fields.
const TYPES: &[(&str, &str, &[Field])] = &[
    (
        "Pod",
        "Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "PodSpec", false, "Specification of the desired behavior of the pod."),
            (
                "status",
                "PodStatus",
                false,
                "Most recently observed status of the pod. This data may not be up to date. Populated by the system. Read-only.",
            ),
        ],
    ),
    (
        "PodSpec",
        "PodSpec is a description of a pod.",
        &[
            ("affinity", "Affinity", false, "If specified, the pod's scheduling constraints"),
            (
                "containers",
                "[]Container",
                true,
                "List of containers belonging to the pod. Containers cannot currently be added or removed. There must be at least one container in a Pod. Cannot be updated.",
            ),
            (
                "initContainers",
                "[]Container",
                false,
                "List of initialization containers belonging to the pod. Init containers are executed in order prior to containers being started.",
            ),
            (
                "nodeName",
                "string",
                false,
                "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName.",
            ),
            (
                "nodeSelector",
                "map[string]string",
                false,
                "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.",
            ),
            (
                "restartPolicy",
                "string",
                false,
                "Restart policy for all containers within the pod. One of Always, OnFailure, Never. Default to Always.",
            ),
            (
                "serviceAccountName",
                "string",
                false,
                "ServiceAccountName is the name of the ServiceAccount to use to run this pod.",
            ),
            (
                "terminationGracePeriodSeconds",
                "integer",
                false,
                "Optional duration in seconds the pod needs to terminate gracefully. Defaults to 30 seconds.",
            ),
            ("tolerations", "[]Toleration", false, "If specified, the pod's tolerations."),
            (
                "topologySpreadConstraints",
                "[]TopologySpreadConstraint",
                false,
                "TopologySpreadConstraints describes how a group of pods ought to spread across topology domains.",
            ),
            ("volumes", "[]Volume", false, "List of volumes that can be mounted by containers belonging to the pod."),
        ],
    ),
    (
        "Container",
        "A single application container that you want to run within a pod.",
        &[
            (
                "args",
                "[]string",
                false,
                "Arguments to the entrypoint. The container image's CMD is used if this is not provided.",
            ),
            (
                "command",
                "[]string",
                false,
                "Entrypoint array. Not executed within a shell. The container image's ENTRYPOINT is used if this is not provided.",
            ),
            ("env", "[]EnvVar", false, "List of environment variables to set in the container. Cannot be updated."),
            ("image", "string", false, "Container image name."),
            (
                "imagePullPolicy",
                "string",
                false,
                "Image pull policy. One of Always, Never, IfNotPresent. Defaults to Always if :latest tag is specified, or IfNotPresent otherwise.",
            ),
            (
                "livenessProbe",
                "Probe",
                false,
                "Periodic probe of container liveness. Container will be restarted if the probe fails.",
            ),
            (
                "name",
                "string",
                true,
                "Name of the container specified as a DNS_LABEL. Each container in a pod must have a unique name (DNS_LABEL). Cannot be updated.",
            ),
            ("ports", "[]ContainerPort", false, "List of ports to expose from the container."),
            (
                "readinessProbe",
                "Probe",
                false,
                "Periodic probe of container service readiness. Container will be removed from service endpoints if the probe fails.",
            ),
            (
                "resources",
                "ResourceRequirements",
                false,
                "Compute Resources required by this container. Cannot be updated.",
            ),
            ("startupProbe", "Probe", false, "StartupProbe indicates that the Pod has successfully initialized."),
        ],
    ),
    (
        "ContainerPort",
        "ContainerPort represents a network port in a single container.",
        &[
            (
                "containerPort",
                "integer",
                true,
                "Number of port to expose on the pod's IP address. This must be a valid port number, 0 < x < 65536.",
            ),
            ("hostPort", "integer", false, "Number of port to expose on the host."),
            (
                "name",
                "string",
                false,
                "If specified, this must be an IANA_SVC_NAME and unique within the pod. Each named port in a pod must have a unique name.",
            ),
            ("protocol", "string", false, "Protocol for port. Must be UDP, TCP, or SCTP. Defaults to \"TCP\"."),
        ],
    ),
    (
        "EnvVar",
        "EnvVar represents an environment variable present in a Container.",
        &[
            ("name", "string", true, "Name of the environment variable."),
            (
                "value",
                "string",
                false,
                "Variable references $(VAR_NAME) are expanded using the previously defined environment variables in the container and any service environment variables.",
            ),
        ],
    ),
    (
        "ResourceRequirements",
        "ResourceRequirements describes the compute resource requirements.",
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
        "Probe",
        "Probe describes a health check to be performed against a container to determine whether it is alive or ready to receive traffic.",
        &[
            ("exec", "ExecAction", false, "Exec specifies a command to execute in the container."),
            (
                "failureThreshold",
                "integer",
                false,
                "Minimum consecutive failures for the probe to be considered failed after having succeeded. Defaults to 3. Minimum value is 1.",
            ),
            ("httpGet", "HTTPGetAction", false, "HTTPGet specifies an HTTP GET request to perform."),
            (
                "initialDelaySeconds",
                "integer",
                false,
                "Number of seconds after the container has started before liveness probes are initiated.",
            ),
            (
                "periodSeconds",
                "integer",
                false,
                "How often (in seconds) to perform the probe. Default to 10 seconds. Minimum value is 1.",
            ),
            ("tcpSocket", "TCPSocketAction", false, "TCPSocket specifies a connection to a TCP port."),
            (
                "timeoutSeconds",
                "integer",
                false,
                "Number of seconds after which the probe times out. Defaults to 1 second. Minimum value is 1.",
            ),
        ],
    ),
    (
        "Toleration",
        "The pod this Toleration is attached to tolerates any taint that matches the triple <key,value,effect> using the matching operator <operator>.",
        &[
            (
                "effect",
                "string",
                false,
                "Effect indicates the taint effect to match. Empty means match all taint effects.",
            ),
            (
                "key",
                "string",
                false,
                "Key is the taint key that the toleration applies to. Empty means match all taint keys.",
            ),
            (
                "operator",
                "string",
                false,
                "Operator represents a key's relationship to the value. Valid operators are Exists and Equal. Defaults to Equal.",
            ),
            (
                "tolerationSeconds",
                "integer",
                false,
                "TolerationSeconds represents the period of time the toleration (which must be of effect NoExecute) tolerates the taint.",
            ),
            ("value", "string", false, "Value is the taint value the toleration matches to."),
        ],
    ),
    (
        "PodStatus",
        "PodStatus represents information about the status of a pod.",
        &[
            ("conditions", "[]PodCondition", false, "Current service state of pod."),
            ("containerStatuses", "[]ContainerStatus", false, "Statuses of containers in this pod."),
            ("hostIP", "string", false, "hostIP holds the IP address of the host to which the pod is assigned."),
            (
                "phase",
                "string",
                false,
                "The phase of a Pod is a simple, high-level summary of where the Pod is in its lifecycle: Pending, Running, Succeeded, Failed or Unknown.",
            ),
            ("podIP", "string", false, "podIP address allocated to the pod. Routable at least within the cluster."),
            (
                "startTime",
                "string",
                false,
                "RFC 3339 date and time at which the object was acknowledged by the Kubelet.",
            ),
        ],
    ),
    (
        "ObjectMeta",
        "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        &[
            (
                "annotations",
                "map[string]string",
                false,
                "Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata.",
            ),
            (
                "creationTimestamp",
                "string",
                false,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            (
                "deletionTimestamp",
                "string",
                false,
                "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted.",
            ),
            ("finalizers", "[]string", false, "Must be empty before the object is deleted from the registry."),
            (
                "generateName",
                "string",
                false,
                "GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.",
            ),
            (
                "generation",
                "integer",
                false,
                "A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.",
            ),
            (
                "labels",
                "map[string]string",
                false,
                "Map of string keys and values that can be used to organize and categorize (scope and select) objects.",
            ),
            ("name", "string", false, "Name must be unique within a namespace. Cannot be updated."),
            (
                "namespace",
                "string",
                false,
                "Namespace defines the space within which each name must be unique. Must be a DNS_LABEL. Cannot be updated.",
            ),
            (
                "ownerReferences",
                "[]OwnerReference",
                false,
                "List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.",
            ),
            (
                "resourceVersion",
                "string",
                false,
                "An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed.",
            ),
            (
                "uid",
                "string",
                false,
                "UID is the unique in time and space value for this object. Populated by the system. Read-only.",
            ),
        ],
    ),
    (
        "Deployment",
        "Deployment enables declarative updates for Pods and ReplicaSets.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "DeploymentSpec", false, "Specification of the desired behavior of the Deployment."),
            ("status", "DeploymentStatus", false, "Most recently observed status of the Deployment."),
        ],
    ),
    (
        "DeploymentSpec",
        "DeploymentSpec is the specification of the desired behavior of the Deployment.",
        &[
            (
                "minReadySeconds",
                "integer",
                false,
                "Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available. Defaults to 0.",
            ),
            ("paused", "boolean", false, "Indicates that the deployment is paused."),
            (
                "progressDeadlineSeconds",
                "integer",
                false,
                "The maximum time in seconds for a deployment to make progress before it is considered to be failed. Defaults to 600s.",
            ),
            (
                "replicas",
                "integer",
                false,
                "Number of desired pods. This is a pointer to distinguish between explicit zero and not specified. Defaults to 1.",
            ),
            (
                "revisionHistoryLimit",
                "integer",
                false,
                "The number of old ReplicaSets to retain to allow rollback. Defaults to 10.",
            ),
            (
                "selector",
                "LabelSelector",
                true,
                "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
            ),
            (
                "strategy",
                "DeploymentStrategy",
                false,
                "The deployment strategy to use to replace existing pods with new ones.",
            ),
            (
                "template",
                "PodTemplateSpec",
                true,
                "Template describes the pods that will be created. The only allowed template.spec.restartPolicy value is \"Always\".",
            ),
        ],
    ),
    (
        "DeploymentStrategy",
        "DeploymentStrategy describes how to replace existing pods with new ones.",
        &[
            (
                "rollingUpdate",
                "RollingUpdateDeployment",
                false,
                "Rolling update config params. Present only if DeploymentStrategyType = RollingUpdate.",
            ),
            (
                "type",
                "string",
                false,
                "Type of deployment. Can be \"Recreate\" or \"RollingUpdate\". Default is RollingUpdate.",
            ),
        ],
    ),
    (
        "RollingUpdateDeployment",
        "Spec to control the desired behavior of rolling update.",
        &[
            (
                "maxSurge",
                "IntOrString",
                false,
                "The maximum number of pods that can be scheduled above the desired number of pods. Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%). Defaults to 25%.",
            ),
            (
                "maxUnavailable",
                "IntOrString",
                false,
                "The maximum number of pods that can be unavailable during the update. Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%). Defaults to 25%.",
            ),
        ],
    ),
    (
        "DeploymentStatus",
        "DeploymentStatus is the most recently observed status of the Deployment.",
        &[
            (
                "availableReplicas",
                "integer",
                false,
                "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
            ),
            (
                "conditions",
                "[]DeploymentCondition",
                false,
                "Represents the latest available observations of a deployment's current state.",
            ),
            ("observedGeneration", "integer", false, "The generation observed by the deployment controller."),
            (
                "readyReplicas",
                "integer",
                false,
                "Total number of non-terminating pods targeted by this Deployment with a Ready Condition.",
            ),
            (
                "replicas",
                "integer",
                false,
                "Total number of non-terminating pods targeted by this deployment (their labels match the selector).",
            ),
            (
                "updatedReplicas",
                "integer",
                false,
                "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
            ),
        ],
    ),
    (
        "LabelSelector",
        "A label selector is a label query over a set of resources. An empty label selector matches all objects. A null label selector matches no objects.",
        &[
            (
                "matchExpressions",
                "[]LabelSelectorRequirement",
                false,
                "matchExpressions is a list of label selector requirements. The requirements are ANDed.",
            ),
            ("matchLabels", "map[string]string", false, "matchLabels is a map of {key,value} pairs."),
        ],
    ),
    (
        "PodTemplateSpec",
        "PodTemplateSpec describes the data a pod should have when created from a template",
        &[
            ("metadata", "ObjectMeta", false, "Standard object's metadata."),
            ("spec", "PodSpec", false, "Specification of the desired behavior of the pod."),
        ],
    ),
    (
        "ReplicaSet",
        "ReplicaSet ensures that a specified number of pod replicas are running at any given time.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "ReplicaSetSpec",
                false,
                "Spec defines the specification of the desired behavior of the ReplicaSet.",
            ),
            ("status", "Object", false, "Status is the most recently observed status of the ReplicaSet."),
        ],
    ),
    (
        "ReplicaSetSpec",
        "ReplicaSetSpec is the specification of a ReplicaSet.",
        &[
            (
                "minReadySeconds",
                "integer",
                false,
                "Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available.",
            ),
            ("replicas", "integer", false, "Replicas is the number of desired pods. Defaults to 1."),
            (
                "selector",
                "LabelSelector",
                true,
                "Selector is a label query over pods that should match the replica count.",
            ),
            (
                "template",
                "PodTemplateSpec",
                false,
                "Template is the object that describes the pod that will be created if insufficient replicas are detected.",
            ),
        ],
    ),
    (
        "DaemonSet",
        "DaemonSet represents the configuration of a daemon set.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "DaemonSetSpec", false, "The desired behavior of this daemon set."),
            ("status", "Object", false, "The current status of this daemon set."),
        ],
    ),
    (
        "DaemonSetSpec",
        "DaemonSetSpec is the specification of a daemon set.",
        &[
            (
                "minReadySeconds",
                "integer",
                false,
                "The minimum number of seconds for which a newly created DaemonSet pod should be ready without any of its container crashing, for it to be considered available.",
            ),
            (
                "selector",
                "LabelSelector",
                true,
                "A label query over pods that are managed by the daemon set. It must match the pod template's labels.",
            ),
            ("template", "PodTemplateSpec", true, "An object that describes the pod that will be created."),
            ("updateStrategy", "Object", false, "An update strategy to replace existing DaemonSet pods with new pods."),
        ],
    ),
    (
        "Job",
        "Job represents the configuration of a single job.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "JobSpec", false, "Specification of the desired behavior of a job."),
            ("status", "Object", false, "Current status of a job."),
        ],
    ),
    (
        "CronJob",
        "CronJob represents the configuration of a single cron job.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "CronJobSpec",
                false,
                "Specification of the desired behavior of a cron job, including the schedule. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
            ),
            (
                "status",
                "Object",
                false,
                "Current status of a cron job. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
            ),
        ],
    ),
    (
        "CronJobSpec",
        "CronJobSpec describes how the job execution will look like and when it will actually run.",
        &[
            (
                "concurrencyPolicy",
                "string",
                false,
                "Specifies how to treat concurrent executions of a Job. Valid values are:\n\n- \"Allow\" (default): allows CronJobs to run concurrently; - \"Forbid\": forbids concurrent runs, skipping next run if previous run hasn't finished yet; - \"Replace\": cancels currently running job and replaces it with a new one",
            ),
            (
                "failedJobsHistoryLimit",
                "integer",
                false,
                "The number of failed finished jobs to retain. Value must be non-negative integer. Defaults to 1.",
            ),
            (
                "jobTemplate",
                "JobTemplateSpec",
                true,
                "Specifies the job that will be created when executing a CronJob.",
            ),
            ("schedule", "string", true, "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
            (
                "startingDeadlineSeconds",
                "integer",
                false,
                "Optional deadline in seconds for starting the job if it misses scheduled time for any reason.  Missed jobs executions will be counted as failed ones.",
            ),
            (
                "successfulJobsHistoryLimit",
                "integer",
                false,
                "The number of successful finished jobs to retain. Value must be non-negative integer. Defaults to 3.",
            ),
            (
                "suspend",
                "boolean",
                false,
                "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
            ),
            (
                "timeZone",
                "string",
                false,
                "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process.",
            ),
        ],
    ),
    (
        "JobTemplateSpec",
        "JobTemplateSpec describes the data a Job should have when created from a template",
        &[
            (
                "metadata",
                "ObjectMeta",
                false,
                "Standard object's metadata of the jobs created from this template. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
            ),
            (
                "spec",
                "JobSpec",
                false,
                "Specification of the desired behavior of the job. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
            ),
        ],
    ),
    (
        "JobSpec",
        "JobSpec describes how the job execution will look like.",
        &[
            (
                "activeDeadlineSeconds",
                "integer",
                false,
                "Specifies the duration in seconds relative to the startTime that the job may be continuously active before the system tries to terminate it.",
            ),
            (
                "backoffLimit",
                "integer",
                false,
                "Specifies the number of retries before marking this job failed. Defaults to 6.",
            ),
            (
                "completions",
                "integer",
                false,
                "Specifies the desired number of successfully finished pods the job should be run with.",
            ),
            (
                "parallelism",
                "integer",
                false,
                "Specifies the maximum desired number of pods the job should run at any given time.",
            ),
            (
                "template",
                "PodTemplateSpec",
                true,
                "Describes the pod that will be created when executing a job. The only allowed template.spec.restartPolicy values are \"Never\" or \"OnFailure\".",
            ),
        ],
    ),
    (
        "Service",
        "Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "ServiceSpec", false, "Spec defines the behavior of a service."),
            (
                "status",
                "Object",
                false,
                "Most recently observed status of the service. Populated by the system. Read-only.",
            ),
        ],
    ),
    (
        "ServiceSpec",
        "ServiceSpec describes the attributes that a user creates on a service.",
        &[
            (
                "clusterIP",
                "string",
                false,
                "clusterIP is the IP address of the service and is usually assigned randomly.",
            ),
            ("ports", "[]ServicePort", false, "The list of ports that are exposed by this service."),
            (
                "selector",
                "map[string]string",
                false,
                "Route service traffic to pods with label keys and values matching this selector.",
            ),
            (
                "type",
                "string",
                false,
                "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer.",
            ),
        ],
    ),
    (
        "ServicePort",
        "ServicePort contains information on service's port.",
        &[
            ("name", "string", false, "The name of this port within the service. This must be a DNS_LABEL."),
            (
                "nodePort",
                "integer",
                false,
                "The port on each node on which this service is exposed when type is NodePort or LoadBalancer.",
            ),
            ("port", "integer", true, "The port that will be exposed by this service."),
            (
                "protocol",
                "string",
                false,
                "The IP protocol for this port. Supports \"TCP\", \"UDP\", and \"SCTP\". Default is TCP.",
            ),
            (
                "targetPort",
                "IntOrString",
                false,
                "Number or name of the port to access on the pods targeted by the service.",
            ),
        ],
    ),
    (
        "Node",
        "Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache (i.e. in etcd).",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "NodeSpec", false, "Spec defines the behavior of a node."),
            (
                "status",
                "Object",
                false,
                "Most recently observed status of the node. Populated by the system. Read-only.",
            ),
        ],
    ),
    (
        "NodeSpec",
        "NodeSpec describes the attributes that a node is created with.",
        &[
            ("podCIDR", "string", false, "PodCIDR represents the pod IP range assigned to the node."),
            ("taints", "[]Taint", false, "If specified, the node's taints."),
            (
                "unschedulable",
                "boolean",
                false,
                "Unschedulable controls node schedulability of new pods. By default, node is schedulable.",
            ),
        ],
    ),
    (
        "Taint",
        "The node this Taint is attached to has the \"effect\" on any pod that does not tolerate the Taint.",
        &[
            (
                "effect",
                "string",
                true,
                "Required. The effect of the taint on pods that do not tolerate the taint. Valid effects are NoSchedule, PreferNoSchedule and NoExecute.",
            ),
            ("key", "string", true, "Required. The taint key to be applied to a node."),
            ("value", "string", false, "The taint value corresponding to the taint key."),
        ],
    ),
    (
        "Namespace",
        "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "Object", false, "Spec defines the behavior of the Namespace."),
            ("status", "Object", false, "Status describes the current status of a Namespace."),
        ],
    ),
    (
        "ConfigMap",
        "ConfigMap holds configuration data for pods to consume.",
        &[
            API_VERSION,
            (
                "data",
                "map[string]string",
                false,
                "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'.",
            ),
            KIND,
            METADATA,
        ],
    ),
    (
        "Secret",
        "Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.",
        &[
            API_VERSION,
            (
                "data",
                "map[string]string",
                false,
                "Data contains the secret data. The serialized form of the secret data is a base64 encoded string.",
            ),
            KIND,
            METADATA,
            ("type", "string", false, "Used to facilitate programmatic handling of secret data."),
        ],
    ),
    (
        "Event",
        "Event is a report of an event somewhere in the cluster.",
        &[
            ("action", "string", false, "What action was taken/failed regarding to the Regarding object."),
            API_VERSION,
            ("count", "integer", false, "The number of times this event has occurred."),
            (
                "firstTimestamp",
                "string",
                false,
                "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
            ),
            ("involvedObject", "ObjectReference", true, "The object that this event is about."),
            KIND,
            (
                "lastTimestamp",
                "string",
                false,
                "The time at which the most recent occurrence of this event was recorded.",
            ),
            ("message", "string", false, "A human-readable description of the status of this operation."),
            METADATA,
            (
                "reason",
                "string",
                false,
                "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
            ),
            (
                "source",
                "EventSource",
                false,
                "The component reporting this event. Should be a short machine understandable string.",
            ),
            ("type", "string", false, "Type of this event (Normal, Warning), new types could be added in the future"),
        ],
    ),
    (
        "ServiceAccount",
        "ServiceAccount binds together: * a name, understood by users, and perhaps by peripheral systems, for an identity * a principal that can be authenticated and authorized * a set of secrets",
        &[
            API_VERSION,
            (
                "automountServiceAccountToken",
                "boolean",
                false,
                "AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted.",
            ),
            KIND,
            METADATA,
        ],
    ),
    (
        "ResourceQuota",
        "ResourceQuota sets aggregate quota restrictions enforced per namespace",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "ResourceQuotaSpec",
                false,
                "Spec defines the desired quota. https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
            ),
            (
                "status",
                "ResourceQuotaStatus",
                false,
                "Status defines the actual enforced quota and its current usage. https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
            ),
        ],
    ),
    (
        "ResourceQuotaSpec",
        "ResourceQuotaSpec defines the desired hard limits to enforce for Quota.",
        &[
            (
                "hard",
                "map[string]Quantity",
                false,
                "hard is the set of desired hard limits for each named resource. More info: https://kubernetes.io/docs/concepts/policy/resource-quotas/",
            ),
            (
                "scopeSelector",
                "Object",
                false,
                "scopeSelector is also a collection of filters like scopes that must match each object tracked by a quota but expressed using ScopeSelectorOperator in combination with possible values. For a resource to match, both scopes AND scopeSelector (if specified in spec), must be matched.",
            ),
            (
                "scopes",
                "[]string",
                false,
                "A collection of filters that must match each object tracked by a quota. If not specified, the quota matches all objects.",
            ),
        ],
    ),
    (
        "ResourceQuotaStatus",
        "ResourceQuotaStatus defines the enforced hard limits and observed use.",
        &[
            (
                "hard",
                "map[string]Quantity",
                false,
                "Hard is the set of enforced hard limits for each named resource. More info: https://kubernetes.io/docs/concepts/policy/resource-quotas/",
            ),
            (
                "used",
                "map[string]Quantity",
                false,
                "Used is the current observed total usage of the resource in the namespace.",
            ),
        ],
    ),
    (
        "LimitRange",
        "LimitRange sets resource usage limits for each kind of resource in a Namespace.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "LimitRangeSpec",
                false,
                "Spec defines the limits enforced. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
            ),
        ],
    ),
    (
        "LimitRangeSpec",
        "LimitRangeSpec defines a min/max usage limit for resources that match on kind.",
        &[("limits", "[]LimitRangeItem", true, "Limits is the list of LimitRangeItem objects that are enforced.")],
    ),
    (
        "LimitRangeItem",
        "LimitRangeItem defines a min/max usage limit for any resource that matches on kind.",
        &[
            (
                "default",
                "map[string]Quantity",
                false,
                "Default resource requirement limit value by resource name if resource limit is omitted.",
            ),
            (
                "defaultRequest",
                "map[string]Quantity",
                false,
                "DefaultRequest is the default resource requirement request value by resource name if resource request is omitted.",
            ),
            ("max", "map[string]Quantity", false, "Max usage constraints on this kind by resource name."),
            (
                "maxLimitRequestRatio",
                "map[string]Quantity",
                false,
                "MaxLimitRequestRatio if specified, the named resource must have a request and limit that are both non-zero where limit divided by request is less than or equal to the enumerated value; this represents the max burst for the named resource.",
            ),
            ("min", "map[string]Quantity", false, "Min usage constraints on this kind by resource name."),
            ("type", "string", true, "Type of resource that this limit applies to."),
        ],
    ),
    (
        "Role",
        "Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("rules", "[]PolicyRule", false, "Rules holds all the PolicyRules for this Role"),
        ],
    ),
    (
        "ClusterRole",
        "ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.",
        &[
            (
                "aggregationRule",
                "AggregationRule",
                false,
                "AggregationRule is an optional field that describes how to build the Rules for this ClusterRole. If AggregationRule is set, then the Rules are controller managed and direct changes to Rules will be stomped by the controller.",
            ),
            API_VERSION,
            KIND,
            METADATA,
            ("rules", "[]PolicyRule", false, "Rules holds all the PolicyRules for this ClusterRole"),
        ],
    ),
    (
        "RoleBinding",
        "RoleBinding references a role, but does not contain it.  It can reference a Role in the same namespace or a ClusterRole in the global namespace. It adds who information via Subjects and namespace information by which namespace it exists in.  RoleBindings in a given namespace only have effect in that namespace.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "roleRef",
                "RoleRef",
                true,
                "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.",
            ),
            ("subjects", "[]Subject", false, "Subjects holds references to the objects the role applies to."),
        ],
    ),
    (
        "ClusterRoleBinding",
        "ClusterRoleBinding references a ClusterRole, but not contain it.  It can reference a ClusterRole in the global namespace, and adds who information via Subject.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "roleRef",
                "RoleRef",
                true,
                "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.",
            ),
            ("subjects", "[]Subject", false, "Subjects holds references to the objects the role applies to."),
        ],
    ),
    (
        "PolicyRule",
        "PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.",
        &[
            (
                "apiGroups",
                "[]string",
                false,
                "APIGroups is the name of the APIGroup that contains the resources.  If multiple API groups are specified, any action requested against one of the enumerated resources in any API group will be allowed. \"\" represents the core API group and \"*\" represents all API groups.",
            ),
            (
                "nonResourceURLs",
                "[]string",
                false,
                "NonResourceURLs is a set of partial urls that a user should have access to.  *s are allowed, but only as the full, final step in the path Since non-resource URLs are not namespaced, this field is only applicable for ClusterRoles referenced from a ClusterRoleBinding. Rules can either apply to API resources (such as \"pods\" or \"secrets\") or non-resource URL paths (such as \"/api\"),  but not both.",
            ),
            (
                "resourceNames",
                "[]string",
                false,
                "ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.",
            ),
            (
                "resources",
                "[]string",
                false,
                "Resources is a list of resources this rule applies to. '*' represents all resources.",
            ),
            (
                "verbs",
                "[]string",
                true,
                "Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule. '*' represents all verbs.",
            ),
        ],
    ),
    (
        "RoleRef",
        "RoleRef contains information that points to the role being used",
        &[
            ("apiGroup", "string", true, "APIGroup is the group for the resource being referenced"),
            ("kind", "string", true, "Kind is the type of resource being referenced"),
            ("name", "string", true, "Name is the name of resource being referenced"),
        ],
    ),
    (
        "Subject",
        "Subject contains a reference to the object or user identities a role binding applies to.  This can either hold a direct API object reference, or a value for non-objects such as user and group names.",
        &[
            (
                "apiGroup",
                "string",
                false,
                "APIGroup holds the API group of the referenced subject. Defaults to \"\" for ServiceAccount subjects. Defaults to \"rbac.authorization.k8s.io\" for User and Group subjects.",
            ),
            (
                "kind",
                "string",
                true,
                "Kind of object being referenced. Values defined by this API group are \"User\", \"Group\", and \"ServiceAccount\". If the Authorizer does not recognized the kind value, the Authorizer should report an error.",
            ),
            ("name", "string", true, "Name of the object being referenced."),
            (
                "namespace",
                "string",
                false,
                "Namespace of the referenced object.  If the object kind is non-namespace, such as \"User\" or \"Group\", and this value is not empty the Authorizer should report an error.",
            ),
        ],
    ),
    (
        "Endpoints",
        "Endpoints is a collection of endpoints that implement the actual service. Deprecated: This API is deprecated in v1.33+. Use discoveryv1.EndpointSlice.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("subsets", "[]EndpointSubset", false, "The set of all endpoints is the union of all subsets."),
        ],
    ),
    (
        "EndpointSlice",
        "EndpointSlice represents a set of service endpoints.",
        &[
            ("addressType", "string", true, "addressType specifies the type of address carried by this EndpointSlice."),
            API_VERSION,
            ("endpoints", "[]Endpoint", true, "endpoints is a list of unique endpoints in this slice."),
            KIND,
            METADATA,
            (
                "ports",
                "[]EndpointPort",
                false,
                "ports specifies the list of network ports exposed by each endpoint in this slice.",
            ),
        ],
    ),
    (
        "ComponentStatus",
        "ComponentStatus (and ComponentStatusList) holds the cluster validation info. Deprecated: This API is deprecated in v1.19+",
        &[
            API_VERSION,
            ("conditions", "[]ComponentCondition", false, "List of component conditions observed"),
            KIND,
            METADATA,
        ],
    ),
    (
        "SelfSubjectAccessReview",
        "A question the requesting user asks the authorizer about itself: may I do this action? The answer is filled into status; nothing is stored.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "SelfSubjectAccessReviewSpec",
                true,
                "The action asked about: resource attributes or a non-resource URL, exactly one.",
            ),
            (
                "status",
                "SubjectAccessReviewStatus",
                false,
                "The authorizer's answer: whether the action is allowed, and why.",
            ),
        ],
    ),
    (
        "SelfSubjectRulesReview",
        "A question the requesting user asks the authorizer about itself: what may I do in this namespace? The answer (a possibly incomplete list of rules) is filled into status; nothing is stored.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "SelfSubjectRulesReviewSpec", true, "The namespace asked about."),
            ("status", "SubjectRulesReviewStatus", false, "The rules the user holds there, resource and non-resource."),
        ],
    ),
    (
        "Lease",
        "Lease defines a lease concept.",
        &[API_VERSION, KIND, METADATA, ("spec", "LeaseSpec", false, "spec contains the specification of the Lease.")],
    ),
    (
        "LeaseSpec",
        "LeaseSpec is a specification of a Lease.",
        &[
            (
                "holderIdentity",
                "string",
                false,
                "holderIdentity contains the identity of the holder of a current lease.",
            ),
            (
                "leaseDurationSeconds",
                "integer",
                false,
                "leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it.",
            ),
            (
                "renewTime",
                "string",
                false,
                "renewTime is a time when the current holder of a lease has last updated the lease.",
            ),
        ],
    ),
    (
        "PodDisruptionBudget",
        "How many of the pods a selector picks voluntary disruptions (evictions, drains) may take down at once.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "PodDisruptionBudgetSpec", false, "The pods covered and how many of them must stay available."),
            ("status", "PodDisruptionBudgetStatus", false, "The controller's latest count of the covered pods."),
        ],
    ),
    (
        "PodDisruptionBudgetSpec",
        "The pods a budget covers and the bound on their disruption; set minAvailable or maxUnavailable, not both.",
        &[
            (
                "maxUnavailable",
                "IntOrString",
                false,
                "How many of the pods, or what percentage of their controllers' scale, may be unavailable after an eviction.",
            ),
            (
                "minAvailable",
                "IntOrString",
                false,
                "How many of the pods, or what percentage, must stay available after an eviction.",
            ),
            ("selector", "LabelSelector", false, "The pods the budget covers; an empty selector covers none."),
            (
                "unhealthyPodEvictionPolicy",
                "string",
                false,
                "When pods that are not Ready may be evicted: IfHealthyBudget (the default) or AlwaysAllow.",
            ),
        ],
    ),
    (
        "PodDisruptionBudgetStatus",
        "The disruption controller's count of a budget's pods.",
        &[
            ("conditions", "[]Condition", false, "DisruptionAllowed, true while an eviction may proceed."),
            ("currentHealthy", "integer", true, "Pods covered that are Ready now."),
            ("desiredHealthy", "integer", true, "Pods that must stay Ready."),
            (
                "disruptedPods",
                "map[string]string",
                false,
                "Pods an eviction has let go that the controller has not yet seen deleted, with when.",
            ),
            ("disruptionsAllowed", "integer", true, "Evictions allowed now."),
            ("expectedPods", "integer", true, "Pods the budget expects to cover."),
            ("observedGeneration", "integer", false, "The generation of the budget this count is of."),
        ],
    ),
    (
        "PriorityClass",
        "A named priority value: pods that name the class get its value as their priority, which orders the scheduling queue and decides preemption.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("description", "string", false, "What the class is meant for."),
            (
                "globalDefault",
                "boolean",
                false,
                "Whether pods that name no class get this one; at most one class may be the default.",
            ),
            (
                "preemptionPolicy",
                "string",
                false,
                "Never, or PreemptLowerPriority (the default): whether its pods may preempt lower-priority pods.",
            ),
            (
                "value",
                "integer",
                true,
                "The priority its pods get; higher runs first. User classes go up to one billion.",
            ),
        ],
    ),
    (
        "ReplicationController",
        "Keeps a number of copies of a pod running, as a ReplicaSet does, with a selector that only matches labels exactly. New workloads use a Deployment.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "ReplicationControllerSpec",
                false,
                "How many pods, which ones, and the template new ones are made from.",
            ),
            ("status", "Object", false, "How many pods the controller counted at its last look."),
        ],
    ),
    (
        "ReplicationControllerSpec",
        "What a ReplicationController keeps running.",
        &[
            ("minReadySeconds", "integer", false, "How long a new pod must be Ready before it counts as available."),
            ("replicas", "integer", false, "How many pods to keep; 1 when left out."),
            ("selector", "map[string]string", false, "The labels its pods carry; the template's labels when left out."),
            ("template", "PodTemplateSpec", false, "The pod new replicas are made from."),
        ],
    ),
];

/// Kinds without a detailed schema here get the common fields.
const GENERIC: &[Field] = &[API_VERSION, KIND, METADATA];

fn type_info(name: &str) -> Option<(&'static str, &'static [Field])> {
    TYPES
        .iter()
        .chain(super::explain_storage::TYPES)
        .chain(super::explain_network_policy::TYPES)
        .chain(super::explain_admission::TYPES)
        .chain(super::explain_webhooks::TYPES)
        .chain(super::explain_autoscaling::TYPES)
        .chain(super::explain_networking::TYPES)
        .chain(super::explain_custom::CRD_TYPES)
        .find(|(n, _, _)| *n == name)
        .map(|(_, d, f)| (*d, *f))
}

/// The object type a field's type names (`[]Container` -> `Container`).
fn element(ty: &str) -> &str {
    ty.trim_start_matches("[]")
}

/// Wraps text at 80 columns with the given indent, as kubectl's plaintext template does.
pub(super) fn wrap(text: &str, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > 80 {
            out.push_str(&format!("{pad}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("{pad}{line}\n"));
    }
}

fn field_line(f: &Field) -> String {
    format!("{}\t<{}>{}", f.0, f.1, if f.2 { " -required-" } else { "" })
}

fn fields_recursive(fields: &[Field], depth: usize, out: &mut String, seen: &mut Vec<&'static str>) {
    for f in fields {
        out.push_str(&format!("{}{}\n", "  ".repeat(depth), field_line(f)));
        let ty = element(f.1);
        if let Some((_, sub)) = type_info(ty).filter(|_| !seen.contains(&ty) && depth < 8) {
            seen.push(ty);
            fields_recursive(sub, depth + 1, out, seen);
            seen.pop();
        }
    }
}

/// `kubectl explain`.
pub fn run(args: &Args) -> Output {
    let Some(target) = args.positionals.first() else {
        return Output::err(
            "error: You must specify the type of resource to explain. Use \"kubectl api-resources\" for a complete list of supported resources.\n",
        );
    };
    let mut parts = target.split('.');
    let resource = parts.next().unwrap_or("");
    let Some(kind) = Kind::from_resource_arg(resource) else {
        return Output::err(format!("error: the server doesn't have a resource type \"{resource}\""));
    };
    if let Kind::Custom(custom) = kind {
        return super::explain_custom::run(custom, parts, args.has("recursive"));
    }
    let info = kind.info();
    let (mut description, mut fields) = type_info(info.kind).unwrap_or(("", GENERIC));
    let mut field: Option<&Field> = None;
    for name in parts {
        let Some(f) = fields.iter().find(|f| f.0 == name) else {
            return Output::err(format!("error: field \"{name}\" does not exist"));
        };
        field = Some(f);
        match type_info(element(f.1)) {
            Some((d, sub)) => {
                description = d;
                fields = sub;
            }
            None => {
                description = "";
                fields = &[];
            }
        }
    }
    let mut out = format!("KIND:       {}\nVERSION:    {}\n\n", info.kind, kind.api_version());
    if let Some(f) = field {
        out.push_str(&format!("FIELD: {} <{}>{}\n\n", f.0, f.1, if f.2 { " -required-" } else { "" }));
    }
    out.push_str("DESCRIPTION:\n");
    if let Some(f) = field {
        wrap(f.3, 4, &mut out);
    }
    if !description.is_empty() {
        wrap(description, 4, &mut out);
    }
    out.push_str("    \n");
    if !fields.is_empty() {
        out.push_str("FIELDS:\n");
        if args.has("recursive") {
            fields_recursive(fields, 1, &mut out, &mut Vec::new());
        } else {
            for f in fields {
                out.push_str(&format!("  {}\n", field_line(f)));
                wrap(f.3, 4, &mut out);
                out.push('\n');
            }
        }
        out.push('\n');
    }
    Output::ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_object_type_resolves() {
        for (_, _, fields) in TYPES {
            for f in *fields {
                let ty = element(f.1);
                let known = ty.chars().next().is_some_and(|c| c.is_lowercase())
                    || ty.starts_with("map[")
                    || type_info(ty).is_some()
                    || matches!(
                        ty,
                        "Object"
                            | "AggregationRule"
                            | "IntOrString"
                            | "Affinity"
                            | "Volume"
                            | "TopologySpreadConstraint"
                            | "ExecAction"
                            | "HTTPGetAction"
                            | "TCPSocketAction"
                            | "PodCondition"
                            | "ContainerStatus"
                            | "OwnerReference"
                            | "DeploymentCondition"
                            | "LabelSelectorRequirement"
                            | "ObjectReference"
                            | "EventSource"
                            | "EndpointSubset"
                            | "Endpoint"
                            | "EndpointPort"
                            | "ComponentCondition"
                            | "Condition"
                            | "SelfSubjectAccessReviewSpec"
                            | "SubjectAccessReviewStatus"
                            | "SelfSubjectRulesReviewSpec"
                            | "SubjectRulesReviewStatus"
                    );
                assert!(known, "{} has unknown type {ty}", f.0);
            }
        }
    }

    #[test]
    fn every_served_kind_has_a_schema() {
        for kind in Kind::ALL {
            assert!(type_info(kind.info().kind).is_some(), "{kind:?}");
        }
    }

    #[test]
    fn descriptions_wrap_at_eighty_columns() {
        let mut out = String::new();
        wrap(&"word ".repeat(40), 4, &mut out);
        assert!(out.lines().all(|l| l.len() <= 80 && l.starts_with("    word")));
    }
}
