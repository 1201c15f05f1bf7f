//! Keeping the student's session in the browser, so that nothing they type or open loses
//! their work without a word:
//! - every save that fails (storage full, unavailable) says so, with a way to keep the work
//!   (download the session as a file);
//! - a failed command's large input (a manifest kubectl could not read) is left out of the
//!   saved session (`Journal::compact`, which replays to the same cluster);
//! - a shared link (`#session=…`) opens as a separate "shared session", under its own key: the
//!   student's own session is kept, and the address is cleared once it is loaded;
//! - sharing puts the link in a field to copy, never in the address bar (a reload would replay
//!   it), and a session too large for a link says so and offers the file;
//! - of two tabs on one session, the one opened last saves it; the other says so and saves
//!   nothing until the student takes over (which loads the latest saved session there).
//!
//! Each mounted app has a `Handle` (a `Copy` index into this module's stores), which the page's
//! `save` passes along in place of the old `persist` flag.

use super::storage_key;
use crate::lessons::Lesson;
use crate::page::journal::Journal;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

/// The longest link the page offers, in characters. Chromium refuses addresses over 2 MiB
/// (`kMaxURLChars`, 2,097,152) and mail and chat programs cut far shorter ones; the page stays
/// well under that.
pub const LINK_LIMIT: usize = 1_500_000;
/// A saved session at least this long is worth compacting before it is stored.
const COMPACT_ABOVE: usize = 256 * 1024;
/// Marks (in the tab's sessionStorage) that this tab shows a shared session, so a reload of
/// the tab keeps showing it; its value is the own session's key.
const VIEWING_SHARED: &str = "kubeloop.viewing-shared";

/// What the last save did (the page keeps it in its state, `page::StorageStatus`).
pub use crate::page::StorageStatus as Status;

thread_local! {
    /// Why the session the address or storage held was not opened, for the app to say once it
    /// mounts.
    static REFUSED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Keeps why a journal was refused, for the page to say.
fn refused(why: crate::page::journal::JournalError) {
    REFUSED.with(|r| *r.borrow_mut() = Some(why.to_string()));
}

/// The link the share button made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    Url(String),
    /// A link this many characters long: too long to offer.
    TooLarge(usize),
}

struct Store {
    persist: bool,
    /// The own session's key (a lesson's has its own).
    own_key: String,
    /// This app shows a shared session, saved under `<own_key>.shared`.
    shared: bool,
    /// This app's id, written to `<key>.owner` while it is the tab that saves.
    tab: String,
    lesson: Option<Rc<Lesson>>,
    status: Status,
    /// Entries already looked at by `Journal::compact`.
    checked: usize,
    /// Bytes of failed commands' input left out of the saved session.
    left_out: usize,
    link: Option<Link>,
}

impl Store {
    fn key(&self) -> String {
        if self.shared { format!("{}.shared", self.own_key) } else { self.own_key.clone() }
    }
}

thread_local! {
    static STORES: RefCell<Vec<Store>> = const { RefCell::new(Vec::new()) };
}

/// One mounted app's storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle(usize);

impl Handle {
    fn new(persist: bool, lesson: Option<Rc<Lesson>>) -> Handle {
        let own_key = storage_key(lesson.as_ref().map(|l| l.id.as_str()));
        let shared = persist
            && session_storage().and_then(|s| s.get_item(VIEWING_SHARED).ok().flatten()) == Some(own_key.clone());
        let tab = format!("{:x}", (js_sys::Math::random() * 1e15) as u64);
        let status = REFUSED.with(|r| r.borrow_mut().take()).map_or(Status::Saved, Status::Refused);
        let store = Store { persist, own_key, shared, tab, lesson, status, checked: 0, left_out: 0, link: None };
        let handle = STORES.with(|s| {
            let mut stores = s.borrow_mut();
            stores.push(store);
            Handle(stores.len() - 1)
        });
        handle.claim();
        handle
    }

    fn with<R>(self, f: impl FnOnce(&mut Store) -> R) -> R {
        STORES.with(|s| f(&mut s.borrow_mut()[self.0]))
    }

    pub fn status(self) -> Status {
        self.with(|s| s.status.clone())
    }

    pub fn is_shared(self) -> bool {
        self.with(|s| s.shared)
    }

    pub fn link(self) -> Option<Link> {
        self.with(|s| s.link.clone())
    }

