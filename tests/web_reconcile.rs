//! Browser tests of the reconciliation-loop panel, mounted alone with a view built from a
//! simulated session. Run as `cargo test --target wasm32-unknown-unknown --test web_reconcile`.
#![cfg(target_arch = "wasm32")]

use kubeloop::api::Kind;
use kubeloop::shell::{Command, Session};
use kubeloop::ui::reconcile_view::{ReconcileLoop, ReconcileLoopProps};
use kubeloop::views::reconcile::{ReconcileView, reconcile_view};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlSelectElement};
use yew::Callback;

wasm_bindgen_test_configure!(run_in_browser);

fn run(s: &mut Session, line: &str) {
    s.execute(&Command::new(line));
}

fn find(root: &Element, selector: &str) -> Element {
    root.query_selector(selector).unwrap().unwrap_or_else(|| panic!("no element matches {selector}"))
}

/// A station's sentence, its wrapped lines joined again.
fn station(root: &Element, id: &str) -> String {
    let spans = root.query_selector_all(&format!("[data-station='{id}'] .station-line tspan")).unwrap();
    (0..spans.length()).filter_map(|i| spans.item(i)?.text_content()).collect::<Vec<_>>().join(" ")
}

async fn mount(view: ReconcileView, on_pick: Callback<String>) -> Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let props = ReconcileLoopProps { view, on_close: Default::default(), on_pick };
    yew::Renderer::<ReconcileLoop>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    root
}

/// A 3-replica Deployment, settled, then one of its pods deleted: the ReplicaSet controller's
/// loop as it takes the turn that replaces it. Also the deleted pod's name.
fn turning() -> (ReconcileView, String) {
    let mut s = Session::new(1);
    run(&mut s, "kubectl create deployment web --image=nginx:1.25 --replicas=3");
    run(&mut s, "sim settle");
    let pod = s.cluster.objects(Kind::Pod, "default")[0].name().to_string();
    run(&mut s, &format!("kubectl delete pod {pod} --wait=false"));
    for _ in 0..200 {
        s.cluster.step();
        let view = reconcile_view(&s.cluster, "replicaset-controller", None).unwrap();
        if !view.idle {
            return (view, pod);
        }
    }
    panic!("the ReplicaSet controller never turned");
}

#[wasm_bindgen_test]
async fn a_deleted_pod_lights_the_loop_observe_compare_act_and_lists_the_turn() {
    let (view, pod) = turning();
    let rs = view.object.rsplit('/').next().unwrap().to_string();
    let root = mount(view, Callback::noop()).await;
    let svg = find(&root, "svg#reconcile-loop");
    assert_eq!(svg.get_attribute("role").as_deref(), Some("img"));
    assert!(svg.get_attribute("aria-label").unwrap_or_default().contains("want 3 · have 2"));
    assert_eq!(station(&root, "observe"), format!("my cache: 2 pods of {rs}"));
    assert_eq!(station(&root, "compare"), "want 3 · have 2");
    assert_eq!(station(&root, "act"), "create 1 pod through the API");
    for id in ["observe", "compare", "act"] {
        let class = find(&root, &format!("[data-station='{id}']")).get_attribute("class").unwrap_or_default();
        assert!(class.split(' ').any(|c| c == "lit"), "{id}: {class}");
    }
    assert!(find(&root, ".cycle-trigger").text_content().unwrap_or_default().contains(&pod));
    let latest = find(&root, "ol#reconcile-turns li.latest").text_content().unwrap_or_default();
    assert!(latest.contains("want 3 · have 2"), "{latest}");
    assert!(latest.contains("→ create 1"), "{latest}");
    assert!(latest.contains(&format!("watch: MODIFIED pod/{pod}")), "{latest}");
    assert!(latest.contains("t = "), "{latest}");
}

#[wasm_bindgen_test]
async fn a_settled_loop_keeps_watching_and_picks_another_object() {
    let mut s = Session::new(1);
    run(&mut s, "kubectl create deployment web --image=nginx:1.25 --replicas=3");
    run(&mut s, "sim settle");
    let view = reconcile_view(&s.cluster, "replicaset-controller", None).unwrap();
    let picked = Rc::new(RefCell::new(None::<String>));
    let on_pick = {
        let picked = picked.clone();
        Callback::from(move |key: String| *picked.borrow_mut() = Some(key))
    };
    let root = mount(view, on_pick).await;
    assert_eq!(station(&root, "act"), "nothing to do, keep watching");
    let act = find(&root, "[data-station='act']");
    assert!(act.get_attribute("class").unwrap_or_default().contains("idle"));
    assert!(act.text_content().unwrap_or_default().contains('✓'), "idle is spelled, not only coloured");
    assert_eq!(station(&root, "compare"), "want 3 · have 3");
    let select: HtmlSelectElement = find(&root, "select#reconcile-object").dyn_into().unwrap();
    let other = (0..select.length())
        .filter_map(|i| select.item(i)?.get_attribute("value"))
        .find(|v| v.starts_with("kube-system/"))
        .expect("coredns's ReplicaSet to pick");
    select.set_value(&other);
    select.dispatch_event(&web_sys::Event::new("change").unwrap()).unwrap();
    yew::scheduler::flush().await;
    assert_eq!(picked.borrow().as_deref(), Some(other.as_str()));
}
