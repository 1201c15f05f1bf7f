//! How many keys etcd holds under each resource's prefix (`/registry/resourcequotas/`), so
//! asking whether a resource has any object at all is one hash lookup, not a walk down the
//! sorted key index. Admission asks it on every write (are there quotas? limit ranges?).

use crate::util::fast_keys::FastKeys;
use std::collections::HashMap;

#[derive(Clone, Debug, Default)]
pub struct ResourceCounts {
    counts: HashMap<String, usize, FastKeys>,
}

/// The resource prefix a key belongs to: everything up to the slash after the resource's name
/// (`/registry/pods/` for `/registry/pods/default/web`); None for a key outside that shape.
pub fn resource_prefix(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("/registry/")?;
    // A plain byte scan: the keys are short, and this runs on every write.
    let end = rest.bytes().position(|b| b == b'/')?;
    Some(&key[..="/registry/".len() + end])
}

impl ResourceCounts {
    /// A key was added to the store.
    pub fn added(&mut self, key: &str) {
        let Some(prefix) = resource_prefix(key) else { return };
        match self.counts.get_mut(prefix) {
            Some(n) => *n += 1,
            None => {
                self.counts.insert(prefix.to_string(), 1);
            }
        }
    }

    /// A key was removed from the store.
    pub fn removed(&mut self, key: &str) {
        let Some(prefix) = resource_prefix(key) else { return };
        if let Some(n) = self.counts.get_mut(prefix) {
            *n -= 1;
            if *n == 0 {
                self.counts.remove(prefix);
            }
        }
    }

    /// Whether any key starts with `prefix`, when `prefix` is a whole resource prefix; None
    /// for any other prefix (the caller looks in the key index instead).
    pub fn any_under(&self, prefix: &str) -> Option<bool> {
        (resource_prefix(prefix) == Some(prefix)).then(|| self.counts.contains_key(prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_belongs_to_the_prefix_up_to_its_resource_name() {
        assert_eq!(resource_prefix("/registry/pods/default/web"), Some("/registry/pods/"));
        assert_eq!(resource_prefix("/registry/nodes/n1"), Some("/registry/nodes/"));
        assert_eq!(resource_prefix("/registry/pods/"), Some("/registry/pods/"));
        assert_eq!(resource_prefix("/registry/pods"), None);
        assert_eq!(resource_prefix("/other/pods/x"), None);
    }

    #[test]
    fn a_resource_has_objects_until_its_last_key_is_removed() {
        let mut counts = ResourceCounts::default();
        assert_eq!(counts.any_under("/registry/resourcequotas/"), Some(false));
        counts.added("/registry/resourcequotas/a/q1");
        counts.added("/registry/resourcequotas/b/q2");
        assert_eq!(counts.any_under("/registry/resourcequotas/"), Some(true));
        counts.removed("/registry/resourcequotas/a/q1");
        assert_eq!(counts.any_under("/registry/resourcequotas/"), Some(true));
        counts.removed("/registry/resourcequotas/b/q2");
        assert_eq!(counts.any_under("/registry/resourcequotas/"), Some(false));
    }

    #[test]
    fn a_prefix_that_is_not_a_whole_resource_is_not_answered() {
        let counts = ResourceCounts::default();
        assert_eq!(counts.any_under("/registry/pods/default/"), None);
        assert_eq!(counts.any_under("/registry/po"), None);
    }
}
