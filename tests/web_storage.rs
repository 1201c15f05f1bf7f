//! Browser tests: nothing a student types or opens loses their work without a word — one per
//! way it could be lost (share then reload, opening a link, a full storage, a large manifest,
//! two tabs, a session too large for a link). The page keeps the session in localStorage, so
//! these mount apps with `persist`, and clean localStorage, sessionStorage and the address after
//! each. A reload is simulated as the page does it: `storage::load_for_page`, then a new app.
//! Run as `cargo test --target wasm32-unknown-unknown --test web_storage`.
#![cfg(target_arch = "wasm32")]

use kubeloop::page::journal::{Entry, Journal};
use kubeloop::ui::storage::load_for_page;
use kubeloop::ui::{App, AppProps};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement, HtmlInputElement, HtmlTextAreaElement, KeyboardEvent, KeyboardEventInit};

wasm_bindgen_test_configure!(run_in_browser);

const OWN: &str = "kubeloop.session";

fn props(journal: Option<Journal>) -> AppProps {
    AppProps {
        seed: 1,
        start_paused: true,
        journal,
        persist: true,
        lesson: None,
        lesson_source: None,
        step: None,
        show_index: false,
        embed: false,
        worker: false,
    }
}

async fn mount_with(props: AppProps) -> Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    yew::Renderer::<App>::with_root_and_props(root.clone(), props).render();
    yew::scheduler::flush().await;
    root
}

/// Opens the page as a reload would: the session from the address or the storage.
async fn reload() -> Element {
    mount_with(props(load_for_page(None))).await
}

fn local() -> web_sys::Storage {
    web_sys::window().unwrap().local_storage().unwrap().unwrap()
}

fn session_storage() -> web_sys::Storage {
    web_sys::window().unwrap().session_storage().unwrap().unwrap()
}

fn hash() -> String {
    web_sys::window().unwrap().location().hash().unwrap()
}

/// Leaves no trace for the next test: storage, the tab's storage, the address's `#…`.
fn clean(roots: &[&Element]) {
    local().clear().unwrap();
    session_storage().clear().unwrap();
    let window = web_sys::window().unwrap();
    let location = window.location();
    let plain = format!("{}{}", location.pathname().unwrap(), location.search().unwrap());
    window.history().unwrap().replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&plain)).unwrap();
    for root in roots {
        root.remove();
    }
}

fn saved(key: &str) -> Option<Journal> {
    Journal::from_storage(&local().get_item(key).unwrap()?)
}

fn lines(journal: &Journal) -> Vec<String> {
    journal.entries.iter().map(|e| e.line.clone()).collect()
}

fn find(root: &Element, selector: &str) -> Element {
    root.query_selector(selector).unwrap().unwrap_or_else(|| panic!("no element matches {selector}"))
}

fn text(root: &Element, selector: &str) -> String {
    root.query_selector(selector).unwrap().and_then(|e| e.text_content()).unwrap_or_default()
}

fn has(root: &Element, selector: &str) -> bool {
    root.query_selector(selector).unwrap().is_some()
}

async fn click(root: &Element, selector: &str) {
    find(root, selector).dyn_into::<HtmlElement>().unwrap().click();
    yew::scheduler::flush().await;
}

/// Types a line in the terminal and presses Enter.
async fn run(root: &Element, line: &str) {
    let input = find(root, "#terminal-input").dyn_into::<HtmlInputElement>().unwrap();
    input.set_value(line);
    let init = KeyboardEventInit::new();
    init.set_key("Enter");
    let event = KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    input.dispatch_event(&event).unwrap();
    yew::scheduler::flush().await;
}

fn journal_of(lines: &[&str]) -> Journal {
    let mut journal = Journal::new(1);
    for line in lines {
        journal.entries.push(Entry { at: 0, line: line.to_string(), stdin: None, beside: false, skipped: false });
    }
    journal
}

