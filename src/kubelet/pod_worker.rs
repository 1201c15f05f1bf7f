//! A kubelet's pod worker: one pod's sandbox and containers, from ContainerCreating through
//! image pulls, starts, exits, restarts with back-off, to graceful termination.
//!
//! It is a state machine stepped by the kubelet: each step looks at the time and the node's
//! image store, moves containers along, and returns what to report (events) and whether the
//! pod's status changed. It never calls the API itself.

use super::expansion;
use super::images::{self, ImageRef, PullError, Registry};
use super::probes::{self, Outcome, ProbeType, Prober, Target};
use super::script::{self, FileSpan, Run};
use super::volumes::{self, Mounted};
pub use crate::api::helpers::qos_class;
use crate::api::pod::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, IpEntry,
    PodCondition, PodStatus,
};
use crate::api::{Container, Pod};
use crate::sim::{Duration, Rng, Time};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A container's waiting reason when its variables cannot be worked out.
pub const CONFIG_ERROR: &str = "CreateContainerConfigError";
/// The runtime could not create the container (an AppArmor profile the node lacks).
pub const CREATE_ERROR: &str = "CreateContainerError";
pub const CRASH_BACKOFF_INITIAL: Duration = Duration::seconds(10);
pub const CRASH_BACKOFF_MAX: Duration = Duration::seconds(300);
/// A crash back-off not advanced for this long is forgotten (twice the longest wait): a
/// container that ran this long restarts at once when it next exits.
pub const BACKOFF_RESET: Duration = Duration::minutes(10);
const PULL_BYTES_PER_SEC: u64 = 25_000_000;

/// The node's container runtime state shared by its pods: images present and the one puller
/// (the kubelet pulls one image at a time by default), and the registry it pulls from.
#[derive(Debug, Default)]
pub struct Runtime {
    pub images: BTreeSet<String>,
    /// The cluster's registry (shared with every node), which may refuse images.
    pub registry: Registry,
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
    spec: Arc<Container>,
    reference: ImageRef,
    image: ImageState,
    state: State,
    restart_count: i32,
    last_termination: Option<ContainerStateTerminated>,
    /// When the container may next be (re)started.
    restart_at: Option<Time>,
    /// The crash back-off: the current wait and when it was last advanced (the kubelet's
    /// per-container back-off entry). `None` until a restart first needs one.
    backoff: Option<(Duration, Time)>,
    /// A restart delayed by the back-off advances it when it happens, from this exit.
    backoff_pending: Option<Time>,
    /// The wait before the next pull retry; doubles on each failure.
    pull_backoff: Duration,
    container_id: String,
    /// When a stop was requested: the time it will have exited.
    stopping_until: Option<Time>,
    /// Output of the current (or last) instance, and of the one before it.
    logs: Vec<(Time, String)>,
    previous_logs: Vec<(Time, String)>,
    run: Option<Run>,
    /// The container's probes (startup first), for its current instance.
    probes: Vec<Prober>,
    /// What the current instance listens on and the files its script writes, for probes.
    listening: Vec<u16>,
    files: Vec<FileSpan>,
    /// A probe asked for a restart: the container is being stopped and exits then, with this code.
    probe_kill: Option<(Time, i32)>,
    /// An init container: it runs to success before the next one, and the app containers, start.
    init: bool,
    /// A sidecar: an init container that restarts Always. The next one starts once it has
    /// started, and it runs beside the app until the app is done.
    sidecar: bool,
    /// When a process waiting on the world (`until nslookup …`) next checks it.
    next_check: Option<Time>,
    /// The current instance holds more memory than its limit: the OOM killer ends it.
    oom: bool,
    /// The current instance's log has placeholders for the cluster to fill in.
    unfilled: bool,
    /// Why the current instance could not start (its program is not in the image): it ends
    /// at once as a StartError instead of running.
    start_error: Option<String>,
    /// The variables from ConfigMaps and Secrets the current instance started with (they
    /// stay as they were when the objects change). `None` for a container without such.
    env: Option<Vec<(String, String)>>,
    /// The AppArmor profile it asks the node for by name (`Localhost`), which no node has.
    apparmor: Option<String>,
}

impl ContainerRun {
    fn probe(&self, kind: ProbeType) -> Option<&Prober> {
        self.probes.iter().find(|p| p.kind == kind)
    }

    /// Started as the kubelet reports it: running, and past its startup probe if it has one.
    fn started(&self) -> bool {
        matches!(self.state, State::Running { .. })
            && self.probe(ProbeType::Startup).is_none_or(|p| p.result == Some(true))
    }

    /// Ready: started, and its readiness probe (if any) has succeeded.
    fn ready(&self) -> bool {
        self.started() && self.probe(ProbeType::Readiness).is_none_or(|p| p.result == Some(true))
    }
}

/// What a pod's processes ask of the cluster as they start and run (the container's part,
/// which the kubelet plays): whether a name resolves in the cluster's DNS, and the values of
/// a container's environment variables (from ConfigMaps, Secrets, the pod's own fields).
pub trait Surroundings {
    fn resolves(&self, name: &str) -> bool;
    /// The container's own variables, as `$(VAR)` in its command and args refers to them.
    fn environment(&self, container: &Container) -> Vec<(String, String)>;
    /// Why the container cannot be configured (a ConfigMap or Secret, or a key of one, its
    /// variables need is missing), in the kubelet's words.
    fn config_error(&self, _container: &Container) -> Option<String> {
        None
    }
    /// The files of the pod's ConfigMap, Secret and downward API volumes, or the volume that
    /// could not be set up and the event's message.
    fn mount(&self, _pod: &Pod) -> Result<Mounted, (String, String)> {
        Ok(Mounted::new())
    }
    /// The container's own variables as its process gets them (`env` prints them).
    fn declared(&self, container: &Container) -> Vec<(String, String)> {
        super::env::literal(container)
    }
}

/// A bare DNS answer (as the unit tests give one): the environment is the literal values.
impl<F: Fn(&str) -> bool> Surroundings for F {
    fn resolves(&self, name: &str) -> bool {
        self(name)
    }
    fn environment(&self, container: &Container) -> Vec<(String, String)> {
        super::env::literal(container)
    }
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
    /// How many times the kubelet has synced the pod (stepped this worker).
    syncs: u64,
    pod_ref: String,
    /// How long a container stopped by a probe gets before SIGKILL (the pod's
    /// terminationGracePeriodSeconds, unless the probe sets its own).
    grace: Duration,
    host_network: bool,
    /// When the worker next needs a step, worked out whenever it changes (the kubelet asks
    /// for every pod each time it runs).
    wakeup: Option<Time>,
    /// The pod's first sync is still inside the container runtime: creating the sandbox, then
    /// pulling images and starting containers (or the first init container), all in one call.
    first_sync_open: bool,
    /// The last step fell inside that call: the status the sync began with still stands.
    held: bool,
    /// The files of the pod's ConfigMap, Secret and downward API volumes as last written;
    /// `None` until they are set up (nothing to set up: set up at once).
    mounted: Option<Mounted>,
    /// A failed mount is tried again at this time, then after the next wait.
    mount_retry: Option<(Time, Duration)>,
    /// The pod's next periodic sync, which writes its volumes' files afresh.
    remount_at: Option<Time>,
    /// The pod's hostPath and claim volumes: what its containers write there outlives it.
    persistent: Vec<crate::api::NamedItem>,
}

/// How often the kubelet syncs each pod even when nothing changed (`syncFrequency`); each
/// pod's next sync is jittered by up to half of it.
pub const SYNC_FREQUENCY: Duration = Duration::seconds(60);
/// How long a pod waits before its sync is tried again after an error (a container that could
/// not be configured): 10 s, jittered by up to half of it.
pub const SYNC_ERROR_BACKOFF: Duration = Duration::seconds(10);

