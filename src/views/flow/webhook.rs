//! Admission webhooks on the map: a request that a Mutating- or ValidatingWebhookConfiguration
//! takes in travels the API server's stages up to that admission stage, the API server posts
//! an AdmissionReview to the webhook's Service backend (the pod, in its node's box) and the
//! answer comes back — allowed, and the request goes on; denied, and it stops there.
//!
//! The record holds each call and its outcome as the API server's decisions, caused by the
//! request (`validating admission: ValidatingAdmissionWebhook "x": POST https://… → pod ns/name
//! (10.244.1.5:8443)`, then `… allowed the request`).

use super::{Class, End, Hop, Place};
use crate::api::Kind;
use crate::cluster::Cluster;
use crate::record::{ComponentId, Entry, Happening, Seq};

/// The stage (1-based, as `Message::stages` counts) of each phase, and its words.
const PHASES: [(&str, u8, &str); 2] = [
    ("mutating admission: MutatingAdmissionWebhook", 3, "mutating admission"),
    ("validating admission: ValidatingAdmissionWebhook", 5, "validating admission"),
];

/// What one webhook entry says.
#[derive(Debug, PartialEq)]
enum Said<'a> {
    /// The API server posts the review: the hook, the URL, the pod (`ns/name`) and its address.
    Call {
        hook: &'a str,
        url: &'a str,
        pod: &'a str,
        address: &'a str,
    },
    Allowed {
        hook: &'a str,
    },
    Denied {
        hook: &'a str,
        message: &'a str,
    },
    /// The call failed (no Service, no ready endpoint, no answer in time): whether the request
    /// is refused for it (`failurePolicy: Fail`), and why.
    Failed {
        hook: &'a str,
        refused: bool,
        why: &'a str,
    },
    Patched {
        ops: &'a str,
    },
}

/// The phase's stage and words, and what the entry says.
fn read(entry: &Entry) -> Option<(u8, &'static str, Said<'_>)> {
    let Happening::Decision { text } = &entry.what else { return None };
    if entry.actor != ComponentId::API_SERVER {
        return None;
    }
    let (prefix, stage, phase) = PHASES.iter().find(|(p, _, _)| text.starts_with(p))?;
    let rest = &text[prefix.len()..];
    let said = if let Some(failed) = rest.strip_prefix(": failed calling webhook ") {
        let (hook, after) = quoted(failed)?;
        let why = after.strip_prefix(": failed to call webhook: ").unwrap_or(after);
        let (why, policy) = why.rsplit_once("; failurePolicy is ").unwrap_or((why, ""));
        Said::Failed { hook, refused: policy.starts_with("Fail"), why }
    } else {
        let (hook, after) = quoted(rest.strip_prefix(' ')?)?;
        if let Some(call) = after.strip_prefix(": POST ") {
            let (url, target) = call.split_once(" → pod ")?;
            let (pod, address) = target.split_once(" (")?;
            Said::Call { hook, url, pod, address: address.trim_end_matches(')') }
        } else if after == " allowed the request" {
            Said::Allowed { hook }
        } else if let Some(message) = after.strip_prefix(" denied the request: ") {
            Said::Denied { hook, message }
        } else if let Some(ops) = after.strip_prefix(" patched: ") {
            Said::Patched { ops }
        } else {
            return None;
        }
    };
    Some((*stage, phase, said))
}

/// The quoted word at the start of `s`, and what follows it.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.strip_prefix('"')?;
    let end = s.find('"')?;
    Some((&s[..end], &s[end + 1..]))
}

/// The call entry an answer answers: the latest call of the same hook for the same request.
fn call_of(cluster: &Cluster, entry: &Entry, hook: &str) -> Option<Seq> {
    (entry.seq.saturating_sub(24)..entry.seq).rev().filter_map(|s| cluster.record.get(s)).find_map(|e| match read(e) {
        Some((_, _, Said::Call { hook: h, .. })) if e.cause == entry.cause && h == hook => Some(e.seq),
        _ => None,
    })
}

