//! The cluster's CNI plugin, Calico-like: on each node a `calico-node` agent (felix, in
//! Calico's words) watches NetworkPolicies, Pods and Namespaces through its own informers and
//! programs its node's rules for the pods the node hosts ([`rules`]). Connections on the pod
//! network are checked against those rules ([`check`]): the sender's node for the sender's
//! egress, the receiver's node for the receiver's ingress. A dropped connection is not
//! refused: the client waits until it gives up.
//!
//! What the agents enforce is what they have seen: a policy applies once a node's agent has
//! synced it, and a stopped agent leaves its last rules in place.
//!
//! One liberty with felix: an agent watches Pods and Namespaces only while some
//! NetworkPolicy exists (its policy watch is always open). With no policy there is nothing to
//! program, and a thousand-node cluster's pods are not sent to a thousand agents for nothing.

pub mod rules;

use crate::api::{Kind, Object};
use crate::client::component::{Component, Ctx, Informer};
use crate::sim::Time;
use rules::Endpoint;
use std::any::Any;
use std::collections::BTreeMap;

/// Who the agents are to the API server: their pods' service account.
pub const USER: &str = "system:serviceaccount:kube-system:calico-node";
/// The agent's name in the record and its events.
pub const NAME: &str = "calico-node";

pub struct CalicoNode {
    node: String,
    policies: Informer,
    pods: Informer,
    namespaces: Informer,
    /// What is programmed for this node's pods, by pod address.
    endpoints: BTreeMap<String, Endpoint>,
    /// Whether the Pod and Namespace watches are open (while any policy exists).
    watching: bool,
    dirty: bool,
}

impl CalicoNode {
    pub fn new(node: &str) -> Self {
        CalicoNode {
            node: node.to_string(),
            policies: Informer::new(Kind::NetworkPolicy),
            pods: Informer::new(Kind::Pod),
            namespaces: Informer::new(Kind::Namespace),
            endpoints: BTreeMap::new(),
            watching: false,
            dirty: true,
        }
    }

    pub fn node_name(&self) -> &str {
        &self.node
    }

    /// The node's pods as programmed, in address order (none while no policy exists).
    pub fn endpoints(&self) -> impl Iterator<Item = &Endpoint> {
        self.endpoints.values()
    }

    /// The pod at `ip`, if this node hosts it.
    pub fn endpoint(&self, ip: &str) -> Option<&Endpoint> {
        self.endpoints.get(ip)
    }

    /// How many policies the agent has seen.
    pub fn policy_count(&self) -> usize {
        self.policies.cache.len()
    }

    fn program(&mut self, ctx: &mut Ctx) {
        if self.policies.cache.is_empty() {
            // No policy, no isolation: nothing to program, whatever the pods.
            for e in self.endpoints.values().filter(|e| e.ingress.is_some() || e.egress.is_some()) {
                let open = Endpoint { ingress: None, egress: None, ..e.clone() };
                ctx.decide(|| rules::summary(&open));
            }
            self.endpoints.clear();
            return;
        }
        let of = |i: &Informer| i.cache.values().cloned().collect::<Vec<_>>();
        let (policies, pods, namespaces) = (of(&self.policies), of(&self.pods), of(&self.namespaces));
        let policies: Vec<_> = policies
            .iter()
            .filter_map(|o| if let Object::NetworkPolicy(p) = &**o { Some(&**p) } else { None })
            .collect();
        let pods: Vec<_> = pods.iter().filter_map(|o| o.as_pod()).collect();
        let namespaces: Vec<_> =
            namespaces.iter().filter_map(|o| if let Object::Namespace(n) = &**o { Some(n) } else { None }).collect();
        let endpoints = rules::compile(&self.node, &policies, &pods, &namespaces);
        // The record hears of pods whose treatment changed, isolated now or before.
        for (ip, e) in &endpoints {
            let old = self.endpoints.get(ip);
            let isolated = e.ingress.is_some() || e.egress.is_some();
            let was = old.is_some_and(|o| o.ingress.is_some() || o.egress.is_some());
            if old != Some(e) && (isolated || was) {
                let text = rules::summary(e);
                ctx.decide(|| text);
            }
        }
        self.endpoints = endpoints;
    }
}

impl Component for CalicoNode {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        let _ = self.policies.start(ctx);
        if self.watching {
            let _ = self.pods.start(ctx);
            let _ = self.namespaces.start(ctx);
        }
        self.dirty = true;
        Some(ctx.now)
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        let mut changed = !self.policies.sync(ctx).is_empty();
        let wanted = !self.policies.cache.is_empty();
        if wanted && !self.watching {
            ctx.decide(|| "a NetworkPolicy exists: watching Pods and Namespaces".to_string());
            let _ = self.pods.start(ctx);
            let _ = self.namespaces.start(ctx);
            self.watching = true;
            changed = true;
        } else if !wanted && self.watching {
            ctx.decide(|| "no NetworkPolicy is left: no longer watching Pods and Namespaces".to_string());
            self.pods.stop(ctx);
            self.namespaces.stop(ctx);
            self.pods = Informer::new(Kind::Pod);
            self.namespaces = Informer::new(Kind::Namespace);
            self.watching = false;
            changed = true;
        }
        if self.watching {
            changed |= !self.pods.sync(ctx).is_empty() | !self.namespaces.sync(ctx).is_empty();
        }
        if changed || self.dirty {
            self.dirty = false;
            self.program(ctx);
        }
        None
    }

    fn busy(&self) -> bool {
        self.dirty
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn informers(&self) -> Vec<&Informer> {
        if self.watching { vec![&self.policies, &self.pods, &self.namespaces] } else { vec![&self.policies] }
    }

    fn lanes(&self) -> Vec<String> {
        self.endpoints.values().filter(|e| e.ingress.is_some() || e.egress.is_some()).map(rules::summary).collect()
    }
}

/// Where a connection comes from.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A pod on the pod network: its node and address.
    Pod { node: &'a str, ip: &'a str },
    /// A node itself (host network): its name and address.
    Node { name: &'a str, ip: &'a str },
}

/// Why a connection was dropped: the pod whose rules allow none of it, and which way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denied {
    Egress { pod: String },
    Ingress { pod: String },
}

/// Whether the agents' rules let a connection from `from` to `ip:port` (`protocol`) through:
/// the sender's egress on its node, then the receiver's ingress on its node. Traffic from a
/// pod's own node always reaches it (the kubelet's probes).
pub fn check(agents: &[&CalicoNode], from: Source, ip: &str, port: u16, protocol: &str) -> Result<(), Denied> {
    if let Source::Pod { node, ip: source } = from {
        let sender = agents.iter().find(|a| a.node == node).and_then(|a| a.endpoint(source));
        if let Some(e) = sender.filter(|e| !rules::passes(&e.egress, ip, ip, port, protocol)) {
            return Err(Denied::Egress { pod: e.pod.clone() });
        }
    }
    let (source_ip, local) = match from {
        Source::Pod { ip, .. } => (ip, None),
        Source::Node { name, ip } => (ip, Some(name)),
    };
    for agent in agents {
        let Some(e) = agent.endpoint(ip) else { continue };
        if local == Some(agent.node.as_str()) {
            return Ok(());
        }
        if !rules::passes(&e.ingress, source_ip, ip, port, protocol) {
            return Err(Denied::Ingress { pod: e.pod.clone() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
