//! `kubectl explain` of CustomResourceDefinitions (apiextensions.k8s.io/v1) and of custom
//! resources, whose fields and descriptions come from their definition's schema as discovery
//! lists it.

use super::Output;
use super::explain::{API_VERSION, Field, KIND, METADATA, wrap};
use crate::api::Kind;
use crate::api::custom::{CustomKind, Served};
use serde_json::Value;

pub(super) const CRD_TYPES: &[(&str, &str, &[Field])] = &[
    (
        "CustomResourceDefinition",
        "CustomResourceDefinition adds a resource to the API server: once Established, objects of its kind are served under /apis/<group>/<version>/<plural>. Its name must be <plural>.<group>.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "CustomResourceDefinitionSpec",
                true,
                "spec describes how the resource is named, scoped and versioned.",
            ),
            (
                "status",
                "CustomResourceDefinitionStatus",
                false,
                "status says whether the names were accepted and the resource is served.",
            ),
        ],
    ),
    (
        "CustomResourceDefinitionSpec",
        "CustomResourceDefinitionSpec describes the resource a definition adds.",
        &[
            (
                "conversion",
                "Object",
                false,
                "conversion says how objects are converted between versions; None changes only their apiVersion.",
            ),
            (
                "group",
                "string",
                true,
                "group is the API group of the resource (a domain, e.g. example.com): its objects' apiVersion is <group>/<version>.",
            ),
            (
                "names",
                "CustomResourceDefinitionNames",
                true,
                "names are the plural, singular, kind, short names and categories the resource is known by.",
            ),
            (
                "scope",
                "string",
                true,
                "scope is Namespaced or Cluster: whether objects live in a namespace.\n\nPossible enum values:\n - `\"Cluster\"`\n - `\"Namespaced\"`",
            ),
            (
                "versions",
                "[]CustomResourceDefinitionVersion",
                true,
                "versions lists the versions served; exactly one is the storage version.",
            ),
        ],
    ),
    (
        "CustomResourceDefinitionNames",
        "CustomResourceDefinitionNames are the names a custom resource is served and printed by.",
        &[
            (
                "categories",
                "[]string",
                false,
                "categories are the groups of resources this one belongs to, e.g. `all` for `kubectl get all`.",
            ),
            ("kind", "string", true, "kind is the CamelCase kind of the objects."),
            ("listKind", "string", false, "listKind is the kind of a list of them; defaults to <kind>List."),
            (
                "plural",
                "string",
                true,
                "plural is the lowercase name in URLs and RBAC rules: /apis/<group>/<version>/<plural>.",
            ),
            ("shortNames", "[]string", false, "shortNames are abbreviations kubectl accepts for the resource."),
            ("singular", "string", false, "singular is the lowercase singular name; defaults to the lowercased kind."),
        ],
    ),
    (
        "CustomResourceDefinitionVersion",
        "CustomResourceDefinitionVersion is one version of the resource: whether it is served and stored, its schema, subresources and printer columns.",
        &[
            (
                "additionalPrinterColumns",
                "[]Object",
                false,
                "additionalPrinterColumns are the columns `kubectl get` prints, each a JSONPath into the object; without them NAME and AGE are printed.",
            ),
            ("name", "string", true, "name is the version's name, as in <group>/<name>."),
            (
                "schema",
                "Object",
                false,
                "schema holds the openAPIV3Schema objects of this version are validated, pruned and defaulted against; it must be structural.",
            ),
            ("served", "boolean", true, "served says whether the version is served by the REST API."),
            (
                "storage",
                "boolean",
                true,
                "storage says whether objects are stored in this version; exactly one version must be.",
            ),
            ("subresources", "Object", false, "subresources are the status and scale subresources the version has."),
        ],
    ),
    (
        "CustomResourceDefinitionStatus",
        "CustomResourceDefinitionStatus is what the API server reports of a definition.",
        &[
            (
                "acceptedNames",
                "CustomResourceDefinitionNames",
                false,
                "acceptedNames are the names actually served (they may differ from spec.names when they conflict).",
            ),
            (
                "conditions",
                "[]Object",
                false,
                "conditions are the definition's state: NamesAccepted, Established, Terminating.",
            ),
            (
                "storedVersions",
                "[]string",
                false,
                "storedVersions lists every version objects have ever been stored in.",
            ),
        ],
    ),
];

/// The type of a schema node, as explain prints it.
fn type_name(schema: &Value) -> String {
    let t = schema.get("type").and_then(Value::as_str).unwrap_or("");
    match t {
        "object" => "Object".into(),
        "array" => format!("[]{}", type_name(schema.get("items").unwrap_or(&Value::Null))),
        "" if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) => "IntOrString".into(),
        "" => "Object".into(),
        other => other.into(),
    }
}

/// The fields of a schema node (an array's: its items'), sorted, with whether each is required.
fn fields(schema: &Value) -> Vec<(String, Value, bool)> {
    let node = if schema.get("type").and_then(Value::as_str) == Some("array") { &schema["items"] } else { schema };
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    node.get("properties")
        .and_then(Value::as_object)
        .map(|props| props.iter().map(|(k, v)| (k.clone(), v.clone(), required.contains(&k.as_str()))).collect())
        .unwrap_or_default()
}

fn description(schema: &Value) -> &str {
    schema.get("description").and_then(Value::as_str).unwrap_or("<no description>")
}

fn field_line(name: &str, schema: &Value, required: bool) -> String {
    format!("{name}\t<{}>{}", type_name(schema), if required { " -required-" } else { "" })
}

fn recursive(schema: &Value, depth: usize, out: &mut String) {
    for (name, child, required) in fields(schema) {
        out.push_str(&format!("{}{}\n", "  ".repeat(depth), field_line(&name, &child, required)));
        if depth < 8 {
            recursive(&child, depth + 1, out);
        }
    }
}

pub(super) fn run<'a>(kind: CustomKind, path: impl Iterator<Item = &'a str>, all: bool) -> Output {
    let served = Served::of(kind).map(|s| s.schema).unwrap_or_default();
    let mut root = served;
    // apiVersion, kind and metadata are every object's, whatever the schema says of them.
    if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, f) in [("apiVersion", API_VERSION), ("kind", KIND)] {
            props.entry(name).or_insert_with(|| serde_json::json!({"type": f.1, "description": f.3}));
        }
        props.insert("metadata".into(), serde_json::json!({"type": "ObjectMeta", "description": METADATA.3}));
    }
    let mut node = root.clone();
    let mut field: Option<(String, bool)> = None;
    for name in path {
        let Some((_, child, required)) = fields(&node).into_iter().find(|(n, _, _)| n == name) else {
            return Output::err(format!("error: field \"{name}\" does not exist"));
        };
        field = Some((name.to_string(), required));
        node = child;
    }
    let mut out = format!("KIND:       {}\nVERSION:    {}\n\n", kind.info().kind, Kind::Custom(kind).api_version());
    if let Some((name, required)) = &field {
        out.push_str(&format!("FIELD: {}\n\n", field_line(name, &node, *required).replace('\t', " ")));
    }
    out.push_str("DESCRIPTION:\n");
    wrap(description(&node), 4, &mut out);
    out.push_str("    \n");
    let list = fields(&node);
    if !list.is_empty() {
        out.push_str("FIELDS:\n");
        if all {
            recursive(&node, 1, &mut out);
        } else {
            for (name, child, required) in list {
                out.push_str(&format!("  {}\n", field_line(&name, &child, required)));
                wrap(description(&child), 4, &mut out);
                out.push('\n');
            }
        }
        out.push('\n');
    }
    Output::ok(out)
}
