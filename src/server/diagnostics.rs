//! Linting a document and publishing its findings as LSP diagnostics: the
//! findings `cudalint FILE` reports for the same text and configuration,
//! each with its code, a link to the rule's documentation
//! (`codeDescription`), `source: "cudalint"`, and the help and notes the text
//! report prints under it.

use std::path::PathBuf;

use lsp_types::{
    CodeDescription, Diagnostic as LspDiagnostic, DiagnosticSeverity, NumberOrString, Position,
    Range, Url,
};

use super::documents::{Document, Encoding};
use super::settings::EngineResult;
use crate::config::FailureThreshold;
use crate::diagnostic::{Diagnostic, Location, Severity};
use crate::dockerfile::ast::Dockerfile;
use crate::engine::{Engine, MAX_INPUT_BYTES};

/// The `source` of every diagnostic the server publishes.
pub const SOURCE: &str = "cudalint";

/// One lint of one document version: the findings as the engine made them
/// (code actions read their fixes) and as published, and the syntax tree
/// the rules read (hovers on that version read it rather than parse again).
#[derive(Debug, Default)]
pub struct LintResult {
    pub version: i32,
    pub findings: Vec<Diagnostic>,
    pub published: Vec<LspDiagnostic>,
    pub syntax: Option<Dockerfile>,
}

/// The build context of `document`: the `context` setting, else the
/// document's directory (none for an unsaved buffer).
pub fn context_dir(engine: &Engine, document: &Document) -> Option<PathBuf> {
    engine
        .options()
        .context
        .clone()
        .or_else(|| document.path()?.parent().map(PathBuf::from))
}

/// Lint `document` with `engine` (or report why there is no engine).
pub fn lint(
    engine: &EngineResult,
    document: &Document,
    encoding: Encoding,
    threshold: Option<FailureThreshold>,
) -> LintResult {
    let whole_file = |message: String| LspDiagnostic {
        range: Range::default(),
        severity: Some(DiagnosticSeverity::ERROR),
        source: Some(SOURCE.into()),
        message,
        ..LspDiagnostic::default()
    };
    let engine = match engine {
        Ok(engine) => engine,
        Err(reason) => {
            return LintResult {
                version: document.version,
                findings: Vec::new(),
                published: vec![whole_file(format!(
                    "cudalint cannot lint this file: {reason}"
                ))],
                syntax: None,
            }
        }
    };
    if document.text.len() as u64 > MAX_INPUT_BYTES {
        return LintResult {
            version: document.version,
            findings: Vec::new(),
            published: vec![whole_file(format!(
                "cudalint does not lint files larger than {} MiB",
                MAX_INPUT_BYTES >> 20
            ))],
            syntax: None,
        };
    }
    let name = document.path().map_or_else(
        || document.uri.to_string(),
        |path| path.display().to_string(),
    );
    let context = context_dir(engine, document);
    let (linted, syntax) =
        engine.lint_bytes_keeping_syntax(name, document.text.as_bytes(), context.as_deref());
    let doc_base = engine.options().settings.doc_url_base.as_deref();
    let published = linted
        .diagnostics
        .iter()
        .map(|finding| to_lsp(finding, document, encoding, doc_base, threshold))
        .collect();
    LintResult {
        version: document.version,
        findings: linted.diagnostics,
        published,
        syntax,
    }
}

/// The rule documentation a finding links to: the configured
/// `doc-url-base`, else the page in the project's repository.
pub fn rule_doc_url(doc_base: Option<&str>, code: &str) -> Option<Url> {
    let url = crate::render::rule_doc_url(doc_base, code).unwrap_or_else(|| {
        format!(
            "{}/blob/main/docs/rules/{code}.md",
            crate::render::TOOL_INFORMATION_URI
        )
    });
    Url::parse(&url).ok()
}

/// The range a finding covers in `document`.
pub fn range_of(finding: &Diagnostic, document: &Document, encoding: Encoding) -> Range {
    match &finding.location {
        Location::Source { span, .. } => document.range(*span, encoding),
        Location::Image { .. } | Location::File => {
            Range::new(Position::new(0, 0), Position::new(0, 0))
        }
    }
}

fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Style => DiagnosticSeverity::HINT,
    }
}

/// One finding as an LSP diagnostic. The message is the finding's, then
/// its help and notes on lines of their own, as the text report prints them.
pub fn to_lsp(
    finding: &Diagnostic,
    document: &Document,
    encoding: Encoding,
    doc_base: Option<&str>,
    threshold: Option<FailureThreshold>,
) -> LspDiagnostic {
    let mut message = finding.message.clone();
    if let Some(help) = &finding.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    for note in &finding.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    let below_threshold = threshold.is_some_and(|t| !t.is_reached_by(finding.severity));
    LspDiagnostic {
        range: range_of(finding, document, encoding),
        severity: Some(if below_threshold {
            DiagnosticSeverity::HINT
        } else {
            severity(finding.severity)
        }),
        code: Some(NumberOrString::String(finding.code.to_string())),
        code_description: rule_doc_url(doc_base, finding.code).map(|href| CodeDescription { href }),
        source: Some(SOURCE.into()),
        message,
        related_information: None,
        tags: None,
        data: None,
    }
}
