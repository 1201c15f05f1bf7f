//! DefaultPreemption, the PostFilter plugin: when a pod fits no node, it looks for a node
//! where removing pods of lower priority would let it in; keeps as many of those as still
//! leave room (sparing first the ones whose PodDisruptionBudget allows no disruption); picks
//! the node that violates fewest budgets and hurts the least important pods; and then the
//! victims are deleted and the pod is nominated to that node, to be placed once they are gone.

use super::framework::{FilterPlugin, NodeInfo, Rejection};
use crate::api::{Kind, Object, Pod, PodDisruptionBudget};
use crate::apiserver::Request;
use crate::client::component::Ctx;
use crate::util::sort::StableSort;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the reason histogram says of a node whose rejection no preemption could undo.
pub const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";

/// What PostFilter came to: the text FailedScheduling adds after the filters' histogram
/// (empty when preemption made room), and the node the pod is nominated to.
#[derive(Debug, Default)]
pub struct PostFilterResult {
    pub message: String,
    pub nominated: Option<String>,
}

impl super::Scheduler {
    /// PostFilter for a pod that fit no node.
    pub(super) fn post_filter(
        &self,
        key: &str,
        object: &Arc<Object>,
        total: usize,
        rejected: &BTreeMap<String, Rejection>,
        ctx: &mut Ctx,
    ) -> PostFilterResult {
        let Some(pod) = object.as_pod() else { return PostFilterResult::default() };
        if total == 0 {
            return PostFilterResult::default();
        }
        let mine = priority(pod);
        let nominated = &pod.status.nominated_node_name;
        let terminating_below = !nominated.is_empty()
            && self.assigned.values().any(|(n, o, _)| {
                n == nominated && o.as_pod().is_some_and(|p| terminating_by_preemption(p) && priority(p) < mine)
            });
        if let Some(why) = not_eligible(pod, terminating_below) {
            return PostFilterResult { message: format!("preemption: {why}"), nominated: None };
        }
        // The pods on each node with a lower priority than this one (none, for the many pods
        // of priority 0 or below: the sandbox's classes are never negative by default).
        let mut below: BTreeMap<&str, Vec<Arc<Object>>> = BTreeMap::new();
        if mine > 0 {
            for (node, o, _) in self.assigned.values() {
                if o.as_pod().is_some_and(|p| priority(p) < mine) {
                    below.entry(node.as_str()).or_default().push(o.clone());
                }
            }
        }
        let filters: Vec<&dyn FilterPlugin> =
            self.filters.iter().map(|f| f.as_ref()).filter(|f| !f.skips(pod)).collect();
        let budgets: Vec<&PodDisruptionBudget> = self
            .budgets
            .cache
            .values()
            .filter_map(|o| if let Object::PodDisruptionBudget(b) = o.as_ref() { Some(&**b) } else { None })
            .collect();
        let mut outcomes: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut candidates = Vec::new();
        for (node, r) in rejected {
            let verdict = match (r.unresolvable, self.node_infos.get(node)) {
                (false, Some(info)) => {
                    let on_node = below.get(node.as_str()).map_or(&[][..], |v| v.as_slice());
                    select_victims(&filters, pod, info, on_node, &budgets)
                }
                _ => Err(vec![NOT_HELPFUL.to_string()]),
            };
            match verdict {
                Ok(c) => candidates.push(c),
                Err(reasons) => {
                    outcomes.insert(node.clone(), reasons);
                }
            }
        }
        let Some(chosen) = pick(&candidates) else {
            return PostFilterResult { message: preemption_message(total, &outcomes), nominated: None };
        };
        let names: Vec<&str> = chosen.victims.iter().map(|o| o.name()).collect();
        ctx.cause =
            Some(ctx.decide(|| format!("pod {key}: preempting {} on {} to make room", names.join(", "), chosen.node)));
        for victim in &chosen.victims {
            preempt(victim, pod, &chosen.node, ctx);
        }
        PostFilterResult { message: String::new(), nominated: Some(chosen.node.clone()) }
    }
}

