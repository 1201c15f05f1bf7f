//! The virtual clock's units: instants and durations in milliseconds since the simulation began.
//!
//! The simulation never reads the wall clock. Instant zero is a fixed calendar date so that
//! timestamps printed in manifests and `-o yaml` look like a real cluster's.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, Sub};

/// Unix time, in seconds, of the simulation's instant zero: 2026-01-01T00:00:00Z.
pub const EPOCH_UNIX_SECONDS: i64 = 1_767_225_600;

/// A span of virtual time in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const fn millis(ms: u64) -> Self {
        Duration(ms)
    }
    /// Saturating, as every constructor here: a manifest's `terminationGracePeriodSeconds:
    /// 9223372036854775807` is a very long time, not an overflow.
    pub const fn seconds(s: u64) -> Self {
        Duration(s.saturating_mul(1000))
    }
    pub const fn minutes(m: u64) -> Self {
        Duration(m.saturating_mul(60_000))
    }
    pub fn as_millis(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// Parses a Go-style duration as `sleep` and kubectl flags take it: `30s`, `2m`, `1m30s`,
    /// `500ms`, `1h`, or a bare number of seconds.
    pub fn parse(text: &str) -> Option<Duration> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        if let Ok(secs) = text.parse::<f64>() {
            return (secs >= 0.0 && secs.is_finite()).then_some(Duration((secs * 1000.0) as u64));
        }
        let mut total = 0f64;
        let mut rest = text;
        while !rest.is_empty() {
            let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            if num_len == 0 {
                return None;
            }
            let value: f64 = rest[..num_len].parse().ok()?;
            rest = &rest[num_len..];
            let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
            let factor = match &rest[..unit_len] {
                "ms" => 1.0,
                "s" => 1000.0,
                "m" => 60_000.0,
                "h" => 3_600_000.0,
                _ => return None,
            };
            rest = &rest[unit_len..];
            total += value * factor;
        }
        Some(Duration(total as u64))
    }
}

/// Go's `time.ParseDuration`, as kubectl's duration flags read their values: an optional
/// sign, then numbers (with an optional fraction) each followed by a unit (`ns`, `us`, `µs`,
/// `ms`, `s`, `m`, `h`), or a lone `0`. Returns signed nanoseconds; None where Go answers
/// `time: invalid duration`, which includes anything past its int64 nanoseconds
/// (±2562047h47m16.854775807s). Never overflows, whatever the digits.
pub fn parse_go_nanos(text: &str) -> Option<i64> {
    const LIMIT: u128 = 1 << 63;
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
        let whole_len = digits(rest);
        let whole = &rest[..whole_len];
        rest = &rest[whole_len..];
        let mut fraction = "";
        if let Some(after) = rest.strip_prefix('.') {
            let len = digits(after);
            fraction = &after[..len];
            rest = &after[len..];
        }
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let unit: u128 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_len..];
        // Leading zeros aside, a whole part of more than 19 digits is past any limit.
        let whole = whole.trim_start_matches('0');
        if whole.len() > 19 {
            return None;
        }
        let value: u128 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
        total = total.checked_add(value.checked_mul(unit)?)?;
        // The fraction's first digits are all that can matter below a nanosecond.
        let kept = &fraction[..fraction.len().min(18)];
        if !kept.is_empty() {
            let f: u128 = kept.parse().ok()?;
            total += f * unit / 10u128.pow(kept.len() as u32);
        }
        if total > LIMIT {
            return None;
        }
    }
    match (negative, total) {
        (true, t) => Some((t as i128).wrapping_neg() as i64),
        (false, t) if t < LIMIT => Some(t as i64),
        _ => None,
    }
}

/// The operands of coreutils' `sleep`, summed: each a number of seconds (a fraction and an
/// exponent allowed, `inf` too) with an optional suffix `s`, `m`, `h` or `d`; the sandbox also
/// takes Go-style durations (`1m30s`, `500ms`). Err names the operand that is not one, as
/// `sleep: invalid time interval 'x'` does; the sum may be infinite (`sleep infinity`).
pub fn parse_sleep_seconds<'a>(operands: &[&'a str]) -> Result<f64, &'a str> {
    let mut total = 0f64;
    for &operand in operands {
        let secs = sleep_operand(operand).ok_or(operand)?;
        total += secs;
    }
    Ok(total)
}

