//! The boundary, natively: the same requests give the same frames as driving a session
//! directly, and a frame crosses serialization unchanged.

use super::*;
use crate::page::journal::Journal;
use crate::page::state::Detail;
use crate::shell::{Command, Session};
use crate::views::flow::Place;

const CREATE: &str = "kubectl create deployment web --image=nginx --replicas=2";

fn everything() -> FrameQuery {
    FrameQuery {
        past: None,
        board: true,
        board_at: None,
        sequence: true,
        detail: Some(Detail::Controller("replicaset-controller".into(), None)),
        records: true,
    }
}

fn run(line: &str) -> SimRequest {
    SimRequest::Run { line: line.into(), stdin: None, to_shell: false }
}

/// The frames carry `query`, and the clock plays at `speed` (a tick of 20 ms moves virtual
/// time on by 20 ms × speed).
fn settings(query: FrameQuery, speed: f64) -> SimRequest {
    SimRequest::Settings { query, clock: ClockSettings { playing: speed > 0.0, speed, ..ClockSettings::default() } }
}

/// A frame as `frame_of` builds it: without the map's messages, which only the simulation's
/// own frames carry.
fn still(frame: &Frame) -> Frame {
    Frame { flow: FlowFrame::default(), ..frame.clone() }
}

#[test]
fn the_same_requests_give_the_same_frame_as_driving_the_session_directly() {
    let mut sim = Simulation::new(7);
    let start = sim.session().cluster.record.last_seq();
    sim.answer(settings(everything(), 100.0));
    let created = sim.answer(run(CREATE));
    assert_eq!(created.output.as_ref().map(|o| o.code), Some(0), "{created:?}");
    let settled = sim.answer(SimRequest::Settle);
    assert!(settled.frame.board.is_some(), "the map's board changed");
    let reply = sim.answer(SimRequest::Tick { now_ms: 0.0 });

    let mut direct = Session::new(7);
    direct.execute(&Command::new(CREATE));
    direct.execute_beside(&Command::new("sim settle"));
    simulation::advance_within(&mut direct.cluster, crate::sim::Duration(2_000), 6.0, simulation::no_real_clock);
    let expected = frame_of(&direct, &everything(), reply.frame.records.after);
    // The same frame, but for the board: the scheduler's and controller manager's Leases are
    // renewed every two seconds, so the record moved and whether the board is sent again
    // depends on when the last frame was taken.
    assert_eq!(
        Frame { board: None, layout: None, ..still(&reply.frame) },
        Frame { board: None, layout: None, ..expected }
    );
    assert!(reply.frame.records.after > start, "each frame carries only what the last did not");
    let pods = &reply.frame.snapshot.as_ref().expect("the tables changed").pods;
    assert!(pods.iter().filter(|p| p.status == "Running").count() == 2, "{pods:?}");
    assert!(reply.frame.sequence.is_some());
    assert!(matches!(&reply.frame.detail, Some(DetailFrame::Controller { view: Some(_), .. })));
}

#[test]
fn each_frame_carries_the_record_entries_since_the_previous_one() {
    let mut sim = Simulation::new(1);
    sim.answer(settings(FrameQuery { records: true, ..FrameQuery::default() }, 0.0));
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
    sim.answer(settings(everything(), 0.0));
    sim.answer(run(CREATE));
    let reply = sim.answer(SimRequest::Settle);
    let text = serde_json::to_string(&reply).expect("a reply serializes");
    let back: SimReply = serde_json::from_str(&text).expect("and reads back");
    assert_eq!(rejoined(back, &reply), reply);
    let etcd = sim.answer(settings(FrameQuery { detail: Some(Detail::Etcd), past: Some(3), ..everything() }, 0.0));
    let back: SimReply = serde_json::from_str(&serde_json::to_string(&etcd).unwrap()).unwrap();
    assert_eq!(rejoined(back, &etcd), etcd);
}

