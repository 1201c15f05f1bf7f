//! kube-scheduler: watches for pods without a node, filters and scores the nodes with its
//! plugins, and binds each pod to the best one. It keeps every node's reason for rejecting a
//! pod, so a Pending pod can always say why.

pub mod decision;
pub mod framework;
pub mod node_table;
pub mod plugins;
pub mod preemption;
pub mod queue;
pub mod volume_binding;

use crate::api::{Kind, Object, Pod};
use crate::apiserver::Request;
use crate::client::component::{Component, Ctx, Informer, cache_key};
use crate::client::object_cache::FastKeys;
use crate::record::WatchEventType;
use crate::sim::{Duration, Time};
use crate::util::sort::StableSort;
use decision::{DecisionLog, DecisionTable, FilterCell, NodeVerdict};
use framework::{FilterPlugin, NodeInfo, PodAffinityTerms, PodIndex, Rejection, ScorePlugin, Snapshot};
use node_table::NodeTable;
use queue::SchedulingQueue;
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

pub const SCHEDULER_NAME: &str = "default-scheduler";

/// Why a pod could not be placed: every node's reasons and the message the event carries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diagnosis {
    pub message: String,
    pub node_reasons: BTreeMap<String, Vec<String>>,
}

/// Why a pod was not scheduled: a PreFilter turned it down before any node was looked at, or
/// no node passed the filters (and what PostFilter, preemption, made of it).
enum Refusal {
    PreFilter(String),
    Filters(preemption::PostFilterResult),
}

pub struct Scheduler {
    /// Virtual time one scheduling cycle takes (zero: the queue drains at once). A fault
    /// (`sim scheduler slow`) raises it, so Pending pods visibly queue up.
    pub cycle_time: Duration,
    /// When the cycle under way (with a non-zero `cycle_time`) finishes.
    busy_until: Time,
    pods: Informer,
    nodes: Informer,
    /// The disruption budgets preemption tries not to break.
    budgets: Informer,
    node_infos: NodeTable,
    /// The number the next node the scheduler learns of gets (`NodeInfo::id`).
    next_node_id: u32,
    /// Where each pod counted on a node sits, and its group in `index`, so updates and
    /// deletions can be undone.
    assigned: HashMap<String, (String, Arc<Object>, usize), FastKeys>,
    /// The placed pods by labels, for the plugins that count pods across nodes.
    index: PodIndex,
    /// Parked pods that a newly placed pod may let in (rejected for pod affinity or topology
    /// spread), as upstream's queueing hints for an assigned pod being added.
    waiting_for_pods: BTreeSet<String>,
    queue: SchedulingQueue,
    next_start: usize,
    filters: Vec<Box<dyn FilterPlugin>>,
    scorers: Vec<Box<dyn ScorePlugin>>,
    /// Why each pending pod is pending, from its last attempt.
    pub diagnoses: BTreeMap<String, Diagnosis>,
    /// Each recent pod's latest decision, laid out as a table (kept only while the record is).
    decisions: DecisionLog,
    /// The claims, volumes and classes VolumeBinding reads, and the pods waiting on it.
    volumes: volume_binding::VolumeBinding,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler::new()
    }
}

impl Scheduler {
    pub fn new() -> Self {
        Scheduler {
            cycle_time: Duration::ZERO,
            busy_until: Time::ZERO,
            pods: Informer::new(Kind::Pod),
            nodes: Informer::new(Kind::Node),
            budgets: Informer::new(Kind::PodDisruptionBudget),
            node_infos: NodeTable::default(),
            next_node_id: 0,
            assigned: HashMap::default(),
            index: PodIndex::default(),
            waiting_for_pods: BTreeSet::new(),
            queue: SchedulingQueue::default(),
            next_start: 0,
            filters: plugins::default_filters(),
            scorers: plugins::default_scorers(),
            diagnoses: BTreeMap::new(),
            decisions: DecisionLog::default(),
            volumes: volume_binding::VolumeBinding::default(),
        }
    }

    /// The latest decision table of a pod (`namespace/name`) among the last
    /// [`decision::KEPT`] pods scheduled, when the record is kept.
    pub fn decision(&self, pod_key: &str) -> Option<&DecisionTable> {
        self.decisions.get(pod_key)
    }

    /// The latest decision table of each recent pod, newest last.
    pub fn decisions(&self) -> impl DoubleEndedIterator<Item = &DecisionTable> + ExactSizeIterator {
        self.decisions.iter()
    }

    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    fn sync_nodes(&mut self, ctx: &mut Ctx) {
        let deltas = self.nodes.sync(ctx);
        let mut last_cause = None;
        for d in deltas {
            let name = d.object.name().to_string();
            last_cause = Some(d.seq);
            match (d.type_, d.object.as_node()) {
                (WatchEventType::Deleted, _) => {
                    self.node_infos.remove(&name);
                }
                (_, Some(node)) => {
                    let node = Arc::new(node.clone());
                    if let Some(info) = self.node_infos.get_mut(&name) {
                        info.set_node(node);
                    } else {
                        // A node (re)appearing: count the pods already bound to it.
                        let mut info = self.new_node_info(node);
                        for (n, obj, group) in self.assigned.values() {
                            if *n == name {
                                if let Some(p) = obj.as_pod() {
                                    info.account(p, 1);
                                    self.index.count_on(&mut info, *group, 1);
                                }
                            }
                        }
                        self.node_infos.insert(info);
                    }
                }
                _ => {}
            }
        }
        if let Some(cause) = last_cause {
            self.node_infos.settle();
            self.queue.move_all_to_active(cause);
        }
    }

