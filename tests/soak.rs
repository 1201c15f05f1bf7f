//! A day of a busy sandbox: memory must plateau. The example Deployment and a CronJob that
//! runs every minute, for 24 virtual hours; Events expire an hour after their last write, Jobs
//! are pruned to the CronJob's history limits, and the record keeps its capacity.
//!
//! About 21 s in a debug build, so it is run by name:
//! `cargo test --test soak -- --ignored --nocapture` (add `--release` for the quick way).

use kubeloop::api::Kind;
use kubeloop::shell::{Command, Session};
use kubeloop::sim::Duration;
use std::time::Instant;

#[test]
#[ignore]
fn a_day_of_a_deployment_and_a_cronjob_every_minute_stays_bounded() {
    let started = Instant::now();
    let mut s = Session::new(1);
    let manifest =
        kubeloop::views::examples::EXAMPLES.iter().find(|e| e.id == "deployment").expect("the example").manifest;
    let apply = Command { line: "kubectl apply -f - <<EOF".into(), heredoc: Some(("EOF".into(), manifest.into())) };
    assert_eq!(s.execute(&apply).code, 0);
    let cron = "kubectl create cronjob tick --image=busybox:1.36 --schedule='*/1 * * * *' -- sh -c 'date; echo tick'";
    let out = s.execute(&Command::new(cron));
    assert_eq!(out.code, 0, "{out:?}");
    let (mut max_events, mut max_record, mut max_objects) = (0, 0, 0);
    let mut at_hour = Vec::new();
    for minute in 1..=24 * 60 {
        s.cluster.advance(Duration::minutes(1));
        let events = s.cluster.objects(Kind::Event, "").len();
        max_events = max_events.max(events);
        max_record = max_record.max(s.cluster.record.entries().len());
        max_objects = max_objects.max(s.cluster.inspect().etcd().len());
        if minute % 60 == 0 {
            at_hour.push(events);
        }
    }
    let took = started.elapsed();
    eprintln!(
        "24 virtual hours: at most {max_events} Events (each hour: {at_hour:?}), {max_record} record entries, \
         {max_objects} keys in etcd; {took:?} real"
    );
    let jobs = s.cluster.objects(Kind::Job, "default").len();
    assert!(jobs <= 4, "{jobs} Jobs kept: the CronJob keeps 3 successful and 1 failed");
    // Each hour's Events are the last hour's: after the first hour the count stays level.
    let later = &at_hour[2..];
    let (lo, hi) = (later.iter().min().copied().unwrap_or(0), later.iter().max().copied().unwrap_or(0));
    assert!(hi <= lo + lo / 5, "Events keep growing: {at_hour:?}");
    assert!(max_events < 1000, "{max_events} Events at once");
    assert!(max_record <= s.cluster.record.capacity, "the record outgrew its capacity");
    assert_eq!(s.cluster.check_invariants(false), Vec::<String>::new());
}
