//! No input may panic the sandbox (a panic in wasm kills the page): mangled manifests and
//! random command lines, drawn from a seeded generator so any failure reproduces.

use kubeloop::cluster::ClusterConfig;
use kubeloop::shell::{Command, Session};
use kubeloop::sim::Rng;

const MANIFESTS: &[&str] = &[
    include_str!("../src/views/examples.rs"),
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.25\n        ports:\n        - containerPort: 80\n",
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: NodePort\n  selector:\n    app: web\n  ports:\n  - port: 80\n    targetPort: http\n",
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\nspec:\n  backoffLimit: 1\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: pi\n        image: perl:5.34.0\n        command: [\"perl\", \"-e\", \"print 1\"]\n",
];

const WORDS: &[&str] = &[
    "kubectl",
    "--rev",
    "--limit",
    "-w",
    "json",
    "--keys-only",
    "{\"spec\":{\"replicas\":2}}",
    "--type",
    "merge",
    "get",
    "describe",
    "delete",
    "apply",
    "create",
    "scale",
    "logs",
    "pods",
    "po",
    "deploy",
    "rs",
    "svc",
    "nodes",
    "events",
    "ep",
    "endpointslices",
    "ds",
    "jobs",
    "ns",
    "all",
    "-o",
    "yaml",
    "json",
    "wide",
    "name",
    "-n",
    "kube-system",
    "-A",
    "-l",
    "app=web",
    "--replicas=3",
    "--replicas",
    "-1",
    "web",
    "pod/web",
    "--cascade=orphan",
    "--grace-period=0",
    "--as",
    "--as-group=devs",
    "--verb=list",
    "--resource=deployments.apps",
    "--user=jane",
    "--clusterrole=view",
    "--serviceaccount=default:x",
    "--hard=cpu=1",
    "-Lapp",
    "pods.*",
    "--force",
    "-f",
    "-",
    "x.yaml",
    "sim",
    "node",
    "stop",
    "start",
    "worker-1",
    "curl",
    "http://web",
    "settle",
    "sleep",
    "1s",
    "|",
    "head",
    "-1",
    "grep",
    "$(",
    ")",
    "'",
    "\"",
    "--field-selector",
    "spec.nodeName=worker-2",
    "status.phase!=Running",
    "--now",
    "-c",
    "nginx",
    "--previous",
    "é",
    "日本語",
    "pod/ü",
    "--replicas=３",
    "2026-01-01T00:00:0é",
    "=",
    ",",
    "\\\\",
    "run",
    "expose",
    "label",
    "annotate",
    "set",
    "image",
    "taint",
    "cordon",
    "uncordon",
    "drain",
    "replace",
    "deployment",
    "namespace",
    "configmap",
    "secret",
    "generic",
    "serviceaccount",
    "--image=nginx:1.25",
    "--image",
    "nginx=nginx:1.26",
    "*=busybox",
    "--port=80",
    "--port",
    "--since=5s",
    "--all-containers",
    "--prefix",
    "--watch-only",
    "--request-timeout=1s",
    "--max=3",
    "env",
    "cat",
    "/etc/hosts",
    "ls",
    "wget",
    "-qO-",
    "nslookup",
    "save",
    "restore",
    "s.db",
    "garbage",
    "{}",
    "--target-port=8080",
    "--type=NodePort",
    "--name=other",
    "--restart=Never",
    "--labels=app=x",
    "--env=A=B",
    "--command",
    "--",
    "sleep",
    "--from-literal=k=v",
    "--from-literal",
    "--overwrite",
    "--all",
    "app=web",
    "app-",
    "tier=",
    "dedicated=gpu:NoSchedule",
    "dedicated:NoSchedule-",
    "dedicated-",
    "a=b:Bogus",
    "--ignore-daemonsets",
    "--delete-emptydir-data",
    "--disable-eviction",
    "--timeout=5s",
    "--dry-run=client",
    "--dry-run=server",
    "--dry-run=bogus",
    "-r",
    "-it",
    "job",
    "service",
    "clusterip",
    "nodeport",
    "--tcp=80:8080",
    "--node-port=30080",
    // rollout, events, informational verbs and output formats
    "rollout",
    "status",
    "history",
    "undo",
    "restart",
    "pause",
    "resume",
    "deployment/web",
    "ds/kube-proxy",
    "--to-revision=1",
    "--revision=2",
    "--revision=x",
    "--timeout=5s",
    "--watch=false",
    "events",
    "--for",
    "pod/web",
    "--types=Warning",
    "explain",
    "pods.spec.containers",
    "deploy.spec.nope",
    "--recursive",
    "api-resources",
    "--namespaced=false",
    "api-versions",
    "cluster-info",
    "config",
    "view",
    "get-contexts",
    "set-context",
    "--current",
    "use-context",
    "cs",
    "jsonpath={.items[*].metadata.name}",
    "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}",
    "jsonpath={.items[?(@.kind==\"Pod\")].metadata.name}",
    "jsonpath={.items[",
    "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName",
    "custom-columns=X",
    "--sort-by=.metadata.name",
    "--sort-by={.status",
    "-v=6",
    "-v=8",
    // server-side apply
    "--server-side",
    "--force-conflicts",
    "--field-manager=ops",
    "--field-manager=",
    "--show-managed-fields",
    // The home directory's commands and redirections.
    ">",
    ">>",
    "2>&1",
    "2>",
    "<",
    "&>",
    "<<EOF",
    ">x.yaml",
    "/dev/null",
    "ls",
    "-la",
    "rm",
    "-rf",
    "mkdir",
    "-p",
    "cd",
    "..",
    "/",
    "~",
    "touch",
    "pwd",
    "a/b",
    "a/",
    "/tmp/x",
    "https://k8s.io/examples/pods/simple-pod.yaml",
    "https://example.com/x",
    "-R",
];

fn mangle(text: &str, rng: &mut Rng) -> String {
    let mut bytes: Vec<u8> = text.bytes().collect();
    for _ in 0..rng.between(1, 6) {
        if bytes.is_empty() {
            break;
        }
        let i = rng.below(bytes.len() as u64) as usize;
        match rng.below(4) {
            0 => bytes[i] = b" :-[]{}#\\n\\t'\"0aZ"[rng.below(16) as usize],
            1 => {
                bytes.remove(i);
            }
            2 => bytes.truncate(i),
            _ => bytes.insert(i, b"\\n  - :{["[rng.below(8) as usize]),
        }
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if rng.below(4) == 0 {
        // Multi-byte characters where a byte offset might split one.
        let at = text.char_indices().nth(rng.below(text.chars().count().max(1) as u64) as usize).map_or(0, |(i, _)| i);
        text.insert_str(at, ["é", "日本", "ß", "\u{1F600}"][rng.below(4) as usize]);
    }
    text
}

#[test]
fn mangled_manifests_and_random_commands_never_panic() {
    let mut session = Session::new(5);
    fuzz(&mut session);
    let created = session
        .cluster
        .record
        .entries()
        .filter(|e| matches!(&e.what, kubeloop::record::Happening::Request { verb: "create", code: 201, .. }))
        .count();
    assert!(created > 20, "only {created} objects created");
}

/// The same, with Events in an etcd of their own and no record: the components' reports go to
/// the events storage while the commands read, watch and delete Events (reads come too often
/// here for a batch of reports to pile up for the events thread; `tests/events_etcd.rs` has
/// it busy).
#[test]
fn mangled_manifests_and_random_commands_never_panic_with_events_in_an_etcd_of_their_own() {
    let config = ClusterConfig { seed: 5, events_etcd: true, record: false, ..ClusterConfig::default() };
    fuzz(&mut Session::with_config(config));
}

/// 3,000 commands on a three-member etcd and three API servers (`control-planes: 3`), with
/// the commands of issue #31's parts as well: the node shell (`sim ssh`, whose commands then go
/// to the node until `exit`), etcd's members and their faults, custom resources and their
/// operator, admission webhooks, metrics and autoscaling.
#[test]
fn mangled_manifests_and_random_commands_never_panic_on_an_ha_control_plane_and_its_machines() {
    let config = ClusterConfig { seed: 6, control_planes: 3, ..ClusterConfig::default() };
    let mut session = Session::with_config(config);
    fuzz_with(&mut session, HA_STARTS, HA_WORDS, HA_MANIFESTS);
}

/// Manifests of the API's extensions, whole and mangled: a CustomResourceDefinition (its
/// schema is read and enforced), a custom resource, a webhook's Deployment and Service and a
/// configuration that sends it every pod create (failing closed), and an autoscaler.
const HA_MANIFESTS: &[&str] = &[
    include_str!("../src/kubectl/operator_manifests/crd.yaml"),
    include_str!("../src/kubectl/operator_manifests/website.yaml"),
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: policy\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: policy}\n  template:\n    metadata:\n      labels: {app: policy}\n    spec:\n      containers:\n      - name: webhook\n        image: kubeloop/admission-webhook:1.0\n        args: [\"--require-label=team\", \"--add-label=admitted-by=policy\"]\n        ports:\n        - containerPort: 8443\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: policy\nspec:\n  selector: {app: policy}\n  ports:\n  - port: 443\n    targetPort: 8443\n",
    "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: require-team\nwebhooks:\n- name: require-team.policy.example.com\n  admissionReviewVersions: [\"v1\"]\n  sideEffects: None\n  failurePolicy: Fail\n  timeoutSeconds: 5\n  clientConfig:\n    service:\n      namespace: default\n      name: policy\n      path: /validate\n  rules:\n  - apiGroups: [\"\"]\n    apiVersions: [\"v1\"]\n    operations: [\"CREATE\"]\n    resources: [\"pods\"]\n",
    "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n  minReplicas: 1\n  maxReplicas: 4\n  metrics:\n  - type: Resource\n    resource:\n      name: cpu\n      target:\n        type: Utilization\n        averageUtilization: 50\n",
];

/// Command starts for the HA topology, the machines under it and the API's extensions.
const HA_STARTS: &[&str] = &[
    "sim ssh control-plane",
    "sim ssh control-plane2",
    "sim ssh worker-1",
    "sim ssh",
    "exit",
    "systemctl status kubelet",
    "systemctl",
    "systemctl stop kubelet",
    "systemctl start kubelet",
    "systemctl restart containerd",
    "journalctl -u kubelet -n",
    "journalctl",
    "crictl ps",
    "crictl pods",
    "crictl",
    "crictl logs",
    "iptables -t nat -L KUBE-SERVICES",
    "iptables",
    "ls /etc/kubernetes/manifests",
    "cat /etc/kubernetes/manifests/kube-scheduler.yaml",
    "mv /etc/kubernetes/manifests/kube-scheduler.yaml /tmp/",
    "mv /tmp/kube-scheduler.yaml /etc/kubernetes/manifests/",
    "mv /etc/kubernetes/manifests/kube-apiserver.yaml /root/",
    "mv /etc/kubernetes/manifests/etcd.yaml /root/",
    "sed -i s/image/x/ /etc/kubernetes/manifests/kube-scheduler.yaml",
    "rm /etc/kubernetes/manifests/kube-controller-manager.yaml",
    "cat /var/lib/kubelet/config.yaml",
    "etcdctl member list",
    "etcdctl endpoint status --cluster -w table",
    "etcdctl endpoint health --cluster",
    "etcdctl endpoint",
    "etcdctl member",
    "sim etcd stop",
    "sim etcd start",
    "sim etcd partition",
    "sim etcd heal",
    "sim etcd slow",
    "sim etcd fast",
    "sim etcd",
    "sim node stop control-plane",
    "sim node start control-plane",
    "kubectl get lease -n kube-system",
    "kubectl describe lease -n kube-system",
    "kubectl get leases -A -o yaml",
    "kubectl apply -f https://kubeloop.dev/website-operator/crd.yaml",
    "kubectl apply -f https://kubeloop.dev/website-operator/rbac.yaml",
    "kubectl apply -f https://kubeloop.dev/website-operator/operator.yaml",
    "kubectl apply -f https://kubeloop.dev/website-operator/website.yaml",
    "kubectl get websites",
    "kubectl get ws",
    "kubectl describe ws",
    "kubectl explain website",
    "kubectl explain website.spec",
    "kubectl patch ws blog --type=merge -p",
    "kubectl delete crd websites.example.kubeloop.dev",
    "kubectl get crd",
    "kubectl get validatingwebhookconfigurations",
    "kubectl get mutatingwebhookconfigurations -o yaml",
    "kubectl delete validatingwebhookconfiguration",
    "kubectl top nodes",
    "kubectl top pods -A --containers",
    "kubectl top",
    "kubectl autoscale deployment web --cpu-percent=50 --min=1 --max=5",
    "kubectl get hpa",
    "kubectl describe hpa",
    "kubectl get apiservice",
    "kubectl cluster-info",
    "kubectl get --raw /apis/metrics.k8s.io/v1beta1/nodes",
    "kubectl create deployment web --image=nginx",
    "kubectl get pods -A -o wide",
];

/// Words for the HA topology's commands (also drawn for the starts of the other tests).
const HA_WORDS: &[&str] = &[
    "etcd-control-plane",
    "etcd-control-plane2",
    "etcd-control-plane3",
    "control-plane",
    "control-plane2",
    "control-plane3",
    "worker-1",
    "kube-scheduler",
    "kube-controller-manager",
    "kubelet",
    "containerd",
    "-w",
    "table",
    "json",
    "--cluster",
    "-n",
    "3",
    "-f",
    "/etc/kubernetes/manifests",
    "/etc/kubernetes/manifests/etcd.yaml",
    "/tmp/kube-scheduler.yaml",
    "blog",
    "{\"spec\":{\"replicas\":3}}",
    "{\"spec\":{\"replicas\":-1}}",
    "--containers",
    "--sort-by=cpu",
    "-A",
    "website-operator",
    "web",
];

/// 3,000 commands, a third of them manifests (two thirds of those mangled), the rest random
/// command lines.
fn fuzz(session: &mut Session) {
    fuzz_with(session, &[], &[], &[]);
}

/// The starts of the random command lines.
const STARTS: &[&str] = &[
    "kubectl get",
    "kubectl describe",
    "kubectl delete",
    "kubectl scale",
    "kubectl logs",
    "kubectl get pods",
    "kubectl get all",
    "kubectl describe pod",
    "sim node",
    "sim curl",
    "sleep",
    "etcdctl get / --prefix",
    "etcdctl",
    "kubectl patch deploy web -p",
    "kubectl -n",
    "kubectl get pods -o name |",
    "kubectl delete $(kubectl get pods -o name | head -1)",
    "kubectl create deployment web",
    "kubectl create",
    "kubectl create service clusterip web",
    "kubectl create job pi",
    "kubectl run web",
    "kubectl run",
    "kubectl expose deployment web",
    "kubectl expose pod",
    "kubectl label pods",
    "kubectl annotate deploy web",
    "kubectl set image deployment/web",
    "kubectl set",
    "kubectl taint nodes worker-1",
    "kubectl taint",
    "kubectl cordon",
    "kubectl uncordon worker-1",
    "kubectl drain worker-2",
    "kubectl drain",
    "kubectl replace -f -",
    "kubectl rollout status deployment/web --timeout=10s",
    "kubectl rollout",
    "kubectl rollout undo deployment/web",
    "kubectl events",
    "kubectl explain",
    "kubectl config",
    "kubectl get pods -o",
    "kubectl get events --sort-by",
    "kubectl api-resources",
    "kubectl cluster-info",
    "kubectl apply --server-side -f -",
    "kubectl exec web --",
    "kubectl exec",
    "kubectl exec $(kubectl get pods -o name | head -1) --",
    "kubectl exec $(kubectl get pods -o name | head -1) -- sh -c",
    "kubectl exec -it $(kubectl get pods -o name | head -1) -- sh",
    "kubectl attach",
    "kubectl attach -it $(kubectl get pods -o name | head -1)",
    "kubectl run -it --rm shell --image=busybox",
    "exit",
    "cd",
    "export",
    "kubectl logs -f --request-timeout=2s",
    "kubectl logs -l app=web",
    "kubectl get pods -w --request-timeout=2s",
    "kubectl get -w",
    "kubectl top",
    "kubectl edit",
    "kubectl autoscale deployment web",
    "etcdctl put /registry/pods/default/x",
    "etcdctl put",
    "etcdctl del",
    "etcdctl snapshot",
    "kubectl debug node/worker-1 -it --image=busybox",
    "kubectl debug",
    "kubectl create cronjob c --image=busybox --schedule=",
    "kubectl create job j --from=cronjob/c",
    "kubectl auth can-i",
    "kubectl auth can-i --list",
    "kubectl auth whoami",
    "kubectl get pods --as=jane",
    "kubectl create role r --verb=get --resource=pods",
    "kubectl create role",
    "kubectl create rolebinding rb --role=r",
    "kubectl create clusterrolebinding",
    "kubectl create quota q",
    "kubectl create quota q --hard=pods=2",
    "kubectl describe quota",
    "kubectl describe ns",
    "kubectl get pods -L",
    "echo",
    "echo -n x | base64",
    "kubectl get secret -o name | base64 -d",
];

/// `fuzz`, also drawing from `more_starts`, `more_words` and `more_manifests`.
fn fuzz_with(session: &mut Session, more_starts: &[&str], more_words: &[&str], more_manifests: &[&str]) {
    let manifests: Vec<&str> = MANIFESTS.iter().chain(more_manifests).copied().collect();
    // Each of `more_starts` is drawn twice as often as each of the common starts.
    let starts: Vec<&str> = STARTS.iter().chain(more_starts).chain(more_starts).copied().collect();
    let words: Vec<&str> = WORDS.iter().chain(more_words).copied().collect();
    let mut rng = Rng::new(2024);
    let (mut succeeded, mut failed) = (0, 0);
    for round in 0..rounds(3000).max(3000) {
        let command = match round % 6 {
            0 => {
                let base = manifests[1 + rng.below(manifests.len() as u64 - 1) as usize];
                Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), base.to_string())) }
            }
            1 | 2 => {
                let base = manifests[rng.below(manifests.len() as u64) as usize];
                Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), mangle(base, &mut rng))) }
            }
            _ => {
                let start = starts[rng.below(starts.len() as u64) as usize];
                let n = rng.between(0, 5) as usize;
                let rest: Vec<&str> = (0..n).map(|_| words[rng.below(words.len() as u64) as usize]).collect();
                Command::new(&format!("{start} {}", rest.join(" ")))
            }
        };
        // A panic fails the test with the round that caused it.
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.execute(&command)))
            .unwrap_or_else(|_| panic!("round {round} panicked on {command:?}"));
        if out.code == 0 && !out.stdout.is_empty() {
            succeeded += 1
        } else {
            failed += 1
        }
        if round % 50 == 0 {
            session.cluster.advance(kubeloop::sim::Duration::seconds(5));
        }
    }
    // The generator must reach real work, not just error paths.
    assert!(succeeded > 300 && failed > 300, "{succeeded} commands succeeded, {failed} failed");
}

