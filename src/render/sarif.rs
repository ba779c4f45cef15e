//! SARIF 2.1.0 (OASIS), the format code-scanning services ingest (GitHub,
//! GitLab, Azure DevOps): one run, every registered rule in
//! `tool.driver.rules`, one result per finding, fixes as byte replacements,
//! and an invocation whose notifications name the inputs that could not be
//! linted.

use std::io::{self, Write};

use serde_json::{json, Map, Value};

use super::shared::{fingerprint, path_to_uri, positions, rule_of, INPUT_ERROR_CHECK};
use super::{rule_doc_url, Report, TOOL_INFORMATION_URI};

/// The notification id for "the built-in knowledge is old".
const KNOWLEDGE_NOTICE: &str = "knowledge-age";
use crate::diagnostic::{Diagnostic, Fix, Location, Severity};
use crate::rule_meta::RuleMeta;

const SARIF_SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const SARIF_VERSION: &str = "2.1.0";

/// Key of the line-independent fingerprint; the `/v1` suffix is SARIF's
/// convention for versioning how a fingerprint is computed.
const FINGERPRINT_KEY: &str = "cudalint/v1";

pub(super) fn render(report: &Report<'_>, out: &mut dyn Write) -> io::Result<()> {
    let rules: Vec<Value> = report
        .rules
        .iter()
        .map(|meta| rule(meta, report.doc_url_base))
        .collect();
    let results: Vec<Value> = report
        .diagnostics
        .iter()
        .map(|diag| result(report, diag))
        .collect();
    let log = json!({
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {
                "driver": {
                    "name": "cudalint",
                    "version": report.tool_version,
                    "informationUri": TOOL_INFORMATION_URI,
                    "rules": rules,
                }
            },
            // Our columns count Unicode scalar values, not SARIF's default
            // UTF-16 code units.
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation(report)],
            "results": results,
        }]
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}

/// The run's invocation: successful only when every input was read. Each
/// input that was not becomes an error notification located at it, which
/// is how SARIF tells a consumer that the results are incomplete.
fn invocation(report: &Report<'_>) -> Value {
    let mut invocation = Map::new();
    invocation.insert(
        "executionSuccessful".into(),
        report.failed_inputs.is_empty().into(),
    );
    let mut notifications: Vec<Value> = report
        .notices
        .iter()
        .map(|notice| {
            json!({
                "descriptor": { "id": KNOWLEDGE_NOTICE },
                "level": "warning",
                "message": { "text": notice },
            })
        })
        .collect();
    if !report.failed_inputs.is_empty() {
        let failed: Vec<Value> = report
            .failed_inputs
            .iter()
            .map(|failed| {
                json!({
                    "descriptor": { "id": INPUT_ERROR_CHECK },
                    "level": "error",
                    "message": { "text": failed.sentence() },
                    "locations": [{
                        "physicalLocation": {
                            "artifactLocation": { "uri": path_to_uri(&failed.name) }
                        }
                    }],
                })
            })
            .collect();
        notifications.extend(failed);
    }
    if !notifications.is_empty() {
        invocation.insert("toolExecutionNotifications".into(), notifications.into());
    }
    invocation.into()
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Style => "note",
    }
}

fn rule(meta: &RuleMeta, base: Option<&str>) -> Value {
    let doc = meta.doc();
    let described = doc_section(doc, "What it does").unwrap_or(meta.summary);
    let mut help = Map::new();
    help.insert("text".into(), described.into());
    if !doc.trim().is_empty() {
        help.insert("markdown".into(), doc.into());
    }
    let mut descriptor = json!({
        "id": meta.code,
        "name": meta.name,
        "shortDescription": { "text": meta.summary },
        "fullDescription": { "text": described },
        "help": help,
        "defaultConfiguration": { "level": level(meta.default_severity) },
        "properties": { "tags": [meta.category] },
    });
    if let Some(uri) = rule_doc_url(base, meta.code) {
        descriptor["helpUri"] = uri.into();
    }
    descriptor
}

/// The body of the `## heading` section of a rule doc, if it has one.
fn doc_section<'d>(doc: &'d str, heading: &str) -> Option<&'d str> {
    let mut lines = doc.split_inclusive('\n');
    let mut offset = 0;
    for line in lines.by_ref() {
        offset += line.len();
        if line.trim_end().strip_prefix("## ").map(str::trim) == Some(heading) {
            break;
        }
    }
    if offset >= doc.len() {
        return None;
    }
    let rest = doc.get(offset..)?;
    let end = rest
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .find(|&i| rest.get(i..).is_some_and(|tail| tail.starts_with("## ")))
        .unwrap_or(rest.len());
    let body = rest.get(..end)?.trim();
    (!body.is_empty()).then_some(body)
}

