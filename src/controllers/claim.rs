//! Claiming pods, as upstream's ControllerRefManager does for a workload controller: of the
//! pods its owner index and the orphans of its namespace offer, an owner keeps those it
//! controls whose labels still match its selector, adopts matching orphans, and releases the
//! pods it controls whose labels no longer match. A controller being deleted adopts and
//! releases nothing.

use crate::api::{LabelSelector, Labels, Object};
use std::sync::Arc;

/// The last verdict on a label set, by the set's address: pods made from one template share
/// their labels, so a sync over hundreds of them judges the set once, not once a pod.
#[derive(Default)]
pub struct SameLabels {
    last: Option<(*const Labels, bool)>,
}

impl SameLabels {
    /// `judge(labels)`, or the verdict already given on this very set.
    pub fn judge(&mut self, labels: &Labels, judge: impl FnOnce(&Labels) -> bool) -> bool {
        let at: *const Labels = labels;
        match self.last {
            Some((seen, verdict)) if std::ptr::eq(seen, at) => verdict,
            _ => {
                let verdict = judge(labels);
                self.last = Some((at, verdict));
                verdict
            }
        }
    }
}

/// What one sync makes of the pods it looked at.
#[derive(Debug, Default)]
pub struct Claim {
    /// Controlled by the owner and matching its selector: already its own.
    pub owned: Vec<Arc<Object>>,
    /// Orphans the selector matches: to be given the owner's controller reference.
    pub adopt: Vec<Arc<Object>>,
    /// Controlled by the owner but no longer matching: to have that reference removed.
    pub release: Vec<Arc<Object>>,
}

/// Sorts `controlled` (pods whose controller reference names `owner_uid`) and `orphans` (pods
/// of the owner's namespace with no controller) into a [`Claim`]. An empty selector matches
/// nothing here: it would adopt every orphan in the namespace.
pub fn claim<'a>(
    owner_uid: &str,
    deleting: bool,
    selector: &LabelSelector,
    controlled: impl IntoIterator<Item = &'a Arc<Object>>,
    orphans: impl IntoIterator<Item = &'a Arc<Object>>,
) -> Claim {
    let empty = selector.match_labels.is_empty() && selector.match_expressions.is_empty();
    let mut verdicts = SameLabels::default();
    let mut selects = |o: &Object| !empty && verdicts.judge(&o.meta().labels, |labels| selector.matches(labels));
    let mut out = Claim::default();
    for pod in controlled {
        debug_assert!(pod.controller_ref().is_some_and(|r| r.uid == owner_uid));
        if selects(pod) {
            out.owned.push(pod.clone());
        } else if !deleting {
            out.release.push(pod.clone());
        }
    }
    if !deleting {
        // A pod on its way out is not worth adopting.
        out.adopt.extend(orphans.into_iter().filter(|p| p.meta().deletion_timestamp.is_none() && selects(p)).cloned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{OwnerReference, Pod};
    use crate::sim::Time;

    fn pod(name: &str, app: &str, owner: Option<&str>) -> Arc<Object> {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.labels.insert("app".into(), app.into());
        if let Some(uid) = owner {
            p.metadata.owner_references.push(OwnerReference {
                kind: "ReplicaSet".into(),
                name: "web".into(),
                uid: uid.into(),
                controller: Some(true),
                ..Default::default()
            });
        }
        Arc::new(Object::Pod(p))
    }

    fn web() -> LabelSelector {
        let mut s = LabelSelector::default();
        s.match_labels.insert("app".into(), "web".into());
        s
    }

    fn names(pods: &[Arc<Object>]) -> Vec<&str> {
        pods.iter().map(|p| p.name()).collect()
    }

    #[test]
    fn matching_pods_are_kept_matching_orphans_adopted_and_relabelled_ones_released() {
        let controlled = [pod("a", "web", Some("u")), pod("b", "debug", Some("u"))];
        let orphans = [pod("c", "web", None), pod("d", "db", None)];
        let c = claim("u", false, &web(), &controlled, &orphans);
        assert_eq!((names(&c.owned), names(&c.adopt), names(&c.release)), (vec!["a"], vec!["c"], vec!["b"]));
    }

    #[test]
    fn an_owner_being_deleted_neither_adopts_nor_releases() {
        let controlled = [pod("a", "web", Some("u")), pod("b", "debug", Some("u"))];
        let orphans = [pod("c", "web", None)];
        let c = claim("u", true, &web(), &controlled, &orphans);
        assert_eq!((names(&c.owned), c.adopt.len(), c.release.len()), (vec!["a"], 0, 0));
    }

    #[test]
    fn an_empty_selector_or_a_terminating_orphan_is_not_adopted() {
        let mut leaving = (*pod("e", "web", None)).clone();
        leaving.meta_mut().deletion_timestamp = Some(Time(1));
        let orphans = [pod("c", "web", None), Arc::new(leaving)];
        assert!(claim("u", false, &LabelSelector::default(), [], &orphans).adopt.is_empty());
        assert_eq!(names(&claim("u", false, &web(), [], &orphans).adopt), ["c"]);
    }
}