    /// Makes this app the one that saves its session (the other tabs see it, and stop).
    fn claim(self) {
        let (persist, key, tab) = self.with(|s| (s.persist, s.key(), s.tab.clone()));
        if persist {
            if let Some(storage) = local_storage() {
                let _ = storage.set_item(&format!("{key}.owner"), &tab);
            }
            self.with(|s| {
                if s.status == Status::OtherTab {
                    s.status = Status::Saved;
                }
            });
        }
    }

    /// Whether this app still saves its session; else notes that another tab took it. True
    /// when that changed the status.
    fn check_owner(self) -> bool {
        let (persist, key, tab) = self.with(|s| (s.persist, s.key(), s.tab.clone()));
        if !persist {
            return false;
        }
        let owner = local_storage().and_then(|s| s.get_item(&format!("{key}.owner")).ok().flatten());
        match owner {
            Some(other) if other != tab => self.with(|s| {
                let changed = s.status != Status::OtherTab;
                s.status = Status::OtherTab;
                changed
            }),
            Some(_) => false,
            // Storage was cleared: this tab is the one that saves — unless another tab had
            // taken the session, whose work this tab's would overwrite (it takes over by hand).
            None => {
                if self.status() != Status::OtherTab {
                    self.claim();
                }
                false
            }
        }
    }
}

pub fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn session_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}

/// The app's storage: a handle for `save`, and a listener that notices another tab taking
/// the session (the `storage` event, which the other tabs of the page's origin receive).
#[hook]
pub fn use_store(persist: bool, lesson: Option<Rc<Lesson>>, redraw: UseForceUpdateHandle) -> Handle {
    let handle = *use_mut_ref(move || Handle::new(persist, lesson)).borrow();
    use_effect_with((), move |_| {
        let listener = persist.then(|| {
            let closure = Closure::<dyn Fn(web_sys::Event)>::new(move |_: web_sys::Event| {
                if handle.check_owner() {
                    redraw.force_update();
                }
            });
            if let Some(w) = web_sys::window() {
                let _ = w.add_event_listener_with_callback("storage", closure.as_ref().unchecked_ref());
            }
            closure
        });
        move || {
            if let (Some(closure), Some(w)) = (listener, web_sys::window()) {
                let _ = w.remove_event_listener_with_callback("storage", closure.as_ref().unchecked_ref());
            }
        }
    });
    handle
}

/// Saves the journal (its clock already set) under the app's key, unless another tab took the
/// session; a failure is kept as the status the page shows.
pub fn save(handle: Handle, journal: &mut Journal) {
    if !handle.with(|s| s.persist) || handle.check_owner() || handle.status() == Status::OtherTab {
        return;
    }
    let Some(storage) = local_storage() else {
        handle.with(|s| s.status = Status::Unavailable);
        return;
    };
    let mut text = journal.to_storage();
    let checked = handle.with(|s| s.checked);
    if text.len() > COMPACT_ABOVE && journal.has_large_input(checked) {
        let lesson = handle.with(|s| {
            s.checked = journal.entries.len();
            s.lesson.clone()
        });
        if let Some(compacted) = journal.compact(lesson.as_deref()) {
            let shorter = compacted.to_storage();
            handle.with(|s| s.left_out += text.len().saturating_sub(shorter.len()));
            *journal = compacted;
            text = shorter;
        }
    }
    let status = match storage.set_item(&handle.with(|s| s.key()), &text) {
        Ok(()) => Status::Saved,
        Err(e) => {
            let name = js_sys::Reflect::get(&e, &"name".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
            if name == "QuotaExceededError" { Status::Full { bytes: text.len() } } else { Status::Unavailable }
        }
    };
    handle.with(|s| {
        // A refused link stays said until something else is to be said.
        if !(status == Status::Saved && matches!(s.status, Status::Refused(_))) {
            s.status = status;
        }
    });
}

/// The session to open: a shared link's (`#session=…`, kept under its own key and marked
/// for this tab, the student's own session untouched, the address cleared), or the one this
/// tab showed before a reload, or the student's own from the last visit.
pub fn load_for_page(lesson: Option<&str>) -> Option<Journal> {
    let own_key = storage_key(lesson);
    let window = web_sys::window()?;
    let hash = window.location().hash().unwrap_or_default();
    if let Some(encoded) = hash.strip_prefix("#session=") {
        clear_address_hash();
        let decoded = Journal::decode_checked(encoded).inspect_err(|why| refused(why.clone())).ok();
        if let Some(journal) = decoded {
            if let Some(s) = session_storage() {
                let _ = s.set_item(VIEWING_SHARED, &own_key);
            }
            if let Some(s) = local_storage() {
                let _ = s.set_item(&format!("{own_key}.shared"), &journal.to_storage());
            }
            return Some(journal);
        }
    }
    let storage = local_storage()?;
    let viewing_shared = session_storage().and_then(|s| s.get_item(VIEWING_SHARED).ok().flatten());
    if viewing_shared.as_deref() == Some(own_key.as_str()) {
        if let Some(journal) =
            storage.get_item(&format!("{own_key}.shared")).ok().flatten().and_then(|t| Journal::from_storage(&t))
        {
            return Some(journal);
        }
    }
    Journal::from_storage(&storage.get_item(&own_key).ok()??)
}

/// Takes `#…` off the address without a navigation, so a reload does not open it again.
fn clear_address_hash() {
    let Some(window) = web_sys::window() else { return };
    let location = window.location();
    let plain = format!("{}{}", location.pathname().unwrap_or_default(), location.search().unwrap_or_default());
    let replaced = window
        .history()
        .ok()
        .is_some_and(|h| h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&plain)).is_ok());
    if !replaced {
        let _ = location.set_hash("");
    }
}

