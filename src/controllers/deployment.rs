//! The Deployment controller: rolls a Deployment's pods from one ReplicaSet to the next.
//! Each sync takes one step — scale the new ReplicaSet up within `maxSurge`, scale old ones
//! down within `maxUnavailable` — and the ReplicaSet controller and kubelets do the rest;
//! their status changes wake it for the next step. Also Recreate, proportional scaling when
//! replicas change mid-rollout, pause, revisions, history cleanup and the progress deadline.

use super::pods::controller_ref;
use super::{Action, Reconciler, Synced};
use crate::api::apps::{ReplicaSetSpec, ReplicaSetStatus, WorkloadCondition};
use crate::api::{Deployment, Kind, Object, ObjectMeta, PodTemplateSpec, ReplicaSet};
use crate::apiserver::{Request, Status};
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::record::WatchEventType;
use crate::sim::{Duration, Time};
use crate::util::sort::StableSort;
use std::collections::BTreeMap;
use std::sync::Arc;

pub const REVISION: &str = "deployment.kubernetes.io/revision";
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// Deployment annotations never copied to its ReplicaSets.
const COPY_SKIPPED: &[&str] = &[
    crate::api::well_known::LAST_APPLIED,
    REVISION,
    "deployment.kubernetes.io/revision-history",
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
];

/// `rand.SafeEncodeString`'s alphabet: no vowels, no look-alike digits.
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The `pod-template-hash` of a template: FNV-1a (32-bit) of the template, plus the collision
/// count, in decimal, each digit safe-encoded.
pub fn template_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u32::from(*b);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    };
    feed(serde_json::to_string(template).unwrap_or_default().as_bytes());
    if let Some(c) = collision_count {
        feed(&c.to_le_bytes());
    }
    hash.to_string().bytes().map(|b| SAFE_ALPHABET[b as usize % SAFE_ALPHABET.len()] as char).collect()
}

/// A template without its `pod-template-hash` label, to compare a ReplicaSet's with a Deployment's.
/// Whether two templates are equal but for their `pod-template-hash` labels: compared in
/// place, field by field, rather than on copies with the label removed (every sync compares
/// the Deployment's template with each of its ReplicaSets').
fn same_but_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    fn labels(t: &PodTemplateSpec) -> impl Iterator<Item = (&String, &String)> {
        t.metadata.labels.iter().filter(|(k, _)| k.as_str() != POD_TEMPLATE_HASH)
    }
    let ObjectMeta {
        name,
        generate_name,
        namespace,
        uid,
        resource_version,
        generation,
        creation_timestamp,
        deletion_timestamp,
        deletion_grace_period_seconds,
        labels: _,
        annotations,
        owner_references,
        finalizers,
        managed_fields,
    } = &a.metadata;
    let m = &b.metadata;
    labels(a).eq(labels(b))
        && *name == m.name
        && *generate_name == m.generate_name
        && *namespace == m.namespace
        && *uid == m.uid
        && *resource_version == m.resource_version
        && *generation == m.generation
        && *creation_timestamp == m.creation_timestamp
        && *deletion_timestamp == m.deletion_timestamp
        && *deletion_grace_period_seconds == m.deletion_grace_period_seconds
        && *annotations == m.annotations
        && *owner_references == m.owner_references
        && *finalizers == m.finalizers
        && *managed_fields == m.managed_fields
        && a.spec == b.spec
}

fn revision_of(rs: &ReplicaSet) -> i64 {
    rs.metadata.annotations.get(REVISION).and_then(|r| r.parse().ok()).unwrap_or(0)
}

fn replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(0)
}

fn available(rs: &ReplicaSet) -> i32 {
    rs.status.available_replicas.unwrap_or(0)
}

/// maxSurge and maxUnavailable resolved against the replica count (surge rounds up,
/// unavailability down; both zero means one may be unavailable).
pub fn surge_and_unavailable(d: &Deployment) -> (i32, i32) {
    let want = d.spec.replicas.unwrap_or(1);
    let rolling = d.spec.strategy.as_ref().and_then(|s| s.rolling_update.clone()).unwrap_or_default();
    let default = crate::api::IntOrString::String("25%".into());
    let surge = rolling.max_surge.as_ref().unwrap_or(&default).scaled(want, true).unwrap_or(0).max(0);
    let unavailable = rolling.max_unavailable.as_ref().unwrap_or(&default).scaled(want, false).unwrap_or(0).max(0);
    if surge == 0 && unavailable == 0 { (0, 1) } else { (surge, unavailable.min(want)) }
}

