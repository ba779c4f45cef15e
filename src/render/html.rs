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

mod treemap;

use std::fmt::{self, Write as _};
use std::io::{self, Write};

use serde::Serialize;

use super::shared::{group_by_input, positions, rule_of, source_of, xml_attr, xml_text, Tally};
use super::{rule_doc_url, Report, TOOL_INFORMATION_URI};
use crate::diagnostic::{Diagnostic, FixSafety, Location, Severity};
use crate::image::command::human_bytes;
use crate::image::content::SizeBreakdown;
use crate::image::summary::{ImageSummary, RuntimeDriver};
use crate::knowledge::Version;
use crate::source::LineCol;
use treemap::{squarify, Rect};

/// The page's style sheet, kept as CSS beside this file.
const STYLE: &str = include_str!("html/report.css");

/// Nothing may be fetched: no script, font, image or frame from anywhere, only inline style.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'";

/// The treemap's drawing area, in SVG user units (it scales to the card's width).
const TREEMAP: Rect = Rect {
    x: 0.0,
    y: 0.0,
    width: 720.0,
    height: 380.0,
};

/// A source snippet longer than this shows its first and last lines.
const MAX_SNIPPET_LINES: usize = 5;

/// Dead copies listed per image, largest first; the JSON format lists them all.
const MAX_DEAD_COPIES: usize = 50;

/// Bumped when a field of the `cudalint-data` block changes meaning or disappears.
const DATA_VERSION: u32 = 1;

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
    write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"generator\" content=\"cudalint {version}\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
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
    write!(
        html,
        "<footer>Made by <a href=\"{uri}\">cudalint</a> {version}. Every rule: \
         <code>cudalint rules</code>; why a rule fired: <code>cudalint explain CODE</code>.</footer>\n",
        uri = xml_attr(TOOL_INFORMATION_URI),
        version = xml_text(report.tool_version),
    )?;
    write_data(html, report)?;
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
            write!(
                html,
                "<li class=\"failed-input\" data-name=\"{}\"><code>{}</code>: {}</li>\n",
                xml_attr(&failed.name),
                xml_text(&failed.name),
                xml_text(&failed.message)
            )?;
        }
        html.push_str("</ul>\n</section>\n");
    }
    for notice in report.notices {
        write!(html, "<p class=\"notice\">{}</p>\n", prose(notice))?;
    }
    Ok(())
}

