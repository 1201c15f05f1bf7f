//! kube-controller-manager's EndpointSlice controller: for every Service with a selector, keeps
//! EndpointSlices listing the pods it selects — one endpoint per pod with an IP, with its
//! ready / serving / terminating conditions, node and pod reference, and the Service's ports
//! with each targetPort resolved against the pod. Endpoints are grouped by their resolved
//! ports, at most 100 to a slice; existing slices are updated in place, and a Service with no
//! endpoints keeps one empty placeholder slice, as upstream's reconciler does.

use super::pods::controller_ref;
use super::{Action, Reconciler, Synced};
use crate::api::service::{EndpointConditions, EndpointPort, ServicePort, SliceEndpoint};
use crate::api::{EndpointSlice, IntOrString, Kind, Labels, Object, ObjectMeta, ObjectReference, Pod, Service};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::sim::Time;
use crate::util::sort::StableSort;
use std::collections::{BTreeMap, HashMap};

/// `maxEndpointsPerSlice` (`--max-endpoints-per-slice`).
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";
pub const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
pub const LABEL_HEADLESS: &str = "service.kubernetes.io/headless";
pub const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
pub const TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// `podutil.FindPort`: the port a Service port's targetPort means for this pod — a number as
/// is, a name looked up among the containers' (and sidecars') ports of the same protocol.
pub fn find_port(pod: &Pod, port: &ServicePort) -> Option<i32> {
    match &port.target_port {
        None => Some(port.port),
        Some(IntOrString::Int(n)) => Some(*n),
        Some(IntOrString::String(name)) => {
            let protocol = port.protocol.as_deref().unwrap_or("TCP");
            let sidecars = pod.spec.init_containers.iter().filter(|c| c.restart_policy.as_deref() == Some("Always"));
            pod.spec
                .containers
                .iter()
                .chain(sidecars)
                .flat_map(|c| &c.ports)
                .find(|p| p.name.as_deref() == Some(name) && p.protocol.as_deref().unwrap_or("TCP") == protocol)
                .map(|p| p.container_port)
        }
    }
}

/// `ShouldPodBeInEndpoints`: not finished, has an IP, and (unless terminating ones are
/// wanted) not being deleted.
pub fn should_be_in_endpoints(pod: &Pod, include_terminating: bool) -> bool {
    !pod.is_terminal()
        && !pod.status.pod_ip.is_empty()
        && (include_terminating || pod.metadata.deletion_timestamp.is_none())
}

/// The pods a Service selects (its selector is a plain label map).
pub fn selected_pods<'a>(svc: &Service, pods: &'a Informer) -> Vec<&'a Pod> {
    pods.cache
        .values()
        .filter_map(|p| p.as_pod())
        .filter(|p| p.metadata.namespace == svc.metadata.namespace)
        .filter(|p| svc.spec.selector.iter().all(|(k, v)| p.metadata.labels.get(k) == Some(v)))
        .collect()
}

/// The Services in `namespace` whose selector matches `labels`, in key order. It is asked for
/// every pod change, so the cache is walked unsorted and only the few matches are sorted.
pub fn services_selecting(services: &Informer, namespace: &str, labels: &Labels) -> Vec<String> {
    let mut keys: Vec<String> = services
        .cache
        .values_unordered()
        .filter(|s| s.namespace() == namespace)
        .filter(|s| match &***s {
            Object::Service(svc) => {
                !svc.spec.selector.is_empty() && svc.spec.selector.iter().all(|(k, v)| labels.get(k) == Some(v))
            }
            _ => false,
        })
        .map(|s| cache_key(s.namespace(), s.name()))
        .collect();
    keys.sort_unstable();
    keys
}

/// Whether a pod's hostname is published for this Service (`spec.subdomain` names it).
pub fn should_set_hostname(pod: &Pod, svc: &Service) -> bool {
    pod.spec.hostname.as_deref().is_some_and(|h| !h.is_empty())
        && pod.spec.subdomain.as_deref() == Some(svc.metadata.name.as_str())
        && pod.metadata.namespace == svc.metadata.namespace
}

