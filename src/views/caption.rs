//! One plain sentence per record entry, for the page's teaching pace: who acted (in the words a
//! course uses: "the ReplicaSet controller", "the kubelet on worker-2"), what it saw and what it
//! did. The words come from the entry and, where the entry only names an object, from the
//! version of that object etcd stored at the entry's revision (a binding's node, a pod's new
//! status, an Event's message).

use crate::api::{Kind, Object};
use crate::cluster::{Cluster, Role};
use crate::etcd::{Change, ChangeKind, Etcd};
use crate::record::{ComponentId, Entry, Happening, WatchEventType};
use std::sync::Arc;

/// A component in a course's words, lower-case as it reads inside a sentence: "the scheduler",
/// "the ReplicaSet controller", "the kubelet on worker-2", "kube-proxy on worker-1",
/// "the API server", "you (kubectl)".
pub fn who(cluster: &Cluster, id: ComponentId) -> String {
    match cluster.component_role(id) {
        Some(Role::User) => "you (kubectl)".into(),
        Some(Role::ApiServer) => "the API server".into(),
        Some(Role::Scheduler) => "the scheduler".into(),
        Some(Role::Controller { name }) => controller_words(name),
        Some(Role::Kubelet { node }) => format!("the kubelet on {node}"),
        Some(Role::KubeProxy { node }) => format!("kube-proxy on {node}"),
        Some(Role::Cni { node }) => format!("calico-node on {node}"),
        Some(Role::CoreDns) => "CoreDNS".into(),
        Some(Role::AddOn { name }) => name.clone(),
        None => cluster.component_name(id).to_string(),
    }
}

fn controller_words(name: &str) -> String {
    let known = match name {
        "deployment-controller" => "the Deployment controller",
        "replicaset-controller" => "the ReplicaSet controller",
        "statefulset-controller" => "the StatefulSet controller",
        "daemonset-controller" => "the DaemonSet controller",
        "job-controller" => "the Job controller",
        "cronjob-controller" => "the CronJob controller",
        "endpoints-controller" => "the Endpoints controller",
        "endpointslice-controller" => "the EndpointSlice controller",
        "garbage-collector" => "the garbage collector",
        "node-lifecycle-controller" => "the node lifecycle controller",
        "taint-eviction-controller" => "the taint eviction controller",
        "namespace-controller" => "the Namespace controller",
        "serviceaccount-controller" => "the ServiceAccount controller",
        _ => "",
    };
    if known.is_empty() {
        format!("the {} controller", name.trim_end_matches("-controller").replace('-', " "))
    } else {
        known.to_string()
    }
}

/// The subject of a sentence, which knows whether it is "you" (and so takes "ask", not "asks").
struct Subject {
    words: String,
    you: bool,
}

impl Subject {
    fn of(cluster: &Cluster, id: ComponentId) -> Self {
        Subject { words: who(cluster, id), you: matches!(cluster.component_role(id), Some(Role::User)) }
    }

    /// The subject opening a sentence, then `verb` agreeing with it.
    fn says(&self, verb: &str) -> String {
        format!("{} {}", capital(&self.words), self.verb(verb))
    }

    fn verb(&self, verb: &str) -> String {
        if !self.you {
            return verb.to_string();
        }
        match verb {
            "is" => "are".into(),
            "has" => "have".into(),
            "does" => "do".into(),
            v => v.strip_suffix('s').unwrap_or(v).to_string(),
        }
    }
}

/// Upper-cases the first letter, except for names that are always written in lower case.
fn capital(text: &str) -> String {
    if ["kube-", "containerd", "etcd"].iter().any(|name| text.starts_with(name)) {
        return text.to_string();
    }
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Ends a sentence with a full stop, unless it already ends with one (or `?`/`!`).
fn full_stop(mut text: String) -> String {
    let trimmed = text.trim_end().len();
    text.truncate(trimmed);
    if !text.ends_with(['.', '?', '!']) {
        text.push('.');
    }
    text
}

/// Text quoted inside a sentence: its own full stop dropped.
fn inner(text: &str) -> &str {
    text.trim().trim_end_matches('.')
}

/// `default/web` → `web`: the default namespace goes unsaid.
fn short_key(key: &str) -> &str {
    key.strip_prefix("default/").unwrap_or(key)
}

/// The word for a kind inside a sentence: "pod", "node", "Deployment".
fn kind_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Pod => "pod",
        Kind::Node => "node",
        Kind::Namespace => "namespace",
        k => k.info().kind,
    }
}

/// The plural inside a sentence: "pods", "ReplicaSets", "Endpoints", "Ingresses".
fn kind_plural(kind: Kind) -> String {
    let word = kind_word(kind);
    if word == "Endpoints" {
        word.to_string()
    } else if word.ends_with('s') || word.ends_with("ch") {
        format!("{word}es")
    } else if let Some(stem) = word.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{word}s")
    }
}

/// An object inside a sentence: "pod web-x", "Deployment kube-system/coredns".
fn object_words(kind: Kind, namespace: &str, name: &str) -> String {
    if namespace.is_empty() || namespace == "default" || !kind.info().namespaced {
        format!("{} {name}", kind_word(kind))
    } else {
        format!("{} {namespace}/{name}", kind_word(kind))
    }
}

/// The subresource a request's path ends with (`status`, `binding`, `eviction`, `scale`).
pub(crate) fn subresource(path: &str) -> Option<&str> {
    let path = path.split('?').next().unwrap_or(path);
    let last = path.rsplit('/').next()?;
    matches!(last, "status" | "binding" | "eviction" | "scale").then_some(last)
}

fn is_write(verb: &str) -> bool {
    matches!(verb, "create" | "update" | "patch" | "delete")
}

/// The change a stored request made in etcd: the write at the entry's revision, under the
/// request's key. None for refusals, reads, dry runs, writes to a separate events store, and
/// writes whose history has been compacted away.
pub(crate) fn stored_change<'a>(cluster: &'a Cluster, entry: &Entry) -> Option<&'a Change> {
    let Happening::Request { verb, kind, namespace, name, code, failed_at, path, .. } = &entry.what else {
        return None;
    };
    if !is_write(verb) || failed_at.is_some() || *code == 0 || *code >= 400 || path.contains("dryRun=") {
        return None;
    }
    let ns = if kind.info().namespaced { namespace.as_str() } else { "" };
    let key = Etcd::key_for(kind.info().resource, ns, name);
    let etcd = cluster.inspect().etcd();
    let mut changes = etcd.changes_since(entry.revision - 1).ok()?;
    changes.find(|c| c.revision == entry.revision).filter(|c| *c.key == *key)
}

