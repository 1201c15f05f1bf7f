//! The manifest editor's pure half: YAML highlighting, the line of each field of a manifest,
//! and the lines kubectl's errors point at. The page (`ui::editor`) only renders them.

pub mod errors;
pub mod highlight;
pub mod lines;
