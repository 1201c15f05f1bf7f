//! The garbage collector: deletes objects whose owners are gone (background cascading
//! deletion), deletes an owner's blocking dependents before the owner when it is deleted in
//! the foreground, and strips owner references when dependents are orphaned.

use super::{Action, Reconciler, Synced};
use crate::api::{Kind, Object};
use crate::apiserver::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Propagation, Request, Status};
use crate::client::component::{Ctx, Delta, Informer};
use crate::client::object_cache::FastKeys;
use crate::record::WatchEventType;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The kinds whose objects own or are owned by others in the sandbox.
pub const WATCHED: &[Kind] = &[
    Kind::Deployment,
    Kind::ReplicaSet,
    Kind::ReplicationController,
    Kind::Pod,
    Kind::DaemonSet,
    Kind::StatefulSet,
    Kind::Job,
    Kind::CronJob,
    Kind::Service,
    Kind::EndpointSlice,
    // Mirror pods are owned by their Node.
    Kind::Node,
];

pub struct GarbageCollector {
    informers: Vec<Informer>,
    /// Every watched object by uid: where to find it.
    by_uid: HashMap<String, (usize, String), FastKeys>,
    /// Owner uid → dependents (informer index, cache key).
    dependents: HashMap<String, BTreeSet<(usize, String)>, FastKeys>,
}

impl Default for GarbageCollector {
    fn default() -> Self {
        GarbageCollector {
            informers: WATCHED.iter().map(|k| Informer::new(*k)).collect(),
            by_uid: HashMap::default(),
            dependents: HashMap::default(),
        }
    }
}

/// `informer|namespace/name` (built by hand, in one allocation: it is made for every object
/// the collector sees created).
fn key_of(informer: usize, namespace: &str, name: &str) -> String {
    use std::fmt::Write;
    let mut key = String::with_capacity(4 + namespace.len() + name.len());
    let _ = write!(key, "{informer}|");
    if !namespace.is_empty() {
        key.push_str(namespace);
        key.push('/');
    }
    key.push_str(name);
    key
}

/// As `key_of`, for an object's cache key as the index keeps it.
fn key_at(informer: usize, cache_key: &str) -> String {
    key_of(informer, "", cache_key)
}

impl GarbageCollector {
    /// Indexes a change; `known`: whether the object's uid is indexed already.
    fn index(&mut self, informer: usize, delta: &Delta, known: bool) {
        let obj = &delta.object;
        let unchanged = |old: &Arc<Object>| {
            old.meta().uid == obj.meta().uid && old.meta().owner_references == obj.meta().owner_references
        };
        // Same object, same owners (a status update, most often): the index stands — if the
        // object is in it (one listed before the collector started is indexed on first sight).
        if delta.type_ != WatchEventType::Deleted && delta.old.as_ref().is_some_and(unchanged) && known {
            return;
        }
        let key = crate::client::component::cache_key(obj.namespace(), obj.name());
        if let Some(old) = &delta.old {
            for o in &old.meta().owner_references {
                if let Some(set) = self.dependents.get_mut(&o.uid) {
                    set.remove(&(informer, key.clone()));
                }
            }
        }
        if delta.type_ == WatchEventType::Deleted {
            self.by_uid.remove(&obj.meta().uid);
            return;
        }
        self.by_uid.insert(obj.meta().uid.clone(), (informer, key.clone()));
        for o in &obj.meta().owner_references {
            match self.dependents.get_mut(&o.uid) {
                Some(set) => {
                    set.insert((informer, key.clone()));
                }
                None => {
                    self.dependents.insert(o.uid.clone(), BTreeSet::from([(informer, key.clone())]));
                }
            }
        }
    }

    fn lookup(&self, informer: usize, key: &str) -> Option<Arc<Object>> {
        self.informers.get(informer)?.cache.get(key).cloned()
    }

