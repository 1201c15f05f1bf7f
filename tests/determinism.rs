//! Same seed, same commands, same cluster: every run of a session replays identically —
//! transcript, names, and the whole record of requests, notifications and decisions — for
//! 100 seeds. (The browser tests replay a transcript in wasm, so the platforms agree too.)

use kubeloop::shell::Session;

const SCRIPT: &str = r#"
kubectl apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
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
EOF
sleep 8s
kubectl delete $(kubectl get pods -o name | head -1) --wait=false
sim node stop worker-2
sleep 70s
kubectl scale deployment web --replicas=5
sleep 10s
kubectl get pods -o wide
kubectl get events
"#;

/// A digest of everything the record holds, so two runs can be compared cheaply.
fn record_digest(session: &Session) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for entry in session.cluster.record.entries() {
        for b in format!("{entry:?}").bytes() {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

fn run(seed: u64) -> (String, u64) {
    let mut session = Session::new(seed);
    let transcript = session.transcript(SCRIPT);
    (transcript, record_digest(&session))
}

#[test]
fn every_seed_replays_identically() {
    let mut distinct = std::collections::BTreeSet::new();
    for seed in 1..=100 {
        let (first, digest) = run(seed);
        let (second, digest_again) = run(seed);
        assert_eq!(first, second, "seed {seed}: transcripts differ");
        assert_eq!(digest, digest_again, "seed {seed}: records differ (rerun with this seed to reproduce)");
        distinct.insert(digest);
    }
    // Chance matters: different seeds give different clusters.
    assert!(distinct.len() > 90, "only {} distinct runs out of 100", distinct.len());
}

/// An HPA under a load generator: metrics-server's scrapes, the load's path through DNS and
/// kube-proxy, and the autoscaler's decisions replay identically too.
const AUTOSCALING: &str = r#"
kubectl create deployment php-apache --image=registry.k8s.io/hpa-example --replicas=2
kubectl patch deployment php-apache -p '{"spec":{"template":{"spec":{"containers":[{"name":"hpa-example","resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"500m"}}}]}}}}'
kubectl expose deployment php-apache --port=80
kubectl autoscale deployment php-apache --cpu=50% --min=1 --max=6
kubectl run load --image=busybox:1.28 -- /bin/sh -c "while sleep 0.01; do wget -q -O- http://php-apache; done"
sleep 2m
kubectl top pods
kubectl get hpa
"#;

#[test]
fn an_autoscaled_deployment_under_load_replays_identically() {
    for seed in 1..=5 {
        let mut a = Session::new(seed);
        let mut b = Session::new(seed);
        let (ta, tb) = (a.transcript(AUTOSCALING), b.transcript(AUTOSCALING));
        assert_eq!(ta, tb, "seed {seed}: transcripts differ");
        assert_eq!(record_digest(&a), record_digest(&b), "seed {seed}: records differ");
        assert!(ta.contains("cpu: "), "{ta}");
    }
}

/// A CRD, the website-operator and its Websites: discovery, the operator's process and the
/// garbage collector's informers for custom resources replay identically too.
const OPERATOR: &str = r#"
kubectl apply -f https://kubeloop.dev/website-operator/crd.yaml
sleep 1
kubectl apply -f https://kubeloop.dev/website-operator/rbac.yaml
kubectl apply -f https://kubeloop.dev/website-operator/operator.yaml
kubectl apply -f https://kubeloop.dev/website-operator/website.yaml
sleep 30s
kubectl patch ws blog --type=merge -p '{"spec":{"replicas":3}}'
sleep 10s
kubectl delete ws blog
sleep 5s
kubectl get ws,deploy,svc,pods -A
"#;

#[test]
fn a_custom_resource_and_its_operator_replay_identically() {
    for seed in 1..=3 {
        let mut a = Session::new(seed);
        let mut b = Session::new(seed);
        let (ta, tb) = (a.transcript(OPERATOR), b.transcript(OPERATOR));
        assert_eq!(ta, tb, "seed {seed}: transcripts differ");
        assert_eq!(record_digest(&a), record_digest(&b), "seed {seed}: records differ");
        assert!(ta.contains("website-operator"), "{ta}");
    }
}

/// etcd as a Raft group of three: elections (timeouts drawn from the seeded RNG), the loss of
/// the leader and of the quorum, and the messages recorded for each write replay identically.
const RAFT: &str = r#"
kubectl create deployment web --image=nginx --replicas=2
sleep 3s
sim etcd stop control-plane2
kubectl scale deployment web --replicas=3
sleep 3s
sim etcd stop control-plane3
kubectl get pods
sim etcd start control-plane2
sleep 5s
etcdctl endpoint status --cluster
"#;

#[test]
fn a_three_member_etcd_replays_identically() {
    use kubeloop::cluster::ClusterConfig;
    let run = |seed: u64| {
        let mut session = Session::with_config(ClusterConfig { seed, control_planes: 3, ..ClusterConfig::default() });
        let transcript = session.transcript(RAFT);
        (transcript, record_digest(&session))
    };
    for seed in [1, 2, 3, 17] {
        let (first, digest) = run(seed);
        let (second, digest_again) = run(seed);
        assert_eq!(first, second, "seed {seed}: transcripts differ");
        assert_eq!(digest, digest_again, "seed {seed}: records differ");
        assert!(first.contains("etcdserver: request timed out"), "seed {seed}: {first}");
    }
}

/// Three control-plane nodes: the leader's node stops, standbys take both Leases over, and a
/// Deployment is scheduled by the new leader — identically on every run.
const FAILOVER: &str = r#"
sim node stop control-plane
sleep 30s
kubectl create deployment web --image=nginx --replicas=3
sleep 10s
sim node start control-plane
sleep 10s
kubectl get lease -n kube-system
kubectl get pods -o wide
"#;

#[test]
fn a_control_plane_failover_replays_identically() {
    for seed in 1..=5 {
        let config = || kubeloop::cluster::ClusterConfig { seed, control_planes: 3, ..Default::default() };
        let (mut a, mut b) = (Session::with_config(config()), Session::with_config(config()));
        let (ta, tb) = (a.transcript(FAILOVER), b.transcript(FAILOVER));
        assert_eq!(ta, tb, "seed {seed}: transcripts differ");
        assert_eq!(record_digest(&a), record_digest(&b), "seed {seed}: records differ");
        assert_eq!(ta.matches(" Running ").count(), 3, "{ta}");
    }
}
