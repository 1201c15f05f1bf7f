//! One frame: everything the page draws, as plain data — the tables and node cards, the map's
//! board, the record's entries since the last frame, the revisions time travel reaches, the
//! sequence diagram and the view opened from the map. Built from the session through its
//! read-only paths (the inspection handle, the record), never through the API.

use super::scheduler::{SchedulerFrame, scheduler_frame};
use crate::page::snapshot::{Snapshot, snapshot_at};
use crate::page::state::Detail;
use crate::record::{Entry, Happening, Seq};
use crate::shell::Session;
use crate::views::etcd::EtcdView;
use crate::views::flow::Message;
use crate::views::map::{Board, Layout};
use crate::views::reconcile::ReconcileView;
use crate::views::sequence::Sequence;
use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// The most record entries one frame carries; older ones in the delta are counted, not sent.
pub const RECORD_LINES: usize = 256;
/// The most steps the sequence diagram draws.
pub const SEQUENCE_STEPS: usize = 160;
/// The latest etcd writes its view lists.
pub const ETCD_WRITES: usize = 10;

/// What the page wants the frames to carry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameQuery {
    /// Time travel: the revision the tables show, when not the present.
    pub past: Option<i64>,
    /// Build the map's board…
    pub board: bool,
    /// …as of this revision (else the present).
    pub board_at: Option<i64>,
    /// Draw the latest apply's sequence diagram.
    pub sequence: bool,
    /// The view opened from the map.
    pub detail: Option<Detail>,
    /// Carry the record's entries since the previous frame.
    #[serde(default)]
    pub records: bool,
}

/// Which of a frame's costly parts to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    /// The tables and node cards, and the views that go with them (sequence, detail).
    pub tables: bool,
    pub board: bool,
}

/// The view opened from the map, as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DetailFrame {
    Etcd(EtcdView),
    /// A controller's loop (None: it has not acted yet).
    Controller {
        name: String,
        view: Option<ReconcileView>,
    },
    /// The scheduler's decision for a pod.
    Scheduler(SchedulerFrame),
}

/// One record entry, as the page's flow and captions will need it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordLine {
    pub seq: Seq,
    pub time_ms: u64,
    pub revision: i64,
    /// The component that acted, by name.
    pub actor: String,
    pub cause: Option<Seq>,
    /// `POST /api/v1/namespaces/default/pods 201`, `watch: ADDED pod/web-x → kube-scheduler`,
    /// or the component's own words.
    pub text: String,
}

/// The record's entries since the previous frame.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordDelta {
    /// The last entry the previous frame had (the delta starts after it).
    pub after: Seq,
    /// Entries since then not carried (more than [`RECORD_LINES`]).
    pub skipped: u64,
    pub lines: Vec<RecordLine>,
}

/// The map's messages as of the frame: each with the real time it left, so the page moves it
/// on every animation frame by itself until it arrives.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowFrame {
    pub messages: Vec<Message>,
    /// Real milliseconds a message takes from sender to receiver.
    pub travel_ms: f64,
    /// The sentence of the latest hop to leave.
    pub caption: String,
    /// Background entries the teaching pace passed over since its last hop left.
    pub passed_over: u64,
    /// Messages wait to leave, or travel: the page keeps asking for frames, even paused.
    pub busy: bool,
}

impl FlowFrame {
    /// The messages still on their way at `now_ms`, each with its progress (0 as it leaves,
    /// 1 as it arrives).
    pub fn at(&self, now_ms: f64) -> Vec<Message> {
        let travel = self.travel_ms.max(1.0);
        self.messages
            .iter()
            .filter(|m| now_ms - m.started_ms < travel)
            .map(|m| Message { progress: ((now_ms - m.started_ms) / travel).clamp(0.0, 1.0), ..m.clone() })
            .collect()
    }

    /// Whether a message is still on its way at `now_ms`.
    pub fn moving(&self, now_ms: f64) -> bool {
        let travel = self.travel_ms.max(1.0);
        self.messages.iter().any(|m| now_ms - m.started_ms < travel)
    }
}

