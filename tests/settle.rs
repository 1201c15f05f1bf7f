//! `sim settle` returns only when nothing is left to do: a large Deployment is fully ready
//! when it says "settled", and a few more seconds change nothing.
//!
//! At 9,000 pods on 300 nodes the ReplicaSet controller's worker is busy for about 20 ms of
//! virtual time after each sync, so the notification that the last pod became ready waits for
//! it (the slot's `not_before`); settle used to stop there, with the Deployment at 8999/9000.
//! Whether a size shows it depends on when the last pods become ready (6,000 pods on 200 nodes
//! do, 5,000 on 170 do not), so the mechanism itself is pinned down at small size by the unit
//! test `settle_waits_for_a_notification_held_until_a_busy_worker_is_free` in
//! `src/cluster/mod.rs`; this one, the reported case, takes about 15 s in a debug build.

use kubeloop::shell::{Command, Session, parse_script};

fn settle_leaves_nothing_undone(nodes: usize, pods: usize) {
    let mut session = Session::new(1);
    let mut script = String::new();
    for i in 4..=nodes {
        script.push_str(&format!("sim node add worker-{i}\n"));
    }
    script.push_str("sleep 20s\n");
    script.push_str(&format!(
        "kubectl apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: load
spec:
  replicas: {pods}
  selector:
    matchLabels:
      app: load
  template:
    metadata:
      labels:
        app: load
    spec:
      containers:
      - name: app
        image: nginx:1.25
        resources:
          requests:
            cpu: 10m
            memory: 16Mi
EOF
"
    ));
    for command in parse_script(&script) {
        let out = session.execute(&command);
        assert_eq!(out.stderr, "", "`{}`", command.line);
    }
    let settled = session.execute(&Command::new("sim settle"));
    assert!(settled.stdout.starts_with("settled after "), "{settled:?}");

    let get = Command::new("kubectl get deployment load --no-headers");
    let ready = session.execute(&get).stdout;
    let want = format!("{pods}/{pods}");
    assert!(ready.split_whitespace().nth(1) == Some(want.as_str()), "after `sim settle`: {ready}");

    // Settled means settled: nothing the controllers own moves afterwards.
    let status = Command::new("kubectl get deployments,replicasets -o json");
    let before = session.execute(&status).stdout;
    session.execute(&Command::new("sleep 5s"));
    let after = session.execute(&status).stdout;
    assert!(before == after, "the Deployment or its ReplicaSet changed in the 5 s after `sim settle`");
}

#[test]
fn settle_at_nine_thousand_pods() {
    settle_leaves_nothing_undone(300, 9000);
}

/// A status write that failed (etcd was down) is work left: the kubelet sends it again, and
/// settle waits for that rather than leaving the pod as it was before the crash.
#[test]
fn settle_waits_for_status_writes_that_failed_while_etcd_was_down() {
    let mut session = Session::new(1);
    let script = "kubectl run web --image=nginx:1.25
sim settle
sim etcd stop
sim pod crash web
sleep 2s
sim etcd start
sim settle
";
    for command in parse_script(script) {
        let out = session.execute(&command);
        assert_eq!(out.stderr, "", "`{}`", command.line);
    }
    let pod = Command::new("kubectl get pod web -o json");
    let before = session.execute(&pod).stdout;
    assert!(before.contains("\"restartCount\": 1"), "after `sim settle`: {before}");
    session.execute(&Command::new("sleep 10s"));
    assert_eq!(session.execute(&pod).stdout, before, "the pod changed in the 10 s after `sim settle`");
}
