//! A kubelet's pod worker: one pod's sandbox and containers, from ContainerCreating through
//! image pulls, starts, exits, restarts with back-off, to graceful termination.
//!
//! It is a state machine stepped by the kubelet: each step looks at the time and the node's
//! image store, moves containers along, and returns what to report (events) and whether the
//! pod's status changed. It never calls the API itself.

use super::images::{self, ImageRef, PullError};
use super::script::{self, Run};
use crate::api::pod::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, IpEntry,
    PodCondition, PodStatus, set_condition,
};
use crate::api::{Container, Pod};
use crate::sim::{Duration, Rng, Time};
use std::collections::BTreeSet;

pub const CRASH_BACKOFF_INITIAL: Duration = Duration::seconds(10);
pub const CRASH_BACKOFF_MAX: Duration = Duration::seconds(300);
/// A container that ran this long has its crash back-off forgotten.
pub const BACKOFF_RESET: Duration = Duration::minutes(10);
const PULL_BYTES_PER_SEC: u64 = 25_000_000;

/// The node's container runtime state shared by its pods: images present and the one puller
/// (the kubelet pulls one image at a time by default).
#[derive(Debug, Default)]
pub struct Runtime {
    pub images: BTreeSet<String>,
    pub puller_free_at: Time,
    /// Images being pulled, and when each pull finishes: a later pull of the same image
    /// waits for it and then finds the layers already there.
    pub pulling: std::collections::BTreeMap<String, Time>,
}

/// Something the kubelet should report.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Event {
        type_: &'static str,
        reason: &'static str,
        message: String,
        field_path: String,
    },
    Decision(String),
    /// Every container has stopped after the pod's deletion: remove it for good.
    DeletePod,
}

#[derive(Clone, Debug, PartialEq)]
enum ImageState {
    Unknown,
    Pulling {
        started: Time,
        requested: Time,
        done: Time,
        result: Result<u64, PullError>,
    },
    /// The last pull failed; retry after `retry_at`. `shown_backoff`: ImagePullBackOff reported.
    PullBackOff {
        retry_at: Time,
        show_at: Time,
        shown_backoff: bool,
        error: String,
    },
    Present,
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    Waiting { reason: String, message: String },
    Running { started: Time, exits_at: Option<Time>, exit_code: i32 },
    Terminated(ContainerStateTerminated),
}

#[derive(Clone, Debug)]
struct ContainerRun {
    spec: Container,
    reference: ImageRef,
    image: ImageState,
    state: State,
    restart_count: i32,
    last_termination: Option<ContainerStateTerminated>,
    /// When the container may next be (re)started.
    restart_at: Option<Time>,
    backoff: Duration,
    /// The wait before the next pull retry; doubles on each failure.
    pull_backoff: Duration,
    container_id: String,
    /// When a stop was requested: the time it will have exited.
    stopping_until: Option<Time>,
    /// Output of the current (or last) instance, and of the one before it.
    logs: Vec<(Time, String)>,
    previous_logs: Vec<(Time, String)>,
    run: Option<Run>,
}

#[derive(Debug)]
pub struct PodWorker {
    containers: Vec<ContainerRun>,
    sandbox_ready_at: Option<Time>,
    pub ip: Option<String>,
    started: Time,
    host_ip: String,
    /// Set once the deletion has been noticed: stop containers, then delete.
    terminating: bool,
    delete_sent: bool,
    pod_ref: String,
}

