//! Browser tests: the page rendered in headless Chromium, driven through its DOM.
//! Run by `scripts/test.sh` as `cargo test --target wasm32-unknown-unknown --test web`.
//! No real sleeps: the app starts paused and tests move virtual time with its own controls.
#![cfg(target_arch = "wasm32")]

use kubeloop::page::journal::Journal;
use kubeloop::shell::{Session, parse_transcript};
use kubeloop::ui::{App, AppProps};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement, HtmlInputElement, HtmlTextAreaElement, KeyboardEvent, KeyboardEventInit};

wasm_bindgen_test_configure!(run_in_browser);

fn props() -> AppProps {
    AppProps {
        seed: 1,
        start_paused: true,
        journal: None,
        persist: false,
        lesson: None,
        lesson_source: None,
        step: None,
        show_index: false,
        embed: false,
        worker: false,
    }
}

/// Mounts a fresh, paused sandbox in its own element.
async fn mount() -> Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    yew::Renderer::<App>::with_root_and_props(root.clone(), props()).render();
    yew::scheduler::flush().await;
    root
}

fn find(root: &Element, selector: &str) -> Element {
    root.query_selector(selector).unwrap().unwrap_or_else(|| panic!("no element matches {selector}"))
}

fn text(root: &Element, selector: &str) -> String {
    root.query_selector(selector).unwrap().and_then(|e| e.text_content()).unwrap_or_default()
}

async fn click(root: &Element, selector: &str) {
    find(root, selector).dyn_into::<HtmlElement>().unwrap().click();
    yew::scheduler::flush().await;
}

/// Clicks an element of the map (an SVG element, which has no `click()`).
async fn click_map(root: &Element, selector: &str) {
    let init = web_sys::MouseEventInit::new();
    init.set_bubbles(true);
    let event = web_sys::MouseEvent::new_with_mouse_event_init_dict("click", &init).unwrap();
    find(root, selector).dispatch_event(&event).unwrap();
    yew::scheduler::flush().await;
}

fn set_manifest(root: &Element, yaml: &str) {
    find(root, "#manifest").dyn_into::<HtmlTextAreaElement>().unwrap().set_value(yaml);
}

const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: nginx:1.25
";

