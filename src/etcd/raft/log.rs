//! A member's Raft log: entries numbered from 1, each with the term it was proposed in and
//! the API server request that wrote it.

use super::Seq;

/// One entry of the replicated log: a write to the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub term: u64,
    pub index: u64,
    /// The API server's request (its record entry) whose write this entry carries.
    pub cause: Option<Seq>,
}

/// The entries a member holds, oldest first (entry `i` at position `i - 1`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log {
    entries: Vec<Entry>,
}

impl Log {
    pub fn last_index(&self) -> u64 {
        self.entries.len() as u64
    }

    pub fn last_term(&self) -> u64 {
        self.entries.last().map_or(0, |e| e.term)
    }

    /// The term of entry `index` (0 for index 0, `None` past the end).
    pub fn term_at(&self, index: u64) -> Option<u64> {
        match index {
            0 => Some(0),
            i => self.entries.get(i as usize - 1).map(|e| e.term),
        }
    }

    pub fn get(&self, index: u64) -> Option<&Entry> {
        index.checked_sub(1).and_then(|i| self.entries.get(i as usize))
    }

    /// Appends a new entry at the end (the leader's proposal); returns its index.
    pub fn push(&mut self, term: u64, cause: Option<Seq>) -> u64 {
        let index = self.last_index() + 1;
        self.entries.push(Entry { term, index, cause });
        index
    }

    /// Entries from `from` on (at most `max`), as a leader sends them.
    pub fn from(&self, from: u64, max: usize) -> Vec<Entry> {
        let start = from.saturating_sub(1) as usize;
        self.entries.iter().skip(start).take(max).copied().collect()
    }

    /// Whether a log ending at (`last_term`, `last_index`) is at least as up to date as this
    /// one: a later last term, or the same term and at least as long (Raft's election rule).
    pub fn is_behind(&self, last_term: u64, last_index: u64) -> bool {
        last_term > self.last_term() || (last_term == self.last_term() && last_index >= self.last_index())
    }

    /// A follower's side of AppendEntries: `false` when the entry before `entries` (at
    /// `prev_index`) is missing or has another term; otherwise the entries are taken, an
    /// entry conflicting with one held (same index, other term) cutting the log there.
    pub fn accept(&mut self, prev_index: u64, prev_term: u64, entries: &[Entry]) -> bool {
        if self.term_at(prev_index) != Some(prev_term) {
            return false;
        }
        for e in entries {
            match self.term_at(e.index) {
                Some(t) if t == e.term => {}
                Some(_) => {
                    self.entries.truncate(e.index as usize - 1);
                    self.entries.push(*e);
                }
                None => self.entries.push(*e),
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(terms: &[u64]) -> Log {
        let mut l = Log::default();
        for t in terms {
            l.push(*t, None);
        }
        l
    }

    #[test]
    fn an_entry_whose_predecessor_is_missing_is_refused() {
        let mut l = log(&[1, 1]);
        assert!(!l.accept(3, 1, &[Entry { term: 1, index: 4, cause: None }]));
        assert_eq!(l.last_index(), 2);
    }

    #[test]
    fn a_conflicting_entry_cuts_the_log_where_it_differs() {
        let mut l = log(&[1, 1, 2, 2]);
        assert!(l.accept(2, 1, &[Entry { term: 3, index: 3, cause: None }]));
        assert_eq!(l.last_index(), 3);
        assert_eq!(l.last_term(), 3);
    }

    #[test]
    fn a_longer_log_of_the_same_last_term_is_more_up_to_date() {
        let l = log(&[1, 2]);
        assert!(l.is_behind(2, 2));
        assert!(l.is_behind(3, 1));
        assert!(!l.is_behind(2, 1));
        assert!(!l.is_behind(1, 5));
    }
}