fn is_recreate(d: &Deployment) -> bool {
    d.spec.strategy.as_ref().and_then(|s| s.type_.as_deref()) == Some("Recreate")
}

pub struct DeploymentController {
    deployments: Informer,
    replica_sets: Informer,
    pods: Informer,
    /// The last step per Deployment, in words, for the page.
    pub lanes: BTreeMap<String, String>,
    /// The pods and ReplicaSets the last sync went through (its worker time).
    last_work: usize,
}

impl Default for DeploymentController {
    fn default() -> Self {
        DeploymentController {
            deployments: Informer::new(Kind::Deployment),
            replica_sets: Informer::new(Kind::ReplicaSet),
            pods: Informer::new(Kind::Pod),
            lanes: BTreeMap::new(),
            last_work: 0,
        }
    }
}

/// Everything one sync works with.
struct Sync {
    key: String,
    object: Arc<Object>,
    d: Shared<Deployment>,
    new_rs: Option<Shared<ReplicaSet>>,
    old: Vec<Shared<ReplicaSet>>,
    /// The first write that failed: the sync goes on, then fails, to be tried again.
    failed: Option<Status>,
}

impl Sync {
    /// Notes a failed write (the first is the one reported).
    fn fail(&mut self, status: Status) {
        self.failed.get_or_insert(status);
    }

    fn all(&self) -> impl Iterator<Item = &ReplicaSet> {
        self.shared().map(|rs| &**rs)
    }

    fn shared(&self) -> impl Iterator<Item = &Shared<ReplicaSet>> {
        self.new_rs.iter().chain(self.old.iter())
    }
}

/// A cached object read as its kind: a sync shares the informer's (or the API's reply's)
/// copy instead of copying it, and copies only what it changes.
/// (Its fields are named apart from the kinds' own, which it derefs to.)
struct Shared<T> {
    arc: Arc<Object>,
    marker: std::marker::PhantomData<T>,
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared { arc: self.arc.clone(), marker: std::marker::PhantomData }
    }
}

/// The kinds a `Shared` holds.
trait OfObject {
    fn of(object: &Object) -> Option<&Self>;
}

impl OfObject for Deployment {
    fn of(object: &Object) -> Option<&Self> {
        object.as_deployment()
    }
}

impl OfObject for ReplicaSet {
    fn of(object: &Object) -> Option<&Self> {
        object.as_replica_set()
    }
}

impl<T: OfObject> Shared<T> {
    /// None when the object is of another kind.
    fn new(object: Arc<Object>) -> Option<Self> {
        T::of(&object)?;
        Some(Shared { arc: object, marker: std::marker::PhantomData })
    }
}

impl<T: OfObject> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        T::of(&self.arc).expect("a Shared holds its own kind: checked when it was made")
    }
}

impl DeploymentController {
    fn owner_of_rs(&self, rs: &Object) -> Option<String> {
        let owner = rs.controller_ref().filter(|o| o.kind == "Deployment")?;
        Some(cache_key(rs.namespace(), &owner.name))
    }

    /// Scales a ReplicaSet, recording the Deployment's ScalingReplicaSet event.
    fn scale(&mut self, s: &mut Sync, rs: &Shared<ReplicaSet>, to: i32, ctx: &mut Ctx) -> Option<Shared<ReplicaSet>> {
        let (surge, _) = surge_and_unavailable(&s.d);
        let want = s.d.spec.replicas.unwrap_or(1);
        let from = replicas(rs);
        let mut updated = (**rs).clone();
        updated.spec.replicas = Some(to);
        updated.metadata.annotations.insert(DESIRED_REPLICAS.into(), want.to_string());
        updated.metadata.annotations.insert(MAX_REPLICAS.into(), (want + surge).to_string());
        if updated == **rs {
            return Some(rs.clone());
        }
        updated.metadata.resource_version.clear();
        let stored = match ctx.call_object(Request::update(Object::ReplicaSet(Box::new(updated)))) {
            Ok(stored) => stored,
            Err(status) => {
                s.fail(status);
                return None;
            }
        };
        self.replica_sets.assume(stored.clone());
        if from != to {
            let verb = if to > from { "up" } else { "down" };
            let name = rs.metadata.name.clone();
            self.lanes.insert(s.key.clone(), format!("scaled {verb} {name} from {from} to {to}"));
            ctx.event(
                &s.object,
                "",
                "Normal",
                "ScalingReplicaSet",
                format!("Scaled {verb} replica set {name} from {from} to {to}"),
            );
        }
        Shared::new(stored)
    }

