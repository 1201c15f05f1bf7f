//! kube-controller-manager's Endpoints controller: the legacy core/v1 Endpoints object of each
//! Service with a selector, named like the Service. Ready pods go to `addresses`, not-ready
//! ones to `notReadyAddresses` (terminating pods are left out), and the subsets are packed as
//! upstream's `RepackSubsets` does: addresses that offer the same ports share a subset.

use super::endpointslice::{TriggerTimes, find_port, selected_pods, services_selecting, should_be_in_endpoints};
use super::{Action, Reconciler, Synced};
use crate::api::service::{EndpointAddress, EndpointPort, EndpointSubset};
use crate::api::{Endpoints, Kind, Object, ObjectMeta, ObjectReference, Pod, Service};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::record::WatchEventType;
use crate::util::sort::StableSort;
use std::collections::BTreeMap;

pub const LABEL_HEADLESS: &str = "service.kubernetes.io/headless";
pub const TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";
pub const OVER_CAPACITY: &str = "endpoints.kubernetes.io/over-capacity";
/// The most addresses an Endpoints object holds before it is truncated.
pub const MAX_CAPACITY: usize = 1000;

pub struct EndpointsController {
    services: Informer,
    pods: Informer,
    endpoints: Informer,
    triggers: TriggerTimes,
    /// Ready and not-ready address counts per Service, for views.
    pub counts: BTreeMap<String, (usize, usize)>,
}

impl Default for EndpointsController {
    fn default() -> Self {
        EndpointsController {
            services: Informer::new(Kind::Service),
            pods: Informer::new(Kind::Pod),
            endpoints: Informer::new(Kind::Endpoints),
            triggers: TriggerTimes::default(),
            counts: BTreeMap::new(),
        }
    }
}

fn address_for(pod: &Pod, svc: &Service) -> EndpointAddress {
    EndpointAddress {
        ip: pod.status.pod_ip.clone(),
        hostname: super::endpointslice::should_set_hostname(pod, svc)
            .then(|| pod.spec.hostname.clone().unwrap_or_default()),
        node_name: Some(pod.spec.node_name.clone()),
        target_ref: Some(ObjectReference {
            kind: "Pod".into(),
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        }),
    }
}

/// `RepackSubsets`: one subset per set of (address, ready) sharing the same ports; addresses
/// sorted by IP (as strings, then pod uid). Upstream orders ports and subsets by a hash of
/// their contents; here they keep the Service's port order and first appearance.
pub fn repack(entries: Vec<(EndpointAddress, bool, Option<EndpointPort>)>) -> Vec<EndpointSubset> {
    type Key = (String, String, bool);
    let key = |a: &EndpointAddress, ready: bool| {
        (a.ip.clone(), a.target_ref.as_ref().map(|r| r.uid.clone()).unwrap_or_default(), ready)
    };
    // Each address (with readiness) and the ports it offers, in order of appearance.
    let mut addresses: Vec<(Key, EndpointAddress, Vec<EndpointPort>)> = Vec::new();
    for (address, ready, port) in entries {
        let k = key(&address, ready);
        let i = match addresses.iter().position(|(x, _, _)| *x == k) {
            Some(i) => i,
            None => {
                addresses.push((k, address, Vec::new()));
                addresses.len() - 1
            }
        };
        if let Some(p) = port {
            if !addresses[i].2.contains(&p) {
                addresses[i].2.push(p);
            }
        }
    }
    let mut subsets: Vec<EndpointSubset> = Vec::new();
    for ((ip, uid, ready), address, ports) in addresses {
        let _ = (ip, uid);
        let i = match subsets.iter().position(|s| s.ports == ports) {
            Some(i) => i,
            None => {
                subsets.push(EndpointSubset { ports, ..Default::default() });
                subsets.len() - 1
            }
        };
        if ready {
            subsets[i].addresses.push(address);
        } else {
            subsets[i].not_ready_addresses.push(address);
        }
    }
    let order = |a: &EndpointAddress, b: &EndpointAddress| {
        a.ip.cmp(&b.ip).then_with(|| {
            let uid = |x: &EndpointAddress| x.target_ref.as_ref().map(|r| r.uid.clone()).unwrap_or_default();
            uid(a).cmp(&uid(b))
        })
    };
    for s in &mut subsets {
        s.addresses.stable_sort_by(order);
        s.not_ready_addresses.stable_sort_by(order);
    }
    subsets
}

