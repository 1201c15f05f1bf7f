//! A component's event recorder and client-go's event correlator in front of it: a repeat
//! bumps one Event's count, from the tenth different message of the same reason about an object
//! within ten minutes on they are folded into one "(combined from similar events)" Event, and a budget
//! of 25 events per object (one more every five minutes) drops what a chatty component says
//! beyond it (the spam filter).

use crate::api::shared::Shared;
use crate::api::{Event, EventSource, Object, ObjectMeta, ObjectReference};
use crate::apiserver::Status;
use crate::apiserver::events_etcd::EventWrite;
use crate::client::object_cache::FastKeys;
use crate::sim::{Duration, Time};
use crate::util::sort::StableSort;
use std::collections::HashMap;
use std::sync::Arc;

/// Different messages of one reason about one object before the next is combined
/// (client-go's `defaultAggregateMaxEvents`).
pub const AGGREGATE_MAX_EVENTS: usize = 10;
/// How long similar events are remembered for combining (`defaultAggregateIntervalInSeconds`).
pub const AGGREGATE_INTERVAL: Duration = Duration::minutes(10);
/// Events a component may report about one object at once (`defaultSpamBurst`).
pub const SPAM_BURST: u32 = 25;
/// How often the budget earns one more event (`defaultSpamQPS`, 1/300 per second).
pub const SPAM_REFILL: Duration = Duration::minutes(5);
/// What a combined event's message starts with.
pub const COMBINED_PREFIX: &str = "(combined from similar events): ";
/// How many entries each of the recorder's caches keeps (client-go's `maxLruCacheEntries`).
const CACHE_SIZE: usize = 4096;

/// A component's event recorder: who it reports as, what it reported recently (the stored
/// events themselves, shared with the store), and its correlator's state.
#[derive(Debug)]
pub struct EventRecorder {
    /// Who reports: shared by every Event this recorder makes.
    pub source: Shared<EventSource>,
    /// Whether events pass the correlator's aggregation and spam filter: kubelets' and
    /// controllers' core/v1 recorders do; the scheduler's events.k8s.io recorder has neither.
    correlate: bool,
    /// The last Event reported under each event key (object, type, reason, field path and
    /// message), by fingerprint.
    seen: HashMap<u64, Arc<Object>, FastKeys>,
    /// Per object and reason, the different messages seen lately. Keyed by fingerprints, not
    /// the keys themselves: a kubelet keeps a few for every pod it runs.
    similar: HashMap<u64, Similar, FastKeys>,
    /// Per object, its spam filter budget.
    budgets: HashMap<u64, Budget, FastKeys>,
    /// The millisecond of its last report, and how many it made before in that millisecond.
    this_milli: (Time, u64),
    /// When the caches were last rid of what no longer counts (see `forget_stale`).
    swept: Time,
}

impl Default for EventRecorder {
    fn default() -> Self {
        EventRecorder::new("", "")
    }
}

/// Messages seen of one reason about one object, until the interval passes without one.
#[derive(Debug)]
struct Similar {
    /// Fingerprints of the different messages, oldest first; fewer than
    /// [`AGGREGATE_MAX_EVENTS`] between events.
    messages: Vec<u64>,
    last: Time,
}

/// A token bucket: [`SPAM_BURST`] events at once, one more every [`SPAM_REFILL`].
#[derive(Debug)]
struct Budget {
    tokens: u32,
    /// When the last token was earned (or the bucket last found full).
    earned: Time,
    /// When it was last asked, for forgetting the least recently used.
    used: Time,
}

impl Budget {
    fn full(now: Time) -> Self {
        Budget { tokens: SPAM_BURST, earned: now, used: now }
    }

    /// Whether it would be full again by `now`: then it is the same as a fresh one.
    fn refilled_by(&self, now: Time) -> bool {
        let earned = now.since(self.earned).as_millis() / SPAM_REFILL.as_millis();
        self.tokens as u64 + earned >= SPAM_BURST as u64
    }

