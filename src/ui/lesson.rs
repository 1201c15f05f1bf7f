//! The lesson panel: the current step's text (Markdown rendered as text nodes, never as
//! markup), its runnable commands and manifests, hints, and its checks turning green as the
//! cluster changes; plus the course index.

use crate::lessons::markdown::{self, Block, Inline};
use crate::lessons::{CheckResult, Lesson, Part, Progress};
use crate::shell::Command;
use std::rc::Rc;
use yew::prelude::*;

fn inlines(spans: &[Inline]) -> Html {
    html! { <>{ for spans.iter().map(|s| match s {
        Inline::Text(t) => html! { {t.clone()} },
        Inline::Code(t) => html! { <code>{t.clone()}</code> },
        Inline::Strong(t) => html! { <strong>{t.clone()}</strong> },
        Inline::Em(t) => html! { <em>{t.clone()}</em> },
        Inline::Link { text, url } => html! { <a href={url.clone()} target="_blank" rel="noopener noreferrer">{text.clone()}</a> },
    }) }</> }
}

fn prose(text: &str) -> Html {
    html! { <>{ for markdown::blocks(text).iter().map(|b| match b {
        Block::Paragraph(s) => html! { <p>{inlines(s)}</p> },
        Block::Heading(s) => html! { <h4>{inlines(s)}</h4> },
        Block::List { ordered: false, items } => html! { <ul>{ for items.iter().map(|i| html! { <li>{inlines(i)}</li> }) }</ul> },
        Block::List { ordered: true, items } => html! { <ol>{ for items.iter().map(|i| html! { <li>{inlines(i)}</li> }) }</ol> },
        Block::Code(c) => html! { <pre class="snippet">{c.clone()}</pre> },
    }) }</> }
}

#[derive(Properties, PartialEq)]
pub struct LessonPanelProps {
    pub lesson: Rc<Lesson>,
    pub progress: Progress,
    /// The latest evaluation of the current step's checks.
    pub results: Vec<CheckResult>,
    pub on_run: Callback<Command>,
    pub on_manifest: Callback<String>,
    pub on_go: Callback<usize>,
    /// Each step's prediction's reason, in words, once the step is complete.
    #[prop_or_default]
    pub reasons: Vec<Option<String>>,
    /// The student's answer to a step's prediction.
    #[prop_or_default]
    pub on_predict: Callback<(usize, String)>,
}

