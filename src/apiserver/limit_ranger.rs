//! The LimitRanger admission plugin: a namespace's LimitRanges give each container of a new
//! pod the default requests and limits it did not set (mutating), then refuse a pod whose
//! containers fall outside their minimums, maximums or limit/request ratios (validating).

use crate::api::{Container, LimitRange, LimitRangeItem, Object, Pod, Quantity};
use crate::etcd::Etcd;
use std::collections::BTreeMap;

/// The namespace's LimitRanges, in name order.
fn limit_ranges(etcd: &Etcd, namespace: &str) -> Vec<LimitRange> {
    super::namespace_objects(etcd, "/registry/limitranges/", namespace, |o| match o {
        Object::LimitRange(l) => Some(l),
        _ => None,
    })
}

/// The defaults a new LimitRange gets: a Container item's missing default limit is its
/// maximum, and its missing default request is its default limit.
pub fn default_limit_range(range: &mut LimitRange) {
    for item in range.spec.limits.iter_mut().filter(|i| i.type_ == "Container") {
        for (resource, max) in &item.max {
            item.default.entry(resource.clone()).or_insert_with(|| max.clone());
        }
        for (resource, limit) in &item.default {
            item.default_request.entry(resource.clone()).or_insert_with(|| limit.clone());
        }
    }
}

fn containers(pod: &mut Pod) -> impl Iterator<Item = &mut Container> {
    let spec = std::sync::Arc::make_mut(&mut pod.spec);
    spec.init_containers.iter_mut().chain(spec.containers.iter_mut()).map(std::sync::Arc::make_mut)
}

/// Sets the defaults of the namespace's Container items on `pod`'s containers; returns the
/// annotation value that says what it set (`LimitRanger plugin set: cpu request for container
/// app`), or None when it set nothing.
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn set_defaults(etcd: &Etcd, pod: &mut Pod) -> Option<String> {
    let ranges = limit_ranges(etcd, &pod.metadata.namespace);
    let items: Vec<LimitRangeItem> =
        ranges.into_iter().flat_map(|r| r.spec.limits).filter(|i| i.type_ == "Container").collect();
    if items.is_empty() {
        return None;
    }
    let mut notes: Vec<String> = Vec::new();
    for c in containers(pod) {
        let (mut requests, mut limits) = (Vec::new(), Vec::new());
        for item in &items {
            for (resource, q) in &item.default_request {
                if !c.resources.requests.contains_key(resource) {
                    c.resources.requests.insert(resource.clone(), q.clone());
                    requests.push(resource.clone());
                }
            }
            for (resource, q) in &item.default {
                if !c.resources.limits.contains_key(resource) {
                    c.resources.limits.insert(resource.clone(), q.clone());
                    limits.push(resource.clone());
                }
            }
        }
        if !requests.is_empty() {
            notes.push(format!("{} request for container {}", requests.join(", "), c.name));
        }
        if !limits.is_empty() {
            notes.push(format!("{} limit for container {}", limits.join(", "), c.name));
        }
    }
    (!notes.is_empty()).then(|| format!("LimitRanger plugin set: {}", notes.join("; ")))
}

/// What about `pod` its namespace's LimitRanges refuse, in the API server's words (empty when
/// nothing).
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn violations(etcd: &Etcd, pod: &Pod) -> Vec<String> {
    let mut out = Vec::new();
    for range in limit_ranges(etcd, &pod.metadata.namespace) {
        for item in range.spec.limits.iter().filter(|i| i.type_ == "Container") {
            for c in pod.spec.init_containers.iter().chain(&pod.spec.containers) {
                check(item, &c.resources.requests, &c.resources.limits, &mut out);
            }
        }
    }
    out
}

fn check(
    item: &LimitRangeItem,
    requests: &BTreeMap<String, Quantity>,
    limits: &BTreeMap<String, Quantity>,
    out: &mut Vec<String>,
) {
    for (resource, min) in &item.min {
        match requests.get(resource) {
            None => out.push(format!("minimum {resource} usage per Container is {min}.  No request is specified")),
            Some(r) if r.milli() < min.milli() => {
                out.push(format!("minimum {resource} usage per Container is {min}, but request is {r}"))
            }
            _ => {}
        }
    }
    for (resource, max) in &item.max {
        match limits.get(resource) {
            None => out.push(format!("maximum {resource} usage per Container is {max}.  No limit is specified")),
            Some(l) if l.milli() > max.milli() => {
                out.push(format!("maximum {resource} usage per Container is {max}, but limit is {l}"))
            }
            _ => {}
        }
    }
    for (resource, ratio) in &item.max_limit_request_ratio {
        let (Some(l), Some(r)) = (limits.get(resource), requests.get(resource)) else { continue };
        if r.milli() > 0 && (l.milli() as i128) * 1000 > (ratio.milli() as i128) * (r.milli() as i128) {
            let actual = l.milli() as f64 / r.milli() as f64;
            out.push(format!(
                "{resource} max limit to request ratio per Container is {ratio}, but provided ratio is {actual:.6}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::policy::LimitRangeSpec;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).expect("quantity")
    }

    fn list(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
        pairs.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
    }

    #[test]
    fn a_new_limit_range_defaults_its_limits_to_the_maximum_and_its_requests_to_the_limits() {
        let mut range = LimitRange {
            spec: LimitRangeSpec {
                limits: vec![LimitRangeItem {
                    type_: "Container".into(),
                    max: list(&[("cpu", "800m")]),
                    default: list(&[("memory", "512Mi")]),
                    ..Default::default()
                }],
            },
            ..Default::default()
        };
        default_limit_range(&mut range);
        let item = &range.spec.limits[0];
        assert_eq!(item.default, list(&[("cpu", "800m"), ("memory", "512Mi")]));
        assert_eq!(item.default_request, list(&[("cpu", "800m"), ("memory", "512Mi")]));
    }

    #[test]
    fn containers_outside_the_bounds_are_named_as_the_api_server_names_them() {
        let item = LimitRangeItem {
            type_: "Container".into(),
            min: list(&[("cpu", "200m")]),
            max: list(&[("cpu", "800m")]),
            ..Default::default()
        };
        let mut out = Vec::new();
        check(&item, &list(&[("cpu", "100m")]), &list(&[("cpu", "1500m")]), &mut out);
        assert_eq!(
            out,
            [
                "minimum cpu usage per Container is 200m, but request is 100m",
                "maximum cpu usage per Container is 800m, but limit is 1500m"
            ]
        );
    }
}
