//! The page's state as plain data: what the page holds, the actions a student (or the clock)
//! takes on it, and one `update` that applies an action and returns, as data, what the shell
//! must then do in the browser (save, focus, redraw…). No web crate here: it compiles and is
//! tested natively (`cargo test --lib page`).
//!
//! The simulation sits behind a message boundary (`sim`): the page sends `SimRequest`s
//! (commands, the clock's budget, a step, skip to settled, reset, a journal to replay) and
//! draws each render from one `Frame` (snapshot, map board, revisions, prompt, sequence,
//! the view opened from the map), all serializable so a Web Worker can answer later. On the
//! main thread `PageState::sim` answers in place: today's loop, and the fallback.
//!
//! Still by reference (marked where it happens; a worker would need them as frame data):
//! the map's flow (tokens and captions read the record in place) and the teaching-pace tick
//! that waits on it, and the reducer's own reads and writes for live `kubectl get -w`, `kubectl edit`, tab
//! completion, the inspector, follow, export and the lesson's checks.

pub mod action;
pub mod journal;
pub mod sim;
pub mod snapshot;
pub mod state;
pub mod terminal;
pub mod update;

pub use action::{Action, Effect, Key, ManifestAction};
pub use state::{Detail, EventFilter, PageConfig, PageState, StorageStatus};
pub use terminal::{Editing, Line};
pub use update::update;

#[cfg(test)]
mod tests;
