//! GitHub Actions workflow commands (`::error file=…,line=…::message`),
//! which turn findings into annotations on the pull request diff (an image
//! finding on the Dockerfile instruction that made its layer, when known),
//! and an `::error` on each input that could not be linted.

use std::io::{self, Write};

use super::shared::{image_place, positions, rule_of};
use super::Report;
use crate::diagnostic::{Location, Severity};

pub(super) fn render(report: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    for diag in report.diagnostics {
        let mut properties: Vec<(&str, String)> = Vec::new();
        let mut message = String::new();
        match &diag.location {
            Location::Source { .. } => {
                properties.push(("file", diag.origin.clone()));
                if let Some((start, end)) = positions(report, diag) {
                    properties.push(("line", start.line.to_string()));
                    properties.push(("col", start.column.to_string()));
                    if let Some(end) = end {
                        // Our end column is exclusive; GitHub's is inclusive.
                        let end_column = if end.line == start.line {
                            end.column.saturating_sub(1).max(start.column)
                        } else {
                            end.column.saturating_sub(1).max(1)
                        };
                        properties.push(("endLine", end.line.to_string()));
                        properties.push(("endColumn", end_column.to_string()));
                    }
                }
            }
            // An image is no file of the repository. With `--dockerfile` the
            // finding knows the instruction that made its layer: the
            // annotation goes on that line of the diff. Else it goes on the
            // run. The message says where in the image either way.
            Location::Image { layer, path } => {
                if let Some(made_by) = diag.related.first() {
                    properties.push(("file", made_by.origin.clone()));
                    properties.push(("line", made_by.start.line.to_string()));
                    properties.push(("endLine", made_by.end.line.to_string()));
                }
                message = format!(
                    "{} {}: ",
                    diag.origin,
                    image_place(layer.as_deref(), path.as_deref())
                );
            }
            Location::File => properties.push(("file", diag.origin.clone())),
        }
        let title = match rule_of(report, diag.code) {
            Some((_, meta)) => format!("{} ({})", diag.code, meta.name),
            None => diag.code.to_owned(),
        };
        properties.push(("title", title));
        message.push_str(&diag.message);
        if let Some(help) = &diag.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        let properties: Vec<String> = properties
            .iter()
            .map(|(key, value)| format!("{key}={}", escape_property(value)))
            .collect();
        writeln!(
            out,
            "::{} {}::{}",
            command(diag.severity),
            properties.join(","),
            escape_data(&message)
        )?;
    }
    for failed in report.failed_inputs {
        writeln!(
            out,
            "::error file={}::{}",
            escape_property(&failed.name),
            escape_data(&failed.sentence())
        )?;
    }
    Ok(())
}

fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Style => "notice",
    }
}

/// Escaping of a command's message, as the Actions runner undoes it. Other
/// control characters have no escape and would reach the log viewer as
/// terminal codes, so they become U+FFFD.
fn escape_data(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => escaped.push_str("%25"),
            '\r' => escaped.push_str("%0D"),
            '\n' => escaped.push_str("%0A"),
            '\t' => escaped.push('\t'),
            c if c.is_control() => escaped.push('\u{FFFD}'),
            c => escaped.push(c),
        }
    }
    escaped
}

/// Properties are also split on `,` and end at `::`, so those are escaped too.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_percent_first_so_escapes_are_not_doubled() {
        assert_eq!(escape_data("50%\r\nok"), "50%25%0D%0Aok");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
        assert_eq!(escape_data("\u{1b}[31m"), "\u{FFFD}[31m");
    }
}
