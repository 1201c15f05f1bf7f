//! The manifest editor: a text area laid exactly over a highlighted copy of its text, with
//! line numbers, and the lines kubectl's last error pointed at marked in both.
//!
//! The text area stays the one control assistive technology sees (the copy and the gutter are
//! `aria-hidden`); its text is transparent and the copy under it shows the colours. The DOM
//! text area holds the text: the page reads it, and fills it through [`set_text`].

use crate::editor::errors::Mark;
use crate::editor::highlight::{Class, highlight};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, HtmlTextAreaElement};
use yew::prelude::*;

/// What the editor's buttons ask kubectl to do with its text.
pub use crate::page::ManifestAction as Action;

/// The `kubectl` command line an action runs on the editor's text (`-f -`: the text is its
/// standard input).
pub fn command_line(action: Action) -> String {
    action.command_line()
}

/// Puts `text` in the editor as if typed: the highlighting follows and old marks go.
pub fn set_text(area: &NodeRef, text: &str) {
    if let Some(a) = area.cast::<HtmlTextAreaElement>() {
        a.set_value(text);
        if let Ok(event) = web_sys::Event::new("input") {
            let _ = a.dispatch_event(&event);
        }
    }
}

#[derive(Properties, PartialEq)]
pub struct EditorProps {
    /// The text area, which the page reads.
    pub area: NodeRef,
    /// The text it starts with.
    pub initial: AttrValue,
    /// The lines the last failed command pointed at.
    pub marks: Rc<Vec<Mark>>,
    /// The text changed.
    pub on_edit: Callback<()>,
}

#[function_component(ManifestEditor)]
pub fn manifest_editor(props: &EditorProps) -> Html {
    let redraw = use_force_update();
    let view = use_node_ref();
    let gutter = use_node_ref();
    let text = props.area.cast::<HtmlTextAreaElement>().map_or_else(|| props.initial.to_string(), |a| a.value());

    let sync: Rc<dyn Fn()> = {
        let (area, view, gutter) = (props.area.clone(), view.clone(), gutter.clone());
        Rc::new(move || sync_scroll(&area, &view, &gutter))
    };
    let oninput = {
        let (redraw, on_edit) = (redraw.clone(), props.on_edit.clone());
        Callback::from(move |_: InputEvent| {
            redraw.force_update();
            on_edit.emit(());
        })
    };
    let onscroll = {
        let sync = sync.clone();
        Callback::from(move |_: Event| sync())
    };
    // After each render the copy follows the text area's scroll position.
    {
        let sync = sync.clone();
        use_effect(move || sync());
    }
    // New marks: scroll the first into view.
    {
        let (area, view, gutter) = (props.area.clone(), view.clone(), gutter.clone());
        use_effect_with(props.marks.clone(), move |marks| {
            if let Some(first) = marks.first() {
                reveal(&area, &view, first.line);
                sync_scroll(&area, &view, &gutter);
            }
        });
    }
    let go_to = {
        let (area, view, gutter) = (props.area.clone(), view.clone(), gutter.clone());
        move |line: usize| {
            let (area, view, gutter) = (area.clone(), view.clone(), gutter.clone());
            Callback::from(move |_: MouseEvent| {
                select_line(&area, line);
                reveal(&area, &view, line);
                sync_scroll(&area, &view, &gutter);
            })
        }
    };

    let marked = |n: usize| props.marks.iter().any(|m| m.line == n);
    let lines = highlight(&text);
    let invalid = !props.marks.is_empty();
    let several = props.marks.len() > 1;
    html! {
        <>
        <div class={classes!("code-editor", invalid.then_some("invalid"))}>
            <div class="gutter" ref={gutter} aria-hidden="true">
                { for (1..=lines.len()).map(|n| html! {
                    <span class={classes!("num", marked(n).then_some("err"))}>{n}</span>
                }) }
            </div>
            <div class="code-wrap">
                <pre id="manifest-view" class="code-view" ref={view} aria-hidden="true"><code>
                    { for lines.iter().enumerate().map(|(i, spans)| html! {
                        <span class={classes!("code-line", marked(i + 1).then_some("err"))}>
                            { for spans.iter().map(|s| match s.class {
                                Class::Plain => html! { {s.text} },
                                c => html! { <span class={c.css()}>{s.text}</span> },
                            }) }
                        </span>
                    }) }
                </code></pre>
                <textarea id="manifest" ref={props.area.clone()} spellcheck="false" wrap="off" rows="18"
                    autocapitalize="off" autocomplete="off"
                    aria-label="Manifest (YAML)" aria-invalid={invalid.then_some("true")}
                    aria-describedby={invalid.then_some("editor-marks apply-error")}
                    defaultvalue={props.initial.clone()} {oninput} {onscroll} />
            </div>
        </div>
        if invalid {
            <ul id="editor-marks" class="editor-marks" aria-label="Lines the error points at">
                { for props.marks.iter().map(|m| html! {
                    <li data-line={m.line.to_string()}>
                        <span class="mark-icon" aria-hidden="true">{"!"}</span>
                        <button class="linkish" onclick={go_to(m.line)} title="put the cursor on this line">
                            {format!("line {}", m.line)}
                        </button>
                        if let Some(n) = m.kubectl_line() {
                            <span class="muted-note">{format!(" (kubectl's line {n}: it counts from the start of the document)")}</span>
                        }
                        // One mark: the error below says it all. Several: which is which.
                        if several {
                            {": "}
                            <span class="mark-message">{m.message.clone()}</span>
                        }
                    </li>
                }) }
            </ul>
        }
        </>
    }
}

/// Scrolls the highlighted copy and the gutter to where the text area is.
fn sync_scroll(area: &NodeRef, view: &NodeRef, gutter: &NodeRef) {
    let Some(a) = area.cast::<Element>() else { return };
    if let Some(v) = view.cast::<Element>() {
        v.set_scroll_top(a.scroll_top());
        v.set_scroll_left(a.scroll_left());
    }
    if let Some(g) = gutter.cast::<Element>() {
        g.set_scroll_top(a.scroll_top());
    }
}

/// Scrolls the text area so `line` sits a third of the way down, unless already in view.
fn reveal(area: &NodeRef, view: &NodeRef, line: usize) {
    let (Some(a), Some(v)) = (area.cast::<Element>(), view.cast::<Element>()) else { return };
    let Some(row) = v
        .query_selector(&format!(".code-line:nth-child({line})"))
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<HtmlElement>().ok())
    else {
        return;
    };
    let (top, height) = (row.offset_top(), row.offset_height());
    let (scroll, client) = (a.scroll_top(), a.client_height());
    if top < scroll || top + height > scroll + client {
        a.set_scroll_top((top - client / 3).max(0));
    }
}

/// Puts the cursor at the start of `line` (1-based) and focuses the text area.
fn select_line(area: &NodeRef, line: usize) {
    let Some(a) = area.cast::<HtmlTextAreaElement>() else { return };
    let value = a.value();
    let start: usize = value.split('\n').take(line.saturating_sub(1)).map(|l| l.encode_utf16().count() + 1).sum();
    let start = u32::try_from(start).unwrap_or(u32::MAX);
    let _ = a.focus();
    let _ = a.set_selection_range(start, start);
}
