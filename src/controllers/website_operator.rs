//! An operator: the process in the `kubeloop/website-operator` image, which a student deploys
//! like any workload (its CRD and RBAC in the shell's home directory). While one of its pods
//! runs, it watches Websites (`example.kubeloop.dev/v1`, a custom resource) and the
//! Deployments and Services they own, and reconciles each Website into a Deployment of
//! `spec.replicas` pods of `spec.image` listening on `spec.port`, and a Service in front of
//! them — both owned by the Website, so deleting it cascades through the garbage collector —
//! then reports `status.readyReplicas` and a Ready condition through the status subresource.
//! It works only through the API, as its service account (RBAC applies).

use super::{Action, Reconciler, Synced};
use crate::api::{Kind, Object};
use crate::apiserver::{Request, Status};
use crate::client::component::{Ctx, Delta, Informer};
use crate::sim::Duration;
use crate::util::json_macro::json;
use serde_json::Value;
use std::sync::Arc;

/// The custom resource's group, version and kind.
pub const GROUP: &str = "example.kubeloop.dev";
pub const API_VERSION: &str = "example.kubeloop.dev/v1";
pub const KIND: &str = "Website";
/// The image whose process this is.
pub const IMAGE: &str = "kubeloop/website-operator";
/// The label on the pods the operator's Deployment makes (what tells its process is up).
pub const APP_LABEL: &str = "website-operator";
/// The field manager and event source it writes as.
pub const MANAGER: &str = "website-operator";
/// The label on what it makes, naming the Website.
const WEBSITE_LABEL: &str = "example.kubeloop.dev/website";
/// How often it looks again while it cannot watch (no CRD yet, or RBAC refuses it).
const RETRY: Duration = Duration::seconds(2);

pub struct WebsiteOperator {
    namespace: String,
    pods: Informer,
    deployments: Informer,
    services: Informer,
    websites: Option<Informer>,
    last: String,
}

impl WebsiteOperator {
    /// The operator whose pods run in `namespace`.
    pub fn new(namespace: &str) -> Self {
        WebsiteOperator {
            namespace: namespace.to_string(),
            pods: Informer::new(Kind::Pod).in_namespace(namespace),
            deployments: Informer::new(Kind::Deployment),
            services: Informer::new(Kind::Service),
            websites: None,
            last: String::new(),
        }
    }

    /// Whether one of its pods is Running (its process is up).
    pub fn running(&self) -> bool {
        self.pods.cache.values().any(|o| {
            o.as_pod().is_some_and(|p| {
                p.metadata.labels.get("app").is_some_and(|a| a == APP_LABEL)
                    && p.metadata.deletion_timestamp.is_none()
                    && p.status.phase == "Running"
            })
        })
    }

    /// The namespace its pods run in.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
}

/// The Website's wanted image, replicas and port.
fn wanted(spec: &Value) -> (String, i64, i64) {
    (
        spec["image"].as_str().unwrap_or("nginx").to_string(),
        spec["replicas"].as_i64().unwrap_or(1),
        spec["port"].as_i64().unwrap_or(80),
    )
}

fn owner_reference(website: &Object) -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND, "name": website.name(), "uid": website.meta().uid,
        "controller": true, "blockOwnerDeletion": true})
}

fn deployment_json(website: &Object, spec: &Value) -> Value {
    let (image, replicas, port) = wanted(spec);
    let name = website.name();
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": website.namespace(),
            "labels": {WEBSITE_LABEL: name}, "ownerReferences": [owner_reference(website)]},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {WEBSITE_LABEL: name}},
            "template": {"metadata": {"labels": {WEBSITE_LABEL: name}},
                "spec": {"containers": [{"name": "web", "image": image, "ports": [{"containerPort": port}]}]}}}})
}