#[test]
fn a_request_round_trips_through_json_unchanged() {
    let requests = vec![
        run(CREATE),
        SimRequest::Run { line: "kubectl apply -f -".into(), stdin: Some("kind: Pod\n".into()), to_shell: true },
        SimRequest::EditSave { opened: "a: 1\n".into(), text: "a: 2\n".into() },
        SimRequest::Step,
        SimRequest::Tick { now_ms: 20.5 },
        SimRequest::Settle,
        SimRequest::Reset { seed: 9 },
        SimRequest::Load { journal: Journal::new(4), lesson: None, step: Some(2) },
        settings(everything(), 2.0),
        SimRequest::Inspect("pod/web".into()),
        SimRequest::Follow,
        SimRequest::Spotlight { seq: 12, now_ms: 1.5 },
        SimRequest::Complete("kubectl get no".into()),
        SimRequest::Interrupt,
        SimRequest::LessonGo(1),
        SimRequest::Export,
        SimRequest::Frame,
    ];
    let text = serde_json::to_string(&requests).unwrap();
    assert_eq!(serde_json::from_str::<Vec<SimRequest>>(&text).unwrap(), requests);
}

#[test]
fn a_loaded_journal_replays_to_the_same_frame_as_the_session_it_was_kept_from() {
    let mut kept = Simulation::new(5);
    kept.answer(run(CREATE));
    kept.answer(settings(FrameQuery::default(), 100.0));
    kept.answer(SimRequest::Tick { now_ms: 0.0 });
    let mut journal = kept.journal().clone();
    assert_eq!(journal.entries.len(), 1, "the simulation keeps the commands it ran");
    journal.now = kept.session().cluster.now().0;

    let mut other = Simulation::new(1);
    let reply = other.answer(SimRequest::Load { journal, lesson: None, step: None });
    let replayed = reply.replayed.expect("a load shows the replayed terminal");
    assert!(replayed.iter().any(|l| matches!(l, crate::page::Line::Command(c) if c == CREATE)), "{replayed:?}");
    assert_eq!(other.peek_frame(&everything()).snapshot, kept.peek_frame(&everything()).snapshot);
}

#[test]
fn reset_starts_a_fresh_cluster_of_the_seed() {
    let mut sim = Simulation::new(2);
    sim.answer(run(CREATE));
    let reply = sim.answer(SimRequest::Reset { seed: 2 });
    let fresh = reply.frame.snapshot.expect("a new cluster's tables");
    assert!(fresh.workloads.is_empty());
    assert_eq!(Some(fresh), Simulation::new(2).peek_frame(&FrameQuery::default()).snapshot);
    assert_eq!(reply.journal, Some(JournalChange::Replace(Journal::new(2))), "and a fresh journal");
}

#[test]
fn the_schedulers_decision_crosses_as_data_with_its_plugin_names_intact() {
    let mut sim = Simulation::new(4);
    sim.answer(run(CREATE));
    sim.answer(SimRequest::Settle);
    let query = FrameQuery { detail: Some(Detail::Scheduler(None)), ..FrameQuery::default() };
    let reply = sim.answer(settings(query, 0.0));
    let Some(DetailFrame::Scheduler(view)) = &reply.frame.detail else { panic!("{:?}", reply.frame.detail) };
    let table = view.table.as_ref().expect("the latest decision");
    assert!(view.pods.len() >= 2 && view.pods.contains(&table.pod), "{:?}", view.pods);
    assert!(table.filters.contains(&"NodeResourcesFit"), "{:?}", table.filters);
    let back: SimReply = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
    assert_eq!(rejoined(back, &reply), reply);
}

/// A reply read back from JSON with its board whole again, as the page takes it, the page
/// having the layout `sent` was built with (the one it was sent last, when `sent` has none).
fn rejoined(mut reply: SimReply, sent: &SimReply) -> SimReply {
    let known = sent.frame.board.as_ref().map(|b| b.layout.clone()).unwrap_or_default();
    reply.frame.board = reply.frame.whole_board(&known);
    reply
}

