//! The scale benchmark's helper threads (memory prefaulting, the janitor that frees old
//! versions), tested on their own: they live with the benchmark, not in the library.

#![cfg(not(target_arch = "wasm32"))]

#[path = "../benches/scale/janitor.rs"]
#[allow(dead_code)]
mod janitor;
#[path = "../benches/scale/prefault.rs"]
#[allow(dead_code)]
mod prefault;
