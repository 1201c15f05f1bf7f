//! The horizontal pod autoscaler's arithmetic, as upstream's replica calculator and its
//! behaviour normalization work: the replica count a resource metric asks for (with the
//! tolerance, and pods without metrics or not yet ready counted so as not to overreact),
//! then the recommendation stabilized over the behaviour's window and limited by its
//! policies and by min/max.

use crate::api::autoscaling::{Behavior, ScalingPolicy, ScalingRules};
use crate::sim::{Duration, Time};

/// How far the usage ratio may stray from 1 before anything is done.
pub const TOLERANCE: f64 = 0.1;
/// The scale-down stabilization window when the HPA sets none (kube-controller-manager's
/// `--horizontal-pod-autoscaler-downscale-stabilization`).
pub const DOWNSCALE_STABILIZATION_SECONDS: i32 = 300;

/// One pod as the calculator sees it: its request for the resource, its usage if the Metrics
/// API had one, whether it is ready.
#[derive(Clone, Debug, PartialEq)]
pub struct PodSample {
    pub request: i64,
    pub usage: Option<i64>,
    pub ready: bool,
}

/// What the metric asks for: the replica count, the current utilization (percent of request)
/// and the average usage of the pods with metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    pub replicas: i32,
    pub utilization: i32,
    pub average: i64,
}

/// Replicas for a utilization target (percent of request), from `current` replicas whose pods
/// are `pods`. `None` when no pod has a metric (nothing to go on).
pub fn replicas_for_utilization(current: i32, pods: &[PodSample], target: i32) -> Option<Proposal> {
    let with: Vec<&PodSample> = pods.iter().filter(|p| p.usage.is_some() && p.ready).collect();
    let unready = pods.iter().filter(|p| p.usage.is_some() && !p.ready).count();
    let missing: Vec<&PodSample> = pods.iter().filter(|p| p.usage.is_none()).collect();
    if with.is_empty() && unready == 0 {
        return None;
    }
    let sum = |ps: &[&PodSample]| -> (i64, i64) {
        ps.iter().fold((0, 0), |(u, r), p| (u + p.usage.unwrap_or(0), r + p.request))
    };
    let (usage, requests) = sum(&with);
    if requests == 0 {
        return None;
    }
    let utilization = (usage * 100 / requests) as i32;
    let average = if with.is_empty() { 0 } else { usage / with.len() as i64 };
    let ratio = utilization as f64 / target as f64;
    let proposal = |replicas| Proposal { replicas, utilization, average };
    let scale_up_with_unready = unready > 0 && ratio > 1.0;
    if !scale_up_with_unready && missing.is_empty() {
        if (1.0 - ratio).abs() <= TOLERANCE {
            return Some(proposal(current));
        }
        return Some(proposal((ratio * with.len() as f64).ceil() as i32));
    }
    // Pods without metrics count as using their whole request when scaling down and nothing
    // when scaling up; not-yet-ready pods count as using nothing when scaling up.
    let (mut usage, mut requests, mut count) = (usage, requests, with.len() as i64);
    for p in &missing {
        if ratio < 1.0 {
            usage += p.request;
        }
        requests += p.request;
        count += 1;
    }
    if scale_up_with_unready {
        for p in pods.iter().filter(|p| p.usage.is_some() && !p.ready) {
            requests += p.request;
            count += 1;
        }
    }
    if requests == 0 {
        return Some(proposal(current));
    }
    let new_ratio = (usage * 100 / requests) as f64 / target as f64;
    if (1.0 - new_ratio).abs() <= TOLERANCE || (ratio < 1.0 && new_ratio > 1.0) || (ratio > 1.0 && new_ratio < 1.0) {
        return Some(proposal(current));
    }
    let replicas = (new_ratio * count as f64).ceil() as i32;
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return Some(proposal(current));
    }
    Some(proposal(replicas))
}

/// The scale-up rules when the HPA gives none: double, or add 4 pods, every 15 s, whichever is
/// more; no stabilization.
pub fn default_scale_up() -> ScalingRules {
    ScalingRules {
        stabilization_window_seconds: Some(0),
        select_policy: Some("Max".into()),
        policies: vec![
            ScalingPolicy { type_: "Pods".into(), value: 4, period_seconds: 15 },
            ScalingPolicy { type_: "Percent".into(), value: 100, period_seconds: 15 },
        ],
        tolerance: None,
    }
}

