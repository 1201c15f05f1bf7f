//! `kubectl explain` schemas of Ingress and IngressClass (networking.k8s.io/v1).

use super::explain::{API_VERSION, Field, KIND, METADATA};

pub(super) const TYPES: &[(&str, &str, &[Field])] = &[
    (
        "Ingress",
        "Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a backend. An Ingress can be configured to give services externally-reachable urls, load balance traffic, terminate SSL, offer name based virtual hosting etc.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "IngressSpec", false, "spec is the desired state of the Ingress."),
            ("status", "IngressStatus", false, "status is the current state of the Ingress."),
        ],
    ),
    (
        "IngressSpec",
        "IngressSpec describes the Ingress the user wishes to exist.",
        &[
            (
                "defaultBackend",
                "Object",
                false,
                "defaultBackend is the backend that should handle requests that don't match any rule.",
            ),
            ("ingressClassName", "string", false, "ingressClassName is the name of an IngressClass cluster resource."),
            ("rules", "[]Object", false, "rules is a list of host rules used to configure the Ingress."),
            ("tls", "[]Object", false, "tls represents the TLS configuration."),
        ],
    ),
    (
        "IngressStatus",
        "IngressStatus describe the current state of the Ingress.",
        &[("loadBalancer", "Object", false, "loadBalancer contains the current status of the load-balancer.")],
    ),
    (
        "IngressClass",
        "IngressClass represents the class of the Ingress, referenced by the Ingress Spec. The `ingressclass.kubernetes.io/is-default-class` annotation can be used to indicate that an IngressClass should be considered default.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "IngressClassSpec", false, "spec is the desired state of the IngressClass."),
        ],
    ),
    (
        "IngressClassSpec",
        "IngressClassSpec provides information about the class of an Ingress.",
        &[
            (
                "controller",
                "string",
                false,
                "controller refers to the name of the controller that should handle this class.",
            ),
            (
                "parameters",
                "Object",
                false,
                "parameters is a link to a custom resource containing additional configuration for the controller.",
            ),
        ],
    ),
];
