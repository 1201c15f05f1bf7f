//! The Job controller of kube-controller-manager (`job-controller`): runs a Job's pods until
//! enough of them succeed, or until too many fail or the Job runs out of time.
//!
//! As upstream (NonIndexed completion mode): up to `parallelism` pods run at once, never more
//! than the completions still missing; finished pods are counted through the
//! `batch.kubernetes.io/job-tracking` finalizer and `status.uncountedTerminatedPods`, so a
//! pod is counted once even if it is deleted later; failed pods are replaced after a back-off
//! (10s doubling, at most 6m, counted from the last failure); more failures than
//! `backoffLimit` (or a restart count past it for `OnFailure` pods) or a run longer than
//! `activeDeadlineSeconds` fails the Job. Terminal conditions come in two steps, as in recent
//! releases: `SuccessCriteriaMet` / `FailureTarget` first, then `Complete` / `Failed` once no
//! pod is still terminating. `suspend` deletes the active pods and resuming restarts the clock.
//!
//! Indexed Jobs (indexed_job.rs) with `backoffLimitPerIndex`: an index whose pods failed more
//! often than that is not run again and is listed in `status.failedIndexes`; more of them
//! than `maxFailedIndexes` fails the Job at once (MaxFailedIndexesExceeded), and a Job whose
//! every index has completed or failed, some failed, fails then (FailedIndexes).
//!
//! Left out: pod failure policies, success policies, adoption of orphan pods, and
//! `ttlSecondsAfterFinished` (that is another controller upstream).

use super::indexed_job;
use super::pods::{create_reporting, pod_from_template, ready_since, slow_start};
use super::replicaset::deletion_order;
use super::{Action, Reconciler, Synced};
use crate::api::batch::{JobCondition, JobStatus};
use crate::api::{Job, Kind, Object, Pod};
use crate::apiserver::{Request, Status};
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::record::WatchEventType;
use crate::sim::{Duration, Time};
use crate::util::json_macro::json;
use crate::util::sort::StableSort;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The finalizer that keeps a Job's pod around until the controller has counted it.
pub const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// The first wait before a failed pod is replaced; it doubles with each further failure.
pub const DEFAULT_POD_FAILURE_BACKOFF: Duration = Duration::seconds(10);
/// The longest wait before a failed pod is replaced.
pub const MAX_POD_FAILURE_BACKOFF: Duration = Duration::minutes(6);
/// The most pods one sync creates or deletes.
const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;
/// Expectations older than this are given up on.
const EXPECTATIONS_TIMEOUT: Duration = Duration::minutes(5);
/// Work-queue keys of pods whose Job is gone or finished: only their finalizer is left to remove.
const ORPHAN_POD_PREFIX: &str = "pod:";

/// Pods this controller created or deleted that its cache has not shown yet. Deletions are
/// tracked by uid: a pod may show its deletion more than once (deletionTimestamp, then gone).
#[derive(Clone, Debug, Default)]
struct Expectations {
    adds: i64,
    dels: BTreeSet<String>,
    set_at: Time,
}

/// Failures since the last success and when the last one happened: the pod replacement back-off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackoffRecord {
    pub failures_after_last_success: u32,
    pub last_failure: Option<Time>,
}

impl BackoffRecord {
    /// Takes in the finish times of pods newly seen to have succeeded and failed.
    pub fn observe(mut self, succeeded: &[Time], failed: &[Time]) -> BackoffRecord {
        let last_success = succeeded.iter().max().copied();
        let Some(last_success) = last_success else {
            if let Some(last) = failed.iter().max() {
                self.failures_after_last_success += failed.len() as u32;
                self.last_failure = Some(*last);
            }
            return self;
        };
        let after: Vec<Time> = failed.iter().copied().filter(|t| *t > last_success).collect();
        self.failures_after_last_success = after.len() as u32;
        self.last_failure = after.iter().max().copied();
        self
    }

    /// How much longer a replacement pod has to wait.
    pub fn remaining(&self, now: Time) -> Duration {
        let Some(last) = self.last_failure.filter(|_| self.failures_after_last_success > 0) else {
            return Duration::ZERO;
        };
        let mut backoff = DEFAULT_POD_FAILURE_BACKOFF;
        for _ in 1..self.failures_after_last_success {
            backoff = Duration(backoff.0 * 2);
            if backoff >= MAX_POD_FAILURE_BACKOFF {
                backoff = MAX_POD_FAILURE_BACKOFF;
                break;
            }
        }
        let elapsed = now.since(last);
        if backoff < elapsed { Duration::ZERO } else { Duration(backoff.0 - elapsed.0) }
    }
}

/// How many pods should be active: `parallelism`, but never more than the completions still
/// missing; without `completions`, none are added once any pod has succeeded.
pub fn want_active(completions: Option<i32>, parallelism: i32, succeeded: i32, active: i32) -> i32 {
    match completions {
        None if succeeded > 0 => active,
        None => parallelism,
        Some(c) => (c - succeeded).min(parallelism).max(0),
    }
}

/// Whether a pod counts as a failure: it failed, or (unless only failed pods are replaced) it
/// was deleted before it succeeded.
pub fn is_pod_failed(pod: &Pod, only_replace_failed: bool) -> bool {
    if pod.status.phase == "Failed" {
        return true;
    }
    !only_replace_failed && pod.metadata.deletion_timestamp.is_some() && pod.status.phase != "Succeeded"
}