fn service_json(website: &Object, spec: &Value) -> Value {
    let (_, _, port) = wanted(spec);
    let name = website.name();
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": website.namespace(),
            "labels": {WEBSITE_LABEL: name}, "ownerReferences": [owner_reference(website)]},
        "spec": {"selector": {WEBSITE_LABEL: name}, "ports": [{"port": 80, "targetPort": port, "protocol": "TCP"}]}})
}

fn write(mut req: Request) -> Request {
    req.field_manager = Some(MANAGER.to_string());
    req
}

impl WebsiteOperator {
    /// Starts watching Websites once discovery lists them (retried until it may, as are
    /// the informers RBAC refused at start); the Websites listed, to look at.
    fn watch_websites(&mut self, ctx: &mut Ctx) -> Vec<String> {
        for informer in [&mut self.pods, &mut self.deployments, &mut self.services] {
            if informer.watch_id().is_none() {
                let _ = informer.start(ctx);
            }
        }
        if self.websites.as_ref().is_some_and(|i| i.watch_id().is_some()) {
            return Vec::new();
        }
        let Some(kind) = Kind::from_type_meta(API_VERSION, KIND) else { return Vec::new() };
        let mut informer = Informer::new(kind);
        if informer.start(ctx).is_err() {
            return Vec::new();
        }
        let keys = informer.cache.keys().map(String::from).collect();
        self.websites = Some(informer);
        keys
    }

    fn reconcile_website(&mut self, website: &Arc<Object>, ctx: &mut Ctx) -> Result<(), Status> {
        let Object::Custom(custom) = website.as_ref() else { return Ok(()) };
        if custom.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let spec = custom.spec().clone();
        let (image, replicas, port) = wanted(&spec);
        let (ns, name) = (custom.metadata.namespace.clone(), custom.metadata.name.clone());
        self.last = format!("website {ns}/{name}: {replicas} × {image}");
        // The Deployment: made, or brought back to what the Website asks.
        let deployment = self.deployments.get(&ns, &name).cloned();
        let ready = match deployment.as_deref() {
            None => {
                ctx.cause = Some(ctx.decide(|| format!("website {ns}/{name}: creating Deployment {name}")));
                let object = Object::decode(Kind::Deployment, &deployment_json(website, &spec))
                    .map_err(|e| Status::bad_request(e.message))?;
                let created = ctx.call_object(write(Request::create(object)))?;
                ctx.event(website, "", "Normal", "CreatedDeployment", format!("Created Deployment {name}"));
                self.deployments.assume(created);
                0
            }
            Some(Object::Deployment(d)) => {
                let owned = d.metadata.owner_references.iter().any(|o| o.uid == custom.metadata.uid);
                if !owned {
                    ctx.event(
                        website,
                        "",
                        "Warning",
                        "ErrResourceExists",
                        format!("Deployment {name} already exists and is not managed by Website {name}"),
                    );
                    return Ok(());
                }
                let container = d.spec.template.spec.containers.first();
                let same = d.spec.replicas.map(i64::from) == Some(replicas)
                    && container.is_some_and(|c| {
                        c.image == image && c.ports.first().is_some_and(|p| i64::from(p.container_port) == port)
                    });
                if !same {
                    ctx.cause =
                        Some(ctx.decide(|| {
                            format!("website {ns}/{name}: updating Deployment {name} to {replicas} × {image}")
                        }));
                    let mut value = Object::Deployment(d.clone()).to_json_value();
                    let desired = deployment_json(website, &spec);
                    value["spec"]["replicas"] = desired["spec"]["replicas"].clone();
                    value["spec"]["template"]["spec"]["containers"][0]["image"] = Value::from(image.clone());
                    value["spec"]["template"]["spec"]["containers"][0]["ports"] =
                        desired["spec"]["template"]["spec"]["containers"][0]["ports"].clone();
                    let object =
                        Object::decode(Kind::Deployment, &value).map_err(|e| Status::bad_request(e.message))?;
                    let updated = ctx.call_object(write(Request::update(object)))?;
                    ctx.event(website, "", "Normal", "UpdatedDeployment", format!("Updated Deployment {name}"));
                    self.deployments.assume(updated);
                }
                d.status.ready_replicas.unwrap_or(0) as i64
            }
            Some(_) => 0,
        };
        if self.services.get(&ns, &name).is_none() {
            ctx.cause = Some(ctx.decide(|| format!("website {ns}/{name}: creating Service {name}")));
            let object = Object::decode(Kind::Service, &service_json(website, &spec))
                .map_err(|e| Status::bad_request(e.message))?;
            let created = ctx.call_object(write(Request::create(object)))?;
            ctx.event(website, "", "Normal", "CreatedService", format!("Created Service {name}"));
            self.services.assume(created);
        }
        // Status: ready replicas and the Ready condition, written when they change.
        let is_ready = ready >= replicas;
        let (status, reason, message) = if is_ready {
            ("True", "AllReplicasReady", format!("{ready}/{replicas} replicas ready"))
        } else {
            ("False", "ReplicasNotReady", format!("{ready}/{replicas} replicas ready"))
        };
        let old = custom.status();
        let old_ready = old.get("conditions").and_then(Value::as_array).and_then(|c| c.first());
        let same_condition = old_ready.is_some_and(|c| c["status"] == status && c["message"] == message.as_str());
        if old["readyReplicas"].as_i64() == Some(ready)
            && same_condition
            && old["observedGeneration"].as_i64() == Some(custom.metadata.generation)
        {
            return Ok(());
        }
        let since = match old_ready {
            Some(c) if c["status"] == status => c["lastTransitionTime"].clone(),
            _ => Value::from(ctx.now.rfc3339()),
        };
        let mut next = (**custom).clone();
        next.content.insert(
            "status".into(),
            json!({"readyReplicas": ready, "observedGeneration": custom.metadata.generation,
                "conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message,
                    "lastTransitionTime": since}]}),
        );
        super::done_unless_failed(ctx.call(write(Request::update_status(Object::Custom(Box::new(next))))))
    }

    /// The Website that owns a Deployment or Service, as a key.
    fn owner_key(object: &Object) -> Option<String> {
        let owner = object.controller_ref().filter(|o| o.kind == KIND && o.api_version == API_VERSION)?;
        Some(crate::client::component::cache_key(object.namespace(), &owner.name))
    }
}