    /// Finds the ReplicaSet whose template is the Deployment's, creating it if asked.
    fn new_replica_set(&mut self, s: &mut Sync, create: bool, ctx: &mut Ctx) {
        let max_old = s.old.iter().map(|rs| revision_of(rs)).max().unwrap_or(0);
        let (surge, _) = surge_and_unavailable(&s.d);
        let want = s.d.spec.replicas.unwrap_or(1);
        if let Some(rs) = &s.new_rs {
            // An existing new ReplicaSet (also a rollback to an old template) gets the newest revision.
            let revision = if revision_of(rs) <= max_old { max_old + 1 } else { revision_of(rs) };
            // Usually it has all that already: checked first, so it is copied only to change it.
            if !new_rs_synced(&s.d, rs, revision) {
                self.update_new_rs(s, revision, want + surge, ctx);
            }
            self.sync_revision(s, revision, ctx);
            return;
        }
        if !create {
            return;
        }
        self.create_new_rs(s, max_old + 1, want, surge, ctx);
    }

    /// Updates the existing new ReplicaSet with the Deployment's annotations, its revision and
    /// minReadySeconds.
    fn update_new_rs(&mut self, s: &mut Sync, revision: i64, max_replicas: i32, ctx: &mut Ctx) {
        let want = s.d.spec.replicas.unwrap_or(1);
        let Some(rs) = &s.new_rs else { return };
        let mut updated = (**rs).clone();
        // The Deployment's own annotations (a new change-cause) follow it to its new ReplicaSet.
        for (k, v) in &s.d.metadata.annotations {
            if !COPY_SKIPPED.contains(&k.as_str()) {
                updated.metadata.annotations.insert(k.clone(), v.clone());
            }
        }
        updated.metadata.annotations.insert(REVISION.into(), revision.to_string());
        updated.metadata.annotations.entry(DESIRED_REPLICAS.into()).or_insert_with(|| want.to_string());
        updated.metadata.annotations.entry(MAX_REPLICAS.into()).or_insert_with(|| max_replicas.to_string());
        updated.spec.min_ready_seconds = s.d.spec.min_ready_seconds;
        if updated == **rs {
            return;
        }
        updated.metadata.resource_version.clear();
        match ctx.call_object(Request::update(Object::ReplicaSet(Box::new(updated)))) {
            Ok(stored) => {
                self.replica_sets.assume(stored.clone());
                s.new_rs = Shared::new(stored.clone());
            }
            Err(status) => s.fail(status),
        }
    }

