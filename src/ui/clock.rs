//! The page's clock: each tick moves virtual time on, but spends at most a budget of real time
//! doing it, so a big cluster slows the clock rather than making the page stutter.

use crate::cluster::Cluster;
use crate::sim::Duration;

/// Real milliseconds a tick may spend running components (the rest of a 16.7 ms frame draws).
pub const BUDGET_MS: f64 = 6.0;

/// Runs what is due within `d` of virtual time, as `Cluster::advance` does, unless that takes
/// more than `budget_ms` of real time: then the clock stops where the work stopped, and the
/// next tick carries on from there.
pub fn advance_within(cluster: &mut Cluster, d: Duration, budget_ms: f64) {
    let Some(performance) = web_sys::window().and_then(|w| w.performance()) else {
        cluster.advance(d);
        return;
    };
    let target = cluster.now() + d;
    let end = performance.now() + budget_ms;
    while cluster.now() < target {
        cluster.step_toward(target);
        if performance.now() >= end {
            break;
        }
    }
}
