//! The simulation as the page talks to it: it owns the session and answers each `SimRequest`
//! with a `SimReply` (this is what runs in a worker; on the main thread, in place).

use super::frame::{Frame, FrameQuery, frame_of};
use super::request::{CommandOutput, SimReply, SimRequest};
use crate::page::state::{no_real_clock, replay};
use crate::record::Seq;
use crate::shell::{Command, Session};
use crate::sim::Duration;

/// How long `Settle` lets virtual time run at most (as `sim settle` does).
const SETTLE_COMMAND: &str = "sim settle";

/// The session, and what the page asked its frames to carry.
pub struct Simulation {
    session: Session,
    query: FrameQuery,
    /// The record's last entry the previous frame carried.
    cursor: Seq,
    /// Real milliseconds, for `Advance`'s budget (never the simulation's own clock).
    real_ms: fn() -> f64,
}

impl Simulation {
    pub fn new(seed: u64) -> Simulation {
        Simulation::from_session(Session::new(seed))
    }

    /// Takes over a session (the page's, replayed from its journal).
    pub fn from_session(session: Session) -> Simulation {
        let cursor = session.cluster.record.last_seq();
        Simulation { session, query: FrameQuery::default(), cursor, real_ms: no_real_clock }
    }

    /// Measures `Advance`'s budget with this clock (the browser's).
    pub fn with_real_clock(mut self, real_ms: fn() -> f64) -> Simulation {
        self.real_ms = real_ms;
        self
    }

    /// The session, read by the paths not yet moved to frames (the map's flow, the
    /// scheduler's decision view, the reducer's own reads). Main thread only.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, for the reducer's paths that still drive it in place (live watches,
    /// `kubectl edit`, completion, the lesson's checks, the inspector). Main thread only.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Measures `Advance`'s budget with this clock from now on.
    pub fn set_real_clock(&mut self, real_ms: fn() -> f64) {
        self.real_ms = real_ms;
    }

    /// The record's last entry and the revisions time travel reaches (the oldest kept, the
    /// present): what every frame starts with, cheap to read, so the page can tell whether
    /// its map's board must be built again before asking for one.
    pub fn moment(&self) -> (Seq, (i64, i64)) {
        let etcd = self.session.cluster.inspect().etcd();
        (self.session.cluster.record.last_seq(), (etcd.compacted_revision().max(1), etcd.revision()))
    }

    /// What the frames carry now.
    pub fn query(&self) -> &FrameQuery {
        &self.query
    }

    /// Answers one request: does what it asks, then builds the frame.
    pub fn answer(&mut self, request: SimRequest) -> SimReply {
        let mut reply = self.apply(request);
        reply.frame = self.frame();
        reply
    }

    /// Does what a request asks, without building a frame (the page on the main thread draws
    /// its own frame when it renders): the reply's frame is left empty.
    pub fn apply(&mut self, request: SimRequest) -> SimReply {
        let mut output = None;
        let mut replayed = None;
        let mut ended = None;
        match request {
            SimRequest::Run { line, stdin, beside } => {
                let command = Command { line, heredoc: stdin.map(|body| ("EOF".to_string(), body)) };
                let out = if beside { self.session.execute_beside(&command) } else { self.session.execute(&command) };
                output = Some(CommandOutput::from(&out));
            }
            SimRequest::Step => {
                self.session.cluster.step();
            }
            SimRequest::Advance { virtual_ms, budget_ms } => {
                crate::page::update::advance_within(
                    &mut self.session.cluster,
                    Duration(virtual_ms),
                    budget_ms,
                    self.real_ms,
                );
                // A container shell's session ends when its container stops.
                ended = self.session.poll().map(|out| CommandOutput::from(&out));
            }
            SimRequest::Settle => {
                let out = self.session.execute_beside(&Command::new(SETTLE_COMMAND));
                output = Some(CommandOutput::from(&out));
            }
            SimRequest::Reset { seed } => {
                self.session = Session::new(seed);
                self.cursor = self.session.cluster.record.last_seq();
            }
            SimRequest::Load { journal, lesson } => {
                let lesson = lesson.and_then(|l| crate::lessons::from_source(&l.id, &l.markdown).ok());
                let mut lines = Vec::new();
                self.session = replay(&journal, lesson.as_ref(), &mut lines);
                self.cursor = self.session.cluster.record.last_seq();
                replayed = Some(lines);
            }
            SimRequest::View(query) => self.query = query,
            SimRequest::Frame => {}
        }
        SimReply { output, replayed, ended, frame: Frame::default() }
    }

    /// The frame as the query asks, with the record's entries since the previous frame.
    pub fn frame(&mut self) -> Frame {
        let frame = frame_of(&self.session, &self.query, self.cursor);
        self.cursor = frame.last_seq;
        frame
    }

    /// The frame as `query` asks, without the record's delta and leaving its cursor where it
    /// is: the page's in-thread drawing, which renders often and whose map reads the record
    /// through its flow.
    pub fn peek_frame(&self, query: &FrameQuery) -> Frame {
        frame_of(&self.session, query, self.session.cluster.record.last_seq())
    }
}
