//! Output formats. Each format is its own file and sees only findings, rule
//! metadata and the linted sources (for snippets), never rule internals.

use std::io::{self, Write};

use crate::checks::RuleMeta;
use crate::diagnostic::Diagnostic;
use crate::source::SourceFile;

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
    pub tool_version: &'a str,
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
}

/// Render `report` as `format`. `color` only affects `text`.
pub fn render(
    format: Format,
    report: &Report<'_>,
    out: &mut dyn Write,
    color: bool,
) -> io::Result<()> {
    let _ = (format, report, out, color);
    Ok(())
}