#[wasm_bindgen_test]
async fn applying_a_pod_from_the_editor_shows_it_running_after_time_passes() {
    let root = mount().await;
    set_manifest(&root, POD);
    click(&root, "#apply").await;
    assert_eq!(text(&root, "#apply-result"), "pod/web created");
    let row = text(&root, "#pods tr[data-pod=\"web\"]");
    assert!(row.contains("Pending"), "right after apply the pod is Pending: {row}");

    click(&root, "#settle").await;
    let row = text(&root, "#pods tr[data-pod=\"web\"]");
    assert!(row.contains("Running") && row.contains("1/1"), "after settling the pod runs: {row}");

    // The events the chain produced, newest first in the stream: reverse to read them in order.
    let events = root.query_selector_all("#events tbody tr").unwrap();
    let mut reasons: Vec<String> = (0..events.length())
        .filter_map(|i| events.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .filter(|e| e.text_content().unwrap_or_default().contains("pod/web"))
        .filter_map(|e| e.get_attribute("data-reason"))
        .collect();
    reasons.reverse();
    assert_eq!(reasons, ["Scheduled", "Pulling", "Pulled", "Created", "Started"]);
    // The node it landed on shows it.
    assert!(text(&root, "#nodes").contains("web"));
}

#[wasm_bindgen_test]
async fn bad_yaml_shows_an_error_and_the_page_lives_on() {
    let root = mount().await;
    set_manifest(&root, "apiVersion: v1\nkind: Pod\nmetadata: name: web\n");
    click(&root, "#apply").await;
    let error = text(&root, "#apply-error");
    assert!(error.contains("error converting YAML to JSON: yaml: line 3"), "{error}");
    assert!(root.query_selector("#apply-result").unwrap().is_none());

    // The page still works: a valid manifest applies.
    set_manifest(&root, POD);
    click(&root, "#apply").await;
    assert_eq!(text(&root, "#apply-result"), "pod/web created");
}

#[wasm_bindgen_test]
async fn unknown_fields_are_rejected_like_the_real_api_server() {
    let root = mount().await;
    set_manifest(&root, &POD.replace("image:", "imagee:"));
    click(&root, "#apply").await;
    assert!(text(&root, "#apply-error").contains("strict decoding error: unknown field \"spec.containers[0].imagee\""));
}

#[wasm_bindgen_test]
async fn the_terminal_runs_kubectl() {
    let root = mount().await;
    let input = find(&root, "#terminal-input").dyn_into::<HtmlInputElement>().unwrap();
    input.set_value("kubectl get nodes");
    let init = KeyboardEventInit::new();
    init.set_key("Enter");
    let event = KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    input.dispatch_event(&event).unwrap();
    yew::scheduler::flush().await;
    let out = text(&root, "#terminal-output");
    assert!(out.contains("$ kubectl get nodes"), "{out}");
    assert!(out.contains("worker-3") && out.contains("Ready"), "{out}");
}

async fn press(input: &HtmlInputElement, key: &str, ctrl: bool) {
    let init = KeyboardEventInit::new();
    init.set_key(key);
    init.set_ctrl_key(ctrl);
    let event = KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    input.dispatch_event(&event).unwrap();
    yew::scheduler::flush().await;
}

#[wasm_bindgen_test]
async fn tab_completes_commands_and_names_and_ctrl_c_abandons_the_line() {
    let root = mount().await;
    let input = find(&root, "#terminal-input").dyn_into::<HtmlInputElement>().unwrap();
    input.set_value("kubectl desc");
    press(&input, "Tab", false).await;
    assert_eq!(input.value(), "kubectl describe ");
    input.set_value("kubectl describe node worker-");
    press(&input, "Tab", false).await;
    assert!(text(&root, "#terminal-output").contains("worker-1  worker-2  worker-3"));
    input.set_value("kubectl get pods");
    press(&input, "c", true).await;
    assert_eq!(input.value(), "");
    assert!(text(&root, "#terminal-output").contains("$ kubectl get pods^C"));
}

#[wasm_bindgen_test]
async fn exec_it_opens_the_container_shell_with_its_prompt_until_exit() {
    let root = mount().await;
    set_manifest(&root, POD);
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    type_command(&root, "kubectl exec -it web -- sh").await;
    assert_eq!(text(&root, "#terminal-prompt"), "#");
    type_command(&root, "hostname").await;
    let out = text(&root, "#terminal-output");
    assert!(out.contains("# hostname"), "{out}");
    let outs = root.query_selector_all("#terminal-output .out").unwrap();
    let printed: Vec<String> = (0..outs.length()).filter_map(|i| outs.item(i)?.text_content()).collect();
    assert_eq!(printed.last().map(String::as_str), Some("web"), "{out}");
    let input = find(&root, "#terminal-input").dyn_into::<HtmlInputElement>().unwrap();
    input.set_value("hostn");
    press(&input, "Tab", false).await;
    assert_eq!(input.value(), "hostn", "completion leaves a container's commands alone");
    input.set_value("");
    // The page's controls run beside the shell, as a second terminal would.
    click(&root, "#settle").await;
    assert_eq!(text(&root, "#terminal-prompt"), "#");
    assert!(text(&root, "#terminal-output").contains("$ sim settle"));
    type_command(&root, "exit").await;
    assert_eq!(text(&root, "#terminal-prompt"), "$");
    type_command(&root, "kubectl get pod web").await;
    assert!(text(&root, "#terminal-output").contains("$ kubectl get pod web"));
}

#[wasm_bindgen_test]
async fn deleting_a_pod_from_the_table_removes_it() {
    let root = mount().await;
    set_manifest(&root, POD);
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    click(&root, "#pods tr[data-pod=\"web\"] button[aria-label^=\"Delete pod\"]").await;
    assert!(text(&root, "#terminal-output").contains("pod \"web\" deleted"));
    click(&root, "#settle").await;
    assert!(root.query_selector("#pods tr[data-pod=\"web\"]").unwrap().is_none());
}

#[wasm_bindgen_test]
fn scenario_transcripts_replay_in_the_browser_exactly_as_natively() {
    // The same files the native scenario test replays: wasm and native must agree byte for byte.
    for expected in [include_str!("scenarios/deployment_self_healing.txt"), include_str!("scenarios/node_failure.txt")]
    {
        let mut session = Session::new(1);
        let actual = session.run_commands(&parse_transcript(expected));
        assert_eq!(actual, expected);
    }
}

#[wasm_bindgen_test]
async fn the_default_example_deploys_three_pods_and_heals_a_deleted_one() {
    let root = mount().await;
    click(&root, "#apply").await;
    let result = text(&root, "#apply-result");
    assert_eq!(result, "deployment.apps/web created\nservice/web created");
    click(&root, "#settle").await;
    let rows = root.query_selector_all("#pods tbody tr").unwrap();
    assert_eq!(rows.length(), 3);
    assert!(text(&root, "#pods").matches("Running").count() == 3, "{}", text(&root, "#pods"));
    assert!(text(&root, "#workloads").contains("deployment.apps/web"));
    // Delete one: the ReplicaSet controller's lane shows the gap, then closes it.
    click(&root, "#pods tbody tr button[aria-label^=\"Delete pod\"]").await;
    let lane = "#map .lane[data-controller=\"replicaset-controller\"]";
    let lane_says = |root: &Element| find(root, lane).get_attribute("aria-label").unwrap_or_default();
    let mut seen = String::new();
    for _ in 0..200 {
        click(&root, "#step").await;
        seen = lane_says(&root);
        if seen.contains("want 3 · have 2 → create 1") {
            break;
        }
    }
    assert!(seen.contains("want 3 · have 2 → create 1"), "the lane showed: {seen}");
    click(&root, "#settle").await;
    assert!(lane_says(&root).contains("want 3 · have 3"), "{}", lane_says(&root));
    let pods = text(&root, "#pods");
    assert_eq!(root.query_selector_all("#pods tbody tr").unwrap().length(), 3, "{pods}");
    // Four pods created by the web ReplicaSet: three, then the replacement.
    let rows = root.query_selector_all("#events tbody tr[data-reason=\"SuccessfulCreate\"]").unwrap();
    let web_creates = (0..rows.length())
        .filter_map(|i| rows.item(i))
        .filter(|n| n.text_content().unwrap_or_default().contains("replicaset/web-"))
        .count();
    assert_eq!(web_creates, 4, "{}", text(&root, "#events"));
}

async fn type_command(root: &Element, line: &str) {
    let input = find(root, "#terminal-input").dyn_into::<HtmlInputElement>().unwrap();
    input.set_value(line);
    press(&input, "Enter", false).await;
}

#[wasm_bindgen_test]
async fn stopping_a_nodes_kubelet_from_its_card_makes_it_not_ready_and_its_pods_move() {
    let root = mount().await;
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    let card = "#nodes section[data-node=\"worker-1\"]";
    let before = text(&root, card);
    assert!(before.contains("web-"), "worker-1 runs a web pod: {before}");
    click(&root, &format!("{card} button[title=\"sim node stop worker-1\"]")).await;
    assert!(text(&root, "#terminal-output").contains("$ sim node stop worker-1"));
    // The grace period (50 s) makes it NotReady; the taint's 300 s toleration evicts its pods.
    type_command(&root, "sleep 1m").await;
    assert!(text(&root, card).contains("NotReady"), "{}", text(&root, card));
    type_command(&root, "sleep 6m").await;
    // Its pod is replaced elsewhere; the old one stays Terminating, as nobody on worker-1
    // can confirm it stopped.
    let pods = text(&root, "#pods");
    let rows = root.query_selector_all("#pods tbody tr").unwrap();
    for row in (0..rows.length()).filter_map(|i| rows.item(i)).map(|r| r.text_content().unwrap_or_default()) {
        assert!(!row.contains("worker-1") || row.contains("Terminating"), "{row}");
    }
    assert_eq!(pods.matches("Running").count(), 3, "{pods}");
    click(&root, &format!("{card} button[title=\"sim node start worker-1\"]")).await;
    assert!(text(&root, "#terminal-output").contains("kubelet started"));
}

#[wasm_bindgen_test]
async fn partition_and_break_image_are_on_the_map_and_print_their_commands() {
    let root = mount().await;
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    let card = "#nodes section[data-node=\"worker-2\"]";
    click(&root, &format!("{card} button[title=\"sim node partition worker-2\"]")).await;
    assert!(text(&root, "#terminal-output").contains("$ sim node partition worker-2"));
    assert!(text(&root, "#terminal-output").contains("node/worker-2: partitioned from the API server"));
    type_command(&root, "sleep 1m").await;
    assert!(text(&root, card).contains("NotReady"), "{}", text(&root, card));
    click(&root, &format!("{card} button[title=\"sim node heal worker-2\"]")).await;
    assert!(text(&root, "#terminal-output").contains("node/worker-2: reconnected to the API server"));

    let first_pod = "#pods tbody tr:first-child";
    click(&root, &format!("{first_pod} button[title=\"sim image break nginx:1.25\"]")).await;
    assert!(text(&root, "#terminal-output").contains("image nginx:1.25: the registry stops serving it"));
    assert!(root.query_selector(&format!("{first_pod} button[title=\"sim image fix nginx:1.25\"]")).unwrap().is_some());
    click(&root, &format!("{first_pod} button[title=\"sim image fix nginx:1.25\"]")).await;
    assert!(text(&root, "#terminal-output").contains("image nginx:1.25: the registry serves it again"));
}

#[wasm_bindgen_test]
async fn a_shared_session_replays_with_the_same_names_and_its_terminal_history() {
    // The session as the sharer had it: a Deployment, time passing, a pod deleted, a step.
    let mut original = Session::new(3);
    let mut journal = Journal::new(3);
    for line in ["kubectl create deployment web --image=nginx:1.25 --replicas=3", "sleep 20s"] {
        let command = kubeloop::shell::Command::new(line);
        journal.command(original.cluster.now(), &command);
        original.execute(&command);
    }
    let victim = original.cluster.objects(kubeloop::api::Kind::Pod, "default")[0].name().to_string();
    let delete = kubeloop::shell::Command::new(&format!("kubectl delete pod {victim} --wait=false"));
    journal.command(original.cluster.now(), &delete);
    original.execute(&delete);
    original.cluster.advance(kubeloop::sim::Duration::seconds(10));
    journal.now = original.cluster.now().0;
    let link = journal.encode();

    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let props = AppProps { journal: Journal::decode(&link), ..props() };
    yew::Renderer::<App>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    let pods = text(&root, "#pods");
    for p in original.cluster.objects(kubeloop::api::Kind::Pod, "default") {
        assert!(pods.contains(p.name()), "{} missing from {pods}", p.name());
    }
    assert!(!pods.contains(&victim) || pods.contains("Terminating"), "{pods}");
    let terminal = text(&root, "#terminal-output");
    assert!(
        terminal.contains("deployment.apps/web created") && terminal.contains(&format!("pod \"{victim}\" deleted")),
        "{terminal}"
    );
    // Reset starts over.
    click(&root, "#reset").await;
    assert_eq!(root.query_selector_all("#pods tbody tr").unwrap().length(), 0);
}

#[wasm_bindgen_test]
async fn a_pod_too_big_for_any_node_explains_why_it_is_pending() {
    let root = mount().await;
    set_manifest(
        &root,
        "apiVersion: v1
kind: Pod
metadata:
  name: huge
spec:
  containers:
  - name: app
    image: nginx:1.25
    resources:
      requests:
        cpu: \"64\"
",
    );
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    let why = text(&root, "#pods tr[data-pod=\"huge\"] .why");
    assert!(why.starts_with("0/4 nodes are available:") && why.contains("Insufficient cpu"), "{why}");
}

#[wasm_bindgen_test]
async fn presenter_mode_and_keyboard_shortcuts_work_outside_text_fields() {
    let root = mount().await;
    let document = web_sys::window().unwrap().document().unwrap();
    let key = |k: &str| {
        let init = KeyboardEventInit::new();
        init.set_key(k);
        init.set_bubbles(true);
        KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap()
    };
    document.body().unwrap().dispatch_event(&key("p")).unwrap();
    yew::scheduler::flush().await;
    assert!(find(&root, ".app").class_name().contains("presenter"));
    // Presenting plays at the teaching pace: the simulation waits for the map.
    assert_eq!(find(&root, "#speed").dyn_into::<web_sys::HtmlSelectElement>().unwrap().value(), "teaching");
    document.body().unwrap().dispatch_event(&key("s")).unwrap();
    yew::scheduler::flush().await;
    assert!(text(&root, "#terminal-output").contains("$ sim settle"), "'s' skipped to settled");
    // Typed into the terminal, the same keys are just text.
    let input = find(&root, "#terminal-input").dyn_into::<HtmlInputElement>().unwrap();
    input.dispatch_event(&key("p")).unwrap();
    yew::scheduler::flush().await;
    assert!(find(&root, ".app").class_name().contains("presenter"));
    click(&root, "#presenter").await;
    assert!(!find(&root, ".app").class_name().contains("presenter"));
    assert_eq!(find(&root, "#speed").dyn_into::<web_sys::HtmlSelectElement>().unwrap().value(), "1");
}

/// Mounts the page following lesson `id`: the page fetches `lessons/<id>.md` before mounting;
/// here its source is handed over.
async fn mount_lesson(id: &str, source: &str) -> Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let props = AppProps { lesson: Some(id.into()), lesson_source: Some(Ok(source.into())), ..props() };
    yew::Renderer::<App>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    root
}

