//! Checkstyle XML, read by Jenkins warnings-ng, reviewdog and many CI
//! dashboards: one `<file>` per input (clean inputs included, empty), one
//! `<error>` per finding, and an `<error>` from source `cudalint.input` for
//! each input that could not be linted.

use std::io::{self, Write};

use super::shared::{group_by_input, image_place, positions, xml_attr};
use super::Report;
use crate::diagnostic::{Diagnostic, Location, Severity};

pub(super) fn render(report: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(out, r#"<checkstyle version="4.3">"#)?;
    for (name, findings) in group_by_input(report) {
        if findings.is_empty() {
            writeln!(out, r#"  <file name="{}"/>"#, xml_attr(name))?;
            continue;
        }
        writeln!(out, r#"  <file name="{}">"#, xml_attr(name))?;
        for diag in findings {
            write_error(report, diag, out)?;
        }
        writeln!(out, "  </file>")?;
    }
    // Checkstyle's own convention for a file it could not process: an
    // error in that file from a non-rule source.
    for failed in report.failed_inputs {
        writeln!(out, r#"  <file name="{}">"#, xml_attr(&failed.name))?;
        writeln!(
            out,
            r#"    <error severity="error" message="{}" source="cudalint.input"/>"#,
            xml_attr(&failed.sentence())
        )?;
        writeln!(out, "  </file>")?;
    }
    writeln!(out, "</checkstyle>")
}

fn write_error(report: &Report<'_>, diag: &Diagnostic, out: &mut dyn Write) -> io::Result<()> {
    let mut position = String::new();
    if let Some((start, _)) = positions(report, diag) {
        position = format!(r#" line="{}" column="{}""#, start.line, start.column);
    }
    // Checkstyle has no place for an image path, and a made-up line number
    // would mislead, so it leads the message instead.
    let message = match &diag.location {
        Location::Image { layer, path } => format!(
            "{}: {}",
            image_place(layer.as_deref(), path.as_deref()),
            diag.message
        ),
        Location::Source { .. } | Location::File => diag.message.clone(),
    };
    writeln!(
        out,
        r#"    <error{position} severity="{}" message="{}" source="cudalint.{}"/>"#,
        severity(diag.severity),
        xml_attr(&message),
        xml_attr(diag.code)
    )
}

/// Checkstyle knows error, warning and info (and ignore).
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Style => "info",
    }
}
