//! ingress-nginx's controller, as it runs in the `ingress-nginx` namespace: a Deployment's pod
//! whose process watches Ingresses, IngressClasses, Services and EndpointSlices and turns the
//! Ingresses of its class (`k8s.io/ingress-nginx`) into nginx's servers and locations. It
//! reports `Sync` "Scheduled for sync" on each Ingress it takes up (again at each change,
//! including its own status write) and publishes the address of its own LoadBalancer Service
//! (`--publish-service`) into each Ingress's `status.loadBalancer`. It works only while one of
//! its pods is Running, and only through the API; the requests its pods receive are answered
//! from this loop's caches (see [`crate::cluster::ingress`]).

use super::{Action, Reconciler, Synced};
use crate::api::networking::{IngressBackend, IngressLoadBalancerIngress, IngressLoadBalancerStatus, path_matches};
use crate::api::{Ingress, Kind, Object, Service};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer};
use crate::util::sort::StableSort;
use std::any::Any;
use std::collections::BTreeMap;

/// The namespace it is installed in.
pub const NAMESPACE: &str = "ingress-nginx";
/// Its Deployment's and Service's name.
pub const NAME: &str = "ingress-nginx-controller";
/// What its IngressClass names as the controller.
pub const CONTROLLER: &str = "k8s.io/ingress-nginx";
/// Its image.
pub const IMAGE: &str = "registry.k8s.io/ingress-nginx/controller";
/// Who it is to the API server.
pub const USER: &str = "system:serviceaccount:ingress-nginx:ingress-nginx";
/// The source its events name.
pub const SOURCE: &str = "nginx-ingress-controller";

pub struct IngressNginxController {
    ingresses: Informer,
    classes: Informer,
    services: Informer,
    slices: Informer,
    pods: Informer,
    /// The resource version of each Ingress it last reported taking up.
    synced: BTreeMap<String, String>,
}

impl Default for IngressNginxController {
    fn default() -> Self {
        IngressNginxController {
            ingresses: Informer::new(Kind::Ingress),
            classes: Informer::new(Kind::IngressClass),
            services: Informer::new(Kind::Service),
            slices: Informer::new(Kind::EndpointSlice),
            pods: Informer::new(Kind::Pod).in_namespace(NAMESPACE),
            synced: BTreeMap::new(),
        }
    }
}

/// Where a request goes: the Service port of the rule that matched, or nowhere.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// `namespace`, Service name, port (number or name), and the Ingress that routed it.
    Service { namespace: String, service: String, port: crate::api::networking::ServiceBackendPort, ingress: String },
    /// No rule matched: nginx's default backend answers 404.
    DefaultBackend,
}

/// One backend address nginx's upstream holds: IP, port, and the pod (namespace, name).
pub type Upstream = (String, u16, Option<(String, String)>);

impl IngressNginxController {
    /// Whether one of its pods is Running (nginx is up).
    pub fn running(&self) -> bool {
        self.pods.cache.values().any(|o| {
            o.as_pod().is_some_and(|p| {
                p.metadata.labels.get("app.kubernetes.io/component").is_some_and(|c| c == "controller")
                    && p.metadata.deletion_timestamp.is_none()
                    && p.status.phase == "Running"
            })
        })
    }

    /// The Ingresses of its class, oldest first (as nginx's configuration orders servers).
    pub fn ingresses(&self) -> Vec<&Ingress> {
        let ours: Vec<&str> = self
            .classes
            .cache
            .values()
            .filter_map(|o| match &**o {
                Object::IngressClass(c) if c.spec.controller == CONTROLLER => Some(c.metadata.name.as_str()),
                _ => None,
            })
            .collect();
        let mut list: Vec<&Ingress> = self
            .ingresses
            .cache
            .values()
            .filter_map(|o| if let Object::Ingress(i) = &**o { Some(&**i) } else { None })
            .filter(|i| i.metadata.deletion_timestamp.is_none() && i.class().is_some_and(|c| ours.contains(&c)))
            .collect();
        list.stable_sort_by_key(|i| i.metadata.creation_timestamp);
        list
    }

