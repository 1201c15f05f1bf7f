//! The page's update, natively: each action's change to the state and the effects it asks of
//! the browser.

use super::*;
use crate::page::sim::SimRequest;
use crate::shell::Command;
use std::rc::Rc;

fn sandbox() -> Driver {
    Driver::open(PageConfig { seed: 1, start_paused: true, ..PageConfig::default() })
}

/// The page's update with the simulation's replies fed back (`Driver`).
fn update(page: &mut Driver, action: Action) -> Vec<Effect> {
    page.update(action)
}

fn lesson() -> Driver {
    let source: Rc<str> = Rc::from(include_str!("../../lessons/03-reconcile.md"));
    Driver::open(PageConfig {
        seed: 1,
        start_paused: true,
        lesson: Some("03-reconcile".into()),
        lesson_source: Some(Ok(source)),
        ..PageConfig::default()
    })
}

fn enter(state: &mut Driver, line: &str) -> Vec<Effect> {
    update(state, Action::TerminalKey(Key::Enter, line.into()))
}

fn lines(state: &Driver) -> Vec<Line> {
    state.terminal.lines.to_vec()
}

#[test]
fn typing_a_command_and_pressing_enter_runs_it_and_shows_it_in_the_terminal() {
    let mut s = sandbox();
    let fx = enter(&mut s, "kubectl get nodes");
    let shown = lines(&s);
    assert_eq!(shown[0], Line::Command("kubectl get nodes".into()));
    assert!(matches!(&shown[1], Line::Out(o) if o.contains("NAME")), "{shown:?}");
    assert_eq!(s.terminal.history, vec!["kubectl get nodes".to_string()]);
    assert!(fx.contains(&Effect::SetInput(String::new())));
    assert!(fx.contains(&Effect::Save));
    assert!(fx.contains(&Effect::Redraw));
    assert_eq!(s.journal.borrow().entries.len(), 1);
}

#[test]
fn enter_on_an_empty_line_does_nothing() {
    let mut s = sandbox();
    assert!(enter(&mut s, "  ").is_empty());
    assert!(lines(&s).is_empty());
    assert!(s.terminal.history.is_empty());
}

#[test]
fn the_arrows_recall_the_history_and_go_back_to_an_empty_line() {
    let mut s = sandbox();
    enter(&mut s, "kubectl get nodes");
    enter(&mut s, "kubectl get pods");
    let up = |s: &mut Driver| update(s, Action::TerminalKey(Key::Up, String::new()));
    assert!(up(&mut s).contains(&Effect::SetInput("kubectl get pods".into())));
    assert!(up(&mut s).contains(&Effect::SetInput("kubectl get nodes".into())));
    assert!(up(&mut s).contains(&Effect::SetInput("kubectl get nodes".into())));
    let down = update(&mut s, Action::TerminalKey(Key::Down, String::new()));
    assert_eq!(down, vec![Effect::KeyHandled, Effect::SetInput("kubectl get pods".into())]);
    let down = update(&mut s, Action::TerminalKey(Key::Down, String::new()));
    assert!(down.contains(&Effect::SetInput(String::new())));
}

#[test]
fn tab_completes_the_input_line_without_running_it() {
    let mut s = sandbox();
    let fx = update(&mut s, Action::TerminalKey(Key::Tab, "kubectl get no".into()));
    assert!(fx.contains(&Effect::KeyHandled));
    assert!(fx.iter().any(|e| matches!(e, Effect::SetInput(l) if l.starts_with("kubectl get node"))), "{fx:?}");
    assert!(s.journal.borrow().entries.is_empty());
}

#[test]
fn ctrl_c_abandons_the_line_and_shows_it_with_a_caret_c() {
    let mut s = sandbox();
    let fx = update(&mut s, Action::TerminalKey(Key::CtrlC, "kubectl get po".into()));
    assert_eq!(lines(&s), vec![Line::Command("kubectl get po^C".into())]);
    assert!(fx.contains(&Effect::KeyHandled) && fx.contains(&Effect::SetInput(String::new())));
}

