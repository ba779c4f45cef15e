//! Code actions: each finding's fix (safe ones as the preferred quick fix,
//! unsafe ones labelled), "ignore this rule on this line / in this file" in
//! cudalint's own comment syntax, and `source.fixAll.cudalint`, which makes
//! exactly the edits `cudalint fix --write` makes.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, TextEdit, WorkspaceEdit};

use super::diagnostics::LintResult;
use super::documents::{Document, Encoding};
use crate::diagnostic::{FixSafety, Location};
use crate::engine::Engine;
use crate::fix::{fix_source, FixOptions};
use crate::source::{SourceFile, Span};

/// The kind of the fix-everything action (`editor.codeActionsOnSave`).
pub const FIX_ALL: &str = "source.fixAll.cudalint";

/// What the client asks for.
pub struct Request<'a> {
    pub span: Span,
    /// `context.only`: the kinds wanted (none: every kind).
    pub only: Option<&'a [String]>,
}

impl Request<'_> {
    fn wants(&self, kind: &CodeActionKind) -> bool {
        self.only.is_none_or(|only| {
            only.iter().any(|wanted| {
                kind.as_str() == wanted.as_str()
                    || kind.as_str().starts_with(&format!("{}.", wanted.as_str()))
            })
        })
    }
}

/// The actions for `request` in `document`, whose latest lint is `lint`.
pub fn actions(
    engine: &Engine,
    document: &Document,
    lint: &LintResult,
    request: &Request<'_>,
    encoding: Encoding,
) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    let edit_of = |edits: Vec<TextEdit>| WorkspaceEdit {
        changes: Some(HashMap::from([(document.uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    };
    if request.wants(&CodeActionKind::QUICKFIX) {
        let instructions = crate::dockerfile::parse_syntax(&document.text)
            .map(|(dockerfile, _)| dockerfile.instructions)
            .unwrap_or_default();
        let mut ignores_offered: Vec<(String, usize)> = Vec::new();
        let mut file_ignores_offered: Vec<&str> = Vec::new();
        for (finding, published) in lint.findings.iter().zip(&lint.published) {
            let span = match &finding.location {
                Location::Source { span, .. } => *span,
                _ => Span::default(),
            };
            if !(span.start <= request.span.end && request.span.start <= span.end) {
                continue;
            }
            if let Some(fix) = &finding.fix {
                let unsafe_note = match fix.safety {
                    FixSafety::Safe => "",
                    FixSafety::Unsafe => " (unsafe: may change behaviour)",
                };
                let edits = fix
                    .edits
                    .iter()
                    .map(|edit| TextEdit {
                        range: document.range(edit.span, encoding),
                        new_text: edit.replacement.clone(),
                    })
                    .collect();
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("{}: {}{unsafe_note}", finding.code, fix.description),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![published.clone()]),
                    edit: Some(edit_of(edits)),
                    is_preferred: Some(fix.safety == FixSafety::Safe),
                    ..CodeAction::default()
                }));
            }
            // CU001 (the file does not parse) and CU000 (a crash) cannot be
            // silenced by a comment; the rest can.
            if matches!(finding.code, "CU000" | "CU001") {
                continue;
            }
            if let Some(instruction) = instructions
                .iter()
                .find(|i| i.span.start <= span.start && span.start <= i.span.end)
            {
                let key = (finding.code.to_string(), instruction.span.start);
                if !ignores_offered.contains(&key) {
                    ignores_offered.push(key);
                    let line_start = document.text[..instruction.span.start]
                        .rfind('\n')
                        .map_or(0, |i| i + 1);
                    let indent = &document.text[line_start..instruction.span.start];
                    let indent: String = indent.chars().take_while(|c| c.is_whitespace()).collect();
                    let at = document.range(Span::new(line_start, line_start), encoding);
                    out.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: format!("Ignore {} on this line", finding.code),
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(vec![published.clone()]),
                        edit: Some(edit_of(vec![TextEdit {
                            range: at,
                            new_text: format!("{indent}# cudalint ignore={}\n", finding.code),
                        }])),
                        ..CodeAction::default()
                    }));
                }
            }
            if !file_ignores_offered.contains(&finding.code) {
                file_ignores_offered.push(finding.code);
                let at = after_parser_directives(&document.text);
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Ignore {} in this file", finding.code),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![published.clone()]),
                    edit: Some(edit_of(vec![TextEdit {
                        range: document.range(Span::new(at, at), encoding),
                        new_text: format!("# cudalint global ignore={}\n", finding.code),
                    }])),
                    ..CodeAction::default()
                }));
            }
        }
    }
    let fix_all_kind = CodeActionKind::from(FIX_ALL);
    if request.wants(&fix_all_kind) {
        if let Some(edit) = fix_all(engine, document, encoding) {
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Fix all safe cudalint findings".into(),
                kind: Some(fix_all_kind),
                edit: Some(edit_of(vec![edit])),
                ..CodeAction::default()
            }));
        }
    }
    out
}

/// The edit `cudalint fix --write` would make to `document`: one
/// replacement of the part that changes; `None` when nothing does.
pub fn fix_all(engine: &Engine, document: &Document, encoding: Encoding) -> Option<TextEdit> {
    let source = SourceFile::new(document.uri.to_string(), document.text.clone());
    let fixed = fix_source(engine, &source, FixOptions::default()).text;
    if fixed == document.text {
        return None;
    }
    let old = document.text.as_str();
    let mut prefix = old
        .bytes()
        .zip(fixed.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(prefix) || !fixed.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let mut suffix = old[prefix..]
        .bytes()
        .rev()
        .zip(fixed[prefix..].bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !fixed.is_char_boundary(fixed.len() - suffix)
    {
        suffix -= 1;
    }
    Some(TextEdit {
        range: document.range(Span::new(prefix, old.len() - suffix), encoding),
        new_text: fixed[prefix..fixed.len() - suffix].to_string(),
    })
}

/// Where a file-wide comment may go: after the parser directives
/// (`# syntax=`, `# escape=`, `# check=`), which BuildKit reads only while
/// nothing else comes before them.
fn after_parser_directives(text: &str) -> usize {
    let is_directive = |line: &str| {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            return false;
        };
        let Some((name, _)) = rest.split_once('=') else {
            return false;
        };
        ["syntax", "escape", "check"].contains(&name.trim().to_ascii_lowercase().as_str())
    };
    text.split_inclusive('\n')
        .take_while(|line| is_directive(line))
        .map(str::len)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_wide_comments_go_after_parser_directives() {
        assert_eq!(
            after_parser_directives("# syntax=docker/dockerfile:1\nFROM a\n"),
            29
        );
        assert_eq!(after_parser_directives("FROM a\n"), 0);
        assert_eq!(after_parser_directives("# hello\n# syntax=x\nFROM a\n"), 0);
    }
}