impl PodWorker {
    pub fn new(pod: &Pod, now: Time, host_ip: &str) -> Self {
        let containers = pod
            .spec
            .containers
            .iter()
            .map(|c| ContainerRun {
                spec: c.clone(),
                reference: images::parse_reference(&c.image),
                image: ImageState::Unknown,
                state: State::Waiting { reason: "ContainerCreating".into(), message: String::new() },
                restart_count: 0,
                last_termination: None,
                restart_at: None,
                backoff: CRASH_BACKOFF_INITIAL,
                pull_backoff: CRASH_BACKOFF_INITIAL,
                container_id: String::new(),
                stopping_until: None,
                logs: Vec::new(),
                previous_logs: Vec::new(),
                run: None,
            })
            .collect();
        PodWorker {
            containers,
            sandbox_ready_at: None,
            ip: None,
            started: now,
            host_ip: host_ip.to_string(),
            terminating: false,
            delete_sent: false,
            pod_ref: format!("{}_{}({})", pod.metadata.name, pod.metadata.namespace, pod.metadata.uid),
        }
    }

    /// Log lines of a container's current (or last) instance, or of the instance before it
    /// (`kubectl logs --previous`).
    pub fn logs(&self, container: &str, previous: bool) -> Option<Vec<(Time, String)>> {
        let c = self.containers.iter().find(|c| c.spec.name == container)?;
        if previous { (c.restart_count > 0).then(|| c.previous_logs.clone()) } else { Some(c.logs.clone()) }
    }

    /// Moves the pod along as far as `now` allows.
    pub fn step(
        &mut self,
        pod: &Pod,
        now: Time,
        runtime: &mut Runtime,
        rng: &mut Rng,
        next_ip: &mut dyn FnMut() -> String,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        if pod.metadata.deletion_timestamp.is_some() || pod.is_terminal() && self.terminating {
            self.terminate(pod, now, rng, &mut actions);
            return actions;
        }
        // The sandbox (network namespace, pause container) comes first.
        match self.sandbox_ready_at {
            None => {
                self.sandbox_ready_at = Some(now + Duration::millis(rng.between(300, 700)));
                return actions;
            }
            Some(at) if now < at => return actions,
            Some(_) if self.ip.is_none() => self.ip = Some(next_ip()),
            _ => {}
        }
        let policy = pod.restart_policy().to_string();
        for i in 0..self.containers.len() {
            self.step_container(i, &policy, now, runtime, rng, &mut actions);
        }
        actions
    }

