//! The CUDA packaging facts the rules rest on, as a typed view of the TOML
//! files under `rules/` (embedded at build time, extendable by the user).
//!
//! Each area has its own file and TOML table: `images`, `toolkits`,
//! `packages`, `cupti`, `resolution`, `ngc`. A user file (`--knowledge FILE` or config) may hold
//! any of those tables; its entries are added to (or replace) the embedded
//! ones.
//!
//! # The area convention
//!
//! Every area module (`images`, `toolkits`, `packages`, `cupti`, `resolution`, `ngc`) provides,
//! on its knowledge struct:
//!
//! - `pub fn from_area(node: &Node) -> Result<Self, TomlError>`: build the area from its table (the
//!   value under the `[<area>]` key, or a whole document holding it), checking every entry. A
//!   value of the wrong shape is located at its span; a check across entries has no span, and the
//!   loader points at the area's first header.
//! - `pub fn extend(&mut self, other: Self)`: add a later file's entries;
//!   an entry with the same key as an existing one replaces it.
//!
//! Every entry in the TOML carries a `source` a user can open (a URL or
//! `owner/repo@rev:path`, or what was checked on a real system;
//! `tests/knowledge_sources.rs` enforces it). The types read from the TOML derive
//! [`FromToml`](crate::from_toml::FromToml).

pub mod build;
pub mod clock;
pub mod cupti;
mod embedded;
pub mod freshness;
pub mod gpus;
pub mod host_libraries;
pub mod image_content;
pub mod image_loading;
pub mod images;
pub mod needles;
pub mod ngc;
pub mod packages;
pub mod resolution;
pub mod source_builds;
pub mod toolkits;
pub mod version;

use std::fmt;
use std::path::{Path, PathBuf};

use toml::de::DeValue;

use crate::from_toml::{self, Node, Table, TomlError};

pub use version::Version;

/// All packaging knowledge, loaded and validated. `Knowledge::default()` is
/// the embedded knowledge, so every engine has the facts without asking.
#[derive(Clone, Debug)]
pub struct Knowledge {
    pub images: images::ImageKnowledge,
    pub toolkits: toolkits::ToolkitKnowledge,
    pub packages: packages::PackageKnowledge,
    pub cupti: cupti::CuptiKnowledge,
    pub resolution: resolution::ResolutionKnowledge,
    pub ngc: ngc::NgcKnowledge,
    /// The date (`YYYY-MM-DD`) the facts were last checked: the oldest
    /// `checked` of the embedded files, or a newer one a `--knowledge` file
    /// states (a newer catalogue layered over the built-in one).
    pub checked: Option<String>,
}

/// The knowledge files compiled into the binary, in load order. An area
/// adds its line here when its file lands (`rules/toolkits.toml`, …).
const EMBEDDED: &[&str] = &[
    "rules/images.toml",
    "rules/toolkits.toml",
    "rules/packages.toml",
    "rules/cupti.toml",
    "rules/resolution.toml",
    "rules/ngc.toml",
    "rules/source-builds.toml",
    "rules/python-installers.toml",
];

/// A knowledge file that cannot be read or does not hold valid knowledge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnowledgeError {
    /// The file as named (embedded files by their `rules/…` path).
    pub path: String,
    /// 1-based line and column of the problem, where known.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for KnowledgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => {
                write!(f, "{}:{line}:{column}: {}", self.path, self.message)
            }
            (Some(line), None) => write!(f, "{}:{line}: {}", self.path, self.message),
            _ => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl std::error::Error for KnowledgeError {}

/// The tables a knowledge file may hold, besides `checked`, the date its facts were last checked
/// (`checked = 2026-11-23`).
const AREAS: &[&str] = &[
    "images",
    "toolkits",
    "packages",
    "cupti",
    "resolution",
    "ngc",
];

impl Default for Knowledge {
    /// The embedded knowledge. Tests load it on every build, so it failing
    /// here would be a packaging bug; then the knowledge is empty and the
    /// CUDA rules stay quiet rather than crash.
    fn default() -> Self {
        Knowledge::embedded().unwrap_or_else(|_| Knowledge::empty())
    }
}

impl Knowledge {
    /// No facts at all.
    pub fn empty() -> Knowledge {
        Knowledge {
            images: images::ImageKnowledge::default(),
            toolkits: toolkits::ToolkitKnowledge::default(),
            packages: packages::PackageKnowledge::default(),
            cupti: cupti::CuptiKnowledge::default(),
            resolution: resolution::ResolutionKnowledge::default(),
            ngc: ngc::NgcKnowledge::default(),
            checked: None,
        }
    }

