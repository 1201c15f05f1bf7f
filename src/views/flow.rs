//! The chain, animated: each API request and watch notification the record holds, as a
//! message travelling on the control-plane map — kubectl → the API server's stages → etcd, the
//! API server → a watcher (scheduler, controller, kubelet) — paced so a student can follow, and
//! bundled ("×37 watch events") when more happen than the eye can take in.
//!
//! A pure view model: the page passes its animation clock in (real milliseconds); nothing here
//! reads a clock, and every message stands for entries the record holds.

use crate::cluster::{Cluster, Role};
use crate::record::{ComponentId, Entry, Happening, Seq, Stage};
use std::collections::VecDeque;

mod raft;
mod webhook;

/// A box on the map where a message starts or ends.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Place {
    Kubectl,
    ApiServer,
    Etcd,
    Scheduler,
    /// A controller's lane in the controller manager (`replicaset-controller`).
    Controller(String),
    /// A node's kubelet.
    Kubelet(String),
    /// A node's kube-proxy.
    KubeProxy(String),
    /// A node's container runtime (containerd), which only its kubelet calls.
    Runtime(String),
    /// A node's CNI plugin agent (`calico-node`).
    Cni(String),
    /// CoreDNS, the cluster's DNS add-on.
    CoreDns,
    /// Another add-on running as pods and talking to the API (`local-path-provisioner`).
    AddOn(String),
    /// Many nodes at once (a bundle of messages to or from several of them).
    Nodes,
    /// One member of etcd's Raft group (a cluster of several control-plane nodes), by name.
    EtcdMember(String),
    /// A pod the API server calls (an admission webhook's Service backend): its node, its
    /// name, and its place among the node's pods as the node's box lists them.
    Pod {
        node: String,
        pod: String,
        slot: u32,
    },
}

impl Place {
    /// How the map names it (a message's `data-from` and `data-to`).
    pub fn name(&self) -> String {
        match self {
            Place::Kubectl => "kubectl".into(),
            Place::ApiServer => "kube-apiserver".into(),
            Place::Etcd => "etcd".into(),
            Place::Scheduler => "kube-scheduler".into(),
            Place::Controller(name) => name.clone(),
            Place::Kubelet(node) => format!("kubelet/{node}"),
            Place::KubeProxy(node) => format!("kube-proxy/{node}"),
            Place::Runtime(node) => format!("containerd/{node}"),
            Place::Cni(node) => format!("cni/{node}"),
            Place::CoreDns => "coredns".into(),
            Place::AddOn(name) => name.clone(),
            Place::Nodes => "nodes".into(),
            Place::EtcdMember(name) => format!("etcd/{name}"),
            Place::Pod { pod, .. } => format!("pod/{pod}"),
        }
    }
}

/// One message on its way.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// The first record entry it stands for: unique among messages, a key for the page.
    pub id: Seq,
    pub from: Place,
    pub to: Place,
    /// `POST pods`, `bind pod/web-…`, `watch: ADDED pod/web-…`, `×37 watch events`.
    pub label: String,
    /// How many record entries it stands for.
    pub count: u32,
    /// The API server's pipeline stages it passes through on the way (a request: all six when
    /// stored; up to the refusing one when refused; a notification: none).
    pub stages: u8,
    /// A request's later leg: it starts at this stage (1 for the first), where an admission
    /// webhook's answer let it go on; 0: from its sender.
    #[serde(default)]
    pub from_stage: u8,
    pub refused: bool,
    /// 0 as it leaves, 1 as it arrives.
    pub progress: f64,
    /// The animation clock when it left.
    pub started_ms: f64,
    /// What happened, in one plain sentence (several notifications of one write: one
    /// sentence for them all).
    pub caption: String,
}

impl Message {
    /// In words, for screen readers: `POST pods: kubectl → kube-apiserver → etcd`.
    pub fn describe(&self) -> String {
        let via = if self.stages > 0 && self.to != Place::ApiServer { " → kube-apiserver" } else { "" };
        let refused = if self.refused { " (refused)" } else { "" };
        format!("{}: {}{via} → {}{refused}", self.label, self.from.name(), self.to.name())
    }
}

/// How fast messages go, from the simulation's speed (and presenter mode's slow motion).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    /// Real milliseconds from sender to receiver.
    pub travel_ms: f64,
    /// Real milliseconds between two departures, so a chain reads in order.
    pub gap_ms: f64,
    /// At most this many on the map at once.
    pub in_flight: usize,
    /// The teaching pace: one hop at a time, each with its sentence; a component's decisions
    /// are steps of their own; background chatter (Events, heartbeats) is passed over, only
    /// counted; nothing is bundled.
    pub teaching: bool,
}

impl Pace {
    pub fn new(speed: f64, slow_motion: bool) -> Pace {
        let speed = if speed.is_finite() && speed > 0.0 { speed } else { 1.0 };
        let slow = if slow_motion { 1.6 } else { 1.0 };
        let travel_ms = (1400.0 / speed.sqrt()).clamp(450.0, 2800.0) * slow;
        Pace { travel_ms, gap_ms: travel_ms / 6.0, in_flight: IN_FLIGHT, teaching: false }
    }

