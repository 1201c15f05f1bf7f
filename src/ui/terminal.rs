//! The terminal: its scrollback, and the input line whose keys go to the page's update
//! (Enter runs, Tab completes, arrows recall, Ctrl-C abandons, Ctrl-D leaves a shell).

use crate::page::{Action, Key, Line};
use std::rc::Rc;
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct TerminalProps {
    pub lines: Rc<Vec<Line>>,
    /// `$`, or a container shell's prompt while attached to one.
    pub prompt: String,
    pub attached: bool,
    /// A command the simulation is still running, as shown.
    #[prop_or_default]
    pub running: Option<String>,
    pub input: NodeRef,
    /// Sends a key's action; true when the page handled the key (the browser then does not).
    pub on_key: Callback<Action, bool>,
}

/// The key a keydown is for the terminal, if any.
fn key_of(e: &KeyboardEvent) -> Option<Key> {
    match e.key().as_str() {
        "Tab" => Some(Key::Tab),
        "c" if e.ctrl_key() => Some(Key::CtrlC),
        "d" if e.ctrl_key() => Some(Key::CtrlD),
        "Enter" => Some(Key::Enter),
        "ArrowUp" => Some(Key::Up),
        "ArrowDown" => Some(Key::Down),
        _ => None,
    }
}

#[function_component(TerminalPane)]
pub fn terminal_pane(props: &TerminalProps) -> Html {
    let on_keydown = {
        let (input, on_key) = (props.input.clone(), props.on_key.clone());
        Callback::from(move |e: KeyboardEvent| {
            let Some(field) = input.cast::<HtmlInputElement>() else { return };
            let Some(key) = key_of(&e) else { return };
            if on_key.emit(Action::TerminalKey(key, field.value())) {
                e.prevent_default();
            }
        })
    };
    let attached = props.attached;
    html! {
        <>
        <h2>{"Terminal"}</h2>
        <div class="terminal" id="terminal">
            <pre id="terminal-output" aria-live="polite">
            { for props.lines.iter().map(|l| match l {
                Line::Command(c) => html! { <div class="cmd">{format!("$ {c}")}</div> },
                Line::Typed(c) => html! { <div class="cmd">{c}</div> },
                Line::Out(o) => html! { <div class="out">{o}</div> },
                Line::Err(e) => html! { <div class="err">{e}</div> },
            }) }
            if let Some(command) = props.running.clone() {
                <div class="cmd pending-command" id="terminal-running">{command}<span class="pending-note">{" … running"}</span></div>
            }
            </pre>
            <div class="prompt">
                <span id="terminal-prompt" aria-hidden="true">{props.prompt.clone()}</span>
                <input id="terminal-input" ref={props.input.clone()} onkeydown={on_keydown} autocomplete="off" spellcheck="false"
                    aria-label={if attached { "Command for the container's shell; exit or Ctrl-D leaves it" } else { "Command (kubectl, etcdctl, sleep, sim); Tab completes, arrows recall history" }}
                    placeholder={if attached { "" } else { "kubectl get pods" }} />
            </div>
        </div>
        </>
    }
}