    fn sync_pods(&mut self, ctx: &mut Ctx) {
        for d in self.pods.sync(ctx) {
            let key = cache_key(d.object.namespace(), d.object.name());
            let pod = d.object.as_pod();
            let gone = d.type_ == WatchEventType::Deleted || pod.is_none_or(Pod::is_terminal);
            if gone {
                let freed = self.unassign(&key);
                self.queue.remove(&key);
                self.diagnoses.remove(&key);
                self.waiting_for_pods.remove(&key);
                if freed {
                    self.queue.move_all_to_active(d.seq);
                }
                continue;
            }
            let Some(pod) = pod else { continue };
            if !pod.spec.node_name.is_empty() {
                self.queue.remove(&key);
                self.diagnoses.remove(&key);
                self.waiting_for_pods.remove(&key);
                let node = pod.spec.node_name.clone();
                // Re-count a pod that moved, whose labels or terminating state changed, or whose
                // containers (what its requests and host ports come from) are not the same
                // ones. Otherwise the stored version is swapped for this one without counting
                // it again, as upstream's cache swaps an assumed pod for the informer's, and the
                // version the scheduler bound is let go.
                let (new, recount) = match self.assigned.get_mut(&key) {
                    None => (true, true),
                    Some((n, old, _)) => {
                        let changed = *n != node
                            || old.as_pod().is_none_or(|old| {
                                old.metadata.labels != pod.metadata.labels
                                    || old.metadata.deletion_timestamp.is_some()
                                        != pod.metadata.deletion_timestamp.is_some()
                                    || !same_containers(old, pod)
                            });
                        if !changed {
                            *old = d.object.clone();
                        }
                        (false, changed)
                    }
                };
                if recount {
                    self.unassign(&key);
                    self.assign(&key, &node, d.object.clone());
                }
                if new {
                    self.pod_placed(d.seq);
                }
            } else if !pod.spec.scheduling_gates.is_empty() {
                // SchedulingGates (PreEnqueue): a gated pod waits outside the queue until its
                // gates are removed.
                self.queue.remove(&key);
            } else if pod.metadata.deletion_timestamp.is_none()
                && pod.spec.scheduler_name.as_deref().unwrap_or(SCHEDULER_NAME) == SCHEDULER_NAME
            {
                let created = pod.metadata.creation_timestamp.unwrap_or_default();
                self.queue.add(&key, pod.spec.priority.unwrap_or(0), created, d.seq);
            }
        }
    }

    /// The scheduler's state for a node it did not know, numbered.
    fn new_node_info(&mut self, node: Arc<crate::api::Node>) -> NodeInfo {
        let mut info = NodeInfo::new(node);
        info.id = self.next_node_id;
        self.next_node_id = self.next_node_id.wrapping_add(1);
        info
    }

    fn assign(&mut self, key: &str, node: &str, object: Arc<Object>) {
        let Some(pod) = object.as_pod() else { return };
        let group = self.index.add(pod);
        if let Some(info) = self.node_infos.get_mut(node) {
            info.account(pod, 1);
            self.index.count_on(info, group, 1);
        }
        if let Some(terms) = PodAffinityTerms::of(pod) {
            self.index.add_affinity_pod(key, node, Arc::new(terms));
        }
        self.assigned.insert(key.to_string(), (node.to_string(), object, group));
    }

    fn unassign(&mut self, key: &str) -> bool {
        match self.assigned.remove(key) {
            Some((node, object, group)) => {
                if let (Some(info), Some(pod)) = (self.node_infos.get_mut(&node), object.as_pod()) {
                    info.account(pod, -1);
                    self.index.count_on(info, group, -1);
                }
                self.index.remove(group);
                self.index.remove_affinity_pod(key);
                true
            }
            None => false,
        }
    }

    /// A pod was placed: parked pods that pod affinity or topology spread kept out get another
    /// try (upstream requeues them on the assigned pod's Add event, guided by queueing hints).
    fn pod_placed(&mut self, cause: crate::record::Seq) {
        for key in std::mem::take(&mut self.waiting_for_pods) {
            let Some(pod) = self.pods.cache.get(&key).and_then(|o| o.as_pod()) else { continue };
            if self.queue.attempts(&key) == 0 {
                continue;
            }
            let created = pod.metadata.creation_timestamp.unwrap_or_default();
            self.queue.remove(&key);
            self.queue.add(&key, pod.spec.priority.unwrap_or(0), created, cause);
        }
    }

