//! Leader election through a Lease, as client-go's `tools/leaderelection` runs it for
//! kube-scheduler and kube-controller-manager: every instance tries to take the Lease; the
//! one holding it renews it every retry period and acts; the others poll it and take over
//! only once its holder has let it go unrenewed for the lease's duration (measured on their
//! own clocks, from when they last saw it change). Writes are optimistic: an update names
//! the resourceVersion it read, so of two standbys racing for an expired Lease one wins.

use crate::api::{Kind, Lease, LeaseSpec, Object, ObjectMeta};
use crate::apiserver::Request;
use crate::client::component::{Component, Ctx, Informer};
use crate::sim::time::MicroTime;
use crate::sim::{Duration, Time};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

/// How long a Lease holds without renewal (kube-scheduler's and kube-controller-manager's
/// `--leader-elect-lease-duration`).
pub const LEASE_DURATION: Duration = Duration::seconds(15);
/// How long the leader keeps trying to renew before it gives up leading
/// (`--leader-elect-renew-deadline`).
pub const RENEW_DEADLINE: Duration = Duration::seconds(10);
/// How often the leader renews and a standby tries (`--leader-elect-retry-period`).
pub const RETRY_PERIOD: Duration = Duration::seconds(2);
/// A standby's tries are spread over up to 1.2 retry periods more (client-go's jitter factor).
const JITTER_PERMILLE: u64 = 1200;
/// How long a try's round trip to the API server takes: client-go waits the retry period
/// after a try returns, so the tries drift off whole seconds (and off the kubelets' beats).
const ROUND_TRIP: Duration = Duration::millis(1);
/// Where the components' Leases live.
pub const NAMESPACE: &str = "kube-system";

/// One candidate's side of an election for the Lease `kube-system/<name>`.
#[derive(Debug)]
pub struct LeaderElector {
    name: String,
    identity: String,
    /// The Lease as this candidate last read or wrote it, and when (its own clock) it last
    /// saw the record change: a holder that stays silent for the lease's duration after
    /// that is gone.
    observed: Option<Arc<Object>>,
    observed_time: Time,
    leading: Rc<Cell<bool>>,
    /// When the leader last renewed (it gives up after the renew deadline without one).
    renewed: Time,
    due: Time,
    /// It lost the Lease it held since this was last taken (its process restarts).
    lost: bool,
    /// The chance the API server draws on for what this candidate creates (the Lease's uid,
    /// its Events'), kept apart from the stream every other request draws from, so that a
    /// cluster's other names and uids are what they were before leader election existed.
    draws: crate::sim::Rng,
    /// Lines the component printed that its container's log has not taken yet, each as
    /// `file:line] text`, without klog's header (its time is the container's to give).
    log: Vec<(Time, String)>,
}

impl LeaderElector {
    /// A candidate for `kube-system/<name>` that calls itself `identity` (`<host>_<uuid>`).
    pub fn new(name: &str, identity: String, draws: crate::sim::Rng) -> Self {
        LeaderElector {
            name: name.into(),
            identity,
            draws,
            observed: None,
            observed_time: Time::ZERO,
            leading: Rc::new(Cell::new(false)),
            renewed: Time::ZERO,
            due: Time::ZERO,
            lost: false,
            log: Vec::new(),
        }
    }