    /// Takes a token if there is one, after crediting those earned since the last.
    fn take(&mut self, now: Time) -> bool {
        self.used = now;
        let earned = now.since(self.earned).as_millis() / SPAM_REFILL.as_millis();
        if earned > 0 {
            self.tokens = (self.tokens as u64 + earned).min(SPAM_BURST as u64) as u32;
            self.earned =
                if self.tokens == SPAM_BURST { now } else { self.earned + Duration(earned * SPAM_REFILL.as_millis()) };
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }
}

/// A 64-bit fingerprint of the pieces, the same on every platform. The recorder's caches are
/// keyed by these rather than by the joined keys themselves: a kubelet remembers several for
/// every pod it runs, and two keys sharing one (a chance in 2^64 for a pair) would merely share
/// a count or a budget.
pub fn fingerprint(parts: &[&str]) -> u64 {
    within(0, parts)
}

/// The fingerprint of more pieces about what `object` fingerprints: each piece's length, then
/// its bytes eight at a time (little-endian words, the last one zero-padded), each word mixed
/// in with a multiplication and a rotation, then the whole mixed once more (splitmix64's
/// finalizer) so every bit depends on every byte. Every Event a component reports takes three.
pub fn within(object: u64, parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ object;
    let mut eat = |word: u64| hash = (hash ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(31);
    for part in parts {
        eat(part.len() as u64);
        let mut words = part.as_bytes().chunks_exact(8);
        for word in &mut words {
            eat(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            eat(u64::from_le_bytes(last));
        }
    }
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

/// Forgets the older half of `map` once it is full and `key` would be new (what an LRU of
/// `CACHE_SIZE` entries would have dropped, near enough): a later repeat starts afresh.
fn make_room<V>(map: &mut HashMap<u64, V, FastKeys>, key: &u64, last_used: impl Fn(&V) -> Time) {
    if map.len() < CACHE_SIZE || map.contains_key(key) {
        return;
    }
    let mut by_age: Vec<(Time, u64)> = map.iter().map(|(k, v)| (last_used(v), *k)).collect();
    by_age.stable_sort();
    let oldest: Vec<u64> = by_age.into_iter().take(CACHE_SIZE / 2).map(|(_, k)| k).collect();
    for k in oldest {
        map.remove(&k);
    }
}

/// What a component says about an object: the arguments of client-go's `recorder.Event`.
pub struct Report<'a> {
    pub involved: &'a Object,
    pub field_path: &'a str,
    pub type_: &'a str,
    pub reason: &'a str,
    pub message: String,
}

impl EventRecorder {
    pub fn new(component: &str, host: &str) -> Self {
        EventRecorder::reporting_as(EventSource { component: component.to_string(), host: host.to_string() }.into())
    }

    /// A recorder for `source`, sharing it.
    pub fn reporting_as(source: Shared<EventSource>) -> Self {
        EventRecorder {
            source,
            correlate: true,
            seen: HashMap::default(),
            similar: HashMap::default(),
            budgets: HashMap::default(),
            this_milli: (Time::ZERO, 0),
            swept: Time::ZERO,
        }
    }

    /// A recorder without aggregation or spam filter (the events.k8s.io one the scheduler
    /// uses).
    pub fn without_correlation(mut self) -> Self {
        self.correlate = false;
        self
    }

    /// How many reports this recorder made before in the millisecond of `now` (counting this
    /// one): with the component's number, what orders and tells apart the names of Events
    /// made in one millisecond when their writes are not waited for (no record entry then
    /// separates them).
    pub fn count_in_milli(&mut self, now: Time) -> u64 {
        self.this_milli = if self.this_milli.0 == now { (now, self.this_milli.1 + 1) } else { (now, 0) };
        self.this_milli.1
    }

    /// Whether events pass the correlator's aggregation and spam filter.
    pub fn correlates(&self) -> bool {
        self.correlate
    }

    /// Passes `report`, made at `now`, through the correlator and sends
    /// the Event it lets through with `send`: a repeat within ten minutes is an update that
    /// bumps the count of the Event before it, the tenth different message of a reason about
    /// one object is combined into one Event, and past the object's spam budget the event is
    /// dropped (still counted, so a repeat that gets through carries the full count). A new
    /// Event is named after the object and the nanosecond it was reported at: `order` orders
    /// (and tells apart) those reported within one millisecond.
    pub fn report(
        &mut self,
        report: Report,
        now: Time,
        order: u64,
        send: &mut dyn FnMut(EventWrite) -> Result<Arc<Object>, Status>,
    ) {
        let Report { involved, field_path, type_, reason, message } = report;
        self.forget_stale(now);
        let meta = involved.meta();
        let kind = involved.kind().info().kind;
        let object = fingerprint(&[kind, &meta.namespace, &meta.name, &meta.uid]);
        // The object, type and reason: what similar events share.
        let aggregate = within(object, &[type_, reason]);
        let (message, key) = if self.combines(aggregate, &message, now) {
            // One Event for them all, under the shared key (without message nor field path).
            (crate::client::component::join(&[COMBINED_PREFIX, &message]), aggregate)
        } else {
            let key = within(object, &[type_, reason, field_path, &message]);
            (message, key)
        };
        let allowed = self.allows(object, now);
        let repeat = self.previous(key, now).cloned();
        let is_repeat = repeat.is_some();
        let event = match repeat {
            Some(mut event) => {
                event.count = Some(event.count.unwrap_or(1) + 1);
                event.last_timestamp = Some(now);
                event.message = message;
                event.metadata.resource_version.clear();
                event
            }
            None => self.new_event(involved, kind, field_path, type_, reason, message, now, order),
        };
        if !allowed {
            self.remember(key, Arc::new(Object::Event(event)));
            return;
        }
        let stored = if is_repeat {
            // Never stored (its first report was dropped) or gone since: created as it stands.
            send(EventWrite::UpdateElseCreate(event))
        } else {
            send(EventWrite::Create(event))
        };
        if let Ok(stored) = stored {
            self.remember(key, stored);
        }
    }

    /// A first Event about `involved`, as the recorder makes it.
    #[allow(clippy::too_many_arguments)]
    fn new_event(
        &self,
        involved: &Object,
        kind: &str,
        field_path: &str,
        type_: &str,
        reason: &str,
        message: String,
        now: Time,
        order: u64,
    ) -> Event {
        let meta = involved.meta();
        let namespace = if meta.namespace.is_empty() { "default".to_string() } else { meta.namespace.clone() };
        // Names must be unique and, like real ones, sort in creation order within a millisecond.
        let nanos = now.unix_nanos() + (order % 1_000_000) as i128;
        let mut name = String::with_capacity(meta.name.len() + 17);
        name.push_str(&meta.name);
        name.push('.');
        push_hex(&mut name, nanos as u128);
        Event {
            metadata: ObjectMeta { name, namespace, ..Default::default() },
            involved_object: Box::new(ObjectReference {
                kind: kind.to_string(),
                namespace: meta.namespace.clone(),
                name: meta.name.clone(),
                uid: meta.uid.clone(),
                api_version: involved.kind().api_version(),
                resource_version: meta.resource_version.clone(),
                field_path: field_path.to_string(),
            }),
            reason: reason.to_string(),
            message,
            source: self.source.clone(),
            first_timestamp: Some(now),
            last_timestamp: Some(now),
            count: Some(1),
            type_: type_.to_string(),
            reporting_component: self.source.component.clone(),
            reporting_instance: self.source.host.clone(),
            ..Default::default()
        }
    }

    /// Every ten minutes, forgets what can no longer change a report: Events last seen longer
    /// ago than the aggregation interval (never counted on again), similar messages as old
    /// (cleared on their next use), and spam budgets full again (the same as a new one). What
    /// is left is what client-go's caches would still act on, so a long session's recorders
    /// stay the size of the last ten minutes rather than filling all of their room.
    fn forget_stale(&mut self, now: Time) {
        if now.since(self.swept) < AGGREGATE_INTERVAL {
            return;
        }
        self.swept = now;
        self.seen.retain(|_, e| e.as_event().is_some_and(|e| now.since(e.last_seen()) < AGGREGATE_INTERVAL));
        self.similar.retain(|_, s| now.since(s.last) <= AGGREGATE_INTERVAL);
        self.budgets.retain(|_, b| !b.refilled_by(now));
    }

    /// The event last reported under `key`, if it is recent enough to be counted on.
    pub fn previous(&self, key: u64, now: Time) -> Option<&Event> {
        let event = self.seen.get(&key)?.as_event()?;
        (now.since(event.last_seen()) < AGGREGATE_INTERVAL).then_some(event)
    }

    pub fn remember(&mut self, key: u64, event: Arc<Object>) {
        make_room(&mut self.seen, &key, |e| e.as_event().map(Event::last_seen).unwrap_or_default());
        self.seen.insert(key, event);
    }

    /// Notes a message among the similar events `key` fingerprints (object, type and reason);
    /// whether it is to be combined with those before it.
    pub fn combines(&mut self, key: u64, message: &str, now: Time) -> bool {
        if !self.correlate {
            return false;
        }
        make_room(&mut self.similar, &key, |s| s.last);
        let similar = self.similar.entry(key).or_insert(Similar { messages: Vec::new(), last: now });
        if now.since(similar.last) > AGGREGATE_INTERVAL {
            similar.messages.clear();
        }
        similar.last = now;
        let fingerprint = fingerprint(&[message]);
        if !similar.messages.contains(&fingerprint) {
            similar.messages.push(fingerprint);
        }
        if similar.messages.len() < AGGREGATE_MAX_EVENTS {
            return false;
        }
        // The set never grows past the limit: the oldest message is forgotten (client-go drops
        // an arbitrary one), so a repeat of a remembered one is still reported as itself.
        similar.messages.remove(0);
        true
    }

    /// Whether the spam filter lets one more event about `object` through now.
    pub fn allows(&mut self, object: u64, now: Time) -> bool {
        if !self.correlate {
            return true;
        }
        make_room(&mut self.budgets, &object, |b| b.used);
        self.budgets.entry(object).or_insert_with(|| Budget::full(now)).take(now)
    }
}

/// Appends `value` in lowercase hexadecimal, as `{:x}` writes it (a signed value's bits as
/// they are), without the formatting machinery.
fn push_hex(out: &mut String, mut value: u128) {
    let mut digits = [0u8; 32];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b"0123456789abcdef"[(value & 0xf) as usize];
        value >>= 4;
        if value == 0 {
            break;
        }
    }
    digits[at..].iter().for_each(|&d| out.push(char::from(d)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_name_suffixes_are_written_in_hex_as_format_writes_them() {
        for nanos in [0i128, 0xf, 0x10, 1_700_000_000_123_456_789, i128::MAX, -1] {
            let mut out = String::from("web.");
            push_hex(&mut out, nanos as u128);
            assert_eq!(out, format!("web.{nanos:x}"));
        }
    }

    fn at(seconds: u64) -> Time {
        Time(seconds * 1000)
    }

    #[test]
    fn what_can_no_longer_change_a_report_is_forgotten_and_the_rest_kept() {
        let mut recorder = EventRecorder::new("kubelet", "worker-1");
        for object in 0..100 {
            assert!(recorder.allows(object, at(0)));
        }
        let event = |last: u64| {
            let e = Event { last_timestamp: Some(at(last)), ..Default::default() };
            Arc::new(Object::Event(e))
        };
        recorder.remember(1, event(0));
        recorder.remember(2, event(590));
        assert!(!recorder.combines(3, "old", at(0)) && !recorder.combines(4, "new", at(590)));
        recorder.forget_stale(at(601));
        assert!(recorder.previous(1, at(601)).is_none() && recorder.previous(2, at(601)).is_some());
        assert_eq!((recorder.seen.len(), recorder.similar.len()), (1, 1), "the stale event and messages are gone");
        // The budgets that spent one token earn it back after five minutes: all full, all gone.
        assert_eq!(recorder.budgets.len(), 0);
        // Within ten minutes of the last sweep nothing is looked at again.
        recorder.remember(5, event(0));
        recorder.forget_stale(at(700));
        assert_eq!(recorder.seen.len(), 2);
    }

    #[test]
    fn the_spam_filter_lets_25_events_through_then_one_every_five_minutes() {
        let mut recorder = EventRecorder::new("kubelet", "worker-1");
        let passed = (0..40).filter(|_| recorder.allows(7, at(0))).count();
        assert_eq!(passed, 25);
        assert!(!recorder.allows(7, at(299)));
        assert!(recorder.allows(7, at(300)));
        assert!(!recorder.allows(7, at(301)));
        assert!(recorder.allows(7, at(600)));
        assert!(recorder.allows(8, at(600)), "another object has its own budget");
    }

    #[test]
    fn a_budget_left_alone_long_enough_is_full_again_and_no_fuller() {
        let mut recorder = EventRecorder::new("kubelet", "worker-1");
        (0..25).for_each(|_| assert!(recorder.allows(1, at(0))));
        let later = at(100 * 300);
        assert_eq!((0..40).filter(|_| recorder.allows(1, later)).count(), 25);
    }

    #[test]
    fn from_the_tenth_different_message_of_a_reason_on_they_are_combined_until_ten_quiet_minutes_pass() {
        let mut recorder = EventRecorder::new("replicaset-controller", "");
        let combined: Vec<bool> = (0..12)
            .map(|i| {
                recorder.combines(within(3, &["Normal", "SuccessfulCreate"]), &format!("Created pod: web-{i}"), at(i))
            })
            .collect();
        assert_eq!(combined, [vec![false; 9], vec![true; 3]].concat());
        assert!(recorder.combines(within(3, &["Normal", "SuccessfulCreate"]), "Created pod: web-99", at(20)));
        assert!(
            !recorder.combines(within(3, &["Normal", "SuccessfulDelete"]), "Deleted pod: web-0", at(20)),
            "other reason"
        );
        assert!(
            !recorder.combines(within(4, &["Normal", "SuccessfulCreate"]), "Created pod: web-0", at(20)),
            "other object"
        );
        assert!(!recorder.combines(within(3, &["Normal", "SuccessfulCreate"]), "Created pod: web-100", at(20 + 601)));
    }

    #[test]
    fn a_message_still_remembered_after_combining_is_reported_as_itself() {
        let mut recorder = EventRecorder::new("replicaset-controller", "");
        (0..10).for_each(|i| {
            recorder.combines(within(3, &["Warning", "FailedCreate"]), &i.to_string(), at(0));
        });
        assert!(!recorder.combines(within(3, &["Warning", "FailedCreate"]), "9", at(1)), "the newest is remembered");
        assert!(recorder.combines(within(3, &["Warning", "FailedCreate"]), "0", at(1)), "the oldest was forgotten");
    }

    #[test]
    fn repeating_one_message_never_combines() {
        let mut recorder = EventRecorder::new("kubelet", "worker-1");
        assert!((0..50).all(|i| !recorder.combines(within(5, &["Warning", "BackOff"]), "Back-off restarting", at(i))));
    }

    #[test]
    fn without_correlation_nothing_is_combined_or_dropped() {
        let mut recorder = EventRecorder::new("default-scheduler", "").without_correlation();
        assert!((0..100).all(
            |i| recorder.allows(1, at(0)) && !recorder.combines(within(1, &["Normal", "R"]), &i.to_string(), at(0))
        ));
    }

    #[test]
    fn fingerprints_tell_pieces_apart_by_where_they_split() {
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
        assert_ne!(within(1, &["a"]), within(2, &["a"]));
        assert_eq!(within(7, &["Normal", "Pulled"]), within(7, &["Normal", "Pulled"]));
        // Pinned (computed independently from the definition): no platform-sized integer goes in,
        // so wasm32 and native agree, and eviction order with them.
        assert_eq!(fingerprint(&["kubelet"]), 0x3aca_8d76_95f2_9109);
    }

    #[test]
    fn a_full_cache_forgets_its_older_half_deterministically() {
        let mut recorder = EventRecorder::new("kubelet", "worker-1");
        for object in 0..CACHE_SIZE as u64 {
            recorder.allows(object, at(object));
        }
        recorder.allows(u64::MAX, at(5000));
        assert_eq!(recorder.budgets.len(), CACHE_SIZE / 2 + 1);
        assert!(!recorder.budgets.contains_key(&0) && recorder.budgets.contains_key(&(CACHE_SIZE as u64 - 1)));
    }
}
