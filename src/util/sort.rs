//! Stable sorting through one shared sort of indices: each `sort_by` call site would otherwise
//! carry its own copy of the standard library's driftsort (~3.5 KiB of wasm apiece).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// `sort`, `sort_by` and `sort_by_key` with the standard library's (stable) results.
pub trait StableSort<T> {
    fn stable_sort_by(&mut self, compare: impl FnMut(&T, &T) -> Ordering);

    fn stable_sort_by_key<K: Ord>(&mut self, mut key: impl FnMut(&T) -> K) {
        self.stable_sort_by(|a, b| key(a).cmp(&key(b)));
    }

    fn stable_sort(&mut self)
    where
        T: Ord,
    {
        self.stable_sort_by(T::cmp);
    }
}

impl<T> StableSort<T> for [T] {
    fn stable_sort_by(&mut self, mut compare: impl FnMut(&T, &T) -> Ordering) {
        if self.len() < 2 {
            return;
        }
        let order = sorted_indices(self.len(), &mut |a, b| compare(&self[a], &self[b]));
        permute(self, &order);
    }
}

/// The indices `0..len` stably sorted by `compare`: the one instance of the sort itself, a
/// bottom-up merge sort (the standard library's driftsort is several KiB of wasm even once).
/// Runs already in order are not merged, so sorted input costs one comparison per item.
#[inline(never)]
fn sorted_indices(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut merged = vec![0; len];
    let mut width = 1;
    while width < len {
        let mut start = 0;
        while start < len {
            let mid = (start + width).min(len);
            let end = (start + 2 * width).min(len);
            if mid == end || compare(order[mid], order[mid - 1]) != Ordering::Less {
                merged[start..end].copy_from_slice(&order[start..end]);
            } else {
                let (mut left, mut right) = (start, mid);
                for slot in &mut merged[start..end] {
                    // Equal items keep their order: the left run's goes first.
                    let take_right =
                        left == mid || (right < end && compare(order[right], order[left]) == Ordering::Less);
                    if take_right {
                        *slot = order[right];
                        right += 1;
                    } else {
                        *slot = order[left];
                        left += 1;
                    }
                }
            }
            start = end;
        }
        std::mem::swap(&mut order, &mut merged);
        width *= 2;
    }
    order
}

/// Rearranges `items` so that position `i` holds what was at `order[i]`, following cycles.
fn permute<T>(items: &mut [T], order: &[usize]) {
    let mut done = vec![false; items.len()];
    for start in 0..items.len() {
        let mut current = start;
        while !done[current] {
            done[current] = true;
            let next = order[current];
            if next == start {
                break;
            }
            items.swap(current, next);
            current = next;
        }
    }
}

/// `items.collect::<BTreeMap<_, _>>()`, with the same result wherever equal keys are identical
/// (strings, numbers): `BTreeMap::from_iter` sorts its input with a copy of driftsort for each
/// iterator type it is called with, while inserting in turn uses the map's own `insert` (the
/// last value of a key wins, as with `collect`).
pub fn btree_map<K: Ord, V>(items: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    for (key, value) in items {
        map.insert(key, value);
    }
    map
}

/// `items.collect::<BTreeSet<_>>()`, without a copy of the sort (see `btree_map`).
pub fn btree_set<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    for item in items {
        set.insert(item);
    }
    set
}

/// `items.collect::<serde_json::Map<_, _>>()`, without a copy of the sort (see `btree_map`).
pub fn json_map(
    items: impl IntoIterator<Item = (String, serde_json::Value)>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    for (key, value) in items {
        map.insert(key, value);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_matches_the_standard_librarys_stable_sort() {
        let mut seed = 7u64;
        for len in 0..60 {
            let items: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((seed >> 60) as u8, i)
                })
                .collect();
            let (mut ours, mut std) = (items.clone(), items.clone());
            ours.stable_sort_by_key(|&(k, _)| k);
            std.sort_by_key(|&(k, _)| k);
            assert_eq!(ours, std);
            let (mut ours, mut std) = (items.clone(), items);
            ours.stable_sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            std.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            assert_eq!(ours, std);
        }
    }

    #[test]
    fn plain_sort_orders_strings() {
        let mut words = vec!["pod", "node", "event", "job"];
        words.stable_sort();
        assert_eq!(words, ["event", "job", "node", "pod"]);
    }

    /// The page's code size depends on it: a call to the standard library's stable sort
    /// outside tests brings its own copy of driftsort into the wasm (`sort_unstable*` is one
    /// small shared copy per element type and stays allowed).
    #[test]
    fn no_code_outside_tests_calls_the_standard_librarys_stable_sort() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if !name.ends_with(".rs") || name == "tests.rs" || path.components().any(|c| c.as_os_str() == "bin") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                for (i, line) in code.lines().enumerate() {
                    let calls = [".sort()", ".sort_by(", ".sort_by_key(", ".sort_by_cached_key("];
                    if !line.trim_start().starts_with("//") && calls.iter().any(|c| line.contains(c)) {
                        found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
        assert!(found.is_empty(), "use util::sort::StableSort instead:\n{}", found.join("\n"));
    }
}