/// When a pod finished: its containers' last exit, else when it stopped being ready, else its
/// deletion (less the grace period), else its creation.
pub fn finished_time(pod: &Pod) -> Time {
    let statuses = &pod.status.container_statuses;
    let exits: Vec<Time> = statuses.iter().filter_map(|c| c.state.terminated.as_ref()?.finished_at).collect();
    if !statuses.is_empty() && exits.len() == statuses.len() {
        if let Some(t) = exits.into_iter().max() {
            return t;
        }
    }
    if let Some(t) = pod.condition("Ready").filter(|c| c.status == "False").and_then(|c| c.last_transition_time) {
        return t;
    }
    if let Some(t) = pod.metadata.deletion_timestamp {
        let grace = pod.metadata.deletion_grace_period_seconds.unwrap_or(0).max(0) as u64;
        return Time(t.0.saturating_sub(grace * 1000));
    }
    pod.metadata.creation_timestamp.unwrap_or_default()
}

/// For `restartPolicy: OnFailure`: whether the running pods' restarts reached `backoffLimit`.
pub fn past_backoff_limit_on_failure(job: &Job, pods: &[&Pod]) -> bool {
    if job.spec.template.spec.restart_policy.as_deref() != Some("OnFailure") {
        return false;
    }
    let restarts: i32 = pods
        .iter()
        .filter(|p| matches!(p.status.phase.as_str(), "Running" | "Pending"))
        .flat_map(|p| p.status.container_statuses.iter())
        .map(|c| c.restart_count)
        .sum();
    let limit = job.spec.backoff_limit.unwrap_or(6);
    if limit == 0 { restarts > 0 } else { restarts >= limit }
}

fn find<'a>(job: &'a Job, type_: &str) -> Option<&'a JobCondition> {
    job.status.conditions.iter().find(|c| c.type_ == type_)
}

pub fn has_true(job: &Job, type_: &str) -> bool {
    find(job, type_).is_some_and(|c| c.status == "True")
}

/// Complete or Failed: the controller is done with it.
pub fn is_finished(job: &Job) -> bool {
    has_true(job, "Complete") || has_true(job, "Failed")
}

fn condition(type_: &str, status: &str, reason: &str, message: &str, now: Time) -> JobCondition {
    JobCondition {
        type_: type_.into(),
        status: status.into(),
        last_probe_time: Some(now),
        last_transition_time: Some(now),
        reason: reason.into(),
        message: message.into(),
    }
}

/// Sets a condition's status, reason and message; a False condition is only written over an
/// existing one. Returns whether anything changed.
fn ensure_condition(
    conditions: &mut Vec<JobCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Time,
) -> bool {
    if let Some(c) = conditions.iter_mut().find(|c| c.type_ == type_) {
        if c.status != status || c.reason != reason || c.message != message {
            *c = condition(type_, status, reason, message, now);
            return true;
        }
        return false;
    }
    if status != "False" {
        conditions.push(condition(type_, status, reason, message, now));
        return true;
    }
    false
}

/// `status.uncountedTerminatedPods`: finished pods whose finalizer is being removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Uncounted {
    succeeded: Vec<String>,
    failed: Vec<String>,
}

impl Uncounted {
    fn from_status(status: &JobStatus) -> Uncounted {
        let list = |key: &str| -> Vec<String> {
            status
                .uncounted_terminated_pods
                .as_ref()
                .and_then(|v| v.get(key))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|u| u.as_str().map(String::from)).collect())
                .unwrap_or_default()
        };
        Uncounted { succeeded: list("succeeded"), failed: list("failed") }
    }

    fn to_value(&self) -> Value {
        let mut v = json!({});
        if !self.succeeded.is_empty() {
            v["succeeded"] = json!(self.succeeded);
        }
        if !self.failed.is_empty() {
            v["failed"] = json!(self.failed);
        }
        v
    }

    fn has(&self, uid: &str) -> bool {
        self.succeeded.iter().any(|u| u == uid) || self.failed.iter().any(|u| u == uid)
    }

    fn is_empty(&self) -> bool {
        self.succeeded.is_empty() && self.failed.is_empty()
    }
}

fn has_finalizer(pod: &Pod) -> bool {
    pod.metadata.finalizers.iter().any(|f| f == TRACKING_FINALIZER)
}

fn nonzero(n: i32) -> Option<i32> {
    (n != 0).then_some(n)
}

/// One Job's counts as its lane in the page shows them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lane {
    pub want: i32,
    pub active: i32,
    pub succeeded: i32,
    pub failed: i32,
    /// `create 1`, `delete 2`, `back-off 20s`, or empty.
    pub action: String,
}

impl std::fmt::Display for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "want {} · active {} · succeeded {} · failed {}",
            self.want, self.active, self.succeeded, self.failed
        )?;
        if !self.action.is_empty() {
            write!(f, " → {}", self.action)?;
        }
        Ok(())
    }
}

