//! The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins: for each webhook of
//! the Mutating/ValidatingWebhookConfigurations (in name order) whose rules and selectors take
//! in the request, the API server sends an AdmissionReview to the webhook's Service — resolved
//! through its own view of the Service and its Endpoints to one ready pod — and acts on the
//! answer: a refusal ends the request, a mutating webhook's JSONPatch changes the object,
//! warnings go back to the client. A call that fails (no Service, no ready endpoint, nothing
//! listening, no answer within `timeoutSeconds`) refuses the request under `failurePolicy:
//! Fail` and is passed over under `Ignore`.
//!
//! What a pod answers is what its program does, which the API server does not know: the
//! cluster installs a [`PodCall`] (the network between them, as `MetricsBackend` is the
//! connection to metrics-server), through which the catalog's `kubeloop/admission-webhook`
//! answers by the rules its flags set.

use super::Status;
use super::admission_policy::{self, Attributes};
use crate::api::admission_policy::MatchResources;
use crate::api::admission_webhook::Webhook;
use crate::api::{Kind, Object, Pod};
use crate::etcd::Etcd;
use crate::etcd::lookup_key::LookupKey;
use serde_json::Value;

/// A webhook's answer to one AdmissionReview: the AdmissionResponse's fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReviewAnswer {
    pub allowed: bool,
    pub message: String,
    /// JSONPatch operations (mutating webhooks), empty when none.
    pub patch: Vec<Value>,
    pub warnings: Vec<String>,
}

/// What a pod's program made of a POST: its answer after `delay` seconds (`None`: it does not
/// serve that path, a 404).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodReply {
    pub delay: u64,
    pub answer: Option<ReviewAnswer>,
}

/// How the API server reaches a pod: (pod, its IP, port, path, the object) → the reply, or
/// the connection's error.
pub type PodCall = fn(&crate::api::Pod, &str, i32, &str, &Value) -> Result<PodReply, String>;

/// What a webhook call goes through: the API server's store (Services, Endpoints, pods) and
/// the network to the pods, if the cluster installed one.
#[derive(Clone, Copy)]
pub struct Net<'a> {
    pub etcd: &'a Etcd,
    pub pods: Option<PodCall>,
}

/// What the webhooks in force made of an allowed request.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    /// For the client (`Warning: …`).
    pub warnings: Vec<String>,
    /// For the record: each call, where it went, and what came back.
    pub notes: Vec<String>,
    /// How long the calls kept the request waiting: each webhook's answer time, a call that
    /// timed out its whole `timeoutSeconds`.
    pub waited: crate::sim::Duration,
}

/// Calls the mutating webhooks that concern the request, applying their patches to `object`
/// in turn. `attrs.object` is not read: each webhook sees the object as the ones before left it.
pub fn mutate(api: Net, attrs: &Attributes, object: &mut Object) -> Result<Verdict, (Status, Verdict)> {
    let mut verdict = Verdict::default();
    for hook in webhooks(api.etcd, true) {
        let current = Attributes { object: Some(&*object), ..*attrs };
        let Some(answer) = call(api, &hook, &current, "MutatingAdmissionWebhook", &mut verdict)? else { continue };
        if answer.patch.is_empty() {
            continue;
        }
        let live = object.to_json_value();
        let patched = super::patch::json_patch(&live, &Value::Array(answer.patch.clone()))
            .and_then(|v| Object::decode(attrs.kind, &v).map_err(|e| e.message));
        match patched {
            Ok(mut new) => {
                super::admission::default_object(&mut new);
                *object = new;
                let ops: Vec<String> = answer
                    .patch
                    .iter()
                    .map(|op| format!("{} {}", op["op"].as_str().unwrap_or(""), op["path"].as_str().unwrap_or("")))
                    .collect();
                verdict.notes.push(format!("MutatingAdmissionWebhook \"{}\" patched: {}", hook.name, ops.join(", ")));
            }
            Err(why) => {
                let status = Status::internal(format!(
                    "Internal error occurred: JSON Patch of webhook \"{}\": {why}",
                    hook.name
                ));
                return Err((Status { reason: "InternalError", ..status }, verdict));
            }
        }
    }
    Ok(verdict)
}

