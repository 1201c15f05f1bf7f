//! What can happen to the page: the student's actions and the clock's ticks (`Action`), and
//! what the page's shell must then do in the browser (`Effect`). Both are plain data.

use super::state::{Detail, EventFilter, StorageStatus};
use crate::page::journal::Journal;
use crate::page::sim::{SimReply, SimRequest};
use crate::shell::Command;

/// What the editor's buttons ask kubectl to do with its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManifestAction {
    Apply,
    /// `--dry-run=server`: every stage of the API server but storage.
    DryRun,
    Delete,
}

impl ManifestAction {
    /// The `kubectl` command line the action runs on the editor's text (`-f -`: the text is
    /// its standard input).
    pub fn command_line(self) -> String {
        match self {
            ManifestAction::Apply => "kubectl apply -f -".to_string(),
            ManifestAction::DryRun => "kubectl apply --dry-run=server -f -".to_string(),
            ManifestAction::Delete => "kubectl delete -f -".to_string(),
        }
    }
}

/// A key the terminal's input line acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Enter,
    Tab,
    Up,
    Down,
    CtrlC,
    CtrlD,
}

/// Something that happens to the page.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// The page is mounted: the simulation replays its journal.
    Open,
    /// The simulation answered request `id`.
    Reply(u64, Box<SimReply>),
    /// The simulation's worker stopped, and why: the page carries on in its own thread.
    SimFailed(String),
    /// The clock's tick (every `TICK_MS` of real time while playing, and while messages
    /// still travel the map).
    Tick,
    /// A key pressed in the terminal, with the input line's text.
    TerminalKey(Key, String),
    /// Runs a command as if typed (a page control's): shown as `shown` in the terminal.
    Run(String, Command),
    /// A lesson's "run" button.
    LessonRun(Command),
    /// A lesson's manifest loaded into the editor.
    LessonManifest(String),
    /// A lesson's step chosen (from 0).
    LessonGo(usize),
    /// The student's answer to a step's prediction (the step, from 0).
    Predict(usize, String),
    /// An editor button, with the editor's text.
    Manifest(ManifestAction, String),
    /// The editor's text was typed into.
    EditorTyped,
    /// An example chosen from the editor's list, by id.
    Example(String),
    /// Runs the next component that is due.
    Step,
    /// Runs virtual time until the cluster has nothing left to do.
    Settle,
    TogglePlay,
    /// The speed list's value: a factor, or `teaching`.
    Speed(String),
    TogglePresenter,
    /// A shortcut key outside text fields: space, `.`, `s`, `p`.
    Shortcut(char),
    Share,
    Export,
    /// What the share or export button said, once done.
    Note(String),
    /// Starts again with a fresh cluster.
    Reset,
    /// Puts a session in the page in place of this one (another tab's, back from a shared
    /// one); None changes nothing.
    Load(Option<Journal>),
    /// The storage's status changed (a save failed, another tab took the session…).
    Storage(StorageStatus),
    /// Opens the inspector on `kind/name` (or a bare pod name).
    Inspect(String),
    CloseInspector,
    RefreshInspector,
    /// Follows the last kubectl write's chain.
    Follow,
    Unfollow,
    /// A step of the followed chain, by its record sequence number.
    FollowStep(u64),
    /// A step of the sequence diagram: its sequence number and etcd revision.
    SequenceSelect(u64, i64),
    FilterEvents(EventFilter),
    Highlight(Option<String>),
    /// A click on the map: `pod/NAME`, `scheduler`, `etcd`, `controller/NAME`….
    Pick(String),
    /// A view under the map opened (or another object chosen in it), or closed.
    Detail(Option<Detail>),
    /// The time-travel scrubber moved to a revision.
    Scrub(i64),
    BackToNow,
}

/// What the shell does in the browser after an update.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Draw the page again.
    Redraw,
    /// Draw the page again if drawing is due (a big cluster's ticks redraw less often).
    RedrawIfDue,
    /// Keep the journal in the browser's storage.
    Save,
    /// Make the link that replays the session (its sentence comes back as `Action::Note`).
    Share,
    /// Offer `text` as a file; `note` says it was, once it was.
    Download {
        file: String,
        text: String,
        note: String,
    },
    /// Put this text in the manifest editor.
    SetEditorText(String),
    FocusEditor,
    /// Put this text in the terminal's input line.
    SetInput(String),
    /// The key pressed was handled: the browser does nothing else with it.
    KeyHandled,
    /// Take `#…` off the page's address.
    ClearAddressHash,
    /// Send request `id` to the simulation; its reply comes back as `Action::Reply`.
    Ask(u64, SimRequest),
}
