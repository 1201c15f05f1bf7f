//! Nothing a student types or opens can hang or kill the page: commands that let virtual time
//! pass are capped, journals (shared links, saved sessions) are untrusted input, and Events
//! expire an hour after their last write as the API server's etcd leases make them.

use kubeloop::api::Kind;
use kubeloop::page::journal::{Entry, Journal, JournalError};
use kubeloop::shell::{Command, Session};
use kubeloop::sim::limits::{COMMAND_TIME_CAP, JOURNAL_TIME_CAP};
use kubeloop::sim::{Duration, Time};
use std::time::Instant;

fn run(s: &mut Session, line: &str) -> kubeloop::kubectl::Output {
    s.execute(&Command::new(line))
}

#[test]
fn sleep_refuses_what_it_cannot_parse_and_what_the_sandbox_cannot_run() {
    let mut s = Session::new(1);
    let start = s.cluster.now();
    for (line, stderr) in [
        ("sleep forever", "sleep: invalid time interval 'forever'\nTry 'sleep --help' for more information.\n"),
        ("sleep -5", "sleep: invalid time interval '-5'\nTry 'sleep --help' for more information.\n"),
        ("sleep 5x", "sleep: invalid time interval '5x'\nTry 'sleep --help' for more information.\n"),
        ("sleep", "sleep: missing operand\nTry 'sleep --help' for more information.\n"),
        ("sleep 9999999h", "sleep: the sandbox runs at most 6h of virtual time per command (asked for 9999999h)\n"),
        (
            "sleep 99999999999999999999s",
            "sleep: the sandbox runs at most 6h of virtual time per command (asked for 99999999999999999999s)\n",
        ),
        ("sleep 1e309s", "sleep: the sandbox runs at most 6h of virtual time per command (asked for 1e309s)\n"),
        ("sleep infinity", "sleep: the sandbox runs at most 6h of virtual time per command (asked for infinity)\n"),
        ("sleep 12h 12h 1s", "sleep: the sandbox runs at most 6h of virtual time per command (asked for 12h 12h 1s)\n"),
        ("sleep 1.5d", "sleep: the sandbox runs at most 6h of virtual time per command (asked for 1.5d)\n"),
    ] {
        let out = run(&mut s, line);
        assert_eq!((out.stderr.as_str(), out.code), (stderr, 1), "{line}");
    }
    assert_eq!(s.cluster.now(), start, "no refused sleep let time pass");
    for (line, took) in [("sleep 1.5", 1500), ("sleep 1m30s", 90_000), ("sleep 1 2s", 3000), ("sleep 0.5m", 30_000)] {
        let before = s.cluster.now();
        let out = run(&mut s, line);
        assert_eq!((out.stderr.as_str(), out.code), ("", 0), "{line}");
        assert_eq!(s.cluster.now().since(before), Duration(took), "{line}");
    }
}

#[test]
fn kubectl_waits_refuse_bad_and_huge_durations_in_their_own_words() {
    let mut s = Session::new(1);
    run(&mut s, "kubectl run web --image=nginx:1.25");
    let start = s.cluster.now();
    let cases = [
        (
            "kubectl wait --for=delete pod/web --timeout=abc",
            "Error: invalid argument \"abc\" for \"--timeout\" flag: time: invalid duration \"abc\"\nSee 'kubectl wait --help' for usage.\n",
        ),
        // Past Go's int64 nanoseconds: kubectl's own parser refuses it.
        (
            "kubectl wait --for=delete pod/web --timeout=99999999h",
            "Error: invalid argument \"99999999h\" for \"--timeout\" flag: time: invalid duration \"99999999h\"\nSee 'kubectl wait --help' for usage.\n",
        ),
        (
            "kubectl wait --for=delete pod/web --timeout=1e309s",
            "Error: invalid argument \"1e309s\" for \"--timeout\" flag: time: invalid duration \"1e309s\"\nSee 'kubectl wait --help' for usage.\n",
        ),
        (
            "kubectl wait --for=delete pod/web --timeout=999999h",
            "error: the sandbox lets at most 6h of virtual time pass per command (--timeout=999999h); ask for less\n",
        ),
        (
            "kubectl wait --for=delete pod/web --timeout=-1s",
            "error: the sandbox lets at most 6h of virtual time pass per command (--timeout=-1s); ask for less (a negative timeout waits a week)\n",
        ),
        (
            "kubectl rollout status deployment/web --timeout=25h",
            "error: the sandbox lets at most 6h of virtual time pass per command (--timeout=25h); ask for less\n",
        ),
        (
            "kubectl drain worker-1 --timeout=2562047h",
            "error: the sandbox lets at most 6h of virtual time pass per command (--timeout=2562047h); ask for less\n",
        ),
        (
            "kubectl logs -f web --request-timeout=999999h",
            "error: the sandbox lets at most 6h of virtual time pass per command (--request-timeout=999999h); ask for less\n",
        ),
        (
            "kubectl logs -f web --request-timeout=99999999999999999999",
            "error: invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)\n99999999999999999999\n",
        ),
        (
            "kubectl logs -f web --request-timeout=9999999999999999",
            "error: the sandbox lets at most 6h of virtual time pass per command (--request-timeout=9999999999999999); ask for less\n",
        ),
        (
            "kubectl get pods -w --request-timeout=48h",
            "error: the sandbox lets at most 6h of virtual time pass per command (--request-timeout=48h); ask for less\n",
        ),
    ];
    for (line, stderr) in cases {
        let out = run(&mut s, line);
        assert_eq!(out.stderr, stderr, "{line}");
        assert_ne!(out.code, 0, "{line}");
    }
    assert_eq!(s.cluster.now(), start, "no refused wait let time pass");
}

