//! The cloud's load balancers for `type: LoadBalancer` Services, as cloud-controller-manager's
//! service controller provides them (on kind, cloud-provider-kind): for each such Service it
//! reports `EnsuringLoadBalancer`, the simulated cloud takes a few seconds to make one, then
//! the Service's `status.loadBalancer.ingress[].ip` — kubectl's EXTERNAL-IP, `<pending>`
//! until then — is written and `EnsuredLoadBalancer` reported. A Service no longer of that
//! type loses its load balancer. Addresses come from the node network's range, lowest free.

use super::{Action, Reconciler, Synced};
use crate::api::{Kind, Object, Service};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer};
use crate::sim::{Duration, Time};
use crate::util::json_macro::json;
use std::collections::BTreeMap;

/// How long the simulated cloud takes to bring a load balancer up.
pub const PROVISION_DELAY: Duration = Duration::seconds(4);
/// The first address the cloud hands out (on kind's `kind` docker network, past the nodes').
pub const FIRST_ADDRESS: (u8, u8, u8, u8) = (172, 18, 0, 200);
/// How many addresses the range holds.
const POOL_SIZE: u8 = 50;

pub struct ServiceLbController {
    services: Informer,
    /// Services whose load balancer is being made: since when.
    ensuring: BTreeMap<String, Time>,
}

impl Default for ServiceLbController {
    fn default() -> Self {
        ServiceLbController { services: Informer::new(Kind::Service), ensuring: BTreeMap::new() }
    }
}

impl ServiceLbController {
    fn informer(&self) -> &Informer {
        &self.services
    }

    /// The load balancer addresses Services hold now.
    fn used(&self) -> Vec<String> {
        self.informer()
            .cache
            .values()
            .filter_map(|o| if let Object::Service(s) = &**o { Some(lb_ips(s)) } else { None })
            .flatten()
            .collect()
    }

    fn next_free(&self) -> Option<String> {
        let used = self.used();
        let (a, b, c, d) = FIRST_ADDRESS;
        (0..POOL_SIZE).map(|i| format!("{a}.{b}.{c}.{}", d + i)).find(|ip| !used.contains(ip))
    }
}

/// The addresses a Service's load balancer status lists.
pub fn lb_ips(svc: &Service) -> Vec<String> {
    let Some(lb) = &svc.status.load_balancer else { return Vec::new() };
    lb.get("ingress")
        .and_then(|i| i.as_array())
        .map(|list| list.iter().filter_map(|i| i.get("ip").and_then(|v| v.as_str()).map(String::from)).collect())
        .unwrap_or_default()
}

fn is_load_balancer(svc: &Service) -> bool {
    svc.spec.type_.as_deref() == Some("LoadBalancer") && svc.spec.load_balancer_class.is_none()
}

impl Reconciler for ServiceLbController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.services]
    }

    fn keys_for(&mut self, _informer: usize, delta: &Delta) -> Vec<String> {
        vec![format!("{}/{}", delta.object.namespace(), delta.object.name())]
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        let Some(object) = self.informer().get(ns, name).cloned() else {
            self.ensuring.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Object::Service(svc) = &*object else { return Ok(Action::AwaitChange) };
        let has_lb = !lb_ips(svc).is_empty();
        if svc.metadata.deletion_timestamp.is_some() {
            self.ensuring.remove(key);
            return Ok(Action::AwaitChange);
        }
        if !is_load_balancer(svc) {
            self.ensuring.remove(key);
            if has_lb {
                ctx.event(&object, "", "Normal", "DeletingLoadBalancer", "Deleting load balancer".into());
                let mut cleared = (**svc).clone();
                cleared.status.load_balancer = Some(json!({}));
                ctx.call_object(Request::update_status(Object::Service(Box::new(cleared))))?;
                ctx.event(&object, "", "Normal", "DeletedLoadBalancer", "Deleted load balancer".into());
            }
            return Ok(Action::AwaitChange);
        }
        if has_lb {
            self.ensuring.remove(key);
            return Ok(Action::AwaitChange);
        }
        let Some(&since) = self.ensuring.get(key) else {
            ctx.event(&object, "", "Normal", "EnsuringLoadBalancer", "Ensuring load balancer".into());
            self.ensuring.insert(key.to_string(), ctx.now);
            return Ok(Action::RequeueAfter(PROVISION_DELAY));
        };
        let ready_at = since + PROVISION_DELAY;
        if ctx.now < ready_at {
            return Ok(Action::RequeueAfter(ready_at.since(ctx.now)));
        }
        let Some(ip) = self.next_free() else {
            ctx.event(
                &object,
                "",
                "Warning",
                "SyncLoadBalancerFailed",
                "Error syncing load balancer: failed to ensure load balancer: no addresses left in the pool".into(),
            );
            return Ok(Action::RequeueAfter(Duration::seconds(60)));
        };
        let mut updated = (**svc).clone();
        updated.status.load_balancer = Some(json!({"ingress": [{"ip": ip, "ipMode": "Proxy"}]}));
        let stored = ctx.call_object(Request::update_status(Object::Service(Box::new(updated))))?;
        self.services.assume(stored);
        self.ensuring.remove(key);
        ctx.event(&object, "", "Normal", "EnsuredLoadBalancer", "Ensured load balancer".into());
        Ok(Action::AwaitChange)
    }
}
