//! How much a single command, or a saved session, may ask of the sandbox.
//!
//! Virtual time costs real time: every component due in it runs. The page runs on one thread,
//! so a command that asks for a year of virtual time (`sleep 9999999h`) would freeze it, and a
//! shared link whose journal reaches a year ahead would freeze whoever opens it. Commands that
//! let time pass are therefore capped at what the sandbox can run in about a second, and a
//! journal that reaches further than a replay can honestly rebuild is refused when it is read.

use crate::sim::Duration;

/// The most virtual time one command may let pass: `sleep`, and kubectl's waits (`wait
/// --timeout`, `rollout status --timeout`, `drain --timeout`, `logs -f`/`get -w`
/// `--request-timeout`).
///
/// Measured natively (`kubeloop run`, one core): 24 h of the idle default cluster takes
/// 2.5 s of CPU in a release build (opt-level z, as the page) and 14 s in a debug one; with
/// the example Deployment and a CronJob every minute, 4.3 s in release. The page runs about
/// as fast as native release (a shared link 10 virtual days ahead took 30 s to open), so six
/// hours (0.6 s idle, about 1 s busy) is what one command can honestly run in about a second.
pub const COMMAND_TIME_CAP: Duration = Duration::minutes(6 * 60);

/// The furthest a journal (a shared link, a saved session) may reach: its clock and every
/// entry's time, in virtual time since the cluster started. Replaying it runs all of that
/// time: two days of the idle cluster take about 5 s natively in release, the longest a page
/// should take to open; a week would take 20 s or more.
pub const JOURNAL_TIME_CAP: Duration = Duration::minutes(2 * 24 * 60);
/// The most entries a journal may hold.
pub const JOURNAL_MAX_ENTRIES: usize = 10_000;
/// The most text (command lines, heredoc bodies, lesson progress) a journal may carry, in bytes.
pub const JOURNAL_MAX_TEXT: usize = 1 << 20;
/// The longest encoded journal read at all (base64 of its JSON), in bytes.
pub const JOURNAL_MAX_ENCODED: usize = 4 << 20;

/// kubectl's refusal of a duration flag past [`COMMAND_TIME_CAP`] (`--timeout=99999h`).
pub fn flag_over_cap(flag: &str, text: &str) -> String {
    format!(
        "error: the sandbox lets at most {} of virtual time pass per command (--{flag}={text}); ask for less",
        COMMAND_TIME_CAP.short()
    )
}

/// The largest file the sandbox's shell writes in the home directory: what `kubectl apply`
/// can send in one request (the API server's request body limit, 3 MiB).
pub const HOME_MAX_FILE_BYTES: usize = 3 << 20;
/// The most text the home directory holds, all its files together.
pub const HOME_MAX_TOTAL_BYTES: usize = 8 << 20;
/// The most files and directories the home directory holds (a small file system's inodes):
/// this also bounds what `ls` and `kubectl apply -f DIR -R` walk.
pub const HOME_MAX_ENTRIES: usize = 10_000;