/// The hop a webhook entry makes, and the stage it belongs to (a patch is told with the answer
/// that brought it, and makes none).
pub(super) fn hop(cluster: &Cluster, entry: &Entry) -> Option<(Hop, u8)> {
    let (stage, phase, said) = read(entry)?;
    let api = End::Api;
    let (from, to, label, caption, refused) = match said {
        Said::Call { hook, url, pod, address } => {
            let caption = format!(
                "In {phase}, the webhook configuration's rules take the request in: the API server posts an \
                 AdmissionReview to {hook} at {url}, which its Service sends on to the pod {pod} ({address})."
            );
            (api, End::Pod(entry.seq), "AdmissionReview".to_string(), caption, false)
        }
        Said::Allowed { hook } => {
            let patch = cluster
                .record
                .get(entry.seq.saturating_add(1))
                .filter(|next| next.cause == entry.cause)
                .and_then(|next| match read(next) {
                    Some((_, _, Said::Patched { ops })) => {
                        Some(format!(" with a patch ({ops}) that the API server applies to the object"))
                    }
                    _ => None,
                })
                .unwrap_or_default();
            let caption = format!("The webhook {hook} answers: allowed{patch}. The request goes on past {phase}.");
            (End::Pod(call_of(cluster, entry, hook)?), api, "allowed".to_string(), caption, false)
        }
        Said::Denied { hook, message } => {
            let caption = format!(
                "The webhook {hook} answers: denied — {message}. The API server refuses the request at {phase}: \
                 nothing is written to etcd."
            );
            (End::Pod(call_of(cluster, entry, hook)?), api, "denied".to_string(), caption, true)
        }
        Said::Failed { hook, refused, why } => {
            let then = if refused {
                "its failurePolicy is Fail, so the API server refuses the request"
            } else {
                "its failurePolicy is Ignore, so the request goes on without its verdict"
            };
            let caption = format!("The call to the webhook {hook} fails ({why}): {then}.");
            let from = call_of(cluster, entry, hook).map_or(api, End::Pod);
            (from, api, "no answer".to_string(), caption, refused)
        }
        Said::Patched { .. } => return None,
    };
    let hop = Hop {
        refused,
        from_stage: stage,
        said: Some((label, caption)),
        ..Hop::new(entry.seq, from, to, Class::Webhook)
    };
    Some((hop, stage))
}

/// The legs of a request with webhook calls: up to the first webhook's stage, its call and
/// answer, on to the next, and from the last on to etcd (or to the stage that refused it).
pub(super) fn legs<'h>(
    cluster: &Cluster,
    request: &Hop,
    hooks: impl Iterator<Item = (&'h Hop, u8)>,
    out: &mut Vec<Hop>,
) {
    let hooks: Vec<(&Hop, u8)> = hooks.filter(|(_, stage)| *stage <= request.stages).collect();
    if hooks.is_empty() {
        out.push(request.clone());
        return;
    }
    let label = cluster.record.get(request.id).and_then(super::label).unwrap_or_default();
    let (mut at, mut part) = (0u8, 0u8);
    for (i, (hook, stage)) in hooks.iter().enumerate() {
        if i == 0 || hooks[i - 1].1 != *stage {
            let phase = PHASES.iter().find(|p| p.1 == *stage).map_or("admission", |p| p.2);
            let caption = if at == 0 {
                format!(
                    "{label} passes the API server's stages up to {phase}, where a webhook configuration's rules \
                     take it in: the API server asks the webhook before the request goes on."
                )
            } else {
                format!("{label} goes on through the stages to {phase}, where another webhook takes it in.")
            };
            out.push(Hop {
                to: End::Api,
                stages: *stage,
                from_stage: at,
                refused: false,
                part,
                said: Some((label.clone(), caption)),
                ..request.clone()
            });
            part += 1;
            at = *stage;
        }
        out.push((*hook).clone());
    }
    out.push(Hop { from_stage: at, part, ..request.clone() });
}