/// The measurement behind [`COMMAND_TIME_CAP`] (see `limits.rs`): about 4 s in a debug build,
/// so it is run by name: `cargo test --test time_caps -- --ignored --nocapture`.
#[test]
#[ignore]
fn a_sleep_at_the_cap_runs_in_bounded_real_time() {
    let mut s = Session::new(1);
    let started = Instant::now();
    let out = run(&mut s, &format!("sleep {}", COMMAND_TIME_CAP.short()));
    assert_eq!(out.code, 0, "{out:?}");
    let took = started.elapsed();
    eprintln!("sleep {} on the idle default cluster: {took:?} real", COMMAND_TIME_CAP.short());
    assert_eq!(s.cluster.now(), Time::ZERO + kubeloop::shell::BOOT_TIME + COMMAND_TIME_CAP);
}

fn journal_with(now: u64, entries: Vec<Entry>) -> Journal {
    Journal { now, entries, ..Journal::new(3) }
}

fn entry(at: u64, line: &str) -> Entry {
    Entry { at, line: line.into(), stdin: None, beside: false, skipped: false }
}

#[test]
fn a_journal_reaching_past_the_cap_is_refused_with_a_reason() {
    let year = 365 * 86_400_000;
    let far_clock = journal_with(year, vec![]);
    let err = Journal::decode_checked(&far_clock.encode()).unwrap_err();
    assert_eq!(err, JournalError::TooFar { at: Duration(year) });
    assert_eq!(
        err.to_string(),
        "this saved session reaches 365 days of virtual time; the sandbox replays at most 2 days"
    );
    assert_eq!(Journal::decode(&far_clock.encode()), None, "the page's decode refuses it too");

    let far_entry = journal_with(0, vec![entry(10 * 86_400_000 + 3_600_000, "kubectl get pods")]);
    assert_eq!(
        Journal::decode_checked(&far_entry.encode()).unwrap_err().to_string(),
        "this saved session reaches 10 days 1h of virtual time; the sandbox replays at most 2 days"
    );

    let many = journal_with(0, (0..10_001).map(|i| entry(i, "")).collect());
    assert_eq!(Journal::decode_checked(&many.encode()).unwrap_err(), JournalError::TooManyEntries { entries: 10_001 });

    let wordy = journal_with(0, vec![entry(0, &"x".repeat(2 << 20))]);
    assert!(matches!(Journal::decode_checked(&wordy.encode()), Err(JournalError::TooLarge { .. })));
    assert_eq!(
        Journal::decode_checked("%%%").unwrap_err().to_string(),
        "this saved session is not one the sandbox wrote: it does not decode"
    );

    let at_cap = journal_with(JOURNAL_TIME_CAP.0, vec![entry(70_000, "kubectl get pods")]);
    assert_eq!(Journal::decode_checked(&at_cap.encode()), Ok(at_cap.clone()));
}

#[test]
fn a_valid_journal_encodes_as_before() {
    // Written by the encoding share links have always used: it must keep decoding.
    let journal = journal_with(
        95_000,
        vec![entry(61_000, "kubectl create deployment web --image=nginx:1.25"), entry(80_000, "")],
    );
    let encoded = journal.encode();
    assert_eq!(
        encoded,
        "eyJzZWVkIjozLCJlbnRyaWVzIjpbeyJhdCI6NjEwMDAsImxpbmUiOiJrdWJlY3RsIGNyZWF0ZSBkZXBsb3ltZW50IHdlYiAtLWltYWdlPW5naW54OjEuMjUifSx7ImF0Ijo4MDAwMH1dLCJub3ciOjk1MDAwfQ"
    );
    assert_eq!(Journal::decode_checked(&encoded), Ok(journal));
}