#[wasm_bindgen_test]
async fn a_lesson_step_is_completed_through_the_page_and_its_check_turns_green() {
    let root = mount_lesson("01-two-halves", include_str!("../lessons/01-two-halves.md")).await;
    assert!(text(&root, "#lesson-title").contains("The two halves of a cluster"));
    assert_eq!(text(&root, "#lesson .step h3"), "Meet the nodes");
    assert!(text(&root, "#lesson .intro").contains("control plane"), "the intro's Markdown is rendered");
    assert_eq!(find(&root, "#lesson .check").get_attribute("data-passed").as_deref(), Some("false"));
    // The step's suggested command, run from the panel.
    click(&root, "#lesson .commands button.run").await;
    assert!(text(&root, "#terminal-output").contains("$ kubectl get nodes -o wide"));
    // The step is done: the panel moves on, and the first dot is ticked.
    assert_eq!(text(&root, "#lesson .step h3"), "Find the control plane");
    assert_eq!(text(&root, "#lesson .step-dots li:first-child"), "✓");
    // Going back shows the finished step with its check passed.
    click(&root, "#lesson-prev").await;
    assert_eq!(text(&root, "#lesson .step h3"), "Meet the nodes");
}

#[wasm_bindgen_test]
async fn an_incident_is_diagnosed_and_fixed_through_the_page_and_its_debrief_names_the_fault() {
    let root = mount_lesson("i09-cordoned", include_str!("../lessons/i09-cordoned.md")).await;
    assert!(text(&root, "#lesson .crumbs").contains("Incidents"), "{}", text(&root, "#lesson .crumbs"));
    assert!(text(&root, "#lesson .intro").contains("The pager"));
    // The hints come in order, each saying more.
    let hints = root.query_selector_all("#lesson .hint summary").unwrap();
    assert_eq!(hints.item(0).and_then(|h| h.text_content()).as_deref(), Some("Hint 1 of 2"));
    // The cluster is broken: the pods wait.
    type_command(&root, "kubectl get pods -l app=api").await;
    assert!(text(&root, "#terminal-output").contains("Pending"));
    assert_eq!(text(&root, "#lesson .step h3"), "Find what was left behind");
    type_command(&root, "kubectl get nodes").await;
    assert!(text(&root, "#terminal-output").contains("Ready,SchedulingDisabled"));
    assert_eq!(text(&root, "#lesson .step h3"), "End the maintenance");
    assert!(root.query_selector("#lesson-debrief").unwrap().is_none(), "the diagnosis step has nothing to debrief");
    type_command(&root, "kubectl uncordon worker-1 worker-2 worker-3").await;
    type_command(&root, "sleep 20s").await;
    assert_eq!(text(&root, "#lesson .step h3"), "Lesson complete");
    let debrief = text(&root, "#lesson-debrief");
    assert!(debrief.contains("What happened") && debrief.contains("cordoned"), "{debrief}");
}