/// Calls the validating webhooks that concern the request: the first refusal, or the
/// warnings they sent.
pub fn validate(api: Net, attrs: &Attributes) -> Result<Verdict, (Status, Verdict)> {
    let mut verdict = Verdict::default();
    for hook in webhooks(api.etcd, false) {
        call(api, &hook, attrs, "ValidatingAdmissionWebhook", &mut verdict)?;
    }
    Ok(verdict)
}

/// The webhooks of every configuration of one sort, configurations in name order.
fn webhooks(etcd: &Etcd, mutating: bool) -> Vec<Webhook> {
    let prefix = if mutating {
        "/registry/mutatingwebhookconfigurations/"
    } else {
        "/registry/validatingwebhookconfigurations/"
    };
    if !etcd.any_under(prefix) {
        return Vec::new();
    }
    etcd.range(prefix)
        .flat_map(|(_, kv)| match &*kv.value {
            Object::MutatingWebhookConfiguration(c) => c.webhooks.clone(),
            Object::ValidatingWebhookConfiguration(c) => c.webhooks.clone(),
            _ => Vec::new(),
        })
        .collect()
}

/// Whether the webhook is called for the request: its rules and selectors. (The webhook
/// configurations themselves are never sent to webhooks, so a broken one can be removed.)
fn concerns(etcd: &Etcd, hook: &Webhook, attrs: &Attributes) -> bool {
    if matches!(attrs.kind, Kind::ValidatingWebhookConfiguration | Kind::MutatingWebhookConfiguration) {
        return false;
    }
    let resources = MatchResources {
        namespace_selector: hook.namespace_selector.clone(),
        object_selector: hook.object_selector.clone(),
        resource_rules: hook.rules.clone(),
        exclude_resource_rules: Vec::new(),
        match_policy: hook.match_policy.clone(),
    };
    admission_policy::matches(&resources, attrs, admission_policy::namespace_object(etcd, attrs), true)
}

/// One call: `Ok(Some(answer))` when the webhook allowed the request, `Ok(None)` when it was
/// not called or its failure was ignored, `Err` when it refused or failed closed.
fn call(
    api: Net,
    hook: &Webhook,
    attrs: &Attributes,
    plugin: &str,
    verdict: &mut Verdict,
) -> Result<Option<ReviewAnswer>, (Status, Verdict)> {
    if !concerns(api.etcd, hook, attrs) {
        return Ok(None);
    }
    let (url, target) = reach(api.etcd, hook);
    let answer = target.and_then(|(pod, ip, port, path)| {
        let at = format!("{}/{} ({ip}:{port})", pod.metadata.namespace, pod.metadata.name);
        verdict.notes.push(format!("{plugin} \"{}\": POST {url} → pod {at}", hook.name));
        let object = attrs.object.or(attrs.old_object).map_or(Value::Null, Object::to_json_value);
        let Some(network) = api.pods else { return Err(format!("dial tcp {ip}:{port}: connect: connection refused")) };
        let reply = network(&pod, &ip, port, &path, &object)?;
        let timeout = hook.timeout().max(0) as u64;
        // The API server waits for the answer, at most the webhook's timeout.
        verdict.waited = verdict.waited + crate::sim::Duration::seconds(reply.delay.min(timeout));
        if reply.delay >= timeout {
            return Err("context deadline exceeded".to_string());
        }
        reply.answer.ok_or_else(|| "the server could not find the requested resource".to_string())
    });
    let answer = match answer {
        Ok(answer) => answer,
        Err(why) => {
            let error = format!("failed calling webhook \"{}\": failed to call webhook: ", hook.name);
            // Errors of the HTTP exchange name the URL; an HTTP answer that is not a review does not.
            let error = if why.starts_with("the server") {
                format!("{error}{why}")
            } else {
                format!("{error}Post \"{url}\": {why}")
            };
            if !hook.fails_closed() {
                verdict.notes.push(format!("{plugin}: {error}; failurePolicy is Ignore: the request goes on"));
                return Ok(None);
            }
            verdict.notes.push(format!("{plugin}: {error}; failurePolicy is Fail: the request is refused"));
            let status = Status::new(500, "InternalError", format!("Internal error occurred: {error}"));
            return Err((status, std::mem::take(verdict)));
        }
    };
    verdict.warnings.extend(answer.warnings.iter().cloned());
    if !answer.allowed {
        verdict.notes.push(format!("{plugin} \"{}\" denied the request: {}", hook.name, answer.message));
        let denied = format!("admission webhook \"{}\" denied the request", hook.name);
        let message = if answer.message.is_empty() {
            format!("{denied} without explanation")
        } else {
            format!("{denied}: {}", answer.message)
        };
        // A refusal with no code of its own is a 400 with no reason.
        return Err((Status::new(400, "", message), std::mem::take(verdict)));
    }
    verdict.notes.push(format!("{plugin} \"{}\" allowed the request", hook.name));
    Ok(Some(answer))
}

