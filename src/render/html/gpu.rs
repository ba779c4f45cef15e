//! The GPU code of an image as a matrix: one row per library family, one column per architecture;
//! a cell says SASS, PTX or both. Under it, the GPUs of the data no library loaded at start has a
//! kernel for.

use std::fmt::{self, Write as _};

use crate::image::gpu::families;
use crate::image::summary::ImageSummary;
use crate::render::shared::xml_text;

/// The number in `sm_90a`, for ordering the columns.
fn arch_number(name: &str) -> u32 {
    let digits: String = name.chars().filter(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(0)
}

pub(super) fn write_gpu_code(html: &mut String, image: &ImageSummary) -> fmt::Result {
    let rows = families(&image.gpu_code);
    if rows.is_empty() {
        return Ok(());
    }
    let mut columns: Vec<String> = rows
        .iter()
        .flat_map(|row| row.sass.iter().chain(&row.ptx).cloned())
        .collect();
    columns.sort_by_key(|name| (arch_number(name), name.clone()));
    columns.dedup();
    html.push_str("<div class=\"card gpu-code\">\n<h3>GPU code</h3>\n<table class=\"gpu-matrix\">\n<tr><th>library</th>");
    for column in &columns {
        write!(html, "<th>{}</th>", xml_text(column))?;
    }
    html.push_str("</tr>\n");
    for row in &rows {
        write!(html, "<tr><td><code>{}</code></td>", xml_text(&row.family))?;
        for column in &columns {
            let cell = match (row.sass.contains(column), row.ptx.contains(column)) {
                (true, true) => "SASS+PTX",
                (true, false) => "SASS",
                (false, true) => "PTX",
                (false, false) => "",
            };
            write!(html, "<td>{cell}</td>")?;
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
    if !image.no_kernel_for.is_empty() {
        writeln!(
            html,
            "<p>No kernel for: {}</p>",
            xml_text(&image.no_kernel_for.join(", "))
        )?;
    }
    html.push_str("</div>\n");
    Ok(())
}
