//! The horizontal pod autoscaler controller of kube-controller-manager: every 15 s
//! (`--horizontal-pod-autoscaler-sync-period`) it reads each HPA's target workload, its pods'
//! usage from the Metrics API (through the API server, which proxies to metrics-server), works
//! out the replica count ([`algorithm`]), scales the workload through its scale subresource,
//! and writes the HPA's status: current and desired replicas, current metrics, conditions
//! AbleToScale, ScalingActive and ScalingLimited.

pub mod algorithm;

use super::{Action, Reconciler, Synced};
use crate::api::autoscaling::{
    HorizontalPodAutoscaler, HpaCondition, MetricStatus, MetricValueStatus, ResourceMetricStatus,
};
use crate::api::{Kind, Object, Quantity};
use crate::apiserver::{Reply, Request};
use crate::client::component::{Ctx, Delta, Informer, cache_key};
use crate::sim::{Duration, Time};
use algorithm::{PodSample, Recommendation, ScaleEvent};
use std::collections::BTreeMap;

/// `--horizontal-pod-autoscaler-sync-period`.
pub const SYNC_PERIOD: Duration = Duration::seconds(15);

pub struct HpaController {
    hpas: Informer,
    recommendations: BTreeMap<String, Vec<Recommendation>>,
    scale_events: BTreeMap<String, Vec<ScaleEvent>>,
}

impl Default for HpaController {
    fn default() -> Self {
        HpaController {
            hpas: Informer::new(Kind::HorizontalPodAutoscaler),
            recommendations: BTreeMap::new(),
            scale_events: BTreeMap::new(),
        }
    }
}

fn condition(type_: &str, status: bool, reason: &str, message: String) -> HpaCondition {
    HpaCondition {
        type_: type_.into(),
        status: if status { "True" } else { "False" }.into(),
        last_transition_time: None,
        reason: reason.into(),
        message,
    }
}

impl HpaController {
    /// Writes the status when it changed; conditions keep their transition time while their
    /// status stays.
    fn write_status(
        &self,
        object: &std::sync::Arc<Object>,
        hpa: &HorizontalPodAutoscaler,
        mut next: HorizontalPodAutoscaler,
        ctx: &mut Ctx,
    ) -> Synced {
        for c in &mut next.status.conditions {
            let before = hpa.condition(&c.type_);
            c.last_transition_time = match before {
                Some(b) if b.status == c.status => b.last_transition_time,
                _ => Some(ctx.now),
            };
        }
        if next.status == hpa.status {
            return Ok(Action::RequeueAfter(SYNC_PERIOD));
        }
        let _ = object;
        match ctx.call(Request::update_status(Object::HorizontalPodAutoscaler(Box::new(next)))) {
            Ok(_) | Err(_) => Ok(Action::RequeueAfter(SYNC_PERIOD)),
        }
    }