/// Where the API server posts: the URL, and the pod that answers there (its IP, the target
/// port, the path asked); or why nothing can be reached.
#[allow(clippy::type_complexity)]
fn reach(etcd: &Etcd, hook: &Webhook) -> (String, Result<(Pod, String, i32, String), String>) {
    let timeout = format!("?timeout={}s", hook.timeout());
    let config = &hook.client_config;
    let (namespace, name, port, url, path) = match (&config.service, &config.url) {
        (Some(s), _) => {
            let port = s.port.unwrap_or(443);
            // The client posts to `/` when the configuration names no path.
            let path = s.path.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| "/".into());
            let url = format!("https://{}.{}.svc:{port}{path}{timeout}", s.name, s.namespace);
            (s.namespace.clone(), s.name.clone(), port, url, path)
        }
        (None, Some(url)) => {
            let rest = url.strip_prefix("https://").unwrap_or(url);
            let (host, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
            let (host_name, port) =
                host.rsplit_once(':').and_then(|(h, p)| Some((h, p.parse().ok()?))).unwrap_or((host, 443));
            let full = format!("{url}{timeout}");
            // The API server resolves a Service's DNS name; anything else is outside the sandbox.
            match host_name.split('.').collect::<Vec<_>>().as_slice() {
                [svc, ns, "svc", ..] => (ns.to_string(), svc.to_string(), port, full, path),
                _ => return (full, Err(format!("dial tcp: lookup {host_name}: no such host"))),
            }
        }
        (None, None) => return (String::new(), Err("no client config".into())),
    };
    let found = resolve(etcd, &namespace, &name, port).map(|(pod, ip, target)| (pod, ip, target, path));
    (url, found)
}

/// The Service's first ready endpoint for `port`: the pod behind it, its IP and target port.
fn resolve(etcd: &Etcd, namespace: &str, name: &str, port: i32) -> Result<(Pod, String, i32), String> {
    let Some(Object::Service(service)) = etcd.get(&LookupKey::etcd("services", namespace, name)).map(|kv| &*kv.value)
    else {
        return Err(format!("service \"{name}\" not found"));
    };
    let Some(service_port) = service.spec.ports.iter().find(|p| p.port == port) else {
        return Err(format!("no service port {port} found for service \"{name}\""));
    };
    let no_endpoints = || format!("no endpoints available for service \"{name}\"");
    let Some(Object::Endpoints(endpoints)) =
        etcd.get(&LookupKey::etcd("endpoints", namespace, name)).map(|kv| &*kv.value)
    else {
        return Err(no_endpoints());
    };
    let ready = endpoints.subsets.iter().find_map(|subset| {
        let target = subset
            .ports
            .iter()
            .find(|p| p.name == service_port.name || subset.ports.len() == 1)
            .and_then(|p| p.port)?;
        subset.addresses.first().map(|address| (address, target))
    });
    let Some((address, target)) = ready else { return Err(no_endpoints()) };
    let pod = address.target_ref.as_ref().and_then(|r| etcd.get(&LookupKey::etcd("pods", &r.namespace, &r.name)));
    match pod.map(|kv| &*kv.value) {
        Some(Object::Pod(pod)) => Ok((pod.clone(), address.ip.clone(), target)),
        _ => Err(format!("dial tcp {}:{target}: connect: connection refused", address.ip)),
    }
}

