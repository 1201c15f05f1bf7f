//! `kubectl -v=N`: klog lines for each request kubectl sent — the `"Response"` line from
//! client-go's round tripper at 6, request headers at 7, request and response bodies
//! (quoted, truncated to 1024 characters) at 8.

use crate::apiserver::{Reply, Status, Subresource, Verb};
use crate::cluster::ClientCall;
use crate::sim::Time;
use crate::util::json_macro::json;
use crate::util::sort::StableSort;
use serde_json::Value;

const PID: u32 = 48213;

/// Parses `-v`'s value; kubectl's error for a bad one.
pub fn level(value: Option<&str>) -> Result<u32, String> {
    match value {
        None => Ok(0),
        Some(v) => v.parse::<u32>().map_err(|_| {
            format!(
                "error: invalid argument \"{v}\" for \"-v, --v\" flag: strconv.ParseInt: parsing \"{v}\": invalid syntax\nSee 'kubectl --help' for usage."
            )
        }),
    }
}

/// The klog header: `I1121 10:00:00.000123   48213 file:line] `.
fn header(now: Time, seq: u64, site: &str) -> String {
    format!("{}   {PID} {site}] ", stamp(now, seq))
}

/// A klog line's severity and time, `I1121 10:00:00.000123`: the virtual time, its
/// microseconds made distinct by the line's number `seq`.
pub(crate) fn stamp(now: Time, seq: u64) -> String {
    stamp_at(now, seq * 37 % 1000)
}

/// A klog line's severity and time, `micros` microseconds into the virtual time's millisecond.
pub(crate) fn stamp_at(now: Time, micros: u64) -> String {
    let rfc = now.rfc3339();
    // 2026-01-01T00:01:00Z
    let (date, time) = rfc.split_once('T').unwrap_or(("", ""));
    let month_day: String = date.split('-').skip(1).collect();
    let hms = time.trim_end_matches('Z');
    let micros = (now.0 % 1000) * 1000 + micros.min(999);
    format!("I{month_day} {hms}.{micros:06}")
}

pub(crate) fn query_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The URL kubectl requested: the server, the path, and the query in Go's sorted encoding.
pub fn url(server: &str, call: &ClientCall) -> String {
    let req = &call.request;
    let full = req.path();
    let path = full.split('?').next().unwrap_or("");
    let mut query: Vec<(String, String)> = Vec::new();
    if let Some(sel) = &req.label_selector {
        query.push(("labelSelector".into(), sel.to_selector_string()));
    }
    if let Some(sel) = &req.field_selector {
        query.push(("fieldSelector".into(), sel.to_string()));
    }
    if req.verb == Verb::List {
        query.push(("limit".into(), "500".into()));
    }
    if req.verb == Verb::Watch {
        query.push(("watch".into(), "true".into()));
    }
    if req.dry_run {
        query.push(("dryRun".into(), "All".into()));
    }
    query.extend(req.options.iter().cloned());
    // Go encodes by key, keeping a repeated key's values (exec's `command`) in order.
    query.stable_sort_by(|a, b| a.0.cmp(&b.0));
    let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={}", query_escape(v))).collect();
    if q.is_empty() { format!("{server}{path}") } else { format!("{server}{path}?{}", q.join("&")) }
}

fn truncate(body: &str) -> String {
    let max = 1024;
    if body.len() <= max {
        return body.to_string();
    }
    let mut cut = max;
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{} [truncated {} chars]", &body[..cut], body.len() - cut)
}

/// klog's quoting of a string value: `"..."` with `"`, `\\` and newlines escaped.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn response_body(call: &ClientCall) -> String {
    let value = match &call.result {
        Ok(Reply::Object(o)) if call.request.subresource == Some(Subresource::Scale) => {
            crate::apiserver::scale_of(&o.to_json_value())
        }
        Ok(Reply::Object(o)) => o.to_json_value(),
        Ok(Reply::List { items, revision }) => {
            let kind = format!("{}List", call.request.kind.info().kind);
            let items: Vec<Value> = items.iter().map(|o| o.to_json_value()).collect();
            json!({"kind": kind, "apiVersion": call.request.kind.api_version(),
                "metadata": {"resourceVersion": revision.to_string()}, "items": items})
        }
        Ok(Reply::Watch { .. } | Reply::Connect(_)) => return String::new(),
        Err(status) => status_json(status),
    };
    serde_json::to_string(&value).unwrap_or_default()
}