/// The object a request wrote, as stored; for Events kept in a store of their own, the Event as
/// it stands now.
fn written(cluster: &Cluster, entry: &Entry) -> Option<Arc<Object>> {
    if let Some(change) = stored_change(cluster, entry) {
        return Some(change.value.clone());
    }
    match &entry.what {
        Happening::Request { kind: Kind::Event, namespace, name, code, .. } if *code > 0 && *code < 400 => {
            cluster.inspect().get(Kind::Event, namespace, name)
        }
        _ => None,
    }
}

/// What a kubelet's Event says it had its container runtime do, for the sequence's
/// kubelet ↔ containerd arrows: a pull, a container created, started or stopped, a probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeStep {
    /// The node whose kubelet and runtime these are.
    pub node: String,
    /// True when the runtime answers the kubelet (an image pulled, a pull that failed).
    pub answer: bool,
    /// Short, for the arrow: "pull nginx:1.25", "start container nginx".
    pub label: String,
    pub caption: String,
    /// The Event's reason: `Pulling`, `Pulled`, `Created`, `Started`, `Killing`, …
    pub reason: String,
}

/// The runtime work behind a kubelet's Event write, if it reports some.
pub fn runtime_step(cluster: &Cluster, entry: &Entry) -> Option<RuntimeStep> {
    let Some(Role::Kubelet { node }) = cluster.component_role(entry.actor) else { return None };
    let Happening::Request { kind: Kind::Event, verb: "create" | "update" | "patch", .. } = &entry.what else {
        return None;
    };
    let object = written(cluster, entry)?;
    let event = object.as_event()?;
    let involved = &event.involved_object;
    let pod = object_words(Kind::Pod, &involved.namespace, &involved.name);
    let container = container_of(&involved.field_path);
    let image = quoted(&event.message);
    let kubelet = format!("The kubelet on {node}");
    let runtime = format!("containerd on {node}");
    let (answer, label, caption) = match event.reason.as_str() {
        "Pulling" => (
            false,
            format!("pull {}", image.unwrap_or("image")),
            format!("{kubelet} asks {runtime} to pull image {} for {pod}.", image.unwrap_or("?")),
        ),
        "Pulled" if event.message.contains("already present") => (
            true,
            "image present".to_string(),
            format!("{runtime} already has image {}, so {pod} needs no pull.", image.unwrap_or("?")),
        ),
        "Pulled" => {
            // "Successfully pulled image "x" in 4.2s (4.2s including waiting). …"
            let took = event.message.split_once("\" in ").and_then(|(_, r)| r.split([' ', '(']).next());
            let took = took.map_or(String::new(), |t| format!(" in {t}"));
            (
                true,
                "image pulled".to_string(),
                format!("{runtime} has pulled image {} for {pod}{took}.", image.unwrap_or("?")),
            )
        }
        "Created" => (
            false,
            format!("create container {container}"),
            format!("{kubelet} has {runtime} create container {container} of {pod}."),
        ),
        "Started" => (
            false,
            format!("start container {container}"),
            format!("{kubelet} has {runtime} start container {container} of {pod}: the container is running."),
        ),
        "Killing" => (
            false,
            format!("stop container {container}"),
            format!("{kubelet} asks {runtime} to stop container {container} of {pod}."),
        ),
        "Unhealthy" => (
            false,
            format!("probe {container}: failed"),
            format!("{kubelet} probed container {container} of {pod} and it failed: {}.", inner(&event.message)),
        ),
        "Failed" if event.message.starts_with("Failed to pull") => (
            true,
            "pull failed".to_string(),
            format!("{runtime} could not pull the image for {pod}: {}.", inner(&event.message)),
        ),
        _ => return None,
    };
    Some(RuntimeStep { node: node.clone(), answer, label, caption, reason: event.reason.clone() })
}

/// `spec.containers{nginx}` → `nginx`.
fn container_of(field_path: &str) -> &str {
    field_path.split_once('{').and_then(|(_, rest)| rest.strip_suffix('}')).unwrap_or("the container")
}

/// The first double-quoted text: `Pulling image "nginx:1.25"` → `nginx:1.25`.
fn quoted(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once('"')?;
    rest.split_once('"').map(|(q, _)| q)
}

/// One sentence a student can read aloud: who, what it saw, what it did.
pub fn caption(cluster: &Cluster, entry: &Entry) -> String {
    let text = match &entry.what {
        Happening::Request { .. } => request(cluster, entry),
        Happening::Notify { to, event, kind, namespace, name } => {
            let object = object_words(*kind, namespace, name);
            format!(
                "The API server tells {}, through {}, that {}",
                who(cluster, *to),
                watch_words(cluster, *to, *kind),
                news(cluster, entry, *event, &object)
            )
        }
        Happening::Decision { text } => decision(cluster, entry.actor, text),
        Happening::KubeletCall { to, method, path } => {
            format!("The API server calls {} for the client: {method} {path}", who(cluster, *to))
        }
    };
    full_stop(text)
}

/// A write's notifications, fanned out to several watchers at once, as one sentence.
pub fn caption_wave(cluster: &Cluster, entries: &[&Entry]) -> String {
    let notes: Vec<(&Entry, ComponentId)> = entries
        .iter()
        .filter_map(|e| match &e.what {
            Happening::Notify { to, .. } => Some((*e, *to)),
            _ => None,
        })
        .collect();
    let first = match notes.as_slice() {
        [] => return entries.first().map(|e| caption(cluster, e)).unwrap_or_default(),
        [(one, _)] => return caption(cluster, one),
        [(first, _), ..] => *first,
    };
    let Happening::Notify { event, kind, namespace, name, .. } = &first.what else { return caption(cluster, first) };
    let names: Vec<String> = notes.iter().map(|(_, to)| who(cluster, *to)).collect();
    let listed = match names.as_slice() {
        [a, b] => format!("{a} and {b}"),
        [a, b, c] => format!("{a}, {b} and {c}"),
        [a, b, rest @ ..] => format!("{a}, {b} and {} others", rest.len()),
        _ => names.join(""),
    };
    let object = object_words(*kind, namespace, name);
    full_stop(format!(
        "The API server tells {listed}, through their watches, that {}",
        news(cluster, first, *event, &object)
    ))
}

/// Which watch: "its watch on ReplicaSets", "its watch on the pods of worker-2".
fn watch_words(cluster: &Cluster, to: ComponentId, kind: Kind) -> String {
    match (cluster.component_role(to), kind) {
        (Some(Role::Kubelet { node }), Kind::Pod) => format!("its watch on the pods of {node}"),
        (Some(Role::User), _) => format!("your watch on {}", kind_plural(kind)),
        _ => format!("its watch on {}", kind_plural(kind)),
    }
}

