//! The contract every simulated component keeps: it acts only through the API server, from
//! caches its watches fill, when the world wakes it.

use crate::api::{Kind, Object, Shared};
use crate::apiserver::{ApiServer, Env, FieldSelector, Reply, Request, Status, WatchId};
use crate::client::object_cache::{FastKeys, ObjectCache};
use crate::record::{ComponentId, Happening, Record, Seq, WatchEventType};
use crate::sim::{Rng, Time};
pub use crate::util::fast_keys::join;
use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use crate::client::event_recorder::EventRecorder;

/// A control-plane or node component: scheduler, controller, kubelet.
pub trait Component: Any {
    /// Opens the component's watches; returns when it wants to run first.
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time>;
    /// Runs after a watch notification or when its timer is due; returns its next timer.
    fn run(&mut self, ctx: &mut Ctx) -> Option<Time>;
    /// Whether it has work under way that will change the cluster without further input
    /// (used by "run until settled"; waiting out a back-off does not count).
    fn busy(&self) -> bool {
        false
    }
    /// `busy`, or about to act on what the cluster now holds (a container's loop waiting for
    /// a name that now resolves, a write to retry once the API server answers — `api_answers`),
    /// with what it does by `horizon`: what "run until settled" waits for.
    fn busy_in(&self, _api_answers: bool, _horizon: Time) -> bool {
        self.busy()
    }
    fn as_any(&self) -> &dyn Any;
    /// The component's informers, for invariant checks (caches agree with the API).
    fn informers(&self) -> Vec<&Informer> {
        Vec::new()
    }
    /// Desired against actual, one line per object it last reconciled (`want 3 · have 2 →
    /// create 1`), for views.
    fn lanes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The keys waiting in its work queue, for views.
    fn queued(&self) -> Vec<String> {
        Vec::new()
    }
    /// Until when it is still busy with what its last run did (a controller's worker going
    /// through thousands of objects): whatever wakes it meanwhile waits until then.
    fn busy_until(&self) -> Option<Time> {
        None
    }
    /// It runs but stands by (a candidate that does not lead): views look at the instance
    /// that acts instead.
    fn standing_by(&self) -> bool {
        false
    }
    /// The component a wrapper holds (see [`crate::client::leaderelection::Elected`]), to
    /// change how it behaves (faults); `None` for a component that is its own.
    fn inner_mut(&mut self) -> Option<&mut dyn Any> {
        None
    }
    /// Lines its process printed since last taken, with when (a control-plane component's
    /// leader election), for its container's log.
    fn take_log(&mut self) -> Vec<(Time, String)> {
        Vec::new()
    }
}

/// What a component gets while it runs: the clock, the API, chance, and the record. The API
/// server itself stays out of reach: a component can only send it requests (`call`) and read
/// the watches it opened (through its informers).
pub struct Ctx<'a> {
    pub now: Time,
    pub me: ComponentId,
    pub user: &'a str,
    api: &'a mut ApiServer,
    /// This component's own stream of chance.
    pub rng: &'a mut Rng,
    /// The API server's stream (uids, generated names), used by the requests this component sends.
    pub api_rng: &'a mut Rng,
    pub record: &'a mut Record,
    pub recorder: &'a mut EventRecorder,
    /// The record entry the component is reacting to; requests it makes point back to it.
    pub cause: Option<Seq>,
    /// Whether RBAC judges its requests (a workload's process, as its service account).
    pub judged: bool,
}

