//! One controller's reconciliation loop for one object (PICTURES.md §4): what its cache holds
//! (observe), desired against actual (compare), what it does about it (act), and each turn of
//! the loop the record kept, with the change that woke it.
//!
//! Read from the controller's lanes (its present state) and the record (its decisions and the
//! requests it sent, each with its cause); nothing here changes the cluster.

use crate::api::Kind;
use crate::client::component::cache_key;
use crate::cluster::{Cluster, Role};
use crate::record::{ComponentId, Entry, Happening, Seq};
use crate::sim::{Duration, Time};
use crate::util::sort::StableSort;
use std::collections::{BTreeSet, HashMap};

/// What the loop panel shows for one controller.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReconcileView {
    /// The controller's name: `replicaset-controller`.
    pub controller: String,
    /// The keys it has lanes or turns for (`default/web-6766cbdd68`), in key order: the
    /// objects the student may pick from.
    pub objects: Vec<String>,
    /// The key shown: the one asked for, else the latest the controller acted on.
    pub object: String,
    /// What its informer cache holds about the object: `my cache: 2 pods of web-6766cbdd68`.
    pub observe: String,
    /// Desired against actual: `want 3 · have 2`.
    pub compare: String,
    /// What it does about the difference: `create 1 pod through the API`, or
    /// `nothing to do, keep watching`.
    pub act: String,
    /// Nothing to do: desired and actual agree.
    pub idle: bool,
    /// The turns of the loop for the object, newest first, at most [`MAX_TURNS`].
    pub turns: Vec<Turn>,
}

/// One turn of the loop: woken by a change, it compared and acted (or found nothing to do).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Turn {
    /// The record entry that began the turn (its decision, or its first request).
    pub seq: Seq,
    /// Virtual time, as the page's clock reads: `t = 1m4.358s`.
    pub at: String,
    /// etcd's revision once the turn's writes were stored.
    pub revision: i64,
    /// What woke it: `watch: MODIFIED pod/web-x, after kubectl's DELETE`, or `resync`.
    pub trigger: String,
    pub want: Option<i64>,
    pub have: Option<i64>,
    /// `create 1`, `delete 1`, `nothing to do`, or the controller's own words for other work
    /// (`Scaled up replica set web-x from 1 to 5`).
    pub action: String,
    /// The writes it sent the API server, alike ones counted: `POST pods ×2`,
    /// `PUT replicasets/web-x/status` (its Events are not listed: their messages are the action).
    pub writes: Vec<String>,
}

/// The most turns a view keeps.
pub const MAX_TURNS: usize = 12;
/// How far back into the record the view looks for turns.
const LOOK_BACK: usize = 20_000;
/// A turn's action when the controller found desired and actual in agreement.
pub const NOTHING_TO_DO: &str = "nothing to do";
/// The act station when the latest turn found nothing to do.
pub const KEEP_WATCHING: &str = "nothing to do, keep watching";

