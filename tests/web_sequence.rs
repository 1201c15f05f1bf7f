//! Browser test of the sequence view alone (`kubeloop::ui::sequence::SequenceView`), mounted
//! with a sequence built in the test from a real session: the list tells the chain in order,
//! the diagram draws one arrow per step, and choosing a step emits its record entry.
//! `cargo test --target wasm32-unknown-unknown --test web_sequence` (needs chromedriver).
#![cfg(target_arch = "wasm32")]

use kubeloop::shell::{Command, Session};
use kubeloop::ui::sequence::{SequenceProps, SequenceView};
use kubeloop::views::sequence::{Sequence, sequence};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement, KeyboardEvent, KeyboardEventInit};
use yew::prelude::*;

wasm_bindgen_test_configure!(run_in_browser);

fn applied() -> Sequence {
    let mut s = Session::new(1);
    s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=1"));
    s.execute(&Command::new("sim settle"));
    sequence(&s.cluster, 200)
}

/// What the view was asked to select, step by step.
type Chosen = Rc<RefCell<Vec<(u64, i64)>>>;

#[derive(Properties, PartialEq)]
struct HostProps {
    sequence: Sequence,
    chosen: Rc<RefCell<Vec<(u64, i64)>>>,
}

/// Holds the selection as the page would, so a click re-renders the view with it.
#[function_component(Host)]
fn host(props: &HostProps) -> Html {
    let selected = use_state(|| None::<u64>);
    let on_select = {
        let (selected, chosen) = (selected.clone(), props.chosen.clone());
        Callback::from(move |(seq, revision): (u64, i64)| {
            chosen.borrow_mut().push((seq, revision));
            selected.set(Some(seq));
        })
    };
    let view = SequenceProps { sequence: props.sequence.clone(), selected: *selected, on_select };
    html! { <SequenceView ..view /> }
}

async fn mount(sequence: Sequence) -> (Element, Chosen) {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    root.set_attribute("style", "width: 1280px").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let chosen: Chosen = Rc::default();
    let props = HostProps { sequence, chosen: chosen.clone() };
    yew::Renderer::<Host>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    (root, chosen)
}

fn all(root: &Element, selector: &str) -> Vec<Element> {
    let list = root.query_selector_all(selector).unwrap();
    (0..list.length()).filter_map(|i| list.item(i)?.dyn_into::<Element>().ok()).collect()
}

#[wasm_bindgen_test]
async fn the_list_tells_the_chain_in_order_and_the_diagram_draws_each_step() {
    let sequence = applied();
    let (root, _) = mount(sequence.clone()).await;
    let svg = root.query_selector("svg#sequence").unwrap().expect("the diagram");
    assert_eq!(svg.get_attribute("role").as_deref(), Some("img"));
    assert!(svg.get_attribute("aria-label").unwrap().contains("steps between you (kubectl), kube-apiserver, etcd"));
    let lanes = all(&root, "svg#sequence g.lane");
    assert_eq!(lanes.len(), sequence.lanes.len());
    assert_eq!(lanes[0].get_attribute("data-lane").as_deref(), Some("kubectl"));

    let items = all(&root, "#sequence-steps li button");
    assert_eq!(items.len(), sequence.steps.len());
    let texts: Vec<String> = items.iter().map(|b| b.text_content().unwrap_or_default()).collect();
    assert!(texts[0].contains("You (kubectl) ask the API server to create Deployment web"), "{}", texts[0]);
    assert!(texts[1].contains("The API server writes Deployment web to etcd"), "{}", texts[1]);
    let position = |needle: &str| texts.iter().position(|t| t.contains(needle)).unwrap_or_else(|| panic!("{needle}"));
    assert!(position("The ReplicaSet controller compared") < position("The scheduler found"));
    assert!(position("The scheduler found") < position("to pull image nginx:1.25"));
    assert!(position("to pull image nginx:1.25") < position("is Running (1/1 ready)"));

    let arrows = all(&root, "svg#sequence g.step");
    assert_eq!(arrows.len(), sequence.steps.len());
    for (arrow, step) in arrows.iter().zip(&sequence.steps) {
        assert_eq!(arrow.get_attribute("data-seq"), Some(step.seq.to_string()));
        assert_eq!(arrow.get_attribute("data-from"), Some(step.from.to_string()));
        assert_eq!(arrow.get_attribute("data-to"), Some(step.to.to_string()));
    }
    // Requests and notifications differ by more than colour: their classes give them strokes.
    let class = |e: &Element| e.get_attribute("class").unwrap_or_default();
    assert!(class(&arrows[0]).contains("request"), "{}", class(&arrows[0]));
    assert!(class(&arrows[1]).contains("store"), "{}", class(&arrows[1]));
    assert!(class(&arrows[2]).contains("notify"), "{}", class(&arrows[2]));
}

#[wasm_bindgen_test]
async fn clicking_a_step_emits_its_seq_and_highlights_it_in_both() {
    let sequence = applied();
    let (root, chosen) = mount(sequence.clone()).await;
    let bind = sequence.steps.iter().find(|s| s.label.starts_with("bind pod/")).unwrap().clone();
    let button = root
        .query_selector(&format!("#sequence-steps button[data-n=\"{}\"]", bind.n))
        .unwrap()
        .unwrap()
        .dyn_into::<HtmlElement>()
        .unwrap();
    button.click();
    yew::scheduler::flush().await;
    assert_eq!(chosen.borrow().as_slice(), [(bind.seq, bind.revision)]);
    let lit = all(&root, "#sequence-steps li.selected");
    assert!(!lit.is_empty());
    // A stored request is two arrows of one record entry (to the API server, then to etcd):
    // both light, and the first is the binding.
    assert!(
        lit.len() <= 2 && lit[0].text_content().unwrap().contains("bind"),
        "{:?}",
        lit.iter().map(|l| l.text_content()).collect::<Vec<_>>()
    );
    let arrows = all(&root, "svg#sequence g.step.selected");
    assert!(!arrows.is_empty());
    assert!(arrows.iter().all(|g| g.get_attribute("data-seq") == Some(bind.seq.to_string())));

    // Clicking an arrow in the diagram selects too.
    let first = root.query_selector("svg#sequence g.step[data-n=\"1\"]").unwrap().unwrap();
    // Yew listens at its root: the click must bubble there.
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    let click = web_sys::Event::new_with_event_init_dict("click", &init).unwrap();
    first.dispatch_event(&click).unwrap();
    yew::scheduler::flush().await;
    assert_eq!(chosen.borrow().last().copied(), Some((sequence.steps[0].seq, sequence.steps[0].revision)));

    // The arrow keys move the selection along the list.
    let init = KeyboardEventInit::new();
    init.set_key("ArrowDown");
    init.set_bubbles(true);
    let key = KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    button.dispatch_event(&key).unwrap();
    yew::scheduler::flush().await;
    let next = &sequence.steps[bind.n];
    assert_eq!(chosen.borrow().last().copied(), Some((next.seq, next.revision)));
}
