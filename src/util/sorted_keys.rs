//! Keys kept for listing in order, sorted lazily: a new key is appended, and the keys are
//! sorted when something next lists them. A store that grows while nobody lists it (etcd's
//! Events, an informer's pods at scale) never sorts at all, and adding a key never compares it
//! with cold ones. Removed keys leave lazily too: a listing skips the keys its owner no longer
//! holds, and they are shed when the keys are next sorted or once they outnumber the live ones.

use std::cell::{Ref, RefCell};
use std::sync::Arc;

/// Below this many new keys, sorting inserts each where it belongs instead of merging.
const INSERT_FEW: usize = 32;
/// Removed keys kept, beyond as many as the live ones, before they are shed.
const SLACK: usize = 1024;

/// Whether its owner still holds a key.
pub type Live<'a> = &'a dyn Fn(&str) -> bool;

/// The keys, for their owner to list in order. The owner says which keys it adds (each once
/// while it holds it) and when it removes one.
#[derive(Debug, Default)]
pub struct SortedKeys {
    run: RefCell<Run>,
}

/// `sorted` in order, `added` since they were last sorted. Either may still hold keys the owner
/// has since removed (and a key removed and added again may be in both).
#[derive(Debug, Default)]
struct Run {
    sorted: Vec<Arc<str>>,
    added: Vec<Arc<str>>,
    /// Keys removed since they were last shed (at least as many as the stale entries).
    removed: usize,
}

impl Run {
    /// Sorts the added keys in, leaving out duplicates and, if any key was removed since the
    /// last time, the keys the owner no longer holds.
    fn settle(&mut self, live: Live) {
        if self.added.is_empty() && self.removed == 0 {
            return;
        }
        let mut added = std::mem::take(&mut self.added);
        added.sort_unstable();
        if self.removed == 0 && added.len() < INSERT_FEW {
            for key in added {
                if let Err(at) = self.sorted.binary_search(&key) {
                    self.sorted.insert(at, key);
                }
            }
            return;
        }
        let old = std::mem::take(&mut self.sorted);
        let mut merged = Vec::with_capacity(old.len() + added.len());
        let (mut a, mut b) = (old.into_iter().peekable(), added.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x <= y => a.next(),
                (_, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => break,
            };
            let Some(key) = next else { break };
            if merged.last() != Some(&key) && (self.removed == 0 || live(&key)) {
                merged.push(key);
            }
        }
        self.sorted = merged;
        self.removed = 0;
    }
}

impl SortedKeys {
    /// A key the owner did not hold.
    pub fn insert(&mut self, key: Arc<str>) {
        self.run.get_mut().added.push(key);
    }

    /// The owner removed one of its keys. Once removed keys may outnumber the live ones, they
    /// are shed (keys that come and go while nobody lists them would otherwise pile up).
    pub fn removed(&mut self, live: Live) {
        let run = self.run.get_mut();
        run.removed += 1;
        if run.removed > SLACK && run.removed * 2 > run.sorted.len() + run.added.len() {
            run.sorted.retain(|k| live(k));
            run.added.retain(|k| live(k));
            run.removed = 0;
        }
    }

    pub fn clear(&mut self) {
        *self.run.get_mut() = Run::default();
    }

    /// The keys in order, sorted first if they need it; some may be keys the owner has
    /// since removed.
    pub fn sorted(&self, live: Live) -> Sorted<'_> {
        if let Ok(mut run) = self.run.try_borrow_mut() {
            run.settle(live);
        }
        match self.run.try_borrow() {
            Ok(run) if run.added.is_empty() => Sorted(Source::Borrowed(run)),
            // Still read by an enclosing listing, which found them sorted: a sorted copy.
            _ => Sorted(Source::Copied(self.sorted_copy())),
        }
    }

    fn sorted_copy(&self) -> Vec<Arc<str>> {
        let Ok(run) = self.run.try_borrow() else { return Vec::new() };
        let mut keys: Vec<Arc<str>> = run.sorted.iter().chain(&run.added).cloned().collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// How many entries are kept, removed keys not yet shed included.
    #[cfg(test)]
    fn entries(&self) -> usize {
        let run = self.run.borrow();
        run.sorted.len() + run.added.len()
    }
}

/// Keys in order, borrowed while sorted or a sorted copy.
pub struct Sorted<'a>(Source<'a>);

enum Source<'a> {
    Borrowed(Ref<'a, Run>),
    Copied(Vec<Arc<str>>),
}

impl Sorted<'_> {
    pub fn keys(&self) -> &[Arc<str>] {
        match &self.0 {
            Source::Borrowed(run) => &run.sorted,
            Source::Copied(keys) => keys,
        }
    }
}

