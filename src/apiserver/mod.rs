//! kube-apiserver: the only component that touches etcd.
//!
//! Every request passes the real pipeline — authentication, authorization, mutating
//! admission, validation, validating admission, storage — and is recorded with the stage that
//! answered it. Every write fans out to the watches it concerns.
//!
//! Pipeline stages answer `Result<_, (Stage, Status)>`: the error is large, but it is the
//! rare path, and unboxed it keeps the stages readable.
#![allow(clippy::result_large_err)]

pub mod admission;
pub mod admission_policy;
pub mod aggregator;
pub mod apiextensions;
pub mod authorization;
pub mod bypass;
pub mod cel;
pub mod compactor;
pub mod connect;
pub mod crd_validation;
pub mod events_etcd;
pub mod eviction;
pub mod field_manager;
pub mod field_schema;
pub mod fields;
pub mod http;
pub mod inspect;
pub mod limit_ranger;
pub mod network_policy_validation;
pub mod networking_admission;
pub mod patch;
pub mod policy_validation;
pub mod priority;
pub mod quorum;
pub mod quota;
pub mod rbac_validation;
pub mod request;
pub mod reviews;
pub mod schema;
pub mod status;
pub mod storage_admission;
pub mod validation;
pub mod watch;
pub mod webhook_validation;
pub mod webhooks;

pub use fields::FieldSelector;
pub use request::{Body, ConnectTarget, Propagation, Reply, Request, Subresource, Verb, binding_json};

/// The finalizers the garbage collector honours (`propagationPolicy` Foreground / Orphan).
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";
pub const ORPHAN_FINALIZER: &str = "orphan";
/// Namespaces NamespaceLifecycle admission never lets anyone delete.
pub const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];
pub use status::Status;
pub use watch::{WatchEvent, WatchFilter, WatchId};

use crate::api::managed_fields::ManagedFields;
use crate::api::pod::{PodCondition, set_condition};
use crate::api::{Kind, ManagedFieldsEntry, Object};
use crate::etcd::lookup_key::LookupKey;
use crate::etcd::{Change, Etcd, EtcdError, Revision};
use crate::record::{ComponentId, Happening, Record, Seq, Stage};
use crate::sim::{Rng, Time};
use serde_json::Value;
use std::sync::{Arc, OnceLock, Weak};

/// What the API server needs from the world to answer one request.
pub struct Env<'a> {
    pub now: Time,
    pub rng: &'a mut Rng,
    pub record: &'a mut Record,
    /// Who is calling, and as which user it authenticates.
    pub actor: ComponentId,
    pub user: &'a str,
    /// The record entry that led the caller to make this request.
    pub cause: Option<Seq>,
    /// Whom RBAC judges the request as: the person at kubectl (or whom they impersonate).
    /// `None` for the control plane's own components, which act under their bootstrap policy.
    pub identity: Option<authorization::Identity>,
}

#[derive(Debug, Default)]
pub struct ApiServer {
    etcd: Etcd,
    watches: watch::Watches,
    woken: Vec<ComponentId>,
    /// ClusterIPs and NodePorts held by Services (the registry's allocators).
    service_allocations: ServiceAllocations,
    field_sets: field_manager::Interner,
    /// Whether etcd is stopped (`sim etcd stop`).
    etcd_down: bool,
    /// Events' own etcd, when they are kept apart (see [`events_etcd`]). Any read of it, even a
    /// view's `peek`, may first have to wait for its thread to hand it back: hence the cell.
    events: Option<std::cell::RefCell<events_etcd::EventsEtcd>>,
    /// The watches the events storage serves, by the number this server gave each (in its own
    /// sequence) → the storage's number for it.
    events_watches: std::collections::BTreeMap<WatchId, WatchId>,
    /// For the events storage: whether the namespace of the request it is given exists, as the
    /// API server in front of it found (NamespaceLifecycle admission).
    namespace_verdict: Option<bool>,
    /// The leases on Event keys: each write of an Event attaches one that runs out
    /// [`EVENT_TTL`] later, and etcd then deletes the key.
    event_leases: EventLeases,
    /// When Events are kept apart: no later than the oldest write there that may still hold a
    /// lease, so that their storage is called back from its thread only when one may be due.
    events_oldest_lease: Option<Time>,
    /// The etcd compactor's memory between rounds.
    compactor: compactor::Compactor,
    /// metrics-server's memory, which the aggregation layer proxies `metrics.k8s.io` to.
    pub metrics: aggregator::MetricsBackend,
    /// Whether the write being served came with a body big enough that what it stores may be
    /// over etcd's request limit (only such writes are measured).
    large_body: bool,
    /// Warnings for the person at kubectl (admission policies' Warn), until kubectl takes them.
    warnings: Vec<String>,
    /// CustomResourceDefinitions the apiextensions controllers are to look at, and when.
    crd_work: std::collections::BTreeMap<String, Time>,
    /// What discovery lists of custom resources, until a definition changes.
    served_cache: std::cell::RefCell<Option<Arc<Vec<crate::api::custom::Served>>>>,
    /// Watches of a custom resource opened in a version other than its storage version: the
    /// version each watcher asked for (its objects are converted on the way out).
    custom_watch_versions: std::collections::BTreeMap<WatchId, Kind>,
    /// How the admission webhooks reach pods (the cluster installs it; none: nothing answers).
    pub webhook_network: Option<webhooks::PodCall>,
    /// How long the request being served has kept its client waiting so far: a webhook's
    /// answer time or timeout, etcd's request timeout without a quorum.
    request_wait: crate::sim::Duration,
    /// How long kubectl's requests waited since the cluster last ran the clock on for them.
    user_wait: crate::sim::Duration,
    /// Where clients reach the API (`host:port`) when it is not the control-plane node's
    /// address: the load balancer in front of several API servers.
    pub endpoint: Option<String>,
    /// While the client now sending finds no API server listening where it dials (the
    /// cluster sets it before each client's turn): that address, `host:port`.
    pub refusing: Option<String>,
}

/// How long an Event lives after its last write: kube-apiserver's `--event-ttl` (default one
/// hour), the TTL of the etcd lease it attaches to the Event's key on every write (create and
/// update alike, so an Event the correlator keeps counting lives on).
pub const EVENT_TTL: crate::sim::Duration = crate::sim::Duration::minutes(60);

/// Event keys by when their lease runs out. A key written again keeps its newer expiry in
/// `expiry`; its older entry in `by_expiry` is skipped when it comes due.
#[derive(Debug, Default)]
struct EventLeases {
    by_expiry: std::collections::BTreeSet<(Time, Arc<str>)>,
    expiry: std::collections::HashMap<Arc<str>, Time>,
}

impl EventLeases {
    fn attach(&mut self, key: &Arc<str>, expires: Time) {
        if self.expiry.insert(key.clone(), expires) != Some(expires) {
            self.by_expiry.insert((expires, key.clone()));
        }
    }

    fn detach(&mut self, key: &str) {
        self.expiry.remove(key);
    }

    /// The keys whose lease has run out by `now`, oldest first, each taken off.
    fn take_due(&mut self, now: Time) -> Vec<Arc<str>> {
        let mut due = Vec::new();
        while let Some((at, _)) = self.by_expiry.first() {
            if *at > now {
                break;
            }
            let Some((at, key)) = self.by_expiry.pop_first() else { break };
            if self.expiry.get(&key) == Some(&at) {
                self.expiry.remove(&key);
                due.push(key);
            }
        }
        due
    }

    fn next(&self) -> Option<Time> {
        self.by_expiry.first().map(|(t, _)| *t)
    }
}

/// The most a request's body may hold (kube-apiserver's `--max-request-body-bytes`).
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;
/// The most one etcd request may carry (etcd's `--max-request-bytes`).
pub const ETCD_MAX_REQUEST_BYTES: usize = 1536 * 1024;

/// How many bytes a value takes written as JSON, counted without keeping them.
fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

type StageResult<T> = Result<T, (Stage, Status)>;

/// The stored objects under `prefix` (`/registry/resourcequotas/`) in `namespace` that `pick`
/// takes, in name order; for the namespace policies admission reads on every write, so while
/// no namespace has any it costs one lookup and no allocation.
fn namespace_objects<T: Clone>(
    etcd: &Etcd,
    prefix: &str,
    namespace: &str,
    pick: impl Fn(&Object) -> Option<&T>,
) -> Vec<T> {
    if namespace.is_empty() || !etcd.any_under(prefix) {
        return Vec::new();
    }
    etcd.range(&format!("{prefix}{namespace}/")).filter_map(|(_, kv)| pick(&kv.value).cloned()).collect()
}

impl ApiServer {
    pub fn new() -> Self {
        ApiServer::default()
    }

    /// Read-only access to the store, for views of the cluster that are not API clients
    /// (the page's panels, time travel, `etcdctl get`).
    /// The store's current revision (every answer carries it as a resourceVersion).
    pub fn revision(&self) -> crate::etcd::Revision {
        self.etcd.revision()
    }

    pub(in crate::apiserver) fn etcd(&self) -> &Etcd {
        &self.etcd
    }

    /// Direct write access to etcd, bypassing the API server: what `etcdctl put` does.
    pub fn etcd_bypass(&mut self) -> &mut Etcd {
        // What is written there may be a definition: discovery asks again.
        self.served_cache.replace(None);
        &mut self.etcd
    }

    /// Components that received watch notifications since the last call.
    pub fn take_woken(&mut self) -> Vec<ComponentId> {
        let mut woken = std::mem::take(&mut self.woken);
        // Only a storage that is here can have watches (it stays here while it has).
        if let Some(side) = self.events.as_mut().and_then(|e| e.get_mut().if_here()) {
            woken.append(&mut side.api.take_woken());
        }
        woken
    }

    /// The events storage, here, and the number of one of its watches.
    fn events_watch(&self, id: WatchId) -> Option<(std::cell::RefMut<'_, events_etcd::EventsEtcd>, WatchId)> {
        let local = *self.events_watches.get(&id)?;
        Some((self.events.as_ref()?.borrow_mut(), local))
    }

    pub fn drain_watch(&mut self, id: WatchId) -> Vec<WatchEvent> {
        if let Some((mut events, local)) = self.events_watch(id) {
            return events.here().api.drain_watch(local);
        }
        self.watches.drain(id)
    }

