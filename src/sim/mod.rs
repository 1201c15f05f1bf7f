//! Time and chance: the virtual clock and the seeded random source every component shares.

pub mod limits;
pub mod rng;
pub mod time;

pub use rng::Rng;
pub use time::{Duration, Time};
