//! `cudalint server` (alias `lsp`): a Language Server Protocol server over
//! stdio, in the same binary, so an editor shows what `cudalint FILE` would
//! report while the Dockerfile is being written: diagnostics on open, change
//! and save ([`diagnostics`]), the facts of a `FROM` image and the summary of
//! a suppressed rule on hover ([`hover`]), fixes and suppressions as code
//! actions ([`actions`]), rule names and `nvidia/cuda` tags as completions
//! ([`completion`]), the CLI's options as settings ([`settings`]).
//!
//! ## Why `lsp-types` and our own loop
//! We read how three servers are built. `tower-lsp-server` (and `tower-lsp`
//! before it) wraps a `LanguageServer` trait of async methods in a tower
//! service on a tokio runtime; `async-lsp` is the same idea with a
//! middleware stack. Both suit servers that wait on I/O; cudalint's work is
//! one synchronous lint of a few milliseconds, so an async runtime would add
//! a scheduler between the edit and the lint, and we would still need our
//! own coalescing of edits. rust-analyzer's `lsp-server` is synchronous and
//! small, which fits, but its reader trusts the peer: it allocates whatever
//! `Content-Length` says and ends the connection at the first body that is
//! not JSON (`read_msg_text` / `Message::read` return an error that stops
//! the reader thread), where we want a malformed frame answered with a
//! JSON-RPC parse error and the session kept. So the protocol's types come
//! from `lsp-types` (the crate all three use) and the ~150 lines of framing
//! are ours ([`transport`]): a bounded frame size, resynchronisation after a
//! bad frame, a bounded queue between the reader thread and this loop.
//! `lsp-types` serves what we send; what the client sends is read into our
//! own types of the few members we read ([`params`] says why).
//!
//! ## The loop
//! One thread handles messages in order. An edit marks its document due
//! for linting (after `debounceMs`, 0 by default); before linting, every
//! message already waiting is handled first, so a burst of edits is linted
//! once, on its last text, whatever the debounce. Requests that read
//! findings (code actions) lint a due document first, so they never act on
//! stale findings. A panic while handling one message is answered as an
//! internal error and the server goes on.

mod actions;
mod completion;
mod diagnostics;
mod documents;
mod hover;
mod params;
mod settings;
mod transport;

use std::collections::HashMap;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Instant;

use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    CompletionResponse, HoverProviderCapability, InitializeResult, PositionEncodingKind,
    PublishDiagnosticsParams, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Url,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use diagnostics::LintResult;
use documents::{Document, Documents, Encoding};
use params::{
    CodeActionParams, CompletionParams, DidChangeConfigurationParams, DidChangeTextDocumentParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams, HoverParams,
    InitializeParams,
};
use settings::{ClientSettings, Engines};
use transport::{Incoming, Writer};

/// JSON-RPC and LSP error codes.
mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const SERVER_NOT_INITIALIZED: i64 = -32002;
}

/// Serve LSP on stdin/stdout until the client says `exit` or goes away.
pub fn run() -> ExitCode {
    let incoming = transport::spawn_reader(std::io::stdin());
    let out = Writer::new(std::io::BufWriter::new(std::io::stdout()));
    Server::new(out).serve(&incoming)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Uninitialized,
    Running,
    ShutDown,
}

/// What handling a message leads to.
enum Flow {
    Continue,
    Exit(ExitCode),
}

/// A request's failure: a JSON-RPC error code and message.
type Failure = (i64, String);

struct Server<W: Write> {
    out: Writer<W>,
    phase: Phase,
    encoding: Encoding,
    documents: Documents,
    engines: Engines,
    lints: HashMap<Url, LintResult>,
    /// Documents to lint, and when.
    due: HashMap<Url, Instant>,
    /// The client registers file watchers on request.
    can_watch_files: bool,
    next_request_id: i64,
    /// Writing to the client failed: it is gone.
    client_gone: bool,
}

impl<W: Write> Server<W> {
    fn new(out: Writer<W>) -> Self {
        Server {
            out,
            phase: Phase::Uninitialized,
            encoding: Encoding::Utf16,
            documents: Documents::default(),
            engines: Engines::default(),
            lints: HashMap::new(),
            due: HashMap::new(),
            can_watch_files: false,
            next_request_id: 0,
            client_gone: false,
        }
    }