    /// How many feasible nodes to look for before scoring (upstream's adaptive
    /// percentageOfNodesToScore: all nodes below 100, then a shrinking share, at least 5%).
    pub fn nodes_to_find(total: usize) -> usize {
        if total < 100 {
            return total;
        }
        let percentage = (50 - (total as i64) / 125).max(5) as usize;
        (total * percentage / 100).max(100)
    }

    fn schedule_one(&mut self, key: String, ctx: &mut Ctx) {
        let Some(object) = self.pods.cache.get(&key).cloned() else { return };
        let Some(pod) = object.as_pod() else { return };
        if !pod.spec.node_name.is_empty()
            || pod.metadata.deletion_timestamp.is_some()
            || self.volumes.waiting.contains_key(&key)
        {
            return;
        }
        ctx.cause = self.queue.causes.get(&key).copied();
        // VolumeBinding's PreFilter: the pod's claims must be there to look at.
        let plan = match self.volumes.pre_filter(pod) {
            Ok(plan) => plan,
            Err(why) => {
                let total = self.node_infos.len();
                self.fail(&key, &object, total, BTreeMap::new(), Refusal::PreFilter(why), ctx);
                return;
            }
        };
        for f in self.filters.iter_mut() {
            f.set_volumes(&plan);
        }
        // PreFilter: what needs the whole cluster, once for this pod.
        let cluster = Snapshot { nodes: &self.node_infos, pods: &self.index };
        for f in self.filters.iter_mut() {
            f.pre_filter(pod, &cluster);
        }
        // The filters with something to check for this pod; the others pass every node.
        let filters: Vec<&dyn FilterPlugin> =
            self.filters.iter().map(|f| f.as_ref()).filter(|f| !f.skips(pod)).collect();
        let total = self.node_infos.len();
        let wanted = Self::nodes_to_find(total);
        // With the record kept, each node's verdict from each plugin is written down for the
        // page; without it (large benchmarks) nothing extra is done.
        let mut rows: Option<Vec<NodeVerdict>> = ctx.record.enabled.then(Vec::new);
        // For each feasible node, its row in `rows`.
        let mut feasible_rows: Vec<usize> = Vec::new();
        // Feasible nodes with their state, borrowed from the scheduler's node table.
        let mut feasible: Vec<&NodeInfo> = Vec::with_capacity(wanted.min(total));
        let mut rejected: BTreeMap<String, Rejection> = BTreeMap::new();
        let named = plugins::node_affinity::required_node_names(&pod.spec);
        if let Some(names) = &named {
            // NodeAffinity's PreFilter: a pod bound by name to some nodes is only tried there.
            for info in names.iter().filter_map(|n| self.node_infos.get(n)) {
                match run_filters(&filters, pod, info, rows.as_mut()) {
                    Ok(()) => {
                        feasible.push(info);
                        if let Some(rows) = &rows {
                            feasible_rows.push(rows.len() - 1);
                        }
                    }
                    Err(r) => {
                        rejected.insert(info.name().to_string(), r);
                    }
                }
            }
            if feasible.is_empty() {
                let affinity = filters.iter().position(|f| f.name() == "NodeAffinity");
                for (name, _) in self.node_infos.iter().filter(|(n, _)| !names.contains(*n)) {
                    let rejection = Rejection::unresolvable("node(s) didn't match Pod's node affinity/selector");
                    if let Some(rows) = rows.as_mut() {
                        // Only NodeAffinity's PreFilter looked at these nodes.
                        let mut cells = vec![FilterCell::Skipped; filters.len()];
                        if let Some(i) = affinity {
                            cells[i] = FilterCell::Fail(rejection.reasons.join(", "));
                        }
                        rows.push(NodeVerdict {
                            node: name.to_string(),
                            filters: cells,
                            scores: Vec::new(),
                            total: None,
                        });
                    }
                    rejected.insert(name.to_string(), rejection);
                }
            }
        } else if total > 0 {
            // Round-robin from where the last cycle stopped, walking the nodes in name order,
            // until enough feasible nodes are found.
            let mut visited = 0;
            for info in self.node_infos.ring(self.next_start) {
                if feasible.len() >= wanted {
                    break;
                }
                visited += 1;
                match run_filters(&filters, pod, info, rows.as_mut()) {
                    Ok(()) => {
                        feasible.push(info);
                        if let Some(rows) = &rows {
                            feasible_rows.push(rows.len() - 1);
                        }
                    }
                    Err(r) => {
                        rejected.insert(info.name().to_string(), r);
                    }
                }
            }
            self.next_start = (self.next_start + visited) % total;
        }
        let table = |rows: Vec<NodeVerdict>| DecisionTable {
            pod: key.clone(),
            at: ctx.now,
            requests: pod.requests(),
            filters: filters.iter().map(|f| f.name()).collect(),
            filters_skipped: self.filters.iter().filter(|f| f.skips(pod)).map(|f| f.name()).collect(),
            scores: Vec::new(),
            scores_skipped: Vec::new(),
            rows,
            chosen: None,
            message: None,
            feasible: feasible.len(),
            total,
        };
        if feasible.is_empty() {
            let table = rows.map(table);
            let postfilter = self.post_filter(&key, &object, total, &rejected, ctx);
            let message = self.fail(&key, &object, total, rejected, Refusal::Filters(postfilter), ctx);
            if let Some(mut table) = table {
                table.rows.stable_sort_by(|a, b| a.node.cmp(&b.node));
                table.message = Some(message);
                self.decisions.keep(table);
            }
            return;
        }
        let mut table = rows.map(table);
        // Score: weighted sum of each plugin's normalised scores.
        let mut totals = vec![0i64; feasible.len()];
        let cluster = Snapshot { nodes: &self.node_infos, pods: &self.index };
        // One buffer for every plugin's scores; a plugin's weight is asked once, not per node.
        let mut scores: Vec<i64> = Vec::with_capacity(feasible.len());
        for scorer in self.scorers.iter_mut() {
            scorer.pre_score(pod, &cluster, &feasible);
            if scorer.skips(pod) {
                if let Some(table) = table.as_mut() {
                    table.scores_skipped.push(scorer.name());
                }
                continue;
            }
            scores.clear();
            scorer.score_all(pod, &feasible, &mut scores);
            scorer.normalize(&mut scores);
            let weight = scorer.weight();
            for (t, s) in totals.iter_mut().zip(&scores) {
                *t += s * weight;
            }
            if let Some(table) = table.as_mut() {
                table.scores.push((scorer.name(), weight));
                for (&row, &s) in feasible_rows.iter().zip(&scores) {
                    table.rows[row].scores.push(s);
                }
            }
        }
        // Highest score wins; ties are broken at random, as upstream's selectHost does.
        let (_, best) = framework::min_max(&totals);
        let mut chosen = 0;
        let mut ties = 0;
        for (i, &score) in totals.iter().enumerate() {
            if score == best {
                ties += 1;
                if ctx.rng.below(ties) == 0 {
                    chosen = i;
                }
            }
        }
        let node = feasible[chosen].name().to_string();
        let feasible_count = feasible.len();
        if let Some(mut table) = table {
            for (&row, &t) in feasible_rows.iter().zip(&totals) {
                table.rows[row].total = Some(t);
            }
            table.rows.stable_sort_by(|a, b| a.node.cmp(&b.node));
            table.chosen = Some(node.clone());
            self.decisions.keep(table);
        }
        ctx.cause = Some(ctx.decide(|| {
            let mut ranked: Vec<(&str, &i64)> = feasible.iter().map(|n| n.name()).zip(totals.iter()).collect();
            ranked.stable_sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let shown: Vec<String> = ranked.iter().take(5).map(|(n, s)| format!("{n}={s}")).collect();
            format!("pod {key}: {feasible_count}/{total} nodes feasible; scores {}; picked {node}", shown.join(" "))
        }));
        self.assign(&key, &node, object.clone());
        match self.volumes.pre_bind(&plan, &node, ctx) {
            Ok(true) => self.bind_pod(&key, &object, &node, ctx),
            // Bound once its claims are (see `bind_waiting`).
            Ok(false) => {
                let until = ctx.now + volume_binding::BIND_TIMEOUT;
                self.volumes.waiting.insert(key.clone(), (node.clone(), until));
            }
            Err(status) => {
                self.unassign(&key);
                ctx.decide(|| format!("binding volumes of {key} on {node} failed: {}", status.message));
                self.queue.retry_at(&key, ctx.now + queue::INITIAL_BACKOFF);
            }
        }
    }