    /// The identity a component on `host` takes: the host name and a fresh UUID, as
    /// kube-scheduler and kube-controller-manager make theirs at start.
    pub fn identity_for(host: &str, rng: &mut crate::sim::Rng) -> String {
        let hex = rng.string(b"0123456789abcdef", 32);
        format!("{host}_{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }

    pub fn lease_name(&self) -> &str {
        &self.name
    }

    pub fn is_leader(&self) -> bool {
        self.leading.get()
    }

    /// A handle on whether this candidate leads, for the process's other parts (the
    /// controllers of a kube-controller-manager).
    pub fn leading_handle(&self) -> Rc<Cell<bool>> {
        self.leading.clone()
    }

    /// When the election next wants to run.
    pub fn due(&self) -> Time {
        self.due
    }

    /// Whether it lost its Lease since last asked.
    pub fn take_lost(&mut self) -> bool {
        std::mem::take(&mut self.lost)
    }

    /// The lines printed since last taken, with when.
    pub fn take_log(&mut self) -> Vec<(Time, String)> {
        std::mem::take(&mut self.log)
    }

    fn print(&mut self, now: Time, site: &str, text: String) {
        self.log.push((now, format!("{site}] {text}")));
    }

    /// The process starts: it announces the election and tries at once.
    pub fn start(&mut self, ctx: &mut Ctx) {
        let text = format!("attempting to acquire leader lease {NAMESPACE}/{}...", self.name);
        self.print(ctx.now, "leaderelection.go:257", text);
        self.due = ctx.now;
        self.step(ctx);
    }

    /// Runs the election if it is due: a try to acquire (standby) or to renew (leader).
    /// Returns whether this candidate just started leading.
    pub fn step(&mut self, ctx: &mut Ctx) -> bool {
        if ctx.now < self.due {
            return false;
        }
        std::mem::swap(ctx.api_rng, &mut self.draws);
        let became = self.elect(ctx);
        std::mem::swap(ctx.api_rng, &mut self.draws);
        became
    }

    fn elect(&mut self, ctx: &mut Ctx) -> bool {
        let won = self.try_acquire_or_renew(ctx);
        if self.leading.get() {
            if won {
                self.renewed = ctx.now;
            } else if ctx.now.since(self.renewed) >= RENEW_DEADLINE {
                let text = format!("failed to renew lease {NAMESPACE}/{}: context deadline exceeded", self.name);
                self.print(ctx.now, "leaderelection.go:297", text);
                ctx.decide(|| format!("lost the lease {NAMESPACE}/{}: not renewed within {RENEW_DEADLINE}", self.name));
                self.leading.set(false);
                // The process exits and its kubelet starts it again: a candidate anew, under a
                // new identity, which waits out the Lease its former self held.
                let host = self.identity.rsplit_once('_').map_or("", |(h, _)| h).to_string();
                self.identity = Self::identity_for(&host, ctx.rng);
                self.observed = None;
                self.lost = true;
                let text = format!("attempting to acquire leader lease {NAMESPACE}/{}...", self.name);
                self.print(ctx.now, "leaderelection.go:257", text);
            }
            self.due = ctx.now + ROUND_TRIP + RETRY_PERIOD;
            return false;
        }
        if won {
            self.leading.set(true);
            self.renewed = ctx.now;
            self.due = ctx.now + ROUND_TRIP + RETRY_PERIOD;
            let text = format!("successfully acquired lease {NAMESPACE}/{}", self.name);
            self.print(ctx.now, "leaderelection.go:271", text);
            if let Some(lease) = self.observed.clone() {
                ctx.event(&lease, "", "Normal", "LeaderElection", format!("{} became leader", self.identity));
            }
            return true;
        }
        let jitter = ctx.api_rng.below(RETRY_PERIOD.0 * JITTER_PERMILLE / 1000 + 1);
        self.due = ctx.now + ROUND_TRIP + RETRY_PERIOD + Duration(jitter);
        false
    }

    /// The Lease as this candidate would write it, from what it read (`None`: nothing yet).
    fn claim(&self, read: Option<&Lease>, now: Time) -> Lease {
        let mut lease = read.cloned().unwrap_or_else(|| Lease {
            metadata: ObjectMeta { name: self.name.clone(), namespace: NAMESPACE.into(), ..Default::default() },
            spec: LeaseSpec { lease_transitions: Some(0), ..Default::default() },
            ..Default::default()
        });
        let old = lease.spec.clone();
        let ours = old.holder_identity.as_deref() == Some(self.identity.as_str());
        lease.spec = LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some((LEASE_DURATION.0 / 1000) as i32),
            acquire_time: if ours { old.acquire_time } else { Some(MicroTime(now)) },
            renew_time: Some(MicroTime(now)),
            lease_transitions: match (read.is_some(), ours) {
                (true, false) => Some(old.lease_transitions.unwrap_or(0) + 1),
                _ => old.lease_transitions.or(Some(0)),
            },
            ..old
        };
        lease
    }

    fn took(&mut self, object: Arc<Object>, now: Time) -> bool {
        self.observed = Some(object);
        self.observed_time = now;
        true
    }

    fn try_acquire_or_renew(&mut self, ctx: &mut Ctx) -> bool {
        let now = ctx.now;
        // The leader's fast path: it writes over the version it last wrote, without reading.
        if self.leading.get() && now < self.observed_time + LEASE_DURATION {
            let mine = self.observed.as_deref().and_then(lease_of).cloned();
            if let Some(mine) = mine {
                let lease = self.claim(Some(&mine), now);
                if let Ok(written) = ctx.call_object(Request::update(Object::Lease(lease))) {
                    return self.took(written, now);
                }
            }
        }
        let read = match ctx.call_object(Request::get(Kind::Lease, NAMESPACE, &self.name)) {
            Ok(object) => object,
            Err(status) if status.code == 404 => {
                let lease = self.claim(None, now);
                return match ctx.call_object(Request::create(Object::Lease(lease))) {
                    Ok(created) => self.took(created, now),
                    Err(_) => false,
                };
            }
            Err(_) => return false,
        };
        let Some(current) = lease_of(&read).cloned() else { return false };
        let changed = self.observed.as_deref().and_then(lease_of).is_none_or(|seen| {
            seen.spec != current.spec || seen.metadata.resource_version != current.metadata.resource_version
        });
        if changed {
            self.observed = Some(read.clone());
            self.observed_time = now;
        }
        let holder = current.spec.holder_identity.as_deref().unwrap_or("");
        let duration = Duration::seconds(current.spec.lease_duration_seconds.unwrap_or(15).max(0) as u64);
        if !holder.is_empty() && holder != self.identity && now < self.observed_time + duration {
            return false;
        }
        let lease = self.claim(Some(&current), now);
        match ctx.call_object(Request::update(Object::Lease(lease))) {
            Ok(written) => self.took(written, now),
            Err(_) => false,
        }
    }
}

/// A klog line as the component prints it at `at`: `I0101 00:01:19.676074       1 ` before
/// `site] text` (its microseconds told apart by the line's number `n`).
pub fn klog_line(at: Time, n: u64, site_and_text: &str) -> String {
    let rfc = at.rfc3339();
    let (date, time) = rfc.split_once('T').unwrap_or(("", ""));
    let month_day: String = date.split('-').skip(1).collect();
    let micros = (at.0 % 1000) * 1000 + n * 37 % 1000;
    format!("I{month_day} {}.{micros:06}       1 {site_and_text}", time.trim_end_matches('Z'))
}

fn lease_of(object: &Object) -> Option<&Lease> {
    match object {
        Object::Lease(lease) => Some(lease),
        _ => None,
    }
}

/// A component that acts only while its instance leads: it takes part in the election from
/// the start, and starts its own work (informers, loops) once it has won. Views and faults
/// reach the component inside (`as_any`), as if it ran alone.
pub struct Elected<C: Component> {
    pub elector: LeaderElector,
    inner: C,
    inner_started: bool,
    /// A fresh component, for when the process restarts.
    make: fn() -> C,
}

impl<C: Component> Elected<C> {
    pub fn new(elector: LeaderElector, make: fn() -> C) -> Self {
        Elected { elector, inner: make(), inner_started: false, make }
    }