    fn step_container(
        &mut self,
        i: usize,
        policy: &str,
        now: Time,
        runtime: &mut Runtime,
        rng: &mut Rng,
        actions: &mut Vec<Action>,
    ) {
        let pod_ref = self.pod_ref.clone();
        let c = &mut self.containers[i];
        let field_path = format!("spec.containers{{{}}}", c.spec.name);
        let image = c.spec.image.clone();
        let ev = |type_: &'static str, reason: &'static str, message: String| Action::Event {
            type_,
            reason,
            message,
            field_path: field_path.clone(),
        };
        // 1. The image.
        loop {
            match c.image.clone() {
                ImageState::Present => break,
                ImageState::Unknown => {
                    let pull_policy = c.spec.image_pull_policy.as_deref().unwrap_or("IfNotPresent");
                    let present = runtime.images.contains(&c.reference.canonical);
                    if present && pull_policy != "Always" {
                        actions.push(ev(
                            "Normal",
                            "Pulled",
                            format!("Container image \"{image}\" already present on machine"),
                        ));
                        c.image = ImageState::Present;
                        continue;
                    }
                    if pull_policy == "Never" {
                        let message = format!("Container image \"{image}\" is not present with pull policy of Never");
                        actions.push(ev("Warning", "ErrImageNeverPull", message.clone()));
                        c.state = State::Waiting { reason: "ErrImageNeverPull".into(), message };
                        return;
                    }
                    c.image = start_pull(&c.reference, now, runtime, rng);
                    actions.push(ev("Normal", "Pulling", format!("Pulling image \"{image}\"")));
                    return;
                }
                ImageState::Pulling { started, requested, done, result } => {
                    if now < done {
                        return;
                    }
                    match result {
                        Ok(size) => {
                            runtime.images.insert(c.reference.canonical.clone());
                            c.pull_backoff = CRASH_BACKOFF_INITIAL;
                            actions.push(ev(
                                "Normal",
                                "Pulled",
                                format!(
                                    "Successfully pulled image \"{image}\" in {} ({} including waiting). Image size: {size} bytes.",
                                    done.since(started),
                                    done.since(requested)
                                ),
                            ));
                            c.image = ImageState::Present;
                        }
                        Err(err) => {
                            let message = images::pull_error_message(&image, &c.reference, &err);
                            actions.push(ev("Warning", "Failed", message.clone()));
                            actions.push(ev("Warning", "Failed", "Error: ErrImagePull".into()));
                            let wait = c.pull_backoff;
                            c.pull_backoff = Duration((wait.0 * 2).min(CRASH_BACKOFF_MAX.0));
                            c.state = State::Waiting { reason: "ErrImagePull".into(), message: message.clone() };
                            c.image = ImageState::PullBackOff {
                                retry_at: now + wait,
                                show_at: now + Duration::millis(rng.between(1000, 3000)),
                                shown_backoff: false,
                                error: message,
                            };
                            return;
                        }
                    }
                }
                ImageState::PullBackOff { retry_at, show_at, shown_backoff, error } => {
                    if now >= retry_at {
                        c.image = start_pull(&c.reference, now, runtime, rng);
                        actions.push(ev("Normal", "Pulling", format!("Pulling image \"{image}\"")));
                        return;
                    }
                    if !shown_backoff && now >= show_at {
                        actions.push(ev("Normal", "BackOff", format!("Back-off pulling image \"{image}\"")));
                        actions.push(ev("Warning", "Failed", "Error: ImagePullBackOff".into()));
                        c.state = State::Waiting {
                            reason: "ImagePullBackOff".into(),
                            message: format!(
                                "Back-off pulling image \"{image}\": ErrImagePull: {}",
                                error.trim_start_matches(&format!("Failed to pull image \"{image}\": "))
                            ),
                        };
                        c.image = ImageState::PullBackOff { retry_at, show_at, shown_backoff: true, error };
                    }
                    return;
                }
            }
        }
        // 2. The process.
        match c.state.clone() {
            State::Waiting { .. } => {
                if c.restart_at.is_some_and(|at| now < at) {
                    return;
                }
                c.restart_at = None;
                if !c.container_id.is_empty() {
                    // A restart: a new instance, its image checked again.
                    c.restart_count += 1;
                    c.previous_logs = std::mem::take(&mut c.logs);
                    actions.push(ev(
                        "Normal",
                        "Pulled",
                        format!("Container image \"{image}\" already present on machine"),
                    ));
                }
                let behaviour = images::lookup(&c.reference).map(|i| i.behaviour).unwrap_or(images::Behaviour::Pause);
                let run = script::plan(behaviour, &c.reference.repository, &c.spec.command, &c.spec.args);
                c.container_id = format!(
                    "containerd://{:016x}{:016x}{:016x}{:016x}",
                    rng.next_u64(),
                    rng.next_u64(),
                    rng.next_u64(),
                    rng.next_u64()
                );
                actions.push(ev("Normal", "Created", "Container created".into()));
                actions.push(ev("Normal", "Started", "Container started".into()));
                for (offset, line) in &run.logs {
                    c.logs.push((now + *offset, line.clone()));
                }
                c.state =
                    State::Running { started: now, exits_at: run.lifetime.map(|d| now + d), exit_code: run.exit_code };
                c.run = Some(run);
            }
            State::Running { started, exits_at: Some(at), exit_code } if now >= at => {
                let terminated = ContainerStateTerminated {
                    exit_code,
                    reason: if exit_code == 0 { "Completed".into() } else { "Error".into() },
                    started_at: Some(started),
                    finished_at: Some(at),
                    container_id: c.container_id.clone(),
                    ..Default::default()
                };
                if at.since(started) >= BACKOFF_RESET {
                    c.backoff = CRASH_BACKOFF_INITIAL;
                }
                let restart = policy == "Always" || (policy == "OnFailure" && exit_code != 0);
                c.last_termination = Some(terminated.clone());
                c.state = State::Terminated(terminated);
                if restart {
                    // The first restart is immediate; after that the kubelet backs off.
                    if c.restart_count == 0 {
                        c.restart_at = Some(now + Duration::millis(rng.between(500, 1500)));
                    } else {
                        let wait = c.backoff;
                        c.backoff = Duration((c.backoff.0 * 2).min(CRASH_BACKOFF_MAX.0));
                        c.restart_at = Some(now + wait);
                        actions.push(ev(
                            "Warning",
                            "BackOff",
                            format!("Back-off restarting failed container {} in pod {pod_ref}", c.spec.name),
                        ));
                        c.state = State::Waiting {
                            reason: "CrashLoopBackOff".into(),
                            message: format!(
                                "back-off {} restarting failed container={} pod={pod_ref}",
                                wait, c.spec.name
                            ),
                        };
                    }
                }
            }
            State::Terminated(_) if c.restart_at.is_some() && c.restart_at.is_some_and(|at| now >= at) => {
                c.state = State::Waiting { reason: String::new(), message: String::new() };
                self.step_container(i, policy, now, runtime, rng, actions);
            }
            _ => {}
        }
    }

