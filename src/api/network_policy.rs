//! networking.k8s.io/v1 NetworkPolicy: which pods (`podSelector`, in the policy's namespace)
//! it isolates, for ingress, egress or both (`policyTypes`), and the traffic its rules still
//! allow — from or to peers chosen by pod and namespace labels or by IP block, on listed ports.
//! The API server only stores policies; the CNI plugin's agent on each node enforces them
//! (see [`crate::cni`]).

use super::IntOrString;
use super::meta::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NetworkPolicy {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: NetworkPolicySpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NetworkPolicySpec {
    /// The pods the policy applies to; empty selects every pod of the namespace.
    #[serde(default)]
    pub pod_selector: LabelSelector,
    /// `None` when the field is absent; `Some(vec![])` (`ingress: []`) allows nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<Vec<IngressRule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<Vec<EgressRule>>,
    /// `Ingress`, `Egress`; the API server fills it in when left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy_types: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressRule {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PolicyPort>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<Peer>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EgressRule {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PolicyPort>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<Peer>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyPort {
    /// `TCP` (the default, filled in by the API server), `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// A number, or the name of a container port of the pod at the far end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_port: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Peer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_block: Option<IpBlock>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IpBlock {
    pub cidr: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
}

impl NetworkPolicySpec {
    /// Whether the policy isolates the pods it selects for ingress and for egress, as its
    /// (defaulted) `policyTypes` say.
    pub fn isolates(&self) -> (bool, bool) {
        let has = |t: &str| self.policy_types.iter().any(|p| p == t);
        (has("Ingress"), has("Egress"))
    }
}

/// The API server's defaults: `policyTypes` from the rules present (Ingress always, Egress
/// when there are egress rules), and `TCP` for every port without a protocol.
pub fn default_policy(policy: &mut NetworkPolicy) {
    let spec = &mut policy.spec;
    if spec.policy_types.is_empty() {
        spec.policy_types.push("Ingress".into());
        if spec.egress.as_ref().is_some_and(|e| !e.is_empty()) {
            spec.policy_types.push("Egress".into());
        }
    }
    let ingress = spec.ingress.iter_mut().flatten().flat_map(|r| r.ports.iter_mut());
    let egress = spec.egress.iter_mut().flatten().flat_map(|r| r.ports.iter_mut());
    for port in ingress.chain(egress) {
        port.protocol.get_or_insert_with(|| "TCP".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(yaml: &str) -> NetworkPolicy {
        serde_json::from_value(crate::yaml::from_str(yaml).unwrap()).unwrap()
    }

    #[test]
    fn a_policy_without_types_isolates_ingress_and_egress_only_when_it_has_egress_rules() {
        let mut p = policy("spec:\n  podSelector: {}\n");
        default_policy(&mut p);
        assert_eq!(p.spec.isolates(), (true, false));
        let mut p = policy("spec:\n  podSelector: {}\n  egress:\n  - {}\n");
        default_policy(&mut p);
        assert_eq!(p.spec.policy_types, ["Ingress", "Egress"]);
        let mut p = policy("spec:\n  podSelector: {}\n  egress: []\n");
        default_policy(&mut p);
        assert_eq!(p.spec.isolates(), (true, false), "an empty egress list adds no type");
        let mut p = policy("spec:\n  podSelector: {}\n  policyTypes: [Egress]\n");
        default_policy(&mut p);
        assert_eq!(p.spec.isolates(), (false, true), "types given are kept");
    }

    #[test]
    fn ports_without_a_protocol_default_to_tcp() {
        let mut p = policy("spec:\n  ingress:\n  - ports:\n    - port: 80\n    - port: dns\n      protocol: UDP\n");
        default_policy(&mut p);
        let ports = &p.spec.ingress.as_ref().unwrap()[0].ports;
        assert_eq!(ports[0].protocol.as_deref(), Some("TCP"));
        assert_eq!(ports[1].protocol.as_deref(), Some("UDP"));
        assert_eq!(ports[1].port, Some(IntOrString::String("dns".into())));
    }
}
