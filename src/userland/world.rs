//! What a container's programs can reach beyond the container: the clock, the kubelets
//! running pods (what is mounted, what listens where), the cluster's DNS and network, and the
//! API server over HTTPS. The cluster provides it; the userland never holds the cluster.

use crate::apiserver::http::Answer;
use crate::dns::Network;
use crate::kubelet::Kubelet;
use crate::proxy::CurlResult;
use crate::record::Seq;
use crate::sim::{Rng, Time};

pub trait World {
    /// The virtual time.
    fn now(&self) -> Time;
    /// The sandbox's seed, for the streams of chance a lookup or request draws from.
    fn seed(&self) -> u64;
    /// The record's latest entry, to name those streams.
    fn last_seq(&self) -> Seq;
    /// The kubelet running on `node`.
    fn kubelet(&self, node: &str) -> Option<&Kubelet>;
    /// Every node's kubelet.
    fn kubelets(&self) -> Vec<&Kubelet>;
    /// The path a pod's DNS query takes (see [`crate::dns::network`]).
    fn dns(&self) -> &Network;
    /// One HTTP(S) request from a pod in `namespace` on `node`, across the cluster's network.
    fn curl(&self, url: &str, node: &str, namespace: &str, insecure: bool, rng: &mut Rng) -> CurlResult;
    /// One HTTP(S) request from `pod`, across the cluster's network as its CNI plugin's rules
    /// let it through.
    fn curl_from_pod(
        &self,
        pod: &crate::api::Pod,
        url: &str,
        host: Option<&str>,
        insecure: bool,
        rng: &mut Rng,
    ) -> CurlResult {
        self.curl_with_host(url, host, &pod.spec.node_name, &pod.metadata.namespace, insecure, rng)
    }
    /// Whether the pod network carries a DNS query from `pod` to `server`.
    fn dns_allowed(&self, _pod: &crate::api::Pod, _server: &str) -> bool {
        true
    }
    /// The same request with a `Host:` header of its own (`curl -H 'Host: …'`).
    fn curl_with_host(
        &self,
        url: &str,
        host: Option<&str>,
        node: &str,
        namespace: &str,
        insecure: bool,
        rng: &mut Rng,
    ) -> CurlResult {
        let _ = host;
        self.curl(url, node, namespace, insecure, rng)
    }
    /// The API server's answer to `method path` over HTTPS, with a service account's token.
    fn answer_http(&self, method: &str, path: &str, token: Option<&str>) -> Answer;
    /// `etcdctl ARGS…` run in the etcd pod: the store, read through the API server's
    /// read-only handle (what the sandbox's own `etcdctl` reads): stdout, stderr, exit code.
    fn etcdctl(&self, args: &[String]) -> (String, String, i32);
}
