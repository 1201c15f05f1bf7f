//! The page's real-time clock: what drawing costs (so a big cluster's ticks redraw less often),
//! the time budgets measure, and the marks the performance check reads.

// Each tick moves virtual time on within a budget of real time
// (`page::sim::simulation::advance_within`): in the simulation's worker with the worker's own
// clock, in the page's thread (the fallback) with this module's `now_ms`.

/// How often a tick redraws the page: every tick while drawing is cheap; when a big cluster
/// makes a drawing costly, less often, so drawing takes at most ~1/25 of the time (the
/// messages on the map keep moving every frame on their own).
#[derive(Debug, Default)]
pub struct Redraws {
    last_at: f64,
    cost_ms: f64,
    started_at: Option<f64>,
}

impl Redraws {
    pub fn due(&self, now_ms: f64) -> bool {
        now_ms - self.last_at >= (self.cost_ms * 25.0).clamp(0.0, 1000.0)
    }

    /// The page starts drawing.
    pub fn start(&mut self, now_ms: f64) {
        self.started_at = Some(now_ms);
        self.last_at = now_ms;
    }

    /// The page has drawn (its effects run).
    pub fn done(&mut self, now_ms: f64) {
        if let Some(start) = self.started_at.take() {
            self.cost_ms = now_ms - start;
        }
    }
}

/// The page's clock in real milliseconds (animation and budgets only: never the simulation's).
pub fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// Sets a `performance.mark` (how long the page took to get somewhere, for the perf check).
pub fn mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}
