//! The student's home directory, `/home/student`: the files the sandbox's shell writes
//! (`cat > web.yaml <<EOF`, `kubectl get … > out.yaml`) and kubectl reads (`-f web.yaml`).
//!
//! Files live in the session and are made only by commands, so replaying a session's commands
//! rebuilds them. A path under the home directory is kept relative to it (`web.yaml`,
//! `manifests/db.yaml`), as lessons name their files; any other path is kept whole.

use crate::sim::Time;
use std::collections::{BTreeMap, BTreeSet};

/// Where the shell starts, and what `cd` alone and `~` mean.
pub const HOME: &str = "/home/student";
/// Who owns the home directory's files (`ls -l`).
pub const USER: &str = "student";
/// The largest file the shell writes (see `sim::limits`).
pub const MAX_FILE_BYTES: usize = crate::sim::limits::HOME_MAX_FILE_BYTES;
/// The most the home directory holds, all files together.
pub const MAX_TOTAL_BYTES: usize = crate::sim::limits::HOME_MAX_TOTAL_BYTES;
/// The most files and directories it holds.
pub const MAX_ENTRIES: usize = crate::sim::limits::HOME_MAX_ENTRIES;

/// Directories that exist without being made, besides the home directory.
const SYSTEM_DIRS: &[&str] = &["/", "/home", "/tmp"];

/// What the shell remembers besides the files' text: the directories made with `mkdir`,
/// when each file was last written, and the working directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HomeState {
    pub dirs: BTreeSet<String>,
    pub modified: BTreeMap<String, Time>,
    pub cwd: String,
    /// A lesson's check runs: nothing may be written.
    pub read_only: bool,
}

impl Default for HomeState {
    fn default() -> HomeState {
        HomeState { dirs: BTreeSet::new(), modified: BTreeMap::new(), cwd: HOME.to_string(), read_only: false }
    }
}

/// The file system as one command sees it: the session's files and the rest of its state.
pub struct Fs<'a> {
    pub files: &'a mut BTreeMap<String, String>,
    pub state: &'a mut HomeState,
    pub now: Time,
}

/// Why a file operation failed, in the words of `strerror`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsError {
    NotFound,
    IsADirectory,
    NotADirectory,
    Exists,
    NotEmpty,
    Permission,
    TooLarge,
    NoSpace,
    ReadOnly,
}

impl FsError {
    pub fn text(self) -> &'static str {
        match self {
            FsError::NotFound => "No such file or directory",
            FsError::IsADirectory => "Is a directory",
            FsError::NotADirectory => "Not a directory",
            FsError::Exists => "File exists",
            FsError::NotEmpty => "Directory not empty",
            FsError::Permission => "Permission denied",
            FsError::TooLarge => "File too large",
            FsError::NoSpace => "No space left on device",
            FsError::ReadOnly => "Read-only file system",
        }
    }
}

/// `path` as an absolute path, from `cwd`, with `.`, `..` and `~` resolved.
pub fn absolute(cwd: &str, path: &str) -> String {
    let joined = if path == "~" {
        HOME.to_string()
    } else if let Some(rest) = path.strip_prefix("~/") {
        format!("{HOME}/{rest}")
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{cwd}/{path}")
    };
    crate::util::path::normalize(&joined)
}

/// How a file at an absolute path is keyed: relative to the home directory when under it.
fn key_of(abs: &str) -> String {
    if abs == HOME {
        String::new()
    } else if let Some(rest) = abs.strip_prefix(HOME).and_then(|r| r.strip_prefix('/')) {
        rest.to_string()
    } else {
        abs.to_string()
    }
}

/// The absolute path of a key.
fn path_of(key: &str) -> String {
    if key.starts_with('/') {
        key.to_string()
    } else if key.is_empty() {
        HOME.to_string()
    } else {
        format!("{HOME}/{key}")
    }
}

