//! A field shared between an object's versions until one of them changes it (copy on write).
//!
//! Every write stores a new version of an object, and most writes change one part of it (a
//! status, a resourceVersion) and copy the rest. A `Shared` part is copied as a pointer: it
//! reads like the value it holds, and the first change through `&mut` copies it for the
//! version being changed only (`Arc::make_mut`), so versions never see each other's changes.
//! It serializes, compares and prints as the value itself.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

pub struct Shared<T>(Arc<T>);

/// A type whose empty value one copy per thread stands for, so an empty `Shared` (every
/// object's labels, annotations, owner references and finalizers start so) is made without
/// allocating.
pub trait SharedEmpty: Sized + 'static {
    fn empty() -> Arc<Self>;
}

macro_rules! shared_empty {
    ($($ty:ty = $empty:expr;)*) => {$(
        impl SharedEmpty for $ty {
            fn empty() -> Arc<Self> {
                thread_local!(static EMPTY: Arc<$ty> = Arc::new($empty));
                EMPTY.with(Arc::clone)
            }
        }
    )*};
}

shared_empty! {
    super::Labels = std::collections::BTreeMap::new();
    Vec<super::OwnerReference> = Vec::new();
    Vec<String> = Vec::new();
    super::EventSource = super::EventSource::default();
    super::pod::ResourceRequirements = super::pod::ResourceRequirements::default();
    Vec<super::pod::Toleration> = Vec::new();
}

impl<T: SharedEmpty> Default for Shared<T> {
    fn default() -> Self {
        Shared(T::empty())
    }
}

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }

    /// Whether both are the same copy (then they are equal without looking).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    /// The value to change: copied first when another version still shares it.
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Shared::ptr_eq(self, other) || *self.0 == *other.0
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: PartialEq> PartialEq<T> for Shared<T> {
    fn eq(&self, other: &T) -> bool {
        *self.0 == *other
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Shared::new(value)
    }
}

impl<A, T: FromIterator<A>> FromIterator<A> for Shared<T> {
    fn from_iter<I: IntoIterator<Item = A>>(iter: I) -> Self {
        Shared::new(iter.into_iter().collect())
    }
}

impl<'a, T> IntoIterator for &'a Shared<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        (&*self.0).into_iter()
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Shared::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_copy_shares_the_value_until_one_side_changes_it() {
        let mut a: Shared<BTreeMap<String, String>> = [("app".to_string(), "web".to_string())].into_iter().collect();
        let b = a.clone();
        assert!(Shared::ptr_eq(&a, &b), "copied as a pointer");
        a.insert("tier".into(), "front".into());
        assert!(!Shared::ptr_eq(&a, &b));
        assert_eq!(b.len(), 1, "the other version is untouched");
        assert_eq!(a.len(), 2);
        assert_ne!(a, b);
    }

    #[test]
    fn empty_values_share_one_copy_until_one_is_changed() {
        let (mut a, b): (Shared<super::super::Labels>, Shared<super::super::Labels>) = Default::default();
        assert!(Shared::ptr_eq(&a, &b), "no allocation for an empty value");
        a.insert("app".into(), "web".into());
        assert!(b.is_empty(), "changing one copies it first");
        assert!(Shared::ptr_eq(&b, &Shared::default()));
        let owners: Shared<Vec<super::super::OwnerReference>> = Shared::default();
        assert!(owners.is_empty());
    }

    #[test]
    fn it_serializes_compares_and_prints_as_the_value() {
        let labels: BTreeMap<String, String> = [("app".to_string(), "web".to_string())].into();
        let shared = Shared::new(labels.clone());
        assert_eq!(serde_json::to_string(&shared).unwrap(), serde_json::to_string(&labels).unwrap());
        assert_eq!(format!("{shared:?}"), format!("{labels:?}"));
        assert!(shared == labels);
        let back: Shared<BTreeMap<String, String>> = serde_json::from_str(r#"{"app":"web"}"#).unwrap();
        assert_eq!(back, shared);
        assert_eq!((&back).into_iter().count(), 1);
    }
}