    /// Creates the new ReplicaSet from the Deployment's template.
    fn create_new_rs(&mut self, s: &mut Sync, revision: i64, want: i32, surge: i32, ctx: &mut Ctx) {
        let collision = s.d.status.collision_count;
        let hash = template_hash(&s.d.spec.template, collision);
        let mut template = s.d.spec.template.clone();
        template.metadata.labels.insert(POD_TEMPLATE_HASH.into(), hash.clone());
        let mut selector = s.d.spec.selector.clone().unwrap_or_default();
        selector.match_labels.insert(POD_TEMPLATE_HASH.into(), hash.clone());
        let initial = if is_recreate(&s.d) {
            want
        } else {
            let current: i32 = s.all().map(replicas).sum();
            (want + surge - current).max(0).min(want)
        };
        let mut annotations: BTreeMap<String, String> = crate::util::sort::btree_map(
            s.d.metadata
                .annotations
                .iter()
                .filter(|(k, _)| *k != crate::api::well_known::LAST_APPLIED && *k != REVISION)
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        annotations.insert(REVISION.into(), revision.to_string());
        annotations.insert(DESIRED_REPLICAS.into(), want.to_string());
        annotations.insert(MAX_REPLICAS.into(), (want + surge).to_string());
        let rs = ReplicaSet {
            metadata: ObjectMeta {
                name: format!("{}-{hash}", s.d.metadata.name),
                namespace: s.d.metadata.namespace.clone(),
                labels: template.metadata.labels.clone(),
                annotations: annotations.into(),
                owner_references: vec![controller_ref(&s.object)].into(),
                ..Default::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(initial),
                min_ready_seconds: s.d.spec.min_ready_seconds,
                selector: Some(selector),
                template,
            },
            status: ReplicaSetStatus::default(),
            ..Default::default()
        };
        let name = rs.metadata.name.clone();
        match ctx.call_object(Request::create(Object::ReplicaSet(Box::new(rs)))) {
            Ok(stored) => {
                self.replica_sets.assume(stored.clone());
                s.new_rs = Shared::new(stored.clone());
                if initial > 0 {
                    ctx.event(
                        &s.object,
                        "",
                        "Normal",
                        "ScalingReplicaSet",
                        format!("Scaled up replica set {name} from 0 to {initial}"),
                    );
                }
                self.lanes.insert(s.key.clone(), format!("created {name} (revision {revision})"));
                self.set_progressing(
                    s,
                    "True",
                    "NewReplicaSetCreated",
                    format!("Created new replica set \"{name}\""),
                    ctx,
                );
                self.sync_revision(s, revision, ctx);
            }
            Err(status) if status.reason == "AlreadyExists" => {
                // A ReplicaSet with this name but another template: a hash collision.
                let mut d = (*s.d).clone();
                d.status.collision_count = Some(collision.unwrap_or(0) + 1);
                d.metadata.resource_version.clear();
                match ctx.call_object(Request::update_status(Object::Deployment(Box::new(d)))) {
                    Ok(stored) => self.deployments.assume(stored),
                    Err(status) => s.fail(status),
                }
            }
            Err(status) => s.fail(status),
        }
    }

    fn sync_revision(&mut self, s: &mut Sync, revision: i64, ctx: &mut Ctx) {
        let current = s.d.metadata.annotations.get(REVISION).cloned();
        if current.as_deref() == Some(revision.to_string().as_str()) {
            return;
        }
        let mut d = (*s.d).clone();
        d.metadata.annotations.insert(REVISION.into(), revision.to_string());
        d.metadata.resource_version.clear();
        match ctx.call_object(Request::update(Object::Deployment(Box::new(d)))) {
            Ok(stored) => {
                if let Some(d) = Shared::new(stored.clone()) {
                    s.d = d;
                    s.object = stored.clone();
                }
                self.deployments.assume(stored);
            }
            Err(status) => s.fail(status),
        }
    }

    fn set_progressing(&mut self, s: &mut Sync, status: &str, reason: &str, message: String, ctx: &mut Ctx) {
        let mut d = (*s.d).clone();
        set_condition(&mut d.status.conditions, "Progressing", status, reason, message, ctx.now, true);
        if d.status != s.d.status {
            d.metadata.resource_version.clear();
            match ctx.call_object(Request::update_status(Object::Deployment(Box::new(d)))) {
                Ok(stored) => {
                    if let Some(d) = Shared::new(stored.clone()) {
                        s.d = d;
                        s.object = stored.clone();
                    }
                    self.deployments.assume(stored);
                }
                Err(status) => s.fail(status),
            }
        }
    }

    /// Scale the new ReplicaSet up as far as maxSurge allows (or down to the desired count).
    fn reconcile_new(&mut self, s: &mut Sync, ctx: &mut Ctx) -> bool {
        let Some(new_rs) = s.new_rs.clone() else { return false };
        let want = s.d.spec.replicas.unwrap_or(1);
        let (surge, _) = surge_and_unavailable(&s.d);
        let current = replicas(&new_rs);
        let target = if current > want {
            want
        } else if current == want {
            return false;
        } else {
            let total: i32 = s.all().map(replicas).sum();
            let max_total = want + surge;
            if total >= max_total {
                return false;
            }
            current + (max_total - total).min(want - current)
        };
        if target == current {
            return false;
        }
        if let Some(rs) = self.scale(s, &new_rs, target, ctx) {
            s.new_rs = Some(rs);
        }
        true
    }

    /// Scale old ReplicaSets down as far as maxUnavailable allows: unhealthy pods first,
    /// then the oldest ReplicaSets.
    fn reconcile_old(&mut self, s: &mut Sync, ctx: &mut Ctx) -> bool {
        let old_total: i32 = s.old.iter().map(|rs| replicas(rs)).sum();
        if old_total == 0 {
            return false;
        }
        let want = s.d.spec.replicas.unwrap_or(1);
        let (_, max_unavailable) = surge_and_unavailable(&s.d);
        let min_available = want - max_unavailable;
        let all_total: i32 = s.all().map(replicas).sum();
        let new_unavailable = s.new_rs.as_ref().map_or(0, |rs| replicas(rs) - available(rs));
        let max_scaled_down = all_total - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return false;
        }
        let mut scaled = 0;
        let mut olds = s.old.clone();
        olds.stable_sort_by_key(|rs| (rs.metadata.creation_timestamp, rs.metadata.name.clone()));
        // Unhealthy replicas first: they are not serving anyway.
        for rs in olds.iter_mut() {
            if scaled >= max_scaled_down {
                break;
            }
            let unhealthy = replicas(rs) - available(rs);
            if replicas(rs) == 0 || unhealthy <= 0 {
                continue;
            }
            let down = unhealthy.min(max_scaled_down - scaled);
            if let Some(updated) = self.scale(s, rs, replicas(rs) - down, ctx) {
                *rs = updated;
            }
            scaled += down;
        }
        // Then healthy ones, oldest first, keeping minAvailable.
        let available_total: i32 = s.new_rs.iter().chain(olds.iter()).map(|rs| available(rs)).sum();
        let mut budget = available_total - min_available;
        for rs in olds.iter_mut() {
            if budget <= 0 {
                break;
            }
            if replicas(rs) == 0 {
                continue;
            }
            let down = replicas(rs).min(budget);
            if let Some(updated) = self.scale(s, rs, replicas(rs) - down, ctx) {
                *rs = updated;
            }
            scaled += down;
            budget -= down;
        }
        s.old = olds;
        scaled > 0
    }

