//! What a client sends the API server, and what it gets back.

use crate::api::{Kind, LabelSelector, Object};
use crate::etcd::Revision;
use serde_json::Value;
use std::sync::Arc;

use super::fields::FieldSelector;
use super::watch::WatchId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
}

impl Verb {
    /// The verb as RBAC and audit logs name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }

    pub fn method(self) -> &'static str {
        match self {
            Verb::Get | Verb::List | Verb::Watch => "GET",
            Verb::Create => "POST",
            Verb::Update => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    Status,
    Binding,
    /// POST `pods/<name>/eviction`: a deletion that honours disruption budgets.
    Eviction,
    /// `deployments|replicasets/<name>/scale`: an autoscaling/v1 Scale, the replica count alone.
    Scale,
    /// GET `pods/<name>/log`: a container's log, streamed from its kubelet.
    Log,
    /// `pods/<name>/exec`: a command run in a container, over a stream through its kubelet.
    Exec,
    /// `pods/<name>/attach`: a stream to a container's main process, through its kubelet.
    Attach,
}

impl Subresource {
    pub fn as_str(self) -> &'static str {
        match self {
            Subresource::Status => "status",
            Subresource::Binding => "binding",
            Subresource::Eviction => "eviction",
            Subresource::Scale => "scale",
            Subresource::Log => "log",
            Subresource::Exec => "exec",
            Subresource::Attach => "attach",
        }
    }

    /// Whether the API server answers it by connecting the client to a kubelet.
    pub fn connects(self) -> bool {
        matches!(self, Subresource::Log | Subresource::Exec | Subresource::Attach)
    }
}

/// What happens to an object's dependents when it is deleted (`propagationPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Delete the owner now; the garbage collector deletes dependents afterwards.
    Background,
    /// Delete dependents first (those with `blockOwnerDeletion`), then the owner.
    Foreground,
    /// Leave the dependents, removing their owner references.
    Orphan,
}

impl Propagation {
    /// kubectl's `--cascade` values.
    pub fn from_cascade(value: &str) -> Option<Propagation> {
        match value {
            "background" | "true" => Some(Propagation::Background),
            "foreground" => Some(Propagation::Foreground),
            "orphan" | "false" => Some(Propagation::Orphan),
            _ => None,
        }
    }
}

/// A v1 Binding of pod `namespace/pod` to `node`, as JSON.
pub fn binding_json(namespace: &str, pod: &str, node: &str) -> Value {
    crate::util::json_macro::json!({
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": pod, "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    })
}

/// A request body: JSON as kubectl sends it, an object a built-in component already holds, or
/// the v1 Binding the scheduler posts (held as its target node's name: the rest of it is the
/// request's own pod; [`Request::body_json`] spells it out).
#[derive(Clone, Debug)]
pub enum Body {
    Json(Value),
    Object(Box<Object>),
    Binding { node: String },
}

#[derive(Clone, Debug)]
pub struct Request {
    pub verb: Verb,
    pub kind: Kind,
    /// Empty for cluster-scoped kinds, and for lists and watches across all namespaces.
    pub namespace: String,
    pub name: String,
    pub subresource: Option<Subresource>,
    pub body: Option<Body>,
    pub dry_run: bool,
    pub label_selector: Option<LabelSelector>,
    pub field_selector: Option<FieldSelector>,
    /// For watches: resume after this revision instead of starting with the current state.
    pub resource_version: Option<Revision>,
    /// For deletes: override the pod's termination grace period.
    pub grace_period_seconds: Option<i64>,
    /// For deletes: what happens to dependents.
    pub propagation: Option<Propagation>,
    /// For patches: the patch's format (the body is the patch).
    pub patch_type: Option<super::patch::PatchType>,
    /// For writes: who makes the change (`fieldManager`); when unset, the API server names
    /// the client from its identity.
    pub field_manager: Option<String>,
    /// For server-side apply: take over fields other managers own (`force=true`).
    pub force: bool,
    /// For the connect subresources (log, exec, attach): their query parameters, in the order
    /// the client sends them (`container=web`, `follow=true`, `command=ls`).
    pub options: Vec<(String, String)>,
}