pub struct JobController {
    jobs: Informer,
    pods: Informer,
    expectations: HashMap<String, Expectations>,
    backoff: HashMap<String, BackoffRecord>,
    /// Jobs waiting out a pod-failure back-off before they create pods again: work under way,
    /// which "run until settled" waits for.
    backing_off: BTreeSet<String>,
    /// The last decision per Job.
    pub lanes: BTreeMap<String, Lane>,
}

impl Default for JobController {
    fn default() -> Self {
        JobController {
            jobs: Informer::new(Kind::Job),
            pods: Informer::new(Kind::Pod),
            expectations: HashMap::new(),
            backoff: HashMap::new(),
            backing_off: BTreeSet::new(),
            lanes: BTreeMap::new(),
        }
    }
}

/// What one sync works out before it writes anything.
struct Sync {
    key: String,
    obj: Arc<Object>,
    job: Job,
    pods: Vec<Pod>,
    uncounted: Uncounted,
    active: i32,
    ready: i32,
    terminating: i32,
    succeeded: i32,
    record: BackoffRecord,
    /// Pods whose finalizer this sync already removed.
    released: BTreeSet<String>,
    requeue: Option<Duration>,
    /// It waits out a pod-failure back-off before creating pods again.
    backing_off: bool,
    /// Why the sync failed (a refused create), to be tried again, rate-limited.
    failed: Option<Status>,
    lane: Lane,
}

impl Sync {
    fn requeue_after(&mut self, d: Duration) {
        self.requeue = Some(self.requeue.map_or(d, |r| r.min(d)));
    }
}

impl JobController {
    fn observe(&mut self, job_key: &str, delta: &Delta) {
        if let Some(e) = self.expectations.get_mut(job_key) {
            let meta = delta.object.meta();
            if delta.type_ == WatchEventType::Added {
                e.adds -= 1;
            }
            if delta.type_ == WatchEventType::Deleted || meta.deletion_timestamp.is_some() {
                e.dels.remove(&meta.uid);
            }
        }
    }

    fn satisfied(&self, key: &str, now: Time) -> bool {
        self.expectations
            .get(key)
            .is_none_or(|e| (e.adds <= 0 && e.dels.is_empty()) || now.since(e.set_at) > EXPECTATIONS_TIMEOUT)
    }

    /// Whether the pod's Job exists (same uid) and is still running.
    fn job_alive(&self, pod: &Object) -> bool {
        let Some(owner) = pod.controller_ref().filter(|r| r.kind == "Job") else { return false };
        self.jobs
            .get(pod.namespace(), &owner.name)
            .is_some_and(|j| j.meta().uid == owner.uid && matches!(&**j, Object::Job(job) if !is_finished(job)))
    }

    /// Removes the tracking finalizer from a pod; returns whether it is gone.
    fn release(&mut self, pod: &Pod, ctx: &mut Ctx) -> bool {
        let mut updated = pod.clone();
        updated.metadata.finalizers.retain(|f| f != TRACKING_FINALIZER);
        match ctx.call_object(Request::update(Object::Pod(updated))) {
            Ok(stored) => {
                self.pods.assume(stored);
                true
            }
            Err(status) if status.code == 404 => true,
            Err(status) if status.code == 409 => {
                // Our copy was stale: read it again and retry once.
                let fresh = ctx.call_object(Request::get(Kind::Pod, &pod.metadata.namespace, &pod.metadata.name));
                let Ok(fresh) = fresh else { return true };
                let Some(mut again) = fresh.as_pod().cloned() else { return false };
                again.metadata.finalizers.retain(|f| f != TRACKING_FINALIZER);
                match ctx.call_object(Request::update(Object::Pod(again))) {
                    Ok(stored) => {
                        self.pods.assume(stored);
                        true
                    }
                    Err(status) => status.code == 404,
                }
            }
            Err(_) => false,
        }
    }

    fn release_orphan(&mut self, pod_key: &str, ctx: &mut Ctx) {
        let Some(obj) = self.pods.cache.get(pod_key).cloned() else { return };
        let Some(pod) = obj.as_pod() else { return };
        if has_finalizer(pod) && !self.job_alive(&obj) {
            let pod = pod.clone();
            self.release(&pod, ctx);
        }
    }

    /// Deletes pods on the Job's behalf. `release` first removes their finalizer (pods that
    /// are not to be counted: surplus, or suspended). Returns (deleted, of which were ready).
    fn delete_pods(&mut self, s: &mut Sync, victims: Vec<Pod>, release: bool, ctx: &mut Ctx) -> (i32, i32) {
        if victims.is_empty() {
            return (0, 0);
        }
        let dels = crate::util::sort::btree_set(victims.iter().map(|p| p.metadata.uid.clone()));
        self.expectations.insert(s.key.clone(), Expectations { adds: 0, dels, set_at: ctx.now });
        let (mut deleted, mut ready) = (0, 0);
        for pod in victims {
            if release && has_finalizer(&pod) {
                if !self.release(&pod, ctx) {
                    if let Some(e) = self.expectations.get_mut(&s.key) {
                        e.dels.remove(&pod.metadata.uid);
                    }
                    continue;
                }
                s.released.insert(pod.metadata.uid.clone());
            }
            let req = Request::delete(Kind::Pod, &pod.metadata.namespace, &pod.metadata.name);
            match ctx.call(req) {
                Ok(_) => {
                    ctx.event(&s.obj, "", "Normal", "SuccessfulDelete", format!("Deleted pod: {}", pod.metadata.name));
                    deleted += 1;
                    if ready_since(&pod).is_some() {
                        ready += 1;
                    }
                }
                Err(status) => {
                    if let Some(e) = self.expectations.get_mut(&s.key) {
                        e.dels.remove(&pod.metadata.uid);
                    }
                    if status.code != 404 {
                        ctx.event(&s.obj, "", "Warning", "FailedDelete", format!("Error deleting: {}", status.message));
                    }
                }
            }
        }
        (deleted, ready)
    }

