//! Custom resources: the kinds a CustomResourceDefinition adds while the cluster runs, and
//! their objects, held as unstructured JSON beside their (typed) metadata.
//!
//! A built-in kind is a variant of [`super::Kind`]; a custom one is `Kind::Custom(CustomKind)`,
//! a small handle to its names, interned once per process (group, version, plural, kind,
//! singular, scope) so that it is `Copy` like any kind and its [`KindInfo`] lives as long as
//! the program. Which custom kinds a cluster serves is the API server's knowledge (its
//! Established CRDs); a client learns it through discovery, modelled by [`Discovery`], which
//! kubectl and the controllers install for the duration of one command or one sync.

use super::meta::ObjectMeta;
use super::object::{DecodeError, KindInfo};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// The names that identify a custom kind (what a CRD's `spec.names`, group, scope and one of
/// its versions say).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Names {
    group: String,
    resource: String,
    version: String,
    kind: String,
    singular: String,
    namespaced: bool,
}

struct Entry {
    names: Names,
    info: &'static KindInfo,
    /// etcd's resource prefix: `GROUP/PLURAL` (`/registry/example.com/websites/…`).
    storage: &'static str,
}

static REGISTRY: Mutex<Vec<&'static Entry>> = Mutex::new(Vec::new());

const CUSTOM_VERBS: &[&str] = &["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"];

/// A custom kind: an index into the process's table of custom kinds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CustomKind(u32);

// Shown by names (`websites.example.com/v1`), not by its index, which depends on the order
// the process met its kinds.
impl std::fmt::Debug for CustomKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let info = self.info();
        write!(f, "CustomKind({}.{}/{})", info.resource, info.group, info.version)
    }
}

// Hashed by names too: the same kind hashes alike in every run, whenever it was interned.
impl std::hash::Hash for CustomKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.entry().names.hash(state);
    }
}

impl CustomKind {
    /// The handle of a kind with these names, the same one every time they are asked for.
    pub fn intern(group: &str, version: &str, resource: &str, kind: &str, singular: &str, namespaced: bool) -> Self {
        let names = Names {
            group: group.into(),
            resource: resource.into(),
            version: version.into(),
            kind: kind.into(),
            singular: singular.into(),
            namespaced,
        };
        let mut table = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = table.iter().position(|e| e.names == names) {
            return CustomKind(at as u32);
        }
        let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
        let info: &'static KindInfo = Box::leak(Box::new(KindInfo {
            kind: leak(kind),
            group: leak(group),
            version: leak(version),
            resource: leak(resource),
            singular: leak(singular),
            namespaced,
            short_names: &[],
            verbs: CUSTOM_VERBS,
        }));
        let storage = leak(&format!("{group}/{resource}"));
        table.push(Box::leak(Box::new(Entry { names, info, storage })));
        CustomKind(table.len() as u32 - 1)
    }

    fn entry(self) -> &'static Entry {
        let table = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        // Only `intern` makes handles, so the index is always in the table.
        table[self.0 as usize]
    }

    pub fn info(self) -> &'static KindInfo {
        self.entry().info
    }

    /// etcd's resource prefix for the kind: `GROUP/PLURAL`.
    pub fn storage(self) -> &'static str {
        self.entry().storage
    }
}

// Ordered by names, not by when the process first met them, so that maps keyed by kind are
// ordered the same in every run.
impl PartialOrd for CustomKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CustomKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self == other { std::cmp::Ordering::Equal } else { self.entry().names.cmp(&other.entry().names) }
    }
}

/// One object of a custom kind: its metadata typed, everything else as the client sent it
/// (after the API server's pruning and defaulting).
#[derive(Clone, Debug, PartialEq)]
pub struct CustomObject {
    pub of: CustomKind,
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    /// The other top-level fields (`spec`, `status`, …).
    pub content: Map<String, Value>,
}

impl CustomObject {
    pub fn empty(of: CustomKind) -> Self {
        CustomObject {
            of,
            api_version: String::new(),
            kind: String::new(),
            metadata: ObjectMeta::default(),
            content: Map::new(),
        }
    }