    /// Which backend nginx sends `host` + `path` to: the server named by the host (or the
    /// catch-all server of the rules without one), then its exact locations, then the longest
    /// matching prefix; a server without a match, or no server, gives the default backend
    /// (the first Ingress's `defaultBackend`, else nginx's own 404).
    pub fn route(&self, host: &str, path: &str) -> Route {
        let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
        let ingresses = self.ingresses();
        let host_matches = |rule_host: &str| {
            rule_host == host
                || rule_host.strip_prefix("*.").is_some_and(|d| {
                    host.strip_suffix(d)
                        .and_then(|l| l.strip_suffix('.'))
                        .is_some_and(|l| !l.contains('.') && !l.is_empty())
                })
        };
        let named = ingresses.iter().any(|i| i.spec.rules.iter().any(|r| !r.host.is_empty() && host_matches(&r.host)));
        // (ingress, path type, path, backend) of the server's locations.
        let mut locations = Vec::new();
        for ing in &ingresses {
            for rule in &ing.spec.rules {
                let in_server =
                    if named { !rule.host.is_empty() && host_matches(&rule.host) } else { rule.host.is_empty() };
                let Some(http) = rule.http.as_ref().filter(|_| in_server) else { continue };
                for p in &http.paths {
                    let path_type = p.path_type.as_deref().unwrap_or("ImplementationSpecific");
                    locations.push((
                        *ing,
                        path_type,
                        if p.path.is_empty() { "/" } else { p.path.as_str() },
                        &p.backend,
                    ));
                }
            }
        }
        let exact = locations.iter().find(|(_, t, p, _)| *t == "Exact" && *p == path);
        let prefix = locations
            .iter()
            .filter(|(_, t, p, _)| *t != "Exact" && path_matches(t, p, path))
            .max_by_key(|(_, _, p, _)| p.trim_end_matches('/').len());
        let to = |ing: &Ingress, b: &IngressBackend| match &b.service {
            Some(s) => Route::Service {
                namespace: ing.metadata.namespace.clone(),
                service: s.name.clone(),
                port: s.port.clone(),
                ingress: format!("{}/{}", ing.metadata.namespace, ing.metadata.name),
            },
            None => Route::DefaultBackend,
        };
        if let Some((ing, _, _, b)) = exact.or(prefix) {
            return to(ing, b);
        }
        match ingresses.iter().find_map(|i| i.spec.default_backend.as_ref().map(|b| (*i, b))) {
            Some((ing, b)) => to(ing, b),
            None => Route::DefaultBackend,
        }
    }

    /// The ready endpoints nginx's upstream for a Service port holds (taken from the
    /// EndpointSlices, as ingress-nginx does, not through the ClusterIP).
    pub fn upstreams(
        &self,
        namespace: &str,
        service: &str,
        port: &crate::api::networking::ServiceBackendPort,
    ) -> Vec<Upstream> {
        let Some(Object::Service(svc)) = self.services.get(namespace, service).map(|o| &**o) else { return Vec::new() };
        let Some(sp) = svc.spec.ports.iter().find(|p| {
            port.number.is_some_and(|n| n == p.port)
                || (!port.name.is_empty() && p.name.as_deref() == Some(port.name.as_str()))
        }) else {
            return Vec::new();
        };
        let port_name = sp.name.clone().unwrap_or_default();
        let mut all = Vec::new();
        for o in self.slices.cache.values() {
            let Object::EndpointSlice(slice) = &**o else { continue };
            if slice.metadata.namespace != namespace
                || slice.metadata.labels.get("kubernetes.io/service-name").map(|s| s.as_str()) != Some(service)
            {
                continue;
            }
            let Some(p) =
                slice.ports.iter().find(|p| p.name.clone().unwrap_or_default() == port_name).and_then(|p| p.port)
            else {
                continue;
            };
            for e in slice.endpoints.iter().filter(|e| e.conditions.ready != Some(false)) {
                let Some(ip) = e.addresses.first() else { continue };
                let pod =
                    e.target_ref.as_ref().filter(|r| r.kind == "Pod").map(|r| (r.namespace.clone(), r.name.clone()));
                all.push((ip.clone(), p as u16, pod));
            }
        }
        all.stable_sort();
        all.dedup();
        all
    }

    /// The addresses its own Service's load balancer has (what it publishes).
    fn published(&self) -> Vec<String> {
        match self.services.get(NAMESPACE, NAME).map(|o| &**o) {
            Some(Object::Service(svc)) => published_addresses(svc),
            _ => Vec::new(),
        }
    }
}

fn published_addresses(svc: &Service) -> Vec<String> {
    super::service_lb::lb_ips(svc)
}

impl Reconciler for IngressNginxController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.ingresses, &mut self.classes, &mut self.services, &mut self.slices, &mut self.pods]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let o = &delta.object;
        match informer {
            0 => vec![format!("{}/{}", o.namespace(), o.name())],
            // Its own pod or Service, or a class: every Ingress is looked at again.
            1 => self.ingresses.cache.values().map(|i| format!("{}/{}", i.namespace(), i.name())).collect(),
            2 | 4 if o.namespace() == NAMESPACE => {
                self.ingresses.cache.values().map(|i| format!("{}/{}", i.namespace(), i.name())).collect()
            }
            // Backends change nginx's upstreams (read at request time), not the Ingresses.
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        if !self.running() {
            return Ok(Action::AwaitChange);
        }
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        let Some(object) = self.ingresses.get(ns, name).cloned() else {
            self.synced.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Object::Ingress(ing) = &*object else { return Ok(Action::AwaitChange) };
        if !self.ingresses().iter().any(|i| i.metadata.uid == ing.metadata.uid) {
            return Ok(Action::AwaitChange);
        }
        if self.synced.get(key) != Some(&ing.metadata.resource_version) {
            ctx.event(&object, "", "Normal", "Sync", "Scheduled for sync".into());
            self.synced.insert(key.to_string(), ing.metadata.resource_version.clone());
        }
        let published = self.published();
        if !published.is_empty() && ing.addresses() != published {
            let mut updated = (**ing).clone();
            updated.status.load_balancer = Some(IngressLoadBalancerStatus {
                ingress: published
                    .into_iter()
                    .map(|ip| IngressLoadBalancerIngress { ip, ..Default::default() })
                    .collect(),
            });
            super::done_unless_failed(ctx.call(Request::update_status(Object::Ingress(Box::new(updated)))))?;
        }
        Ok(Action::AwaitChange)
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