    /// Active pods in the order they would be removed (unscheduled, pending, not ready, newest).
    fn removal_order(s: &Sync) -> Vec<Pod> {
        let mut active: Vec<&Pod> =
            s.pods.iter().filter(|p| !p.is_terminal() && p.metadata.deletion_timestamp.is_none()).collect();
        active.stable_sort_by(|a, b| deletion_order(a, b, &|_| 0));
        active.into_iter().cloned().collect()
    }

    /// Starts or stops pods so that the right number is active.
    fn manage(&mut self, s: &mut Sync, ctx: &mut Ctx) {
        let job = s.job.clone();
        if job.spec.suspend == Some(true) {
            let victims = Self::removal_order(s);
            if !victims.is_empty() {
                s.lane.action = format!("delete {}", victims.len());
                let n = victims.len();
                ctx.cause = Some(ctx.decide(|| format!("Job {}: suspended: delete {n} active pods", s.key)));
            }
            let (deleted, ready) = self.delete_pods(s, victims, true, ctx);
            s.active -= deleted;
            s.ready -= ready;
            s.terminating += deleted;
            return;
        }
        let parallelism = job.spec.parallelism.unwrap_or(1);
        let want = want_active(job.spec.completions, parallelism, s.succeeded, s.active);
        s.lane.want = want;
        let surplus = s.active - want;
        if surplus > 0 {
            let count = (surplus as usize).min(MAX_POD_CREATE_DELETE_PER_SYNC);
            s.lane.action = format!("delete {count}");
            let (key, active) = (s.key.clone(), s.active);
            ctx.cause = Some(ctx.decide(|| format!("Job {key}: want {want} active, have {active}: delete {count}")));
            let victims: Vec<Pod> = Self::removal_order(s).into_iter().take(count).collect();
            let (deleted, ready) = self.delete_pods(s, victims, true, ctx);
            s.active -= deleted;
            s.ready -= ready;
            s.terminating += deleted;
            return;
        }
        if s.active >= want {
            return;
        }
        let remaining = s.record.remaining(ctx.now);
        if remaining > Duration::ZERO {
            s.lane.action = format!("back-off {remaining}");
            s.backing_off = true;
            s.requeue_after(remaining);
            return;
        }
        let only_failed = job.spec.pod_replacement_policy.as_deref() == Some("Failed");
        let terminating = if only_failed { s.terminating } else { 0 };
        let diff = want - s.active - terminating;
        if diff <= 0 {
            return;
        }
        let count = (diff as usize).min(MAX_POD_CREATE_DELETE_PER_SYNC);
        s.lane.action = format!("create {count}");
        let (key, active) = (s.key.clone(), s.active);
        ctx.cause = Some(ctx.decide(|| format!("Job {key}: want {want} active, have {active}: create {count}")));
        self.expectations
            .insert(s.key.clone(), Expectations { adds: count as i64, dels: BTreeSet::new(), set_at: ctx.now });
        s.active += count as i32;
        let mut template = job.spec.template.clone();
        if !template.metadata.finalizers.iter().any(|f| f == TRACKING_FINALIZER) {
            template.metadata.finalizers.push(TRACKING_FINALIZER.into());
        }
        let mut refused = None;
        // An Indexed Job's pods each run one index not yet done nor running, lowest first.
        let mut indexes = if indexed_job::is_indexed(&job) {
            let active: Vec<&Pod> =
                s.pods.iter().filter(|p| !p.is_terminal() && p.metadata.deletion_timestamp.is_none()).collect();
            let mut done = indexed_job::completed(&job, &s.pods);
            done.extend(indexed_job::failed(&job, &s.pods, &done));
            Some(indexed_job::pending(&job, &done, &active).into_iter())
        } else {
            None
        };
        let created = slow_start(count, || {
            let pod = match indexes.as_mut() {
                None => pod_from_template(&template, &s.obj, &format!("{}-", job.metadata.name)),
                Some(next) => {
                    let Some(i) = next.next() else { return false };
                    let t = indexed_job::template_for(&template, &job.metadata.name, i);
                    pod_from_template(&t, &s.obj, &format!("{}-{i}-", job.metadata.name))
                }
            };
            create_reporting(ctx, &s.obj, pod).map_err(|status| refused = Some(status)).is_ok()
        });
        let missing = count - created;
        // A refused create fails the sync: the work queue tries it again, rate-limited.
        if let Some(status) = refused {
            s.failed = Some(status);
        }
        s.active -= missing as i32;
        if let Some(e) = self.expectations.get_mut(&s.key) {
            e.adds -= missing as i64;
        }
    }

