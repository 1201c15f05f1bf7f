//! A list item known by its name — a pod's volume or a container's volume mount — whose other
//! fields may be shared between the objects that carry the same ones.
//!
//! Every pod gets the same service-account token volume and mount under a name of its own:
//! kept as one JSON value per pod, the volume alone would be a dozen maps per pod. Here each
//! pod keeps its name, and the rest is one value they all share.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub struct NamedItem {
    /// The `name` field, when the item has one.
    name: Option<Value>,
    /// Every other field (or, for an item that is not a JSON object, the whole item).
    rest: Arc<Value>,
}

impl NamedItem {
    /// An item named `name` with the other fields `rest` (a JSON object, typically shared).
    pub fn new(name: impl Into<String>, rest: Arc<Value>) -> Self {
        NamedItem { name: Some(Value::String(name.into())), rest }
    }

    /// One field of the item, as `Value::get` gives it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        if key == "name" && self.rest.is_object() { self.name.as_ref() } else { self.rest.get(key) }
    }
}

impl From<Value> for NamedItem {
    fn from(mut value: Value) -> Self {
        let name = value.as_object_mut().and_then(|map| map.remove("name"));
        NamedItem { name, rest: Arc::new(value) }
    }
}

impl Serialize for NamedItem {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(rest) = &*self.rest else { return self.rest.serialize(s) };
        let Some(name) = &self.name else { return rest.serialize(s) };
        // Fields in key order, as a JSON object of the whole item would give them.
        let mut map = s.serialize_map(Some(rest.len() + 1))?;
        let mut named = false;
        for (key, value) in rest {
            if !named && key.as_str() > "name" {
                map.serialize_entry("name", name)?;
                named = true;
            }
            map.serialize_entry(key, value)?;
        }
        if !named {
            map.serialize_entry("name", name)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for NamedItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(NamedItem::from(Value::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::json_macro::json;

    #[test]
    fn an_item_reads_and_writes_as_the_json_object_it_came_from() {
        for value in [
            json!({"name": "data", "emptyDir": {}}),
            json!({"configMap": {"name": "cfg"}, "name": "config", "optional": true}),
            json!({"mountPath": "/data"}),
            json!("not an object"),
        ] {
            let item = NamedItem::from(value.clone());
            assert_eq!(serde_json::to_string(&item).unwrap(), serde_json::to_string(&value).unwrap());
            assert_eq!(serde_json::to_value(&item).unwrap(), value);
            assert_eq!(item.get("name"), value.get("name"));
        }
    }

    #[test]
    fn items_sharing_their_fields_keep_names_of_their_own() {
        let shared = Arc::new(json!({"emptyDir": {}}));
        let (a, b) = (NamedItem::new("a", shared.clone()), NamedItem::new("b", shared.clone()));
        assert_eq!(serde_json::to_value(&a).unwrap(), json!({"emptyDir": {}, "name": "a"}));
        assert_eq!(b.get("name").and_then(Value::as_str), Some("b"));
        assert_eq!(Arc::strong_count(&shared), 3);
    }
}