/// Where the pod a call went to is drawn: its node, and its place among the node's pods in the
/// order the node's box lists them (by namespace and name).
pub(super) fn pod_place(cluster: &Cluster, call: Seq) -> Place {
    let target = cluster.record.get(call).and_then(|e| match read(e) {
        Some((_, _, Said::Call { pod, .. })) => Some(pod.to_string()),
        _ => None,
    });
    let Some((namespace, name)) = target.as_deref().and_then(|t| t.split_once('/')) else {
        return Place::ApiServer;
    };
    let pods = cluster.objects(Kind::Pod, "");
    let node = pods
        .iter()
        .filter_map(|o| o.as_pod())
        .find(|p| p.metadata.namespace == namespace && p.metadata.name == name)
        .map(|p| p.spec.node_name.clone())
        .unwrap_or_default();
    let slot = pods
        .iter()
        .filter_map(|o| o.as_pod())
        .filter(|p| p.spec.node_name == node)
        .position(|p| p.metadata.namespace == namespace && p.metadata.name == name)
        .unwrap_or(0);
    Place::Pod { node, pod: name.to_string(), slot: u32::try_from(slot).unwrap_or(u32::MAX) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};
    use crate::views::flow::{Flow, Message, Pace};

    const WEBHOOK: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: policy\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: policy}\n  template:\n    metadata:\n      labels: {app: policy}\n    spec:\n      containers:\n      - name: webhook\n        image: kubeloop/admission-webhook:1.0\n        args: [\"--require-label=team\"]\n        ports:\n        - containerPort: 8443\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: policy\nspec:\n  selector: {app: policy}\n  ports:\n  - port: 443\n    targetPort: 8443\n";
    const CONFIG: &str = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: require-team\nwebhooks:\n- name: require-team.policy.example.com\n  admissionReviewVersions: [\"v1\"]\n  sideEffects: None\n  clientConfig:\n    service:\n      namespace: webhooks\n      name: policy\n      path: /validate\n  rules:\n  - apiGroups: [\"\"]\n    apiVersions: [\"v1\"]\n    operations: [\"CREATE\"]\n    resources: [\"pods\"]\n  namespaceSelector:\n    matchLabels:\n      kubernetes.io/metadata.name: default\n";

    fn apply(s: &mut Session, line: &str, manifest: &str) {
        s.execute(&Command { line: line.into(), heredoc: Some(("EOF".into(), manifest.into())) });
    }

    fn with_webhook() -> Session {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create namespace webhooks"));
        apply(&mut s, "kubectl apply -n webhooks -f -", WEBHOOK);
        s.execute(&Command::new("sleep 20s"));
        apply(&mut s, "kubectl apply -f -", CONFIG);
        s
    }

    fn played(s: &mut Session, line: &str) -> Vec<Message> {
        let mut flow = Flow::new(s.cluster.record.last_seq());
        s.execute(&Command::new(line));
        let (mut now, mut seen): (f64, Vec<Message>) = (0.0, Vec::new());
        while !flow.idle() || seen.is_empty() {
            now += 16.0;
            for m in flow.frame(&s.cluster, now, Pace::teaching(false)) {
                if !seen.iter().any(|d| d.id == m.id) {
                    seen.push(m.clone());
                }
            }
            assert!(now < 600_000.0);
        }
        seen
    }

    #[test]
    fn a_refused_pod_goes_to_validating_admission_the_webhook_pod_says_denied_and_the_request_stops_there() {
        let mut s = with_webhook();
        let seen = played(&mut s, "kubectl run web --image=nginx:1.25");
        let ends: Vec<(&Place, &Place, &str, u8, u8, bool)> =
            seen.iter().map(|m| (&m.from, &m.to, m.label.as_str(), m.from_stage, m.stages, m.refused)).collect();
        let pod = match ends.get(1).map(|e| e.1) {
            Some(p @ Place::Pod { pod, .. }) if pod.starts_with("policy-") => p,
            _ => panic!("{ends:#?}"),
        };
        assert_eq!(ends[0], (&Place::Kubectl, &Place::ApiServer, "POST pods", 0, 5, false));
        assert_eq!(ends[1], (&Place::ApiServer, pod, "AdmissionReview", 5, 0, false));
        assert_eq!(ends[2], (pod, &Place::ApiServer, "denied", 5, 0, true));
        assert_eq!(ends[3], (&Place::Kubectl, &Place::ApiServer, "POST pods", 5, 5, true));
        assert_eq!(ends.len(), 4, "nothing is stored, nobody is told: {ends:#?}");
        assert!(seen[2].caption.contains("missing required label \"team\""), "{}", seen[2].caption);
    }

    #[test]
    fn an_allowed_pod_goes_on_from_validating_admission_to_etcd() {
        let mut s = with_webhook();
        let seen = played(&mut s, "kubectl run web --image=nginx:1.25 --labels=team=shop");
        let legs: Vec<(u8, u8, &Place)> =
            seen.iter().filter(|m| m.from == Place::Kubectl).map(|m| (m.from_stage, m.stages, &m.to)).collect();
        assert_eq!(legs, vec![(0, 5, &Place::ApiServer), (5, 6, &Place::Etcd)]);
        assert!(seen.iter().any(|m| m.label == "allowed" && matches!(m.from, Place::Pod { .. })));
        let ids: std::collections::BTreeSet<u64> = seen.iter().map(|m| m.id).collect();
        assert_eq!(ids.len(), seen.len(), "each leg is a message of its own");
    }

    fn entry(text: &str) -> Entry {
        Entry {
            seq: 7,
            time: crate::sim::Time(0),
            revision: 1,
            actor: ComponentId::API_SERVER,
            cause: Some(3),
            what: Happening::Decision { text: text.into() },
        }
    }

    #[test]
    fn the_api_servers_webhook_notes_are_read_back_as_calls_and_answers() {
        let call = entry(
            "validating admission: ValidatingAdmissionWebhook \"require-team.policy.example.com\": POST https://policy.webhooks.svc:443/validate?timeout=10s → pod webhooks/policy-1 (10.244.1.5:8443)",
        );
        assert_eq!(
            read(&call),
            Some((
                5,
                "validating admission",
                Said::Call {
                    hook: "require-team.policy.example.com",
                    url: "https://policy.webhooks.svc:443/validate?timeout=10s",
                    pod: "webhooks/policy-1",
                    address: "10.244.1.5:8443"
                }
            ))
        );
        let denied = entry("validating admission: ValidatingAdmissionWebhook \"x\" denied the request: no team label");
        assert_eq!(read(&denied).map(|r| r.2), Some(Said::Denied { hook: "x", message: "no team label" }));
        let failed = entry(
            "mutating admission: MutatingAdmissionWebhook: failed calling webhook \"m\": failed to call webhook: Post \"https://a\": context deadline exceeded; failurePolicy is Fail: the request is refused",
        );
        assert!(matches!(read(&failed), Some((3, _, Said::Failed { hook: "m", refused: true, .. }))));
        assert_eq!(read(&entry("validating admission: ValidatingAdmissionPolicy \"p\" denied")), None);
    }
}
