"""`cudalint server` driven by pytest-lsp over stdio: the diagnostics are the CLI's,
they follow edits, hover and code actions work, settings and files on disk apply."""

import pathlib

from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import EXAMPLE, apply_edits, change, cli_json, open_and_wait, wait_for_version

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "style": types.DiagnosticSeverity.Hint,
}


def as_cli(diagnostic: types.Diagnostic) -> tuple:
    """An LSP diagnostic in the CLI JSON's terms (1-based lines and columns)."""
    return (
        diagnostic.code,
        diagnostic.severity,
        diagnostic.range.start.line + 1,
        diagnostic.range.start.character + 1,
        diagnostic.range.end.line + 1,
        diagnostic.range.end.character + 1,
        diagnostic.message.split("\n")[0],
    )


def cli_tuple(finding: dict) -> tuple:
    location = finding["location"]
    if location["line"] is None:
        position = (1, 1, 1, 1)
    else:
        position = (location["line"], location["column"], location["end_line"], location["end_column"])
    return (finding["code"], SEVERITY[finding["severity"]], *position, finding["message"])


async def test_diagnostics_equal_the_cli_json(client: LanguageClient, tmp_path: pathlib.Path):
    path = tmp_path / "Dockerfile"
    path.write_text(EXAMPLE)
    diagnostics = await open_and_wait(client, path, EXAMPLE)
    expected = [cli_tuple(f) for f in cli_json(path)]
    assert len(expected) >= 5
    assert sorted(as_cli(d) for d in diagnostics) == sorted(expected)
    for diagnostic in diagnostics:
        assert diagnostic.source == "cudalint"
        assert diagnostic.code_description.href.endswith(f"/docs/rules/{diagnostic.code}.md")


async def test_a_finding_moves_with_the_text_then_goes_when_fixed(
    client: LanguageClient, tmp_path: pathlib.Path
):
    path = tmp_path / "Dockerfile"
    text = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN echo hi\n"
    diagnostics = await open_and_wait(client, path, text)
    eol = [d for d in diagnostics if d.code == "CU131"]
    assert eol and eol[0].range.start.line == 0, diagnostics
    uri = path.as_uri()
    # Two lines inserted above it (an incremental change).
    at = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    change(client, uri, 2, "# base image\nARG X=1\n", at)
    diagnostics = await wait_for_version(client, uri, 2)
    moved = [d for d in diagnostics if d.code == "CU131"]
    assert moved and moved[0].range.start.line == 2, diagnostics
    assert moved[0].range.start.character == eol[0].range.start.character
    # The whole text replaced by a supported release.
    change(client, uri, 3, "# base image\nARG X=1\nFROM nvidia/cuda:13.4.2-devel-ubuntu24.04\nRUN echo hi\n")
    diagnostics = await wait_for_version(client, uri, 3)
    assert not [d for d in diagnostics if d.code == "CU131"], diagnostics


async def test_hover_on_from_shows_the_facts_with_args_resolved(
    client: LanguageClient, tmp_path: pathlib.Path
):
    path = tmp_path / "Dockerfile"
    await open_and_wait(client, path, EXAMPLE)
    line = next(i for i, l in enumerate(EXAMPLE.splitlines()) if l.startswith("FROM nvidia/cuda"))
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            position=types.Position(line=line, character=10),
        )
    )
    assert hover is not None
    text = hover.contents.value
    assert "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04" in text, text
    assert "minimum driver" in text and "source" in text, text
    assert hover.range.start.line == line


async def test_hover_on_a_suppressed_rule_shows_its_summary(
    client: LanguageClient, tmp_path: pathlib.Path
):
    path = tmp_path / "Dockerfile"
    text = "FROM ubuntu:22.04\n# cudalint ignore=CU104,unused-stage\nRUN apt-get update && apt-get install -y curl\n"
    await open_and_wait(client, path, text)
    for character, code in [(20, "CU104"), (30, "CU003")]:
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
                position=types.Position(line=1, character=character),
            )
        )
        assert hover is not None and code in hover.contents.value, hover


async def actions_at(client, uri, diagnostic, only=None):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
        )
    )