/// Makes the link that replays `journal` (the address stays as it is), or notes that it is
/// too long; returns the sentence to show.
pub fn share(handle: Handle, journal: &Journal) -> String {
    let location = web_sys::window().map(|w| w.location());
    let base = location
        .map(|l| {
            format!(
                "{}{}{}",
                l.origin().unwrap_or_default(),
                l.pathname().unwrap_or_default(),
                l.search().unwrap_or_default()
            )
        })
        .unwrap_or_default();
    let url = format!("{base}#session={}", journal.encode());
    let (link, note) = if url.len() > LINK_LIMIT {
        (Link::TooLarge(url.len()), String::new())
    } else {
        (
            Link::Url(url),
            "the link below replays this session: copy it to share (your address bar stays as it is)".into(),
        )
    };
    handle.with(|s| s.link = Some(link));
    // Selected once drawn, ready to copy.
    gloo_timers::callback::Timeout::new(0, select_link).forget();
    note
}

fn select_link() {
    let field = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("share-link"))
        .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok());
    if let Some(field) = field {
        let _ = field.focus();
        field.select();
    }
}

/// Copies the link with the clipboard API where there is one; the field stays selected for
/// Ctrl+C either way.
fn copy_link(text: &str) {
    select_link();
    let Some(window) = web_sys::window() else { return };
    let clipboard = js_sys::Reflect::get(&window, &"navigator".into())
        .and_then(|n| js_sys::Reflect::get(&n, &"clipboard".into()))
        .ok()
        .filter(|c| !c.is_undefined() && !c.is_null());
    if let Some(clipboard) = clipboard {
        if let Ok(write) = js_sys::Reflect::get(&clipboard, &"writeText".into()) {
            if let Some(write) = write.dyn_ref::<js_sys::Function>() {
                // A refusal (no permission) leaves the selected field to copy by hand.
                if let Ok(promise) = write.call1(&clipboard, &text.into()) {
                    if let Ok(promise) = promise.dyn_into::<js_sys::Promise>() {
                        let ignore = Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new(|_: wasm_bindgen::JsValue| {});
                        let _ = promise.catch(&ignore);
                        ignore.forget();
                    }
                }
            }
        }
    }
}

/// Saves the session as a file (`kubeloop-session.json`, the saved form) through a Blob, which
/// has no size limit a `data:` address would.
pub fn download_session(journal: &Journal) -> Option<()> {
    download_json("kubeloop-session.json", &journal.to_storage())
}

/// Offers `text` as the JSON file `file`, through a Blob.
pub fn download_json(file: &str, text: &str) -> Option<()> {
    let parts = js_sys::Array::of1(&text.into());
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("application/json");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).ok()?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
    let document = web_sys::window()?.document()?;
    let link = document.create_element("a").ok()?;
    link.set_attribute("href", &url).ok()?;
    link.set_attribute("download", file).ok()?;
    link.set_attribute("hidden", "").ok()?;
    document.body()?.append_child(&link).ok()?;
    link.dyn_ref::<web_sys::HtmlElement>()?.click();
    link.remove();
    let _ = web_sys::Url::revoke_object_url(&url);
    Some(())
}

