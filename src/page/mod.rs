//! The page's state as plain data: what the page holds, the actions a student (or the clock)
//! takes on it, and one `update` that applies an action and returns, as data, what the shell
//! must then do in the browser (save, focus, redraw…). No web crate here: it compiles and is
//! tested natively (`cargo test --lib page`).
//!
//! Toward a simulation behind a message boundary (a Web Worker): what goes in is `Action`s
//! (commands as text, numbers, a journal), and what the shell does comes back as `Effect`s;
//! the shell never changes the state but through `update`. What still crosses by reference is
//! the session itself: the panels draw from `PageState::session` (snapshots, the map's board,
//! the sequence and the views opened from the map), which a worker would send as snapshots.

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
