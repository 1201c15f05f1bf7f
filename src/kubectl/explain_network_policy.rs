//! `kubectl explain` schemas of NetworkPolicy and its parts (rules, peers, ports, IP blocks),
//! in our own words.

use super::explain::{API_VERSION, Field, KIND, METADATA};

pub(super) const TYPES: &[(&str, &str, &[Field])] = &[
    (
        "NetworkPolicy",
        "Which pods of a namespace accept or send only the traffic listed. The network plugin enforces it; on a plugin without policy support it does nothing.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "NetworkPolicySpec", false, "The pods it selects and the traffic they may still have."),
        ],
    ),
    (
        "NetworkPolicySpec",
        "The pods a policy selects, the directions it isolates them in, and the traffic its rules allow.",
        &[
            (
                "egress",
                "[]NetworkPolicyEgressRule",
                false,
                "Connections the selected pods may open. An empty list with Egress among the types allows none.",
            ),
            (
                "ingress",
                "[]NetworkPolicyIngressRule",
                false,
                "Connections the selected pods may accept. An empty list allows none.",
            ),
            (
                "podSelector",
                "LabelSelector",
                false,
                "The pods of the policy's namespace it applies to; empty selects them all.",
            ),
            (
                "policyTypes",
                "[]string",
                false,
                "Ingress, Egress or both: the directions the selected pods are isolated in. Left out: Ingress, and Egress when there are egress rules.",
            ),
        ],
    ),
    (
        "NetworkPolicyIngressRule",
        "Traffic allowed in: from any of the peers, to any of the ports. An empty list means any.",
        &[
            ("from", "[]NetworkPolicyPeer", false, "Where the connection may come from; empty or absent: anywhere."),
            ("ports", "[]NetworkPolicyPort", false, "Which ports of the selected pods; empty or absent: all."),
        ],
    ),
    (
        "NetworkPolicyEgressRule",
        "Traffic allowed out: to any of the peers, on any of the ports. An empty list means any.",
        &[
            ("ports", "[]NetworkPolicyPort", false, "Which destination ports; empty or absent: all."),
            ("to", "[]NetworkPolicyPeer", false, "Where the connection may go; empty or absent: anywhere."),
        ],
    ),
    (
        "NetworkPolicyPeer",
        "Pods chosen by labels (in the policy's namespace, or in the namespaces a namespaceSelector picks), or an IP block on its own.",
        &[
            ("ipBlock", "IPBlock", false, "A range of addresses; not together with a selector."),
            ("namespaceSelector", "LabelSelector", false, "Namespaces by their labels; empty selects all of them."),
            (
                "podSelector",
                "LabelSelector",
                false,
                "Pods by their labels; with a namespaceSelector, in those namespaces.",
            ),
        ],
    ),
    (
        "NetworkPolicyPort",
        "A port, or a range from port to endPort, of a protocol.",
        &[
            ("endPort", "integer", false, "The last port of a range that starts at port (a number)."),
            (
                "port",
                "IntOrString",
                false,
                "A number, or the name of a container port of the pod at the far end; absent: every port.",
            ),
            ("protocol", "string", false, "TCP (the default), UDP or SCTP."),
        ],
    ),
    (
        "IPBlock",
        "A CIDR, less the CIDRs listed under except.",
        &[
            ("cidr", "string", true, "The range, such as 10.0.0.0/16."),
            ("except", "[]string", false, "Ranges inside cidr to leave out."),
        ],
    ),
];
