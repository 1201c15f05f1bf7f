//! A controller's reconciliation loop, drawn (PICTURES.md §4): observe → compare → act on a
//! cycle for the object in focus, the stations lit as each turn arrives, and the turns the
//! record kept listed under it, each with the change that woke it.

use crate::views::map::fit;
use crate::views::reconcile::{ReconcileView, Turn};
use web_sys::HtmlSelectElement;
use yew::prelude::*;

#[derive(Properties, PartialEq, Clone)]
pub struct ReconcileLoopProps {
    pub view: ReconcileView,
    /// The close button.
    #[prop_or_default]
    pub on_close: Callback<()>,
    /// Another object picked from the list: its key (`default/web-x`).
    #[prop_or_default]
    pub on_pick: Callback<String>,
}

/// The drawing's size, in its own units.
const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 252.0;
/// A station's box.
const STATION_W: f64 = 224.0;
const STATION_H: f64 = 88.0;
/// The stations' text size, and how many lines a station's sentence may take.
const FONT: f64 = 12.5;
const LINES: usize = 3;

#[function_component(ReconcileLoop)]
pub fn reconcile_loop(props: &ReconcileLoopProps) -> Html {
    let view = &props.view;
    let on_close = props.on_close.clone();
    let on_pick = props.on_pick.clone();
    let pick = Callback::from(move |e: Event| {
        if let Some(select) = e.target_dyn_into::<HtmlSelectElement>() {
            on_pick.emit(select.value());
        }
    });
    let latest = view.turns.first();
    let label = format!(
        "Reconciliation loop of {} for {}: observe, {}; compare, {}; act, {}.",
        view.controller, view.object, view.observe, view.compare, view.act
    );
    html! {
        <section class={classes!("reconcile-loop", view.idle.then_some("idle"))}
            aria-label={format!("{}: its reconciliation loop", view.controller)}>
            <div class="reconcile-head">
                <h3 class="reconcile-title">{&view.controller}</h3>
                if view.objects.len() > 1 {
                    <label class="reconcile-pick">
                        <span>{"object "}</span>
                        <select id="reconcile-object" onchange={pick}>
                            { for view.objects.iter().map(|o| html! {
                                <option value={o.clone()} selected={*o == view.object}>{o}</option>
                            }) }
                        </select>
                    </label>
                } else {
                    <code class="reconcile-object">{&view.object}</code>
                }
                <button type="button" class="reconcile-close" onclick={Callback::from(move |_: MouseEvent| on_close.emit(()))}>
                    {"close"}
                </button>
            </div>
            <svg id="reconcile-loop" role="img" aria-label={label} viewBox={format!("0 0 {WIDTH} {HEIGHT}")}
                preserveAspectRatio="xMidYMid meet">
                <defs>
                    <marker id="reconcile-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7"
                        orient="auto-start-reverse">
                        <path d="M0,0 L10,5 L0,10 z" />
                    </marker>
                </defs>
                {cycle(latest)}
                // Keyed by the latest turn: a new turn draws the stations afresh, which plays
                // their lighting once.
                <g key={latest.map_or(0, |t| t.seq).to_string()} class="stations">
                    {station("observe", "①", "observe", &view.observe, (8.0, 36.0), latest.is_some(), false)}
                    {station("compare", "②", "compare", &view.compare, (WIDTH - STATION_W - 8.0, 36.0), latest.is_some(), false)}
                    {station("act", if view.idle { "✓" } else { "③" }, "act", &view.act,
                        ((WIDTH - STATION_W) / 2.0, HEIGHT - STATION_H - 6.0), latest.is_some(), view.idle)}
                </g>
            </svg>
            if view.turns.is_empty() {
                <p class="reconcile-none">{"No turns in the record for this object yet."}</p>
            } else {
                <h4 class="reconcile-heading">{"turns, newest first"}</h4>
                <ol id="reconcile-turns" class="reconcile-turns" aria-label="Turns of the loop, newest first">
                    { for view.turns.iter().enumerate().map(|(i, t)| turn(t, i == 0)) }
                </ol>
            }
        </section>
    }
}