    fn write_status(&mut self, job: &mut Job, ctx: &mut Ctx) -> bool {
        let mut updated = job.clone();
        updated.metadata.resource_version.clear();
        match ctx.call_object(Request::update_status(Object::Job(Box::new(updated)))) {
            Ok(stored) => {
                if let Object::Job(j) = &*stored {
                    *job = (**j).clone();
                }
                self.jobs.assume(stored);
                true
            }
            Err(_) => false,
        }
    }

    fn sync(&mut self, key: &str, obj: Arc<Object>, ctx: &mut Ctx) -> Synced {
        let Object::Job(job) = &*obj else { return Ok(Action::AwaitChange) };
        let mut job = Job::clone(job);
        let pods: Vec<Pod> =
            self.pods.owned_by(&job.metadata.uid).into_iter().filter_map(|p| p.as_pod()).cloned().collect();
        if is_finished(&job) {
            // Nothing left to do but let go of pods that still carry the finalizer.
            self.backoff.remove(key);
            self.backing_off.remove(key);
            for pod in pods.iter().filter(|p| has_finalizer(p)) {
                self.release(pod, ctx);
            }
            return Ok(Action::AwaitChange);
        }
        let now = ctx.now;
        let old_status = job.status.clone();
        let suspended = job.spec.suspend == Some(true);
        let only_failed = job.spec.pod_replacement_policy.as_deref() == Some("Failed");
        if job.status.uncounted_terminated_pods.is_none() {
            job.status.uncounted_terminated_pods = Some(json!({}));
        }
        if job.status.start_time.is_none() && !suspended {
            job.status.start_time = Some(now);
        }
        let uncounted = Uncounted::from_status(&job.status);
        let active_pods: Vec<&Pod> =
            pods.iter().filter(|p| !p.is_terminal() && p.metadata.deletion_timestamp.is_none()).collect();
        let new_succeeded: Vec<&Pod> = pods
            .iter()
            .filter(|p| has_finalizer(p) && !uncounted.has(&p.metadata.uid) && p.status.phase == "Succeeded")
            .collect();
        let new_failed: Vec<&Pod> = pods
            .iter()
            .filter(|p| has_finalizer(p) && !uncounted.has(&p.metadata.uid) && is_pod_failed(p, only_failed))
            .collect();
        let succeeded = job.status.succeeded.unwrap_or(0) + (uncounted.succeeded.len() + new_succeeded.len()) as i32;
        let failed = job.status.failed.unwrap_or(0) + (uncounted.failed.len() + new_failed.len()) as i32;
        let record = self.backoff.get(key).copied().unwrap_or_default().observe(
            &new_succeeded.iter().map(|p| finished_time(p)).collect::<Vec<_>>(),
            &new_failed.iter().map(|p| finished_time(p)).collect::<Vec<_>>(),
        );
        let exceeds_backoff_limit =
            failed > job.spec.backoff_limit.unwrap_or(6) || past_backoff_limit_on_failure(&job, &active_pods);
        let mut s = Sync {
            key: key.to_string(),
            obj: obj.clone(),
            active: active_pods.len() as i32,
            ready: active_pods.iter().filter(|p| ready_since(p).is_some()).count() as i32,
            terminating: pods.iter().filter(|p| p.metadata.deletion_timestamp.is_some() && !p.is_terminal()).count()
                as i32,
            succeeded,
            record,
            uncounted,
            released: BTreeSet::new(),
            requeue: None,
            backing_off: false,
            failed: None,
            lane: Lane { succeeded, failed, ..Default::default() },
            job: job.clone(),
            pods: pods.clone(),
        };
        let satisfied = self.satisfied(key, now);
        let (mut done_indexes, mut failed_indexes) = (BTreeSet::new(), BTreeSet::new());
        if indexed_job::is_indexed(&job) {
            done_indexes = indexed_job::completed(&job, &pods);
            failed_indexes = indexed_job::failed(&job, &pods, &done_indexes);
            let done = indexed_job::format(&done_indexes);
            s.job.status.completed_indexes = (!done.is_empty()).then_some(done);
            if job.spec.backoff_limit_per_index.is_some() {
                s.job.status.failed_indexes = Some(indexed_job::format(&failed_indexes));
            }
        }
        let max_failed = job.spec.max_failed_indexes.map_or(usize::MAX, |m| m.max(0) as usize);
        let all_indexes_ended = done_indexes.len() + failed_indexes.len() >= job.spec.completions.unwrap_or(0) as usize;

        // Has the Job reached an end?
        let mut finished: Option<JobCondition> = None;
        let success_met = has_true(&job, "SuccessCriteriaMet");
        if let Some(target) = find(&job, "FailureTarget").filter(|c| c.status == "True") {
            finished = Some(condition("Failed", "True", &target.reason, &target.message, now));
        } else if !success_met {
            if exceeds_backoff_limit {
                let message = "Job has reached the specified backoff limit";
                finished = Some(condition("FailureTarget", "True", "BackoffLimitExceeded", message, now));
            } else if failed_indexes.len() > max_failed {
                let message = "Job has exceeded the specified maximal number of failed indexes";
                finished = Some(condition("FailureTarget", "True", "MaxFailedIndexesExceeded", message, now));
            } else if !failed_indexes.is_empty() && all_indexes_ended && active_pods.is_empty() {
                finished = Some(condition("FailureTarget", "True", "FailedIndexes", "Job has failed indexes", now));
            } else if let (Some(deadline), Some(start)) = (job.spec.active_deadline_seconds, job.status.start_time) {
                if !suspended {
                    let allowed = Duration::seconds(deadline.max(0) as u64);
                    let elapsed = now.since(start);
                    if elapsed >= allowed {
                        let message = "Job was active longer than specified deadline";
                        finished = Some(condition("FailureTarget", "True", "DeadlineExceeded", message, now));
                    } else {
                        s.requeue_after(Duration(allowed.0 - elapsed.0));
                    }
                }
            }
        }

        let mut suspend_event: Option<(&str, &str)> = None;
        if let Some(f) = &finished {
            // A failed Job stops its pods; they count as failures.
            let victims = Self::removal_order(&s);
            let active = s.active;
            if !victims.is_empty() {
                let (k, reason) = (s.key.clone(), f.reason.clone());
                ctx.cause = Some(ctx.decide(|| format!("Job {k}: {reason}: delete {active} active pods")));
                s.lane.action = format!("delete {active}");
            }
            let (deleted, ready) = self.delete_pods(&mut s, victims, false, ctx);
            if deleted != active || !satisfied {
                finished = None;
            }
            s.active -= deleted;
            s.ready -= ready;
            s.terminating += deleted;
        } else {
            let mut manage_called = false;
            if satisfied && job.metadata.deletion_timestamp.is_none() {
                self.manage(&mut s, ctx);
                manage_called = true;
            }
            let complete = match job.spec.completions {
                None => s.succeeded > 0 && s.active == 0,
                Some(c) => s.succeeded >= c && s.active == 0,
            };
            if complete {
                let message = "Reached expected number of succeeded pods";
                finished = Some(condition("SuccessCriteriaMet", "True", "CompletionsReached", message, now));
            } else if manage_called {
                let conditions = &mut s.job.status.conditions;
                if suspended {
                    if ensure_condition(conditions, "Suspended", "True", "JobSuspended", "Job suspended", now) {
                        suspend_event = Some(("Suspended", "Job suspended"));
                    }
                } else if ensure_condition(conditions, "Suspended", "False", "JobResumed", "Job resumed", now) {
                    suspend_event = Some(("Resumed", "Job resumed"));
                    // The deadline counts from when the Job was last resumed.
                    s.job.status.start_time = Some(now);
                }
            }
        }
        // The interim condition is recorded now; the final one once every pod is accounted for.
        if let Some(f) = finished.take() {
            finished = Some(match f.type_.as_str() {
                "FailureTarget" => {
                    s.job.status.conditions.push(f.clone());
                    condition("Failed", "True", &f.reason, &f.message, now)
                }
                "SuccessCriteriaMet" => {
                    if !has_true(&s.job, "SuccessCriteriaMet") {
                        s.job.status.conditions.push(f.clone());
                    }
                    condition("Complete", "True", &f.reason, &f.message, now)
                }
                _ => f,
            });
        }
        if let Some((reason, message)) = suspend_event {
            ctx.event(&obj, "", "Normal", reason, message.into());
        }
        s.job.status.active = nonzero(s.active.max(0));
        s.job.status.ready = Some(s.ready.max(0));
        s.job.status.terminating = Some(s.terminating.max(0));
        s.lane.active = s.active;
        self.track_and_finish(&mut s, finished, &old_status, ctx);
        self.backoff.insert(key.to_string(), s.record);
        if s.backing_off {
            self.backing_off.insert(key.to_string());
        } else {
            self.backing_off.remove(key);
        }
        self.lanes.insert(key.to_string(), s.lane.clone());
        if let Some(status) = s.failed {
            return Err(status);
        }
        Ok(match s.requeue {
            Some(d) => Action::RequeueAfter(d),
            None => Action::AwaitChange,
        })
    }