#[wasm_bindgen_test]
async fn a_prediction_is_made_through_the_page_and_shown_beside_what_the_scheduler_did() {
    let root = mount_lesson("06-scheduler", include_str!("../lessons/06-scheduler.md")).await;
    assert!(text(&root, "#lesson-predict").contains("Where will the scheduler put big?"));
    click(&root, "#lesson-predict button.choice").await;
    assert!(text(&root, "#lesson-predict").contains("Your prediction: worker-1"), "{}", text(&root, "#lesson-predict"));
    type_command(&root, "kubectl apply -f big.yaml").await;
    type_command(&root, "sleep 10s").await;
    assert_eq!(text(&root, "#lesson .step h3"), "Read a FailedScheduling event");
    let outcome = text(&root, "#lesson-outcome");
    assert!(outcome.contains("You predicted worker-1") && outcome.contains("Why: The scheduler"), "{outcome}");
}

#[wasm_bindgen_test]
async fn export_offers_the_applied_objects_as_yaml() {
    let root = mount().await;
    click(&root, "#apply").await;
    click(&root, "#export").await;
    assert_eq!(
        text(&root, "#share-note"),
        "kubeloop-export.yaml: 2 object(s) you created, for kubectl apply -f",
        "the default example's Deployment and Service"
    );
}

#[wasm_bindgen_test]
async fn a_lesson_that_cannot_be_loaded_says_why_above_the_index() {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    let broken = "---\ntitle: Half written\n";
    let props = AppProps { lesson: Some("draft".into()), lesson_source: Some(Ok(broken.into())), ..props() };
    yew::Renderer::<App>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    assert_eq!(text(&root, "#lesson-problem"), "lessons/draft.md:1: the front matter is never closed by a `---` line");
    assert!(root.query_selector_all("#lesson-index a").unwrap().length() >= 12, "the course is still offered");
}

#[wasm_bindgen_test]
async fn the_lesson_index_links_every_lesson() {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    yew::Renderer::<App>::with_root_and_props(root.clone(), AppProps { show_index: true, ..props() }).render();
    yew::scheduler::flush().await;
    let links = root.query_selector_all("#lesson-index a").unwrap();
    assert!(links.length() >= 12, "{}", links.length());
}

#[wasm_bindgen_test]
async fn events_filter_by_component_and_a_click_highlights_the_object() {
    let root = mount().await;
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    let from = find(&root, "#event-from").dyn_into::<web_sys::HtmlSelectElement>().unwrap();
    from.set_value("kubelet");
    from.dispatch_event(&web_sys::Event::new("change").unwrap()).unwrap();
    yew::scheduler::flush().await;
    let rows = root.query_selector_all("#events tbody tr").unwrap();
    assert!(rows.length() > 0);
    for r in (0..rows.length()).filter_map(|i| rows.item(i)) {
        assert!(r.text_content().unwrap_or_default().contains("kubelet"));
    }
    // Clicking a kubelet event about a web pod highlights that pod's row.
    let event = root.query_selector("#events tbody tr td:nth-child(4)").unwrap().unwrap();
    let object = event.text_content().unwrap_or_default();
    click(&root, "#events tbody tr").await;
    if let Some(name) = object.strip_prefix("pod/") {
        let row = find(&root, &format!("#pods tr[data-pod=\"{name}\"]"));
        assert!(row.class_name().contains("highlight") || !text(&root, "#pods").contains(name), "{name}");
    }
    assert!(find(&root, "#events tbody tr").class_name().contains("selected"));
}

#[wasm_bindgen_test]
async fn clicking_a_pod_opens_the_inspector_with_describe_yaml_and_its_owner_chain() {
    let root = mount().await;
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    click(&root, "#pods tbody tr button.name").await;
    let inspector = text(&root, "#inspector");
    assert!(inspector.contains("Name:") && inspector.contains("Events:"), "{inspector}");
    assert!(text(&root, "#inspector .owners").contains("deployment/web"), "{inspector}");
    click(&root, "#inspector .tabs button:nth-child(2)").await;
    assert!(text(&root, "#inspector .inspector-body").starts_with("apiVersion: v1\nkind: Pod"));
    // Up the chain: the Deployment.
    click(&root, "#inspector .owners button:last-child").await;
    assert!(text(&root, "#inspector h2").contains("deployment/web"));
    click(&root, "#inspector header button[aria-label=\"Close the inspector\"]").await;
    assert!(root.query_selector("#inspector").unwrap().is_none());
}

#[wasm_bindgen_test]
async fn the_scrubber_shows_the_cluster_as_it_was_before_a_pod_existed() {
    let root = mount().await;
    let before = text(&root, ".revision").trim_start_matches("rev ").parse::<i64>().unwrap();
    set_manifest(&root, POD);
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    assert!(root.query_selector("#pods tr[data-pod=\"web\"]").unwrap().is_some());
    let scrubber = find(&root, "#scrubber").dyn_into::<HtmlInputElement>().unwrap();
    scrubber.set_value(&before.to_string());
    scrubber.dispatch_event(&web_sys::Event::new("input").unwrap()).unwrap();
    yew::scheduler::flush().await;
    assert!(text(&root, "#time-travel").contains(&format!("revision {before}")));
    assert!(root.query_selector("#pods tr[data-pod=\"web\"]").unwrap().is_none(), "no pod yet in the past");
    click(&root, "#time-travel button").await;
    assert!(root.query_selector("#pods tr[data-pod=\"web\"]").unwrap().is_some());
}

