//! The scheduler's decision for one pod (PICTURES.md §5): nodes × filter plugins, then the
//! feasible nodes' scores, the winner marked. When more than one node could win, the student
//! is asked to guess first; a Pending pod shows at once why each node refused it.

use crate::scheduler::decision::{DecisionTable, FilterCell, NodeVerdict};
use crate::sim::Time;
use yew::prelude::*;

#[derive(Properties, PartialEq, Clone)]
pub struct SchedulerDecisionProps {
    pub table: DecisionTable,
    /// The close button.
    #[prop_or_default]
    pub on_close: Callback<()>,
}

/// The student's guess for one attempt: which attempt (pod and time), and the node guessed
/// (`None`: revealed without guessing).
#[derive(Clone, Debug, PartialEq)]
struct Guess {
    pod: String,
    at: Time,
    node: Option<String>,
}

#[function_component(SchedulerDecision)]
pub fn scheduler_decision(props: &SchedulerDecisionProps) -> Html {
    let table = &props.table;
    let guess = use_state(|| None::<Guess>);
    // A guess holds for the attempt it was made on; a new attempt asks again.
    let current = (*guess).clone().filter(|g| g.pod == table.pod && g.at == table.at);
    let on_close = props.on_close.clone();
    let close = html! {
        <button type="button" class="decision-close" onclick={Callback::from(move |_: MouseEvent| on_close.emit(()))}>
            {"close"}
        </button>
    };
    let asks = table.chosen.is_some() && table.feasible > 1 && current.is_none();
    if asks {
        let choose = |node: Option<String>| {
            let (guess, pod, at) = (guess.clone(), table.pod.clone(), table.at);
            Callback::from(move |_: MouseEvent| guess.set(Some(Guess { pod: pod.clone(), at, node: node.clone() })))
        };
        return html! {
            <section class="scheduler-decision predict" aria-label={format!("Scheduling pod {}", table.pod)}>
                <p class="decision-question">{"Which node will the scheduler pick?"}</p>
                <p class="decision-hint">
                    {format!("Pod {}: {} of {} nodes pass the filters.", table.pod, table.feasible, table.total)}
                </p>
                <div class="decision-guesses" role="group" aria-label="Your guess">
                    { for table.rows.iter().map(|r| html! {
                        <button type="button" data-predict={r.node.clone()} onclick={choose(Some(r.node.clone()))}>
                            {&r.node}
                        </button>
                    }) }
                    <button type="button" class="reveal" onclick={choose(None)}>{"reveal"}</button>
                </div>
                {close}
            </section>
        };
    }
    let verdict = current.and_then(|g| g.node).map(|node| verdict(table, &node));
    let pending = table.chosen.is_none();
    html! {
        <section class={classes!("scheduler-decision", pending.then_some("pending"))}
            aria-label={format!("Scheduling pod {}", table.pod)}>
            if let Some((right, text)) = verdict {
                <p class={classes!("decision-verdict", if right { "right" } else { "wrong" })} role="status">{text}</p>
            }
            if let Some(message) = &table.message {
                <p class="decision-message"><strong>{"FailedScheduling: "}</strong>{message}</p>
            }
            <div class="decision-scroll">{decision_table(table)}</div>
            {notes(table)}
            {close}
        </section>
    }
}

/// Whether the guess was right, and a sentence saying so.
fn verdict(table: &DecisionTable, node: &str) -> (bool, String) {
    let chosen = table.chosen.as_deref().unwrap_or_default();
    if node == chosen {
        return (true, format!("✓ Right: the scheduler picked {chosen}."));
    }
    let row = table.rows.iter().find(|r| r.node == node);
    let why = match (row.and_then(NodeVerdict::reason), row.and_then(|r| r.total)) {
        (Some(reason), _) => format!("{node} was filtered out: {reason}"),
        (None, Some(total)) => {
            let best = table.chosen_row().and_then(|r| r.total).unwrap_or_default();
            if total == best {
                format!("{node} tied with it at {total}; the scheduler breaks ties at random")
            } else {
                format!("{node} scored {total}, {chosen} {best}")
            }
        }
        (None, None) => format!("{node} was not evaluated"),
    };
    (false, format!("✗ Not this time: the scheduler picked {chosen}. {why}."))
}