fn sleep_operand(text: &str) -> Option<f64> {
    let (number, factor) = match text.char_indices().last()? {
        (i, 's') => (&text[..i], 1.0),
        (i, 'm') => (&text[..i], 60.0),
        (i, 'h') => (&text[..i], 3600.0),
        (i, 'd') => (&text[..i], 86_400.0),
        _ => (text, 1.0),
    };
    let plain = |n: &str| -> Option<f64> {
        let lower = n.to_ascii_lowercase();
        let finite_form =
            n.bytes().all(|b| b.is_ascii_digit() || b".eE+-".contains(&b)) && n.bytes().any(|b| b.is_ascii_digit());
        let infinite = matches!(lower.trim_start_matches('+'), "inf" | "infinity");
        if !(finite_form || infinite) {
            return None;
        }
        n.parse::<f64>().ok().filter(|v| *v >= 0.0 && !v.is_nan())
    };
    if let Some(value) = plain(number) {
        return Some(value * factor);
    }
    // Go-style: `1m30s`, `500ms` (no sign, no exponent).
    if text.starts_with(['-', '+']) {
        return None;
    }
    parse_go_nanos(text).map(|nanos| nanos as f64 / 1e9)
}

impl Duration {
    /// The largest duration: a clock that saturates rather than wraps.
    pub const MAX: Duration = Duration(u64::MAX);

    /// Whole milliseconds of a non-negative number of seconds, saturating (an infinite or
    /// enormous value is [`Duration::MAX`]).
    pub fn from_secs_f64_saturating(secs: f64) -> Duration {
        if secs.is_nan() || secs <= 0.0 {
            return Duration::ZERO;
        }
        Duration((secs * 1000.0) as u64)
    }

    /// Whole milliseconds of Go nanoseconds (negative ones are zero).
    pub fn from_go_nanos(nanos: i64) -> Duration {
        Duration(u64::try_from(nanos / 1_000_000).unwrap_or(0))
    }

    /// A cap as people write it: `24h`, `90m`, `45s` when whole, else as Go prints it.
    pub fn short(self) -> String {
        match self.0 {
            ms if ms > 0 && ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
            ms if ms > 0 && ms % 60_000 == 0 => format!("{}m", ms / 60_000),
            ms if ms > 0 && ms % 1000 == 0 => format!("{}s", ms / 1000),
            _ => self.to_string(),
        }
    }
}

impl fmt::Display for Duration {
    /// Go's `time.Duration` formatting, rounded to milliseconds: `4.2s`, `1m30s`, `250ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        if ms < 1000 {
            return write!(f, "{ms}ms");
        }
        let hours = ms / 3_600_000;
        let minutes = (ms / 60_000) % 60;
        let secs = (ms % 60_000) as f64 / 1000.0;
        if hours > 0 {
            write!(f, "{hours}h")?;
        }
        if hours > 0 || minutes > 0 {
            write!(f, "{minutes}m")?;
        }
        let secs_text = format!("{secs:.3}");
        let secs_text = secs_text.trim_end_matches('0').trim_end_matches('.');
        write!(f, "{secs_text}s")
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_add(rhs.0))
    }
}

