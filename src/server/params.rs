//! The parameters the server reads from the client, as our own serde types.
//!
//! lsp_types' request types deserialise every member the LSP specification
//! defines: `InitializeParams` carries the whole `ClientCapabilities` (the
//! options of every client feature: 38 structs of client capabilities),
//! `CodeActionParams` every diagnostic the client echoes back. The server
//! reads a handful of those members, and the serde code for the rest was
//! about 0.35 MB of the release binary (issue 22). So what arrives is read
//! into the types below, which hold only what the server reads; what the
//! server sends (capabilities, diagnostics, hovers, edits) stays lsp_types'.
//!
//! Each type keeps its lsp_types name and each member its lsp_types type
//! (a `String` where lsp_types wraps one, as `PositionEncodingKind` does),
//! so a member that is missing or of the wrong type fails as it did, with
//! the same message ("missing field `textDocument`", "invalid type: integer
//! `3`, expected struct TextDocumentIdentifier"); a required member of an
//! object the server reads stays required even where it is not read
//! (`context.diagnostics`). Members the server does not read are ignored,
//! as unknown members always were: a malformed one (a `workDoneToken` that
//! is a list, a capability of the wrong shape) no longer fails the message.
//! The tests below hold both to the same JSON. (One form they leave out: a
//! JSON array in place of an object, which serde reads as the members in
//! order, now counts our members rather than lsp_types'. No client sends it.)

use lsp_types::Url;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

/// `initialize`: the capabilities that choose the position encoding and
/// file watching, and the settings.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub initialization_options: Option<Value>,
    pub capabilities: ClientCapabilities,
}

#[derive(Debug, Deserialize)]
pub struct ClientCapabilities {
    pub workspace: Option<WorkspaceClientCapabilities>,
    pub general: Option<GeneralClientCapabilities>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceClientCapabilities {
    pub did_change_watched_files: Option<DidChangeWatchedFilesClientCapabilities>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidChangeWatchedFilesClientCapabilities {
    pub dynamic_registration: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneralClientCapabilities {
    /// `utf-8`, `utf-16`, `utf-32`, most preferred first.
    pub position_encodings: Option<Vec<String>>,
}

/// `textDocument/hover`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HoverParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
}

/// `textDocument/completion` (its `context`, the trigger, is not read: the
/// text before the cursor says what is being typed).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
}

/// `textDocument/codeAction`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeActionParams {
    pub text_document: TextDocumentIdentifier,
    pub range: Range,
    pub context: CodeActionContext,
}

#[derive(Debug, Deserialize)]
pub struct CodeActionContext {
    /// The client's diagnostics at the range: required, never read (the
    /// server's own findings carry the fixes), so each is skipped unparsed.
    #[serde(rename = "diagnostics")]
    _diagnostics: Vec<IgnoredAny>,
    /// The kinds wanted (`quickfix`, `source.fixAll`); none: every kind.
    pub only: Option<Vec<String>>,
}

/// `textDocument/didOpen`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidOpenTextDocumentParams {
    pub text_document: TextDocumentItem,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDocumentItem {
    pub uri: Url,
    pub language_id: String,
    pub version: i32,
    pub text: String,
}

/// `textDocument/didChange`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidChangeTextDocumentParams {
    pub text_document: VersionedTextDocumentIdentifier,
    pub content_changes: Vec<TextDocumentContentChangeEvent>,
}

#[derive(Debug, Deserialize)]
pub struct VersionedTextDocumentIdentifier {
    pub uri: Url,
    pub version: i32,
}

/// One edit: `range` replaced by `text`, or the whole text without a range.
#[derive(Debug, Deserialize)]
pub struct TextDocumentContentChangeEvent {
    pub range: Option<Range>,
    pub text: String,
}

/// `textDocument/didSave` (its `text` is not read: cudalint lints the open
/// document's own text).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidSaveTextDocumentParams {
    pub text_document: TextDocumentIdentifier,
}

/// `textDocument/didClose`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidCloseTextDocumentParams {
    pub text_document: TextDocumentIdentifier,
}

