//! The scheduler's nodes, one [`NodeInfo`] each, side by side in name order.
//!
//! Every scheduling cycle walks hundreds of them (from where the last cycle stopped, round the
//! ring) and the plugins read a few numbers of each: kept in one array, that walk reads memory
//! in order, where a map would chase pointers. A name finds its node through a hash index.
//! Nodes come and go rarely; after a batch of them, [`NodeTable::settle`] restores the order.

use super::framework::NodeInfo;
use crate::client::object_cache::FastKeys;
use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct NodeTable {
    /// In name order once settled.
    infos: Vec<NodeInfo>,
    /// Each node's place in `infos`.
    at: HashMap<String, usize, FastKeys>,
    /// Whether nodes were added or removed since the last `settle`.
    unsettled: bool,
}

impl NodeTable {
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&NodeInfo> {
        self.at.get(name).map(|&i| &self.infos[i])
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut NodeInfo> {
        self.at.get(name).map(|&i| &mut self.infos[i])
    }

    /// Adds a node, or replaces the one of that name. Out of order until `settle`.
    pub fn insert(&mut self, info: NodeInfo) {
        match self.at.get(info.name()) {
            Some(&i) => self.infos[i] = info,
            None => {
                self.at.insert(info.name().to_string(), self.infos.len());
                self.infos.push(info);
                self.unsettled = true;
            }
        }
    }

    /// Removes a node. Out of order until `settle`.
    pub fn remove(&mut self, name: &str) -> Option<NodeInfo> {
        let i = self.at.remove(name)?;
        let info = self.infos.swap_remove(i);
        if let Some(moved) = self.infos.get(i) {
            self.at.insert(moved.name().to_string(), i);
        }
        self.unsettled = true;
        Some(info)
    }

    /// Puts the nodes back in name order after additions and removals.
    pub fn settle(&mut self) {
        if !self.unsettled {
            return;
        }
        self.infos.sort_unstable_by(|a, b| a.name().cmp(b.name()));
        for (i, info) in self.infos.iter().enumerate() {
            if let Some(at) = self.at.get_mut(info.name()) {
                *at = i;
            }
        }
        self.unsettled = false;
    }

    /// The nodes, in name order (once settled).
    pub fn values(&self) -> std::slice::Iter<'_, NodeInfo> {
        self.infos.iter()
    }

    /// The nodes with their names, in name order (once settled).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &NodeInfo)> {
        self.infos.iter().map(|info| (info.name(), info))
    }

    /// The nodes in name order starting at the `start`-th, round to the one before it.
    pub fn ring(&self, start: usize) -> impl Iterator<Item = &NodeInfo> {
        let start = if self.infos.is_empty() { 0 } else { start % self.infos.len() };
        self.infos[start..].iter().chain(&self.infos[..start])
    }
}

impl FromIterator<NodeInfo> for NodeTable {
    fn from_iter<I: IntoIterator<Item = NodeInfo>>(iter: I) -> Self {
        let mut table = NodeTable::default();
        for info in iter {
            table.insert(info);
        }
        table.settle();
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Node;
    use std::sync::Arc;

    fn info(name: &str) -> NodeInfo {
        let mut node = Node::default();
        node.metadata.name = name.into();
        NodeInfo::new(Arc::new(node))
    }

    fn names<'a>(it: impl Iterator<Item = &'a NodeInfo>) -> Vec<&'a str> {
        it.map(NodeInfo::name).collect()
    }

    #[test]
    fn nodes_added_and_removed_in_any_order_are_walked_in_name_order_once_settled() {
        let mut table: NodeTable = ["w3", "w1", "w4"].into_iter().map(info).collect();
        table.insert(info("w2"));
        table.remove("w4");
        table.insert(info("w0"));
        table.settle();
        assert_eq!(names(table.values()), ["w0", "w1", "w2", "w3"]);
        for name in ["w0", "w1", "w2", "w3"] {
            assert_eq!(table.get(name).map(NodeInfo::name), Some(name));
        }
        assert!(table.get("w4").is_none());
        assert_eq!(table.len(), 4);
    }

    #[test]
    fn a_node_written_again_replaces_its_entry_in_place() {
        let mut table: NodeTable = ["a", "b"].into_iter().map(info).collect();
        let mut again = info("a");
        again.id = 7;
        table.insert(again);
        assert_eq!(table.len(), 2);
        assert_eq!(table.get("a").map(|i| i.id), Some(7));
    }

    #[test]
    fn the_ring_starts_anywhere_and_wraps_round_to_every_node_once() {
        let table: NodeTable = ["a", "b", "c"].into_iter().map(info).collect();
        assert_eq!(names(table.ring(1)), ["b", "c", "a"]);
        assert_eq!(names(table.ring(5)), ["c", "a", "b"]);
        assert_eq!(names(NodeTable::default().ring(3)), Vec::<&str>::new());
    }
}