    /// A dependent: delete it when every owner is gone, or when an owner waits for it.
    fn reconcile_dependent(&mut self, object: &Arc<Object>, ctx: &mut Ctx) -> Result<(), Status> {
        let meta = object.meta();
        if meta.owner_references.is_empty() || meta.deletion_timestamp.is_some() && !is_waiting(object) {
            return Ok(());
        }
        let mut dangling = 0;
        let mut owner_waiting = false;
        for owner in &meta.owner_references {
            let found = self.by_uid.get(&owner.uid).and_then(|(i, k)| self.lookup(*i, k));
            match found {
                None => {
                    // Not in our caches: ask the API server, as the real collector does.
                    // An answer other than "not found" leaves the question open: tried again later.
                    let kind = Kind::ALL
                        .iter()
                        .copied()
                        .find(|k| k.info().kind == owner.kind)
                        .or_else(|| Kind::from_type_meta(&owner.api_version, &owner.kind));
                    let exists = match kind.map(|k| ctx.call(Request::get(k, object.namespace(), &owner.name))) {
                        None | Some(Err(Status { code: 404, .. })) => false,
                        Some(Err(status)) => return Err(status),
                        Some(Ok(reply)) => reply.object().is_some_and(|o| o.meta().uid == owner.uid),
                    };
                    if !exists {
                        dangling += 1;
                    }
                }
                Some(o) => {
                    if o.meta().finalizers.iter().any(|f| f == FOREGROUND_FINALIZER)
                        && o.meta().deletion_timestamp.is_some()
                        && owner.block_owner_deletion == Some(true)
                    {
                        owner_waiting = true;
                    }
                }
            }
        }
        if meta.deletion_timestamp.is_some() {
            return Ok(());
        }
        let (reason, propagation) = if dangling == meta.owner_references.len() {
            ("its owner is gone", Propagation::Background)
        } else if owner_waiting {
            ("its owner is being deleted in the foreground", Propagation::Foreground)
        } else {
            return Ok(());
        };
        let (kind, ns, name) = (object.kind(), object.namespace().to_string(), object.name().to_string());
        ctx.cause = Some(ctx.decide(|| format!("deleting {}/{name}: {reason}", kind.info().singular)));
        let mut req = Request::delete(kind, &ns, &name);
        req.propagation = Some(propagation);
        super::done_unless_failed(ctx.call(req))
    }

    /// An owner being deleted with a GC finalizer: orphan or wait for its dependents.
    fn reconcile_owner(&mut self, object: &Arc<Object>, ctx: &mut Ctx) -> Result<(), Status> {
        let meta = object.meta();
        if meta.deletion_timestamp.is_none() {
            return Ok(());
        }
        let dependents: Vec<(usize, String)> = self.dependents.get(&meta.uid).into_iter().flatten().cloned().collect();
        if meta.finalizers.iter().any(|f| f == ORPHAN_FINALIZER) {
            for (i, key) in &dependents {
                if let Some(dep) = self.lookup(*i, key) {
                    let mut dep = (*dep).clone();
                    dep.meta_mut().owner_references.retain(|o| o.uid != meta.uid);
                    dep.meta_mut().resource_version.clear();
                    super::done_unless_failed(ctx.call(Request::update(dep)))?;
                }
            }
            ctx.cause = Some(ctx.decide(|| format!("orphaned {} dependents of {}", dependents.len(), meta.name)));
            return self.remove_finalizer(object, ORPHAN_FINALIZER, ctx);
        }
        if meta.finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
            let blocking = dependents.iter().filter_map(|(i, k)| self.lookup(*i, k)).any(|d| {
                d.meta().owner_references.iter().any(|o| o.uid == meta.uid && o.block_owner_deletion == Some(true))
            });
            if blocking {
                for (i, key) in &dependents {
                    if let Some(dep) = self.lookup(*i, key) {
                        self.reconcile_dependent(&dep, ctx)?;
                    }
                }
            } else {
                self.remove_finalizer(object, FOREGROUND_FINALIZER, ctx)?;
            }
        }
        Ok(())
    }

    fn remove_finalizer(&mut self, object: &Arc<Object>, finalizer: &str, ctx: &mut Ctx) -> Result<(), Status> {
        let mut updated = (**object).clone();
        updated.meta_mut().finalizers.retain(|f| f != finalizer);
        updated.meta_mut().resource_version.clear();
        super::done_unless_failed(ctx.call(Request::update(updated)))
    }
}

fn is_waiting(object: &Object) -> bool {
    object.meta().finalizers.iter().any(|f| f == FOREGROUND_FINALIZER || f == ORPHAN_FINALIZER)
}

impl Reconciler for GarbageCollector {
    fn informers(&mut self) -> Vec<&mut Informer> {
        self.informers.iter_mut().collect()
    }

