//! JUnit XML, for CI systems that show test reports (GitLab, Jenkins,
//! Azure): one `<testsuite>` per input, one failing `<testcase>` per finding,
//! and a single passing testcase for a clean input, so it shows as checked.
//! An input that could not be linted is a testcase in `<error>`.

use std::io::{self, Write};

use super::shared::{group_by_input, image_place, positions, rule_of, xml_attr, xml_text};
use super::Report;
use crate::diagnostic::{Diagnostic, Location};

pub(super) fn render(report: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let groups = group_by_input(report);
    let errors = report.failed_inputs.len();
    let tests: usize = groups
        .iter()
        .map(|(_, found)| found.len().max(1))
        .sum::<usize>()
        + errors;
    let failures = report.diagnostics.len();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="cudalint" tests="{tests}" failures="{failures}" errors="{errors}">"#
    )?;
    for (name, findings) in groups {
        let name = xml_attr(name);
        writeln!(
            out,
            r#"  <testsuite name="{name}" tests="{}" failures="{}" errors="0" skipped="0">"#,
            findings.len().max(1),
            findings.len()
        )?;
        if findings.is_empty() {
            writeln!(out, r#"    <testcase name="cudalint" classname="{name}"/>"#)?;
        }
        for diag in findings {
            write_case(report, diag, &name, out)?;
        }
        writeln!(out, "  </testsuite>")?;
    }
    // JUnit's `<error>`, unlike `<failure>`, means the test could not run:
    // exactly an input that could not be linted.
    for failed in report.failed_inputs {
        let name = xml_attr(&failed.name);
        let sentence = failed.sentence();
        writeln!(
            out,
            r#"  <testsuite name="{name}" tests="1" failures="0" errors="1" skipped="0">"#
        )?;
        writeln!(out, r#"    <testcase name="cudalint" classname="{name}">"#)?;
        writeln!(
            out,
            r#"      <error message="{}" type="input-error">{}</error>"#,
            xml_attr(&sentence),
            xml_text(&sentence)
        )?;
        writeln!(out, "    </testcase>")?;
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}

fn write_case(
    report: &Report<'_>,
    diag: &Diagnostic,
    classname: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let place = match &diag.location {
        Location::Source { .. } => positions(report, diag)
            .map(|(start, _)| format!("{}:{}", start.line, start.column))
            .unwrap_or_else(|| diag.origin.clone()),
        Location::Image { layer, path } => image_place(layer.as_deref(), path.as_deref()),
        Location::File => "the whole file".to_owned(),
    };
    let title = match rule_of(report, diag.code) {
        Some((_, meta)) => format!("{} ({}) at {place}", diag.code, meta.name),
        None => format!("{} at {place}", diag.code),
    };
    let mut body = format!(
        "{}: {}\n{}: {}",
        diag.severity, diag.message, diag.origin, place
    );
    if let Some(help) = &diag.help {
        body.push_str(&format!("\nhelp: {help}"));
    }
    for note in &diag.notes {
        body.push_str(&format!("\nnote: {note}"));
    }
    if let Some(fix) = &diag.fix {
        body.push_str(&format!("\nfix available: {}", fix.description));
    }
    writeln!(
        out,
        r#"    <testcase name="{}" classname="{classname}">"#,
        xml_attr(&title)
    )?;
    writeln!(
        out,
        r#"      <failure message="{}" type="{}">{}</failure>"#,
        xml_attr(&diag.message),
        diag.severity,
        xml_text(&body)
    )?;
    writeln!(out, "    </testcase>")
}
