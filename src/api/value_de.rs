//! A serde `Deserializer` over a borrowed JSON `Value` that reads structs only from objects.
//!
//! serde_json's own (`&Value`) also reads a struct from an array, by position, which makes
//! every derived type carry a second decoder (`visit_seq`) the API never uses. This one gives
//! the same values and the same error messages otherwise; an array where an object belongs is
//! `invalid type: sequence, expected struct X`.

use serde::de::{self, DeserializeSeed, Error as _, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Error, Map, Value};

/// Decodes `T` from `value` (what `T::deserialize(&value)` did, minus structs from arrays).
pub fn from_value<'a, T: de::Deserialize<'a>>(value: &'a Value) -> Result<T, Error> {
    T::deserialize(ValueDe(value))
}

/// The deserializer: a borrowed `Value`.
#[derive(Clone, Copy)]
pub struct ValueDe<'a>(pub &'a Value);

impl<'a> ValueDe<'a> {
    fn unexpected(self) -> Unexpected<'a> {
        match self.0 {
            Value::Null => Unexpected::Unit,
            Value::Bool(b) => Unexpected::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Unexpected::Unsigned(u),
                (None, Some(i), _) => Unexpected::Signed(i),
                (_, _, f) => Unexpected::Float(f.unwrap_or(0.0)),
            },
            Value::String(s) => Unexpected::Str(s),
            Value::Array(_) => Unexpected::Seq,
            Value::Object(_) => Unexpected::Map,
        }
    }

    fn invalid_type<'de, V: Visitor<'de>>(self, visitor: &V) -> Error {
        Error::invalid_type(self.unexpected(), visitor)
    }
}

impl<'de> de::Deserializer<'de> for ValueDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(0.0))
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(map) => visit_object(map, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit unit_struct enum
    }
}

fn visit_array<'a, V: Visitor<'a>>(items: &'a [Value], visitor: V) -> Result<V::Value, Error> {
    let mut seq = Items(items.iter());
    let value = visitor.visit_seq(&mut seq)?;
    if seq.0.len() == 0 { Ok(value) } else { Err(Error::invalid_length(items.len(), &"fewer elements in array")) }
}

fn visit_object<'a, V: Visitor<'a>>(map: &'a Map<String, Value>, visitor: V) -> Result<V::Value, Error> {
    let mut entries = Entries { iter: map.iter(), value: None };
    let value = visitor.visit_map(&mut entries)?;
    if entries.iter.len() == 0 { Ok(value) } else { Err(Error::invalid_length(map.len(), &"fewer elements in map")) }
}

struct Items<'a>(std::slice::Iter<'a, Value>);

impl<'a> SeqAccess<'a> for Items<'a> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|v| seed.deserialize(ValueDe(v))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries<'a> {
    iter: serde_json::map::Iter<'a>,
    value: Option<&'a Value>,
}

impl<'a> MapAccess<'a> for Entries<'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        match self.iter.next() {
            Some((key, value)) => {
                self.value = Some(value);
                let key = de::value::BorrowedStrDeserializer::<Error>::new(key);
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(ValueDe(value)),
            None => Err(Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Kind, Object};
    use serde_json::json;

    /// Decodes `value` both ways and checks both give the same result (or the same error).
    fn same_as_serde_json<T: de::DeserializeOwned + PartialEq + std::fmt::Debug>(value: Value) {
        let ours = from_value::<T>(&value).map_err(|e| e.to_string());
        let theirs = T::deserialize(&value).map_err(|e| e.to_string());
        assert_eq!(ours, theirs, "{value}");
    }

    #[test]
    fn objects_decode_as_serde_json_decodes_them() {
        same_as_serde_json::<crate::api::Pod>(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "labels": {"app": "web"}, "creationTimestamp": null},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                "resources": {"limits": {"cpu": 1, "memory": "64Mi"}}}],
                "terminationGracePeriodSeconds": 30, "tolerations": [{"operator": "Exists"}]}}));
        same_as_serde_json::<crate::api::Deployment>(json!({"spec": {"replicas": 3,
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "selector": {"matchLabels": {"a": "b"}}, "template": {"spec": {"containers": []}}}}));
    }

    #[test]
    fn type_errors_read_as_serde_jsons() {
        same_as_serde_json::<crate::api::Pod>(json!({"spec": {"containers": "nope"}}));
        same_as_serde_json::<crate::api::Pod>(json!({"metadata": {"name": 5}}));
        same_as_serde_json::<crate::api::Deployment>(json!({"spec": {"replicas": "three"}}));
        same_as_serde_json::<crate::api::Deployment>(json!({"spec": {"replicas": -1}}));
        same_as_serde_json::<crate::api::Deployment>(json!({"spec": {"replicas": 1.5}}));
        same_as_serde_json::<crate::api::Pod>(json!({"spec": {"containers": [{"name": true}]}}));
        same_as_serde_json::<crate::api::Pod>(json!({"metadata": {"labels": {"a": 1}}}));
        same_as_serde_json::<crate::api::Pod>(
            json!({"spec": {"containers": [{"resources": {"requests": {"cpu": "lots"}}}]}}),
        );
        same_as_serde_json::<crate::api::Pod>(json!({"metadata": null}));
        same_as_serde_json::<crate::api::Pod>(json!("text"));
    }

    #[test]
    fn unknown_fields_still_name_their_path() {
        let body = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "spec": {"template": {"spec": {"containers": [{"name": "c", "imag": "x"}]}}}});
        let err = Object::decode(Kind::Deployment, &body).unwrap_err();
        assert_eq!(err.message, "strict decoding error: unknown field \"spec.template.spec.containers[0].imag\"");
    }

    #[test]
    fn an_array_where_a_struct_belongs_is_a_type_error() {
        let err = from_value::<crate::api::Pod>(&json!({"metadata": ["web"]})).unwrap_err();
        assert_eq!(err.to_string(), "invalid type: sequence, expected struct ObjectMeta");
    }
}