impl super::ApiServer {
    /// The webhook admission plugin of one phase on a write: Mutating (with `mutating`, which
    /// may change the object) or Validating. Each call and its outcome is recorded as a step of
    /// the request; warnings are kept for the person at kubectl.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn call_webhooks(
        &mut self,
        req: &super::Request,
        operation: &'static str,
        mutating: Option<&mut Object>,
        object: Option<&Object>,
        old: Option<&Object>,
        env: &mut super::Env,
        seq: crate::record::Seq,
    ) -> super::StageResult<()> {
        use crate::record::{ComponentId, Happening, Stage};
        let prefixes = ["/registry/mutatingwebhookconfigurations/", "/registry/validatingwebhookconfigurations/"];
        if !self.etcd.any_under(prefixes[usize::from(mutating.is_none())]) {
            return Ok(());
        }
        let no_groups = Vec::new();
        let (user, groups) = match &env.identity {
            Some(who) => (who.user.clone(), who.groups.clone()),
            None => (env.user.to_string(), no_groups),
        };
        let subresource = match req.subresource {
            Some(super::Subresource::Status) => "status",
            Some(super::Subresource::Scale) => "scale",
            _ => "",
        };
        let seen = mutating.as_deref().or(object).or(old);
        let name = seen.map_or(req.name.clone(), |o| o.name().to_string());
        let namespace = seen.map_or(req.namespace.clone(), |o| o.namespace().to_string());
        let attrs = Attributes {
            operation,
            kind: req.kind,
            subresource,
            namespace: &namespace,
            name: &name,
            object,
            old_object: old,
            user: &user,
            groups: &groups,
            dry_run: req.dry_run,
        };
        let (stage, phase) = match mutating {
            Some(_) => (Stage::MutatingAdmission, "mutating admission"),
            None => (Stage::ValidatingAdmission, "validating admission"),
        };
        let result = match mutating {
            Some(target) => mutate(Net { etcd: &self.etcd, pods: self.webhook_network }, &attrs, target),
            None => validate(Net { etcd: &self.etcd, pods: self.webhook_network }, &attrs),
        };
        let (verdict, refusal) = match result {
            Ok(verdict) => (verdict, None),
            Err((status, verdict)) => (verdict, Some(status)),
        };
        self.request_wait = self.request_wait + verdict.waited;
        if env.record.enabled {
            for text in verdict.notes {
                let what = Happening::Decision { text: format!("{phase}: {text}") };
                env.record.push(env.now, self.etcd.revision(), ComponentId::API_SERVER, Some(seq), what);
            }
        }
        if env.actor == ComponentId::USER {
            self.warnings.extend(verdict.warnings);
        }
        match refusal {
            Some(status) => Err((stage, status)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::record::{Happening, Stage};
    use crate::shell::Session;

    const SERVER: &str = "kubectl create namespace webhooks
kubectl apply -n webhooks -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: policy}
spec:
  selector: {matchLabels: {app: policy}}
  template:
    metadata: {labels: {app: policy}}
    spec: {containers: [{name: w, image: 'kubeloop/admission-webhook:1.0', args: [ARGS]}]}
---
apiVersion: v1
kind: Service
metadata: {name: policy}
spec: {selector: {app: policy}, ports: [{port: 443, targetPort: 8443}]}
EOF
sleep 20s
";

    const CONFIG: &str = "kubectl apply -f - <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: KIND
metadata: {name: hook}
webhooks:
- name: hook.policy.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: FAILURE
  clientConfig: {service: {namespace: webhooks, name: policy, path: PATH}}
  rules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: default}}
