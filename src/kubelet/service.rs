//! The kubelet as the node's systemd service sees it: when its process started and when it
//! stopped, run after run (`systemctl status kubelet`, the journal's systemd lines).

use super::Kubelet;
use crate::sim::Time;

impl Kubelet {
    /// Its process is stopped (`systemctl stop kubelet`, `sim node stop`) at `now`.
    pub fn stopped(&mut self, now: Time) {
        if self.lifecycle.last().is_some_and(|(_, up)| *up) {
            self.lifecycle.push((now, false));
        }
    }

    /// Each start (true) and stop (false) of its process, in order.
    pub fn lifecycle(&self) -> &[(Time, bool)] {
        &self.lifecycle
    }

    /// When its process last started.
    pub fn started_at(&self) -> Time {
        self.started_at
    }
}