/// An instant on the virtual clock, in milliseconds since the simulation began.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);

    pub fn since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }

    /// Nanoseconds since the Unix epoch, as event names and micro-timestamps use them.
    pub fn unix_nanos(self) -> i128 {
        (EPOCH_UNIX_SECONDS as i128 * 1000 + self.0 as i128) * 1_000_000
    }

    /// RFC 3339 with whole seconds, as `metadata.creationTimestamp` prints.
    pub fn rfc3339(self) -> String {
        let mut out = String::with_capacity(20);
        push_date_time(&mut out, EPOCH_UNIX_SECONDS + (self.0 / 1000) as i64);
        out.push('Z');
        out
    }

    /// RFC 3339 with milliseconds, as JavaScript prints a date.
    pub fn rfc3339_millis(self) -> String {
        let (date, hms) = civil(EPOCH_UNIX_SECONDS + (self.0 / 1000) as i64);
        format!("{date}T{hms}.{:03}Z", self.0 % 1000)
    }

    /// RFC 3339 with microseconds, as `MicroTime` fields (event time, lease renew time) print.
    pub fn rfc3339_micros(self) -> String {
        let mut out = String::with_capacity(27);
        push_date_time(&mut out, EPOCH_UNIX_SECONDS + (self.0 / 1000) as i64);
        out.push('.');
        push_digits(&mut out, (self.0 % 1000) * 1000, 6);
        out.push('Z');
        out
    }

    /// RFC 1123 with a numeric zone, as `kubectl describe` prints times:
    /// `Thu, 01 Jan 2026 00:00:00 +0000`.
    pub fn rfc1123z(self) -> String {
        let unix = EPOCH_UNIX_SECONDS + (self.0 / 1000) as i64;
        let (date, hms) = civil(unix);
        let month = MONTHS[date[5..7].parse::<usize>().unwrap_or(1) - 1];
        format!("{}, {} {month} {} {hms} +0000", weekday(unix), &date[8..10], &date[0..4])
    }

    /// C's `ctime` layout in UTC, as `date` prints it: `Thu Jan  1 00:02:01 UTC 2026`; with
    /// `zero_pad` the day is `01`, as dig's `WHEN` line writes it.
    pub fn ctime(self, zero_pad: bool) -> String {
        let unix = EPOCH_UNIX_SECONDS + (self.0 / 1000) as i64;
        let (y, m, d, secs) = civil_parts(unix);
        let month = MONTHS[(m - 1) as usize];
        let day = if zero_pad { format!("{d:02}") } else { format!("{d:>2}") };
        let (h, mi, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
        format!("{} {month} {day} {h:02}:{mi:02}:{s:02} UTC {y}", weekday(unix))
    }

    /// Parses RFC 3339 (`2026-01-01T00:00:05Z`, optional fraction). Instants before the
    /// simulation began clamp to zero.
    pub fn parse_rfc3339(text: &str) -> Option<Time> {
        let bytes = text.as_bytes();
        if bytes.len() < 20 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' {
            return None;
        }
        let num = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let mut millis = 0i64;
        let rest = text.get(19..)?;
        let rest = if let Some(frac) = rest.strip_prefix('.') {
            let digits: String = frac.chars().take_while(|c| c.is_ascii_digit()).collect();
            let padded = format!("{:0<3}", &digits[..digits.len().min(3)]);
            millis = padded.parse().ok()?;
            &frac[digits.len()..]
        } else {
            rest
        };
        if rest != "Z" {
            return None;
        }
        let unix = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
        let ms = (unix - EPOCH_UNIX_SECONDS) * 1000 + millis;
        Some(Time(ms.max(0) as u64))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, rhs: Duration) -> Time {
        Time(self.0.saturating_add(rhs.0))
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, rhs: Time) -> Duration {
        self.since(rhs)
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.rfc3339())
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Time::parse_rfc3339(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("parsing time \"{text}\" as \"2006-01-02T15:04:05Z07:00\": cannot parse"))
        })
    }
}

/// A `MicroTime` field: the same instant, printed with microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct MicroTime(pub Time);

impl Serialize for MicroTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.rfc3339_micros())
    }
}

impl<'de> Deserialize<'de> for MicroTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Time::deserialize(d).map(MicroTime)
    }
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The weekday of Unix seconds (1970-01-01 was a Thursday).
fn weekday(unix: i64) -> &'static str {
    ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][unix.div_euclid(86_400).rem_euclid(7) as usize]
}

/// Converts Unix seconds to (`YYYY-MM-DD`, `HH:MM:SS`) in UTC.
fn civil(unix: i64) -> (String, String) {
    let (y, m, d, secs) = civil_parts(unix);
    (format!("{y:04}-{m:02}-{d:02}"), format!("{:02}:{:02}:{:02}", secs / 3600, (secs / 60) % 60, secs % 60))
}

/// Appends `YYYY-MM-DDTHH:MM:SS` for Unix seconds, digit by digit: timestamps are written on
/// every serialization of an object, where `format!`'s machinery shows.
fn push_date_time(out: &mut String, unix: i64) {
    let (y, m, d, secs) = civil_parts(unix);
    if !(0..=9999).contains(&y) {
        let (date, hms) = civil(unix);
        out.push_str(&date);
        out.push('T');
        out.push_str(&hms);
        return;
    }
    push_digits(out, y as u64, 4);
    out.push('-');
    push_digits(out, m as u64, 2);
    out.push('-');
    push_digits(out, d as u64, 2);
    out.push('T');
    push_digits(out, (secs / 3600) as u64, 2);
    out.push(':');
    push_digits(out, ((secs / 60) % 60) as u64, 2);
    out.push(':');
    push_digits(out, (secs % 60) as u64, 2);
}

/// Appends the last `width` decimal digits of `n`, zero-padded (callers pass values that fit).
fn push_digits(out: &mut String, n: u64, width: u32) {
    for i in (0..width).rev() {
        out.push(char::from(b'0' + (n / 10u64.pow(i) % 10) as u8));
    }
}