fn result(report: &Report<'_>, diag: &Diagnostic) -> Value {
    let mut result = Map::new();
    result.insert("ruleId".into(), diag.code.into());
    if let Some((index, _)) = rule_of(report, diag.code) {
        result.insert("ruleIndex".into(), index.into());
    }
    result.insert("level".into(), level(diag.severity).into());
    result.insert("message".into(), json!({ "text": diag.message }));
    result.insert("locations".into(), json!([location(report, diag)]));
    if !diag.related.is_empty() {
        let related: Vec<Value> = diag
            .related
            .iter()
            .enumerate()
            .map(|(id, related)| {
                json!({
                    "id": id,
                    "message": { "text": related.message },
                    "physicalLocation": {
                        "artifactLocation": { "uri": path_to_uri(&related.origin) },
                        "region": {
                            "startLine": related.start.line,
                            "startColumn": related.start.column,
                            "endLine": related.end.line,
                            "endColumn": related.end.column,
                        },
                    },
                })
            })
            .collect();
        result.insert("relatedLocations".into(), related.into());
    }
    // Line-independent, so a finding keeps its identity when lines move.
    result.insert(
        "partialFingerprints".into(),
        json!({ FINGERPRINT_KEY: fingerprint(&[&diag.origin, diag.code, &diag.message]) }),
    );
    if let Some(fix) = diag.fix.as_ref().and_then(|fix| sarif_fix(diag, fix)) {
        result.insert("fixes".into(), json!([fix]));
    }
    let mut properties = Map::new();
    if let Some(help) = &diag.help {
        properties.insert("help".into(), help.as_str().into());
    }
    if !diag.notes.is_empty() {
        properties.insert("notes".into(), diag.notes.clone().into());
    }
    if !diag.sources.is_empty() {
        properties.insert("sources".into(), diag.sources.clone().into());
    }
    if let Location::Image {
        layer: Some(layer), ..
    } = &diag.location
    {
        properties.insert("layer".into(), layer.as_str().into());
    }
    if !properties.is_empty() {
        result.insert("properties".into(), properties.into());
    }
    result.into()
}

fn location(report: &Report<'_>, diag: &Diagnostic) -> Value {
    let artifact = json!({ "uri": path_to_uri(&diag.origin) });
    match &diag.location {
        Location::Source { span, .. } => {
            let mut region = Map::new();
            if let Some((start, end)) = positions(report, diag) {
                region.insert("startLine".into(), start.line.into());
                region.insert("startColumn".into(), start.column.into());
                if let Some(end) = end {
                    region.insert("endLine".into(), end.line.into());
                    region.insert("endColumn".into(), end.column.into());
                }
            }
            region.insert("byteOffset".into(), span.start.into());
            region.insert(
                "byteLength".into(),
                span.end.saturating_sub(span.start).into(),
            );
            json!({ "physicalLocation": { "artifactLocation": artifact, "region": region } })
        }
        Location::Image { layer, path } => {
            // A path inside an image is no file in the repository: it is
            // named relative to the image root, and as a logical location
            // qualified by the image, without a region.
            let mut location = Map::new();
            if let Some(path) = path {
                let relative = path.trim_start_matches('/');
                let mut described = format!("in image {}", diag.origin);
                if let Some(layer) = layer {
                    described.push_str(&format!(", layer {layer}"));
                }
                location.insert(
                    "physicalLocation".into(),
                    json!({ "artifactLocation": {
                        "uri": path_to_uri(relative),
                        "description": { "text": described },
                    } }),
                );
            }
            // Most specific first: the path, the layer that wrote it, the image.
            let image = diag.origin.as_str();
            let mut logical = Vec::new();
            if let Some(path) = path {
                let qualified = match layer {
                    Some(layer) => format!("{image}@{layer}:{path}"),
                    None => format!("{image}:{path}"),
                };
                logical.push(
                    json!({ "name": path, "fullyQualifiedName": qualified, "kind": "resource" }),
                );
            }
            if let Some(layer) = layer {
                logical.push(json!({ "name": layer, "fullyQualifiedName": format!("{image}@{layer}"), "kind": "module" }));
            }
            logical.push(json!({ "name": image, "fullyQualifiedName": image, "kind": "package" }));
            location.insert("logicalLocations".into(), logical.into());
            location.into()
        }
        Location::File => json!({ "physicalLocation": { "artifactLocation": artifact } }),
    }
}

/// A fix as SARIF byte replacements in the finding's own file; SARIF
/// requires at least one replacement, so an edit-less fix is left out.
fn sarif_fix(diag: &Diagnostic, fix: &Fix) -> Option<Value> {
    if fix.edits.is_empty() || !matches!(diag.location, Location::Source { .. }) {
        return None;
    }
    let replacements: Vec<Value> = fix
        .edits
        .iter()
        .map(|edit| {
            json!({
                "deletedRegion": {
                    "byteOffset": edit.span.start,
                    "byteLength": edit.span.end.saturating_sub(edit.span.start),
                },
                "insertedContent": { "text": edit.replacement },
            })
        })
        .collect();
    Some(json!({
        "description": { "text": fix.description },
        "artifactChanges": [{
            "artifactLocation": { "uri": path_to_uri(&diag.origin) },
            "replacements": replacements,
        }],
    }))
}

#[cfg(test)]
mod tests {
    use super::doc_section;

    #[test]
    fn doc_section_takes_one_section_body() {
        let doc = "# CU1\n\n## What it does\nFlags X.\n\nMore.\n## Why is this bad?\nY\n";
        assert_eq!(doc_section(doc, "What it does"), Some("Flags X.\n\nMore."));
        assert_eq!(doc_section(doc, "Why is this bad?"), Some("Y"));
        assert_eq!(doc_section(doc, "Example"), None);
        assert_eq!(doc_section("", "What it does"), None);
    }
}