    /// The knowledge compiled into cudalint (parsed once per process).
    pub fn embedded() -> Result<Knowledge, KnowledgeError> {
        static EMBEDDED_KNOWLEDGE: std::sync::OnceLock<Result<Knowledge, KnowledgeError>> =
            std::sync::OnceLock::new();
        EMBEDDED_KNOWLEDGE
            .get_or_init(|| {
                let mut knowledge = Knowledge::empty();
                let mut oldest: Option<String> = None;
                for name in EMBEDDED {
                    knowledge.merge_text(name, embedded::file(name))?;
                    if let Some(date) = knowledge.checked.take() {
                        oldest = Some(match oldest {
                            Some(old) if old <= date => old,
                            _ => date,
                        });
                    }
                }
                knowledge.checked = oldest;
                Ok(knowledge)
            })
            .clone()
    }

    /// The embedded knowledge extended by `extra_files`, in order.
    pub fn load(extra_files: &[PathBuf]) -> Result<Knowledge, KnowledgeError> {
        let mut knowledge = Knowledge::embedded()?;
        for path in extra_files {
            knowledge.merge_file(path)?;
        }
        Ok(knowledge)
    }

    /// Read `path` and add its tables.
    pub fn merge_file(&mut self, path: &Path) -> Result<(), KnowledgeError> {
        let text = std::fs::read_to_string(path).map_err(|e| KnowledgeError {
            path: path.display().to_string(),
            line: None,
            column: None,
            message: format!("cannot read knowledge file: {e}"),
        })?;
        self.merge_text(&path.display().to_string(), &text)
    }

    /// Add the tables of a knowledge file's `text`; `origin` names it in errors.
    pub fn merge_text(&mut self, origin: &str, text: &str) -> Result<(), KnowledgeError> {
        self.merge_document(text).map_err(|error| {
            let (line, column) = match error.line_col(text) {
                Some((line, column)) => (Some(line), Some(column)),
                None => (None, None),
            };
            KnowledgeError {
                path: origin.to_string(),
                line,
                column,
                message: error.message,
            }
        })
    }

    /// [`Knowledge::merge_text`]'s work.
    fn merge_document(&mut self, text: &str) -> Result<(), TomlError> {
        let document = from_toml::parse(text)?;
        let file = Table::new(&document, "knowledge file")?;
        let mut known = vec!["checked"];
        known.extend(AREAS);
        file.deny_unknown(&known)?;
        let checked: Option<toml::value::Datetime> = file.optional("checked")?;
        if let Some(date) = checked {
            let date = date.to_string();
            if self.checked.as_ref().is_none_or(|known| *known < date) {
                self.checked = Some(date);
            }
        }
        // A check across an area's entries has no one value to point at: its table's first header.
        let at_header = |area: &'static str| {
            move |mut error: TomlError| {
                if error.span.is_none() {
                    error.span = table_header(text, area).map(|start| start..start);
                }
                error
            }
        };
        if let Some(table) = file.get("images") {
            let area = images::ImageKnowledge::from_area(table).map_err(at_header("images"))?;
            self.images.extend(area);
        }
        if let Some(table) = file.get("toolkits") {
            let area =
                toolkits::ToolkitKnowledge::from_area(table).map_err(at_header("toolkits"))?;
            self.toolkits.extend(area);
        }
        if let Some(table) = file.get("packages") {
            let area =
                packages::PackageKnowledge::from_area(table).map_err(at_header("packages"))?;
            self.packages.extend(area);
        }
        if let Some(table) = file.get("cupti") {
            let area = cupti::CuptiKnowledge::from_area(table).map_err(at_header("cupti"))?;
            self.cupti.extend(area);
        }
        if let Some(table) = file.get("resolution") {
            let area = resolution::ResolutionKnowledge::from_area(table)
                .map_err(at_header("resolution"))?;
            self.resolution.extend(area);
        }
        if let Some(table) = file.get("ngc") {
            let area = ngc::NgcKnowledge::from_area(table).map_err(at_header("ngc"))?;
            self.ngc.extend(area);
        }
        Ok(())
    }
}

/// The `[area]` table of a whole knowledge document, or `node` itself when it is that table: what
/// each area's `from_area` reads.
pub(crate) fn area_table<'a, 'i>(node: &'a Node<'i>, area: &str) -> &'a Node<'i> {
    match node.get_ref() {
        DeValue::Table(document) => document.get(area).unwrap_or(node),
        _ => node,
    }
}

/// Adds `theirs` to `ours`; an entry of `ours` that is `same` as one of theirs is replaced by it (a
/// later knowledge file overrides by key).
pub(crate) fn merge_by<T>(ours: &mut Vec<T>, theirs: Vec<T>, same: impl Fn(&T, &T) -> bool) {
    for entry in theirs {
        ours.retain(|existing| !same(existing, &entry));
        ours.push(entry);
    }
}

/// Byte offset of the first line that opens table `area` (`[area]`,
/// `[area.x]`, `[[area.x]]`) or sets a dotted key `area.x = …`.
fn table_header(text: &str, area: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_start().trim_start_matches('[').trim_start();
        if let Some(rest) = body.strip_prefix(area) {
            if rest.trim_start().starts_with(['.', ']', '=']) {
                return Some(offset + (line.len() - line.trim_start().len()));
            }
        }
        offset += line.len();
    }
    None
}
