//! Structural schemas: a CustomResourceDefinition's `openAPIV3Schema`, checked when the
//! definition is written (every node says its type; arrays say their items) and applied to
//! each custom object written — unknown fields pruned, defaults filled in, then the value
//! validated (types, required, enum, bounds, lengths, patterns, CEL rules), with the API
//! server's words.

use serde_json::{Map, Value};

/// The keys a JSONSchemaProps may carry.
const SCHEMA_KEYS: &[&str] = &[
    "$schema",
    "$ref",
    "id",
    "type",
    "format",
    "title",
    "description",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

/// What is wrong with a schema as a CRD version's (`path` is where it sits in the CRD), in the
/// API server's words; empty when it is structural.
pub fn check_structural(schema: &Value, path: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if let Some(unknown) = unknown_key(schema, path) {
        return vec![format!("strict decoding error: unknown field \"{unknown}\"")];
    }
    if schema.get("type").and_then(Value::as_str).unwrap_or("").is_empty() {
        errors.push(format!("{path}.type: Required value: must not be empty at the root"));
    } else if schema["type"] != "object" {
        errors.push(format!("{path}.type: Invalid value: \"{}\": must be object at the root", text(&schema["type"])));
    }
    check_node(schema, path, &mut errors, true);
    check_rule_syntax(schema, path, &mut errors);
    errors
}

/// The first key no JSONSchemaProps has, as a path.
fn unknown_key(node: &Value, path: &str) -> Option<String> {
    let map = node.as_object()?;
    let dotted = path.replace('[', ".").replace(']', "");
    for (key, value) in map {
        if !SCHEMA_KEYS.contains(&key.as_str()) {
            return Some(format!("{dotted}.{key}"));
        }
        let found = match key.as_str() {
            "properties" => value
                .as_object()
                .and_then(|props| props.iter().find_map(|(k, v)| unknown_key(v, &format!("{path}.properties[{k}]")))),
            "items" | "additionalProperties" => unknown_key(value, &format!("{path}.{key}")),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn check_node(node: &Value, path: &str, errors: &mut Vec<String>, root: bool) {
    let type_ = node.get("type").and_then(Value::as_str).unwrap_or("");
    let preserve = node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    let int_or_string = node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if !type_.is_empty() && !TYPES.contains(&type_) {
        errors.push(format!(
            "{path}.type: Unsupported value: \"{type_}\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
        ));
    }
    if type_.is_empty() && !root && !preserve && !int_or_string {
        errors.push(format!("{path}.type: Required value: must not be empty for specified object fields"));
    }
    if type_ == "array" && node.get("items").is_none() {
        errors.push(format!("{path}.items: Required value: must be specified"));
    }
    if node.get("properties").is_some() && node.get("additionalProperties").is_some() {
        errors.push(format!(
            "{path}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
        ));
    }
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            check_node(child, &format!("{path}.properties[{name}]"), errors, false);
        }
    }
    if let Some(items) = node.get("items").filter(|i| i.is_object()) {
        check_node(items, &format!("{path}.items"), errors, false);
    }
    if let Some(more) = node.get("additionalProperties").filter(|i| i.is_object()) {
        check_node(more, &format!("{path}.additionalProperties"), errors, false);
    }
    if let Some(default) = node.get("default") {
        let mut problems = Vec::new();
        validate_node(default, node, &format!("{path}.default"), &mut problems);
        errors.extend(problems);
    }
}

/// Removes the fields the schema does not know (unless it keeps unknown fields there), and
/// says where each was, as `spec.foo`.
pub fn prune(object: &mut Map<String, Value>, schema: &Value) -> Vec<String> {
    let mut pruned = Vec::new();
    prune_map(object, schema, "", &mut pruned, true);
    pruned
}

fn prune_map(map: &mut Map<String, Value>, schema: &Value, path: &str, pruned: &mut Vec<String>, root: bool) {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        // Known fields below are still pruned by their own schemas.
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (key, value) in map.iter_mut() {
                if let Some(child) = props.get(key) {
                    prune_value(value, child, &join(path, key), pruned);
                }
            }
        }
        return;
    }
    if let Some(more) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        for (key, value) in map.iter_mut() {
            prune_value(value, more, &join(path, key), pruned);
        }
        return;
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let unknown: Vec<String> = map
        .keys()
        .filter(|k| !(root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata")))
        .filter(|k| props.is_none_or(|p| !p.contains_key(*k)))
        .cloned()
        .collect();
    for key in unknown {
        map.remove(&key);
        pruned.push(join(path, &key));
    }
    if let Some(props) = props {
        for (key, value) in map.iter_mut() {
            if let Some(child) = props.get(key) {
                prune_value(value, child, &join(path, key), pruned);
            }
        }
    }
}

fn prune_value(value: &mut Value, schema: &Value, path: &str, pruned: &mut Vec<String>) {
    match value {
        Value::Object(map) if schema.get("type").and_then(Value::as_str) == Some("object") => {
            prune_map(map, schema, path, pruned, false)
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    prune_value(item, item_schema, &format!("{path}[{i}]"), pruned);
                }
            }
        }
        _ => {}
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// Fills in every default the schema gives for a field that is missing, in objects that are
/// there (a default object is itself defaulted below).
pub fn default(map: &mut Map<String, Value>, schema: &Value) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return };
    for (key, child) in props {
        if !map.contains_key(key) {
            if let Some(d) = child.get("default") {
                map.insert(key.clone(), d.clone());
            }
        }
        if let Some(value) = map.get_mut(key) {
            default_value(value, child);
        }
    }
}

