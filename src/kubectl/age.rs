//! Human-readable durations, as kubectl's AGE and LAST SEEN columns print them.

use crate::sim::{Duration, Time};

/// apimachinery's HumanDuration, from whole seconds.
pub fn human_duration(d: Duration) -> String {
    let secs = d.as_millis() / 1000;
    let minutes = secs / 60;
    let hours = secs / 3600;
    if secs < 60 * 2 {
        return format!("{secs}s");
    }
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{days}d") } else { format!("{days}d{h}h") };
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if years < 8 {
        let dd = days % 365;
        return if dd == 0 { format!("{years}y") } else { format!("{years}y{dd}d") };
    }
    format!("{years}y")
}

/// The age of something that happened at `then`, seen at `now`; `<unknown>` without a time.
pub fn age(then: Option<Time>, now: Time) -> String {
    match then {
        Some(t) => human_duration(now.since(t)),
        None => "<unknown>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_follow_human_duration() {
        let s = Duration::seconds;
        assert_eq!(human_duration(s(5)), "5s");
        assert_eq!(human_duration(s(119)), "119s");
        assert_eq!(human_duration(s(120)), "2m");
        assert_eq!(human_duration(s(150)), "2m30s");
        assert_eq!(human_duration(s(600)), "10m");
        assert_eq!(human_duration(s(3 * 3600 + 60)), "3h1m");
        assert_eq!(human_duration(s(10 * 3600)), "10h");
        assert_eq!(human_duration(s(3 * 86400 + 3600)), "3d1h");
        assert_eq!(human_duration(s(30 * 86400)), "30d");
        assert_eq!(human_duration(s(3 * 365 * 86400 + 86400)), "3y1d");
    }
}