/// Metadata times have whole seconds.
fn whole_seconds(t: Time) -> Time {
    Time(t.0 / 1000 * 1000)
}

/// The `endpoints.kubernetes.io/last-change-trigger-time` tracker: the earliest change (a pod's
/// Ready transition, or the Service's creation) not yet reflected in the Service's endpoints.
#[derive(Debug, Default)]
pub struct TriggerTimes {
    /// Per Service: the pods' trigger times and the Service's, as of the last sync.
    seen: HashMap<String, (BTreeMap<String, Time>, Time)>,
}

impl TriggerTimes {
    pub fn compute(&mut self, key: &str, svc: &Service, pods: &[&Pod]) -> Option<Time> {
        let known = self.seen.get(key);
        let mut earliest: Option<Time> = None;
        let mut pod_times = BTreeMap::new();
        for pod in pods {
            let Some(t) = pod.condition("Ready").and_then(|c| c.last_transition_time).map(whole_seconds) else {
                continue;
            };
            pod_times.insert(pod.metadata.name.clone(), t);
            if known.and_then(|(p, _)| p.get(&pod.metadata.name)).is_none_or(|last| t > *last) {
                earliest = Some(earliest.map_or(t, |e| e.min(t)));
            }
        }
        let created = whole_seconds(svc.metadata.creation_timestamp.unwrap_or_default());
        if known.is_none_or(|(_, last)| created > *last) {
            earliest = Some(earliest.map_or(created, |e| e.min(created)));
        }
        let was_known = known.is_some();
        self.seen.insert(key.to_string(), (pod_times, created));
        if was_known { earliest } else { Some(created) }
    }

    pub fn forget(&mut self, key: &str) {
        self.seen.remove(key);
    }
}

/// The slice endpoint for a pod behind `svc`.
fn endpoint_for(pod: &Pod, svc: &Service) -> SliceEndpoint {
    let publish = svc.spec.publish_not_ready_addresses == Some(true);
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let serving = publish || pod.is_ready();
    // A terminating pod is never "ready" unless not-ready addresses are published.
    let ready = serving && (!terminating || publish);
    SliceEndpoint {
        addresses: vec![pod.status.pod_ip.clone()],
        conditions: EndpointConditions { ready: Some(ready), serving: Some(serving), terminating: Some(terminating) },
        hostname: should_set_hostname(pod, svc).then(|| pod.spec.hostname.clone().unwrap_or_default()),
        target_ref: Some(ObjectReference {
            kind: "Pod".into(),
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        }),
        node_name: (!pod.spec.node_name.is_empty()).then(|| pod.spec.node_name.clone()),
        zone: None,
        hints: None,
    }
}

/// The Service's ports as this pod serves them (ports whose named targetPort the pod lacks
/// are left out).
fn endpoint_ports(pod: &Pod, svc: &Service) -> Vec<EndpointPort> {
    svc.spec
        .ports
        .iter()
        .filter_map(|p| {
            Some(EndpointPort {
                name: Some(p.name.clone().unwrap_or_default()),
                port: Some(find_port(pod, p)?),
                protocol: Some(p.protocol.clone().unwrap_or_else(|| "TCP".into())),
                app_protocol: p.app_protocol.clone(),
            })
        })
        .collect()
}

/// The labels every slice of the Service carries: the Service's own (bar reserved keys), the
/// headless marker, the Service's name and the managing controller.
fn slice_labels(svc: &Service) -> Labels {
    let mut labels: Labels = crate::util::sort::btree_map(
        svc.metadata
            .labels
            .iter()
            .filter(|(k, _)| k.as_str() != LABEL_SERVICE_NAME && k.as_str() != LABEL_MANAGED_BY)
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    if svc.spec.cluster_ip == "None" {
        labels.insert(LABEL_HEADLESS.into(), String::new());
    } else {
        labels.remove(LABEL_HEADLESS);
    }
    labels.insert(LABEL_SERVICE_NAME.into(), svc.metadata.name.clone());
    labels.insert(LABEL_MANAGED_BY.into(), CONTROLLER_NAME.into());
    labels
}

/// What one sync of a Service decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SliceSummary {
    pub endpoints: usize,
    pub ready: usize,
    pub slices: usize,
}