async def test_code_actions_fix_and_ignore(client: LanguageClient, tmp_path: pathlib.Path):
    path = tmp_path / "Dockerfile"
    path.write_text(EXAMPLE)
    uri = path.as_uri()
    diagnostics = await open_and_wait(client, path, EXAMPLE)
    fixable = {f["code"] for f in cli_json(path) if f["fix"]}
    target = next(d for d in diagnostics if d.code in fixable)
    actions = await actions_at(client, uri, target)
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.edit and a.title.startswith(target.code))
    text = apply_edits(EXAMPLE, fix.edit.changes[uri])
    assert text != EXAMPLE
    change(client, uri, 2, text)
    after = await wait_for_version(client, uri, 2)
    assert len([d for d in after if d.code == target.code]) < len(
        [d for d in diagnostics if d.code == target.code]
    )

    # "Ignore on this line" silences exactly that finding.
    target = next(d for d in after if d.code == "CU131") if any(d.code == "CU131" for d in after) else after[0]
    actions = await actions_at(client, uri, target)
    ignore = next(a for a in actions if a.title == f"Ignore {target.code} on this line")
    text = apply_edits(text, ignore.edit.changes[uri])
    assert f"# cudalint ignore={target.code}\n" in text
    change(client, uri, 3, text)
    silenced = await wait_for_version(client, uri, 3)
    assert len([d for d in silenced if d.code == target.code]) == len(
        [d for d in after if d.code == target.code]
    ) - 1

    # "In this file" silences every one, and goes after the parser directive.
    actions = await actions_at(client, uri, next(d for d in silenced if d.code != "CU001"))
    file_wide = next(a for a in actions if a.title.endswith("in this file"))
    code = file_wide.title.split()[1]
    text = apply_edits(text, file_wide.edit.changes[uri])
    assert text.startswith("# syntax=docker/dockerfile:1\n# cudalint global ignore=")
    change(client, uri, 4, text)
    assert not [d for d in await wait_for_version(client, uri, 4) if d.code == code]


async def test_fix_all_makes_the_edits_of_fix_write(client: LanguageClient, tmp_path: pathlib.Path):
    path = tmp_path / "Dockerfile"
    path.write_text(EXAMPLE)
    uri = path.as_uri()
    await open_and_wait(client, path, EXAMPLE)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    assert [a.kind for a in actions] == ["source.fixAll.cudalint"]
    fixed = apply_edits(EXAMPLE, actions[0].edit.changes[uri])
    import subprocess
    from conftest import BIN

    subprocess.run([BIN, "fix", "--write", path.name], cwd=tmp_path, check=False, capture_output=True)
    assert fixed == path.read_text()
    assert fixed != EXAMPLE


async def test_changing_the_driver_setting_relints(client: LanguageClient, tmp_path: pathlib.Path):
    path = tmp_path / "Dockerfile"
    text = "FROM nvidia/cuda:13.4.2-runtime-ubuntu24.04\nCMD [\"python3\"]\n"
    path.write_text(text)
    diagnostics = await open_and_wait(client, path, text)
    assert not [d for d in diagnostics if d.code == "CU121"], diagnostics
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"cudalint": {"driver": "470.57.02"}})
    )
    params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d for d in params.diagnostics if d.code == "CU121"], params.diagnostics
    expected = [cli_tuple(f) for f in cli_json(path, "--driver", "470.57.02")]
    assert sorted(as_cli(d) for d in params.diagnostics) == sorted(expected)


async def test_initialization_options_set_the_driver(fleet_client: LanguageClient, tmp_path: pathlib.Path):
    path = tmp_path / "Dockerfile"
    text = "FROM nvidia/cuda:13.4.2-runtime-ubuntu24.04\n"
    diagnostics = await open_and_wait(fleet_client, path, text)
    assert [d for d in diagnostics if d.code == "CU121"], diagnostics


