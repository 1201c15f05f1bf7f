//! Tab completion for the terminal, as kubectl's shell completion offers it: programs, kubectl
//! verbs, resource types, object names in the namespace (`-n`), `kind/name` forms, flags, and
//! the `sim` and `etcdctl` subcommands, and file names (after `-f`, a redirection, `cat`, `rm`…)
//! from the home directory. It only looks, never changes anything.

use crate::api::Kind;
use crate::shell::Session;
use crate::util::sort::StableSort;

/// What Tab does to a line: the line extended by the candidates' common prefix, and the
/// candidates themselves (more than one: the terminal lists them).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Completion {
    pub line: String,
    pub candidates: Vec<String>,
}

const PROGRAMS: &[&str] = &[
    "kubectl", "etcdctl", "sim", "sleep", "clear", "echo", "printf", "cat", "ls", "rm", "mkdir", "touch", "pwd", "cd",
];
const SIM: &[&str] = &["settle", "time", "node", "pod", "image", "scheduler", "curl", "export", "ssh", "help"];
const SIM_NODE: &[&str] = &["stop", "start", "add", "remove", "partition", "heal"];
const SIM_POD: &[&str] = &["crash"];
const SIM_ETCD: &[&str] = &["stop", "start", "partition", "heal", "slow", "fast"];
const ETCDCTL: &[&str] = &["get", "put", "del", "watch", "member", "endpoint", "snapshot", "version"];
const ROLLOUT: &[&str] = &["history", "pause", "restart", "resume", "status", "undo"];
const CREATE: &[&str] = &[
    "clusterrole",
    "clusterrolebinding",
    "configmap",
    "cronjob",
    "deployment",
    "job",
    "namespace",
    "quota",
    "role",
    "rolebinding",
    "secret",
    "service",
    "serviceaccount",
];
const AUTH: &[&str] = &["can-i", "whoami"];
const CONFIG: &[&str] = &["current-context", "get-contexts", "set-context", "use-context", "view"];

/// Verbs whose next word is a resource type (then names of that type).
const TYPED_VERBS: &[&str] = &["get", "describe", "delete", "edit", "label", "annotate", "scale", "patch", "explain"];
/// Verbs whose arguments are pods, or nodes.
const POD_VERBS: &[&str] = &["logs", "exec", "attach"];
const NODE_VERBS: &[&str] = &["cordon", "uncordon", "drain"];

pub fn complete(session: &Session, line: &str) -> Completion {
    let (head, word) = match line.rfind(char::is_whitespace) {
        Some(i) => (&line[..=i], &line[i + 1..]),
        None => ("", line),
    };
    let before: Vec<&str> = head.split_whitespace().collect();
    let options = candidates(session, &before, word);
    let mut matching: Vec<String> = options.into_iter().filter(|c| c.starts_with(word)).collect();
    matching.stable_sort();
    matching.dedup();
    let completed = match matching.as_slice() {
        [] => line.to_string(),
        [only] if only.ends_with('/') || only.ends_with('=') => format!("{head}{only}"),
        [only] => format!("{head}{only} "),
        many => format!("{head}{}", common_prefix(many)),
    };
    let candidates = if matching.len() > 1 { matching } else { Vec::new() };
    Completion { line: completed, candidates }
}

fn common_prefix(words: &[String]) -> String {
    let first = &words[0];
    let mut end = first.len();
    for w in &words[1..] {
        end = end.min(first.bytes().zip(w.bytes()).take_while(|(a, b)| a == b).count());
    }
    while !first.is_char_boundary(end) {
        end -= 1;
    }
    first[..end].to_string()
}

