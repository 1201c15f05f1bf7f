//! The namespace controller: empties a namespace that is being deleted, then lets it go.
//!
//! Deleting a namespace only marks it (`deletionTimestamp`, phase `Terminating`); its
//! `spec.finalizers` still holds `kubernetes`. A moment later (upstream waits 5 s after every
//! change, so that every API server has seen the deletion) the controller deletes every
//! namespaced object in it, kind by kind, counts what is left, and reports that in the
//! namespace's conditions (`NamespaceContentRemaining`, `NamespaceFinalizersRemaining`, …).
//! While content remains (pods take their grace period to stop) it looks again after half the
//! longest grace period; once the namespace is empty it removes its finalizer, and the API
//! server deletes the namespace.

use super::{Action, Reconciler, Synced};
use crate::api::namespace::NamespaceCondition;
use crate::api::{Kind, Namespace, Object};
use crate::apiserver::admission::NAMESPACE_FINALIZER;
use crate::apiserver::{Propagation, Reply, Request, Status};
use crate::client::component::{Ctx, Delta, Informer};
use crate::record::WatchEventType;
use crate::sim::Duration;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How long the controller waits after a namespace changes before it acts on it.
pub const DELETION_GRACE_PERIOD: Duration = Duration::seconds(5);
/// The wait assumed for objects held by finalizers (another controller's work).
const FINALIZER_ESTIMATE_SECONDS: i64 = 15;

/// The conditions the controller maintains, in order, with their reason and message when all
/// is well (status `False`: the problem the type names is absent).
const CONDITIONS: [(&str, &str, &str); 5] = [
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
];

pub struct NamespaceController {
    namespaces: Informer,
    /// Namespaces that changed: their next reconcile only waits out the grace period.
    changed: BTreeSet<String>,
}

impl Default for NamespaceController {
    fn default() -> Self {
        NamespaceController {
            // `busy` reads it between runs, so it is not kube-controller-manager's shared one.
            namespaces: Informer::new(Kind::Namespace).with_own_cache(),
            changed: BTreeSet::new(),
        }
    }
}

/// What one pass over a namespace's content found still there.
#[derive(Debug, Default, PartialEq)]
pub struct Remaining {
    /// `resource.group` → how many objects are left (`pods.`, `replicasets.apps`).
    pub objects: BTreeMap<String, usize>,
    /// Finalizer → how many of the remaining objects carry it.
    pub finalizers: BTreeMap<String, usize>,
    /// Seconds until the content is likely gone (the longest pod grace period).
    pub estimate: i64,
}

/// The namespace's conditions after a pass that left `remaining`: every condition type set,
/// the two content ones `True` while something is left. Returns whether anything changed.
pub fn update_conditions(ns: &mut Namespace, remaining: &Remaining, now: crate::sim::Time) -> bool {
    let list = |entries: Vec<String>| entries.join(", ");
    let mut problems: BTreeMap<&str, (&str, String)> = BTreeMap::new();
    if !remaining.objects.is_empty() {
        let entries = remaining.objects.iter().map(|(r, n)| format!("{r} has {n} resource instances")).collect();
        problems.insert(
            "NamespaceContentRemaining",
            ("SomeResourcesRemain", format!("Some resources are remaining: {}", list(entries))),
        );
    }
    if !remaining.finalizers.is_empty() {
        let entries = remaining.finalizers.iter().map(|(f, n)| format!("{f} in {n} resource instances")).collect();
        problems.insert(
            "NamespaceFinalizersRemaining",
            (
                "SomeFinalizersRemain",
                format!("Some content in the namespace has finalizers remaining: {}", list(entries)),
            ),
        );
    }
    let mut changed = false;
    for (type_, ok_reason, ok_message) in CONDITIONS {
        let (status, reason, message) = match problems.get(type_) {
            Some((reason, message)) => ("True", *reason, message.clone()),
            None => ("False", ok_reason, ok_message.to_string()),
        };
        let conditions = &mut ns.status.conditions;
        match conditions.iter_mut().find(|c| c.type_ == type_) {
            None => {
                conditions.push(NamespaceCondition {
                    type_: type_.into(),
                    status: status.into(),
                    last_transition_time: Some(now),
                    reason: reason.into(),
                    message,
                });
                changed = true;
            }
            Some(c) if c.status != status || c.reason != reason || c.message != message => {
                if c.status != status {
                    c.last_transition_time = Some(now);
                }
                c.status = status.into();
                c.reason = reason.into();
                c.message = message;
                changed = true;
            }
            Some(_) => {}
        }
    }
    changed
}

