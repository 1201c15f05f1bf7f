//! Runs a lesson headlessly from its solution, step by step, as a student would: each step's
//! checks before its solution (they must not all pass yet) and after (they must all pass).

use super::model::{CheckResult, Lesson};
use super::progress::Progress;

/// One step of a solution run.
#[derive(Clone, Debug)]
pub struct StepRun {
    pub title: String,
    pub before: Vec<CheckResult>,
    /// The solution's commands and their output, as `kubeloop run` prints a transcript.
    pub transcript: String,
    pub after: Vec<CheckResult>,
    /// What is wrong with the step's prediction after the solution (its answer is not one of
    /// its choices, or the record has no entry to say why).
    pub prediction_problem: Option<String>,
}

impl StepRun {
    /// Every check passed before the solution ran: the step cannot fail.
    pub fn passed_before(&self) -> bool {
        self.before.iter().all(|r| r.passed)
    }

    pub fn passed_after(&self) -> bool {
        self.after.iter().all(|r| r.passed)
    }
}

#[derive(Clone, Debug)]
pub struct LessonRun {
    pub file: String,
    pub steps: Vec<StepRun>,
}

impl LessonRun {
    /// What is wrong with the lesson, one line each; empty when it works.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            if step.passed_before() {
                out.push(format!(
                    "{}: step {} \"{}\": every check passes before its solution runs",
                    self.file,
                    i + 1,
                    step.title
                ));
            }
            if let Some(problem) = &step.prediction_problem {
                out.push(format!("{}: step {} \"{}\": {problem}", self.file, i + 1, step.title));
            }
            for r in step.after.iter().filter(|r| !r.passed) {
                out.push(format!(
                    "{}: step {} \"{}\": check \"{}\" fails after the solution: {}",
                    self.file,
                    i + 1,
                    step.title,
                    r.label,
                    r.detail
                ));
            }
        }
        out
    }
}

/// Starts the lesson and runs every step's solution.
pub fn run_solution(lesson: &Lesson) -> LessonRun {
    let mut session = lesson.start();
    let mut progress = Progress::new(lesson, &session);
    let mut steps = Vec::new();
    for (i, step) in lesson.steps.iter().enumerate() {
        progress.go_to(i, &session);
        let before = progress.check(lesson, &mut session);
        let transcript = session.run_commands(&step.solution);
        let after = progress.evaluate(lesson, &mut session).results;
        let prediction_problem = step.prediction.as_ref().and_then(|p| {
            let done = progress.steps.get(i)?;
            let answer = done.answer.as_deref().unwrap_or_default();
            if answer.is_empty() {
                return Some(format!("the prediction's answer `{}` printed nothing after the solution", p.answer));
            }
            if !p.choices.is_empty() && !p.choices.iter().any(|c| p.is_right(c, answer)) {
                return Some(format!("the prediction's answer \"{answer}\" is not one of its choices {:?}", p.choices));
            }
            if p.why.is_some() && done.why.is_none() {
                return Some("the prediction's `why:` matches nothing in the record of the step".to_string());
            }
            None
        });
        steps.push(StepRun { title: step.title.clone(), before, transcript, after, prediction_problem });
    }
    LessonRun { file: lesson.file.clone(), steps }
}