    /// Replicas changed while several ReplicaSets are active: share the change out in
    /// proportion to their sizes.
    fn proportional_scale(&mut self, s: &mut Sync, ctx: &mut Ctx) {
        let want = s.d.spec.replicas.unwrap_or(1);
        let (surge, _) = surge_and_unavailable(&s.d);
        let active: Vec<Shared<ReplicaSet>> = s.shared().filter(|rs| replicas(rs) > 0).cloned().collect();
        if active.len() <= 1 {
            let target = active.first().cloned().or_else(|| s.new_rs.clone());
            if let Some(rs) = target {
                let to = if s.new_rs.as_ref().is_some_and(|n| n.metadata.name == rs.metadata.name) || active.len() == 1
                {
                    want
                } else {
                    0
                };
                self.scale(s, &rs, to, ctx);
            }
            return;
        }
        let allowed = if is_recreate(&s.d) { want } else { want + surge };
        let total: i32 = active.iter().map(|rs| replicas(rs)).sum();
        let to_add = allowed - total;
        let mut sizes: Vec<(Shared<ReplicaSet>, i32)> = active.iter().map(|rs| (rs.clone(), replicas(rs))).collect();
        if to_add != 0 {
            // Largest first (newest on ties) so rounding leftovers go where most pods are.
            sizes.stable_sort_by(|a, b| {
                b.1.cmp(&a.1).then(b.0.metadata.creation_timestamp.cmp(&a.0.metadata.creation_timestamp))
            });
            let mut left = to_add;
            for (_, size) in sizes.iter_mut() {
                let share = (*size as i64 * to_add as i64 / total.max(1) as i64) as i32;
                let share = if to_add > 0 { share.min(left) } else { share.max(left) };
                *size += share;
                left -= share;
            }
            if let Some((_, size)) = sizes.first_mut() {
                *size = (*size + left).max(0);
            }
        }
        for (rs, size) in sizes {
            self.scale(s, &rs, size, ctx);
        }
    }

    fn cleanup(&mut self, s: &mut Sync, ctx: &mut Ctx) {
        let limit = s.d.spec.revision_history_limit.unwrap_or(10).max(0) as usize;
        let mut idle: Vec<&ReplicaSet> = s
            .old
            .iter()
            .map(|rs| &**rs)
            .filter(|rs| replicas(rs) == 0 && rs.status.replicas == 0 && rs.metadata.deletion_timestamp.is_none())
            .collect();
        if idle.len() <= limit {
            return;
        }
        idle.stable_sort_by_key(|rs| revision_of(rs));
        let excess = idle.len() - limit;
        let mut failed = None;
        for rs in idle.into_iter().take(excess) {
            if let Err(status) = super::done_unless_failed(ctx.call(Request::delete(
                Kind::ReplicaSet,
                &rs.metadata.namespace,
                &rs.metadata.name,
            ))) {
                failed.get_or_insert(status);
            }
        }
        if let Some(status) = failed {
            s.fail(status);
        }
    }