#[test]
fn ctrl_d_outside_a_container_shell_is_left_to_the_browser() {
    let mut s = sandbox();
    assert!(update(&mut s, Action::TerminalKey(Key::CtrlD, String::new())).is_empty());
}

#[test]
fn a_live_watch_stays_open_and_ctrl_c_stops_it() {
    let mut s = sandbox();
    enter(&mut s, "kubectl get pods -w");
    assert!(s.sim.watching());
    update(&mut s, Action::TerminalKey(Key::CtrlC, String::new()));
    assert!(!s.sim.watching());
}

#[test]
fn the_scrollback_keeps_only_its_last_lines() {
    let mut s = sandbox();
    for _ in 0..(terminal::SCROLLBACK / 2 + 10) {
        enter(&mut s, "kubectl get nodes");
    }
    assert!(lines(&s).len() <= terminal::SCROLLBACK);
}

#[test]
fn choosing_a_speed_leaves_the_teaching_pace_and_choosing_teaching_goes_back() {
    let mut s = sandbox();
    assert!(s.clock.teaching, "the sandbox opens at the teaching pace");
    let fx = update(&mut s, Action::Speed("5".into()));
    assert!(!s.clock.teaching);
    assert_eq!(s.clock.speed, 5.0);
    assert_eq!(fx, vec![Effect::Redraw]);
    update(&mut s, Action::Speed("teaching".into()));
    assert!(s.clock.teaching);
    update(&mut s, Action::Speed("fast".into()));
    assert!(s.clock.teaching, "a value that is no speed changes nothing");
}

#[test]
fn pause_and_play_toggle_the_clock_and_a_paused_tick_changes_nothing() {
    let mut s = sandbox();
    assert!(!s.clock.playing);
    let now = s.sim.session().cluster.now();
    assert!(update(&mut s, Action::Tick).is_empty());
    assert_eq!(s.sim.session().cluster.now(), now);
    update(&mut s, Action::TogglePlay);
    assert!(s.clock.playing);
    update(&mut s, Action::Shortcut(' '));
    assert!(!s.clock.playing, "space is play/pause");
}

#[test]
fn a_tick_at_a_chosen_speed_moves_virtual_time_by_the_tick_times_the_speed() {
    let mut s = sandbox();
    update(&mut s, Action::Speed("2".into()));
    update(&mut s, Action::TogglePlay);
    let before = s.sim.session().cluster.now();
    let fx = update(&mut s, Action::Tick);
    let moved = s.sim.session().cluster.now().since(before);
    assert_eq!(moved, crate::sim::Duration(u64::from(update::TICK_MS) * 2));
    assert_eq!(fx, vec![Effect::RedrawIfDue]);
    assert_eq!(s.clock.ticks, 1);
}

#[test]
fn the_clock_saves_the_session_every_two_seconds_of_ticks() {
    let mut s = sandbox();
    update(&mut s, Action::Speed("1".into()));
    update(&mut s, Action::TogglePlay);
    let saves =
        (0..2 * update::TICKS_PER_S).flat_map(|_| update(&mut s, Action::Tick)).filter(|e| *e == Effect::Save).count();
    assert_eq!(saves, 1);
    assert_eq!(s.journal.borrow().now, s.sim.session().cluster.now().0);
}

#[test]
fn changing_the_pace_starts_the_clocks_count_afresh() {
    let mut s = sandbox();
    update(&mut s, Action::TogglePlay);
    update(&mut s, Action::Tick);
    assert_eq!(s.clock.ticks, 1);
    update(&mut s, Action::Speed("10".into()));
    assert_eq!(s.clock.ticks, 0);
}

#[test]
fn step_runs_one_component_and_is_kept_in_the_journal() {
    let mut s = sandbox();
    let seq = s.sim.session().cluster.record.last_seq();
    let fx = update(&mut s, Action::Step);
    assert!(s.sim.session().cluster.record.last_seq() >= seq);
    assert_eq!(s.journal.borrow().entries.len(), 1);
    assert!(fx.contains(&Effect::Save));
}