#[test]
fn a_boards_layout_is_sent_again_only_when_it_changed() {
    let mut sim = Simulation::new(2);
    let first = sim.answer(run(CREATE));
    let layout = first.frame.layout.clone().expect("the first board brings its layout");
    assert_eq!(first.frame.board.as_ref().map(|b| &b.layout), Some(&layout));
    let next = sim.answer(run("kubectl scale deployment web --replicas=3"));
    assert!(next.frame.board.is_some(), "the board changed");
    assert_eq!(next.frame.layout, None, "its layout did not");
    let back: SimReply = serde_json::from_str(&serde_json::to_string(&next).unwrap()).unwrap();
    assert_eq!(back.frame.whole_board(&layout), next.frame.board, "the page puts it back whole");
    let grown = sim.answer(run("sim node add worker-4"));
    let settled = sim.answer(SimRequest::Settle);
    let sent = grown.frame.layout.or(settled.frame.layout).expect("a new node: a new layout");
    assert!(sent.nodes.iter().any(|n| n.name == "worker-4"));
}

#[test]
fn the_journal_and_the_tables_come_only_when_they_changed() {
    let mut sim = Simulation::new(1);
    let created = sim.answer(run(CREATE));
    assert!(
        matches!(&created.journal, Some(JournalChange::Replace(j)) if j.entries.len() == 1),
        "{:?}",
        created.journal
    );
    assert!(created.frame.snapshot.is_some());
    let again = sim.answer(SimRequest::Frame);
    assert_eq!(again.journal, None, "nothing was run since");
    assert_eq!(again.frame.snapshot, None, "nothing moved since");
    assert_eq!(again.frame.board, None);
}

#[test]
fn a_command_sends_its_message_at_once_and_a_paused_tick_moves_messages_but_not_virtual_time() {
    let mut sim = Simulation::new(1);
    sim.answer(settings(FrameQuery::default(), 0.0));
    let created = sim.answer(run(CREATE));
    let flow = &created.frame.flow;
    let post = flow.messages.iter().find(|m| m.from == Place::Kubectl).expect("the POST leaves kubectl at once");
    assert_eq!(post.started_ms, 0.0);
    assert!(flow.busy && flow.moving(flow.travel_ms / 2.0));
    assert!(!flow.moving(flow.travel_ms));
    let halfway = flow.at(flow.travel_ms / 2.0);
    assert!(halfway.iter().all(|m| (m.progress - 0.5).abs() < 1e-9), "{halfway:?}");
    let before = sim.now();
    let later = sim.answer(SimRequest::Tick { now_ms: 10_000.0 });
    assert_eq!(sim.now(), before, "paused");
    assert!(later.frame.flow.messages.iter().all(|m| m.started_ms > 0.0), "the arrived ones left, others departed");
}

#[test]
fn at_the_teaching_pace_a_tick_runs_only_until_the_map_has_a_hop_to_show() {
    let mut sim = Simulation::new(1);
    let teaching = ClockSettings { playing: true, teaching: true, ..ClockSettings::default() };
    sim.answer(SimRequest::Settings { query: FrameQuery::default(), clock: teaching });
    sim.answer(run(CREATE));
    let first = sim.answer(SimRequest::Tick { now_ms: 0.0 });
    assert_eq!(first.frame.flow.messages.len(), 1, "one hop at a time: {:?}", first.frame.flow.messages);
    assert!(!first.frame.flow.caption.is_empty(), "each with its sentence");
    let seq = sim.session().cluster.record.last_seq();
    sim.answer(SimRequest::Tick { now_ms: 100.0 });
    assert_eq!(sim.session().cluster.record.last_seq(), seq, "the simulation waits while the hop travels");
}

#[test]
fn a_live_watch_sends_its_rows_as_time_passes_until_interrupted() {
    let mut sim = Simulation::new(1);
    let started = sim.answer(run("kubectl get pods -w"));
    assert!(started.watching && sim.watching());
    sim.answer(run(CREATE));
    sim.answer(settings(FrameQuery::default(), 10.0));
    let rows: String =
        (0..20).filter_map(|i| sim.answer(SimRequest::Tick { now_ms: f64::from(i) * 20.0 }).watch_rows).collect();
    assert!(rows.contains("web-"), "{rows}");
    sim.answer(SimRequest::Interrupt);
    assert!(!sim.watching());
}

