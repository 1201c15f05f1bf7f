//! SelfSubjectAccessReview and SelfSubjectRulesReview: the authorizer answering a client's
//! questions about itself. Only `create` is served; nothing is stored. The identity asked
//! about is the one the request authenticated as (after impersonation), as upstream does.

use super::authorization::{self, Attributes, Identity};
use super::{ApiServer, Env, Reply, Request, Stage, StageResult, Status, Verb};
use crate::api::access_review::{NonResourceRule, ResourceRule};
use crate::api::{Kind, Object};
use std::sync::Arc;

impl ApiServer {
    /// Answers a review: its spec read from the body, its status filled in by the authorizer.
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn review(&self, mut req: Request, env: &Env) -> StageResult<(u16, Reply)> {
        if req.verb != Verb::Create {
            return Err((
                Stage::Authorization,
                Status::method_not_allowed("the server does not allow this method on the requested resource"),
            ));
        }
        let who = env.identity.clone().unwrap_or_else(|| Identity::of(env.user, &[]));
        let mut object = Self::decode(&mut req)?;
        match &mut object {
            Object::SelfSubjectAccessReview(review) => {
                if let (None, Some(url)) = (&review.spec.resource_attributes, &review.spec.non_resource_attributes) {
                    // A URL outside the API's resources (`/healthz`): cluster-wide rules name it,
                    // exactly or by a prefix ending in `*`.
                    let allowed = authorization::rules_for(&self.etcd, &who, "").into_iter().find(|(rule, _)| {
                        rule.verbs.iter().any(|v| v == "*" || *v == url.verb)
                            && rule.non_resource_urls.iter().any(|u| {
                                u == "*"
                                    || *u == url.path
                                    || u.strip_suffix('*').is_some_and(|p| url.path.starts_with(p))
                            })
                    });
                    review.status.allowed = allowed.is_some();
                    review.status.reason = allowed.map(|(_, reason)| reason).unwrap_or_default();
                    review.metadata.creation_timestamp = None;
                    return Ok((201, Reply::Object(Arc::new(object))));
                }
                let Some(asked) = &review.spec.resource_attributes else {
                    let message = "spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified";
                    return Err((Stage::Validation, Status::invalid(req.kind, "", vec![message.into()])));
                };
                let resource = match asked.subresource.as_str() {
                    "" => asked.resource.clone(),
                    sub => format!("{}/{sub}", asked.resource),
                };
                let attrs = Attributes {
                    verb: asked.verb.clone(),
                    group: asked.group.clone(),
                    resource,
                    namespace: asked.namespace.clone(),
                    name: asked.name.clone(),
                };
                match authorization::authorize(&self.etcd, &who, &attrs) {
                    Ok(reason) => {
                        review.status.allowed = true;
                        review.status.reason = reason;
                    }
                    Err(_) => review.status.allowed = false,
                }
            }
            Object::SelfSubjectRulesReview(review) => {
                let rules = authorization::rules_for(&self.etcd, &who, &review.spec.namespace);
                let status = &mut review.status;
                for (rule, _) in rules {
                    if !rule.resources.is_empty() {
                        status.resource_rules.push(ResourceRule {
                            verbs: rule.verbs.clone(),
                            api_groups: rule.api_groups.clone(),
                            resources: rule.resources.clone(),
                            resource_names: rule.resource_names.clone(),
                        });
                    }
                    if !rule.non_resource_urls.is_empty() {
                        status
                            .non_resource_rules
                            .push(NonResourceRule { verbs: rule.verbs, non_resource_urls: rule.non_resource_urls });
                    }
                }
            }
            _ => return Err((Stage::Storage, Status::internal("not a review"))),
        }
        object.meta_mut().creation_timestamp = None;
        Ok((201, Reply::Object(Arc::new(object))))
    }
}

/// Whether a kind is a review: asked, answered, never stored.
pub fn is_review(kind: Kind) -> bool {
    matches!(kind, Kind::SelfSubjectAccessReview | Kind::SelfSubjectRulesReview)
}

#[cfg(test)]
mod tests {
    use crate::api::{Kind, Object};
    use crate::apiserver::{Body, Request, Verb};
    use crate::shell::{Command, Session};
    use crate::util::json_macro::json;

    fn review(kind: Kind, body: serde_json::Value) -> Request {
        let mut req = Request::new(Verb::Create, kind, "", "");
        req.body = Some(Body::Json(body));
        req
    }

    #[test]
    fn an_access_review_answers_for_whom_the_request_impersonates_and_stores_nothing() {
        let mut s = Session::new(4);
        s.execute(&Command::new("kubectl create role pod-reader --verb=list --resource=pods"));
        s.execute(&Command::new("kubectl create rolebinding jane-pods --role=pod-reader --user=jane"));
        let ask = |verb: &str| {
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": {"namespace": "default", "verb": verb, "resource": "pods"}}})
        };
        s.cluster.acting_as = Some(crate::apiserver::authorization::Identity::of("jane", &[]));
        let revision = s.cluster.inspect().etcd().revision();
        let allowed =
            |s: &mut Session, verb: &str| match s.cluster.request(review(Kind::SelfSubjectAccessReview, ask(verb))) {
                Ok(reply) => match reply.object().as_deref() {
                    Some(Object::SelfSubjectAccessReview(r)) => r.status.allowed,
                    other => panic!("{other:?}"),
                },
                Err(status) => panic!("{status:?}"),
            };
        assert!(allowed(&mut s, "list"));
        assert!(!allowed(&mut s, "delete"));
        assert_eq!(s.cluster.inspect().etcd().revision(), revision, "a review is never stored");
    }

    #[test]
    fn a_rules_review_lists_resource_rules_apart_from_non_resource_ones() {
        let mut s = Session::new(4);
        s.cluster.acting_as = Some(crate::apiserver::authorization::Identity::of("jane", &[]));
        let body = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": "default"}, "status": {"resourceRules": null, "nonResourceRules": null, "incomplete": false}});
        let reply = s.cluster.request(review(Kind::SelfSubjectRulesReview, body)).expect("answered");
        let Some(Object::SelfSubjectRulesReview(r)) = reply.object().as_deref().cloned() else { panic!() };
        assert!(
            r.status.resource_rules.iter().any(|rule| rule.resources.iter().any(|r| r == "selfsubjectaccessreviews"))
        );
        assert!(r.status.non_resource_rules.iter().any(|rule| rule.non_resource_urls.iter().any(|u| u == "/healthz")));
        assert!(r.status.resource_rules.iter().all(|rule| !rule.resources.is_empty()));
    }

    #[test]
    fn reviews_can_be_created_but_not_listed() {
        let mut s = Session::new(4);
        let out = s.execute(&Command::new("kubectl get selfsubjectaccessreviews"));
        assert_eq!(
            out.stderr,
            "Error from server (MethodNotAllowed): the server does not allow this method on the requested resource\n"
        );
    }
}