    /// Reads a request body: metadata strictly (as for any kind), the rest as it is.
    pub fn decode(of: CustomKind, body: &Value) -> Result<Self, DecodeError> {
        let Value::Object(map) = body else {
            return Err(DecodeError { message: "Object 'Kind' is missing in the request body".into() });
        };
        let mut object = CustomObject::empty(of);
        for (key, value) in map {
            match key.as_str() {
                "apiVersion" => object.api_version = value.as_str().unwrap_or_default().to_string(),
                "kind" => object.kind = value.as_str().unwrap_or_default().to_string(),
                "metadata" => {
                    object.metadata = super::value_de::from_value(value).map_err(|e| DecodeError {
                        message: format!("metadata: {e}").replace("unknown field `", "unknown field \"metadata."),
                    })?
                }
                _ => {
                    object.content.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(object)
    }

    pub fn spec(&self) -> &Value {
        self.content.get("spec").unwrap_or(&Value::Null)
    }

    pub fn status(&self) -> &Value {
        self.content.get("status").unwrap_or(&Value::Null)
    }
}

impl Serialize for CustomObject {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.content.len() + 3))?;
        map.serialize_entry("apiVersion", &self.api_version)?;
        map.serialize_entry("kind", &self.kind)?;
        map.serialize_entry("metadata", &self.metadata)?;
        for (k, v) in &self.content {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// What discovery says of one served custom resource (`kubectl api-resources`' row).
#[derive(Clone, Debug, PartialEq)]
pub struct Served {
    pub kind: CustomKind,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    /// Whether this version is the one kubectl prefers (the first served, by version priority).
    pub preferred: bool,
    /// The version's `additionalPrinterColumns`.
    pub columns: Vec<super::crd::PrinterColumn>,
    /// Whether the version has the status subresource.
    pub status: bool,
    /// The version's `openAPIV3Schema` (what `kubectl explain` reads).
    pub schema: Value,
}

impl Served {
    /// What discovery knows of the resource `kind` stands for, if it is served.
    pub fn of(kind: CustomKind) -> Option<Served> {
        Discovery::served().iter().find(|s| s.kind == kind).cloned()
    }
}

thread_local! {
    static DISCOVERED: RefCell<Option<Arc<Vec<Served>>>> = const { RefCell::new(None) };
}

/// The custom resources a client has discovered, installed for as long as the guard lives
/// (one kubectl command, one controller sync). Nested installs restore the outer one.
pub struct Discovery {
    previous: Option<Arc<Vec<Served>>>,
}

impl Discovery {
    pub fn install(served: Arc<Vec<Served>>) -> Discovery {
        let previous = DISCOVERED.with(|d| d.borrow_mut().replace(served));
        Discovery { previous }
    }

    /// The custom resources the running client knows of (none outside an install).
    pub fn served() -> Arc<Vec<Served>> {
        DISCOVERED.with(|d| d.borrow().clone()).unwrap_or_default()
    }
}

impl Drop for Discovery {
    fn drop(&mut self) {
        let previous = self.previous.take();
        DISCOVERED.with(|d| *d.borrow_mut() = previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_names_give_the_same_kind_and_other_names_another() {
        let a = CustomKind::intern("example.com", "v1", "widgets", "Widget", "widget", true);
        let b = CustomKind::intern("example.com", "v1", "widgets", "Widget", "widget", true);
        let c = CustomKind::intern("example.com", "v2", "widgets", "Widget", "widget", true);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a < c);
        assert_eq!(a.storage(), "example.com/widgets");
        assert_eq!(a.info().kind, "Widget");
    }

    #[test]
    fn a_custom_object_keeps_what_it_was_sent_beside_its_metadata() {
        let of = CustomKind::intern("example.com", "v1", "widgets", "Widget", "widget", true);
        let body = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"size": 3}});
        let object = CustomObject::decode(of, &body).unwrap();
        assert_eq!(object.metadata.name, "w");
        assert_eq!(object.spec()["size"], 3);
        assert_eq!(serde_json::to_value(&object).unwrap(), body);
    }

    #[test]
    fn discovery_lasts_as_long_as_its_guard() {
        let of = CustomKind::intern("example.com", "v1", "gadgets", "Gadget", "gadget", false);
        assert!(Discovery::served().is_empty());
        {
            let _d = Discovery::install(Arc::new(vec![Served {
                kind: of,
                short_names: vec![],
                categories: vec![],
                preferred: true,
                columns: vec![],
                status: false,
                schema: Value::Null,
            }]));
            assert_eq!(Discovery::served().len(), 1);
        }
        assert!(Discovery::served().is_empty());
    }
}