    /// Status from the ReplicaSets, with the Available and Progressing conditions.
    fn sync_status(&mut self, s: &mut Sync, ctx: &mut Ctx) -> Synced {
        let want = s.d.spec.replicas.unwrap_or(1);
        let (_, max_unavailable) = surge_and_unavailable(&s.d);
        let mut st = s.d.status.clone();
        let total: i32 = s.all().map(|rs| rs.status.replicas).sum();
        let ready: i32 = s.all().map(|rs| rs.status.ready_replicas.unwrap_or(0)).sum();
        let avail: i32 = s.all().map(available).sum();
        let updated = s.new_rs.as_ref().map_or(0, |rs| rs.status.replicas);
        st.replicas = Some(total);
        st.updated_replicas = Some(updated);
        st.ready_replicas = Some(ready);
        st.available_replicas = Some(avail);
        st.unavailable_replicas = Some((want - avail).max(0));
        st.observed_generation = Some(s.d.metadata.generation);
        if avail >= want - max_unavailable {
            set_condition(
                &mut st.conditions,
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.".into(),
                ctx.now,
                false,
            );
        } else {
            set_condition(
                &mut st.conditions,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.".into(),
                ctx.now,
                false,
            );
        }
        let deadline = s.d.spec.progress_deadline_seconds.unwrap_or(600);
        let rs_name = s.new_rs.as_ref().map(|rs| rs.metadata.name.clone());
        let what = match &rs_name {
            Some(n) => format!("ReplicaSet \"{n}\""),
            None => format!("Deployment \"{}\"", s.d.metadata.name),
        };
        let current = st.conditions.iter().find(|c| c.type_ == "Progressing").cloned();
        let complete = updated == want && total == want && avail == want;
        let already_complete =
            total == updated && current.as_ref().is_some_and(|c| c.reason == "NewReplicaSetAvailable");
        let mut requeue = None;
        if !already_complete && !s.d.spec.paused {
            let old_status = &s.d.status;
            let old_replicas_now = total - updated;
            let old_replicas_before = old_status.replicas.unwrap_or(0) - old_status.updated_replicas.unwrap_or(0);
            let progressing = updated > old_status.updated_replicas.unwrap_or(0)
                || old_replicas_now < old_replicas_before
                || ready > old_status.ready_replicas.unwrap_or(0)
                || avail > old_status.available_replicas.unwrap_or(0);
            let since = current.as_ref().and_then(|c| c.last_update_time).unwrap_or(ctx.now);
            let timed_out = current.as_ref().is_some_and(|c| c.reason == "ProgressDeadlineExceeded")
                || ctx.now.since(since) > Duration::seconds(deadline as u64);
            if complete {
                set_condition(
                    &mut st.conditions,
                    "Progressing",
                    "True",
                    "NewReplicaSetAvailable",
                    format!("{what} has successfully progressed."),
                    ctx.now,
                    true,
                );
            } else if progressing {
                set_condition(
                    &mut st.conditions,
                    "Progressing",
                    "True",
                    "ReplicaSetUpdated",
                    format!("{what} is progressing."),
                    ctx.now,
                    true,
                );
                requeue = Some(Duration::seconds(deadline as u64 + 1));
            } else if timed_out {
                if current.as_ref().is_none_or(|c| c.reason != "ProgressDeadlineExceeded") {
                    ctx.decide(|| format!("Deployment {}: {what} has timed out progressing", s.key));
                }
                set_condition(
                    &mut st.conditions,
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    format!("{what} has timed out progressing."),
                    ctx.now,
                    false,
                );
            } else {
                let left = (since + Duration::seconds(deadline as u64)).since(ctx.now);
                requeue = Some(left + Duration::seconds(1));
            }
        }
        if st != s.d.status {
            // The Deployment with the new status (its old status is not copied to be replaced).
            let mut d = Deployment {
                api_version: s.d.api_version.clone(),
                kind: s.d.kind.clone(),
                metadata: s.d.metadata.clone(),
                spec: s.d.spec.clone(),
                status: st,
            };
            d.metadata.resource_version.clear();
            match ctx.call_object(Request::update_status(Object::Deployment(Box::new(d)))) {
                Ok(stored) => self.deployments.assume(stored),
                Err(status) => s.fail(status),
            }
        }
        if let Some(status) = s.failed.take() {
            return Err(status);
        }
        Ok(match requeue {
            Some(d) => Action::RequeueAfter(d),
            None => Action::AwaitChange,
        })
    }
}