pub struct EndpointSliceController {
    services: Informer,
    pods: Informer,
    slices: Informer,
    triggers: TriggerTimes,
    /// The last outcome per Service, for views.
    pub summaries: BTreeMap<String, SliceSummary>,
}

impl Default for EndpointSliceController {
    fn default() -> Self {
        EndpointSliceController {
            services: Informer::new(Kind::Service),
            pods: Informer::new(Kind::Pod),
            slices: Informer::new(Kind::EndpointSlice),
            triggers: TriggerTimes::default(),
            summaries: BTreeMap::new(),
        }
    }
}

/// The slices a sync writes.
#[derive(Default)]
struct Plan {
    create: Vec<EndpointSlice>,
    update: Vec<EndpointSlice>,
    delete: Vec<EndpointSlice>,
}

/// Upstream's reconciler, for one address type: keeps endpoints where they are, drops gone
/// ones, fills free room, then new slices; recycles slices it would delete for ones it would
/// create; and leaves a placeholder when a Service would have none.
fn plan(svc: &Service, existing: Vec<EndpointSlice>, desired: Vec<(Vec<EndpointPort>, Vec<SliceEndpoint>)>) -> Plan {
    let labels = slice_labels(svc);
    let mut plan = Plan::default();
    let existing_count = existing.len();
    let mut remaining = existing;
    let new_slice = |ports: Vec<EndpointPort>, endpoints: Vec<SliceEndpoint>| EndpointSlice {
        metadata: ObjectMeta {
            generate_name: format!("{}-", svc.metadata.name),
            namespace: svc.metadata.namespace.clone(),
            labels: labels.clone().into(),
            ..Default::default()
        },
        address_type: "IPv4".into(),
        endpoints,
        ports,
        ..Default::default()
    };
    for (ports, mut pending) in desired {
        let (mine, others): (Vec<_>, Vec<_>) = remaining.into_iter().partition(|s| s.ports == ports);
        remaining = others;
        let mut kept: Vec<(EndpointSlice, bool)> = Vec::new();
        for mut slice in mine {
            let mut endpoints = Vec::new();
            for e in &slice.endpoints {
                if let Some(i) = pending.iter().position(|d| d.addresses == e.addresses) {
                    endpoints.push(pending.remove(i));
                }
            }
            if endpoints.is_empty() {
                plan.delete.push(slice);
                continue;
            }
            let changed = endpoints != slice.endpoints || slice.metadata.labels != labels;
            slice.endpoints = endpoints;
            slice.metadata.labels = labels.clone().into();
            kept.push((slice, changed));
        }
        // Room in slices already being updated first, then in the others.
        kept.stable_sort_by_key(|(_, changed)| !changed);
        for (slice, changed) in &mut kept {
            while slice.endpoints.len() < MAX_ENDPOINTS_PER_SLICE && !pending.is_empty() {
                slice.endpoints.push(pending.remove(0));
                *changed = true;
            }
        }
        for (slice, changed) in kept {
            if changed {
                plan.update.push(slice);
            }
        }
        while !pending.is_empty() {
            let rest = pending.split_off(pending.len().min(MAX_ENDPOINTS_PER_SLICE));
            plan.create.push(new_slice(ports.clone(), std::mem::replace(&mut pending, rest)));
        }
    }
    plan.delete.extend(remaining);
    if plan.delete.len() == existing_count && plan.create.is_empty() {
        let is_placeholder = |s: &EndpointSlice| s.ports.is_empty() && s.endpoints.is_empty();
        if plan.delete.len() == 1 && is_placeholder(&plan.delete[0]) {
            let mut slice = plan.delete.remove(0);
            if slice.metadata.labels != labels {
                slice.metadata.labels = labels.clone().into();
                plan.update.push(slice);
            }
        } else {
            plan.create.push(new_slice(Vec::new(), Vec::new()));
        }
    }
    // Rather than delete one slice and create another, reuse the one being deleted.
    while !plan.create.is_empty() && !plan.delete.is_empty() {
        let old = plan.delete.remove(0);
        let mut slice = plan.create.pop().unwrap_or_default();
        slice.metadata = ObjectMeta { labels: slice.metadata.labels, ..old.metadata };
        plan.update.push(slice);
    }
    plan
}

