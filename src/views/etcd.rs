//! etcd as the page draws it: the revision counter, the `/registry` key tree folded by
//! resource and namespace, and the latest writes with the component whose request made them.

use crate::cluster::Cluster;
use crate::etcd::{ChangeKind, Etcd, Revision};
use crate::record::{Entry, Happening};
use std::collections::{BTreeMap, BTreeSet};

/// What the etcd panel shows.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EtcdView {
    /// The store's revision: one more for every write, whatever the key.
    pub revision: Revision,
    /// The oldest revision whose history is still kept (watches from before it are refused).
    pub compacted: Revision,
    /// How many keys are stored.
    pub keys: usize,
    /// The keys under `/registry/`, one group per resource, in resource-name order.
    pub tree: Vec<ResourceGroup>,
    /// The latest writes made through the API server, newest first.
    pub writes: Vec<Write>,
}

/// The keys under one `/registry/<resource>/` prefix.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceGroup {
    /// The resource's plural name as it appears in the key: `pods`, `deployments`, `nodes`.
    pub resource: String,
    pub count: usize,
    /// How many of the keys each namespace holds, in namespace order; empty for a
    /// cluster-scoped resource (`/registry/nodes/<name>`).
    pub namespaces: Vec<(String, usize)>,
}

impl ResourceGroup {
    /// The group's key prefix, `/registry/pods/`.
    pub fn prefix(&self) -> String {
        ["/registry/", &self.resource, "/"].concat()
    }
}

/// One write to etcd.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Write {
    /// The revision the write made.
    pub revision: Revision,
    pub key: String,
    /// `PUT` or `DELETE`, as etcd calls them (a graceful `kubectl delete` first writes a PUT:
    /// the object marked for deletion).
    pub op: std::borrow::Cow<'static, str>,
    /// The component whose request made the write (its name on the page).
    pub by: String,
}

/// How far back into the record the view looks for writes.
const LOOK_BACK: usize = 5000;

/// etcd's state, and its latest `recent` writes, for the page.
pub fn etcd_view(cluster: &Cluster, recent: usize) -> EtcdView {
    let etcd = cluster.inspect().etcd();
    EtcdView {
        revision: etcd.revision(),
        compacted: etcd.compacted_revision(),
        keys: etcd.len() + etcd.raw_range("").count(),
        tree: tree(etcd),
        writes: writes(cluster, recent),
    }
}

/// The key tree, counted without sorting the keys (only the counts are kept, in order).
fn tree(etcd: &Etcd) -> Vec<ResourceGroup> {
    // resource -> (count, namespace -> count)
    let mut groups: BTreeMap<&str, (usize, BTreeMap<&str, usize>)> = BTreeMap::new();
    let objects = etcd.unordered("/registry/").map(|(key, kv)| (key, Some(kv.value.namespace())));
    let raw = etcd.raw_range("/registry/").map(|(key, _)| (key.as_str(), None));
    for (key, namespace) in objects.chain(raw) {
        let Some(rest) = key.strip_prefix("/registry/") else { continue };
        let (resource, below) = rest.split_once('/').unwrap_or((rest, ""));
        // An object names its namespace; a value no object decodes from is read by its key.
        let namespace = match namespace {
            Some(ns) => ns,
            None => below.split_once('/').map_or("", |(ns, _)| ns),
        };
        let (n, namespaces) = groups.entry(resource).or_default();
        *n += 1;
        if !namespace.is_empty() {
            *namespaces.entry(namespace).or_default() += 1;
        }
    }
    groups
        .into_iter()
        .map(|(resource, (count, namespaces))| ResourceGroup {
            resource: resource.to_string(),
            count,
            namespaces: namespaces.into_iter().map(|(ns, n)| (ns.to_string(), n)).collect(),
        })
        .collect()
}

/// The latest writes, newest first: each API request that changed the store, matched with the
/// changes etcd logged for it.
fn writes(cluster: &Cluster, recent: usize) -> Vec<Write> {
    let etcd = cluster.inspect().etcd();
    let mut writes = Vec::new();
    let mut seen: BTreeSet<Revision> = BTreeSet::new();
    let mut entries = cluster.record.entries().rev().take(LOOK_BACK).peekable();
    while let Some(entry) = entries.next() {
        if writes.len() >= recent {
            break;
        }
        let Some(key) = stored_key(entry) else { continue };
        // The revision before the request: the entry recorded just before it.
        let before = entries.peek().map(|e| e.revision);
        let by = cluster.component_name(entry.actor);
        let mut found: Vec<Write> = Vec::new();
        let window = before.filter(|&b| b < entry.revision).unwrap_or(entry.revision - 1);
        match etcd.changes_since(window) {
            Ok(changes) => {
                for c in changes.take_while(|c| c.revision <= entry.revision).filter(|c| *c.key == *key) {
                    let op = match c.kind {
                        ChangeKind::Put => "PUT",
                        ChangeKind::Delete => "DELETE",
                    };
                    found.push(Write { revision: c.revision, key: key.clone(), op: op.into(), by: by.to_string() });
                }
            }
            // The history is compacted: trust the record alone, when the request moved the
            // revision on.
            Err(_) if before.is_some_and(|b| b < entry.revision) => {
                let op = match &entry.what {
                    Happening::Request { method: "DELETE", .. } => "DELETE",
                    _ => "PUT",
                };
                found.push(Write { revision: entry.revision, key: key.clone(), op: op.into(), by: by.to_string() });
            }
            Err(_) => {}
        }
        for w in found.into_iter().rev() {
            if writes.len() < recent && seen.insert(w.revision) {
                writes.push(w);
            }
        }
    }
    writes
}