#[test]
fn kubectl_edit_opens_the_object_and_its_save_is_kept_as_the_patch_it_sent() {
    let mut sim = Simulation::new(1);
    sim.answer(run(CREATE));
    let opened = sim.answer(run("kubectl edit deployment web")).opened.expect("the object opens");
    assert_eq!(opened.what, "deployment web");
    let text = opened.text.replace("replicas: 2", "replicas: 3");
    let saved = sim.answer(SimRequest::EditSave { opened: opened.text, text });
    assert_eq!(saved.output.as_ref().map(|o| o.code), Some(0), "{saved:?}");
    let Some(JournalChange::Append { entries, .. }) = saved.journal else { panic!("{:?}", saved.journal) };
    assert!(entries.len() == 1 && entries[0].line.contains("patch"), "{entries:?}");
}

#[test]
fn completion_the_inspector_follow_and_export_answer_as_data() {
    let mut sim = Simulation::new(1);
    let done = sim.answer(SimRequest::Complete("kubectl get no".into())).completion.unwrap();
    assert!(done.line.starts_with("kubectl get node"), "{done:?}");
    sim.answer(run("kubectl run web --image=nginx"));
    let view = sim.answer(SimRequest::Inspect("pod/web".into())).inspection.unwrap();
    assert_eq!(view.title, "pod/web");
    assert!(!sim.answer(SimRequest::Follow).following.unwrap().is_empty());
    let file = sim.answer(SimRequest::Export).export.unwrap();
    assert_eq!(file.objects, 1);
    assert!(file.text.contains("name: web"));
}

thread_local! {
    /// The fake real clock's time, and how far each reading moves it on.
    static FAKE_MS: std::cell::Cell<(f64, f64)> = const { std::cell::Cell::new((0.0, 0.0)) };
}

fn fake_real_ms() -> f64 {
    FAKE_MS.with(|c| {
        let (now, step) = c.get();
        c.set((now + step, step));
        now
    })
}

fn set_fake_ms(now: f64, step: f64) {
    FAKE_MS.with(|c| c.set((now, step)));
}

#[test]
fn tables_that_were_costly_to_build_come_less_often_while_the_clock_runs() {
    let mut sim = Simulation::new(1);
    sim.set_real_clock(fake_real_ms, 6.0);
    sim.answer(settings(everything(), 1.0));
    // The first tick builds the tables, and that takes 40 ms (each reading of the clock 40 ms on).
    set_fake_ms(0.0, 40.0);
    assert!(sim.answer(SimRequest::Tick { now_ms: 0.0 }).frame.snapshot.is_some());
    // 40 ms × 25: the next tables come a second later, not 100 ms later.
    set_fake_ms(1000.0, 0.0);
    assert!(sim.answer(SimRequest::Tick { now_ms: 1000.0 }).frame.snapshot.is_none(), "within the second");
    set_fake_ms(2500.0, 0.0);
    assert!(sim.answer(SimRequest::Tick { now_ms: 2500.0 }).frame.snapshot.is_some(), "a second on");
    // Cheap to build (no time at all), they come every 100 ms again.
    set_fake_ms(2700.0, 0.0);
    assert!(sim.answer(SimRequest::Tick { now_ms: 2700.0 }).frame.snapshot.is_some(), "200 ms on");
}

#[test]
fn a_page_that_starts_with_nothing_saved_is_given_the_cluster_already_booted() {
    let mut sim = Simulation::new(5);
    sim.answer(settings(everything(), 0.0));
    let booted = sim.session().cluster.record.last_seq();
    let loaded = sim.answer(SimRequest::Load { journal: Journal::new(5), lesson: None, step: None });
    assert_eq!(loaded.replayed, Some(Vec::new()));
    assert!(loaded.frame.board.is_some() && loaded.frame.snapshot.is_some(), "the page is sent everything");
    assert!(matches!(loaded.journal, Some(JournalChange::Replace(_))), "{:?}", loaded.journal);
    assert_eq!(sim.session().cluster.record.last_seq(), booted, "not booted again");
    // The same as a cluster booted afresh.
    assert_eq!(sim.peek_frame(&everything()), Simulation::new(5).peek_frame(&everything()));
    // Once something has run, an empty journal is a new cluster.
    sim.answer(run(CREATE));
    sim.answer(SimRequest::Load { journal: Journal::new(5), lesson: None, step: None });
    assert_eq!(sim.peek_frame(&everything()), Simulation::new(5).peek_frame(&everything()));
    let other = sim.answer(SimRequest::Load { journal: Journal::new(6), lesson: None, step: None });
    assert!(other.frame.board.is_some());
    assert_eq!(sim.peek_frame(&everything()), Simulation::new(6).peek_frame(&everything()));
}