/// About `mb` megabytes of manifest that kubectl cannot read (its last lines are broken).
fn broken_manifest(mb: f64) -> String {
    let mut yaml = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n");
    let mut i = 0;
    while (yaml.len() as f64) < mb * 1_000_000.0 {
        yaml.push_str(&format!("  key-{i}: a value with some words in it {i}\n"));
        i += 1;
    }
    yaml.push_str("  bad: [unclosed\n\tand a tab\n");
    yaml
}

#[wasm_bindgen_test]
async fn share_leaves_the_address_alone_so_a_reload_keeps_the_later_work() {
    clean(&[]);
    let root = mount_with(props(None)).await;
    run(&root, "kubectl create deployment web --image=nginx").await;
    click(&root, "#share").await;
    let link = find(&root, "#share-link").dyn_into::<HtmlInputElement>().unwrap().value();
    assert!(link.contains("#session="), "{link}");
    assert!(text(&root, "#share-note").contains("copy it to share"));
    assert!(has(&root, "#copy-link"));
    assert!(!hash().contains("session="), "the address is not pinned to the shared state: {}", hash());
    // Later work, then a reload: it is all there.
    run(&root, "kubectl scale deployment web --replicas=3").await;
    let again = reload().await;
    let out = text(&again, "#terminal-output");
    assert!(out.contains("kubectl scale deployment web --replicas=3"), "{out}");
    assert_eq!(lines(&saved(OWN).unwrap()).len(), 2);
    // The link still replays the state it was made at, apart from the student's own.
    let fragment = link.split_once('#').unwrap().1;
    web_sys::window().unwrap().location().set_hash(fragment).unwrap();
    let opened = load_for_page(None).unwrap();
    assert_eq!(lines(&opened), vec!["kubectl create deployment web --image=nginx"]);
    assert_eq!(lines(&saved(OWN).unwrap()).len(), 2, "the student's session is untouched");
    clean(&[&root, &again]);
}

#[wasm_bindgen_test]
async fn opening_a_link_keeps_the_students_own_session() {
    clean(&[]);
    let own = journal_of(&["kubectl create deployment mine --image=nginx", "kubectl get pods"]);
    local().set_item(OWN, &own.to_storage()).unwrap();
    let theirs = journal_of(&["kubectl create deployment theirs --image=httpd"]);
    web_sys::window().unwrap().location().set_hash(&format!("session={}", theirs.encode())).unwrap();
    let root = reload().await;
    assert_eq!(hash(), "", "the address is cleared once the link is loaded");
    let banner = text(&root, "#shared-note");
    assert!(banner.contains("You opened a shared session. Your own session is kept"), "{banner}");
    assert!(text(&root, "#terminal-output").contains("deployment theirs"));
    // Work on the shared session is saved apart from the student's own.
    run(&root, "kubectl scale deployment theirs --replicas=2").await;
    assert_eq!(saved(OWN), Some(own.clone()), "the own session is not overwritten");
    assert_eq!(lines(&saved(&format!("{OWN}.shared")).unwrap()).len(), 2);
    // A reload of this tab keeps showing the shared session, still apart.
    let reloaded = reload().await;
    assert!(has(&reloaded, "#shared-note"));
    assert!(text(&reloaded, "#terminal-output").contains("scale deployment theirs"));
    // Back to mine: the student's own session, saved as before from now on.
    click(&reloaded, "#back-to-mine").await;
    assert!(!has(&reloaded, "#shared-note"));
    let out = text(&reloaded, "#terminal-output");
    assert!(out.contains("deployment mine") && !out.contains("theirs"), "{out}");
    run(&reloaded, "kubectl get deployments").await;
    assert_eq!(lines(&saved(OWN).unwrap()).len(), 3);
    assert_eq!(saved(&format!("{OWN}.shared")), None);
    clean(&[&root, &reloaded]);
}

#[wasm_bindgen_test]
async fn keeping_a_shared_session_puts_the_old_one_aside() {
    clean(&[]);
    let own = journal_of(&["kubectl create deployment mine --image=nginx"]);
    local().set_item(OWN, &own.to_storage()).unwrap();
    let theirs = journal_of(&["kubectl create deployment theirs --image=httpd"]);
    web_sys::window().unwrap().location().set_hash(&format!("session={}", theirs.encode())).unwrap();
    let root = reload().await;
    click(&root, "#keep-shared").await;
    assert!(!has(&root, "#shared-note"));
    assert_eq!(lines(&saved(OWN).unwrap()), lines(&theirs));
    assert_eq!(saved(&format!("{OWN}.before-shared")), Some(own));
    clean(&[&root]);
}