async def test_config_file_and_context_files_are_reread(client: LanguageClient, tmp_path: pathlib.Path):
    dockerfile = (
        "FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\n"
        "RUN apt-get update && apt-get install -y python3-pip && rm -rf /var/lib/apt/lists/*\n"
        "COPY requirements.txt .\n"
        "RUN pip3 install --no-cache-dir -r requirements.txt\n"
    )
    path = tmp_path / "Dockerfile"
    path.write_text(dockerfile)
    (tmp_path / "requirements.txt").write_text("accelerate==0.31.0\n")
    uri = path.as_uri()
    diagnostics = await open_and_wait(client, path, dockerfile)
    assert not [d for d in diagnostics if d.code == "CU120"], diagnostics

    # The requirements file now pins a torch built for a newer CUDA.
    (tmp_path / "requirements.txt").write_text("accelerate==0.31.0\ntorch==2.5.1\n")
    changed = types.FileEvent(uri=(tmp_path / "requirements.txt").as_uri(), type=types.FileChangeType.Changed)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[changed]))
    params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert params.uri == uri
    assert [d for d in params.diagnostics if d.code == "CU120"], params.diagnostics
    assert sorted(as_cli(d) for d in params.diagnostics) == sorted(cli_tuple(f) for f in cli_json(path))

    # A configuration file appears that turns CU120 off: the next lint reads it.
    (tmp_path / ".cudalint.toml").write_text('[rules]\ndisable = ["CU120"]\n')
    change(client, uri, 2, dockerfile + "\n")
    diagnostics = await wait_for_version(client, uri, 2)
    assert not [d for d in diagnostics if d.code == "CU120"], diagnostics


async def test_completion_of_rules_and_cuda_tags(client: LanguageClient, tmp_path: pathlib.Path):
    path = tmp_path / "Dockerfile"
    text = "# cudalint ignore=CU1\nFROM nvidia/cuda:\n"
    await open_and_wait(client, path, text)
    uri = path.as_uri()

    async def complete(line, character):
        result = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
            )
        )
        items = result.items if hasattr(result, "items") else result
        return [i for i in items]

    rules = await complete(0, 21)
    labels = {item.label for item in rules}
    assert {"CU101", "CU131", "devel-image-in-final-stage"} <= labels, labels
    assert rules[0].text_edit.range.start.character == 18
    tags = await complete(1, 17)
    assert tags and tags[0].label.startswith("13.4.2-"), [t.label for t in tags[:5]]
    versions = [tuple(int(p) for p in t.label.split("-")[0].split(".")) for t in tags]
    assert versions == sorted(versions, reverse=True)


async def test_a_file_that_does_not_parse_shows_cu001_and_the_server_goes_on(
    client: LanguageClient, tmp_path: pathlib.Path
):
    path = tmp_path / "Dockerfile"
    text = "FROM ubuntu:22.04\nRUN <<EOF\necho never closed\n"
    path.write_text(text)
    diagnostics = await open_and_wait(client, path, text)
    assert [d.code for d in diagnostics] == ["CU001"], diagnostics
    assert sorted(as_cli(d) for d in diagnostics) == sorted(cli_tuple(f) for f in cli_json(path))
    # Still serving: hover answers, and a fixed text lints clean of CU001.
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            position=types.Position(line=0, character=6),
        )
    )
    assert hover is None
    change(client, path.as_uri(), 2, "FROM ubuntu:22.04\nRUN echo fine\n")
    assert not [d for d in await wait_for_version(client, path.as_uri(), 2) if d.code == "CU001"]


async def test_utf16_positions_past_non_ascii_text(client: LanguageClient, tmp_path: pathlib.Path):
    path = tmp_path / "Dockerfile"
    # `𝄞` is two UTF-16 code units and four UTF-8 bytes; CU104 starts after it.
    text = 'FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN echo "𝄞 é" && apt-get update && apt-get install -y curl\n'
    path.write_text(text)
    diagnostics = await open_and_wait(client, path, text)
    cli = {f["code"]: f for f in cli_json(path)}
    assert "CU104" in cli and cli["CU104"]["location"]["line"] == 2
    for diagnostic in diagnostics:
        location = cli[diagnostic.code]["location"]
        line = text.splitlines()[location["line"] - 1]
        utf16 = len(line[: location["column"] - 1].encode("utf-16-le")) // 2
        assert diagnostic.range.start.character == utf16, (diagnostic, location)
    cu104 = next(d for d in diagnostics if d.code == "CU104")
    assert cu104.range.start.character == cli["CU104"]["location"]["column"] - 1 + 1
