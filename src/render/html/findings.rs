//! The findings card: each finding with its severity, rule, message, location (a source snippet
//! with the span marked, or an image path with a link to the layer row that wrote it), help,
//! notes, fix and sources.

use std::fmt::{self, Write as _};

use super::layers::{layer_number, short_digest};
use super::{prose, source_link};
use crate::diagnostic::{Diagnostic, FixSafety, Location};
use crate::image::summary::ImageSummary;
use crate::render::shared::{positions, rule_of, source_of, xml_attr, xml_text};
use crate::render::{rule_doc_url, Report};
use crate::source::LineCol;

/// A source snippet longer than this shows its first and last lines.
const MAX_SNIPPET_LINES: usize = 5;

/// The findings of one input, each with its location, snippet, help, notes and sources.
pub(super) fn write_findings(
    html: &mut String,
    report: &Report<'_>,
    image: Option<(&str, &ImageSummary)>,
    diagnostics: &[&Diagnostic],
) -> fmt::Result {
    writeln!(
        html,
        "<div class=\"card findings\">\n<h3>Findings <span class=\"count\">{}</span></h3>",
        diagnostics.len()
    )?;
    if diagnostics.is_empty() {
        html.push_str("<p class=\"empty clean\">No findings.</p>\n</div>\n");
        return Ok(());
    }
    html.push_str("<ol class=\"findings\">\n");
    for diag in diagnostics {
        write_finding(html, report, image, diag)?;
    }
    html.push_str("</ol>\n</div>\n");
    Ok(())
}

fn write_finding(
    html: &mut String,
    report: &Report<'_>,
    image: Option<(&str, &ImageSummary)>,
    diag: &Diagnostic,
) -> fmt::Result {
    let severity = diag.severity;
    let rule = rule_of(report, diag.code).map(|(_, meta)| meta);
    write!(
        html,
        "<li class=\"finding sev-{severity}\" data-code=\"{code}\" data-severity=\"{severity}\">\n\
         <div class=\"head\"><span class=\"sev\">{severity}</span> ",
        code = xml_attr(diag.code),
    )?;
    match rule.and_then(|meta| rule_doc_url(report.doc_url_base, meta.code)) {
        Some(url) => write!(
            html,
            "<a class=\"code\" href=\"{}\">{}</a>",
            xml_attr(&url),
            xml_text(diag.code)
        )?,
        None => write!(html, "<span class=\"code\">{}</span>", xml_text(diag.code))?,
    }
    if let Some(meta) = rule {
        write!(html, " <span class=\"rule\">{}</span>", xml_text(meta.name))?;
    }
    writeln!(
        html,
        "</div>\n<p class=\"message\">{}</p>",
        prose(&diag.message)
    )?;
    write_location(html, report, image, diag)?;
    let mut trailer: Vec<(&str, String)> = Vec::new();
    if let Some(help) = &diag.help {
        trailer.push(("help", prose(help)));
    }
    for related in &diag.related {
        let mut made_by = format!(
            "<code>{}:{}:{}</code> {}",
            xml_text(&related.origin),
            related.start.line,
            related.start.column,
            prose(&related.message)
        );
        if let Some(source) = source_of(report, &related.origin) {
            let line = related.start.line;
            write!(
                made_by,
                "<pre class=\"snippet\"><span class=\"ln\">{line}</span>{}</pre>",
                xml_text(source.line_text(line))
            )?;
        }
        trailer.push(("made by", made_by));
    }
    for note in &diag.notes {
        trailer.push(("note", prose(note)));
    }
    if let Some(fix) = &diag.fix {
        let label = match fix.safety {
            FixSafety::Safe => "fix",
            FixSafety::Unsafe => "fix (unsafe)",
        };
        trailer.push((label, prose(&fix.description)));
    }
    if !trailer.is_empty() {
        html.push_str("<dl class=\"trailer\">\n");
        for (label, body) in trailer {
            writeln!(html, "<div><dt>{label}</dt><dd>{body}</dd></div>")?;
        }
        html.push_str("</dl>\n");
    }
    if !diag.sources.is_empty() {
        write!(
            html,
            "<details class=\"sources\"><summary>{} {}</summary><ul>",
            diag.sources.len(),
            if diag.sources.len() == 1 {
                "source"
            } else {
                "sources"
            }
        )?;
        for source in &diag.sources {
            write!(html, "<li>{}</li>", source_link(source))?;
        }
        html.push_str("</ul></details>\n");
    }
    html.push_str("</li>\n");
    Ok(())
}

