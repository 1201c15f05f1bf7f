//! The simulation behind a message boundary: the page sends it `SimRequest`s (a command line,
//! a clock's budget, skip to settled, a journal to replay, what to draw) and draws only from
//! the `Frame` each `SimReply` carries. Everything that crosses is plain data and serializable,
//! so the `Simulation` can answer from a Web Worker; on the main thread it answers in place
//! (today's loop, and the fallback when no worker can serve).

pub mod frame;
pub mod request;
pub mod scheduler;
pub mod simulation;

pub use frame::{DetailFrame, Frame, FrameQuery, RecordDelta, RecordLine, frame_of};
pub use request::{CommandOutput, LessonSource, SimReply, SimRequest};
pub use scheduler::SchedulerFrame;
pub use simulation::Simulation;

#[cfg(test)]
mod tests;
