//! CoreDNS's `kubernetes` plugin, the server behind the `kube-dns` Service: it lists and
//! watches Services and EndpointSlices through the API (as the `system:coredns` ClusterRole
//! lets it) and answers every query from its own caches, indexed by name. So it answers what
//! it last heard: while the API server or etcd is down it goes on answering from its caches
//! (nothing new can be created meanwhile), and a change reaches its answers a watch
//! notification after the API accepted it.
//!
//! One component stands for CoreDNS's server processes, not one per replica: every replica
//! lists and watches the same objects, so their caches agree but for a notification's
//! latency, and which replica a query reaches (kube-proxy's choice, see
//! [`super::network`]) would not change its answer. What replicas decide here is only whether
//! a query is answered at all: with none ready, lookups time out. (A replica started later
//! lists afresh; this one component keeps its caches across a scale to zero and back, which
//! answers the same once its watches have caught up.) Namespaces are not watched: the plugin
//! needs them only for `pods verified` and namespace-exposure options this cluster's Corefile
//! does not use.

use super::network::Network;
use crate::api::Kind;
use crate::client::component::{Component, Ctx, Informer};
use crate::sim::Time;
use std::any::Any;

/// Who CoreDNS is to the API server: its pods' service account.
pub const USER: &str = "system:serviceaccount:kube-system:coredns";

pub struct CoreDns {
    services: Informer,
    slices: Informer,
    /// Where its answers are asked for.
    network: Network,
}

impl CoreDns {
    pub fn new(network: Network) -> CoreDns {
        CoreDns { services: Informer::new(Kind::Service), slices: Informer::new(Kind::EndpointSlice), network }
    }

    /// How many Services and EndpointSlices it knows of (for views).
    pub fn known(&self) -> (usize, usize) {
        (self.services.cache.len(), self.slices.cache.len())
    }
}

impl Component for CoreDns {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        let _ = self.services.start(ctx);
        let _ = self.slices.start(ctx);
        let mut zone = self.network.zone_mut();
        zone.clear();
        for (_, object) in self.services.cache.iter().chain(self.slices.cache.iter()) {
            zone.apply(crate::record::WatchEventType::Added, object, None);
        }
        None
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        let deltas = [self.services.sync(ctx), self.slices.sync(ctx)];
        let mut zone = self.network.zone_mut();
        for d in deltas.iter().flatten() {
            zone.apply(d.type_, &d.object, d.old.as_ref());
        }
        None
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn informers(&self) -> Vec<&Informer> {
        vec![&self.services, &self.slices]
    }
}

#[cfg(test)]
mod tests {
    use crate::api::well_known::KUBE_DNS_IP;
    use crate::dns::DnsError;
    use crate::shell::{Command, Session};
    use crate::sim::Duration;

    fn run(session: &mut Session, line: &str) -> String {
        let out = session.execute(&Command::new(line));
        format!("{}{}", out.stdout, out.stderr)
    }

    #[test]
    fn coredns_answers_from_what_its_watches_told_it_and_not_at_all_with_no_pod_ready() {
        let mut session = Session::new(1);
        session.cluster.settle(Duration::seconds(30));
        let web = |session: &Session| session.cluster.dns().resolve("worker-1", KUBE_DNS_IP, "web", "default");
        run(&mut session, "kubectl create service clusterip web --tcp=80");
        assert_eq!(web(&session), Err(DnsError::NxDomain), "the API has it; CoreDNS has not heard yet");
        session.cluster.advance(Duration::millis(10));
        let ip = web(&session).expect("heard through its watch");
        // Its list and watches are requests like any component's.
        let coredns = session.cluster.find_component(&crate::cluster::Role::CoreDns).expect("CoreDNS runs");
        let asked = session.cluster.record.entries().filter(|e| e.actor == coredns).count();
        assert_eq!(asked, 4, "LIST and WATCH of Services and EndpointSlices");
        run(&mut session, "kubectl -n kube-system scale deployment coredns --replicas=0");
        session.cluster.settle(Duration::minutes(2));
        assert_eq!(web(&session), Err(DnsError::Timeout));
        run(&mut session, "kubectl -n kube-system scale deployment coredns --replicas=2");
        session.cluster.settle(Duration::minutes(2));
        assert_eq!(web(&session).as_ref(), Ok(&ip));
        assert_eq!(session.cluster.check_invariants(true), Vec::<String>::new(), "its caches agree with the API");
        run(&mut session, "sim etcd stop");
        session.cluster.advance(Duration::seconds(30));
        assert_eq!(web(&session), Ok(ip), "from its caches while etcd is down");
    }
}