/// A Dockerfile (or any input that is not an image): its findings.
fn write_file(
    html: &mut String,
    report: &Report<'_>,
    number: usize,
    name: &str,
    diagnostics: &[&Diagnostic],
) -> fmt::Result {
    write!(
        html,
        "<section class=\"input file\" id=\"input-{number}\" data-input=\"{}\">\n\
         <h2><span class=\"kind\">file</span> <code>{}</code></h2>\n",
        xml_attr(name),
        xml_text(name)
    )?;
    write_findings(html, report, None, diagnostics)?;
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
    write!(
        html,
        "<section class=\"input image\" id=\"{anchor}\" data-input=\"{}\">\n\
         <h2><span class=\"kind\">image</span> <code>{}</code></h2>\n",
        xml_attr(&image.reference),
        xml_text(&image.reference)
    )?;
    write_facts(html, image, diagnostics.len())?;
    html.push_str("<div class=\"overview\">\n");
    write_treemap(html, &anchor, image)?;
    html.push_str("<div class=\"side\">\n");
    write_drivers(html, image)?;
    write_unresolved(html, image)?;
    html.push_str("</div>\n</div>\n");
    write_findings(html, report, Some((&anchor, image)), diagnostics)?;
    write_layers(html, &anchor, image, diagnostics)?;
    write_inventory(html, image)?;
    write_waste(html, image)?;
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

/// One part of the size breakdown: its JSON key (the `SizeBreakdown` field), its name, its bytes.
struct Part {
    key: &'static str,
    label: &'static str,
    bytes: u64,
}

/// The breakdown's parts, in the text report's order.
fn parts(breakdown: &SizeBreakdown) -> [Part; 7] {
    let part = |key, label, bytes| Part { key, label, bytes };
    [
        part("base_os", "base OS", breakdown.base_os),
        part("cuda_runtime", "CUDA runtime", breakdown.cuda_runtime),
        part("cuda_devel", "CUDA devel content", breakdown.cuda_devel),
        part("python_packages", "Python packages", breakdown.python_packages),
        part("duplicates", "duplicates", breakdown.duplicates),
        part("wasted", "wasted", breakdown.wasted),
        part("other", "other", breakdown.other),
    ]
}

/// The devel categories drawn inside the CUDA devel rectangle, when they add up to it (they do
/// unless a devel file is also counted elsewhere); otherwise the rectangle stays whole.
fn devel_categories(image: &ImageSummary) -> Vec<(&str, u64)> {
    let categories: Vec<(&str, u64)> = image
        .devel_bytes
        .iter()
        .filter(|(_, bytes)| *bytes > 0)
        .map(|(name, bytes)| (name.as_str(), *bytes))
        .collect();
    let sum: u64 = categories.iter().map(|(_, bytes)| bytes).sum();
    if sum == image.breakdown.cuda_devel {
        categories
    } else {
        Vec::new()
    }
}

fn percent(bytes: u64, total: u64) -> String {
    format!("{:.1}%", 100.0 * bytes as f64 / total.max(1) as f64)
}

/// The size treemap and its legend (which also lists the parts too small to draw).
fn write_treemap(html: &mut String, anchor: &str, image: &ImageSummary) -> fmt::Result {
    let breakdown = &image.breakdown;
    let total = breakdown.total;
    let parts = parts(breakdown);
    let categories = devel_categories(image);
    write!(
        html,
        "<figure class=\"card size\" data-total=\"{total}\">\n<h3>Size by content</h3>\n"
    )?;
    if total == 0 {
        html.push_str("<p class=\"empty\">The layers add no bytes.</p>\n");
    } else {
        write!(
            html,
            "<svg class=\"treemap\" viewBox=\"{x} {y} {w} {h}\" role=\"img\" \
             aria-labelledby=\"{anchor}-size-caption\" data-total=\"{total}\">\n",
            x = TREEMAP.x,
            y = TREEMAP.y,
            w = TREEMAP.width,
            h = TREEMAP.height,
        )?;
        let sizes: Vec<u64> = parts.iter().map(|part| part.bytes).collect();
        for (part, rect) in parts.iter().zip(squarify(&sizes, TREEMAP)) {
            if part.bytes == 0 {
                continue;
            }
            write!(
                html,
                "<g class=\"part p-{key}\" data-part=\"{key}\" data-bytes=\"{bytes}\">",
                key = part.key,
                bytes = part.bytes
            )?;
            let tooltip = format!(
                "{}: {} ({})",
                part.label,
                human_bytes(part.bytes),
                percent(part.bytes, total)
            );
            if part.key == "cuda_devel" && !categories.is_empty() {
                let sizes: Vec<u64> = categories.iter().map(|(_, bytes)| *bytes).collect();
                let inner = inset(rect, 1.0);
                for (index, ((name, bytes), cell)) in categories
                    .iter()
                    .zip(squarify(&sizes, inner))
                    .enumerate()
                {
                    write!(
                        html,
                        "<g class=\"category d{shade}\" data-category=\"{name}\" data-bytes=\"{bytes}\">",
                        shade = index % 5,
                        name = xml_attr(name),
                    )?;
                    let tooltip = format!(
                        "CUDA devel content, {name}: {} ({})",
                        human_bytes(*bytes),
                        percent(*bytes, total)
                    );
                    let labels = [format!("devel: {name}"), name.to_string()];
                    write_cell(html, cell, &labels, *bytes, total, &tooltip)?;
                    html.push_str("</g>");
                }
            } else {
                let labels = [part.label.to_owned()];
                write_cell(html, rect, &labels, part.bytes, total, &tooltip)?;
            }
            html.push_str("</g>\n");
        }
        html.push_str("</svg>\n");
    }
    write!(
        html,
        "<figcaption id=\"{anchor}-size-caption\">\n<table class=\"legend\">\n"
    )?;
    for part in &parts {
        write!(
            html,
            "<tr class=\"legend-part p-{key}{zero}\" data-part=\"{key}\" data-bytes=\"{bytes}\">\
             <td><span class=\"swatch\"></span>{label}</td><td class=\"num\">{human}</td>\
             <td class=\"num\">{share}</td></tr>\n",
            key = part.key,
            zero = if part.bytes == 0 { " zero" } else { "" },
            bytes = part.bytes,
            label = part.label,
            human = human_bytes(part.bytes),
            share = percent(part.bytes, total),
        )?;
        if part.key == "cuda_devel" {
            for (index, (name, bytes)) in categories.iter().enumerate() {
                write!(
                    html,
                    "<tr class=\"legend-category d{shade}\" data-category=\"{attr}\" data-bytes=\"{bytes}\">\
                     <td><span class=\"swatch\"></span>{name}</td><td class=\"num\">{human}</td>\
                     <td class=\"num\">{share}</td></tr>\n",
                    shade = index % 5,
                    attr = xml_attr(name),
                    name = xml_text(name),
                    human = human_bytes(*bytes),
                    share = percent(*bytes, total),
                )?;
            }
        }
    }
    write!(
        html,
        "<tr class=\"legend-total\" data-bytes=\"{total}\"><td>total</td>\
         <td class=\"num\">{}</td><td></td></tr>\n</table>\n</figcaption>\n</figure>\n",
        human_bytes(total)
    )?;
    Ok(())
}

fn inset(rect: Rect, by: f64) -> Rect {
    Rect {
        x: rect.x + by,
        y: rect.y + by,
        width: (rect.width - 2.0 * by).max(0.0),
        height: (rect.height - 2.0 * by).max(0.0),
    }
}

/// One rectangle of the treemap, labelled with the first of `labels` (longest first) that fits,
/// in the normal size or, failing that, a smaller one; a rectangle too small for any keeps its
/// tooltip only.
fn write_cell(
    html: &mut String,
    rect: Rect,
    labels: &[String],
    bytes: u64,
    total: u64,
    tooltip: &str,
) -> fmt::Result {
    let cell = inset(rect, 1.0);
    write!(
        html,
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\"><title>{}</title></rect>",
        cell.x,
        cell.y,
        cell.width,
        cell.height,
        xml_text(tooltip)
    )?;
    let value = format!("{} · {}", human_bytes(bytes), percent(bytes, total));
    // (class, font size, line height): DejaVu Sans, the widest common fallback, averages under
    // 0.62 em per character in bold.
    for (class, size, line) in [("", 13.0, 17.0), (" small", 11.0, 14.0)] {
        let fits = |text: &str| text.chars().count() as f64 * size * 0.62 + 12.0 <= cell.width;
        let Some(label) = labels.iter().find(|label| fits(label)) else {
            continue;
        };
        if cell.height < line + 8.0 {
            continue;
        }
        write!(
            html,
            "<text class=\"label{class}\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            cell.x + 6.0,
            cell.y + line + 1.0,
            xml_text(label)
        )?;
        if cell.height >= 2.0 * line + 8.0 && fits(&value) {
            write!(
                html,
                "<text class=\"value{class}\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                cell.x + 6.0,
                cell.y + 2.0 * line + 1.0,
                xml_text(&value)
            )?;
        }
        break;
    }
    Ok(())
}

/// Each CUDA runtime in the image with the least driver it needs; runtimes whose release the file
/// does not tell (a `libcudart.so.12` without a wheel beside it) are listed as unknown.
fn write_drivers(html: &mut String, image: &ImageSummary) -> fmt::Result {
    html.push_str("<div class=\"card drivers\">\n<h3>Minimum driver</h3>\n");
    let runtimes: Vec<_> = image.inventory.cuda_runtimes().collect();
    if runtimes.is_empty() {
        html.push_str("<p class=\"empty\">No CUDA runtime (<code>libcudart</code>) in the image.</p>\n</div>\n");
        return Ok(());
    }
    let highest = image
        .runtime_drivers
        .iter()
        .filter_map(|runtime| Some((Version::parse(&runtime.min_driver)?, runtime)))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, runtime)| runtime);
    if let Some(runtime) = highest {
        write!(
            html,
            "<p class=\"headline\" data-min-driver=\"{driver}\">Hosts need driver \
             <strong>≥ {driver}</strong> <span class=\"muted\">for CUDA {cuda}</span></p>\n",
            driver = xml_text(&runtime.min_driver),
            cuda = xml_text(&runtime.cuda),
        )?;
    }
    html.push_str(
        "<table class=\"runtimes\">\n<tr><th>CUDA runtime</th><th>CUDA</th><th>minimum driver</th></tr>\n",
    );
    for library in runtimes {
        let known: Option<&RuntimeDriver> = image
            .runtime_drivers
            .iter()
            .find(|runtime| runtime.path == library.path);
        let pip = if library.pip {
            " <span class=\"tag\">pip</span>"
        } else {
            ""
        };
        match known {
            Some(runtime) => write!(
                html,
                "<tr class=\"runtime\" data-path=\"{path_attr}\" data-cuda=\"{cuda_attr}\" \
                 data-min-driver=\"{driver_attr}\"><td><code>{path}</code>{pip}</td>\
                 <td>{cuda}</td><td class=\"driver\">{driver}</td></tr>\n",
                path_attr = xml_attr(&library.path),
                cuda_attr = xml_attr(&runtime.cuda),
                driver_attr = xml_attr(&runtime.min_driver),
                path = xml_text(&library.path),
                cuda = xml_text(&runtime.cuda),
                driver = xml_text(&runtime.min_driver),
            )?,
            None => write!(
                html,
                "<tr class=\"runtime unknown\" data-path=\"{path_attr}\"><td><code>{path}</code>{pip}</td>\
                 <td>{version}</td><td class=\"muted\">unknown*</td></tr>\n",
                path_attr = xml_attr(&library.path),
                path = xml_text(&library.path),
                version = xml_text(library.version.as_deref().unwrap_or("?")),
            )?,
        }
    }
    html.push_str("</table>\n");
    if image.inventory.cuda_runtimes().any(|library| {
        !image
            .runtime_drivers
            .iter()
            .any(|runtime| runtime.path == library.path)
    }) {
        html.push_str(
            "<p class=\"source\">* The file name gives only the major release \
             (<code>libcudart.so.12</code>) and no wheel beside it tells more, so no minimum driver \
             follows from it.</p>\n",
        );
    }
    let mut sources: Vec<&str> = image
        .runtime_drivers
        .iter()
        .map(|runtime| runtime.source.as_str())
        .collect();
    sources.dedup();
    for source in sources {
        write!(html, "<p class=\"source\">Source: {}</p>\n", source_link(source))?;
    }
    html.push_str("</div>\n");
    Ok(())
}