/// The loop of the controller named `controller` (`replicaset-controller`, or the map's
/// `controller/replicaset-controller`) for `object` (a key such as `default/web-x`), or for the
/// latest object it acted on; None when no controller has that name.
pub fn reconcile_view(cluster: &Cluster, controller: &str, object: Option<&str>) -> Option<ReconcileView> {
    let name = controller.strip_prefix("controller/").unwrap_or(controller);
    let id =
        cluster.component_ids().find(|&id| cluster.component_role(id).and_then(Role::control_loop) == Some(name))?;
    let own = own_kind(name);
    let lanes: Vec<(String, String)> = cluster
        .component_state(id)
        .0
        .iter()
        .filter_map(|l| l.split_once(": ").map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    let drafts = drafts(cluster, id, own);
    let objects: BTreeSet<String> = lanes
        .iter()
        .map(|(k, _)| k.clone())
        .chain(drafts.iter().map(|d| d.key.clone()))
        .filter(|k| !k.is_empty())
        .collect();
    let object = match object {
        Some(o) => o.to_string(),
        None => drafts
            .iter()
            .rev()
            .find(|d| d.acted())
            .or_else(|| drafts.last())
            .map(|d| d.key.clone())
            .or_else(|| lanes.first().map(|(k, _)| k.clone()))
            .unwrap_or_default(),
    };
    let turns: Vec<Turn> =
        drafts.iter().rev().filter(|d| d.key == object).take(MAX_TURNS).map(|d| d.turn(cluster)).collect();
    let lane = lanes.iter().find(|(k, _)| *k == object).map(|(_, l)| LaneState::parse(l));
    let lines = Lines::of(cluster, name, &object, lane, turns.first());
    Some(ReconcileView {
        controller: name.to_string(),
        objects: objects.into_iter().collect(),
        object,
        observe: lines.observe,
        compare: lines.compare,
        act: lines.act,
        idle: lines.idle,
        turns,
    })
}

/// The kind a controller reconciles, whose keys its lanes and queue hold.
fn own_kind(controller: &str) -> Option<Kind> {
    Some(match controller {
        "deployment-controller" => Kind::Deployment,
        "replicaset-controller" => Kind::ReplicaSet,
        "replication-controller" => Kind::ReplicationController,
        "daemonset-controller" => Kind::DaemonSet,
        "statefulset-controller" => Kind::StatefulSet,
        "job-controller" => Kind::Job,
        "cronjob-controller" => Kind::CronJob,
        "endpoints-controller" => Kind::Endpoints,
        "namespace-controller" => Kind::Namespace,
        "serviceaccount-controller" => Kind::ServiceAccount,
        "node-lifecycle-controller" => Kind::Node,
        _ => return None,
    })
}

/// What a controller makes, for its act line: `pod`/`pods`.
fn noun(controller: &str, n: i64) -> &'static str {
    let one = n == 1;
    match controller {
        "cronjob-controller" => {
            if one {
                "job"
            } else {
                "jobs"
            }
        }
        "replicaset-controller"
        | "replication-controller"
        | "daemonset-controller"
        | "statefulset-controller"
        | "job-controller" => {
            if one {
                "pod"
            } else {
                "pods"
            }
        }
        _ => {
            if one {
                "object"
            } else {
                "objects"
            }
        }
    }
}

/// A turn as it is gathered from the record.
struct Draft {
    seq: Seq,
    time: Time,
    revision: i64,
    trigger: Option<Seq>,
    key: String,
    decision: Option<String>,
    /// (method, resource, name, status subresource), in order.
    writes: Vec<(&'static str, &'static str, String, bool)>,
    /// The messages of the Events it reported during the turn.
    events: Vec<String>,
}

impl Draft {
    /// Whether the turn did more than write status.
    fn acted(&self) -> bool {
        self.decision.is_some() || !self.events.is_empty() || self.writes.iter().any(|w| !w.3)
    }

    fn turn(&self, cluster: &Cluster) -> Turn {
        let mut want = None;
        let mut have = None;
        let action = match self.decision.as_deref().map(split_decision) {
            Some((_, rest)) => match want_have(rest) {
                Some((w, h, action)) => {
                    (want, have) = (Some(w), Some(h));
                    action.to_string()
                }
                None if starts_with_verb(rest) || rest.contains(": ") || self.writes.iter().all(|w| w.3) => {
                    rest.to_string()
                }
                None => format!("{rest}: {}", self.changes()),
            },
            None if !self.events.is_empty() => {
                if let [only] = self.events.as_slice() {
                    if let Some((from, to)) = scaled(only) {
                        (want, have) = (Some(to), Some(from));
                    }
                }
                self.events.join("; ")
            }
            None if self.writes.iter().any(|w| !w.3) => self.changes(),
            None => NOTHING_TO_DO.to_string(),
        };
        Turn {
            seq: self.seq,
            at: at(self.time),
            revision: self.revision,
            trigger: trigger(cluster, self.trigger),
            want,
            have,
            action,
            writes: self.write_lines(),
        }
    }

    /// Its writes other than status, in words: `update endpoints/kube-dns, create pods ×2`.
    fn changes(&self) -> String {
        let words = |line: String| {
            let (method, rest) = line.split_once(' ').unwrap_or(("", &line));
            let verb = match method {
                "POST" => "create",
                "PUT" => "update",
                "PATCH" => "patch",
                "DELETE" => "delete",
                other => other,
            };
            format!("{verb} {rest}")
        };
        self.write_lines().into_iter().filter(|l| !l.contains("/status")).map(words).collect::<Vec<_>>().join(", ")
    }