    /// Binds the pods that waited for their claims, once those are bound; forgets those that
    /// went away.
    fn bind_waiting(&mut self, ctx: &mut Ctx) {
        let waiting: Vec<(String, String, Time)> =
            self.volumes.waiting.iter().map(|(k, (n, t))| (k.clone(), n.clone(), *t)).collect();
        for (key, node, until) in waiting {
            let Some(object) = self.pods.cache.get(&key).cloned() else {
                self.volumes.waiting.remove(&key);
                continue;
            };
            let Some(pod) = object.as_pod() else { continue };
            if !pod.spec.node_name.is_empty() || pod.metadata.deletion_timestamp.is_some() {
                self.volumes.waiting.remove(&key);
                continue;
            }
            if self.volumes.all_bound(pod) {
                self.volumes.waiting.remove(&key);
                self.bind_pod(&key, &object, &node, ctx);
            } else if ctx.now >= until {
                // PreBind gave up: the pod leaves the node and is tried again.
                self.volumes.waiting.remove(&key);
                self.unassign(&key);
                let message = "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded";
                ctx.event(&object, "", "Warning", "FailedScheduling", message.to_string());
                self.queue.retry_at(&key, ctx.now + queue::INITIAL_BACKOFF);
            }
        }
    }

    /// The binding cycle's Bind: the pod goes to the node (its `Scheduled` event), or back to
    /// the queue if the API refused.
    fn bind_pod(&mut self, key: &str, object: &Arc<Object>, node: &str, ctx: &mut Ctx) {
        let Some(pod) = object.as_pod() else { return };
        let (key, node) = (key.to_string(), node.to_string());
        let (ns, name) = (pod.metadata.namespace.clone(), pod.metadata.name.clone());
        match ctx.call(Request::bind(&ns, &name, &node)) {
            Ok(_) => {
                self.diagnoses.remove(&key);
                if let Some(cause) = ctx.cause {
                    self.pod_placed(cause);
                }
                ctx.event(
                    object,
                    "",
                    "Normal",
                    "Scheduled",
                    ["Successfully assigned ", &ns, "/", &name, " to ", &node].concat(),
                );
            }
            Err(status) => {
                self.unassign(&key);
                ctx.decide(|| format!("binding {key} to {node} failed: {}", status.message));
                // The API unreachable (or failing): try the pod again after the initial back-off.
                if status.code == 0 || status.code >= 500 {
                    self.queue.retry_at(&key, ctx.now + queue::INITIAL_BACKOFF);
                }
            }
        }
    }