impl Fs<'_> {
    pub fn key(&self, path: &str) -> String {
        key_of(&absolute(&self.state.cwd, path))
    }

    fn is_dir_key(&self, key: &str) -> bool {
        if key.is_empty() || SYSTEM_DIRS.contains(&key) || self.state.dirs.contains(key) {
            return true;
        }
        let abs = path_of(key);
        if HOME.starts_with(&format!("{abs}/")) {
            return true;
        }
        let prefix = format!("{key}/");
        self.files.range(prefix.clone()..).next().is_some_and(|(k, _)| k.starts_with(&prefix))
            || self.state.dirs.range(prefix.clone()..).next().is_some_and(|k| k.starts_with(&prefix))
    }

    pub fn is_dir(&self, path: &str) -> bool {
        self.is_dir_key(&self.key(path))
    }

    pub fn exists(&self, path: &str) -> bool {
        let key = self.key(path);
        self.files.contains_key(&key) || self.is_dir_key(&key)
    }

    /// A file's text.
    pub fn read(&self, path: &str) -> Result<&str, FsError> {
        let key = self.key(path);
        match self.files.get(&key) {
            Some(text) => Ok(text),
            None if self.is_dir_key(&key) => Err(FsError::IsADirectory),
            None => Err(self.missing_parent(&key).unwrap_or(FsError::NotFound)),
        }
    }

    /// Why a path under a missing or non-directory parent cannot be reached, if so.
    fn missing_parent(&self, key: &str) -> Option<FsError> {
        let abs = path_of(key);
        let parent = abs.rsplit_once('/').map(|(p, _)| if p.is_empty() { "/" } else { p }).unwrap_or("/");
        let parent_key = key_of(parent);
        if self.files.contains_key(&parent_key) {
            Some(FsError::NotADirectory)
        } else if !self.is_dir_key(&parent_key) {
            Some(FsError::NotFound)
        } else {
            None
        }
    }

    /// Whether a new entry `key` would pass [`MAX_ENTRIES`].
    fn full(&self, key: &str) -> bool {
        !self.files.contains_key(key) && self.files.len() + self.state.dirs.len() >= MAX_ENTRIES
    }

    fn total(&self) -> usize {
        self.files.values().map(String::len).sum()
    }

    /// Writes (or with `append`, adds to) a file, making it if need be.
    pub fn write(&mut self, path: &str, text: &str, append: bool) -> Result<(), FsError> {
        let key = self.key(path);
        if self.is_dir_key(&key) {
            return Err(FsError::IsADirectory);
        }
        if let Some(e) = self.missing_parent(&key) {
            return Err(e);
        }
        if self.state.read_only {
            return Err(FsError::ReadOnly);
        }
        if key.starts_with('/') && !key.starts_with("/tmp/") {
            return Err(FsError::Permission);
        }
        let old = self.files.get(&key).map_or(0, String::len);
        let new_len = if append { old + text.len() } else { text.len() };
        if new_len > MAX_FILE_BYTES {
            return Err(FsError::TooLarge);
        }
        if self.total() - old + new_len > MAX_TOTAL_BYTES || self.full(&key) {
            return Err(FsError::NoSpace);
        }
        let file = self.files.entry(key.clone()).or_default();
        if !append {
            file.clear();
        }
        file.push_str(text);
        self.state.modified.insert(key, self.now);
        Ok(())
    }

    /// Removes a file (or with `recursive`, a directory and all below it).
    pub fn remove(&mut self, path: &str, recursive: bool) -> Result<(), FsError> {
        let key = self.key(path);
        if self.state.read_only {
            return Err(FsError::ReadOnly);
        }
        if self.files.contains_key(&key) {
            self.files.remove(&key);
            self.state.modified.remove(&key);
            return Ok(());
        }
        if !self.is_dir_key(&key) {
            return Err(self.missing_parent(&key).unwrap_or(FsError::NotFound));
        }
        if !recursive {
            return Err(FsError::IsADirectory);
        }
        if key.is_empty() || key.starts_with('/') && !key.starts_with("/tmp/") {
            return Err(FsError::Permission);
        }
        let prefix = format!("{key}/");
        self.files.retain(|k, _| !k.starts_with(&prefix));
        self.state.modified.retain(|k, _| !k.starts_with(&prefix));
        self.state.dirs.retain(|k| k != &key && !k.starts_with(&prefix));
        Ok(())
    }

    /// Makes a directory (with `parents`, those above it too, and an existing one is fine).
    pub fn mkdir(&mut self, path: &str, parents: bool) -> Result<(), FsError> {
        let key = self.key(path);
        if self.files.contains_key(&key) || self.is_dir_key(&key) {
            return if parents && self.is_dir_key(&key) { Ok(()) } else { Err(FsError::Exists) };
        }
        if let Some(e) = self.missing_parent(&key) {
            if !(parents && e == FsError::NotFound) {
                return Err(e);
            }
            let abs = path_of(&key);
            let parent = abs.rsplit_once('/').map(|(p, _)| p.to_string()).unwrap_or_default();
            self.mkdir(&parent, true)?;
        }
        if self.state.read_only {
            return Err(FsError::ReadOnly);
        }
        if key.starts_with('/') && !key.starts_with("/tmp/") {
            return Err(FsError::Permission);
        }
        if self.full(&key) {
            return Err(FsError::NoSpace);
        }
        self.state.dirs.insert(key.clone());
        self.state.modified.insert(key, self.now);
        Ok(())
    }

    /// A directory's entries (name, is a directory), in name order.
    pub fn list(&self, path: &str) -> Result<Vec<(String, bool)>, FsError> {
        let key = self.key(path);
        if !self.is_dir_key(&key) {
            return Err(if self.files.contains_key(&key) { FsError::NotADirectory } else { FsError::NotFound });
        }
        let prefix = if key.is_empty() {
            String::new()
        } else if key == "/" {
            "/".to_string()
        } else {
            format!("{key}/")
        };
        let mut out: BTreeMap<String, bool> = BTreeMap::new();
        let in_home = !key.starts_with('/');
        for k in self.files.keys().chain(self.state.dirs.iter()) {
            // Keys under the home directory are relative; others absolute.
            if in_home == k.starts_with('/') {
                continue;
            }
            let Some(rest) = k.strip_prefix(&prefix) else { continue };
            if rest.is_empty() {
                continue;
            }
            match rest.split_once('/') {
                Some((dir, _)) => {
                    out.insert(dir.to_string(), true);
                }
                None => {
                    let dir = self.state.dirs.contains(k);
                    out.entry(rest.to_string()).or_insert(dir);
                }
            }
        }
        // The system's own directories, on the way to the home directory.
        let abs = path_of(&key);
        for system in SYSTEM_DIRS.iter().copied().chain([HOME]) {
            if let Some(rest) = system.strip_prefix(&format!("{}/", abs.trim_end_matches('/'))) {
                if !rest.is_empty() && !rest.contains('/') {
                    out.insert(rest.to_string(), true);
                }
            }
        }
        Ok(out.into_iter().collect())
    }

    /// The files under a directory (below it too with `recursive`), as paths built on `dir`
    /// as typed, in name order.
    pub fn files_under(&self, dir: &str, recursive: bool) -> Vec<String> {
        let mut out = Vec::new();
        let Ok(entries) = self.list(dir) else { return out };
        for (name, is_dir) in entries {
            let path = format!("{}/{name}", dir.trim_end_matches('/'));
            if !is_dir {
                out.push(path);
            } else if recursive {
                out.extend(self.files_under(&path, true));
            }
        }
        out
    }

    /// When a file or directory was last written (a lesson's files: the start of time).
    pub fn modified(&self, path: &str) -> Time {
        self.state.modified.get(&self.key(path)).copied().unwrap_or(Time::ZERO)
    }

    /// Changes the working directory.
    pub fn cd(&mut self, path: &str) -> Result<(), FsError> {
        let key = self.key(path);
        if self.files.contains_key(&key) {
            return Err(FsError::NotADirectory);
        }
        if !self.is_dir_key(&key) {
            return Err(FsError::NotFound);
        }
        self.state.cwd = path_of(&key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<R>(f: impl FnOnce(&mut Fs) -> R) -> R {
        let mut files = BTreeMap::new();
        let mut state = HomeState::default();
        f(&mut Fs { files: &mut files, state: &mut state, now: Time::ZERO })
    }

    #[test]
    fn paths_under_the_home_directory_are_kept_relative_to_it() {
        with(|fs| {
            assert_eq!(fs.key("web.yaml"), "web.yaml");
            assert_eq!(fs.key("/home/student/a/../b.yaml"), "b.yaml");
            assert_eq!(fs.key("~/x/y"), "x/y");
            assert_eq!(fs.key("/tmp/z"), "/tmp/z");
            assert_eq!(fs.key("."), "");
        });
    }

    #[test]
    fn a_file_needs_its_directory_and_a_directory_is_not_a_file() {
        with(|fs| {
            assert_eq!(fs.write("a/b.yaml", "x", false), Err(FsError::NotFound));
            fs.mkdir("a", false).unwrap();
            fs.write("a/b.yaml", "x", false).unwrap();
            fs.write("a/b.yaml", "y", true).unwrap();
            assert_eq!(fs.read("a/b.yaml"), Ok("xy"));
            assert_eq!(fs.read("a"), Err(FsError::IsADirectory));
            assert_eq!(fs.write("a", "x", false), Err(FsError::IsADirectory));
            assert_eq!(fs.write("a/b.yaml/c", "x", false), Err(FsError::NotADirectory));
            assert_eq!(fs.remove("a", false), Err(FsError::IsADirectory));
            fs.remove("a", true).unwrap();
            assert!(!fs.exists("a/b.yaml") && !fs.exists("a"));
        });
    }

    #[test]
    fn a_file_may_be_as_large_as_one_request_to_the_api_server() {
        assert_eq!(MAX_FILE_BYTES, crate::apiserver::MAX_REQUEST_BODY_BYTES);
    }

    #[test]
    fn files_are_bounded_one_by_one_and_all_together() {
        with(|fs| {
            assert_eq!(fs.write("big", &"x".repeat(MAX_FILE_BYTES + 1), false), Err(FsError::TooLarge));
            for i in 0..MAX_TOTAL_BYTES / MAX_FILE_BYTES {
                fs.write(&format!("f{i}"), &"x".repeat(MAX_FILE_BYTES), false).unwrap();
            }
            assert_eq!(fs.write("more", &"x".repeat(MAX_FILE_BYTES), false), Err(FsError::NoSpace));
        });
        with(|fs| {
            for i in 0..MAX_ENTRIES {
                fs.write(&format!("f{i}"), "", false).unwrap();
            }
            assert_eq!(fs.write("one-more", "", false), Err(FsError::NoSpace));
            assert_eq!(fs.mkdir("dir", false), Err(FsError::NoSpace));
            assert_eq!(fs.write("f0", "still writable", false), Ok(()));
        });
    }

    #[test]
    fn mkdir_p_makes_the_parents_and_lists_show_directories() {
        with(|fs| {
            fs.mkdir("k8s/base", true).unwrap();
            fs.write("k8s/base/web.yaml", "a", false).unwrap();
            fs.write("notes.txt", "b", false).unwrap();
            assert_eq!(fs.list(".").unwrap(), vec![("k8s".to_string(), true), ("notes.txt".to_string(), false)]);
            assert_eq!(fs.files_under("k8s/", true), vec!["k8s/base/web.yaml"]);
            assert!(fs.files_under("k8s", false).is_empty());
            assert_eq!(fs.list("/home").unwrap(), vec![("student".to_string(), true)]);
            fs.cd("k8s").unwrap();
            assert_eq!(fs.read("base/web.yaml"), Ok("a"));
            assert_eq!(fs.state.cwd, "/home/student/k8s");
        });
    }
}