impl PodWorker {
    pub fn new(pod: &Pod, now: Time, host_ip: &str) -> Self {
        // Init containers first, in order (sidecars among them), then the app containers.
        let n_init = pod.spec.init_containers.len();
        let containers = pod
            .spec
            .init_containers
            .iter()
            .chain(pod.spec.containers.iter())
            .enumerate()
            .map(|(i, c)| (with_namespace_file(c, &pod.metadata.namespace), i < n_init))
            .map(|(c, init)| ContainerRun {
                init,
                sidecar: init && c.restart_policy.as_deref() == Some("Always"),
                next_check: None,
                oom: false,
                unfilled: false,
                start_error: None,
                env: None,
                apparmor: super::apparmor::localhost_profile(pod, &c),
                reference: images::parse_reference(&c.image),
                image: ImageState::Unknown,
                state: State::Waiting { reason: "ContainerCreating".into(), message: String::new() },
                restart_count: 0,
                last_termination: None,
                restart_at: None,
                backoff: None,
                backoff_pending: None,
                pull_backoff: CRASH_BACKOFF_INITIAL,
                container_id: String::new(),
                stopping_until: None,
                logs: Vec::new(),
                previous_logs: Vec::new(),
                run: None,
                probes: [
                    (ProbeType::Startup, &c.startup_probe),
                    (ProbeType::Liveness, &c.liveness_probe),
                    (ProbeType::Readiness, &c.readiness_probe),
                ]
                .into_iter()
                .filter_map(|(kind, probe)| probe.as_ref().map(|p| Prober::new(kind, p)))
                .collect(),
                listening: Vec::new(),
                files: Vec::new(),
                probe_kill: None,
                spec: c,
            })
            .collect();
        PodWorker {
            syncs: 0,
            containers,
            sandbox_ready_at: None,
            ip: None,
            started: now,
            host_ip: host_ip.to_string(),
            terminating: false,
            delete_sent: false,
            pod_ref: format!("{}_{}({})", pod.metadata.name, pod.metadata.namespace, pod.metadata.uid),
            grace: Duration::seconds(pod.spec.termination_grace_period_seconds.unwrap_or(30).max(0) as u64),
            host_network: pod.spec.host_network,
            wakeup: None,
            first_sync_open: false,
            held: false,
            mounted: (!volumes::has_projected_files(pod)).then(Mounted::new),
            mount_retry: None,
            remount_at: None,
            persistent: pod
                .spec
                .volumes
                .iter()
                .filter(|v| v.get("hostPath").is_some() || v.get("persistentVolumeClaim").is_some())
                .cloned()
                .collect(),
        }
    }

    /// The pod's hostPath and claim volumes.
    pub fn persistent_volumes(&self) -> &[crate::api::NamedItem] {
        &self.persistent
    }

    /// What each container's process wrote (absolute path → content) by the time it last ran
    /// or `now`, with the container's spec (for its mounts).
    pub fn written(&self, now: Time) -> Vec<(Arc<Container>, BTreeMap<String, String>)> {
        self.containers
            .iter()
            .filter(|c| !c.files.is_empty())
            .filter_map(|c| {
                let (start, end) = match &c.state {
                    State::Running { started, .. } => (*started, now),
                    State::Terminated(t) => (t.started_at?, t.finished_at.unwrap_or(now)),
                    State::Waiting { .. } => return None,
                };
                let age = end.since(start);
                let mut files = BTreeMap::new();
                for span in &c.files {
                    if let Some(f) = script::file_at(&c.files, &span.path, age) {
                        let content = if f.content.is_empty() { String::new() } else { format!("{}\n", f.content) };
                        files.insert(f.path.clone(), content);
                    }
                }
                Some((c.spec.clone(), files))
            })
            .collect()
    }

    /// The variables a container's current instance started with, when some came from
    /// ConfigMaps or Secrets.
    pub fn started_env(&self, container: &str) -> Option<&[(String, String)]> {
        self.containers.iter().find(|c| c.spec.name == container)?.env.as_deref()
    }

    /// The files the kubelet wrote into the pod's volumes, once they are set up.
    pub fn mounted(&self) -> Option<&Mounted> {
        self.mounted.as_ref()
    }

    /// Whether the pod waits out the back-off of a volume that could not be set up.
    pub fn mount_waiting(&self) -> bool {
        self.mounted.is_none() && self.mount_retry.is_some()
    }