/// Unix seconds as (year, month, day, seconds into the day) in UTC.
pub fn civil_parts(unix: i64) -> (i64, i64, i64, i64) {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    // Howard Hinnant's civil-from-days algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, secs)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_written_digit_by_digit_match_the_formatted_ones() {
        for ms in [0, 999, 1_000, 59_999, 3_599_999, 86_399_999, 123_456_789, 31_536_000_123, 4_000_000_000_000] {
            let t = Time(ms);
            let (date, hms) = civil(EPOCH_UNIX_SECONDS + (ms / 1000) as i64);
            assert_eq!(t.rfc3339(), format!("{date}T{hms}Z"));
            assert_eq!(t.rfc3339_micros(), format!("{date}T{hms}.{:06}Z", (ms % 1000) * 1000));
        }
    }

    #[test]
    fn instant_zero_prints_as_the_simulation_epoch() {
        assert_eq!(Time::ZERO.rfc3339(), "2026-01-01T00:00:00Z");
        assert_eq!(Time(90_061_500).rfc3339_micros(), "2026-01-02T01:01:01.500000Z");
    }

    #[test]
    fn describe_times_name_the_weekday() {
        assert_eq!(Time::ZERO.rfc1123z(), "Thu, 01 Jan 2026 00:00:00 +0000");
        assert_eq!(Time(86_400_000 * 3 + 5000).rfc1123z(), "Sun, 04 Jan 2026 00:00:05 +0000");
    }

    #[test]
    fn rfc3339_round_trips() {
        let t = Time(123_456_000);
        assert_eq!(Time::parse_rfc3339(&t.rfc3339()), Some(t));
        assert_eq!(Time::parse_rfc3339("2026-01-01T00:00:01.250Z"), Some(Time(1250)));
        assert_eq!(Time::parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn malformed_timestamps_are_refused_not_panicked_on() {
        assert_eq!(Time::parse_rfc3339("2026-01-01T00:00:0\u{e9}Z"), None);
        assert_eq!(Time::parse_rfc3339("\u{e9}\u{e9}\u{e9}\u{e9}-01-01T00:00:00Z"), None);
    }

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(Duration::parse("30s"), Some(Duration::seconds(30)));
        assert_eq!(Duration::parse("1m30s"), Some(Duration::seconds(90)));
        assert_eq!(Duration::parse("250ms"), Some(Duration::millis(250)));
        assert_eq!(Duration::parse("2"), Some(Duration::seconds(2)));
        assert_eq!(Duration::parse("soon"), None);
        assert_eq!(Duration::parse("5x"), None);
    }

    #[test]
    fn go_durations_parse_without_overflow() {
        assert_eq!(parse_go_nanos("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_go_nanos("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_go_nanos(".5ms"), Some(500_000));
        assert_eq!(parse_go_nanos("3\u{b5}s"), Some(3_000));
        assert_eq!(parse_go_nanos("-2m"), Some(-120_000_000_000));
        assert_eq!(parse_go_nanos("0"), Some(0));
        assert_eq!(parse_go_nanos("2562047h47m16.854775807s"), Some(i64::MAX));
        assert_eq!(parse_go_nanos("-2562047h47m16.854775808s"), Some(i64::MIN));
        for bad in [
            "",
            "5",
            "1e309s",
            "2562047h47m16.854775808s",
            "9999999h",
            "99999999999999999999s",
            "1x",
            "s",
            ".s",
            "--1s",
            "1.2.3s",
        ] {
            assert_eq!(parse_go_nanos(bad), None, "{bad}");
        }
        assert_eq!(parse_go_nanos(&format!("{}s", "9".repeat(400))), None);
        assert_eq!(parse_go_nanos(&format!("1.{}s", "9".repeat(400))), Some(1_999_999_999));
    }

    #[test]
    fn sleep_operands_parse_as_coreutils_and_go_and_never_overflow() {
        assert_eq!(parse_sleep_seconds(&["1.5", "1m", "2h", "1d"]), Ok(1.5 + 60.0 + 7200.0 + 86_400.0));
        assert_eq!(parse_sleep_seconds(&["1m30s", "500ms"]), Ok(90.5));
        assert_eq!(parse_sleep_seconds(&["1e3"]), Ok(1000.0));
        assert_eq!(parse_sleep_seconds(&["infinity"]), Ok(f64::INFINITY));
        assert_eq!(parse_sleep_seconds(&["1e309s"]), Ok(f64::INFINITY));
        for bad in ["-1", "nan", "forever", "", "1x", "-1m30s"] {
            assert_eq!(parse_sleep_seconds(&[bad]), Err(bad), "{bad}");
        }
        assert_eq!(Duration::from_secs_f64_saturating(f64::INFINITY), Duration::MAX);
        assert_eq!(Duration::seconds(u64::MAX), Duration::MAX);
    }

    #[test]
    fn durations_print_like_go() {
        assert_eq!(Duration::millis(4200).to_string(), "4.2s");
        assert_eq!(Duration::seconds(90).to_string(), "1m30s");
        assert_eq!(Duration::millis(250).to_string(), "250ms");
    }
}
