//! The CronJob controller: when a CronJob's schedule fires it makes a Job from the template,
//! named after the minute it was scheduled for; it keeps the list of active Jobs, applies the
//! concurrency policy, and deletes finished Jobs beyond the history limits.

use super::lane::Lane;
use super::pods::controller_ref;
use super::{Action, Reconciler, Synced};
use crate::api::batch::{CronJob, Job};
use crate::api::{Kind, Object, ObjectMeta, ObjectReference};
use crate::apiserver::{Propagation, Request};
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::sim::{Duration, Time};
use crate::util::sort::StableSort;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The annotation a scheduled Job carries: the time it was scheduled for.
pub const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// How long after the scheduled minute the controller looks again (it wakes just after).
const WAKE_MARGIN: Duration = Duration::millis(100);

pub struct CronJobController {
    cron_jobs: Informer,
    jobs: Informer,
    /// The last decision per CronJob.
    pub lanes: BTreeMap<String, Lane>,
}

impl Default for CronJobController {
    fn default() -> Self {
        CronJobController {
            cron_jobs: Informer::new(Kind::CronJob),
            jobs: Informer::new(Kind::Job),
            lanes: BTreeMap::new(),
        }
    }
}

/// How a finished Job ended (`Complete` or `Failed`), as the Job controller marks it.
fn finished(job: &Job) -> Option<&'static str> {
    ["Complete", "Failed"].into_iter().find(|c| super::job::has_true(job, c))
}

fn reference(job: &Object) -> ObjectReference {
    ObjectReference {
        kind: "Job".into(),
        namespace: job.namespace().to_string(),
        name: job.name().to_string(),
        uid: job.meta().uid.clone(),
        api_version: "batch/v1".into(),
        resource_version: job.meta().resource_version.clone(),
        ..Default::default()
    }
}

/// The Job a CronJob makes for the minute `scheduled`: `<cronjob>-<minutes since 1970>`.
fn job_for(cj_obj: &Object, cj: &CronJob, scheduled: Time) -> Job {
    let minutes = (scheduled.unix_nanos() / 60_000_000_000) as i64;
    let template = &cj.spec.job_template;
    let mut annotations = template.metadata.annotations.clone();
    annotations.insert(SCHEDULED_TIMESTAMP.into(), scheduled.rfc3339());
    Job {
        metadata: ObjectMeta {
            name: format!("{}-{minutes}", cj.metadata.name),
            namespace: cj.metadata.namespace.clone(),
            labels: template.metadata.labels.clone(),
            annotations,
            owner_references: vec![controller_ref(cj_obj)].into(),
            ..Default::default()
        },
        spec: template.spec.clone(),
        ..Default::default()
    }
}

impl CronJobController {
    /// The CronJob's Jobs (by controller reference), oldest scheduled first.
    fn children(&self, cj: &CronJob) -> Vec<Arc<Object>> {
        let mut jobs: Vec<Arc<Object>> = self.jobs.owned_by(&cj.metadata.uid).into_iter().cloned().collect();
        jobs.stable_sort_by(|a, b| a.name().cmp(b.name()));
        jobs
    }

    fn delete_job(ctx: &mut Ctx, cj_obj: &Arc<Object>, job: &Object) -> bool {
        let mut req = Request::delete(Kind::Job, job.namespace(), job.name());
        req.propagation = Some(Propagation::Background);
        match ctx.call(req) {
            Ok(_) => {
                ctx.event(cj_obj, "", "Normal", "SuccessfulDelete", format!("Deleted job {}", job.name()));
                true
            }
            Err(_) => false,
        }
    }

    /// Deletes the oldest finished Jobs beyond the history limits.
    fn clean_up(ctx: &mut Ctx, cj_obj: &Arc<Object>, cj: &CronJob, children: &[Arc<Object>]) {
        for (condition, limit) in [
            ("Complete", cj.spec.successful_jobs_history_limit.unwrap_or(3)),
            ("Failed", cj.spec.failed_jobs_history_limit.unwrap_or(1)),
        ] {
            let done: Vec<&Arc<Object>> = children
                .iter()
                .filter(|o| o.meta().deletion_timestamp.is_none())
                .filter(|o| matches!(o.as_ref(), Object::Job(j) if finished(j) == Some(condition)))
                .collect();
            let surplus = done.len().saturating_sub(limit.max(0) as usize);
            for job in done.into_iter().take(surplus) {
                Self::delete_job(ctx, cj_obj, job);
            }
        }
    }
}