/// Fills localStorage until it refuses more; returns how many characters it took.
fn fill_storage() -> usize {
    let storage = local();
    let (mut chunk, mut total, mut i) = (1 << 20, 0, 0);
    while chunk >= 16 {
        let value = "x".repeat(chunk);
        if storage.set_item(&format!("filler-{i}"), &value).is_ok() {
            total += chunk + format!("filler-{i}").len();
            i += 1;
        } else {
            chunk /= 2;
        }
    }
    total
}

#[wasm_bindgen_test]
async fn a_full_storage_is_said_and_the_session_can_be_downloaded() {
    clean(&[]);
    let root = mount_with(props(None)).await;
    run(&root, "kubectl create deployment web --image=nginx").await;
    assert!(!has(&root, "#storage-note"));
    let filled = fill_storage();
    web_sys::console::log_1(&format!("localStorage took {filled} characters").into());
    run(&root, "kubectl scale deployment web --replicas=3").await;
    let note = text(&root, "#storage-note");
    assert!(note.contains("Not saved: the browser's storage for this page is full"), "{note}");
    assert!(note.contains("download the session to keep it"), "{note}");
    assert!(has(&root, "#download-session"));
    // Room again: the next save goes through, and the note goes.
    for key in (0..local().length().unwrap()).filter_map(|i| local().key(i).unwrap()).collect::<Vec<_>>() {
        if key.starts_with("filler-") {
            local().remove_item(&key).unwrap();
        }
    }
    run(&root, "kubectl get pods").await;
    assert!(!has(&root, "#storage-note"));
    assert_eq!(lines(&saved(OWN).unwrap()).len(), 3);
    clean(&[&root]);
}

#[wasm_bindgen_test]
async fn a_failed_megabyte_manifest_does_not_stop_later_saves() {
    clean(&[]);
    let root = mount_with(props(None)).await;
    find(&root, "#manifest").dyn_into::<HtmlTextAreaElement>().unwrap().set_value(&broken_manifest(1.0));
    click(&root, "#apply").await;
    assert!(has(&root, "#apply-error"), "the manifest is refused");
    run(&root, "kubectl create deployment web --image=nginx").await;
    let stored = local().get_item(OWN).unwrap().unwrap();
    web_sys::console::log_1(&format!("saved session after a failed 1 MB apply: {} bytes", stored.len()).into());
    assert!(stored.len() < 4_000, "{} bytes", stored.len());
    let journal = Journal::from_storage(&stored).unwrap();
    assert!(journal.entries[0].skipped && journal.entries[0].stdin.is_none());
    assert!(text(&root, "#left-out-note").contains("input of commands that failed"));
    assert!(!has(&root, "#storage-note"));
    // A reload replays it: the failed apply's line, then the deployment.
    let again = reload().await;
    let out = text(&again, "#terminal-output");
    assert!(out.contains("kubectl apply -f -") && out.contains("deployment.apps/web created"), "{out}");
    clean(&[&root, &again]);
}

/// What another tab writing the owner's key sends to this one (a page never receives its own).
fn storage_event_from_another_tab() {
    let init = web_sys::StorageEventInit::new();
    init.set_key(Some(&format!("{OWN}.owner")));
    let event = web_sys::StorageEvent::new_with_event_init_dict("storage", &init).unwrap();
    web_sys::window().unwrap().dispatch_event(&event).unwrap();
}