    /// Whether a watch still delivers (its owner's process has not stopped).
    pub fn watch_is_open(&self, id: WatchId) -> bool {
        match self.events_watch(id) {
            Some((mut events, local)) => events.here().api.watch_is_open(local),
            None => self.watches.is_open(id),
        }
    }

    /// How many notifications wait on a watch.
    pub fn watch_pending(&self, id: WatchId) -> usize {
        match self.events_watch(id) {
            Some((mut events, local)) => events.here().api.watch_pending(local),
            None => self.watches.pending(id),
        }
    }

    /// Closes one watch (its client stopped watching).
    pub fn close_watch(&mut self, id: WatchId) {
        if let Some((mut events, local)) = self.events_watch(id) {
            events.here().api.close_watch(local);
            return;
        }
        self.watches.close(id);
    }

    pub fn close_watches_of(&mut self, owner: ComponentId) {
        self.watches.close_all_of(owner);
        if let Some(side) = self.events.as_mut().and_then(|e| e.get_mut().if_here()) {
            side.api.close_watches_of(owner);
        }
    }

    /// The stored object at `kind/namespace/name`, without a request (for views).
    pub(in crate::apiserver) fn peek(&self, kind: Kind, namespace: &str, name: &str) -> Option<Arc<Object>> {
        if let (Kind::Event, Some(events)) = (kind, &self.events) {
            return events.borrow_mut().here().api.peek(kind, namespace, name);
        }
        let ns = if kind.info().namespaced { namespace } else { "" };
        self.etcd.get(&LookupKey::etcd(kind.storage_resource(), ns, name)).map(|kv| kv.value.clone())
    }

    /// Every stored object of `kind` (in `namespace`, or all when empty), in key order.
    pub(in crate::apiserver) fn peek_list(&self, kind: Kind, namespace: &str) -> Vec<Arc<Object>> {
        if let (Kind::Event, Some(events)) = (kind, &self.events) {
            return events.borrow_mut().here().api.peek_list(kind, namespace);
        }
        let prefix = list_prefix(kind, namespace);
        self.etcd.range(&prefix).map(|(_, kv)| kv.value.clone()).collect()
    }

    /// Answers one request.
    pub fn handle(&mut self, req: Request, env: &mut Env) -> Result<Reply, Status> {
        let what = Self::happening(&req, env.record.enabled);
        let seq = env.record.push(env.now, self.etcd.revision(), env.actor, env.cause, what);
        let before = self.etcd.revision();
        let outer_wait = std::mem::take(&mut self.request_wait);
        let refusing = self.refusing.as_deref().filter(|_| env.actor != ComponentId::API_SERVER);
        let result = if let Some(endpoint) = refusing {
            Err((Stage::Storage, Status::connection_refused(endpoint)))
        } else if self.etcd_down {
            Err((Stage::Storage, self.refused()))
        } else if let Err(status) = self.quorum(&req, env, seq) {
            Err((Stage::Storage, status))
        } else {
            match self.check_decodable(req.verb, req.kind, &req.namespace, &req.name) {
                Ok(()) if Self::is_aggregated(req.kind) => {
                    self.authorized(&req, env).and_then(|()| self.aggregate(&req, env, seq))
                }
                Ok(()) => self.process(req, env, seq),
                Err(status) => Err((Stage::Storage, status)),
            }
        };
        Self::note_answer(env.record, seq, self.etcd.revision(), &result);
        if self.etcd.raft().is_some() {
            self.replicate(before, env, seq);
        }
        let waited = std::mem::replace(&mut self.request_wait, outer_wait);
        if env.actor == ComponentId::USER {
            self.user_wait = self.user_wait + waited;
        }
        result.map(|(_, reply)| reply).map_err(|(_, status)| status)
    }

    /// How long kubectl's requests have waited for their answers since this was last asked
    /// (the clock then runs on by as much: the cluster goes on while kubectl waits).
    /// Components' requests are answered at once, whatever they would have waited.
    pub fn take_user_wait(&mut self) -> crate::sim::Duration {
        std::mem::take(&mut self.user_wait)
    }

    /// The record entry of a request, before it is answered (a blank one without a record).
    pub(super) fn happening(req: &Request, enabled: bool) -> Happening {
        // Without a record (large benchmarks) nothing is kept, so nothing is copied for it.
        if enabled {
            Happening::Request {
                method: req.verb.method(),
                verb: req.verb.as_str(),
                path: req.path(),
                kind: req.kind,
                namespace: req.namespace.clone(),
                // A create names its object in the body: keep that name even when it is refused.
                name: match (&req.body, req.name.is_empty()) {
                    (Some(Body::Object(o)), true) => o.name().to_string(),
                    (Some(Body::Json(v)), true) => v["metadata"]["name"].as_str().unwrap_or_default().to_string(),
                    _ => req.name.clone(),
                },
                code: 0,
                failed_at: None,
                message: String::new(),
            }
        } else {
            Happening::Decision { text: String::new() }
        }
    }

    /// Fills in a request's record entry with its answer.
    pub(super) fn note_answer(record: &mut Record, seq: Seq, revision: Revision, result: &StageResult<(u16, Reply)>) {
        if let Some(entry) = record.get_mut(seq) {
            entry.revision = revision;
            if let Happening::Request { code, failed_at, message, name, .. } = &mut entry.what {
                match result {
                    Ok((c, reply)) => {
                        *code = *c;
                        if let Reply::Object(o) = reply {
                            if name.is_empty() {
                                *name = o.name().to_string();
                            }
                        }
                    }
                    Err((stage, status)) => {
                        *code = status.code;
                        *failed_at = Some(*stage);
                        *message = status.message.clone();
                    }
                }
            }
        }
    }

    /// Authentication, then (for clients judged by RBAC) authorization.
    fn authorized(&self, req: &Request, env: &Env) -> StageResult<()> {
        if env.user.is_empty() {
            return Err((
                Stage::Authentication,
                Status { code: 401, reason: "Unauthorized", ..Status::bad_request("Unauthorized") },
            ));
        }
        if let Some(who) = &env.identity {
            let sub = req.subresource.map(|s| s.as_str());
            let attrs = authorization::Attributes::new(req.verb.as_str(), req.kind, sub, &req.namespace, &req.name);
            if let Err(message) = authorization::authorize(&self.etcd, who, &attrs) {
                return Err((Stage::Authorization, Status::forbidden(message)));
            }
        }
        Ok(())
    }

    fn process(&mut self, req: Request, env: &mut Env, seq: Seq) -> StageResult<(u16, Reply)> {
        if req.kind == Kind::ComponentStatus && !env.user.is_empty() {
            return self.component_statuses(&req);
        }
        self.authorized(&req, env)?;
        // The body is read within the server's limit before anything decodes it.
        self.large_body = false;
        if let (Verb::Create | Verb::Update | Verb::Patch, Some(Body::Json(body))) = (req.verb, &req.body) {
            let size = json_len(body);
            if size > MAX_REQUEST_BODY_BYTES {
                return Err((Stage::Validation, Status::request_entity_too_large(MAX_REQUEST_BODY_BYTES)));
            }
            self.large_body = size > ETCD_MAX_REQUEST_BYTES / 2;
        }
        if req.kind == Kind::Event && self.events.is_some() {
            return self.forward_to_events(req, env, seq);
        }
        if reviews::is_review(req.kind) {
            return self.review(req, env);
        }
        if req.subresource.is_some_and(|s| s.connects()) {
            return self.connect(&req, env);
        }
        if let Kind::Custom(_) = req.kind {
            let definition = self.served_definition(&req)?;
            if let Some(storage) = apiextensions::storage_kind(&definition).filter(|k| *k != req.kind) {
                return self.in_storage_version(req, storage, env, seq);
            }
        }
        match req.verb {
            Verb::Get => self.get(&req).map(|o| (200, Reply::Object(o))),
            Verb::List => self.list(&req).map(|r| (200, r)),
            Verb::Watch => self.watch(&req, env, seq).map(|r| (200, r)),
            Verb::Create if req.subresource == Some(Subresource::Binding) => {
                self.bind(req, env, seq).map(|o| (201, Reply::Object(o)))
            }
            Verb::Create if req.subresource == Some(Subresource::Eviction) => {
                self.evict(req, env, seq).map(|o| (201, Reply::Object(o)))
            }
            Verb::Create => self.create(req, env, seq, None).map(|o| (201, Reply::Object(o))),
            Verb::Update => self.update(req, env, seq, None).map(|o| (200, Reply::Object(o))),
            Verb::Patch if req.patch_type == Some(patch::PatchType::Apply) => self.server_side_apply(req, env, seq),
            Verb::Patch => self.patch(req, env, seq).map(|o| (200, Reply::Object(o))),
            Verb::Delete => self.delete(req, env, seq).map(|o| (200, Reply::Object(o))),
        }
    }

    /// A request about Events, authenticated and authorized here, answered by the events
    /// storage (after every event reported before it is stored there).
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn forward_to_events(&mut self, req: Request, env: &mut Env, seq: Seq) -> StageResult<(u16, Reply)> {
        let exists = self.namespace_exists(events_etcd::namespace_of(&req));
        let Some(events) = &mut self.events else { return Err((Stage::Storage, self.refused())) };
        if !matches!(req.verb, Verb::Get | Verb::List | Verb::Watch) {
            self.events_oldest_lease.get_or_insert(env.now);
        }
        // Whoever asked was judged here; the storage holds no roles to judge them by.
        let identity = env.identity.take();
        let side = &mut events.get_mut().here().api;
        let answer = side.answer_with_namespace(exists, req, env, seq);
        env.identity = identity;
        let (code, reply) = answer?;
        let Reply::Watch { id: local, revision } = reply else { return Ok((code, reply)) };
        // The watch gets a number among this server's own, which it answers for through the map.
        let Some(filter) = side.watches.filter(local).cloned() else { return Err((Stage::Storage, self.refused())) };
        let id = self.watches.number_elsewhere(env.actor, filter);
        self.events_watches.insert(id, local);
        Ok((code, Reply::Watch { id, revision }))
    }

