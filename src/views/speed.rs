//! The speed the page really achieves: virtual time gained per real second, measured over the
//! last second or so, so that "100×" on a big cluster that only manages 30× says so.

/// Measures virtual milliseconds gained against real milliseconds passed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpeedMeter {
    /// Where the current window began: real ms, virtual ms.
    start: Option<(f64, u64)>,
    /// The speed measured over the last full window.
    achieved: Option<f64>,
}

/// Real milliseconds a measurement spans.
const WINDOW_MS: f64 = 1000.0;

impl SpeedMeter {
    /// Notes the clocks after a tick of the running page.
    pub fn observe(&mut self, real_ms: f64, virtual_ms: u64) {
        match self.start {
            Some((real, virt)) if real_ms - real >= WINDOW_MS => {
                self.achieved = Some(virtual_ms.saturating_sub(virt) as f64 / (real_ms - real));
                self.start = Some((real_ms, virtual_ms));
            }
            Some(_) => {}
            None => self.start = Some((real_ms, virtual_ms)),
        }
    }

    /// The clock stopped (paused, another speed chosen): the next measurement starts afresh.
    pub fn reset(&mut self) {
        *self = SpeedMeter::default();
    }

    pub fn achieved(&self) -> Option<f64> {
        self.achieved
    }

    /// What the page says next to the speed it was asked for, when it falls short by more than
    /// a tenth: `running at 31×`.
    pub fn shortfall(&self, asked: f64) -> Option<String> {
        let got = self.achieved?;
        (got < asked * 0.9)
            .then(|| if got >= 10.0 { format!("running at {got:.0}×") } else { format!("running at {got:.1}×") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_that_keeps_up_says_nothing_and_one_that_falls_behind_says_how_fast_it_runs() {
        let mut meter = SpeedMeter::default();
        meter.observe(0.0, 0);
        meter.observe(500.0, 50_000);
        assert_eq!(meter.achieved(), None, "no full window yet");
        meter.observe(1000.0, 100_000);
        assert_eq!(meter.achieved(), Some(100.0));
        assert_eq!(meter.shortfall(100.0), None);
        meter.observe(2000.0, 131_000);
        assert_eq!(meter.shortfall(100.0).as_deref(), Some("running at 31×"));
        meter.observe(3000.0, 131_500);
        assert_eq!(meter.shortfall(1.0).as_deref(), Some("running at 0.5×"));
        meter.reset();
        assert_eq!(meter.shortfall(100.0), None);
    }
}
