//! The size card: an image's bytes by content as a treemap (the CUDA devel rectangle divided
//! into its categories) and a legend table that also lists the parts too small to draw.

use std::fmt::{self, Write as _};

use super::percent;
use super::treemap::{squarify, Rect};
use crate::image::content::SizeBreakdown;
use crate::image::summary::ImageSummary;
use crate::render::shared::{xml_attr, xml_text};
use crate::units::human_bytes;

/// The treemap's drawing area, in SVG user units (it scales to the card's width).
const TREEMAP: Rect = Rect {
    x: 0.0,
    y: 0.0,
    width: 720.0,
    height: 380.0,
};

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
        part(
            "python_packages",
            "Python packages",
            breakdown.python_packages,
        ),
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

/// The size treemap and its legend (which also lists the parts too small to draw).
pub(super) fn write_treemap(html: &mut String, anchor: &str, image: &ImageSummary) -> fmt::Result {
    let breakdown = &image.breakdown;
    let total = breakdown.total;
    let parts = parts(breakdown);
    let categories = devel_categories(image);
    writeln!(
        html,
        "<figure class=\"card size\" data-total=\"{total}\">\n<h3>Size by content</h3>"
    )?;
    if total == 0 {
        html.push_str("<p class=\"empty\">The layers add no bytes.</p>\n");
    } else {
        writeln!(
            html,
            "<svg class=\"treemap\" viewBox=\"{x} {y} {w} {h}\" role=\"img\" \
             aria-labelledby=\"{anchor}-size-caption\" data-total=\"{total}\">",
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
                for (index, ((name, bytes), cell)) in
                    categories.iter().zip(squarify(&sizes, inner)).enumerate()
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
    writeln!(
        html,
        "<figcaption id=\"{anchor}-size-caption\">\n<table class=\"legend\">"
    )?;
    for part in &parts {
        writeln!(
            html,
            "<tr class=\"legend-part p-{key}{zero}\" data-part=\"{key}\" data-bytes=\"{bytes}\">\
             <td><span class=\"swatch\"></span>{label}</td><td class=\"num\">{human}</td>\
             <td class=\"num\">{share}</td></tr>",
            key = part.key,
            zero = if part.bytes == 0 { " zero" } else { "" },
            bytes = part.bytes,
            label = part.label,
            human = human_bytes(part.bytes),
            share = percent(part.bytes, total),
        )?;
        if part.key == "cuda_devel" {
            for (index, (name, bytes)) in categories.iter().enumerate() {
                writeln!(
                    html,
                    "<tr class=\"legend-category d{shade}\" data-category=\"{attr}\" data-bytes=\"{bytes}\">\
                     <td><span class=\"swatch\"></span>{name}</td><td class=\"num\">{human}</td>\
                     <td class=\"num\">{share}</td></tr>",
                    shade = index % 5,
                    attr = xml_attr(name),
                    name = xml_text(name),
                    human = human_bytes(*bytes),
                    share = percent(*bytes, total),
                )?;
            }
        }
    }
    writeln!(
        html,
        "<tr class=\"legend-total\" data-bytes=\"{total}\"><td>total</td>\
         <td class=\"num\">{}</td><td></td></tr>\n</table>\n</figcaption>\n</figure>",
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