/// Sets a condition the way upstream does: an unchanged one stays put; a changed one is
/// removed and appended (keeping its transition time if the status did not flip), so the
/// most recently changed condition is listed last. `touch` marks progress: the update time
/// moves even when nothing else does.
fn set_condition(
    conds: &mut Vec<WorkloadCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Time,
    touch: bool,
) {
    let existing = conds.iter().position(|c| c.type_ == type_);
    if let Some(i) = existing {
        let c = &conds[i];
        if c.status == status && c.reason == reason && c.message == message && !touch {
            return;
        }
    }
    let old = existing.map(|i| conds.remove(i));
    let transition = match &old {
        Some(c) if c.status == status => c.last_transition_time,
        _ => Some(now),
    };
    conds.push(WorkloadCondition {
        type_: type_.into(),
        status: status.into(),
        last_update_time: Some(now),
        last_transition_time: transition,
        reason: reason.into(),
        message,
    });
}

/// Whether the new ReplicaSet already has what `update_new_rs` would give it: the
/// Deployment's copied annotations, `revision`, the desired and max replicas annotations (only
/// added when missing) and the Deployment's minReadySeconds.
fn new_rs_synced(d: &Deployment, rs: &ReplicaSet, revision: i64) -> bool {
    let have = &rs.metadata.annotations;
    d.metadata
        .annotations
        .iter()
        .filter(|(k, _)| !COPY_SKIPPED.contains(&k.as_str()))
        .all(|(k, v)| have.get(k) == Some(v))
        && have.get(REVISION).is_some_and(|r| *r == revision.to_string())
        && have.contains_key(DESIRED_REPLICAS)
        && have.contains_key(MAX_REPLICAS)
        && rs.spec.min_ready_seconds == d.spec.min_ready_seconds
}