fn status_json(status: &Status) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": status.message, "reason": status.reason, "code": status.code})
}

/// The log lines for the calls, at verbosity `v` (nothing below 6).
pub fn lines(v: u32, server: &str, now: Time, calls: &[ClientCall]) -> String {
    if v < 6 {
        return String::new();
    }
    let mut out = String::new();
    let mut seq = 0;
    let mut line = |site: &str, text: String, out: &mut String| {
        seq += 1;
        out.push_str(&header(now, seq, site));
        out.push_str(&text);
        out.push('\n');
    };
    line("loader.go:402", "Config loaded from file:  /root/.kube/config".into(), &mut out);
    for call in calls {
        let req = &call.request;
        let method = req.verb.method();
        let url = url(server, call);
        if v >= 7 {
            let content = match (req.verb, req.patch_type) {
                (Verb::Patch, Some(t)) => format!("\n\tContent-Type: {}", t.content_type()),
                (Verb::Create | Verb::Update, _) => "\n\tContent-Type: application/json".into(),
                _ => String::new(),
            };
            line(
                "round_trippers.go:527",
                format!(
                    "\"Request\" verb=\"{method}\" url=\"{url}\" headers=<\n\tAccept: application/json{content}\n\tUser-Agent: kubectl/{} (linux/amd64) kubernetes/{}\n >",
                    crate::api::well_known::KUBERNETES_VERSION,
                    "4c5c0cc"
                ),
                &mut out,
            );
        }
        if v >= 8 {
            let body = req.body_json().map(|j| serde_json::to_string(&j).unwrap_or_default());
            if let Some(body) = body {
                line("request.go:1212", format!("\"Request Body\" body={}", quote(&truncate(&body))), &mut out);
            }
        }
        let code = match &call.result {
            Ok(Reply::Connect(t)) => {
                if t.subresource == Subresource::Log {
                    200
                } else {
                    101
                }
            }
            Ok(_) => {
                if req.verb == Verb::Create {
                    201
                } else {
                    200
                }
            }
            Err(status) => status.code,
        };
        // Simulated round trips take a few milliseconds, longer for writes.
        // A request the server kept waiting (a webhook, etcd's timeout) took that long more.
        let ms = 2
            + (url.len() as u64 % 4)
            + if matches!(req.verb, Verb::Get | Verb::List) { 0 } else { 4 }
            + call.waited.as_millis();
        line(
            "round_trippers.go:632",
            format!(
                "\"Response\" verb=\"{method}\" url=\"{url}\" status=\"{code} {}\" milliseconds={ms}",
                Status::code_text(code)
            ),
            &mut out,
        );
        if v >= 8 {
            let body = response_body(call);
            if !body.is_empty() {
                line("request.go:1351", format!("\"Response Body\" body={}", quote(&truncate(&body))), &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_escaped_like_go() {
        assert_eq!(query_escape("app=web,tier!=db"), "app%3Dweb%2Ctier%21%3Ddb");
        assert_eq!(query_escape("a b"), "a+b");
    }

    #[test]
    fn long_bodies_are_truncated_with_a_count() {
        let body = "x".repeat(1030);
        assert_eq!(truncate(&body), format!("{} [truncated 6 chars]", "x".repeat(1024)));
    }

    #[test]
    fn a_bad_level_is_kubectls_flag_error() {
        assert_eq!(level(Some("6")), Ok(6));
        assert!(level(Some("six")).unwrap_err().starts_with("error: invalid argument \"six\" for \"-v, --v\" flag"));
    }
}