/// Removes one victim as the scheduler does: marks it as a disruption target, deletes it
/// (gracefully), and reports `Preempted` on it.
fn preempt(victim: &Arc<Object>, preemptor: &Pod, node: &str, ctx: &mut Ctx) {
    let Some(pod) = victim.as_pod() else { return };
    let mut marked = pod.clone();
    let cond = crate::api::PodCondition {
        type_: "DisruptionTarget".into(),
        status: "True".into(),
        reason: "PreemptionByScheduler".into(),
        message: format!("{}: preempting to accommodate a higher priority pod", super::SCHEDULER_NAME),
        ..Default::default()
    };
    crate::api::pod::set_condition(&mut Arc::make_mut(&mut marked.status).conditions, cond, ctx.now);
    marked.metadata.resource_version.clear();
    let _ = ctx.call(Request::update_status(Object::Pod(marked)));
    let (ns, name) = (&pod.metadata.namespace, &pod.metadata.name);
    if ctx.call(Request::delete(Kind::Pod, ns, name)).is_ok() {
        ctx.event(
            victim,
            "",
            "Normal",
            "Preempted",
            format!("Preempted by pod {} on node {node}", preemptor.metadata.uid),
        );
    }
}

/// What the reason histogram says of a node with no pod of lower priority.
pub const NO_VICTIMS: &str = "No preemption victims found for incoming pod";

pub fn priority(pod: &Pod) -> i32 {
    pod.spec.priority.unwrap_or(0)
}

/// One node where preemption would make room: the pods to remove and how many of them their
/// budgets do not allow to go.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub node: String,
    pub victims: Vec<Arc<Object>>,
    pub violations: usize,
}

/// Why the pod may not preempt at all, if it may not (upstream's PodEligibleToPreemptOthers).
/// `terminating_below` says whether its nominated node still has terminating pods of lower
/// priority (the room it made is on its way).
pub fn not_eligible(pod: &Pod, terminating_below: bool) -> Option<&'static str> {
    if pod.spec.preemption_policy.as_deref() == Some("Never") {
        return Some("not eligible due to preemptionPolicy=Never.");
    }
    if !pod.status.nominated_node_name.is_empty() && terminating_below {
        return Some("not eligible due to a terminating pod on the nominated node.");
    }
    None
}

/// Being deleted because the scheduler preempted it (its DisruptionTarget condition says so).
fn terminating_by_preemption(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
        && pod.condition("DisruptionTarget").is_some_and(|c| c.status == "True" && c.reason == "PreemptionByScheduler")
}

/// Splits pods into those whose eviction would exceed a budget's allowed disruptions
/// (counting down as each is taken) and the others, each in the order given.
fn split_by_budget(pods: Vec<Arc<Object>>, budgets: &[&PodDisruptionBudget]) -> (Vec<Arc<Object>>, Vec<Arc<Object>>) {
    let mut allowed: Vec<i32> = budgets.iter().map(|b| b.status.disruptions_allowed).collect();
    let (mut violating, mut fine) = (Vec::new(), Vec::new());
    for object in pods {
        let Some(pod) = object.as_pod() else { continue };
        let mut violates = false;
        for (i, b) in budgets.iter().enumerate() {
            if b.metadata.namespace != pod.metadata.namespace || !b.selects(&pod.metadata.labels) {
                continue;
            }
            // A pod the budget already let go counts no more.
            if b.status.disrupted_pods.contains_key(&pod.metadata.name) {
                continue;
            }
            allowed[i] -= 1;
            if allowed[i] < 0 {
                violates = true;
            }
        }
        if violates { violating.push(object) } else { fine.push(object) }
    }
    (violating, fine)
}