#[wasm_bindgen_test]
async fn of_two_tabs_the_one_opened_last_saves_and_the_other_says_so() {
    clean(&[]);
    let first = mount_with(props(None)).await;
    run(&first, "kubectl create deployment web --image=nginx").await;
    // A second tab opens the session as saved, and saves it from now on.
    let second = reload().await;
    storage_event_from_another_tab();
    yew::scheduler::flush().await;
    let note = text(&first, "#storage-note");
    assert!(note.contains("This session is open in another tab; changes here are not saved"), "{note}");
    assert!(!has(&second, "#storage-note"));
    run(&second, "kubectl scale deployment web --replicas=3").await;
    run(&first, "kubectl delete deployment web").await;
    assert_eq!(
        lines(&saved(OWN).unwrap()),
        vec!["kubectl create deployment web --image=nginx", "kubectl scale deployment web --replicas=3"],
        "the first tab does not overwrite the second's work"
    );
    // Taking over loads the latest saved session, and the second tab is told in turn.
    click(&first, "#take-over").await;
    assert!(!has(&first, "#storage-note"));
    let out = text(&first, "#terminal-output");
    assert!(out.contains("--replicas=3") && !out.contains("delete deployment"), "{out}");
    storage_event_from_another_tab();
    yew::scheduler::flush().await;
    assert!(text(&second, "#storage-note").contains("open in another tab"));
    run(&first, "kubectl get pods").await;
    assert_eq!(lines(&saved(OWN).unwrap()).len(), 3);
    clean(&[&first, &second]);
}

#[wasm_bindgen_test]
async fn a_session_too_large_for_a_link_offers_the_file() {
    clean(&[]);
    let mut journal = journal_of(&["kubectl version"]);
    journal.entries[0].stdin = Some("x".repeat(1_200_000));
    let root = mount_with(AppProps { persist: false, ..props(Some(journal)) }).await;
    click(&root, "#share").await;
    let note = text(&root, "#share-too-large");
    assert!(note.contains("This session is too large for a link (1.6 MB"), "{note}");
    assert!(note.contains("Download it as a file"), "{note}");
    assert!(has(&root, "#download-session") && !has(&root, "#share-link"));
    assert!(!hash().contains("session="));
    // Measured: the longest link Chromium opens. A frame navigated (through the browser
    // process, as opening a link is) to an address over 2 MiB ends at about:blank#blocked.
    // (A page the test server does not have: its "not found" loads quickly and runs nothing.)
    let base = format!("{}/no-such-page#", web_sys::window().unwrap().location().origin().unwrap());
    let longest = 2 * 1024 * 1024 - base.len();
    assert_eq!(open_in_frame(&format!("{base}{}", "w".repeat(longest))).await, 2 * 1024 * 1024);
    let refused = open_in_frame(&format!("{base}{}", "w".repeat(longest + 1))).await;
    assert!(refused < 100, "an address over 2 MiB is refused ({refused} characters)");
    const { assert!(kubeloop::ui::storage::LINK_LIMIT < 2 * 1024 * 1024) };
    clean(&[&root]);
}

/// Navigates a new frame to `url` and returns the length of the address it ended at.
async fn open_in_frame(url: &str) -> usize {
    let document = web_sys::window().unwrap().document().unwrap();
    let frame = document.create_element("iframe").unwrap();
    let loaded = js_sys::Promise::new(&mut |resolve, _| {
        js_sys::Reflect::set(&frame, &"onload".into(), &resolve).unwrap();
    });
    frame.set_attribute("src", url).unwrap();
    document.body().unwrap().append_child(&frame).unwrap();
    wasm_bindgen_futures::JsFuture::from(loaded).await.unwrap();
    let window = js_sys::Reflect::get(&frame, &"contentWindow".into()).unwrap();
    let href = js_sys::Reflect::get(&window, &"location".into())
        .and_then(|l| js_sys::Reflect::get(&l, &"href".into()))
        .ok()
        .and_then(|h| h.as_string())
        .unwrap_or_default();
    frame.remove();
    href.len()
}