impl<'a> Ctx<'a> {
    /// The context component `me` runs in, acting as `user`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        now: Time,
        me: ComponentId,
        user: &'a str,
        api: &'a mut ApiServer,
        rng: &'a mut Rng,
        api_rng: &'a mut Rng,
        record: &'a mut Record,
        recorder: &'a mut EventRecorder,
    ) -> Ctx<'a> {
        Ctx { now, me, user, api, rng, api_rng, record, recorder, cause: None, judged: false }
    }

    /// The API server, for the client library's own plumbing (draining the watches informers
    /// opened); never a component's.
    pub(in crate::client) fn watches(&mut self) -> &mut ApiServer {
        self.api
    }

    pub fn call(&mut self, req: Request) -> Result<Reply, Status> {
        let mut env = Env {
            now: self.now,
            rng: self.api_rng,
            record: self.record,
            actor: self.me,
            user: self.user,
            cause: self.cause,
            identity: self.judged.then(|| crate::apiserver::authorization::Identity::of(self.user, &[])),
        };
        self.api.handle(req, &mut env)
    }

    /// Sends a request whose reply is an object.
    pub fn call_object(&mut self, req: Request) -> Result<Arc<Object>, Status> {
        self.call(req)?.object().ok_or_else(|| Status::bad_request("the API answered without an object"))
    }

    /// Records a decision in the component's own words; returns its entry.
    pub fn decide(&mut self, text: impl FnOnce() -> String) -> Seq {
        let what = if self.record.enabled {
            Happening::Decision { text: text() }
        } else {
            Happening::Decision { text: String::new() }
        };
        let revision = self.api.revision();
        self.record.push(self.now, revision, self.me, self.cause, what)
    }

    /// Reports an Event about `involved`, through the component's event recorder and its
    /// correlator (see [`EventRecorder::report`]), which sends what gets through as requests.
    /// Where the API server keeps Events in an etcd of their own, the sink does not wait for
    /// the answer (see [`crate::apiserver::events_etcd`]): the recorder remembers the Event it
    /// sent.
    pub fn event(
        &mut self,
        involved: &Arc<Object>,
        field_path: &str,
        type_: &'static str,
        reason: impl Into<std::borrow::Cow<'static, str>>,
        message: String,
    ) {
        let reason = reason.into();
        let Ctx { now, me, user, api, api_rng, record, recorder, cause, .. } = self;
        let report = crate::client::event_recorder::Report { involved, field_path, type_, reason: &reason, message };
        let apart = api.keeps_events_apart();
        // Event names sort in the order they were reported: by the record entry each is made at;
        // or, when the sink does not wait for its writes, by component and then report within
        // the millisecond (a thousand of each before two names could meet).
        let order =
            if apart { u64::from(me.0) * 1000 + recorder.count_in_milli(*now) % 1000 } else { record.last_seq() };
        recorder.report(report, *now, order, &mut |write| {
            let mut env = Env { now: *now, rng: api_rng, record, actor: *me, user, cause: *cause, identity: None };
            if apart {
                let sent = Arc::new(Object::Event(write.event().clone()));
                api.send_event(write, &mut env);
                return Ok(sent);
            }
            write.send(|req| {
                api.handle(req, &mut env)?
                    .object()
                    .ok_or_else(|| Status::bad_request("the API answered without an object"))
            })
        });
    }
}

/// The cache key of an object: `namespace/name`, or `name` when cluster-scoped.
pub fn cache_key(namespace: &str, name: &str) -> String {
    join(&crate::etcd::lookup_key::cache_parts(namespace, name))
}

/// One change an informer saw.
#[derive(Clone, Debug)]
pub struct Delta {
    pub type_: WatchEventType,
    pub object: Arc<Object>,
    pub old: Option<Arc<Object>>,
    /// The notification's record entry.
    pub seq: Seq,
}

/// An informer: LIST once, then WATCH, keeping a local cache of one kind, indexed by the
/// controller that owns each object (orphans by namespace).
#[derive(Debug)]
pub struct Informer {
    pub kind: Kind,
    namespace: String,
    fields: Option<FieldSelector>,
    watch: Option<WatchId>,
    pub cache: ObjectCache,
    /// The objects by their controller's uid, each under its key (shared with the cache): a
    /// sync reads an owner's objects here without looking each up again.
    by_owner: HashMap<String, BTreeMap<Arc<str>, Arc<Object>>, FastKeys>,
    /// The objects with no controller, by namespace, likewise.
    orphans: HashMap<String, BTreeMap<Arc<str>, Arc<Object>>, FastKeys>,
    /// The revision of the last change seen: every notification must be newer.
    last_revision: crate::etcd::Revision,
    /// Scratch space for building cache keys.
    key_buf: String,
    /// When this cache is kube-controller-manager's shared one, lent to a controller: who
    /// borrowed it and what it assumed (see `crate::client::shared_informer`).
    pub(crate) lending: Option<Lending>,
    /// Kept to itself even inside kube-controller-manager (its owner reads it between runs).
    own_cache: bool,
}

