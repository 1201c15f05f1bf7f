//! Indexed Jobs (`completionMode: Indexed`): each pod runs one completion index from 0 to
//! `completions - 1`, carried in the `batch.kubernetes.io/job-completion-index` annotation and
//! label, given to its containers as `JOB_COMPLETION_INDEX`, and in its hostname
//! `<job>-<index>`. The Job is complete when every index has a pod that succeeded; the status
//! lists those as `completedIndexes` (`0-2,4`).

use crate::api::{Job, Pod, PodTemplateSpec};
use std::collections::BTreeSet;
use std::sync::Arc;

pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

pub fn is_indexed(job: &Job) -> bool {
    job.spec.completion_mode.as_deref() == Some("Indexed")
}

/// The index a pod runs, from its annotation.
pub fn index_of(pod: &Pod) -> Option<i32> {
    pod.metadata.annotations.get(COMPLETION_INDEX).and_then(|v| v.parse().ok()).filter(|i| *i >= 0)
}

/// `1,3-5` → {1, 3, 4, 5}; what does not parse is left out.
pub fn parse(text: &str) -> BTreeSet<i32> {
    let mut out = BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
                    out.extend(a..=b.min(a.saturating_add(100_000)));
                }
            }
            None => {
                if let Ok(i) = part.parse() {
                    out.insert(i);
                }
            }
        }
    }
    out
}

/// {0, 1, 2, 4} → `0-2,4`: runs of consecutive indexes as intervals.
pub fn format(indexes: &BTreeSet<i32>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(i32, i32)> = None;
    for &i in indexes {
        run = match run {
            Some((a, b)) if i == b + 1 => Some((a, i)),
            Some((a, b)) => {
                parts.push(if a == b { a.to_string() } else { format!("{a}-{b}") });
                Some((i, i))
            }
            None => Some((i, i)),
        };
    }
    if let Some((a, b)) = run {
        parts.push(if a == b { a.to_string() } else { format!("{a}-{b}") });
    }
    parts.join(",")
}

/// The indexes done: those the status already lists and those of pods that succeeded, below
/// `completions`.
pub fn completed(job: &Job, pods: &[Pod]) -> BTreeSet<i32> {
    let total = job.spec.completions.unwrap_or(0);
    let mut done = parse(job.status.completed_indexes.as_deref().unwrap_or_default());
    done.extend(pods.iter().filter(|p| p.status.phase == "Succeeded").filter_map(index_of));
    done.retain(|i| *i < total);
    done
}

/// With `backoffLimitPerIndex`: the indexes whose pods failed more times than it allows (and
/// those `status.failedIndexes` already holds), completed ones left out. Empty without it.
pub fn failed(job: &Job, pods: &[Pod], done: &BTreeSet<i32>) -> BTreeSet<i32> {
    let Some(limit) = job.spec.backoff_limit_per_index else { return BTreeSet::new() };
    let total = job.spec.completions.unwrap_or(0);
    let mut failures: std::collections::BTreeMap<i32, i32> = Default::default();
    for i in pods.iter().filter(|p| p.status.phase == "Failed").filter_map(index_of) {
        *failures.entry(i).or_default() += 1;
    }
    let mut out = parse(job.status.failed_indexes.as_deref().unwrap_or_default());
    out.extend(failures.into_iter().filter(|(_, n)| *n > limit).map(|(i, _)| i));
    out.retain(|i| *i < total && !done.contains(i));
    out
}

/// The indexes to start pods for next, lowest first: neither done nor running.
pub fn pending(job: &Job, done: &BTreeSet<i32>, active: &[&Pod]) -> Vec<i32> {
    let running: BTreeSet<i32> = active.iter().filter_map(|p| index_of(p)).collect();
    (0..job.spec.completions.unwrap_or(0)).filter(|i| !done.contains(i) && !running.contains(i)).collect()
}

/// The template of the pod that runs `index`: the index in an annotation and a label, as
/// `JOB_COMPLETION_INDEX` in each container, and in the hostname `<job>-<index>`.
pub fn template_for(template: &PodTemplateSpec, job: &str, index: i32) -> PodTemplateSpec {
    let mut t = template.clone();
    t.metadata.annotations.insert(COMPLETION_INDEX.into(), index.to_string());
    t.metadata.labels.insert(COMPLETION_INDEX.into(), index.to_string());
    let spec = Arc::make_mut(&mut t.spec);
    spec.hostname = Some(format!("{job}-{index}"));
    let env = crate::api::pod::EnvVar {
        name: INDEX_ENV.into(),
        value: None,
        value_from: Some(crate::util::json_macro::json!({
            "fieldRef": {"apiVersion": "v1", "fieldPath": format!("metadata.annotations['{COMPLETION_INDEX}']")}
        })),
    };
    for c in spec.init_containers.iter_mut().chain(spec.containers.iter_mut()).map(Arc::make_mut) {
        if !c.env.iter().any(|e| e.name == INDEX_ENV) {
            c.env.insert(0, env.clone());
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completed_indexes_are_written_as_intervals() {
        let set: BTreeSet<i32> = [0, 1, 2, 4, 6, 7].into();
        assert_eq!(format(&set), "0-2,4,6-7");
        assert_eq!(parse("0-2,4,6-7"), set);
        assert_eq!(format(&BTreeSet::new()), "");
    }

    #[test]
    fn an_index_pod_carries_its_index_in_annotation_label_env_and_hostname() {
        let mut template = PodTemplateSpec::default();
        Arc::make_mut(&mut template.spec).containers = vec![crate::api::Container::default().into()];
        let t = template_for(&template, "sample", 3);
        assert_eq!(t.metadata.annotations[COMPLETION_INDEX], "3");
        assert_eq!(t.metadata.labels[COMPLETION_INDEX], "3");
        assert_eq!(t.spec.hostname.as_deref(), Some("sample-3"));
        assert_eq!(t.spec.containers[0].env[0].name, INDEX_ENV);
    }

    #[test]
    fn an_index_fails_once_its_pods_failed_more_often_than_backoff_limit_per_index_allows() {
        let mut job = Job::default();
        job.spec.completions = Some(4);
        job.spec.backoff_limit_per_index = Some(1);
        let pod = |index: i32, phase: &str| {
            let mut p = Pod::default();
            p.metadata.annotations.insert(COMPLETION_INDEX.into(), index.to_string());
            std::sync::Arc::make_mut(&mut p.status).phase = phase.into();
            p
        };
        // Index 0 failed twice (past the limit of 1), index 1 once, index 2 twice but then
        // succeeded.
        let pods = [
            pod(0, "Failed"),
            pod(0, "Failed"),
            pod(1, "Failed"),
            pod(2, "Failed"),
            pod(2, "Failed"),
            pod(2, "Succeeded"),
        ];
        let done = completed(&job, &pods);
        assert_eq!(failed(&job, &pods, &done), [0].into());
        job.spec.backoff_limit_per_index = None;
        assert!(failed(&job, &pods, &done).is_empty(), "without the limit no index fails on its own");
    }
}