    fn sync(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        let Some(object) = self.hpas.cache.get(key).cloned() else {
            self.recommendations.remove(key);
            self.scale_events.remove(key);
            return Ok(Action::AwaitChange);
        };
        let Object::HorizontalPodAutoscaler(hpa) = &*object else { return Ok(Action::AwaitChange) };
        let mut next: HorizontalPodAutoscaler = (**hpa).clone();
        next.status.observed_generation = Some(hpa.metadata.generation);
        let ns = hpa.metadata.namespace.clone();
        let r = &hpa.spec.scale_target_ref;
        let kind = Kind::from_type_meta(if r.api_version.is_empty() { "apps/v1" } else { &r.api_version }, &r.kind);
        // The target's scale: its replica count and the selector of its pods.
        let target = kind
            .ok_or_else(|| format!("no matches for kind \"{}\"", r.kind))
            .and_then(|k| ctx.call_object(Request::get(k, &ns, &r.name)).map_err(|s| s.message).map(|o| (k, o)));
        let (kind, workload) = match target {
            Ok(t) => t,
            Err(message) => {
                let text = format!("the HPA controller was unable to get the target's current scale: {message}");
                ctx.event(&object, "", "Warning", "FailedGetScale", message.clone());
                next.status.conditions = vec![condition("AbleToScale", false, "FailedGetScale", text)];
                return self.write_status(&object, hpa, next, ctx);
            }
        };
        let (current, selector) = match &*workload {
            Object::Deployment(d) => (d.spec.replicas.unwrap_or(1), d.spec.selector.clone()),
            Object::ReplicaSet(d) => (d.spec.replicas.unwrap_or(1), d.spec.selector.clone()),
            Object::StatefulSet(d) => (d.spec.replicas.unwrap_or(1), d.spec.selector.clone()),
            _ => (0, None),
        };
        let (min, max) = (hpa.min_replicas(), hpa.spec.max_replicas);
        next.status.current_replicas = current;
        let mut conditions = vec![condition(
            "AbleToScale",
            true,
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale".into(),
        )];
        if current == 0 && min != 0 {
            next.status.desired_replicas = 0;
            conditions.push(condition(
                "ScalingActive",
                false,
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero".into(),
            ));
            next.status.conditions = conditions;
            return self.write_status(&object, hpa, next, ctx);
        }
        // The target's pods, listed at each sync (no watch of its own on every pod in the
        // cluster: it looks every 15 s anyway).
        let mut list = Request::list(Kind::Pod, &ns);
        list.label_selector = selector.clone();
        let pods_now: Vec<crate::api::Pod> = match ctx.call(list) {
            Ok(Reply::List { items, .. }) => items.iter().filter_map(|o| o.as_pod().cloned()).collect(),
            _ => Vec::new(),
        };
        // Each metric's proposal; the largest wins.
        let mut proposed: Option<(i32, String)> = None;
        let mut current_metrics = Vec::new();
        let mut failure: Option<(String, &'static str)> = None;
        for spec in &hpa.spec.metrics {
            let Some(res) = spec.resource.as_ref().filter(|_| spec.type_ == "Resource") else { continue };
            let mut req = Request::list(Kind::PodMetrics, &ns);
            req.label_selector = selector.clone();
            let usage: BTreeMap<String, i64> = match ctx.call(req) {
                Ok(Reply::List { items, .. }) => items
                    .iter()
                    .filter_map(|o| match &**o {
                        Object::PodMetrics(m) => {
                            let (cpu, mem) = m.total();
                            Some((m.metadata.name.clone(), if res.name == "cpu" { cpu } else { mem }))
                        }
                        _ => None,
                    })
                    .collect(),
                Ok(_) => BTreeMap::new(),
                Err(status) => {
                    failure = Some((
                        format!(
                            "failed to get {} utilization: unable to get metrics for resource {}: unable to fetch metrics from resource metrics API: {}",
                            res.name, res.name, status.message
                        ),
                        "FailedGetResourceMetric",
                    ));
                    continue;
                }
            };
            let pods: Vec<PodSample> = pods_now
                .iter()
                .filter(|p| {
                    p.metadata.deletion_timestamp.is_none()
                        && p.status.phase != "Failed"
                        && p.status.phase != "Succeeded"
                })
                .map(|p| PodSample {
                    request: p
                        .spec
                        .containers
                        .iter()
                        .map(|c| {
                            c.resources
                                .requests
                                .get(&res.name)
                                .map_or(0, |q| if res.name == "cpu" { q.milli() } else { q.value() })
                        })
                        .sum(),
                    usage: usage.get(&p.metadata.name).copied(),
                    ready: p.condition("Ready").is_some_and(|c| c.status == "True"),
                })
                .collect();
            let Some(target) = res.target.average_utilization else { continue };
            if usage.is_empty() {
                let message = format!(
                    "failed to get {0} utilization: unable to get metrics for resource {0}: no metrics returned from resource metrics API",
                    res.name
                );
                failure = Some((message, "FailedGetResourceMetric"));
                continue;
            }
            let unrequested = pods_now.iter().filter(|p| p.metadata.deletion_timestamp.is_none()).find_map(|p| {
                let c = p.spec.containers.iter().find(|c| !c.resources.requests.contains_key(&res.name))?;
                Some(format!("missing request for {} in container {} of Pod {}", res.name, c.name, p.metadata.name))
            });
            if let Some(missing) = unrequested {
                failure =
                    Some((format!("failed to get {} utilization: {missing}", res.name), "FailedGetResourceMetric"));
                continue;
            }
            match algorithm::replicas_for_utilization(current, &pods, target) {
                Some(p) => {
                    current_metrics.push(MetricStatus {
                        type_: "Resource".into(),
                        resource: Some(ResourceMetricStatus {
                            name: res.name.clone(),
                            current: MetricValueStatus {
                                average_utilization: Some(p.utilization),
                                average_value: Some(if res.name == "cpu" {
                                    Quantity::from_milli(p.average)
                                } else {
                                    Quantity::bytes(p.average)
                                }),
                            },
                        }),
                    });
                    let why = format!("{} resource utilization (percentage of request)", res.name);
                    if proposed.as_ref().is_none_or(|(r, _)| p.replicas > *r) {
                        proposed = Some((p.replicas, why));
                    }
                }
                None => {
                    failure = Some((
                        format!(
                            "failed to get {} utilization: did not receive metrics for targeted pods (pods might be unready)",
                            res.name
                        ),
                        "FailedGetResourceMetric",
                    ));
                }
            }
        }
        next.status.current_metrics = current_metrics;
        let (desired, reason_text) = match (&proposed, &failure) {
            (Some((r, why)), _) => (*r, why.clone()),
            (None, Some((message, reason))) => {
                let reason: &'static str = reason;
                ctx.event(&object, "", "Warning", reason, message.clone());
                ctx.event(
                    &object,
                    "",
                    "Warning",
                    "FailedComputeMetricsReplicas",
                    format!("invalid metrics (1 invalid out of 1), first error is: {message}"),
                );
                conditions.push(condition(
                    "ScalingActive",
                    false,
                    reason,
                    format!("the HPA was unable to compute the replica count: {message}"),
                ));
                next.status.desired_replicas = current.clamp(min, max.max(min));
                next.status.conditions = conditions;
                return self.write_status(&object, hpa, next, ctx);
            }
            (None, None) => (current, String::new()),
        };
        if proposed.is_some() {
            conditions.push(condition(
                "ScalingActive",
                true,
                "ValidMetricFound",
                format!("the HPA was able to successfully calculate a replica count from {reason_text}"),
            ));
        }
        // Stabilized over the behaviour's windows, then bounded by its policies and min/max.
        let (up, down) = algorithm::rules(hpa.spec.behavior.as_ref());
        let history = self.recommendations.entry(key.to_string()).or_default();
        let (stable, held) = algorithm::stabilize(ctx.now, current, desired, history, &up, &down);
        history.push(Recommendation { at: ctx.now, replicas: desired });
        let window = up.stabilization_window_seconds.unwrap_or(0).max(down.stabilization_window_seconds.unwrap_or(0));
        let keep_from = Time(ctx.now.0.saturating_sub(Duration::seconds(window.max(0) as u64).0));
        history.retain(|r| r.at > keep_from);
        let events = self.scale_events.entry(key.to_string()).or_default();
        events.retain(|e| ctx.now.since(e.at) < Duration::minutes(30));
        let (bounded, limited) = algorithm::bound(ctx.now, current, stable, (min, max), events, (&up, &down));
        let rescale_reason = if current < min {
            "Current number of replicas below Spec.MinReplicas".to_string()
        } else if current > max {
            "Current number of replicas above Spec.MaxReplicas".to_string()
        } else if bounded > current {
            format!("{reason_text} above target")
        } else {
            "All metrics below target".to_string()
        };
        next.status.desired_replicas = bounded;
        if bounded != current {
            ctx.decide(|| {
                format!("scale {}/{} from {current} to {bounded} (wanted {desired}): {rescale_reason}", r.kind, r.name)
            });
            match ctx.call(Request::scale(kind, &ns, &r.name, bounded)) {
                Ok(_) => {
                    events.push(ScaleEvent { at: ctx.now, change: bounded - current });
                    ctx.event(
                        &object,
                        "",
                        "Normal",
                        "SuccessfulRescale",
                        format!("New size: {bounded}; reason: {rescale_reason}"),
                    );
                    next.status.last_scale_time = Some(ctx.now);
                    conditions[0] = condition(
                        "AbleToScale",
                        true,
                        "SucceededRescale",
                        format!("the HPA controller was able to update the target scale to {bounded}"),
                    );
                }
                Err(status) => {
                    ctx.event(
                        &object,
                        "",
                        "Warning",
                        "FailedRescale",
                        format!("New size: {bounded}; reason: {rescale_reason}; error: {}", status.message),
                    );
                    conditions[0] = condition(
                        "AbleToScale",
                        false,
                        "FailedUpdateScale",
                        format!("the HPA controller was unable to update the target scale: {}", status.message),
                    );
                }
            }
        } else if held {
            conditions[0] = condition(
                "AbleToScale",
                true,
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, applying the highest recent recommendation"
                    .into(),
            );
        } else {
            conditions[0] =
                condition("AbleToScale", true, "ReadyForNewScale", "recommended size matches current size".into());
        }
        let limit = match limited {
            Some("TooManyReplicas") => condition(
                "ScalingLimited",
                true,
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count".into(),
            ),
            Some("TooFewReplicas") => condition(
                "ScalingLimited",
                true,
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count".into(),
            ),
            Some("ScaleUpLimit") => condition(
                "ScalingLimited",
                true,
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate".into(),
            ),
            Some(_) => condition(
                "ScalingLimited",
                true,
                "ScaleDownLimit",
                "the desired replica count is decreasing faster than the maximum scale rate".into(),
            ),
            None => condition(
                "ScalingLimited",
                false,
                "DesiredWithinRange",
                "the desired count is within the acceptable range".into(),
            ),
        };
        conditions.push(limit);
        next.status.conditions = conditions;
        self.write_status(&object, hpa, next, ctx)
    }
}

impl Reconciler for HpaController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.hpas]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        match informer {
            // Its own status writes are no news: the next sync is 15 s after the last.
            0 if delta.old.as_deref().is_some_and(|o| o.meta().generation == delta.object.meta().generation) => {
                Vec::new()
            }
            0 => vec![cache_key(delta.object.namespace(), delta.object.name())],
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &str, ctx: &mut Ctx) -> Synced {
        self.sync(key, ctx)
    }
}