/// What the notification says happened to `object`: added, bound to a node, now Running…
fn news(cluster: &Cluster, entry: &Entry, event: WatchEventType, object: &str) -> String {
    match event {
        // A kubelet's watch selects the pods bound to its node: a pod enters it when bound.
        WatchEventType::Added => match bound_to(cluster, entry) {
            Some(node) => format!("{object} is now bound to {node}"),
            None => format!("{object} was added"),
        },
        WatchEventType::Deleted => format!("{object} was deleted"),
        WatchEventType::Modified => {
            let cause = entry.cause.and_then(|c| cluster.record.get(c));
            let Some(cause) = cause else { return format!("{object} changed") };
            let Happening::Request { path, .. } = &cause.what else { return format!("{object} changed") };
            let change = stored_change(cluster, cause);
            match subresource(path) {
                Some("binding") => match bound_to(cluster, entry) {
                    Some(node) => format!("{object} is now bound to {node}"),
                    None => format!("{object} is now bound to a node"),
                },
                Some("status") => match change.and_then(|c| c.value.as_pod()) {
                    Some(pod) => {
                        let status = crate::kubectl::printers::summarize_pod(pod).status;
                        format!("{object} is now {status}")
                    }
                    None => format!("the status of {object} changed"),
                },
                _ => match change {
                    Some(c) if c.value.meta().deletion_timestamp.is_some() => format!("{object} is being deleted"),
                    _ => format!("{object} changed"),
                },
            }
        }
    }
}

/// The node a notification's cause, a binding, bound its pod to.
fn bound_to(cluster: &Cluster, entry: &Entry) -> Option<String> {
    let cause = cluster.record.get(entry.cause?)?;
    let Happening::Request { path, .. } = &cause.what else { return None };
    if subresource(path) != Some("binding") {
        return None;
    }
    let node = stored_change(cluster, cause)?.value.as_pod()?.spec.node_name.clone();
    (!node.is_empty()).then_some(node)
}

fn request(cluster: &Cluster, entry: &Entry) -> String {
    let Happening::Request { method, verb, path, kind, namespace, name, code, failed_at, message } = &entry.what else {
        return String::new();
    };
    let me = Subject::of(cluster, entry.actor);
    let object = object_words(*kind, namespace, name);
    let written = written(cluster, entry);
    let sub = subresource(path);
    let kubelet_node = match cluster.component_role(entry.actor) {
        Some(Role::Kubelet { node }) => Some(node.as_str()),
        _ => None,
    };
    // What was asked, as "<Subject> <verb> …".
    let asked = match (*verb, sub, *kind) {
        ("get", _, _) => format!("{} the API server for {object}", me.says("asks")),
        ("list", _, _) => {
            let within = if namespace.is_empty() { String::new() } else { format!(" in namespace {namespace}") };
            format!("{} {}{within} from the API server", me.says("lists"), kind_plural(*kind))
        }
        ("watch", _, _) => format!("{} a watch on {} at the API server", me.says("opens"), kind_plural(*kind)),
        ("create", Some("binding"), _) => {
            let node = written.as_ref().and_then(|o| o.as_pod().map(|p| p.spec.node_name.clone()));
            let node = node.filter(|n| !n.is_empty()).or_else(|| picked_node(cluster, entry));
            match node {
                Some(node) => format!("{} the API server to bind {object} to {node}", me.says("asks")),
                None => format!("{} the API server to bind {object} to a node", me.says("asks")),
            }
        }
        ("create", Some("eviction"), _) => format!("{} the API server to evict {object}", me.says("asks")),
        ("create", _, Kind::Event) | ("update" | "patch", _, Kind::Event) => {
            // A kubelet's Event tells what its runtime did: say that, and that it is recorded.
            if let Some(step) = runtime_step(cluster, entry) {
                return format!("{}; the kubelet records it as a {} Event", inner(&step.caption), step.reason);
            }
            return event_written(&me, verb, written.as_deref(), name, *code);
        }
        ("update" | "patch", _, Kind::Lease) if kubelet_node.is_some() => {
            format!("{} its node's Lease {name}, the heartbeat that says the kubelet is alive", me.says("renews"))
        }
        ("update" | "patch", Some("status"), Kind::Node) if kubelet_node.is_some() => {
            let ready = written.as_ref().and_then(|o| o.as_node()?.condition("Ready").map(|c| c.status.clone()));
            match ready.as_deref() {
                Some("True") => format!("{} that {object} is Ready (its status heartbeat)", me.says("reports")),
                Some(other) => format!("{} {object}'s status (Ready: {other})", me.says("reports")),
                None => format!("{} {object}'s status", me.says("reports")),
            }
        }
        ("update" | "patch", Some("status"), Kind::Pod) => match written.as_ref().and_then(|o| o.as_pod()) {
            Some(pod) => {
                let s = crate::kubectl::printers::summarize_pod(pod);
                format!("{} that {object} is {} ({}/{} ready)", me.says("reports"), s.status, s.ready, s.total)
            }
            None => format!("{} the status of {object}", me.says("reports")),
        },
        ("update" | "patch", Some("status"), _) => match status_summary(written.as_deref()) {
            Some(summary) => format!("{} in {object}'s status that {summary}", me.says("records")),
            None => format!("{} the status of {object}", me.says("updates")),
        },
        ("update" | "patch", Some("scale"), _) => {
            format!("{} the API server to scale {object}", me.says("asks"))
        }
        ("update" | "patch", None, Kind::Node) if cordoning(cluster, entry).is_some() => {
            match cordoning(cluster, entry) {
                Some(true) => {
                    format!("{} the API server to cordon {object}, marking it unschedulable", me.says("asks"))
                }
                _ => format!(
                    "{} the API server to uncordon {object}, so pods can be scheduled there again",
                    me.says("asks")
                ),
            }
        }
        ("update", _, _) => format!("{} the API server to update {object}", me.says("asks")),
        ("patch", _, _) if path.contains("force=") => {
            format!("{} the API server to apply {object} (server-side apply)", me.says("asks"))
        }
        ("patch", _, _) => format!("{} the API server to patch {object}", me.says("asks")),
        ("delete", _, _) => format!("{} the API server to delete {object}", me.says("asks")),
        ("create", _, _) => format!("{} the API server to create {object}", me.says("asks")),
        (other, _, _) => format!("{} the API server: {method} {path} ({other})", me.says("asks")),
    };
    // How it ended.
    if *code == 0 && failed_at.is_some() {
        return format!("{asked}, but the connection was refused: the API server cannot serve without etcd");
    }
    if *code == 404 && *verb == "get" {
        return format!("{asked}; there is none ({code}: {})", inner(message));
    }
    if let Some(stage) = failed_at {
        return if message.is_empty() {
            format!("{asked}; refused at {} ({code})", stage.label())
        } else {
            format!("{asked}; refused at {}: {}", stage.label(), inner(message))
        };
    }
    if *code >= 400 {
        return format!("{asked}; it failed ({code}): {}", inner(message));
    }
    if !is_write(verb) {
        return asked;
    }
    if path.contains("dryRun=") {
        return format!("{asked}; it passed every check but, as a dry run, was not stored");
    }
    let change = stored_change(cluster, entry);
    let done = match change.map(|c| (c.kind, *verb)) {
        Some((ChangeKind::Delete, _)) => format!("removed it from etcd at revision {}", entry.revision),
        Some((ChangeKind::Put, "delete")) => format!("marked it for deletion in etcd at revision {}", entry.revision),
        _ => format!("stored it in etcd at revision {}", entry.revision),
    };
    if me.you {
        format!("{asked}; it passed authentication, authorization, admission and validation, and the API server {done}")
    } else {
        format!("{asked}, and the API server {done}")
    }
}

