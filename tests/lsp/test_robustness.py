"""Bad input to `cudalint server` through a raw stdio client: malformed frames, unknown
methods, a 1 MB document, 1,000 rapid edits, a client that goes away. The server must
answer what it can, never crash, keep its memory bounded, and exit when stdin closes."""

import json
import queue
import subprocess
import threading
import time

from conftest import BIN, EXAMPLE

TIMEOUT = 30


class RawClient:
    """Frames JSON-RPC by hand, so it can also send what no library would."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [BIN, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.messages: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            self.messages.put(json.loads(out.read(length)))

    def send_bytes(self, data: bytes):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict):
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)

    def wait(self, predicate):
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self.messages.get(timeout=max(0.1, deadline - time.monotonic()))
            if predicate(message):
                return message

    def initialize(self):
        result = self.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert "result" in result, result
        self.notify("initialized", {})

    def open(self, uri, text, version=1):
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "dockerfile", "version": version, "text": text}},
        )

    def diagnostics(self, uri, version):
        return self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"].get("version") == version
        )["params"]["diagnostics"]

    def rss_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as status:
            line = next(l for l in status if l.startswith("VmRSS:"))
        return int(line.split()[1])

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=TIMEOUT)
        return self.proc.returncode


def test_malformed_frames_are_answered_and_the_session_goes_on():
    client = RawClient()
    client.send_bytes(b"Content-Length: 9\r\n\r\nnot json!")
    error = client.wait(lambda m: "error" in m)
    assert error["id"] is None and error["error"]["code"] == -32700, error
    client.send_bytes(b"X-Garbage: yes\r\n\r\n")
    error = client.wait(lambda m: "error" in m)
    assert error["error"]["code"] == -32700, error
    client.send_bytes(b"Content-Length: 2\r\n\r\n[]")
    assert client.wait(lambda m: "error" in m)["error"]["code"] == -32700
    client.initialize()
    client.open("file:///tmp/cudalint-lsp-test/Dockerfile", "FROM ubuntu:22.04\n")
    client.diagnostics("file:///tmp/cudalint-lsp-test/Dockerfile", 1)
    assert client.proc.poll() is None
    assert client.close() == 1  # stdin closed without shutdown


def test_requests_before_initialize_and_unknown_methods():
    client = RawClient()
    early = client.request("textDocument/hover", {})
    assert early["error"]["code"] == -32002, early
    client.initialize()
    unknown = client.request("cudalint/noSuchMethod", {"x": 1})
    assert unknown["error"]["code"] == -32601, unknown
    client.notify("$/noSuchNotification", {})
    bad_params = client.request("textDocument/hover", {"textDocument": 3})
    assert bad_params["error"]["code"] == -32602, bad_params
    client.open("file:///tmp/cudalint-lsp-test/Dockerfile", EXAMPLE)
    assert client.diagnostics("file:///tmp/cudalint-lsp-test/Dockerfile", 1)
    assert client.request("shutdown", None)["result"] is None
    client.notify("exit", None)
    assert client.proc.wait(timeout=TIMEOUT) == 0


def test_malformed_params_are_answered_invalid_params():
    client = RawClient()
    client.initialize()
    uri = "file:///tmp/cudalint-lsp-test/Dockerfile"
    client.open(uri, EXAMPLE)
    assert client.diagnostics(uri, 1)
    at = {"line": 0, "character": 0}
    span = {"start": at, "end": at}
    for method, params, message in [
        ("textDocument/hover", {"position": at}, "missing field `textDocument`"),
        ("textDocument/hover", {"textDocument": {"uri": uri}}, "missing field `position`"),
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}},
         "invalid value: integer `-1`, expected u32"),
        ("textDocument/completion", {"textDocument": {"uri": "not a uri"}, "position": at},
         "relative URL without a base"),
        ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": span, "context": {}},
         "missing field `diagnostics`"),
        ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": span,
                                     "context": {"diagnostics": [], "only": "quickfix"}},
         "expected a sequence"),
        ("textDocument/hover", None, "invalid type: null, expected struct HoverParams"),
    ]:
        answer = client.request(method, params)
        error = answer.get("error")
        assert error and error["code"] == -32602, (method, params, answer)
        assert error["message"].startswith("invalid parameters: ") and message in error["message"], error
    # A notification whose parameters do not parse is dropped (it has no answer); the session
    # goes on, and members the server does not read are ignored as before.
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri}, "contentChanges": []})
    hover = client.request("textDocument/hover", {
        "textDocument": {"uri": uri, "extra": 1}, "position": at, "workDoneToken": "t", "x": [1]})
    assert "result" in hover, hover
    assert client.close() == 1


def test_a_one_megabyte_document_and_a_thousand_rapid_edits_keep_memory_bounded():
    client = RawClient()
    client.initialize()
    uri = "file:///tmp/cudalint-lsp-test/big.Dockerfile"
    # 1 MB that every stage of the server reads: the example's stages, a RUN heredoc of 4,096
    # commands for the shell reader, and comment lines for the suppression scanner. (Repeating the
    # example's installs instead measures the lint's own growth, which scripts/bench-lsp does; in
    # a debug build under CI's load it would outlast the timeout, not test robustness.)
    heredoc = "RUN <<EOF\n" + "".join(f"echo step {n} >> /tmp/log\n" for n in range(4096)) + "EOF\n"
    comment = "# cudalint server robustness: a long comment line that fills the document\n"
    big = EXAMPLE + heredoc
    big += comment * (1 + ((1 << 20) - len(big)) // len(comment))
    assert len(big) >= 1 << 20
    client.open(uri, big)
    assert client.diagnostics(uri, 1)

    small = "file:///tmp/cudalint-lsp-test/Dockerfile"
    client.open(small, EXAMPLE)
    client.diagnostics(small, 1)
    samples = []
    for version in range(2, 1002):
        text = EXAMPLE + f"RUN echo edit {version}\n"
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": small, "version": version}, "contentChanges": [{"text": text}]},
        )
        if version % 250 == 0:
            client.diagnostics(small, version)
            samples.append(client.rss_kib())
    last = client.diagnostics(small, 1001)
    assert last, "the last edit's findings"

    # Flat: the last sample within 10% (plus 8 MiB of slack) of the first.
    assert samples[-1] <= samples[0] * 1.1 + 8192, samples
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    cleared = client.wait(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    )
    assert cleared["params"]["diagnostics"] == []
    assert client.close() == 1


def test_the_server_exits_when_the_client_disappears():
    # stdin closed: exit.
    client = RawClient()
    client.initialize()
    client.proc.stdin.close()
    assert client.proc.wait(timeout=TIMEOUT) == 1
    # Nobody reads stdout any more: the next write fails, and the server exits. (A client of
    # its own: the reader thread of RawClient would hold stdout open.)
    proc = subprocess.Popen([BIN, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    proc.stdout.close()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"processId": None, "rootUri": None, "capabilities": {}}}).encode()
    try:
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()
    except BrokenPipeError:
        pass
    assert proc.wait(timeout=TIMEOUT) == 1


def test_utf8_positions_when_the_client_offers_them():
    client = RawClient()
    result = client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {
        "general": {"positionEncodings": ["utf-8", "utf-16"]}}})
    assert result["result"]["capabilities"]["positionEncoding"] == "utf-8"
    client.notify("initialized", {})
    uri = "file:///tmp/cudalint-lsp-test/Dockerfile"
    line = 'RUN echo "𝄞 é" && apt-get update && apt-get install -y curl'
    client.open(uri, "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n" + line + "\n")
    cu104 = next(d for d in client.diagnostics(uri, 1) if d["code"] == "CU104")
    assert cu104["range"]["start"] == {"line": 1, "character": line.encode().index(b"apt-get")}
    assert client.close() == 1