/// The scale-down rules when the HPA gives none: any number of pods every 15 s, after the
/// highest recommendation of the last 300 s.
pub fn default_scale_down() -> ScalingRules {
    ScalingRules {
        stabilization_window_seconds: Some(DOWNSCALE_STABILIZATION_SECONDS),
        select_policy: Some("Max".into()),
        policies: vec![ScalingPolicy { type_: "Percent".into(), value: 100, period_seconds: 15 }],
        tolerance: None,
    }
}

/// The HPA's rules, each direction's defaults where it gives none (and each field of a
/// direction it does give, where that one is unset).
pub fn rules(behavior: Option<&Behavior>) -> (ScalingRules, ScalingRules) {
    let fill = |given: Option<&ScalingRules>, default: ScalingRules| match given {
        None => default,
        Some(g) => ScalingRules {
            stabilization_window_seconds: g.stabilization_window_seconds.or(default.stabilization_window_seconds),
            select_policy: g.select_policy.clone().or(default.select_policy),
            policies: if g.policies.is_empty() { default.policies } else { g.policies.clone() },
            tolerance: g.tolerance.clone(),
        },
    };
    let b = behavior;
    (
        fill(b.and_then(|b| b.scale_up.as_ref()), default_scale_up()),
        fill(b.and_then(|b| b.scale_down.as_ref()), default_scale_down()),
    )
}

/// A replica count the autoscaler recommended, and when.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recommendation {
    pub at: Time,
    pub replicas: i32,
}

/// A change it made to the replica count, and when.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleEvent {
    pub at: Time,
    pub change: i32,
}

fn cutoff(now: Time, seconds: i32) -> Time {
    Time(now.0.saturating_sub(Duration::seconds(seconds.max(0) as u64).0))
}

/// The recommendation stabilized: not above the lowest of the scale-up window's
/// recommendations, not below the highest of the scale-down window's (both including this
/// one), and whether the scale-down window held it up.
pub fn stabilize(
    now: Time,
    current: i32,
    desired: i32,
    history: &[Recommendation],
    up: &ScalingRules,
    down: &ScalingRules,
) -> (i32, bool) {
    let (up_cut, down_cut) = (
        cutoff(now, up.stabilization_window_seconds.unwrap_or(0)),
        cutoff(now, down.stabilization_window_seconds.unwrap_or(0)),
    );
    let (mut up_rec, mut down_rec) = (desired, desired);
    for r in history {
        if r.at > up_cut {
            up_rec = up_rec.min(r.replicas);
        }
        if r.at > down_cut {
            down_rec = down_rec.max(r.replicas);
        }
    }
    let mut recommendation = current;
    if recommendation < up_rec {
        recommendation = up_rec;
    }
    if recommendation > down_rec {
        recommendation = down_rec;
    }
    (recommendation, recommendation > desired)
}

/// How far the policies let the count go from `current` now, given the changes made within
/// each policy's period: the highest count for scaling up, the lowest for scaling down.
pub fn policy_limit(now: Time, current: i32, events: &[ScaleEvent], rules: &ScalingRules, up: bool) -> i32 {
    let select = rules.select_policy.as_deref().unwrap_or("Max");
    if select == "Disabled" {
        return current;
    }
    let mut limits = Vec::new();
    for p in &rules.policies {
        let since = cutoff(now, p.period_seconds);
        let changed: i32 = events.iter().filter(|e| e.at > since).map(|e| e.change).sum();
        let start = current - changed;
        let limit = match (p.type_.as_str(), up) {
            ("Pods", true) => start + p.value,
            ("Pods", false) => start - p.value,
            (_, true) => (start as f64 * (1.0 + p.value as f64 / 100.0)).ceil() as i32,
            (_, false) => (start as f64 * (1.0 - p.value as f64 / 100.0)).ceil() as i32,
        };
        limits.push(limit);
    }
    // "Max" picks the policy that allows the biggest change.
    let most = if up { limits.iter().max() } else { limits.iter().min() };
    let least = if up { limits.iter().min() } else { limits.iter().max() };
    *(if select == "Min" { least } else { most }).unwrap_or(&current)
}

