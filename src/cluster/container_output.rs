//! A container's own process prints what its programs print: the kubelet logs a placeholder
//! for each command whose output depends on the cluster (`nslookup`, `wget`, `cat`…), and
//! the cluster fills them in as the container starts, running each command through the same
//! userland `kubectl exec` uses. So `kubectl run -i --rm … -- nslookup kubernetes.default`
//! shows the lookup, as `kubectl exec POD -- nslookup kubernetes.default` does.

use super::Cluster;
use crate::userland::Container;

/// Fills in the placeholders of the containers that just started on `node`.
pub fn fill(cluster: &mut Cluster, node: &str) {
    let Some(pending) = cluster.kubelet_unwoken_mut(node).map(|k| k.take_unfilled()) else { return };
    for (namespace, pod, container, commands) in pending {
        // The pod as the kubelet that runs it knows it.
        let known = cluster.kubelet(node).and_then(|k| k.pod(&namespace, &pod));
        let results = match known {
            Some(object) => match object.as_pod() {
                Some(p) => match p.spec.containers.iter().find(|c| c.name == container) {
                    Some(spec) => commands.iter().map(|cmd| output(cluster, p, spec, cmd)).collect(),
                    None => Vec::new(),
                },
                None => Vec::new(),
            },
            None => Vec::new(),
        };
        if let Some(kubelet) = cluster.kubelet_unwoken_mut(node) {
            kubelet.fill(&namespace, &pod, &container, &results);
        }
    }
}

/// What one command prints in the container (its stdout, then its stderr, line by line) and
/// its exit code.
fn output(cluster: &Cluster, pod: &crate::api::Pod, spec: &crate::api::Container, cmd: &str) -> (Vec<String>, i32) {
    let run = Container::new(cluster, pod, spec, false).script("sh", cmd);
    let lines = run.stdout.lines().chain(run.stderr.lines()).map(String::from).collect();
    (lines, run.code)
}