#[wasm_bindgen_test]
async fn following_the_last_apply_steps_from_kubectl_through_the_controllers() {
    let root = mount().await;
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    click(&root, "#follow-apply").await;
    let first = text(&root, "#follow .follow-current");
    assert!(first.starts_with("kubectl asks the API server: POST"), "{first}");
    // The followed step's own message travels the map, though the clock is stopped.
    let mut seen = Vec::new();
    assert!(
        seen_on_the_map(&root, &mut seen, |(from, to, label)| from == "kubectl"
            && to == "etcd"
            && label == "POST deployments")
        .await,
        "{seen:?}"
    );
    click(&root, "#follow-next").await;
    let second = text(&root, "#follow .follow-current");
    assert_ne!(first, second);
    // Play walks on by itself, a step per message's journey (real time: it paces the eye).
    click(&root, "#follow-play").await;
    assert_eq!(text(&root, "#follow-play"), "pause");
    let mut third = second.clone();
    for _ in 0..40 {
        yew::platform::time::sleep(std::time::Duration::from_millis(100)).await;
        yew::scheduler::flush().await;
        third = text(&root, "#follow .follow-current");
        if third != second {
            break;
        }
    }
    assert_ne!(third, second, "play moved on to step 3");
    click(&root, "#follow-play").await;
    assert_eq!(text(&root, "#follow-play"), "play");
    let all = text(&root, "#follow .follow-steps");
    assert!(
        all.contains("deployment-controller")
            && all.contains("replicaset-controller")
            && all.contains("kube-scheduler"),
        "{all}"
    );
}

#[wasm_bindgen_test]
async fn kubectl_edit_opens_the_object_in_the_editor_and_saving_patches_what_changed() {
    let root = mount().await;
    type_command(&root, "kubectl create deployment web --image=nginx:1.25 --replicas=1").await;
    type_command(&root, "kubectl edit deployment web").await;
    let manifest = find(&root, "#manifest").dyn_into::<HtmlTextAreaElement>().unwrap();
    let yaml = manifest.value();
    assert!(yaml.contains("kind: Deployment") && yaml.contains("replicas: 1"), "{yaml}");
    assert_eq!(text(&root, "#apply"), "save edit");
    assert!(yaml.starts_with("# Please edit the object below."), "{yaml}");
    manifest.set_value(&yaml.replace("replicas: 1", "replicas: 2"));
    click(&root, "#apply").await;
    assert_eq!(text(&root, "#apply-result"), "deployment.apps/web edited");
    assert_eq!(text(&root, "#apply"), "kubectl apply");
    type_command(&root, "kubectl get deployment web -o jsonpath={.spec.replicas}").await;
    assert!(text(&root, "#terminal-output").ends_with("2"), "{}", text(&root, "#terminal-output"));
}

#[wasm_bindgen_test]
async fn get_w_prints_rows_live_until_ctrl_c() {
    let root = mount().await;
    set_manifest(&root, POD);
    click(&root, "#apply").await;
    type_command(&root, "kubectl get pods -w").await;
    let before = text(&root, "#terminal-output");
    assert!(before.contains("web") && before.contains("Pending"), "{before}");
    click(&root, "#settle").await;
    let after = text(&root, "#terminal-output");
    assert!(after.matches("web").count() > before.matches("web").count(), "rows arrived: {after}");
    assert!(after.contains("Running"), "{after}");
    let input = find(&root, "#terminal-input").dyn_into::<HtmlInputElement>().unwrap();
    press(&input, "c", true).await;
    type_command(&root, "kubectl delete pod web --wait=false").await;
    click(&root, "#settle").await;
    let stopped = text(&root, "#terminal-output");
    assert!(!stopped.rsplit("^C").next().unwrap_or("").contains("Terminating"), "no rows after Ctrl-C: {stopped}");
}

/// The messages on the map now: (from, to, label) of each.
fn messages(root: &Element) -> Vec<(String, String, String)> {
    let found = root.query_selector_all("#map .token").unwrap();
    (0..found.length())
        .filter_map(|i| found.item(i)?.dyn_into::<Element>().ok())
        .map(|m| {
            let attr = |name: &str| m.get_attribute(name).unwrap_or_default();
            let label = m.get_attribute("data-label").unwrap_or_default();
            (attr("data-from"), attr("data-to"), label)
        })
        .collect()
}

/// Waits (real time: the animation runs on the page's frames) until `wanted` has been on the
/// map, collecting every message seen; false after about five seconds.
async fn seen_on_the_map(
    root: &Element,
    seen: &mut Vec<(String, String, String)>,
    wanted: impl Fn(&(String, String, String)) -> bool,
) -> bool {
    for _ in 0..50 {
        for m in messages(root) {
            if !seen.contains(&m) {
                seen.push(m);
            }
        }
        if seen.iter().any(&wanted) {
            return true;
        }
        yew::platform::time::sleep(std::time::Duration::from_millis(100)).await;
        yew::scheduler::flush().await;
    }
    false
}

#[wasm_bindgen_test]
async fn an_apply_sends_messages_travelling_from_kubectl_to_etcd_and_from_the_api_server_to_watchers() {
    let root = mount().await;
    click(&root, "#apply").await;
    // The apply's first request leaves kubectl at once, on its way through the API server.
    let dot = find(&root, "#map .token[data-from=\"kubectl\"]");
    let at_first = dot.get_attribute("transform").unwrap_or_default();
    assert!(at_first.starts_with("translate("), "{at_first}");
    // Its writes follow, one after another, through the pipeline to etcd.
    let mut seen = Vec::new();
    let post = |m: &(String, String, String)| m.0 == "kubectl" && m.1 == "etcd" && m.2 == "POST deployments";
    assert!(seen_on_the_map(&root, &mut seen, post).await, "{seen:?}");
    // A step or two delivers the write to its watchers: the API server tells the controllers.
    for _ in 0..3 {
        click(&root, "#step").await;
    }
    let heard = |m: &(String, String, String)| {
        m.0 == "kube-apiserver" && m.1 == "deployment-controller" && m.2.starts_with("watch: ADDED deployment/web")
    };
    assert!(seen_on_the_map(&root, &mut seen, heard).await, "{seen:?}");
    // The dot that left first has moved on (or arrived and gone).
    let moved = root
        .query_selector("#map .token[data-from=\"kubectl\"]")
        .unwrap()
        .is_none_or(|d| d.get_attribute("transform").unwrap_or_default() != at_first);
    assert!(moved, "the first message did not move: {at_first}");
}