/// Where the count lands once the policies and min/max bound it, and why it was bounded, if
/// it was (`ScaleUpLimit`, `TooManyReplicas`, `ScaleDownLimit`, `TooFewReplicas`).
pub fn bound(
    now: Time,
    current: i32,
    desired: i32,
    (min, max): (i32, i32),
    events: &[ScaleEvent],
    (up, down): (&ScalingRules, &ScalingRules),
) -> (i32, Option<&'static str>) {
    if desired > current {
        let limit = policy_limit(now, current, events, up, true);
        let (ceiling, why) = if limit < max { (limit, "ScaleUpLimit") } else { (max, "TooManyReplicas") };
        if desired > ceiling {
            return (ceiling.max(current), Some(why));
        }
    } else if desired < current {
        let limit = policy_limit(now, current, events, down, false);
        let (floor, why) = if limit > min { (limit, "ScaleDownLimit") } else { (min, "TooFewReplicas") };
        if desired < floor {
            return (floor.min(current), Some(why));
        }
    }
    if desired > max {
        return (max, Some("TooManyReplicas"));
    }
    if desired < min {
        return (min, Some("TooFewReplicas"));
    }
    (desired, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(request: i64, usage: i64) -> PodSample {
        PodSample { request, usage: Some(usage), ready: true }
    }

    #[test]
    fn desired_replicas_are_current_times_usage_over_target_rounded_up() {
        let p = replicas_for_utilization(1, &[pod(200, 500)], 50).unwrap();
        assert_eq!((p.replicas, p.utilization), (5, 250));
        let p = replicas_for_utilization(3, &[pod(200, 120), pod(200, 120), pod(200, 130)], 50).unwrap();
        assert_eq!(p.replicas, 4);
    }

    #[test]
    fn a_ratio_within_the_tolerance_keeps_the_current_count() {
        let p = replicas_for_utilization(4, &[pod(100, 54), pod(100, 54), pod(100, 54), pod(100, 54)], 50).unwrap();
        assert_eq!(p.replicas, 4);
    }

    #[test]
    fn pods_without_metrics_count_as_idle_when_scaling_up_and_full_when_scaling_down() {
        let missing = PodSample { request: 200, usage: None, ready: true };
        // Up: 250% on one pod, nothing on two new ones: (500+0+0)/600 = 83% → ceil(1.67*3) = 5.
        let p = replicas_for_utilization(3, &[pod(200, 500), missing.clone(), missing.clone()], 50).unwrap();
        assert_eq!(p.replicas, 5);
        // Down: 10% on one, the missing ones at their whole request: that would be above the
        // target, so the count stays rather than flip direction.
        let p = replicas_for_utilization(3, &[pod(200, 20), missing.clone(), missing], 50).unwrap();
        assert_eq!(p.replicas, 3);
    }

    #[test]
    fn not_yet_ready_pods_count_as_idle_when_scaling_up() {
        let unready = PodSample { request: 200, usage: Some(400), ready: false };
        let p = replicas_for_utilization(2, &[pod(200, 300), unready], 50).unwrap();
        assert_eq!(p.replicas, 3, "{p:?}");
    }

    #[test]
    fn no_metrics_at_all_gives_no_proposal() {
        assert_eq!(replicas_for_utilization(2, &[PodSample { request: 100, usage: None, ready: true }], 50), None);
    }

    #[test]
    fn scale_down_waits_for_the_highest_recommendation_of_the_last_five_minutes() {
        let (up, down) = rules(None);
        let t = |s| Time::ZERO + Duration::seconds(s);
        let history = [Recommendation { at: t(100), replicas: 7 }, Recommendation { at: t(200), replicas: 3 }];
        assert_eq!(stabilize(t(350), 7, 1, &history, &up, &down), (7, true));
        assert_eq!(stabilize(t(450), 7, 1, &history, &up, &down).0, 3);
        assert_eq!(stabilize(t(600), 7, 1, &history, &up, &down).0, 1);
    }

    #[test]
    fn scale_up_is_limited_to_double_or_four_more_pods_per_fifteen_seconds() {
        let (up, down) = rules(None);
        let now = Time::ZERO + Duration::seconds(100);
        assert_eq!(bound(now, 1, 10, (1, 10), &[], (&up, &down)), (5, Some("ScaleUpLimit")));
        assert_eq!(bound(now, 6, 20, (1, 10), &[], (&up, &down)), (10, Some("TooManyReplicas")));
        let events = [ScaleEvent { at: Time::ZERO + Duration::seconds(95), change: 4 }];
        assert_eq!(bound(now, 5, 10, (1, 10), &events, (&up, &down)).0, 5);
    }

    #[test]
    fn min_and_max_bound_the_count() {
        let (up, down) = rules(None);
        assert_eq!(bound(Time::ZERO, 3, 0, (2, 10), &[], (&up, &down)), (2, Some("TooFewReplicas")));
        assert_eq!(bound(Time::ZERO, 3, 3, (1, 10), &[], (&up, &down)), (3, None));
    }
}