    /// ComponentStatus: each control-plane component probed (here: is its static pod in
    /// kube-system Ready?). Only get and list; nothing is stored.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn component_statuses(&self, req: &Request) -> StageResult<(u16, Reply)> {
        use crate::api::ComponentStatus;
        let pods = self.peek_list(Kind::Pod, "kube-system");
        let probe = |component: &str, port: u16, path: &str| {
            let ready = pods
                .iter()
                .filter_map(|o| o.as_pod())
                .any(|p| p.metadata.labels.get("component").is_some_and(|c| c == component) && p.is_ready());
            let url = format!("https://127.0.0.1:{port}{path}");
            (!ready).then(|| format!("Get \"{url}\": dial tcp 127.0.0.1:{port}: connect: connection refused"))
        };
        let all = vec![
            ComponentStatus::new("scheduler", probe("kube-scheduler", 10259, "/healthz")),
            ComponentStatus::new("controller-manager", probe("kube-controller-manager", 10257, "/healthz")),
            ComponentStatus::new("etcd-0", None),
        ];
        let revision = self.etcd.revision();
        match req.verb {
            Verb::List => {
                let items = all
                    .into_iter()
                    .map(Object::ComponentStatus)
                    .filter(|o| req.field_selector.as_ref().is_none_or(|f| f.matches(o)))
                    .map(Arc::new)
                    .collect();
                Ok((200, Reply::List { items, revision }))
            }
            Verb::Get => all
                .into_iter()
                .find(|c| c.metadata.name == req.name)
                .map(|c| (200, Reply::Object(Arc::new(Object::ComponentStatus(c)))))
                .ok_or_else(|| (Stage::Storage, Status::not_found(Kind::ComponentStatus, &req.name))),
            _ => Err((
                Stage::Authorization,
                Status::method_not_allowed("the server does not allow this method on the requested resource"),
            )),
        }
    }

    fn key(req: &Request, name: &str) -> LookupKey {
        LookupKey::etcd(req.kind.storage_resource(), &req.namespace, name)
    }

    fn get(&self, req: &Request) -> StageResult<Arc<Object>> {
        self.etcd
            .get(&Self::key(req, &req.name))
            .map(|kv| kv.value.clone())
            .ok_or_else(|| (Stage::Storage, Status::not_found(req.kind, &req.name)))
    }

    fn check_fields(req: &Request) -> StageResult<()> {
        if let Some(fields) = &req.field_selector {
            fields
                .check_supported(&Object::empty(req.kind))
                .map_err(|m| (Stage::Validation, Status::bad_request(m)))?;
        }
        Ok(())
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn list(&self, req: &Request) -> StageResult<Reply> {
        Self::check_fields(req)?;
        let filter = WatchFilter {
            kind: req.kind,
            namespace: req.namespace.clone(),
            labels: req.label_selector.clone(),
            fields: req.field_selector.clone(),
        };
        let items = self
            .etcd
            .range(&list_prefix(req.kind, &req.namespace))
            .map(|(_, kv)| &kv.value)
            .filter(|o| filter.matches(o))
            .cloned()
            .collect();
        Ok(Reply::List { items, revision: self.etcd.revision() })
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn watch(&mut self, req: &Request, env: &mut Env, seq: Seq) -> StageResult<Reply> {
        Self::check_fields(req)?;
        let filter = WatchFilter {
            kind: req.kind,
            namespace: req.namespace.clone(),
            labels: req.label_selector.clone(),
            fields: req.field_selector.clone(),
        };
        // Catch-up events: history after the given revision, or the current state as ADDED.
        let mut backlog: Vec<(crate::record::WatchEventType, Arc<Object>, Revision)> = Vec::new();
        match req.resource_version {
            Some(rv) => {
                let changes = self.etcd.changes_since(rv).map_err(|e| match e {
                    EtcdError::Compacted { compacted } => {
                        (Stage::Storage, Status::gone(format!("too old resource version: {rv} ({compacted})")))
                    }
                    _ => (Stage::Storage, Status::bad_request(format!("resource version {rv} is in the future"))),
                })?;
                for change in changes {
                    if let Some(t) = watch::classify(&filter, change) {
                        backlog.push((t, change.value.clone(), change.revision));
                    }
                }
            }
            None => {
                for (_, kv) in self.etcd.range(&list_prefix(req.kind, &req.namespace)) {
                    if filter.matches(&kv.value) {
                        backlog.push((crate::record::WatchEventType::Added, kv.value.clone(), kv.mod_revision));
                    }
                }
            }
        }
        let id = self.watches.open(env.actor, filter);
        for (type_, object, revision) in backlog {
            self.send(id, env.actor, type_, object, revision, env, seq);
        }
        Ok(Reply::Watch { id, revision: self.etcd.revision() })
    }

    fn decode(req: &mut Request) -> StageResult<Object> {
        let kind = req.kind;
        let from_json = |value: &Value| {
            Object::decode(kind, value).map_err(|e| {
                let info = kind.info();
                (
                    Stage::Validation,
                    Status::bad_request(format!(
                        "{} in version \"{}\" cannot be handled as a {}: {}",
                        info.kind, info.version, info.kind, e.message
                    )),
                )
            })
        };
        let object = match req.body.take() {
            Some(Body::Object(o)) => *o,
            Some(Body::Json(value)) => from_json(&value)?,
            // A Binding sent anywhere but `pods/<name>/binding` is decoded as the JSON it stands for.
            Some(Body::Binding { node }) => from_json(&binding_json(&req.namespace, &req.name, &node))?,
            None => return Err((Stage::Validation, Status::bad_request("request body is required"))),
        };
        if object.kind() != kind {
            return Err((
                Stage::Validation,
                Status::bad_request("the kind of the provided object does not match the resource"),
            ));
        }
        Ok(object)
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn check_namespace(&self, req: &mut Request, object: &mut Object) -> StageResult<()> {
        if !req.kind.info().namespaced {
            object.meta_mut().namespace.clear();
            return Ok(());
        }
        let ns = &mut object.meta_mut().namespace;
        if ns.is_empty() {
            *ns = req.namespace.clone();
        } else if req.namespace.is_empty() {
            req.namespace = ns.clone();
        } else if *ns != req.namespace {
            return Err((
                Stage::Validation,
                Status::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ),
            ));
        }
        Ok(())
    }

    /// POST. `applied` carries the managed fields of a server-side apply that creates the
    /// object; otherwise the creator owns everything it set.
    fn create(
        &mut self,
        mut req: Request,
        env: &mut Env,
        seq: Seq,
        applied: Option<Vec<ManagedFieldsEntry>>,
    ) -> StageResult<Arc<Object>> {
        let strict = matches!(req.body, Some(Body::Json(_)));
        let mut object = Self::decode(&mut req)?;
        self.check_namespace(&mut req, &mut object)?;
        // Mutating admission (including the defaults of a new object).
        {
            let meta = object.meta_mut();
            meta.uid = uuid(env.rng);
            meta.creation_timestamp = Some(env.now);
            meta.resource_version.clear();
            meta.deletion_timestamp = None;
            if tracks_generation(req.kind) {
                meta.generation = 1;
            }
        }
        // The name is generated before admission, which may use it (a Job's labels).
        let generated = object.meta().name.is_empty() && !object.meta().generate_name.is_empty();
        if generated {
            let base = truncate(&object.meta().generate_name, 58);
            object.meta_mut().name = format!("{base}{}", env.rng.string(admission::NAME_ALPHABET, 5));
        }
        // Defaults are part of what the client created; what admission plugins add is nobody's.
        admission::default_object(&mut object);
        self.admit_custom(&req, &mut object, strict)?;
        self.to_storage_version(&mut object);
        if let Object::CustomResourceDefinition(crd) = &mut object {
            crd.status = Default::default();
            crd.metadata.finalizers.push(apiextensions::CLEANUP_FINALIZER.to_string());
        }
        // The creator owns what it set, worked out when first read (see `ManagedFields`): from
        // the object the store keeps, for the kinds admission changes no further past this
        // point (nothing is copied), or else from a copy of the object as it stands now.
        let stored: Arc<OnceLock<Weak<Object>>> = Default::default();
        let created = match applied {
            Some(entries) => ManagedFields::new(entries),
            None if !admission::changes_after_defaults(req.kind) => {
                let (kind, stored) = (req.kind, stored.clone());
                self.update_write(&req, env).record_created_later(move || {
                    let after = stored.get().and_then(Weak::upgrade).map_or(Value::Null, |object| {
                        let mut copy = (*object).clone();
                        copy.meta_mut().managed_fields = ManagedFields::default();
                        serde_json::to_value(&copy).unwrap_or(Value::Null)
                    });
                    (Value::Object(Default::default()), untracked_removed(kind, after))
                })
            }
            None => {
                let write = self.update_write(&req, env);
                let (kind, source) = (write.kind, object.json_source());
                write.record_later(&ManagedFields::default(), move || {
                    (Value::Object(Default::default()), untracked_removed(kind, source()))
                })
            }
        };
        // Mutating admission: LimitRanger gives containers the namespace's default resources.
        if let Object::Pod(pod) = &mut object {
            if let Some(note) = limit_ranger::set_defaults(&self.etcd, pod) {
                pod.metadata.annotations.insert("kubernetes.io/limit-ranger".into(), note);
            }
        }
        if let Object::PersistentVolumeClaim(pvc) = &mut object {
            storage_admission::default_class(&self.etcd, pvc);
        }
        if let Object::Ingress(ing) = &mut object {
            networking_admission::default_class(&self.etcd, ing);
        }
        // Mutating admission: Priority resolves the pod's class into its priority.
        let priority = match &mut object {
            Object::Pod(pod) => priority::admit_pod(&self.etcd, pod),
            Object::PriorityClass(pc) => priority::admit_class(&self.etcd, pc),
            _ => Ok(()),
        };
        if let Err(why) = priority {
            let what = format!("{} \"{}\"", req.kind.qualified_resource(), object.name());
            return Err((Stage::MutatingAdmission, Status::forbidden(format!("{what} is forbidden: {why}"))));
        }
        admission::admit_create(&mut object, env.rng);
        // Mutating admission: MutatingAdmissionWebhook.
        self.call_webhooks(&req, "CREATE", Some(&mut object), None, None, env, seq)?;
        // Validation.
        let errors = validation::validate(&object);
        if !errors.is_empty() {
            let name = object.name().to_string();
            return Err((Stage::Validation, Status::invalid(req.kind, &name, errors)));
        }
        // Validating admission: NamespaceLifecycle.
        if req.kind.info().namespaced {
            let ns = object.namespace().to_string();
            // Whether it is being terminated, if it exists. The events storage has no
            // namespaces: the API server in front of it looked.
            let terminating = match self.namespace_verdict {
                Some(exists) => exists.then_some(false),
                None => self
                    .etcd
                    .get(&LookupKey::etcd("namespaces", "", &ns))
                    .map(|kv| kv.value.meta().deletion_timestamp.is_some()),
            };
            match terminating {
                None => return Err((Stage::ValidatingAdmission, Status::not_found(Kind::Namespace, &ns))),
                Some(true) if req.kind != Kind::Event => {
                    return Err((
                        Stage::ValidatingAdmission,
                        Status::forbidden(format!(
                            "{} \"{}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                            req.kind.qualified_resource(),
                            object.name()
                        )),
                    ));
                }
                _ => {}
            }
        }
        // Validating admission: LimitRanger (containers within the namespace's bounds), then
        // ResourceQuota (within every quota of the namespace).
        let refused = |why: String| {
            let what = format!("{} \"{}\"", req.kind.qualified_resource(), object.name());
            (Stage::ValidatingAdmission, Status::forbidden(format!("{what} is forbidden: {why}")))
        };
        if let Object::Pod(pod) = &object {
            let problems = limit_ranger::violations(&self.etcd, pod);
            match problems.len() {
                0 => {}
                1 => return Err(refused(problems.join(""))),
                _ => return Err(refused(format!("[{}]", problems.join(", ")))),
            }
        }
        if let Some(why) = quota::refusal(&self.etcd, &object) {
            return Err(refused(why));
        }
        // Validating admission: ServiceAccount (the account a pod names must exist).
        self.check_service_account(&object, generated).map_err(|e| (Stage::ValidatingAdmission, e))?;
        // Validating admission: ValidatingAdmissionPolicy.
        self.check_policies(&req, "CREATE", Some(&object), None, env, seq)?;
        // Validating admission: ValidatingAdmissionWebhook.
        self.call_webhooks(&req, "CREATE", None, Some(&object), None, env, seq)?;
        self.allocate_service_addresses(&mut object, env.rng, req.dry_run).map_err(|e| (Stage::Storage, e))?;
        object.set_type_meta();
        object.meta_mut().managed_fields = created;
        if req.dry_run {
            let object = Arc::new(object);
            let _ = stored.set(Arc::downgrade(&object));
            return Ok(object);
        }
        self.fits_in_etcd(&object)?;
        // Storage; a generated name that collides is drawn again, as the API server retries.
        let mut attempts = 0;
        loop {
            let key = Self::key(&req, object.name());
            // The object moves into the store, or comes back if the name is taken.
            match self.etcd.try_create(&key, object) {
                Ok(change) => {
                    let _ = stored.set(Arc::downgrade(&change.value));
                    return Ok(self.publish(change, env, seq));
                }
                Err(back) => object = *back,
            }
            if !generated || attempts >= 8 {
                return Err((Stage::Storage, Status::already_exists(req.kind, object.name())));
            }
            attempts += 1;
            let base = truncate(&object.meta().generate_name, 58);
            object.meta_mut().name = format!("{base}{}", env.rng.string(admission::NAME_ALPHABET, 5));
        }
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn bind(&mut self, mut req: Request, env: &mut Env, seq: Seq) -> StageResult<Arc<Object>> {
        let target = match &mut req.body {
            Some(Body::Binding { node }) => std::mem::take(node),
            // `target.name`, looked up directly (a JSON pointer is parsed, with a copy per token).
            Some(Body::Json(v)) => {
                v.get("target").and_then(|t| t.get("name")).and_then(|n| n.as_str()).unwrap_or("").to_string()
            }
            _ => String::new(),
        };
        if target.is_empty() {
            return Err((
                Stage::Validation,
                Status::invalid(Kind::Pod, &req.name, vec!["target.name: Required value".into()]),
            ));
        }
        let key = Self::key(&req, &req.name);
        let current = self.etcd.get(&key).ok_or_else(|| (Stage::Storage, Status::not_found(req.kind, &req.name)))?;
        let Object::Pod(mut pod) = (*current.value).clone() else {
            return Err((Stage::Storage, Status::not_found(req.kind, &req.name)));
        };
        if !pod.spec.node_name.is_empty() {
            return Err((
                Stage::Storage,
                Status {
                    code: 409,
                    reason: "Conflict",
                    ..Status::bad_request(format!(
                        "pod {} is already assigned to node \"{}\"",
                        req.name, pod.spec.node_name
                    ))
                },
            ));
        }
        if pod.metadata.deletion_timestamp.is_some() {
            return Err((
                Stage::Storage,
                Status {
                    code: 409,
                    reason: "Conflict",
                    ..Status::bad_request(format!("pod {} is being deleted, cannot be assigned to a host", req.name))
                },
            ));
        }
        Arc::make_mut(&mut pod.spec).node_name = target;
        let cond = PodCondition { type_: "PodScheduled".into(), status: "True".into(), ..Default::default() };
        set_condition(&mut Arc::make_mut(&mut pod.status).conditions, cond, env.now);
        let change = self
            .etcd
            .update(&key, Object::Pod(pod), Some(current.mod_revision))
            .map_err(|_| (Stage::Storage, Status::conflict(req.kind, &req.name)))?;
        Ok(self.publish(change, env, seq))
    }

    /// PATCH: the patch applied to the stored object's JSON, then the update path (decode,
    /// admission, validation, storage with the stored resourceVersion as precondition).
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn patch(&mut self, mut req: Request, env: &mut Env, seq: Seq) -> StageResult<Arc<Object>> {
        let key = Self::key(&req, &req.name);
        let current = self.etcd.get(&key).ok_or_else(|| (Stage::Storage, Status::not_found(req.kind, &req.name)))?;
        let live = current.value.to_json_value();
        let patch_type = req.patch_type.unwrap_or(patch::PatchType::Strategic);
        // Custom resources have no patch strategies to merge by: strategic merge is refused.
        if matches!(req.kind, Kind::Custom(_)) && patch_type == patch::PatchType::Strategic {
            return Err((
                Stage::Validation,
                Status::new(
                    415,
                    "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml".to_string(),
                ),
            ));
        }
        let body = match req.body.take() {
            Some(Body::Json(v)) => v,
            _ => return Err((Stage::Validation, Status::bad_request("a patch needs a JSON body"))),
        };
        if req.subresource == Some(Subresource::Scale) {
            let patched = scale_patched(&live, patch_type, &body, &req)?;
            req.body = Some(Body::Json(patched));
            return self.update(req, env, seq, None);
        }
        let patched =
            patch::apply(&live, patch_type, &body).map_err(|m| (Stage::Validation, Status::bad_request(m)))?;
        // A patch that writes managedFields itself sets them as given.
        let explicit = match patch_type {
            patch::PatchType::Json => body.as_array().is_some_and(|ops| {
                ops.iter().any(|op| {
                    op.get("path").and_then(Value::as_str).is_some_and(|p| p.starts_with("/metadata/managedFields"))
                })
            }),
            _ => body.pointer("/metadata/managedFields").is_some(),
        };
        let entries = match explicit {
            true => Some(
                patched
                    .pointer("/metadata/managedFields")
                    .filter(|v| !v.is_null())
                    .map(crate::api::value_de::from_value::<Vec<ManagedFieldsEntry>>)
                    .transpose()
                    .map_err(|e| {
                        (Stage::Validation, Status::bad_request(format!("error decoding managedFields: {e}")))
                    })?
                    .unwrap_or_default(),
            ),
            false => None,
        };
        req.body = Some(Body::Json(patched));
        self.update(req, env, seq, entries)
    }

    /// Server-side apply: PATCH with the applier's whole intent. The field manager merges it
    /// into the live object (or creates the object) unless it conflicts with fields other
    /// managers own; then the update (or create) path runs as for any write.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn server_side_apply(&mut self, mut req: Request, env: &mut Env, seq: Seq) -> StageResult<(u16, Reply)> {
        let Some(manager) = req.field_manager.clone().filter(|m| !m.is_empty()) else {
            return Err((
                Stage::Validation,
                Status::bad_request(
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                ),
            ));
        };
        let config = match req.body.take() {
            Some(Body::Json(v)) if v.is_object() => v,
            _ => {
                return Err((
                    Stage::Validation,
                    Status::bad_request("a server-side apply needs a YAML or JSON object"),
                ));
            }
        };
        if config.pointer("/metadata/managedFields").is_some_and(|m| !m.is_null()) {
            return Err((Stage::Validation, Status::bad_request("metadata.managedFields must be nil")));
        }
        let write = field_manager::ApplyWrite {
            kind: req.kind,
            manager: &manager,
            force: req.force,
            api_version: req.kind.api_version(),
            now: env.now,
        };
        let key = Self::key(&req, &req.name);
        let current = self.etcd.get(&key).map(|kv| kv.value.clone());
        let empty = Value::Object(Default::default());
        let (live, entries) = match &current {
            Some(o) => (o.to_json_value(), o.meta().managed_fields.clone()),
            None => (empty, Default::default()),
        };
        let (merged, entries) = write.merge(&live, &entries, &config).map_err(|conflicts| {
            (
                Stage::Validation,
                Status {
                    code: 409,
                    reason: "Conflict",
                    ..Status::bad_request(field_manager::conflict_message(&conflicts))
                },
            )
        })?;
        req.body = Some(Body::Json(merged));
        match current {
            Some(_) => self.update(req, env, seq, Some(entries)).map(|o| (200, Reply::Object(o))),
            None => {
                req.verb = Verb::Create;
                self.create(req, env, seq, Some(entries)).map(|o| (201, Reply::Object(o)))
            }
        }
    }

    /// The field manager a write is recorded under: the one the client named, or one
    /// inferred from who the client is (its user agent, on a real cluster).
    fn update_write<'a>(&self, req: &'a Request, env: &Env) -> field_manager::UpdateWrite<'a> {
        let manager = match &req.field_manager {
            Some(m) => m.as_str(),
            None => manager_of(env.user),
        };
        let subresource = match req.subresource {
            Some(Subresource::Status) => "status",
            Some(Subresource::Scale) => "scale",
            _ => "",
        };
        field_manager::UpdateWrite {
            kind: req.kind,
            manager,
            subresource,
            api_version: req.kind.api_version(),
            now: env.now,
        }
    }

    /// PUT. `applied` carries the managed fields of a server-side apply; otherwise the
    /// writer owns the fields it changed.
    fn update(
        &mut self,
        mut req: Request,
        env: &mut Env,
        seq: Seq,
        applied: Option<Vec<ManagedFieldsEntry>>,
    ) -> StageResult<Arc<Object>> {
        let strict = matches!(req.body, Some(Body::Json(_)));
        let mut object = Self::decode(&mut req)?;
        self.check_namespace(&mut req, &mut object)?;
        let name = if req.name.is_empty() { object.name().to_string() } else { req.name.clone() };
        if object.name() != name {
            return Err((
                Stage::Validation,
                Status::bad_request("the name of the object does not match the name on the URL"),
            ));
        }
        let key = Self::key(&req, &name);
        let current = self.etcd.get(&key).ok_or_else(|| (Stage::Storage, Status::not_found(req.kind, &name)))?.clone();
        let wanted_rv = object.meta().resource_version.clone();
        if !wanted_rv.is_empty() && wanted_rv != current.mod_revision.to_string() {
            return Err((Stage::Storage, Status::conflict(req.kind, &name)));
        }
        let old = &*current.value;
        // The status subresource changes only status; the main resource never changes status.
        if Object::has_status(req.kind) {
            let status_only = req.subresource == Some(Subresource::Status);
            object = merge_status(old, object, status_only);
        } else if self.custom_has_status(req.kind) {
            object = merge_custom_status(old, object, req.subresource == Some(Subresource::Status));
        }
        {
            let old_meta = old.meta();
            let meta = object.meta_mut();
            meta.uid = old_meta.uid.clone();
            meta.creation_timestamp = old_meta.creation_timestamp;
            meta.deletion_timestamp = old_meta.deletion_timestamp;
            meta.deletion_grace_period_seconds = old_meta.deletion_grace_period_seconds;
            meta.generation = old_meta.generation;
        }
        // A status update carries the stored spec unchanged (for pods, the very same shared
        // spec): nothing to default or re-validate there.
        let status_update = req.subresource == Some(Subresource::Status) || same_pod_spec(old, &object);
        if let Err(errors) = keep_allocated(old, &mut object) {
            return Err((Stage::Validation, Status::invalid(req.kind, &name, errors)));
        }
        if let Object::Custom(_) = object {
            self.admit_custom(&req, &mut object, strict && !status_update)?;
            self.to_storage_version(&mut object);
        }
        if !status_update {
            admission::default_object(&mut object);
            if (spec_changed(old, &object) || custom_spec_changed(old, &object)) && object.meta().generation > 0 {
                object.meta_mut().generation += 1;
            }
        }
        // Mutating admission: MutatingAdmissionWebhook.
        self.call_webhooks(&req, "UPDATE", Some(&mut object), None, Some(old), env, seq)?;
        // A pod write that keeps the stored spec is checked as upstream checks a pod status
        // update: its metadata (the spec was checked when it was stored).
        let errors = if status_update && req.kind == Kind::Pod {
            validation::validate_metadata(&object)
        } else {
            let mut errors = validation::validate(&object);
            if !status_update {
                errors.extend(validation::validate_update(old, &object));
            }
            errors
        };
        if !errors.is_empty() {
            return Err((Stage::Validation, Status::invalid(req.kind, &name, errors)));
        }
        // Validating admission: ValidatingAdmissionPolicy.
        self.check_policies(&req, "UPDATE", Some(&object), Some(old), env, seq)?;
        // Validating admission: ValidatingAdmissionWebhook.
        self.call_webhooks(&req, "UPDATE", None, Some(&object), Some(old), env, seq)?;
        object.set_type_meta();
        let status_only = req.subresource == Some(Subresource::Status);
        // A status write's entries are worked out when first read (see `ManagedFields`); the
        // write keeps the revision before it and its own status for that.
        let mut deferred = false;
        let entries = match applied {
            Some(entries) => ManagedFields::new(entries),
            None => {
                let old_entries = &old.meta().managed_fields;
                let write = self.update_write(&req, env);
                if same_tracked(old, &object, status_only) {
                    old_entries.clone()
                } else if let Some(entries) = status_only.then(|| record_status_later(&write, old, &object)).flatten() {
                    deferred = true;
                    entries
                } else {
                    let (before, after) = (tracked_view(old, status_only), tracked_view(&object, status_only));
                    write
                        .record(&mut self.field_sets, old_entries, &before, &after)
                        .map(ManagedFields::new)
                        .unwrap_or_else(|| old_entries.clone())
                }
            }
        };
        object.meta_mut().managed_fields = entries;
        if req.dry_run {
            return Ok(Arc::new(object));
        }
        // Nothing changed: nothing is written, and the resourceVersion stays. (A deferred
        // write changed the status, so there is nothing to compare, and comparing would work
        // out its entries.)
        object.meta_mut().resource_version = current.value.meta().resource_version.clone();
        if !deferred && object == *current.value {
            return Ok(current.value.clone());
        }
        // Removing the last finalizer of an object being deleted completes its deletion (for a
        // namespace, its `spec.finalizers` too).
        let namespace_finalized = !matches!(&object, Object::Namespace(ns) if !ns.spec.finalizers.is_empty());
        if object.meta().deletion_timestamp.is_some()
            && object.meta().finalizers.is_empty()
            && namespace_finalized
            && !is_graceful_pod(&object)
        {
            let change =
                self.etcd.delete(&key, None).map_err(|_| (Stage::Storage, Status::conflict(req.kind, &name)))?;
            return Ok(self.publish(change, env, seq));
        }
        self.fits_in_etcd(&object)?;
        let change = self
            .etcd
            .update(&key, object, Some(current.mod_revision))
            .map_err(|_| (Stage::Storage, Status::conflict(req.kind, &name)))?;
        Ok(self.publish(change, env, seq))
    }

    /// etcd refuses a request over its limit, and the API server passes its words on (a 500:
    /// kubectl prints `Error from server: etcdserver: request is too large`). Only writes
    /// that came with a large body are measured.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn fits_in_etcd(&self, object: &Object) -> StageResult<()> {
        if self.large_body && json_len(object) > ETCD_MAX_REQUEST_BYTES {
            return Err((Stage::Storage, Status::internal("etcdserver: request is too large")));
        }
        Ok(())
    }

    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn delete(&mut self, req: Request, env: &mut Env, seq: Seq) -> StageResult<Arc<Object>> {
        let key = Self::key(&req, &req.name);
        let current =
            self.etcd.get(&key).ok_or_else(|| (Stage::Storage, Status::not_found(req.kind, &req.name)))?.clone();
        // Validating admission: ValidatingAdmissionPolicy.
        self.check_policies(&req, "DELETE", None, Some(&current.value), env, seq)?;
        // Validating admission: ValidatingAdmissionWebhook.
        self.call_webhooks(&req, "DELETE", None, None, Some(&current.value), env, seq)?;
        let mut object = (*current.value).clone();
        // The built-in PriorityClasses stay (the registry refuses to delete them).
        if req.kind == Kind::PriorityClass && crate::api::scheduling::SYSTEM_CLASSES.iter().any(|c| c.0 == req.name) {
            return Err((
                Stage::Storage,
                Status::forbidden(format!(
                    "priorityclasses.scheduling.k8s.io \"{}\" is forbidden: this is a system priority class and cannot be deleted",
                    req.name
                )),
            ));
        }
        // Namespaces are finalized before they go: the first delete only marks the namespace
        // Terminating; the namespace controller empties it and removes the `kubernetes`
        // finalizer from spec.finalizers, and then it is deleted like any object.
        if let Object::Namespace(ns) = &mut object {
            if IMMORTAL_NAMESPACES.contains(&req.name.as_str()) {
                return Err((
                    Stage::ValidatingAdmission,
                    Status::forbidden(format!(
                        "namespaces \"{}\" is forbidden: this namespace may not be deleted",
                        req.name
                    )),
                ));
            }
            if ns.metadata.deletion_timestamp.is_none() {
                if req.dry_run {
                    return Ok(current.value.clone());
                }
                ns.metadata.deletion_timestamp = Some(env.now);
                ns.status.phase = "Terminating".into();
                let change = self
                    .etcd
                    .update(&key, object, Some(current.mod_revision))
                    .map_err(|_| (Stage::Storage, Status::conflict(req.kind, &req.name)))?;
                return Ok(self.publish(change, env, seq));
            }
            if !ns.spec.finalizers.is_empty() {
                return Ok(current.value.clone());
            }
        }
        // Pods on a node stop gracefully: the deletion is marked, the kubelet kills the
        // containers and then deletes the pod for good.
        if let Object::Pod(pod) = &object {
            let bound = !pod.spec.node_name.is_empty() && !pod.is_terminal();
            let grace = req.grace_period_seconds.or(pod.spec.termination_grace_period_seconds).unwrap_or(30).max(0);
            if bound && grace > 0 {
                let deadline = env.now + crate::sim::Duration::seconds(grace as u64);
                if let Some(existing) = pod.metadata.deletion_timestamp {
                    if existing <= deadline {
                        return Ok(current.value.clone());
                    }
                }
                if req.dry_run {
                    return Ok(current.value.clone());
                }
                let meta = object.meta_mut();
                meta.deletion_timestamp = Some(deadline);
                meta.deletion_grace_period_seconds = Some(grace);
                if meta.generation > 0 {
                    meta.generation += 1;
                }
                let change = self
                    .etcd
                    .update(&key, object, Some(current.mod_revision))
                    .map_err(|_| (Stage::Storage, Status::conflict(req.kind, &req.name)))?;
                return Ok(self.publish(change, env, seq));
            }
        }
        if req.dry_run {
            return Ok(current.value.clone());
        }
        // Foreground and orphan deletion hand the object to the garbage collector first.
        let gc_finalizer = match req.propagation {
            Some(Propagation::Foreground) => Some(FOREGROUND_FINALIZER),
            Some(Propagation::Orphan) => Some(ORPHAN_FINALIZER),
            _ => None,
        };
        if let Some(f) = gc_finalizer {
            if !object.meta().finalizers.iter().any(|x| x == f) {
                object.meta_mut().finalizers.push(f.to_string());
            }
        }
        if !object.meta().finalizers.is_empty() {
            if object.meta().deletion_timestamp.is_none() || gc_finalizer.is_some() {
                if object.meta().deletion_timestamp.is_none() {
                    object.meta_mut().deletion_timestamp = Some(env.now);
                    object.meta_mut().deletion_grace_period_seconds = Some(0);
                }
                if object == *current.value {
                    return Ok(current.value.clone());
                }
                let change = self
                    .etcd
                    .update(&key, object, Some(current.mod_revision))
                    .map_err(|_| (Stage::Storage, Status::conflict(req.kind, &req.name)))?;
                return Ok(self.publish(change, env, seq));
            }
            return Ok(current.value.clone());
        }
        let change = self
            .etcd
            .delete(&key, Some(current.mod_revision))
            .map_err(|_| (Stage::Storage, Status::conflict(req.kind, &req.name)))?;
        Ok(self.publish(change, env, seq))
    }

    /// The ValidatingAdmissionPolicy plugin on a write: a refusal at validating admission, or
    /// the warnings it has for the person at kubectl and its notes for the record.
    fn check_policies(
        &mut self,
        req: &Request,
        operation: &'static str,
        object: Option<&Object>,
        old: Option<&Object>,
        env: &mut Env,
        seq: Seq,
    ) -> StageResult<()> {
        let no_groups = Vec::new();
        let (user, groups) = match &env.identity {
            Some(who) => (who.user.as_str(), &who.groups),
            None => (env.user, &no_groups),
        };
        let subresource = match req.subresource {
            Some(Subresource::Status) => "status",
            Some(Subresource::Scale) => "scale",
            _ => "",
        };
        let name = object.or(old).map_or(req.name.as_str(), |o| o.name());
        let attrs = admission_policy::Attributes {
            operation,
            kind: req.kind,
            subresource,
            namespace: object.or(old).map_or(req.namespace.as_str(), |o| o.namespace()),
            name,
            object,
            old_object: old,
            user,
            groups,
            dry_run: req.dry_run,
        };
        let verdict = admission_policy::admit(&self.etcd, &attrs).map_err(|e| (Stage::ValidatingAdmission, e))?;
        if env.record.enabled {
            for text in verdict.notes {
                let what = Happening::Decision { text: format!("validating admission: {text}") };
                env.record.push(env.now, self.etcd.revision(), ComponentId::API_SERVER, Some(seq), what);
            }
        }
        if env.actor == ComponentId::USER {
            self.warnings.extend(verdict.warnings);
        }
        Ok(())
    }

    /// The warnings the server has sent the person at kubectl since they were last taken.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// ServiceAccount admission's lookup: a pod (other than a mirror pod) may only name a
    /// service account that exists in its namespace. A missing `default` account passes:
    /// upstream retries that lookup for a while, and the service account controller creates
    /// it within that time. The plugin runs before a generated name is drawn, so its error
    /// names the pod by its `generateName` then.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn check_service_account(&self, object: &Object, generated: bool) -> Result<(), Status> {
        let Object::Pod(pod) = object else { return Ok(()) };
        if pod.metadata.annotations.contains_key(admission::MIRROR_POD_ANNOTATION) {
            return Ok(());
        }
        let name = pod.spec.service_account_name.as_deref().unwrap_or("default");
        let ns = &pod.metadata.namespace;
        if name == "default" || self.etcd.get(&LookupKey::etcd("serviceaccounts", ns, name)).is_some() {
            return Ok(());
        }
        Err(Status::forbidden(format!(
            "pods \"{}\" is forbidden: error looking up service account {ns}/{name}: serviceaccount \"{name}\" not found",
            if generated { &pod.metadata.generate_name } else { &pod.metadata.name }
        )))
    }

    /// Deletes the Events whose lease ran out by `env.now`, as etcd does when it revokes an
    /// expired lease: each deletion is recorded, and watchers see it DELETED. Returns how many
    /// went. The events storage, when Events are kept apart, expires its own.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub fn expire_events(&mut self, env: &mut Env) -> usize {
        let mut expired = 0;
        if self.event_leases.next().is_some_and(|t| t <= env.now) {
            for key in self.event_leases.take_due(env.now) {
                let Ok(change) = self.etcd.delete(&key, None) else { continue };
                let what = if env.record.enabled {
                    Happening::Decision {
                        text: format!(
                            "etcd: the lease on {key} ran out ({} after the Event's last write, --event-ttl); its key is deleted",
                            EVENT_TTL.short()
                        ),
                    }
                } else {
                    Happening::Decision { text: String::new() }
                };
                let seq = env.record.push(env.now, change.revision, ComponentId::API_SERVER, None, what);
                self.publish(change, env, seq);
                expired += 1;
            }
        }
        if let Some(events) = self.events.as_mut() {
            if self.events_oldest_lease.is_some_and(|t| t + EVENT_TTL <= env.now) {
                let side = &mut events.get_mut().here().api;
                expired += side.expire_events(env);
                self.events_oldest_lease = side.event_leases.next().map(|t| Time(t.0.saturating_sub(EVENT_TTL.0)));
            }
        }
        expired
    }

    /// How many Event keys hold a lease (for tests and views).
    pub fn event_leases(&self) -> usize {
        self.event_leases.expiry.len()
    }

    /// Sends a write's watch notifications and returns the stored object.
    fn publish(&mut self, change: Change, env: &mut Env, seq: Seq) -> Arc<Object> {
        if let Object::CustomResourceDefinition(crd) = &*change.value {
            self.served_cache.replace(None);
            if change.kind == crate::etcd::ChangeKind::Put {
                self.definition_written(&crd.metadata.name.clone(), env.now);
            }
        }
        if change.value.kind() == Kind::Event {
            match change.kind {
                crate::etcd::ChangeKind::Put => self.event_leases.attach(&change.key, env.now + EVENT_TTL),
                crate::etcd::ChangeKind::Delete => self.event_leases.detach(&change.key),
            }
        }
        for d in self.watches.deliveries(&change) {
            self.send(d.watch, d.owner, d.type_, d.object, change.revision, env, seq);
        }
        let value = change.value;
        if !value.namespace().is_empty() {
            self.refresh_quotas(&value, env, seq);
        }
        value
    }

    /// Brings the status of the quotas of `changed`'s namespace that count its kind (or that
    /// it is) up to date with what the namespace now holds: a write of its own, seen by whoever
    /// watches quotas. Changes no quota counts (Events, most of all) cost no recount.
    fn refresh_quotas(&mut self, changed: &Object, env: &mut Env, seq: Seq) {
        let namespace = changed.namespace();
        for q in quota::quotas(&self.etcd, namespace) {
            let itself = matches!(changed, Object::ResourceQuota(c) if c.metadata.name == q.metadata.name);
            if !itself && !quota::counts_kind(&q, changed.kind()) {
                continue;
            }
            let Some(next) = quota::refreshed(&self.etcd, &q) else { continue };
            let key = Etcd::key_for("resourcequotas", namespace, &q.metadata.name);
            if let Ok(change) = self.etcd.update(&key, Object::ResourceQuota(next), None) {
                self.publish(change, env, seq);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        watch: WatchId,
        owner: ComponentId,
        type_: crate::record::WatchEventType,
        object: Arc<Object>,
        revision: Revision,
        env: &mut Env,
        cause: Seq,
    ) {
        let what = if env.record.enabled {
            Happening::Notify {
                to: owner,
                event: type_,
                kind: object.kind(),
                namespace: object.namespace().to_string(),
                name: object.name().to_string(),
            }
        } else {
            Happening::Decision { text: String::new() }
        };
        let seq = env.record.push(env.now, revision, ComponentId::API_SERVER, Some(cause), what);
        let object = match self.custom_watch_versions.get(&watch) {
            Some(version) => apiextensions::converted(&object, *version),
            None => object,
        };
        self.watches.push(watch, WatchEvent { type_, object, revision, seq });
        if self.woken.last() != Some(&owner) {
            self.woken.push(owner);
        }
    }
}

/// The allocators' state: ClusterIPs (as offsets into the service range) and NodePorts in use.
#[derive(Debug, Default)]
struct ServiceAllocations {
    cluster_ips: std::collections::BTreeSet<u32>,
    node_ports: std::collections::BTreeSet<i32>,
}

impl ApiServer {
    /// The Service registry's allocators, run on create (`--service-cluster-ip-range=10.96.0.0/12`,
    /// `--service-node-port-range=30000-32767`): a ClusterIP unless the Service asks for one or is
    /// headless (`None`), and a nodePort for each port of a NodePort or LoadBalancer Service. New
    /// ones are drawn at random, from above a small static band first, as upstream does. Like
    /// upstream's repair loop, it first frees what no stored Service holds, so a deleted Service's
    /// addresses become free again; a dry run only checks.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    fn allocate_service_addresses(&mut self, object: &mut Object, rng: &mut Rng, dry_run: bool) -> Result<(), Status> {
        const NET: u32 = 0x0a60_0000; // 10.96.0.0/12: offsets 1..=SIZE-2 are usable
        const SIZE: u32 = 1 << 20;
        const PORTS: (i32, i32) = (30000, 32767);
        let Object::Service(svc) = object else { return Ok(()) };
        let offset_of = |ip: &str| ip.parse::<std::net::Ipv4Addr>().ok().map(|a| u32::from(a).wrapping_sub(NET));
        let (mut ips, mut ports) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for stored in self.peek_list(Kind::Service, "") {
            if let Object::Service(s) = &*stored {
                ips.extend(s.spec.cluster_ips.iter().chain([&s.spec.cluster_ip]).filter_map(|ip| offset_of(ip)));
                ports.extend(s.spec.ports.iter().filter_map(|p| p.node_port));
            }
        }
        let held = &mut self.service_allocations;
        held.cluster_ips.retain(|ip| ips.contains(ip));
        held.cluster_ips.extend(ips);
        held.node_ports.retain(|p| ports.contains(p));
        held.node_ports.extend(ports);
        // A random free index in 0..size, from static_band up first (upstream's random scan).
        let pick = |rng: &mut Rng, size: u32, static_band: u32, taken: &dyn Fn(u32) -> bool| {
            [(static_band, size), (0, static_band)].into_iter().find_map(|(lo, hi)| {
                let start = rng.below(u64::from(hi - lo)) as u32;
                (0..hi - lo).map(|i| lo + (start + i) % (hi - lo)).find(|&i| !taken(i))
            })
        };
        let full = |what: &str| Status {
            code: 500,
            reason: "InternalError",
            ..Status::bad_request(format!("Internal error occurred: failed to allocate {what}: range is full"))
        };
        let type_ = svc.spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
        if type_ != "ExternalName" {
            // The cluster is single-stack IPv4: a Service may not require dual-stack nor put
            // IPv6 first (a second family it only prefers is dropped).
            let cause = if svc.spec.ip_family_policy.as_deref() == Some("RequireDualStack") {
                Some("spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services".to_string())
            } else {
                svc.spec.ip_families.first().filter(|f| *f != "IPv4").map(|first| {
                    format!("spec.ipFamilies[0]: Invalid value: \"{first}\": not configured on this cluster")
                })
            };
            if let Some(cause) = cause {
                return Err(Status::invalid(Kind::Service, &svc.metadata.name, vec![cause]));
            }
            if svc.spec.cluster_ip.is_empty() {
                svc.spec.cluster_ip = svc.spec.cluster_ips.first().cloned().unwrap_or_default();
            }
            if svc.spec.cluster_ip.is_empty() {
                let taken = |i: u32| held.cluster_ips.contains(&(i + 1));
                let Some(i) = pick(rng, SIZE - 2, 256, &taken) else { return Err(full("a serviceIP")) };
                svc.spec.cluster_ip = std::net::Ipv4Addr::from(NET + i + 1).to_string();
            } else if svc.spec.cluster_ip != "None" {
                let ip = svc.spec.cluster_ip.clone();
                let field = format!("spec.clusterIPs: Invalid value: []string{{\"{ip}\"}}: failed to allocate IP {ip}");
                let cause = match offset_of(&ip) {
                    Some(o) if (1..SIZE - 1).contains(&o) && held.cluster_ips.contains(&o) => {
                        Some(format!("{field}: provided IP is already allocated"))
                    }
                    Some(o) if (1..SIZE - 1).contains(&o) => None,
                    _ => Some(format!(
                        "{field}: the provided IP ({ip}) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
                    )),
                };
                if let Some(cause) = cause {
                    return Err(Status::invalid(Kind::Service, &svc.metadata.name, vec![cause]));
                }
            }
            svc.spec.cluster_ips = vec![svc.spec.cluster_ip.clone()];
            svc.spec.ip_families = vec!["IPv4".into()];
            svc.spec.ip_family_policy.get_or_insert_with(|| "SingleStack".into());
        }
        let wants_node_ports = type_ == "NodePort"
            || (type_ == "LoadBalancer" && svc.spec.allocate_load_balancer_node_ports != Some(false));
        let mut new_ports = Vec::new();
        for (i, port) in svc.spec.ports.iter_mut().enumerate().filter(|_| wants_node_ports) {
            match port.node_port {
                Some(np) if !(PORTS.0..=PORTS.1).contains(&np) => {
                    let cause = format!(
                        "spec.ports[{i}].nodePort: Invalid value: {np}: provided port is not in the valid range. The range of valid ports is {}-{}",
                        PORTS.0, PORTS.1
                    );
                    return Err(Status::invalid(Kind::Service, &svc.metadata.name, vec![cause]));
                }
                Some(np) if held.node_ports.contains(&np) || new_ports.contains(&np) => {
                    let cause =
                        format!("spec.ports[{i}].nodePort: Invalid value: {np}: provided port is already allocated");
                    return Err(Status::invalid(Kind::Service, &svc.metadata.name, vec![cause]));
                }
                Some(np) => new_ports.push(np),
                None => {
                    let size = (PORTS.1 - PORTS.0 + 1) as u32;
                    let taken = |i: u32| {
                        let p = PORTS.0 + i as i32;
                        held.node_ports.contains(&p) || new_ports.contains(&p)
                    };
                    let Some(i) = pick(rng, size, 86, &taken) else { return Err(full("a nodePort")) };
                    port.node_port = Some(PORTS.0 + i as i32);
                    new_ports.push(PORTS.0 + i as i32);
                }
            }
        }
        if !dry_run {
            held.node_ports.extend(new_ports);
            if let Some(o) = offset_of(&svc.spec.cluster_ip) {
                held.cluster_ips.insert(o);
            }
        }
        Ok(())
    }
}