/// How many rounds a fuzz test runs: its default, or more with `KUBELOOP_FUZZ_ROUNDS=N`
/// (`KUBELOOP_FUZZ_ROUNDS=20000 cargo test --release --test no_panic` for a long run).
fn rounds(default: usize) -> usize {
    std::env::var("KUBELOOP_FUZZ_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(default).max(1)
}

/// A manifest built to exhaust the reader rather than to be wrong: alias bombs, merge-key
/// chains, deep nesting (flow and block), huge documents, and the encodings a file may come in
/// (CRLF, a BOM, tabs, bytes that are not UTF-8). Bytes, as the CLI reads them.
fn hostile(rng: &mut Rng) -> Vec<u8> {
    let head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\n";
    let mut text = String::from(head);
    match rng.below(8) {
        0 => {
            // A bomb of `levels` anchors, each `fan` aliases of the one before.
            let (levels, fan) = (rng.between(2, 12) as usize, rng.between(2, 12) as usize);
            text.push_str("a0: &a0 [lol, lol]\n");
            for i in 1..levels {
                let flow = rng.below(2) == 0;
                let alias = format!("*a{}", i - 1);
                if flow {
                    text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![alias; fan].join(", ")));
                } else {
                    text.push_str(&format!("a{i}: &a{i}\n"));
                    for _ in 0..fan {
                        text.push_str(&format!("- {alias}\n"));
                    }
                }
            }
            if rng.below(2) == 0 {
                text.push_str(&format!("data: *a{}\n", levels - 1));
            }
        }
        1 => {
            // Each mapping merges the one before.
            let n = rng.between(10, 3000);
            text.push_str("m0: &m0 {k: v}\n");
            for i in 1..n {
                text.push_str(&format!("m{i}: &m{i}\n  <<: *m{}\n  k{i}: v\n", i - 1));
            }
        }
        2 => {
            let depth = rng.between(50, 20_000) as usize;
            let (open, close) = if rng.below(2) == 0 { ("[", "]") } else { ("{a: ", "}") };
            text.push_str(&format!(
                "data: {}{}\n",
                open.repeat(depth),
                close.repeat(rng.below(depth as u64 + 1) as usize)
            ));
        }
        3 => {
            let depth = rng.between(50, 3000) as usize;
            text.push_str("data:\n");
            for i in 0..depth {
                text.push_str(&" ".repeat(i + 1));
                text.push_str(if rng.below(4) == 0 { "- \n" } else { "k:\n" });
            }
        }
        4 => {
            text.push_str("data:\n");
            text.push_str(&format!("{}x\n", "- ".repeat(rng.between(50, 20_000) as usize)));
        }
        5 => {
            // Huge: one value, many keys, or a long annotation (0.2 to 4 MB).
            let size = rng.between(200_000, 4_000_000) as usize;
            match rng.below(3) {
                0 => text.push_str(&format!("data:\n  big: {}\n", "x".repeat(size))),
                1 => {
                    text.push_str("data:\n");
                    for i in 0..size / 20 {
                        text.push_str(&format!("  key{i}: value{i}\n"));
                    }
                }
                _ => {
                    text = format!(
                        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\n  annotations:\n    a: \"{}\"\n",
                        "y".repeat(size)
                    )
                }
            }
        }
        6 => {
            // Comments, thousands of documents, or a long line of flow items.
            match rng.below(3) {
                0 => text.push_str(&"# a comment\n".repeat(rng.between(1000, 20_000) as usize)),
                1 => text.push_str(&format!("---\n{head}").repeat(rng.between(100, 3000) as usize)),
                _ => text.push_str(&format!(
                    "data: {{{}}}\n",
                    (0..rng.between(100, 50_000)).map(|i| format!("k{i}: v")).collect::<Vec<_>>().join(", ")
                )),
            }
        }
        _ => text.push_str("data:\n  a: \"1\"\n  b: |\n    two\n"),
    }
    let mut bytes = text.into_bytes();
    // The encodings a file may come in, now and then.
    if rng.below(4) == 0 {
        bytes = String::from_utf8_lossy(&bytes).replace('\n', "\r\n").into_bytes();
    }
    if rng.below(6) == 0 {
        bytes.splice(0..0, "\u{feff}".bytes());
    }
    if rng.below(6) == 0 && !bytes.is_empty() {
        let at = rng.below(bytes.len() as u64) as usize;
        bytes.insert(at, b'\t');
    }
    if rng.below(6) == 0 && !bytes.is_empty() {
        let at = rng.below(bytes.len() as u64) as usize;
        let bad: &[&[u8]] = &[b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf"];
        bytes.splice(at..at, bad[rng.below(bad.len() as u64) as usize].iter().copied());
    }
    bytes
}