impl EndpointSliceController {
    fn managed_slices(&self, svc: &Service) -> Vec<EndpointSlice> {
        let mut slices: Vec<EndpointSlice> = self
            .slices
            .cache
            .values()
            .filter_map(|o| if let Object::EndpointSlice(s) = &**o { Some(s) } else { None })
            .filter(|s| s.metadata.namespace == svc.metadata.namespace)
            .filter(|s| s.metadata.labels.get(LABEL_SERVICE_NAME) == Some(&svc.metadata.name))
            .filter(|s| s.metadata.labels.get(LABEL_MANAGED_BY).map(String::as_str) == Some(CONTROLLER_NAME))
            .filter(|s| s.address_type == "IPv4")
            .cloned()
            .collect();
        slices.stable_sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        slices
    }
}

impl Reconciler for EndpointSliceController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.services, &mut self.pods, &mut self.slices]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let obj = &delta.object;
        match informer {
            0 => vec![cache_key(obj.namespace(), obj.name())],
            1 => super::keys_of_both(delta, super::KeysFrom::Labels, |o| {
                services_selecting(&self.services, o.namespace(), &o.meta().labels)
            }),
            _ => {
                let labels = &obj.meta().labels;
                match (labels.get(LABEL_SERVICE_NAME), labels.get(LABEL_MANAGED_BY)) {
                    (Some(svc), Some(by)) if by == CONTROLLER_NAME => vec![cache_key(obj.namespace(), svc)],
                    _ => Vec::new(),
                }
            }
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        // A deleted Service's slices go with it: the garbage collector follows their owner reference.
        let Some(svc_obj) = self.services.cache.get(key).cloned() else {
            self.triggers.forget(key);
            self.summaries.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Object::Service(svc) = &*svc_obj else { return Ok(Action::AwaitChange) };
        let external = svc.spec.type_.as_deref() == Some("ExternalName");
        if external || svc.spec.selector.is_empty() || svc.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let pods = selected_pods(svc, &self.pods);
        let trigger = self.triggers.compute(key, svc, &pods);
        let mut desired: Vec<(Vec<EndpointPort>, Vec<SliceEndpoint>)> = Vec::new();
        for pod in pods.iter().filter(|p| should_be_in_endpoints(p, true)) {
            let ports = endpoint_ports(pod, svc);
            let endpoint = endpoint_for(pod, svc);
            match desired.iter_mut().find(|(p, _)| *p == ports) {
                Some((_, endpoints)) => endpoints.push(endpoint),
                None => desired.push((ports, vec![endpoint])),
            }
        }
        let summary = SliceSummary {
            endpoints: desired.iter().map(|(_, e)| e.len()).sum(),
            ready: desired.iter().flat_map(|(_, e)| e).filter(|e| e.conditions.ready == Some(true)).count(),
            slices: 0,
        };
        let existing = self.managed_slices(svc);
        let plan = plan(svc, existing.clone(), desired);
        let slices = existing.len() + plan.create.len() - plan.delete.len();
        self.summaries.insert(key.to_string(), SliceSummary { slices, ..summary.clone() });
        if plan.create.is_empty() && plan.update.is_empty() && plan.delete.is_empty() {
            return Ok(Action::AwaitChange);
        }
        ctx.cause = Some(ctx.decide(|| {
            format!(
                "Service {key}: {} endpoints ({} ready) in {slices} slice(s): create {}, update {}, delete {}",
                summary.endpoints,
                summary.ready,
                plan.create.len(),
                plan.update.len(),
                plan.delete.len()
            )
        }));
        let annotate = |slice: &mut EndpointSlice| match trigger {
            Some(t) => {
                slice.metadata.annotations.insert(TRIGGER_TIME.into(), t.rfc3339());
            }
            None => {
                slice.metadata.annotations.remove(TRIGGER_TIME);
            }
        };
        // Every write is tried; the first failure fails the sync, to be tried again.
        let mut failed = Ok(());
        for mut slice in plan.create {
            annotate(&mut slice);
            slice.metadata.owner_references = vec![controller_ref(&svc_obj)].into();
            match ctx.call_object(Request::create(Object::EndpointSlice(slice))) {
                Ok(stored) => self.slices.assume(stored),
                Err(status) => failed = failed.and(Err(status)),
            }
        }
        for mut slice in plan.update {
            annotate(&mut slice);
            slice.metadata.resource_version.clear();
            match ctx.call_object(Request::update(Object::EndpointSlice(slice))) {
                Ok(stored) => self.slices.assume(stored),
                Err(status) => failed = failed.and(Err(status)),
            }
        }
        for slice in plan.delete {
            let deleted =
                ctx.call(Request::delete(Kind::EndpointSlice, &slice.metadata.namespace, &slice.metadata.name));
            failed = failed.and(super::done_unless_failed(deleted));
        }
        failed.map(|()| Action::AwaitChange)
    }

    fn summary(&self) -> String {
        self.summaries
            .iter()
            .map(|(k, s)| format!("{k}: {} endpoints ({} ready) in {} slice(s)", s.endpoints, s.ready, s.slices))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::PodCondition;
    use crate::api::pod::{Container, ContainerPort};

    fn svc(target: IntOrString) -> Service {
        let mut s = Service::default();
        s.metadata.name = "web".into();
        s.metadata.namespace = "default".into();
        s.spec.selector.insert("app".into(), "web".into());
        s.spec.ports.push(ServicePort {
            name: Some("http".into()),
            protocol: Some("TCP".into()),
            port: 80,
            target_port: Some(target),
            ..Default::default()
        });
        s
    }

    fn pod(name: &str, ip: &str, ready: bool, port: Option<(&str, i32)>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        std::sync::Arc::make_mut(&mut p.spec).node_name = "worker-1".into();
        std::sync::Arc::make_mut(&mut p.status).pod_ip = ip.into();
        std::sync::Arc::make_mut(&mut p.status).phase = "Running".into();
        std::sync::Arc::make_mut(&mut p.status).conditions.push(PodCondition {
            type_: "Ready".into(),
            status: if ready { "True" } else { "False" }.into(),
            ..Default::default()
        });
        let ports = port
            .map(|(n, p)| ContainerPort { name: Some(n.into()), container_port: p, ..Default::default() })
            .into_iter()
            .collect();
        std::sync::Arc::make_mut(&mut p.spec)
            .containers
            .push(Container { name: "app".into(), ports, ..Default::default() }.into());
        p
    }

    #[test]
    fn a_named_target_port_resolves_against_each_pods_container_ports() {
        let s = svc(IntOrString::String("web".into()));
        let a = pod("a", "10.244.1.2", true, Some(("web", 8080)));
        let b = pod("b", "10.244.1.3", true, Some(("web", 9090)));
        let c = pod("c", "10.244.1.4", true, Some(("other", 80)));
        assert_eq!(find_port(&a, &s.spec.ports[0]), Some(8080));
        assert_eq!(find_port(&b, &s.spec.ports[0]), Some(9090));
        assert_eq!(find_port(&c, &s.spec.ports[0]), None);
        assert_eq!(find_port(&c, &svc(IntOrString::Int(8000)).spec.ports[0]), Some(8000));
    }

    #[test]
    fn pods_whose_ports_differ_go_to_different_slices() {
        let s = svc(IntOrString::String("web".into()));
        let pods =
            [pod("a", "10.244.1.2", true, Some(("web", 8080))), pod("b", "10.244.1.3", true, Some(("web", 9090)))];
        let desired = pods.iter().map(|p| (endpoint_ports(p, &s), vec![endpoint_for(p, &s)])).collect();
        let plan = plan(&s, Vec::new(), desired);
        let ports: Vec<Option<i32>> = plan.create.iter().map(|s| s.ports[0].port).collect();
        assert_eq!(ports, [Some(8080), Some(9090)]);
        assert_eq!(plan.create[0].metadata.generate_name, "web-");
        assert_eq!(plan.create[0].metadata.labels[LABEL_MANAGED_BY], CONTROLLER_NAME);
    }

    #[test]
    fn terminating_pods_are_serving_but_never_ready() {
        let s = svc(IntOrString::Int(80));
        let mut p = pod("a", "10.244.1.2", true, None);
        p.metadata.deletion_timestamp = Some(Time(5000));
        let e = endpoint_for(&p, &s);
        assert_eq!(
            (e.conditions.ready, e.conditions.serving, e.conditions.terminating),
            (Some(false), Some(true), Some(true))
        );
        let e = endpoint_for(&pod("b", "10.244.1.3", false, None), &s);
        assert_eq!(
            (e.conditions.ready, e.conditions.serving, e.conditions.terminating),
            (Some(false), Some(false), Some(false))
        );
    }

    #[test]
    fn a_service_without_endpoints_keeps_one_placeholder_slice_which_is_reused_later() {
        let s = svc(IntOrString::Int(80));
        let plan1 = plan(&s, Vec::new(), Vec::new());
        assert_eq!(plan1.create.len(), 1);
        let mut placeholder = plan1.create[0].clone();
        assert!(placeholder.ports.is_empty() && placeholder.endpoints.is_empty());
        placeholder.metadata.name = "web-abcde".into();
        assert!(plan(&s, vec![placeholder.clone()], Vec::new()).update.is_empty());
        let p = pod("a", "10.244.1.2", true, None);
        let plan2 = plan(&s, vec![placeholder], vec![(endpoint_ports(&p, &s), vec![endpoint_for(&p, &s)])]);
        assert!(plan2.create.is_empty() && plan2.delete.is_empty());
        assert_eq!(plan2.update[0].metadata.name, "web-abcde");
        assert_eq!(plan2.update[0].endpoints.len(), 1);
    }

    #[test]
    fn slices_hold_at_most_a_hundred_endpoints() {
        let s = svc(IntOrString::Int(80));
        let pods: Vec<Pod> =
            (0..250).map(|i| pod(&format!("p{i}"), &format!("10.244.{}.{}", i / 200, i % 200), true, None)).collect();
        let eps: Vec<SliceEndpoint> = pods.iter().map(|p| endpoint_for(p, &s)).collect();
        let plan = plan(&s, Vec::new(), vec![(endpoint_ports(&pods[0], &s), eps)]);
        let sizes: Vec<usize> = plan.create.iter().map(|s| s.endpoints.len()).collect();
        assert_eq!(sizes, [100, 100, 50]);
    }

    #[test]
    fn the_trigger_time_is_the_service_creation_first_then_the_earliest_new_change() {
        let mut t = TriggerTimes::default();
        let mut s = svc(IntOrString::Int(80));
        s.metadata.creation_timestamp = Some(Time(1500));
        let mut p = pod("a", "10.244.1.2", true, None);
        std::sync::Arc::make_mut(&mut p.status).conditions[0].last_transition_time = Some(Time(7200));
        assert_eq!(t.compute("default/web", &s, &[&p]), Some(Time(1000)));
        assert_eq!(t.compute("default/web", &s, &[&p]), None);
        std::sync::Arc::make_mut(&mut p.status).conditions[0].last_transition_time = Some(Time(9900));
        assert_eq!(t.compute("default/web", &s, &[&p]), Some(Time(9000)));
    }
}