    /// One hop at a time, each long enough to read: it travels for `TEACHING_TRAVEL_MS` and
    /// the next leaves `TEACHING_GAP_MS` after it (longer in presenter mode's slow motion).
    pub fn teaching(slow_motion: bool) -> Pace {
        let slow = if slow_motion { 1.4 } else { 1.0 };
        Pace {
            travel_ms: TEACHING_TRAVEL_MS * slow,
            gap_ms: TEACHING_GAP_MS * slow,
            in_flight: IN_FLIGHT,
            teaching: true,
        }
    }
}

/// Real milliseconds a hop travels at the teaching pace.
pub const TEACHING_TRAVEL_MS: f64 = 900.0;
/// Real milliseconds from one hop's departure to the next at the teaching pace: it arrives,
/// then rests a moment while its sentence is read.
pub const TEACHING_GAP_MS: f64 = 1400.0;

const IN_FLIGHT: usize = 16;
/// More waiting than this and the waiting messages are bundled by sender and receiver.
const QUEUE: usize = 48;
/// Names longer than this are cut with `…`.
const NAME_CHARS: usize = 18;

/// A message's ends before they are named: cheap to compare when bundling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Kubectl,
    Api,
    Etcd,
    Component(ComponentId),
    /// The container runtime beside a kubelet (the kubelet's id).
    Runtime(ComponentId),
    Nodes,
    /// An etcd member, by its place in the Raft group.
    Member(u8),
    /// The pod an admission webhook call went to: the record entry of the call, which names it.
    Pod(Seq),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Request,
    Watch,
    /// A kubelet's call to its container runtime (pull, create, start, stop).
    Runtime,
    /// A component's decision, shown at the component (teaching pace only).
    Note,
    /// A message between etcd's members (AppendEntries, its acknowledgement, a vote).
    Raft,
    /// The API server's call to an admission webhook, or the webhook's answer.
    Webhook,
}

/// A message waiting to leave: its ends and what it stands for, named only when it leaves.
#[derive(Clone, Debug)]
struct Hop {
    /// The (first) record entry it stands for.
    id: Seq,
    from: End,
    to: End,
    class: Class,
    count: u32,
    stages: u8,
    refused: bool,
    /// Notifications of one write leave together (a fan-out); `None` leaves alone.
    wave: Option<i64>,
    /// 0: the message of record entry `id` itself; more: another leg or step drawn from it
    /// (a request's leg after a webhook, a vote of the election a leader change ends).
    part: u8,
    /// A request's later leg starts at this stage (see [`Message::from_stage`]).
    from_stage: u8,
    /// Its label and sentence, when they are not the entry's own.
    said: Option<(String, String)>,
}

impl Hop {
    /// A hop of one entry with nothing else to say: no stages, not refused, alone.
    fn new(id: Seq, from: End, to: End, class: Class) -> Hop {
        Hop { id, from, to, class, count: 1, stages: 0, refused: false, wave: None, part: 0, from_stage: 0, said: None }
    }

    /// The message's key: the entry's own number, or (another leg or step) one no entry has.
    fn key(&self) -> Seq {
        if self.part == 0 { self.id } else { DERIVED | (self.id << 5) | u64::from(self.part) }
    }
}

/// Keys of messages drawn from an entry that are not the entry's own message (above any
/// record sequence number).
const DERIVED: Seq = 1 << 62;

/// The messages on the map, fed from the record frame by frame.
#[derive(Debug)]
pub struct Flow {
    /// The last record entry taken in.
    cursor: Seq,
    queue: VecDeque<Hop>,
    flying: Vec<Message>,
    last_departure: f64,
    last_wave: Option<i64>,
    /// The sentence of the latest departure.
    caption: String,
    /// Background entries passed over at the teaching pace since the last departure.
    passed_over: u64,
    /// etcd's revision after the entry of the latest departure.
    revision: Option<i64>,
}

impl Flow {
    /// A flow that shows what happens after `cursor` (the record's history stays still).
    pub fn new(cursor: Seq) -> Flow {
        Flow {
            cursor,
            queue: VecDeque::new(),
            flying: Vec::new(),
            last_departure: f64::NEG_INFINITY,
            last_wave: None,
            caption: String::new(),
            passed_over: 0,
            revision: None,
        }
    }