/// Opens a session file (from "download session") the way a shared link opens: apart from
/// the student's own session, with the banner to go back or keep it.
fn open_file(handle: Handle, input: web_sys::HtmlInputElement, load: Callback<Option<Journal>>) {
    let Some(file) = input.files().and_then(|files| files.get(0)) else { return };
    input.set_value("");
    wasm_bindgen_futures::spawn_local(async move {
        let text = wasm_bindgen_futures::JsFuture::from(file.text()).await.ok().and_then(|t| t.as_string());
        let Some(mut journal) = text.as_deref().and_then(Journal::from_storage) else {
            handle.with(|s| s.status = Status::NotASession);
            load.emit(None);
            return;
        };
        let own_key = handle.with(|s| {
            s.shared = true;
            s.own_key.clone()
        });
        if let Some(s) = session_storage() {
            let _ = s.set_item(VIEWING_SHARED, &own_key);
        }
        handle.claim();
        save(handle, &mut journal);
        load.emit(Some(journal));
    });
}

/// "1.4 MB", "320 kB".
pub fn size(bytes: usize) -> String {
    if bytes >= 1_000_000 { format!("{:.1} MB", bytes as f64 / 1e6) } else { format!("{} kB", bytes.div_ceil(1000)) }
}

/// The student's own session, as saved (a fresh one of the same seed and lesson if none).
fn own_session(handle: Handle, current: &Journal) -> Journal {
    let key = handle.with(|s| s.own_key.clone());
    local_storage()
        .and_then(|s| s.get_item(&key).ok().flatten())
        .and_then(|t| Journal::from_storage(&t))
        .unwrap_or_else(|| Journal { lesson: current.lesson.clone(), ..Journal::new(current.seed) })
}

/// Leaves the shared session: this app saves the own session's key from now on.
fn leave_shared(handle: Handle) {
    let own_key = handle.with(|s| {
        s.shared = false;
        s.own_key.clone()
    });
    if let Some(s) = session_storage() {
        let _ = s.remove_item(VIEWING_SHARED);
    }
    if let Some(s) = local_storage() {
        let _ = s.remove_item(&format!("{own_key}.shared"));
        let _ = s.remove_item(&format!("{own_key}.shared.owner"));
    }
    handle.claim();
}

