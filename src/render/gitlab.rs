//! GitLab Code Quality report: a JSON array of issues, shown in merge
//! requests. GitLab needs a file path and a line for every issue and a
//! fingerprint unique within the report.

use std::collections::HashMap;
use std::io::{self, Write};

use serde::Serialize;

use super::shared::{fingerprint, image_place, positions, INPUT_ERROR_CHECK};
use super::Report;
use crate::diagnostic::{Diagnostic, Location, Severity};

#[derive(Serialize)]
struct Issue<'a> {
    description: String,
    check_name: &'a str,
    fingerprint: String,
    severity: &'static str,
    location: IssueLocation<'a>,
}

#[derive(Serialize)]
struct IssueLocation<'a> {
    path: &'a str,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
}

pub(super) fn render(report: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    // Identical findings on one line would share a fingerprint, which GitLab
    // rejects as duplicates; an occurrence counter keeps them apart while
    // leaving the first one's fingerprint independent of the rest.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut unique = |base: String| {
        let occurrence = seen.entry(base.clone()).or_insert(0);
        let fingerprint = match *occurrence {
            0 => base,
            n => fingerprint(&[&base, &n.to_string()]),
        };
        *occurrence += 1;
        fingerprint
    };
    let mut issues: Vec<Issue<'_>> = Vec::new();
    for diag in report.diagnostics {
        let (line, place) = anchor(report, diag);
        // An image finding whose layer's instruction is known (`--dockerfile`)
        // is shown on that line of the Dockerfile in the merge request.
        let (path, line) = match (&diag.location, diag.related.first()) {
            (Location::Image { .. }, Some(made_by)) => (&made_by.origin, made_by.start.line),
            _ => (&diag.origin, line),
        };
        issues.push(Issue {
            description: description(diag),
            check_name: diag.code,
            fingerprint: unique(fingerprint(&[
                &diag.origin,
                diag.code,
                &diag.message,
                &place,
            ])),
            severity: severity(diag.severity),
            location: IssueLocation {
                path,
                lines: Lines { begin: line },
            },
        });
    }
    // An input that could not be linted would otherwise leave no trace in
    // the merge request. Its fingerprint leaves out the operating system's
    // wording, so the issue keeps its identity across runners.
    for failed in report.failed_inputs {
        issues.push(Issue {
            description: failed.sentence(),
            check_name: INPUT_ERROR_CHECK,
            fingerprint: unique(fingerprint(&[&failed.name, INPUT_ERROR_CHECK])),
            severity: "critical",
            location: IssueLocation {
                path: &failed.name,
                lines: Lines { begin: 1 },
            },
        });
    }
    serde_json::to_writer_pretty(&mut *out, &issues)?;
    writeln!(out)
}

/// The line GitLab anchors the issue to, and what identifies its place for
/// the fingerprint. GitLab requires a line even for image findings, so they
/// use line 1 of the image's entry and are told apart by their path.
fn anchor(report: &Report<'_>, diag: &Diagnostic) -> (usize, String) {
    match &diag.location {
        Location::Source { .. } => {
            let line = positions(report, diag).map_or(1, |(start, _)| start.line);
            (line, line.to_string())
        }
        Location::Image { layer, path } => (1, image_place(layer.as_deref(), path.as_deref())),
        Location::File => (1, String::new()),
    }
}

fn description(diag: &Diagnostic) -> String {
    match &diag.location {
        Location::Image { layer, path } => format!(
            "{}: {}",
            image_place(layer.as_deref(), path.as_deref()),
            diag.message
        ),
        Location::Source { .. } | Location::File => diag.message.clone(),
    }
}

fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Style => "info",
        Severity::Info => "minor",
        Severity::Warning => "major",
        Severity::Error => "critical",
    }
}
