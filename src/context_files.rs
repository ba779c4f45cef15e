//! Files of the build context, read for the lint (a requirements file that a
//! `COPY` puts into the image and `pip install -r` reads). The context is
//! the Dockerfile's directory for `cudalint Dockerfile`, `--context DIR`,
//! or `cudalint build CONTEXT`.
//!
//! Reading never leaves the context and never fails the lint: a path is
//! cleaned lexically (`a/./b`, `a/../b`; a `..` above the root refuses it),
//! a file whose real path (symlinks followed) is outside the root is not
//! read, nor one the context's `.dockerignore` leaves out of what the
//! Docker CLI sends ([`crate::build::dockerignore`]), nor one larger than
//! [`crate::engine::MAX_INPUT_BYTES`] or not UTF-8. Each file is read
//! once per lint.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::build::dockerignore::{read_patterns, PatternMatcher};
use crate::engine::{read_bytes, Input};

/// A build context directory, opened for reading.
#[derive(Debug)]
pub struct ContextFiles {
    /// The directory as the user named it, for the names findings show.
    given: PathBuf,
    /// Its real path, which every file read must be under.
    root: PathBuf,
    ignore: Option<PatternMatcher>,
    read: Mutex<HashMap<String, Option<Arc<String>>>>,
}

impl ContextFiles {
    /// The context at `dir`; `None` when it is no readable directory, or
    /// its `.dockerignore` has a pattern Docker refuses (the build would not
    /// start, so nothing is known of what it sends).
    pub fn open(dir: &Path) -> Option<ContextFiles> {
        let root = std::fs::canonicalize(dir).ok()?;
        if !root.is_dir() {
            return None;
        }
        let ignore_file = root.join(crate::build::context::DOCKERIGNORE);
        let ignore = match read_bytes(&Input::Path(ignore_file.clone())) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).ok()?;
                Some(PatternMatcher::new(&read_patterns(&text)).ok()?)
            }
            Err(_) if !ignore_file.exists() => None,
            Err(_) => return None,
        };
        Some(ContextFiles {
            given: dir.to_path_buf(),
            root,
            ignore,
            read: Mutex::new(HashMap::new()),
        })
    }

    /// `path` (slash-separated, from the context root) as the user can open
    /// it: under the directory as they named it.
    pub fn display(&self, path: &str) -> String {
        if self.given.as_os_str().is_empty() || self.given == Path::new(".") {
            return path.to_string();
        }
        self.given.join(path).display().to_string()
    }

    /// The real path of `path` in the context, if it exists there, is not
    /// left out by `.dockerignore` and does not lead outside the root.
    fn locate(&self, path: &str) -> Option<PathBuf> {
        let clean = clean(path)?;
        if clean.is_empty() {
            return Some(self.root.clone());
        }
        if self
            .ignore
            .as_ref()
            .is_some_and(|ignore| ignore.matches_or_parent_matches(&clean))
        {
            return None;
        }
        let real = std::fs::canonicalize(self.root.join(&clean)).ok()?;
        real.starts_with(&self.root).then_some(real)
    }

    /// Whether `path` is a directory of the context.
    pub fn is_dir(&self, path: &str) -> bool {
        self.locate(path).is_some_and(|real| real.is_dir())
    }

    /// Whether `path` is a file of the context.
    pub fn is_file(&self, path: &str) -> bool {
        self.locate(path).is_some_and(|real| real.is_file())
    }

    /// The names in directory `path` of the context, sorted (for `COPY`
    /// sources with wildcards).
    pub fn names_in(&self, path: &str) -> Vec<String> {
        let Some(real) = self.locate(path).filter(|real| real.is_dir()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = std::fs::read_dir(real)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| entry.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }

    /// The text of file `path`, or `None` when it cannot be read (see the
    /// module's rules).
    pub fn read(&self, path: &str) -> Option<Arc<String>> {
        let key = clean(path)?;
        let mut cache = self.read.lock().ok()?;
        if let Some(known) = cache.get(&key) {
            return known.clone();
        }
        let text = self
            .locate(&key)
            .filter(|real| real.is_file())
            .and_then(|real| read_bytes(&Input::Path(real)).ok())
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .map(Arc::new);
        cache.insert(key, text.clone());
        text
    }
}

/// `path` relative to the root, cleaned: a leading `/` or `./` dropped
/// (COPY sources are relative to the context whatever they start with),
/// `.` removed, `..` applied; `None` when `..` climbs above the root. The
/// root itself is the empty string.
pub fn clean(path: &str) -> Option<String> {
    let (parts, above_root) = crate::paths::components(path);
    (!above_root).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cleaned_and_confined() {
        assert_eq!(
            clean("/app/./reqs/../requirements.txt").as_deref(),
            Some("app/requirements.txt")
        );
        assert_eq!(clean(".").as_deref(), Some(""));
        assert_eq!(clean("../outside.txt"), None);
        assert_eq!(clean("a/../../b"), None);
    }
}