/// A clock that moves 30 ms each time it is read (so that every slice of a replay is short).
fn hurried_clock() -> f64 {
    use std::cell::Cell;
    thread_local!(static NOW: Cell<f64> = const { Cell::new(0.0) });
    NOW.with(|n| {
        n.set(n.get() + 30.0);
        n.get()
    })
}

#[test]
fn a_long_session_replays_in_slices_that_say_how_far_they_came_and_end_where_one_replay_ends() {
    let mut journal = Journal::new(8);
    let at = |s: u64| crate::sim::Time(60_000 + s * 1000);
    journal.command(at(0), &Command::new(CREATE));
    journal.command(at(1), &Command::new("kubectl create cronjob tick --image=busybox --schedule='* * * * *' -- date"));
    journal.command(at(2), &Command::new("sleep 20m"));
    journal.command(at(1300), &Command::new("kubectl get pods"));
    journal.now = at(2000).0;
    let load = || SimRequest::Load { journal: journal.clone(), lesson: None, step: None };

    let mut whole = Simulation::new(1);
    let done = whole.answer(load());
    assert!(done.loading.is_none() && done.replayed.as_ref().is_some_and(|l| !l.is_empty()), "natively at once");

    let mut sim = Simulation::new(1);
    sim.set_real_clock(hurried_clock, 6.0);
    let mut reply = sim.answer(load());
    let mut seen = Vec::new();
    while let Some(progress) = reply.loading {
        assert_eq!(reply.journal, None, "the page keeps the journal it is replaying");
        assert!(reply.replayed.is_none());
        seen.push(progress);
        // Anything else asked meanwhile waits for the replay.
        assert!(sim.answer(SimRequest::Tick { now_ms: 0.0 }).loading.is_none());
        reply = sim.answer(SimRequest::LoadMore);
    }
    assert!(seen.len() >= 2 && seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert_eq!(reply.replayed, done.replayed, "the same terminal");
    assert!(matches!(reply.journal, Some(JournalChange::Replace(ref j)) if *j == journal));
    assert_eq!(sim.peek_frame(&everything()), whole.peek_frame(&everything()), "the same cluster");
}

/// The journal a session has run so far, with its clock where the session's is.
fn journal_now(sim: &Simulation) -> Journal {
    Journal { now: sim.session().cluster.now().0, ..sim.journal().clone() }
}

/// Every record entry, as text: what two sessions that should be the same are compared by.
fn record_text(sim: &Simulation) -> Vec<String> {
    sim.session().cluster.record.entries().map(|e| format!("{:?}", e)).collect()
}

#[test]
fn a_session_that_holds_a_journals_start_goes_on_with_the_rest_and_ends_as_a_full_replay() {
    // The student's session, as the page's worker holds it when its memory is saved…
    let mut live = Simulation::new(3);
    live.answer(run(CREATE));
    live.answer(run("sleep 30s"));
    live.answer(SimRequest::Step);
    let saved = journal_now(&live);
    // …and what it went on to do after that, which the page's saved journal has too.
    live.answer(run("kubectl scale deployment web --replicas=4"));
    live.answer(run("kubectl create configmap c --from-literal=a=1"));
    live.answer(run("sleep 20s"));
    let later = journal_now(&live);

    // A worker restored from the saved memory holds `saved`'s session: it goes on.
    let mut restored = Simulation::new(9);
    restored.answer(SimRequest::Load { journal: saved, lesson: None, step: None });
    assert!(restored.go_on_with(&later), "the restored session holds the later journal's start");
    let went_on = restored.answer(SimRequest::Load { journal: later.clone(), lesson: None, step: None });

    let mut replayed = Simulation::new(9);
    let full = replayed.answer(SimRequest::Load { journal: later.clone(), lesson: None, step: None });
    assert_eq!(record_text(&restored), record_text(&replayed));
    assert_eq!(record_text(&restored), record_text(&live));
    assert_eq!(restored.session().cluster.now(), replayed.session().cluster.now());
    assert_eq!(went_on.replayed, full.replayed, "the terminal shows the same commands and outputs");
    assert_eq!(restored.journal(), &later);
    let pods = |sim: &mut Simulation| sim.answer(run("kubectl get pods -o wide")).output.map(|o| o.stdout);
    assert_eq!(pods(&mut restored), pods(&mut replayed));
}

#[test]
fn a_session_does_not_go_on_with_another_journal_or_one_that_starts_before_its_clock() {
    let mut live = Simulation::new(3);
    live.answer(run(CREATE));
    let mut held = Simulation::new(9);
    held.answer(SimRequest::Load { journal: journal_now(&live), lesson: None, step: None });

    let mut other_seed = journal_now(&live);
    other_seed.seed = 4;
    assert!(!held.go_on_with(&other_seed));
    let mut other_topology = journal_now(&live);
    other_topology.control_planes = 3;
    assert!(!held.go_on_with(&other_topology));
    let mut other_command = journal_now(&live);
    other_command.entries[0].line = "kubectl create deployment api --image=nginx".into();
    assert!(!held.go_on_with(&other_command));
    let mut earlier = journal_now(&live);
    earlier.now = 0;
    assert!(!held.go_on_with(&earlier), "a journal saved before the session's clock cannot be gone on with");
    let mut far = journal_now(&live);
    far.now += 3_600_000;
    assert!(!held.go_on_with(&far), "an hour to run is replayed in slices, with its progress shown");
    // A compacted journal (a failed command's input dropped) still counts as the same.
    let mut compacted = journal_now(&live);
    compacted.entries[0].skipped = true;
    assert!(held.go_on_with(&compacted));
}

#[test]
fn a_journal_of_three_control_planes_starts_the_ha_topology_and_replays_on_it() {
    let mut sim = Simulation::new(5);
    let journal = Journal { control_planes: 3, ..Journal::new(5) };
    sim.answer(SimRequest::Load { journal: journal.clone(), lesson: None, step: None });
    assert_eq!(sim.session().cluster.control_plane_nodes(), ["control-plane", "control-plane2", "control-plane3"]);
    // Kept with the session, so that a reload or a shared link replays on the same topology.
    assert_eq!(sim.journal().control_planes, 3);
    let text = serde_json::to_string(sim.journal()).expect("encodes");
    assert!(text.contains("\"controlPlanes\":3"), "{text}");
    let again: Journal = serde_json::from_str(&text).expect("decodes");
    assert_eq!(again.replay(None).cluster.control_plane_nodes().len(), 3);
    // Without it, one control plane, as before.
    assert!(!serde_json::to_string(&Journal::new(5)).expect("encodes").contains("controlPlanes"));
    // The page's reset starts a fresh cluster of the same topology.
    sim.answer(SimRequest::Reset { seed: 6 });
    assert_eq!(sim.session().cluster.control_plane_nodes().len(), 3);
    assert_eq!(sim.journal().control_planes, 3);
}

#[test]
fn a_page_that_has_been_sent_nothing_gets_its_first_frame_with_its_load_not_with_its_settings() {
    let mut sim = Simulation::new(1);
    let told = sim.answer(settings(everything(), 1.0));
    assert!(told.frame.snapshot.is_none() && told.frame.board.is_none() && told.journal.is_none(), "{told:?}");
    let loaded = sim.answer(SimRequest::Load { journal: Journal::new(1), lesson: None, step: None });
    assert!(loaded.frame.snapshot.is_some() && loaded.frame.board.is_some(), "the load brings the first frame");
    assert!(loaded.journal.is_some(), "and the journal");
    // Once the page has its frame, new settings bring the views they ask for at once.
    let again = sim.answer(settings(FrameQuery { sequence: false, ..everything() }, 1.0));
    assert!(again.frame.snapshot.is_some(), "{again:?}");
}
