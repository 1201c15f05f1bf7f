//! The scheduler's decision for one pod, as a table: every node it looked at, what each
//! filter said of it, and how each score plugin rated the nodes that passed.

use crate::api::pod::PodRequests;
use crate::sim::Time;
use std::collections::VecDeque;

/// How many pods' latest tables the scheduler keeps.
pub const KEPT: usize = 64;

/// One scheduling attempt, laid out for the page: nodes × filter plugins, then nodes × score
/// plugins for the feasible ones, and the node picked.
///
/// Large clusters stop filtering once enough feasible nodes are found (upstream's
/// percentageOfNodesToScore, see [`super::Scheduler::nodes_to_find`]): the nodes the cycle never
/// reached have no row, so `rows.len()` can be less than `total`. Likewise a pod whose node
/// affinity names its nodes is only filtered on those; the other nodes appear (refused by
/// NodeAffinity) only when none of the named ones fit.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionTable {
    /// `namespace/name`.
    pub pod: String,
    /// When the attempt was made.
    pub at: Time,
    /// What the pod asks for (what NodeResourcesFit compares with each node's free room).
    pub requests: PodRequests,
    /// The filter plugins that ran for this pod, in the order they run.
    pub filters: Vec<&'static str>,
    /// The filter plugins that had nothing to check for this pod (upstream's PreFilter
    /// `Skip`): they let every node through, so they have no column.
    pub filters_skipped: Vec<&'static str>,
    /// The score plugins that scored the feasible nodes, with their weights, in order. Empty
    /// when no node was feasible (nothing was scored).
    pub scores: Vec<(&'static str, i64)>,
    /// The score plugins that would have given every node the same score for this pod
    /// (upstream's PreScore `Skip`), so they were not asked.
    pub scores_skipped: Vec<&'static str>,
    /// Every node considered, in node-name order.
    pub rows: Vec<NodeVerdict>,
    /// The node picked (`None`: unschedulable).
    pub chosen: Option<String>,
    /// The FailedScheduling message when no node fit.
    pub message: Option<String>,
    /// How many nodes passed every filter.
    pub feasible: usize,
    /// How many nodes the scheduler knows.
    pub total: usize,
}

/// One node's line in a [`DecisionTable`].
#[derive(Clone, Debug, PartialEq)]
pub struct NodeVerdict {
    pub node: String,
    /// One cell per entry of the table's `filters`.
    pub filters: Vec<FilterCell>,
    /// One per entry of the table's `scores`: the plugin's normalized score, 0 to 100. Empty
    /// when the node was filtered out (or nothing was scored).
    pub scores: Vec<i64>,
    /// The weighted sum of `scores`, when the node was scored.
    pub total: Option<i64>,
}

impl NodeVerdict {
    /// Whether the node passed every filter.
    pub fn feasible(&self) -> bool {
        self.filters.iter().all(|c| matches!(c, FilterCell::Pass))
    }

    /// The reason the node was refused, as FailedScheduling counts it, if it was.
    pub fn reason(&self) -> Option<&str> {
        self.filters.iter().find_map(|c| match c {
            FilterCell::Fail(reason) => Some(reason.as_str()),
            _ => None,
        })
    }
}

/// What one filter plugin said of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterCell {
    Pass,
    /// Refused, with the reason text as FailedScheduling gives it (several joined by ", ").
    Fail(String),
    /// Not run: an earlier filter already refused the node.
    Skipped,
}

impl DecisionTable {
    /// The row of the chosen node, if one was chosen.
    pub fn chosen_row(&self) -> Option<&NodeVerdict> {
        let chosen = self.chosen.as_deref()?;
        self.rows.iter().find(|r| r.node == chosen)
    }
}

/// The latest table of each of the last [`KEPT`] pods scheduled, oldest first.
#[derive(Clone, Debug, Default)]
pub struct DecisionLog {
    tables: VecDeque<DecisionTable>,
}

impl DecisionLog {
    /// Keeps `table` as its pod's latest, dropping the pod's older one and, past [`KEPT`]
    /// pods, the pod least recently scheduled.
    pub fn keep(&mut self, table: DecisionTable) {
        if let Some(i) = self.tables.iter().position(|t| t.pod == table.pod) {
            self.tables.remove(i);
        }
        if self.tables.len() >= KEPT {
            self.tables.pop_front();
        }
        self.tables.push_back(table);
    }

    pub fn get(&self, pod: &str) -> Option<&DecisionTable> {
        self.tables.iter().rev().find(|t| t.pod == pod)
    }

    /// The tables, newest last.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &DecisionTable> + ExactSizeIterator {
        self.tables.iter()
    }

    pub fn len(&self) -> usize {
        self.tables.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pod: &str) -> DecisionTable {
        DecisionTable {
            pod: pod.into(),
            at: Time::ZERO,
            requests: PodRequests::default(),
            filters: vec![],
            filters_skipped: vec![],
            scores: vec![],
            scores_skipped: vec![],
            rows: vec![],
            chosen: None,
            message: None,
            feasible: 0,
            total: 0,
        }
    }

    #[test]
    fn the_log_keeps_one_table_per_pod_and_forgets_the_oldest_pod_past_its_bound() {
        let mut log = DecisionLog::default();
        for i in 0..KEPT + 3 {
            log.keep(table(&format!("default/p{i}")));
        }
        assert_eq!(log.len(), KEPT);
        assert!(log.get("default/p2").is_none());
        assert!(log.get("default/p3").is_some());
        let mut again = table("default/p3");
        again.at = Time(5);
        log.keep(again);
        assert_eq!(log.len(), KEPT);
        assert_eq!(log.iter().last().map(|t| (t.pod.as_str(), t.at)), Some(("default/p3", Time(5))));
        assert_eq!(log.iter().filter(|t| t.pod == "default/p3").count(), 1);
    }
}
