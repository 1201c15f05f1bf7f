//! A pod's quality-of-service class, from its containers' requests and limits: the API server
//! sets it on create, the kubelet reports it, kubectl describes it.

use crate::api::{Container, Pod};

/// Guaranteed when every container's requests equal its limits for cpu and memory;
/// BestEffort when nothing is requested or limited; Burstable otherwise.
pub fn qos_class(pod: &Pod) -> &'static str {
    let containers: Vec<&Container> = pod.spec.containers.iter().map(|c| &**c).collect();
    let any = containers.iter().any(|c| !c.resources.requests.is_empty() || !c.resources.limits.is_empty());
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = c.resources.limits.get(*r);
            let request = c.resources.requests.get(*r).or(limit);
            limit.is_some() && request.map(|q| q.milli()) == limit.map(|q| q.milli())
        })
    });
    if guaranteed { "Guaranteed" } else { "Burstable" }
}
