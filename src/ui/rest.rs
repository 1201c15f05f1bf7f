//! The rest of the module: the code the page's start never runs. A release build moves it to a
//! second file (tools/wasm-split, by the profile web/wasm-profile.txt); each moved function
//! leaves a stub behind that calls `kubeloopLoadRest` before its first use. index.html and the
//! worker define that function: it instantiates the rest when the page has fetched it already
//! (it starts fetching as soon as the page has started), or fetches it there and then.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// Loads the rest of the module into this thread's instance, once (index.html, worker.js).
    #[wasm_bindgen(js_namespace = globalThis, js_name = kubeloopLoadRest)]
    fn load_rest();
}

/// Loads the rest of the module now, if this build has one and it is not loaded yet. The stubs
/// call the same import; this export is what keeps it in the module for them to find.
#[wasm_bindgen]
pub fn kubeloop_load_rest() {
    load_rest();
}