    /// Takes in the record's new entries, lets arrived messages go and new ones leave, and
    /// returns the messages on the map at `now_ms`.
    pub fn frame(&mut self, cluster: &Cluster, now_ms: f64, pace: Pace) -> &[Message] {
        self.take_in(cluster, pace);
        let travel = pace.travel_ms.max(1.0);
        self.flying.retain(|m| now_ms - m.started_ms < travel);
        while self.flying.len() < pace.in_flight.max(1) {
            let Some(hop) = self.queue.front() else { break };
            // A write's notifications leave together, and so do the bundles of one flood (those
            // the map had no room for leave as soon as it has); other departures keep their
            // spacing, a late frame sending the overdue one at once.
            let at = match hop.wave {
                Some(w) if self.last_wave == Some(w) => {
                    if now_ms - self.last_departure < pace.gap_ms {
                        self.last_departure
                    } else {
                        now_ms
                    }
                }
                _ if self.last_departure + pace.gap_ms < now_ms - pace.gap_ms => now_ms,
                _ => self.last_departure + pace.gap_ms,
            };
            if at > now_ms {
                break;
            }
            let mut message = Self::launch(cluster, hop, at);
            if pace.teaching
                && hop.wave.is_some()
                && self.last_wave != hop.wave
                && !matches!(hop.class, Class::Watch | Class::Raft)
            {
                let more = self.queue.iter().skip(1).take_while(|h| h.wave == hop.wave).count();
                if more > 0 {
                    message.caption = format!("{} The same happens on {more} more node(s).", message.caption);
                }
            }
            if hop.wave.is_some() && self.last_wave != hop.wave && hop.class == Class::Watch {
                // The first of a write's notifications speaks for them all.
                let wave: Vec<&Entry> = self
                    .queue
                    .iter()
                    .take_while(|h| h.wave == hop.wave && h.class == Class::Watch)
                    .filter_map(|h| cluster.record.get(h.id))
                    .collect();
                if wave.len() > 1 {
                    message.caption = crate::views::caption::caption_wave(cluster, &wave);
                }
            }
            if self.last_wave != hop.wave || hop.wave.is_none() {
                self.caption = message.caption.clone();
                self.passed_over = 0;
            }
            if let Some(e) = cluster.record.get(hop.id) {
                self.revision = Some(self.revision.map_or(e.revision, |r| r.max(e.revision)));
            }
            self.last_wave = hop.wave;
            self.queue.pop_front();
            self.last_departure = at;
            // One message per entry on the map: a followed step that sent it already keeps it.
            if !self.flying.iter().any(|m| m.id == message.id) {
                self.flying.push(message);
            }
        }
        for m in &mut self.flying {
            m.progress = ((now_ms - m.started_ms) / travel).clamp(0.0, 1.0);
        }
        &self.flying
    }

    /// Sends the message one record entry makes, alone and at once: the page following a
    /// chain step by step shows each step travel. False when the entry is no message (a
    /// decision, or a request of the API server's own).
    pub fn spotlight(&mut self, cluster: &Cluster, seq: Seq, now_ms: f64) -> bool {
        let Some(hop) = cluster.record.get(seq).and_then(|e| single(cluster, e)) else { return false };
        let message = Self::launch(cluster, &hop, now_ms);
        self.caption = message.caption.clone();
        self.flying.retain(|m| m.id != seq);
        self.flying.push(message);
        true
    }

    /// The last record entry taken in.
    pub fn cursor(&self) -> Seq {
        self.cursor
    }

    /// The messages on the map as of the last frame.
    pub fn messages(&self) -> &[Message] {
        &self.flying
    }

    /// The sentence of the latest hop to leave (at the teaching pace, the one on the map).
    pub fn caption(&self) -> &str {
        &self.caption
    }

    /// etcd's revision as of the latest hop to leave: at the teaching pace the page draws the
    /// cluster as it was then, not as the simulation, a step ahead, already has it.
    pub fn revision(&self) -> Option<i64> {
        self.revision
    }

    /// Background entries (Events, heartbeats) the teaching pace passed over since its last
    /// hop left.
    pub fn passed_over(&self) -> u64 {
        self.passed_over
    }

    /// How many record entries wait to be shown.
    pub fn waiting(&self) -> u64 {
        self.queue.iter().map(|h| u64::from(h.count)).sum()
    }

    /// Nothing on the map and nothing waiting.
    pub fn idle(&self) -> bool {
        self.flying.is_empty() && self.queue.is_empty()
    }

    /// Drops what waits and what travels: the map goes on from the record's present (the page's
    /// "skip to settled").
    pub fn skip(&mut self, cluster: &Cluster) {
        let waiting = self.waiting();
        *self = Flow::new(cluster.record.last_seq());
        if waiting > 0 {
            self.caption = format!("Skipped to the settled cluster: {waiting} messages were not shown one by one.");
        }
    }

    /// Takes in the record's new entries without drawing a frame (the teaching pace's clock
    /// asks, after each step, whether the map now has something to show).
    pub fn absorb(&mut self, cluster: &Cluster, pace: Pace) {
        self.take_in(cluster, pace);
    }

    fn take_in(&mut self, cluster: &Cluster, pace: Pace) {
        let last = cluster.record.last_seq();
        if last < self.cursor {
            // A new session (reset): start over from its present.
            *self = Flow::new(last);
            return;
        }
        if last == self.cursor {
            return;
        }
        let fresh: Vec<&Entry> = cluster.record.since(self.cursor).collect();
        self.cursor = last;
        let (hops, passed_over) = batch(cluster, &fresh, pace.teaching);
        self.passed_over += passed_over;
        self.queue.extend(hops);
        if !pace.teaching && self.queue.len() > QUEUE {
            let hops: Vec<Hop> = self.queue.drain(..).collect();
            // One wave per flood (negative: never a revision).
            let wave = Some(-i64::try_from(last).unwrap_or(i64::MAX));
            self.queue = bundle(cluster, hops).into_iter().map(|h| Hop { wave, ..h }).collect();
        }
    }