fn list(ctx: &mut Ctx, kind: Kind, namespace: &str) -> Result<Vec<Arc<Object>>, Status> {
    match ctx.call(Request::list(kind, namespace))? {
        Reply::List { items, .. } => Ok(items),
        _ => Ok(Vec::new()),
    }
}

impl NamespaceController {
    /// Deletes everything in the namespace and reports what is still there afterwards.
    fn delete_all_content(&mut self, namespace: &str, ctx: &mut Ctx) -> Result<Remaining, Status> {
        let mut remaining = Remaining::default();
        // Aggregated kinds (PodMetrics) cannot be deleted: their server serves get and list only.
        // Then the custom resources discovery lists.
        let served = crate::api::custom::Discovery::served();
        let custom = served.iter().filter(|s| s.preferred).map(|s| Kind::Custom(s.kind));
        let kinds = Kind::ALL.iter().copied().chain(custom);
        for kind in kinds.filter(|k| k.info().namespaced && k.info().group != "metrics.k8s.io") {
            let items = list(ctx, kind, namespace)?;
            if items.is_empty() {
                continue;
            }
            // Pods may take their grace period to stop: that is how long to expect to wait.
            let mut estimate = 0;
            for pod in items.iter().filter_map(|o| o.as_pod()).filter(|p| !p.is_terminal()) {
                estimate = estimate.max(pod.spec.termination_grace_period_seconds.unwrap_or(30));
            }
            let doomed: Vec<&Arc<Object>> = items.iter().filter(|o| o.meta().deletion_timestamp.is_none()).collect();
            if !doomed.is_empty() {
                let what = kind.qualified_resource();
                ctx.decide(|| format!("deleting {} {what} in namespace {namespace}", doomed.len()));
            }
            for object in doomed {
                let mut req = Request::delete(kind, namespace, object.name());
                req.propagation = Some(Propagation::Background);
                super::done_unless_failed(ctx.call(req))?;
            }
            let left = list(ctx, kind, namespace)?;
            if left.is_empty() {
                continue;
            }
            let info = kind.info();
            remaining.objects.insert(format!("{}.{}", info.resource, info.group), left.len());
            let mut held = false;
            for f in left.iter().flat_map(|o| o.meta().finalizers.iter()) {
                *remaining.finalizers.entry(f.clone()).or_default() += 1;
                held = true;
            }
            if estimate == 0 && held {
                estimate = FINALIZER_ESTIMATE_SECONDS;
            }
            remaining.estimate = remaining.estimate.max(estimate);
        }
        Ok(remaining)
    }
}

