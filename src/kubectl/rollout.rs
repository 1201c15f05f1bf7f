//! `kubectl rollout`: status (watching a Deployment or DaemonSet while virtual time passes),
//! history, undo (client-side, as modern kubectl does it), restart, pause and resume.

use super::args::Args;
use super::object_watch::{self, ObjectWatch};
use super::{Output, namespace_flag, resolve_targets};
use crate::api::{Deployment, Kind, Object, ReplicaSet};
use crate::apiserver::patch::PatchType;
use crate::apiserver::{Reply, Request};
use crate::cluster::Cluster;
use crate::sim::Duration;
use crate::util::json_macro::json;
use crate::util::sort::StableSort;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

pub const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";
pub const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";
/// How long `rollout status` waits when no `--timeout` is given: real kubectl waits forever,
/// the sandbox stops after this much virtual time (past the default 600 s progress deadline).
pub const STATUS_CAP: Duration = Duration::minutes(15);

/// `kubectl rollout` with no subcommand: its help.
const HELP: &str = "Manage the rollout of one or many resources.\n        \n Valid resource types include:\n\n  *  deployments\n  *  daemonsets\n  *  statefulsets\n\nExamples:\n  # Rollback to the previous deployment\n  kubectl rollout undo deployment/abc\n  \n  # Check the rollout status of a daemonset\n  kubectl rollout status daemonset/foo\n  \n  # Restart a deployment\n  kubectl rollout restart deployment/abc\n\nAvailable Commands:\n  history       View rollout history\n  pause         Mark the provided resource as paused\n  restart       Restart a resource\n  resume        Resume a paused resource\n  status        Show the status of the rollout\n  undo          Undo a previous rollout\n\nUsage:\n  kubectl rollout SUBCOMMAND [options]\n\nUse \"kubectl rollout <command> --help\" for more information about a given command.\n";

/// Annotations a rollback never copies from a ReplicaSet to its Deployment.
const SKIPPED_ANNOTATIONS: &[&str] = &[
    super::LAST_APPLIED,
    crate::controllers::deployment::REVISION,
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.deployment.rollback.to",
];

/// `kubectl rollout SUBCOMMAND TYPE/NAME`.
pub fn run(cluster: &mut Cluster, args: &Args) -> Output {
    let Some(sub) = args.positionals.first().cloned() else {
        return Output::ok(HELP.into());
    };
    let mut rest = args.clone();
    rest.positionals.remove(0);
    if !matches!(sub.as_str(), "status" | "history" | "undo" | "restart" | "pause" | "resume") {
        let words = args.positionals.join(" ");
        return Output::err(format!(
            "error: unknown command \"{words}\"\nSee 'kubectl rollout -h' for help and examples"
        ));
    }
    // A flag's value is refused before anything is looked up, as kubectl's flag parsing does.
    if sub == "status" {
        if let Err(e) = rest.duration("timeout", "rollout status") {
            return Output::err(e);
        }
    }
    if rest.positionals.is_empty() {
        return Output::err("error: required resource not specified");
    }
    let targets = match resolve_targets(&rest.positionals) {
        Ok(t) => t,
        Err(e) => return Output::err(e.replace("kubectl get -h", &format!("kubectl rollout {sub} -h"))),
    };
    let namespace = namespace_flag(args);
    let mut out = Output::default();
    let mut found = 0;
    for (kind, names) in targets {
        if names.is_empty() {
            return Output::err("error: resource(s) were provided, but no name was specified");
        }
        for name in names {
            found += 1;
            if sub == "status" && found > 1 {
                return Output::err(
                    "error: rollout status is only supported on individual resources and resource collections - 2 resources were found",
                );
            }
            // Every subcommand starts, as kubectl's resource builder does, with a GET.
            let object = match cluster.request(Request::get(kind, &namespace, &name)) {
                Ok(reply) => reply.object(),
                Err(status) => {
                    append(&mut out, Output::err(status.kubectl_message()));
                    continue;
                }
            };
            let Some(object) = object else { continue };
            let result = match sub.as_str() {
                "status" => status(cluster, &rest, &object),
                "history" => history(cluster, &rest, &object),
                "undo" => undo(cluster, &rest, &object),
                "restart" => restart(cluster, &object),
                "pause" => pause_or_resume(cluster, &object, true),
                _ => pause_or_resume(cluster, &object, false),
            };
            append(&mut out, result);
        }
    }
    out
}