    fn launch(cluster: &Cluster, hop: &Hop, at: f64) -> Message {
        let entry = cluster.record.get(hop.id).filter(|_| hop.count == 1);
        let said = hop.said.as_ref().filter(|_| hop.count == 1);
        let label = match (said.map(|(l, _)| l.clone()).or_else(|| entry.and_then(label)), hop.class) {
            (Some(l), _) => l,
            (None, Class::Request) => format!("×{} requests", hop.count),
            (None, Class::Watch) => format!("×{} watch events", hop.count),
            (None, Class::Runtime) => format!("×{} runtime calls", hop.count),
            (None, Class::Note) => format!("×{} decisions", hop.count),
            (None, Class::Raft) => format!("×{} Raft messages", hop.count),
            (None, Class::Webhook) => format!("×{} webhook calls", hop.count),
        };
        let caption = match (said, entry) {
            (Some((_, c)), _) => c.clone(),
            (None, Some(e)) => crate::views::caption::caption(cluster, e),
            (None, None) => {
                format!("{label}: {} → {}", place(cluster, hop.from).name(), place(cluster, hop.to).name())
            }
        };
        Message {
            id: hop.key(),
            from: place(cluster, hop.from),
            to: place(cluster, hop.to),
            label,
            count: hop.count,
            stages: hop.stages,
            from_stage: hop.from_stage,
            refused: hop.refused,
            progress: 0.0,
            started_ms: at,
            caption,
        }
    }
}

/// What a hop of a batch belongs to, for putting it in the order things happened.
#[derive(Clone, Copy, PartialEq)]
enum Tag {
    Other,
    /// A Raft message or step recorded while the request (if any) was handled.
    Raft(Option<Seq>),
    /// An admission webhook call or answer of the request, at the stage (1-based) it is part of.
    Webhook(Seq, u8),
}

/// The hops of a batch of fresh entries, in the order they happened (and, at the teaching
/// pace, how many background entries were passed over): a request's webhook calls between
/// the legs of its way through the stages, its replication in etcd before the watch
/// notifications of its write.
fn batch(cluster: &Cluster, fresh: &[&Entry], teaching: bool) -> (Vec<Hop>, u64) {
    let mut passed_over = 0;
    let requests: std::collections::BTreeSet<Seq> =
        fresh.iter().filter(|e| matches!(e.what, Happening::Request { .. })).map(|e| e.seq).collect();
    let mut items: Vec<(Hop, Tag)> = Vec::new();
    for e in fresh {
        let chatter = teaching && crate::views::caption::is_chatter(cluster, e);
        if raft::is_raft(e) {
            // The replication of background writes (Lease renewals, Events) is chatter at any
            // pace: three control planes renew many Leases.
            if !raft::worth_telling(cluster, e, &requests, teaching) {
                passed_over += u64::from(teaching);
                continue;
            }
            items.extend(raft::hops(cluster, e, teaching).into_iter().map(|h| (h, Tag::Raft(e.cause))));
        } else if let Some((h, stage)) = webhook::hop(cluster, e) {
            items.push((h, Tag::Webhook(e.cause.unwrap_or_default(), stage)));
        } else if chatter {
            passed_over += 1;
        } else if let Some(mut h) = hop(cluster, e, teaching) {
            // The same step on several nodes at one moment (each kube-proxy syncing its
            // rules, each kubelet pulling) is one step of the story.
            if teaching && matches!(h.class, Class::Note | Class::Runtime) {
                h.wave = node_wave(cluster, e);
            }
            items.push((h, Tag::Other));
        }
    }
    let mut used = vec![false; items.len()];
    let mut out = Vec::with_capacity(items.len());
    for i in 0..items.len() {
        if used[i] {
            continue;
        }
        used[i] = true;
        let (h, tag) = &items[i];
        if *tag != Tag::Other || h.class != Class::Request || h.stages == 0 {
            out.push(h.clone());
            continue;
        }
        let c = h.id;
        let hooks: Vec<usize> =
            (i + 1..items.len()).filter(|&j| matches!(items[j].1, Tag::Webhook(cause, _) if cause == c)).collect();
        webhook::legs(cluster, h, hooks.iter().map(|&j| (&items[j].0, stage_of(items[j].1))), &mut out);
        for &j in &hooks {
            used[j] = true;
        }
        // Everything etcd's group did while the request was handled: its replication (and an
        // election it waited for), before the notifications of its write.
        if let Some(last) = (i + 1..items.len()).rev().find(|&j| items[j].1 == Tag::Raft(Some(c))) {
            for j in i + 1..=last {
                if !used[j] && matches!(items[j].1, Tag::Raft(_)) {
                    used[j] = true;
                    out.push(items[j].0.clone());
                }
            }
        }
    }
    (out, passed_over)
}

fn stage_of(tag: Tag) -> u8 {
    match tag {
        Tag::Webhook(_, stage) => stage,
        _ => 0,
    }
}

/// The message one of the API server's own record entries stands for, when it is one of
/// etcd's Raft messages or steps or an admission webhook call or answer: for views that draw
/// them apart from the map (the sequence diagram). `None` for any other entry.
pub fn side_message(cluster: &Cluster, entry: &Entry) -> Option<Message> {
    if !raft::is_raft(entry) && webhook::hop(cluster, entry).is_none() {
        return None;
    }
    single(cluster, entry).map(|h| Flow::launch(cluster, &h, 0.0))
}

/// Whether the entry is one of etcd's Raft messages or steps (several control planes).
pub fn is_raft(entry: &Entry) -> bool {
    raft::is_raft(entry)
}