#[test]
fn skip_to_settled_runs_sim_settle_and_skips_the_maps_story() {
    let mut s = sandbox();
    update(
        &mut s,
        Action::Run(
            "kubectl create deployment web --image=nginx".into(),
            Command::new("kubectl create deployment web --image=nginx"),
        ),
    );
    update(&mut s, Action::Shortcut('s'));
    assert!(lines(&s).contains(&Line::Command("sim settle".into())));
    assert!(s.view.flow.messages.is_empty(), "the map has nothing left to tell");
}

#[test]
fn presenter_mode_plays_at_the_teaching_pace_and_leaving_it_restores_one_times() {
    let mut s = sandbox();
    update(&mut s, Action::Speed("10".into()));
    update(&mut s, Action::TogglePresenter);
    assert!(s.clock.presenter && s.clock.teaching);
    assert_eq!(s.clock.speed, 1.0);
    update(&mut s, Action::Shortcut('p'));
    assert!(!s.clock.presenter && !s.clock.teaching);
}

#[test]
fn a_click_on_the_map_opens_a_view_under_it_or_a_pod_in_the_inspector() {
    let mut s = sandbox();
    update(&mut s, Action::Pick("etcd".into()));
    assert_eq!(s.detail, Some(Detail::Etcd));
    update(&mut s, Action::Pick("controller/deployment".into()));
    assert_eq!(s.detail, Some(Detail::Controller("deployment".into(), None)));
    update(&mut s, Action::Detail(None));
    assert_eq!(s.detail, None);
    enter(&mut s, "kubectl run web --image=nginx");
    update(&mut s, Action::Pick("pod/web".into()));
    assert_eq!(s.inspected.as_ref().map(|v| v.title.as_str()), Some("pod/web"));
    update(&mut s, Action::CloseInspector);
    assert!(s.inspected.is_none());
}

#[test]
fn following_the_last_apply_pauses_the_clock_and_unfollowing_clears_the_spotlight() {
    let mut s = sandbox();
    update(&mut s, Action::TogglePlay);
    enter(&mut s, "kubectl run web --image=nginx");
    update(&mut s, Action::Follow);
    assert!(!s.clock.playing);
    assert!(s.following.is_some());
    update(&mut s, Action::FollowStep(3));
    assert_eq!(s.spotlight, Some(3));
    update(&mut s, Action::Unfollow);
    assert!(s.following.is_none() && s.spotlight.is_none());
}

#[test]
fn scrubbing_back_shows_a_past_revision_and_to_the_end_shows_now() {
    let mut s = sandbox();
    update(&mut s, Action::TogglePlay);
    enter(&mut s, "kubectl run web --image=nginx");
    let (_, latest) = s.revisions();
    update(&mut s, Action::Scrub(latest - 1));
    assert_eq!(s.past, Some(latest - 1));
    assert!(!s.clock.playing, "time travel pauses the clock");
    update(&mut s, Action::Scrub(latest));
    assert_eq!(s.past, None);
    update(&mut s, Action::SequenceSelect(7, latest - 1));
    assert_eq!((s.spotlight, s.past), (Some(7), Some(latest - 1)));
    update(&mut s, Action::BackToNow);
    assert_eq!(s.past, None);
}

#[test]
fn an_apply_that_fails_marks_the_editor_and_typing_clears_the_marks() {
    let mut s = sandbox();
    update(&mut s, Action::Manifest(ManifestAction::Apply, "kind: Pod\nmetadata: [\n".into()));
    let (ok, _) = s.editor.result.clone().unwrap();
    assert!(!ok);
    assert!(matches!(lines(&s).last(), Some(Line::Err(_))));
    if !s.editor.marks.is_empty() {
        assert_eq!(update(&mut s, Action::EditorTyped), vec![Effect::Redraw]);
        assert!(s.editor.marks.is_empty());
    }
    assert!(update(&mut s, Action::EditorTyped).is_empty(), "typing without marks redraws nothing");
}