    fn terminate(&mut self, pod: &Pod, now: Time, rng: &mut Rng, actions: &mut Vec<Action>) {
        let deadline = pod.metadata.deletion_timestamp.unwrap_or(now);
        if !self.terminating {
            self.terminating = true;
            for c in &mut self.containers {
                if let State::Running { .. } = c.state {
                    actions.push(Action::Event {
                        type_: "Normal",
                        reason: "Killing",
                        message: format!("Stopping container {}", c.spec.name),
                        field_path: format!("spec.containers{{{}}}", c.spec.name),
                    });
                    let graceful = c.run.as_ref().is_none_or(|r| r.honours_sigterm);
                    let stop = if graceful { now + Duration::millis(rng.between(100, 400)) } else { deadline.max(now) };
                    // A process that ignores SIGTERM still ends when its own work is done.
                    let natural_end = if let State::Running { exits_at, .. } = c.state { exits_at } else { None };
                    let stop = natural_end.map_or(stop, |end| stop.min(end.max(now)));
                    c.stopping_until = Some(stop.min(deadline.max(now)));
                }
                c.restart_at = None;
            }
        }
        let mut all_stopped = true;
        for c in &mut self.containers {
            if let State::Running { started, .. } = c.state {
                let until = c.stopping_until.unwrap_or(now);
                if now >= until {
                    let killed = until >= deadline && !c.run.as_ref().is_none_or(|r| r.honours_sigterm);
                    c.state = State::Terminated(ContainerStateTerminated {
                        exit_code: if killed { 137 } else { 0 },
                        reason: if killed { "Error".into() } else { "Completed".into() },
                        started_at: Some(started),
                        finished_at: Some(now),
                        container_id: c.container_id.clone(),
                        ..Default::default()
                    });
                } else {
                    all_stopped = false;
                }
            }
        }
        if all_stopped && !self.delete_sent {
            self.delete_sent = true;
            actions.push(Action::DeletePod);
        }
    }

    /// When this worker next needs a step, if it has something scheduled.
    pub fn next_wakeup(&self) -> Option<Time> {
        let mut next: Option<Time> = None;
        let mut consider = |t: Time| next = Some(next.map_or(t, |n: Time| n.min(t)));
        if let (Some(at), None) = (self.sandbox_ready_at, &self.ip) {
            consider(at);
        }
        for c in &self.containers {
            match &c.image {
                ImageState::Pulling { done, .. } => consider(*done),
                ImageState::PullBackOff { retry_at, show_at, shown_backoff, .. } => {
                    consider(if *shown_backoff { *retry_at } else { *show_at })
                }
                _ => {}
            }
            if let Some(at) = c.restart_at {
                consider(at);
            }
            if let State::Running { exits_at, .. } = c.state {
                if let Some(at) = exits_at {
                    consider(at);
                }
                if let Some(at) = c.stopping_until {
                    consider(at);
                }
            }
        }
        next
    }