fn list_prefix(kind: Kind, namespace: &str) -> String {
    let resource = kind.storage_resource();
    if kind.info().namespaced && !namespace.is_empty() {
        format!("/registry/{resource}/{namespace}/")
    } else {
        format!("/registry/{resource}/")
    }
}

fn is_graceful_pod(object: &Object) -> bool {
    matches!(object, Object::Pod(p) if !p.spec.node_name.is_empty() && !p.is_terminal())
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A random (version 4) UUID drawn from the simulation's generator.
/// Written digit by digit: every object created gets one.
fn uuid(rng: &mut Rng) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let a = rng.next_u64();
    let b = rng.next_u64();
    let mut hex = [0u8; 32];
    for (i, digit) in hex.iter_mut().enumerate() {
        let (word, shift) = if i < 16 { (a, 60 - 4 * i) } else { (b, 60 - 4 * (i - 16)) };
        *digit = HEX[((word >> shift) & 0xf) as usize];
    }
    let hex = std::str::from_utf8(&hex).unwrap_or_default();
    let mut out = String::with_capacity(36);
    out.push_str(&hex[0..8]);
    out.push('-');
    out.push_str(&hex[8..12]);
    out.push_str("-4");
    out.push_str(&hex[13..16]);
    out.push('-');
    out.push_str(["8", "9", "a", "b"][(b >> 62) as usize]);
    out.push_str(&hex[17..20]);
    out.push('-');
    out.push_str(&hex[20..32]);
    out
}

