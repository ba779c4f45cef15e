"""Shared set-up of the LSP tests: the binary under test (CUDALINT_BIN, set by
tests/lsp.rs) and a pytest-lsp client that talks to `cudalint server` over stdio."""

import asyncio
import json
import os
import pathlib
import subprocess

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

BIN = os.environ.get("CUDALINT_BIN", "cudalint")
REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = (REPO / "Dockerfile.example").read_text()


def cli_json(path: pathlib.Path, *flags: str) -> list[dict]:
    """What `cudalint --format json FILE` reports, run in the file's directory."""
    run = subprocess.run(
        [BIN, "--format", "json", "--failure-threshold", "none", *flags, path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(run.stdout)["findings"]


async def open_and_wait(client: LanguageClient, path: pathlib.Path, text: str, version: int = 1):
    """Open `path` with `text` and wait for its diagnostics."""
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="dockerfile", version=version, text=text
            )
        )
    )
    return await wait_for_version(client, uri, version)


def latest_published(client: LanguageClient) -> dict:
    """The last `publishDiagnostics` of each URI, recorded as each arrives.

    pytest-lsp's `wait_for_notification` is a one-shot future: a second
    notification that arrives before the waiter asks again is not seen by
    it, and a loop over such waits can hang on a publish it missed (seen
    once in CI, with two publishes in one read). The record is installed
    on the first wait, before the server has published anything."""
    protocol = client.protocol
    if not hasattr(protocol, "cudalint_latest"):
        protocol.cudalint_latest = {}
        handle = protocol._handle_notification

        def recording(method_name, params):
            if method_name == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
                protocol.cudalint_latest[params.uri] = params
            return handle(method_name, params)

        protocol._handle_notification = recording
    return protocol.cudalint_latest


async def wait_for_version(client: LanguageClient, uri: str, version: int):
    """Wait until the diagnostics of `uri` are those of `version`."""
    latest = latest_published(client)
    while True:
        params = latest.get(uri)
        if params is not None and params.version == version:
            return params.diagnostics
        try:
            await asyncio.wait_for(
                client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 0.5
            )
        except asyncio.TimeoutError:
            pass


def change(client: LanguageClient, uri: str, version: int, text: str, range_=None):
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text=text)
                if range_ is None
                else types.TextDocumentContentChangePartial(range=range_, text=text)
            ],
        )
    )


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 positions; our test texts are ASCII)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        return starts[position.line] + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def initialize_params(**options) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=types.ClientCapabilities(
            general=types.GeneralClientCapabilities(
                position_encodings=[types.PositionEncodingKind.Utf16]
            )
        ),
        initialization_options=options or None,
    )


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[BIN, "server"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(initialize_params())
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[BIN, "lsp"]))
async def fleet_client(lsp_client: LanguageClient):
    """A client that starts the server with a fleet in its initializationOptions."""
    await lsp_client.initialize_session(initialize_params(driver="470.57.02"))
    yield
    await lsp_client.shutdown_session()