fn default_value(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => default(map, schema),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    default_value(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// What is wrong with a custom object's fields (other than metadata) against the schema.
pub fn validate(map: &Map<String, Value>, schema: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let mut fields = map.clone();
    for key in ["apiVersion", "kind", "metadata"] {
        fields.remove(key);
    }
    let mut root = schema.clone();
    if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
        for key in ["apiVersion", "kind", "metadata"] {
            props.remove(key);
        }
    }
    if let Some(required) = root.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| !matches!(r.as_str(), Some("apiVersion" | "kind" | "metadata")));
    }
    validate_node(&Value::Object(fields), &root, "", &mut errors);
    errors
}

/// JSON's name for a value's type, as the validator reports what it found.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value as field errors quote it: strings in quotes, numbers bare.
fn quoted(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

fn validate_node(value: &Value, schema: &Value, path: &str, errors: &mut Vec<String>) {
    let shown = if path.is_empty() { "<root>" } else { path };
    let type_ = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let int_or_string = schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if value.is_null() && schema.get("nullable") == Some(&Value::Bool(true)) {
        return;
    }
    let found = type_of(value);
    let fits = match type_ {
        "" => !int_or_string || matches!(found, "integer" | "string"),
        "number" => matches!(found, "integer" | "number"),
        t => t == found,
    };
    if !fits {
        let wanted = if type_.is_empty() { "integer,string" } else { type_ };
        errors.push(format!(
            "{shown}: Invalid value: \"{found}\": {shown} in body must be of type {wanted}: \"{found}\""
        ));
        return;
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            let list: Vec<String> = options.iter().map(quoted).collect();
            errors.push(format!(
                "{shown}: Unsupported value: {}: supported values: {}",
                quoted(value),
                list.join(", ")
            ));
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            let exclusive = schema.get("exclusiveMaximum") == Some(&Value::Bool(true));
            if n > max || (exclusive && n == max) {
                let how = if exclusive { "less than" } else { "less than or equal to" };
                errors.push(format!(
                    "{shown}: Invalid value: {value}: {shown} in body should be {how} {}",
                    schema["maximum"]
                ));
            }
        }
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            let exclusive = schema.get("exclusiveMinimum") == Some(&Value::Bool(true));
            if n < min || (exclusive && n == min) {
                let how = if exclusive { "greater than" } else { "greater than or equal to" };
                errors.push(format!(
                    "{shown}: Invalid value: {value}: {shown} in body should be {how} {}",
                    schema["minimum"]
                ));
            }
        }
    }
    if let (Value::String(s), Some(pattern)) = (value, schema.get("pattern").and_then(Value::as_str)) {
        if super::cel::regex::is_match(pattern, s) == Ok(false) {
            errors.push(format!("{shown}: Invalid value: \"{s}\": {shown} in body should match '{pattern}'"));
        }
    }
    if let Some(rules) = schema.get("x-kubernetes-validations").and_then(Value::as_array) {
        check_rules(value, rules, shown, errors);
    }
    if let Value::String(s) = value {
        let len = s.chars().count() as u64;
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64).filter(|m| len > *m) {
            errors.push(format!("{shown}: Too long: may not be more than {max} bytes"));
        }
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64).filter(|m| len < *m) {
            errors
                .push(format!("{shown}: Invalid value: \"{s}\": {shown} in body should be at least {min} chars long"));
        }
    }
    if let Value::Array(items) = value {
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64).filter(|m| items.len() as u64 > *m) {
            errors.push(format!("{shown}: Too many: {}: must have at most {max} items", items.len()));
        }
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64).filter(|m| (items.len() as u64) < *m) {
            errors.push(format!(
                "{shown}: Invalid value: {}: {shown} in body should have at least {min} items",
                items.len()
            ));
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                validate_node(item, item_schema, &format!("{path}[{i}]"), errors);
            }
        }
    }
    if let Value::Object(map) = value {
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for field in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(field) {
                    errors.push(format!("{}: Required value", join(path, field)));
                }
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        let more = schema.get("additionalProperties").filter(|a| a.is_object());
        for (key, child) in map {
            match (props.and_then(|p| p.get(key)), more) {
                (Some(child_schema), _) | (None, Some(child_schema)) => {
                    validate_node(child, child_schema, &join(path, key), errors)
                }
                _ => {}
            }
        }
    }
}

