//! The numbers behind the page as JSON, in `<script type="application/json" id="cudalint-data">`,
//! for tools and tests: the size breakdown, devel bytes, layers and minimum drivers of each image
//! and the findings, under the names and with the values `--format json` gives them.

use std::fmt::{self, Write as _};

use serde::Serialize;

use crate::diagnostic::Severity;
use crate::image::content::SizeBreakdown;
use crate::image::summary::RuntimeDriver;
use crate::render::shared::Tally;
use crate::render::Report;

/// Bumped when a field changes meaning or disappears.
const DATA_VERSION: u32 = 1;

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

pub(super) fn write_data(html: &mut String, report: &Report<'_>) -> fmt::Result {
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
    writeln!(
        html,
        "<script type=\"application/json\" id=\"cudalint-data\">{}</script>",
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
    fn script_data_cannot_close_its_element() {
        let json = serde_json::to_string("</script><!--&").unwrap();
        let safe = script_safe(&json);
        assert!(!safe.contains('<') && !safe.contains('>'));
        assert_eq!(
            serde_json::from_str::<String>(&safe).unwrap(),
            "</script><!--&"
        );
    }
}