/// The autoscaling/v1 Scale of a Deployment or ReplicaSet (as JSON): what its `scale`
/// subresource reads and returns.
pub fn scale_of(object: &Value) -> Value {
    let meta = &object["metadata"];
    // A ReplicationController's selector is the label map itself.
    let labels = object.pointer("/spec/selector/matchLabels").or_else(|| object.pointer("/spec/selector"));
    let selector = labels.and_then(Value::as_object).map(|labels| {
        labels.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())).collect::<Vec<_>>().join(",")
    });
    crate::util::json_macro::json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {
            "name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"], "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": object.pointer("/spec/replicas").cloned().unwrap_or(Value::from(1))},
        "status": {"replicas": object.pointer("/status/replicas").cloned().unwrap_or(Value::from(0)), "selector": selector},
    })
}

/// A patch of the `scale` subresource, applied to the object's Scale (autoscaling/v1: its
/// metadata, `spec.replicas`, and `status.replicas` and `selector`), gives the object with only
/// `spec.replicas` changed. Only Deployments and ReplicaSets have one here.
fn scale_patched(live: &Value, patch_type: patch::PatchType, body: &Value, req: &Request) -> StageResult<Value> {
    if !matches!(req.kind, Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet | Kind::ReplicationController) {
        return Err((
            Stage::Storage,
            Status {
                code: 404,
                reason: "NotFound",
                ..Status::bad_request("the server could not find the requested resource")
            },
        ));
    }
    let patched =
        patch::apply(&scale_of(live), patch_type, body).map_err(|m| (Stage::Validation, Status::bad_request(m)))?;
    let replicas = patched.pointer("/spec/replicas").cloned().unwrap_or(Value::Null);
    if !replicas.is_i64() {
        return Err((
            Stage::Validation,
            Status::bad_request(format!("spec.replicas: Invalid value: {replicas}: must be an integer")),
        ));
    }
    let mut object = live.clone();
    object["spec"]["replicas"] = replicas;
    Ok(object)
}