/// What the page says about its storage: a shared session's banner, another tab's, a save that
/// failed, and the link the share button made. `load` puts a session in the page in place of
/// the current one (None: only redraw).
pub fn notice(
    handle: Handle,
    status: Status,
    journal: &Rc<RefCell<Journal>>,
    load: &Callback<Option<Journal>>,
) -> Html {
    let download = {
        let journal = journal.clone();
        Callback::from(move |_: MouseEvent| {
            let _ = download_session(&journal.borrow());
        })
    };
    let download_button = html! {
        <button id="download-session" class="small" onclick={download.clone()} title="the session (seed and commands) as a file, to keep or send">{"download session"}</button>
    };
    let open = {
        let load = load.clone();
        Callback::from(move |e: Event| {
            if let Some(input) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                open_file(handle, input, load.clone());
            }
        })
    };
    let open_button = html! {
        <label class="small file-open" title="open a session saved with \"download session\" (kept apart from yours, like a shared link)">
            {"open session file "}<input id="open-session" type="file" accept=".json,application/json" onchange={open} />
        </label>
    };
    let shared = handle.is_shared().then(|| {
        let back = {
            let (journal, load) = (journal.clone(), load.clone());
            Callback::from(move |_: MouseEvent| {
                let own = own_session(handle, &journal.borrow());
                leave_shared(handle);
                load.emit(Some(own));
            })
        };
        let keep = {
            let (journal, load) = (journal.clone(), load.clone());
            Callback::from(move |_: MouseEvent| {
                // The session it replaces stays under `<key>.before-shared`.
                let own_key = handle.with(|s| s.own_key.clone());
                if let Some(s) = local_storage() {
                    if let Ok(Some(previous)) = s.get_item(&own_key) {
                        let _ = s.set_item(&format!("{own_key}.before-shared"), &previous);
                    }
                }
                leave_shared(handle);
                save(handle, &mut journal.borrow_mut());
                load.emit(None);
            })
        };
        html! {
            <p id="shared-note" class="storage-note" role="status">
                {"You opened a shared session. Your own session is kept, and this one is saved apart from it. "}
                <button id="back-to-mine" class="small" onclick={back}>{"go back to mine"}</button>{" "}
                <button id="keep-shared" class="small" onclick={keep} title="this session becomes yours (the one it replaces is kept aside in the browser)">{"keep working on this one"}</button>
            </p>
        }
    });
    let status = match status {
        Status::Saved => None,
        Status::Refused(why) => Some(html! {
            <p id="storage-note" class="storage-note warn" role="alert">
                {format!("The shared session was not opened: {why}. Your own session is here as you left it.")}
            </p>
        }),
        Status::NotASession => Some(html! {
            <p id="storage-note" class="storage-note warn" role="alert">
                {"That file is not a kubeloop session (one saved with \"download session\"); nothing was changed."}
            </p>
        }),
        Status::OtherTab => {
            let take_over = {
                let load = load.clone();
                Callback::from(move |_: MouseEvent| {
                    let key = handle.with(|s| s.key());
                    let latest = local_storage()
                        .and_then(|s| s.get_item(&key).ok().flatten())
                        .and_then(|t| Journal::from_storage(&t));
                    handle.claim();
                    load.emit(latest);
                })
            };
            Some(html! {
                <p id="storage-note" class="storage-note warn" role="alert">
                    {"This session is open in another tab; changes here are not saved. "}
                    <button id="take-over" class="small" onclick={take_over} title="load the latest saved session here and save from this tab (the other tab stops saving)">{"take over"}</button>
                </p>
            })
        }
        Status::Full { bytes } => {
            let large = if bytes > 1_000_000 { ", mostly the manifests you applied" } else { "" };
            Some(html! {
                <p id="storage-note" class="storage-note warn" role="alert">
                    {format!("Not saved: the browser's storage for this page is full (this session takes {}{large}). Your work is still here in this tab, but a reload would lose what was not saved: download the session to keep it. ", size(bytes))}
                    {download_button.clone()}{" "}{open_button.clone()}
                </p>
            })
        }
        Status::Unavailable => Some(html! {
            <p id="storage-note" class="storage-note warn" role="alert">
                {"Not saved: this browser does not let the page keep anything (private browsing, or site data blocked), so a reload starts afresh. Download the session to keep it. "}
                {download_button.clone()}{" "}{open_button.clone()}
            </p>
        }),
    };
    let left_out = handle.with(|s| s.left_out);
    let link = handle.link().map(|link| match link {
        Link::Url(url) => {
            let copy = Callback::from(move |_: MouseEvent| copy_link(&url_of(handle)));
            html! {
                <p id="share-box" class="share-note">
                    <label for="share-link">{"link: "}</label>
                    <input id="share-link" type="text" readonly=true value={url} onfocus={Callback::from(|_: FocusEvent| select_link())} />
                    {" "}<button id="copy-link" class="small" onclick={copy}>{"copy"}</button>
                    {" or "}{download_button.clone()}{" "}{open_button.clone()}
                </p>
            }
        }
        Link::TooLarge(chars) => html! {
            <p id="share-too-large" class="storage-note warn" role="alert">
                {format!("This session is too large for a link ({} of address; browsers refuse addresses over about {}). Download it as a file and send that instead. ", size(chars), size(LINK_LIMIT))}
                {download_button.clone()}
            </p>
        },
    });
    html! {
        <>
            {for shared}
            {for status}
            if left_out > 0 {
                <p id="left-out-note" class="share-note">{format!("Saved without the {} input of commands that failed (they changed nothing; their lines are kept).", size(left_out))}</p>
            }
            {for link}
        </>
    }
}

fn url_of(handle: Handle) -> String {
    match handle.link() {
        Some(Link::Url(url)) => url,
        _ => String::new(),
    }
}

/// The journal, compared by identity (it is one for the page's life).
#[derive(Clone)]
pub struct SharedJournal(pub Rc<RefCell<Journal>>);

impl PartialEq for SharedJournal {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Properties, PartialEq)]
pub struct BannerProps {
    pub handle: Handle,
    /// The status as the page's state has it.
    pub status: Status,
    /// What else the storage has to say, so the banner redraws when it changes.
    pub shared: bool,
    pub link: Option<Link>,
    pub left_out: usize,
    pub journal: SharedJournal,
    pub on_load: Callback<Option<Journal>>,
}

/// The storage's banner: `notice` as a component.
#[function_component(StorageBanner)]
pub fn storage_banner(props: &BannerProps) -> Html {
    notice(props.handle, props.status.clone(), &props.journal.0, &props.on_load)
}

impl Handle {
    /// The banner's properties besides the status, as the storage has them now.
    pub fn seen(self) -> (bool, Option<Link>, usize) {
        self.with(|s| (s.shared, s.link.clone(), s.left_out))
    }
}