    fn fail(
        &mut self,
        key: &str,
        object: &Arc<Object>,
        total: usize,
        rejected: BTreeMap<String, Rejection>,
        refusal: Refusal,
        ctx: &mut Ctx,
    ) -> String {
        let (pre_filter, postfilter) = match refusal {
            Refusal::PreFilter(why) => (Some(why), preemption::PostFilterResult::default()),
            Refusal::Filters(postfilter) => (None, postfilter),
        };
        let preemption::PostFilterResult { message: postfilter, nominated } = postfilter;
        let message = if let Some(why) = pre_filter {
            // A PreFilter turned the pod down before any node was looked at.
            format!(
                "0/{total} nodes are available: {why}. preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
            )
        } else if total == 0 {
            "no nodes available to schedule pods".to_string()
        } else if postfilter.is_empty() {
            fit_message(total, &rejected)
        } else {
            format!("{} {postfilter}", fit_message(total, &rejected))
        };
        let diagnosis = Diagnosis {
            message: message.clone(),
            node_reasons: crate::util::sort::btree_map(rejected.into_iter().map(|(n, r)| (n, r.reasons))),
        };
        ctx.cause = Some(ctx.decide(|| format!("pod {key} is unschedulable: {message}")));
        self.queue.unschedulable(key, ctx.now);
        let placement_may_help = diagnosis.node_reasons.values().flatten().any(|r| {
            r == plugins::inter_pod_affinity::AFFINITY_RULES_NOT_MATCH
                || r == plugins::pod_topology_spread::CONSTRAINTS_NOT_MATCH
        });
        if placement_may_help {
            self.waiting_for_pods.insert(key.to_string());
        }
        self.diagnoses.insert(key.to_string(), diagnosis);
        ctx.event(object, "", "Warning", "FailedScheduling", message.clone());
        // Report it on the pod too: PodScheduled=False, reason Unschedulable.
        if let Some(pod) = object.as_pod() {
            let already = pod.condition("PodScheduled").is_some_and(|c| c.status == "False" && c.message == message);
            let nominate = nominated.filter(|n| *n != pod.status.nominated_node_name);
            if !already || nominate.is_some() {
                let mut updated = pod.clone();
                let cond = crate::api::PodCondition {
                    type_: "PodScheduled".into(),
                    status: "False".into(),
                    reason: "Unschedulable".into(),
                    message: message.clone(),
                    ..Default::default()
                };
                let status = Arc::make_mut(&mut updated.status);
                crate::api::pod::set_condition(&mut status.conditions, cond, ctx.now);
                status.phase = "Pending".into();
                if let Some(node) = nominate {
                    status.nominated_node_name = node;
                }
                updated.metadata.resource_version.clear();
                if let Ok(stored) = ctx.call_object(Request::update_status(Object::Pod(updated))) {
                    self.pods.assume(stored);
                }
            }
        }
        message
    }
}

/// The sooner of two wake-ups.
fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Runs the filters on a node in order until one refuses it, as the scheduling cycle does;
/// with `rows`, also writes down what each filter said of the node (one new row).
fn run_filters(
    filters: &[&dyn FilterPlugin],
    pod: &Pod,
    info: &NodeInfo,
    rows: Option<&mut Vec<NodeVerdict>>,
) -> Result<(), Rejection> {
    let Some(rows) = rows else {
        return filters.iter().try_for_each(|f| f.filter(pod, info));
    };
    let mut cells = Vec::with_capacity(filters.len());
    let mut result = Ok(());
    for f in filters {
        if result.is_err() {
            cells.push(FilterCell::Skipped);
            continue;
        }
        match f.filter(pod, info) {
            Ok(()) => cells.push(FilterCell::Pass),
            Err(r) => {
                cells.push(FilterCell::Fail(r.reasons.join(", ")));
                result = Err(r);
            }
        }
    }
    rows.push(NodeVerdict { node: info.name().to_string(), filters: cells, scores: Vec::new(), total: None });
    result
}