EOF
";

    fn session(args: &str, kind: &str, path: &str, failure: &str) -> Session {
        let mut s = Session::new(1);
        s.transcript(&SERVER.replace("ARGS", args));
        let config = CONFIG.replace("KIND", kind).replace("PATH", path).replace("FAILURE", failure);
        let out = s.transcript(&config);
        assert!(out.contains("hook created"), "{out}");
        s
    }

    /// The stage that refused the last create, and the API server's steps of that request.
    fn last_create(s: &Session) -> (Option<Stage>, Vec<String>) {
        let entries: Vec<_> = s.cluster.record.entries().collect();
        let Some(request) = entries.iter().rev().find(|e| matches!(e.what, Happening::Request { verb: "create", .. }))
        else {
            return (None, Vec::new());
        };
        let Happening::Request { failed_at, .. } = &request.what else { unreachable!() };
        let steps = entries
            .iter()
            .filter(|e| e.cause == Some(request.seq))
            .filter_map(|e| match &e.what {
                Happening::Decision { text } => Some(text.clone()),
                _ => None,
            })
            .collect();
        (*failed_at, steps)
    }

    #[test]
    fn a_validating_webhook_refuses_a_pod_and_the_call_is_a_step_of_the_request() {
        let mut s = session("'--require-label=team'", "ValidatingWebhookConfiguration", "/validate", "Fail");
        let out = s.transcript("kubectl run web --image=nginx\n");
        let denied = "Error from server: admission webhook \"hook.policy.example.com\" denied the request: missing required label \"team\"";
        assert!(out.contains(denied), "{out}");
        let (stage, steps) = last_create(&s);
        assert_eq!(stage, Some(Stage::ValidatingAdmission));
        let call = "validating admission: ValidatingAdmissionWebhook \"hook.policy.example.com\": POST https://policy.webhooks.svc:443/validate?timeout=10s → pod webhooks/policy-";
        assert!(steps[0].starts_with(call), "{steps:?}");
        assert!(s.transcript("kubectl run ok --image=nginx --labels=team=a\n").contains("pod/ok created"));
    }

    #[test]
    fn a_mutating_webhooks_patch_is_in_the_stored_object() {
        let mut s = session("'--add-annotation=checked=yes'", "MutatingWebhookConfiguration", "/mutate", "Fail");
        s.transcript("kubectl run web --image=nginx\n");
        let (_, steps) = last_create(&s);
        assert!(steps.iter().any(|t| t.ends_with("patched: add /metadata/annotations")), "{steps:?}");
        let out = s.transcript("kubectl get pod web -o jsonpath={.metadata.annotations.checked}\n");
        assert!(out.contains("yes"), "{out}");
    }

    #[test]
    fn a_webhook_without_endpoints_fails_closed_or_is_ignored_as_its_policy_says() {
        let error = "Error from server (InternalError): Internal error occurred: failed calling webhook \"hook.policy.example.com\": failed to call webhook: Post \"https://policy.webhooks.svc:443/validate?timeout=10s\": no endpoints available for service \"policy\"";
        for (failure, refused) in [("Fail", true), ("Ignore", false)] {
            let mut s = session("'--require-label=team'", "ValidatingWebhookConfiguration", "/validate", failure);
            s.transcript("kubectl scale -n webhooks deployment policy --replicas=0\nsleep 40s\n");
            let out = s.transcript("kubectl run web --image=nginx\n");
            assert_eq!(out.contains(error), refused, "{out}");
            assert_eq!(out.contains("pod/web created"), !refused, "{out}");
        }
    }

    #[test]
    fn a_webhook_slower_than_its_timeout_is_a_deadline_exceeded() {
        let mut s = session("'--delay=15s'", "ValidatingWebhookConfiguration", "/validate", "Fail");
        let out = s.transcript("kubectl run web --image=nginx\n");
        assert!(out.contains("/validate?timeout=10s\": context deadline exceeded"), "{out}");
    }

    #[test]
    fn kubectl_waits_out_a_webhooks_timeout_while_the_cluster_runs_on() {
        let mut s = session("'--delay=15s'", "ValidatingWebhookConfiguration", "/validate", "Fail");
        let before = s.cluster.now();
        s.transcript("kubectl create deployment other --image=nginx -n webhooks\n");
        let out = s.transcript("kubectl run web --image=nginx\n");
        assert!(out.contains("context deadline exceeded"), "{out}");
        assert_eq!(s.cluster.now().since(before), crate::sim::Duration::seconds(10), "the default timeoutSeconds");
        // The cluster went on meanwhile: the Deployment created just before has its pod.
        let pods = s.transcript("kubectl get pods -n webhooks -l app=other -o name\n");
        assert!(pods.contains("\npod/other-"), "{pods}");
    }

    #[test]
    fn a_webhook_that_answers_in_time_takes_as_long_as_it_answers_in() {
        let mut s =
            session("'--delay=3s', '--require-label=team'", "ValidatingWebhookConfiguration", "/validate", "Fail");
        let before = s.cluster.now();
        let out = s.transcript("kubectl run ok --image=nginx --labels=team=a\n");
        assert!(out.contains("pod/ok created"), "{out}");
        assert_eq!(s.cluster.now().since(before), crate::sim::Duration::seconds(3));
    }

    #[test]
    fn a_path_the_server_does_not_serve_fails_the_call() {
        let mut s = session("", "ValidatingWebhookConfiguration", "/nowhere", "Fail");
        let out = s.transcript("kubectl run web --image=nginx\n");
        assert!(out.contains("failed to call webhook: the server could not find the requested resource"), "{out}");
    }
}