/// Chooses a file in the page's "open session file" field, as the file picker would.
async fn choose_file(root: &Element, name: &str, contents: &str, shows: &str) {
    let file = web_sys::File::new_with_str_sequence(&js_sys::Array::of1(&contents.into()), name).unwrap();
    let transfer = web_sys::DataTransfer::new().unwrap();
    transfer.items().add_with_file(&file).unwrap();
    let input = find(root, "#open-session").dyn_into::<HtmlInputElement>().unwrap();
    input.set_files(transfer.files().as_ref());
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    input.dispatch_event(&web_sys::Event::new_with_event_init_dict("change", &init).unwrap()).unwrap();
    // The page reads the file in a task of its own: reads of the same file, each a task too,
    // until the page has drawn what it read (a bounded wait on the page's own work, no sleep).
    for _ in 0..50 {
        wasm_bindgen_futures::JsFuture::from(file.text()).await.unwrap();
        yew::scheduler::flush().await;
        if has(root, shows) {
            break;
        }
    }
    yew::scheduler::flush().await;
}

#[wasm_bindgen_test]
async fn a_downloaded_session_file_opens_apart_from_the_students_own() {
    clean(&[]);
    let own = journal_of(&["kubectl create deployment mine --image=nginx"]);
    local().set_item(OWN, &own.to_storage()).unwrap();
    let root = reload().await;
    click(&root, "#share").await;
    choose_file(&root, "notes.txt", "not a session", "#storage-note").await;
    assert!(text(&root, "#storage-note").contains("That file is not a kubeloop session"));
    let theirs = journal_of(&["kubectl create deployment theirs --image=httpd"]);
    choose_file(&root, "kubeloop-session.json", &theirs.to_storage(), "#shared-note").await;
    assert!(has(&root, "#shared-note") && !has(&root, "#storage-note"));
    assert!(text(&root, "#terminal-output").contains("deployment theirs"));
    assert_eq!(lines(&saved(OWN).unwrap()), lines(&own), "the own session is kept");
    assert_eq!(lines(&saved(&format!("{OWN}.shared")).unwrap()), lines(&theirs));
    clean(&[&root]);
}

#[wasm_bindgen_test]
async fn a_link_reaching_a_virtual_year_ahead_is_refused_with_why_and_the_own_session_kept() {
    clean(&[]);
    let own = journal_of(&["kubectl create deployment mine --image=nginx"]);
    local().set_item(OWN, &own.to_storage()).unwrap();
    // A crafted link: its clock a virtual year ahead (replaying it would freeze the page).
    let mut far = journal_of(&["kubectl get pods"]);
    far.now = 365 * 24 * 3600 * 1000;
    web_sys::window().unwrap().location().set_hash(&format!("session={}", far.encode())).unwrap();
    let root = reload().await;
    assert_eq!(hash(), "", "the address is cleared");
    let note = text(&root, "#storage-note");
    assert!(note.starts_with("The shared session was not opened:") && note.contains("365 days"), "{note}");
    // The page answers, and the student's own session is untouched.
    assert_eq!(saved(OWN), Some(own));
    run(&root, "kubectl get deployments").await;
    assert!(text(&root, "#terminal-output").contains("mine"), "{}", text(&root, "#terminal-output"));
    clean(&[&root]);
}

/// A billion-laughs manifest: nine levels of aliases, each ten times the last.
fn alias_bomb() -> String {
    let mut yaml = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  a: &a \"lol\"\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); 10].join(", ");
        yaml.push_str(&format!("  {}: &{} [{refs}]\n", w[1], w[1]));
    }
    yaml
}

#[wasm_bindgen_test]
async fn hostile_input_through_the_editor_and_the_terminal_is_refused_and_the_page_and_saved_session_live_on() {
    clean(&[]);
    let root = reload().await;
    run(&root, "kubectl create deployment keep --image=nginx").await;
    let area = find(&root, "#manifest").dyn_into::<web_sys::HtmlTextAreaElement>().unwrap();
    // An alias bomb from the editor: refused in go-yaml's words, at once.
    area.set_value(&alias_bomb());
    click(&root, "#apply").await;
    assert!(
        text(&root, "#apply-error").contains("document contains excessive aliasing"),
        "{}",
        text(&root, "#apply-error")
    );
    // Nesting ten thousand levels deep: refused, no stack overflow.
    area.set_value(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  a: {}1{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    ));
    click(&root, "#apply").await;
    assert!(text(&root, "#apply-error").contains("exceeded max depth"), "{}", text(&root, "#apply-error"));
    // An endless sleep in the terminal: refused with the sandbox's cap, the clock unmoved.
    run(&root, "sleep 9999999h").await;
    assert!(
        text(&root, "#terminal-output").contains("sleep: the sandbox runs at most"),
        "{}",
        text(&root, "#terminal-output")
    );
    run(&root, "kubectl get deploy keep -o name").await;
    assert!(text(&root, "#terminal-output").contains("deployment.apps/keep"));
    // The saved session has the work, and replays it.
    let saved_lines = lines(&saved(OWN).unwrap());
    assert!(saved_lines.iter().any(|l| l.contains("create deployment keep")), "{saved_lines:?}");
    let reloaded = reload().await;
    run(&reloaded, "kubectl get deploy keep -o name").await;
    assert!(text(&reloaded, "#terminal-output").contains("deployment.apps/keep"));
    clean(&[&root, &reloaded]);
}