#[test]
fn events_expire_an_hour_after_their_last_update() {
    let mut s = Session::new(1);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: crasher\nspec:\n  containers:\n  - name: app\n    image: busybox:1.36\n    command: [\"sh\", \"-c\", \"sleep 2; exit 1\"]\n";
    let apply = Command { line: "kubectl apply -f - <<EOF".into(), heredoc: Some(("EOF".into(), pod.into())) };
    assert_eq!(s.execute(&apply).code, 0);
    // Five minutes of a crash loop: the kubelet's BackOff event is bumped by its correlator.
    run(&mut s, "sleep 5m");
    assert_eq!(run(&mut s, "kubectl delete pod crasher").code, 0);
    let events = |s: &Session| {
        s.cluster
            .objects(Kind::Event, "default")
            .iter()
            .filter_map(|e| e.as_event().cloned())
            .filter(|e| e.involved_object.name == "crasher")
            .collect::<Vec<_>>()
    };
    let first = events(&s);
    let find = |reason: &str| first.iter().find(|e| e.reason == reason).cloned().expect(reason);
    let (scheduled, backoff) = (find("Scheduled"), find("BackOff"));
    let written = |e: &kubeloop::api::Event| e.last_timestamp.expect("stamped");
    assert!(backoff.count.unwrap_or(1) >= 3, "{backoff:?}");
    assert!(written(&backoff) > written(&scheduled) + Duration::minutes(2), "{backoff:?}");
    // A watcher of Events, as `kubectl get events -w` would hold.
    let watch =
        s.cluster.request(kubeloop::apiserver::Request::watch(Kind::Event, "default")).expect("the watch opens");
    let kubeloop::apiserver::Reply::Watch { id, .. } = watch else { panic!("{watch:?}") };
    let until = |s: &mut Session, t: Time| {
        let left = t.since(s.cluster.now());
        s.cluster.advance(left);
    };
    let present = |s: &Session, name: &str| events(s).iter().any(|e| e.metadata.name == name);
    until(&mut s, written(&scheduled) + Duration::minutes(59));
    assert!(present(&s, &scheduled.metadata.name), "the Scheduled event went before its hour");
    until(&mut s, written(&scheduled) + Duration::minutes(62));
    assert!(!present(&s, &scheduled.metadata.name), "the Scheduled event outlived its hour");
    // Created as early, but bumped since: its lease was renewed with each write.
    assert!(present(&s, &backoff.metadata.name), "the BackOff event went an hour after its first write");
    until(&mut s, written(&backoff) + Duration::minutes(62));
    assert!(!present(&s, &backoff.metadata.name), "the BackOff event outlived its last write by an hour");
    let deleted: Vec<String> = s
        .cluster
        .with_api(|api, _| api.drain_watch(id))
        .into_iter()
        .filter(|e| e.type_ == kubeloop::record::WatchEventType::Deleted)
        .map(|e| e.object.name().to_string())
        .collect();
    assert!(deleted.contains(&scheduled.metadata.name) && deleted.contains(&backoff.metadata.name), "{deleted:?}");
    let why = |name: &str| {
        s.cluster.record.entries().any(|e| {
            matches!(&e.what, kubeloop::record::Happening::Decision { text }
                if text.starts_with("etcd: the lease on /registry/events/default/") && text.contains(name))
        })
    };
    assert!(why(&scheduled.metadata.name), "the record shows why it went");
    assert_eq!(s.cluster.check_invariants(false), Vec::<String>::new());
}

#[test]
fn sim_settle_says_when_it_gave_up() {
    let mut s = Session::new(1);
    // Each scheduling cycle takes ten minutes: three pods take half an hour to place.
    run(&mut s, "sim scheduler slow 10m");
    run(&mut s, "kubectl create deployment web --image=nginx:1.25 --replicas=3");
    let out = run(&mut s, "sim settle");
    assert!(out.stdout.starts_with("not settled after 15m0s of virtual time (the limit): kube-scheduler"), "{out:?}");
    assert!(out.stdout.ends_with(" work\n"), "{out:?}");
}

#[test]
fn events_kept_in_their_own_etcd_expire_too() {
    let config = kubeloop::cluster::ClusterConfig { seed: 2, events_etcd: true, record: false, ..Default::default() };
    let mut s = Session::with_config(config);
    run(&mut s, "kubectl create deployment web --image=nginx:1.25 --replicas=2");
    run(&mut s, "sleep 1m");
    let scheduled = |s: &Session| {
        s.cluster
            .objects(Kind::Event, "default")
            .iter()
            .filter(|e| e.as_event().is_some_and(|e| e.reason == "Scheduled"))
            .count()
    };
    assert_eq!(scheduled(&s), 2);
    run(&mut s, "sleep 62m");
    assert_eq!(scheduled(&s), 0, "an hour after they were written, they are gone");
}

#[test]
fn a_container_shell_sleeps_no_longer_than_the_sandbox_runs_a_command() {
    let mut s = Session::new(2);
    for line in ["kubectl run b --image=busybox:1.36 -- sleep 3600", "sleep 10s", "kubectl exec -it b -- sh"] {
        run(&mut s, line);
    }
    assert_eq!(s.prompt(), Some("/ # "));
    let before = s.cluster.now();
    let out = run(&mut s, "sleep 99999999999999999999");
    assert!(
        out.stderr.starts_with("kubeloop: the sandbox runs at most 6h of virtual time per command; this line slept "),
        "{out:?}"
    );
    assert_eq!(s.cluster.now().since(before), COMMAND_TIME_CAP);
}
