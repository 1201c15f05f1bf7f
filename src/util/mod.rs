//! Tools with no Kubernetes in them: base64, a small `json!`, stable sorting, lazily sorted
//! keys, cron schedules, and the standing of background threads.

#[cfg(not(target_arch = "wasm32"))]
pub mod background;
pub mod base64;
pub mod command_line;
pub mod cron;
pub mod fast_keys;
pub mod json_macro;
pub mod path;
pub mod pipes;
pub mod printing;
pub mod sort;
pub mod sorted_keys;
