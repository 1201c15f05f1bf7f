//! The API server's checks of a CustomResourceDefinition as it is written: the defaults it
//! fills in (singular, listKind, conversion), then what makes one invalid — its name not
//! `<plural>.<group>`, names that are not DNS labels, a scope other than Namespaced or
//! Cluster, not exactly one storage version, a version without a structural schema, printer
//! columns without a type or path — and what an update may not change.

use super::validation::{is_dns_label, is_dns_subdomain};
use crate::api::crd::CustomResourceDefinition;

const COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];

/// The defaults the API server gives a definition: singular and listKind from its kind.
pub fn default_crd(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    if names.singular.is_empty() {
        names.singular = names.kind.to_lowercase();
    }
    if names.list_kind.is_empty() && !names.kind.is_empty() {
        names.list_kind = format!("{}List", names.kind);
    }
    if crd.spec.conversion.is_none() {
        crd.spec.conversion = Some(crate::util::json_macro::json!({"strategy": "None"}));
    }
}

/// What is wrong with a definition, in the API server's words.
#[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
pub fn validate_crd(crd: &CustomResourceDefinition) -> Vec<String> {
    let mut errors = Vec::new();
    let spec = &crd.spec;
    let names = &spec.names;
    let expected = format!("{}.{}", names.plural, spec.group);
    if crd.metadata.name != expected {
        errors.push(format!(
            "metadata.name: Invalid value: \"{}\": must be spec.names.plural+\".\"+spec.group",
            crd.metadata.name
        ));
    }
    if spec.group.is_empty() {
        errors.push("spec.group: Required value".into());
    } else if !is_dns_subdomain(&spec.group) {
        errors.push(format!("spec.group: Invalid value: \"{}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", spec.group));
    } else if !spec.group.contains('.') {
        errors.push(format!("spec.group: Invalid value: \"{}\": should be a domain with at least one dot", spec.group));
    }
    match spec.scope.as_str() {
        "Cluster" | "Namespaced" => {}
        "" => errors.push("spec.scope: Required value".into()),
        other => errors
            .push(format!("spec.scope: Unsupported value: \"{other}\": supported values: \"Cluster\", \"Namespaced\"")),
    }
    for (field, value) in [("plural", &names.plural), ("singular", &names.singular)] {
        if value.is_empty() {
            errors.push(format!("spec.names.{field}: Required value"));
        } else if !is_dns_label(value) {
            errors.push(format!("spec.names.{field}: Invalid value: \"{value}\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
        }
    }
    for (i, short) in names.short_names.iter().enumerate() {
        if !is_dns_label(short) {
            errors.push(format!("spec.names.shortNames[{i}]: Invalid value: \"{short}\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
        }
    }
    for (field, value) in [("kind", &names.kind), ("listKind", &names.list_kind)] {
        if value.is_empty() {
            errors.push(format!("spec.names.{field}: Required value"));
        } else if !value.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            || !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            errors.push(format!("spec.names.{field}: Invalid value: \"{value}\": may have mixed case, but should otherwise match: ^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"));
        }
    }
    if !names.kind.is_empty() && names.kind == names.list_kind {
        errors.push(format!("spec.names.listKind: Invalid value: \"{}\": kind and listKind may not be the same or if listKind is empty, kind may not end in 'List'", names.list_kind));
    }
    if spec.versions.is_empty() {
        errors
            .push("spec.versions: Invalid value: null: must have exactly one version marked as storage version".into());
    } else {
        let storage = spec.versions.iter().filter(|v| v.storage).count();
        if storage != 1 {
            let listed: Vec<String> =
                spec.versions.iter().map(|v| format!("{}(storage={})", v.name, v.storage)).collect();
            errors.push(format!(
                "spec.versions: Invalid value: \"{}\": must have exactly one version marked as storage version",
                listed.join(",")
            ));
        }
        if !spec.versions.iter().any(|v| v.served) {
            errors.push("spec.versions: Invalid value: \"\": must have at least one version marked as served".into());
        }
    }
    for (i, version) in spec.versions.iter().enumerate() {
        let at = format!("spec.versions[{i}]");
        if version.name.is_empty() {
            errors.push(format!("{at}.name: Required value"));
        } else if !is_dns_label(&version.name) {
            errors.push(format!("{at}.name: Invalid value: \"{}\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", version.name));
        } else if spec.versions[..i].iter().any(|v| v.name == version.name) {
            errors.push(format!("{at}.name: Duplicate value: \"{}\"", version.name));
        }
        match version.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) {
            None => errors.push(format!("{at}.schema.openAPIV3Schema: Required value: schemas are required")),
            Some(schema) => {
                errors.extend(super::schema::check_structural(schema, &format!("{at}.schema.openAPIV3Schema")))
            }
        }
        for (j, column) in version.additional_printer_columns.iter().enumerate() {
            let at = format!("{at}.additionalPrinterColumns[{j}]");
            if column.name.is_empty() {
                errors.push(format!("{at}.name: Required value"));
            }
            if column.type_.is_empty() {
                errors.push(format!("{at}.type: Required value"));
            } else if !COLUMN_TYPES.contains(&column.type_.as_str()) {
                errors.push(format!("{at}.type: Unsupported value: \"{}\": supported values: \"boolean\", \"date\", \"integer\", \"number\", \"string\"", column.type_));
            }
            if column.json_path.is_empty() {
                errors.push(format!("{at}.jsonPath: Required value"));
            } else if !column.json_path.starts_with('.') {
                errors.push(format!(
                    "{at}.jsonPath: Invalid value: \"{}\": must be a simple json path starting with .",
                    column.json_path
                ));
            }
        }
    }
    errors
}

/// What an update may not change.
pub fn validate_crd_update(old: &CustomResourceDefinition, new: &CustomResourceDefinition) -> Vec<String> {
    let mut errors = Vec::new();
    if old.spec.scope != new.spec.scope && old.established() {
        errors.push(format!("spec.scope: Invalid value: \"{}\": field is immutable", new.spec.scope));
    }
    if old.spec.group != new.spec.group {
        errors.push(format!("spec.group: Invalid value: \"{}\": field is immutable", new.spec.group));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_whose_name_is_not_plural_dot_group_is_invalid() {
        let mut crd: CustomResourceDefinition = Default::default();
        crd.metadata.name = "widget.example.com".into();
        crd.spec.group = "example.com".into();
        crd.spec.scope = "Cluster".into();
        crd.spec.names.plural = "widgets".into();
        crd.spec.names.kind = "Widget".into();
        default_crd(&mut crd);
        let errors = validate_crd(&crd);
        assert_eq!(
            errors[..2],
            [
                "metadata.name: Invalid value: \"widget.example.com\": must be spec.names.plural+\".\"+spec.group",
                "spec.versions: Invalid value: null: must have exactly one version marked as storage version"
            ]
        );
    }
}