/// The message one entry makes on its own (a step the page follows).
fn single(cluster: &Cluster, entry: &Entry) -> Option<Hop> {
    if raft::is_raft(entry) {
        return raft::hops(cluster, entry, true).into_iter().last();
    }
    webhook::hop(cluster, entry).map(|(h, _)| h).or_else(|| hop(cluster, entry, true))
}

/// The message an entry makes, if it is one: a request, a watch notification, a kubelet's call
/// to its runtime, or (with `notes`, at the teaching pace) a component's decision.
fn hop(cluster: &Cluster, entry: &Entry, notes: bool) -> Option<Hop> {
    match &entry.what {
        Happening::Request { failed_at, code, .. } if *code != 0 => {
            let stages = match failed_at {
                Some(stage) => Stage::ALL.iter().position(|s| s == stage).map_or(0, |i| i as u8 + 1),
                None => Stage::ALL.len() as u8,
            };
            let from = end(entry.actor);
            let to = if failed_at.is_some() { End::Api } else { End::Etcd };
            (from != End::Api && cluster.component_role(entry.actor).is_some()).then_some(Hop {
                stages,
                refused: failed_at.is_some(),
                ..Hop::new(entry.seq, from, to, Class::Request)
            })
        }
        Happening::Notify { to, .. } => {
            Some(Hop { wave: Some(entry.revision), ..Hop::new(entry.seq, End::Api, end(*to), Class::Watch) })
        }
        // The API server's call to a kubelet for a client (logs, exec, attach).
        Happening::KubeletCall { to, .. } => Some(Hop::new(entry.seq, End::Api, end(*to), Class::Request)),
        Happening::Decision { text } if runtime_call(text).is_some() => {
            matches!(cluster.component_role(entry.actor), Some(Role::Kubelet { .. }))
                .then(|| Hop::new(entry.seq, End::Component(entry.actor), End::Runtime(entry.actor), Class::Runtime))
        }
        Happening::Decision { text } if notes && !text.is_empty() && entry.actor != ComponentId::API_SERVER => {
            Some(Hop::new(entry.seq, end(entry.actor), end(entry.actor), Class::Note))
        }
        _ => None,
    }
}

/// What a kubelet asks its container runtime, from the decision it records before the call
/// (`containerd: pull image "nginx:1.25"`): `pull nginx:1.25`, `start nginx`.
pub fn runtime_call(text: &str) -> Option<String> {
    let call = text.strip_prefix(RUNTIME_PREFIX)?;
    let mut words = call.split_whitespace();
    let (verb, _what, name) = (words.next()?, words.next()?, words.next()?);
    Some(format!("{verb} {}", name.trim_matches('"')))
}

/// The wave a node component's step belongs to: the same kind of component (kube-proxy or
/// kubelet) doing the same kind of thing at the same virtual moment. Negative, so it is never
/// a revision.
fn node_wave(cluster: &Cluster, entry: &Entry) -> Option<i64> {
    let role = match cluster.component_role(entry.actor) {
        Some(Role::KubeProxy { .. }) => 1,
        Some(Role::Kubelet { .. }) => 2,
        _ => return None,
    };
    let what = match &entry.what {
        Happening::Decision { text } => {
            text.split_whitespace()
                .take(2)
                .fold(0i64, |h, w| w.bytes().fold(h, |h, b| h.wrapping_mul(31).wrapping_add(i64::from(b))))
                & 0xff
        }
        _ => 0,
    };
    let millis = i64::try_from(entry.time.0).unwrap_or(i64::MAX / 4096);
    Some(-1 - (millis.wrapping_mul(4096) + role * 256 + what).abs())
}

pub use crate::kubelet::RUNTIME_PREFIX;

/// A single message's label: `POST pods`, `bind pod/web-…`, `watch: ADDED pod/web-…`.
fn label(entry: &Entry) -> Option<String> {
    match &entry.what {
        Happening::Request { method, verb, path, kind, name, .. } => {
            let path = path.split('?').next().unwrap_or_default();
            Some(if path.ends_with("/binding") {
                format!("bind {}/{}", kind.info().singular, short(name))
            } else if *verb == "watch" {
                format!("WATCH {}", kind.info().resource)
            } else {
                let sub = ["/status", "/eviction", "/scale"].into_iter().find(|s| path.ends_with(s)).unwrap_or("");
                format!("{method} {}{sub}", kind.info().resource)
            })
        }
        Happening::Notify { event, kind, name, .. } => {
            Some(format!("watch: {} {}/{}", event.as_str(), kind.info().singular, short(name)))
        }
        Happening::Decision { text } => runtime_call(text).or_else(|| Some(short(text))),
        Happening::KubeletCall { method, path, .. } => Some(format!("{method} {path}")),
    }
}

fn end(id: ComponentId) -> End {
    match id {
        ComponentId::USER => End::Kubectl,
        ComponentId::API_SERVER => End::Api,
        id => End::Component(id),
    }
}

