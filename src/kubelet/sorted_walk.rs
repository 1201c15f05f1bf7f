//! Finding keys in a sequence sorted by key while walking another one in the same order: each
//! step compares two keys once (less, equal or greater) rather than once per question.

use std::cmp::Ordering;
use std::iter::Peekable;

/// The item of `items` (sorted by `key_of`) whose key is `key`, taken; the items before it
/// are skipped. Asked for keys in increasing order, a whole walk costs one comparison per
/// item of either sequence.
pub fn seek<T, I: Iterator<Item = T>>(items: &mut Peekable<I>, key: &str, key_of: impl Fn(&T) -> &str) -> Option<T> {
    while let Some(item) = items.peek() {
        match key_of(item).cmp(key) {
            Ordering::Less => {
                items.next();
            }
            Ordering::Equal => return items.next(),
            Ordering::Greater => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_present_is_found_and_the_keys_before_it_are_skipped() {
        let mut items = ["a", "c", "e"].into_iter().peekable();
        assert_eq!(seek(&mut items, "c", |k| k), Some("c"));
        assert_eq!(items.next(), Some("e"));
    }

    #[test]
    fn a_key_absent_is_not_found_and_the_next_key_stays() {
        let mut items = ["a", "c", "e"].into_iter().peekable();
        assert_eq!(seek(&mut items, "b", |k| k), None);
        assert_eq!(seek(&mut items, "c", |k| k), Some("c"));
        assert_eq!(seek(&mut items, "f", |k| k), None);
        assert_eq!(items.next(), None);
    }
}
