//! Events kept in an etcd of their own (`ClusterConfig::events_etcd`): the same Events
//! whether they are stored at once or on the events thread, the same as one etcd would hold,
//! and served to every reader through the API server while `etcdctl` sees only the main etcd.

use kubeloop::api::{Kind, Object};
use kubeloop::apiserver::{Reply, Request};
use kubeloop::cluster::ClusterConfig;
use kubeloop::record::WatchEventType;
use kubeloop::shell::{Command, Session};
use std::collections::BTreeMap;

/// Enough pods for several batches of Event writes (256 each) to go to the events thread, a read of
/// Events in the middle that calls the storage back, and more batches after it.
const SCRIPT: &str = r#"
kubectl create deployment web --image=nginx:1.25 --replicas=120
sleep 20s
kubectl get events --field-selector reason=Scheduled -o name
kubectl scale deployment web --replicas=200
kubectl create deployment broken --image=nginx:no-such-tag --replicas=2
sleep 40s
kubectl get deployments
"#;

fn session(events_etcd: bool, record: bool) -> Session {
    Session::with_config(ClusterConfig { seed: 7, events_etcd, record, ..ClusterConfig::default() })
}

fn events(session: &Session) -> Vec<String> {
    session.cluster.objects(Kind::Event, "").iter().map(|e| format!("{e:?}")).collect()
}

fn run(s: &mut Session, line: &str) -> String {
    let out = s.execute(&Command::new(line));
    format!("{}{}", out.stdout, out.stderr)
}

#[test]
fn events_stored_on_their_thread_are_exactly_those_stored_at_once() {
    // Keeping a record makes every write at once; without one they go to the thread.
    let mut at_once = session(true, true);
    let mut threaded = session(true, false);
    let transcript = at_once.transcript(SCRIPT);
    assert_eq!(threaded.transcript(SCRIPT), transcript);
    assert!(threaded.cluster.inspect().events_sent_away() > 2, "the writes went to the events thread");
    assert_eq!(at_once.cluster.inspect().events_sent_away(), 0);
    let stored = events(&at_once);
    assert!(stored.len() > 600, "{} Events", stored.len());
    assert_eq!(events(&threaded), stored, "names, uids, resourceVersions, counts and times agree");
    let mut again = session(true, false);
    again.transcript(SCRIPT);
    assert_eq!(events(&again), stored, "and so does another run on the thread");
}

/// What the Events say, without what depends on the store they are in (names, uids, versions).
fn gist(session: &Session) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for object in session.cluster.objects(Kind::Event, "") {
        let Object::Event(e) = &*object else { continue };
        let key = format!(
            "{} {} {} {} ×{}",
            e.involved_object.kind,
            e.type_,
            e.reason,
            e.source.component,
            e.count.unwrap_or(1)
        );
        *counts.entry(key).or_default() += 1;
    }
    counts
}

#[test]
fn an_etcd_of_their_own_holds_the_events_one_etcd_would() {
    let mut apart = session(true, true);
    let mut together = session(false, true);
    apart.transcript(SCRIPT);
    together.transcript(SCRIPT);
    assert_eq!(gist(&apart), gist(&together));
    let prefix = "/registry/events/";
    assert_eq!(apart.cluster.inspect().etcd().range(prefix).count(), 0, "the main etcd holds no Events");
    assert!(together.cluster.inspect().etcd().range(prefix).count() > 600);
}

#[test]
fn a_watch_on_events_is_served_from_their_etcd_and_keeps_its_writes_here() {
    let mut s = session(true, false);
    let Ok(Reply::Watch { id, .. }) = s.cluster.request(Request::watch(Kind::Event, "default")) else {
        panic!("no watch")
    };
    run(&mut s, "kubectl create deployment web --image=nginx:1.25 --replicas=80");
    run(&mut s, "sleep 20s");
    let seen = s.cluster.with_api(|api, _| api.drain_watch(id));
    let scheduled = seen
        .iter()
        .filter(|n| n.type_ == WatchEventType::Added)
        .filter(|n| n.object.as_event().is_some_and(|e| e.reason == "Scheduled"))
        .count();
    assert_eq!(scheduled, 80);
    assert_eq!(s.cluster.inspect().events_sent_away(), 0, "while Events are watched their writes stay here");
}

#[test]
fn events_are_read_through_the_api_server_and_refused_in_a_namespace_that_does_not_exist() {
    let mut s = session(true, true);
    run(&mut s, "kubectl run web --image=nginx:1.25");
    run(&mut s, "sleep 10s");
    let listed = run(&mut s, "kubectl get events --field-selector involvedObject.name=web");
    assert!(listed.contains("Successfully assigned default/web to worker-"), "{listed}");
    let described = run(&mut s, "kubectl describe pod web");
    assert!(described.contains("Normal  Started    5s    kubelet            Container started"), "{described}");
    assert!(run(&mut s, "etcdctl get /registry/events --prefix --keys-only").trim().is_empty());
    let event = r#"kubectl create -f - <<EOF
apiVersion: v1
kind: Event
metadata:
  name: hello
  namespace: nowhere
involvedObject:
  kind: Pod
  name: web
  namespace: nowhere
reason: Hello
message: hi
EOF"#;
    let out = s.transcript(event);
    let refused = r#"Error from server (NotFound): error when creating "STDIN": namespaces "nowhere" not found"#;
    assert!(out.contains(refused), "{out}");
    assert_eq!(session(false, true).transcript(event), out, "as the API server with one etcd answers");
    let out = s.transcript(&event.replace("nowhere", "default"));
    assert!(out.contains("event/hello created"), "{out}");
    assert!(run(&mut s, "kubectl get events").contains("Hello"));
    assert!(run(&mut s, "kubectl delete event hello").contains("event \"hello\" deleted"));
    assert!(!run(&mut s, "kubectl get events").contains("Hello"));
}

#[test]
fn watches_on_events_are_numbered_among_the_api_servers_own() {
    let mut s = session(true, false);
    let mut watch = |kind| match s.cluster.request(Request::watch(kind, "default")) {
        Ok(Reply::Watch { id, .. }) => id,
        other => panic!("no watch: {other:?}"),
    };
    let (pods, events, more_pods) = (watch(Kind::Pod), watch(Kind::Event), watch(Kind::Pod));
    assert!(pods < events && events < more_pods, "{pods} {events} {more_pods}");
    run(&mut s, "kubectl run web --image=nginx:1.25");
    run(&mut s, "sleep 10s");
    let seen = |s: &mut Session, id| s.cluster.with_api(|api, _| api.drain_watch(id));
    let on_events = seen(&mut s, events);
    assert!(!on_events.is_empty() && on_events.iter().all(|n| n.object.kind() == Kind::Event));
    assert!(seen(&mut s, more_pods).iter().all(|n| n.object.kind() == Kind::Pod));
    assert!(!seen(&mut s, pods).is_empty());
}
