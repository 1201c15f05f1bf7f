//! Invariants checked after every step of a busy, chaotic session: resourceVersions are
//! unique and never ahead of the store, no node holds more than it can allocate, watches
//! deliver each change once and in order (informers assert it as they sync), and once the
//! cluster settles every owner reference resolves and every cache agrees with the API.

use kubeloop::cluster::ClusterConfig;
use kubeloop::shell::{Command, Session, parse_script};
use kubeloop::sim::Duration;

const SCRIPT: &str = r#"
kubectl apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 6
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        resources:
          requests:
            cpu: 900m
            memory: 1Gi
EOF
kubectl apply -f - <<EOF
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
EOF
kubectl apply -f - <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(200)"]
EOF
kubectl scale deployment web --replicas=14
kubectl delete $(kubectl get pods -o name -l app=web | head -2)
sim node stop worker-1
kubectl scale deployment web --replicas=4
sim node start worker-1
kubectl delete deployment web --cascade=foreground --wait=false
"#;

#[test]
fn invariants_hold_after_every_step_and_caches_agree_once_settled() {
    check(Session::new(3));
}

/// The same, with Events in an etcd of their own and no record, so they are stored on their
/// thread (each check calls the storage back).
#[test]
fn invariants_hold_with_events_in_an_etcd_of_their_own() {
    check(Session::with_config(ClusterConfig {
        seed: 3,
        record: false,
        events_etcd: true,
        ..ClusterConfig::default()
    }));
}

/// The same on three control-plane nodes, whose leaders' node stops halfway (after the
/// scale to 14) and comes back with the worker.
#[test]
fn invariants_hold_on_three_control_planes_through_a_failover() {
    check(Session::with_config(ClusterConfig { seed: 3, control_planes: 3, ..ClusterConfig::default() }));
}

fn check(mut session: Session) {
    let ha = session.cluster.control_plane_nodes().len() > 1;
    for command in parse_script(SCRIPT) {
        session.execute(&command);
        if ha && command.line.starts_with("kubectl scale deployment web --replicas=14") {
            session.execute(&Command::new("sim node stop control-plane"));
        }
        if ha && command.line.starts_with("sim node start worker-1") {
            session.execute(&Command::new("sim node start control-plane"));
        }
        // Walk the next 90 virtual seconds one component run at a time.
        walk_checking_invariants(&mut session, Duration::seconds(90), &command.line);
    }
    session.cluster.settle(Duration::minutes(15));
    let problems = session.cluster.check_invariants(true);
    assert!(problems.is_empty(), "after settling: {problems:#?}");
    // The foreground deletion finished: nothing of the Deployment is left.
    let left = session.execute(&Command::new("kubectl get deploy,rs -l app=web"));
    assert_eq!(left.stderr, "No resources found in default namespace.\n");
}

/// Runs the cluster `span` of virtual time further, one component run at a time, checking the
/// invariants after each run (`after` names the command that came before, for the message).
fn walk_checking_invariants(session: &mut Session, span: Duration, after: &str) {
    let until = session.cluster.now() + span;
    let mut steps = 0;
    while session.cluster.next_wakeup().is_some_and(|t| t <= until) {
        session.cluster.step();
        steps += 1;
        let problems = session.cluster.check_invariants(false);
        assert!(problems.is_empty(), "after `{after}` step {steps}: {problems:#?}");
    }
}

/// A custom resource and its operator: a CRD, the operator's Deployment, Websites it turns into
/// Deployments and Services it owns, a Website deleted (its dependents collected) and the CRD
/// deleted with a Website left (its objects cleaned up first).
const OPERATOR: &str = r#"
kubectl apply -f https://kubeloop.dev/website-operator/crd.yaml
sleep 1
kubectl apply -f https://kubeloop.dev/website-operator/rbac.yaml
kubectl apply -f https://kubeloop.dev/website-operator/operator.yaml
kubectl apply -f https://kubeloop.dev/website-operator/website.yaml
kubectl create namespace shop
kubectl apply -n shop -f https://kubeloop.dev/website-operator/website.yaml
kubectl patch ws blog --type=merge -p '{"spec":{"replicas":4}}'
kubectl delete ws blog --wait=false
kubectl delete crd websites.example.kubeloop.dev --wait=false
"#;

#[test]
fn invariants_hold_for_a_custom_resource_its_operator_and_their_deletion() {
    let mut session = Session::new(5);
    for command in parse_script(OPERATOR) {
        session.execute(&command);
        walk_checking_invariants(&mut session, Duration::seconds(30), &command.line);
    }
    session.cluster.settle(Duration::minutes(5));
    let problems = session.cluster.check_invariants(true);
    assert!(problems.is_empty(), "after settling: {problems:#?}");
    // The Websites went with their definition, and what the operator made went with them.
    let left = session.execute(&Command::new("kubectl get deploy,svc -n shop"));
    assert_eq!(left.stderr, "No resources found in shop namespace.\n", "{}", left.stdout);
}
