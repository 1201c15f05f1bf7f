//! API errors (`metav1.Status`): HTTP code, reason and the message kubectl prints.

use crate::api::Kind;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    pub code: u16,
    /// `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, `BadRequest`, `Forbidden`, `Gone`...
    pub reason: &'static str,
    pub message: String,
    /// For `Invalid`: the kind and name of the rejected object, and one line per field error.
    pub kind: String,
    pub name: String,
    pub causes: Vec<String>,
}

impl Status {
    pub(crate) fn new(code: u16, reason: &'static str, message: String) -> Status {
        Status { code, reason, message, kind: String::new(), name: String::new(), causes: Vec::new() }
    }

    /// What a client gets when nothing listens at the API server's address `host:port` (etcd
    /// is down, so the API server is too): kubectl's connection error, with no HTTP status.
    pub fn connection_refused(endpoint: &str) -> Status {
        Status::new(
            0,
            "",
            format!("The connection to the server {endpoint} was refused - did you specify the right host or port?"),
        )
    }

    pub fn not_found(kind: Kind, name: &str) -> Status {
        Status::new(404, "NotFound", format!("{} \"{name}\" not found", kind.qualified_resource()))
    }

    pub fn already_exists(kind: Kind, name: &str) -> Status {
        Status::new(409, "AlreadyExists", format!("{} \"{name}\" already exists", kind.qualified_resource()))
    }

    pub fn conflict(kind: Kind, name: &str) -> Status {
        Status::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                kind.qualified_resource()
            ),
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::new(400, "BadRequest", message.into())
    }

    pub fn forbidden(message: impl Into<String>) -> Status {
        Status::new(403, "Forbidden", message.into())
    }

    pub fn gone(message: impl Into<String>) -> Status {
        Status::new(410, "Expired", message.into())
    }

    /// 413: the body is over the server's limit.
    pub fn request_entity_too_large(limit: usize) -> Status {
        Status::new(413, "RequestEntityTooLarge", format!("Request entity too large: limit is {limit}"))
    }

    /// 500 without a reason: an error the server passes on as it came (etcd's).
    pub fn internal(message: impl Into<String>) -> Status {
        Status::new(500, "", message.into())
    }

    /// 429: try again later; `causes` say why (a disruption budget's count).
    pub fn too_many_requests(message: impl Into<String>, causes: Vec<String>) -> Status {
        Status { causes, ..Status::new(429, "TooManyRequests", message.into()) }
    }

    pub fn method_not_allowed(message: impl Into<String>) -> Status {
        Status::new(405, "MethodNotAllowed", message.into())
    }

    /// 422: the object failed validation; `causes` are `field: Type: detail` lines.
    pub fn invalid(kind: Kind, name: &str, causes: Vec<String>) -> Status {
        // Custom resources and their definitions are named by kind alone.
        let by_kind = matches!(kind, Kind::Custom(_) | Kind::CustomResourceDefinition);
        let kind_name = if kind.info().group.is_empty() || by_kind {
            kind.info().kind.to_string()
        } else {
            format!("{}.{}", kind.info().kind, kind.info().group)
        };
        let joined = if causes.len() == 1 { causes[0].clone() } else { format!("[{}]", causes.join(", ")) };
        Status {
            code: 422,
            reason: "Invalid",
            message: format!("{kind_name} \"{name}\" is invalid: {joined}"),
            kind: kind.info().kind.to_string(),
            name: name.to_string(),
            causes,
        }
    }

    /// The HTTP status line's text, as `kubectl -v=6` prints it.
    pub fn code_text(code: u16) -> &'static str {
        match code {
            101 => "Switching Protocols",
            200 => "OK",
            201 => "Created",
            400 => "Bad Request",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            409 => "Conflict",
            410 => "Gone",
            413 => "Request Entity Too Large",
            415 => "Unsupported Media Type",
            422 => "Unprocessable Entity",
            429 => "Too Many Requests",
            500 => "Internal Server Error",
            _ => "",
        }
    }

    /// How kubectl prints this error.
    pub fn kubectl_message(&self) -> String {
        if self.reason == "Invalid" && !self.kind.is_empty() {
            let head = format!("The {} \"{}\" is invalid: ", self.kind, self.name);
            return if self.causes.len() == 1 {
                format!("{head}{}", self.causes[0])
            } else {
                let lines: Vec<String> = self.causes.iter().map(|c| format!("* {c}")).collect();
                format!("{head}\n{}", lines.join("\n"))
            };
        }
        match (self.code, self.reason) {
            // No answer at all: kubectl prints what the connection did.
            (0, _) => self.message.clone(),
            (_, "") => format!("Error from server: {}", self.message),
            _ => format!("Error from server ({}): {}", self.reason, self.message),
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_prints_like_kubectl() {
        assert_eq!(
            Status::not_found(Kind::Pod, "x").kubectl_message(),
            "Error from server (NotFound): pods \"x\" not found"
        );
    }

    #[test]
    fn invalid_objects_list_each_cause() {
        let one = Status::invalid(Kind::Pod, "web", vec!["spec.containers: Required value".into()]);
        assert_eq!(one.message, "Pod \"web\" is invalid: spec.containers: Required value");
        assert_eq!(one.kubectl_message(), "The Pod \"web\" is invalid: spec.containers: Required value");
        let two = Status::invalid(Kind::Pod, "web", vec!["a: Required value".into(), "b: Required value".into()]);
        assert_eq!(two.message, "Pod \"web\" is invalid: [a: Required value, b: Required value]");
        assert_eq!(two.kubectl_message(), "The Pod \"web\" is invalid: \n* a: Required value\n* b: Required value");
    }
}
