//! Machine-readable JSON, cudalint's own stable format.
//!
//! The document (version 1; fields are only ever added, never renamed):
//!
//! ```text
//! {
//!   "version": 1,
//!   "tool": { "name": "cudalint", "version": "0.1.0", "information_uri": "…" },
//!   "findings": [ {
//!     "code": "CU101", "name": "devel-image-in-final-stage" | null,
//!     "severity": "error" | "warning" | "info" | "style",
//!     "message": "…", "help": "…" | null, "notes": ["…"],
//!     "origin": "Dockerfile",            // the file or image as the user named it
//!     "sources": ["https://…"], "doc_url": "https://…/CU101.md" (only with `doc-url-base`),
//!     "location": {
//!       "kind": "source" | "image" | "file",
//!       "line", "column", "end_line", "end_column": 1-based, end exclusive, or null,
//!       "offset", "end_offset": byte range in the source, or null,
//!       "layer", "path": the image layer and path, or null
//!     },
//!     "related": [ { "origin": "Dockerfile", "line", "column", "end_line", "end_column",
//!                    "message": "layer 3 was made by this instruction" } ],
//!     "fix": { "description": "…", "safety": "safe" | "unsafe",
//!              "edits": [ { "start": byte, "end": byte, "replacement": "…" } ] } | null
//!   } ],
//!   "failed_inputs": [ { "name": "missing.Dockerfile", "message": "…" } ],
//!   "inputs": [ { "name": "Dockerfile" | "registry/app:v1",   // every input, linted ones first
//!                 "status": "linted" | "failed", "message": "…" | null,
//!                 "findings", "error", "warning", "info", "style": counts of its own findings } ],
//!   "images": [ { "reference", "layers", "inventory", "breakdown", … } ],  // `cudalint image`
//!   "summary": { "findings", "error", "warning", "info", "style", "fixable", "inputs": counts }
//! }
//! ```
//!
//! `failed_inputs` lists the inputs that could not be linted at all (not
//! found, a directory, too large), named as the user gave them, with why;
//! the run's exit status is then 2. It is always present, empty when every
//! input was read. `summary.inputs` counts the inputs that were linted.
//! `inputs` gives each input its own result (a fleet of images in one run:
//! which were scanned, which failed and why, and each one's findings), the
//! linted in the order they were linted, then the failed.
//!
//! Every key is always present (`null` when it does not apply), so
//! consumers need no existence checks. Columns count Unicode scalar values.

use std::collections::HashMap;
use std::io::{self, Write};

use serde::Serialize;

use super::shared::{positions, rule_of, Tally};
use super::{rule_doc_url, Report, TOOL_INFORMATION_URI};
use crate::diagnostic::{Diagnostic, FixSafety, Location, Severity};

/// Bumped only when an existing field changes meaning or disappears.
const FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    tool: Tool<'a>,
    findings: Vec<Finding<'a>>,
    failed_inputs: Vec<JsonFailedInput<'a>>,
    inputs: Vec<InputResult<'a>>,
    /// What was read of each image (empty for Dockerfiles).
    images: &'a [crate::image::summary::ImageSummary],
    summary: Summary,
}

#[derive(Serialize)]
struct JsonFailedInput<'a> {
    name: &'a str,
    message: &'a str,
}

/// One input's own result.
#[derive(Serialize)]
struct InputResult<'a> {
    name: &'a str,
    status: &'static str,
    /// Why a failed input could not be linted.
    message: Option<&'a str>,
    findings: usize,
    error: usize,
    warning: usize,
    info: usize,
    style: usize,
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'static str,
    version: &'a str,
    information_uri: &'static str,
}

#[derive(Serialize)]
struct Finding<'a> {
    code: &'a str,
    name: Option<&'static str>,
    severity: Severity,
    message: &'a str,
    help: Option<&'a str>,
    notes: &'a [String],
    sources: &'a [String],
    origin: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    doc_url: Option<String>,
    location: JsonLocation<'a>,
    fix: Option<JsonFix<'a>>,
    related: Vec<JsonRelated<'a>>,
}

