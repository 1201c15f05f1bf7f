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
        let role = super::Role::AddOn { name: name.into() };
        self.add_component(
            name,
            "system:serviceaccount:kube-system:cloud-controller-manager",
            role,
            cloud,
            "service-controller",
            "",
        );
        let nginx = Box::new(ControllerLoop::new(ingress_nginx::IngressNginxController::default()));
        let role = super::Role::AddOn { name: ingress_nginx::NAME.into() };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Kind, Object};
    use crate::apiserver::Request;
    use crate::cluster::ClusterConfig;
    use crate::sim::Duration;

    fn apply(cluster: &mut Cluster, yaml: &str) {
        let value: serde_json::Value = crate::yaml::from_str(yaml).expect("yaml");
        let kind = Kind::ALL.iter().copied().find(|k| k.info().kind == value["kind"]).expect("kind");
        let mut object = Object::decode(kind, &value).expect("decodes");
        object.meta_mut().namespace = "default".into();
        cluster.request(Request::create(object)).expect("created");
    }

    fn cluster_with_an_ingress() -> Cluster {
        let mut cluster = Cluster::new(ClusterConfig { workers: 1, ..ClusterConfig::default() });
        apply(
            &mut cluster,
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  containers:\n  - name: web\n    image: nginx\n",
        );
        apply(
            &mut cluster,
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n",
        );
        apply(
            &mut cluster,
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: empty\nspec:\n  selector: {app: none}\n  ports:\n  - port: 80\n",
        );
        apply(
            &mut cluster,
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: demo\nspec:\n  rules:\n  - host: web.example\n    http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n          service:\n            name: web\n            port:\n              number: 80\n      - path: /down\n        pathType: Exact\n        backend:\n          service:\n            name: empty\n            port:\n              number: 80\n",
        );
        cluster.settle(Duration::seconds(60));
        cluster
    }

    #[test]
    fn the_ingress_gets_the_load_balancer_address_and_routes_by_host_and_path() {
        let cluster = cluster_with_an_ingress();
        let Some(Object::Ingress(ing)) = cluster.inspect().get(Kind::Ingress, "default", "demo").as_deref().cloned()
        else {
            panic!("no Ingress")
        };
        assert_eq!(ing.spec.ingress_class_name.as_deref(), Some("nginx"));
        assert_eq!(ing.addresses(), ["172.18.0.200"]);
        let mut rng = Rng::stream(1, "test");
        let mut ask = |host: &str, path: &str| {
            let url = format!("http://172.18.0.200{path}");
            super::super::network::curl_with_host(&cluster, &url, Some(host), "worker-1", "default", false, &mut rng)
                .stdout
        };
        assert!(ask("web.example", "/").starts_with("HTTP/1.1 200 OK from pod web "), "{}", ask("web.example", "/"));
        assert!(ask("other.example", "/").starts_with("HTTP/1.1 404 Not Found from ingress-nginx pod"));
        assert!(ask("web.example", "/down").starts_with("HTTP/1.1 503 Service Temporarily Unavailable"));
    }
}