/// `0/4 nodes are available: <histogram>. preemption: 0/4 nodes are available: <histogram>.`
/// The filters' part of a FailedScheduling message: `0/N nodes are available: <histogram>.`
pub fn fit_message(total: usize, rejected: &BTreeMap<String, Rejection>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rejected.values() {
        for reason in &r.reasons {
            *counts.entry(reason.as_str()).or_default() += 1;
        }
    }
    let mut parts: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.stable_sort();
    format!("0/{total} nodes are available: {}.", parts.join(", "))
}

/// The whole message when nothing could be preempted because no pod had a lower priority:
/// the filters' histogram, then each node's preemption verdict.
pub fn failure_message(total: usize, rejected: &BTreeMap<String, Rejection>) -> String {
    let outcomes: BTreeMap<String, Vec<String>> = rejected
        .iter()
        .map(|(n, r)| {
            let why = if r.unresolvable { preemption::NOT_HELPFUL } else { preemption::NO_VICTIMS };
            (n.clone(), vec![why.to_string()])
        })
        .collect();
    format!("{} {}", fit_message(total, rejected), preemption::preemption_message(total, &outcomes))
}

impl Component for Scheduler {
    fn start(&mut self, ctx: &mut Ctx) -> Option<Time> {
        let _ = self.nodes.start(ctx);
        let _ = self.pods.start(ctx);
        self.volumes.start(ctx);
        let _ = self.budgets.start(ctx);
        // The initial lists are state, not notifications: seed caches and queue from them.
        let nodes: Vec<Arc<Object>> = self.nodes.cache.values().cloned().collect();
        for node in nodes.iter().filter_map(|o| o.as_node()) {
            let info = self.new_node_info(Arc::new(node.clone()));
            self.node_infos.insert(info);
        }
        self.node_infos.settle();
        let pods: Vec<Arc<Object>> = self.pods.cache.values().cloned().collect();
        for object in pods {
            if let Some(pod) = object.as_pod() {
                let key = cache_key(&pod.metadata.namespace, &pod.metadata.name);
                if !pod.spec.node_name.is_empty() && !pod.is_terminal() {
                    let node = pod.spec.node_name.clone();
                    self.assign(&key, &node, object.clone());
                } else if pod.spec.node_name.is_empty()
                    && pod.metadata.deletion_timestamp.is_none()
                    && pod.spec.scheduling_gates.is_empty()
                {
                    let created = pod.metadata.creation_timestamp.unwrap_or_default();
                    self.queue.add(&key, pod.spec.priority.unwrap_or(0), created, ctx.record.last_seq());
                }
            }
        }
        Some(ctx.now)
    }

    fn run(&mut self, ctx: &mut Ctx) -> Option<Time> {
        self.sync_nodes(ctx);
        self.sync_pods(ctx);
        // A claim, volume or class changed: pods parked for their volumes may fit now.
        if let Some(seq) = self.volumes.sync(ctx) {
            self.queue.move_all_to_active(seq);
            self.bind_waiting(ctx);
        } else if self.volumes.next_deadline().is_some_and(|t| t <= ctx.now) {
            self.bind_waiting(ctx);
        }
        self.budgets.sync(ctx);
        if self.cycle_time > Duration::ZERO {
            // A slow scheduler: one pod per cycle; news that arrives mid-cycle waits for its end.
            if ctx.now < self.busy_until {
                return Some(self.busy_until);
            }
            if let Some(key) = self.queue.pop(ctx.now) {
                self.schedule_one(key, ctx);
                self.busy_until = ctx.now + self.cycle_time;
                return Some(self.busy_until);
            }
            return earliest(self.queue.next_ready(), self.volumes.next_deadline());
        }
        while let Some(key) = self.queue.pop(ctx.now) {
            self.schedule_one(key, ctx);
        }
        earliest(self.queue.next_ready(), self.volumes.next_deadline())
    }

    fn busy(&self) -> bool {
        self.queue.has_ready_work()
    }