fn place(cluster: &Cluster, end: End) -> Place {
    match end {
        End::Kubectl => Place::Kubectl,
        End::Api => Place::ApiServer,
        End::Etcd => Place::Etcd,
        End::Nodes => Place::Nodes,
        End::Member(i) => raft::member_place(cluster, i),
        End::Pod(call) => webhook::pod_place(cluster, call),
        End::Runtime(id) => match cluster.component_role(id) {
            Some(Role::Kubelet { node }) => Place::Runtime(node.clone()),
            _ => Place::Nodes,
        },
        End::Component(id) => match cluster.component_role(id) {
            Some(Role::Scheduler) => Place::Scheduler,
            Some(Role::Controller { name }) => Place::Controller(name.clone()),
            Some(Role::Kubelet { node }) => Place::Kubelet(node.clone()),
            Some(Role::KubeProxy { node }) => Place::KubeProxy(node.clone()),
            Some(Role::Cni { node }) => Place::Cni(node.clone()),
            Some(Role::CoreDns) => Place::CoreDns,
            Some(Role::AddOn { name }) => Place::AddOn(name.clone()),
            Some(Role::User) => Place::Kubectl,
            Some(Role::ApiServer) | None => Place::ApiServer,
        },
    }
}

/// Bundles hops by sender, receiver and class (oldest first); when that still leaves too
/// many, nodes' components are bundled as one "nodes" end.
fn bundle(cluster: &Cluster, hops: Vec<Hop>) -> Vec<Hop> {
    let grouped = group(hops, |e| e);
    if grouped.len() <= QUEUE {
        return grouped;
    }
    let on_node = |e: End| match e {
        End::Runtime(_) => End::Nodes,
        End::Component(id)
            if matches!(
                cluster.component_role(id),
                Some(Role::Kubelet { .. } | Role::KubeProxy { .. } | Role::Cni { .. })
            ) =>
        {
            End::Nodes
        }
        e => e,
    };
    group(grouped, on_node)
}

fn group(hops: Vec<Hop>, key: impl Fn(End) -> End) -> Vec<Hop> {
    let mut out: Vec<Hop> = Vec::new();
    for mut h in hops {
        h.from = key(h.from);
        h.to = key(h.to);
        match out.iter_mut().find(|o| o.from == h.from && o.to == h.to && o.class == h.class) {
            Some(o) => {
                o.count += h.count;
                o.stages = o.stages.max(h.stages);
                o.refused &= h.refused;
            }
            None => out.push(h),
        }
    }
    out
}