impl Reconciler for DeploymentController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.deployments, &mut self.replica_sets, &mut self.pods]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let obj = &delta.object;
        match informer {
            0 => vec![cache_key(obj.namespace(), obj.name())],
            1 => {
                if let Some(key) = self.owner_of_rs(obj) {
                    return vec![key];
                }
                // An orphan ReplicaSet: a Deployment whose selector matches may adopt it.
                self.deployments
                    .cache
                    .values()
                    .filter(|d| d.namespace() == obj.namespace())
                    .filter(|d| {
                        d.as_deployment()
                            .and_then(|d| d.spec.selector.as_ref())
                            .is_some_and(|s| !s.match_labels.is_empty() && s.matches(&obj.meta().labels))
                    })
                    .map(|d| cache_key(d.namespace(), d.name()))
                    .collect()
            }
            _ => {
                // Recreate waits for old pods to go: their deletion is worth a look.
                if delta.type_ != WatchEventType::Deleted {
                    return Vec::new();
                }
                let Some(owner) = obj.controller_ref().filter(|o| o.kind == "ReplicaSet") else { return Vec::new() };
                let rs = self.replica_sets.get(obj.namespace(), &owner.name).cloned();
                rs.and_then(|rs| self.owner_of_rs(&rs)).into_iter().collect()
            }
        }
    }

    fn work(&self) -> usize {
        self.last_work
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        self.last_work = 0;
        let Some(object) = self.deployments.cache.get(key).cloned() else {
            self.lanes.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Some(d) = Shared::<Deployment>::new(object.clone()) else { return Ok(Action::AwaitChange) };
        // The Deployment's ReplicaSets, adopting orphans its selector matches.
        // (A missing selector, like an empty one, adopts nothing.)
        let selector = d.spec.selector.as_ref().filter(|s| !s.match_labels.is_empty());
        let orphans: Vec<Arc<Object>> = self
            .replica_sets
            .orphans_in(&d.metadata.namespace)
            .into_iter()
            .filter(|rs| selector.is_some_and(|s| s.matches(&rs.meta().labels)))
            .cloned()
            .collect();
        let mut failed = None;
        if d.metadata.deletion_timestamp.is_none() {
            for orphan in orphans {
                if let Some(mut rs) = orphan.as_replica_set().cloned() {
                    rs.metadata.owner_references.push(controller_ref(&object));
                    match ctx.call_object(Request::update(Object::ReplicaSet(Box::new(rs)))) {
                        Ok(stored) => self.replica_sets.assume(stored),
                        Err(status) if status.code == 404 => {}
                        Err(status) => {
                            failed.get_or_insert(status);
                        }
                    }
                }
            }
        }
        let owned: Vec<Shared<ReplicaSet>> =
            self.replica_sets.owned_by(&d.metadata.uid).into_iter().filter_map(|o| Shared::new(o.clone())).collect();
        let mut new_rs = None;
        let mut old = Vec::new();
        let mut sorted = owned;
        sorted.stable_sort_by_key(|rs| (rs.metadata.creation_timestamp, rs.metadata.name.clone()));
        for rs in sorted {
            if new_rs.is_none() && same_but_hash(&rs.spec.template, &d.spec.template) {
                new_rs = Some(rs);
            } else {
                old.push(rs);
            }
        }
        let mut s = Sync { key: key.to_string(), object, d, new_rs, old, failed };
        // The real sync lists the Deployment's ReplicaSets and their pods.
        self.last_work = s.all().map(|rs| rs.status.replicas.max(0) as usize + 1).sum();
        if s.d.metadata.deletion_timestamp.is_some() {
            return self.sync_status(&mut s, ctx);
        }
        let want = s.d.spec.replicas.unwrap_or(1);
        // Replicas changed since the ReplicaSets were sized: scale, don't roll.
        let scaling = s.all().filter(|rs| replicas(rs) > 0).any(|rs| {
            rs.metadata.annotations.get(DESIRED_REPLICAS).and_then(|v| v.parse::<i32>().ok()).is_some_and(|n| n != want)
        });
        if s.d.spec.paused || scaling {
            self.new_replica_set(&mut s, false, ctx);
            if scaling {
                ctx.cause = Some(
                    ctx.decide(|| format!("Deployment {key}: replicas changed to {want}: scaling proportionally")),
                );
                self.proportional_scale(&mut s, ctx);
            }
            return self.sync_status(&mut s, ctx);
        }
        if is_recreate(&s.d) {
            // Stop everything old first, then start the new.
            let olds: Vec<Shared<ReplicaSet>> = s.old.iter().filter(|rs| replicas(rs) > 0).cloned().collect();
            if !olds.is_empty() {
                for rs in olds {
                    self.scale(&mut s, &rs, 0, ctx);
                }
                return self.sync_status(&mut s, ctx);
            }
            let old_uids: Vec<&str> = s.old.iter().map(|rs| rs.metadata.uid.as_str()).collect();
            let old_pods_running = old_uids
                .iter()
                .any(|uid| self.pods.owned_by(uid).iter().any(|p| p.as_pod().is_some_and(|p| !p.is_terminal())));
            if old_pods_running {
                return self.sync_status(&mut s, ctx);
            }
            self.new_replica_set(&mut s, true, ctx);
            if let Some(rs) = s.new_rs.clone().filter(|rs| replicas(rs) != want) {
                s.new_rs = self.scale(&mut s, &rs, want, ctx);
            }
        } else {
            self.new_replica_set(&mut s, true, ctx);
            if !self.reconcile_new(&mut s, ctx) {
                self.reconcile_old(&mut s, ctx);
            }
        }
        let complete = s.new_rs.as_ref().is_some_and(|rs| replicas(rs) == want && available(rs) == want)
            && s.old.iter().all(|rs| replicas(rs) == 0);
        if complete {
            self.cleanup(&mut s, ctx);
        }
        self.sync_status(&mut s, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::IntOrString;
    use crate::api::apps::{DeploymentStrategy, RollingUpdate};

    #[test]
    fn template_hashes_are_stable_safe_encoded_decimals() {
        let t = PodTemplateSpec::default();
        let h = template_hash(&t, None);
        assert_eq!(h, template_hash(&t, None));
        assert_ne!(h, template_hash(&t, Some(1)));
        assert!(h.len() >= 9 && h.chars().all(|c| "456789bcdf".contains(c)), "{h}");
    }

    #[test]
    fn default_strategy_surges_a_quarter_up_and_allows_a_quarter_down() {
        let mut d = Deployment::default();
        d.spec.replicas = Some(3);
        assert_eq!(surge_and_unavailable(&d), (1, 0));
        d.spec.replicas = Some(10);
        assert_eq!(surge_and_unavailable(&d), (3, 2));
    }

    #[test]
    fn zero_surge_and_zero_unavailable_allows_one_unavailable() {
        let mut d = Deployment::default();
        d.spec.replicas = Some(3);
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdate {
                max_surge: Some(IntOrString::Int(0)),
                max_unavailable: Some(IntOrString::Int(0)),
            }),
        });
        assert_eq!(surge_and_unavailable(&d), (0, 1));
    }
}
