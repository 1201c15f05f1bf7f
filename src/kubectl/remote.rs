//! `kubectl apply -f https://…`: kubectl fetches a manifest over HTTP. The sandbox has no
//! network, so the manifests the Kubernetes documentation applies by URL
//! (`https://k8s.io/examples/controllers/nginx-deployment.yaml`) come with it, and any other
//! URL fails as a kubectl on a machine without a network fails to look its host up.

/// The documentation's examples the sandbox carries, by their path under `examples/`.
const EXAMPLES: &[(&str, &str)] = &[
    ("controllers/nginx-deployment.yaml", include_str!("docs_examples/nginx-deployment.yaml")),
    ("controllers/frontend.yaml", include_str!("docs_examples/frontend.yaml")),
    ("controllers/job.yaml", include_str!("docs_examples/job.yaml")),
    ("pods/simple-pod.yaml", include_str!("docs_examples/simple-pod.yaml")),
    ("service/nginx-service.yaml", include_str!("docs_examples/nginx-service.yaml")),
    ("service/networking/run-my-nginx.yaml", include_str!("docs_examples/run-my-nginx.yaml")),
    ("service/networking/nginx-svc.yaml", include_str!("docs_examples/nginx-svc.yaml")),
    ("application/deployment.yaml", include_str!("docs_examples/application-deployment.yaml")),
    ("application/deployment-update.yaml", include_str!("docs_examples/application-deployment-update.yaml")),
    ("application/deployment-scale.yaml", include_str!("docs_examples/application-deployment-scale.yaml")),
];

/// Where the documentation's examples are published: the short link, the site, and the
/// repository the short link redirects to.
const PREFIXES: &[&str] = &[
    "https://k8s.io/examples/",
    "https://kubernetes.io/examples/",
    "https://raw.githubusercontent.com/kubernetes/website/main/content/en/examples/",
];

/// The website-operator's release (its CRD, RBAC, Deployment and a sample Website), as an
/// operator publishes its install manifests, under [`OPERATOR_PREFIX`].
const OPERATOR: &[(&str, &str)] = &[
    ("crd.yaml", include_str!("operator_manifests/crd.yaml")),
    ("rbac.yaml", include_str!("operator_manifests/rbac.yaml")),
    ("operator.yaml", include_str!("operator_manifests/operator.yaml")),
    ("website.yaml", include_str!("operator_manifests/website.yaml")),
];

/// Where the website-operator's release manifests are published.
pub const OPERATOR_PREFIX: &str = "https://kubeloop.dev/website-operator/";

/// Whether kubectl reads `name` as a URL rather than a path.
pub fn is_url(name: &str) -> bool {
    name.starts_with("http://") || name.starts_with("https://")
}

/// The example's path for each URL the sandbox answers (for help and completion).
pub fn example_urls() -> Vec<String> {
    let examples = EXAMPLES.iter().map(|(path, _)| format!("{}{path}", PREFIXES[0]));
    examples.chain(OPERATOR.iter().map(|(path, _)| format!("{OPERATOR_PREFIX}{path}"))).collect()
}

/// The manifest at `url`, or kubectl's error when it cannot be fetched.
pub fn fetch(url: &str) -> Result<String, String> {
    let path = PREFIXES
        .iter()
        .find_map(|p| url.strip_prefix(p))
        .or_else(|| url.strip_prefix("http://").and_then(|rest| rest.strip_prefix("k8s.io/examples/")));
    if let Some(text) = path.and_then(|path| EXAMPLES.iter().find(|(p, _)| *p == path)).map(|(_, text)| text) {
        return Ok(text.to_string());
    }
    let release = url.strip_prefix(OPERATOR_PREFIX).and_then(|path| OPERATOR.iter().find(|(p, _)| *p == path));
    if let Some((_, text)) = release {
        return Ok(text.to_string());
    }
    let host = url.split("://").nth(1).unwrap_or("").split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or(host);
    let host = host.split(':').next().unwrap_or(host);
    Err(format!(
        "error: Get \"{url}\": dial tcp: lookup {host}: no such host\n\
         (the sandbox has no network: kubectl reads only the documentation's own examples by URL, such as {}; save any other manifest with cat > FILE <<EOF)",
        example_urls()[0]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documentations_short_links_give_the_carried_manifests() {
        let text = fetch("https://k8s.io/examples/controllers/nginx-deployment.yaml").unwrap();
        assert!(text.contains("name: nginx-deployment"));
        assert_eq!(
            fetch("https://kubernetes.io/examples/pods/simple-pod.yaml"),
            fetch("http://k8s.io/examples/pods/simple-pod.yaml")
        );
        for url in example_urls().iter().filter(|u| !u.starts_with(OPERATOR_PREFIX)) {
            let text = fetch(url).unwrap();
            assert!(crate::kubectl::manifest::parse(&text, url).is_ok_and(|docs| docs.len() == 1), "{url}");
        }
    }

    #[test]
    fn the_operators_release_manifests_are_published_at_its_url() {
        let crd = fetch("https://kubeloop.dev/website-operator/crd.yaml").unwrap();
        assert!(crate::kubectl::manifest::parse(&crd, "crd.yaml").is_ok_and(|docs| docs.len() == 1));
        let rbac = fetch("https://kubeloop.dev/website-operator/rbac.yaml").unwrap();
        assert!(crate::kubectl::manifest::parse(&rbac, "rbac.yaml").is_ok_and(|docs| docs.len() == 4));
    }

    #[test]
    fn any_other_url_fails_as_a_lookup_without_a_network_does() {
        let e = fetch("https://example.com:8443/app.yaml?x=1").unwrap_err();
        assert!(
            e.starts_with(
                "error: Get \"https://example.com:8443/app.yaml?x=1\": dial tcp: lookup example.com: no such host\n"
            ),
            "{e}"
        );
        assert!(fetch("https://k8s.io/examples/nope.yaml").is_err());
        assert!(is_url("http://x") && !is_url("x.yaml"));
    }
}