/// The keys starting with `prefix` of sorted lists one after another (the lists' keys are in
/// order one list after the next), each as `find` answers for it; keys it does not find, the
/// owner has removed.
pub struct InOrder<'a, F> {
    current: Option<Sorted<'a>>,
    rest: std::vec::IntoIter<Sorted<'a>>,
    /// The position in the current list, once found.
    pos: Option<usize>,
    prefix: &'a str,
    find: F,
}

impl<'a, F> InOrder<'a, F> {
    pub fn new(lists: Vec<Sorted<'a>>, prefix: &'a str, find: F) -> Self {
        let mut rest = lists.into_iter();
        InOrder { current: rest.next(), rest, pos: None, prefix, find }
    }

    /// One list's keys (without allocating for a list of lists).
    pub fn one(list: Sorted<'a>, prefix: &'a str, find: F) -> Self {
        InOrder { current: Some(list), rest: Vec::new().into_iter(), pos: None, prefix, find }
    }
}

impl<'a, V: 'a, F> Iterator for InOrder<'a, F>
where
    F: Fn(&str) -> Option<(&'a str, &'a V)>,
{
    type Item = (&'a str, &'a V);

    fn next(&mut self) -> Option<(&'a str, &'a V)> {
        loop {
            let keys = self.current.as_ref()?.keys();
            let prefix = self.prefix;
            let pos = *self.pos.get_or_insert_with(|| keys.partition_point(|k| &**k < prefix));
            match keys.get(pos).filter(|k| k.starts_with(prefix)) {
                Some(key) => {
                    self.pos = Some(pos + 1);
                    if let Some(found) = (self.find)(key) {
                        return Some(found);
                    }
                }
                None => {
                    self.current = self.rest.next();
                    self.pos = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// An owner: the keys it holds and their order.
    #[derive(Default)]
    struct Owner {
        order: SortedKeys,
        held: HashMap<Arc<str>, ()>,
    }

    impl Owner {
        fn add(&mut self, key: &str) {
            if !self.held.contains_key(key) {
                let key: Arc<str> = Arc::from(key);
                self.order.insert(key.clone());
                self.held.insert(key, ());
            }
        }

        fn remove(&mut self, key: &str) {
            self.held.remove(key);
            let held = &self.held;
            self.order.removed(&|k| held.contains_key(k));
        }

        fn list(&self, prefix: &str) -> Vec<String> {
            let held = &self.held;
            let find = move |k: &str| held.get_key_value(k).map(|(k, v)| (&**k, v));
            InOrder::one(self.order.sorted(&|k| held.contains_key(k)), prefix, find)
                .map(|(k, _)| k.to_string())
                .collect()
        }
    }

    #[test]
    fn keys_added_in_any_order_are_listed_sorted_and_only_under_the_prefix() {
        let mut owner = Owner::default();
        for key in ["b/x", "a/y", "a/x", "c"] {
            owner.add(key);
        }
        assert_eq!(owner.list("a/"), ["a/x", "a/y"]);
        owner.add("a/w");
        assert_eq!(owner.list(""), ["a/w", "a/x", "a/y", "b/x", "c"]);
        assert_eq!(owner.list("d"), Vec::<String>::new());
    }

    #[test]
    fn a_removed_key_is_left_out_and_one_added_again_is_listed_once() {
        let mut owner = Owner::default();
        for i in 0..100 {
            owner.add(&format!("e{i:03}"));
        }
        assert_eq!(owner.list("").len(), 100);
        owner.remove("e007");
        owner.remove("e008");
        owner.add("e008");
        let keys = owner.list("e00");
        assert_eq!(keys, ["e000", "e001", "e002", "e003", "e004", "e005", "e006", "e008", "e009"]);
    }

    #[test]
    fn a_listing_made_while_another_is_read_sees_the_same_keys() {
        let mut owner = Owner::default();
        for i in (0..50).rev() {
            owner.add(&format!("p{i:02}"));
        }
        let held = &owner.held;
        let find = move |k: &str| held.get_key_value(k).map(|(k, v)| (&**k, v));
        let live = |k: &str| held.contains_key(k);
        let mut outer = InOrder::one(owner.order.sorted(&live), "", find);
        assert_eq!(outer.next().map(|(k, _)| k), Some("p00"));
        let inner: Vec<&str> = InOrder::one(owner.order.sorted(&live), "", find).map(|(k, _)| k).collect();
        assert_eq!(inner.len(), 50);
        assert_eq!(outer.count(), 49);
    }

    #[test]
    fn keys_that_come_and_go_unlisted_are_shed_once_they_outnumber_the_live_ones() {
        let mut owner = Owner::default();
        for i in 0..5000 {
            owner.add(&format!("e{i}"));
            if i >= 10 {
                owner.remove(&format!("e{}", i - 10));
            }
        }
        assert!(owner.order.entries() < 2 * SLACK + 20, "{} entries kept for 10 live keys", owner.order.entries());
        assert_eq!(owner.list("").len(), 10);
    }
}