    /// The containers that wait because they could not be configured.
    pub fn config_waiting(&self) -> impl Iterator<Item = &Container> + '_ {
        self.containers
            .iter()
            .filter(|c| matches!(&c.state, State::Waiting { reason, .. } if reason == CONFIG_ERROR))
            .map(|c| &*c.spec)
    }

    /// Sets the pod's volumes up before its sandbox is made, and writes their files again at
    /// each periodic sync; a failure is reported as `FailedMount` and tried again after a
    /// back-off (the files already written stay). Returns whether they are set up.
    fn mount_volumes(&mut self, pod: &Pod, now: Time, world: &dyn Surroundings, actions: &mut Vec<Action>) -> bool {
        let due = match (&self.mounted, self.mount_retry, self.remount_at) {
            (None, Some((at, _)), _) => now >= at,
            (None, None, _) => true,
            (Some(_), _, at) => at.is_some_and(|at| now >= at),
        };
        if !due {
            return self.mounted.is_some();
        }
        // Each pod's periodic sync comes round at its own offset, up to half the period on
        // top of it (drawn once per pod from its identity, so the node's stream of chance
        // is left to what the containers do).
        let offset = self.pod_ref.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        let resync = || now + SYNC_FREQUENCY + Duration::millis(offset % (SYNC_FREQUENCY.0 / 2));
        match world.mount(pod) {
            Ok(mounted) => {
                self.mounted = Some(mounted);
                self.mount_retry = None;
                self.remount_at = Some(resync());
            }
            Err((_, message)) => {
                actions.push(Action::Event {
                    type_: "Warning",
                    reason: "FailedMount",
                    message,
                    field_path: String::new(),
                });
                if self.mounted.is_some() {
                    self.remount_at = Some(resync());
                } else {
                    let wait = self.mount_retry.map_or(volumes::RETRY_INITIAL, |(_, next)| next);
                    self.mount_retry = Some((now + wait, Duration((wait.0 * 2).min(volumes::RETRY_MAX.0))));
                }
            }
        }
        self.mounted.is_some()
    }

    /// Kills a container's process at once, as `kill -9` on the node would (`sim pod crash`):
    /// it exits with 137 and the kubelet handles it like any exit.
    pub fn crash(&mut self, container: &str, now: Time) -> Result<(), String> {
        let crashed = self.kill(container, now);
        self.wakeup = self.compute_wakeup();
        crashed
    }

    /// Lines a container's process wrote now (its terminal's echo and output, for a shell
    /// attached to one).
    pub fn append_logs(&mut self, container: &str, lines: &[String], now: Time) {
        if let Some(c) = self.containers.iter_mut().find(|c| c.spec.name == container) {
            c.logs.extend(lines.iter().map(|l| (now, l.clone())));
        }
    }

    /// The container's process exits on its own with `code`, now.
    pub fn exit_process(&mut self, container: &str, code: i32, now: Time) -> Result<(), String> {
        let ended = self.kill(container, now);
        if let Some(c) = self.containers.iter_mut().find(|c| c.spec.name == container)
            && let State::Running { exit_code, .. } = &mut c.state
        {
            *exit_code = code;
        }
        self.wakeup = self.compute_wakeup();
        ended
    }

    /// The commands whose output each just-started container's log awaits, in order: what the
    /// cluster runs in that container to fill them in (`fill`).
    pub fn unfilled(&self) -> Vec<(String, Vec<String>)> {
        self.containers
            .iter()
            .filter(|c| c.unfilled)
            .map(|c| {
                let cmds = c.logs.iter().filter_map(|(_, l)| script::placeholder(l)).map(|(cmd, _)| cmd.to_string());
                (c.spec.name.clone(), cmds.collect())
            })
            .collect()
    }

    /// Fills a container's placeholders in with what each command printed (in order), and,
    /// when its last command decides the process's exit code, that code.
    pub fn fill(&mut self, container: &str, results: &[(Vec<String>, i32)]) {
        let Some(c) = self.containers.iter_mut().find(|c| c.spec.name == container) else { return };
        let mut results = results.iter();
        let mut logs = Vec::with_capacity(c.logs.len());
        for (t, line) in std::mem::take(&mut c.logs) {
            let Some((_, decides)) = script::placeholder(&line) else {
                logs.push((t, line));
                continue;
            };
            let Some((lines, code)) = results.next() else { continue };
            logs.extend(lines.iter().map(|l| (t, l.clone())));
            if decides && let State::Running { exits_at: Some(_), exit_code, .. } = &mut c.state {
                *exit_code = *code;
            }
        }
        c.logs = logs;
        c.unfilled = false;
    }

    fn kill(&mut self, container: &str, now: Time) -> Result<(), String> {
        let c = self
            .containers
            .iter_mut()
            .find(|c| c.spec.name == container)
            .ok_or_else(|| format!("container \"{container}\" is not valid for this pod"))?;
        match &mut c.state {
            State::Running { exits_at, exit_code, .. } if c.stopping_until.is_none() => {
                *exits_at = Some(now);
                *exit_code = 137;
                c.probe_kill = None;
                Ok(())
            }
            _ => Err(format!("container \"{container}\" is not running")),
        }
    }

    /// Log lines of a container's current (or last) instance, or of the instance before it
    /// (`kubectl logs --previous`).
    pub fn logs(&self, container: &str, previous: bool) -> Option<Vec<(Time, String)>> {
        let c = self.containers.iter().find(|c| c.spec.name == container)?;
        if previous { (c.restart_count > 0).then(|| c.previous_logs.clone()) } else { Some(c.logs.clone()) }
    }

    /// Moves the pod along as far as `now` allows.
    /// `world` answers what the pod's processes ask of the cluster (see [`Surroundings`]).
    pub fn step(
        &mut self,
        pod: &Pod,
        now: Time,
        runtime: &mut Runtime,
        rng: &mut Rng,
        next_ip: &mut dyn FnMut() -> String,
        world: &dyn Surroundings,
    ) -> Vec<Action> {
        self.syncs += 1;
        let open = self.first_sync_open;
        let actions = self.advance(pod, now, runtime, rng, next_ip, world);
        // The runtime's call returns once the sandbox is up and no container is still waiting
        // on its image: what it did is reported then, in one status (with the pod's IP).
        self.held = false;
        if open && self.first_sync_open {
            let pulling = self.containers.iter().any(|c| matches!(c.image, ImageState::Pulling { .. }));
            if self.ip.is_some() && !pulling {
                self.first_sync_open = false;
            } else {
                self.held = true;
            }
        }
        self.wakeup = self.compute_wakeup();
        actions
    }

    /// Whether the last step fell inside the pod's first sync, still in the container runtime
    /// (creating its sandbox, pulling images): the kubelet reports nothing new until that
    /// call returns, as the status a sync writes is worked out when it begins.
    pub fn held(&self) -> bool {
        self.held
    }

    /// How many times the kubelet has synced the pod.
    pub fn syncs(&self) -> u64 {
        self.syncs
    }

    fn advance(
        &mut self,
        pod: &Pod,
        now: Time,
        runtime: &mut Runtime,
        rng: &mut Rng,
        next_ip: &mut dyn FnMut() -> String,
        world: &dyn Surroundings,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        if pod.metadata.deletion_timestamp.is_some() || pod.is_terminal() && self.terminating {
            self.first_sync_open = false;
            self.terminate(pod, now, rng, &mut actions);
            return actions;
        }
        // The volumes are set up first, then the sandbox (network namespace, pause container).
        if !self.mount_volumes(pod, now, world, &mut actions) {
            return actions;
        }
        match self.sandbox_ready_at {
            None => {
                self.sandbox_ready_at = Some(now + Duration::millis(rng.between(300, 700)));
                self.first_sync_open = true;
                return actions;
            }
            Some(at) if now < at => return actions,
            Some(_) if self.ip.is_none() => self.ip = Some(next_ip()),
            _ => {}
        }
        let policy = pod.restart_policy().to_string();
        // Init containers run one at a time, each to success, before the app containers
        // start; a failed one is retried (OnFailure) unless the pod never restarts.
        let init_policy = if policy == "Never" { "Never" } else { "OnFailure" };
        // Once the app is done for good (a Job's pod), its sidecars are stopped, not restarted.
        let app_done = self.app_done(&policy);
        for i in 0..self.containers.len() {
            if self.containers[i].sidecar {
                let sidecar_policy = if app_done { "Never" } else { "Always" };
                if app_done {
                    self.stop_sidecar(i, now, rng);
                }
                self.step_container(i, sidecar_policy, now, runtime, rng, &mut actions, world);
                self.step_probes(i, sidecar_policy, now, rng, &mut actions);
                if !self.init_done(i) {
                    return actions;
                }
                continue;
            }
            if self.containers[i].init {
                if !self.init_done(i) {
                    self.step_container(i, init_policy, now, runtime, rng, &mut actions, world);
                }
                if !self.init_done(i) {
                    return actions;
                }
                continue;
            }
            self.step_container(i, &policy, now, runtime, rng, &mut actions, world);
            self.step_probes(i, &policy, now, rng, &mut actions);
        }
        // The app has just finished for good: its sidecars are asked to stop now.
        if !app_done && self.app_done(&policy) {
            for i in 0..self.containers.len() {
                if self.containers[i].sidecar {
                    self.stop_sidecar(i, now, rng);
                }
            }
        }
        actions
    }

    /// Whether init container `i` lets the next one start: it has run to success, or, a
    /// sidecar, it has started (or the app is done and it has been stopped).
    fn init_done(&self, i: usize) -> bool {
        let c = &self.containers[i];
        if c.sidecar {
            return c.started() || matches!(c.state, State::Terminated(_)) && c.restart_at.is_none();
        }
        matches!(&c.state, State::Terminated(t) if t.exit_code == 0)
    }

    /// Whether every app container has finished and will not be started again.
    fn app_done(&self, policy: &str) -> bool {
        let apps = || self.containers.iter().filter(|c| !c.init);
        apps().count() > 0
            && apps().all(|c| match &c.state {
                State::Terminated(t) => policy == "Never" || (policy == "OnFailure" && t.exit_code == 0),
                _ => false,
            })
    }

    /// Asks a running sidecar to stop (SIGTERM): it exits shortly, with status 0.
    fn stop_sidecar(&mut self, i: usize, now: Time, rng: &mut Rng) {
        let c = &mut self.containers[i];
        if let State::Running { started, exits_at: None, .. } = c.state {
            let at = now + Duration::millis(rng.between(100, 400));
            c.state = State::Running { started, exits_at: Some(at), exit_code: 0 };
            c.next_check = None;
        }
    }

    /// Whether every init container has run to success.
    fn initialized(&self) -> bool {
        (0..self.containers.len()).all(|i| !self.containers[i].init || self.init_done(i))
    }

    /// Runs the container's probes that are due, and acts on what they decide: a startup
    /// probe's success starts the others; a liveness or startup failure restarts the container.
    fn step_probes(&mut self, i: usize, policy: &str, now: Time, rng: &mut Rng, actions: &mut Vec<Action>) {
        let (grace, host_network) = (self.grace, self.host_network);
        let c = &mut self.containers[i];
        let State::Running { started, exits_at, exit_code } = c.state else { return };
        if c.probe_kill.is_some() || c.stopping_until.is_some() || exits_at.is_some_and(|at| at <= now) {
            return;
        }
        // Nothing due (the usual case, and always without probes): no path to spell out.
        if !c.probes.iter().any(|p| p.due(now)) {
            return;
        }
        let ip = self.ip.clone().unwrap_or_default();
        let field_path = format!("spec.{}{{{}}}", if c.init { "initContainers" } else { "containers" }, c.spec.name);
        for k in 0..c.probes.len() {
            if !c.probes[k].due(now) {
                continue;
            }
            let target = Target {
                pod_ip: &ip,
                host_network,
                container: &c.spec.name,
                ports: &c.spec.ports,
                repository: &c.reference.repository,
                listening: &c.listening,
                files: &c.files,
                age: now.since(started),
                args: &c.spec.args,
            };
            let kind = c.probes[k].kind;
            let decided = match probes::check(&c.probes[k].spec, &target) {
                Outcome::Success => c.probes[k].record(true, now),
                Outcome::Failure(detail) => {
                    actions.push(Action::Event {
                        type_: "Warning",
                        reason: "Unhealthy",
                        message: format!("{} probe failed: {detail}", kind.name()),
                        field_path: field_path.clone(),
                    });
                    c.probes[k].record(false, now)
                }
                Outcome::Error(error) => {
                    actions.push(Action::Event {
                        type_: "Warning",
                        reason: "Unhealthy",
                        message: format!("{} probe errored and resulted in unknown state: {error}", kind.name()),
                        field_path: field_path.clone(),
                    });
                    c.probes[k].skip(now);
                    None
                }
            };
            match (kind, decided) {
                (ProbeType::Startup, Some(true)) => {
                    // Started: the startup probe is done; liveness and readiness begin now.
                    for p in &mut c.probes {
                        if p.kind == ProbeType::Startup {
                            p.stop();
                        } else {
                            p.start(now);
                        }
                    }
                }
                (ProbeType::Liveness | ProbeType::Startup, Some(false)) => {
                    let what = if kind == ProbeType::Liveness { "liveness" } else { "startup" };
                    let restart = if policy == "Never" { "" } else { ", will be restarted" };
                    actions.push(Action::Event {
                        type_: "Normal",
                        reason: "Killing",
                        message: format!("Container {} failed {what} probe{restart}", c.spec.name),
                        field_path: field_path.clone(),
                    });
                    // SIGTERM, then SIGKILL after the grace period; a process may end on its own first.
                    let grace = c.probes[k]
                        .spec
                        .termination_grace_period_seconds
                        .map_or(grace, |s| Duration::seconds(s.max(0) as u64));
                    let graceful = c.run.as_ref().is_none_or(|r| r.honours_sigterm);
                    let (mut at, mut code) =
                        if graceful { (now + Duration::millis(rng.between(100, 400)), 0) } else { (now + grace, 137) };
                    if let Some(end) = exits_at.filter(|end| *end < at) {
                        (at, code) = (end, exit_code);
                    }
                    c.probe_kill = Some((at, code));
                    for p in &mut c.probes {
                        p.stop();
                    }
                    return;
                }
                _ => {}
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn step_container(
        &mut self,
        i: usize,
        policy: &str,
        now: Time,
        runtime: &mut Runtime,
        rng: &mut Rng,
        actions: &mut Vec<Action>,
        world: &dyn Surroundings,
    ) {
        let pod_ref = &self.pod_ref;
        let c = &mut self.containers[i];
        let list = if c.init { "initContainers" } else { "containers" };
        // The container's spec, shared (its name and image are read only to report events).
        let spec = Arc::clone(&c.spec);
        let (name, image) = (spec.name.as_str(), spec.image.as_str());
        // The field path is spelled out per event: most steps report none.
        let ev = |type_: &'static str, reason: &'static str, message: String| Action::Event {
            type_,
            reason,
            message,
            field_path: ["spec.", list, "{", name, "}"].concat(),
        };
        // 1. The image.
        loop {
            match c.image.clone() {
                ImageState::Present => break,
                ImageState::Unknown => {
                    // A reference the runtime cannot parse is never pulled.
                    if !images::valid_reference(image) {
                        if !matches!(&c.state, State::Waiting { reason, .. } if reason == "InvalidImageName") {
                            let message = format!(
                                "Failed to apply default image tag \"{image}\": couldn't parse image name \"{image}\": invalid reference format"
                            );
                            actions.push(ev("Warning", "InspectFailed", message.clone()));
                            actions.push(ev("Warning", "Failed", "Error: InvalidImageName".into()));
                            c.state = State::Waiting { reason: "InvalidImageName".into(), message };
                        }
                        return;
                    }
                    let pull_policy = c.spec.image_pull_policy.as_deref().unwrap_or("IfNotPresent");
                    let present = runtime.images.contains(&c.reference.canonical);
                    if present && pull_policy != "Always" {
                        actions.push(ev(
                            "Normal",
                            "Pulled",
                            ["Container image \"", image, "\" already present on machine"].concat(),
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
                            let message = images::pull_error_message(image, &c.reference, &err);
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
                if let Some(ts) = c.backoff_pending.take() {
                    backoff_advance(&mut c.backoff, ts, now);
                }
                // Its variables are worked out before the container is created: a missing
                // ConfigMap or Secret (or key) fails the pod's sync, which is tried again
                // after the sync back-off, the image checked again each time.
                // The runtime then refuses to create it under an AppArmor profile the node
                // has not loaded (CreateContainerError), tried again the same way.
                let failure = world.config_error(&c.spec).map(|e| (CONFIG_ERROR, e)).or_else(|| {
                    let profile = c.apparmor.as_ref()?;
                    Some((
                        CREATE_ERROR,
                        super::apparmor::not_loaded(new_container_id(rng).trim_start_matches("containerd://"), profile),
                    ))
                });
                if let Some((reason, error)) = failure {
                    let again = !c.container_id.is_empty()
                        || matches!(&c.state, State::Waiting { reason, .. } if reason == CONFIG_ERROR || reason == CREATE_ERROR);
                    if again {
                        actions.push(ev(
                            "Normal",
                            "Pulled",
                            ["Container image \"", image, "\" already present on machine"].concat(),
                        ));
                    }
                    actions.push(ev("Warning", "Failed", format!("Error: {error}")));
                    c.state = State::Waiting { reason: reason.into(), message: error };
                    let jitter = rng.between(0, SYNC_ERROR_BACKOFF.0 / 2);
                    c.restart_at = Some(now + SYNC_ERROR_BACKOFF + Duration::millis(jitter));
                    return;
                }
                if !c.container_id.is_empty() {
                    // A restart: a new instance, its image checked again.
                    c.restart_count += 1;
                    c.previous_logs = std::mem::take(&mut c.logs);
                    actions.push(ev(
                        "Normal",
                        "Pulled",
                        ["Container image \"", image, "\" already present on machine"].concat(),
                    ));
                }
                let behaviour = images::lookup(&c.reference).map(|i| i.behaviour).unwrap_or(images::Behaviour::Pause);
                // `$(VAR)` in the command and args is expanded from the container's variables
                // before the process starts. The variables are worked out only when the
                // command refers to one or the image's program reads them (`plan_with`).
                let refers = c.spec.command.iter().chain(&c.spec.args).any(|w| w.contains("$("));
                let env = if refers { world.environment(&c.spec) } else { Vec::new() };
                let command = expansion::expand_all(&c.spec.command, &env);
                let args = expansion::expand_all(&c.spec.args, &env);
                let repo = c.reference.repository.as_str();
                let argv = super::entrypoint::argv(repo, &command, &args);
                if let Some(error) = script::start_error(behaviour, &c.reference, &argv) {
                    // containerd creates the container, but runc cannot start its process: it
                    // ends there, as a StartError with exit code 128 (see the Running arm).
                    c.container_id = new_container_id(rng);
                    actions.push(ev("Normal", "Created", "Container created".into()));
                    actions.push(ev("Warning", "Failed", format!("Error: {error}")));
                    c.start_error = Some(error);
                    c.run = None;
                    c.oom = false;
                    c.next_check = None;
                    c.listening = Vec::new();
                    c.files = Vec::new();
                    c.probe_kill = None;
                    for p in &mut c.probes {
                        p.stop();
                    }
                    c.state = State::Running { started: now, exits_at: Some(now), exit_code: 128 };
                    return;
                }
                let environment = || if refers { env.clone() } else { world.environment(&c.spec) };
                let mut run = script::plan_with(behaviour, &c.reference, &command, &args, &environment);
                // A shell given a stdin waits on it until someone attaches and types `exit`.
                if c.spec.stdin && script::interactive_shell(behaviour, repo, &command, &args).is_some() {
                    run.lifetime = None;
                }
                script::fill_in(&mut run, pod_ref.split('_').next().unwrap_or_default(), now);
                c.container_id = new_container_id(rng);
                let from_objects = !c.spec.env_from.is_empty() || c.spec.env.iter().any(|v| v.value_from.is_some());
                c.env = from_objects.then(|| world.declared(&c.spec));
                actions.push(ev("Normal", "Created", "Container created".into()));
                actions.push(ev("Normal", "Started", "Container started".into()));
                for (offset, line) in &run.logs {
                    c.logs.push((now + *offset, line.clone()));
                }
                c.unfilled = run.logs.iter().any(|(_, l)| l.starts_with(script::PLACEHOLDER));
                // A process that holds more memory than its limit is killed by the kernel's
                // OOM killer as it allocates it.
                let limit = c.spec.resources.limits.get("memory").map(|q| q.value().max(0) as u64);
                c.oom = limit.is_some_and(|l| run.memory > l);
                let (exits_at, exit_code) = if c.oom {
                    (Some(now + Duration::millis(rng.between(300, 900))), 137)
                } else {
                    (run.lifetime.map(|d| now + d), run.exit_code)
                };
                c.state = State::Running { started: now, exits_at, exit_code };
                // A loop waiting on the world checks first at once.
                c.next_check = run.waits_for.as_ref().map(|_| now);
                c.run = Some(run);
                c.listening = script::listening(behaviour, &c.reference.repository, &command, &args);
                c.files = script::files(behaviour, &c.reference.repository, &command, &args);
                c.probe_kill = None;
                // The startup probe runs first; the others wait for it to succeed.
                let has_startup = c.probe(ProbeType::Startup).is_some();
                for p in &mut c.probes {
                    if p.kind == ProbeType::Startup || !has_startup {
                        p.start(now);
                    } else {
                        p.stop();
                    }
                }
            }
            State::Running { started, mut exits_at, exit_code } => {
                // A loop waiting on the world ends at the first check that finds it so.
                if let (Some(check), Some(wait)) = (c.next_check, c.run.as_ref().and_then(|r| r.waits_for.as_ref()))
                    && now >= check
                    && exits_at.is_none()
                {
                    if world.resolves(&wait.resolves) {
                        exits_at = Some(now);
                        c.next_check = None;
                        c.state = State::Running { started, exits_at, exit_code: 0 };
                    } else {
                        let rounds = now.since(check).0 / wait.period.0.max(1) + 1;
                        c.next_check = Some(check + Duration(wait.period.0 * rounds));
                    }
                }
                // The process ends on its own, or (being stopped for a failed probe) when that
                // stop completes.
                let (at, exit_code, by_probe) = match (c.probe_kill, exits_at) {
                    (Some((at, code)), _) if now >= at => (at, code, true),
                    (None, Some(at)) if now >= at => (at, exit_code, false),
                    _ => return,
                };
                let start_error = c.start_error.take();
                let terminated = ContainerStateTerminated {
                    exit_code,
                    reason: match exit_code {
                        _ if start_error.is_some() => "StartError".into(),
                        0 => "Completed".into(),
                        137 if c.oom && !by_probe => "OOMKilled".into(),
                        _ => "Error".into(),
                    },
                    // A process that never started has no start time (the runtime reports
                    // the Unix epoch).
                    started_at: start_error.is_none().then_some(started),
                    finished_at: Some(at),
                    container_id: c.container_id.clone(),
                    message: start_error.clone().unwrap_or_default(),
                    ..Default::default()
                };
                let previous_exit = c.last_termination.as_ref().and_then(|t| t.finished_at);
                c.logs.retain(|(t, _)| *t <= at);
                c.probe_kill = None;
                for p in &mut c.probes {
                    p.stop();
                }
                let restart = policy == "Always" || (policy == "OnFailure" && exit_code != 0);
                c.last_termination = Some(terminated.clone());
                c.state = State::Terminated(terminated);
                if restart {
                    // The kubelet checks the back-off against the latest exit it knows of when
                    // it decides to start the container again. After a crash that is this exit.
                    // A probe's restart is decided while the container still runs, so it looks
                    // at the exit before (none for the first instance: it restarts at once);
                    // only if that is still backing off does the next try see this one.
                    let seen = if by_probe { previous_exit } else { Some(at) };
                    let mut blocked = seen.and_then(|ts| backoff_blocks(c.backoff, ts, now));
                    if by_probe && blocked.is_some() {
                        blocked = backoff_blocks(c.backoff, at, now);
                    }
                    match blocked {
                        None => {
                            if let Some(ts) = seen {
                                backoff_advance(&mut c.backoff, ts, now);
                            }
                            c.restart_at = Some(now + Duration::millis(rng.between(500, 1500)));
                            // Until it is tried again, a container that could not start waits
                            // with the runtime's error.
                            if let Some(error) = start_error {
                                c.state = State::Waiting { reason: "RunContainerError".into(), message: error };
                            }
                        }
                        Some((until, wait)) => {
                            c.restart_at = Some(until);
                            c.backoff_pending = Some(at);
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
            }
            State::Terminated(_) if c.restart_at.is_some() && c.restart_at.is_some_and(|at| now >= at) => {
                c.state = State::Waiting { reason: String::new(), message: String::new() };
                self.step_container(i, policy, now, runtime, rng, actions, world);
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
                        field_path: format!(
                            "spec.{}{{{}}}",
                            if c.init { "initContainers" } else { "containers" },
                            c.spec.name
                        ),
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
        self.wakeup
    }

    /// Makes the worker wake at `at` (for tests of what keeps workers in wakeup order).
    #[cfg(test)]
    pub(super) fn set_wakeup(&mut self, at: Option<Time>) {
        self.wakeup = at;
    }

    fn compute_wakeup(&self) -> Option<Time> {
        let mut next: Option<Time> = None;
        let mut consider = |t: Time| next = Some(next.map_or(t, |n: Time| n.min(t)));
        if let (Some(at), None) = (self.sandbox_ready_at, &self.ip) {
            consider(at);
        }
        match (&self.mounted, self.mount_retry) {
            (None, Some((at, _))) => consider(at),
            (Some(_), _) if !self.terminating => self.remount_at.into_iter().for_each(&mut consider),
            _ => {}
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
                if let Some(at) = exits_at.or(c.next_check) {
                    consider(at);
                }
                if let Some(at) = c.stopping_until {
                    consider(at);
                }
                if let Some((at, _)) = c.probe_kill {
                    consider(at);
                }
                if !self.terminating {
                    c.probes.iter().filter_map(|p| p.next_at).for_each(&mut consider);
                }
            }
        }
        next
    }

    /// The names its containers' loops wait to see resolve (`until nslookup NAME`).
    pub fn waiting_for(&self) -> impl Iterator<Item = &str> + '_ {
        self.containers.iter().filter(|c| c.next_check.is_some()).filter_map(|c| {
            let wait = c.run.as_ref()?.waits_for.as_ref()?;
            Some(wait.resolves.as_str())
        })
    }

    /// Whether the pod will change on its own by `horizon` (not waiting out a back-off, not
    /// idle, not a process that runs on past it, like `sleep 3600`).
    pub fn busy(&self, horizon: Time) -> bool {
        if self.terminating {
            return !self.delete_sent;
        }
        if self.ip.is_none() {
            // Waiting out a volume's back-off is not work under way.
            return !self.mount_waiting();
        }
        let initialized = self.initialized();
        self.containers.iter().any(|c| {
            // An app container waiting for init containers still running is not under way.
            if !c.init && !initialized {
                return false;
            }
            // An image reference it cannot parse is waited on for good, not worked on.
            let invalid = matches!(&c.state, State::Waiting { reason, .. } if reason == "InvalidImageName");
            (matches!(c.image, ImageState::Pulling { .. } | ImageState::Unknown) && !invalid)
                || matches!(c.state, State::Running { exits_at: Some(t), .. } if t <= horizon)
                || (matches!(c.state, State::Terminated(_)) && c.restart_at.is_some() && c.restart_count <= 1)
                || matches!(&c.state, State::Waiting { reason, .. } if reason == "ContainerCreating")
                || (matches!(c.state, State::Running { .. }) && probes_pending(c))
        })
    }

    /// The pod's status as this worker sees it, built on the stored one.
    pub fn status(&self, pod: &Pod, now: Time) -> PodStatus {
        let stored = &pod.status;
        // Only what is kept from the stored status is copied: phase, conditions and the
        // container statuses are worked out afresh below.
        let (pod_ip, pod_ips) = match &self.ip {
            Some(ip) => (ip.clone(), vec![IpEntry { ip: ip.clone() }]),
            None => (stored.pod_ip.clone(), stored.pod_ips.clone()),
        };
        let mut status = PodStatus {
            phase: String::new(),
            conditions: Vec::new(),
            message: stored.message.clone(),
            reason: stored.reason.clone(),
            nominated_node_name: stored.nominated_node_name.clone(),
            host_ip: self.host_ip.clone(),
            host_ips: vec![IpEntry { ip: self.host_ip.clone() }],
            pod_ip,
            pod_ips,
            start_time: Some(stored.start_time.unwrap_or(self.started)),
            init_container_statuses: stored.init_container_statuses.clone(),
            container_statuses: Vec::new(),
            // Set by the API server when the pod was created, and never changed since.
            qos_class: if stored.qos_class.is_empty() { qos_class(pod).into() } else { stored.qos_class.clone() },
        };
        let initialized = self.initialized();
        let status_of = |c: &ContainerRun| {
            let ready = if c.init && !c.sidecar {
                matches!(&c.state, State::Terminated(t) if t.exit_code == 0)
            } else {
                c.ready()
            } && !self.terminating;
            let state = match &c.state {
                State::Waiting { reason, message } => ContainerState {
                    waiting: Some(ContainerStateWaiting {
                        // Until the init containers are done, the others wait for them.
                        reason: match reason.as_str() {
                            "" | "ContainerCreating" if !initialized => "PodInitializing".into(),
                            "" => "ContainerCreating".into(),
                            r => r.into(),
                        },
                        message: message.clone(),
                    }),
                    ..Default::default()
                },
                State::Running { started, .. } => ContainerState {
                    running: Some(ContainerStateRunning { started_at: Some(*started) }),
                    ..Default::default()
                },
                State::Terminated(t) => ContainerState { terminated: Some(Box::new(t.clone())), ..Default::default() },
            };
            let last_state = match (&c.state, &c.last_termination) {
                (State::Terminated(_), _) => ContainerState::default(),
                (_, Some(t)) => ContainerState { terminated: Some(Box::new(t.clone())), ..Default::default() },
                _ => ContainerState::default(),
            };
            let image_id = if c.image == ImageState::Present { images::digest(&c.reference) } else { String::new() };
            ContainerStatus {
                name: c.spec.name.clone(),
                state,
                last_state,
                ready,
                restart_count: c.restart_count,
                image: c.spec.image.clone(),
                image_id,
                container_id: c.container_id.clone(),
                started: Some(c.started()),
            }
        };
        // Sized exactly: every stored revision of the pod keeps these (a filtered collect
        // would reserve room for four statuses of ~0.5 KB each).
        let statuses = |init: bool| {
            let mut out = Vec::with_capacity(self.containers.iter().filter(|c| c.init == init).count());
            out.extend(self.containers.iter().filter(|c| c.init == init).map(status_of));
            out
        };
        status.init_container_statuses = statuses(true);
        status.container_statuses = statuses(false);
        // Phase.
        let policy = pod.restart_policy();
        let apps: Vec<&ContainerRun> = self.containers.iter().filter(|c| !c.init).collect();
        let never_started = apps.iter().any(|c| c.container_id.is_empty());
        let running = apps.iter().any(|c| matches!(c.state, State::Running { .. }));
        let restarting = apps.iter().any(|c| {
            c.restart_at.is_some() || matches!(&c.state, State::Waiting { reason, .. } if reason == "CrashLoopBackOff")
        });
        let codes: Vec<i32> = apps
            .iter()
            .filter_map(|c| if let State::Terminated(t) = &c.state { Some(t.exit_code) } else { None })
            .collect();
        let all_terminated = codes.len() == apps.len() && !apps.is_empty();
        // An init container that failed in a pod that never restarts fails the pod.
        let init_failed = policy == "Never"
            && self.containers.iter().any(|c| c.init && matches!(&c.state, State::Terminated(t) if t.exit_code != 0));
        status.phase = if init_failed {
            "Failed"
        } else if (!initialized || never_started) && !self.terminating {
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
        let cond = |type_: &'static str, ok: bool, reason: &str, message: String| PodCondition {
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
            // Only an unready condition carries the message.
            if done || all_ready { String::new() } else { format!("containers with unready status: [{}]", unready.join(" ")) };
        let incomplete: Vec<&str> = self
            .containers
            .iter()
            .enumerate()
            .filter(|(i, c)| c.init && !self.init_done(*i))
            .map(|(_, c)| c)
            .map(|c| c.spec.name.as_str())
            .collect();
        // Only an unmet condition carries the message.
        let incomplete_message = if incomplete.is_empty() {
            String::new()
        } else {
            format!("containers with incomplete status: [{}]", incomplete.join(" "))
        };
        let conditions = [
            cond("PodReadyToStartContainers", sandbox, "", String::new()),
            cond("Initialized", incomplete.is_empty(), "ContainersNotInitialized", incomplete_message),
            cond("Ready", all_ready, not_ready_reason, not_ready_message.clone()),
            cond("ContainersReady", all_ready, not_ready_reason, not_ready_message),
            cond("PodScheduled", true, "", String::new()),
        ];
        // Each condition as `set_condition` would leave it on the stored list: its transition
        // time kept while its status stays, `now` otherwise (done here without copying the
        // list for each condition).
        // Conditions others own (the scheduler's DisruptionTarget, readiness gates) are kept,
        // first, as the status manager merges them.
        let owned = |t: &str| conditions.iter().any(|c| c.type_ == t);
        let others: Vec<PodCondition> = stored.conditions.iter().filter(|c| !owned(&c.type_)).cloned().collect();
        status.conditions = others
            .into_iter()
            .chain(conditions.clone().into_iter().map(|mut c| {
                let existing = stored.conditions.iter().find(|x| x.type_ == c.type_);
                c.last_transition_time = match existing {
                    Some(e) if e.status == c.status => e.last_transition_time,
                    _ => Some(now),
                };
                c
            }))
            .collect();
        status
    }
}

/// A new container's id, as containerd names it: 64 hex digits.
fn new_container_id(rng: &mut Rng) -> String {
    const PREFIX: &str = "containerd://";
    let mut id = String::with_capacity(PREFIX.len() + 64);
    id.push_str(PREFIX);
    for _ in 0..4 {
        images::push_hex(&mut id, rng.next_u64());
    }
    id
}

/// A container as its process sees it: `$(cat …/serviceaccount/namespace)` in its command
/// reads the namespace file the service account volume mounts (the docs' init containers
/// build Service names with it).
fn with_namespace_file(c: &Arc<Container>, namespace: &str) -> Arc<Container> {
    const READ_NAMESPACE: &str = "$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace)";
    let reads = |c: &Container| c.command.iter().chain(c.args.iter()).any(|w| w.contains(READ_NAMESPACE));
    // Most containers read no such file: they share the pod's spec of them.
    if !reads(c) {
        return c.clone();
    }
    let mut c = c.clone();
    let spec = Arc::make_mut(&mut c);
    for word in spec.command.iter_mut().chain(spec.args.iter_mut()) {
        if word.contains(READ_NAMESPACE) {
            *word = word.replace(READ_NAMESPACE, namespace);
        }
    }
    c
}

/// Whether a running container's probes are about to decide something on their own: a
/// restart a probe asked for, a first start still waiting for its startup probe, a
/// readiness probe that has not run yet.
fn probes_pending(c: &ContainerRun) -> bool {
    c.probe_kill.is_some()
        || (c.restart_count == 0 && c.probe(ProbeType::Startup).is_some_and(|p| p.result.is_none()))
        || c.probe(ProbeType::Readiness).is_some_and(|p| !p.ran && p.next_at.is_some())
}

/// Whether the crash back-off holds a start back at `now`, given the finish time `ts` of the
/// latest exit: until when, and the wait. An entry not advanced for `BACKOFF_RESET` is stale.
fn backoff_blocks(entry: Option<(Duration, Time)>, ts: Time, now: Time) -> Option<(Time, Duration)> {
    let (wait, advanced) = entry?;
    if ts.since(advanced) > BACKOFF_RESET {
        return None;
    }
    let until = ts + wait;
    (now < until).then_some((until, wait))
}

/// A start goes ahead: the next one backs off twice as long (from 10 s up to 5 min), or
/// 10 s again if the entry went stale.
fn backoff_advance(entry: &mut Option<(Duration, Time)>, ts: Time, now: Time) {
    *entry = Some(match *entry {
        Some((wait, advanced)) if ts.since(advanced) <= BACKOFF_RESET => {
            (Duration((wait.0 * 2).min(CRASH_BACKOFF_MAX.0)), now)
        }
        _ => (CRASH_BACKOFF_INITIAL, now),
    });
}

fn start_pull(reference: &ImageRef, now: Time, runtime: &mut Runtime, rng: &mut Rng) -> ImageState {
    let result = runtime.registry.pull(reference).map(|info| info.size);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::pod::{ExecAction, Probe};
    use std::sync::Arc;

    #[test]
    fn a_container_id_is_containerds_prefix_and_four_random_words_in_zero_padded_hex() {
        let (mut a, mut b) = (Rng::stream(7, "ids"), Rng::stream(7, "ids"));
        for _ in 0..50 {
            let id = new_container_id(&mut a);
            let (w, x, y, z) = (b.next_u64(), b.next_u64(), b.next_u64(), b.next_u64());
            assert_eq!(id, format!("containerd://{w:016x}{x:016x}{y:016x}{z:016x}"));
        }
    }

    fn pod(container: Container) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = "p".into();
        pod.metadata.namespace = "default".into();
        pod.metadata.uid = "u".into();
        Arc::make_mut(&mut pod.spec).containers.push(container.into());
        pod
    }

    fn busybox(script: &str) -> Container {
        Container {
            name: "app".into(),
            image: "busybox:1.36".into(),
            command: vec!["sh".into(), "-c".into(), script.into()],
            ..Default::default()
        }
    }

    fn cat_probe(path: &str, period: i32) -> Probe {
        Probe {
            exec: Some(ExecAction { command: vec!["cat".into(), path.into()] }),
            period_seconds: period,
            ..Default::default()
        }
    }

    /// Steps the worker at each of its wake-ups until `until`, keeping the pod's status
    /// current; returns the events it reported, with their times.
    fn run(worker: &mut PodWorker, pod: &mut Pod, runtime: &mut Runtime, until: Time) -> Vec<(Time, String)> {
        run_writing(worker, pod, runtime, until).0
    }

    /// Events reported and statuses written, each with its time.
    type Reports = (Vec<(Time, String)>, Vec<(Time, PodStatus)>);

    /// `run`, also returning each status the kubelet would write (one that differs from the
    /// pod's), with its time.
    fn run_writing(worker: &mut PodWorker, pod: &mut Pod, runtime: &mut Runtime, until: Time) -> Reports {
        let mut rng = Rng::new(7);
        let (mut events, mut writes) = (Vec::new(), Vec::new());
        let mut now = Time::ZERO;
        while now <= until {
            for action in worker.step(pod, now, runtime, &mut rng, &mut || "10.244.1.2".to_string(), &|_: &str| false) {
                if let Action::Event { reason, message, .. } = action {
                    events.push((now, format!("{reason}: {message}")));
                }
            }
            if !worker.held() {
                let status = worker.status(pod, now);
                if status != *pod.status {
                    writes.push((now, status.clone()));
                    pod.status = status.into();
                }
            }
            match worker.next_wakeup() {
                Some(t) if t > now => now = t,
                Some(_) => now = now + Duration::millis(1),
                None => break,
            }
        }
        (events, writes)
    }

    fn seconds(t: Time) -> u64 {
        t.0 / 1000
    }

    #[test]
    fn init_containers_run_one_after_another_to_success_before_the_app_starts() {
        let mut pod = pod(busybox("echo app; sleep 600"));
        let init = |name: &str, script: &str| Container { name: name.into(), ..busybox(script) };
        Arc::make_mut(&mut pod.spec).init_containers =
            vec![init("first", "sleep 3").into(), init("second", "sleep 2").into()];
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        let events = run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(20));
        let started: Vec<u64> =
            events.iter().filter(|(_, e)| e.starts_with("Started:")).map(|(t, _)| seconds(*t)).collect();
        assert_eq!(started.len(), 3, "{events:?}");
        // Each starts once the one before has exited: 3 s, then 2 s later.
        assert!(started[1] >= started[0] + 3 && started[2] >= started[1] + 2, "{started:?}");
        assert_eq!(pod.status.phase, "Running");
        let done = |s: &ContainerStatus| s.state.terminated.as_ref().map(|t| t.reason.as_str()) == Some("Completed");
        assert!(pod.status.init_container_statuses.iter().all(done), "{:?}", pod.status.init_container_statuses);
        assert!(pod.status.conditions.iter().any(|c| c.type_ == "Initialized" && c.status == "True"));
    }

    #[test]
    fn a_sidecar_starts_before_the_app_runs_beside_it_and_stops_when_a_job_is_done() {
        let mut pod = pod(busybox("sleep 3"));
        Arc::make_mut(&mut pod.spec).restart_policy = Some("Never".into());
        let sidecar = Container {
            name: "shipper".into(),
            restart_policy: Some("Always".into()),
            ..busybox("tail -F /opt/logs.txt")
        };
        Arc::make_mut(&mut pod.spec).init_containers = vec![sidecar.into()];
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        let events = run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(2));
        let started = events.iter().filter(|(_, e)| e.starts_with("Started:")).count();
        assert_eq!(started, 2, "the sidecar, then the app: {events:?}");
        let sidecar = &pod.status.init_container_statuses[0];
        assert!(sidecar.state.running.is_some() && sidecar.ready, "{sidecar:?}");
        run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(20));
        assert_eq!(pod.status.phase, "Succeeded");
        let sidecar = &pod.status.init_container_statuses[0];
        assert_eq!(sidecar.state.terminated.as_ref().map(|t| t.exit_code), Some(0), "{sidecar:?}");
    }

    #[test]
    fn while_an_init_container_waits_the_pod_is_pending_and_not_initialized() {
        let mut pod = pod(busybox("sleep 600"));
        let wait = Container {
            name: "wait".into(),
            ..busybox("until nslookup db.default.svc.cluster.local; do echo waiting; sleep 2; done")
        };
        Arc::make_mut(&mut pod.spec).init_containers = vec![wait.into()];
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(30));
        assert_eq!(pod.status.phase, "Pending");
        let app = &pod.status.container_statuses[0];
        assert_eq!(app.state.waiting.as_ref().map(|w| w.reason.as_str()), Some("PodInitializing"));
        let initialized = pod.status.conditions.iter().find(|c| c.type_ == "Initialized").unwrap();
        assert_eq!(
            (initialized.status.as_ref(), initialized.message.as_str()),
            ("False", "containers with incomplete status: [wait]")
        );
        // Once the name resolves, the loop ends at its next check and the app starts.
        let mut rng = Rng::new(7);
        let now = Time::ZERO + Duration::seconds(31);
        let resolves = |name: &str| name == "db.default.svc.cluster.local";
        let mut at = now;
        for _ in 0..10 {
            worker.step(&pod, at, &mut runtime, &mut rng, &mut || "10.244.1.2".to_string(), &resolves);
            pod.status = worker.status(&pod, at).into();
            at = worker.next_wakeup().filter(|t| *t > at).unwrap_or(at + Duration::millis(500));
        }
        assert_eq!(pod.status.phase, "Running", "{:?}", pod.status);
    }

    #[test]
    fn a_failing_liveness_probe_restarts_the_container_once_its_grace_period_is_over() {
        let mut c = busybox("touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600");
        c.liveness_probe = Some(Box::new(Probe { initial_delay_seconds: 5, ..cat_probe("/tmp/healthy", 5) }));
        let mut pod = pod(c);
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        let events = run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(90));
        let unhealthy: Vec<u64> = events
            .iter()
            .filter(|(_, e)| e.starts_with("Unhealthy: Liveness probe failed: cat"))
            .map(|(t, _)| seconds(*t))
            .collect();
        assert_eq!(unhealthy.len(), 3, "{events:?}");
        let killed =
            events.iter().find(|(_, e)| e == "Killing: Container app failed liveness probe, will be restarted");
        let killed_at = killed.expect("killed").0;
        assert_eq!(seconds(killed_at), unhealthy[2]);
        // `sh` ignores SIGTERM: it dies by SIGKILL 30 s later, and is started again at once.
        let status = &pod.status.container_statuses[0];
        assert_eq!(status.restart_count, 1);
        let last = status.last_state.terminated.as_ref().unwrap();
        assert_eq!((last.exit_code, last.reason.as_str()), (137, "Error"));
        assert_eq!(last.finished_at, Some(killed_at + Duration::seconds(30)));
        assert!(status.state.running.is_some() && status.ready);
    }

    #[test]
    fn liveness_restarts_back_off_only_once_the_back_off_outlasts_the_time_between_them() {
        let mut c = busybox("touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600");
        c.liveness_probe = Some(Box::new(Probe { initial_delay_seconds: 5, ..cat_probe("/tmp/healthy", 5) }));
        let mut pod = pod(c);
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        // Every ~76 s the container is killed (after a 30 s grace period) and started again. The
        // back-off (10 s, 20 s, 40 s, 80 s) is measured from the exit before, so it first holds a
        // restart back when it reaches 80 s: after the fifth restart.
        let events = run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(500));
        let backoffs: Vec<&(Time, String)> = events.iter().filter(|(_, e)| e.starts_with("BackOff")).collect();
        assert_eq!(backoffs.len(), 1, "{events:?}");
        assert_eq!(pod.status.container_statuses[0].restart_count, 5);
        assert_eq!(pod.status.container_statuses[0].state.waiting.as_ref().unwrap().reason, "CrashLoopBackOff");
    }

    #[test]
    fn a_container_is_ready_only_once_its_readiness_probe_passes() {
        let mut c = busybox("sleep 8; touch /tmp/ready; sleep 3600");
        c.readiness_probe = Some(Box::new(cat_probe("/tmp/ready", 5)));
        let mut pod = pod(c);
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(5));
        assert!(pod.status.container_statuses[0].state.running.is_some());
        assert!(!pod.status.container_statuses[0].ready);
        assert_eq!(pod.condition("Ready").map(|c| c.status.as_ref()), Some("False"));
        run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(20));
        assert!(pod.status.container_statuses[0].ready);
        assert_eq!(pod.condition("ContainersReady").map(|c| c.status.as_ref()), Some("True"));
    }

    #[test]
    fn a_startup_probe_holds_back_started_and_ready_until_it_passes() {
        let mut c = busybox("sleep 12; touch /tmp/started; sleep 3600");
        c.startup_probe = Some(Box::new(Probe { failure_threshold: 10, ..cat_probe("/tmp/started", 5) }));
        c.liveness_probe = Some(Box::new(cat_probe("/tmp/nothing-here", 5)));
        let mut pod = pod(c);
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        let events = run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(10));
        assert_eq!(pod.status.container_statuses[0].started, Some(false));
        assert!(events.iter().all(|(_, e)| !e.contains("Liveness")), "{events:?}");
        run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(20));
        assert_eq!(pod.status.container_statuses[0].started, Some(true));
        assert!(pod.status.container_statuses[0].ready);
    }

    #[test]
    fn a_crashed_container_restarts_at_once_the_first_time_then_backs_off() {
        let mut pod = pod(busybox("sleep 3600"));
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        run(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(5));
        let now = Time::ZERO + Duration::seconds(6);
        worker.crash("app", now).unwrap();
        assert!(worker.crash("nope", now).is_err());
        run(&mut worker, &mut pod, &mut runtime, now + Duration::seconds(3));
        let status = &pod.status.container_statuses[0];
        assert_eq!(status.restart_count, 1);
        assert_eq!(status.last_state.terminated.as_ref().map(|t| t.exit_code), Some(137));
        let now = now + Duration::seconds(4);
        worker.crash("app", now).unwrap();
        run(&mut worker, &mut pod, &mut runtime, now + Duration::seconds(1));
        let waiting = pod.status.container_statuses[0].state.waiting.clone().unwrap();
        assert_eq!(waiting.reason, "CrashLoopBackOff");
        assert!(waiting.message.starts_with("back-off 10s restarting failed container=app"));
    }

    #[test]
    fn a_broken_image_fails_to_pull_where_it_is_missing_but_runs_where_it_is_present() {
        let registry = Registry::default();
        registry.break_image("busybox:1.36").unwrap();
        let mut missing = Runtime { registry: registry.clone(), ..Runtime::default() };
        let mut pod1 = pod(busybox("sleep 3600"));
        let mut worker = PodWorker::new(&pod1, Time::ZERO, "172.18.0.3");
        run(&mut worker, &mut pod1, &mut missing, Time::ZERO + Duration::seconds(3));
        let waiting = pod1.status.container_statuses[0].state.waiting.clone().unwrap();
        assert_eq!(waiting.reason, "ErrImagePull");
        assert!(waiting.message.ends_with("docker.io/library/busybox:1.36: not found"), "{}", waiting.message);
        let mut present = Runtime { registry, ..Runtime::default() };
        present.images.insert("docker.io/library/busybox:1.36".into());
        let mut pod2 = pod(busybox("sleep 3600"));
        let mut worker = PodWorker::new(&pod2, Time::ZERO, "172.18.0.4");
        run(&mut worker, &mut pod2, &mut present, Time::ZERO + Duration::seconds(3));
        assert!(pod2.status.container_statuses[0].state.running.is_some());
    }

    /// The waiting reason of a status's first app container, and the pod's IP.
    fn reason_and_ip(status: &PodStatus) -> (String, String) {
        let state = &status.container_statuses[0].state;
        let reason = match (&state.waiting, &state.running) {
            (Some(w), _) => w.reason.clone(),
            (None, Some(_)) => "Running".into(),
            _ => "Terminated".into(),
        };
        (reason, status.pod_ip.clone())
    }

    #[test]
    fn a_pod_that_pulls_its_image_reports_once_as_its_sync_begins_and_once_its_container_runs() {
        let mut pod = pod(busybox("sleep 3600"));
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        let (events, writes) = run_writing(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(30));
        assert!(events.iter().any(|(_, e)| e.starts_with("Pulling:")), "{events:?}");
        // The sandbox, the pull and the start are one call into the runtime: the status the
        // sync began with (no IP yet) stands until the container runs.
        let seen: Vec<(String, String)> = writes.iter().map(|(_, s)| reason_and_ip(s)).collect();
        assert_eq!(
            seen,
            [("ContainerCreating".into(), String::new()), ("Running".into(), "10.244.1.2".into())],
            "{writes:?}"
        );
        let started = events.iter().find(|(_, e)| e.starts_with("Started:")).map(|(t, _)| *t);
        assert_eq!(Some(writes[1].0), started);
        let ready = writes[1].1.conditions.iter().find(|c| c.type_ == "PodReadyToStartContainers").unwrap();
        assert_eq!(ready.status, "True");
    }

    #[test]
    fn a_failed_pull_ends_the_first_sync_and_reports_the_pods_ip_with_the_error() {
        let registry = Registry::default();
        registry.break_image("busybox:1.36").unwrap();
        let mut runtime = Runtime { registry, ..Runtime::default() };
        let mut pod = pod(busybox("sleep 3600"));
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let (_, writes) = run_writing(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(3));
        let seen: Vec<(String, String)> = writes.iter().map(|(_, s)| reason_and_ip(s)).collect();
        assert_eq!(
            seen,
            [("ContainerCreating".into(), String::new()), ("ErrImagePull".into(), "10.244.1.2".into())],
            "{writes:?}"
        );
    }

    #[test]
    fn the_first_sync_returns_once_the_first_init_container_has_started() {
        let mut pod = pod(busybox("sleep 3600"));
        let init = Container { name: "setup".into(), ..busybox("sleep 5") };
        Arc::make_mut(&mut pod.spec).init_containers = vec![init.into()];
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let mut runtime = Runtime::default();
        let (_, writes) = run_writing(&mut worker, &mut pod, &mut runtime, Time::ZERO + Duration::seconds(3));
        // Before the call, and once the init container runs (the app waits for it).
        assert_eq!(writes.len(), 2, "{writes:?}");
        let second = &writes[1].1;
        assert_eq!(second.pod_ip, "10.244.1.2");
        assert!(second.init_container_statuses[0].state.running.is_some(), "{second:?}");
    }
}