impl Request {
    pub fn new(verb: Verb, kind: Kind, namespace: &str, name: &str) -> Request {
        Request {
            verb,
            kind,
            namespace: if kind.info().namespaced { namespace.to_string() } else { String::new() },
            name: name.to_string(),
            subresource: None,
            body: None,
            dry_run: false,
            label_selector: None,
            field_selector: None,
            resource_version: None,
            grace_period_seconds: None,
            propagation: None,
            patch_type: None,
            field_manager: None,
            force: false,
            options: Vec::new(),
        }
    }

    pub fn get(kind: Kind, namespace: &str, name: &str) -> Request {
        Request::new(Verb::Get, kind, namespace, name)
    }

    pub fn list(kind: Kind, namespace: &str) -> Request {
        Request::new(Verb::List, kind, namespace, "")
    }

    pub fn watch(kind: Kind, namespace: &str) -> Request {
        Request::new(Verb::Watch, kind, namespace, "")
    }

    pub fn create(object: Object) -> Request {
        let mut req = Request::new(Verb::Create, object.kind(), object.namespace(), "");
        req.body = Some(Body::Object(Box::new(object)));
        req
    }

    pub fn update(object: Object) -> Request {
        let mut req = Request::new(Verb::Update, object.kind(), object.namespace(), object.name());
        req.body = Some(Body::Object(Box::new(object)));
        req
    }

    pub fn update_status(object: Object) -> Request {
        let mut req = Request::update(object);
        req.subresource = Some(Subresource::Status);
        req
    }

    /// PATCH: `patch` applied to the stored object, in the given format.
    pub fn patch(
        kind: Kind,
        namespace: &str,
        name: &str,
        patch_type: super::patch::PatchType,
        patch: Value,
    ) -> Request {
        let mut req = Request::new(Verb::Patch, kind, namespace, name);
        req.patch_type = Some(patch_type);
        req.body = Some(Body::Json(patch));
        req
    }

    /// PATCH `<resource>/<name>/scale` with a merge patch of the Scale's `spec.replicas`, as
    /// `kubectl scale` sends it.
    pub fn scale(kind: Kind, namespace: &str, name: &str, replicas: i32) -> Request {
        let mut req = Request::patch(
            kind,
            namespace,
            name,
            super::patch::PatchType::Merge,
            crate::util::json_macro::json!({"spec": {"replicas": replicas}}),
        );
        req.subresource = Some(Subresource::Scale);
        req
    }

    pub fn delete(kind: Kind, namespace: &str, name: &str) -> Request {
        Request::new(Verb::Delete, kind, namespace, name)
    }

    /// POST `pods/<name>/binding`: the scheduler's decision.
    pub fn bind(namespace: &str, pod: &str, node: &str) -> Request {
        let mut req = Request::new(Verb::Create, Kind::Pod, namespace, pod);
        req.subresource = Some(Subresource::Binding);
        req.body = Some(Body::Binding { node: node.to_string() });
        req
    }

    /// The body as JSON, as it goes over the wire.
    pub fn body_json(&self) -> Option<Value> {
        Some(match self.body.as_ref()? {
            Body::Json(v) => v.clone(),
            Body::Object(o) => o.to_json_value(),
            Body::Binding { node } => binding_json(&self.namespace, &self.name, node),
        })
    }

    /// Names the field manager this write is made by.
    pub fn managed_by(mut self, manager: &str) -> Request {
        self.field_manager = Some(manager.to_string());
        self
    }

