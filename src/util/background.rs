//! The standing of the threads that work beside the simulation: each runs at a lower
//! priority than the simulation's own thread, so on a 2-core machine they share the second core
//! and never take the first from it.
//!
//! The scale benchmark runs three such threads (prefault, janitor, etcd-events) next to the
//! simulation: with equal priorities the kernel's fair scheduler gives the four runnable threads
//! two cores' worth of time in equal shares, so the simulation, whose time is the one measured
//! and the one every other thread serves, was preempted for them. Each helper is given a niceness
//! by how much its lag costs the simulation: prefault's lag makes the simulation fault memory in
//! itself, the janitor's makes it free old versions itself, and the events thread's only delays
//! when the last Event is stored. Nothing the simulation computes depends on any of this.

/// How much a helper thread yields to the simulation (a Unix niceness, 0 to 19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Faults in memory ahead of the allocator (`prefault`).
    Prefault = 2,
    /// Frees old object versions (`janitor`).
    Janitor = 5,
    /// Stores Events in their own etcd (`apiserver::events_etcd`).
    EventsEtcd = 15,
}

/// Lowers the calling thread's priority to its standing (a thread already nicer stays as it
/// is). On Linux a niceness is a thread's own; elsewhere it would be the whole process's,
/// simulation included, so nothing changes there. A refusal leaves the thread as it was.
pub fn take(standing: Standing) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions; getpriority and setpriority name the calling
        // thread's own id, and the niceness is only ever raised (which needs no privilege).
        // A failed read (-1) reads as less nice; a refused write changes nothing.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            if libc::getpriority(libc::PRIO_PROCESS, tid) < standing as libc::c_int {
                libc::setpriority(libc::PRIO_PROCESS, tid, standing as libc::c_int);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = standing;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    fn niceness() -> i32 {
        // SAFETY: reads the calling thread's niceness (errno is not consulted: 0..=19 here).
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::syscall(libc::SYS_gettid) as libc::id_t) }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_helper_thread_yields_by_its_standing_and_the_thread_that_started_it_does_not() {
        let before = niceness();
        let helper = std::thread::spawn(|| {
            take(Standing::EventsEtcd);
            niceness()
        })
        .join()
        .unwrap();
        assert_eq!(helper, (Standing::EventsEtcd as i32).max(before), "made nicer, never less nice");
        assert_eq!(niceness(), before, "the calling thread is untouched");
    }
}