#[cfg(test)]
mod reference_tests {
    use super::*;
    use std::cell::Cell;

    /// A cluster where the ConfigMap the pod needs is there or not.
    struct World {
        present: Cell<bool>,
        content: Cell<&'static str>,
    }

    impl Surroundings for World {
        fn resolves(&self, _: &str) -> bool {
            false
        }
        fn environment(&self, container: &Container) -> Vec<(String, String)> {
            super::super::env::literal(container)
        }
        fn config_error(&self, _: &Container) -> Option<String> {
            (!self.present.get()).then(|| "configmap \"settings\" not found".to_string())
        }
        fn mount(&self, _: &Pod) -> Result<Mounted, (String, String)> {
            if !self.present.get() {
                let message = "MountVolume.SetUp failed for volume \"cfg\" : configmap \"settings\" not found";
                return Err(("cfg".into(), message.into()));
            }
            let files = volumes::Files::from([("mode".to_string(), self.content.get().to_string())]);
            Ok(Mounted::from([("cfg".to_string(), files)]))
        }
    }

    fn pod(volume: bool) -> Pod {
        let volumes = if volume {
            serde_json::json!([{"name": "cfg", "configMap": {"name": "settings"}}])
        } else {
            serde_json::json!([])
        };
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "default", "uid": "u"},
            "spec": {"containers": [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
                     "volumes": volumes}
        }))
        .expect("pod")
    }

    /// Steps the worker at each wake-up up to `until`, from `from`; returns the events with
    /// their times in seconds, and keeps the pod's status current.
    fn run(worker: &mut PodWorker, pod: &mut Pod, world: &World, from: Time, until: Time) -> Vec<(u64, String)> {
        let (mut rng, mut runtime) = (Rng::new(7), Runtime::default());
        let mut events = Vec::new();
        let mut now = from;
        while now <= until {
            for action in worker.step(pod, now, &mut runtime, &mut rng, &mut || "10.244.1.2".to_string(), world) {
                if let Action::Event { reason, message, .. } = action {
                    events.push((now.0 / 1000, format!("{reason}: {message}")));
                }
            }
            if !worker.held() {
                pod.status = worker.status(pod, now).into();
            }
            match worker.next_wakeup() {
                Some(t) if t > now => now = t,
                Some(_) => now = now + Duration::millis(1),
                None => break,
            }
        }
        events
    }

    fn waiting_reason(pod: &Pod) -> String {
        let state = &pod.status.container_statuses[0].state;
        state.waiting.as_ref().map(|w| w.reason.clone()).unwrap_or_else(|| "running".into())
    }

    #[test]
    fn a_container_whose_config_map_is_missing_waits_as_create_container_config_error_until_it_appears() {
        let world = World { present: Cell::new(false), content: Cell::new("") };
        let mut pod = pod(false);
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let events = run(&mut worker, &mut pod, &world, Time::ZERO, Time(40_000));
        assert_eq!(waiting_reason(&pod), CONFIG_ERROR);
        let failures: Vec<u64> = events
            .iter()
            .filter(|(_, e)| e == "Failed: Error: configmap \"settings\" not found")
            .map(|(t, _)| *t)
            .collect();
        assert!(failures.len() >= 3, "tried again on the sync back-off: {events:?}");
        assert!(failures.windows(2).all(|w| (10..=15).contains(&(w[1] - w[0]))), "{failures:?}");
        assert!(worker.config_waiting().count() == 1 && !worker.busy(Time(u64::MAX)));
        world.present.set(true);
        run(&mut worker, &mut pod, &world, Time(40_001), Time(60_000));
        assert_eq!(waiting_reason(&pod), "running");
    }

    #[test]
    fn a_pod_whose_volume_cannot_be_mounted_stays_container_creating_and_retries_on_a_doubling_back_off() {
        let world = World { present: Cell::new(false), content: Cell::new("fast") };
        let mut pod = pod(true);
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        let events = run(&mut worker, &mut pod, &world, Time::ZERO, Time(20_000));
        let tries: Vec<u64> = events.iter().filter(|(_, e)| e.starts_with("FailedMount: ")).map(|(t, _)| *t).collect();
        // At 0, 0.5, 1.5, 3.5, 7.5 and 15.5 s.
        assert_eq!(tries, [0, 0, 1, 3, 7, 15]);
        assert_eq!(waiting_reason(&pod), "ContainerCreating");
        assert!(pod.status.pod_ip.is_empty(), "no sandbox before the volumes");
        assert!(worker.mount_waiting() && !worker.busy(Time(u64::MAX)), "waiting out a back-off");
        world.present.set(true);
        run(&mut worker, &mut pod, &world, Time(20_001), Time(60_000));
        assert_eq!(waiting_reason(&pod), "running");
        assert_eq!(worker.mounted().expect("mounted")["cfg"]["mode"], "fast");
    }

    #[test]
    fn a_mounted_volumes_files_are_written_again_at_the_pods_periodic_sync() {
        let world = World { present: Cell::new(true), content: Cell::new("fast") };
        let mut pod = pod(true);
        let mut worker = PodWorker::new(&pod, Time::ZERO, "172.18.0.3");
        run(&mut worker, &mut pod, &world, Time::ZERO, Time(5_000));
        world.content.set("slow");
        run(&mut worker, &mut pod, &world, Time(5_001), Time(59_000));
        assert_eq!(worker.mounted().expect("mounted")["cfg"]["mode"], "fast", "not before the next sync");
        run(&mut worker, &mut pod, &world, Time(59_001), Time(91_000));
        assert_eq!(worker.mounted().expect("mounted")["cfg"]["mode"], "slow", "within a minute and a half");
    }
}