fn append(out: &mut Output, more: Output) {
    out.stdout.push_str(&more.stdout);
    out.stderr.push_str(&more.stderr);
    out.warnings.push_str(&more.warnings);
    if more.code != 0 {
        out.code = more.code;
    }
}

/// `deployment.apps/web`.
fn type_name(object: &Object) -> String {
    super::printers::type_name(object)
}

/// `deployments.apps "web"`, as kubectl's rollout errors name an object.
fn resource_name(object: &Object) -> String {
    format!("{} \"{}\"", object.kind().qualified_resource(), object.name())
}

/// `Pod` / `DaemonSet.apps`: a GroupKind as kubectl prints it.
fn group_kind(kind: Kind) -> String {
    let info = kind.info();
    if info.group.is_empty() { info.kind.to_string() } else { format!("{}.{}", info.kind, info.group) }
}

/// What the watch shows at one moment: the message, whether the rollout is done, or an error.
pub fn status_message(object: &Object, revision: i64) -> Result<(String, bool), String> {
    match object {
        Object::Deployment(d) => deployment_status(d, revision),
        Object::DaemonSet(ds) => {
            let strategy = ds.spec.update_strategy.as_ref().and_then(|s| s.get("type")).and_then(Value::as_str);
            if strategy.is_some_and(|t| t != "RollingUpdate") {
                return Err("rollout status is only available for RollingUpdate strategy type".into());
            }
            let name = &ds.metadata.name;
            let s = &ds.status;
            if ds.metadata.generation > s.observed_generation.unwrap_or(0) {
                return Ok(("Waiting for daemon set spec update to be observed...\n".into(), false));
            }
            let updated = s.updated_number_scheduled.unwrap_or(0);
            let available = s.number_available.unwrap_or(0);
            let desired = s.desired_number_scheduled;
            if updated < desired {
                Ok((
                    format!(
                        "Waiting for daemon set \"{name}\" rollout to finish: {updated} out of {desired} new pods have been updated...\n"
                    ),
                    false,
                ))
            } else if available < desired {
                Ok((
                    format!(
                        "Waiting for daemon set \"{name}\" rollout to finish: {available} of {desired} updated pods are available...\n"
                    ),
                    false,
                ))
            } else {
                Ok((format!("daemon set \"{name}\" successfully rolled out\n"), true))
            }
        }
        Object::StatefulSet(sts) => stateful_set_status(sts),
        other => Err(format!("no status viewer has been implemented for {}", group_kind(other.kind()))),
    }
}

/// kubectl's StatefulSet status viewer: ready pods, then the partitioned roll out.
fn stateful_set_status(sts: &crate::api::StatefulSet) -> Result<(String, bool), String> {
    if !sts.rolls() {
        return Err("rollout status is only available for RollingUpdate strategy type".into());
    }
    let s = &sts.status;
    let observed = s.observed_generation.unwrap_or(0);
    if observed == 0 || sts.metadata.generation > observed {
        return Ok(("Waiting for statefulset spec update to be observed...\n".into(), false));
    }
    let replicas = sts.spec.replicas.unwrap_or(1);
    let ready = s.ready_replicas.unwrap_or(0);
    if ready < replicas {
        return Ok((format!("Waiting for {} pods to be ready...\n", replicas - ready), false));
    }
    let updated = s.updated_replicas.unwrap_or(0);
    let rolling = sts.spec.update_strategy.as_ref().and_then(|u| u.rolling_update.as_ref());
    if let Some(partition) = rolling.map(|r| r.partition) {
        if let Some(partition) = partition {
            if updated < replicas - partition {
                return Ok((
                    format!(
                        "Waiting for partitioned roll out to finish: {updated} out of {} new pods have been updated...\n",
                        replicas - partition
                    ),
                    false,
                ));
            }
        }
        return Ok((format!("partitioned roll out complete: {updated} new pods have been updated...\n"), true));
    }
    if s.update_revision != s.current_revision {
        return Ok((
            format!(
                "waiting for statefulset rolling update to complete {updated} pods at revision {}...\n",
                s.update_revision
            ),
            false,
        ));
    }
    Ok((
        format!(
            "statefulset rolling update complete {} pods at revision {}...\n",
            s.current_replicas.unwrap_or(0),
            s.current_revision
        ),
        true,
    ))
}