    /// POST `pods/<name>/eviction` (policy/v1 Eviction), as `kubectl drain` sends it.
    pub fn evict(namespace: &str, pod: &str, grace_period_seconds: Option<i64>) -> Request {
        let mut req = Request::new(Verb::Create, Kind::Pod, namespace, pod);
        req.subresource = Some(Subresource::Eviction);
        let mut body = crate::util::json_macro::json!({
            "apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": pod, "namespace": namespace},
        });
        if let Some(g) = grace_period_seconds {
            body["deleteOptions"] = crate::util::json_macro::json!({"gracePeriodSeconds": g});
        }
        req.body = Some(Body::Json(body));
        req.grace_period_seconds = grace_period_seconds;
        req
    }

    /// A connect subresource of pod `namespace/pod` with its query parameters: a GET (`log`,
    /// and the WebSocket upgrade kubectl tries first for `exec` and `attach`), or with `post`
    /// the SPDY upgrade it falls back to.
    pub fn connect(sub: Subresource, namespace: &str, pod: &str, options: &[(&str, &str)], post: bool) -> Request {
        let verb = if post { Verb::Create } else { Verb::Get };
        let mut req = Request::new(verb, Kind::Pod, namespace, pod);
        req.subresource = Some(sub);
        req.options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        req
    }

    /// The value of a connect option (`container`), if sent.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    pub fn with_fields(mut self, selector: FieldSelector) -> Request {
        self.field_selector = Some(selector);
        self
    }

    pub fn from_revision(mut self, revision: Revision) -> Request {
        self.resource_version = Some(revision);
        self
    }

    /// The URL path, as `kubectl -v=6` prints it after the server address.
    pub fn path(&self) -> String {
        let info = self.kind.info();
        let mut path = if info.group.is_empty() {
            format!("/api/{}", info.version)
        } else {
            format!("/apis/{}/{}", info.group, info.version)
        };
        if !self.namespace.is_empty() {
            path.push_str("/namespaces/");
            path.push_str(&self.namespace);
        }
        path.push('/');
        path.push_str(info.resource);
        if !self.name.is_empty() {
            path.push('/');
            path.push_str(&self.name);
        }
        if let Some(sub) = self.subresource {
            path.push('/');
            path.push_str(sub.as_str());
        }
        let mut query = Vec::new();
        if let Some(sel) = &self.label_selector {
            query.push(format!("labelSelector={}", sel.to_selector_string()));
        }
        if let Some(sel) = &self.field_selector {
            query.push(format!("fieldSelector={sel}"));
        }
        if self.verb == Verb::Watch {
            query.push("watch=true".into());
            if let Some(rv) = self.resource_version {
                query.push(format!("resourceVersion={rv}"));
            }
        }
        if self.dry_run {
            query.push("dryRun=All".into());
        }
        if let Some(manager) = &self.field_manager {
            query.push(format!("fieldManager={manager}"));
        }
        if self.patch_type == Some(super::patch::PatchType::Apply) {
            query.push(format!("force={}", self.force));
        }
        query.extend(self.options.iter().map(|(k, v)| format!("{k}={v}")));
        if !query.is_empty() {
            path.push('?');
            path.push_str(&query.join("&"));
        }
        path
    }
}

#[derive(Clone, Debug)]
pub enum Reply {
    Object(Arc<Object>),
    List {
        items: Vec<Arc<Object>>,
        revision: Revision,
    },
    Watch {
        id: WatchId,
        revision: Revision,
    },
    /// A connect subresource allowed: the stream to open, through the kubelet of the pod's node.
    Connect(ConnectTarget),
}

/// Where the API server sends a connect request on (log, exec, attach): a container of a pod,
/// on a node whose kubelet serves it. `uid` and `container_id` name the instance connected to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectTarget {
    pub subresource: Subresource,
    pub node: String,
    pub namespace: String,
    pub pod: String,
    pub uid: String,
    pub container: String,
    pub container_id: String,
    /// The kubelet's own path for it (`/containerLogs/default/web/nginx`).
    pub kubelet_path: String,
}

impl Reply {
    pub fn object(self) -> Option<Arc<Object>> {
        match self {
            Reply::Object(o) => Some(o),
            _ => None,
        }
    }
}
