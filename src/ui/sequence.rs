//! The sequence of one apply (`crate::views::sequence`), drawn as courses draw it: a swimlane
//! per component with its lifeline, numbered arrows top to bottom, and beside them the list of
//! the steps' sentences. Selecting a step (in either) tells the page which record entry and
//! revision to show.
//!
//! Requests are solid arrows with filled heads, watch notifications dashed with open heads,
//! writes to etcd thick, a component's own decision a note on its lane: never colour alone.

use crate::views::sequence::{SeqStep, Sequence};
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct SequenceProps {
    pub sequence: Sequence,
    /// The selected step's record entry.
    #[prop_or_default]
    pub selected: Option<u64>,
    /// A step was chosen: its record entry and etcd's revision then.
    pub on_select: Callback<(u64, i64)>,
}

/// The numbers' column on the left.
const GUTTER: f64 = 30.0;
/// Room per lane: the viewBox grows with the lanes and the SVG scales to its container.
const LANE_W: f64 = 112.0;
/// The lane titles' band.
const HEAD: f64 = 46.0;
/// Between two arrows.
const ROW: f64 = 28.0;
/// Width of a character of the arrows' 11px monospace labels, in viewBox units.
const CHAR_W: f64 = 6.7;
/// Longest label, in characters, however much room there is.
const LABEL_MAX: usize = 52;
/// The smallest the diagram is drawn, against its viewBox: below, its box scrolls sideways
/// rather than shrink the labels past reading (11px × 0.8).
const MIN_SCALE: f64 = 0.8;
/// Longest line of a lane title.
const TITLE_MAX: usize = 16;

/// `text` cut to `max` characters, the last one an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A lane title on at most two lines: `replicaset-` / `controller`, `kubelet` / `worker-2`.
fn title_lines(title: &str) -> (String, Option<String>) {
    if title.chars().count() <= TITLE_MAX {
        return (title.to_string(), None);
    }
    let split = title.find(' ').map(|i| (i, i + 1)).or_else(|| title.rfind('-').map(|i| (i + 1, i + 1)));
    match split {
        Some((end, start)) => (cut(&title[..end], TITLE_MAX), Some(cut(&title[start..], TITLE_MAX))),
        None => (cut(title, TITLE_MAX), None),
    }
}

/// What kind of arrow a step is, read from its lanes and label.
fn step_class(sequence: &Sequence, step: &SeqStep) -> &'static str {
    let key = |i: usize| sequence.lanes.get(i).map_or("", |l| l.key.as_str());
    if step.from == step.to {
        "note"
    } else if key(step.to) == "etcd" {
        "store"
    } else if key(step.to) == "kube-apiserver" {
        "request"
    } else if key(step.from) == "kube-apiserver" {
        "notify"
    } else {
        "runtime"
    }
}

fn lane_x(i: usize) -> f64 {
    GUTTER + LANE_W * (i as f64 + 0.5)
}

fn row_y(i: usize) -> f64 {
    HEAD + ROW * (i as f64 + 0.75)
}

/// Focuses the list's button for step `n` (from 1), if it is there.
fn focus_step(n: usize) {
    let found = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(&format!("#sequence-steps button[data-n=\"{n}\"]")).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(button) = found {
        let _ = button.focus();
    }
}