/// A shared cache on loan to one controller while it runs.
#[derive(Debug)]
pub(crate) struct Lending {
    pub borrower: ComponentId,
    /// What each key held before the borrower assumed its own write there: the others still
    /// see that as the old version when the write's notification arrives.
    pub assumed: HashMap<String, Option<Arc<Object>>, FastKeys>,
}

impl Informer {
    pub fn new(kind: Kind) -> Self {
        Informer {
            kind,
            namespace: String::new(),
            fields: None,
            watch: None,
            cache: ObjectCache::new(),
            by_owner: HashMap::default(),
            orphans: HashMap::default(),
            last_revision: 0,
            key_buf: String::new(),
            lending: None,
            own_cache: false,
        }
    }

    /// An informer whose cache is never shared: its owner reads it between runs too.
    pub fn with_own_cache(mut self) -> Self {
        self.own_cache = true;
        self
    }

    pub fn with_fields(mut self, fields: FieldSelector) -> Self {
        self.fields = Some(fields);
        self
    }

    /// An informer over one namespace only.
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = namespace.to_string();
        self
    }

    /// Closes its watch (the cache stays as it was): its owner no longer needs the objects.
    pub fn stop(&mut self, ctx: &mut Ctx) {
        if let Some(id) = self.watch.take() {
            ctx.api.close_watch(id);
        }
    }

    /// Lists the current state into the cache and opens a watch from that revision.
    pub fn start(&mut self, ctx: &mut Ctx) -> Result<(), Status> {
        let mut list = Request::list(self.kind, &self.namespace);
        list.field_selector = self.fields.clone();
        let Reply::List { items, revision } = ctx.call(list)? else {
            return Err(Status::bad_request("list answered without a list"));
        };
        self.last_revision = revision;
        self.cache.clear();
        self.by_owner.clear();
        self.orphans.clear();
        for o in items {
            self.put(o);
        }
        let mut watch = Request::watch(self.kind, &self.namespace).from_revision(revision);
        watch.field_selector = self.fields.clone();
        if let Reply::Watch { id, .. } = ctx.call(watch)? {
            self.watch = Some(id);
        }
        Ok(())
    }

    /// Applies every waiting notification to the cache and returns them.
    pub fn sync(&mut self, ctx: &mut Ctx) -> Vec<Delta> {
        let Some(id) = self.watch else { return Vec::new() };
        let events = ctx.api.drain_watch(id);
        let mut deltas = Vec::with_capacity(events.len());
        for ev in events {
            // A watch delivers each change once, in order.
            let old = self.apply(ev.type_, &ev.object, ev.revision);
            deltas.push(Delta { type_: ev.type_, object: ev.object, old, seq: ev.seq });
        }
        deltas
    }

    pub fn get(&self, namespace: &str, name: &str) -> Option<&Arc<Object>> {
        self.cache.get(&crate::etcd::lookup_key::LookupKey::cache(namespace, name))
    }

    /// Where this cache disagrees with the API's current state (empty when in sync).
    pub fn differences(&self, store: crate::apiserver::inspect::Inspect) -> Vec<String> {
        let truth: BTreeMap<String, String> = store
            .list(self.kind, &self.namespace)
            .into_iter()
            .filter(|o| self.fields.as_ref().is_none_or(|f| f.matches(o)))
            .map(|o| (cache_key(o.namespace(), o.name()), o.meta().resource_version.clone()))
            .collect();
        let mine: BTreeMap<String, String> =
            self.cache.iter().map(|(k, o)| (k.to_string(), o.meta().resource_version.clone())).collect();
        let mut out = Vec::new();
        for (k, rv) in &truth {
            match mine.get(k) {
                None => out.push(format!("{k} missing")),
                Some(m) if m != rv => out.push(format!("{k} at {m}, API has {rv}")),
                _ => {}
            }
        }
        out.extend(mine.keys().filter(|k| !truth.contains_key(*k)).map(|k| format!("{k} should be gone")));
        out
    }

    /// Records a write the component itself made, so its cache is not staler than its
    /// own actions until the watch catches up.
    pub fn assume(&mut self, object: Arc<Object>) {
        let key = self.lending.is_some().then(|| cache_key(object.namespace(), object.name()));
        let old = self.put(object);
        if let (Some(lending), Some(key)) = (self.lending.as_mut(), key) {
            lending.assumed.entry(key).or_insert(old);
        }
    }

    /// Whether a shared cache can serve it: it watches every object of its kind, and its
    /// owner reads the cache only while it runs.
    pub fn shareable(&self) -> bool {
        self.namespace.is_empty() && self.fields.is_none() && !self.own_cache
    }

    pub fn watch_id(&self) -> Option<WatchId> {
        self.watch
    }

    /// Exchanges caches with `other` (watches stay where they are): how a controller borrows
    /// kube-controller-manager's shared cache while it runs, and gives it back.
    pub(crate) fn swap_cache(&mut self, other: &mut Informer) {
        std::mem::swap(&mut self.cache, &mut other.cache);
        std::mem::swap(&mut self.by_owner, &mut other.by_owner);
        std::mem::swap(&mut self.orphans, &mut other.orphans);
        std::mem::swap(&mut self.last_revision, &mut other.last_revision);
        std::mem::swap(&mut self.lending, &mut other.lending);
    }

    /// Applies one notification to the cache, returning what the key held before; checks
    /// that notifications arrive once each, in order.
    pub(crate) fn apply(
        &mut self,
        type_: WatchEventType,
        object: &Arc<Object>,
        revision: crate::etcd::Revision,
    ) -> Option<Arc<Object>> {
        debug_assert!(
            revision > self.last_revision,
            "{:?} informer got revision {} after {}",
            self.kind,
            revision,
            self.last_revision
        );
        self.last_revision = revision;
        match type_ {
            WatchEventType::Deleted => self.remove(object.namespace(), object.name()),
            _ => self.put(object.clone()),
        }
    }

    /// The owner index an object belongs in: its controller's objects, or its namespace's
    /// orphans.
    fn index_of<'s>(
        by_owner: &'s mut HashMap<String, BTreeMap<Arc<str>, Arc<Object>>, FastKeys>,
        orphans: &'s mut HashMap<String, BTreeMap<Arc<str>, Arc<Object>>, FastKeys>,
        object: &Object,
    ) -> &'s mut BTreeMap<Arc<str>, Arc<Object>> {
        let (map, key) = match object.controller_ref() {
            Some(o) => (by_owner, o.uid.as_str()),
            None => (orphans, object.namespace()),
        };
        // Found without building a key; a new owner's entry takes one.
        if !map.contains_key(key) {
            map.insert(key.to_string(), BTreeMap::new());
        }
        map.get_mut(key).expect("just inserted")
    }

    fn put(&mut self, object: Arc<Object>) -> Option<Arc<Object>> {
        // Most puts update a known key: the key is built in a reused buffer, and only a new
        // entry takes it.
        let mut key = std::mem::take(&mut self.key_buf);
        key.clear();
        if !object.namespace().is_empty() {
            key.push_str(object.namespace());
            key.push('/');
        }
        key.push_str(object.name());
        match self.cache.get_mut(&key) {
            Some(slot) => {
                // An update: the key is known; the object moves in the owner index only if its
                // controller changed.
                let old = std::mem::replace(slot, object);
                let object = slot.clone();
                // Most writes leave the owner references as they were, shared between the two
                // versions: then the owner is the same without reading either list.
                let moved = !Shared::ptr_eq(&old.meta().owner_references, &object.meta().owner_references)
                    && match (old.controller_ref(), object.controller_ref()) {
                        (None, None) => false,
                        (Some(a), Some(b)) => a.uid != b.uid,
                        _ => true,
                    };
                if !moved {
                    // Same owner: the index's entry takes the new version in place.
                    if let Some(entry) =
                        Self::index_of(&mut self.by_owner, &mut self.orphans, &object).get_mut(key.as_str())
                    {
                        *entry = object;
                    }
                    self.key_buf = key;
                    return Some(old);
                }
                let shared =
                    match Self::index_of(&mut self.by_owner, &mut self.orphans, &old).remove_entry(key.as_str()) {
                        Some((shared, _)) => shared,
                        None => Arc::from(key.as_str()),
                    };
                Self::index_of(&mut self.by_owner, &mut self.orphans, &object).insert(shared, object);
                self.key_buf = key;
                Some(old)
            }
            None => {
                // A new key: one shared copy for the cache and the owner index.
                let shared: Arc<str> = Arc::from(key.as_str());
                self.key_buf = key;
                Self::index_of(&mut self.by_owner, &mut self.orphans, &object).insert(shared.clone(), object.clone());
                self.cache.insert_shared(shared, object);
                None
            }
        }
    }

    fn remove(&mut self, namespace: &str, name: &str) -> Option<Arc<Object>> {
        let key = cache_key(namespace, name);
        let old = self.cache.remove(&key)?;
        let (map, owner) = match old.controller_ref() {
            Some(o) => (&mut self.by_owner, o.uid.as_str()),
            None => (&mut self.orphans, old.namespace()),
        };
        // An owner whose last object went leaves the index with it.
        if let Some(objects) = map.get_mut(owner) {
            objects.remove(key.as_str());
            if objects.is_empty() {
                map.remove(owner);
            }
        }
        Some(old)
    }

    /// The objects whose controller has this uid, in key order.
    pub fn owned_by(&self, uid: &str) -> Vec<&Arc<Object>> {
        self.by_owner.get(uid).into_iter().flat_map(|m| m.values()).collect()
    }

    /// The objects of `namespace` with no controller, in key order (what a controller may adopt).
    pub fn orphans_in(&self, namespace: &str) -> Vec<&Arc<Object>> {
        self.orphans.get(namespace).into_iter().flat_map(|m| m.values()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{OwnerReference, Pod};

    fn pod(namespace: &str, name: &str, owner: Option<&str>) -> Arc<Object> {
        let mut p = Pod::default();
        p.metadata.namespace = namespace.into();
        p.metadata.name = name.into();
        if let Some(uid) = owner {
            p.metadata.owner_references.push(OwnerReference {
                kind: "ReplicaSet".into(),
                name: "web".into(),
                uid: uid.into(),
                controller: Some(true),
                ..Default::default()
            });
        }
        Arc::new(Object::Pod(p))
    }

    fn names(objects: Vec<&Arc<Object>>) -> Vec<&str> {
        objects.into_iter().map(|o| o.name()).collect()
    }

    #[test]
    fn the_owner_index_follows_adds_adoptions_and_deletes_with_orphans_by_namespace() {
        let mut informer = Informer::new(Kind::Pod);
        informer.apply(WatchEventType::Added, &pod("a", "b-pod", None), 1);
        informer.apply(WatchEventType::Added, &pod("a", "a-pod", None), 2);
        informer.apply(WatchEventType::Added, &pod("other", "x", None), 3);
        informer.apply(WatchEventType::Added, &pod("a", "owned", Some("u1")), 4);
        assert_eq!(names(informer.orphans_in("a")), ["a-pod", "b-pod"]);
        assert_eq!(names(informer.owned_by("u1")), ["owned"]);
        // Adopted: it moves from its namespace's orphans to its controller.
        informer.apply(WatchEventType::Modified, &pod("a", "a-pod", Some("u1")), 5);
        assert_eq!(names(informer.orphans_in("a")), ["b-pod"]);
        assert_eq!(names(informer.owned_by("u1")), ["a-pod", "owned"]);
        informer.apply(WatchEventType::Deleted, &pod("a", "owned", Some("u1")), 6);
        assert_eq!(names(informer.owned_by("u1")), ["a-pod"]);
        assert_eq!(names(informer.orphans_in("other")), ["x"]);
    }
}