/// Where a finding is: `file:line:col` and the lines it marks, or an image path and a link to
/// the layer row that wrote it.
fn write_location(
    html: &mut String,
    report: &Report<'_>,
    image: Option<(&str, &ImageSummary)>,
    diag: &Diagnostic,
) -> fmt::Result {
    match &diag.location {
        Location::Source { span, .. } => {
            let place = match positions(report, diag) {
                Some((start, _)) => format!("{}:{}:{}", diag.origin, start.line, start.column),
                None => diag.origin.clone(),
            };
            writeln!(
                html,
                "<p class=\"where\"><code class=\"place\">{}</code></p>",
                xml_text(&place)
            )?;
            if let Some(source) = source_of(report, &diag.origin) {
                let start = source.line_col(span.start);
                let mut end = source.line_col(span.end.max(span.start));
                // A span ending just after a newline ends on the line before.
                if end.line > start.line && end.column == 1 {
                    end = LineCol {
                        line: end.line - 1,
                        column: source.line_text(end.line - 1).chars().count() + 1,
                    };
                }
                html.push_str("<pre class=\"snippet\">");
                let count = end.line - start.line + 1;
                for line in start.line..=end.line {
                    let elided =
                        count > MAX_SNIPPET_LINES && line >= start.line + 2 && line + 2 <= end.line;
                    if elided {
                        if line == start.line + 2 {
                            html.push_str("<span class=\"ln\">…</span>\n");
                        }
                        continue;
                    }
                    write_marked_line(html, source.line_text(line), line, start, end)?;
                }
                html.push_str("</pre>\n");
            }
        }
        Location::Image { layer, path } => {
            html.push_str("<p class=\"where\">");
            if let Some(path) = path {
                write!(html, "<code class=\"place\">{}</code>", xml_text(path))?;
            }
            if let Some(layer) = layer {
                let row =
                    image.and_then(|(anchor, image)| Some((anchor, layer_number(image, layer)?)));
                if path.is_some() {
                    html.push_str(" in ");
                }
                match row {
                    Some((anchor, number)) => {
                        write!(
                            html,
                            "<a href=\"#{anchor}-layer-{number}\">layer {number}</a>"
                        )?;
                        if !layer.starts_with('#') {
                            write!(
                                html,
                                " <span class=\"digest\" title=\"{}\">{}</span>",
                                xml_attr(layer),
                                xml_text(&short_digest(layer))
                            )?;
                        }
                    }
                    None => write!(html, "layer <code>{}</code>", xml_text(layer))?,
                }
            }
            if path.is_none() && layer.is_none() {
                html.push_str("the image as a whole");
            }
            html.push_str("</p>\n");
        }
        Location::File => {
            writeln!(
                html,
                "<p class=\"where\"><code class=\"place\">{}</code></p>",
                xml_text(&diag.origin)
            )?;
        }
    }
    Ok(())
}

/// One numbered source line, the part between `start` and `end` marked.
fn write_marked_line(
    html: &mut String,
    text: &str,
    line: usize,
    start: LineCol,
    end: LineCol,
) -> fmt::Result {
    let chars = text.chars().count();
    let from = if line == start.line {
        start.column - 1
    } else {
        0
    };
    let to = if line == end.line {
        end.column - 1
    } else {
        chars
    };
    let from = from.min(chars);
    let to = to.clamp(from, chars);
    let byte = |index: usize| {
        text.char_indices()
            .nth(index)
            .map_or(text.len(), |(byte, _)| byte)
    };
    let (from, to) = (byte(from), byte(to));
    writeln!(
        html,
        "<span class=\"ln\">{line}</span>{}<mark>{}</mark>{}",
        xml_text(&text[..from]),
        xml_text(&text[from..to]),
        xml_text(&text[to..])
    )
}