    fn refresh(&mut self, ctx: &mut Ctx) -> Vec<String> {
        // Custom resources own and are owned too: one informer for each discovery lists.
        for served in crate::api::custom::Discovery::served().iter().filter(|s| s.preferred) {
            let kind = Kind::Custom(served.kind);
            if self.informers.iter().any(|i| i.kind == kind) {
                continue;
            }
            let mut informer = Informer::new(kind);
            if informer.start(ctx).is_ok() {
                let at = self.informers.len();
                let listed: Vec<Arc<Object>> = informer.cache.values().cloned().collect();
                self.informers.push(informer);
                for object in listed {
                    let key = crate::client::component::cache_key(object.namespace(), object.name());
                    self.by_uid.insert(object.meta().uid.clone(), (at, key));
                }
            }
        }
        Vec::new()
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        // An object the collector has not indexed yet (listed before it started) is looked at
        // on first sight, whatever the change, as the graph builder's initial list is.
        let first_sight = !self.by_uid.contains_key(&delta.object.meta().uid);
        self.index(informer, delta, !first_sight);
        let obj = &delta.object;
        let mut keys = Vec::new();
        // As upstream's graph builder: an update that keeps a known object's owners, finalizers
        // and deletion state (a status write) changes nothing for the collector.
        let same_for_collector = !first_sight
            && delta.type_ == WatchEventType::Modified
            && delta.old.as_deref().is_some_and(|old| {
                let (old, new) = (old.meta(), obj.meta());
                old.owner_references == new.owner_references
                    && old.deletion_timestamp == new.deletion_timestamp
                    && old.finalizers == new.finalizers
            });
        if delta.type_ != WatchEventType::Deleted && !same_for_collector {
            keys.push(key_of(informer, obj.namespace(), obj.name()));
        }
        // An owner that went away, or started a foreground/orphan deletion: its dependents need a look.
        let uid = &obj.meta().uid;
        if delta.type_ == WatchEventType::Deleted || obj.meta().deletion_timestamp.is_some() {
            for (i, k) in self.dependents.get(uid).into_iter().flatten() {
                keys.push(key_at(*i, k));
            }
        }
        // A dependent that went away may unblock its owners.
        if delta.type_ == WatchEventType::Deleted {
            for o in &obj.meta().owner_references {
                if let Some((i, k)) = self.by_uid.get(&o.uid) {
                    keys.push(key_at(*i, k));
                }
            }
        }
        keys
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let Some((i, cache_key)) = key.split_once('|') else { return Ok(Action::AwaitChange) };
        let Ok(i) = i.parse::<usize>() else { return Ok(Action::AwaitChange) };
        let Some(object) = self.lookup(i, cache_key) else { return Ok(Action::AwaitChange) };
        self.reconcile_owner(&object, ctx)?;
        self.reconcile_dependent(&object, ctx)?;
        Ok(Action::AwaitChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{OwnerReference, Pod};
    use crate::sim::Time;

    #[test]
    fn a_known_objects_status_write_is_not_collected_over_but_its_deletion_is() {
        let mut gc = GarbageCollector::default();
        let mut pod = Pod::default();
        pod.metadata.name = "web-1".into();
        pod.metadata.namespace = "default".into();
        pod.metadata.uid = "u-pod".into();
        pod.metadata.owner_references.push(OwnerReference {
            kind: "ReplicaSet".into(),
            name: "web".into(),
            uid: "u-rs".into(),
            controller: Some(true),
            ..Default::default()
        });
        let delta = |type_, old: Option<&Pod>, new: &Pod| Delta {
            type_,
            object: Arc::new(Object::Pod(new.clone())),
            old: old.map(|o| Arc::new(Object::Pod(o.clone()))),
            seq: 0,
        };
        let mut running = pod.clone();
        Arc::make_mut(&mut running.status).phase = "Running".into();
        // First seen through an update (listed before the collector started): looked at.
        assert_eq!(gc.keys_for(0, &delta(WatchEventType::Modified, Some(&pod), &running)), ["0|default/web-1"]);
        assert!(gc.keys_for(0, &delta(WatchEventType::Modified, Some(&running), &running)).is_empty());
        let mut deleting = running.clone();
        deleting.metadata.deletion_timestamp = Some(Time(5));
        assert_eq!(gc.keys_for(0, &delta(WatchEventType::Modified, Some(&running), &deleting)), ["0|default/web-1"]);
        let mut orphaned = running.clone();
        orphaned.metadata.owner_references.clear();
        assert_eq!(gc.keys_for(0, &delta(WatchEventType::Modified, Some(&running), &orphaned)), ["0|default/web-1"]);
    }
}
