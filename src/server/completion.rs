//! Completion where cudalint knows the answer: rule codes and names after
//! `# cudalint ignore=` (and after each comma of its list), and `nvidia/cuda:`
//! tags from the knowledge's release catalogue (every published
//! version-variant-OS, newest release first, end-of-life ones marked
//! deprecated and removed ones left out).

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionItemTag, CompletionTextEdit, Documentation,
    TextEdit,
};

use super::documents::{Document, Encoding};
use crate::engine::{Engine, INTERNAL_ERROR};
use crate::knowledge::images::ReleaseStatus;
use crate::source::Span;

/// The characters that open a completion.
pub const TRIGGER_CHARACTERS: [&str; 3] = ["=", ",", ":"];

/// The completion items at byte `offset` of `document`.
pub fn complete(
    engine: &Engine,
    document: &Document,
    offset: usize,
    encoding: Encoding,
) -> Vec<CompletionItem> {
    let line_start = document.text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &document.text[line_start..offset];
    if let Some(partial) = suppression_partial(before) {
        let range = document.range(Span::new(offset - partial.len(), offset), encoding);
        return rule_items(engine, range);
    }
    if let Some(partial) = cuda_tag_partial(before) {
        let range = document.range(Span::new(offset - partial.len(), offset), encoding);
        return tag_items(engine, range);
    }
    Vec::new()
}

/// The rule name being typed when `before` (the line up to the cursor) is
/// inside a `# cudalint [global] ignore=` list.
fn suppression_partial(before: &str) -> Option<&str> {
    let rest = before.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("cudalint")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut rest = rest.trim_start();
    if let Some(after) = rest.strip_prefix("global") {
        if after.starts_with(char::is_whitespace) {
            rest = after.trim_start();
        }
    }
    let list = rest
        .strip_prefix("ignore")?
        .trim_start()
        .strip_prefix('=')?;
    let partial = list.rsplit(',').next().unwrap_or("").trim_start();
    // After the list comes free text (`ignore=CU104 pinned on purpose`).
    (!partial.contains(char::is_whitespace)).then_some(partial)
}

/// The tag being typed after `nvidia/cuda:` (any registry in front).
fn cuda_tag_partial(before: &str) -> Option<&str> {
    let at = before.rfind("nvidia/cuda:")?;
    let partial = &before[at + "nvidia/cuda:".len()..];
    partial
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .then_some(partial)
}

fn rule_items(engine: &Engine, range: lsp_types::Range) -> Vec<CompletionItem> {
    let mut items = Vec::new();
    for (rank, meta) in engine
        .rule_metas()
        .iter()
        .filter(|meta| meta.code != INTERNAL_ERROR.code)
        .enumerate()
    {
        for (label, detail) in [(meta.code, meta.name), (meta.name, meta.code)] {
            items.push(CompletionItem {
                label: label.to_string(),
                kind: Some(CompletionItemKind::VALUE),
                detail: Some(format!("{detail} ({})", meta.default_severity)),
                documentation: Some(Documentation::String(meta.summary.to_string())),
                sort_text: Some(format!("{rank:04}{}", u8::from(label == meta.name))),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                    range,
                    new_text: label.to_string(),
                })),
                ..CompletionItem::default()
            });
        }
    }
    items
}

fn tag_items(engine: &Engine, range: lsp_types::Range) -> Vec<CompletionItem> {
    let mut releases: Vec<_> = engine
        .options()
        .knowledge
        .images
        .releases
        .iter()
        .filter(|release| release.status != ReleaseStatus::Removed)
        .collect();
    releases.sort_by_key(|release| std::cmp::Reverse(release.version));
    let mut items: Vec<CompletionItem> = Vec::new();
    for release in releases {
        let eol = release.status == ReleaseStatus::Eol;
        for group in &release.published {
            for os in &group.os {
                for middle in &group.tags {
                    let tag = format!("{}-{middle}-{os}", release.version);
                    if items.iter().any(|item| item.label == tag) {
                        continue;
                    }
                    let status = if eol {
                        match &release.superseded_by {
                            Some(newer) => format!("end of life, superseded by {newer}"),
                            None => "end of life".to_string(),
                        }
                    } else {
                        "supported".to_string()
                    };
                    items.push(CompletionItem {
                        label: tag.clone(),
                        kind: Some(CompletionItemKind::CONSTANT),
                        detail: Some(format!(
                            "CUDA {} {middle} on {os}: {status}",
                            release.version
                        )),
                        tags: eol.then(|| vec![CompletionItemTag::DEPRECATED]),
                        sort_text: Some(format!("{:05}", items.len())),
                        text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                            range,
                            new_text: tag,
                        })),
                        ..CompletionItem::default()
                    });
                }
            }
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_is_being_typed() {
        assert_eq!(suppression_partial("# cudalint ignore="), Some(""));
        assert_eq!(
            suppression_partial("  #cudalint global ignore=CU101, unu"),
            Some("unu")
        );
        assert_eq!(suppression_partial("# cudalint ignore=CU104 pinned"), None);
        assert_eq!(suppression_partial("# cudalintx ignore="), None);
        assert_eq!(cuda_tag_partial("FROM nvidia/cuda:12."), Some("12."));
        assert_eq!(cuda_tag_partial("FROM nvcr.io/nvidia/cuda:"), Some(""));
        assert_eq!(cuda_tag_partial("FROM nvidia/cuda:12 AS x"), None);
    }
}