    /// The writes, alike ones counted: `POST pods ×3`, `PUT replicasets/web-x/status`.
    fn write_lines(&self) -> Vec<String> {
        // (method, resource, status) and the names written.
        type Group<'a> = ((&'a str, &'a str, bool), Vec<&'a str>);
        let mut groups: Vec<Group> = Vec::new();
        for (method, resource, name, status) in &self.writes {
            let k = (*method, *resource, *status);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, names)) => names.push(name),
                None => groups.push((k, vec![name])),
            }
        }
        groups
            .into_iter()
            .map(|((method, resource, status), names)| {
                let sub = if status { "/status" } else { "" };
                match names.as_slice() {
                    [name] => format!("{method} {resource}/{name}{sub}"),
                    [name, ..] if names.iter().all(|n| n == name) => {
                        format!("{method} {resource}/{name}{sub} ×{}", names.len())
                    }
                    _ => format!("{method} {resource}{sub} ×{}", names.len()),
                }
            })
            .collect()
    }
}

/// How entries are gathered into turns: everything that followed from one decision, or else
/// what one run sent for one key, woken by one change.
#[derive(Clone, PartialEq, Eq, Hash)]
enum GroupId {
    Decision(Seq),
    Run(Option<Seq>, Time, String),
}

/// The controller's turns in the record's reach, oldest first.
fn drafts(cluster: &Cluster, id: ComponentId, own: Option<Kind>) -> Vec<Draft> {
    let record = &cluster.record;
    let mut mine: Vec<&Entry> = record.entries().rev().take(LOOK_BACK).filter(|e| e.actor == id).collect();
    mine.reverse();
    let mut drafts: Vec<Draft> = Vec::new();
    let mut groups: HashMap<GroupId, usize> = HashMap::new();
    // The latest turn of each run (woken by one change at one time), for writes whose key is
    // not known.
    let mut last_run: HashMap<(Option<Seq>, Time), usize> = HashMap::new();
    for e in mine {
        // Reads (an informer's list and watch) and refused requests change nothing.
        if let Happening::Request { verb, failed_at, .. } = &e.what {
            if matches!(*verb, "get" | "list" | "watch") || failed_at.is_some() {
                continue;
            }
        }
        // Back through its own entries to the change that woke it; the nearest decision on
        // the way is the turn it belongs to.
        let mut decision = matches!(e.what, Happening::Decision { .. }).then_some(e);
        let mut first = e;
        for _ in 0..32 {
            match first.cause.and_then(|c| record.get(c)) {
                Some(c) if c.actor == id => {
                    if decision.is_none() && matches!(c.what, Happening::Decision { .. }) {
                        decision = Some(c);
                    }
                    first = c;
                }
                _ => break,
            }
        }
        let trigger = first.cause;
        let index = match decision {
            Some(d) => {
                let key = match &d.what {
                    Happening::Decision { text } => decision_key(text),
                    _ => None,
                };
                let key = key.or_else(|| request_key(cluster, own, e)).unwrap_or_else(|| trigger_key(cluster, trigger));
                *groups.entry(GroupId::Decision(d.seq)).or_insert_with(|| {
                    let text = match &d.what {
                        Happening::Decision { text } => text.clone(),
                        _ => String::new(),
                    };
                    drafts.push(Draft::new(d, trigger, key, Some(text)));
                    drafts.len() - 1
                })
            }
            None => {
                let run = (trigger, e.time);
                let key = request_key(cluster, own, e)
                    .or_else(|| last_run.get(&run).map(|&i| drafts[i].key.clone()))
                    .unwrap_or_else(|| trigger_key(cluster, trigger));
                let i = *groups.entry(GroupId::Run(trigger, e.time, key.clone())).or_insert_with(|| {
                    drafts.push(Draft::new(e, trigger, key, None));
                    drafts.len() - 1
                });
                last_run.insert(run, i);
                i
            }
        };
        let draft = &mut drafts[index];
        draft.revision = draft.revision.max(e.revision);
        if let Happening::Request { method, kind, namespace, name, path, .. } = &e.what {
            if *kind == Kind::Event {
                if let Some(message) = event_message(cluster, namespace, name) {
                    if !draft.events.contains(&message) {
                        draft.events.push(message);
                    }
                }
            } else {
                draft.writes.push((method, kind.info().resource, name.clone(), path.ends_with("/status")));
            }
        }
    }
    drafts
}