/// Everything the page draws for one frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// The record's last entry: what is drawn from the cluster moves when it moves.
    pub last_seq: Seq,
    /// Virtual time, in milliseconds since the cluster started.
    pub time_ms: u64,
    /// The revisions time travel reaches: the oldest kept, and the present.
    pub revisions: (i64, i64),
    /// The terminal's prompt while attached to a container's shell.
    pub prompt: Option<String>,
    /// The tables and node cards (None: unchanged since the previous frame).
    pub snapshot: Option<Snapshot>,
    /// The map's board, when the query asked for one (from the simulation's own frames:
    /// None when unchanged).
    pub board: Option<Board>,
    /// The board's layout, which its wire form leaves out: with every whole frame's board, and
    /// with the simulation's own frames' boards only when it changed since the last one sent
    /// (None: the page keeps the one it has).
    pub layout: Option<Rc<Layout>>,
    /// The map's messages (the simulation's own frames only).
    pub flow: FlowFrame,
    pub sequence: Option<Sequence>,
    pub detail: Option<DetailFrame>,
    pub records: RecordDelta,
}

impl Frame {
    /// The board whole again, as the page takes it from a frame that crossed as JSON (where the
    /// board leaves its layout out): with the frame's layout, or, when it brings none, with
    /// `known`, the one the page already has.
    pub fn whole_board(&self, known: &Rc<Layout>) -> Option<Board> {
        let layout = match &self.layout {
            Some(l) if l != known => l.clone(),
            _ => known.clone(),
        };
        self.board.as_ref().map(|b| Board { layout, ..b.clone() })
    }
}

/// The frame for `session` as `query` asks, with the record's entries after `after`.
pub fn frame_of(session: &Session, query: &FrameQuery, after: Seq) -> Frame {
    frame_parts(session, query, after, Parts { tables: true, board: true })
}

/// The frame for `session` as `query` asks, with only `parts` of its costly parts (the rest
/// None: unchanged since the previous frame).
pub fn frame_parts(session: &Session, query: &FrameQuery, after: Seq, parts: Parts) -> Frame {
    let cluster = &session.cluster;
    let etcd = cluster.inspect().etcd();
    let revisions = (etcd.compacted_revision().max(1), etcd.revision());
    let detail = query.detail.as_ref().filter(|_| parts.tables).map(|d| match d {
        Detail::Etcd => DetailFrame::Etcd(crate::views::etcd::etcd_view(cluster, ETCD_WRITES)),
        Detail::Controller(name, object) => DetailFrame::Controller {
            name: name.clone(),
            view: crate::views::reconcile::reconcile_view(cluster, name, object.as_deref()),
        },
        Detail::Scheduler(pod) => DetailFrame::Scheduler(scheduler_frame(cluster, pod.as_deref())),
    });
    let board = (parts.board && query.board).then(|| crate::views::map::board_at(cluster, query.board_at));
    Frame {
        layout: board.as_ref().map(|b| b.layout.clone()),
        last_seq: cluster.record.last_seq(),
        time_ms: cluster.now().0,
        revisions,
        prompt: session.prompt().map(String::from),
        snapshot: parts.tables.then(|| snapshot_at(session, query.past)),
        board,
        sequence: (parts.tables && query.sequence).then(|| crate::views::sequence::sequence(cluster, SEQUENCE_STEPS)),
        detail,
        records: if query.records {
            record_delta(session, after)
        } else {
            RecordDelta { after, ..RecordDelta::default() }
        },
        flow: FlowFrame::default(),
    }
}

/// The record's entries after `after`, the latest [`RECORD_LINES`] of them.
fn record_delta(session: &Session, after: Seq) -> RecordDelta {
    let cluster = &session.cluster;
    let fresh: Vec<&Entry> = cluster.record.since(after).collect();
    let skipped = fresh.len().saturating_sub(RECORD_LINES);
    let lines = fresh[skipped..]
        .iter()
        .map(|e| RecordLine {
            seq: e.seq,
            time_ms: e.time.0,
            revision: e.revision,
            actor: cluster.component_name(e.actor).to_string(),
            cause: e.cause,
            text: match &e.what {
                Happening::Request { method, path, code, .. } => format!("{method} {path} {code}"),
                Happening::Notify { to, event, kind, name, .. } => format!(
                    "watch: {} {}/{name} → {}",
                    event.as_str(),
                    kind.info().resource,
                    cluster.component_name(*to)
                ),
                Happening::Decision { text } => text.clone(),
                Happening::KubeletCall { to, method, path } => {
                    format!("{method} {path} → {}", cluster.component_name(*to))
                }
            },
        })
        .collect();
    RecordDelta { after, skipped: skipped as u64, lines }
}