fn fits(filters: &[&dyn FilterPlugin], pod: &Pod, info: &NodeInfo) -> Result<(), Rejection> {
    filters.iter().try_for_each(|f| f.filter(pod, info))
}

/// The fewest pods of lower priority to remove from `info` for `pod` to fit, or why none would
/// do (the reason the histogram counts).
pub fn select_victims(
    filters: &[&dyn FilterPlugin],
    pod: &Pod,
    info: &NodeInfo,
    on_node: &[Arc<Object>],
    budgets: &[&PodDisruptionBudget],
) -> Result<Candidate, Vec<String>> {
    let mine = priority(pod);
    let mut below: Vec<Arc<Object>> = on_node
        .iter()
        .filter(|o| o.as_pod().is_some_and(|p| priority(p) < mine && p.metadata.deletion_timestamp.is_none()))
        .cloned()
        .collect();
    if below.is_empty() {
        return Err(vec![NO_VICTIMS.to_string()]);
    }
    let mut room = info.clone();
    for o in &below {
        if let Some(p) = o.as_pod() {
            room.account(p, -1);
        }
    }
    fits(filters, pod, &room).map_err(|r| r.reasons)?;
    // The most important first: higher priority, then the longer running.
    below.stable_sort_by(|a, b| {
        let (a, b) = (a.as_pod(), b.as_pod());
        let key =
            |p: Option<&Pod>| (std::cmp::Reverse(p.map_or(0, priority)), p.and_then(|p| p.metadata.creation_timestamp));
        key(a).cmp(&key(b))
    });
    let (violating, fine) = split_by_budget(below, budgets);
    let mut victims = Vec::new();
    let mut violations = 0;
    for (group, counts) in [(violating, true), (fine, false)] {
        for o in group {
            let Some(p) = o.as_pod() else { continue };
            room.account(p, 1);
            if fits(filters, pod, &room).is_err() {
                room.account(p, -1);
                victims.push(o);
                if counts {
                    violations += 1;
                }
            }
        }
    }
    Ok(Candidate { node: info.name().to_string(), victims, violations })
}

/// The candidate to act on, as upstream's pickOneNodeForPreemption ranks them: fewest budget
/// violations, then the lowest most-important victim, the lowest sum of priorities, the fewest
/// victims, then the node whose most important victims started last; else the first.
pub fn pick(candidates: &[Candidate]) -> Option<&Candidate> {
    let highest = |c: &Candidate| c.victims.iter().filter_map(|o| o.as_pod()).map(priority).max().unwrap_or(i32::MIN);
    let sum = |c: &Candidate| c.victims.iter().filter_map(|o| o.as_pod()).map(|p| priority(p) as i64).sum::<i64>();
    let earliest_of_highest = |c: &Candidate| {
        let top = highest(c);
        c.victims
            .iter()
            .filter_map(|o| o.as_pod())
            .filter(|p| priority(p) == top)
            .filter_map(|p| p.metadata.creation_timestamp)
            .min()
    };
    let mut best: Option<&Candidate> = None;
    for c in candidates {
        let better = match best {
            None => true,
            Some(b) => {
                let key = |c: &Candidate| (c.violations, highest(c), sum(c), c.victims.len());
                match key(c).cmp(&key(b)) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Greater => false,
                    std::cmp::Ordering::Equal => earliest_of_highest(c) > earliest_of_highest(b),
                }
            }
        };
        if better {
            best = Some(c);
        }
    }
    best
}

