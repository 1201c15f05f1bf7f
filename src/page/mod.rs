//! The page's state as plain data: what the page holds, the actions a student (or the clock)
//! takes on it, and one `update` that applies an action and returns, as data, what the shell
//! must do in the browser (save, focus, redraw…). No web crate here: it compiles and is
//! tested natively, and the simulation it drives could later sit behind a message boundary.

pub mod action;
pub mod state;
pub mod terminal;
pub mod update;

pub use action::{Action, Effect, Key, ManifestAction};
pub use state::{Detail, EventFilter, PageConfig, PageState, StorageStatus};
pub use terminal::{Editing, Line};
pub use update::update;

#[cfg(test)]
mod tests;
