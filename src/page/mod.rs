//! The page's state as plain data: what the page holds, the actions a student (or the clock)
//! takes on it, and one `update` that applies an action and returns, as data, what the shell
//! must then do in the browser (save, focus, redraw…). No web crate here: it compiles and is
//! tested natively (`cargo test --lib page`).
//!
//! The simulation sits behind a message boundary (`sim`): the page only sends `SimRequest`s
//! (`Effect::Ask`: commands, the clock's ticks, a step, skip to settled, completion, the
//! inspector, a journal to replay…) and takes what each `SimReply` brings (`Action::Reply`):
//! the frame it draws (tables, map board, the map's messages, revisions, prompt, sequence,
//! the view opened from the map), the journal it saves, the lesson's checks. All of it is
//! serializable: the simulation answers from a Web Worker, or in the page's own thread where
//! no worker can (`driver` does so natively, for tests).

pub mod action;
pub mod driver;
pub mod journal;
pub mod progress_file;
pub mod sim;
pub mod snapshot;
pub mod state;
pub mod terminal;
pub mod update;

pub use action::{Action, Effect, Key, ManifestAction};
pub use driver::Driver;
pub use state::{Detail, EventFilter, PageConfig, PageState, StorageStatus};
pub use terminal::{Editing, Line};
pub use update::update;

#[cfg(test)]
mod tests;
