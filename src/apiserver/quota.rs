//! The ResourceQuota admission plugin: what a namespace's quotas count, the refusal of a
//! create that would go over one (or of a pod that does not say what a quota must count), and
//! each quota's status (`hard`, `used`) kept current as objects come and go — in a cluster the
//! quota controller recalculates it; here the API server does so after each change it stores.

use crate::api::{Kind, Object, Pod, Quantity, ResourceQuota};
use crate::etcd::Etcd;
use std::collections::BTreeMap;

/// The compute resources a quota on which makes every container say its own.
const COMPUTE: &[&str] = &["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"];

/// The namespace's quotas, in name order.
pub fn quotas(etcd: &Etcd, namespace: &str) -> Vec<ResourceQuota> {
    super::namespace_objects(etcd, "/registry/resourcequotas/", namespace, |o| match o {
        Object::ResourceQuota(q) => Some(q),
        _ => None,
    })
}

/// A pod's total of one compute resource (`requests.cpu`, `limits.memory`, `cpu`), in
/// thousandths: its app containers together, or its largest init container if more.
fn pod_compute(pod: &Pod, resource: &str) -> i128 {
    let (limits, base) = match resource.split_once('.') {
        Some(("limits", base)) => (true, base),
        Some(("requests", base)) => (false, base),
        _ => (false, resource),
    };
    let of = |c: &std::sync::Arc<crate::api::Container>| -> i128 {
        let list = if limits { &c.resources.limits } else { &c.resources.requests };
        list.get(base).map_or(0, |q| q.milli() as i128)
    };
    let apps: i128 = pod.spec.containers.iter().map(of).sum();
    let init = pod.spec.init_containers.iter().map(of).max().unwrap_or(0);
    apps.max(init)
}

/// How much of `resource` one object uses, in thousandths; None when it does not count.
fn usage_of(object: &Object, resource: &str) -> Option<i128> {
    let info = object.kind().info();
    let count_name = if info.group.is_empty() {
        format!("count/{}", info.resource)
    } else {
        format!("count/{}.{}", info.resource, info.group)
    };
    if resource == count_name {
        return Some(1000);
    }
    match (object, resource) {
        (Object::Pod(p), _) if p.is_terminal() => None,
        (Object::Pod(_), "pods") => Some(1000),
        (Object::Pod(p), r) if COMPUTE.contains(&r) => Some(pod_compute(p, r)),
        (Object::Service(_), "services") => Some(1000),
        (Object::Service(s), "services.nodeports") => {
            Some(s.spec.ports.iter().filter(|p| p.node_port.is_some_and(|n| n > 0)).count() as i128 * 1000)
        }
        (Object::Service(s), "services.loadbalancers") => {
            Some(if s.spec.type_.as_deref() == Some("LoadBalancer") { 1000 } else { 0 })
        }
        (Object::ConfigMap(_), "configmaps")
        | (Object::Secret(_), "secrets")
        | (Object::ResourceQuota(_), "resourcequotas") => Some(1000),
        _ => None,
    }
}

/// The kind whose objects `resource` counts, if the sandbox counts it.
fn counted_kind(resource: &str) -> Option<Kind> {
    match resource {
        "pods" => Some(Kind::Pod),
        r if COMPUTE.contains(&r) => Some(Kind::Pod),
        "services" | "services.nodeports" | "services.loadbalancers" => Some(Kind::Service),
        "configmaps" => Some(Kind::ConfigMap),
        "secrets" => Some(Kind::Secret),
        "resourcequotas" => Some(Kind::ResourceQuota),
        r => r.strip_prefix("count/").and_then(Kind::from_resource_arg),
    }
}

/// Whether any resource `quota` caps counts objects of `kind`.
pub fn counts_kind(quota: &ResourceQuota, kind: Kind) -> bool {
    quota.spec.hard.keys().any(|r| counted_kind(r) == Some(kind))
}

/// `resource` as a quantity from thousandths, written as the API server writes usage.
fn quantity(resource: &str, milli: i128) -> Quantity {
    let milli = milli.clamp(0, i64::MAX as i128) as i64;
    if resource.ends_with("cpu") {
        Quantity::from_milli(milli)
    } else if resource.ends_with("memory") || resource.ends_with("storage") {
        Quantity::bytes(milli / 1000)
    } else {
        Quantity::units(milli / 1000)
    }
}

/// The namespace's current use of each resource `quota` caps (those the sandbox counts).
fn used(etcd: &Etcd, namespace: &str, quota: &ResourceQuota) -> BTreeMap<String, i128> {
    let mut out = BTreeMap::new();
    for resource in quota.spec.hard.keys() {
        let Some(kind) = counted_kind(resource) else { continue };
        let prefix = format!("/registry/{}/{namespace}/", kind.storage_resource());
        let total: i128 = etcd.range(&prefix).filter_map(|(_, kv)| usage_of(&kv.value, resource)).sum();
        out.insert(resource.clone(), total);
    }
    out
}