/// The etcd key a successful write request names (`None` for reads and refused requests).
fn stored_key(entry: &Entry) -> Option<String> {
    let Happening::Request { method, kind, namespace, name, code, failed_at, .. } = &entry.what else {
        return None;
    };
    let wrote = *method != "GET" && (200..300).contains(code) && failed_at.is_none() && !name.is_empty();
    if !wrote {
        return None;
    }
    let info = kind.info();
    let namespace = if info.namespaced { namespace.as_str() } else { "" };
    Some(Etcd::key_for(info.resource, namespace, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    fn run(s: &mut Session, line: &str) {
        s.execute(&Command::new(line));
    }

    #[test]
    fn a_new_deployment_appears_under_registry_deployments_default() {
        let mut s = Session::new(1);
        let before = etcd_view(&s.cluster, 0);
        let default_deployments = |view: &EtcdView| {
            let group = view.tree.iter().find(|g| g.resource == "deployments");
            group.and_then(|g| g.namespaces.iter().find(|(ns, _)| ns == "default").map(|(_, n)| *n)).unwrap_or(0)
        };
        assert_eq!(default_deployments(&before), 0);
        run(&mut s, "kubectl create deployment web --image=nginx --replicas=2");
        run(&mut s, "sim settle");
        let view = etcd_view(&s.cluster, 0);
        assert_eq!(default_deployments(&view), 1);
        assert!(view.revision > before.revision);
        let pods = view.tree.iter().find(|g| g.resource == "pods").expect("a pods group");
        assert_eq!(pods.prefix(), "/registry/pods/");
        assert_eq!(pods.count, pods.namespaces.iter().map(|(_, n)| n).sum::<usize>());
        assert!(pods.namespaces.iter().any(|(ns, n)| ns == "default" && *n == 2), "{pods:?}");
        let nodes = view.tree.iter().find(|g| g.resource == "nodes").expect("a nodes group");
        assert_eq!((nodes.count, nodes.namespaces.len()), (4, 0), "nodes are cluster-scoped");
        let names: Vec<&str> = view.tree.iter().map(|g| g.resource.as_str()).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted by resource: {names:?}");
        assert_eq!(view.keys, view.tree.iter().map(|g| g.count).sum::<usize>());
    }

    #[test]
    fn the_latest_writes_come_newest_first_with_their_revisions() {
        let mut s = Session::new(1);
        run(&mut s, "kubectl run web --image=nginx");
        run(&mut s, "sim settle");
        let view = etcd_view(&s.cluster, 8);
        assert_eq!(view.writes.len(), 8);
        assert!(view.writes.windows(2).all(|w| w[0].revision > w[1].revision), "{:?}", view.writes);
        assert!(view.writes[0].revision <= view.revision);
        let etcd = s.cluster.inspect().etcd();
        for w in &view.writes {
            let change = etcd.changes_since(w.revision - 1).ok().and_then(|mut c| c.next()).expect("the change");
            assert_eq!((change.revision, &*change.key), (w.revision, w.key.as_str()), "{w:?}");
        }
        let all = etcd_view(&s.cluster, 500).writes;
        let created = all.iter().rev().find(|w| w.key == "/registry/pods/default/web").expect("the pod's creation");
        assert_eq!(
            (&*created.op, created.by.as_str()),
            ("PUT", s.cluster.component_name(crate::record::ComponentId::USER))
        );
        let bound = all.iter().find(|w| w.key == "/registry/pods/default/web" && w.by.contains("scheduler"));
        assert!(bound.is_some_and(|b| b.revision > created.revision), "the binding is a later write");

        run(&mut s, "kubectl delete pod web");
        run(&mut s, "sim settle");
        let view = etcd_view(&s.cluster, 500);
        let deleted = view.writes.iter().find(|w| w.key == "/registry/pods/default/web").expect("the pod's last write");
        assert_eq!(deleted.op, "DELETE");
        assert!(view.writes.iter().all(|w| w.revision <= view.revision));
    }
}
