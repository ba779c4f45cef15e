//! Human-readable output in the style of rustc and ruff: a header per
//! finding, its location, a source snippet with the span underlined, help,
//! notes and fixes, then an `error: cannot lint …` line per input that could
//! not be read, then a one-line summary.

use std::io::{self, Write};

use super::shared::{positions, source_of, Tally};
use super::Report;
use crate::diagnostic::{Diagnostic, FixSafety, Location, Severity};
use crate::source::{LineCol, SourceFile};

/// Tabs are shown as this many spaces, in the snippet and its underline
/// alike, so carets stay under the characters they mark.
const TAB_WIDTH: usize = 4;

/// Spans longer than this many lines show their first and last lines only.
const MAX_SNIPPET_LINES: usize = 5;
const ELIDED_HEAD_LINES: usize = 2;
const ELIDED_TAIL_LINES: usize = 2;

pub(super) fn render(report: &Report<'_>, out: &mut dyn Write, color: bool) -> io::Result<()> {
    let paint = Paint { color };
    for diag in report.diagnostics {
        render_one(report, diag, paint, out)?;
        writeln!(out)?;
    }
    // After the findings, next to the summary, where a reader of a long
    // log looks last.
    for failed in report.failed_inputs {
        writeln!(
            out,
            "{}{}",
            paint.severity(Severity::Error, "error"),
            paint.bold(&format!(": {}", terminal_safe(&failed.sentence())))
        )?;
        writeln!(out)?;
    }
    let mut summary = Tally::of(report.diagnostics).sentence();
    match report.failed_inputs.len() {
        0 => {}
        1 => summary.push_str("; 1 input could not be linted"),
        n => summary.push_str(&format!("; {n} inputs could not be linted")),
    }
    writeln!(out, "{}", paint.bold(&summary))
}

fn render_one(
    report: &Report<'_>,
    diag: &Diagnostic,
    paint: Paint,
    out: &mut dyn Write,
) -> io::Result<()> {
    let label = format!("{}[{}]", diag.severity, diag.code);
    writeln!(
        out,
        "{}{}",
        paint.severity(diag.severity, &label),
        paint.bold(&format!(": {}", terminal_safe(&diag.message)))
    )?;

    let snippet = snippet_lines(report, diag);
    let last_line = snippet
        .iter()
        .filter_map(|line| line.number)
        .max()
        .unwrap_or(0);
    let gutter = " ".repeat(last_line.to_string().len().max(1));
    let arrow = paint.gutter("-->");
    writeln!(out, "{gutter}{arrow} {}", location_text(report, diag))?;

    let bar = paint.gutter("|");
    if !snippet.is_empty() {
        writeln!(out, "{gutter} {bar}")?;
        for line in &snippet {
            match line.number {
                Some(number) => {
                    let number = paint.gutter(&format!("{number:>width$}", width = gutter.len()));
                    writeln!(out, "{number} {bar} {}", line.text)?;
                    if let Some(carets) = &line.underline {
                        writeln!(
                            out,
                            "{gutter} {bar} {}",
                            paint.severity(diag.severity, carets)
                        )?;
                    }
                }
                None => writeln!(out, "{}", paint.gutter("..."))?,
            }
        }
        writeln!(out, "{gutter} {bar}")?;
    }

    let equals = paint.gutter("=");
    let mut trailer = Vec::new();
    if let Some(help) = &diag.help {
        trailer.push(("help", help.clone()));
    }
    // An image finding's related place is the instruction that made its
    // layer; a Dockerfile finding's is where its subject is written (a
    // requirements file's line).
    let related_label = match diag.location {
        Location::Image { .. } => "made by",
        _ => "see",
    };
    for related in &diag.related {
        trailer.push((
            related_label,
            format!(
                "{}:{}:{} ({})",
                related.origin, related.start.line, related.start.column, related.message
            ),
        ));
    }
    // One note, the one a person needs to decide; the rest and the sources
    // are in `--show-sources`, JSON and SARIF.
    let notes = if report.show_sources {
        diag.notes.len()
    } else {
        1
    };
    for note in diag.notes.iter().take(notes) {
        trailer.push(("note", note.clone()));
    }
    if report.show_sources {
        for source in &diag.sources {
            trailer.push(("source", source.clone()));
        }
    }
    if let Some(fix) = &diag.fix {
        let label = match fix.safety {
            FixSafety::Safe => "fix available",
            FixSafety::Unsafe => "fix available (unsafe)",
        };
        trailer.push((label, fix.description.clone()));
    }
    for (label, body) in trailer {
        // Continuation lines of a multi-line note line up under its text.
        let indent = " ".repeat(gutter.len() + 5 + label.len());
        let mut lines = body.split('\n');
        let first = lines.next().unwrap_or_default();
        writeln!(
            out,
            "{gutter} {equals} {}: {}",
            paint.bold(label),
            terminal_safe(first)
        )?;
        for line in lines {
            writeln!(out, "{indent}{}", terminal_safe(line))?;
        }
    }
    Ok(())
}