fn deployment_status(d: &Deployment, revision: i64) -> Result<(String, bool), String> {
    let name = &d.metadata.name;
    if revision > 0 {
        let current = d.metadata.annotations.get(crate::controllers::deployment::REVISION);
        let current = current.and_then(|r| r.parse::<i64>().ok()).unwrap_or(0);
        if current != revision {
            return Err(format!("desired revision ({revision}) is different from the running revision ({current})"));
        }
    }
    let s = &d.status;
    if d.metadata.generation > s.observed_generation.unwrap_or(0) {
        return Ok(("Waiting for deployment spec update to be observed...\n".into(), false));
    }
    let progressing = s.conditions.iter().find(|c| c.type_ == "Progressing");
    if progressing.is_some_and(|c| c.reason == "ProgressDeadlineExceeded") {
        return Err(format!("deployment \"{name}\" exceeded its progress deadline"));
    }
    let want = d.spec.replicas.unwrap_or(1);
    let updated = s.updated_replicas.unwrap_or(0);
    let total = s.replicas.unwrap_or(0);
    let available = s.available_replicas.unwrap_or(0);
    let waiting =
        |what: String| Ok((format!("Waiting for deployment \"{name}\" rollout to finish: {what}...\n"), false));
    if updated < want {
        waiting(format!("{updated} out of {want} new replicas have been updated"))
    } else if total > updated {
        waiting(format!("{} old replicas are pending termination", total - updated))
    } else if available < updated {
        waiting(format!("{available} of {updated} updated replicas are available"))
    } else {
        Ok((format!("deployment \"{name}\" successfully rolled out\n"), true))
    }
}

/// `rollout status`: prints the status each time the object changes, letting virtual time
/// pass between changes, until the rollout is done, fails, or the timeout passes.
fn status(cluster: &mut Cluster, args: &Args, object: &Arc<Object>) -> Output {
    let revision = match args.get("revision").map(|r| r.parse::<i64>()) {
        None => 0,
        Some(Ok(r)) if r >= 0 => r,
        Some(Ok(r)) => return Output::err(format!("error: revision must be a positive integer: {r}")),
        Some(Err(_)) => {
            let r = args.get("revision").unwrap_or_default();
            return Output::err(format!(
                "Error: invalid argument \"{r}\" for \"--revision\" flag: strconv.ParseInt: parsing \"{r}\": invalid syntax\nSee 'kubectl rollout status --help' for usage."
            ));
        }
    };
    let timeout = match args.duration("timeout", "rollout status") {
        Ok(d) => d.unwrap_or(Duration::ZERO),
        Err(e) => return Output::err(e),
    };
    if !matches!(object.kind(), Kind::Deployment | Kind::DaemonSet | Kind::StatefulSet) {
        return Output::err(format!("error: no status viewer has been implemented for {}", group_kind(object.kind())));
    }
    let watch = args.get("watch").is_none_or(|w| w != "false");
    let (kind, namespace, name) = (object.kind(), object.namespace().to_string(), object.name().to_string());
    let deadline = cluster.now() + if timeout == Duration::ZERO { STATUS_CAP } else { timeout };
    let mut out = Output::default();
    // The list that starts kubectl's watch, through the API server; the watch itself opens
    // once there is something to wait for.
    let (mut current, revision_listed) = object_watch::list(cluster, kind, &namespace, &name).unwrap_or_default();
    let mut watching: Option<ObjectWatch> = None;
    let out = loop {
        let Some(obj) = current.take() else {
            out.stderr.push_str("error: object has been deleted\n");
            out.code = 1;
            break out;
        };
        let seen = obj.meta().resource_version.clone();
        match status_message(&obj, revision) {
            Ok((message, done)) => {
                out.stdout.push_str(&message);
                if done || !watch {
                    break out;
                }
            }
            Err(e) => {
                out.stderr.push_str(&format!("error: {e}\n"));
                out.code = 1;
                break out;
            }
        }
        let w = match watching.as_mut() {
            Some(w) => w,
            None => match ObjectWatch::resume(cluster, kind, &namespace, &name, Some(obj), revision_listed) {
                Ok(w) => watching.insert(w),
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                    break out;
                }
            },
        };
        // Wait for the next change (a watch event), letting virtual time run.
        loop {
            if cluster.now() >= deadline {
                out.stderr.push_str("error: timed out waiting for the condition\n");
                out.code = 1;
                break;
            }
            cluster.step_toward(deadline);
            w.poll(cluster);
            let now_rv = w.current.as_ref().map(|o| o.meta().resource_version.clone());
            if now_rv.as_deref() != Some(seen.as_str()) {
                current = w.current.clone();
                break;
            }
        }
        if out.code != 0 {
            break out;
        }
    };
    if let Some(w) = watching {
        w.close(cluster);
    }
    out
}