/// Hostile manifests through every reader a manifest meets (the CLI's bytes, the YAML reader,
/// kubectl and the API server, the editor's highlighting, outline and marks): each is refused
/// or read, none panics, none takes long. `KUBELOOP_FUZZ_ROUNDS` runs more.
#[test]
fn hostile_manifests_are_refused_or_read_in_bounded_time_never_panicking() {
    let mut rng = Rng::new(77);
    let mut session = Session::new(3);
    let (mut refused, mut read) = (0, 0);
    for round in 0..rounds(40) {
        let bytes = hostile(&mut rng);
        let started = std::time::Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let text = match kubeloop::cli::manifest_text(bytes.clone(), "STDIN") {
                Ok(text) => text,
                Err(e) => {
                    assert!(e.starts_with("error: error parsing STDIN: error converting YAML to JSON: yaml: "), "{e}");
                    return None;
                }
            };
            let _ = kubeloop::yaml::documents(&text).count();
            let command = Command { line: "kubectl apply -f -".into(), heredoc: Some(("EOF".into(), text.clone())) };
            let out = session.execute(&command);
            let _ = kubeloop::editor::highlight::highlight(&text);
            let _ = kubeloop::editor::errors::locate(&text, &out.stderr);
            Some(out.code)
        }));
        let took = started.elapsed();
        match outcome {
            Ok(Some(0)) => read += 1,
            Ok(_) => refused += 1,
            Err(_) => panic!(
                "round {round} panicked on {} bytes starting {:?}",
                bytes.len(),
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            ),
        }
        // Debug builds are slow; a hang or a quadratic pass is slower still.
        assert!(took < std::time::Duration::from_secs(20), "round {round} took {took:?}");
        if round % 10 == 0 {
            // Keep the store small: what was made goes again.
            session.execute(&Command::new("kubectl delete configmap h --ignore-not-found"));
        }
    }
    eprintln!("hostile manifests: {read} read, {refused} refused");
    assert!(refused > 0);
}

