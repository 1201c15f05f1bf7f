//! The page's keyboard shortcuts: one document-wide key listener, ignoring keys typed into
//! text fields, removed when dropped.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::KeyboardEvent;

/// A live listener; dropping it removes it from the document.
pub struct Listener {
    closure: Closure<dyn FnMut(KeyboardEvent)>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
            let _ = doc.remove_event_listener_with_callback("keydown", self.closure.as_ref().unchecked_ref());
        }
    }
}

/// Calls `on_key` with the key of each keydown outside inputs, text areas and selects.
pub fn listen(mut on_key: impl FnMut(&str) + 'static) -> Option<Listener> {
    let closure = Closure::<dyn FnMut(KeyboardEvent)>::new(move |e: KeyboardEvent| {
        if e.ctrl_key() || e.meta_key() || e.alt_key() {
            return;
        }
        let typing = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT" | "BUTTON"));
        if typing {
            return;
        }
        let key = e.key();
        if matches!(key.as_str(), " " | "." | "s" | "p") {
            e.prevent_default();
            on_key(&key);
        }
    });
    let doc = web_sys::window()?.document()?;
    doc.add_event_listener_with_callback("keydown", closure.as_ref().unchecked_ref()).ok()?;
    Some(Listener { closure })
}
