//! Output formats. Each format is its own file and sees only findings, rule
//! metadata and the linted sources (for snippets), never rule internals.

use std::io::{self, Write};

use crate::diagnostic::Diagnostic;
use crate::rule_meta::RuleMeta;
use crate::source::SourceFile;

mod checkstyle;
mod github;
mod gitlab;
mod html;
mod json;
mod junit;
mod sarif;
mod shared;
mod text;

/// The project page, for tool metadata in machine-readable formats.
pub const TOOL_INFORMATION_URI: &str = "https://github.com/cudalint/cudalint";

/// The documentation page of rule `code` under `base` (config key
/// `doc-url-base`, e.g. `https://docs.example.com/cudalint/rules/`), where
/// the team hosts the docs; `<CODE>.md` is appended. No base, no link: SARIF
/// carries each rule's doc as `help.markdown` and `cudalint explain` prints it.
pub fn rule_doc_url(base: Option<&str>, code: &str) -> Option<String> {
    let base = base?.trim();
    if base.is_empty() {
        return None;
    }
    let slash = if base.ends_with('/') { "" } else { "/" };
    Some(format!("{base}{slash}{code}.md"))
}

/// Everything a format may print.
pub struct Report<'a> {
    /// Findings, already filtered and sorted by the engine.
    pub diagnostics: &'a [Diagnostic],
    /// Every registered rule (SARIF lists them all).
    pub rules: &'a [&'static RuleMeta],
    /// The linted text sources, looked up by `Diagnostic::origin == name`.
    pub sources: &'a [SourceFile],
    /// Names of everything linted (files and images), findings or not
    /// (JUnit and checkstyle list clean files too).
    pub inputs: &'a [String],
    /// Inputs that could not be linted at all (unreadable, a directory, too
    /// large). Every format reports them, so a consumer reading only the
    /// output never mistakes a run that skipped a file for a clean one.
    pub failed_inputs: &'a [FailedInput],
    pub tool_version: &'a str,
    /// Print each finding's sources in text output (`--show-sources`).
    pub show_sources: bool,
    /// Base URL of the hosted rule docs (config `doc-url-base`); none by default.
    pub doc_url_base: Option<&'a str>,
    /// Run-level notices (the built-in knowledge is old): SARIF
    /// notifications, JSON `notices`; text prints them on stderr itself.
    pub notices: &'a [String],
    /// What was read of each image (layers, CUDA inventory, size breakdown), for formats that show
    /// more than findings (text, JSON, HTML); empty for Dockerfiles.
    pub images: &'a [crate::image::summary::ImageSummary],
}

/// An input that could not be linted, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedInput {
    /// The input as the user named it (a path, or `<stdin>`).
    pub name: String,
    /// Why it could not be linted, without the name: `it is a directory`,
    /// `No such file or directory (os error 2)`.
    pub message: String,
}

impl FailedInput {
    /// `cannot lint NAME: message`, the one-line form formats print.
    pub fn sentence(&self) -> String {
        format!("cannot lint {}: {}", self.name, self.message)
    }
}

/// The output formats `--format` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Sarif,
    Checkstyle,
    Junit,
    Gitlab,
    Github,
    // One self-contained page for people: findings, and each image's size, layers and drivers.
    Html,
}

/// Render `report` as `format`. `color` only affects `text`.
pub fn render(
    format: Format,
    report: &Report<'_>,
    out: &mut dyn Write,
    color: bool,
) -> io::Result<()> {
    match format {
        Format::Text => text::render(report, out, color),
        Format::Json => json::render(report, out),
        Format::Sarif => sarif::render(report, out),
        Format::Checkstyle => checkstyle::render(report, out),
        Format::Junit => junit::render(report, out),
        Format::Gitlab => gitlab::render(report, out),
        Format::Github => github::render(report, out),
        Format::Html => html::render(report, out),
    }
}
