//! The apiextensions part of kube-apiserver: CustomResourceDefinitions are defaulted and
//! validated when written; its naming and establishing controllers then accept the names and
//! mark the definition Established (shortly after, on the API server's own clock); from then
//! on the API server serves the custom resource — each object pruned, defaulted and validated
//! against its version's structural schema — and discovery lists it. Deleting a definition
//! first deletes every object of it (the `customresourcecleanup` finalizer), then the
//! definition.

pub use super::crd_validation::{default_crd, validate_crd, validate_crd_update};
use super::{ApiServer, Env, Request, Stage, StageResult, Status, Subresource, Verb};
use crate::api::crd::{CrdCondition, CustomResourceDefinition};
use crate::api::custom::Served;
use crate::api::{CustomKind, Kind, Object};
use crate::etcd::lookup_key::LookupKey;
use crate::sim::{Duration, Time};
use crate::util::sort::StableSort;
use std::sync::Arc;

/// The finalizer that holds a definition until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";
/// How long after a definition is written its names are accepted and it is Established.
pub const ESTABLISH_DELAY: Duration = Duration::millis(500);

fn condition(type_: &str, status: &str, reason: &str, message: &str, now: Time) -> CrdCondition {
    CrdCondition {
        type_: type_.into(),
        status: status.into(),
        last_transition_time: Some(now),
        reason: reason.into(),
        message: message.into(),
    }
}

/// Sets a condition, keeping its transition time when its status stays.
fn set_condition(conditions: &mut Vec<CrdCondition>, new: CrdCondition) {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(c) if c.status == new.status && c.reason == new.reason && c.message == new.message => {}
        Some(c) => {
            let keep = (c.status == new.status).then_some(c.last_transition_time).flatten();
            *c = new;
            if keep.is_some() {
                c.last_transition_time = keep;
            }
        }
        None => conditions.push(new),
    }
}

/// How Kubernetes orders versions: `v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1` > any
/// other name.
pub fn version_priority(name: &str) -> (u8, u64, u64) {
    let Some(rest) = name.strip_prefix('v') else { return (0, 0, 0) };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(major) = digits.parse::<u64>() else { return (0, 0, 0) };
    let tail = &rest[digits.len()..];
    let (level, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        return (0, 0, 0);
    };
    (level, major, minor)
}

/// The kind of a definition's storage version, in which its objects are kept.
pub fn storage_kind(definition: &Object) -> Option<Kind> {
    let Object::CustomResourceDefinition(crd) = definition else { return None };
    let storage = crd.spec.versions.iter().find(|v| v.storage)?;
    Some(Kind::Custom(crd.custom_kind(&storage.name)))
}

/// A custom object in another version of its resource: conversion strategy None, which
/// changes its apiVersion and nothing else.
pub fn converted(object: &Arc<Object>, to: Kind) -> Arc<Object> {
    match (object.as_ref(), to) {
        (Object::Custom(o), Kind::Custom(version)) if o.of != version => {
            let mut copy = (**o).clone();
            copy.of = version;
            copy.api_version = to.api_version();
            Arc::new(Object::Custom(Box::new(copy)))
        }
        _ => object.clone(),
    }
}

