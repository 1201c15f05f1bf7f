//! What a lesson is once read: its starting cluster, its steps, and each step's text, hints,
//! checks and solution.

use crate::cluster::ClusterConfig;
use crate::shell::Command;
use std::fmt;

/// A mistake in a lesson file, reported as `lessons/03-reconcile.md:42: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LessonError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for LessonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for LessonError {}

/// The track a lesson belongs to when its front matter names none.
pub const DEFAULT_TRACK: &str = "The control plane";

/// One lesson, read from its Markdown file.
#[derive(Clone, Debug, PartialEq)]
pub struct Lesson {
    /// The file's name without `.md`, e.g. `03-reconcile`: the lesson's identity.
    pub id: String,
    /// Where it was read from, for error messages (`lessons/03-reconcile.md`).
    pub file: String,
    pub title: String,
    pub summary: String,
    /// The course's track it belongs to (`track:`; [`DEFAULT_TRACK`] when not given).
    pub track: String,
    /// The starting cluster: seed, workers and their sizes.
    pub cluster: ClusterConfig,
    /// Commands run on the fresh cluster before the student starts (```setup blocks).
    pub setup: Vec<Command>,
    /// The text before the first step.
    pub intro: Vec<Part>,
    pub steps: Vec<Step>,
}

impl Lesson {
    /// Every named manifest of the lesson, which `kubectl apply -f NAME` can read.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.intro.iter().chain(self.steps.iter().flat_map(|s| s.body.iter())).filter_map(|p| match p {
            Part::Manifest { name: Some(name), text } => Some((name.as_str(), text.as_str())),
            _ => None,
        })
    }
}

/// A piece of a lesson's or step's text, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    /// Markdown prose (fenced blocks other than the lesson's own kinds stay in it).
    Text(String),
    /// Suggested commands (```run): the page offers to run them.
    Commands(Vec<Command>),
    /// A manifest (```manifest [NAME]): the page loads it into the editor; with a name,
    /// `kubectl apply -f NAME` reads it.
    Manifest { name: Option<String>, text: String },
}

/// One `##` section: something for the student to do, and the checks that say it is done.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub title: String,
    /// The line of the `##` heading.
    pub line: usize,
    pub body: Vec<Part>,
    pub hints: Vec<String>,
    pub checks: Vec<Check>,
    /// The commands a student would run to complete the step (```solution).
    pub solution: Vec<Command>,
    /// What happened, said once the step's checks pass (```debrief): an incident's cause, the
    /// component that was at fault and how its events showed it.
    pub debrief: Option<String>,
    /// A question the student answers before the step runs (```predict).
    pub prediction: Option<Prediction>,
}

/// Predict, then watch: a question put before the step (which node will the scheduler pick,
/// what phase will the pod be in); once the step is complete the page shows the student's
/// answer beside the cluster's, and the record entry that explains it.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    pub question: String,
    /// The answers offered (`choices: a | b | c`); none: the student types one.
    pub choices: Vec<String>,
    /// A command that only looks, whose output once the step is complete is the answer.
    pub answer: String,
    /// The record entry since the step began whose sentence says why (`why: PATTERN`).
    pub why: Option<RecordPattern>,
    /// The line of the block's opening fence.
    pub line: usize,
}

impl Prediction {
    /// Whether `predicted` is the answer the cluster gave (typed answers ignore case and the
    /// spaces around them).
    pub fn is_right(&self, predicted: &str, answer: &str) -> bool {
        predicted.trim().eq_ignore_ascii_case(answer.trim())
    }
}

/// A condition on the live cluster, written in the sandbox's command language or as a pattern
/// over the record.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// What the student is shown: the block's info string after `check`, else the command.
    pub label: String,
    /// The line of the block's opening fence.
    pub line: usize,
    pub test: Test,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Test {
    /// `run: COMMAND` and what its output must be.
    Command { line: String, expect: Vec<Expect> },
    /// `record: PATTERN` lines: entries since the step began matching each pattern, in order.
    Record(Vec<RecordPattern>),
}

/// What a check command's output (stdout and stderr, as a terminal shows them) must be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// `expect: TEXT` (or `expect:` then lines): exactly this, ignoring trailing spaces.
    Equals(String),
    /// `expect contains: TEXT`
    Contains(String),
    /// `expect not contains: TEXT`
    NotContains(String),
}

/// Which kind of record entry a pattern matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Request,
    Notify,
    Decision,
}

/// One `record:` line: an entry kind and conditions on its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordPattern {
    pub text: String,
    pub entry: EntryKind,
    pub conditions: Vec<Condition>,
}

/// `key=value` (equal; `*` matches any run of characters) or `key~value` (contains).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub key: String,
    pub contains: bool,
    pub value: String,
}

/// How one check came out.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CheckResult {
    pub label: String,
    pub passed: bool,
    /// Why it failed: what was expected and what the cluster showed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}