    /// Counts finished pods through `uncountedTerminatedPods`, removes their finalizers, and
    /// marks the Job finished once nothing is left uncounted or terminating.
    fn track_and_finish(&mut self, s: &mut Sync, finished: Option<JobCondition>, old: &JobStatus, ctx: &mut Ctx) {
        let only_failed = s.job.spec.pod_replacement_policy.as_deref() == Some("Failed");
        let failing = finished.as_ref().is_some_and(|f| f.type_ == "Failed");
        let mut to_release: Vec<Pod> = Vec::new();
        let mut needs_flush = false;
        for pod in s.pods.iter().filter(|p| has_finalizer(p) && !s.released.contains(&p.metadata.uid)) {
            let uid = &pod.metadata.uid;
            let considered_failed = is_pod_failed(pod, only_failed);
            let can_release = s.job.metadata.deletion_timestamp.is_some()
                || finished.is_some()
                || pod.status.phase == "Succeeded"
                || considered_failed;
            if !can_release {
                continue;
            }
            to_release.push(pod.clone());
            if pod.status.phase == "Succeeded" && !s.uncounted.failed.contains(uid) {
                if !s.uncounted.succeeded.contains(uid) {
                    s.uncounted.succeeded.push(uid.clone());
                    needs_flush = true;
                }
            } else if (considered_failed || failing) && !s.uncounted.has(uid) {
                s.uncounted.failed.push(uid.clone());
                needs_flush = true;
            }
        }
        let mut written = old.clone();
        if needs_flush {
            s.job.status.uncounted_terminated_pods = Some(s.uncounted.to_value());
            let mut job = s.job.clone();
            if !self.write_status(&mut job, ctx) {
                return;
            }
            s.job = job;
            written = s.job.status.clone();
        }
        let mut still_held: BTreeSet<String> = BTreeSet::new();
        for pod in &to_release {
            if !self.release(pod, ctx) {
                still_held.insert(pod.metadata.uid.clone());
            }
        }
        // Pods that no longer hold the finalizer move from uncounted to the counts.
        let held = |uid: &String| {
            still_held.contains(uid)
                || s.pods.iter().any(|p| &p.metadata.uid == uid && has_finalizer(p) && !to_release.contains(p))
        };
        let (counted_s, counted_f) = (s.uncounted.succeeded.len(), s.uncounted.failed.len());
        s.uncounted.succeeded.retain(|u| held(u));
        s.uncounted.failed.retain(|u| held(u));
        let moved_s = (counted_s - s.uncounted.succeeded.len()) as i32;
        let moved_f = (counted_f - s.uncounted.failed.len()) as i32;
        let status = &mut s.job.status;
        status.succeeded = nonzero(status.succeeded.unwrap_or(0) + moved_s);
        status.failed = nonzero(status.failed.unwrap_or(0) + moved_f);
        status.uncounted_terminated_pods = Some(s.uncounted.to_value());
        s.lane.succeeded = status.succeeded.unwrap_or(0) + s.uncounted.succeeded.len() as i32;
        s.lane.failed = status.failed.unwrap_or(0) + s.uncounted.failed.len() as i32;
        let mut enacted = None;
        if let Some(f) = finished {
            if s.uncounted.is_empty() && status.terminating.unwrap_or(0) == 0 {
                ensure_condition(&mut status.conditions, &f.type_, &f.status, &f.reason, &f.message, ctx.now);
                if f.type_ == "Complete" {
                    status.completion_time = Some(ctx.now);
                }
                enacted = Some(f);
            }
        }
        if written != s.job.status {
            let mut job = s.job.clone();
            if !self.write_status(&mut job, ctx) {
                return;
            }
            s.job = job;
        }
        if let Some(f) = enacted {
            let obj = s.obj.clone();
            if f.type_ == "Complete" {
                if s.job.spec.completions.is_some_and(|c| s.job.status.succeeded.unwrap_or(0) > c) {
                    let message = "Too many succeeded pods running after completion count reached";
                    ctx.event(&obj, "", "Warning", "TooManySucceededPods", message.into());
                }
                ctx.event(&obj, "", "Normal", "Completed", "Job completed".into());
            } else {
                ctx.event(&obj, "", "Warning", f.reason.clone(), f.message.clone());
            }
        }
    }
}