/// Whether a write to a node cordoned it (true) or uncordoned it (false), if it did either.
fn cordoning(cluster: &Cluster, entry: &Entry) -> Option<bool> {
    let change = stored_change(cluster, entry)?;
    let now = change.value.as_node()?.spec.unschedulable;
    let before = change.prev.as_ref().and_then(|p| p.as_node()).is_some_and(|n| n.spec.unschedulable);
    (now != before).then_some(now)
}

/// The node the scheduler picked for the binding `entry` sends, from the decision it follows.
fn picked_node(cluster: &Cluster, entry: &Entry) -> Option<String> {
    let cause = cluster.record.get(entry.cause?)?;
    let Happening::Decision { text } = &cause.what else { return None };
    text.rsplit_once("; picked ").map(|(_, node)| node.trim().to_string())
}

fn pods_exist(n: i32) -> String {
    if n == 1 { "1 pod exists".into() } else { format!("{n} pods exist") }
}

/// "3 pods exist, 1 ready and 1 available" for the workloads whose status says so.
fn status_summary(object: Option<&Object>) -> Option<String> {
    let object = object?;
    if let Some(rs) = object.as_replica_set() {
        let st = &rs.status;
        return Some(format!(
            "{}, {} ready and {} available",
            pods_exist(st.replicas),
            st.ready_replicas.unwrap_or(0),
            st.available_replicas.unwrap_or(0)
        ));
    }
    if let Some(d) = object.as_deployment() {
        let st = &d.status;
        return Some(format!(
            "{}, {} up to date and {} available",
            pods_exist(st.replicas.unwrap_or(0)),
            st.updated_replicas.unwrap_or(0),
            st.available_replicas.unwrap_or(0)
        ));
    }
    None
}

fn event_written(me: &Subject, verb: &str, event: Option<&Object>, name: &str, code: u16) -> String {
    let records = if verb == "create" { me.says("records") } else { me.says("updates") };
    let Some(event) = event.and_then(|o| o.as_event()) else {
        return if code >= 400 || code == 0 {
            format!("{records} an Event, but the API server refused it ({code})")
        } else {
            format!("{records} Event {name}")
        };
    };
    let involved = &event.involved_object;
    let about = match Kind::ALL.iter().copied().find(|k| k.info().kind == involved.kind) {
        Some(kind) => object_words(kind, &involved.namespace, &involved.name),
        None => format!("{} {}", involved.kind, involved.name),
    };
    let count = match event.count {
        Some(n) if n > 1 => format!(" (seen {n} times)"),
        _ => String::new(),
    };
    let article = if verb == "create" { "an" } else { "the" };
    format!("{records} {article} Event on {about}: {} ({}){count}", inner(&event.message), event.reason)
}

fn plural(n: &str, one: &str, many: &str) -> String {
    if n == "1" { format!("{n} {one}") } else { format!("{n} {many}") }
}