#[test]
fn an_apply_of_an_example_creates_its_objects_and_says_so() {
    let mut s = sandbox();
    let fx = update(&mut s, Action::Example("deployment".into()));
    let text = crate::views::examples::EXAMPLES[0].manifest.to_string();
    assert!(fx.contains(&Effect::SetEditorText(text.clone())));
    update(&mut s, Action::Manifest(ManifestAction::Apply, text));
    let (ok, said) = s.editor.result.clone().unwrap();
    assert!(ok, "{said}");
    assert!(said.contains("created"), "{said}");
    assert_eq!(lines(&s)[0], Line::Command("kubectl apply -f - < manifest.yaml".into()));
}

#[test]
fn kubectl_edit_opens_the_object_in_the_editor_and_save_sends_the_change() {
    let mut s = sandbox();
    enter(&mut s, "kubectl create deployment web --image=nginx");
    let fx = enter(&mut s, "kubectl edit deployment web");
    let opened = s.editor.editing.clone().expect("the editor has the object");
    assert!(fx.contains(&Effect::SetEditorText(opened.opened.clone())));
    assert!(fx.contains(&Effect::FocusEditor));
    let changed = opened.opened.replace("replicas: 1", "replicas: 2");
    update(&mut s, Action::Manifest(ManifestAction::Apply, changed));
    assert!(s.editor.editing.is_none(), "{:?}", s.editor.result);
    assert_eq!(s.editor.result.as_ref().map(|r| r.0), Some(true));
}

#[test]
fn share_saves_first_then_asks_for_the_link_and_shows_what_it_said() {
    let mut s = sandbox();
    let fx = update(&mut s, Action::Share);
    assert_eq!(&fx[..2], &[Effect::Save, Effect::Share]);
    update(&mut s, Action::Note("copy it".into()));
    assert_eq!(s.share_note, "copy it");
}

#[test]
fn export_offers_the_objects_the_student_made_as_a_file() {
    let mut s = sandbox();
    enter(&mut s, "kubectl create deployment web --image=nginx");
    let fx = update(&mut s, Action::Export);
    let Some(Effect::Download { file, text, note }) = fx.first() else { panic!("{fx:?}") };
    assert_eq!(file, "kubeloop-export.yaml");
    assert!(text.contains("name: web"), "{text}");
    assert!(note.contains("1 object(s)"), "{note}");
}

#[test]
fn reset_starts_a_fresh_cluster_clears_the_terminal_and_the_address() {
    let mut s = sandbox();
    enter(&mut s, "kubectl run web --image=nginx");
    s.share_note = "shared".into();
    let fx = update(&mut s, Action::Reset);
    assert!(lines(&s).is_empty());
    assert!(s.journal.borrow().entries.is_empty());
    assert!(s.share_note.is_empty());
    assert!(fx.contains(&Effect::Save) && fx.contains(&Effect::ClearAddressHash));
}

#[test]
fn loading_a_session_replays_it_into_the_terminal() {
    let mut s = sandbox();
    enter(&mut s, "kubectl run web --image=nginx");
    let journal = s.journal.borrow().clone();
    let mut other = sandbox();
    update(&mut other, Action::Load(Some(journal)));
    assert_eq!(lines(&other)[0], Line::Command("kubectl run web --image=nginx".into()));
    assert_eq!(other.journal.borrow().entries.len(), 1);
    assert_eq!(update(&mut other, Action::Load(None)), vec![Effect::Redraw]);
}

#[test]
fn a_page_opened_with_a_saved_session_shows_its_commands() {
    let mut s = sandbox();
    enter(&mut s, "kubectl run web --image=nginx");
    let journal = s.journal.borrow().clone();
    let reopened = Driver::open(PageConfig { seed: 1, journal: Some(journal), ..PageConfig::default() });
    assert_eq!(lines(&reopened)[0], Line::Command("kubectl run web --image=nginx".into()));
    assert!(reopened.clock.playing);
}