/// The FailedScheduling message when preemption found no node: the filters' histogram, then
/// what preemption made of each node.
pub fn preemption_message(total: usize, outcomes: &BTreeMap<String, Vec<String>>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for reasons in outcomes.values() {
        for r in reasons {
            *counts.entry(r.as_str()).or_default() += 1;
        }
    }
    let mut parts: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.stable_sort();
    format!("preemption: 0/{total} nodes are available: {}.", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Container, Node, ObjectMeta};
    use crate::scheduler::plugins::node_resources_fit::NodeResourcesFit;

    fn node(cpu: &str) -> NodeInfo {
        let mut n = Node::default();
        n.metadata.name = "worker-1".into();
        for (k, v) in [("cpu", cpu), ("memory", "8Gi"), ("pods", "110")] {
            n.status.allocatable.insert(k.into(), crate::api::Quantity::parse(v).unwrap());
        }
        NodeInfo::new(Arc::new(n))
    }

    fn pod(name: &str, cpu: &str, prio: i32) -> Pod {
        let mut c = Container { name: "c".into(), image: "nginx".into(), ..Default::default() };
        c.resources.requests.insert("cpu".into(), crate::api::Quantity::parse(cpu).unwrap());
        let mut p = Pod {
            metadata: ObjectMeta { name: name.into(), namespace: "default".into(), ..Default::default() },
            ..Default::default()
        };
        let spec = Arc::make_mut(&mut p.spec);
        spec.containers = vec![c.into()];
        spec.priority = Some(prio);
        p
    }

    /// NodeResourcesFit, prepared (PreFilter) for `pod`.
    fn fit_for(pod: &Pod) -> NodeResourcesFit {
        let mut fit = NodeResourcesFit::default();
        let (nodes, pods) = (Default::default(), Default::default());
        fit.pre_filter(pod, &crate::scheduler::framework::Snapshot { nodes: &nodes, pods: &pods });
        fit
    }

    #[test]
    fn only_as_many_lower_priority_pods_as_needed_are_victims() {
        let mut info = node("2");
        let placed: Vec<Arc<Object>> = [pod("a", "800m", 0), pod("b", "800m", 10), pod("c", "400m", 2000)]
            .into_iter()
            .map(|p| {
                info.account(&p, 1);
                Arc::new(Object::Pod(p))
            })
            .collect();
        let high = pod("high", "700m", 1000);
        let fit = fit_for(&high);
        let filters: Vec<&dyn FilterPlugin> = vec![&fit];
        let c = select_victims(&filters, &high, &info, &placed, &[]).unwrap();
        let names: Vec<&str> = c.victims.iter().map(|o| o.name()).collect();
        // b (priority 10) is spared first; a (priority 0) alone makes room.
        assert_eq!(names, ["a"]);
        let none = select_victims(&filters, &pod("low", "700m", 0), &info, &placed, &[]).unwrap_err();
        assert_eq!(none, [NO_VICTIMS]);
    }

    #[test]
    fn pods_a_budget_protects_are_spared_before_others() {
        let high = pod("high", "700m", 100);
        let fit = fit_for(&high);
        let filters: Vec<&dyn FilterPlugin> = vec![&fit];
        let mut info = node("2");
        let mut protected = pod("a", "800m", 0);
        protected.metadata.labels.insert("app".into(), "db".into());
        let placed: Vec<Arc<Object>> = [protected, pod("b", "800m", 0)]
            .into_iter()
            .map(|p| {
                info.account(&p, 1);
                Arc::new(Object::Pod(p))
            })
            .collect();
        let mut pdb = PodDisruptionBudget::default();
        pdb.metadata.namespace = "default".into();
        pdb.spec.selector = Some(crate::api::LabelSelector {
            match_labels: [("app".to_string(), "db".to_string())].into_iter().collect(),
            ..Default::default()
        });
        let c = select_victims(&filters, &high, &info, &placed, &[&pdb]).unwrap();
        let names: Vec<&str> = c.victims.iter().map(|o| o.name()).collect();
        assert_eq!((names, c.violations), (vec!["b"], 0));
    }

    #[test]
    fn a_pod_that_never_preempts_is_not_eligible() {
        let mut p = pod("x", "1", 10);
        Arc::make_mut(&mut p.spec).preemption_policy = Some("Never".into());
        assert_eq!(not_eligible(&p, false), Some("not eligible due to preemptionPolicy=Never."));
    }
}
