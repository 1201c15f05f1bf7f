//! A day of a busy sandbox: memory must plateau. The example Deployment and a CronJob that
//! runs every minute, for 24 virtual hours; Events expire an hour after their last write, Jobs
//! are pruned to the CronJob's history limits, the record keeps its capacity, and the heap in
//! use (counted by this test's allocator) grows by no more than a fifth after the sixth hour.
//!
//! About 21 s in a debug build, so it is run by name:
//! `cargo test --test soak -- --ignored --nocapture` (add `--release` for the quick way).

use kubeloop::api::Kind;
use kubeloop::shell::{Command, Session};
use kubeloop::sim::Duration;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The system's allocator, counting the bytes in use.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        IN_USE.fetch_add(new_size, Ordering::Relaxed);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

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
    let mut heap_mb = Vec::new();
    for minute in 1..=24 * 60 {
        s.cluster.advance(Duration::minutes(1));
        let events = s.cluster.objects(Kind::Event, "").len();
        max_events = max_events.max(events);
        max_record = max_record.max(s.cluster.record.entries().len());
        max_objects = max_objects.max(s.cluster.inspect().etcd().len());
        if minute % 60 == 0 {
            at_hour.push(events);
            heap_mb.push(IN_USE.load(Ordering::Relaxed) as f64 / 1048576.0);
        }
    }
    let took = started.elapsed();
    let heap: Vec<String> = heap_mb.iter().map(|mb| format!("{mb:.1}")).collect();
    eprintln!(
        "24 virtual hours: at most {max_events} Events (each hour: {at_hour:?}), {max_record} record entries, \
         {max_objects} keys in etcd; heap in use each hour (MiB): {heap:?}; {took:?} real"
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
    let (sixth, last) = (heap_mb[5], heap_mb[heap_mb.len() - 1]);
    assert!(last <= sixth * 1.2, "the heap grew from {sixth:.1} MiB at the sixth hour to {last:.1} MiB: {heap:?}");
}
