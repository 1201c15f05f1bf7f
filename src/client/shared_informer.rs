//! kube-controller-manager's shared informers: one cache per kind for the whole process.
//!
//! Every controller still opens its own watch, so its notifications and wake-ups stay its own
//! (they stand for the event handler it registered), and it still turns each change into keys
//! in its own work queue; but an object is stored once, however many controllers care about
//! it. A controller borrows the cache while it runs (only one runs at a time) and gives it
//! back when it is done.

use crate::api::Kind;
use crate::apiserver::{WatchEvent, WatchId};
use crate::client::component::Ctx;
use crate::client::component::{Delta, Informer, Lending};
use crate::etcd::lookup_key::LookupKey;
use crate::record::ComponentId;
use std::cell::RefCell;
use std::rc::Rc;

/// A shared informer, as the controllers using it hold it.
pub type Shared = Rc<RefCell<SharedInformer>>;

/// The process's shared informers, one per kind, made as controllers first ask for them.
#[derive(Clone, Debug, Default)]
pub struct InformerFactory {
    shared: Rc<RefCell<Vec<(Kind, Shared)>>>,
}

impl InformerFactory {
    /// The shared informer of `kind`.
    pub fn for_kind(&self, kind: Kind) -> Shared {
        let mut shared = self.shared.borrow_mut();
        if let Some((_, s)) = shared.iter().find(|(k, _)| *k == kind) {
            return s.clone();
        }
        let s = Rc::new(RefCell::new(SharedInformer { store: Informer::new(kind), members: Vec::new() }));
        shared.push((kind, s.clone()));
        s
    }
}

/// One kind's cache, and the controllers using it.
#[derive(Debug)]
pub struct SharedInformer {
    /// The cache (its own watch is never opened); while a controller runs, it holds that
    /// controller's empty one instead.
    store: Informer,
    members: Vec<Member>,
}

/// A controller using a shared informer: its watch and the changes it has yet to handle.
#[derive(Debug)]
struct Member {
    id: ComponentId,
    watch: Option<WatchId>,
    pending: Vec<Delta>,
}

impl SharedInformer {
    /// The cache, for checks and tests (it lags until some member syncs).
    pub fn cache(&self) -> &Informer {
        &self.store
    }

    /// Takes every member's waiting notifications: each change is applied to the cache once,
    /// and queued for every member that was told of it, with the old version that member
    /// knew.
    pub fn sync(&mut self, ctx: &mut Ctx) {
        let api = ctx.watches();
        // Every open watch holds the same changes (each opens right after a sync, when the
        // others hold none): when one holds nothing, there is nothing to do.
        let open = self.members.iter().find_map(|m| m.watch.filter(|w| api.watch_is_open(*w)));
        if open.is_none_or(|w| api.watch_pending(w) == 0) {
            return;
        }
        let mut streams: Vec<Vec<WatchEvent>> = Vec::with_capacity(self.members.len());
        for m in &mut self.members {
            match m.watch.filter(|w| api.watch_is_open(*w)) {
                Some(w) => streams.push(api.drain_watch(w)),
                None => {
                    // A stopped process forgets what it had not handled; it lists afresh.
                    m.pending.clear();
                    streams.push(Vec::new());
                }
            }
        }
        let Some(longest) = (0..streams.len()).max_by_key(|i| streams[*i].len()) else { return };
        let n = streams[longest].len();
        let assumed = self.store.lending.take().filter(|l| !l.assumed.is_empty());
        let mut assumed = assumed.map(|l| (l.borrower, l.assumed));
        for j in 0..n {
            let ev = &streams[longest][j];
            let old = self.store.apply(ev.type_, &ev.object, ev.revision);
            // The borrower's own write, assumed: it already held the new version; the others
            // knew the one before.
            let displaced = assumed.as_mut().and_then(|(by, map)| {
                map.remove(&*LookupKey::cache(ev.object.namespace(), ev.object.name())).map(|o| (*by, o))
            });
            for (m, stream) in self.members.iter_mut().zip(&streams) {
                // Watches opened later hold the latest changes only.
                let Some(at) = (j + stream.len()).checked_sub(n) else { continue };
                let mine = &stream[at];
                debug_assert_eq!(mine.revision, ev.revision, "members of a shared informer saw different changes");
                let old = match &displaced {
                    Some((by, before)) if *by != m.id => before.clone(),
                    _ => old.clone(),
                };
                m.pending.push(Delta { type_: mine.type_, object: mine.object.clone(), old, seq: mine.seq });
            }
        }
    }

    /// Lends the cache to a controller about to run (synced first).
    pub fn lend(&mut self, to: ComponentId, informer: &mut Informer) {
        self.store.lending = Some(Lending { borrower: to, assumed: Default::default() });
        self.store.swap_cache(informer);
    }

    /// Takes the cache back, with whatever the controller assumed into it.
    pub fn give_back(&mut self, informer: &mut Informer) {
        self.store.swap_cache(informer);
    }

    /// Registers a controller whose informer has just listed (into the lent cache) and
    /// opened its watch.
    pub fn join(&mut self, id: ComponentId, informer: &Informer) {
        let watch = informer.watch_id();
        match self.members.iter_mut().find(|m| m.id == id) {
            Some(m) => {
                m.watch = watch;
                m.pending.clear();
            }
            None => self.members.push(Member { id, watch, pending: Vec::new() }),
        }
    }