/// The arrows of the cycle (observe → compare → act → observe) and, inside it, what woke the
/// latest turn.
fn cycle(latest: Option<&Turn>) -> Html {
    let (left, right) = (8.0 + STATION_W, WIDTH - STATION_W - 8.0);
    let mid_y = 36.0 + STATION_H / 2.0;
    let act_y = HEIGHT - 6.0 - STATION_H / 2.0;
    let act_left = (WIDTH - STATION_W) / 2.0;
    let act_right = act_left + STATION_W;
    let down = format!(
        "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
        right + STATION_W * 0.6,
        36.0 + STATION_H,
        right + STATION_W * 0.6,
        act_y,
        act_right + 30.0,
        act_y,
        act_right + 2.0,
        act_y
    );
    let up = format!(
        "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
        act_left - 2.0,
        act_y,
        8.0 + STATION_W * 0.4 + 10.0,
        act_y,
        8.0 + STATION_W * 0.4,
        act_y - 10.0,
        8.0 + STATION_W * 0.4,
        36.0 + STATION_H + 2.0
    );
    let woke = latest.map(|t| format!("woken at {} by", t.at));
    let trigger = latest.map(|t| t.trigger.clone());
    html! {
        <g class="cycle" aria-hidden="true">
            <path class="arrow" d={format!("M{:.1},{mid_y:.1} L{:.1},{mid_y:.1}", left + 2.0, right - 2.0)}
                marker-end="url(#reconcile-arrow)" />
            <path class="arrow" d={down} marker-end="url(#reconcile-arrow)" />
            <path class="arrow" d={up} marker-end="url(#reconcile-arrow)" />
            <text class="cycle-mark" x={format!("{:.1}", WIDTH / 2.0)} y={format!("{:.1}", mid_y - 8.0)}>{"↻"}</text>
            if let (Some(woke), Some(trigger)) = (woke, trigger) {
                <text class="cycle-woke" x={format!("{:.1}", WIDTH / 2.0)} y="14">{woke}</text>
                <text class="cycle-trigger" x={format!("{:.1}", WIDTH / 2.0)} y="28">{fit(&trigger, WIDTH - 20.0, 11.5)}</text>
            } else {
                <text class="cycle-woke" x={format!("{:.1}", WIDTH / 2.0)} y="20">{"no turn recorded yet: watching"}</text>
            }
        </g>
    }
}

/// One station: its glyph and name, and its sentence wrapped onto a few lines.
fn station(id: &str, glyph: &str, name: &str, text: &str, (x, y): (f64, f64), lit: bool, idle: bool) -> Html {
    let room = ((STATION_W - 20.0) / (FONT * 0.56)).floor() as usize;
    let lines = wrap(text, room, LINES);
    html! {
        <g class={classes!("station", id.to_string(), lit.then_some("lit"), idle.then_some("idle"))}
            data-station={id.to_string()} transform={format!("translate({x:.1},{y:.1})")}>
            <title>{format!("{name}: {text}")}</title>
            <rect width={STATION_W.to_string()} height={STATION_H.to_string()} rx="10" />
            <text class="station-name" x="12" y="20">{format!("{glyph} {name}")}</text>
            <text class="station-line" x="12" y="40">
                { for lines.iter().enumerate().map(|(i, l)| html! {
                    <tspan x="12" dy={if i == 0 { "0".to_string() } else { format!("{:.1}", FONT * 1.3) }}>{l}</tspan>
                }) }
            </text>
        </g>
    }
}

/// One turn in the list: when, what woke it, desired against actual, what it did.
fn turn(t: &Turn, latest: bool) -> Html {
    let counts = match (t.want, t.have) {
        (Some(want), Some(have)) => Some(format!("want {want} · have {have}")),
        _ => None,
    };
    let idle = t.action == crate::views::reconcile::NOTHING_TO_DO;
    html! {
        <li class={classes!("turn", latest.then_some("latest"), idle.then_some("idle"))} data-seq={t.seq.to_string()}>
            <span class="turn-at">{&t.at}</span>
            <span class="turn-body">
                <span class="turn-trigger">{"woken by "}{&t.trigger}</span>
                <span class="turn-outcome">
                    if let Some(counts) = counts {
                        <span class="turn-counts">{counts}</span>
                    }
                    <span class="turn-action">{if idle { "✓ " } else { "→ " }}{&t.action}</span>
                    if !t.writes.is_empty() {
                        <span class="turn-writes">{t.writes.join(", ")}</span>
                    }
                    if latest {
                        <span class="turn-latest">{"latest"}</span>
                    }
                </span>
            </span>
        </li>
    }
}

/// `text` in lines of at most `room` characters, broken at spaces, at most `lines` of them (the
/// last cut with `…` when more would be needed).
fn wrap(text: &str, room: usize, lines: usize) -> Vec<String> {
    let room = room.max(8);
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let needed = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if !line.is_empty() && needed > room {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    if out.len() > lines {
        let rest = out[lines - 1..].join(" ");
        out.truncate(lines - 1);
        out.push(rest);
    }
    out.into_iter().map(|l| fit(&l, room as f64 * FONT * 0.6, FONT)).collect()
}
