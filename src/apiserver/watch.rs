//! Watches: the API server's fan-out of etcd changes to the components that asked for them.
//!
//! A watch on pods pinned to one node (`fieldSelector=spec.nodeName=X`, what every kubelet
//! opens) is indexed by node, so a write reaches the kubelets it concerns without visiting the
//! others. An object moving into a watch's filter arrives as ADDED and one moving out as
//! DELETED, as the real watch cache reports it.

use super::fields::FieldSelector;
use crate::api::{Kind, LabelSelector, Object};
use crate::etcd::{Change, ChangeKind, Revision};
use crate::record::{ComponentId, Seq, WatchEventType};
use crate::util::fast_keys::FastKeys;
use std::collections::HashMap;
use std::sync::Arc;

pub type WatchId = usize;

#[derive(Clone, Debug)]
pub struct WatchFilter {
    pub kind: Kind,
    /// Empty: every namespace.
    pub namespace: String,
    pub labels: Option<LabelSelector>,
    pub fields: Option<FieldSelector>,
}

impl WatchFilter {
    pub fn matches(&self, object: &Object) -> bool {
        object.kind() == self.kind
            && (self.namespace.is_empty() || object.namespace() == self.namespace)
            && self.labels.as_ref().is_none_or(|s| s.matches(&object.meta().labels))
            && self.fields.as_ref().is_none_or(|s| s.matches(object))
    }

    fn node_index(&self) -> Option<&str> {
        if self.kind == Kind::Pod { self.fields.as_ref()?.node_name() } else { None }
    }
}

/// One notification, as a watcher receives it.
#[derive(Clone, Debug)]
pub struct WatchEvent {
    pub type_: WatchEventType,
    pub object: Arc<Object>,
    pub revision: Revision,
    /// The record entry of this notification, so whatever it causes can point back to it.
    pub seq: Seq,
}

#[derive(Debug)]
struct Watcher {
    owner: ComponentId,
    filter: WatchFilter,
    queue: Vec<WatchEvent>,
    open: bool,
}

#[derive(Debug, Default)]
pub struct Watches {
    watchers: Vec<Watcher>,
    by_kind: HashMap<Kind, Vec<WatchId>, FastKeys>,
    pods_by_node: HashMap<String, Vec<WatchId>, FastKeys>,
}

/// A notification the API server must send: to whom, and what.
pub struct Delivery {
    pub watch: WatchId,
    pub owner: ComponentId,
    pub type_: WatchEventType,
    pub object: Arc<Object>,
}

/// What a change looks like through a filter: an object entering it is ADDED, one leaving it
/// DELETED, one staying in it MODIFIED; `None` when the filter never sees it.
pub fn classify(filter: &WatchFilter, change: &Change) -> Option<WatchEventType> {
    let was = !change.created && change.prev.as_ref().is_some_and(|p| filter.matches(p));
    let is = change.kind == ChangeKind::Put && filter.matches(&change.value);
    match (was, is) {
        (false, true) => Some(WatchEventType::Added),
        (true, true) => Some(WatchEventType::Modified),
        (true, false) => Some(WatchEventType::Deleted),
        (false, false) => None,
    }
}

impl Watches {
    /// The number the next watch opened will have.
    pub fn next_id(&self) -> WatchId {
        self.watchers.len()
    }

    pub fn open(&mut self, owner: ComponentId, filter: WatchFilter) -> WatchId {
        let id = self.watchers.len();
        match filter.node_index() {
            Some(node) => self.pods_by_node.entry(node.to_string()).or_default().push(id),
            None => self.by_kind.entry(filter.kind).or_default().push(id),
        }
        self.watchers.push(Watcher { owner, filter, queue: Vec::new(), open: true });
        id
    }

    /// Numbers a watch another store serves (the events etcd's) in this sequence: it is never
    /// delivered to here, and its number is never another's.
    pub fn number_elsewhere(&mut self, owner: ComponentId, filter: WatchFilter) -> WatchId {
        let id = self.watchers.len();
        self.watchers.push(Watcher { owner, filter, queue: Vec::new(), open: false });
        id
    }

    pub fn close(&mut self, id: WatchId) {
        if let Some(w) = self.watchers.get_mut(id) {
            w.open = false;
            w.queue.clear();
            // Its client stopped watching for good (a kubelet no longer needs a ConfigMap):
            // changes no longer visit it.
            let index = match w.filter.node_index() {
                Some(node) => self.pods_by_node.get_mut(node),
                None => self.by_kind.get_mut(&w.filter.kind),
            };
            if let Some(ids) = index {
                ids.retain(|&i| i != id);
            }
        }
    }

    /// Closes every watch a component holds (its process stopped).
    pub fn close_all_of(&mut self, owner: ComponentId) {
        for w in self.watchers.iter_mut().filter(|w| w.owner == owner) {
            w.open = false;
            w.queue.clear();
        }
    }

    pub fn filter(&self, id: WatchId) -> Option<&WatchFilter> {
        self.watchers.get(id).map(|w| &w.filter)
    }