#[wasm_bindgen_test]
async fn the_etcd_box_shows_the_revision_etcd_reports() {
    let root = mount().await;
    click(&root, "#apply").await;
    for _ in 0..15 {
        click(&root, "#step").await;
    }
    type_command(&root, "etcdctl endpoint status").await;
    // `127.0.0.1:2379, ID, VERSION, SIZE, true, false, 2, RAFT_INDEX, REVISION,`
    let out = text(&root, "#terminal-output");
    let status = out.rsplit_once("127.0.0.1:2379, ").map(|(_, s)| s.to_string()).unwrap_or_default();
    let revision = status.split(", ").nth(7).unwrap_or_default().trim_end_matches(',').to_string();
    assert!(revision.parse::<i64>().is_ok_and(|r| r > 1), "{status}");
    assert_eq!(text(&root, "#map-revision"), format!("revision {revision}"));
}

/// Types `yaml` into the editor as a user would: its text changes and it hears an input event.
async fn type_manifest(root: &Element, yaml: &str) {
    let area = find(root, "#manifest").dyn_into::<HtmlTextAreaElement>().unwrap();
    area.set_value(yaml);
    area.dispatch_event(&web_sys::Event::new("input").unwrap()).unwrap();
    yew::scheduler::flush().await;
}

/// The line numbers the gutter marks as wrong.
fn marked_lines(root: &Element) -> Vec<String> {
    let nums = root.query_selector_all(".gutter .num.err").unwrap();
    (0..nums.length()).filter_map(|i| nums.item(i)).filter_map(|n| n.text_content()).collect()
}

/// The 1-based position of the highlighted copy's marked lines.
fn marked_view_lines(root: &Element) -> Vec<usize> {
    let lines = root.query_selector_all("#manifest-view .code-line").unwrap();
    (0..lines.length())
        .filter(|&i| {
            lines
                .item(i)
                .and_then(|n| n.dyn_into::<Element>().ok())
                .is_some_and(|e| e.class_name().split_whitespace().any(|c| c == "err"))
        })
        .map(|i| i as usize + 1)
        .collect()
}

#[wasm_bindgen_test]
async fn invalid_yaml_marks_the_line_it_breaks_on_with_kubectls_message() {
    let root = mount().await;
    type_manifest(
        &root,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: nginx image: nginx\n",
    )
    .await;
    click(&root, "#apply").await;
    let error = text(&root, "#apply-error");
    assert_eq!(
        error,
        "error: error parsing STDIN: error converting YAML to JSON: yaml: line 7: mapping values are not allowed in this context"
    );
    assert_eq!(marked_lines(&root), ["7"]);
    assert_eq!(marked_view_lines(&root), [7]);
    assert_eq!(text(&root, "#editor-marks"), "!line 7");
    let area = find(&root, "#manifest");
    assert_eq!(area.get_attribute("aria-invalid").as_deref(), Some("true"));
    assert_eq!(area.get_attribute("aria-describedby").as_deref(), Some("editor-marks apply-error"));
    assert!(text(&root, "#terminal-output").contains("$ kubectl apply -f - < manifest.yaml"));

    // Fixing the text clears the mark.
    type_manifest(&root, POD).await;
    assert!(marked_lines(&root).is_empty());
    assert!(root.query_selector("#editor-marks").unwrap().is_none());
    assert_eq!(find(&root, "#manifest").get_attribute("aria-invalid"), None);
}

#[wasm_bindgen_test]
async fn invalid_field_values_mark_their_fields_in_each_document() {
    let root = mount().await;
    let manifest = kubeloop::views::examples::EXAMPLES[0]
        .manifest
        .replace("replicas: 3", "replicas: -1")
        .replace("  - port: 80", "  - port: 70000");
    let port_line = manifest.lines().position(|l| l.contains("70000")).unwrap() + 1;
    type_manifest(&root, &manifest).await;
    click(&root, "#apply").await;
    let error = text(&root, "#apply-error");
    assert_eq!(
        error,
        "The Deployment \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n\
         The Service \"web\" is invalid: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"
    );
    assert_eq!(marked_lines(&root), ["8".to_string(), port_line.to_string()]);
    assert_eq!(marked_view_lines(&root), [8, port_line]);
    // Two marks: each names its cause.
    assert_eq!(
        text(&root, "#editor-marks li:nth-child(2)"),
        format!("!line {port_line}: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive")
    );
    // "line N" puts the cursor there.
    click(&root, "#editor-marks li:nth-child(2) button").await;
    let area = find(&root, "#manifest").dyn_into::<HtmlTextAreaElement>().unwrap();
    let offset: usize = manifest.lines().take(port_line - 1).map(|l| l.len() + 1).sum();
    assert_eq!(area.selection_start().unwrap(), Some(offset as u32));

    // An unknown field marks its key; a later success clears every mark.
    type_manifest(&root, &POD.replace("image:", "imagee:")).await;
    click(&root, "#apply").await;
    assert_eq!(marked_lines(&root), ["8"]);
    type_manifest(&root, POD).await;
    click(&root, "#apply").await;
    assert_eq!(text(&root, "#apply-result"), "pod/web created");
    assert!(marked_lines(&root).is_empty());
}

