//! `kubectl explain` schemas of the autoscaling and aggregation kinds: HorizontalPodAutoscaler
//! (autoscaling/v2), APIService, and the Metrics API's NodeMetrics and PodMetrics.

use super::explain::{API_VERSION, Field, KIND, METADATA};

pub(super) const TYPES: &[(&str, &str, &[Field])] = &[
    (
        "HorizontalPodAutoscaler",
        "A HorizontalPodAutoscaler keeps the replica count of a workload with a scale subresource between a minimum and a maximum, so that the metrics it names stay near their targets.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "HorizontalPodAutoscalerSpec",
                false,
                "What to scale, within which bounds, on which metrics and how fast.",
            ),
            ("status", "HorizontalPodAutoscalerStatus", false, "What the autoscaler last observed and decided."),
        ],
    ),
    (
        "HorizontalPodAutoscalerSpec",
        "The autoscaler's target, bounds, metrics and behaviour.",
        &[
            (
                "behavior",
                "Object",
                false,
                "How fast to scale up and down: each direction's stabilization window, policies and how to pick among them. Unset: scale up by 4 pods or 100% every 15 seconds, whichever is more, and down to the highest recommendation of the last 300 seconds.",
            ),
            ("maxReplicas", "integer", true, "The most replicas the autoscaler may set; at least minReplicas."),
            (
                "metrics",
                "[]Object",
                false,
                "The metrics to follow; the replica count is the highest any of them asks for. Unset: 80% average CPU utilization.",
            ),
            ("minReplicas", "integer", false, "The fewest replicas the autoscaler may set. Defaults to 1."),
            (
                "scaleTargetRef",
                "Object",
                true,
                "The workload to scale (apiVersion, kind and name): a Deployment, ReplicaSet or StatefulSet.",
            ),
        ],
    ),
    (
        "HorizontalPodAutoscalerStatus",
        "What the autoscaler last observed and decided.",
        &[
            (
                "conditions",
                "[]Object",
                false,
                "AbleToScale, ScalingActive and ScalingLimited, each with its reason and message.",
            ),
            ("currentMetrics", "[]Object", false, "The value of each metric at the last sync."),
            ("currentReplicas", "integer", true, "The target's replica count at the last sync."),
            ("desiredReplicas", "integer", true, "The replica count the autoscaler wanted at the last sync."),
            ("lastScaleTime", "string", false, "When the autoscaler last changed the replica count."),
            ("observedGeneration", "integer", false, "The generation of the spec the status is for."),
        ],
    ),
    (
        "APIService",
        "An APIService registers a group and version with the API server's aggregation layer, which proxies its requests to the Service named in it.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "APIServiceSpec", false, "The group and version served, and by which Service."),
            ("status", "Object", false, "Its conditions: Available, with the reason it is or is not."),
        ],
    ),
    (
        "APIServiceSpec",
        "Which group and version an APIService registers, and where its requests go.",
        &[
            ("caBundle", "string", false, "The certificate authority that signed the serving certificate."),
            ("group", "string", false, "The API group served."),
            ("groupPriorityMinimum", "integer", true, "The group's priority among groups in discovery; higher first."),
            ("insecureSkipTLSVerify", "boolean", false, "Do not check the serving certificate."),
            (
                "service",
                "Object",
                false,
                "The Service (namespace, name, port) that serves the group; unset when the API server serves it itself.",
            ),
            ("version", "string", false, "The API version served."),
            ("versionPriority", "integer", true, "The version's priority within its group."),
        ],
    ),
    (
        "NodeMetrics",
        "A node's CPU and memory usage, as metrics-server last measured it from the node's kubelet. Not stored: served by metrics-server through the aggregation layer.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("timestamp", "string", true, "When the usage was measured (the end of the window)."),
            ("usage", "map[string]Quantity", true, "cpu and memory used."),
            ("window", "string", true, "The interval the usage was measured over."),
        ],
    ),
    (
        "PodMetrics",
        "A pod's containers' CPU and memory usage, as metrics-server last measured it. Not stored: served by metrics-server through the aggregation layer.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("containers", "[]Object", true, "Each container's name and usage."),
            ("timestamp", "string", true, "When the usage was measured (the end of the window)."),
            ("window", "string", true, "The interval the usage was measured over."),
        ],
    ),
];