/// The words that could stand where the cursor is, after `before`.
fn candidates(session: &Session, before: &[&str], word: &str) -> Vec<String> {
    let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    if let Some(shell) = session.node_shell() {
        return crate::shell::node::completion::candidates(&session.cluster, shell, before, word);
    }
    let Some((program, rest)) = before.split_first() else { return owned(PROGRAMS) };
    // A file after a redirection or kubectl's `-f`.
    if matches!(before.last().copied(), Some(">" | ">>" | "<" | "-f" | "--filename")) {
        if word.starts_with("http") {
            return crate::kubectl::remote::example_urls();
        }
        return session.path_candidates(word, false);
    }
    match *program {
        "cat" | "rm" | "ls" | "touch" => session.path_candidates(word, false),
        "cd" | "mkdir" => session.path_candidates(word, true),
        "kubectl" | "k" => kubectl(session, rest, word),
        "sim" => match rest {
            [] => owned(SIM),
            ["node"] => owned(SIM_NODE),
            ["pod"] => owned(SIM_POD),
            ["etcd"] => owned(SIM_ETCD),
            ["etcd", _] => session.cluster.inspect().etcd().raft().map_or_else(
                || vec!["control-plane".to_string()],
                |g| g.members.iter().map(|m| m.name.clone()).collect(),
            ),
            ["node", _] | ["ssh"] => names(session, Kind::Node, ""),
            ["pod", _] => names(session, Kind::Pod, "default"),
            _ => Vec::new(),
        },
        "etcdctl" => match rest {
            [] => owned(ETCDCTL),
            ["get" | "del", ..] if word.starts_with('/') => keys(session, word),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn kubectl(session: &Session, rest: &[&str], word: &str) -> Vec<String> {
    if word.starts_with('-') {
        return crate::kubectl::args::flag_names().iter().map(|f| format!("--{f}")).collect();
    }
    // The words so far, read as kubectl reads them (flags and their values set aside).
    let words: Vec<String> = rest.iter().map(|w| w.to_string()).collect();
    let Some((verb, rest)) = crate::kubectl::args::split_verb(&words) else {
        return crate::kubectl::verb_names().iter().map(|v| v.to_string()).collect();
    };
    let Ok(parsed) = crate::kubectl::args::Args::parse(&verb, &rest) else { return Vec::new() };
    let namespace = parsed.get("namespace").unwrap_or("default").to_string();
    let args: Vec<&str> = parsed.positionals.iter().map(String::as_str).collect();
    // What discovery lists, custom resources included (kubectl's completion asks the server).
    let _discovery = crate::api::custom::Discovery::install(session.cluster.served_custom());
    let served = crate::api::custom::Discovery::served();
    let custom = served.iter().filter(|s| s.preferred).map(|s| s.kind.info().resource.to_string());
    let types = || Kind::ALL.iter().map(|k| k.info().resource.to_string()).chain(custom.clone()).collect::<Vec<_>>();
    match (verb.as_str(), args.as_slice()) {
        ("rollout", []) => ROLLOUT.iter().map(|s| s.to_string()).collect(),
        ("rollout", [_]) => kind_slash_names(session, word, &namespace, &[Kind::Deployment, Kind::DaemonSet]),
        ("create", []) => CREATE.iter().map(|s| s.to_string()).collect(),
        ("config", []) => CONFIG.iter().map(|s| s.to_string()).collect(),
        ("auth", []) => AUTH.iter().map(|s| s.to_string()).collect(),
        ("set", []) => vec!["image".into()],
        ("set", ["image"]) => kind_slash_names(session, word, &namespace, &[Kind::Deployment, Kind::DaemonSet]),
        ("expose", []) => vec!["deployment".into(), "pod".into(), "replicaset".into(), "service".into()],
        ("expose", [t]) => Kind::from_resource_arg(t).map(|k| names(session, k, &namespace)).unwrap_or_default(),
        ("taint", []) => vec!["nodes".into()],
        ("taint", [_]) => names(session, Kind::Node, ""),
        (v, []) if POD_VERBS.contains(&v) => names(session, Kind::Pod, &namespace),
        (v, []) if NODE_VERBS.contains(&v) => names(session, Kind::Node, ""),
        (v, []) if TYPED_VERBS.contains(&v) => {
            if word.contains('/') {
                kind_slash_names(session, word, &namespace, Kind::ALL)
            } else {
                types()
            }
        }
        (v, [t, ..]) if TYPED_VERBS.contains(&v) && !t.contains('/') && !t.contains(',') => {
            Kind::from_resource_arg(t).map(|k| names(session, k, &namespace)).unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

fn names(session: &Session, kind: Kind, namespace: &str) -> Vec<String> {
    let ns = if kind.info().namespaced { namespace } else { "" };
    session.cluster.objects(kind, ns).iter().map(|o| o.name().to_string()).collect()
}

/// `deployment/web`-style candidates: the kind part as typed (or each kind's singular), then
/// the names of that kind.
fn kind_slash_names(session: &Session, word: &str, namespace: &str, kinds: &[Kind]) -> Vec<String> {
    match word.split_once('/') {
        Some((typed, _)) => match Kind::from_resource_arg(typed) {
            Some(kind) => names(session, kind, namespace).into_iter().map(|n| format!("{typed}/{n}")).collect(),
            None => Vec::new(),
        },
        None => kinds.iter().map(|k| format!("{}/", k.info().singular)).collect(),
    }
}

/// etcd keys under what has been typed, one path segment deeper at a time.
fn keys(session: &Session, typed: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let dir_end = typed.rfind('/').map_or(0, |i| i + 1);
    for (key, _) in session.cluster.inspect().etcd().range(&typed[..dir_end]) {
        let tail = &key[dir_end..];
        let next = match tail.find('/') {
            Some(i) => format!("{}{}", &key[..dir_end], &tail[..=i]),
            None => key.to_string(),
        };
        if out.last() != Some(&next) {
            out.push(next);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session::new(1)
    }

    #[test]
    fn a_unique_verb_completes_with_a_trailing_space() {
        let c = complete(&session(), "kubectl desc");
        assert_eq!(c.line, "kubectl describe ");
        assert!(c.candidates.is_empty());
    }

    #[test]
    fn several_matches_extend_to_their_common_prefix_and_are_listed() {
        assert_eq!(complete(&session(), "kubectl get deploy").line, "kubectl get deployments ");
        let c = complete(&session(), "kubectl get n");
        assert_eq!(c.line, "kubectl get n");
        assert_eq!(c.candidates, vec!["namespaces", "networkpolicies", "nodes"]);
    }

    #[test]
    fn object_names_come_from_the_namespace_given_with_dash_n() {
        let c = complete(&session(), "kubectl -n kube-system get pods etcd");
        assert_eq!(c.line, "kubectl -n kube-system get pods etcd-control-plane ");
        let c = complete(&session(), "kubectl get pods etcd");
        assert_eq!(c.line, "kubectl get pods etcd", "nothing by that name in default");
    }

    #[test]
    fn node_verbs_and_sim_complete_node_names() {
        assert_eq!(complete(&session(), "kubectl cordon worker-").candidates, vec!["worker-1", "worker-2", "worker-3"]);
        assert_eq!(complete(&session(), "sim node st").candidates, vec!["start", "stop"]);
        assert_eq!(complete(&session(), "sim node stop worker-2").line, "sim node stop worker-2 ");
    }

    #[test]
    fn etcd_keys_complete_one_segment_at_a_time() {
        let c = complete(&session(), "etcdctl get /registry/namesp");
        assert_eq!(c.line, "etcdctl get /registry/namespaces/");
    }

    #[test]
    fn create_and_auth_subcommands_complete() {
        assert_eq!(complete(&session(), "kubectl create cron").line, "kubectl create cronjob ");
        assert_eq!(complete(&session(), "kubectl create role").candidates, vec!["role", "rolebinding"]);
        assert_eq!(complete(&session(), "kubectl auth c").line, "kubectl auth can-i ");
    }

    #[test]
    fn file_names_complete_after_dash_f_and_for_the_file_commands() {
        let mut s = session();
        for line in ["mkdir k8s", "echo a > deployment.yaml", "echo b > k8s/db.yaml"] {
            s.execute(&crate::shell::Command::new(line));
        }
        assert_eq!(complete(&s, "kubectl apply -f dep").line, "kubectl apply -f deployment.yaml ");
        assert_eq!(complete(&s, "cat k").line, "cat k8s/", "a directory completes with its slash");
        assert_eq!(complete(&s, "rm k8s/d").line, "rm k8s/db.yaml ");
        assert_eq!(complete(&s, "cd ").line, "cd k8s/");
        assert_eq!(
            complete(&s, "kubectl apply -f https://k8s.io/examples/pods/s").line,
            "kubectl apply -f https://k8s.io/examples/pods/simple-pod.yaml "
        );
        assert_eq!(complete(&s, "mkd").line, "mkdir ");
    }

    #[test]
    fn a_node_shell_completes_its_own_programs_units_and_paths() {
        let mut s = session();
        assert_eq!(complete(&s, "sim ssh control").line, "sim ssh control-plane ");
        s.execute(&crate::shell::Command::new("sim ssh control-plane"));
        assert_eq!(complete(&s, "systemctl st").candidates, vec!["start", "status", "stop"]);
        assert_eq!(complete(&s, "systemctl status kub").line, "systemctl status kubelet ");
        assert_eq!(complete(&s, "ls /etc/kubernetes/ma").line, "ls /etc/kubernetes/manifests/");
        assert_eq!(
            complete(&s, "cat /etc/kubernetes/manifests/kube-s").line,
            "cat /etc/kubernetes/manifests/kube-scheduler.yaml "
        );
        assert_eq!(complete(&s, "iptables -t nat -L KUBE-S").line, "iptables -t nat -L KUBE-SERVICES ");
    }

    #[test]
    fn flags_and_programs_complete_too() {
        assert_eq!(complete(&session(), "kube").line, "kubectl ");
        assert_eq!(complete(&session(), "kubectl get pods --show-l").line, "kubectl get pods --show-labels ");
    }
}