impl ApiServer {
    /// A request in a served version other than the storage version: the objects are read
    /// and written in the storage version and converted for the client.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn in_storage_version(
        &mut self,
        req: Request,
        storage: Kind,
        env: &mut Env,
        seq: crate::record::Seq,
    ) -> StageResult<(u16, super::Reply)> {
        use super::Reply;
        let asked = req.kind;
        match req.verb {
            Verb::Get | Verb::List | Verb::Watch => {
                let mut read = req.clone();
                read.kind = storage;
                let (code, reply) = match req.verb {
                    Verb::Get => (200, Reply::Object(self.get(&read)?)),
                    Verb::List => (200, self.list(&read)?),
                    _ => {
                        // The backlog goes out as the watch opens: note the version first.
                        let next = self.watches.next_id();
                        self.custom_watch_versions.insert(next, asked);
                        match self.watch(&read, env, seq) {
                            Ok(reply) => (200, reply),
                            Err(e) => {
                                self.custom_watch_versions.remove(&next);
                                return Err(e);
                            }
                        }
                    }
                };
                Ok((code, convert_reply(reply, asked)))
            }
            _ => {
                let (code, reply) = match req.verb {
                    Verb::Create => (201, Reply::Object(self.create(req, env, seq, None)?)),
                    Verb::Update => (200, Reply::Object(self.update(req, env, seq, None)?)),
                    Verb::Patch if req.patch_type == Some(super::patch::PatchType::Apply) => {
                        self.server_side_apply(req, env, seq)?
                    }
                    Verb::Patch => (200, Reply::Object(self.patch(req, env, seq)?)),
                    _ => (200, Reply::Object(self.delete(req, env, seq)?)),
                };
                Ok((code, convert_reply(reply, asked)))
            }
        }
    }

    /// Turns a custom object the client wrote in another version into the storage version.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn to_storage_version(&self, object: &mut Object) {
        let Object::Custom(custom) = object else { return };
        let Some(definition) = self.definition_of(custom.of) else { return };
        if let Some(Kind::Custom(storage)) = storage_kind(&definition) {
            if storage != custom.of {
                custom.of = storage;
                custom.api_version = Kind::Custom(storage).api_version();
            }
        }
    }

    /// The definitions the API server holds.
    fn definitions(&self) -> Vec<Arc<Object>> {
        self.peek_list(Kind::CustomResourceDefinition, "")
    }

    /// The definition of a custom kind's resource, if there is one.
    fn definition_of(&self, kind: CustomKind) -> Option<Arc<Object>> {
        let info = kind.info();
        self.peek(Kind::CustomResourceDefinition, "", &format!("{}.{}", info.resource, info.group))
    }

    /// What discovery lists: each served version of every Established definition (the
    /// storage version first among a definition's).
    pub fn served_custom(&self) -> Arc<Vec<Served>> {
        if let Some(served) = self.served_cache.borrow().as_ref() {
            return served.clone();
        }
        let served = Arc::new(self.list_served());
        self.served_cache.replace(Some(served.clone()));
        served
    }

    fn list_served(&self) -> Vec<Served> {
        let mut out = Vec::new();
        for object in self.definitions() {
            let Object::CustomResourceDefinition(crd) = object.as_ref() else { continue };
            if !crd.established() {
                continue;
            }
            // Discovery lists the versions by priority: GA before beta before alpha, higher first.
            let mut versions: Vec<&crate::api::crd::CrdVersion> =
                crd.spec.versions.iter().filter(|v| v.served).collect();
            versions.stable_sort_by_key(|v| std::cmp::Reverse(version_priority(&v.name)));
            let mut first = true;
            for version in versions {
                out.push(Served {
                    kind: crd.custom_kind(&version.name),
                    short_names: crd.status.accepted_names.short_names.clone(),
                    categories: crd.status.accepted_names.categories.clone(),
                    preferred: first,
                    columns: version.additional_printer_columns.clone(),
                    status: crd.has_status(&version.name),
                    schema: crd.schema(&version.name).cloned().unwrap_or_default(),
                });
                first = false;
            }
        }
        out
    }

    /// The definition behind a request for a custom kind, when the resource is served (404
    /// otherwise, as for any path the server does not know).
    pub(super) fn served_definition(&self, req: &Request) -> StageResult<Arc<Object>> {
        let Kind::Custom(kind) = req.kind else {
            return Err((Stage::Authorization, Status::not_found(req.kind, &req.name)));
        };
        let not_served = || {
            (
                Stage::Authorization,
                Status::new(404, "NotFound", "the server could not find the requested resource".to_string()),
            )
        };
        let object = self.definition_of(kind).ok_or_else(not_served)?;
        let Object::CustomResourceDefinition(crd) = object.as_ref() else { return Err(not_served()) };
        let info = kind.info();
        let version = crd.version(info.version).filter(|v| v.served).ok_or_else(not_served)?;
        if !crd.established()
            || crd.spec.names.kind != info.kind
            || crd.namespaced() != info.namespaced
            || crd.spec.names.singular != info.singular
        {
            return Err(not_served());
        }
        if req.subresource == Some(Subresource::Status) && !crd.has_status(&version.name) {
            return Err(not_served());
        }
        if matches!(req.subresource, Some(s) if s != Subresource::Status) {
            return Err(not_served());
        }
        if req.verb == Verb::Create && crd.metadata.deletion_timestamp.is_some() {
            return Err((
                Stage::Validation,
                Status::new(
                    405,
                    "MethodNotAllowed",
                    "create not allowed while custom resource definition is terminating".to_string(),
                ),
            ));
        }
        Ok(object.clone())
    }

    /// A custom object on its way in: unknown fields pruned (refused, when the client sent
    /// them and asked for strict field validation), defaults filled in, then validated.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn admit_custom(&self, req: &Request, object: &mut Object, strict: bool) -> StageResult<()> {
        let Object::Custom(custom) = object else { return Ok(()) };
        let definition = self.served_definition(req)?;
        let Object::CustomResourceDefinition(crd) = definition.as_ref() else { return Ok(()) };
        let Some(schema) = crd.schema(custom.of.info().version) else { return Ok(()) };
        let pruned = super::schema::prune(&mut custom.content, schema);
        if strict && !pruned.is_empty() {
            let info = custom.of.info();
            let unknown: Vec<String> = pruned.iter().map(|p| format!("unknown field \"{p}\"")).collect();
            return Err((
                Stage::Validation,
                Status::bad_request(format!(
                    "{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}",
                    info.kind,
                    info.version,
                    info.kind,
                    unknown.join(", ")
                )),
            ));
        }
        super::schema::default(&mut custom.content, schema);
        let errors = super::schema::validate(&custom.content, schema);
        if !errors.is_empty() {
            return Err((Stage::Validation, Status::invalid(req.kind, &custom.metadata.name, errors)));
        }
        Ok(())
    }

    /// Whether the custom kind's resource has the status subresource.
    pub(super) fn custom_has_status(&self, kind: Kind) -> bool {
        let Kind::Custom(c) = kind else { return false };
        match self.definition_of(c).as_deref() {
            Some(Object::CustomResourceDefinition(crd)) => crd.has_status(c.info().version),
            _ => false,
        }
    }

    /// Notes that a definition was written: its names are to be accepted, or (deleted) its
    /// objects cleaned up.
    pub(super) fn definition_written(&mut self, name: &str, now: Time) {
        self.crd_work.insert(name.to_string(), now + ESTABLISH_DELAY);
    }

    /// When the apiextensions controllers next have work.
    pub fn next_crd_work(&self) -> Option<Time> {
        self.crd_work.values().min().copied()
    }

    /// The naming, establishing and finalizing controllers' passes over the definitions due:
    /// each writes through the API server as any controller does.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub fn apiextensions_due(&mut self, env: &mut Env) {
        let due: Vec<String> = self.crd_work.iter().filter(|(_, at)| **at <= env.now).map(|(n, _)| n.clone()).collect();
        for name in due {
            self.crd_work.remove(&name);
            let Some(object) = self.peek(Kind::CustomResourceDefinition, "", &name) else { continue };
            let Object::CustomResourceDefinition(crd) = object.as_ref() else { continue };
            if crd.metadata.deletion_timestamp.is_some() {
                self.finalize_definition(crd, env);
            } else {
                self.establish(crd, env);
            }
        }
    }

    fn establish(&mut self, crd: &CustomResourceDefinition, env: &mut Env) {
        let mut next = crd.clone();
        let names = &crd.spec.names;
        // Names another definition of the group already serves are refused.
        let others: Vec<CustomResourceDefinition> = self
            .definitions()
            .iter()
            .filter_map(|o| match o.as_ref() {
                Object::CustomResourceDefinition(c) if c.metadata.name != crd.metadata.name => Some((**c).clone()),
                _ => None,
            })
            .filter(|c| c.spec.group == crd.spec.group)
            .collect();
        let kind_taken = others.iter().any(|o| o.status.accepted_names.kind == names.kind);
        let short_taken: Vec<&String> = names
            .short_names
            .iter()
            .filter(|s| others.iter().any(|o| o.status.accepted_names.short_names.contains(s)))
            .collect();
        let status = &mut next.status;
        if kind_taken {
            set_condition(
                &mut status.conditions,
                condition(
                    "NamesAccepted",
                    "False",
                    "KindConflict",
                    &format!("\"{}\" is already in use", names.kind),
                    env.now,
                ),
            );
            set_condition(
                &mut status.conditions,
                condition("Established", "False", "NotAccepted", "not all names are accepted", env.now),
            );
        } else if let Some(short) = short_taken.first() {
            set_condition(
                &mut status.conditions,
                condition(
                    "NamesAccepted",
                    "False",
                    "ShortNamesConflict",
                    &format!("\"{short}\" is already in use"),
                    env.now,
                ),
            );
            if !crd.established() {
                set_condition(
                    &mut status.conditions,
                    condition("Established", "False", "NotAccepted", "not all names are accepted", env.now),
                );
            }
        } else {
            status.accepted_names = names.clone();
            set_condition(
                &mut status.conditions,
                condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", env.now),
            );
            set_condition(
                &mut status.conditions,
                condition(
                    "Established",
                    "True",
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                    env.now,
                ),
            );
        }
        if let Some(storage) = crd.spec.versions.iter().find(|v| v.storage) {
            if !status.stored_versions.contains(&storage.name) {
                status.stored_versions.push(storage.name.clone());
            }
        }
        if next != *crd {
            let _ = self.handle(Request::update_status(Object::CustomResourceDefinition(Box::new(next))), env);
        }
    }

    /// A deleted definition: its objects are deleted, then the finalizer comes off.
    fn finalize_definition(&mut self, crd: &CustomResourceDefinition, env: &mut Env) {
        if !crd.metadata.finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            return;
        }
        let mut next = crd.clone();
        set_condition(
            &mut next.status.conditions,
            condition(
                "Terminating",
                "True",
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
                env.now,
            ),
        );
        set_condition(
            &mut next.status.conditions,
            condition("Established", "False", "Terminating", "the CustomResourceDefinition is being deleted", env.now),
        );
        if next != *crd {
            let _ = self.handle(Request::update_status(Object::CustomResourceDefinition(Box::new(next.clone()))), env);
        }
        let prefix = format!("/registry/{}/{}/", crd.spec.group, crd.spec.names.plural);
        let stored: Vec<Arc<Object>> = self.etcd.range(&prefix).map(|(_, kv)| kv.value.clone()).collect();
        for object in stored {
            // Straight to storage: the resource is no longer served, and its objects go
            // whatever finalizers they hold.
            let key = LookupKey::etcd(object.kind().storage_resource(), object.namespace(), object.name());
            if let Ok(change) = self.etcd.delete(&key, None) {
                let seq = env.record.last_seq();
                self.publish(change, env, seq);
            }
        }
        let Some(latest) = self.peek(Kind::CustomResourceDefinition, "", &crd.metadata.name) else { return };
        let Object::CustomResourceDefinition(latest) = latest.as_ref() else { return };
        let mut done = (**latest).clone();
        done.metadata.finalizers.retain(|f| f != CLEANUP_FINALIZER);
        set_condition(
            &mut done.status.conditions,
            condition("Terminating", "True", "InstanceDeletionCompleted", "removed all instances", env.now),
        );
        let _ = self.handle(Request::update(Object::CustomResourceDefinition(Box::new(done))), env);
    }
}