/// Predict, then watch: before the step, the question and its answers (or a field for one);
/// once answered, the answer stands until the step shows what the cluster does.
#[function_component(PredictBox)]
fn predict_box(props: &PredictProps) -> Html {
    let typed = use_node_ref();
    let p = &props.prediction;
    let step = props.step;
    html! {
        <div class="predict" id="lesson-predict">
            <p class="question"><strong>{"Predict: "}</strong>{p.question.clone()}</p>
            if let Some(answer) = props.predicted.clone() {
                <p class="predicted">{"Your prediction: "}<strong>{answer}</strong>{". Now run the step and watch."}</p>
            } else if p.choices.is_empty() {
                <form class="typed" onsubmit={{
                    let (typed, on_predict) = (typed.clone(), props.on_predict.clone());
                    Callback::from(move |e: SubmitEvent| {
                        e.prevent_default();
                        if let Some(field) = typed.cast::<web_sys::HtmlInputElement>() {
                            on_predict.emit((step, field.value()));
                        }
                    })
                }}>
                    <input ref={typed} aria-label="Your prediction" autocomplete="off" />
                    <button class="small">{"predict"}</button>
                </form>
            } else {
                <div class="choices" role="group" aria-label="Your prediction">
                { for p.choices.iter().map(|c| {
                    let (on_predict, choice) = (props.on_predict.clone(), c.clone());
                    html! { <button class="small choice" onclick={Callback::from(move |_: MouseEvent| on_predict.emit((step, choice.clone())))}>{c.clone()}</button> }
                }) }
                </div>
            }
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct PredictProps {
    step: usize,
    prediction: crate::lessons::Prediction,
    predicted: Option<String>,
    on_predict: Callback<(usize, String)>,
}

/// What a completed step's prediction came to: the student's answer, the cluster's, and why.
fn outcome(props: &LessonPanelProps, i: usize) -> Option<Html> {
    let p = props.lesson.steps.get(i)?.prediction.as_ref()?;
    let state = props.progress.steps.get(i).filter(|s| s.complete)?;
    let answer = state.answer.clone()?;
    let predicted = state.predicted.clone();
    let right = predicted.as_deref().is_some_and(|x| p.is_right(x, &answer));
    let reason = props.reasons.get(i).cloned().flatten();
    Some(html! {
        <aside class={classes!("debrief", "outcome", right.then_some("right"))} id="lesson-outcome" aria-label="Your prediction and what happened">
            <h4>{p.question.clone()}</h4>
            <p>
                { match &predicted {
                    Some(x) if right => format!("You predicted {x}, and so it was: {answer}."),
                    Some(x) => format!("You predicted {x}; the cluster says {answer}."),
                    None => format!("The cluster says {answer}."),
                } }
            </p>
            if let Some(reason) = reason { <p class="why">{"Why: "}{reason}</p> }
        </aside>
    })
}

fn parts(parts: &[Part], props: &LessonPanelProps) -> Html {
    html! { <>{ for parts.iter().map(|p| match p {
        Part::Text(t) => prose(t),
        Part::Commands(commands) => html! {
            <ul class="commands">
            { for commands.iter().map(|c| {
                let on_run = props.on_run.clone();
                let command = c.clone();
                let onclick = Callback::from(move |_: MouseEvent| on_run.emit(command.clone()));
                html! {
                    <li>
                        <pre class="snippet">{c.display()}</pre>
                        <button class="small run" aria-label={format!("Run {}", c.line)} {onclick}>{"run"}</button>
                    </li>
                }
            }) }
            </ul>
        },
        Part::Manifest { name, text } => {
            let on_manifest = props.on_manifest.clone();
            let body = text.clone();
            let onclick = Callback::from(move |_: MouseEvent| on_manifest.emit(body.clone()));
            html! {
                <div class="manifest">
                    if let Some(n) = name { <span class="file">{n.clone()}</span> }
                    <pre class="snippet">{text.clone()}</pre>
                    <button class="small load" {onclick}>{"load into the editor"}</button>
                </div>
            }
        }
    }) }</> }
}

/// Whether step `i`'s checks have all passed.
fn done(props: &LessonPanelProps, i: usize) -> bool {
    props.progress.steps.get(i).is_some_and(|p| p.complete)
}

#[function_component(LessonPanel)]
pub fn lesson_panel(props: &LessonPanelProps) -> Html {
    let lesson = &props.lesson;
    let at = props.progress.step;
    let total = lesson.steps.len();
    let go = |to: usize| {
        let on_go = props.on_go.clone();
        Callback::from(move |_: MouseEvent| on_go.emit(to))
    };
    html! {
        <section id="lesson" class="panel lesson" aria-labelledby="lesson-title">
            <p class="crumbs"><a href="?lessons">{"Lessons"}</a>{format!(" · {} · {} of {}", lesson.track, (at + 1).min(total), total)}</p>
            <h2 id="lesson-title" class="lesson-title">{&lesson.title}</h2>
            <ol class="step-dots" aria-label="Steps">
            { for lesson.steps.iter().enumerate().map(|(i, s)| {
                let done = done(props, i);
                let class = classes!("dot", done.then_some("done"), (i == at).then_some("current"));
                html! { <li {class}><button class="linkish" onclick={go(i)} aria-current={(i == at).then_some("step")}
                    title={s.title.clone()}>{ if done { "✓".to_string() } else { (i + 1).to_string() } }</button></li> }
            }) }
            </ol>
            if at == 0 { <div class="intro">{parts(&lesson.intro, props)}</div> }
            // What the step just completed came to: its prediction beside the cluster's answer,
            // then what it taught (an incident's cause), said before the next step.
            { at.checked_sub(1).and_then(|i| outcome(props, i)).unwrap_or_default() }
            if let Some(debrief) = at.checked_sub(1).filter(|&i| done(props, i)).and_then(|i| lesson.steps[i].debrief.as_ref()) {
                <aside class="debrief" id="lesson-debrief" aria-label="What happened">
                    <h4>{"What happened"}</h4>{prose(debrief)}
                </aside>
            }
            if let Some(step) = lesson.steps.get(at) {
                <article class="step" data-step={at.to_string()}>
                    <h3>{&step.title}</h3>
                    if let Some(prediction) = step.prediction.clone() {
                        <PredictBox step={at} {prediction} on_predict={props.on_predict.clone()}
                            predicted={props.progress.steps.get(at).and_then(|s| s.predicted.clone())} />
                    }
                    {parts(&step.body, props)}
                    <ul class="checks" aria-label="Checks" aria-live="polite">
                    { for step.checks.iter().enumerate().map(|(i, c)| {
                        let result = props.results.iter().find(|r| r.label == c.label).or(props.results.get(i));
                        let passed = result.is_some_and(|r| r.passed);
                        html! {
                            <li class={classes!("check", passed.then_some("passed"))} data-passed={passed.to_string()}>
                                <span class="mark" aria-hidden="true">{ if passed { "✓" } else { "○" } }</span>
                                <span class="sr-only">{ if passed { "passed: " } else { "not yet: " } }</span>
                                {&c.label}
                            </li>
                        }
                    }) }
                    </ul>
                    // Hints one after another: each says more than the one before.
                    { for step.hints.iter().enumerate().map(|(i, h)| {
                        let title = if step.hints.len() > 1 { format!("Hint {} of {}", i + 1, step.hints.len()) } else { "Hint".to_string() };
                        html! { <details class="hint"><summary>{title}</summary>{prose(h)}</details> }
                    }) }
                </article>
            } else {
                <article class="step done">
                    <h3>{"Lesson complete"}</h3>
                    <p>{"Every step checked out on the cluster. Pick the next lesson from the list."}</p>
                </article>
            }
            <nav class="step-nav">
                <button id="lesson-prev" onclick={go(at.saturating_sub(1))} disabled={at == 0}>{"previous"}</button>
                <button id="lesson-next" onclick={go((at + 1).min(total))} disabled={at >= total}>{"skip"}</button>
            </nav>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct LessonIndexProps {
    /// Why the lesson the address named cannot be followed (missing, or not a valid lesson).
    #[prop_or_default]
    pub problem: Option<String>,
}

#[function_component(LessonIndex)]
pub fn lesson_index(props: &LessonIndexProps) -> Html {
    // What the progress buttons said, and a count that redraws the index after a load.
    let note = use_state(String::new);
    let loads = use_state(|| 0u32);
    let download = {
        let note = note.clone();
        Callback::from(move |_: MouseEvent| note.set(super::course_progress::download()))
    };
    let load = {
        let (note, loads) = (note.clone(), loads.clone());
        Callback::from(move |e: Event| {
            use wasm_bindgen::JsCast;
            let Some(input) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
            let Some(file) = input.files().and_then(|files| files.get(0)) else { return };
            input.set_value("");
            let (note, loads) = (note.clone(), loads.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let text = wasm_bindgen_futures::JsFuture::from(file.text()).await.ok().and_then(|t| t.as_string());
                note.set(super::course_progress::load(&text.unwrap_or_default()));
                loads.set(*loads + 1);
            });
        })
    };
    html! {
        <section id="lesson-index" class="panel lesson" aria-labelledby="lessons-title" data-loads={loads.to_string()}>
            <h2 id="lessons-title">{"Lessons"}</h2>
            if let Some(problem) = &props.problem {
                <p id="lesson-problem" class="error" role="alert">{problem.clone()}</p>
            }
            <p class="progress-tools">
                <button id="download-progress" class="small" onclick={download}
                    title="every lesson's session and progress, and your sandbox, as one file">{"download my progress"}</button>
                <label class="small">{"load progress file "}
                    <input id="load-progress" type="file" accept=".json,application/json" onchange={load} /></label>
            </p>
            if !note.is_empty() { <p id="progress-note" class="muted" role="status">{(*note).clone()}</p> }
            { for crate::lessons::tracks().into_iter().map(|(track, lessons)| {
                let done = lessons.iter().filter(|l| super::course_progress::lesson(l.id).is_some_and(|(d, t)| t > 0 && d == t)).count();
                html! {
                    <section class="track" aria-label={track}>
                        <h3>{track}<span class="muted">{format!(" · {} · {done} done", lessons.len())}</span></h3>
                        <ol class="course">
                        { for lessons.into_iter().map(|l| {
                            let badge = match super::course_progress::lesson(l.id) {
                                Some((d, t)) if t > 0 && d == t => Some(("done", "✓ done".to_string())),
                                Some((d, t)) if d > 0 => Some(("partial", format!("{d}/{t} steps"))),
                                _ => None,
                            };
                            html! {
                                <li data-lesson={l.id}>
                                    <a href={format!("?lesson={}", l.id)}>{l.title}</a>
                                    if let Some((class, text)) = badge { <span class={classes!("badge", class)}>{text}</span> }
                                    <p class="muted">{l.summary}</p>
                                </li>
                            }
                        }) }
                        </ol>
                    </section>
                }
            }) }
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct LessonPaneProps {
    pub lesson: Option<Rc<Lesson>>,
    pub progress: Option<Progress>,
    pub results: Vec<CheckResult>,
    #[prop_or_default]
    pub reasons: Vec<Option<String>>,
    /// Why the lesson the address named cannot be followed.
    pub problem: Option<String>,
    /// The course's index is asked for (`?lessons`, or a lesson that could not be read).
    pub index: bool,
    pub dispatch: Callback<crate::page::Action>,
}

/// Beside the sandbox: the lesson followed, or else the course's index when asked for.
#[function_component(LessonPane)]
pub fn lesson_pane(props: &LessonPaneProps) -> Html {
    use crate::page::Action;
    match (&props.lesson, &props.progress) {
        (Some(l), Some(p)) => html! {
            <LessonPanel lesson={l.clone()} progress={p.clone()} results={props.results.clone()}
                reasons={props.reasons.clone()} on_predict={props.dispatch.reform(|(step, answer)| Action::Predict(step, answer))}
                on_run={props.dispatch.reform(Action::LessonRun)}
                on_manifest={props.dispatch.reform(Action::LessonManifest)}
                on_go={props.dispatch.reform(Action::LessonGo)} />
        },
        _ if props.index => html! { <LessonIndex problem={props.problem.clone()} /> },
        _ => html! {},
    }
}