impl Reconciler for WebsiteOperator {
    fn informers(&mut self) -> Vec<&mut Informer> {
        let mut all = vec![&mut self.pods, &mut self.deployments, &mut self.services];
        all.extend(self.websites.as_mut());
        all
    }

    fn refresh(&mut self, ctx: &mut Ctx) -> Vec<String> {
        if self.running() { self.watch_websites(ctx) } else { Vec::new() }
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let object = &delta.object;
        match informer {
            // Its own pod started or stopped: every Website needs a look.
            0 => match &self.websites {
                Some(w) => w.cache.keys().map(String::from).collect(),
                None => vec!["@watch".into()],
            },
            1 | 2 => Self::owner_key(object).into_iter().collect(),
            _ => vec![crate::client::component::cache_key(object.namespace(), object.name())],
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        if !self.running() {
            return Ok(Action::AwaitChange);
        }
        let Some(websites) = &self.websites else { return Ok(Action::RequeueAfter(RETRY)) };
        if key == "@watch" {
            let keys: Vec<String> = websites.cache.keys().map(String::from).collect();
            for k in keys {
                self.reconcile(&k, ctx)?;
            }
            return Ok(Action::AwaitChange);
        }
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        let Some(website) = websites.get(ns, name).cloned() else { return Ok(Action::AwaitChange) };
        self.reconcile_website(&website, ctx)?;
        Ok(Action::AwaitChange)
    }

    fn summary(&self) -> String {
        self.last.clone()
    }
}
