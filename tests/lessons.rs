//! The course works: every lesson parses, its solution completes every step, and no step's
//! checks pass before the student has done anything. Broken lessons fail with file and line.

use kubeloop::lessons::{self, Lesson, Progress};

fn run_and_report(lesson: &Lesson) -> Vec<String> {
    lessons::run_solution(lesson).problems()
}

#[test]
fn every_built_in_lesson_parses() {
    let errors: Vec<String> = lessons::builtin()
        .iter()
        .filter_map(|(file, text)| lessons::parse(file, text).err())
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert_eq!(lessons::course().len(), lessons::builtin().len());
}

#[test]
fn every_lesson_completes_from_its_solution_and_no_step_passes_before_it() {
    let mut problems = Vec::new();
    for lesson in lessons::course() {
        problems.extend(run_and_report(&lesson));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_first_course_has_at_least_twelve_lessons() {
    assert!(lessons::course().len() >= 12, "{} lessons", lessons::course().len());
}

/// The track of the course's incidents: broken clusters to diagnose and fix.
const INCIDENTS: &str = "Incidents";

#[test]
fn every_incident_starts_broken_and_ends_with_a_debrief_of_what_was_at_fault() {
    let incidents: Vec<Lesson> = lessons::course().into_iter().filter(|l| l.track == INCIDENTS).collect();
    assert!(incidents.len() >= 10, "{} incidents", incidents.len());
    for lesson in incidents {
        let fix = lesson.steps.last().expect("a lesson has steps");
        let mut session = lesson.start();
        let since = session.cluster.record.last_seq();
        let at_start = lessons::check::evaluate(&fix.checks, &mut session, since);
        assert!(
            at_start.iter().any(|r| !r.passed),
            "{}: the cluster is not broken at the start: {at_start:?}",
            lesson.file
        );
        let debrief = fix.debrief.as_deref().unwrap_or_default();
        assert!(debrief.len() > 100, "{}: the fix step has no debrief worth reading", lesson.file);
        assert!(!fix.hints.is_empty() && lesson.steps[0].hints.len() >= 2, "{}: progressive hints", lesson.file);
    }
}

#[test]
fn the_course_index_groups_lessons_by_track_in_order() {
    let tracks = lessons::tracks();
    let names: Vec<&str> = tracks.iter().map(|(t, _)| *t).collect();
    assert_eq!(names[0], "The control plane", "{names:?}");
    assert!(names.contains(&INCIDENTS) && names.contains(&"Troubleshooting"), "{names:?}");
    let total: usize = tracks.iter().map(|(_, l)| l.len()).sum();
    assert_eq!(total, lessons::index().len(), "every lesson is in one track");
    for (track, entries) in &tracks {
        assert!(entries.iter().all(|e| e.track == *track));
    }
}

#[test]
fn the_template_is_a_working_lesson() {
    let text = std::fs::read_to_string("lessons/TEMPLATE.md").unwrap();
    let lesson = lessons::parse("lessons/TEMPLATE.md", &text).unwrap();
    assert_eq!(run_and_report(&lesson), Vec::<String>::new());
}

#[test]
fn evaluating_checks_leaves_no_trace_in_the_session() {
    let lesson = lessons::find("TEMPLATE").unwrap_or_else(|| {
        let text = std::fs::read_to_string("lessons/TEMPLATE.md").unwrap();
        lessons::parse("lessons/TEMPLATE.md", &text).unwrap()
    });
    let mut session = lesson.start();
    let mut progress = Progress::new(&lesson, &session);
    let before = (
        session.cluster.record.last_seq(),
        session.cluster.record.entries().len(),
        session.log().len(),
        session.cluster.inspect().etcd().revision(),
        session.cluster.now(),
    );
    for _ in 0..3 {
        progress.evaluate(&lesson, &mut session);
    }
    let after = (
        session.cluster.record.last_seq(),
        session.cluster.record.entries().len(),
        session.log().len(),
        session.cluster.inspect().etcd().revision(),
        session.cluster.now(),
    );
    assert_eq!(before, after);
    assert_eq!(progress.step, 0);
}

#[test]
fn progress_survives_a_round_trip_through_json() {
    let text = std::fs::read_to_string("lessons/TEMPLATE.md").unwrap();
    let lesson = lessons::parse("lessons/TEMPLATE.md", &text).unwrap();
    let mut session = lesson.start();
    let mut progress = Progress::new(&lesson, &session);
    for command in &lesson.steps[0].solution {
        session.execute(command);
    }
    let eval = progress.evaluate(&lesson, &mut session);
    assert!(eval.step_complete && !eval.lesson_complete);
    assert_eq!(progress.step, 1);
    let restored = Progress::from_json(&progress.to_json(), &lesson).unwrap();
    assert_eq!(restored, progress);
    assert!(restored.steps[0].complete);
}

/// A lesson with front matter, for the malformed cases below.
fn lesson_with(body: &str) -> String {
    format!("---\ntitle: T\nsummary: S\n---\n{body}")
}

fn error_of(text: &str) -> String {
    match lessons::parse("lessons/99-broken.md", text) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_lessons_give_errors_naming_file_and_line() {
    let ok_step = "## S\n```check\nrun: kubectl get pods\nexpect: x\n```\n```solution\nsleep 1s\n```\n";
    let cases: Vec<(String, &str)> = vec![
        ("# no front matter\n".into(), "lessons/99-broken.md:1: a lesson starts with front matter"),
        ("---\ntitle: T\n".into(), "lessons/99-broken.md:1: the front matter is never closed"),
        ("---\ntitle: T\n---\n".into(), "lessons/99-broken.md:3: the front matter needs a `summary:`"),
        (
            "---\ntitle: T\nsummary: S\nnodes: 3\n---\n".into(),
            "lessons/99-broken.md:4: unknown front matter key `nodes`",
        ),
        ("---\ntitle: T\nsummary: S\nworkers: lots\n---\n".into(), "lessons/99-broken.md:4: workers must be a number"),
        (
            "---\ntitle: T\nsummary: S\nworker-memory: 8GB\n---\n".into(),
            "lessons/99-broken.md:4: worker-memory must be a quantity",
        ),
        (lesson_with("Just text.\n"), "lessons/99-broken.md:5: the lesson has no steps"),
        (lesson_with("```debrief\nWhy.\n```\n"), "lessons/99-broken.md:5: a ```debrief block belongs in a step"),
        (
            lesson_with(&format!("{ok_step}```debrief\nOne.\n```\n```debrief\nTwo.\n```\n")),
            "lessons/99-broken.md:16: step \"S\" has two ```debrief blocks",
        ),
        (
            lesson_with(&format!("{ok_step}```debrief\n```\n")),
            "lessons/99-broken.md:13: this ```debrief block is empty",
        ),
        (lesson_with("## S\n```solution\nsleep 1s\n```\n"), "lessons/99-broken.md:5: step \"S\" has no ```check block"),
        (
            lesson_with("## S\n```check\nrun: kubectl get pods\nexpect: x\n```\n"),
            "lessons/99-broken.md:5: step \"S\" has no ```solution block",
        ),
        (
            lesson_with("## S\n\n```check\nrun: kubectl get pods\n```\n"),
            "lessons/99-broken.md:7: check block needs an \"expect\" line",
        ),
        (
            lesson_with("## S\n```check\nexpect: x\n```\n"),
            "lessons/99-broken.md:6: check block has an \"expect\" line but no \"run\" line",
        ),
        (
            lesson_with("## S\n```check\n```\n"),
            "lessons/99-broken.md:6: check block needs a \"run\" line or a \"record\" line",
        ),
        (
            lesson_with("## S\n```check\nrun: kubectl get pods\nshould: x\n```\n"),
            "lessons/99-broken.md:8: a check block's lines are",
        ),
        (
            lesson_with("## S\n```check\nrun: kubectl delete pod x\nexpect: y\n```\n"),
            "lessons/99-broken.md:7: check command \"kubectl delete pod x\" could change the cluster",
        ),
        (
            lesson_with("## S\n```check\nrun: kubectl get pods | xargs kubectl delete pod\nexpect: y\n```\n"),
            "lessons/99-broken.md:7: check command \"kubectl delete pod\" could change",
        ),
        (
            lesson_with("## S\n```check\nrecord: by=kubectl colour=red\n```\n"),
            "lessons/99-broken.md:7: unknown key `colour` in a record pattern",
        ),
        (
            lesson_with("## S\n```check\nrecord: rejected=later\n```\n"),
            "lessons/99-broken.md:7: rejected= takes a stage",
        ),
        (
            lesson_with("## S\n```check\nrun: kubectl get pods\nexpect: x\n"),
            "lessons/99-broken.md:6: this ``` block is never closed",
        ),
        (
            lesson_with("## S\n```checks\nrun: kubectl get pods\n```\n"),
            "lessons/99-broken.md:6: unknown block ```checks: did you mean ```check?",
        ),
        (
            lesson_with("```check\nrun: kubectl get pods\nexpect: x\n```\n"),
            "lessons/99-broken.md:5: a ```check block belongs in a step",
        ),
        (
            lesson_with(&format!("{ok_step}```setup\nsim settle\n```\n")),
            "lessons/99-broken.md:13: a ```setup block belongs before the first step",
        ),
        (
            lesson_with("## S\n```check\nrun: kubectl get pods\nexpect: x\n```\n```solution\nkubctl get pods\n```\n"),
            "lessons/99-broken.md:11: `kubctl` is not a command of the sandbox",
        ),
        (
            lesson_with(
                "## S\n```check\nrun: kubectl get pods\nexpect: x\n```\n```solution\nkubectl apply -f - <<EOF\nkind: Pod\n```\n",
            ),
            "lessons/99-broken.md:11: this heredoc is never closed",
        ),
        (
            lesson_with("## S\n```manifest web.yaml\nkind: [\n```\n"),
            "lessons/99-broken.md:6: this manifest does not parse",
        ),
        (lesson_with("## S\n```hint\n```\n"), "lessons/99-broken.md:6: this ```hint block is empty"),
        (lesson_with("##\n"), "lessons/99-broken.md:5: a step heading needs a title"),
    ];
    for (text, want) in cases {
        let got = error_of(&text);
        assert!(got.starts_with(want), "for:\n{text}\nwant: {want}\ngot:  {got}");
    }
}

#[test]
fn a_saved_lesson_session_resumes_with_its_progress() {
    let lesson = lessons::find("03-reconcile").unwrap();
    let mut session = lesson.start();
    let mut progress = Progress::new(&lesson, &session);
    for command in &lesson.steps[0].solution {
        session.execute(command);
    }
    assert!(progress.evaluate(&lesson, &mut session).step_complete);
    session.execute(&kubeloop::shell::Command::new("kubectl scale deployment web --replicas=5"));
    // What the page would keep: the student's commands (after the set-up) and the progress.
    let saved_commands = session.log()[lesson.setup.len()..].to_vec();
    let saved_progress = progress.to_json();
    let mut resumed = lesson.resume(&saved_commands);
    let mut restored = Progress::from_json(&saved_progress, &lesson).unwrap();
    assert_eq!(resumed.cluster.record.last_seq(), session.cluster.record.last_seq());
    assert_eq!(restored.step, 1);
    resumed.cluster.advance(kubeloop::sim::Duration::seconds(10));
    let eval = restored.evaluate(&lesson, &mut resumed);
    assert!(eval.step_complete, "{:?}", eval.results);
    assert_eq!(restored.step, 2);
}

#[test]
fn progress_saved_for_another_lesson_is_not_restored() {
    let a = lessons::find("01-two-halves").unwrap();
    let b = lessons::find("02-desired-state").unwrap();
    let session = a.start();
    let saved = Progress::new(&a, &session).to_json();
    assert!(Progress::from_json(&saved, &b).is_none());
    assert!(Progress::from_json("not json", &a).is_none());
}