/// Kinds whose `status` is a subresource of their `spec`, and which of them count
/// generations (a spec change bumps `metadata.generation`).
macro_rules! status_kinds {
    ($($variant:ident),*) => {
        /// Keeps `old`'s status for a main-resource update, or `old`'s everything-but-status
        /// for a status update.
        fn merge_status(old: &Object, new: Object, status_only: bool) -> Object {
            match (old, new) {
                $((Object::$variant(o), Object::$variant(mut n)) => {
                    if status_only {
                        // Everything but the status comes from `old`: copied field by field so
                        // the old status, about to be replaced, is not copied too.
                        let status = std::mem::take(&mut n.status);
                        // The client usually sends the stored metadata back: then its own is
                        // kept (it is the same) rather than the stored one copied.
                        let metadata = if same_meta_but_version(&n.metadata, &o.metadata) {
                            let mut m = std::mem::take(&mut n.metadata);
                            m.resource_version.clone_from(&o.metadata.resource_version);
                            m
                        } else {
                            o.metadata.clone()
                        };
                        // (Through a reference: some kinds are boxed in `Object`.)
                        let target: &mut crate::api::$variant = &mut n;
                        *target = crate::api::$variant {
                            api_version: o.api_version.clone(),
                            kind: o.kind.clone(),
                            metadata,
                            spec: o.spec.clone(),
                            status,
                        };
                    } else {
                        n.status = o.status.clone();
                    }
                    Object::$variant(n)
                })*
                (_, n) => n,
            }
        }

        fn spec_changed(old: &Object, new: &Object) -> bool {
            match (old, new) {
                $((Object::$variant(o), Object::$variant(n)) => o.spec != n.spec,)*
                _ => false,
            }
        }

        /// A status write's entries, worked out when first read from the statuses before and
        /// after it, shared as views with the writes next to it (see `StatusView`).
        fn record_status_later(
            write: &field_manager::UpdateWrite,
            old: &Object,
            new: &Object,
        ) -> Option<ManagedFields> {
            match (old, new) {
                $((Object::$variant(o), Object::$variant(n)) => {
                    let entries = &o.metadata.managed_fields;
                    let before = field_manager::StatusView::shared(entries, &o.status);
                    let after = field_manager::StatusView::new(n.status.clone());
                    Some(write.record_status_later(entries, before, after))
                })*
                _ => None,
            }
        }

        /// What field management of the main resource tracks of a kind with a status
        /// subresource: the object without its status and managedFields, copied without them
        /// rather than serialized whole and then pruned (a revision's managedFields are often
        /// the largest part of it).
        fn spec_view(object: &Object) -> Option<Value> {
            match object {
                $(Object::$variant(o) => {
                    let view = crate::api::$variant {
                        api_version: o.api_version.clone(),
                        kind: o.kind.clone(),
                        metadata: without_managed_fields(&o.metadata),
                        spec: o.spec.clone(),
                        status: Default::default(),
                    };
                    Some(serde_json::to_value(&view).unwrap_or(Value::Null))
                })*
                _ => None,
            }
        }

        fn status_view(object: &Object) -> Option<Value> {
            match object {
                $(Object::$variant(o) => {
                    let mut only = serde_json::Map::new();
                    only.insert("status".into(), serde_json::to_value(&o.status).unwrap_or(Value::Null));
                    Some(Value::Object(only))
                })*
                _ => None,
            }
        }

        /// Whether an update leaves every field field management tracks as it was (a cheap
        /// typed comparison that spares serializing both versions).
        fn same_tracked(old: &Object, new: &Object, status_only: bool) -> bool {
            match (old, new) {
                $((Object::$variant(o), Object::$variant(n)) => if status_only {
                    o.status == n.status
                } else {
                    o.spec == n.spec && same_meta(&o.metadata, &n.metadata)
                },)*
                _ => false,
            }
        }
    };
}