    fn informers(&self) -> Vec<&Informer> {
        vec![&self.nodes, &self.pods, &self.volumes.claims, &self.volumes.volumes, &self.volumes.classes, &self.budgets]
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Whether two versions of a pod have the same containers (the same shared copies, as every
/// version after admission's has unless its spec was changed).
fn same_containers(a: &Pod, b: &Pod) -> bool {
    let same = |x: &[Arc<crate::api::Container>], y: &[Arc<crate::api::Container>]| {
        x.len() == y.len() && x.iter().zip(y).all(|(x, y)| Arc::ptr_eq(x, y))
    };
    Arc::ptr_eq(&a.spec, &b.spec)
        || (same(&a.spec.containers, &b.spec.containers) && same(&a.spec.init_containers, &b.spec.init_containers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_messages_count_reasons_and_preemption_like_upstream() {
        let mut rejected = BTreeMap::new();
        rejected.insert(
            "cp".to_string(),
            Rejection::unresolvable("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"),
        );
        for n in ["w1", "w2"] {
            rejected.insert(n.to_string(), Rejection::unschedulable(vec!["Insufficient cpu".into()]));
        }
        assert_eq!(
            failure_message(3, &rejected),
            "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn a_placed_pod_is_kept_as_its_latest_version_not_the_one_the_scheduler_bound() {
        use crate::api::Kind;
        let cluster = crate::cluster::one_worker_running_web();
        let stored = cluster.inspect().get(Kind::Pod, "default", "web").expect("the pod");
        assert_eq!(stored.as_pod().map(|p| p.status.phase.as_str()), Some("Running"));
        let scheduler = cluster.component::<Scheduler>().expect("the scheduler");
        let (node, kept, _) = &scheduler.assigned["default/web"];
        // The running version (written by the kubelet after the binding), not the bound one.
        assert!(Arc::ptr_eq(kept, &stored), "the scheduler holds an older version of the pod");
        let info = scheduler.node_infos.get(node).expect("the node");
        let bound = cluster
            .inspect()
            .list(Kind::Pod, "")
            .iter()
            .filter(|o| o.as_pod().is_some_and(|p| p.spec.node_name == *node))
            .count();
        assert_eq!(info.pods, bound as i64, "each pod on the node counted once");
    }

    use crate::shell::{Command, Session};

    fn run(s: &mut Session, line: &str) {
        s.execute(&Command::new(line));
    }

    fn decision(s: &Session, pod: &str) -> DecisionTable {
        let scheduler = s.cluster.component::<Scheduler>().expect("the scheduler");
        scheduler.decision(pod).cloned().expect("a decision table for the pod")
    }

    fn column(table: &DecisionTable, filter: &str) -> usize {
        table.filters.iter().position(|f| *f == filter).expect("the filter ran")
    }

    #[test]
    fn a_placed_pod_shows_each_worker_passing_and_the_control_plane_refused_for_its_taint() {
        let mut s = Session::new(1);
        run(&mut s, "kubectl run web --image=nginx");
        run(&mut s, "sim settle");
        let table = decision(&s, "default/web");
        let nodes: Vec<&str> = table.rows.iter().map(|r| r.node.as_str()).collect();
        assert_eq!(nodes, ["control-plane", "worker-1", "worker-2", "worker-3"]);
        assert_eq!(table.filters, ["NodeUnschedulable", "TaintToleration", "NodeResourcesFit"]);
        assert!(table.filters_skipped.contains(&"NodePorts"));
        let taints = column(&table, "TaintToleration");
        let cp = &table.rows[0];
        assert_eq!(
            cp.filters[taints],
            FilterCell::Fail("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }".into())
        );
        assert_eq!(cp.filters[taints + 1], FilterCell::Skipped, "NodeResourcesFit never looked at it");
        assert!(cp.scores.is_empty() && cp.total.is_none());
        for worker in &table.rows[1..] {
            assert!(worker.filters.iter().all(|c| *c == FilterCell::Pass), "{worker:?}");
            assert_eq!(worker.scores.len(), table.scores.len());
            assert!(worker.total.is_some());
        }
        assert_eq!((table.feasible, table.total), (3, 4));
        assert!(table.chosen.as_deref().is_some_and(|n| n.starts_with("worker-")));
        assert_eq!(table.message, None);
        let placed = s.execute(&Command::new("kubectl get pod web -o jsonpath={.spec.nodeName}")).stdout;
        assert_eq!(table.chosen.as_deref(), Some(placed.as_str()));
    }

    #[test]
    fn the_chosen_node_has_the_highest_total() {
        let mut s = Session::new(3);
        run(&mut s, "kubectl create deployment web --image=nginx --replicas=5");
        run(&mut s, "sim settle");
        let scheduler = s.cluster.component::<Scheduler>().expect("the scheduler");
        let tables: Vec<&DecisionTable> = scheduler.decisions().filter(|t| t.pod.starts_with("default/web-")).collect();
        assert_eq!(tables.len(), 5);
        for table in tables {
            let chosen = table.chosen_row().expect("a chosen row");
            let best = table.rows.iter().filter_map(|r| r.total).max();
            assert_eq!(chosen.total, best, "{table:?}");
            for row in table.rows.iter().filter(|r| r.total.is_some()) {
                let weighted: i64 = row.scores.iter().zip(&table.scores).map(|(s, (_, w))| s * w).sum();
                assert_eq!(row.total, Some(weighted), "the total is the weighted sum of the scores");
                assert!(row.scores.iter().all(|s| (0..=100).contains(s)));
            }
        }
    }

    #[test]
    fn a_pod_too_big_for_every_node_shows_insufficient_cpu_on_each() {
        let mut s = Session::new(1);
        let script = "kubectl apply -f - <<EOF\napiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n  containers:\n  - name: app\n    image: nginx\n    resources:\n      requests:\n        cpu: \"64\"\nEOF\n";
        for command in crate::shell::parse_script(script) {
            s.execute(&command);
        }
        run(&mut s, "sim settle");
        let table = decision(&s, "default/big");
        assert_eq!(table.requests.cpu_milli, 64_000);
        assert_eq!(table.chosen, None);
        assert_eq!(table.feasible, 0);
        assert!(table.scores.is_empty(), "nothing was scored");
        let fit = column(&table, "NodeResourcesFit");
        for row in table.rows.iter().filter(|r| r.node.starts_with("worker-")) {
            assert_eq!(row.filters[fit], FilterCell::Fail("Insufficient cpu".into()), "{row:?}");
            assert_eq!(row.reason(), Some("Insufficient cpu"));
        }
        assert_eq!(table.rows.len(), 4);
        let message = table.message.as_deref().expect("the FailedScheduling message");
        assert!(message.starts_with("0/4 nodes are available: 1 node(s) had untolerated taint"), "{message}");
        assert!(message.contains(", 3 Insufficient cpu."), "{message}");
        let scheduler = s.cluster.component::<Scheduler>().expect("the scheduler");
        assert_eq!(scheduler.diagnoses["default/big"].message, message);
    }

    fn apply(s: &mut Session, yaml: &str) {
        for command in crate::shell::parse_script(&format!("kubectl apply -f - <<EOF\n{yaml}EOF\n")) {
            s.execute(&command);
        }
    }

    #[test]
    fn a_pod_pinned_to_a_full_node_is_tried_there_alone_and_the_others_refused_by_node_affinity() {
        let mut s = Session::new(1);
        apply(
            &mut s,
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pinned\nspec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchFields:\n          - key: metadata.name\n            operator: In\n            values: [worker-2]\n  containers:\n  - name: app\n    image: nginx\n    resources:\n      requests:\n        cpu: \"8\"\n",
        );
        run(&mut s, "sim settle");
        let table = decision(&s, "default/pinned");
        assert_eq!(table.chosen, None);
        let affinity = column(&table, "NodeAffinity");
        let fit = column(&table, "NodeResourcesFit");
        for row in &table.rows {
            if row.node == "worker-2" {
                assert_eq!(row.filters[fit], FilterCell::Fail("Insufficient cpu".into()));
                assert_eq!(row.filters[affinity], FilterCell::Pass);
            } else {
                assert_eq!(
                    row.filters[affinity],
                    FilterCell::Fail("node(s) didn't match Pod's node affinity/selector".into()),
                    "{row:?}"
                );
                assert_eq!(row.filters.iter().filter(|c| **c == FilterCell::Skipped).count(), table.filters.len() - 1);
            }
        }
        assert_eq!(table.rows.len(), 4);
    }

    #[test]
    fn a_large_cluster_shows_only_the_nodes_the_scheduler_evaluated() {
        let config = crate::cluster::ClusterConfig { workers: 150, ..Default::default() };
        let mut s = Session::with_config(config);
        run(&mut s, "kubectl run web --image=nginx");
        run(&mut s, "sim settle");
        let table = decision(&s, "default/web");
        assert_eq!(table.total, 151);
        assert_eq!(table.feasible, Scheduler::nodes_to_find(151));
        assert!(table.rows.len() < table.total, "{} rows", table.rows.len());
        assert!(table.rows.windows(2).all(|w| w[0].node < w[1].node), "in node-name order");
        assert!(table.chosen_row().is_some());
    }

    #[test]
    fn no_table_is_kept_when_the_record_is_off() {
        let config = crate::cluster::ClusterConfig { record: false, ..Default::default() };
        let mut s = Session::with_config(config);
        run(&mut s, "kubectl run web --image=nginx");
        run(&mut s, "sim settle");
        let scheduler = s.cluster.component::<Scheduler>().expect("the scheduler");
        assert!(scheduler.decision("default/web").is_none());
        assert_eq!(scheduler.decisions().count(), 0);
        assert!(!scheduler.diagnoses.contains_key("default/web"), "the pod was placed all the same");
    }

    #[test]
    fn keeping_tables_changes_no_placement() {
        let place = |record: bool| {
            let config = crate::cluster::ClusterConfig { record, seed: 7, ..Default::default() };
            let mut s = Session::with_config(config);
            run(&mut s, "kubectl create deployment web --image=nginx --replicas=6");
            run(&mut s, "sim settle");
            s.execute(&Command::new("kubectl get pods -o wide --sort-by=.metadata.name")).stdout
        };
        assert_eq!(place(true), place(false));
    }

    #[test]
    fn large_clusters_score_a_sample_of_nodes() {
        assert_eq!(Scheduler::nodes_to_find(3), 3);
        assert_eq!(Scheduler::nodes_to_find(100), 100);
        assert_eq!(Scheduler::nodes_to_find(5000), 500);
        assert_eq!(Scheduler::nodes_to_find(1000), 420);
    }
}