/// Objects no validation would let in, written straight to etcd: every component that
/// watches them must cope (skip them, report them), never panic.
#[test]
fn invalid_objects_written_behind_the_api_servers_back_never_panic() {
    let objects = [
        (
            "/registry/pods/default/empty",
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"empty"},"spec":{"containers":[]}}"#,
        ),
        (
            "/registry/pods/default/bound",
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bound"},"spec":{"nodeName":"nowhere","containers":[{"name":"c","image":""}]}}"#,
        ),
        (
            "/registry/pods/default/big",
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1000"}}}]}}"#,
        ),
        (
            "/registry/deployments/default/d",
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":-3,"template":{"spec":{"containers":[]}}}}"#,
        ),
        (
            "/registry/deployments/default/e",
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"e"},"spec":{"replicas":2,"selector":{},"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}"#,
        ),
        (
            "/registry/replicasets/default/r",
            r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}"#,
        ),
        (
            "/registry/daemonsets/default/ds",
            r#"{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{"template":{"spec":{"containers":[]}}}}"#,
        ),
        (
            "/registry/jobs/default/j",
            r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"completions":-1,"parallelism":-1,"template":{"spec":{"containers":[]}}}}"#,
        ),
        (
            "/registry/services/default/s",
            r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"bogus","ports":[{"port":-1}],"selector":{"app":"web"}}}"#,
        ),
        ("/registry/nodes/ghost", r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"ghost"}}"#),
        (
            "/registry/namespaces/default",
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"},"status":{"phase":"Terminating"}}"#,
        ),
        ("/registry/leases/kube-node-lease/worker-1", "garbage"),
        ("/registry/pods/default/garbage", "{not json"),
    ];
    let mut session = Session::new(9);
    for line in [
        "kubectl create deployment web --image=nginx --replicas=2",
        "kubectl expose deployment web --port=80",
        "sim settle",
    ] {
        session.execute(&Command::new(line));
    }
    for (key, value) in objects {
        let line = format!("etcdctl put {key} {}", kubeloop::shell::shell_quote(value));
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.execute(&Command::new(&line))))
            .unwrap_or_else(|_| panic!("etcdctl put {key} panicked"));
        assert_eq!(out.stdout, "OK\n", "{key}: {}", out.stderr);
    }
    let run = |session: &mut Session, line: &str| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.execute(&Command::new(line))))
            .unwrap_or_else(|_| panic!("{line} panicked after invalid writes"))
    };
    run(&mut session, "sleep 3m");
    for line in [
        "kubectl get all",
        "kubectl describe pods",
        "kubectl get nodes",
        "kubectl get events -A",
        "etcdctl del /registry/pods/default/garbage",
        "kubectl get pods -o wide",
        "kubectl describe deployment d",
        "kubectl logs empty",
        "kubectl logs bound --all-containers -f",
        "kubectl exec empty -- ls",
        "kubectl exec bound -- env",
        "kubectl logs -l app=web --all-containers --prefix",
        "kubectl get pods -w --request-timeout=5s",
        "etcdctl snapshot save s.db",
        "etcdctl snapshot restore s.db",
        "etcdctl watch /registry --prefix",
    ] {
        run(&mut session, line);
    }
    run(&mut session, "sleep 1m");
}
