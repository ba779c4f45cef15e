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
//! Every area module (`images`, `toolkits`, `packages`, `cupti`) provides, on
//! its knowledge struct:
//!
//! - `pub fn from_toml(value: toml::Value) -> Result<Self, String>`: build the
//!   area from its table (the value under the `[<area>]` key), checking every
//!   entry; the error says which entry is wrong (the loader adds the file and
//!   position).
//! - `pub fn extend(&mut self, other: Self)`: add a later file's entries;
//!   an entry with the same key as an existing one replaces it.
//!
//! Every entry in the TOML carries a `source` a user can open (a URL or
//! `owner/repo@rev:path`, or what was checked on a real system;
//! `tests/knowledge_sources.rs` enforces it). An area may also expose a
//! serde type for its table (as `images::ImagesToml`) so that the loader can
//! point at the exact line of a bad value; areas without one are located at
//! their table.

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

/// The tables a knowledge file may hold. (`toml::Spanned` around a table
/// that is only implied by `[[images.x]]` headers fails to deserialize, so
/// area errors are located at the area's first header instead.)
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct KnowledgeFile {
    /// When the file's facts were last checked (`checked = 2026-11-23`).
    checked: Option<toml::value::Datetime>,
    images: Option<images::ImagesToml>,
    toolkits: Option<toml::Value>,
    packages: Option<toml::Value>,
    cupti: Option<toml::Value>,
    resolution: Option<toml::Value>,
    ngc: Option<toml::Value>,
}

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
        let locate = |offset: Option<usize>, message: String| {
            let (line, column) = match offset {
                Some(offset) => {
                    let position = line_col(text, offset);
                    (Some(position.0), Some(position.1))
                }
                None => (None, None),
            };
            KnowledgeError {
                path: origin.to_string(),
                line,
                column,
                message,
            }
        };
        let file: KnowledgeFile = toml::from_str(text).map_err(|e| {
            locate(
                e.span().map(|s| s.start),
                e.message().trim_end().to_string(),
            )
        })?;
        if let Some(date) = file.checked {
            let date = date.to_string();
            if self.checked.as_ref().is_none_or(|known| *known < date) {
                self.checked = Some(date);
            }
        }
        if let Some(table) = file.images {
            let start = table_header(text, "images");
            let area = images::ImageKnowledge::from_raw(table).map_err(|m| locate(start, m))?;
            self.images.extend(area);
        }
        if let Some(table) = file.toolkits {
            let start = table_header(text, "toolkits");
            let area =
                toolkits::ToolkitKnowledge::from_toml(table).map_err(|m| locate(start, m))?;
            self.toolkits.extend(area);
        }
        if let Some(table) = file.packages {
            let start = table_header(text, "packages");
            let area =
                packages::PackageKnowledge::from_toml(table).map_err(|m| locate(start, m))?;
            self.packages.extend(area);
        }
        if let Some(table) = file.cupti {
            let start = table_header(text, "cupti");
            let area = cupti::CuptiKnowledge::from_toml(table)
                .map_err(|error| locate(start, error.to_string()))?;
            self.cupti.extend(area);
        }
        if let Some(table) = file.resolution {
            let start = table_header(text, "resolution");
            let area =
                resolution::ResolutionKnowledge::from_toml(table).map_err(|m| locate(start, m))?;
            self.resolution.extend(area);
        }
        if let Some(table) = file.ngc {
            let start = table_header(text, "ngc");
            let area = ngc::NgcKnowledge::from_toml(table).map_err(|m| locate(start, m))?;
            self.ngc.extend(area);
        }
        Ok(())
    }
}

/// The `[area]` table of a whole knowledge document, or `value` itself when it is that table: what
/// each area's `from_toml` reads.
pub(crate) fn area_table(value: toml::Value, area: &str) -> toml::Value {
    match value {
        toml::Value::Table(mut doc) if doc.contains_key(area) => doc
            .remove(area)
            .unwrap_or(toml::Value::Table(Default::default())),
        other => other,
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

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text.get(..offset).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).unwrap_or("").chars().count() + 1;
    (line, column)
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