#[derive(Serialize)]
struct JsonRelated<'a> {
    origin: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonLocation<'a> {
    kind: &'static str,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    offset: Option<usize>,
    end_offset: Option<usize>,
    layer: Option<&'a str>,
    path: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    description: &'a str,
    safety: FixSafety,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    start: usize,
    end: usize,
    replacement: &'a str,
}

#[derive(Serialize)]
struct Summary {
    findings: usize,
    error: usize,
    warning: usize,
    info: usize,
    style: usize,
    fixable: usize,
    inputs: usize,
}

pub(super) fn render(report: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let tally = Tally::of(report.diagnostics);
    let document = Document {
        version: FORMAT_VERSION,
        tool: Tool {
            name: "cudalint",
            version: report.tool_version,
            information_uri: TOOL_INFORMATION_URI,
        },
        findings: report
            .diagnostics
            .iter()
            .map(|diag| finding(report, diag))
            .collect(),
        failed_inputs: report
            .failed_inputs
            .iter()
            .map(|failed| JsonFailedInput {
                name: &failed.name,
                message: &failed.message,
            })
            .collect(),
        inputs: input_results(report),
        images: report.images,
        summary: Summary {
            findings: tally.total,
            error: tally.error,
            warning: tally.warning,
            info: tally.info,
            style: tally.style,
            fixable: tally.fixable,
            inputs: report.inputs.len(),
        },
    };
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}

fn input_results<'a>(report: &Report<'a>) -> Vec<InputResult<'a>> {
    let mut by_origin: HashMap<&str, Tally> = HashMap::new();
    for diag in report.diagnostics {
        by_origin.entry(&diag.origin).or_default().count(diag);
    }
    let linted = report.inputs.iter().map(|name| {
        let tally = by_origin.get(name.as_str()).copied().unwrap_or_default();
        InputResult {
            name,
            status: "linted",
            message: None,
            findings: tally.total,
            error: tally.error,
            warning: tally.warning,
            info: tally.info,
            style: tally.style,
        }
    });
    let failed = report.failed_inputs.iter().map(|failed| InputResult {
        name: &failed.name,
        status: "failed",
        message: Some(&failed.message),
        findings: 0,
        error: 0,
        warning: 0,
        info: 0,
        style: 0,
    });
    linted.chain(failed).collect()
}

fn finding<'a>(report: &Report<'a>, diag: &'a Diagnostic) -> Finding<'a> {
    let rule = rule_of(report, diag.code).map(|(_, meta)| meta);
    Finding {
        code: diag.code,
        name: rule.map(|meta| meta.name),
        severity: diag.severity,
        message: &diag.message,
        help: diag.help.as_deref(),
        notes: &diag.notes,
        sources: &diag.sources,
        origin: &diag.origin,
        doc_url: rule.and_then(|meta| rule_doc_url(report.doc_url_base, meta.code)),
        location: location(report, diag),
        related: diag
            .related
            .iter()
            .map(|related| JsonRelated {
                origin: &related.origin,
                line: related.start.line,
                column: related.start.column,
                end_line: related.end.line,
                end_column: related.end.column,
                message: &related.message,
            })
            .collect(),
        fix: diag.fix.as_ref().map(|fix| JsonFix {
            description: &fix.description,
            safety: fix.safety,
            edits: fix
                .edits
                .iter()
                .map(|edit| JsonEdit {
                    start: edit.span.start,
                    end: edit.span.end,
                    replacement: &edit.replacement,
                })
                .collect(),
        }),
    }
}

fn location<'a>(report: &Report<'a>, diag: &'a Diagnostic) -> JsonLocation<'a> {
    let empty = JsonLocation {
        kind: "file",
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        offset: None,
        end_offset: None,
        layer: None,
        path: None,
    };
    match &diag.location {
        Location::Source { span, .. } => {
            let (start, end) = positions(report, diag).unzip();
            let end = end.flatten();
            JsonLocation {
                kind: "source",
                line: start.map(|p| p.line),
                column: start.map(|p| p.column),
                end_line: end.map(|p| p.line),
                end_column: end.map(|p| p.column),
                offset: Some(span.start),
                end_offset: Some(span.end),
                ..empty
            }
        }
        Location::Image { layer, path } => JsonLocation {
            kind: "image",
            layer: layer.as_deref(),
            path: path.as_deref(),
            ..empty
        },
        Location::File => empty,
    }
}
