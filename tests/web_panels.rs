//! Browser tests of the scheduler-decision and etcd panels, each mounted alone with data built
//! from a simulated session. Run as `cargo test --target wasm32-unknown-unknown --test web_panels`.
#![cfg(target_arch = "wasm32")]

use kubeloop::scheduler::Scheduler;
use kubeloop::scheduler::decision::DecisionTable;
use kubeloop::shell::{Command, Session, parse_script};
use kubeloop::ui::etcd_view::{EtcdPanel, EtcdPanelProps};
use kubeloop::ui::scheduler_view::{SchedulerDecision, SchedulerDecisionProps};
use kubeloop::views::etcd::etcd_view;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement};

wasm_bindgen_test_configure!(run_in_browser);

/// A fresh element in the page for one component.
fn root() -> Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    root
}

fn find(root: &Element, selector: &str) -> Element {
    root.query_selector(selector).unwrap().unwrap_or_else(|| panic!("no element matches {selector}"))
}

fn text(root: &Element, selector: &str) -> String {
    find(root, selector).text_content().unwrap_or_default()
}

async fn click(root: &Element, selector: &str) {
    find(root, selector).dyn_into::<HtmlElement>().unwrap().click();
    yew::scheduler::flush().await;
}

fn run(s: &mut Session, line: &str) {
    s.execute(&Command::new(line));
}

fn decision(s: &Session, pod: &str) -> DecisionTable {
    let scheduler = s.cluster.component::<Scheduler>().expect("the scheduler");
    scheduler.decision(pod).cloned().expect("a decision table")
}

async fn mount_decision(table: DecisionTable) -> Element {
    let root = root();
    let props = SchedulerDecisionProps { table, on_close: Default::default() };
    yew::Renderer::<SchedulerDecision>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    root
}

const BIG_POD: &str = "kubectl apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: big
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests:
        cpu: \"64\"
EOF
";

#[wasm_bindgen_test]
async fn a_pending_pods_table_names_each_nodes_reason_without_asking_for_a_guess() {
    let mut s = Session::new(1);
    for command in parse_script(BIG_POD) {
        s.execute(&command);
    }
    run(&mut s, "sim settle");
    let root = mount_decision(decision(&s, "default/big")).await;
    assert!(root.query_selector("[data-predict]").unwrap().is_none(), "nothing to guess for a Pending pod");
    for worker in ["worker-1", "worker-2", "worker-3"] {
        let row = text(&root, &format!("#scheduler-decision tr[data-node='{worker}']"));
        assert!(row.contains("✗ Insufficient cpu"), "{worker}: {row}");
    }
    let control_plane = text(&root, "#scheduler-decision tr[data-node='control-plane'] td.fail");
    assert!(control_plane.contains("untolerated taint"), "{control_plane}");
    assert!(text(&root, ".decision-message").contains("0/4 nodes are available"));
    assert!(root.query_selector("#scheduler-decision tr.chosen").unwrap().is_none());
    assert!(!text(&root, "#scheduler-decision caption").is_empty());
}

#[wasm_bindgen_test]
async fn predicting_a_node_then_shows_the_table_with_the_chosen_row() {
    let mut s = Session::new(1);
    run(&mut s, "kubectl run web --image=nginx");
    run(&mut s, "sim settle");
    let table = decision(&s, "default/web");
    let chosen = table.chosen.clone().expect("a chosen node");
    let root = mount_decision(table).await;
    assert!(text(&root, ".decision-question").contains("Which node will the scheduler pick?"));
    assert!(root.query_selector("#scheduler-decision").unwrap().is_none(), "the table waits for the guess");
    assert!(root.query_selector("button.reveal").unwrap().is_some());
    click(&root, "[data-predict='worker-1']").await;
    let row = find(&root, "#scheduler-decision tr.chosen");
    assert_eq!(row.get_attribute("data-node").as_deref(), Some(chosen.as_str()));
    assert!(row.text_content().unwrap_or_default().contains("◀ chosen"));
    let verdict = text(&root, ".decision-verdict");
    if chosen == "worker-1" {
        assert!(verdict.contains("Right"), "{verdict}");
    } else {
        assert!(verdict.contains("Not this time"), "{verdict}");
    }
    assert_eq!(root.query_selector_all("#scheduler-decision tbody tr").unwrap().length(), 4);
    assert!(text(&root, "#scheduler-decision tr[data-node='worker-2']").contains('✓'));
}

#[wasm_bindgen_test]
async fn the_etcd_panel_shows_the_revision_and_a_pods_group() {
    let mut s = Session::new(1);
    run(&mut s, "kubectl run web --image=nginx");
    run(&mut s, "sim settle");
    let view = etcd_view(&s.cluster, 5);
    let revision = view.revision;
    let root = root();
    yew::Renderer::<EtcdPanel>::with_root_and_props(root.clone(), EtcdPanelProps { view }).render();
    yew::scheduler::flush().await;
    assert_eq!(text(&root, "#etcd-rev"), revision.to_string());
    let pods = text(&root, "details[data-resource='pods'] summary");
    assert!(pods.contains("/registry/pods/"), "{pods}");
    assert!(root.query_selector("details[data-resource='pods'] li[data-namespace='default']").unwrap().is_some());
    assert_eq!(root.query_selector_all(".etcd-writes li").unwrap().length(), 5);
}

#[wasm_bindgen_test]
async fn revealing_without_a_guess_shows_the_table_and_no_verdict() {
    let mut s = Session::new(2);
    run(&mut s, "kubectl run web --image=nginx");
    run(&mut s, "sim settle");
    let root = mount_decision(decision(&s, "default/web")).await;
    click(&root, "button.reveal").await;
    assert!(root.query_selector("#scheduler-decision tr.chosen").unwrap().is_some());
    assert!(root.query_selector(".decision-verdict").unwrap().is_none());
    assert!(root.query_selector("[data-predict]").unwrap().is_none());
    let headers = root.query_selector_all("#scheduler-decision thead th[scope='col']").unwrap().length();
    assert!(headers >= 5, "node, the filters, the scores and the total: {headers}");
}