#[wasm_bindgen_test]
async fn the_editor_highlights_yaml_over_the_text_area_with_a_line_per_number() {
    let root = mount().await;
    let manifest = kubeloop::views::examples::EXAMPLES[0].manifest;
    let area = find(&root, "#manifest").dyn_into::<HtmlTextAreaElement>().unwrap();
    assert_eq!(area.value(), manifest);
    let lines = manifest.split('\n').count() as u32;
    assert_eq!(root.query_selector_all("#manifest-view .code-line").unwrap().length(), lines);
    assert_eq!(root.query_selector_all(".gutter .num").unwrap().length(), lines);
    assert_eq!(text(&root, ".gutter .num:nth-child(3)"), "3");
    // The copy holds the same text, coloured.
    assert_eq!(text(&root, "#manifest-view"), manifest.replace('\n', ""));
    assert_eq!(text(&root, "#manifest-view .tk-key"), "apiVersion");
    assert_eq!(text(&root, "#manifest-view .code-line:nth-child(8) .tk-num"), "3");
    assert_eq!(text(&root, "#manifest-view .tk-sep"), "---");
    assert_eq!(text(&root, "#manifest-view .code-line:nth-child(18) .tk-dash"), "-");
    assert_eq!(text(&root, "#manifest-view .code-line:nth-child(19) .tk-str"), "nginx:1.25");
    // Only the text area is seen by assistive technology.
    assert_eq!(find(&root, "#manifest-view").get_attribute("aria-hidden").as_deref(), Some("true"));
    assert_eq!(find(&root, ".gutter").get_attribute("aria-hidden").as_deref(), Some("true"));

    // Typing re-highlights.
    type_manifest(&root, "# hello\nreplicas: true\n").await;
    assert_eq!(text(&root, "#manifest-view .tk-com"), "# hello");
    assert_eq!(text(&root, "#manifest-view .tk-lit"), "true");
    assert_eq!(root.query_selector_all(".gutter .num").unwrap().length(), 3);

    // Choosing an example fills the editor and its copy.
    let examples = find(&root, "#examples").dyn_into::<web_sys::HtmlSelectElement>().unwrap();
    examples.set_value("nginx");
    examples.dispatch_event(&web_sys::Event::new("change").unwrap()).unwrap();
    yew::scheduler::flush().await;
    assert!(area.value().contains("kind: Pod"));
    assert_eq!(text(&root, "#manifest-view"), area.value().replace('\n', ""));
}

/// Whether the text area and the copy under it share every metric that places a glyph, and
/// the copy's lines and the gutter's numbers sit at the same heights.
fn assert_layers_line_up(root: &Element) {
    let window = web_sys::window().unwrap();
    let style = |selector: &str| window.get_computed_style(&find(root, selector)).unwrap().unwrap();
    let (area, view) = (style("#manifest"), style("#manifest-view"));
    for property in [
        "font-family",
        "font-size",
        "line-height",
        "padding-top",
        "padding-left",
        "tab-size",
        "white-space",
        "letter-spacing",
    ] {
        let (a, v) = (area.get_property_value(property).unwrap(), view.get_property_value(property).unwrap());
        assert_eq!(a, v, "{property}");
    }
    let top = |selector: &str| find(root, selector).dyn_into::<HtmlElement>().unwrap().offset_top();
    for n in [1, 5, 9] {
        assert_eq!(
            top(&format!("#manifest-view .code-line:nth-child({n})")),
            top(&format!(".gutter .num:nth-child({n})"))
        );
    }
    // The gutter is as tall as the text area, not as its numbers.
    let height = |selector: &str| find(root, selector).dyn_into::<HtmlElement>().unwrap().offset_height();
    assert_eq!(height(".gutter"), height("#manifest"));
    // The text area's content is exactly as tall as the copy's lines.
    let area = find(root, "#manifest");
    let count = root.query_selector_all("#manifest-view .code-line").unwrap().length();
    let last = find(root, &format!("#manifest-view .code-line:nth-child({count})")).dyn_into::<HtmlElement>().unwrap();
    let padding = 10;
    let content = last.offset_top() + last.offset_height() + padding;
    assert!((area.scroll_height() - content).abs() <= 1, "{} vs {content}", area.scroll_height());
}

/// The page's own stylesheet, which the test page does not load by itself.
fn load_style_sheet() {
    let document = web_sys::window().unwrap().document().unwrap();
    if document.get_element_by_id("page-style").is_none() {
        let style = document.create_element("style").unwrap();
        style.set_id("page-style");
        style.set_text_content(Some(include_str!("../web/style.css")));
        document.head().unwrap().append_child(&style).unwrap();
    }
}

#[wasm_bindgen_test]
async fn the_highlighted_copy_lines_up_with_the_text_area_in_presenter_mode_too() {
    load_style_sheet();
    let root = mount().await;
    assert_layers_line_up(&root);
    click(&root, "#presenter").await;
    assert!(find(&root, ".app").class_name().contains("presenter"));
    assert_layers_line_up(&root);
    // Scrolling the text area scrolls the copy and the gutter with it.
    let area = find(&root, "#manifest");
    area.set_scroll_top(60);
    area.dispatch_event(&web_sys::Event::new("scroll").unwrap()).unwrap();
    yew::scheduler::flush().await;
    assert_eq!(find(&root, "#manifest-view").scroll_top(), area.scroll_top());
    assert_eq!(find(&root, ".gutter").scroll_top(), area.scroll_top());
}

#[wasm_bindgen_test]
async fn dry_run_and_delete_run_their_kubectl_commands_on_the_editors_text() {
    let root = mount().await;
    type_manifest(&root, POD).await;
    click(&root, "#dry-run").await;
    assert_eq!(text(&root, "#apply-result"), "pod/web created (server dry run)");
    assert!(text(&root, "#terminal-output").contains("$ kubectl apply --dry-run=server -f - < manifest.yaml"));
    assert!(root.query_selector("#pods tr[data-pod=\"web\"]").unwrap().is_none(), "a dry run stores nothing");
    click(&root, "#apply").await;
    assert!(root.query_selector("#pods tr[data-pod=\"web\"]").unwrap().is_some());
    click(&root, "#delete").await;
    assert_eq!(text(&root, "#apply-result"), "pod \"web\" deleted");
    assert!(text(&root, "#terminal-output").contains("$ kubectl delete -f - < manifest.yaml"));
    assert!(root.query_selector("#pods tr[data-pod=\"web\"]").unwrap().is_none());
    // Deleting it again fails at its name.
    click(&root, "#delete").await;
    assert_eq!(
        text(&root, "#apply-error"),
        "Error from server (NotFound): error when deleting \"STDIN\": pods \"web\" not found"
    );
    assert_eq!(marked_lines(&root), ["4"]);
}

#[wasm_bindgen_test]
async fn the_mistakes_example_is_fixed_one_marked_line_at_a_time() {
    let root = mount().await;
    let examples = find(&root, "#examples").dyn_into::<web_sys::HtmlSelectElement>().unwrap();
    examples.set_value("mistakes");
    examples.dispatch_event(&web_sys::Event::new("change").unwrap()).unwrap();
    yew::scheduler::flush().await;
    // The API server decodes before it validates: the unknown field comes first.
    click(&root, "#dry-run").await;
    assert!(
        text(&root, "#apply-error").ends_with(
            "strict decoding error: unknown field \"spec.template.spec.containers[0].ports[0].containerport\""
        ),
        "{}",
        text(&root, "#apply-error")
    );
    assert_eq!(marked_lines(&root), ["19"]);
    let area = find(&root, "#manifest").dyn_into::<HtmlTextAreaElement>().unwrap();
    type_manifest(&root, &area.value().replace("containerport", "containerPort")).await;
    click(&root, "#dry-run").await;
    assert_eq!(
        text(&root, "#apply-error"),
        "The Deployment \"broken\" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0"
    );
    assert_eq!(marked_lines(&root), ["6"]);
    type_manifest(&root, &area.value().replace("replicas: -2", "replicas: 2")).await;
    click(&root, "#apply").await;
    assert_eq!(text(&root, "#apply-result"), "deployment.apps/broken created");
    assert!(marked_lines(&root).is_empty());
}