/// The Deployment's ReplicaSets (those it controls), listed through the API server.
pub(super) fn replica_sets_of(cluster: &mut Cluster, d: &Deployment) -> Vec<ReplicaSet> {
    let mut req = Request::list(Kind::ReplicaSet, &d.metadata.namespace);
    req.label_selector = d.spec.selector.clone();
    match cluster.request(req) {
        Ok(Reply::List { items, .. }) => items
            .iter()
            .filter(|o| o.controller_ref().is_some_and(|r| r.uid == d.metadata.uid))
            .filter_map(|o| o.as_replica_set().cloned())
            .collect(),
        _ => Vec::new(),
    }
}

fn revision_of(rs: &ReplicaSet) -> Option<i64> {
    rs.metadata.annotations.get(crate::controllers::deployment::REVISION).and_then(|r| r.parse().ok())
}

/// A revision flag (`--revision`, `--to-revision`): 0 when absent, kubectl's errors otherwise.
fn revision_flag(args: &Args, flag: &str, sub: &str) -> Result<i64, String> {
    match args.get(flag).map(|r| (r, r.parse::<i64>())) {
        None => Ok(0),
        Some((_, Ok(r))) if r >= 0 => Ok(r),
        Some((_, Ok(r))) => Err(format!("error: revision must be a positive integer: {r}")),
        Some((r, Err(_))) => Err(format!(
            "Error: invalid argument \"{r}\" for \"--{flag}\" flag: strconv.ParseInt: parsing \"{r}\": invalid syntax\nSee 'kubectl rollout {sub} --help' for usage."
        )),
    }
}

