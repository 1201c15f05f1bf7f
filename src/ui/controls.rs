//! The time controls in the page's header: the virtual clock and etcd's revision, time travel,
//! play/pause, step, the speed, skip to settled, presenter mode, share, export and reset.

use crate::page::Action;
use crate::page::state::SPEEDS;
use crate::sim::Duration;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ControlsProps {
    /// Virtual time since the cluster started, as shown (the past's when time travelling).
    pub clock: Duration,
    pub revision: i64,
    /// The oldest revision etcd keeps, and the present one.
    pub oldest: i64,
    pub latest: i64,
    pub past: Option<i64>,
    pub playing: bool,
    pub speed: f64,
    pub teaching: bool,
    pub presenter: bool,
    /// The speed the clock achieves, when it falls short of the one chosen.
    pub shortfall: Option<String>,
    pub dispatch: Callback<Action>,
}

#[function_component(TimeControls)]
pub fn time_controls(props: &ControlsProps) -> Html {
    let d = &props.dispatch;
    let on_scrub = {
        let d = d.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(v) = e.target_dyn_into::<HtmlInputElement>().and_then(|i| i.value().parse::<i64>().ok()) {
                d.emit(Action::Scrub(v));
            }
        })
    };
    let on_speed = d.reform(|e: Event| {
        Action::Speed(e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value()).unwrap_or_default())
    });
    let click = |action: Action| d.reform(move |_: MouseEvent| action.clone());
    html! {
        <div class="time-controls" role="group" aria-label="Time controls">
            <span id="clock" class="clock" title="virtual time since the cluster started">{format!("t = {}", crate::kubectl::age::human_duration(props.clock))}</span>
            <span class="revision" title="etcd's revision">{format!("rev {}", props.revision)}</span>
            <label for="scrubber" class="sr-only">{"Time travel: etcd revision"}</label>
            <input id="scrubber" type="range" min={props.oldest.to_string()} max={props.latest.to_string()}
                value={props.past.unwrap_or(props.latest).to_string()} oninput={on_scrub}
                title="time travel: drag back through etcd's revisions" />
            <button id="play" onclick={click(Action::TogglePlay)} aria-pressed={(!props.playing).to_string()}>{ if props.playing { "pause" } else { "play" } }</button>
            <button id="step" onclick={click(Action::Step)} title="run the next component that is due">{"step"}</button>
            <label for="speed" class="sr-only">{"Speed"}</label>
            <select id="speed" onchange={on_speed} aria-label="Speed"
                title="teaching: the simulation waits for the map, one step at a time, each with a sentence">
                <option value="teaching" selected={props.teaching}>{"teaching pace"}</option>
                { for SPEEDS.iter().map(|(v, label)| html! { <option value={v.to_string()} selected={!props.teaching && (props.speed - v).abs() < 1e-9}>{*label}</option> }) }
            </select>
            if let Some(short) = props.shortfall.clone() {
                <span id="achieved-speed" class="achieved" role="status"
                    title="the page gives the simulation a budget per frame, so a big cluster runs slower than the speed chosen rather than freezing the page">{short}</span>
            }
            <button id="settle" onclick={click(Action::Settle)} title="run virtual time until the cluster has nothing left to do">{"skip to settled"}</button>
            <button id="presenter" onclick={click(Action::TogglePresenter)} aria-pressed={props.presenter.to_string()} title="large type, high contrast, slow motion (key: p)">{"presenter"}</button>
            <button id="share" onclick={click(Action::Share)} title="a link that replays this session (seed and commands), to copy and share">{"share"}</button>
            <button id="export" onclick={click(Action::Export)} title="download the objects you made, with the fields you set, as YAML for a real cluster (sim export)">{"export YAML"}</button>
            <button id="reset" onclick={click(Action::Reset)} title="start again with a fresh cluster">{"reset"}</button>
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct TimeTravelProps {
    pub revision: i64,
    pub clock: Duration,
    pub dispatch: Callback<Action>,
}

/// Says the page shows the past, with a way back to now.
#[function_component(TimeTravelNote)]
pub fn time_travel_note(props: &TimeTravelProps) -> Html {
    let on_now = props.dispatch.reform(|_: MouseEvent| Action::BackToNow);
    html! {
        <p id="time-travel" class="time-travel" role="status">
            {format!("Time travel: the cluster as etcd held it at revision {} (t = {}). Commands still act on the present. ", props.revision, crate::kubectl::age::human_duration(props.clock))}
            <button class="small" onclick={on_now}>{"back to now"}</button>
        </p>
    }
}