fn decision_table(table: &DecisionTable) -> Html {
    let pod = format!("Pod {} ({})", table.pod, requests(table));
    let caption = match &table.chosen {
        Some(node) => format!("{pod}: {} of {} nodes feasible, placed on {node}", table.feasible, table.total),
        None => format!("{pod}: no node fits ({} nodes), so it stays Pending", table.total),
    };
    let scored = !table.scores.is_empty();
    html! {
        <table id="scheduler-decision" class="kube-table decision">
            <caption>{caption}</caption>
            <thead>
                <tr>
                    <td></td>
                    <th scope="colgroup" colspan={table.filters.len().to_string()} class="group">{"filter"}</th>
                    if scored {
                        <th scope="colgroup" colspan={(table.scores.len() + 1).to_string()} class="group">
                            {"score (× weight)"}
                        </th>
                    }
                </tr>
                <tr>
                    <th scope="col">{"node"}</th>
                    { for table.filters.iter().map(|f| html! { <th scope="col" class="filter">{plugin(f)}</th> }) }
                    { for table.scores.iter().map(|(s, w)| html! {
                        <th scope="col" class="score">{plugin(s)}<span class="weight">{format!(" ×{w}")}</span></th>
                    }) }
                    if scored {
                        <th scope="col" class="total">{"total"}</th>
                    }
                </tr>
            </thead>
            <tbody>
                { for table.rows.iter().map(|r| row(table, r)) }
            </tbody>
        </table>
    }
}

fn row(table: &DecisionTable, r: &NodeVerdict) -> Html {
    let chosen = table.chosen.as_deref() == Some(r.node.as_str());
    let feasible = r.feasible();
    let filters = r.filters.iter().map(|cell| match cell {
        FilterCell::Pass => {
            html! { <td class="pass"><span aria-hidden="true">{"✓"}</span><span class="sr-only">{"pass"}</span></td> }
        }
        FilterCell::Fail(reason) => html! { <td class="fail">{"✗ "}{reason}</td> },
        FilterCell::Skipped => html! {
            <td class="skipped" title="not run: an earlier filter refused the node">
                <span aria-hidden="true">{"·"}</span><span class="sr-only">{"not run"}</span>
            </td>
        },
    });
    let scored = !table.scores.is_empty();
    let scores: Html = match r.total {
        Some(total) => html! {
            <>
                { for r.scores.iter().map(|s| html! { <td class="score">{s}</td> }) }
                <td class="total">
                    {total}
                    if chosen { <span class="chosen-mark">{" ◀ chosen"}</span> }
                </td>
            </>
        },
        None if scored => html! {
            <>
                { for table.scores.iter().map(|_| html! { <td class="score none"></td> }) }
                <td class="total none">{ if feasible { "not scored" } else { "" } }</td>
            </>
        },
        None => html! {},
    };
    html! {
        <tr data-node={r.node.clone()} class={classes!(chosen.then_some("chosen"), (!feasible).then_some("refused"))}>
            <th scope="row">{&r.node}</th>
            { for filters }
            {scores}
        </tr>
    }
}

/// What the table leaves out: plugins with nothing to do for this pod, nodes never evaluated.
fn notes(table: &DecisionTable) -> Html {
    let mut notes = Vec::new();
    if !table.filters_skipped.is_empty() {
        notes.push(format!("Filters with nothing to check for this pod: {}.", table.filters_skipped.join(", ")));
    }
    if !table.scores_skipped.is_empty() {
        notes.push(format!(
            "Scores that would be equal on every node, so not computed: {}.",
            table.scores_skipped.join(", ")
        ));
    }
    let unseen = table.total.saturating_sub(table.rows.len());
    if unseen > 0 {
        notes.push(format!(
            "{unseen} nodes were not evaluated: the scheduler stops filtering once it has found enough feasible nodes."
        ));
    }
    html! {
        <ul class="decision-notes">
            { for notes.into_iter().map(|n| html! { <li>{n}</li> }) }
        </ul>
    }
}

/// The pod's requests as a manifest would write them: `cpu 500m, memory 128Mi`.
fn requests(table: &DecisionTable) -> String {
    let r = table.requests;
    let cpu = match r.cpu_milli {
        0 => "no cpu request".to_string(),
        m if m % 1000 == 0 => format!("cpu {}", m / 1000),
        m => format!("cpu {m}m"),
    };
    let memory = match r.memory_bytes {
        0 => "no memory request".to_string(),
        b if b % (1 << 30) == 0 => format!("memory {}Gi", b >> 30),
        b if b % (1 << 20) == 0 => format!("memory {}Mi", b >> 20),
        b => format!("memory {b}"),
    };
    format!("{cpu}, {memory}")
}

/// A plugin's name, free to wrap between its words (`Node·Resources·Fit`) in a narrow column.
fn plugin(name: &str) -> Html {
    let mut words: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, c) in name.char_indices().skip(1) {
        if c.is_ascii_uppercase() {
            words.push(&name[start..i]);
            start = i;
        }
    }
    words.push(&name[start..]);
    html! {
        <>
            { for words.into_iter().enumerate().map(|(i, w)| html! {
                <>
                    if i > 0 { <wbr /> }
                    {w}
                </>
            }) }
        </>
    }
}
