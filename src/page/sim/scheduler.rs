//! The scheduler's decision for a pod as frame data. Its table names the plugins with the
//! scheduler's own `'static` strings; on the wire they are text, and on arrival each distinct
//! name is interned once (a few plugin names; past a bound, unknown names read as `?`).

use crate::scheduler::decision::{DecisionTable, FilterCell, NodeVerdict};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What the scheduler's view shows: the pods it has tables for (newest first) and the table
/// asked for (a pod's, or the latest).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SchedulerFrame {
    pub pods: Vec<String>,
    #[serde(with = "table_wire")]
    pub table: Option<DecisionTable>,
}

/// The scheduler's view for `pod` (`namespace/name`), or its latest decision.
pub fn scheduler_frame(cluster: &crate::cluster::Cluster, pod: Option<&str>) -> SchedulerFrame {
    let scheduler = cluster.component::<crate::scheduler::Scheduler>();
    let table = scheduler.and_then(|s| match pod {
        Some(key) => s.decision(key).cloned(),
        None => s.decisions().last().cloned(),
    });
    let pods = scheduler.map(|s| s.decisions().rev().map(|t| t.pod.clone()).collect()).unwrap_or_default();
    SchedulerFrame { pods, table }
}

/// The most distinct plugin names interned.
const NAMES: usize = 64;

/// The `'static` name for `name`: the same one each time it arrives.
fn intern(name: &str) -> &'static str {
    use std::cell::RefCell;
    thread_local! {
        static KNOWN: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
    }
    KNOWN.with(|known| {
        let mut known = known.borrow_mut();
        if let Some(k) = known.iter().find(|k| **k == name) {
            return *k;
        }
        if known.len() >= NAMES {
            return "?";
        }
        let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
        known.push(leaked);
        leaked
    })
}

#[derive(Serialize, Deserialize)]
enum CellWire {
    Pass,
    Fail(String),
    Skipped,
}

#[derive(Serialize, Deserialize)]
struct RowWire {
    node: String,
    filters: Vec<CellWire>,
    scores: Vec<i64>,
    total: Option<i64>,
}

#[derive(Serialize, Deserialize)]
struct TableWire {
    pod: String,
    at_ms: u64,
    cpu_milli: i64,
    memory_bytes: i64,
    filters: Vec<String>,
    filters_skipped: Vec<String>,
    scores: Vec<(String, i64)>,
    scores_skipped: Vec<String>,
    rows: Vec<RowWire>,
    chosen: Option<String>,
    message: Option<String>,
    feasible: usize,
    total: usize,
}

fn names(v: &[&'static str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn statics(v: Vec<String>) -> Vec<&'static str> {
    v.iter().map(|s| intern(s)).collect()
}

impl From<&DecisionTable> for TableWire {
    fn from(t: &DecisionTable) -> Self {
        TableWire {
            pod: t.pod.clone(),
            at_ms: t.at.0,
            cpu_milli: t.requests.cpu_milli,
            memory_bytes: t.requests.memory_bytes,
            filters: names(&t.filters),
            filters_skipped: names(&t.filters_skipped),
            scores: t.scores.iter().map(|(s, w)| (s.to_string(), *w)).collect(),
            scores_skipped: names(&t.scores_skipped),
            rows: t
                .rows
                .iter()
                .map(|r| RowWire {
                    node: r.node.clone(),
                    filters: r
                        .filters
                        .iter()
                        .map(|c| match c {
                            FilterCell::Pass => CellWire::Pass,
                            FilterCell::Fail(why) => CellWire::Fail(why.clone()),
                            FilterCell::Skipped => CellWire::Skipped,
                        })
                        .collect(),
                    scores: r.scores.clone(),
                    total: r.total,
                })
                .collect(),
            chosen: t.chosen.clone(),
            message: t.message.clone(),
            feasible: t.feasible,
            total: t.total,
        }
    }
}

impl From<TableWire> for DecisionTable {
    fn from(w: TableWire) -> Self {
        DecisionTable {
            pod: w.pod,
            at: crate::sim::Time(w.at_ms),
            requests: crate::api::pod::PodRequests { cpu_milli: w.cpu_milli, memory_bytes: w.memory_bytes },
            filters: statics(w.filters),
            filters_skipped: statics(w.filters_skipped),
            scores: w.scores.iter().map(|(s, weight)| (intern(s), *weight)).collect(),
            scores_skipped: statics(w.scores_skipped),
            rows: w
                .rows
                .into_iter()
                .map(|r| NodeVerdict {
                    node: r.node,
                    filters: r
                        .filters
                        .into_iter()
                        .map(|c| match c {
                            CellWire::Pass => FilterCell::Pass,
                            CellWire::Fail(why) => FilterCell::Fail(why),
                            CellWire::Skipped => FilterCell::Skipped,
                        })
                        .collect(),
                    scores: r.scores,
                    total: r.total,
                })
                .collect(),
            chosen: w.chosen,
            message: w.message,
            feasible: w.feasible,
            total: w.total,
        }
    }
}

mod table_wire {
    use super::*;

    pub fn serialize<S: Serializer>(table: &Option<DecisionTable>, s: S) -> Result<S::Ok, S::Error> {
        table.as_ref().map(TableWire::from).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DecisionTable>, D::Error> {
        Ok(Option::<TableWire>::deserialize(d)?.map(DecisionTable::from))
    }
}
