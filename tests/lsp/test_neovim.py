"""A second, real editor: headless Neovim (Debian's 0.7.2) starts `cudalint server` with
`vim.lsp.start_client`, opens Dockerfile.example, and the test reads the diagnostics
Neovim holds for the buffer; they are the CLI's findings."""

import json
import os
import pathlib
import shutil
import subprocess

from conftest import BIN, EXAMPLE, cli_json

LUA = r"""
local ok, err = pcall(function()
  local file = os.getenv("CUDALINT_NVIM_FILE")
  local client_id = vim.lsp.start_client({
    name = "cudalint",
    cmd = { os.getenv("CUDALINT_BIN"), "server" },
    root_dir = vim.fn.fnamemodify(file, ":h"),
  })
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  vim.bo.filetype = "dockerfile"
  vim.lsp.buf_attach_client(0, client_id)
  vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 20)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(found, {
      code = d.code or lsp.code, source = d.source, lnum = d.lnum, col = d.col,
      end_lnum = d.end_lnum, end_col = d.end_col, message = d.message,
    })
  end
  vim.fn.writefile({ vim.fn.json_encode(found) }, os.getenv("CUDALINT_NVIM_OUT"))
  vim.lsp.stop_client(client_id)
end)
if not ok then
  vim.fn.writefile({ "error: " .. tostring(err) }, os.getenv("CUDALINT_NVIM_OUT"))
end
vim.cmd("qall!")
"""


def test_neovim_holds_the_cli_findings(tmp_path: pathlib.Path):
    nvim = os.environ.get("CUDALINT_NVIM") or shutil.which("nvim")
    assert nvim, "nvim not found (scripts/lsp-test-env up installs it)"
    path = tmp_path / "Dockerfile.example"
    path.write_text(EXAMPLE)
    script = tmp_path / "attach.lua"
    script.write_text(LUA)
    out = tmp_path / "diagnostics.json"
    env = dict(os.environ, CUDALINT_NVIM_FILE=str(path), CUDALINT_NVIM_OUT=str(out), CUDALINT_BIN=BIN,
               XDG_STATE_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path))
    subprocess.run([nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {script}"],
                   env=env, timeout=60, check=True, stdin=subprocess.DEVNULL, capture_output=True)
    text = out.read_text()
    assert not text.startswith("error:"), text
    held = json.loads(text)
    expected = sorted(
        (f["code"], (f["location"]["line"] or 1) - 1, (f["location"]["column"] or 1) - 1, f["message"])
        for f in cli_json(path)
    )
    got = sorted((d["code"], d["lnum"], d["col"], d["message"].split("\n")[0]) for d in held)
    assert expected and got == expected
    assert {d["source"] for d in held} == {"cudalint"}