impl Reconciler for JobController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.jobs, &mut self.pods]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let obj = &delta.object;
        if informer == 0 {
            let mut keys = vec![cache_key(obj.namespace(), obj.name())];
            if delta.type_ == WatchEventType::Deleted {
                // Its pods' finalizers are no one else's to remove.
                for pod in self.pods.owned_by(&obj.meta().uid) {
                    if pod.as_pod().is_some_and(has_finalizer) {
                        keys.push(format!("{ORPHAN_POD_PREFIX}{}", cache_key(pod.namespace(), pod.name())));
                    }
                }
            }
            return keys;
        }
        let mut keys = super::keys_of_both(delta, super::KeysFrom::Owners, |o| super::owner_key(o, "Job"));
        if let Some(key) = keys.first().cloned() {
            self.observe(&key, delta);
        }
        let held = obj.as_pod().is_some_and(has_finalizer);
        if held && delta.type_ != WatchEventType::Deleted && !self.job_alive(obj) {
            keys.push(format!("{ORPHAN_POD_PREFIX}{}", cache_key(obj.namespace(), obj.name())));
        }
        keys
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        if let Some(pod_key) = key.strip_prefix(ORPHAN_POD_PREFIX) {
            self.release_orphan(pod_key, ctx);
            return Ok(Action::AwaitChange);
        }
        let Some(obj) = self.jobs.cache.get(key).cloned() else {
            self.expectations.remove(key);
            self.backoff.remove(key);
            self.backing_off.remove(key);
            self.lanes.remove(key);
            return Ok(Action::AwaitChange);
        };
        self.sync(key, obj, ctx)
    }

    fn busy(&self) -> bool {
        !self.backing_off.is_empty()
    }

    fn summary(&self) -> String {
        self.lanes.iter().map(|(k, l)| format!("{k}: {l}")).collect::<Vec<_>>().join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::pod::{ContainerState, ContainerStateTerminated, ContainerStatus};

    #[test]
    fn a_job_runs_parallelism_pods_but_never_more_than_the_completions_missing() {
        assert_eq!(want_active(Some(3), 2, 0, 0), 2);
        assert_eq!(want_active(Some(3), 2, 2, 0), 1);
        assert_eq!(want_active(Some(3), 2, 3, 0), 0);
        assert_eq!(want_active(Some(1), 5, 0, 0), 1);
        assert_eq!(want_active(Some(3), 2, 4, 0), 0);
    }

    #[test]
    fn a_work_queue_job_starts_no_more_pods_once_one_has_succeeded() {
        assert_eq!(want_active(None, 3, 0, 0), 3);
        assert_eq!(want_active(None, 3, 1, 2), 2);
    }

    #[test]
    fn failed_pods_are_replaced_after_ten_seconds_doubling_up_to_six_minutes() {
        let t = Time(100_000);
        let rec = BackoffRecord::default().observe(&[], &[t]);
        assert_eq!(rec.failures_after_last_success, 1);
        assert_eq!(rec.remaining(t), Duration::seconds(10));
        assert_eq!(rec.remaining(t + Duration::seconds(4)), Duration::seconds(6));
        assert_eq!(rec.remaining(t + Duration::seconds(11)), Duration::ZERO);
        let rec = rec.observe(&[], &[t]);
        assert_eq!(rec.remaining(t), Duration::seconds(20));
        let many = BackoffRecord { failures_after_last_success: 12, last_failure: Some(t) };
        assert_eq!(many.remaining(t), MAX_POD_FAILURE_BACKOFF);
    }

    #[test]
    fn a_success_forgets_the_failures_before_it() {
        let rec = BackoffRecord { failures_after_last_success: 3, last_failure: Some(Time(5)) };
        let rec = rec.observe(&[Time(10)], &[Time(8), Time(12)]);
        assert_eq!(rec, BackoffRecord { failures_after_last_success: 1, last_failure: Some(Time(12)) });
        let rec = rec.observe(&[Time(20)], &[]);
        assert_eq!(rec.remaining(Time(20)), Duration::ZERO);
    }

    #[test]
    fn deleted_pods_that_had_not_succeeded_count_as_failed() {
        let mut pod = Pod::default();
        Arc::make_mut(&mut pod.status).phase = "Running".into();
        assert!(!is_pod_failed(&pod, false));
        pod.metadata.deletion_timestamp = Some(Time(1));
        assert!(is_pod_failed(&pod, false));
        assert!(!is_pod_failed(&pod, true));
        Arc::make_mut(&mut pod.status).phase = "Succeeded".into();
        assert!(!is_pod_failed(&pod, false));
        Arc::make_mut(&mut pod.status).phase = "Failed".into();
        assert!(is_pod_failed(&pod, true));
    }

    #[test]
    fn a_pod_finished_when_its_last_container_exited() {
        let mut pod = Pod::default();
        pod.metadata.creation_timestamp = Some(Time(1));
        assert_eq!(finished_time(&pod), Time(1));
        for at in [Time(7), Time(9)] {
            Arc::make_mut(&mut pod.status).container_statuses.push(ContainerStatus {
                state: ContainerState {
                    terminated: Some(Box::new(ContainerStateTerminated {
                        finished_at: Some(at),
                        ..Default::default()
                    })),
                    ..Default::default()
                },
                ..Default::default()
            });
        }
        assert_eq!(finished_time(&pod), Time(9));
    }

    #[test]
    fn on_failure_pods_fail_the_job_when_their_restarts_reach_the_backoff_limit() {
        let mut job = Job::default();
        std::sync::Arc::make_mut(&mut job.spec.template.spec).restart_policy = Some("OnFailure".into());
        job.spec.backoff_limit = Some(2);
        let mut pod = Pod::default();
        Arc::make_mut(&mut pod.status).phase = "Running".into();
        Arc::make_mut(&mut pod.status)
            .container_statuses
            .push(ContainerStatus { restart_count: 1, ..Default::default() });
        assert!(!past_backoff_limit_on_failure(&job, &[&pod]));
        Arc::make_mut(&mut pod.status).container_statuses[0].restart_count = 2;
        assert!(past_backoff_limit_on_failure(&job, &[&pod]));
        std::sync::Arc::make_mut(&mut job.spec.template.spec).restart_policy = Some("Never".into());
        assert!(!past_backoff_limit_on_failure(&job, &[&pod]));
    }

    #[test]
    fn a_false_condition_is_only_written_over_an_existing_one() {
        let mut conds = Vec::new();
        assert!(!ensure_condition(&mut conds, "Suspended", "False", "JobResumed", "Job resumed", Time(1)));
        assert!(ensure_condition(&mut conds, "Suspended", "True", "JobSuspended", "Job suspended", Time(1)));
        assert!(!ensure_condition(&mut conds, "Suspended", "True", "JobSuspended", "Job suspended", Time(2)));
        assert!(ensure_condition(&mut conds, "Suspended", "False", "JobResumed", "Job resumed", Time(3)));
        assert_eq!(conds.len(), 1);
        assert_eq!(conds[0].last_transition_time, Some(Time(3)));
    }

    #[test]
    fn uncounted_pods_serialize_as_upstream_with_empty_lists_left_out() {
        let u = Uncounted { succeeded: vec!["a".into()], failed: vec![] };
        assert_eq!(u.to_value(), json!({"succeeded": ["a"]}));
        assert_eq!(Uncounted::default().to_value(), json!({}));
    }
}