fn short(name: &str) -> String {
    match name.char_indices().nth(NAME_CHARS) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    const STEP_MS: f64 = 16.0;

    /// Frames until the flow is idle (or `limit` frames), collecting every message seen.
    fn watch(flow: &mut Flow, session: &mut Session, pace: Pace, frames: usize, run: bool) -> Vec<Message> {
        let mut seen: Vec<Message> = Vec::new();
        let mut now = 0.0;
        for i in 0..frames {
            if run && i % 6 == 0 {
                session.cluster.advance(crate::sim::Duration::millis(100));
            }
            now += STEP_MS;
            for m in flow.frame(&session.cluster, now, pace) {
                if !seen.iter().any(|s| s.id == m.id) {
                    seen.push(m.clone());
                }
            }
        }
        seen
    }

    fn fresh() -> (Session, Flow) {
        let session = Session::new(1);
        let flow = Flow::new(session.cluster.record.last_seq());
        (session, flow)
    }

    #[test]
    fn an_apply_sends_its_post_from_kubectl_through_the_api_server_stages_to_etcd() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=1"));
        let shown = flow.frame(&s.cluster, 0.0, Pace::new(1.0, false));
        let post = shown.iter().find(|m| m.from == Place::Kubectl && m.label == "POST deployments").expect("the POST");
        assert_eq!((&post.to, post.stages, post.refused, post.count), (&Place::Etcd, 6, false, 1));
        assert_eq!(post.describe(), "POST deployments: kubectl → kube-apiserver → etcd");
    }

    #[test]
    fn watch_notifications_travel_from_the_api_server_to_the_scheduler_and_a_kubelet() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl run web --image=nginx:1.25"));
        // At the teaching pace nothing is bundled: at 1× the Leases' renewals (the scheduler's,
        // every two seconds) may share a token with the binding.
        let seen = watch(&mut flow, &mut s, Pace::teaching(false), 3000, true);
        let heard = |to: fn(&Place) -> bool, label: &str| {
            seen.iter().any(|m| m.from == Place::ApiServer && to(&m.to) && m.label.starts_with(label))
        };
        assert!(heard(|p| *p == Place::Scheduler, "watch: ADDED pod/web"), "{seen:#?}");
        assert!(heard(|p| matches!(p, Place::Kubelet(_)), "watch: "), "{seen:#?}");
        let bind = seen.iter().find(|m| m.label == "bind pod/web").expect("the scheduler's binding");
        assert_eq!((&bind.from, &bind.to), (&Place::Scheduler, &Place::Etcd));
    }

    #[test]
    fn a_followed_step_sends_its_own_message_at_once_and_a_decision_shows_at_its_component() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=2"));
        s.execute(&Command::new("sim settle"));
        flow.frame(&s.cluster, 0.0, Pace::new(1.0, false));
        let entries: Vec<&Entry> = s.cluster.record.entries().collect();
        let post = entries
            .iter()
            .find(|e| e.actor == ComponentId::USER && matches!(e.what, Happening::Request { .. }))
            .expect("kubectl's POST");
        assert!(flow.spotlight(&s.cluster, post.seq, 50_000.0));
        let shown = flow.frame(&s.cluster, 50_000.0, Pace::new(1.0, false));
        let m = shown.iter().find(|m| m.id == post.seq).expect("sent");
        assert_eq!(
            (m.label.as_str(), &m.from, &m.to, m.progress),
            ("POST deployments", &Place::Kubectl, &Place::Etcd, 0.0)
        );
        // A controller's decision is a step too: it shows at the controller itself.
        let decision = entries
            .iter()
            .find(|e| {
                e.actor != ComponentId::API_SERVER
                    && matches!(&e.what, Happening::Decision { text } if !text.is_empty())
            })
            .expect("a decision");
        assert!(flow.spotlight(&s.cluster, decision.seq, 50_000.0));
        let note = flow.messages().iter().find(|m| m.id == decision.seq).expect("shown");
        assert_eq!(note.from, note.to);
    }

    #[test]
    fn kubectl_logs_shows_the_api_servers_call_to_the_pods_kubelet() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl run web --image=nginx:1.25"));
        s.execute(&Command::new("sleep 10s"));
        let mut flow = Flow::new(s.cluster.record.last_seq());
        s.execute(&Command::new("kubectl logs web"));
        let seen = watch(&mut flow, &mut s, Pace::new(1.0, false), 200, false);
        let call = seen.iter().find(|m| m.label == "GET /containerLogs/default/web/web").expect("the kubelet call");
        assert!(call.from == Place::ApiServer && matches!(call.to, Place::Kubelet(_)), "{call:?}");
    }

    #[test]
    fn a_refused_request_stops_at_the_stage_that_refused_it() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create deployment bad --image=nginx --replicas=-1"));
        let shown = flow.frame(&s.cluster, 0.0, Pace::new(1.0, false));
        let post = shown.iter().find(|m| m.from == Place::Kubectl).expect("the refused POST");
        assert_eq!((&post.to, post.stages, post.refused), (&Place::ApiServer, 4, true));
    }

    #[test]
    fn a_message_leaves_at_progress_0_arrives_at_1_and_then_leaves_the_map() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create namespace demo"));
        let pace = Pace::new(1.0, false);
        let first = flow.frame(&s.cluster, 1000.0, pace)[0].clone();
        assert_eq!(first.progress, 0.0);
        let halfway = flow.frame(&s.cluster, 1000.0 + pace.travel_ms / 2.0, pace);
        let m = halfway.iter().find(|m| m.id == first.id).unwrap();
        assert!((m.progress - 0.5).abs() < 1e-9, "{}", m.progress);
        flow.frame(&s.cluster, 1000.0 + pace.travel_ms * 10.0, pace);
        assert!(flow.messages().iter().all(|m| m.id != first.id));
    }

    #[test]
    fn departures_keep_their_order_and_spacing() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=2"));
        s.cluster.advance(crate::sim::Duration::seconds(1));
        let pace = Pace::new(1.0, false);
        let seen = watch(&mut flow, &mut s, pace, 400, false);
        assert!(seen.len() > 3, "{seen:#?}");
        for pair in seen.windows(2) {
            assert!(pair[0].id < pair[1].id, "{pair:#?}");
            // A write's notifications fan out together, as do a flood's bundles; everything else
            // keeps its spacing.
            let single_request = |m: &Message| m.stages > 0 && m.count == 1;
            let together = pair[1].from == Place::ApiServer || !single_request(&pair[0]) || !single_request(&pair[1]);
            let fan_out = together && pair[1].started_ms == pair[0].started_ms;
            assert!(fan_out || pair[1].started_ms - pair[0].started_ms >= pace.gap_ms - 1e-9, "{pair:#?}");
        }
    }

    #[test]
    fn the_history_before_the_flow_started_stays_still() {
        let (s, mut flow) = fresh();
        assert!(flow.frame(&s.cluster, 0.0, Pace::new(1.0, false)).is_empty());
        assert!(flow.idle());
    }

    #[test]
    fn a_flood_of_a_thousand_pods_on_fifty_nodes_is_bundled_into_a_few_counted_messages() {
        let mut s = Session::new(1);
        for i in 4..=50 {
            s.execute(&Command::new(&format!("sim node add worker-{i}")));
        }
        let mut flow = Flow::new(s.cluster.record.last_seq());
        let before = s.cluster.record.last_seq();
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=1000"));
        s.cluster.advance(crate::sim::Duration::seconds(3));
        let messages_in_record =
            s.cluster.record.since(before).filter(|e| hop(&s.cluster, e, false).is_some()).count() as u64;
        assert!(messages_in_record > 1000, "{messages_in_record}");
        let pace = Pace::new(100.0, false);
        let shown = flow.frame(&s.cluster, 0.0, pace).to_vec();
        assert!(shown.len() <= IN_FLIGHT && flow.queue.len() <= QUEUE, "{} {}", shown.len(), flow.queue.len());
        let counted: u64 = shown.iter().map(|m| u64::from(m.count)).sum::<u64>() + flow.waiting();
        assert_eq!(counted, messages_in_record);
        let mut bundles = Vec::new();
        for i in 1..200 {
            let shown = flow.frame(&s.cluster, f64::from(i) * STEP_MS, pace);
            assert!(shown.len() <= IN_FLIGHT);
            bundles.extend(shown.iter().filter(|m| m.count > 1).map(|m| m.label.clone()));
        }
        assert!(bundles.iter().any(|l| l.starts_with('×') && l.ends_with("watch events")), "{bundles:?}");
    }

    #[test]
    fn a_floods_bundles_leave_together_and_latecomers_start_at_the_beginning() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=20"));
        s.cluster.advance(crate::sim::Duration::seconds(5));
        let pace = Pace::new(1.0, false);
        let first = flow.frame(&s.cluster, 0.0, pace).to_vec();
        assert_eq!(first.len(), IN_FLIGHT, "{first:#?}");
        assert!(first.iter().all(|m| m.started_ms == 0.0 && m.progress == 0.0));
        // As the first arrive, the rest of the flood leaves from its senders.
        let later = flow.frame(&s.cluster, pace.travel_ms + 1.0, pace);
        assert!(!later.is_empty() && later.iter().all(|m| m.progress == 0.0), "{later:#?}");
    }

    #[test]
    fn faster_speeds_travel_faster_and_slow_motion_slower() {
        let (one, ten, slow) = (Pace::new(1.0, false), Pace::new(10.0, false), Pace::new(1.0, true));
        assert!(ten.travel_ms < one.travel_ms && one.travel_ms < slow.travel_ms);
        assert!(Pace::new(f64::NAN, false) == one);
    }

    #[test]
    fn a_reset_session_starts_the_flow_over() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create namespace demo"));
        flow.frame(&s.cluster, 0.0, Pace::new(1.0, false));
        let fresh = Session::new(1);
        assert!(flow.frame(&fresh.cluster, 10.0, Pace::new(1.0, false)).is_empty());
    }

    #[test]
    fn a_kubelet_calls_its_runtime_to_pull_and_start_a_container() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl run web --image=nginx:1.25"));
        let seen = watch(&mut flow, &mut s, Pace::new(1.0, false), 3000, true);
        let calls: Vec<&str> = seen
            .iter()
            .filter(|m| matches!((&m.from, &m.to), (Place::Kubelet(a), Place::Runtime(b)) if a == b))
            .map(|m| m.label.as_str())
            .collect();
        assert!(calls.contains(&"pull nginx:1.25") && calls.contains(&"start web"), "{calls:?}");
    }

    #[test]
    fn the_teaching_pace_sends_one_hop_at_a_time_each_with_a_sentence_and_passes_over_events() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=1"));
        s.execute(&Command::new("sim settle"));
        let pace = Pace::teaching(false);
        let mut departures: Vec<(f64, Message)> = Vec::new();
        let mut now = 0.0;
        for _ in 0..40_000 {
            now += STEP_MS;
            for m in flow.frame(&s.cluster, now, pace) {
                if !departures.iter().any(|(_, d)| d.id == m.id) {
                    departures.push((now, m.clone()));
                }
            }
            if flow.idle() {
                break;
            }
        }
        assert!(flow.idle(), "the story ends");
        assert!(departures.iter().all(|(_, m)| m.count == 1 && !m.caption.is_empty()), "{departures:#?}");
        assert!(departures.iter().all(|(_, m)| !m.label.contains("events")), "Events are passed over");
        // Hops leave one by one, except a write's notifications, which fan out together.
        for pair in departures.windows(2) {
            let fan_out = pair[1].1.from == Place::ApiServer && pair[0].0 == pair[1].0;
            assert!(fan_out || pair[1].0 - pair[0].0 >= TEACHING_GAP_MS - STEP_MS, "{pair:#?}");
        }
        let notes = departures.iter().filter(|(_, m)| m.from == m.to).count();
        assert!(notes > 0, "decisions are steps of the story");
    }

    #[test]
    fn the_example_apply_plays_at_the_teaching_pace_as_a_story_of_a_couple_of_minutes() {
        let (mut s, mut flow) = fresh();
        let manifest = crate::views::examples::EXAMPLES[0].manifest;
        s.execute(&Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), manifest.into())) });
        s.execute(&Command::new("sim settle"));
        let pace = Pace::teaching(false);
        let (mut now, mut departures) = (0.0, std::collections::BTreeSet::new());
        while !flow.idle() || departures.is_empty() {
            now += STEP_MS;
            for m in flow.frame(&s.cluster, now, pace) {
                departures.insert(m.started_ms as u64);
            }
            assert!(now < 600_000.0, "the story never ends");
        }
        // Steps (a write's notifications leave as one) and how long the story takes to play.
        let (steps, seconds) = (departures.len(), now / 1000.0);
        assert!((40..=110).contains(&steps), "{steps} steps");
        assert!((45.0..=160.0).contains(&seconds), "{seconds} s");
    }

    #[test]
    fn skipping_drops_the_story_and_goes_on_from_the_present() {
        let (mut s, mut flow) = fresh();
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=2"));
        s.execute(&Command::new("sim settle"));
        flow.absorb(&s.cluster, Pace::teaching(false));
        assert!(flow.waiting() > 10);
        flow.skip(&s.cluster);
        assert!(flow.idle() && flow.caption().starts_with("Skipped to the settled cluster"));
        assert_eq!(flow.cursor(), s.cluster.record.last_seq());
    }
}