#[test]
fn a_refused_shared_session_is_said_from_the_start_and_a_failed_save_replaces_it() {
    let refused = StorageStatus::Refused("it is not a session".into());
    let mut s = Driver::open(PageConfig { seed: 1, storage: refused.clone(), ..PageConfig::default() });
    assert_eq!(s.storage, refused);
    let fx = update(&mut s, Action::Storage(StorageStatus::Full { bytes: 9000 }));
    assert_eq!(s.storage, StorageStatus::Full { bytes: 9000 });
    assert_eq!(fx, vec![Effect::Redraw]);
}

#[test]
fn a_lesson_opens_at_one_times_with_its_checks_evaluated() {
    let s = lesson();
    assert!(!s.clock.teaching, "a lesson runs at 1×");
    assert!(s.lesson.beside);
    assert!(s.lesson.progress.is_some());
    assert!(!s.lesson.results.is_empty() || s.lesson.lesson.as_ref().unwrap().steps[0].checks.is_empty());
}

#[test]
fn lesson_navigation_moves_to_the_chosen_step() {
    let mut s = lesson();
    update(&mut s, Action::LessonGo(1));
    assert_eq!(s.lesson.progress.as_ref().unwrap().step, 1);
    update(&mut s, Action::LessonGo(0));
    assert_eq!(s.lesson.progress.as_ref().unwrap().step, 0);
}

#[test]
fn a_lessons_manifest_goes_to_the_editor_and_its_command_runs_in_the_terminal() {
    let mut s = lesson();
    let fx = update(&mut s, Action::LessonManifest("kind: Pod".into()));
    assert_eq!(fx, vec![Effect::SetEditorText("kind: Pod".into()), Effect::FocusEditor]);
    update(&mut s, Action::LessonRun(Command::new("kubectl get nodes")));
    assert_eq!(lines(&s)[0], Line::Command("kubectl get nodes".into()));
}

#[test]
fn a_lesson_that_could_not_be_fetched_says_why_beside_the_index() {
    let s = Driver::open(PageConfig {
        seed: 1,
        lesson: Some("99-missing".into()),
        lesson_source: Some(Err("404 Not Found".into())),
        ..PageConfig::default()
    });
    assert!(s.lesson.lesson.is_none());
    assert_eq!(s.lesson.problem.as_deref(), Some("404 Not Found"));
    assert!(s.lesson.beside);
}

#[test]
fn the_event_filter_and_highlight_are_kept() {
    let mut s = sandbox();
    let filter = EventFilter { from: "kube-scheduler".into(), ..EventFilter::default() };
    update(&mut s, Action::FilterEvents(filter.clone()));
    update(&mut s, Action::Highlight(Some("pod/web".into())));
    assert_eq!(s.event_filter, filter);
    assert_eq!(s.highlight.as_deref(), Some("pod/web"));
}

#[test]
fn at_a_container_shell_lines_go_to_it_after_its_prompt_and_ctrl_d_leaves_it() {
    let mut s = sandbox();
    enter(&mut s, "kubectl run web --image=busybox -- sleep 3600");
    update(&mut s, Action::Settle);
    enter(&mut s, "kubectl exec -it web -- sh");
    let prompt = s.prompt().expect("attached to the container's shell");
    enter(&mut s, "hostname");
    let shown = lines(&s);
    let at = shown.iter().position(|l| *l == Line::Typed(format!("{prompt}hostname"))).expect("typed after the prompt");
    assert_eq!(shown[at + 1], Line::Out("web".into()));
    // A page control runs beside the shell, which stays open.
    update(&mut s, Action::Settle);
    assert!(s.prompt().is_some());
    let fx = update(&mut s, Action::TerminalKey(Key::CtrlD, String::new()));
    assert!(fx.contains(&Effect::KeyHandled));
    assert!(s.prompt().is_none(), "Ctrl-D at an empty prompt leaves the shell");
}