impl Reconciler for NamespaceController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.namespaces]
    }

    fn keys_for(&mut self, _informer: usize, delta: &Delta) -> Vec<String> {
        // Only namespaces being deleted concern the controller.
        if delta.type_ == WatchEventType::Deleted || delta.object.meta().deletion_timestamp.is_none() {
            return Vec::new();
        }
        let name = delta.object.name().to_string();
        self.changed.insert(name.clone());
        vec![name]
    }

    fn busy(&self) -> bool {
        // A namespace being emptied will go without anyone doing anything more.
        self.namespaces.cache.values().any(|o| match &**o {
            Object::Namespace(ns) => {
                ns.metadata.deletion_timestamp.is_some() && ns.spec.finalizers.iter().any(|f| f == NAMESPACE_FINALIZER)
            }
            _ => false,
        })
    }

    fn reconcile(&mut self, name: &str, ctx: &mut Ctx) -> Synced {
        if self.changed.remove(name) {
            return Ok(Action::RequeueAfter(DELETION_GRACE_PERIOD));
        }
        let Some(Object::Namespace(ns)) = self.namespaces.get("", name).map(|o| (**o).clone()) else {
            return Ok(Action::AwaitChange);
        };
        if ns.metadata.deletion_timestamp.is_none() || !ns.spec.finalizers.iter().any(|f| f == NAMESPACE_FINALIZER) {
            return Ok(Action::AwaitChange);
        }
        let remaining = self.delete_all_content(name, ctx)?;
        let mut updated = ns.clone();
        updated.status.phase = "Terminating".into();
        if update_conditions(&mut updated, &remaining, ctx.now) {
            updated.metadata.resource_version.clear();
            let stored = ctx.call_object(Request::update_status(Object::Namespace(updated)))?;
            updated = match &*stored {
                Object::Namespace(n) => n.clone(),
                _ => return Ok(Action::AwaitChange),
            };
            self.namespaces.assume(stored);
        }
        if !remaining.objects.is_empty() {
            // Upstream looks again after half the estimate, plus a second.
            let wait = (remaining.estimate / 2 + 1).max(1) as u64;
            ctx.decide(|| format!("namespace {name}: content remains, looking again in {wait}s"));
            return Ok(Action::RequeueAfter(Duration::seconds(wait)));
        }
        // Empty: remove the `kubernetes` finalizer (upstream's `finalize` subresource), and the
        // API server deletes the namespace once no finalizer is left.
        ctx.decide(|| format!("namespace {name} is empty: removing its {NAMESPACE_FINALIZER} finalizer"));
        updated.spec.finalizers.retain(|f| f != NAMESPACE_FINALIZER);
        updated.metadata.resource_version.clear();
        ctx.call(Request::update(Object::Namespace(updated)))?;
        Ok(Action::AwaitChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ObjectMeta;
    use crate::cluster::{Cluster, ClusterConfig};
    use crate::sim::Time;

    fn decode(yaml: &str) -> Object {
        let value: serde_json::Value = crate::yaml::from_str(yaml).unwrap();
        let kind =
            Kind::from_type_meta(value["apiVersion"].as_str().unwrap(), value["kind"].as_str().unwrap()).unwrap();
        Object::decode(kind, &value).unwrap()
    }

    fn cluster_with_a_deployment_in(ns: &str) -> Cluster {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.settle(Duration::seconds(30));
        let namespace = Object::Namespace(Namespace {
            metadata: ObjectMeta { name: ns.into(), ..Default::default() },
            ..Default::default()
        });
        cluster.request(Request::create(namespace)).unwrap();
        let deployment = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.25\n"
        );
        cluster.request(Request::create(decode(&deployment))).unwrap();
        cluster.settle(Duration::seconds(60));
        cluster
    }

    fn namespace(cluster: &Cluster, name: &str) -> Option<Namespace> {
        match cluster.inspect().get(Kind::Namespace, "", name).as_deref() {
            Some(Object::Namespace(ns)) => Some(ns.clone()),
            _ => None,
        }
    }

    #[test]
    fn a_new_namespace_is_active_with_the_kubernetes_finalizer() {
        let cluster = cluster_with_a_deployment_in("demo");
        let ns = namespace(&cluster, "demo").unwrap();
        assert_eq!(ns.status.phase, "Active");
        assert_eq!(ns.spec.finalizers, ["kubernetes"]);
        assert_eq!(ns.metadata.labels["kubernetes.io/metadata.name"], "demo");
    }

    #[test]
    fn deleting_a_namespace_makes_it_terminating_until_its_content_is_gone() {
        let mut cluster = cluster_with_a_deployment_in("demo");
        assert_eq!(cluster.objects(Kind::Pod, "demo").len(), 2);
        cluster.request(Request::delete(Kind::Namespace, "", "demo")).unwrap();
        let ns = namespace(&cluster, "demo").expect("still there, terminating");
        assert_eq!(ns.status.phase, "Terminating");
        assert!(ns.metadata.deletion_timestamp.is_some());
        // Nothing happens during the grace period.
        cluster.advance(Duration::seconds(4));
        assert_eq!(cluster.objects(Kind::Deployment, "demo").len(), 1);
        // Then the content goes, and the conditions say what is left.
        cluster.advance(Duration::millis(1500));
        assert!(cluster.objects(Kind::Deployment, "demo").is_empty());
        let ns = namespace(&cluster, "demo").expect("waiting for the pods");
        let remaining = ns.status.conditions.iter().find(|c| c.type_ == "NamespaceContentRemaining").unwrap();
        assert_eq!((remaining.status.as_str(), remaining.reason.as_str()), ("True", "SomeResourcesRemain"));
        assert_eq!(remaining.message, "Some resources are remaining: pods. has 2 resource instances");
        assert_eq!(ns.status.conditions.len(), 5);
        cluster.settle(Duration::seconds(60));
        assert!(namespace(&cluster, "demo").is_none());
        assert!(cluster.objects(Kind::Pod, "demo").is_empty());
        assert!(cluster.objects(Kind::ServiceAccount, "demo").is_empty());
    }

    #[test]
    fn nothing_new_may_be_created_in_a_terminating_namespace() {
        let mut cluster = cluster_with_a_deployment_in("demo");
        cluster.request(Request::delete(Kind::Namespace, "", "demo")).unwrap();
        let cm = decode("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n  namespace: demo\n");
        let err = cluster.request(Request::create(cm)).unwrap_err();
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message,
            "configmaps \"late\" is forbidden: unable to create new content in namespace demo because it is being terminated"
        );
    }

    #[test]
    fn the_system_namespaces_may_not_be_deleted() {
        let mut cluster = Cluster::new(ClusterConfig::default());
        for name in ["default", "kube-system", "kube-public"] {
            let err = cluster.request(Request::delete(Kind::Namespace, "", name)).unwrap_err();
            assert_eq!(err.message, format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted"));
        }
    }

    #[test]
    fn conditions_report_remaining_content_and_finalizers_then_clear() {
        let mut ns = Namespace::default();
        let mut remaining = Remaining::default();
        remaining.objects.insert("pods.".into(), 2);
        remaining.objects.insert("replicasets.apps".into(), 1);
        remaining.finalizers.insert("foregroundDeletion".into(), 1);
        assert!(update_conditions(&mut ns, &remaining, Time(1000)));
        let types: Vec<&str> = ns.status.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, CONDITIONS.map(|c| c.0));
        let get = |ns: &Namespace, t: &str| ns.status.conditions.iter().find(|c| c.type_ == t).unwrap().clone();
        assert_eq!(
            get(&ns, "NamespaceContentRemaining").message,
            "Some resources are remaining: pods. has 2 resource instances, replicasets.apps has 1 resource instances"
        );
        assert_eq!(
            get(&ns, "NamespaceFinalizersRemaining").message,
            "Some content in the namespace has finalizers remaining: foregroundDeletion in 1 resource instances"
        );
        assert_eq!(get(&ns, "NamespaceDeletionContentFailure").status, "False");
        assert!(!update_conditions(&mut ns, &remaining, Time(2000)));
        assert!(update_conditions(&mut ns, &Remaining::default(), Time(3000)));
        let cleared = get(&ns, "NamespaceContentRemaining");
        assert_eq!((cleared.status.as_str(), cleared.reason.as_str()), ("False", "ContentRemoved"));
        assert_eq!(cleared.last_transition_time, Some(Time(3000)));
    }
}