/// `rollout history`: the REVISION / CHANGE-CAUSE table, or one revision's pod template.
fn history(cluster: &mut Cluster, args: &Args, object: &Object) -> Output {
    let revision = match revision_flag(args, "revision", "history") {
        Ok(r) => r,
        Err(e) => return Output::err(e),
    };
    let Object::Deployment(d) = object else {
        return Output::err(format!(
            "error: no history viewer has been implemented for \"{}\"",
            group_kind(object.kind())
        ));
    };
    let mut revisions: BTreeMap<i64, crate::api::PodTemplateSpec> = BTreeMap::new();
    for rs in replica_sets_of(cluster, d) {
        let Some(v) = revision_of(&rs) else { continue };
        let mut template = rs.spec.template.clone();
        if let Some(cause) = rs.metadata.annotations.get(CHANGE_CAUSE).filter(|c| !c.is_empty()) {
            template.metadata.annotations.insert(CHANGE_CAUSE.into(), cause.clone());
        }
        revisions.insert(v, template);
    }
    let info = if revision > 0 {
        let Some(template) = revisions.get(&revision) else {
            return Output::err("error: unable to find the specified revision");
        };
        let mut text = String::new();
        super::describe::pod_template(&mut text, template);
        super::describe::layout(&text)
    } else if revisions.is_empty() {
        "No rollout history found.".to_string()
    } else {
        let mut text = String::from("REVISION\tCHANGE-CAUSE\n");
        for (v, t) in &revisions {
            let cause = t.metadata.annotations.get(CHANGE_CAUSE).map_or("<none>", String::as_str);
            text.push_str(&format!("{v}\t{cause}\n"));
        }
        super::table::tabwrite(&text, 0, 2)
    };
    let with = if revision > 0 { format!("with revision #{revision}") } else { String::new() };
    Output::ok(format!("{} {with}\n{info}\n", type_name(object)))
}

/// `rollout undo [--to-revision=N]`: copies an old ReplicaSet's template (and annotations)
/// back into the Deployment with a JSON patch, as kubectl's client-side rollback does.
fn undo(cluster: &mut Cluster, args: &Args, object: &Object) -> Output {
    let to_revision = match revision_flag(args, "to-revision", "undo") {
        Ok(r) => r,
        Err(e) => return Output::err(e),
    };
    let Object::Deployment(d) = object else {
        return Output::err(format!("error: no rollbacker has been implemented for \"{}\"", group_kind(object.kind())));
    };
    if d.spec.paused {
        return Output::err(
            "error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again",
        );
    }
    let sets = replica_sets_of(cluster, d);
    let target = if to_revision > 0 {
        match sets.iter().find(|rs| revision_of(rs) == Some(to_revision)) {
            Some(rs) => rs,
            None => return Output::err(format!("error: unable to find specified revision {to_revision} in history")),
        }
    } else {
        // The second-newest revision.
        let mut by_revision: Vec<(i64, &ReplicaSet)> =
            sets.iter().filter_map(|rs| revision_of(rs).map(|v| (v, rs))).collect();
        by_revision.stable_sort_by_key(|(v, _)| std::cmp::Reverse(*v));
        match by_revision.get(1).map(|(_, rs)| *rs) {
            Some(rs) => rs,
            None => {
                return Output::err(format!("error: no rollout history found for deployment \"{}\"", d.metadata.name));
            }
        }
    };
    let mut template = target.spec.template.clone();
    template.metadata.labels.remove(crate::controllers::deployment::POD_TEMPLATE_HASH);
    if template == d.spec.template {
        return Output::ok(format!(
            "{} skipped rollback (current template already matches revision {to_revision})\n",
            type_name(object)
        ));
    }
    let mut annotations: BTreeMap<String, String> = BTreeMap::new();
    for key in SKIPPED_ANNOTATIONS {
        if let Some(v) = d.metadata.annotations.get(*key) {
            annotations.insert(key.to_string(), v.clone());
        }
    }
    for (k, v) in &target.metadata.annotations {
        if !SKIPPED_ANNOTATIONS.contains(&k.as_str()) {
            annotations.insert(k.clone(), v.clone());
        }
    }
    let template_json = serde_json::to_value(&template).unwrap_or(Value::Null);
    let patch = json!([
        {"op": "replace", "path": "/spec/template", "value": template_json},
        {"op": "replace", "path": "/metadata/annotations", "value": annotations},
    ]);
    let req = Request::patch(Kind::Deployment, &d.metadata.namespace, &d.metadata.name, PatchType::Json, patch)
        .managed_by("kubectl-rollout");
    match cluster.request(req) {
        Ok(_) => Output::ok(format!("{} rolled back\n", type_name(object))),
        Err(status) => Output::err(status.kubectl_message()),
    }
}