status_kinds!(
    Pod,
    Node,
    Namespace,
    Service,
    Deployment,
    ReplicaSet,
    DaemonSet,
    Job,
    StatefulSet,
    PersistentVolume,
    PersistentVolumeClaim,
    PodDisruptionBudget,
    ReplicationController,
    CustomResourceDefinition
);

/// A custom object's update with the status subresource: the main resource keeps the stored
/// status, the status subresource keeps everything else.
fn merge_custom_status(old: &Object, new: Object, status_only: bool) -> Object {
    let (Object::Custom(o), Object::Custom(mut n)) = (old, new) else { return old.clone() };
    if status_only {
        let status = n.content.remove("status");
        let mut merged = o.clone();
        merged.metadata.resource_version.clone_from(&n.metadata.resource_version);
        match status {
            Some(s) => merged.content.insert("status".into(), s),
            None => merged.content.remove("status"),
        };
        Object::Custom(merged)
    } else {
        match o.content.get("status") {
            Some(s) => n.content.insert("status".into(), s.clone()),
            None => n.content.remove("status"),
        };
        Object::Custom(n)
    }
}

/// Whether a custom object's fields other than metadata and status changed (what bumps its
/// generation).
fn custom_spec_changed(old: &Object, new: &Object) -> bool {
    let (Object::Custom(o), Object::Custom(n)) = (old, new) else { return false };
    let without_status = |m: &serde_json::Map<String, Value>| m.iter().filter(|(k, _)| *k != "status").count();
    without_status(&o.content) != without_status(&n.content)
        || o.content.iter().any(|(k, v)| k != "status" && n.content.get(k) != Some(v))
}