    fn serve(mut self, incoming: &Receiver<Incoming>) -> ExitCode {
        loop {
            let next = match self.due.values().min() {
                None => incoming.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(deadline) => {
                    incoming.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                }
            };
            match next {
                Ok(message) => {
                    if let Flow::Exit(code) = self.receive(message) {
                        return code;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return self.gone(),
            }
            // Whatever has arrived meanwhile first: a burst of edits is
            // linted once, on its last text.
            while let Ok(message) = incoming.try_recv() {
                if let Flow::Exit(code) = self.receive(message) {
                    return code;
                }
            }
            self.lint_due();
            if self.client_gone {
                return self.gone();
            }
        }
    }

    /// The exit status when the client goes away without `exit`: success
    /// only if it had asked us to shut down.
    fn gone(&self) -> ExitCode {
        if self.phase == Phase::ShutDown {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }

    fn receive(&mut self, incoming: Incoming) -> Flow {
        match incoming {
            Incoming::Closed => Flow::Exit(self.gone()),
            Incoming::Malformed(reason) => {
                self.send(json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": code::PARSE_ERROR, "message": reason}}));
                Flow::Continue
            }
            Incoming::Message(message) => {
                let id = message.get("id").cloned();
                match catch_unwind(AssertUnwindSafe(|| self.dispatch(message))) {
                    Ok(flow) => flow,
                    Err(_) => {
                        if let Some(id) = id {
                            self.respond(
                                id,
                                Err((
                                    code::INTERNAL_ERROR,
                                    "cudalint crashed handling this request; please report it"
                                        .into(),
                                )),
                            );
                        }
                        Flow::Continue
                    }
                }
            }
        }
    }

    fn dispatch(&mut self, mut message: Value) -> Flow {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let params = message
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        match (method, message.get("id").cloned()) {
            (Some(method), Some(id)) => {
                let result = self.request(&method, params);
                self.respond(id, result);
                Flow::Continue
            }
            (Some(method), None) => self.notification(&method, params),
            // A response to one of our requests (a registration); nothing
            // waits for it.
            (None, Some(_)) => Flow::Continue,
            (None, None) => {
                self.send(json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": code::INVALID_REQUEST, "message": "a message with neither method nor id"}}));
                Flow::Continue
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, Failure> {
        match (self.phase, method) {
            (Phase::Uninitialized, "initialize") => self.initialize(parse(params)?),
            (Phase::Uninitialized, _) => Err((
                code::SERVER_NOT_INITIALIZED,
                "the server is not initialized yet".into(),
            )),
            (Phase::Running, "initialize") => Err((
                code::INVALID_REQUEST,
                "the server is already initialized".into(),
            )),
            (Phase::ShutDown, _) => {
                Err((code::INVALID_REQUEST, "the server is shutting down".into()))
            }
            (Phase::Running, "shutdown") => {
                self.phase = Phase::ShutDown;
                Ok(Value::Null)
            }
            (Phase::Running, "textDocument/hover") => self.hover(parse(params)?),
            (Phase::Running, "textDocument/codeAction") => self.code_action(parse(params)?),
            (Phase::Running, "textDocument/completion") => self.completion(parse(params)?),
            (Phase::Running, _) => Err((
                code::METHOD_NOT_FOUND,
                format!("cudalint does not handle `{method}`"),
            )),
        }
    }

    fn notification(&mut self, method: &str, params: Value) -> Flow {
        if method == "exit" {
            return Flow::Exit(if self.phase == Phase::ShutDown {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        if self.phase != Phase::Running {
            return Flow::Continue;
        }
        // Notifications have no answer: parameters that do not parse are
        // dropped, as the protocol has no way to say so.
        match method {
            "initialized" => self.register_watchers(),
            "textDocument/didOpen" => {
                if let Ok(params) = parse::<DidOpenTextDocumentParams>(params) {
                    let item = params.text_document;
                    let uri = item.uri.clone();
                    self.documents.open(Document::new(
                        item.uri,
                        item.language_id,
                        item.version,
                        item.text,
                    ));
                    self.due.insert(uri, Instant::now());
                }
            }
            "textDocument/didChange" => {
                if let Ok(params) = parse::<DidChangeTextDocumentParams>(params) {
                    let uri = params.text_document.uri;
                    let encoding = self.encoding;
                    if let Some(document) = self.documents.get_mut(&uri) {
                        document.apply(
                            params.text_document.version,
                            params.content_changes,
                            encoding,
                        );
                        let debounce = self.engines.client().debounce;
                        self.due.insert(uri, Instant::now() + debounce);
                    }
                }
            }
            "textDocument/didSave" => {
                if let Ok(params) = parse::<DidSaveTextDocumentParams>(params) {
                    let uri = params.text_document.uri;
                    match self.documents.get(&uri) {
                        Some(document) if document.is_dockerfile() => {
                            self.due.insert(uri, Instant::now());
                        }
                        // A requirements file or `.cudalint.toml` saved in
                        // the editor: what the Dockerfiles read changed.
                        _ => self.relint_all(),
                    }
                }
            }
            "textDocument/didClose" => {
                if let Ok(params) = parse::<DidCloseTextDocumentParams>(params) {
                    let uri = params.text_document.uri;
                    self.due.remove(&uri);
                    self.lints.remove(&uri);
                    if let Some(document) = self.documents.close(&uri) {
                        if document.is_dockerfile() {
                            self.publish(uri, Vec::new(), None);
                        }
                    }
                }
            }
            "workspace/didChangeConfiguration" => {
                if let Ok(params) = parse::<DidChangeConfigurationParams>(params) {
                    self.apply_settings(&params.settings);
                    self.relint_all();
                }
            }
            // A requirements file, `.dockerignore` or `.cudalint.toml`
            // changed on disk.
            "workspace/didChangeWatchedFiles" => {
                self.engines.invalidate();
                self.relint_all();
            }
            _ => {}
        }
        Flow::Continue
    }

    fn initialize(&mut self, params: InitializeParams) -> Result<Value, Failure> {
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|general| general.position_encodings.as_ref());
        if offered.is_some_and(|kinds| {
            kinds
                .iter()
                .any(|kind| kind == PositionEncodingKind::UTF8.as_str())
        }) {
            self.encoding = Encoding::Utf8;
        }
        self.can_watch_files = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|workspace| workspace.did_change_watched_files.as_ref())
            .and_then(|watched| watched.dynamic_registration)
            .unwrap_or(false);
        if let Some(options) = &params.initialization_options {
            self.apply_settings(options);
        }
        self.phase = Phase::Running;
        let capabilities = ServerCapabilities {
            position_encoding: Some(match self.encoding {
                Encoding::Utf8 => PositionEncodingKind::UTF8,
                Encoding::Utf16 => PositionEncodingKind::UTF16,
            }),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                        include_text: Some(false),
                    })),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![
                    CodeActionKind::QUICKFIX,
                    CodeActionKind::from(actions::FIX_ALL),
                ]),
                ..CodeActionOptions::default()
            })),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(
                    completion::TRIGGER_CHARACTERS
                        .iter()
                        .map(|c| c.to_string())
                        .collect(),
                ),
                ..CompletionOptions::default()
            }),
            ..ServerCapabilities::default()
        };
        let result = InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: "cudalint".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        };
        serde_json::to_value(result).map_err(|e| (code::INTERNAL_ERROR, e.to_string()))
    }

    fn apply_settings(&mut self, value: &Value) {
        let (client, problems) = ClientSettings::from_json(value);
        for problem in problems {
            self.notify(
                "window/showMessage",
                json!({"type": 2, "message": format!("cudalint settings: {problem}")}),
            );
        }
        if *self.engines.client() != client {
            self.engines.set_client(client);
        }
    }

    /// Ask the client to tell us when files the lint reads change.
    fn register_watchers(&mut self) {
        if !self.can_watch_files {
            return;
        }
        self.next_request_id += 1;
        let id = format!("cudalint-{}", self.next_request_id);
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "client/registerCapability",
            "params": {"registrations": [{
                "id": "cudalint-watch", "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {"watchers": [
                    {"globPattern": "**/.cudalint.toml"},
                    {"globPattern": "**/.dockerignore"},
                    {"globPattern": "**/*.txt"},
                    {"globPattern": "**/*.in"},
                    {"globPattern": "**/*.toml"},
                ]}}]}}),
        );
    }

    fn relint_all(&mut self) {
        let now = Instant::now();
        for uri in self.documents.dockerfiles() {
            self.due.insert(uri, now);
        }
    }

    /// Lint every document whose time has come.
    fn lint_due(&mut self) {
        let now = Instant::now();
        let ready: Vec<Url> = self
            .due
            .iter()
            .filter(|(_, when)| **when <= now)
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in ready {
            self.lint_now(&uri);
        }
    }

    /// Lint `uri` now and publish its findings.
    fn lint_now(&mut self, uri: &Url) {
        self.due.remove(uri);
        let Some(document) = self.documents.get(uri) else {
            return;
        };
        if !document.is_dockerfile() {
            return;
        }
        let dir = document
            .path()
            .and_then(|path| path.parent().map(|p| p.to_path_buf()));
        let engine = self.engines.for_dir(dir.as_deref());
        let threshold = self.engines.client().failure_threshold;
        let result = diagnostics::lint(&engine, document, self.encoding, threshold);
        let version = Some(result.version);
        let published = result.published.clone();
        self.lints.insert(uri.clone(), result);
        self.publish(uri.clone(), published, version);
    }

    fn publish(&mut self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        if let Ok(params) = serde_json::to_value(params) {
            self.notify("textDocument/publishDiagnostics", params);
        }
    }

    /// The engine for the open Dockerfile `uri` (none for other documents).
    fn engine_for(&mut self, uri: &Url) -> Option<std::sync::Arc<crate::engine::Engine>> {
        let document = self.documents.get(uri)?;
        if !document.is_dockerfile() {
            return None;
        }
        let dir = document
            .path()
            .and_then(|path| path.parent().map(|p| p.to_path_buf()));
        self.engines.for_dir(dir.as_deref()).ok()
    }

    fn hover(&mut self, params: HoverParams) -> Result<Value, Failure> {
        let encoding = self.encoding;
        let uri = &params.text_document.uri;
        let (Some(engine), Some(document)) = (self.engine_for(uri), self.documents.get(uri)) else {
            return Ok(Value::Null);
        };
        let offset = document.offset(params.position.into(), encoding);
        let linted = self
            .lints
            .get(uri)
            .filter(|lint| lint.version == document.version && !self.due.contains_key(uri))
            .and_then(|lint| lint.syntax.as_ref());
        let found = hover::hover(&engine, document, linted, offset, encoding);
        serde_json::to_value(found).map_err(|e| (code::INTERNAL_ERROR, e.to_string()))
    }

    fn completion(&mut self, params: CompletionParams) -> Result<Value, Failure> {
        let encoding = self.encoding;
        let uri = &params.text_document.uri;
        let (Some(engine), Some(document)) = (self.engine_for(uri), self.documents.get(uri)) else {
            return Ok(Value::Null);
        };
        let offset = document.offset(params.position.into(), encoding);
        let items = completion::complete(&engine, document, offset, encoding);
        serde_json::to_value(CompletionResponse::Array(items))
            .map_err(|e| (code::INTERNAL_ERROR, e.to_string()))
    }

    fn code_action(&mut self, params: CodeActionParams) -> Result<Value, Failure> {
        let uri = params.text_document.uri;
        if self.due.contains_key(&uri) || !self.lints.contains_key(&uri) {
            self.lint_now(&uri);
        }
        let encoding = self.encoding;
        let engine = self.engine_for(&uri);
        let (Some(engine), Some(document), Some(lint)) =
            (engine, self.documents.get(&uri), self.lints.get(&uri))
        else {
            return Ok(json!([]));
        };
        let request = actions::Request {
            span: document.span(params.range.into(), encoding),
            only: params.context.only.as_deref(),
        };
        let found = actions::actions(&engine, document, lint, &request, encoding);
        serde_json::to_value(found).map_err(|e| (code::INTERNAL_ERROR, e.to_string()))
    }

    fn respond(&mut self, id: Value, result: Result<Value, Failure>) {
        let message = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        self.send(message);
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn send(&mut self, message: Value) {
        if !self.client_gone && self.out.send(&message).is_err() {
            self.client_gone = true;
        }
    }
}

/// A request's parameters (one of [`params`]' types), or an invalid-params
/// failure.
fn parse<T: DeserializeOwned>(params: Value) -> Result<T, Failure> {
    serde_json::from_value(params)
        .map_err(|error| (code::INVALID_PARAMS, format!("invalid parameters: {error}")))
}
