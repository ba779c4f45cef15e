//! One self-contained HTML page for people: the findings of every input and, for each image, its
//! size as a treemap (base OS, CUDA runtime, CUDA devel content by category, Python packages,
//! duplicates, wasted, other), its layers as bars with the history line that made each, the
//! minimum driver of each CUDA runtime, and its CUDA inventory.
//!
//! The page loads nothing: the style is inline, the charts are SVG and HTML drawn here, there is
//! no script to run, and a Content-Security-Policy forbids every fetch, so it can be opened from a
//! CI artifact store offline and nothing in it can reach out. Everything taken from the linted
//! input (paths, history lines, labels, messages) is escaped. The numbers behind the charts are in
//! the DOM for tools and tests: `data-bytes` on every chart element and the breakdown, layers and
//! drivers as JSON in `<script type="application/json" id="cudalint-data">`, which carries the same
//! values, under the same names, as `--format json`.

mod contents;
mod data;
mod findings;
mod gpu;
mod layers;
mod size;
mod treemap;

use std::fmt::{self, Write as _};
use std::io::{self, Write};

use super::shared::{group_by_input, xml_attr, xml_text, Tally};
use super::{Report, TOOL_INFORMATION_URI};
use crate::diagnostic::{Diagnostic, Location, Severity};
use crate::image::summary::ImageSummary;
use crate::units::human_bytes;

/// The page's style sheet, kept as CSS beside this file.
const STYLE: &str = include_str!("html/report.css");

/// Nothing may be fetched: no script, font, image or frame from anywhere, only inline style.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'";

pub(super) fn render(report: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let mut html = String::with_capacity(64 * 1024);
    write_page(&mut html, report)
        .map_err(|_| io::Error::other("formatting the HTML report failed"))?;
    out.write_all(html.as_bytes())
}

fn write_page(html: &mut String, report: &Report<'_>) -> fmt::Result {
    let title = match report.images {
        [image] => format!("cudalint: {}", image.reference),
        _ => match report.inputs {
            [input] => format!("cudalint: {input}"),
            inputs => format!("cudalint: {} inputs", inputs.len()),
        },
    };
    writeln!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"generator\" content=\"cudalint {version}\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>",
        csp = CONTENT_SECURITY_POLICY,
        version = xml_attr(report.tool_version),
        title = xml_text(&title),
    )?;
    write_header(html, report)?;
    html.push_str("<main>\n");
    write_problems(html, report)?;
    for (number, (input, diagnostics)) in group_by_input(report).into_iter().enumerate() {
        let number = number + 1;
        match report.images.iter().find(|image| image.reference == input) {
            Some(image) => write_image(html, report, number, image, &diagnostics)?,
            None => write_file(html, report, number, input, &diagnostics)?,
        }
    }
    html.push_str("</main>\n");
    writeln!(
        html,
        "<footer>Made by <a href=\"{uri}\">cudalint</a> {version}. Every rule: \
         <code>cudalint rules</code>; why a rule fired: <code>cudalint explain CODE</code>.</footer>",
        uri = xml_attr(TOOL_INFORMATION_URI),
        version = xml_text(report.tool_version),
    )?;
    data::write_data(html, report)?;
    html.push_str("</body>\n</html>\n");
    Ok(())
}

/// The title band: what was linted and how many findings of each severity.
fn write_header(html: &mut String, report: &Report<'_>) -> fmt::Result {
    let tally = Tally::of(report.diagnostics);
    let inputs = match (report.images.len(), report.inputs.len()) {
        (0, 1) => "1 file".to_owned(),
        (0, n) => format!("{n} files"),
        (1, 1) => "1 image".to_owned(),
        (images, n) if images == n => format!("{n} images"),
        (_, n) => format!("{n} inputs"),
    };
    write!(
        html,
        "<header class=\"top\">\n<div class=\"brand\"><span class=\"logo\">cudalint</span> \
         <span class=\"what\">CUDA packaging report</span></div>\n\
         <p class=\"tally\" data-findings=\"{total}\"><span class=\"inputs\">{inputs}</span>",
        total = tally.total,
    )?;
    if tally.total == 0 {
        html.push_str(" <span class=\"chip clean\">no findings</span>");
    }
    for (severity, count) in [
        (Severity::Error, tally.error),
        (Severity::Warning, tally.warning),
        (Severity::Info, tally.info),
        (Severity::Style, tally.style),
    ] {
        if count > 0 {
            let noun = match (severity, count) {
                (Severity::Error, 1) => "error",
                (Severity::Error, _) => "errors",
                (Severity::Warning, 1) => "warning",
                (Severity::Warning, _) => "warnings",
                (Severity::Info, _) => "info",
                (Severity::Style, _) => "style",
            };
            write!(
                html,
                " <span class=\"chip sev-{severity}\" data-severity=\"{severity}\">{count} {noun}</span>"
            )?;
        }
    }
    if tally.fixable > 0 {
        write!(
            html,
            " <span class=\"fixable\">{} fixable with <code>cudalint fix</code></span>",
            tally.fixable
        )?;
    }
    html.push_str("</p>\n</header>\n");
    Ok(())
}

/// Inputs that could not be linted and run-level notices, above everything else: a reader must not
/// take a run that skipped an input for a clean one.
fn write_problems(html: &mut String, report: &Report<'_>) -> fmt::Result {
    if !report.failed_inputs.is_empty() {
        html.push_str("<section class=\"card failed\" id=\"failed-inputs\">\n<h2>Could not be linted</h2>\n<ul>\n");
        for failed in report.failed_inputs {
            writeln!(
                html,
                "<li class=\"failed-input\" data-name=\"{}\"><code>{}</code>: {}</li>",
                xml_attr(&failed.name),
                xml_text(&failed.name),
                xml_text(&failed.message)
            )?;
        }
        html.push_str("</ul>\n</section>\n");
    }
    for notice in report.notices {
        writeln!(html, "<p class=\"notice\">{}</p>", prose(notice))?;
    }
    Ok(())
}