/// A Service keeps what was allocated for it: an update that leaves out the ClusterIP or a
/// port's nodePort gets the existing ones (upstream's patchAllocatedValues); the ClusterIP may
/// not change once set.
fn keep_allocated(old: &Object, new: &mut Object) -> Result<(), Vec<String>> {
    let (Object::Service(o), Object::Service(n)) = (old, new) else { return Ok(()) };
    if n.spec.cluster_ip.is_empty() {
        n.spec.cluster_ip = o.spec.cluster_ip.clone();
        n.spec.cluster_ips = o.spec.cluster_ips.clone();
    } else if !o.spec.cluster_ip.is_empty() && n.spec.cluster_ip != o.spec.cluster_ip {
        return Err(vec![format!(
            "spec.clusterIPs[0]: Invalid value: []string{{\"{}\"}}: may not change once set",
            n.spec.cluster_ip
        )]);
    }
    if n.spec.cluster_ips.is_empty() {
        n.spec.cluster_ips = o.spec.cluster_ips.clone();
    }
    if n.spec.ip_families.is_empty() {
        n.spec.ip_families = o.spec.ip_families.clone();
    }
    if n.spec.ip_family_policy.is_none() {
        n.spec.ip_family_policy = o.spec.ip_family_policy.clone();
    }
    for port in n.spec.ports.iter_mut().filter(|p| p.node_port.is_none()) {
        let same = o.spec.ports.iter().find(|q| q.port == port.port && q.protocol == port.protocol);
        port.node_port = same.and_then(|q| q.node_port);
    }
    Ok(())
}

/// Whether two pods share one stored spec (a status update, or a metadata-only change).
fn same_pod_spec(old: &Object, new: &Object) -> bool {
    matches!((old, new), (Object::Pod(o), Object::Pod(n)) if Arc::ptr_eq(&o.spec, &n.spec))
}

/// The field manager a client is known by when it names none: kubectl and the components,
/// by the user they authenticate as.
fn manager_of(user: &str) -> &'static str {
    if user.starts_with("system:serviceaccount:kube-system:") {
        "kube-controller-manager"
    } else if user.starts_with("system:node:") {
        "kubelet"
    } else {
        match user {
            "system:kube-scheduler" => "kube-scheduler",
            "system:kube-proxy" => "kube-proxy",
            "system:apiserver" => "kube-apiserver",
            _ => "kubectl",
        }
    }
}

/// The part of an object field management looks at: status alone for the status
/// subresource; everything but status otherwise (for kinds with a status subresource).
fn tracked_view(object: &Object, status_only: bool) -> Value {
    if status_only {
        if let Some(view) = status_view(object) {
            return view;
        }
    } else if let Some(view) = spec_view(object) {
        return untracked_removed(object.kind(), view);
    }
    // A kind without a status subresource: all of it but managedFields, left out of the copy.
    let mut copy = object.clone();
    copy.meta_mut().managed_fields = Default::default();
    untracked_removed(object.kind(), copy.to_json_value())
}

/// An object's metadata but for its managedFields.
fn without_managed_fields(meta: &crate::api::ObjectMeta) -> crate::api::ObjectMeta {
    let managed_fields = Default::default();
    crate::api::ObjectMeta { managed_fields, ..meta.clone() }
}

/// An object's JSON without what field management of the main resource ignores: its
/// managedFields, and its status for kinds with a status subresource.
fn untracked_removed(kind: Kind, mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        if let Some(Value::Object(meta)) = map.get_mut("metadata") {
            meta.remove("managedFields");
        }
        if Object::has_status(kind) {
            map.remove("status");
        }
    }
    value
}

/// Whether two objects' metadata are equal in every field but resourceVersion, their
/// managedFields being the one same shared value (compared without working them out).
fn same_meta_but_version(a: &crate::api::ObjectMeta, b: &crate::api::ObjectMeta) -> bool {
    let crate::api::ObjectMeta {
        name,
        generate_name,
        namespace,
        uid,
        resource_version: _,
        generation,
        creation_timestamp,
        deletion_timestamp,
        deletion_grace_period_seconds,
        labels,
        annotations,
        owner_references,
        finalizers,
        managed_fields,
    } = a;
    *name == b.name
        && *generate_name == b.generate_name
        && *namespace == b.namespace
        && *uid == b.uid
        && *generation == b.generation
        && *creation_timestamp == b.creation_timestamp
        && *deletion_timestamp == b.deletion_timestamp
        && *deletion_grace_period_seconds == b.deletion_grace_period_seconds
        && *labels == b.labels
        && *annotations == b.annotations
        && *owner_references == b.owner_references
        && *finalizers == b.finalizers
        && managed_fields.same(&b.managed_fields)
}

/// Metadata equal but for what the API server maintains itself.
fn same_meta(a: &crate::api::ObjectMeta, b: &crate::api::ObjectMeta) -> bool {
    a.labels == b.labels
        && a.annotations == b.annotations
        && a.finalizers == b.finalizers
        && a.owner_references == b.owner_references
        && a.generate_name == b.generate_name
}

/// Kinds whose objects carry `metadata.generation`.
fn tracks_generation(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Pod
            | Kind::Deployment
            | Kind::ReplicaSet
            | Kind::DaemonSet
            | Kind::Job
            | Kind::PodDisruptionBudget
            | Kind::ReplicationController
            | Kind::StatefulSet
            | Kind::CustomResourceDefinition
            | Kind::Custom(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_written_digit_by_digit_is_the_formatted_one() {
        let (mut rng, mut again) = (Rng::new(7), Rng::new(7));
        for _ in 0..100 {
            let got = uuid(&mut rng);
            let (a, b) = (again.next_u64(), again.next_u64());
            let hex = format!("{a:016x}{b:016x}");
            let variant = ["8", "9", "a", "b"][(b >> 62) as usize];
            let want =
                format!("{}-{}-4{}-{variant}{}-{}", &hex[0..8], &hex[8..12], &hex[13..16], &hex[17..20], &hex[20..32]);
            assert_eq!(got, want);
        }
    }

    /// `kubectl <verb> -f -` of `manifest` in a fresh sandbox: (stdout, stderr).
    fn kubectl(verb: &str, manifest: &str) -> (String, String) {
        let mut session = crate::shell::Session::new(1);
        let command = crate::shell::Command {
            line: format!("kubectl {verb} -f -"),
            heredoc: Some(("EOF".into(), manifest.into())),
        };
        let out = session.execute(&command);
        (out.stdout, out.stderr)
    }

    fn config_map(name: &str, value_bytes: usize) -> String {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  big: {}\n",
            "x".repeat(value_bytes)
        )
    }

    #[test]
    fn a_config_map_over_1_mib_is_invalid_and_one_over_3_mib_is_refused_unread() {
        let (_, err) = kubectl("create", &config_map("two", 2 << 20));
        assert_eq!(err, "The ConfigMap \"two\" is invalid: []: Too long: may not be more than 1048576 bytes\n");
        let started = std::time::Instant::now();
        let (_, err) = kubectl("create", &config_map("five", 5 << 20));
        assert_eq!(
            err,
            "Error from server (RequestEntityTooLarge): error when creating \"STDIN\": Request entity too large: limit is 3145728\n"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn applying_a_config_map_over_256_kib_overfills_the_annotation_apply_keeps() {
        let (out, err) = kubectl("apply", &config_map("dash", 300 << 10));
        assert_eq!(out, "");
        assert_eq!(
            err,
            "The ConfigMap \"dash\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes\n"
        );
        // `kubectl create` keeps no such annotation.
        let (out, err) = kubectl("create", &config_map("dash", 300 << 10));
        assert_eq!((out.as_str(), err.as_str()), ("configmap/dash created\n", ""));
    }

    #[test]
    fn an_object_too_large_for_etcd_is_refused_with_etcds_words() {
        // No field limit applies to a container's arguments; etcd's request limit does.
        let manifest = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n  containers:\n  - name: c\n    image: busybox\n    args: [\"{}\"]\n",
            "x".repeat(2 << 20)
        );
        let (_, err) = kubectl("create", &manifest);
        assert_eq!(err, "Error from server: error when creating \"STDIN\": etcdserver: request is too large\n");
    }
}
