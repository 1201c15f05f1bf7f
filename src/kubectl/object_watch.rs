//! How kubectl waits on one object (`wait`, `rollout status`, `delete --wait`, `run -it`):
//! as client-go's `UntilWithSync` does, a LIST and then a WATCH narrowed to the object's name
//! (`fieldSelector=metadata.name=NAME`), taking each change as the watch delivers it, until
//! the caller has what it waited for; then the watch is closed.

use crate::api::{Kind, Object};
use crate::apiserver::{FieldSelector, Reply, Request, Status, WatchId};
use crate::cluster::Cluster;
use crate::etcd::Revision;
use crate::record::WatchEventType;
use std::sync::Arc;

pub struct ObjectWatch {
    id: WatchId,
    /// The object as last seen (`None` once deleted, or if it never was).
    pub current: Option<Arc<Object>>,
}

/// The object by name (`LIST ?fieldSelector=metadata.name=NAME`), and the list's revision.
pub fn list(
    cluster: &mut Cluster,
    kind: Kind,
    namespace: &str,
    name: &str,
) -> Result<(Option<Arc<Object>>, Revision), Status> {
    let list = Request::list(kind, namespace).with_fields(FieldSelector::equals("metadata.name", name));
    Ok(match cluster.request(list)? {
        Reply::List { items, revision } => (items.into_iter().next(), revision),
        _ => (None, 0),
    })
}

impl ObjectWatch {
    /// Lists the object by name, then watches it from the list's revision.
    pub fn open(cluster: &mut Cluster, kind: Kind, namespace: &str, name: &str) -> Result<ObjectWatch, Status> {
        let (current, revision) = list(cluster, kind, namespace, name)?;
        ObjectWatch::resume(cluster, kind, namespace, name, current, revision)
    }

    /// Watches the object from `revision`, where a list found it as `current`.
    pub fn resume(
        cluster: &mut Cluster,
        kind: Kind,
        namespace: &str,
        name: &str,
        current: Option<Arc<Object>>,
        revision: Revision,
    ) -> Result<ObjectWatch, Status> {
        let by_name = FieldSelector::equals("metadata.name", name);
        let watch = Request::watch(kind, namespace).with_fields(by_name).from_revision(revision);
        match cluster.request(watch)? {
            Reply::Watch { id, .. } => Ok(ObjectWatch { id, current }),
            _ => Err(Status::internal("the API server did not open the watch")),
        }
    }

    /// Takes what the watch delivered since the last look; whether anything came.
    pub fn poll(&mut self, cluster: &mut Cluster) -> bool {
        let events = cluster.drain_watch(self.id);
        let changed = !events.is_empty();
        for event in events {
            self.current = (event.type_ != WatchEventType::Deleted).then_some(event.object);
        }
        changed
    }

    /// Closes the watch (kubectl's command is done with it).
    pub fn close(self, cluster: &mut Cluster) {
        cluster.close_user_watches();
    }
}

#[cfg(test)]
mod tests {
    use crate::apiserver::Verb;
    use crate::shell::{Command, Session};

    #[test]
    fn kubectl_wait_lists_and_watches_the_object_by_name_instead_of_reading_the_store() {
        let mut s = Session::new(4);
        s.execute(&Command::new("kubectl run box --image=busybox -- sleep 3600"));
        s.cluster.client_log = Some(Vec::new());
        let out = s.execute(&Command::new("kubectl wait --for=condition=Ready pod/box --timeout=60s"));
        assert_eq!(out.stdout, "pod/box condition met\n");
        let calls = s.cluster.client_log.take().unwrap_or_default();
        let sent: Vec<(Verb, String)> = calls.iter().map(|c| (c.request.verb, c.request.path())).collect();
        assert_eq!(sent[0], (Verb::Get, "/api/v1/namespaces/default/pods/box".to_string()));
        assert_eq!(
            sent[1],
            (Verb::List, "/api/v1/namespaces/default/pods?fieldSelector=metadata.name=box".to_string())
        );
        assert_eq!(sent[2].0, Verb::Watch);
        assert_eq!(sent.len(), 3, "every change arrives on the watch: {sent:?}");
    }
}