    fn act(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.elector.step(ctx);
        if self.elector.take_lost() {
            // Its process exits on losing the Lease and starts again: what it knew goes, and
            // it lists afresh once it leads again.
            let me = ctx.me;
            ctx.watches().close_watches_of(me);
            self.inner = (self.make)();
            self.inner_started = false;
        }
        let work = if !self.elector.is_leader() {
            None
        } else if self.inner_started {
            self.inner.run(ctx)
        } else {
            self.inner_started = true;
            self.inner.start(ctx)
        };
        Some(match work {
            Some(t) => t.min(self.elector.due()),
            None => self.elector.due(),
        })
    }
}

impl<C: Component> Component for Elected<C> {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.elector.start(ctx);
        self.act(ctx)
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.act(ctx)
    }

    fn busy(&self) -> bool {
        self.elector.is_leader() && self.inner_started && self.inner.busy()
    }

    fn busy_in(&self, api_answers: bool, horizon: Time) -> bool {
        self.elector.is_leader() && self.inner_started && self.inner.busy_in(api_answers, horizon)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self.inner.as_any()
    }

    fn informers(&self) -> Vec<&Informer> {
        if self.inner_started { self.inner.informers() } else { Vec::new() }
    }

    fn lanes(&self) -> Vec<String> {
        self.inner.lanes()
    }

    fn queued(&self) -> Vec<String> {
        self.inner.queued()
    }

    fn busy_until(&self) -> Option<Time> {
        self.inner.busy_until()
    }

    fn take_log(&mut self) -> Vec<(Time, String)> {
        self.elector.take_log()
    }

    fn inner_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(&mut self.inner)
    }

    fn standing_by(&self) -> bool {
        !self.elector.is_leader()
    }
}

/// kube-controller-manager's own part: the election. Its controllers run as components of
/// their own that act only while an instance of the manager leads (see the cluster).
pub struct ControllerManager {
    pub elector: LeaderElector,
}

impl Component for ControllerManager {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.elector.start(ctx);
        Some(self.elector.due())
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.elector.step(ctx);
        Some(self.elector.due())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn take_log(&mut self) -> Vec<(Time, String)> {
        self.elector.take_log()
    }
}
