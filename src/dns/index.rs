//! The `kubernetes` plugin's own indexes over what its informers hold: Services by namespace
//! and name, EndpointSlices by the Service they are labelled for. Kept up to date change by
//! change (never rebuilt per lookup), so a lookup costs the same however many pods run.

use super::resolver::Catalog;
use crate::api::{EndpointSlice, Object, Service};
use crate::record::WatchEventType;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `(namespace, name)`.
type Key = (String, String);

#[derive(Clone, Debug, Default)]
pub struct Index {
    services: BTreeMap<Key, Arc<Object>>,
    /// `(namespace, service)` → slice name → slice.
    slices: BTreeMap<Key, BTreeMap<String, Arc<Object>>>,
}

fn service_name(object: &Object) -> Option<&str> {
    object.meta().labels.get("kubernetes.io/service-name").map(String::as_str)
}

fn as_service(object: &Object) -> Option<&Service> {
    if let Object::Service(s) = object { Some(s) } else { None }
}

impl Index {
    /// An index holding `services` and `slices` (for tests and a fresh start).
    pub fn of(services: impl IntoIterator<Item = Service>, slices: impl IntoIterator<Item = EndpointSlice>) -> Index {
        let mut index = Index::default();
        let objects = services
            .into_iter()
            .map(|s| Object::Service(Box::new(s)))
            .chain(slices.into_iter().map(Object::EndpointSlice));
        for object in objects {
            index.apply(WatchEventType::Added, &Arc::new(object), None);
        }
        index
    }

    pub fn clear(&mut self) {
        self.services.clear();
        self.slices.clear();
    }

    /// Takes one change to a Service or EndpointSlice (`old`: what its key held before).
    pub fn apply(&mut self, type_: WatchEventType, object: &Arc<Object>, old: Option<&Arc<Object>>) {
        let key = (object.namespace().to_string(), object.name().to_string());
        match &**object {
            Object::Service(_) if type_ == WatchEventType::Deleted => {
                self.services.remove(&key);
            }
            Object::Service(_) => {
                self.services.insert(key, object.clone());
            }
            Object::EndpointSlice(_) => {
                for before in old.into_iter().chain(std::iter::once(object)) {
                    let Some(service) = service_name(before) else { continue };
                    let by = (key.0.clone(), service.to_string());
                    if let Some(slices) = self.slices.get_mut(&by) {
                        slices.remove(&key.1);
                        if slices.is_empty() {
                            self.slices.remove(&by);
                        }
                    }
                }
                if type_ != WatchEventType::Deleted
                    && let Some(service) = service_name(object)
                {
                    let by = (key.0, service.to_string());
                    self.slices.entry(by).or_default().insert(key.1, object.clone());
                }
            }
            _ => {}
        }
    }
}

impl Catalog for Index {
    fn service(&self, namespace: &str, name: &str) -> Option<&Service> {
        as_service(self.services.get(&(namespace.to_string(), name.to_string()))?)
    }

    fn slices_of(&self, namespace: &str, service: &str) -> Vec<&EndpointSlice> {
        let Some(slices) = self.slices.get(&(namespace.to_string(), service.to_string())) else { return Vec::new() };
        slices.values().filter_map(|o| if let Object::EndpointSlice(s) = &**o { Some(s) } else { None }).collect()
    }

    fn service_with_ip(&self, ip: &str) -> Option<&Service> {
        self.services.values().filter_map(|o| as_service(o)).find(|s| s.spec.cluster_ip == ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns::resolve;

    fn slice(service: &str, ip: &str) -> Arc<Object> {
        let mut s = EndpointSlice::default();
        s.metadata.name = "web-abcde".into();
        s.metadata.namespace = "default".into();
        s.metadata.labels.insert("kubernetes.io/service-name".into(), service.into());
        s.endpoints.push(crate::api::service::SliceEndpoint { addresses: vec![ip.into()], ..Default::default() });
        Arc::new(Object::EndpointSlice(s))
    }

    #[test]
    fn a_slice_moves_with_its_service_label_and_leaves_when_deleted() {
        let mut headless = Service::default();
        headless.metadata.namespace = "default".into();
        headless.spec.cluster_ip = "None".into();
        let (mut a, mut b) = (headless.clone(), headless);
        a.metadata.name = "a".into();
        b.metadata.name = "b".into();
        let mut index = Index::of([a, b], []);
        let first = slice("a", "10.244.1.2");
        index.apply(WatchEventType::Added, &first, None);
        assert_eq!(resolve(&index, "a", "default"), Ok(vec!["10.244.1.2".to_string()]));
        let moved = slice("b", "10.244.1.3");
        index.apply(WatchEventType::Modified, &moved, Some(&first));
        assert!(resolve(&index, "a", "default").is_err(), "no longer a's");
        assert_eq!(resolve(&index, "b", "default"), Ok(vec!["10.244.1.3".to_string()]));
        index.apply(WatchEventType::Deleted, &moved, Some(&moved));
        assert!(resolve(&index, "b", "default").is_err());
    }
}