/// `quota` with its status as it should now read, or None when it already does.
pub fn refreshed(etcd: &Etcd, quota: &ResourceQuota) -> Option<ResourceQuota> {
    let used: BTreeMap<String, Quantity> = used(etcd, &quota.metadata.namespace, quota)
        .into_iter()
        .map(|(r, milli)| {
            let q = quantity(&r, milli);
            (r, q)
        })
        .collect();
    let same = |a: &BTreeMap<String, Quantity>, b: &BTreeMap<String, Quantity>| {
        a.len() == b.len() && a.iter().zip(b).all(|((ka, qa), (kb, qb))| ka == kb && qa.milli() == qb.milli())
    };
    if same(&quota.status.hard, &quota.spec.hard) && same(&quota.status.used, &used) {
        return None;
    }
    let mut next = quota.clone();
    next.status.hard = quota.spec.hard.clone();
    next.status.used = used;
    Some(next)
}

/// `a=1,b=2`, as quota refusals list resources.
fn pretty(list: &[(String, String)]) -> String {
    list.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// Why the namespace's quotas refuse creating `object` (the text after `... is forbidden: `),
/// or None when they allow it.
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn refusal(etcd: &Etcd, object: &Object) -> Option<String> {
    for quota in quotas(etcd, object.namespace()) {
        if let Object::Pod(pod) = object {
            if let Some(missing) = missing_compute(pod, &quota) {
                return Some(format!("failed quota: {}: must specify {missing}", quota.metadata.name));
            }
        }
        let now = used(etcd, object.namespace(), &quota);
        let (mut requested, mut in_use, mut limited) = (Vec::new(), Vec::new(), Vec::new());
        for (resource, hard) in &quota.spec.hard {
            let Some(delta) = usage_of(object, resource) else { continue };
            let before = now.get(resource).copied().unwrap_or(0);
            if delta > 0 && before + delta > hard.milli() as i128 {
                requested.push((resource.clone(), quantity(resource, delta).to_string()));
                in_use.push((resource.clone(), quantity(resource, before).to_string()));
                limited.push((resource.clone(), hard.to_string()));
            }
        }
        if !requested.is_empty() {
            return Some(format!(
                "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                quota.metadata.name,
                pretty(&requested),
                pretty(&in_use),
                pretty(&limited)
            ));
        }
    }
    None
}

/// `limits.cpu for: app; requests.memory for: app,sidecar`: the compute resources the quota
/// caps that some container does not set.
fn missing_compute(pod: &Pod, quota: &ResourceQuota) -> Option<String> {
    let mut missing: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for resource in quota.spec.hard.keys().filter(|r| COMPUTE.contains(&r.as_str())) {
        let (limits, base) = match resource.split_once('.') {
            Some(("limits", base)) => (true, base),
            Some((_, base)) => (false, base),
            None => (false, resource.as_str()),
        };
        for c in pod.spec.init_containers.iter().chain(&pod.spec.containers) {
            let list = if limits { &c.resources.limits } else { &c.resources.requests };
            if !list.contains_key(base) {
                missing.entry(resource).or_default().push(&c.name);
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    Some(
        missing
            .into_iter()
            .map(|(r, mut names)| {
                names.sort_unstable();
                names.dedup();
                format!("{r} for: {}", names.join(","))
            })
            .collect::<Vec<_>>()
            .join("; "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(hard: &[(&str, &str)]) -> ResourceQuota {
        let mut q = ResourceQuota::default();
        q.metadata.name = "q".into();
        q.spec.hard = hard.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect();
        q
    }

    fn pod(requests: &[(&str, &str)]) -> Pod {
        let mut p = Pod::default();
        let mut c = crate::api::Container { name: "app".into(), ..Default::default() };
        c.resources.requests = requests.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect();
        std::sync::Arc::make_mut(&mut p.spec).containers.push(c.into());
        p
    }

    #[test]
    fn a_pod_counts_its_containers_requests_and_once_as_a_pod() {
        let p = Object::Pod(pod(&[("cpu", "250m"), ("memory", "64Mi")]));
        assert_eq!(usage_of(&p, "pods"), Some(1000));
        assert_eq!(usage_of(&p, "requests.cpu"), Some(250));
        assert_eq!(usage_of(&p, "count/pods"), Some(1000));
        assert_eq!(quantity("requests.memory", usage_of(&p, "memory").unwrap()).to_string(), "64Mi");
        assert_eq!(usage_of(&p, "services"), None);
    }

    #[test]
    fn a_quota_counts_the_kinds_its_resources_name_and_not_events() {
        let q = quota(&[("requests.cpu", "1"), ("count/deployments.apps", "2"), ("services", "1")]);
        assert!(counts_kind(&q, Kind::Pod));
        assert!(counts_kind(&q, Kind::Deployment));
        assert!(counts_kind(&q, Kind::Service));
        assert!(!counts_kind(&q, Kind::Event));
        assert!(!counts_kind(&q, Kind::ConfigMap));
    }

    #[test]
    fn a_quota_on_compute_makes_every_container_say_its_own() {
        let q = quota(&[("limits.cpu", "1"), ("requests.memory", "1Gi")]);
        assert_eq!(
            missing_compute(&pod(&[("cpu", "100m")]), &q).as_deref(),
            Some("limits.cpu for: app; requests.memory for: app")
        );
        assert_eq!(missing_compute(&pod(&[("memory", "1Mi")]), &quota(&[("pods", "2")])), None);
    }
}