    /// Whether any watch still delivers.
    pub fn any_open(&self) -> bool {
        self.watchers.iter().any(|w| w.open)
    }

    pub fn is_open(&self, id: WatchId) -> bool {
        self.watchers.get(id).is_some_and(|w| w.open)
    }

    /// Works out which watches a change concerns, and as what kind of event.
    pub fn deliveries(&self, change: &Change) -> Vec<Delivery> {
        let kind = change.value.kind();
        let by_kind = self.by_kind.get(&kind).map_or(&[][..], Vec::as_slice);
        // A pod's node-pinned watches: those of the node it is on, and of the one it was on.
        let mut by_node: [&[WatchId]; 2] = [&[], &[]];
        if kind == Kind::Pod {
            fn node_of(o: Option<&Arc<Object>>) -> Option<&str> {
                o.and_then(|o| o.as_pod()).map(|p| p.spec.node_name.as_str())
            }
            let (now, before) = (node_of(Some(&change.value)), node_of(change.prev.as_ref()));
            for (slot, node) in by_node.iter_mut().zip([now, before.filter(|b| Some(*b) != now)]) {
                if let Some(ids) = node.filter(|n| !n.is_empty()).and_then(|n| self.pods_by_node.get(n)) {
                    *slot = ids;
                }
            }
        }
        let mut out = Vec::new();
        for &id in by_kind.iter().chain(by_node[0]).chain(by_node[1]) {
            let w = &self.watchers[id];
            if !w.open {
                continue;
            }
            let Some(type_) = classify(&w.filter, change) else { continue };
            out.push(Delivery { watch: id, owner: w.owner, type_, object: change.value.clone() });
        }
        out
    }

    pub fn push(&mut self, id: WatchId, event: WatchEvent) {
        if let Some(w) = self.watchers.get_mut(id).filter(|w| w.open) {
            w.queue.push(event);
        }
    }

    /// Takes every notification waiting for a watch, oldest first. The queue is handed over
    /// whole, so the room a burst made for it goes with it rather than staying reserved.
    pub fn drain(&mut self, id: WatchId) -> Vec<WatchEvent> {
        self.watchers.get_mut(id).map(|w| std::mem::take(&mut w.queue)).unwrap_or_default()
    }

    pub fn pending(&self, id: WatchId) -> usize {
        self.watchers.get(id).map_or(0, |w| w.queue.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Pod;

    fn pod(app: &str, node: &str) -> Arc<Object> {
        let mut p = Pod::default();
        p.metadata.name = "web-1".into();
        p.metadata.namespace = "default".into();
        p.metadata.labels.insert("app".into(), app.into());
        Arc::make_mut(&mut p.spec).node_name = node.into();
        Arc::new(Object::Pod(p))
    }

    fn change(value: Arc<Object>, prev: Option<Arc<Object>>, kind: ChangeKind) -> Change {
        let created = prev.is_none();
        Change { revision: 7, key: "/registry/pods/default/web-1".into(), kind, value, prev, created }
    }

    fn filter(labels: Option<&str>, node: Option<&str>) -> WatchFilter {
        WatchFilter {
            kind: Kind::Pod,
            namespace: String::new(),
            labels: labels.map(|app| LabelSelector {
                match_labels: [("app".to_string(), app.to_string())].into_iter().collect(),
                ..Default::default()
            }),
            fields: node.map(|n| FieldSelector::equals("spec.nodeName", n)),
        }
    }

    /// Each watch's event for `change`, by watch, in the order the watches were opened.
    fn types(watches: &Watches, change: &Change) -> Vec<(WatchId, WatchEventType)> {
        watches.deliveries(change).into_iter().map(|d| (d.watch, d.type_)).collect()
    }

    #[test]
    fn each_open_watch_sees_a_change_as_its_filter_does_in_the_order_the_watches_were_opened() {
        let mut watches = Watches::default();
        let whole =
            [watches.open(ComponentId(1), filter(None, None)), watches.open(ComponentId(2), filter(None, None))];
        let web = watches.open(ComponentId(3), filter(Some("web"), None));
        let node = watches.open(ComponentId(4), filter(None, Some("node-1")));
        let closed = watches.open(ComponentId(5), filter(None, None));
        watches.close(closed);
        let (added, modified, deleted) = (WatchEventType::Added, WatchEventType::Modified, WatchEventType::Deleted);

        let created = change(pod("web", ""), None, ChangeKind::Put);
        assert_eq!(types(&watches, &created), [(whole[0], added), (whole[1], added), (web, added)]);
        // Bound, and relabelled out of the selected watch: the node's watch sees it arrive.
        let bound = change(pod("db", "node-1"), Some(pod("web", "")), ChangeKind::Put);
        assert_eq!(
            types(&watches, &bound),
            [(whole[0], modified), (whole[1], modified), (web, deleted), (node, added)]
        );
        let gone = change(pod("db", "node-1"), Some(pod("db", "node-1")), ChangeKind::Delete);
        assert_eq!(types(&watches, &gone), [(whole[0], deleted), (whole[1], deleted), (node, deleted)]);
    }
}