    /// The changes a controller has yet to handle, oldest first.
    pub fn take_pending(&mut self, id: ComponentId) -> Vec<Delta> {
        self.members.iter_mut().find(|m| m.id == id).map(|m| std::mem::take(&mut m.pending)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ConfigMap, Object};
    use crate::apiserver::{ApiServer, Request};
    use crate::client::component::{Ctx, EventRecorder};
    use crate::record::{Happening, Record, WatchEventType};
    use crate::sim::{Rng, Time};
    use std::sync::Arc;

    /// An API server and what a component needs to call it.
    struct World {
        api: ApiServer,
        rng: Rng,
        record: Record,
        recorder: EventRecorder,
    }

    impl World {
        fn new() -> Self {
            let mut world = World {
                api: ApiServer::new(),
                rng: Rng::stream(1, "t"),
                record: Record::default(),
                recorder: EventRecorder::default(),
            };
            let mut ns = crate::api::Namespace::default();
            ns.metadata.name = "default".into();
            world.as_component(0, |ctx| ctx.call(Request::create(Object::Namespace(ns))).unwrap());
            world
        }

        /// Runs `f` as component `me`.
        fn as_component<R>(&mut self, me: u32, f: impl FnOnce(&mut Ctx) -> R) -> R {
            let mut rng = Rng::stream(1, "me");
            let mut ctx = Ctx::new(
                Time::ZERO,
                ComponentId(me),
                "system:admin",
                &mut self.api,
                &mut rng,
                &mut self.rng,
                &mut self.record,
                &mut self.recorder,
            );
            f(&mut ctx)
        }
    }

    fn config_map(name: &str, value: &str) -> Object {
        let mut cm = ConfigMap::default();
        cm.metadata.name = name.into();
        cm.metadata.namespace = "default".into();
        cm.data.insert("v".into(), value.into());
        Object::ConfigMap(cm)
    }

    /// Starts an informer for `me` on the shared one, as a controller loop does.
    fn start(world: &mut World, shared: &mut SharedInformer, me: u32) -> Informer {
        let mut informer = Informer::new(Kind::ConfigMap);
        world.as_component(me, |ctx| {
            shared.sync(ctx);
            shared.lend(ctx.me, &mut informer);
            informer.start(ctx).unwrap();
            shared.join(ctx.me, &informer);
            shared.give_back(&mut informer);
        });
        informer
    }

    #[test]
    fn a_change_is_cached_once_and_handed_to_every_member_with_its_own_notification() {
        let mut world = World::new();
        let factory = InformerFactory::default();
        let shared = factory.for_kind(Kind::ConfigMap);
        let mut shared = shared.borrow_mut();
        let (_a, _b) = (start(&mut world, &mut shared, 5), start(&mut world, &mut shared, 6));
        world.as_component(7, |ctx| ctx.call(Request::create(config_map("cm", "1"))).unwrap());
        world.as_component(0, |ctx| shared.sync(ctx));
        assert!(shared.cache().get("default", "cm").is_some());
        let (a, b) = (shared.take_pending(ComponentId(5)), shared.take_pending(ComponentId(6)));
        assert_eq!((a.len(), b.len()), (1, 1));
        assert!(Arc::ptr_eq(&a[0].object, &b[0].object), "one object, not a copy per member");
        assert_eq!((a[0].type_, b[0].type_), (WatchEventType::Added, WatchEventType::Added));
        // Each delta points back to the notification its own watch received.
        let to = |seq| match world.record.get(seq).map(|e| &e.what) {
            Some(Happening::Notify { to, .. }) => Some(*to),
            _ => None,
        };
        assert_eq!((to(a[0].seq), to(b[0].seq)), (Some(ComponentId(5)), Some(ComponentId(6))));
        assert!(shared.take_pending(ComponentId(5)).is_empty(), "handed over once");
    }

    #[test]
    fn a_write_one_controller_assumed_is_still_a_change_from_the_old_version_for_the_others() {
        let mut world = World::new();
        world.as_component(7, |ctx| ctx.call(Request::create(config_map("cm", "1"))).unwrap());
        let shared = InformerFactory::default().for_kind(Kind::ConfigMap);
        let mut shared = shared.borrow_mut();
        let mut a = start(&mut world, &mut shared, 5);
        let _b = start(&mut world, &mut shared, 6);
        let before = shared.cache().get("default", "cm").cloned().unwrap();
        // Controller 5 runs: it updates the ConfigMap and assumes its write.
        world.as_component(5, |ctx| {
            shared.sync(ctx);
            shared.lend(ctx.me, &mut a);
            let mut cm = (*before).clone();
            if let Object::ConfigMap(c) = &mut cm {
                c.data.insert("v".into(), "2".into());
            }
            let stored = ctx.call_object(Request::update(cm)).unwrap();
            a.assume(stored);
            shared.give_back(&mut a);
        });
        world.as_component(0, |ctx| shared.sync(ctx));
        let (mine, theirs) = (shared.take_pending(ComponentId(5)), shared.take_pending(ComponentId(6)));
        let old = |d: &Delta| d.old.clone().unwrap();
        // The writer already held its write; the other still knew the version before.
        assert!(Arc::ptr_eq(&old(&mine[0]), &mine[0].object));
        assert!(Arc::ptr_eq(&old(&theirs[0]), &before));
        assert_eq!(
            shared.cache().get("default", "cm").map(|o| o.meta().resource_version.clone()),
            Some(mine[0].object.meta().resource_version.clone())
        );
    }
}