/// A decision in a sentence: the known formats as "saw … so …", anything else as it was said.
fn decision(cluster: &Cluster, actor: ComponentId, text: &str) -> String {
    let me = Subject::of(cluster, actor);
    let me_words = capital(&me.words);
    if text.is_empty() {
        return format!("{} something (the record kept no words)", me.says("decides"));
    }
    // A kubelet's call to its container runtime: `containerd: pull image "nginx:1.25"`.
    if let Some(call) = text.strip_prefix(crate::views::flow::RUNTIME_PREFIX) {
        let node = match cluster.component_role(actor) {
            Some(crate::cluster::Role::Kubelet { node }) => format!(" on {node}"),
            _ => String::new(),
        };
        let call = call.replace('"', "");
        return format!("{me_words} asks containerd{node} to {call}");
    }
    // metrics-server's process and its scrapes (see `cluster::metrics`).
    if text == crate::controllers::metrics_server::SERVING {
        return format!(
            "{me_words} is up (its pod is ready): it will scrape every kubelet's resource metrics every 15 s"
        );
    }
    if text == crate::controllers::metrics_server::STOPPED {
        return format!("{me_words} is down (no ready pod): it forgets its metrics, and the Metrics API cannot answer");
    }
    if let Some(rest) = text.strip_prefix("scrape node ") {
        return match rest.split_once(": GET ") {
            Some((node, url)) => {
                format!("{me_words} scrapes the kubelet on {node} for its resource metrics: GET {url}")
            }
            None => {
                format!("{me_words} cannot scrape the kubelet on {}", rest.replace(" failed:", ":").replace('"', ""))
            }
        };
    }
    // The horizontal pod autoscaler: `scale Deployment/web from 1 to 4 (wanted 5): reason`.
    if let Some(rest) = text.strip_prefix("scale ") {
        if let Some((what, why)) = rest.split_once(": ") {
            return format!("{me_words} scales {what}, because of {why}");
        }
    }
    // kube-apiserver's etcd compactor (see `apiserver::compactor`).
    if let Some(round) = text.strip_prefix(crate::apiserver::compactor::PREFIX) {
        return match round.split_once("compacted to revision ") {
            Some((_, to)) => format!(
                "{me_words} has etcd compact its history up to revision {to}: older revisions are gone, the last five minutes or so are kept"
            ),
            None => {
                format!("{me_words} notes etcd's revision for its compactor; nothing is compacted on the first round")
            }
        };
    }
    // ReplicaSet {key}: want {want}, have {have}: create|delete {count}
    if let Some(rest) = text.strip_prefix("ReplicaSet ") {
        if let Some((key, rest)) = rest.split_once(": want ") {
            if let Some((want, rest)) = rest.split_once(", have ") {
                if let Some((have, action)) = rest.split_once(": ") {
                    let act = match action.split_once(' ') {
                        Some(("create", n)) => format!("creates {n}"),
                        Some(("delete", n)) => format!("deletes {n}"),
                        _ => action.to_string(),
                    };
                    return format!(
                        "{me_words} compared {}'s {} with the {have} it has and {act}",
                        short_key(key),
                        plural(want, "wanted pod", "wanted pods")
                    );
                }
            }
        }
    }
    if let Some(rest) = text.strip_prefix("Job ") {
        if let Some((key, rest)) = rest.split_once(": want ") {
            if let Some((want, rest)) = rest.split_once(" active, have ") {
                if let Some((active, action)) = rest.split_once(": ") {
                    let act = match action.split_once(' ') {
                        Some(("create", n)) => format!("creates {n}"),
                        Some(("delete", n)) => format!("deletes {n}"),
                        _ => action.to_string(),
                    };
                    return format!(
                        "{me_words} saw Job {} wants {} and has {active}, so it {act}",
                        short_key(key),
                        plural(want, "active pod", "active pods")
                    );
                }
            }
        }
        if let Some((key, rest)) = rest.split_once(": ") {
            if let Some((reason, n)) = rest.rsplit_once(": delete ") {
                let n = n.trim_end_matches(" active pods");
                let why =
                    if reason == "suspended" { "is suspended".to_string() } else { format!("is done ({reason})") };
                return format!(
                    "{me_words} saw Job {} {why}, so it deletes its {}",
                    short_key(key),
                    plural(n, "active pod", "active pods")
                );
            }
        }
    }
    if let Some(rest) = text.strip_prefix("Deployment ") {
        if let Some((key, rest)) = rest.split_once(": ") {
            if let Some(what) = rest.strip_suffix(" has timed out progressing") {
                return format!(
                    "{me_words} saw {what} make no progress within Deployment {}'s deadline, so it marks the rollout as failed (ProgressDeadlineExceeded)",
                    short_key(key)
                );
            }
            if let Some(want) =
                rest.strip_prefix("replicas changed to ").and_then(|r| r.strip_suffix(": scaling proportionally"))
            {
                return format!(
                    "{me_words} saw Deployment {} now wants {want} replicas, so it resizes its ReplicaSets (in proportion, when a rollout has several)",
                    short_key(key)
                );
            }
        }
    }
    if let Some(rest) = text.strip_prefix("DaemonSet ") {
        if let Some((key, action)) = rest.split_once(": ") {
            let key = short_key(key);
            if let Some(n) = action.strip_prefix("rolling update: update: delete ") {
                return format!(
                    "{me_words} is rolling out DaemonSet {key}'s new template, so it deletes {} (new ones take their place)",
                    plural(n, "old pod", "old pods")
                );
            }
            let mut create = None;
            let mut delete = None;
            for part in action.split(", ") {
                match part.split_once(' ') {
                    Some(("create", n)) => create = Some(n),
                    Some(("delete", n)) => delete = Some(n),
                    _ => {}
                }
            }
            match (create, delete) {
                (Some(c), None) => {
                    return format!(
                        "{me_words} saw {} without the pod DaemonSet {key} wants there, so it creates {c}",
                        plural(c, "node", "nodes")
                    );
                }
                (None, Some(d)) => {
                    return format!(
                        "{me_words} saw {} of DaemonSet {key} where none should run, so it deletes {}",
                        plural(d, "pod", "pods"),
                        if d == "1" { "it" } else { "them" }
                    );
                }
                (Some(c), Some(d)) => {
                    return format!(
                        "{me_words} compared DaemonSet {key}'s pods with the nodes that should run one, so it creates {c} and deletes {d}"
                    );
                }
                (None, None) => {}
            }
        }
    }
    if let Some(rest) = text.strip_prefix("Service ") {
        if let Some(key) = rest.strip_suffix(" is gone: delete its Endpoints") {
            return format!("{me_words} saw Service {} is gone, so it deletes its Endpoints", short_key(key));
        }
        if let Some((key, rest)) = rest.split_once(": ") {
            let key = short_key(key);
            // Service {key}: {ready} ready, {not_ready} not ready
            if let Some((ready, not_ready)) = rest.strip_suffix(" not ready").and_then(|r| r.split_once(" ready, ")) {
                return format!(
                    "{me_words} found {ready} ready and {not_ready} not-ready pods behind Service {key}, so it writes them into its Endpoints"
                );
            }
            // Service {key}: {n} endpoints ({r} ready) in {s} slice(s): create {c}, update {u}, delete {d}
            if let Some((counts, plan)) = rest.split_once(" slice(s): ") {
                let found = counts.split(" in ").next().unwrap_or(counts);
                let mut acts = Vec::new();
                for part in plan.split(", ") {
                    if let Some((verb, n)) = part.split_once(' ') {
                        if n != "0" {
                            acts.push(format!("{verb}s {}", plural(n, "EndpointSlice", "EndpointSlices")));
                        }
                    }
                }
                let acts = match acts.len() {
                    0 => "leaves its EndpointSlices as they are".to_string(),
                    1 => acts.remove(0),
                    _ => {
                        let last = acts.pop().unwrap_or_default();
                        format!("{} and {last}", acts.join(", "))
                    }
                };
                return format!("{me_words} found {found} behind Service {key}, so it {acts}");
            }
        }
    }
    // Garbage collector: deleting {singular}/{name}: {reason}
    if let Some(rest) = text.strip_prefix("deleting ") {
        if let Some((what, reason)) = rest.split_once(": ") {
            if let Some((singular, name)) = what.split_once('/') {
                let kind = Kind::ALL.iter().copied().find(|k| k.info().singular == singular);
                let word: &str = match kind {
                    Some(k) => kind_word(k),
                    None => singular,
                };
                let object = format!("{word} {name}");
                let reason = match reason.strip_prefix("its owner") {
                    Some(rest) => format!("the owner of {object}{rest}"),
                    None => format!("{object}: {reason}"),
                };
                return format!("{me_words} saw that {reason}, so it deletes the {word}");
            }
        }
        // Namespace controller: deleting {n} {what} in namespace {ns}
        if let Some((what, ns)) = rest.split_once(" in namespace ") {
            return format!("{me_words} is emptying namespace {ns}, so it deletes its {what}");
        }
    }
    if let Some(rest) = text.strip_prefix("orphaned ") {
        if let Some((n, owner)) = rest.split_once(" dependents of ") {
            return format!(
                "{me_words} saw {owner} deleted with orphaning, so it takes {owner} off the owner references of its {}",
                plural(n, "dependent", "dependents")
            );
        }
    }
    if let Some(rest) = text.strip_prefix("namespace ") {
        if let Some((name, wait)) = rest.split_once(": content remains, looking again in ") {
            return format!("{me_words} saw namespace {name} still holds objects, so it will look again in {wait}");
        }
        if let Some((name, finalizer)) = rest.split_once(" is empty: removing its ") {
            return format!(
                "{me_words} saw namespace {name} is empty, so it removes its {finalizer} and the namespace can go"
            );
        }
    }
    if let Some(rest) = text.strip_prefix("node ") {
        if let Some((node, rest)) = rest.split_once(": no heartbeat for ") {
            if let Some((silent, rest)) = rest.split_once(", more than ") {
                let grace = rest.trim_end_matches(": marking it Unknown");
                return format!(
                    "{me_words} heard no heartbeat from node {node} for {silent}, longer than the {grace} grace period, so it marks the node's Ready condition Unknown and taints it unreachable"
                );
            }
        }
        if let Some(node) = rest.strip_suffix(" is posting status again: removing its not-ready/unreachable taints") {
            return format!(
                "{me_words} saw node {node} posting its status again, so it removes the node's not-ready and unreachable taints"
            );
        }
    }
    if let Some(rest) = text.strip_prefix("evicting ") {
        if let Some((pod, rest)) = rest.split_once(": node ") {
            if let Some(node) = rest.strip_suffix(" has a NoExecute taint it no longer tolerates") {
                return format!(
                    "{me_words} saw node {node} has a NoExecute taint that pod {} does not tolerate (or no longer does), so it deletes the pod",
                    short_key(pod)
                );
            }
        }
    }
    if let Some(rest) = text.strip_prefix("pod ") {
        // pod {key}: {f}/{n} nodes feasible; scores {a=1 b=2}; picked {node}
        if let Some((key, rest)) = rest.split_once(": ") {
            if let Some((fit, rest)) = rest.split_once(" nodes feasible; scores ") {
                if let (Some((f, n)), Some((scores, node))) = (fit.split_once('/'), rest.rsplit_once("; picked ")) {
                    return scheduled(&me_words, short_key(key), f, n, scores, node.trim());
                }
            }
        }
        if let Some((key, message)) = rest.split_once(" is unschedulable: ") {
            let first = message.split(". preemption:").next().unwrap_or(message);
            return format!(
                "{me_words} found no node for pod {} ({}), so the pod stays Pending until something changes",
                short_key(key),
                inner(first)
            );
        }
    }
    if let Some(rest) = text.strip_prefix("binding ") {
        if let Some((what, message)) = rest.split_once(" failed: ") {
            if let Some((key, node)) = what.split_once(" to ") {
                return format!(
                    "{me_words} tried to bind pod {} to {node}, but the API server refused: {}",
                    short_key(key),
                    inner(message)
                );
            }
        }
    }
    if let Some(rest) = text.strip_prefix("CronJob ") {
        if let Some((key, at)) = rest.split_once(": scheduled for ") {
            return format!("{me_words} saw CronJob {} is due ({at}), so it creates a Job for it", short_key(key));
        }
    }
    if let Some(rest) = text.strip_prefix("synced ") {
        if let Some((n, rest)) = rest.split_once(" rules for ") {
            if let Some((service, rules)) = rest.split_once(": ") {
                let mut each = rules.split("; ");
                let first = each.next().unwrap_or_default();
                let more = each.count();
                let more = if more > 0 { format!(" and {more} more") } else { String::new() };
                return format!(
                    "{me_words} saw Service {} or its endpoints change, so it rewrites its {} ({first}{more})",
                    short_key(service),
                    plural(n, "forwarding rule", "forwarding rules")
                );
            }
        }
    }
    if let Some(rest) = text.strip_prefix("deleting mirror pod ") {
        if let Some((key, _)) = rest.split_once(": ") {
            return format!(
                "{me_words} deletes the mirror pod {} from the API; the static pod itself keeps running",
                short_key(key)
            );
        }
    }
    format!("{}: {}", me.says("decides"), inner(text))
}