    /// Whether the pod will change on its own soon (not waiting out a back-off, not idle).
    pub fn busy(&self) -> bool {
        if self.terminating {
            return !self.delete_sent;
        }
        if self.ip.is_none() {
            return true;
        }
        self.containers.iter().any(|c| {
            matches!(c.image, ImageState::Pulling { .. } | ImageState::Unknown)
                || matches!(c.state, State::Running { exits_at: Some(_), .. })
                || (matches!(c.state, State::Terminated(_)) && c.restart_at.is_some() && c.restart_count <= 1)
                || matches!(&c.state, State::Waiting { reason, .. } if reason == "ContainerCreating")
        })
    }

    /// The pod's status as this worker sees it, built on the stored one.
    pub fn status(&self, pod: &Pod, now: Time) -> PodStatus {
        let mut status = pod.status.clone();
        status.host_ip = self.host_ip.clone();
        status.host_ips = vec![IpEntry { ip: self.host_ip.clone() }];
        if let Some(ip) = &self.ip {
            status.pod_ip = ip.clone();
            status.pod_ips = vec![IpEntry { ip: ip.clone() }];
        }
        status.start_time.get_or_insert(self.started);
        status.qos_class = qos_class(pod).into();
        status.container_statuses = self
            .containers
            .iter()
            .map(|c| {
                let ready = matches!(c.state, State::Running { .. }) && !self.terminating;
                let state = match &c.state {
                    State::Waiting { reason, message } => ContainerState {
                        waiting: Some(ContainerStateWaiting {
                            reason: if reason.is_empty() { "ContainerCreating".into() } else { reason.clone() },
                            message: message.clone(),
                        }),
                        ..Default::default()
                    },
                    State::Running { started, .. } => ContainerState {
                        running: Some(ContainerStateRunning { started_at: Some(*started) }),
                        ..Default::default()
                    },
                    State::Terminated(t) => ContainerState { terminated: Some(t.clone()), ..Default::default() },
                };
                let last_state = match (&c.state, &c.last_termination) {
                    (State::Terminated(_), _) => ContainerState::default(),
                    (_, Some(t)) => ContainerState { terminated: Some(t.clone()), ..Default::default() },
                    _ => ContainerState::default(),
                };
                let image_id =
                    if c.image == ImageState::Present { images::digest(&c.reference) } else { String::new() };
                ContainerStatus {
                    name: c.spec.name.clone(),
                    state,
                    last_state,
                    ready,
                    restart_count: c.restart_count,
                    image: c.spec.image.clone(),
                    image_id,
                    container_id: c.container_id.clone(),
                    started: Some(matches!(c.state, State::Running { .. })),
                }
            })
            .collect();
        // Phase.
        let policy = pod.restart_policy();
        let never_started = self.containers.iter().any(|c| c.container_id.is_empty());
        let running = self.containers.iter().any(|c| matches!(c.state, State::Running { .. }));
        let restarting = self.containers.iter().any(|c| {
            c.restart_at.is_some() || matches!(&c.state, State::Waiting { reason, .. } if reason == "CrashLoopBackOff")
        });
        let codes: Vec<i32> = self
            .containers
            .iter()
            .filter_map(|c| if let State::Terminated(t) = &c.state { Some(t.exit_code) } else { None })
            .collect();
        let all_terminated = codes.len() == self.containers.len() && !self.containers.is_empty();
        status.phase = if never_started && !self.terminating {
            "Pending"
        } else if running || restarting {
            "Running"
        } else if all_terminated {
            let failed = codes.iter().any(|&c| c != 0);
            match policy {
                "Always" if !self.terminating => "Running",
                "OnFailure" if failed && !self.terminating => "Running",
                _ if failed => "Failed",
                _ => "Succeeded",
            }
        } else {
            "Pending"
        }
        .to_string();
        // Conditions.
        let unready: Vec<String> =
            status.container_statuses.iter().filter(|c| !c.ready).map(|c| c.name.clone()).collect();
        let all_ready = unready.is_empty();
        let cond = |type_: &str, ok: bool, reason: &str, message: String| PodCondition {
            type_: type_.into(),
            status: if ok { "True" } else { "False" }.into(),
            reason: if ok { String::new() } else { reason.into() },
            message: if ok { String::new() } else { message },
            ..Default::default()
        };
        let done = matches!(status.phase.as_str(), "Succeeded" | "Failed");
        // The sandbox goes once the pod has finished or its containers were stopped.
        let sandbox = self.ip.is_some() && !done && (!self.terminating || running);
        let not_ready_reason = if done { "PodCompleted" } else { "ContainersNotReady" };
        let not_ready_message =
            if done { String::new() } else { format!("containers with unready status: [{}]", unready.join(" ")) };
        let conditions = [
            cond("PodReadyToStartContainers", sandbox, "", String::new()),
            cond("Initialized", true, "", String::new()),
            cond("Ready", all_ready, not_ready_reason, not_ready_message.clone()),
            cond("ContainersReady", all_ready, not_ready_reason, not_ready_message),
            cond("PodScheduled", true, "", String::new()),
        ];
        let mut ordered = Vec::new();
        for c in conditions {
            let mut list = status.conditions.clone();
            set_condition(&mut list, c.clone(), now);
            let merged = list.into_iter().find(|x| x.type_ == c.type_).unwrap_or(c);
            ordered.push(merged);
        }
        status.conditions = ordered;
        status
    }
}