/// A lesson's saved session with `done` of its `total` steps complete.
fn lesson_session(id: &str, done: usize, total: usize) -> String {
    let progress = kubeloop::lessons::Progress {
        lesson: id.into(),
        steps: (0..total)
            .map(|i| kubeloop::lessons::StepProgress { complete: i < done, ..Default::default() })
            .collect(),
        ..Default::default()
    };
    let journal = Journal {
        lesson: Some(id.into()),
        progress: Some(serde_json::to_string(&progress).unwrap()),
        ..Journal::new(1)
    };
    journal.to_storage()
}

#[wasm_bindgen_test]
async fn the_index_shows_each_lessons_progress_and_a_progress_file_loads_only_what_got_further() {
    clean(&[]);
    local().set_item("kubeloop.lesson.01-two-halves", &lesson_session("01-two-halves", 3, 3)).unwrap();
    local().set_item("kubeloop.lesson.03-reconcile", &lesson_session("03-reconcile", 2, 5)).unwrap();
    let root = mount_with(AppProps { show_index: true, ..props(None) }).await;
    assert_eq!(text(&root, "[data-lesson=\"01-two-halves\"] .badge"), "✓ done");
    assert_eq!(text(&root, "[data-lesson=\"03-reconcile\"] .badge"), "2/5 steps");
    assert!(!has(&root, "[data-lesson=\"06-scheduler\"] .badge"), "not started: no badge");
    // Another computer's file: further in 03, behind in 01, and a lesson this one never opened.
    let file = kubeloop::page::progress_file::encode(
        &[
            ("kubeloop.lesson.01-two-halves".to_string(), lesson_session("01-two-halves", 1, 3)),
            ("kubeloop.lesson.03-reconcile".to_string(), lesson_session("03-reconcile", 4, 5)),
            ("kubeloop.lesson.06-scheduler".to_string(), lesson_session("06-scheduler", 1, 4)),
        ]
        .into_iter()
        .collect(),
    );
    let chosen = web_sys::File::new_with_str_sequence(&js_sys::Array::of1(&file.into()), "p.json").unwrap();
    let transfer = web_sys::DataTransfer::new().unwrap();
    transfer.items().add_with_file(&chosen).unwrap();
    let input = find(&root, "#load-progress").dyn_into::<HtmlInputElement>().unwrap();
    input.set_files(transfer.files().as_ref());
    input.dispatch_event(&web_sys::Event::new("change").unwrap()).unwrap();
    for _ in 0..50 {
        wasm_bindgen_futures::JsFuture::from(chosen.text()).await.unwrap();
        yew::scheduler::flush().await;
        if has(&root, "#progress-note") {
            break;
        }
    }
    assert_eq!(
        text(&root, "#progress-note"),
        "Loaded 2 session(s) from the file; 1 kept as this browser had them (as far or further along)."
    );
    assert_eq!(text(&root, "[data-lesson=\"01-two-halves\"] .badge"), "✓ done", "the further one is kept");
    assert_eq!(text(&root, "[data-lesson=\"03-reconcile\"] .badge"), "4/5 steps");
    assert_eq!(text(&root, "[data-lesson=\"06-scheduler\"] .badge"), "1/4 steps");
    clean(&[&root]);
}