/// `workspace/didChangeConfiguration`: the settings, read as
/// `initializationOptions` are ([`super::settings`]).
#[derive(Debug, Deserialize)]
pub struct DidChangeConfigurationParams {
    pub settings: Value,
}

#[derive(Debug, Deserialize)]
pub struct TextDocumentIdentifier {
    pub uri: Url,
}

#[derive(Clone, Copy, Debug, Deserialize)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

#[derive(Clone, Copy, Debug, Deserialize)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

impl From<Position> for lsp_types::Position {
    fn from(position: Position) -> Self {
        lsp_types::Position::new(position.line, position.character)
    }
}

impl From<Range> for lsp_types::Range {
    fn from(range: Range) -> Self {
        lsp_types::Range::new(range.start.into(), range.end.into())
    }
}

#[cfg(test)]
mod tests {
    //! The types above against lsp_types' on the same JSON: the same
    //! members read, the same errors.

    use std::fmt::Debug;

    use serde::de::DeserializeOwned;
    use serde_json::{json, Value};

    use super::*;

    fn parse<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
        serde_json::from_value(value.clone()).map_err(|error| error.to_string())
    }

    /// Each case read by lsp_types' `Old` and our `New`: the same error,
    /// or the same members (as `old` and `new` project them).
    fn same<Old: DeserializeOwned, New: DeserializeOwned, K: PartialEq + Debug>(
        cases: &[Value],
        old: impl Fn(Old) -> K,
        new: impl Fn(New) -> K,
    ) {
        for case in cases {
            let (was, is) = (parse::<Old>(case).map(&old), parse::<New>(case).map(&new));
            assert_eq!(was, is, "{case}");
        }
    }

    const URI: &str = "file:///w/Dockerfile";

    fn position_cases(extra: Value) -> Vec<Value> {
        let with = |mut params: Value| {
            params
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            params
        };
        vec![
            with(json!({"textDocument": {"uri": URI}, "position": {"line": 3, "character": 7}})),
            with(json!({"position": {"line": 3, "character": 7}})),
            with(json!({"textDocument": 3, "position": {"line": 3, "character": 7}})),
            with(json!({"textDocument": null, "position": {"line": 0, "character": 0}})),
            with(json!({"textDocument": {}, "position": {"line": 0, "character": 0}})),
            with(
                json!({"textDocument": {"uri": "no scheme"}, "position": {"line": 0, "character": 0}}),
            ),
            with(json!({"textDocument": {"uri": URI}})),
            with(json!({"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}})),
            with(json!({"textDocument": {"uri": URI}, "position": {"line": 1.5, "character": 0}})),
            with(json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": "2"}})),
            with(json!({"textDocument": {"uri": URI}, "position": {"line": 0}})),
            with(
                json!({"textDocument": {"uri": URI, "x": 1}, "position": {"line": 0, "character": 0}, "y": [2]}),
            ),
            json!(null),
            json!("hover"),
        ]
    }

    #[test]
    fn hover_and_completion_read_the_position_as_lsp_types_did() {
        let position = |p: lsp_types::TextDocumentPositionParams| {
            (p.text_document.uri, p.position.line, p.position.character)
        };
        same(
            &position_cases(json!({})),
            |old: lsp_types::HoverParams| position(old.text_document_position_params),
            |new: HoverParams| {
                (
                    new.text_document.uri,
                    new.position.line,
                    new.position.character,
                )
            },
        );
        same(
            &position_cases(json!({"context": {"triggerKind": 2, "triggerCharacter": "="}})),
            |old: lsp_types::CompletionParams| position(old.text_document_position),
            |new: CompletionParams| {
                (
                    new.text_document.uri,
                    new.position.line,
                    new.position.character,
                )
            },
        );
    }

    #[test]
    fn code_actions_read_the_range_and_kinds_as_lsp_types_did() {
        let range =
            json!({"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 4}});
        let diagnostic = json!({"range": range, "message": "m", "code": "CU104"});
        let cases = [
            json!({"textDocument": {"uri": URI}, "range": range, "context": {"diagnostics": []}}),
            json!({"textDocument": {"uri": URI}, "range": range,
                   "context": {"diagnostics": [diagnostic], "only": ["quickfix"], "triggerKind": 1}}),
            json!({"textDocument": {"uri": URI}, "range": range,
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
            json!({"textDocument": {"uri": URI}, "range": range, "context": {}}),
            json!({"textDocument": {"uri": URI}, "range": range, "context": {"diagnostics": {}}}),
            json!({"textDocument": {"uri": URI}, "range": range,
                   "context": {"diagnostics": [], "only": "quickfix"}}),
            json!({"textDocument": {"uri": URI}, "range": range,
                   "context": {"diagnostics": [], "only": [3]}}),
            json!({"textDocument": {"uri": URI}, "range": range}),
            json!({"textDocument": {"uri": URI}, "context": {"diagnostics": []}}),
            json!({"textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}},
                   "context": {"diagnostics": []}}),
            json!({"range": range, "context": {"diagnostics": []}}),
            json!(null),
        ];
        same(
            &cases,
            |old: lsp_types::CodeActionParams| {
                let only = old.context.only.map(|kinds| {
                    kinds
                        .iter()
                        .map(|k| k.as_str().to_string())
                        .collect::<Vec<_>>()
                });
                (old.text_document.uri, old.range, only)
            },
            |new: CodeActionParams| (new.text_document.uri, new.range.into(), new.context.only),
        );
    }

    #[test]
    fn initialize_reads_encodings_watching_and_settings_as_lsp_types_did() {
        let cases = [
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
            json!({"capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]},
                   "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}},
                   "initializationOptions": {"cudalint": {"driver": "535.104.05"}}}),
            json!({"capabilities": {"general": {"positionEncodings": ["utf-16"]}},
                   "initializationOptions": null}),
            json!({"capabilities": {"workspace": {"didChangeWatchedFiles": {}}}}),
            json!({"capabilities": {"general": {}, "workspace": {}, "window": {}},
                   "clientInfo": {"name": "nvim"}, "trace": "off"}),
            json!({"processId": 1}),
            json!({"capabilities": null}),
            json!({"capabilities": {"general": 3}}),
            json!({"capabilities": {"general": {"positionEncodings": "utf-8"}}}),
            json!({"capabilities": {"general": {"positionEncodings": [8]}}}),
            json!({"capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": 1}}}}),
            json!(null),
        ];
        same(
            &cases,
            |old: lsp_types::InitializeParams| {
                let capabilities = old.capabilities;
                let encodings = capabilities.general.and_then(|g| g.position_encodings);
                let watch = capabilities
                    .workspace
                    .and_then(|w| w.did_change_watched_files);
                (
                    encodings.map(|kinds| kinds.iter().map(|k| k.as_str().to_string()).collect()),
                    watch.map(|watch| watch.dynamic_registration),
                    old.initialization_options,
                )
            },
            |new: InitializeParams| {
                let capabilities = new.capabilities;
                let encodings = capabilities.general.and_then(|g| g.position_encodings);
                let watch = capabilities
                    .workspace
                    .and_then(|w| w.did_change_watched_files);
                (
                    encodings,
                    watch.map(|watch| watch.dynamic_registration),
                    new.initialization_options,
                )
            },
        );
    }

    #[test]
    fn notifications_read_documents_and_settings_as_lsp_types_did() {
        let item =
            json!({"uri": URI, "languageId": "dockerfile", "version": 1, "text": "FROM a\n"});
        same(
            &[
                json!({"textDocument": item}),
                json!({"textDocument": {"uri": URI, "languageId": "dockerfile", "version": 1}}),
                json!({"textDocument": {"uri": URI, "languageId": 3, "version": 1, "text": ""}}),
                json!({"textDocument": {"uri": URI, "languageId": "x", "version": 2.5, "text": ""}}),
                json!({"textDocument": {"uri": URI, "languageId": "x", "version": 1_u64 << 40, "text": ""}}),
                json!({}),
            ],
            |old: lsp_types::DidOpenTextDocumentParams| {
                let item = old.text_document;
                (item.uri, item.language_id, item.version, item.text)
            },
            |new: DidOpenTextDocumentParams| {
                let item = new.text_document;
                (item.uri, item.language_id, item.version, item.text)
            },
        );
        let range =
            json!({"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 5}});
        same(
            &[
                json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": "FROM b\n"}]}),
                json!({"textDocument": {"uri": URI, "version": 2},
                       "contentChanges": [{"range": range, "rangeLength": 1, "text": "yz"}, {"text": ""}]}),
                json!({"textDocument": {"uri": URI, "version": 2},
                       "contentChanges": [{"range": null, "text": "x"}]}),
                json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": []}),
                json!({"textDocument": {"uri": URI}, "contentChanges": []}),
                json!({"textDocument": {"uri": URI, "version": null}, "contentChanges": []}),
                json!({"textDocument": {"uri": URI, "version": 2}}),
                json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"range": range}]}),
                json!({"textDocument": {"uri": URI, "version": 2},
                       "contentChanges": [{"range": {"start": {"line": 0, "character": 0}}, "text": ""}]}),
                json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": {"text": ""}}),
            ],
            |old: lsp_types::DidChangeTextDocumentParams| {
                let changes: Vec<_> = old
                    .content_changes
                    .into_iter()
                    .map(|change| (change.range, change.text))
                    .collect();
                (old.text_document.uri, old.text_document.version, changes)
            },
            |new: DidChangeTextDocumentParams| {
                let changes: Vec<_> = new
                    .content_changes
                    .into_iter()
                    .map(|change| (change.range.map(lsp_types::Range::from), change.text))
                    .collect();
                (new.text_document.uri, new.text_document.version, changes)
            },
        );
        let identified = [
            json!({"textDocument": {"uri": URI}}),
            json!({"textDocument": {"uri": URI}, "text": "FROM a\n"}),
            json!({"textDocument": {"uri": 7}}),
            json!({"text": "FROM a\n"}),
            json!(null),
        ];
        same(
            &identified,
            |old: lsp_types::DidSaveTextDocumentParams| old.text_document.uri,
            |new: DidSaveTextDocumentParams| new.text_document.uri,
        );
        same(
            &identified,
            |old: lsp_types::DidCloseTextDocumentParams| old.text_document.uri,
            |new: DidCloseTextDocumentParams| new.text_document.uri,
        );
        same(
            &[
                json!({"settings": {"cudalint": {"gpus": ["H100"]}}}),
                json!({"settings": null}),
                json!({"settings": 3}),
                json!({}),
                json!(null),
            ],
            |old: lsp_types::DidChangeConfigurationParams| old.settings,
            |new: DidChangeConfigurationParams| new.settings,
        );
    }

    /// What changed, on purpose: members the server never reads are no
    /// longer checked, so a malformed one does not fail the message.
    #[test]
    fn members_not_read_are_not_checked() {
        let cases: [(&str, Value); 4] = [
            (
                "initialize",
                json!({"processId": "me", "capabilities": {"textDocument": 3}}),
            ),
            (
                "hover",
                json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0},
                       "workDoneToken": [1]}),
            ),
            (
                "codeAction",
                json!({"textDocument": {"uri": URI},
                       "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                       "context": {"diagnostics": [{"message": 3}], "triggerKind": "now"}}),
            ),
            ("didSave", json!({"textDocument": {"uri": URI}, "text": 3})),
        ];
        for (method, case) in cases {
            let (was, is) = match method {
                "initialize" => (
                    parse::<lsp_types::InitializeParams>(&case).map(drop),
                    parse::<InitializeParams>(&case).map(drop),
                ),
                "hover" => (
                    parse::<lsp_types::HoverParams>(&case).map(drop),
                    parse::<HoverParams>(&case).map(drop),
                ),
                "codeAction" => (
                    parse::<lsp_types::CodeActionParams>(&case).map(drop),
                    parse::<CodeActionParams>(&case).map(drop),
                ),
                _ => (
                    parse::<lsp_types::DidSaveTextDocumentParams>(&case).map(drop),
                    parse::<DidSaveTextDocumentParams>(&case).map(drop),
                ),
            };
            assert!(
                was.is_err() && is.is_ok(),
                "{method} {case}: {was:?} {is:?}"
            );
        }
    }
}