#[test]
fn the_page_sends_its_commands_to_the_simulation_and_draws_the_frame_a_simulation_would_send() {
    use crate::page::sim::{FrameQuery, SimRequest, Simulation};
    let create = "kubectl create deployment web --image=nginx --replicas=2";
    let mut page = sandbox();
    enter(&mut page, create);
    update(&mut page, Action::Settle);
    update(&mut page, Action::Step);
    let mut sim = Simulation::new(1);
    sim.answer(SimRequest::Run { line: create.into(), stdin: None, to_shell: false });
    sim.answer(SimRequest::Settle);
    sim.answer(SimRequest::Step);
    let query = FrameQuery { board: true, sequence: true, detail: Some(Detail::Etcd), ..FrameQuery::default() };
    assert_eq!(page.sim.peek_frame(&query), sim.peek_frame(&query));
}

#[test]
fn a_command_shows_as_running_until_its_reply_comes() {
    let mut s = sandbox();
    let fx = crate::page::update::update(&mut s.state, Action::TerminalKey(Key::Enter, "kubectl get nodes".into()));
    let Some(Effect::Ask(id, request)) = fx.iter().find(|e| matches!(e, Effect::Ask(..))).cloned() else {
        panic!("{fx:?}")
    };
    assert_eq!(s.running().as_deref(), Some("$ kubectl get nodes"));
    assert!(lines(&s).is_empty(), "its output comes with the reply");
    let reply = s.sim.answer(request);
    crate::page::update::update(&mut s.state, Action::Reply(id, Box::new(reply)));
    assert_eq!(s.running(), None);
    assert_eq!(lines(&s)[0], Line::Command("kubectl get nodes".into()));
}

#[test]
fn a_tick_is_not_asked_for_while_the_last_one_is_unanswered() {
    let mut s = sandbox();
    update(&mut s, Action::TogglePlay);
    let first = crate::page::update::update(&mut s.state, Action::Tick);
    assert!(first.iter().any(|e| matches!(e, Effect::Ask(_, SimRequest::Tick { .. }))), "{first:?}");
    let second = crate::page::update::update(&mut s.state, Action::Tick);
    assert!(second.is_empty(), "a busy simulation is not sent a queue of ticks: {second:?}");
}

#[test]
fn when_the_worker_fails_the_page_says_so_and_replays_its_journal_in_a_new_simulation() {
    let mut s = sandbox();
    enter(&mut s, "kubectl create deployment web --image=nginx");
    s.sim = crate::page::sim::Simulation::new(99);
    update(&mut s, Action::SimFailed("the worker failed: unreachable".into()));
    assert_eq!(s.failure.as_deref(), Some("the worker failed: unreachable"));
    assert_eq!(s.sim.journal().entries.len(), 1, "the journal was replayed");
    let out = update(&mut s, Action::TerminalKey(Key::Enter, "kubectl get deployments".into()));
    assert!(out.contains(&Effect::Redraw));
    assert!(lines(&s).iter().any(|l| matches!(l, Line::Out(o) if o.contains("web"))), "{:?}", lines(&s));
}