/// The CEL rules of a node (`x-kubernetes-validations`), with `self` the node's value. Rules
/// about the old object (`oldSelf`, transition rules) apply to updates only: they are not
/// checked here.
fn check_rules(value: &Value, rules: &[Value], shown: &str, errors: &mut Vec<String>) {
    let mut vars = std::collections::BTreeMap::new();
    vars.insert("self".to_string(), super::cel::Val::from_json(value));
    for rule in rules {
        let Some(text) = rule.get("rule").and_then(Value::as_str) else { continue };
        if text.contains("oldSelf") {
            continue;
        }
        let message = match super::cel::eval_text(text, &vars) {
            Ok(super::cel::Val::Bool(true)) => continue,
            Ok(_) => match rule.get("message").and_then(Value::as_str) {
                Some(m) => m.to_string(),
                None => format!("failed rule: {text}"),
            },
            Err(e) => format!("{e}: {text}"),
        };
        let path = match rule.get("fieldPath").and_then(Value::as_str) {
            Some(p) if shown == "<root>" => p.trim_start_matches('.').to_string(),
            Some(p) => format!("{shown}{p}"),
            None => shown.to_string(),
        };
        errors.push(format!("{path}: Invalid value: \"{}\": {message}", type_of(value)));
    }
}

/// What is wrong with the CEL rules of a schema, as the API server refuses a definition whose
/// rules do not compile.
pub fn check_rule_syntax(node: &Value, path: &str, errors: &mut Vec<String>) {
    if let Some(rules) = node.get("x-kubernetes-validations").and_then(Value::as_array) {
        for (i, rule) in rules.iter().enumerate() {
            match rule.get("rule").and_then(Value::as_str) {
                None => errors.push(format!("{path}.x-kubernetes-validations[{i}].rule: Required value")),
                Some(text) => {
                    if let Err(e) = super::cel::parse(text) {
                        errors.push(format!(
                            "{path}.x-kubernetes-validations[{i}].rule: Invalid value: \"{text}\": compilation failed: {e}"
                        ));
                    }
                }
            }
        }
    }
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            check_rule_syntax(child, &format!("{path}.properties[{name}]"), errors);
        }
    }
    if let Some(items) = node.get("items") {
        check_rule_syntax(items, &format!("{path}.items"), errors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn website_schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["image"], "properties": {
                "image": {"type": "string"},
                "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
                "tier": {"type": "string", "enum": ["free", "paid"]},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
    }

    #[test]
    fn a_string_where_an_integer_belongs_is_refused_in_the_api_servers_words() {
        let object = json!({"spec": {"image": "nginx", "replicas": "three"}});
        let errors = validate(object.as_object().unwrap(), &website_schema());
        assert_eq!(
            errors,
            ["spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""]
        );
    }

    #[test]
    fn required_enum_and_bounds_are_checked() {
        let object = json!({"spec": {"replicas": 11, "tier": "gold"}});
        let errors = validate(object.as_object().unwrap(), &website_schema());
        assert_eq!(
            errors,
            [
                "spec.image: Required value",
                "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
                "spec.tier: Unsupported value: \"gold\": supported values: \"free\", \"paid\""
            ]
        );
    }

    #[test]
    fn unknown_fields_are_pruned_unless_the_schema_keeps_them() {
        let mut object = json!({"apiVersion": "x/v1", "kind": "W", "metadata": {},
            "spec": {"image": "nginx", "colour": "red", "extra": {"anything": 1}}, "other": 2});
        let pruned = prune(object.as_object_mut().unwrap(), &website_schema());
        assert_eq!(pruned, ["other", "spec.colour"]);
        assert_eq!(object["spec"]["extra"]["anything"], 1);
        assert_eq!(object["kind"], "W");
    }

    #[test]
    fn defaults_fill_missing_fields_of_objects_that_are_there() {
        let mut object = json!({"spec": {"image": "nginx"}});
        default(object.as_object_mut().unwrap(), &website_schema());
        assert_eq!(object["spec"]["replicas"], 1);
    }

    #[test]
    fn a_schema_without_types_is_not_structural() {
        let schema = json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "strin"}}}}});
        assert_eq!(
            check_structural(&schema, "spec.versions[0].schema.openAPIV3Schema"),
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[a].type: Unsupported value: \"strin\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
            ]
        );
    }

    #[test]
    fn patterns_and_cel_rules_are_checked_with_their_messages() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                {"rule": "self.min >= 0"}],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$"},
                "min": {"type": "integer"}, "max": {"type": "integer"}}}}});
        let object = json!({"spec": {"name": "Web", "min": -5, "max": -6}});
        assert_eq!(
            validate(object.as_object().unwrap(), &schema),
            [
                "spec: Invalid value: \"object\": min must not exceed max",
                "spec: Invalid value: \"object\": failed rule: self.min >= 0",
                "spec.name: Invalid value: \"Web\": spec.name in body should match '^[a-z]+$'"
            ]
        );
    }
}
