//! The course's progress in the browser: how far each lesson got (for the index), and the
//! whole of it as one file to download and load on another computer (`page::progress_file`).

use super::storage::{download_json, local_storage};
use crate::page::progress_file::{self, ProgressFile};
use std::collections::BTreeMap;

/// Every key and value the page's origin keeps.
fn stored() -> BTreeMap<String, String> {
    let Some(storage) = local_storage() else { return BTreeMap::new() };
    let count = storage.length().unwrap_or(0);
    (0..count)
        .filter_map(|i| storage.key(i).ok().flatten())
        .filter(|k| progress_file::is_session_key(k))
        .filter_map(|k| storage.get_item(&k).ok().flatten().map(|v| (k, v)))
        .collect()
}

/// How far the student got in lesson `id`: steps complete, and in all.
pub fn lesson(id: &str) -> Option<(usize, usize)> {
    let storage = local_storage()?;
    let saved = storage.get_item(&format!("{}{id}", progress_file::LESSON_PREFIX)).ok()??;
    progress_file::steps_done(&saved)
}

/// Downloads the course's progress as `kubeloop-progress.json`; what to tell the student.
pub fn download() -> String {
    let stored = stored();
    let lessons = stored.keys().filter(|k| k.starts_with(progress_file::LESSON_PREFIX)).count();
    match download_json("kubeloop-progress.json", &progress_file::encode(&stored)) {
        Some(()) => {
            format!("kubeloop-progress.json: your sandbox and {lessons} lesson(s), to load on another computer")
        }
        None => "the browser refused the download".into(),
    }
}

/// Loads a progress file (its text): each lesson it got further in than this browser, and
/// the sandbox if this browser has none. What to tell the student.
pub fn load(text: &str) -> String {
    let file: ProgressFile = match progress_file::decode(text) {
        Ok(file) => file,
        Err(why) => return format!("Not loaded: {why}."),
    };
    let Some(storage) = local_storage() else { return "Not loaded: this browser gives the page no storage.".into() };
    let taken = progress_file::merge(&stored(), &file);
    let mut written = 0;
    for (key, value) in &taken {
        if storage.set_item(key, value).is_err() {
            return format!(
                "Loaded {written} of {} session(s): the browser's storage for this page is full.",
                taken.len()
            );
        }
        written += 1;
    }
    let kept = file.sessions.len() - written;
    format!(
        "Loaded {written} session(s) from the file; {kept} kept as this browser had them (as far or further along)."
    )
}