/// A Dockerfile, or an image read without a summary (a report built by hand): its findings.
fn write_file(
    html: &mut String,
    report: &Report<'_>,
    number: usize,
    name: &str,
    diagnostics: &[&Diagnostic],
) -> fmt::Result {
    let kind = if diagnostics
        .iter()
        .any(|diag| matches!(diag.location, Location::Image { .. }))
    {
        "image"
    } else {
        "file"
    };
    writeln!(
        html,
        "<section class=\"input file\" id=\"input-{number}\" data-input=\"{}\">\n\
         <h2><span class=\"kind\">{kind}</span> <code>{}</code></h2>",
        xml_attr(name),
        xml_text(name)
    )?;
    findings::write_findings(html, report, None, diagnostics)?;
    html.push_str("</section>\n");
    Ok(())
}

/// An image: headline numbers, size treemap, minimum drivers, findings, layers, inventory.
fn write_image(
    html: &mut String,
    report: &Report<'_>,
    number: usize,
    image: &ImageSummary,
    diagnostics: &[&Diagnostic],
) -> fmt::Result {
    let anchor = format!("image-{number}");
    writeln!(
        html,
        "<section class=\"input image\" id=\"{anchor}\" data-input=\"{}\">\n\
         <h2><span class=\"kind\">image</span> <code>{}</code></h2>",
        xml_attr(&image.reference),
        xml_text(&image.reference)
    )?;
    write_facts(html, image, diagnostics.len())?;
    html.push_str("<div class=\"overview\">\n");
    size::write_treemap(html, &anchor, image)?;
    html.push_str("<div class=\"side\">\n");
    contents::write_drivers(html, image)?;
    contents::write_unresolved(html, image)?;
    html.push_str("</div>\n</div>\n");
    findings::write_findings(html, report, Some((&anchor, image)), diagnostics)?;
    layers::write_layers(html, &anchor, image, diagnostics)?;
    contents::write_inventory(html, image)?;
    gpu::write_gpu_code(html, image)?;
    contents::write_waste(html, image)?;
    html.push_str("</section>\n");
    Ok(())
}

/// The image's headline numbers.
fn write_facts(html: &mut String, image: &ImageSummary, findings: usize) -> fmt::Result {
    let config = &image.config;
    let platform = [
        config.os.as_deref(),
        config.architecture.as_deref(),
        config.variant.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("/");
    let mut facts: Vec<(&str, String)> = vec![
        ("size", human_bytes(image.breakdown.total)),
        ("layers", image.layers.len().to_string()),
        ("files", image.files.to_string()),
        ("wasted", human_bytes(image.bytes_wasted)),
        ("findings", findings.to_string()),
    ];
    if !platform.is_empty() {
        facts.push(("platform", platform));
    }
    if let Some(user) = config.user.as_deref().filter(|user| !user.is_empty()) {
        facts.push(("user", user.to_owned()));
    }
    html.push_str("<dl class=\"facts\">");
    for (name, value) in facts {
        write!(
            html,
            "<div><dt>{name}</dt><dd>{}</dd></div>",
            xml_text(&value)
        )?;
    }
    html.push_str("</dl>\n");
    Ok(())
}
/// Text from a rule or the input, escaped, with `code spans` set as code (when the backticks pair
/// up; otherwise the text is shown as written).
pub(super) fn prose(text: &str) -> String {
    let pieces: Vec<&str> = text.split('`').collect();
    if pieces.len().is_multiple_of(2) {
        return xml_text(text).into_owned();
    }
    let mut html = String::with_capacity(text.len() + 16);
    for (index, piece) in pieces.iter().enumerate() {
        if index % 2 == 1 {
            html.push_str("<code>");
            html.push_str(&xml_text(piece));
            html.push_str("</code>");
        } else {
            html.push_str(&xml_text(piece));
        }
    }
    html
}

/// A source as a link when it starts with a web address (`https://… (Table 3)`), else as text.
pub(super) fn source_link(source: &str) -> String {
    let (head, tail) = source.split_once(' ').unwrap_or((source, ""));
    if head.starts_with("https://") || head.starts_with("http://") {
        let tail = if tail.is_empty() {
            String::new()
        } else {
            format!(" {}", xml_text(tail))
        };
        format!(
            "<a href=\"{}\">{}</a>{tail}",
            xml_attr(head),
            xml_text(head)
        )
    } else {
        xml_text(source).into_owned()
    }
}

/// `bytes` as a share of `total`, one decimal.
fn percent(bytes: u64, total: u64) -> String {
    format!("{:.1}%", 100.0 * bytes as f64 / total.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_escapes_and_sets_code_spans() {
        assert_eq!(prose("`<b>` & \"x\""), "<code>&lt;b&gt;</code> &amp; \"x\"");
        assert_eq!(prose("one ` alone <"), "one ` alone &lt;");
    }

    #[test]
    fn sources_link_only_web_addresses() {
        assert_eq!(
            source_link("https://a.example/x?a=1&b=2 (Table 3)"),
            "<a href=\"https://a.example/x?a=1&amp;b=2\">https://a.example/x?a=1&amp;b=2</a> (Table 3)"
        );
        assert_eq!(
            source_link("javascript:alert(1) <x>"),
            "javascript:alert(1) &lt;x&gt;"
        );
    }
}