fn start_pull(reference: &ImageRef, now: Time, runtime: &mut Runtime, rng: &mut Rng) -> ImageState {
    let result = images::lookup(reference).map(|info| info.size);
    let in_flight = runtime.pulling.get(&reference.canonical).copied().filter(|done| *done > now);
    let started = match in_flight {
        // Queued behind the pull of the same image: it starts when that one is done.
        Some(done) => done.max(runtime.puller_free_at),
        None => now.max(runtime.puller_free_at),
    };
    let already_there = in_flight.is_some() || runtime.images.contains(&reference.canonical);
    let took = match &result {
        Ok(_) if already_there => Duration::millis(rng.between(200, 600)),
        Ok(size) => {
            let base = 400 + size * 1000 / PULL_BYTES_PER_SEC;
            Duration::millis(base + rng.below(base / 5 + 1))
        }
        Err(_) => Duration::millis(rng.between(400, 1200)),
    };
    let done = started + took;
    runtime.puller_free_at = done;
    if in_flight.is_none() && result.is_ok() {
        runtime.pulling.insert(reference.canonical.clone(), done);
    }
    ImageState::Pulling { started, requested: now, done, result }
}

/// Guaranteed when every container's requests equal its limits for cpu and memory;
/// BestEffort when nothing is requested or limited; Burstable otherwise.
pub fn qos_class(pod: &Pod) -> &'static str {
    let containers: Vec<&Container> = pod.spec.containers.iter().collect();
    let any = containers.iter().any(|c| !c.resources.requests.is_empty() || !c.resources.limits.is_empty());
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = c.resources.limits.get(*r);
            let request = c.resources.requests.get(*r).or(limit);
            limit.is_some() && request.map(|q| q.milli()) == limit.map(|q| q.milli())
        })
    });
    if guaranteed { "Guaranteed" } else { "Burstable" }
}
