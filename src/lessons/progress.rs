//! A student's way through a lesson: the current step, which checks pass, which steps are
//! complete. Serializable, so the page can keep it in localStorage beside the session.

use super::check;
use super::model::{CheckResult, Lesson};
use crate::record::Seq;
use crate::shell::Session;

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    /// The lesson's id (its file name without `.md`).
    pub lesson: String,
    /// The step being worked on; equal to the number of steps once the lesson is done.
    pub step: usize,
    /// The record's last entry when the current step began: record checks look after it.
    pub step_started: Seq,
    pub steps: Vec<StepProgress>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepProgress {
    pub complete: bool,
    /// Whether each check passed when last evaluated.
    pub checks: Vec<bool>,
    /// The student's answer to the step's prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<String>,
    /// The cluster's answer, read when the step was complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The record entry that says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<Seq>,
}

/// What one evaluation found.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Evaluation {
    /// The step evaluated.
    pub step: usize,
    pub results: Vec<CheckResult>,
    /// Every check passed, so the step is complete and progress moved on.
    pub step_complete: bool,
    pub lesson_complete: bool,
}

impl Progress {
    /// A fresh start at the first step of `lesson`, in `session` (from `Lesson::start`).
    pub fn new(lesson: &Lesson, session: &Session) -> Progress {
        Progress {
            lesson: lesson.id.clone(),
            step: 0,
            step_started: session.cluster.record.last_seq(),
            steps: lesson
                .steps
                .iter()
                .map(|s| StepProgress { checks: vec![false; s.checks.len()], ..StepProgress::default() })
                .collect(),
        }
    }

    pub fn finished(&self) -> bool {
        self.step >= self.steps.len()
    }

    /// How the current step's checks stand, changing nothing (not even this progress).
    pub fn check(&self, lesson: &Lesson, session: &mut Session) -> Vec<CheckResult> {
        match lesson.steps.get(self.step) {
            Some(step) => check::evaluate(&step.checks, session, self.step_started),
            None => Vec::new(),
        }
    }

    /// Evaluates the current step's checks; when all pass the step is complete and the next
    /// one begins. The page calls this after each command and as virtual time passes.
    pub fn evaluate(&mut self, lesson: &Lesson, session: &mut Session) -> Evaluation {
        let step = self.step;
        let results = self.check(lesson, session);
        let all = !results.is_empty() && results.iter().all(|r| r.passed);
        let started = self.step_started;
        if let Some(state) = self.steps.get_mut(step) {
            state.checks = results.iter().map(|r| r.passed).collect();
            if all {
                state.complete = true;
                // Predict, then watch: what the cluster did, and the entry that says why.
                if let Some(p) = lesson.steps.get(step).and_then(|s| s.prediction.as_ref()) {
                    state.answer = Some(check::look(&p.answer, session));
                    state.why = p.why.as_ref().and_then(|w| check::first_match(w, session, started));
                }
            }
        }
        if all {
            self.begin(step + 1, session);
        }
        Evaluation { step, results, step_complete: all, lesson_complete: self.finished() }
    }

    /// The student's answer to step `step`'s prediction, kept until the step is complete
    /// (then it stands: no changing one's mind after the fact).
    pub fn predict(&mut self, lesson: &Lesson, step: usize, answer: &str) {
        let asks = lesson.steps.get(step).is_some_and(|s| s.prediction.is_some());
        let answer = answer.trim();
        if let Some(state) = self.steps.get_mut(step).filter(|s| asks && !s.complete && !answer.is_empty()) {
            state.predicted = Some(answer.chars().take(200).collect());
        }
    }

    /// Moves to `step` (e.g. the student goes back or skips ahead); its record checks look
    /// only at what happens from now on.
    pub fn go_to(&mut self, step: usize, session: &Session) {
        self.begin(step.min(self.steps.len()), session);
    }

    fn begin(&mut self, step: usize, session: &Session) {
        self.step = step;
        self.step_started = session.cluster.record.last_seq();
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Progress saved by `to_json`, if it is that and belongs to `lesson`.
    pub fn from_json(text: &str, lesson: &Lesson) -> Option<Progress> {
        let p: Progress = serde_json::from_str(text).ok()?;
        (p.lesson == lesson.id && p.steps.len() == lesson.steps.len()).then_some(p)
    }
}