/// `path:line:col`, `image@layer path` or just the origin.
fn location_text(report: &Report<'_>, diag: &Diagnostic) -> String {
    let origin = terminal_safe(&diag.origin);
    match &diag.location {
        Location::Source { .. } => match positions(report, diag) {
            Some((start, _)) => format!("{origin}:{}:{}", start.line, start.column),
            None => origin,
        },
        Location::Image { layer, path } => {
            let mut text = origin;
            if let Some(layer) = layer {
                text.push('@');
                text.push_str(&terminal_safe(layer));
            }
            if let Some(path) = path {
                text.push(' ');
                text.push_str(&terminal_safe(path));
            }
            text
        }
        Location::File => origin,
    }
}

/// One row of a snippet: a numbered source line with its underline, or an
/// elision marker (`number == None`).
struct SnippetLine {
    number: Option<usize>,
    text: String,
    underline: Option<String>,
}

fn snippet_lines(report: &Report<'_>, diag: &Diagnostic) -> Vec<SnippetLine> {
    let Location::Source { span, .. } = &diag.location else {
        return Vec::new();
    };
    let Some(source) = source_of(report, &diag.origin) else {
        return Vec::new();
    };
    // Recomputed from the span, not taken from the diagnostic, so the carets
    // always agree with the text shown.
    let start = source.line_col(span.start);
    let mut end = source.line_col(span.end.max(span.start));
    // A span ending just after a newline ends on the previous line.
    if end.line > start.line && end.column == 1 {
        let line = end.line - 1;
        end = LineCol {
            line,
            column: source.line_text(line).chars().count() + 1,
        };
    }
    let count = end.line - start.line + 1;
    let numbers: Vec<Option<usize>> = if count > MAX_SNIPPET_LINES {
        let head = (start.line..start.line + ELIDED_HEAD_LINES).map(Some);
        let tail = (end.line + 1 - ELIDED_TAIL_LINES..=end.line).map(Some);
        head.chain(std::iter::once(None)).chain(tail).collect()
    } else {
        (start.line..=end.line).map(Some).collect()
    };
    numbers
        .into_iter()
        .map(|number| match number {
            Some(number) => snippet_line(source, number, start, end),
            None => SnippetLine {
                number: None,
                text: String::new(),
                underline: None,
            },
        })
        .collect()
}

fn snippet_line(source: &SourceFile, number: usize, start: LineCol, end: LineCol) -> SnippetLine {
    let raw = source.line_text(number);
    let (text, columns) = expand(raw);
    let chars = columns.len() - 1;
    // 0-based character indexes of the marked part of this line.
    let from = if number == start.line {
        start.column - 1
    } else {
        0
    };
    let to = if number == end.line {
        end.column - 1
    } else {
        chars
    };
    let from = from.min(chars);
    let to = to.clamp(from, chars);
    let single_point = start == end;
    let underline = if to > from || single_point {
        let left = columns.get(from).copied().unwrap_or(0);
        let right = columns.get(to).copied().unwrap_or(left);
        Some(format!(
            "{}{}",
            " ".repeat(left),
            "^".repeat((right - left).max(1))
        ))
    } else {
        None
    };
    SnippetLine {
        number: Some(number),
        text,
        underline,
    }
}

/// The line as displayed (tabs expanded, control characters replaced) and
/// the display column before each character, plus one past the end.
fn expand(line: &str) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(line.len());
    let mut columns = Vec::with_capacity(line.len() + 1);
    let mut width = 0;
    for c in line.chars() {
        columns.push(width);
        if c == '\t' {
            text.push_str(&" ".repeat(TAB_WIDTH));
            width += TAB_WIDTH;
        } else if c.is_control() {
            text.push('\u{FFFD}');
            width += 1;
        } else {
            text.push(c);
            width += 1;
        }
    }
    columns.push(width);
    (text, columns)
}

/// Messages and paths come from user input (file contents, image paths);
/// control characters could rewrite the terminal, so they are escaped.
fn terminal_safe(text: &str) -> String {
    let mut safe = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            safe.extend(c.escape_default());
        } else {
            safe.push(c);
        }
    }
    safe
}

/// ANSI styling, or none at all when colour is off.
#[derive(Clone, Copy)]
struct Paint {
    color: bool,
}

impl Paint {
    fn wrap(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn severity(self, severity: Severity, text: &str) -> String {
        let code = match severity {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "1;36",
            Severity::Style => "1;35",
        };
        self.wrap(code, text)
    }

    fn gutter(self, text: &str) -> String {
        self.wrap("1;34", text)
    }

    fn bold(self, text: &str) -> String {
        self.wrap("1", text)
    }
}