impl Reconciler for CronJobController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.cron_jobs, &mut self.jobs]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        if informer == 0 {
            return vec![cache_key(delta.object.namespace(), delta.object.name())];
        }
        super::keys_of_both(delta, super::KeysFrom::Owners, |o| super::owner_key(o, "CronJob"))
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let Some(cj_obj) = self.cron_jobs.cache.get(key).cloned() else {
            self.lanes.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Object::CronJob(cj) = cj_obj.as_ref() else { return Ok(Action::AwaitChange) };
        if cj.metadata.deletion_timestamp.is_some() {
            return Ok(Action::AwaitChange);
        }
        let mut status = cj.status.clone();
        let children = self.children(cj);
        // The active list: Jobs still running, as the Jobs themselves say.
        status.active.retain(|r| children.iter().any(|c| c.meta().uid == r.uid));
        for child in &children {
            let Object::Job(job) = child.as_ref() else { continue };
            let listed = status.active.iter().position(|r| r.uid == job.metadata.uid);
            match (finished(job), listed) {
                (Some(condition), Some(i)) => {
                    status.active.remove(i);
                    ctx.event(
                        &cj_obj,
                        "",
                        "Normal",
                        "SawCompletedJob",
                        format!("Saw completed job: {}, condition: {condition}", job.metadata.name),
                    );
                    if condition == "Complete" {
                        status.last_successful_time = job.status.completion_time.or(Some(ctx.now));
                    }
                }
                (None, None) if job.metadata.deletion_timestamp.is_none() => status.active.push(reference(child)),
                _ => {}
            }
        }
        Self::clean_up(ctx, &cj_obj, cj, &children);
        let mut lane = Lane { want: 0, have: status.active.len() as i32, action: String::new() };
        let schedule = match crate::util::cron::parse(&cj.spec.schedule) {
            Ok(s) => s,
            Err(e) => {
                ctx.event(
                    &cj_obj,
                    "",
                    "Warning",
                    "InvalidSchedule",
                    format!("invalid schedule: {}: {e}", cj.spec.schedule),
                );
                return Ok(Action::AwaitChange);
            }
        };
        let requeue = schedule.next_after(ctx.now).map(|t| t.since(ctx.now) + WAKE_MARGIN);
        // A refused create: the work queue tries the CronJob again, rate-limited.
        let mut failed = None;
        if cj.spec.suspend != Some(true) {
            let mut earliest = status.last_schedule_time.or(cj.metadata.creation_timestamp).unwrap_or(ctx.now);
            if let Some(deadline) = cj.spec.starting_deadline_seconds {
                let window = Time(ctx.now.0.saturating_sub(deadline.max(0) as u64 * 1000));
                earliest = earliest.max(window);
            }
            if let Some(scheduled) = schedule.last_between(earliest, ctx.now) {
                let policy = cj.spec.concurrency_policy.as_deref().unwrap_or("Allow");
                let blocked = policy == "Forbid" && !status.active.is_empty();
                if !blocked {
                    if policy == "Replace" {
                        for r in std::mem::take(&mut status.active) {
                            if let Some(job) = children.iter().find(|c| c.meta().uid == r.uid) {
                                Self::delete_job(ctx, &cj_obj, job);
                            }
                        }
                    }
                    let job = job_for(&cj_obj, cj, scheduled);
                    lane.want = status.active.len() as i32 + 1;
                    lane.action = format!("create {}", job.metadata.name);
                    ctx.cause = Some(ctx.decide(|| format!("CronJob {key}: scheduled for {}", scheduled.rfc3339())));
                    match ctx.call_object(Request::create(Object::Job(Box::new(job)))) {
                        Ok(created) => {
                            ctx.event(
                                &cj_obj,
                                "",
                                "Normal",
                                "SuccessfulCreate",
                                format!("Created job {}", created.name()),
                            );
                            status.active.push(reference(&created));
                            status.last_schedule_time = Some(scheduled);
                        }
                        // Already made for this minute (a restart): nothing to do.
                        Err(s) if s.code == 409 => status.last_schedule_time = Some(scheduled),
                        Err(s) => {
                            ctx.event(
                                &cj_obj,
                                "",
                                "Warning",
                                "FailedCreate",
                                format!("Error creating job: {}", s.message),
                            );
                            failed = Some(s);
                        }
                    }
                }
            }
        }
        self.lanes.insert(key.to_string(), lane);
        if status != cj.status {
            let mut updated = cj.clone();
            updated.status = status;
            updated.metadata.resource_version.clear();
            let stored = ctx.call_object(Request::update_status(Object::CronJob(updated)))?;
            self.cron_jobs.assume(stored);
        }
        if let Some(status) = failed {
            return Err(status);
        }
        Ok(match requeue {
            Some(d) => Action::RequeueAfter(d),
            None => Action::AwaitChange,
        })
    }

    fn summary(&self) -> String {
        self.lanes.iter().map(|(k, l)| format!("{k}: {l}")).collect::<Vec<_>>().join("\n")
    }
}
