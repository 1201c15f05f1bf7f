//! The manifest editor's pane: the examples, the editor, its buttons (apply, dry run, delete,
//! or "save edit" while `kubectl edit` has an object open) and what kubectl said.

use super::examples;
use super::manifest::{self, ManifestEditor};
use crate::editor::errors::Mark;
use crate::page::{Action, Editing, ManifestAction};
use std::rc::Rc;
use web_sys::{HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct EditorPaneProps {
    /// The text area, which the page reads.
    pub area: NodeRef,
    pub example: &'static str,
    pub marks: Rc<Vec<Mark>>,
    pub editing: Option<Rc<Editing>>,
    /// The last button's outcome: ok, and what kubectl said.
    pub result: Option<(bool, String)>,
    pub dispatch: Callback<Action>,
}

#[function_component(EditorPane)]
pub fn editor_pane(props: &EditorPaneProps) -> Html {
    // Kept across the page's redraws, so the editor only redraws when its text or marks change.
    let on_edit = use_callback(props.dispatch.clone(), |(), dispatch| dispatch.emit(Action::EditorTyped));
    let on_example = props.dispatch.reform(|e: Event| {
        Action::Example(e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value()).unwrap_or_default())
    });
    let button = |action: ManifestAction| {
        let area = props.area.clone();
        props.dispatch.reform(move |_: MouseEvent| {
            let text = area.cast::<HtmlTextAreaElement>().map(|t| t.value()).unwrap_or_default();
            Action::Manifest(action, text)
        })
    };
    let editing = props.editing.as_ref();
    let (ok, message) = match &props.result {
        Some((ok, m)) => (*ok, m.clone()),
        None => (true, String::new()),
    };
    html! {
        <>
        <h2 id="editor-title">{"Manifest"}</h2>
        <div class="editor-bar">
            <label for="examples">{"Examples "}</label>
            <select id="examples" onchange={on_example}>
                { for examples::EXAMPLES.iter().map(|x| html! { <option value={x.id} selected={x.id == props.example}>{x.title}</option> }) }
            </select>
        </div>
        <ManifestEditor area={props.area.clone()} initial={examples::EXAMPLES[0].manifest} marks={props.marks.clone()} {on_edit} />
        <div class="editor-actions">
            <button id="apply" class="primary" onclick={button(ManifestAction::Apply)}
                title={ if editing.is_some() { "kubectl edit: save, sending what changed as a patch".to_string() } else { manifest::command_line(ManifestAction::Apply) } }>
                { if editing.is_some() { "save edit" } else { "kubectl apply" } }</button>
            <button id="dry-run" onclick={button(ManifestAction::DryRun)} disabled={editing.is_some()}
                title={ if editing.is_some() { "kubectl edit has no dry run".to_string() } else { manifest::command_line(ManifestAction::DryRun) } }>{"dry run"}</button>
            <button id="delete" onclick={button(ManifestAction::Delete)}
                title={manifest::command_line(ManifestAction::Delete)}>{"kubectl delete"}</button>
            if let Some(open) = editing {
                <span class="editing-note">{format!("editing {}", open.what)}</span>
            }
        </div>
        if !message.is_empty() && ok {
            <pre id="apply-result" class="result ok" role="status">{message.clone()}</pre>
        }
        if !message.is_empty() && !ok {
            <pre id="apply-error" class="result error" role="alert">{message.clone()}</pre>
        }
        </>
    }
}