/// `truncateEndpoints`: cuts an Endpoints object down to `MAX_CAPACITY` addresses — not-ready
/// ones first; if the ready ones alone are too many, those (and every not-ready one). Each
/// subset keeps its share, rounded up. Returns whether it cut anything.
fn truncate(subsets: &mut [EndpointSubset]) -> bool {
    let ready: usize = subsets.iter().map(|s| s.addresses.len()).sum();
    let not_ready: usize = subsets.iter().map(|s| s.not_ready_addresses.len()).sum();
    if ready + not_ready <= MAX_CAPACITY {
        return false;
    }
    let truncate_ready = ready > MAX_CAPACITY;
    let (max, total) = if truncate_ready { (MAX_CAPACITY, ready) } else { (MAX_CAPACITY - ready, not_ready) };
    let mut room = max;
    for s in subsets.iter_mut() {
        let have = if truncate_ready { s.addresses.len() } else { s.not_ready_addresses.len() };
        let keep = (have * max).div_ceil(total).min(room);
        if truncate_ready {
            s.addresses.truncate(keep);
            s.not_ready_addresses.clear();
        } else {
            s.not_ready_addresses.truncate(keep);
        }
        room -= keep.min(have);
    }
    true
}

impl Reconciler for EndpointsController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.services, &mut self.pods, &mut self.endpoints]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let obj = &delta.object;
        match informer {
            1 => super::keys_of_both(delta, super::KeysFrom::Labels, |o| {
                services_selecting(&self.services, o.namespace(), &o.meta().labels)
            }),
            0 => vec![cache_key(obj.namespace(), obj.name())],
            // Endpoints deleted by someone else are put back.
            _ if delta.type_ == WatchEventType::Deleted => vec![cache_key(obj.namespace(), obj.name())],
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let Some(svc_obj) = self.services.cache.get(key).cloned() else {
            // The Service is gone: so are its Endpoints.
            self.triggers.forget(key);
            self.counts.remove(key);
            if let Some(ep) = self.endpoints.cache.get(key).cloned() {
                ctx.cause = Some(ctx.decide(|| format!("Service {key} is gone: delete its Endpoints")));
                super::done_unless_failed(ctx.call(Request::delete(Kind::Endpoints, ep.namespace(), ep.name())))?;
            }
            return Ok(Action::AwaitChange);
        };
        let Object::Service(svc) = &*svc_obj else { return Ok(Action::AwaitChange) };
        if svc.spec.type_.as_deref() == Some("ExternalName") || svc.spec.selector.is_empty() {
            return Ok(Action::AwaitChange);
        }
        let publish = svc.spec.publish_not_ready_addresses == Some(true);
        let pods = selected_pods(svc, &self.pods);
        let trigger = self.triggers.compute(key, svc, &pods);
        let mut entries = Vec::new();
        for pod in pods.iter().filter(|p| should_be_in_endpoints(p, publish)) {
            let address = address_for(pod, svc);
            let ready = publish || pod.is_ready();
            if svc.spec.ports.is_empty() {
                if svc.spec.cluster_ip == "None" {
                    entries.push((address, ready, None));
                }
                continue;
            }
            for port in &svc.spec.ports {
                let Some(number) = find_port(pod, port) else { continue };
                let port = EndpointPort {
                    name: port.name.clone().filter(|n| !n.is_empty()),
                    port: Some(number),
                    protocol: Some(port.protocol.clone().unwrap_or_else(|| "TCP".into())),
                    app_protocol: port.app_protocol.clone(),
                };
                entries.push((address.clone(), ready, Some(port)));
            }
        }
        let mut subsets = repack(entries);
        let ready: usize = subsets.iter().map(|s| s.addresses.len()).sum();
        let not_ready: usize = subsets.iter().map(|s| s.not_ready_addresses.len()).sum();
        self.counts.insert(key.to_string(), (ready, not_ready));
        let mut labels = svc.metadata.labels.clone();
        if svc.spec.cluster_ip == "None" {
            labels.insert(LABEL_HEADLESS.into(), String::new());
        } else {
            labels.remove(LABEL_HEADLESS);
        }
        let current = match self.endpoints.cache.get(key).map(|o| &**o) {
            Some(Object::Endpoints(ep)) => Some(ep.clone()),
            _ => None,
        };
        let over = truncate(&mut subsets);
        if let Some(ep) = &current {
            if ep.subsets == subsets
                && ep.metadata.labels == labels
                && ep.metadata.annotations.contains_key(OVER_CAPACITY) == over
            {
                return Ok(Action::AwaitChange);
            }
        }
        let mut ep = current.clone().unwrap_or_else(|| Endpoints {
            metadata: ObjectMeta {
                name: svc.metadata.name.clone(),
                namespace: svc.metadata.namespace.clone(),
                ..Default::default()
            },
            ..Default::default()
        });
        ep.subsets = subsets;
        ep.metadata.labels = labels;
        match trigger {
            Some(t) => ep.metadata.annotations.insert(TRIGGER_TIME.into(), t.rfc3339()),
            None => ep.metadata.annotations.remove(TRIGGER_TIME),
        };
        if over {
            ep.metadata.annotations.insert(OVER_CAPACITY.into(), "truncated".into());
        } else {
            ep.metadata.annotations.remove(OVER_CAPACITY);
        }
        ep.metadata.resource_version.clear();
        ctx.cause = Some(ctx.decide(|| format!("Service {key}: {ready} ready, {not_ready} not ready")));
        let req = if current.is_some() {
            Request::update(Object::Endpoints(ep))
        } else {
            Request::create(Object::Endpoints(ep))
        };
        let stored = ctx.call_object(req)?;
        self.endpoints.assume(stored);
        Ok(Action::AwaitChange)
    }

    fn summary(&self) -> String {
        self.counts.iter().map(|(k, (r, n))| format!("{k}: {r} ready, {n} not ready")).collect::<Vec<_>>().join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(ip: &str, uid: &str) -> EndpointAddress {
        EndpointAddress {
            ip: ip.into(),
            target_ref: Some(ObjectReference { kind: "Pod".into(), uid: uid.into(), ..Default::default() }),
            ..Default::default()
        }
    }

    fn port(n: i32) -> Option<EndpointPort> {
        Some(EndpointPort { port: Some(n), protocol: Some("TCP".into()), ..Default::default() })
    }

    #[test]
    fn ready_and_not_ready_addresses_with_the_same_ports_share_a_subset_sorted_by_ip_as_text() {
        let subsets = repack(vec![
            (addr("10.244.1.2", "a"), true, port(80)),
            (addr("10.244.1.10", "b"), true, port(80)),
            (addr("10.244.2.3", "c"), false, port(80)),
        ]);
        assert_eq!(subsets.len(), 1);
        let ips: Vec<&str> = subsets[0].addresses.iter().map(|a| a.ip.as_str()).collect();
        assert_eq!(ips, ["10.244.1.10", "10.244.1.2"]);
        assert_eq!(subsets[0].not_ready_addresses[0].ip, "10.244.2.3");
    }

    #[test]
    fn addresses_offering_different_ports_get_their_own_subsets() {
        let subsets = repack(vec![
            (addr("10.244.1.2", "a"), true, port(8080)),
            (addr("10.244.1.3", "b"), true, port(9090)),
            (addr("10.244.1.2", "a"), true, port(443)),
        ]);
        let ports: Vec<Vec<Option<i32>>> = subsets.iter().map(|s| s.ports.iter().map(|p| p.port).collect()).collect();
        assert_eq!(ports, [vec![Some(8080), Some(443)], vec![Some(9090)]]);
    }

    #[test]
    fn more_than_a_thousand_addresses_are_truncated_not_ready_ones_first() {
        let many = |n: usize, base: &str| (0..n).map(|i| addr(&format!("{base}.{i}"), "")).collect::<Vec<_>>();
        let mut subsets = vec![EndpointSubset {
            addresses: many(900, "10.1"),
            not_ready_addresses: many(300, "10.2"),
            ports: port(80).into_iter().collect(),
        }];
        assert!(truncate(&mut subsets));
        assert_eq!((subsets[0].addresses.len(), subsets[0].not_ready_addresses.len()), (900, 100));
        let mut subsets =
            vec![EndpointSubset { addresses: many(1200, "10.1"), not_ready_addresses: many(5, "10.2"), ports: vec![] }];
        assert!(truncate(&mut subsets));
        assert_eq!((subsets[0].addresses.len(), subsets[0].not_ready_addresses.len()), (1000, 0));
        assert!(!truncate(&mut subsets));
    }
}