/// The scheduler's pick, with how many nodes fit and whether the best score was shared.
fn scheduled(me: &str, pod: &str, fit: &str, of: &str, scores: &str, node: &str) -> String {
    let scores: Vec<(&str, i64)> = scores
        .split_whitespace()
        .filter_map(|s| s.rsplit_once('='))
        .filter_map(|(n, v)| Some((n, v.parse().ok()?)))
        .collect();
    let best = scores.iter().map(|(_, v)| *v).max();
    let tied = scores.iter().filter(|(_, v)| Some(*v) == best).count();
    let how = if fit == "1" {
        format!("{me} found only {node} fits {pod} and chose it")
    } else {
        let found = if fit == of { format!("all {of} nodes fit") } else { format!("{fit} of {of} nodes fit") };
        let chose = if tied > 1 {
            format!("chose {node}, one of {tied} tied for the best score")
        } else {
            format!("chose {node}, the best of them")
        };
        format!("{me} found {found} {pod} and {chose}")
    };
    format!("{how}; it asks the API server to bind the pod there")
}

/// Background traffic a teaching story passes over quickly: Events written (core and
/// events.k8s.io), Lease renewals, a kubelet's node status heartbeat, and the watch
/// notifications of those writes. The requests, notifications and decisions that take an
/// apply to Running are never chatter.
pub fn is_chatter(cluster: &Cluster, entry: &Entry) -> bool {
    match &entry.what {
        Happening::Request { kind, verb, path, .. } => {
            if matches!(kind, Kind::Event | Kind::Lease) || path.contains("/events.k8s.io/") {
                return true;
            }
            *kind == Kind::Node
                && matches!(*verb, "update" | "patch")
                && subresource(path) == Some("status")
                && matches!(cluster.component_role(entry.actor), Some(Role::Kubelet { .. }))
        }
        Happening::Notify { kind, .. } => {
            matches!(kind, Kind::Event | Kind::Lease)
                || entry
                    .cause
                    .and_then(|c| cluster.record.get(c))
                    .is_some_and(|cause| matches!(cause.what, Happening::Request { .. }) && is_chatter(cluster, cause))
        }
        Happening::Decision { .. } | Happening::KubeletCall { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Command, Session};

    /// A cluster after `kubectl create deployment web --replicas=3` has settled.
    fn applied() -> Session {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=3"));
        s.execute(&Command::new("sim settle"));
        s
    }

    fn the_write(s: &Session) -> u64 {
        s.cluster
            .record
            .entries()
            .find(|e| e.actor == ComponentId::USER && matches!(&e.what, Happening::Request { verb: "create", .. }))
            .map(|e| e.seq)
            .expect("kubectl's create is in the record")
    }

    fn captions_since(s: &Session, seq: u64) -> Vec<String> {
        s.cluster.record.since(seq - 1).map(|e| caption(&s.cluster, e)).collect()
    }

    #[test]
    fn components_are_named_in_a_courses_words() {
        let s = Session::new(1);
        let named: Vec<String> = s.cluster.component_ids().map(|id| who(&s.cluster, id)).collect();
        for expected in [
            "you (kubectl)",
            "the API server",
            "the scheduler",
            "the ReplicaSet controller",
            "the Deployment controller",
            "the garbage collector",
            "the kubelet on worker-2",
            "kube-proxy on worker-1",
        ] {
            assert!(named.iter().any(|n| n == expected), "{expected} not among {named:?}");
        }
    }

    #[test]
    fn your_apply_is_told_as_passing_the_pipeline_and_stored_at_its_revision() {
        let s = applied();
        let seq = the_write(&s);
        let entry = s.cluster.record.get(seq).unwrap();
        let text = caption(&s.cluster, entry);
        assert_eq!(
            text,
            format!(
                "You (kubectl) ask the API server to create Deployment web; it passed authentication, authorization, admission and validation, and the API server stored it in etcd at revision {}.",
                entry.revision
            )
        );
    }

    #[test]
    fn the_scheduler_caption_names_the_chosen_node_and_how_many_fit() {
        let s = applied();
        let picks: Vec<String> = s
            .cluster
            .record
            .since(the_write(&s))
            .filter(|e| matches!(&e.what, Happening::Decision { text } if text.contains("; picked ")))
            .map(|e| caption(&s.cluster, e))
            .collect();
        assert_eq!(picks.len(), 3, "{picks:?}");
        for pick in &picks {
            assert!(pick.starts_with("The scheduler found 3 of 4 nodes fit web-"), "{pick}");
            assert!(pick.contains(" and chose worker-"), "{pick}");
            assert!(pick.ends_with("; it asks the API server to bind the pod there."), "{pick}");
        }
        // The binding that follows names the same node.
        let binding = s
            .cluster
            .record
            .since(the_write(&s))
            .find(|e| matches!(&e.what, Happening::Request { path, .. } if path.ends_with("/binding")))
            .unwrap();
        let text = caption(&s.cluster, binding);
        let decision = caption(&s.cluster, s.cluster.record.get(binding.cause.unwrap()).unwrap());
        let node = decision.split(" and chose ").nth(1).unwrap().split(',').next().unwrap();
        assert!(text.starts_with("The scheduler asks the API server to bind pod web-"), "{text}");
        assert!(text.contains(&format!(" to {node}, and the API server stored it in etcd at revision ")), "{text}");
    }

    #[test]
    fn the_replicaset_controller_compares_wanted_with_had_and_creates_the_difference() {
        let s = applied();
        let text = captions_since(&s, the_write(&s))
            .into_iter()
            .find(|c| c.starts_with("The ReplicaSet controller compared"))
            .unwrap();
        assert!(text.ends_with("'s 3 wanted pods with the 0 it has and creates 3."), "{text}");
    }

    #[test]
    fn a_refused_request_says_the_stage_and_the_message() {
        let mut s = Session::new(1);
        s.execute(&Command::new("kubectl create deployment bad --image=nginx --replicas=-1"));
        let entry = s.cluster.record.entries().rev().find(|e| e.actor == ComponentId::USER).unwrap();
        assert_eq!(
            caption(&s.cluster, entry),
            "You (kubectl) ask the API server to create Deployment bad; refused at validation: \
             Deployment.apps \"bad\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0."
        );
    }

    #[test]
    fn notifications_say_which_watch_and_what_happened() {
        let s = applied();
        let captions = captions_since(&s, the_write(&s));
        assert!(
            captions.iter().any(|c| c.starts_with(
                "The API server tells the ReplicaSet controller, through its watch on ReplicaSets, that ReplicaSet web-"
            ) && c.ends_with(" was added.")),
            "{captions:#?}"
        );
        assert!(
            captions.iter().any(|c| c.starts_with("The API server tells the kubelet on worker-")
                && c.contains(", through its watch on the pods of worker-")
                && c.contains(" is now bound to worker-")),
            "{captions:#?}"
        );
    }

    #[test]
    fn a_kubelet_reports_its_pod_running() {
        let s = applied();
        let captions = captions_since(&s, the_write(&s));
        let running: Vec<&String> = captions
            .iter()
            .filter(|c| c.starts_with("The kubelet on") && c.contains(" is Running (1/1 ready)"))
            .collect();
        assert_eq!(running.len(), 3, "{captions:#?}");
        assert!(running[0].contains("reports that pod web-"), "{}", running[0]);
    }

    #[test]
    fn a_wave_of_notifications_names_two_watchers_and_counts_the_rest() {
        let s = applied();
        let first_pod = s
            .cluster
            .record
            .since(the_write(&s))
            .find(|e| matches!(&e.what, Happening::Request { kind: Kind::Pod, verb: "create", .. }))
            .unwrap();
        let wave: Vec<&Entry> =
            s.cluster.record.since(first_pod.seq).filter(|e| e.cause == Some(first_pod.seq)).collect();
        assert!(wave.len() > 3);
        let Happening::Request { name, .. } = &first_pod.what else { unreachable!() };
        assert_eq!(
            caption_wave(&s.cluster, &wave),
            format!(
                "The API server tells the scheduler, the node lifecycle controller and {} others, through their watches, that pod {name} was added.",
                wave.len() - 2
            )
        );
    }

    #[test]
    fn every_entry_of_an_apply_gets_a_sentence_that_ends_with_a_full_stop() {
        let s = applied();
        for entry in s.cluster.record.since(the_write(&s) - 1) {
            let text = caption(&s.cluster, entry);
            assert!(text.ends_with('.'), "{text}");
            assert!(
                text.chars().next().is_some_and(|c| c.is_uppercase())
                    || text.starts_with("kube-")
                    || text.starts_with("containerd"),
                "{text}"
            );
            assert!(!text.contains(".."), "{text}");
            assert!(!text.contains(" decides: "), "an apply's decisions all have sentences of their own: {text}");
        }
    }

    #[test]
    fn an_apply_looks_its_objects_up_first_and_a_server_side_apply_says_so() {
        let mut s = Session::new(1);
        let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"1\"\n";
        let script = format!(
            "kubectl apply -f - <<EOF\n{yaml}EOF\n$ kubectl apply --server-side -f - <<EOF\n{}EOF\n",
            yaml.replace("\"1\"", "\"2\"")
        );
        for command in crate::shell::parse_script(&script) {
            s.execute(&command);
        }
        let said: Vec<String> = s
            .cluster
            .record
            .entries()
            .filter(|e| e.actor == ComponentId::USER)
            .map(|e| caption(&s.cluster, e))
            .collect();
        assert_eq!(
            said[0],
            "You (kubectl) ask the API server for ConfigMap settings; there is none (404: configmaps \"settings\" not found)."
        );
        assert!(said[1].starts_with("You (kubectl) ask the API server to create ConfigMap settings; it passed"));
        assert!(
            said.iter().any(|c| c.starts_with(
                "You (kubectl) ask the API server to apply ConfigMap settings (server-side apply); it passed"
            )),
            "{said:#?}"
        );
    }

    #[test]
    fn unknown_decisions_fall_back_to_the_components_own_words() {
        let s = Session::new(1);
        assert_eq!(
            decision(&s.cluster, ComponentId::API_SERVER, "something new: do it"),
            "The API server decides: something new: do it"
        );
    }

    #[test]
    fn kubelet_events_tell_what_the_runtime_did() {
        let s = applied();
        let steps: Vec<RuntimeStep> =
            s.cluster.record.since(the_write(&s)).filter_map(|e| runtime_step(&s.cluster, e)).collect();
        let labels: Vec<&str> = steps.iter().map(|r| r.label.as_str()).collect();
        for label in ["pull nginx:1.25", "image pulled", "create container nginx", "start container nginx"] {
            assert!(labels.contains(&label), "{label} not in {labels:?}");
        }
        let pull = steps.iter().find(|r| r.label.starts_with("pull ")).unwrap();
        assert_eq!(pull.reason, "Pulling");
        assert!(
            pull.caption.starts_with(&format!(
                "The kubelet on {} asks containerd on {} to pull image nginx:1.25 for pod web-",
                pull.node, pull.node
            )),
            "{}",
            pull.caption
        );
    }

    #[test]
    fn a_kubelets_event_is_told_as_what_its_runtime_did() {
        let s = applied();
        let captions = captions_since(&s, the_write(&s));
        // The Events, not the kubelet's own call to containerd made just before each.
        let started: Vec<&String> =
            captions.iter().filter(|c| c.contains(" start container nginx") && c.ends_with("Event.")).collect();
        let calls = captions
            .iter()
            .filter(|c| c.contains("asks containerd on worker-") && c.contains(" to start container nginx"));
        assert_eq!(calls.count(), 3, "{captions:#?}");
        assert_eq!(started.len(), 3, "{captions:#?}");
        assert!(started[0].starts_with("The kubelet on worker-"), "{}", started[0]);
        assert!(started[0].ends_with("; the kubelet records it as a Started Event."), "{}", started[0]);
        // Other components' Events say what they record.
        assert!(captions.iter().any(|c| c.starts_with("The scheduler records an Event on pod web-")
            && c.contains(": Successfully assigned default/web-")
            && c.ends_with(" (Scheduled).")));
    }

    #[test]
    fn events_and_lease_renewals_are_chatter_but_the_binding_is_not() {
        let s = applied();
        let write = the_write(&s);
        let is = |pred: &dyn Fn(&Entry) -> bool| -> Vec<bool> {
            s.cluster.record.since(write - 1).filter(|e| pred(e)).map(|e| is_chatter(&s.cluster, e)).collect()
        };
        // Leases are renewed every 10 s: the whole record has some.
        let all = |pred: &dyn Fn(&Entry) -> bool| -> Vec<bool> {
            s.cluster.record.entries().filter(|e| pred(e)).map(|e| is_chatter(&s.cluster, e)).collect()
        };
        let events = is(&|e| matches!(&e.what, Happening::Request { kind: Kind::Event, .. }));
        assert!(!events.is_empty() && events.iter().all(|c| *c));
        let leases = all(&|e| matches!(&e.what, Happening::Request { kind: Kind::Lease, verb: "update", .. }));
        assert!(!leases.is_empty() && leases.iter().all(|c| *c));
        let lease_news = all(&|e| matches!(&e.what, Happening::Notify { kind: Kind::Lease, .. }));
        assert!(!lease_news.is_empty() && lease_news.iter().all(|c| *c));
        let bindings = is(&|e| matches!(&e.what, Happening::Request { path, .. } if path.ends_with("/binding")));
        assert_eq!(bindings, [false, false, false]);
        let heartbeats =
            all(&|e| matches!(&e.what, Happening::Request { kind: Kind::Node, path, .. } if path.ends_with("/status")));
        assert!(heartbeats.iter().all(|c| *c));
        // A kubelet posts its node's status every 5 minutes.
        let mut later = applied();
        later.execute(&Command::new("sleep 6m"));
        let heartbeat = later
            .cluster
            .record
            .entries()
            .find(|e| matches!(&e.what, Happening::Request { kind: Kind::Node, path, .. } if path.ends_with("/status")))
            .expect("a node status heartbeat");
        assert!(is_chatter(&later.cluster, heartbeat));
        let text = caption(&later.cluster, heartbeat);
        assert!(text.starts_with("The kubelet on ") && text.contains(" is Ready (its status heartbeat)"), "{text}");
        // Nothing else in the chain from the write to Running is chatter.
        assert!(!is_chatter(&s.cluster, s.cluster.record.get(write).unwrap()));
        let others = is(&|e| {
            matches!(&e.what, Happening::Request { kind: Kind::Pod | Kind::ReplicaSet | Kind::Deployment, .. })
                || matches!(&e.what, Happening::Decision { .. })
        });
        assert!(others.iter().all(|c| !*c));
    }

    #[test]
    fn the_decisions_of_common_stories_all_have_sentences_of_their_own() {
        let mut s = applied();
        for line in [
            "kubectl expose deployment web --port=80",
            "kubectl scale deployment web --replicas=5",
            "sim settle",
            "kubectl scale deployment web --replicas=2",
            "sim settle",
            "kubectl create job hello --image=busybox -- echo hi",
            "sim settle",
            "kubectl cordon worker-1",
            "kubectl cordon worker-2",
            "kubectl cordon worker-3",
            "kubectl create deployment stuck --image=nginx:1.25",
            "sim settle",
            "kubectl uncordon worker-1",
            "kubectl uncordon worker-2",
            "kubectl uncordon worker-3",
            "sim settle",
            "kubectl delete deployment stuck",
            "sim settle",
            "sim node stop worker-2",
            "sleep 7m",
            "sim node start worker-2",
            "sim settle",
        ] {
            s.execute(&Command::new(line));
        }
        let mut fallbacks = Vec::new();
        for entry in s.cluster.record.entries() {
            let text = caption(&s.cluster, entry);
            assert!(text.ends_with('.'), "{text}");
            if text.contains(" decides: ") {
                fallbacks.push(text);
            }
        }
        fallbacks.sort();
        fallbacks.dedup();
        assert!(fallbacks.is_empty(), "{fallbacks:#?}");
        let all: Vec<String> = s.cluster.record.entries().map(|e| caption(&s.cluster, e)).collect();
        let has = |needle: &str| all.iter().any(|c| c.contains(needle));
        assert!(has("You (kubectl) ask the API server to cordon node worker-1, marking it unschedulable"));
        assert!(has("You (kubectl) ask the API server to uncordon node worker-1"));
        assert!(has("The scheduler found no node for pod stuck-"));
        assert!(has("The garbage collector saw that the owner of ReplicaSet stuck-"));
        assert!(has("The node lifecycle controller heard no heartbeat from node worker-2 for "));
        assert!(has("The Job controller saw Job hello wants 1 active pod and has 0, so it creates 1."));
        assert!(has(
            "The DaemonSet controller saw 4 nodes without the pod DaemonSet kube-system/kube-proxy wants there"
        ));
        assert!(has("The ReplicaSet controller compared web-"));
        assert!(has("'s 2 wanted pods with the 5 it has and deletes 3."));
    }
}
