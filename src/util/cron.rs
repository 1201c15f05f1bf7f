//! Cron schedules as CronJobs write them — five fields (minute, hour, day of month, month,
//! day of week) or a macro such as `@hourly` — and the times they fire, in UTC.

use crate::sim::Time;
use crate::sim::time::{EPOCH_UNIX_SECONDS, civil_parts};

/// A parsed schedule: which minutes, hours, days, months and weekdays match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    minutes: u64,
    hours: u64,
    days: u64,
    months: u64,
    weekdays: u64,
    /// Whether the day of month or of week was `*`: when both are restricted, a day matching
    /// either fires (as cron has always done).
    any_day: bool,
    any_weekday: bool,
}

const MONTHS: [&str; 12] = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

fn number(text: &str, names: &[&str], offset: u32) -> Result<u32, String> {
    if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
        return Ok(i as u32 + offset);
    }
    text.parse::<u32>()
        .map_err(|_| format!("failed to parse int from {text}: strconv.Atoi: parsing \"{text}\": invalid syntax"))
}

/// One field: `*`, `*/15`, `5`, `1-5`, `1-30/2`, `MON-FRI`, and lists of these.
fn field(text: &str, min: u32, max: u32, names: &[&str], offset: u32) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step = s.parse::<u32>().map_err(|_| {
                    format!("failed to parse int from {s}: strconv.Atoi: parsing \"{s}\": invalid syntax")
                })?;
                (r, step)
            }
            None => (part, 1),
        };
        if step == 0 {
            return Err(format!("step of range should be a positive number: {part}"));
        }
        let (lo, hi) = if range == "*" || range == "?" {
            star = star || step == 1;
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (number(a, names, offset)?, number(b, names, offset)?)
        } else {
            let v = number(range, names, offset)?;
            (v, if step > 1 { max } else { v })
        };
        if lo < min {
            return Err(format!("beginning of range ({lo}) below minimum ({min}): {part}"));
        }
        if hi > max {
            return Err(format!("end of range ({hi}) above maximum ({max}): {part}"));
        }
        if lo > hi {
            return Err(format!("beginning of range ({lo}) beyond end of range ({hi}): {part}"));
        }
        let mut v = lo;
        while v <= hi {
            bits |= 1 << v;
            v += step;
        }
    }
    Ok((bits, star))
}

/// Parses a schedule, with the parser's own words for what is wrong.
pub fn parse(text: &str) -> Result<Schedule, String> {
    let spec = match text.trim() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other if other.starts_with('@') => return Err(format!("unrecognized descriptor: {other}")),
        other => other,
    };
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!("expected exactly 5 fields, found {}: {spec}", fields.len()));
    }
    let (minutes, _) = field(fields[0], 0, 59, &[], 0)?;
    let (hours, _) = field(fields[1], 0, 23, &[], 0)?;
    let (days, any_day) = field(fields[2], 1, 31, &[], 0)?;
    let (months, _) = field(fields[3], 1, 12, &MONTHS, 1)?;
    let (mut weekdays, any_weekday) = field(fields[4], 0, 7, &WEEKDAYS, 0)?;
    // 7 is Sunday too.
    if weekdays & (1 << 7) != 0 {
        weekdays = (weekdays | 1) & !(1 << 7);
    }
    Ok(Schedule { minutes, hours, days, months, weekdays, any_day, any_weekday })
}

impl Schedule {
    fn day_matches(&self, day: i64, weekday: i64) -> bool {
        let dom = self.days & (1 << day) != 0;
        let dow = self.weekdays & (1 << weekday) != 0;
        match (self.any_day, self.any_weekday) {
            (true, true) => true,
            (true, false) => dow,
            (false, true) => dom,
            (false, false) => dom || dow,
        }
    }