#[function_component(SequenceView)]
pub fn sequence_view(props: &SequenceProps) -> Html {
    let seq = &props.sequence;
    let lanes = seq.lanes.len().max(1);
    let width = GUTTER + LANE_W * lanes as f64;
    let height = HEAD + ROW * seq.steps.len() as f64 + ROW * 0.5;
    let select = |step: &SeqStep| {
        let (on_select, seq, revision) = (props.on_select.clone(), step.seq, step.revision);
        Callback::from(move |_: MouseEvent| on_select.emit((seq, revision)))
    };
    let names: Vec<&str> = seq.lanes.iter().map(|l| l.title.as_str()).collect();
    let label = if seq.steps.is_empty() {
        "Sequence of the last apply: nothing to show yet".to_string()
    } else {
        format!("Sequence of the last apply: {} steps between {}", seq.steps.len(), names.join(", "))
    };

    let heads = seq.lanes.iter().enumerate().map(|(i, lane)| {
        let x = lane_x(i);
        let (first, second) = title_lines(&lane.title);
        html! {
            <g class="lane" data-lane={lane.key.clone()}>
                <title>{&lane.title}</title>
                <rect class="lane-head" x={(x - LANE_W / 2.0 + 4.0).to_string()} y="4"
                    width={(LANE_W - 8.0).to_string()} height={(HEAD - 12.0).to_string()} rx="5" />
                if let Some(second) = second {
                    <text class="lane-title" x={x.to_string()} y="19" text-anchor="middle">{first}</text>
                    <text class="lane-title" x={x.to_string()} y="32" text-anchor="middle">{second}</text>
                } else {
                    <text class="lane-title" x={x.to_string()} y="25" text-anchor="middle">{first}</text>
                }
                <line class="lifeline" x1={x.to_string()} y1={(HEAD - 8.0).to_string()}
                    x2={x.to_string()} y2={height.to_string()} />
            </g>
        }
    });

    let arrows = seq.steps.iter().enumerate().map(|(i, step)| {
        let y = row_y(i);
        let (x1, x2) = (lane_x(step.from), lane_x(step.to));
        let class = step_class(seq, step);
        let refused = step.label.contains(" ✗ ");
        let selected = props.selected == Some(step.seq);
        let classes = classes!("step", class, refused.then_some("refused"), selected.then_some("selected"));
        // Each kind of arrow has its own head (markers do not take the line's colour everywhere).
        let marker = if refused { "url(#seq-head-refused)".to_string() } else { format!("url(#seq-head-{class})") };
        let left = x1.min(x2);
        let room = ((width - left - 8.0) / CHAR_W) as usize;
        let text = cut(&step.label, room.min(LABEL_MAX));
        let mark = if step.from == step.to {
            html! {
                <>
                    <rect class="note-mark" x={(x1 - 5.0).to_string()} y={(y - 5.0).to_string()} width="10" height="10"
                        transform={format!("rotate(45 {x1} {y})")} />
                    <text class="label" x={(x1 + 10.0).to_string()} y={(y + 4.0).to_string()}>{text}</text>
                </>
            }
        } else {
            let dir = if x2 > x1 { -1.0 } else { 1.0 };
            html! {
                <>
                    <line class="arrow" x1={x1.to_string()} y1={y.to_string()} x2={(x2 + dir * 1.5).to_string()} y2={y.to_string()}
                        marker-end={marker} />
                    <text class="label" x={(left + 6.0).to_string()} y={(y - 5.0).to_string()}>{text}</text>
                </>
            }
        };
        html! {
            <g class={classes} data-seq={step.seq.to_string()} data-from={step.from.to_string()}
                data-to={step.to.to_string()} data-n={step.n.to_string()} onclick={select(step)}>
                <title>{format!("{}. {}", step.n, step.caption)}</title>
                <rect class="hit" x="0" y={(y - ROW / 2.0 - 2.0).to_string()} width={width.to_string()} height={ROW.to_string()} />
                <text class="n" x={(GUTTER - 6.0).to_string()} y={(y + 4.0).to_string()} text-anchor="end">{step.n}</text>
                {mark}
            </g>
        }
    });

    let count = seq.steps.len();
    // Each step's entry, revision and number, shared by every item's key handler.
    let order: std::rc::Rc<Vec<(u64, i64, usize)>> =
        std::rc::Rc::new(seq.steps.iter().map(|s| (s.seq, s.revision, s.n)).collect());
    let items = seq.steps.iter().enumerate().map(|(i, step)| {
        let selected = props.selected == Some(step.seq);
        let onkeydown = {
            let (on_select, order) = (props.on_select.clone(), order.clone());
            Callback::from(move |e: KeyboardEvent| {
                let to = match e.key().as_str() {
                    "ArrowDown" | "ArrowRight" if i + 1 < count => i + 1,
                    "ArrowUp" | "ArrowLeft" if i > 0 => i - 1,
                    "Home" => 0,
                    "End" => count.saturating_sub(1),
                    _ => return,
                };
                e.prevent_default();
                if let Some(&(seq, revision, n)) = order.get(to) {
                    on_select.emit((seq, revision));
                    focus_step(n);
                }
            })
        };
        let from = seq.lanes.get(step.from).map_or("", |l| l.title.as_str());
        let to = seq.lanes.get(step.to).map_or("", |l| l.title.as_str());
        let route = if step.from == step.to { from.to_string() } else { format!("{from} → {to}") };
        html! {
            <li class={classes!(step_class(seq, step), selected.then_some("selected"))} value={step.n.to_string()}>
                <button class="linkish" data-seq={step.seq.to_string()} data-n={step.n.to_string()}
                    aria-current={selected.then_some("step")} onclick={select(step)} {onkeydown}>
                    <span class="at">{&step.at}</span>{" "}<span class="route">{route}</span>{" "}
                    <span class="caption">{&step.caption}</span>
                </button>
            </li>
        }
    });

    html! {
        <div class="sequence-view">
            <div class="sequence-diagram">
                <svg id="sequence" role="img" aria-label={label} viewBox={format!("0 0 {width} {height}")}
                    preserveAspectRatio="xMidYMin meet" width="100%"
                    style={format!("min-width: {}px", (width * MIN_SCALE).round())}>
                    <defs>
                        { for ["request", "store", "runtime", "refused", "notify"].iter().map(|kind| {
                            let path = if *kind == "notify" { "M0,0 L10,5 L0,10" } else { "M0,0 L10,5 L0,10 z" };
                            html! {
                                <marker id={format!("seq-head-{kind}")} viewBox="0 0 10 10" refX="9" refY="5"
                                    markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse">
                                    <path d={path} class={classes!("head", *kind)} />
                                </marker>
                            }
                        }) }
                    </defs>
                    { for heads }
                    { for arrows }
                </svg>
            </div>
            <ol id="sequence-steps" class="sequence-steps" aria-label="The steps, in order">
                { for items }
            </ol>
        </div>
    }
}
