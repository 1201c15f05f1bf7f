//! `kubectl explain` schemas of the admission policy kinds: ValidatingAdmissionPolicy and
//! ValidatingAdmissionPolicyBinding, with their specs and the types they nest.

use super::explain::{API_VERSION, Field, KIND, METADATA};

pub(super) const TYPES: &[(&str, &str, &[Field])] = &[
    (
        "ValidatingAdmissionPolicy",
        "CEL checks the API server evaluates in validating admission, and the requests they concern. A binding puts the policy in force.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            ("spec", "ValidatingAdmissionPolicySpec", false, "What the policy checks, and which requests."),
            ("status", "Object", false, "What the API server found when it type-checked the expressions."),
        ],
    ),
    (
        "ValidatingAdmissionPolicySpec",
        "The checks of a policy and the requests they apply to.",
        &[
            ("auditAnnotations", "[]Object", false, "Keys and CEL values added to the audit event of a request."),
            ("failurePolicy", "string", false, "Fail (the default) or Ignore: what an expression that errors does."),
            (
                "matchConditions",
                "[]MatchCondition",
                false,
                "CEL conditions a request must all meet for the policy to be checked.",
            ),
            ("matchConstraints", "MatchResources", true, "The resources and operations the policy concerns."),
            ("paramKind", "ParamKind", false, "The kind of object a binding gives as params."),
            ("validations", "[]Validation", false, "The CEL expressions a request must all make true."),
            ("variables", "[]Variable", false, "Named CEL expressions the others read as variables.NAME."),
        ],
    ),
    (
        "ParamKind",
        "The kind of a policy's parameter objects.",
        &[
            ("apiVersion", "string", false, "group/version of the kind (v1 for the core group)."),
            ("kind", "string", false, "The kind, as ConfigMap."),
        ],
    ),
    (
        "MatchResources",
        "Which requests a policy or binding concerns: by resource and operation, by namespace labels, by object labels.",
        &[
            ("excludeResourceRules", "[]NamedRuleWithOperations", false, "Requests left out even if a rule matches."),
            (
                "matchPolicy",
                "string",
                false,
                "Exact, or Equivalent (the default): whether other versions of a resource match.",
            ),
            ("namespaceSelector", "LabelSelector", false, "The labels of the namespaces whose objects are concerned."),
            ("objectSelector", "LabelSelector", false, "The labels of the objects concerned (new or old)."),
            ("resourceRules", "[]NamedRuleWithOperations", false, "The resources and operations concerned."),
        ],
    ),
    (
        "NamedRuleWithOperations",
        "A rule: API groups, versions, resources (resource/subresource) and operations, optionally names.",
        &[
            ("apiGroups", "[]string", false, "API groups; \"\" is the core group, * every group."),
            ("apiVersions", "[]string", false, "Versions; * every version."),
            ("operations", "[]string", false, "CREATE, UPDATE, DELETE, CONNECT, or *."),
            ("resourceNames", "[]string", false, "Names of the objects concerned; empty means all."),
            ("resources", "[]string", false, "Resources; deployments/scale names a subresource, * every resource."),
            ("scope", "string", false, "Cluster, Namespaced or * (the default)."),
        ],
    ),
    (
        "Validation",
        "One check: a CEL expression that must be true, and what a refusal says.",
        &[
            (
                "expression",
                "string",
                true,
                "The CEL expression; it reads object, oldObject, params, request, namespaceObject and variables.",
            ),
            ("message", "string", false, "What a failure says; without it, the failed expression is named."),
            ("messageExpression", "string", false, "A CEL expression giving the message; it wins over message."),
            (
                "reason",
                "string",
                false,
                "Invalid (the default), Forbidden, Unauthorized or RequestEntityTooLarge: the refusal's code.",
            ),
        ],
    ),
    (
        "MatchCondition",
        "A named CEL condition a request must meet for the policy to be checked.",
        &[
            ("expression", "string", true, "A CEL expression giving a bool."),
            ("name", "string", true, "Its name, unique in the policy."),
        ],
    ),
    (
        "Variable",
        "A named CEL expression the policy's other expressions read as variables.NAME.",
        &[("expression", "string", true, "The CEL expression."), ("name", "string", true, "The variable's name.")],
    ),
    (
        "ValidatingAdmissionPolicyBinding",
        "Puts a ValidatingAdmissionPolicy in force for some resources, with its parameters, and says what a failed check does.",
        &[
            API_VERSION,
            KIND,
            METADATA,
            (
                "spec",
                "ValidatingAdmissionPolicyBindingSpec",
                false,
                "The policy, its parameters, its scope and its actions.",
            ),
        ],
    ),
    (
        "ValidatingAdmissionPolicyBindingSpec",
        "The policy a binding enforces and how.",
        &[
            ("matchResources", "MatchResources", false, "Narrows the requests the policy concerns."),
            ("paramRef", "ParamRef", false, "The object (or objects) given to the policy as params."),
            ("policyName", "string", true, "The policy enforced."),
            ("validationActions", "[]string", true, "Deny, Warn and/or Audit (Deny and Warn not together)."),
        ],
    ),
    (
        "ParamRef",
        "The parameter objects of a binding: one by name, or those a selector picks.",
        &[
            ("name", "string", false, "The parameter object's name."),
            ("namespace", "string", false, "Its namespace; empty means the request's, for a namespaced kind."),
            ("parameterNotFoundAction", "string", false, "Deny or Allow: what a missing parameter does."),
            ("selector", "LabelSelector", false, "Picks parameter objects by label; each is checked."),
        ],
    ),
];