    /// The first whole minute strictly after `t` at which the schedule fires; None if it never
    /// does within five years (`0 0 30 2 *`).
    pub fn next_after(&self, t: Time) -> Option<Time> {
        let unix = EPOCH_UNIX_SECONDS + (t.0 / 1000) as i64;
        let mut minute = unix.div_euclid(60) + 1;
        let limit = minute + 5 * 366 * 24 * 60;
        while minute < limit {
            let (_, month, day, secs) = civil_parts(minute * 60);
            let days = minute.div_euclid(1440);
            // 1970-01-01 was a Thursday.
            let weekday = (days + 4).rem_euclid(7);
            if self.months & (1 << month) == 0 || !self.day_matches(day, weekday) {
                // The next day.
                minute = (days + 1) * 1440;
                continue;
            }
            let (hour, min) = (secs / 3600, (secs / 60) % 60);
            if self.hours & (1 << hour) == 0 {
                minute = days * 1440 + (hour + 1) * 60;
                continue;
            }
            if self.minutes & (1 << min) == 0 {
                minute += 1;
                continue;
            }
            let millis = (minute * 60 - EPOCH_UNIX_SECONDS) * 1000;
            return (millis >= 0).then_some(Time(millis as u64));
        }
        None
    }

    /// The last time at or before `now` and after `since` that the schedule fired, if any.
    pub fn last_between(&self, since: Time, now: Time) -> Option<Time> {
        let mut last = None;
        let mut t = since;
        while let Some(next) = self.next_after(t).filter(|n| *n <= now) {
            last = Some(next);
            t = next;
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Time {
        Time::parse_rfc3339(text).expect("time")
    }

    #[test]
    fn every_minute_fires_at_the_next_whole_minute() {
        let s = parse("*/1 * * * *").unwrap();
        assert_eq!(s.next_after(at("2026-01-01T00:00:05Z")), Some(at("2026-01-01T00:01:00Z")));
        assert_eq!(s.next_after(at("2026-01-01T00:01:00Z")), Some(at("2026-01-01T00:02:00Z")));
    }

    #[test]
    fn steps_ranges_names_and_macros_pick_their_minutes_and_days() {
        let s = parse("30 9-17/4 * * MON-FRI").unwrap();
        // 2026-01-01 is a Thursday: 09:30, 13:30, 17:30, then Friday 09:30.
        assert_eq!(s.next_after(at("2026-01-01T10:00:00Z")), Some(at("2026-01-01T13:30:00Z")));
        assert_eq!(s.next_after(at("2026-01-01T17:30:00Z")), Some(at("2026-01-02T09:30:00Z")));
        assert_eq!(s.next_after(at("2026-01-02T18:00:00Z")), Some(at("2026-01-05T09:30:00Z")));
        assert_eq!(parse("@hourly").unwrap().next_after(at("2026-01-01T00:59:59Z")), Some(at("2026-01-01T01:00:00Z")));
        assert_eq!(
            parse("0 0 1 JAN *").unwrap().next_after(at("2026-01-01T00:00:00Z")),
            Some(at("2027-01-01T00:00:00Z"))
        );
    }

    #[test]
    fn a_restricted_day_of_month_and_of_week_fire_on_either() {
        let s = parse("0 12 15 * SUN").unwrap();
        // Sunday the 4th comes before the 15th.
        assert_eq!(s.next_after(at("2026-01-01T00:00:00Z")), Some(at("2026-01-04T12:00:00Z")));
    }

    #[test]
    fn bad_schedules_are_refused_in_the_parsers_words() {
        assert_eq!(parse("* * *").unwrap_err(), "expected exactly 5 fields, found 3: * * *");
        assert_eq!(parse("61 * * * *").unwrap_err(), "end of range (61) above maximum (59): 61");
        assert!(parse("x * * * *").unwrap_err().starts_with("failed to parse int from x"));
        assert_eq!(parse("@sometimes").unwrap_err(), "unrecognized descriptor: @sometimes");
        assert_eq!(parse("0 0 30 2 *").unwrap().next_after(Time::ZERO), None);
    }

    #[test]
    fn the_last_firing_is_found_between_two_times() {
        let s = parse("*/5 * * * *").unwrap();
        assert_eq!(
            s.last_between(at("2026-01-01T00:00:00Z"), at("2026-01-01T00:17:00Z")),
            Some(at("2026-01-01T00:15:00Z"))
        );
        assert_eq!(s.last_between(at("2026-01-01T00:15:00Z"), at("2026-01-01T00:17:00Z")), None);
    }
}