impl Draft {
    fn new(first: &Entry, trigger: Option<Seq>, key: String, decision: Option<String>) -> Draft {
        Draft {
            seq: first.seq,
            time: first.time,
            revision: first.revision,
            trigger,
            key,
            decision,
            writes: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// `ReplicaSet default/web-x: want 3, have 2: create 1` → `default/web-x`.
fn decision_key(text: &str) -> Option<String> {
    let (kind, rest) = text.split_once(' ')?;
    if !kind.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let key = rest.split([':', ' ']).next().filter(|k| !k.is_empty())?;
    Some(key.to_string())
}

/// A decision's words after its kind and key: `want 3, have 2: create 1`.
fn split_decision(text: &str) -> (Option<String>, &str) {
    match decision_key(text) {
        Some(key) => {
            let after = text.split_once(' ').map_or("", |(_, r)| r);
            let rest = after[key.len()..].trim_start_matches(':').trim_start();
            (Some(key), rest)
        }
        None => (None, text),
    }
}

/// `want 3, have 2: create 1` (or a Job's `want 2 active, have 1: create 1`) → (3, 2, `create 1`).
fn want_have(rest: &str) -> Option<(i64, i64, &str)> {
    let rest = rest.strip_prefix("want ")?;
    let (want, rest) = rest.split_once(", have ")?;
    let (have, action) = rest.split_once(": ")?;
    let number = |s: &str| s.split_whitespace().next()?.parse::<i64>().ok();
    Some((number(want)?, number(have)?, action))
}

fn starts_with_verb(text: &str) -> bool {
    ["create ", "delete ", "update", "scale", "deleting ", "orphaned ", "removing "].iter().any(|v| text.starts_with(v))
}

/// `Scaled up replica set web-x from 1 to 5` → (1, 5).
fn scaled(message: &str) -> Option<(i64, i64)> {
    if !message.starts_with("Scaled ") {
        return None;
    }
    let (_, numbers) = message.rsplit_once(" from ")?;
    let (from, to) = numbers.split_once(" to ")?;
    Some((from.trim().parse().ok()?, to.trim().parse().ok()?))
}

/// The key of the object a request was about, as the controller's queue names it: its own
/// kind's objects by their key, others by their controlling owner's or (Events) by the object
/// they are about. None when it cannot tell.
fn request_key(cluster: &Cluster, own: Option<Kind>, e: &Entry) -> Option<String> {
    let Happening::Request { kind, namespace, name, .. } = &e.what else { return None };
    let own = own?;
    if *kind == own {
        return Some(cache_key(namespace, name));
    }
    let object = cluster.inspect().get(*kind, namespace, name)?;
    if let Some(event) = object.as_event() {
        let about = &event.involved_object;
        return (about.kind == own.info().kind).then(|| cache_key(&about.namespace, &about.name));
    }
    let owner = object.controller_ref().filter(|r| r.kind == own.info().kind)?;
    Some(cache_key(namespace, &owner.name))
}

/// The object a change was about, as the key of last resort.
fn trigger_key(cluster: &Cluster, trigger: Option<Seq>) -> String {
    match trigger.and_then(|t| cluster.record.get(t)).map(|e| &e.what) {
        Some(Happening::Notify { namespace, name, .. } | Happening::Request { namespace, name, .. }) => {
            cache_key(namespace, name)
        }
        _ => String::new(),
    }
}

fn event_message(cluster: &Cluster, namespace: &str, name: &str) -> Option<String> {
    let object = cluster.inspect().get(Kind::Event, namespace, name)?;
    Some(object.as_event()?.message.clone())
}

/// Virtual time as the page's clock reads it, to the millisecond: `t = 1m4.358s`.
fn at(time: Time) -> String {
    format!("t = {}", Duration(time.0))
}

/// What woke a turn, in words.
fn trigger(cluster: &Cluster, cause: Option<Seq>) -> String {
    let Some(seq) = cause else { return "resync".to_string() };
    let Some(entry) = cluster.record.get(seq) else {
        return "an earlier change (no longer in the record)".to_string();
    };
    let who = cluster.component_name(entry.actor);
    match &entry.what {
        Happening::Notify { event, kind, name, .. } => {
            let mut text = format!("watch: {} {}/{name}", event.as_str(), kind.info().singular);
            if let Some(Entry { actor, what: Happening::Request { method, .. }, .. }) =
                entry.cause.and_then(|c| cluster.record.get(c))
            {
                text.push_str(&format!(", after {}'s {method}", cluster.component_name(*actor)));
            }
            text
        }
        Happening::Request { method, kind, name, .. } => {
            format!("{who}'s {method} {}/{name}", kind.info().resource)
        }
        Happening::Decision { text } => format!("{who} decided: {text}"),
        Happening::KubeletCall { to, method, path } => {
            format!("{who}'s {method} {path} on {}", cluster.component_name(*to))
        }
    }
}

/// A controller's lane, read back from its text.
#[derive(Debug, PartialEq)]
enum LaneState {
    /// `want 3 · have 2 → create 1` (ReplicaSet, DaemonSet, CronJob).
    WantHave {
        want: i64,
        have: i64,
        action: String,
    },
    /// `want 2 · active 1 · succeeded 0 · failed 0 → create 1` (Job).
    Job {
        want: i64,
        active: i64,
        succeeded: i64,
        failed: i64,
        action: String,
    },
    /// `2 ready, 0 not ready` (Endpoints).
    Ready {
        ready: i64,
        not_ready: i64,
    },
    /// `2 endpoints (1 ready) in 1 slice(s)` (EndpointSlices).
    Slices {
        endpoints: i64,
        ready: i64,
        slices: i64,
    },
    Other(String),
}

impl LaneState {
    fn parse(lane: &str) -> LaneState {
        let (counts, action) = lane.split_once(" → ").unwrap_or((lane, ""));
        let action = action.to_string();
        let fields: Vec<(&str, Option<i64>)> = counts
            .split(" · ")
            .map(|f| match f.rsplit_once(' ') {
                Some((name, n)) => (name, n.parse().ok()),
                None => (f, None),
            })
            .collect();
        let field = |name: &str| fields.iter().find(|(n, _)| *n == name).and_then(|(_, v)| *v);
        let number = |s: &str| s.split_whitespace().next().and_then(|n| n.parse::<i64>().ok());
        if let (Some(want), Some(have), 2) = (field("want"), field("have"), fields.len()) {
            return LaneState::WantHave { want, have, action };
        }
        if let (Some(want), Some(active), Some(succeeded), Some(failed)) =
            (field("want"), field("active"), field("succeeded"), field("failed"))
        {
            return LaneState::Job { want, active, succeeded, failed, action };
        }
        if let Some((ready, not_ready)) = lane.split_once(" ready, ").filter(|(_, r)| r.ends_with(" not ready")) {
            if let (Some(ready), Some(not_ready)) = (number(ready), number(not_ready)) {
                return LaneState::Ready { ready, not_ready };
            }
        }
        if let Some((endpoints, rest)) = lane.split_once(" endpoints (") {
            let (ready, slices) = rest.split_once(" ready) in ").unwrap_or(("", ""));
            if let (Some(endpoints), Some(ready), Some(slices)) = (number(endpoints), number(ready), number(slices)) {
                return LaneState::Slices { endpoints, ready, slices };
            }
        }
        LaneState::Other(lane.to_string())
    }
}

/// The three stations' lines.
struct Lines {
    observe: String,
    compare: String,
    act: String,
    idle: bool,
}

impl Lines {
    fn of(cluster: &Cluster, controller: &str, key: &str, lane: Option<LaneState>, latest: Option<&Turn>) -> Lines {
        let short = key.rsplit('/').next().unwrap_or(key);
        let pods = |n: i64| if n == 1 { "pod" } else { "pods" };
        // Where the lane says nothing of acting, the latest turn does.
        let from_turn = |observe: String, compare: String| match latest {
            Some(t) if t.action != NOTHING_TO_DO => {
                Lines { observe, compare, act: act_line(controller, &t.action), idle: false }
            }
            _ => Lines { observe, compare, act: KEEP_WATCHING.to_string(), idle: true },
        };
        let from_lane = |observe: String, compare: String, action: &str| {
            if action.is_empty() {
                Lines { observe, compare, act: KEEP_WATCHING.to_string(), idle: true }
            } else {
                Lines { observe, compare, act: act_line(controller, action), idle: false }
            }
        };
        match lane {
            Some(LaneState::WantHave { want, have, action }) => {
                let what = match controller {
                    "daemonset-controller" => {
                        if have == 1 {
                            "daemon pod"
                        } else {
                            "daemon pods"
                        }
                    }
                    "cronjob-controller" => {
                        if have == 1 {
                            "active job"
                        } else {
                            "active jobs"
                        }
                    }
                    _ => noun(controller, have),
                };
                from_lane(format!("my cache: {have} {what} of {short}"), format!("want {want} · have {have}"), &action)
            }
            Some(LaneState::Job { want, active, succeeded, failed, action }) => from_lane(
                format!(
                    "my cache: {active} active {} of {short} ({succeeded} succeeded, {failed} failed)",
                    pods(active)
                ),
                format!("want {want} active · have {active}"),
                &action,
            ),
            Some(LaneState::Ready { ready, not_ready }) => from_turn(
                format!("my cache: {ready} ready and {not_ready} not-ready {} behind {short}", pods(ready + not_ready)),
                format!("Endpoints {short} should list {ready} ready, {not_ready} not ready"),
            ),
            Some(LaneState::Slices { endpoints, ready, slices }) => from_turn(
                format!("my cache: {endpoints} endpoints ({ready} ready) for {short}"),
                format!("its slices should hold {endpoints} endpoints in {slices} slice(s)"),
            ),
            Some(LaneState::Other(raw)) => {
                let compare = want_have_line(latest).unwrap_or_else(|| raw.clone());
                from_turn(format!("my cache: {raw}"), compare)
            }
            None => match deployment_state(cluster, controller, key) {
                Some((want, sets)) => {
                    let have: i64 = sets.iter().map(|(_, n)| n).sum();
                    let listed: Vec<String> = sets.iter().map(|(name, n)| format!("{name} ({n})")).collect();
                    let observe = match listed.as_slice() {
                        [] => format!("my cache: Deployment {short} wants {want}; it has no ReplicaSet"),
                        _ => format!("my cache: Deployment {short} wants {want}; ReplicaSets {}", listed.join(", ")),
                    };
                    let compare = match sets.len() {
                        0 | 1 => format!("want {want} · have {have}"),
                        n => format!("want {want} · have {have} across {n} ReplicaSets"),
                    };
                    // It has what it wants once one ReplicaSet holds all the replicas.
                    if want == have && sets.iter().filter(|(_, n)| *n > 0).count() <= 1 {
                        Lines { observe, compare, act: KEEP_WATCHING.to_string(), idle: true }
                    } else {
                        from_turn(observe, compare)
                    }
                }
                None if key.is_empty() => from_turn(
                    "my cache: nothing it has acted on yet".to_string(),
                    "desired against actual: nothing to compare yet".to_string(),
                ),
                None => {
                    let observe = match latest {
                        Some(t) => format!("my cache: {key}, last changed by {}", t.trigger),
                        None => format!("my cache: nothing about {key}"),
                    };
                    let compare =
                        want_have_line(latest).unwrap_or_else(|| "desired against actual: not summarised".into());
                    from_turn(observe, compare)
                }
            },
        }
    }
}

fn want_have_line(turn: Option<&Turn>) -> Option<String> {
    let t = turn?;
    Some(format!("want {} · have {}", t.want?, t.have?))
}

/// The act station's line for an action: `create 1` → `create 1 pod through the API`.
fn act_line(controller: &str, action: &str) -> String {
    let counted = |verb: &str| {
        let n: i64 = action.strip_prefix(verb)?.strip_prefix(' ')?.parse().ok()?;
        Some(format!("{verb} {n} {} through the API", noun(controller, n)))
    };
    if let Some(line) = counted("create").or_else(|| counted("delete")) {
        return line;
    }
    let action = match action.strip_prefix("Scaled ") {
        Some(rest) => format!("scale {rest}"),
        None => action.to_string(),
    };
    format!("{action} through the API")
}

/// A Deployment's wanted replicas and its ReplicaSets' sizes (name, spec.replicas), newest
/// first, for the deployment controller, which keeps no lanes of counts.
fn deployment_state(cluster: &Cluster, controller: &str, key: &str) -> Option<(i64, Vec<(String, i64)>)> {
    if controller != "deployment-controller" {
        return None;
    }
    let (namespace, name) = key.split_once('/')?;
    let object = cluster.inspect().get(Kind::Deployment, namespace, name)?;
    let d = object.as_deployment()?;
    let mut sets: Vec<(Option<Time>, String, i64)> = cluster
        .objects(Kind::ReplicaSet, namespace)
        .iter()
        .filter(|rs| rs.controller_ref().is_some_and(|r| r.uid == d.metadata.uid))
        .filter_map(|rs| rs.as_replica_set())
        .map(|rs| (rs.metadata.creation_timestamp, rs.metadata.name.clone(), i64::from(rs.spec.replicas.unwrap_or(1))))
        .collect();
    sets.stable_sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // Old ReplicaSets scaled to zero are history, not part of what it has.
    let mut sets: Vec<(String, i64)> =
        sets.into_iter().enumerate().filter(|(i, s)| *i == 0 || s.2 > 0).map(|(_, s)| (s.1, s.2)).collect();
    sets.truncate(4);
    Some((i64::from(d.spec.replicas.unwrap_or(1)), sets))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    fn run(s: &mut Session, line: &str) -> crate::kubectl::Output {
        s.execute(&Command::new(line))
    }

    /// A settled cluster with a 3-replica Deployment `web`; the name of its ReplicaSet.
    fn web() -> (Session, String) {
        let mut s = Session::new(1);
        run(&mut s, "kubectl create deployment web --image=nginx:1.25 --replicas=3");
        run(&mut s, "sim settle");
        let rs = s.cluster.objects(Kind::ReplicaSet, "default")[0].name().to_string();
        (s, rs)
    }

    fn rs_view(s: &Session, rs: &str) -> ReconcileView {
        reconcile_view(&s.cluster, "replicaset-controller", Some(&format!("default/{rs}"))).expect("a view")
    }

    #[test]
    fn deleting_a_pod_shows_a_turn_want_3_have_2_create_1_woken_by_its_deletion() {
        let (mut s, rs) = web();
        let pod = s.cluster.objects(Kind::Pod, "default")[0].name().to_string();
        run(&mut s, &format!("kubectl delete pod {pod} --wait=false"));
        // Step until the controller has taken its turn: the stations show it acting.
        let mut acting = None;
        for _ in 0..200 {
            s.cluster.step();
            let view = reconcile_view(&s.cluster, "controller/replicaset-controller", None).unwrap();
            if !view.idle {
                acting = Some(view);
                break;
            }
        }
        let view = acting.expect("the loop turned");
        assert_eq!(view.object, format!("default/{rs}"), "the latest object it acted on");
        assert_eq!(view.observe, format!("my cache: 2 pods of {rs}"));
        assert_eq!(view.compare, "want 3 · have 2");
        assert_eq!(view.act, "create 1 pod through the API");
        let turn = &view.turns[0];
        assert_eq!((turn.want, turn.have, turn.action.as_str()), (Some(3), Some(2), "create 1"));
        assert!(turn.trigger.starts_with(&format!("watch: MODIFIED pod/{pod}")), "{}", turn.trigger);
        assert!(turn.trigger.ends_with("after kubectl's DELETE"), "{}", turn.trigger);
        assert!(
            turn.writes.contains(&"POST pods".to_string()) || turn.writes.iter().any(|w| w.starts_with("POST pods/"))
        );
        // Once the replacement is counted, the loop finds nothing to do.
        run(&mut s, "sim settle");
        let view = rs_view(&s, &rs);
        assert!(view.idle);
        assert!(view.turns.iter().any(|t| t.action == "create 1" && t.trigger.contains(&pod)));
    }

    #[test]
    fn scaling_up_shows_a_turn_that_creates_the_difference() {
        let (mut s, rs) = web();
        run(&mut s, "kubectl scale deployment web --replicas=5");
        run(&mut s, "sim settle");
        let view = rs_view(&s, &rs);
        let turn = view.turns.iter().find(|t| t.action.starts_with("create")).expect("a create turn");
        assert_eq!((turn.want, turn.have, turn.action.as_str()), (Some(5), Some(3), "create 2"));
        assert_eq!(turn.trigger, format!("watch: MODIFIED replicaset/{rs}, after deployment-controller's PUT"));
        assert!(turn.writes.contains(&"POST pods ×2".to_string()), "{:?}", turn.writes);
        assert_eq!(view.compare, "want 5 · have 5");
        // The deployment controller's side of it: the Deployment's new size passed on.
        let d = reconcile_view(&s.cluster, "deployment-controller", Some("default/web")).unwrap();
        assert!(d.turns.iter().any(|t| t.action.contains("replicas changed to 5")), "{:#?}", d.turns);
        assert_eq!(d.compare, "want 5 · have 5");
    }

    #[test]
    fn a_settled_replicaset_shows_nothing_to_do() {
        let (s, rs) = web();
        let view = rs_view(&s, &rs);
        assert!(view.idle);
        assert_eq!(view.observe, format!("my cache: 3 pods of {rs}"));
        assert_eq!(view.compare, "want 3 · have 3");
        assert_eq!(view.act, KEEP_WATCHING);
        assert!(view.objects.contains(&format!("default/{rs}")), "{:?}", view.objects);
        assert!(view.objects.iter().any(|o| o.starts_with("kube-system/coredns-")), "{:?}", view.objects);
        // Its first turn, when the ReplicaSet appeared, created all three.
        let first = view.turns.last().unwrap();
        assert_eq!((first.want, first.have, first.action.as_str()), (Some(3), Some(0), "create 3"));
        assert_eq!(first.trigger, format!("watch: ADDED replicaset/{rs}, after deployment-controller's POST"));
        assert!(view.turns.len() <= MAX_TURNS);
        assert!(view.turns.windows(2).all(|w| w[0].seq > w[1].seq), "newest first");
    }

    #[test]
    fn a_manual_fix_gets_undone() {
        // Sizing the ReplicaSet by hand: its Deployment's controller puts it back.
        let (mut s, rs) = web();
        run(&mut s, &format!("kubectl scale replicaset {rs} --replicas=1"));
        run(&mut s, "sim settle");
        assert_eq!(
            s.cluster.inspect().get(Kind::ReplicaSet, "default", &rs).unwrap().as_replica_set().unwrap().spec.replicas,
            Some(3)
        );
        let view = reconcile_view(&s.cluster, "deployment-controller", None).unwrap();
        assert_eq!(view.object, "default/web");
        let undo = view.turns.iter().find(|t| t.trigger.contains("after kubectl's")).expect("the turn the change woke");
        assert!(undo.trigger.starts_with(&format!("watch: MODIFIED replicaset/{rs}")), "{}", undo.trigger);
        assert_eq!(undo.action, format!("Scaled up replica set {rs} from 1 to 3"));
        assert_eq!((undo.want, undo.have), (Some(3), Some(1)));
        assert_eq!(undo.writes, [format!("PUT replicasets/{rs}")]);
        assert_eq!(view.compare, "want 3 · have 3");
        assert!(view.idle, "{view:#?}");
    }

    #[test]
    fn a_pod_taken_out_of_its_replicaset_by_a_label_is_replaced_in_one_turn() {
        let (mut s, rs) = web();
        let pod = s.cluster.objects(Kind::Pod, "default")[0].name().to_string();
        run(&mut s, &format!("kubectl label pod {pod} app=debug --overwrite"));
        run(&mut s, "sim settle");
        let view = rs_view(&s, &rs);
        let turn = view.turns.iter().find(|t| t.action == "create 1").expect("a replacement");
        assert_eq!((turn.want, turn.have), (Some(3), Some(2)));
        // The label change wakes the turn: the controller lets go of the pod (its PUT drops the
        // owner reference) and, one short, creates its replacement in the same sync.
        assert_eq!(turn.trigger, format!("watch: MODIFIED pod/{pod}, after kubectl's PATCH"));
        assert!(turn.writes.iter().any(|w| w.starts_with("POST pods/")), "{:?}", turn.writes);
        assert!(view.idle);
    }

    #[test]
    fn unknown_controller_gives_none() {
        let (s, _) = web();
        assert!(reconcile_view(&s.cluster, "frobnicator-controller", None).is_none());
        assert!(reconcile_view(&s.cluster, "kube-scheduler", None).is_none(), "the scheduler is no controller");
    }

    #[test]
    fn lanes_of_each_known_format_read_back() {
        assert_eq!(
            LaneState::parse("want 3 · have 2 → create 1"),
            LaneState::WantHave { want: 3, have: 2, action: "create 1".into() }
        );
        assert_eq!(
            LaneState::parse("want 2 · active 1 · succeeded 0 · failed 0"),
            LaneState::Job { want: 2, active: 1, succeeded: 0, failed: 0, action: String::new() }
        );
        assert_eq!(LaneState::parse("2 ready, 0 not ready"), LaneState::Ready { ready: 2, not_ready: 0 });
        assert_eq!(
            LaneState::parse("2 endpoints (1 ready) in 1 slice(s)"),
            LaneState::Slices { endpoints: 2, ready: 1, slices: 1 }
        );
        assert_eq!(LaneState::parse("scheduled at 10:00"), LaneState::Other("scheduled at 10:00".into()));
        assert_eq!(want_have("want 2 active, have 1: create 1"), Some((2, 1, "create 1")));
        assert_eq!(
            decision_key("Service kube-system/kube-dns is gone: delete its Endpoints").as_deref(),
            Some("kube-system/kube-dns")
        );
        assert_eq!(decision_key("deleting 3 pods in namespace x"), None);
        assert_eq!(act_line("daemonset-controller", "create 1, delete 1"), "create 1, delete 1 through the API");
    }
}
