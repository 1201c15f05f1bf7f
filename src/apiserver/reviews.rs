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