fn convert_reply(reply: super::Reply, to: Kind) -> super::Reply {
    use super::Reply;
    match reply {
        Reply::Object(o) => Reply::Object(converted(&o, to)),
        Reply::List { items, revision } => {
            Reply::List { items: items.iter().map(|o| converted(o, to)).collect(), revision }
        }
        other => other,
    }
}

/// The custom resources `served` lists, as `kubectl api-resources` rows: name, short names,
/// API version, namespaced, kind.
pub fn api_resource_rows(served: &[Served]) -> Vec<[String; 5]> {
    served
        .iter()
        .filter(|s| s.preferred)
        .map(|s| {
            let info = s.kind.info();
            [
                info.resource.to_string(),
                s.short_names.join(","),
                Kind::Custom(s.kind).api_version(),
                info.namespaced.to_string(),
                info.kind.to_string(),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: 1}
          status:
            type: object
            properties:
              phase: {type: string}
";

    fn run(session: &mut Session, line: &str, heredoc: Option<&str>) -> String {
        let command = Command { line: line.into(), heredoc: heredoc.map(|h| ("EOF".into(), h.into())) };
        let out = session.execute(&command);
        format!("{}{}", out.stdout, out.stderr)
    }

    fn widget(size: &str) -> String {
        format!("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: {size}\n")
    }

    #[test]
    fn a_definition_gets_its_defaults_and_is_established_shortly_after() {
        let mut s = Session::new(1);
        run(&mut s, "kubectl apply -f -", Some(CRD));
        let before = run(&mut s, "kubectl get crd widgets.example.com -o jsonpath={.status.conditions}", None);
        assert_eq!(before, "");
        run(&mut s, "sleep 1", None);
        let names = run(
            &mut s,
            "kubectl get crd widgets.example.com -o jsonpath={.spec.names.listKind}/{.spec.names.singular}",
            None,
        );
        assert_eq!(names, "WidgetList/widget");
        let established = run(
            &mut s,
            "kubectl get crd widgets.example.com -o jsonpath='{.status.conditions[?(@.type==\"Established\")].reason}'",
            None,
        );
        assert_eq!(established, "InitialNamesAccepted");
    }

    #[test]
    fn objects_are_served_only_once_the_definition_is_established() {
        let mut s = Session::new(1);
        run(&mut s, "kubectl apply -f -", Some(CRD));
        let early = run(&mut s, "kubectl apply -f -", Some(&widget("2")));
        assert!(early.contains("no matches for kind \"Widget\" in version \"example.com/v1\""), "{early}");
        run(&mut s, "sleep 1", None);
        assert_eq!(run(&mut s, "kubectl apply -f -", Some(&widget("2"))), "widget.example.com/w created\n");
    }

    #[test]
    fn spec_changes_bump_the_generation_and_status_goes_only_through_its_subresource() {
        let mut s = Session::new(1);
        run(&mut s, "kubectl apply -f -", Some(CRD));
        run(&mut s, "sleep 1", None);
        run(&mut s, "kubectl apply -f -", Some(&widget("2")));
        run(&mut s, "kubectl patch widget w --type=merge -p '{\"status\":{\"phase\":\"Up\"}}'", None);
        run(&mut s, "kubectl patch widget w --type=merge -p '{\"spec\":{\"size\":3}}'", None);
        let got =
            run(&mut s, "kubectl get widget w -o jsonpath={.metadata.generation}/{.status.phase}/{.spec.size}", None);
        assert_eq!(got, "2//3");
        run(
            &mut s,
            "kubectl patch widget w --subresource=status --type=merge -p '{\"status\":{\"phase\":\"Up\"}}'",
            None,
        );
        let got = run(&mut s, "kubectl get widget w -o jsonpath={.metadata.generation}/{.status.phase}", None);
        assert_eq!(got, "2/Up");
    }

    #[test]
    fn deleting_the_definition_deletes_its_objects_first() {
        let mut s = Session::new(1);
        run(&mut s, "kubectl apply -f -", Some(CRD));
        run(&mut s, "sleep 1", None);
        run(&mut s, "kubectl apply -f -", Some(&widget("2")));
        run(&mut s, "kubectl delete crd widgets.example.com", None);
        run(&mut s, "sleep 2", None);
        assert_eq!(run(&mut s, "etcdctl get /registry/example.com --prefix --keys-only", None), "");
        assert_eq!(run(&mut s, "kubectl get crd", None), "No resources found\n");
    }

    #[test]
    fn versions_are_preferred_ga_then_beta_then_alpha() {
        let mut names = vec!["v1alpha1", "v2", "v1beta1", "v1", "v1beta2", "other"];
        names.stable_sort_by_key(|n| std::cmp::Reverse(version_priority(n)));
        assert_eq!(names, ["v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "other"]);
    }

    #[test]
    fn a_second_served_version_reads_and_writes_the_same_objects_converted() {
        let mut s = Session::new(1);
        let two = CRD.replace(
            "  versions:\n  - name: v1\n",
            "  versions:\n  - name: v1beta1\n    served: true\n    storage: false\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n  - name: v1\n",
        );
        run(&mut s, "kubectl apply -f -", Some(&two));
        run(&mut s, "sleep 1", None);
        let old = widget("2").replace("example.com/v1", "example.com/v1beta1");
        assert_eq!(run(&mut s, "kubectl apply -f -", Some(&old)), "widget.example.com/w created\n");
        let stored = run(&mut s, "etcdctl get /registry/example.com/widgets/default/w --print-value-only", None);
        assert!(stored.contains("\"apiVersion\":\"example.com/v1\""), "{stored}");
        let read = run(&mut s, "kubectl get widgets.v1beta1.example.com w -o jsonpath={.apiVersion}", None);
        assert_eq!(read, "example.com/v1beta1");
        assert_eq!(run(&mut s, "kubectl get widget w -o jsonpath={.apiVersion}", None), "example.com/v1");
    }
}