/// The `data-from`/`data-to` of every edge the map draws.
fn edges(root: &Element) -> Vec<(String, String)> {
    let found = root.query_selector_all("#map path.edge").unwrap();
    (0..found.length())
        .filter_map(|i| found.item(i)?.dyn_into::<Element>().ok())
        .map(|e| (e.get_attribute("data-from").unwrap_or_default(), e.get_attribute("data-to").unwrap_or_default()))
        .collect()
}

#[wasm_bindgen_test]
async fn the_map_draws_each_component_joined_to_the_api_server_and_only_the_api_server_to_etcd() {
    let root = mount().await;
    let edges = edges(&root);
    let mut components =
        vec!["kubectl".to_string(), "kube-scheduler".into(), "kube-controller-manager".into(), "coredns".into()];
    for node in ["control-plane", "worker-1", "worker-2", "worker-3"] {
        components.push(format!("kubelet/{node}"));
        components.push(format!("kube-proxy/{node}"));
        // Each node's kubelet drives its container runtime, and only that.
        assert!(edges.contains(&(format!("kubelet/{node}"), format!("containerd/{node}"))), "{edges:?}");
        assert!(root.query_selector(&format!("#map [data-component=\"containerd/{node}\"]")).unwrap().is_some());
    }
    for c in &components {
        assert!(root.query_selector(&format!("#map [data-component=\"{c}\"]")).unwrap().is_some(), "no box for {c}");
        assert!(edges.contains(&(c.clone(), "kube-apiserver".to_string())), "no edge from {c}: {edges:?}");
    }
    let to_etcd: Vec<&(String, String)> = edges.iter().filter(|(a, b)| a == "etcd" || b == "etcd").collect();
    assert_eq!(to_etcd, [&("kube-apiserver".to_string(), "etcd".to_string())], "only the API server reaches etcd");
    assert!(root.query_selector("#map [data-component=\"etcd\"]").unwrap().is_some());
    assert_eq!(root.query_selector_all("#map .stage").unwrap().length(), 6);
}

#[wasm_bindgen_test]
async fn a_manifest_refused_by_validation_stops_at_the_validation_stage_with_kubectls_error() {
    let root = mount().await;
    set_manifest(
        &root,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  replicas: -1\n  selector:\n    matchLabels:\n      app: bad\n  template:\n    metadata:\n      labels:\n        app: bad\n    spec:\n      containers:\n      - name: c\n        image: nginx\n",
    );
    click(&root, "#apply").await;
    assert!(text(&root, "#apply-error").contains("spec.replicas"), "{}", text(&root, "#apply-error"));
    // The stage that refused it is marked on the API server, and kubectl's error is beside it.
    let refused = root.query_selector_all("#map .stage.refused").unwrap();
    assert_eq!(refused.length(), 1);
    let stage = refused.item(0).unwrap().dyn_into::<Element>().unwrap();
    assert_eq!(stage.get_attribute("data-stage").as_deref(), Some("validation"));
    assert!(text(&root, "#map .refusal").contains("spec.replicas"), "{}", text(&root, "#map .refusal"));
    // Its token travels from kubectl toward the API server only: never on to etcd.
    let token = find(&root, "#map .token.refused[data-from=\"kubectl\"]");
    assert_eq!(token.get_attribute("data-to").as_deref(), Some("kube-apiserver"));
}

#[wasm_bindgen_test]
async fn a_pending_pods_scheduler_view_names_each_nodes_reason() {
    let root = mount().await;
    set_manifest(
        &root,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: huge\nspec:\n  containers:\n  - name: app\n    image: nginx:1.25\n    resources:\n      requests:\n        cpu: \"64\"\n",
    );
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    click_map(&root, "#map [data-component=\"kube-scheduler\"]").await;
    let table = text(&root, "#scheduler-decision");
    for node in ["worker-1", "worker-2", "worker-3", "control-plane"] {
        assert!(table.contains(node), "{table}");
    }
    assert!(table.contains("Insufficient cpu"), "{table}");
    assert!(table.contains("untolerated taint"), "{table}");
}

#[wasm_bindgen_test]
async fn clicking_etcd_on_the_map_opens_its_key_tree_and_latest_writes() {
    let root = mount().await;
    click(&root, "#apply").await;
    click_map(&root, "#map [data-component=\"etcd\"]").await;
    let panel = text(&root, "#map-detail");
    assert!(panel.contains("deployments"), "{panel}");
    assert!(panel.contains("/registry/deployments/default/web"), "{panel}");
}

#[wasm_bindgen_test]
async fn a_controllers_lane_opens_its_reconciliation_loop_and_a_deleted_pod_is_a_turn_of_it() {
    let root = mount().await;
    click(&root, "#apply").await;
    click(&root, "#settle").await;
    click(&root, "#pods tbody tr button[aria-label^=\"Delete pod\"]").await;
    // Step until the ReplicaSet controller has acted on the deletion.
    for _ in 0..200 {
        click(&root, "#step").await;
        let lane = root.query_selector("#map .lane[data-controller=\"replicaset-controller\"]").unwrap();
        if lane.and_then(|l| l.get_attribute("aria-label")).is_some_and(|l| l.contains("create 1")) {
            break;
        }
    }
    click_map(&root, "#map .lane[data-controller=\"replicaset-controller\"]").await;
    let loop_text = text(&root, "#reconcile-loop");
    assert!(loop_text.contains("want 3 · have 2"), "{loop_text}");
    assert!(loop_text.contains("create 1"), "{loop_text}");
    let turns = text(&root, "#reconcile-turns");
    assert!(turns.contains("DELETE"), "the turn names what woke it: {turns}");
}

#[wasm_bindgen_test]
async fn the_legend_explains_no_raft_or_webhook_token_when_the_map_cannot_draw_one() {
    let root = mount().await;
    let legend = text(&root, ".map-legend");
    assert!(legend.contains("watch notification"), "{legend}");
    assert!(!legend.contains("Raft") && !legend.contains("webhook"), "one control plane, no webhook: {legend}");
}