#[test]
fn a_prediction_is_kept_then_set_beside_the_clusters_answer_and_the_reason_from_the_record() {
    let source: Rc<str> = Rc::from(include_str!("../../lessons/06-scheduler.md"));
    let mut s = Driver::open(PageConfig {
        seed: 1,
        start_paused: true,
        lesson: Some("06-scheduler".into()),
        lesson_source: Some(Ok(source)),
        ..PageConfig::default()
    });
    update(&mut s, Action::Predict(0, "worker-2".into()));
    assert_eq!(s.lesson.progress.as_ref().unwrap().steps[0].predicted.as_deref(), Some("worker-2"));
    assert!(s.journal.borrow().progress.as_deref().is_some_and(|p| p.contains("worker-2")), "kept with the session");
    enter(&mut s, "kubectl apply -f big.yaml");
    enter(&mut s, "sleep 10s");
    let p = s.lesson.progress.clone().unwrap();
    assert_eq!(p.step, 1, "the step is complete");
    let answer = p.steps[0].answer.clone().expect("the cluster's answer");
    assert!(["worker-1", "worker-2", "worker-3"].contains(&answer.as_str()), "{answer}");
    let reason = s.lesson.reasons[0].clone().expect("the record says why");
    assert!(reason.contains("scheduler") && reason.contains(&answer), "{reason}");
    // Once complete, the prediction stands.
    update(&mut s, Action::Predict(0, "worker-3".into()));
    assert_eq!(s.lesson.progress.as_ref().unwrap().steps[0].predicted.as_deref(), Some("worker-2"));
}

#[test]
fn the_page_is_ready_only_once_its_session_is_replayed_not_at_the_first_reply() {
    let mut s = Driver::open(PageConfig { seed: 1, start_paused: true, ..PageConfig::default() });
    enter(&mut s, "kubectl create deployment web --image=nginx");
    let journal = s.journal.borrow().clone();
    let mut page = PageState::new(PageConfig { seed: 1, journal: Some(journal), ..PageConfig::default() });
    let fx = crate::page::update::update(&mut page, Action::Open);
    let asks: Vec<(u64, SimRequest)> =
        fx.into_iter().filter_map(|e| if let Effect::Ask(id, r) = e { Some((id, r)) } else { None }).collect();
    assert!(matches!(asks.last(), Some((_, SimRequest::Load { .. }))), "{asks:?}");
    let mut sim = crate::page::sim::Simulation::new(1);
    let (first, settings) = asks[0].clone();
    crate::page::update::update(&mut page, Action::Reply(first, Box::new(sim.answer(settings))));
    assert!(!page.view.ready, "a fresh cluster's frame is not the student's session");
    let (load, request) = asks[1].clone();
    crate::page::update::update(&mut page, Action::Reply(load, Box::new(sim.answer(request))));
    assert!(page.view.ready);
    assert_eq!(page.terminal.lines[0], Line::Command("kubectl create deployment web --image=nginx".into()));
}

#[test]
fn a_here_document_is_typed_line_by_line_then_runs_with_its_lines_as_input() {
    let mut s = sandbox();
    enter(&mut s, "cat <<EOF > web.yaml");
    assert!(s.terminal.heredoc.is_some(), "the terminal waits for the document's lines");
    for line in [
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        "  name: web",
        "spec:",
        "  containers:",
        "  - name: web",
        "    image: nginx:1.25",
    ] {
        enter(&mut s, line);
    }
    assert!(s.journal.borrow().entries.is_empty(), "nothing has run yet");
    enter(&mut s, "EOF");
    assert!(s.terminal.heredoc.is_none());
    enter(&mut s, "kubectl apply -f web.yaml");
    let shown = lines(&s);
    assert_eq!(shown[0], Line::Command("cat <<EOF > web.yaml".into()));
    assert_eq!(shown[1], Line::Typed("> apiVersion: v1".into()));
    assert!(shown.contains(&Line::Out("pod/web created".into())), "{shown:?}");
    let journal = s.journal.borrow();
    assert_eq!(journal.entries[0].stdin.as_deref().map(|t| t.lines().count()), Some(8), "kept for the replay");
}

#[test]
fn ctrl_c_abandons_a_here_document() {
    let mut s = sandbox();
    enter(&mut s, "cat <<EOF > notes.txt");
    enter(&mut s, "half a line");
    update(&mut s, Action::TerminalKey(Key::CtrlC, "and".into()));
    assert!(s.terminal.heredoc.is_none());
    assert_eq!(lines(&s).last(), Some(&Line::Typed("> and^C".into())));
    assert!(s.journal.borrow().entries.is_empty());
}
