//! The boundary, natively: the same requests give the same frames as driving a session
//! directly, and a frame crosses serialization unchanged.

use super::*;
use crate::page::journal::Journal;
use crate::page::state::Detail;
use crate::shell::{Command, Session};

const CREATE: &str = "kubectl create deployment web --image=nginx --replicas=2";

fn everything() -> FrameQuery {
    FrameQuery {
        past: None,
        board: true,
        board_at: None,
        sequence: true,
        detail: Some(Detail::Controller("replicaset-controller".into(), None)),
    }
}

fn run(line: &str) -> SimRequest {
    SimRequest::Run { line: line.into(), stdin: None, beside: false }
}

#[test]
fn the_same_requests_give_the_same_frame_as_driving_the_session_directly() {
    let mut sim = Simulation::new(7);
    let start = sim.session().cluster.record.last_seq();
    sim.answer(SimRequest::View(everything()));
    let created = sim.answer(run(CREATE));
    assert_eq!(created.output.as_ref().map(|o| o.code), Some(0), "{created:?}");
    sim.answer(SimRequest::Settle);
    let reply = sim.answer(SimRequest::Advance { virtual_ms: 2_000, budget_ms: 6.0 });

    let mut direct = Session::new(7);
    direct.execute(&Command::new(CREATE));
    direct.execute_beside(&Command::new("sim settle"));
    crate::page::update::advance_within(
        &mut direct.cluster,
        crate::sim::Duration(2_000),
        6.0,
        crate::page::state::no_real_clock,
    );
    let expected = frame_of(&direct, &everything(), reply.frame.records.after);
    assert_eq!(reply.frame, expected);
    assert!(reply.frame.records.after > start, "each frame carries only what the last did not");
    assert!(
        reply.frame.snapshot.pods.iter().filter(|p| p.status == "Running").count() == 2,
        "{:?}",
        reply.frame.snapshot.pods
    );
    assert!(reply.frame.board.is_some() && reply.frame.sequence.is_some());
    assert!(matches!(&reply.frame.detail, Some(DetailFrame::Controller { view: Some(_), .. })));
}

#[test]
fn each_frame_carries_the_record_entries_since_the_previous_one() {
    let mut sim = Simulation::new(1);
    let first = sim.answer(run(CREATE)).frame;
    assert!(!first.records.lines.is_empty());
    assert!(
        first.records.lines.iter().any(|l| l.actor == "kubectl" || l.text.contains("deployments")),
        "{:?}",
        first.records.lines
    );
    let quiet = sim.answer(SimRequest::Frame).frame;
    assert_eq!(quiet.records.after, first.last_seq);
    assert!(quiet.records.lines.is_empty(), "nothing happened between the two frames");
}

#[test]
fn a_frame_round_trips_through_json_unchanged() {
    let mut sim = Simulation::new(3);
    sim.answer(SimRequest::View(everything()));
    sim.answer(run(CREATE));
    let reply = sim.answer(SimRequest::Settle);
    let text = serde_json::to_string(&reply).expect("a reply serializes");
    let back: SimReply = serde_json::from_str(&text).expect("and reads back");
    assert_eq!(back, reply);
    let etcd = sim.answer(SimRequest::View(FrameQuery { detail: Some(Detail::Etcd), past: Some(3), ..everything() }));
    let back: SimReply = serde_json::from_str(&serde_json::to_string(&etcd).unwrap()).unwrap();
    assert_eq!(back, etcd);
}

#[test]
fn a_request_round_trips_through_json_unchanged() {
    let requests = vec![
        run(CREATE),
        SimRequest::Run { line: "kubectl apply -f -".into(), stdin: Some("kind: Pod\n".into()), beside: true },
        SimRequest::Step,
        SimRequest::Advance { virtual_ms: 20, budget_ms: 6.0 },
        SimRequest::Settle,
        SimRequest::Reset { seed: 9 },
        SimRequest::Load { journal: Journal::new(4), lesson: None },
        SimRequest::View(everything()),
        SimRequest::Frame,
    ];
    let text = serde_json::to_string(&requests).unwrap();
    assert_eq!(serde_json::from_str::<Vec<SimRequest>>(&text).unwrap(), requests);
}

#[test]
fn a_loaded_journal_replays_to_the_same_frame_as_the_session_it_was_kept_from() {
    let mut journal = Journal::new(5);
    let mut kept = Simulation::new(5);
    journal.command(kept.session().cluster.now(), &Command::new(CREATE));
    kept.answer(run(CREATE));
    kept.answer(SimRequest::Advance { virtual_ms: 3_000, budget_ms: 6.0 });
    journal.now = kept.session().cluster.now().0;

    let mut other = Simulation::new(1);
    let reply = other.answer(SimRequest::Load { journal, lesson: None });
    let replayed = reply.replayed.expect("a load shows the replayed terminal");
    assert!(replayed.iter().any(|l| matches!(l, crate::page::Line::Command(c) if c == CREATE)), "{replayed:?}");
    assert_eq!(other.peek_frame(&everything()).snapshot, kept.peek_frame(&everything()).snapshot);
}

#[test]
fn reset_starts_a_fresh_cluster_of_the_seed() {
    let mut sim = Simulation::new(2);
    sim.answer(run(CREATE));
    let fresh = sim.answer(SimRequest::Reset { seed: 2 }).frame;
    assert!(fresh.snapshot.workloads.is_empty());
    assert_eq!(fresh.snapshot, Simulation::new(2).peek_frame(&FrameQuery::default()).snapshot);
}

#[test]
fn the_schedulers_decision_crosses_as_data_with_its_plugin_names_intact() {
    let mut sim = Simulation::new(4);
    sim.answer(run(CREATE));
    sim.answer(SimRequest::Settle);
    let query = FrameQuery { detail: Some(Detail::Scheduler(None)), ..FrameQuery::default() };
    let reply = sim.answer(SimRequest::View(query));
    let Some(DetailFrame::Scheduler(view)) = &reply.frame.detail else { panic!("{:?}", reply.frame.detail) };
    let table = view.table.as_ref().expect("the latest decision");
    assert!(view.pods.len() >= 2 && view.pods.contains(&table.pod), "{:?}", view.pods);
    assert!(table.filters.contains(&"NodeResourcesFit"), "{:?}", table.filters);
    let back: SimReply = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    assert_eq!(back, reply);
}
