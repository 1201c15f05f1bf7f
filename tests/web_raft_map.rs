//! Browser test of the architecture map alone (`kubeloop::ui::map::ArchitectureMap`) for a
//! control plane of three nodes: after a write, etcd's Raft messages travel between the
//! members' chips in the etcd box. The flow is driven in the test on an animation clock of its
//! own (no real sleeps); the frame handed to the map says when each message left, on the
//! page's clock.
//! `cargo test --target wasm32-unknown-unknown --test web_raft_map` (needs chromedriver).
#![cfg(target_arch = "wasm32")]

use kubeloop::cluster::ClusterConfig;
use kubeloop::page::sim::FlowFrame;
use kubeloop::shell::{Command, Session};
use kubeloop::ui::map::{ArchitectureMap, SharedBoard, SharedFlow};
use kubeloop::views::flow::{Flow, Message, Pace, Place};
use kubeloop::views::map::board;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::Element;
use yew::prelude::*;

wasm_bindgen_test_configure!(run_in_browser);

fn page_now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// The flow after a write on three control planes, played on its own clock until the leader's
/// AppendEntries are on their way: the messages then in flight, re-timed so that they are as
/// far along on the page's clock.
fn mid_write() -> (Session, Vec<Message>, f64) {
    let mut s = Session::with_config(ClusterConfig { control_planes: 3, ..ClusterConfig::default() });
    let mut flow = Flow::new(s.cluster.record.last_seq());
    s.execute(&Command::new("kubectl create configmap one --from-literal=a=1"));
    let pace = Pace::teaching(false);
    let mut now = 0.0;
    loop {
        now += 16.0;
        let flying = flow.frame(&s.cluster, now, pace);
        if flying.iter().any(|m| m.label.starts_with("append ") && m.progress > 0.3) {
            break;
        }
        assert!(now < 120_000.0, "no AppendEntries left the leader");
    }
    let shift = page_now() - now;
    let messages = flow.messages().iter().map(|m| Message { started_ms: m.started_ms + shift, ..m.clone() }).collect();
    (s, messages, pace.travel_ms)
}

async fn mount(s: &Session, messages: Vec<Message>, travel_ms: f64) -> Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    root.set_attribute("style", "width: 1280px").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let flow = FlowFrame { messages, travel_ms, caption: String::new(), passed_over: 0, busy: true };
    let props = kubeloop::ui::map::MapProps {
        flow: SharedFlow(Rc::new(flow)),
        board: SharedBoard(Rc::new(board(&s.cluster))),
        teaching: true,
        on_pick: Callback::noop(),
    };
    yew::Renderer::<ArchitectureMap>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    root
}

fn all(root: &Element, selector: &str) -> Vec<Element> {
    let found = root.query_selector_all(selector).unwrap();
    (0..found.length()).filter_map(|i| found.item(i)?.dyn_into::<Element>().ok()).collect()
}

#[wasm_bindgen_test]
async fn after_a_write_the_leaders_append_entries_travel_to_both_followers_chips() {
    let (s, messages, travel) = mid_write();
    let leader = messages
        .iter()
        .find_map(|m| match &m.from {
            Place::EtcdMember(name) if m.label.starts_with("append ") => Some(name.clone()),
            _ => None,
        })
        .expect("the leader sends");
    let root = mount(&s, messages, travel).await;
    assert_eq!(all(&root, "#map .raft-member").len(), 3, "three member chips");
    assert!(root.query_selector(&format!("#map .raft-member.leader[data-member=\"{leader}\"]")).unwrap().is_some());
    let raft = all(&root, "#map .token.raft");
    let ends: Vec<(String, String)> = raft
        .iter()
        .map(|t| (t.get_attribute("data-from").unwrap_or_default(), t.get_attribute("data-to").unwrap_or_default()))
        .collect();
    assert_eq!(ends.len(), 2, "{ends:?}");
    assert!(ends.iter().all(|(from, to)| *from == format!("etcd/{leader}") && to.starts_with("etcd/")), "{ends:?}");
    assert_ne!(ends[0].1, ends[1].1, "one to each follower");
    // Each token sits inside the etcd box, between the chips.
    for t in &raft {
        let at = t.get_attribute("transform").unwrap_or_default();
        let xy: Vec<f64> = at
            .trim_start_matches("translate(")
            .trim_end_matches(')')
            .split(' ')
            .filter_map(|v| v.parse().ok())
            .collect();
        let etcd = kubeloop::views::map::ETCD;
        assert!(xy.len() == 2 && etcd.contains((xy[0], xy[1])), "{at}");
        assert!(t.get_attribute("data-label").unwrap_or_default().starts_with("append "));
    }
}
