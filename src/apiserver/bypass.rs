//! What the API server sees of writes that went straight to etcd (`etcdctl put|del`, a
//! restored snapshot) and of etcd being down: the watch cache still reports decodable changes
//! to every watcher, reads of undecodable values fail, and nothing answers while etcd is gone.

use super::{ApiServer, Env, Status, Verb, list_prefix};
use crate::api::Kind;
use crate::etcd::{Change, Etcd};
use crate::record::Happening;

impl ApiServer {
    /// Fans a change written behind the API server's back out to the watches it concerns, as
    /// the watch cache (which watches etcd itself) does. `what` describes the write.
    pub fn publish_direct(&mut self, change: Change, what: &str, env: &mut Env) {
        let text = if env.record.enabled { what.to_string() } else { String::new() };
        let seq = env.record.push(env.now, change.revision, env.actor, env.cause, Happening::Decision { text });
        self.publish(change, env, seq);
    }

    /// Whether etcd is answering.
    pub fn etcd_running(&self) -> bool {
        !self.etcd_down
    }

    /// Stops or starts etcd: while it is stopped every request fails.
    pub fn set_etcd_running(&mut self, running: bool) {
        self.etcd_down = !running;
    }

    /// The refusal every request gets while etcd is down: the API server cannot stay up
    /// without its store, so clients find nothing listening.
    pub fn refused(&self) -> Status {
        Status::connection_refused(&self.endpoint())
    }

    /// Where clients reach the API (`host:port`), as the cluster set it.
    pub fn endpoint(&self) -> String {
        match &self.endpoint {
            Some(e) => e.clone(),
            None => {
                format!("{}:{}", crate::api::well_known::api_server_address(), crate::api::well_known::API_SERVER_PORT)
            }
        }
    }

    /// A request that must decode a value nobody can decode fails, as the storage layer's
    /// decode error (a 500 with no reason).
    pub(super) fn check_decodable(&self, verb: Verb, kind: Kind, namespace: &str, name: &str) -> Result<(), Status> {
        // Every request asks; with nothing undecodable stored (the usual case) no key is built.
        if kind == Kind::ComponentStatus || super::reviews::is_review(kind) || !self.etcd.has_raw() {
            return Ok(());
        }
        let prefix = list_prefix(kind, namespace);
        let ns = if kind.info().namespaced { namespace } else { "" };
        let key = Etcd::key_for(kind.storage_resource(), ns, name);
        let raw = if name.is_empty() || matches!(verb, Verb::List | Verb::Watch) {
            self.etcd.raw_range(&prefix).next().map(|(_, r)| r)
        } else {
            self.etcd.raw(&key)
        };
        match raw {
            Some(raw) if verb != Verb::Create => Err(Status {
                code: 500,
                reason: "",
                message: decode_error(&raw.value),
                kind: String::new(),
                name: String::new(),
                causes: Vec::new(),
            }),
            _ => Ok(()),
        }
    }
}

/// Why a stored value does not decode, in the words of the API server's JSON decoder.
pub fn decode_error(value: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(value) {
        Err(_) => {
            let first = value.trim_start().chars().next();
            let why = match first {
                None => "unexpected end of JSON input".to_string(),
                Some(c) if !"{[\"-0123456789tfn".contains(c) => {
                    format!("invalid character '{c}' looking for beginning of value")
                }
                Some(_) => "invalid character after top-level value".to_string(),
            };
            format!("couldn't get version/kind; json parse error: {why}")
        }
        Ok(v) if v.get("kind").and_then(|k| k.as_str()).is_none_or(str::is_empty) => {
            format!("Object 'Kind' is missing in '{value}'")
        }
        Ok(_) => format!("unable to decode {value:?} into the stored kind"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_reads_as_a_json_parse_error() {
        assert_eq!(
            decode_error("garbage"),
            "couldn't get version/kind; json parse error: invalid character 'g' looking for beginning of value"
        );
        assert_eq!(decode_error("{\"a\":1}"), "Object 'Kind' is missing in '{\"a\":1}'");
    }
}
