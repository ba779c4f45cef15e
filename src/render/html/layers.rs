//! The layers card: one bar per layer, as long as the bytes it adds with its wasted part marked,
//! beside the history line that made it.

use std::fmt::{self, Write as _};

use crate::diagnostic::{Diagnostic, Location};
use crate::image::summary::ImageSummary;
use crate::render::shared::{xml_attr, xml_text};
use crate::units::human_bytes;

/// One bar per layer, as long as the bytes it adds (its wasted part marked), with the history line
/// that made it and a count of the findings it carries.
pub(super) fn write_layers(
    html: &mut String,
    anchor: &str,
    image: &ImageSummary,
    diagnostics: &[&Diagnostic],
) -> fmt::Result {
    writeln!(
        html,
        "<div class=\"card layers\">\n<h3>Layers <span class=\"count\">{}</span></h3>",
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
                } => layer_number(image, name) == Some(number),
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
            writeln!(
                html,
                "<li class=\"layer-note\">entry <code>{}</code> points outside the root; read as inside it</li>",
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

/// The 1-based number of the layer a finding names: by its diff ID or blob digest, or `#N` for a
/// layer without a digest.
pub(super) fn layer_number(image: &ImageSummary, name: &str) -> Option<usize> {
    let index = match name.strip_prefix('#') {
        Some(number) => number.parse::<usize>().ok()?.checked_sub(1)?,
        None => {
            image
                .layers
                .iter()
                .find(|layer| layer.diff_id == name || layer.blob_digest == name)?
                .index
        }
    };
    image
        .layers
        .iter()
        .any(|layer| layer.index == index)
        .then_some(index + 1)
}

pub(super) fn short_digest(digest: &str) -> String {
    match digest.split_once(':') {
        Some((algorithm, hex)) if hex.len() > 12 => format!("{algorithm}:{}…", &hex[..12]),
        _ => digest.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_lines_read_like_instructions() {
        let digest = "4a2890370c2fe2078a8e3ab02b794e8921c9dc191bb614514145551ef1460193";
        assert_eq!(
            history_line(&format!(
                "/bin/sh -c #(nop) COPY file:{digest} in /bin/busybox "
            )),
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
}