/// `rollout restart`: a new `restartedAt` annotation on the pod template starts a rollout.
fn restart(cluster: &mut Cluster, object: &Object) -> Output {
    let template_annotations = match object {
        Object::Deployment(d) if d.spec.paused => {
            return Output::err(format!(
                "error: {} can't restart paused deployment (run rollout resume first)",
                resource_name(object)
            ));
        }
        Object::Deployment(d) => &d.spec.template.metadata.annotations,
        Object::DaemonSet(ds) => &ds.spec.template.metadata.annotations,
        Object::StatefulSet(sts) => &sts.spec.template.metadata.annotations,
        _ => return Output::err(format!("error: {} restarting is not supported", resource_name(object))),
    };
    let now = cluster.now().rfc3339();
    if template_annotations.get(RESTARTED_AT) == Some(&now) {
        return Output::err(format!(
            "error: failed to create patch for {}: if restart has already been triggered within the past second, please wait before attempting to trigger another",
            object.name()
        ));
    }
    let patch = json!({"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}}});
    let req = Request::patch(object.kind(), object.namespace(), object.name(), PatchType::Strategic, patch)
        .managed_by("kubectl-rollout");
    match cluster.request(req) {
        Ok(_) => Output::ok(format!("{} restarted\n", type_name(object))),
        Err(status) => Output::err(format!("error: failed to patch: {}", status.message)),
    }
}

/// `rollout pause` / `rollout resume`: a strategic merge patch of `spec.paused`.
fn pause_or_resume(cluster: &mut Cluster, object: &Object, pause: bool) -> Output {
    let Object::Deployment(d) = object else {
        let what = if pause { "pausing" } else { "resuming" };
        return Output::err(format!("error: {} {what} is not supported", resource_name(object)));
    };
    if pause && d.spec.paused {
        return Output::err(format!("error: {} is already paused", resource_name(object)));
    }
    if !pause && !d.spec.paused {
        return Output::err(format!("error: {} is not paused", resource_name(object)));
    }
    let patch = if pause { json!({"spec": {"paused": true}}) } else { json!({"spec": {"paused": null}}) };
    let req = Request::patch(Kind::Deployment, &d.metadata.namespace, &d.metadata.name, PatchType::Strategic, patch)
        .managed_by("kubectl-rollout");
    match cluster.request(req) {
        Ok(_) => Output::ok(format!("{} {}\n", type_name(object), if pause { "paused" } else { "resumed" })),
        Err(status) => Output::err(format!("error: failed to patch: {}", status.message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(replicas: i32, updated: i32, total: i32, available: i32) -> Object {
        let mut d = Deployment::default();
        d.metadata.name = "web".into();
        d.metadata.generation = 2;
        d.spec.replicas = Some(replicas);
        d.status.observed_generation = Some(2);
        d.status.updated_replicas = Some(updated);
        d.status.replicas = Some(total);
        d.status.available_replicas = Some(available);
        Object::Deployment(Box::new(d))
    }

    #[test]
    fn deployment_status_reports_updates_then_old_pods_then_availability() {
        let msg = |o: &Object| status_message(o, 0).unwrap();
        assert_eq!(
            msg(&deployment(3, 1, 4, 3)).0,
            "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n"
        );
        assert_eq!(
            msg(&deployment(3, 3, 4, 3)).0,
            "Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination...\n"
        );
        assert_eq!(
            msg(&deployment(3, 3, 3, 2)).0,
            "Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available...\n"
        );
        assert_eq!(msg(&deployment(3, 3, 3, 3)), ("deployment \"web\" successfully rolled out\n".into(), true));
    }

    #[test]
    fn an_unobserved_generation_waits_for_the_controller() {
        let mut o = deployment(3, 3, 3, 3);
        o.meta_mut().generation = 3;
        assert_eq!(status_message(&o, 0).unwrap().0, "Waiting for deployment spec update to be observed...\n");
    }

    #[test]
    fn a_pinned_revision_must_be_the_running_one() {
        let err = status_message(&deployment(1, 1, 1, 1), 2).unwrap_err();
        assert_eq!(err, "desired revision (2) is different from the running revision (0)");
    }
}
