//! The simulation behind a message boundary: the page sends it `SimRequest`s (a command line,
//! the clock's tick, skip to settled, a journal to replay, what to draw) and draws only from
//! what each `SimReply` carries — its `Frame` above all. Everything that crosses is plain data
//! and serializable: the `Simulation` answers from a Web Worker, or, where none can serve,
//! in the page's own thread, the same way.

pub mod frame;
pub mod request;
pub mod scheduler;
pub mod simulation;

pub use frame::{DetailFrame, FlowFrame, Frame, FrameQuery, Parts, RecordDelta, RecordLine, frame_of, frame_parts};
pub use request::{
    ClockSettings, CommandOutput, ExportFile, JournalChange, LessonFrame, LessonSource, Opened, SimReply, SimRequest,
};
pub use scheduler::SchedulerFrame;
pub use simulation::Simulation;

#[cfg(test)]
mod tests;
