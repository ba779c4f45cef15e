"""The server's `context` and `debounceMs` settings, through pytest-lsp.

`context` moves where requirement files are read from (the CLI's `--context`);
`debounceMs` makes the server wait that long after an edit before linting, so a
burst of edits is linted once, on its last text.
"""

import pathlib
import time

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import change, cli_json, open_and_wait, wait_for_version
from test_server import as_cli, cli_tuple

DOCKERFILE = (
    "FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\n"
    "RUN apt-get update && apt-get install -y python3-pip && rm -rf /var/lib/apt/lists/*\n"
    "COPY requirements.txt .\n"
    "RUN pip3 install --no-cache-dir -r requirements.txt\n"
)


async def test_the_context_setting_moves_where_requirements_are_read(
    client: LanguageClient, tmp_path: pathlib.Path
):
    # Next to the Dockerfile: nothing that decides CUDA. In the other
    # context: a torch built for a newer CUDA than the base's.
    path = tmp_path / "Dockerfile"
    path.write_text(DOCKERFILE)
    (tmp_path / "requirements.txt").write_text("accelerate==0.31.0\n")
    other = tmp_path / "other-context"
    other.mkdir()
    (other / "requirements.txt").write_text("accelerate==0.31.0\ntorch==2.5.1\n")
    uri = path.as_uri()
    diagnostics = await open_and_wait(client, path, DOCKERFILE)
    assert not [d for d in diagnostics if d.code == "CU120"], diagnostics

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalint": {"context": str(other)}})
    )
    params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert params.uri == uri
    assert [d for d in params.diagnostics if d.code == "CU120"], params.diagnostics
    expected = [cli_tuple(f) for f in cli_json(path, "--context", str(other))]
    assert sorted(as_cli(d) for d in params.diagnostics) == sorted(expected)

    # Back to the default (each Dockerfile's directory): the finding goes.
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalint": {}})
    )
    params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert not [d for d in params.diagnostics if d.code == "CU120"], params.diagnostics


@pytest.mark.parametrize("debounce_ms", [1500])
async def test_debounce_waits_and_lints_a_burst_of_edits_once(
    client: LanguageClient, tmp_path: pathlib.Path, debounce_ms: int
):
    path = tmp_path / "Dockerfile"
    text = "FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\n"
    path.write_text(text)
    uri = path.as_uri()
    await open_and_wait(client, path, text)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalint": {"debounceMs": debounce_ms}})
    )
    # The settings change relints what is open, at once (its one publish).
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    published: list[int] = []
    for version in range(2, 7):
        change(client, uri, version, text + "#" * version + "\n")
    sent = time.monotonic()
    while True:
        params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if params.uri == uri:
            published.append(params.version)
            if params.version == 6:
                break
    waited = time.monotonic() - sent
    # One lint, of the last text, and not before the debounce has passed
    # (a lower bound only: a loaded machine may take longer, never less).
    assert published == [6], published
    assert waited >= debounce_ms / 1000 * 0.9, waited


async def test_a_bad_debounce_is_explained_and_edits_still_lint(
    client: LanguageClient, tmp_path: pathlib.Path
):
    path = tmp_path / "Dockerfile"
    text = "FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\n"
    path.write_text(text)
    uri = path.as_uri()
    await open_and_wait(client, path, text)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalint": {"debounceMs": "soon"}})
    )
    message = await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    assert "debounceMs" in message.message, message
    change(client, uri, 2, text + "\n")
    await wait_for_version(client, uri, 2)


@pytest.mark.parametrize("debounce_ms", [1500])
async def test_hover_between_an_edit_and_its_lint_reads_the_new_text(
    client: LanguageClient, tmp_path: pathlib.Path, debounce_ms: int
):
    # A hover reads the syntax tree its document's last lint kept; while an
    # edit waits out the debounce, that tree is of the old text and must not
    # be read.
    path = tmp_path / "Dockerfile"
    old = "FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\n"
    new = "FROM nvidia/cuda:13.0.2-runtime-ubuntu24.04\n"
    uri = path.as_uri()
    await open_and_wait(client, path, old)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalint": {"debounceMs": debounce_ms}})
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    async def hovered() -> str:
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=0, character=10),
            )
        )
        assert hover is not None
        return hover.contents.value

    assert "12.1.1-devel-ubuntu22.04" in await hovered()
    change(client, uri, 2, new)
    sent = time.monotonic()
    text = await hovered()
    # Answered before the edit's lint (so from a fresh parse), of the new text.
    assert time.monotonic() - sent < debounce_ms / 1000, "the hover waited for the lint"
    assert "13.0.2-runtime-ubuntu24.04" in text and "12.1.1" not in text, text
    await wait_for_version(client, uri, 2)
    text = await hovered()
    assert "13.0.2-runtime-ubuntu24.04" in text and "12.1.1" not in text, text