/// The findings of one input, each with its location, snippet, help, notes and sources.
fn write_findings(
    html: &mut String,
    report: &Report<'_>,
    image: Option<(&str, &ImageSummary)>,
    diagnostics: &[&Diagnostic],
) -> fmt::Result {
    write!(
        html,
        "<div class=\"card findings\">\n<h3>Findings <span class=\"count\">{}</span></h3>\n",
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
    write!(
        html,
        "</div>\n<p class=\"message\">{}</p>\n",
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
            write!(html, "<div><dt>{label}</dt><dd>{body}</dd></div>\n")?;
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
            write!(
                html,
                "<p class=\"where\"><code>{}</code></p>\n",
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
                    let elided = count > MAX_SNIPPET_LINES
                        && line >= start.line + 2
                        && line + 2 <= end.line;
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
                write!(html, "<code>{}</code>", xml_text(path))?;
            }
            if let Some(layer) = layer {
                let row = image.and_then(|(anchor, image)| {
                    let index = image
                        .layers
                        .iter()
                        .find(|row| &row.diff_id == layer || &row.blob_digest == layer)?
                        .index;
                    Some((anchor, index + 1))
                });
                if path.is_some() {
                    html.push_str(" in ");
                }
                match row {
                    Some((anchor, number)) => write!(
                        html,
                        "<a href=\"#{anchor}-layer-{number}\">layer {number}</a> \
                         <span class=\"digest\" title=\"{}\">{}</span>",
                        xml_attr(layer),
                        xml_text(&short_digest(layer))
                    )?,
                    None => write!(html, "layer <code>{}</code>", xml_text(layer))?,
                }
            }
            if path.is_none() && layer.is_none() {
                html.push_str("the image as a whole");
            }
            html.push_str("</p>\n");
        }
        Location::File => {
            write!(
                html,
                "<p class=\"where\"><code>{}</code></p>\n",
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
    write!(
        html,
        "<span class=\"ln\">{line}</span>{}<mark>{}</mark>{}\n",
        xml_text(&text[..from]),
        xml_text(&text[from..to]),
        xml_text(&text[to..])
    )
}

/// One bar per layer, as long as the bytes it adds (its wasted part marked), with the history line
/// that made it and a count of the findings it carries.
fn write_layers(
    html: &mut String,
    anchor: &str,
    image: &ImageSummary,
    diagnostics: &[&Diagnostic],
) -> fmt::Result {
    write!(
        html,
        "<div class=\"card layers\">\n<h3>Layers <span class=\"count\">{}</span></h3>\n",
        image.layers.len()
    )?;
    let largest = image
        .layers
        .iter()
        .map(|layer| layer.usage.bytes_added)
        .max()
        .unwrap_or(0)
        .max(1);
    html.push_str("<ol class=\"layer-bars\">\n");
    for layer in &image.layers {
        let number = layer.index + 1;
        let usage = &layer.usage;
        let findings = diagnostics
            .iter()
            .filter(|diag| match &diag.location {
                Location::Image {
                    layer: Some(name), ..
                } => name == &layer.diff_id || name == &layer.blob_digest,
                _ => false,
            })
            .count();
        let created_by = layer.created_by.as_deref().unwrap_or("");
        write!(
            html,
            "<li class=\"layer{empty}\" id=\"{anchor}-layer-{number}\" data-layer=\"{number}\" \
             data-bytes-added=\"{added}\" data-bytes-wasted=\"{wasted}\" data-files-added=\"{files}\">\
             <span class=\"num\">{number}</span>\
             <span class=\"bar\" title=\"{title}\"><span class=\"fill\" style=\"width:{fill:.2}%\">\
             <span class=\"waste\" style=\"width:{waste:.2}%\"></span></span></span>\
             <span class=\"bytes\">{human}</span>\
             <code class=\"cmd\" title=\"{created_by_attr}\">{shown}</code>",
            empty = if usage.bytes_added == 0 { " empty" } else { "" },
            added = usage.bytes_added,
            wasted = usage.bytes_wasted,
            files = usage.files_added,
            title = xml_attr(&format!(
                "{} added in {} files, {} of them wasted (deleted or overwritten later)",
                human_bytes(usage.bytes_added),
                usage.files_added,
                human_bytes(usage.bytes_wasted)
            )),
            fill = 100.0 * usage.bytes_added as f64 / largest as f64,
            waste = 100.0 * usage.bytes_wasted as f64 / usage.bytes_added.max(1) as f64,
            human = human_bytes(usage.bytes_added),
            created_by_attr = xml_attr(created_by),
            shown = xml_text(&history_line(created_by)),
        )?;
        if findings > 0 {
            write!(
                html,
                "<span class=\"layer-findings\">{findings} {}</span>",
                if findings == 1 { "finding" } else { "findings" }
            )?;
        }
        html.push_str("</li>\n");
        for name in &layer.clamped_names {
            write!(
                html,
                "<li class=\"layer-note\">entry <code>{}</code> points outside the root; read as inside it</li>\n",
                xml_text(name)
            )?;
        }
    }
    html.push_str("</ol>\n");
    if image.bytes_wasted > 0 {
        html.push_str(
            "<p class=\"muted\"><span class=\"key-waste\"></span> bytes a later layer deleted or overwrote: \
             shipped, never seen.</p>\n",
        );
    }
    html.push_str("</div>\n");
    Ok(())
}

/// A history line as a Dockerfile reads: `COPY dir:1a2b3c4d5e6f… in /usr/` rather than
/// `/bin/sh -c #(nop) COPY dir:<64 hex digits> in /usr/`. The page keeps the full line in `title`.
fn history_line(created_by: &str) -> String {
    let line = created_by.trim();
    let line = line.strip_suffix("# buildkit").unwrap_or(line).trim_end();
    let line = match line.strip_prefix("/bin/sh -c #(nop)") {
        Some(rest) => rest.trim_start().to_owned(),
        None => match line.strip_prefix("/bin/sh -c ") {
            Some(rest) => format!("RUN {rest}"),
            None => line.to_owned(),
        },
    };
    // Content digests of the legacy builder's COPY/ADD sources, shortened as `docker history` does.
    let mut shown = String::with_capacity(line.len());
    let mut rest = line.as_str();
    while let Some(at) = rest.find(':') {
        let (head, tail) = rest.split_at(at + 1);
        shown.push_str(head);
        let hex = tail
            .bytes()
            .take_while(|byte| byte.is_ascii_hexdigit())
            .count();
        if hex == 64 && (head.ends_with("file:") || head.ends_with("dir:")) {
            shown.push_str(&tail[..12]);
            shown.push('…');
            rest = &tail[64..];
        } else {
            rest = tail;
        }
    }
    shown.push_str(rest);
    shown.replace('\n', " ")
}

fn short_digest(digest: &str) -> String {
    match digest.split_once(':') {
        Some((algorithm, hex)) if hex.len() > 12 => format!("{algorithm}:{}…", &hex[..12]),
        _ => digest.to_owned(),
    }
}

/// The CUDA inventory: libraries, toolkits, torch, pip packages, NVIDIA environment and labels.
fn write_inventory(html: &mut String, image: &ImageSummary) -> fmt::Result {
    let inventory = &image.inventory;
    html.push_str("<div class=\"card inventory\">\n<h3>CUDA inventory</h3>\n");
    let mut libraries: Vec<_> = inventory.libraries.iter().collect();
    libraries.sort_by(|a, b| (a.family, &a.path).cmp(&(b.family, &b.path)));
    if libraries.is_empty() {
        html.push_str("<p class=\"empty\">No CUDA libraries (runtime, CUPTI, cuDNN, NCCL, cuBLAS).</p>\n");
    } else {
        html.push_str(
            "<table class=\"libraries\">\n<tr><th>library</th><th>version</th><th>path</th>\
             <th>SONAME</th><th class=\"num\">size</th></tr>\n",
        );
        for library in libraries {
            let family = match library.family {
                crate::image::inventory::LibraryFamily::CudaRuntime => "CUDA runtime",
                crate::image::inventory::LibraryFamily::Cupti => "CUPTI",
                crate::image::inventory::LibraryFamily::Cudnn => "cuDNN",
                crate::image::inventory::LibraryFamily::Nccl => "NCCL",
                crate::image::inventory::LibraryFamily::Cublas => "cuBLAS",
            };
            write!(
                html,
                "<tr class=\"library\" data-path=\"{path_attr}\" data-bytes=\"{bytes}\">\
                 <td>{family}{pip}</td><td>{version}</td><td><code>{path}</code></td>\
                 <td><code>{soname}</code></td><td class=\"num\">{size}</td></tr>\n",
                path_attr = xml_attr(&library.path),
                bytes = library.size,
                pip = if library.pip {
                    " <span class=\"tag\">pip</span>"
                } else {
                    ""
                },
                version = xml_text(
                    library
                        .release
                        .as_deref()
                        .or(library.version.as_deref())
                        .unwrap_or("?")
                ),
                path = xml_text(&library.path),
                soname = xml_text(library.soname.as_deref().unwrap_or("")),
                size = human_bytes(library.size),
            )?;
        }
        html.push_str("</table>\n");
    }
    let mut items: Vec<String> = Vec::new();
    for toolkit in &inventory.toolkits {
        items.push(format!(
            "CUDA toolkit <strong>{}</strong> <code>{}</code>",
            xml_text(toolkit.version.as_deref().unwrap_or("?")),
            xml_text(&toolkit.path)
        ));
    }
    for torch in &inventory.torch {
        items.push(format!(
            "torch <strong>{}</strong> built for {} <code>{}</code>",
            xml_text(torch.version.as_deref().unwrap_or("?")),
            match &torch.cuda {
                Some(cuda) => format!("CUDA <strong>{}</strong>", xml_text(cuda)),
                None => "no CUDA (CPU)".to_owned(),
            },
            xml_text(&torch.path)
        ));
    }
    if !items.is_empty() {
        html.push_str("<ul class=\"plain\">\n");
        for item in items {
            write!(html, "<li>{item}</li>\n")?;
        }
        html.push_str("</ul>\n");
    }
    for (title, packages) in [
        ("NVIDIA pip packages", &inventory.nvidia_packages),
        ("CUDA Python packages", &inventory.cuda_python_packages),
    ] {
        if packages.is_empty() {
            continue;
        }
        write!(html, "<h4>{title}</h4>\n<ul class=\"packages\">")?;
        for package in packages {
            write!(
                html,
                "<li title=\"{}\"><strong>{}</strong> {}</li>",
                xml_attr(&package.path),
                xml_text(&package.name),
                xml_text(&package.version)
            )?;
        }
        html.push_str("</ul>\n");
    }
    for (title, map) in [
        ("NVIDIA environment", &inventory.nvidia_env),
        ("NVIDIA labels", &inventory.nvidia_labels),
    ] {
        if map.is_empty() {
            continue;
        }
        write!(html, "<h4>{title}</h4>\n<table class=\"pairs\">\n")?;
        for (key, value) in map {
            write!(
                html,
                "<tr><td><code>{}</code></td><td><code>{}</code></td></tr>\n",
                xml_text(key),
                xml_text(value)
            )?;
        }
        html.push_str("</table>\n");
    }
    html.push_str("</div>\n");
    Ok(())
}

/// Duplicated CUDA libraries and the dead copies behind the wasted bytes.
fn write_waste(html: &mut String, image: &ImageSummary) -> fmt::Result {
    if !image.duplicates.is_empty() {
        html.push_str(
            "<div class=\"card duplicates\">\n<h3>CUDA libraries shipped more than once</h3>\n\
             <table>\n<tr><th>SONAME</th><th>kept</th><th>extra copies</th><th class=\"num\">saved by keeping one</th></tr>\n",
        );
        for group in &image.duplicates {
            let extra: Vec<String> = group
                .extra
                .iter()
                .map(|copy| {
                    format!(
                        "<code>{}</code> <span class=\"muted\">layer {}</span>",
                        xml_text(&copy.path),
                        copy.layer + 1
                    )
                })
                .collect();
            write!(
                html,
                "<tr data-bytes=\"{saved}\"><td><code>{soname}</code></td>\
                 <td><code>{kept}</code> <span class=\"muted\">layer {layer}</span></td>\
                 <td>{extra}</td><td class=\"num\">{human}</td></tr>\n",
                saved = group.saved_bytes(),
                soname = xml_text(&group.soname),
                kept = xml_text(&group.kept.path),
                layer = group.kept.layer + 1,
                extra = extra.join("<br>"),
                human = human_bytes(group.saved_bytes()),
            )?;
        }
        html.push_str("</table>\n</div>\n");
    }
    if !image.dead_copies.is_empty() {
        let mut copies: Vec<_> = image.dead_copies.iter().collect();
        copies.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
        write!(
            html,
            "<div class=\"card dead\">\n<h3>Wasted: files a later layer deleted or overwrote \
             <span class=\"count\">{}</span></h3>\n<table>\n<tr><th>path</th><th class=\"num\">size</th>\
             <th>added in</th><th>then</th></tr>\n",
            copies.len()
        )?;
        for copy in copies.iter().take(MAX_DEAD_COPIES) {
            write!(
                html,
                "<tr data-bytes=\"{bytes}\"><td><code>{path}</code></td><td class=\"num\">{human}</td>\
                 <td>layer {layer}</td><td>{how} in layer {by}</td></tr>\n",
                bytes = copy.size,
                path = xml_text(&copy.path),
                human = human_bytes(copy.size),
                layer = copy.layer + 1,
                how = if copy.deleted {
                    "deleted"
                } else {
                    "overwritten"
                },
                by = copy.by_layer + 1,
            )?;
        }
        html.push_str("</table>\n");
        if copies.len() > MAX_DEAD_COPIES {
            let rest = &copies[MAX_DEAD_COPIES..];
            write!(
                html,
                "<p class=\"muted\">…and {} smaller ones ({}); <code>--format json</code> lists them all.</p>\n",
                rest.len(),
                human_bytes(rest.iter().map(|copy| copy.size).sum())
            )?;
        }
        html.push_str("</div>\n");
    }
    Ok(())
}

/// The shared libraries the loader would not find.
fn write_unresolved(html: &mut String, image: &ImageSummary) -> fmt::Result {
    html.push_str("<div class=\"card unresolved\">\n<h3>Shared libraries</h3>\n");
    if image.unresolved_libraries.is_empty() {
        html.push_str(
            "<p class=\"empty clean\">Every DT_NEEDED resolves in the image or from the host driver.</p>\n",
        );
    } else {
        html.push_str(
            "<table>\n<tr><th>object</th><th>needs</th><th>layer</th></tr>\n",
        );
        for need in &image.unresolved_libraries {
            write!(
                html,
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td></tr>\n",
                xml_text(&need.object),
                xml_text(&need.needed),
                need.layer + 1
            )?;
        }
        html.push_str("</table>\n");
    }
    html.push_str("</div>\n");
    Ok(())
}

/// Text from a rule or the input, escaped, with `code spans` set as code (when the backticks pair
/// up; otherwise the text is shown as written).
fn prose(text: &str) -> String {
    let pieces: Vec<&str> = text.split('`').collect();
    if pieces.len() % 2 == 0 {
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
fn source_link(source: &str) -> String {
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

/// The numbers behind the page, as JSON: the fields keep `--format json`'s names and values.
#[derive(Serialize)]
struct PageData<'a> {
    version: u32,
    tool: DataTool<'a>,
    summary: DataSummary,
    findings: Vec<DataFinding<'a>>,
    images: Vec<DataImage<'a>>,
}

#[derive(Serialize)]
struct DataTool<'a> {
    name: &'static str,
    version: &'a str,
}

#[derive(Serialize)]
struct DataSummary {
    findings: usize,
    error: usize,
    warning: usize,
    info: usize,
    style: usize,
    inputs: usize,
    failed_inputs: usize,
}

#[derive(Serialize)]
struct DataFinding<'a> {
    code: &'a str,
    severity: Severity,
    origin: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct DataImage<'a> {
    reference: &'a str,
    breakdown: &'a SizeBreakdown,
    devel_bytes: &'a [(String, u64)],
    layers: Vec<DataLayer>,
    runtime_drivers: &'a [RuntimeDriver],
}

#[derive(Serialize)]
struct DataLayer {
    index: usize,
    bytes_added: u64,
    bytes_wasted: u64,
    files_added: u64,
}

fn write_data(html: &mut String, report: &Report<'_>) -> fmt::Result {
    let tally = Tally::of(report.diagnostics);
    let data = PageData {
        version: DATA_VERSION,
        tool: DataTool {
            name: "cudalint",
            version: report.tool_version,
        },
        summary: DataSummary {
            findings: tally.total,
            error: tally.error,
            warning: tally.warning,
            info: tally.info,
            style: tally.style,
            inputs: report.inputs.len(),
            failed_inputs: report.failed_inputs.len(),
        },
        findings: report
            .diagnostics
            .iter()
            .map(|diag| DataFinding {
                code: diag.code,
                severity: diag.severity,
                origin: &diag.origin,
                message: &diag.message,
            })
            .collect(),
        images: report
            .images
            .iter()
            .map(|image| DataImage {
                reference: &image.reference,
                breakdown: &image.breakdown,
                devel_bytes: &image.devel_bytes,
                layers: image
                    .layers
                    .iter()
                    .map(|layer| DataLayer {
                        index: layer.index,
                        bytes_added: layer.usage.bytes_added,
                        bytes_wasted: layer.usage.bytes_wasted,
                        files_added: layer.usage.files_added,
                    })
                    .collect(),
                runtime_drivers: &image.runtime_drivers,
            })
            .collect(),
    };
    let json = serde_json::to_string(&data).map_err(|_| fmt::Error)?;
    write!(
        html,
        "<script type=\"application/json\" id=\"cudalint-data\">{}</script>\n",
        script_safe(&json)
    )
}

/// JSON that cannot end its `<script>` element early or open a comment in it: `<`, `>` and `&`
/// only occur inside JSON strings, where `\u003c` means the same character.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_lines_read_like_instructions() {
        let digest = "4a2890370c2fe2078a8e3ab02b794e8921c9dc191bb614514145551ef1460193";
        assert_eq!(
            history_line(&format!("/bin/sh -c #(nop) COPY file:{digest} in /bin/busybox ")),
            "COPY file:4a2890370c2f… in /bin/busybox"
        );
        assert_eq!(
            history_line("/bin/sh -c apt-get update &&\n apt-get install -y x"),
            "RUN apt-get update &&  apt-get install -y x"
        );
        assert_eq!(
            history_line("RUN /bin/sh -c pip install torch # buildkit"),
            "RUN /bin/sh -c pip install torch"
        );
        assert_eq!(history_line("ENV A=b:c"), "ENV A=b:c");
    }

    #[test]
    fn prose_escapes_and_sets_code_spans() {
        assert_eq!(
            prose("`<b>` & \"x\""),
            "<code>&lt;b&gt;</code> &amp; \"x\""
        );
        assert_eq!(prose("one ` alone <"), "one ` alone &lt;");
    }

    #[test]
    fn script_data_cannot_close_its_element() {
        let json = serde_json::to_string("</script><!--&").unwrap();
        let safe = script_safe(&json);
        assert!(!safe.contains('<') && !safe.contains('>'));
        assert_eq!(
            serde_json::from_str::<String>(&safe).unwrap(),
            "</script><!--&"
        );
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
