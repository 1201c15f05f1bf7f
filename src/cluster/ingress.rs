//! Requests to ingress-nginx as they cross the cluster: a `type: LoadBalancer` Service's
//! external address (the simulated cloud's load balancer) leads to the Service's ClusterIP
//! rules, and a request that reaches an ingress-nginx pod is routed by its controller's view
//! of the Ingresses — Host header and path — to one of the backend Service's ready endpoints,
//! or answered by nginx itself: 404 from the default backend when no rule matches, 503 when
//! the backend has no endpoints, 502 when the endpoint does not answer.

use super::Cluster;
use crate::controllers::ingress_nginx::{IngressNginxController, Route};
use crate::proxy::CurlResult;
use crate::sim::Rng;

impl Cluster {
    /// Adds the cloud's service controller (the load balancers) and ingress-nginx's
    /// controller, which does its work only while its pods run.
    pub(super) fn add_ingress_components(&mut self) {
        use crate::controllers::ControllerLoop;
        use crate::controllers::{ingress_nginx, service_lb};
        let cloud = Box::new(ControllerLoop::new(service_lb::ServiceLbController::default()));
        let name = "cloud-controller-manager";
        let role = super::Role::Controller { name: name.into() };
        self.add_component(
            name,
            "system:serviceaccount:kube-system:cloud-controller-manager",
            role,
            cloud,
            "service-controller",
            "",
        );
        let nginx = Box::new(ControllerLoop::new(ingress_nginx::IngressNginxController::default()));
        let role = super::Role::Controller { name: ingress_nginx::NAME.into() };
        self.add_component(ingress_nginx::NAME, ingress_nginx::USER, role, nginx, ingress_nginx::SOURCE, "");
    }

    /// ingress-nginx's controller loop (where its routes and upstreams live).
    pub fn ingress_controller(&self) -> Option<&IngressNginxController> {
        self.slots.iter().find_map(|s| {
            let looped = s.component.as_ref()?.as_any().downcast_ref::<crate::controllers::ControllerLoop>()?;
            looped.reconciler.as_any()?.downcast_ref::<IngressNginxController>()
        })
    }
}

/// What an ingress-nginx pod (`pod`, at `pod_ip`) answers to `GET path` for `host`, sent on
/// from `node`.
pub fn serve(
    cluster: &Cluster,
    pod: &str,
    pod_ip: &str,
    host: &str,
    path: &str,
    node: &str,
    rng: &mut Rng,
) -> CurlResult {
    let nginx = format!("from ingress-nginx pod {pod} ({pod_ip})");
    let answer = |status: &str, why: String| CurlResult {
        stdout: format!("HTTP/1.1 {status} {nginx}: {why}\n"),
        ..Default::default()
    };
    let Some(controller) = cluster.ingress_controller() else {
        return answer("404 Not Found", "default backend".into());
    };
    let (namespace, service, port, ingress) = match controller.route(host, path) {
        Route::DefaultBackend => {
            return answer("404 Not Found", format!("no rule for host \"{host}\" path \"{path}\" (default backend)"));
        }
        Route::Service { namespace, service, port, ingress } => (namespace, service, port, ingress),
    };
    let upstreams = controller.upstreams(&namespace, &service, &port);
    if upstreams.is_empty() {
        return answer(
            "503 Service Temporarily Unavailable",
            format!("no endpoints for service {namespace}/{service}:{} (ingress {ingress})", port.text()),
        );
    }
    let (ip, target_port, _) = &upstreams[rng.below(upstreams.len() as u64) as usize];
    let url = format!("http://{ip}:{target_port}{path}");
    let reply = super::network::curl(cluster, &url, node, &namespace, false, rng);
    if reply.code != 0 {
        return answer("502 Bad Gateway", format!("upstream {ip}:{target_port} failed (ingress {ingress})"));
    }
    CurlResult { stdout: format!("{} via ingress {ingress} ({nginx})\n", reply.stdout.trim_end()), ..reply }
}

/// The page nginx answers with itself, for an ingress-nginx summary line that is not a
/// backend's answer: (status code, status text, body).
pub fn nginx_page(summary: &str) -> Option<(u16, String, String)> {
    let rest = summary.strip_prefix("HTTP/1.1 ")?;
    if !rest.contains(" from ingress-nginx pod ") || rest.contains(" from pod ") {
        return None;
    }
    let (status, _) = rest.split_once(" from ingress-nginx pod ")?;
    let code: u16 = status.split(' ').next()?.parse().ok()?;
    let body = format!(
        "<html>\n<head><title>{status}</title></head>\n<body>\n<center><h1>{status}</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n"
    );
    Some((code, status.to_string(), body))
}
