#!/usr/bin/env python3
"""Latency and memory of language servers on one Dockerfile, through stdio (scripts/bench-lsp).

  bench.py FILE EDITS -- SERVER-COMMAND...

Opens FILE, then sends EDITS whole-text `didChange`s, one at a time, each waiting for the
`publishDiagnostics` that follows it (the text alternates between two versions that differ
in one line, so every edit changes what there is to lint); then 1,000 hovers on the first
FROM line. Prints p50/p99 of both, and the server's resident memory after each tenth of the
edits (flat means no growth per edit).
"""
import json
import statistics
import subprocess
import sys
import threading
import queue
import time


class Client:
    def __init__(self, command):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.inbox = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.id = 0

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
            self.inbox.put(json.loads(out.read(length)))

    def send(self, message):
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method, params):
        self.id += 1
        self.send({"id": self.id, "method": method, "params": params})
        while True:
            message = self.inbox.get(timeout=60)
            if message.get("id") == self.id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a request to the client
                self.send({"id": message["id"], "result": None})

    def wait_diagnostics(self, uri):
        while True:
            message = self.inbox.get(timeout=60)
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                return message["params"]
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as status:
            return int(next(l for l in status if l.startswith("VmRSS:")).split()[1])


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    path, edits = sys.argv[1], int(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1:]
    text = open(path).read()
    lines = text.splitlines(keepends=True)
    from_line = next(i for i, l in enumerate(lines) if l.upper().startswith("FROM "))
    # The second text differs in one RUN line in the middle.
    middle = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("RUN "))
    other = "".join(lines[:middle] + ["RUN echo edited && " + lines[middle][4:]] + lines[middle + 1:])
    uri = "file:///tmp/cudalint-bench-lsp/Dockerfile"
    client = Client(command)
    client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {
        "textDocument": {"publishDiagnostics": {"versionSupport": True}}}})
    client.send({"method": "initialized", "params": {}})
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "dockerfile", "version": 1, "text": text}}})
    first = client.wait_diagnostics(uri)
    latencies, rss = [], [client.rss_kib()]
    for n in range(edits):
        body = other if n % 2 == 0 else text
        start = time.perf_counter()
        client.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": n + 2}, "contentChanges": [{"text": body}]}})
        client.wait_diagnostics(uri)
        latencies.append((time.perf_counter() - start) * 1000)
        if (n + 1) % max(1, edits // 10) == 0:
            rss.append(client.rss_kib())
    hovers = []
    for _ in range(1000):
        start = time.perf_counter()
        client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                              "position": {"line": from_line, "character": 6}})
        hovers.append((time.perf_counter() - start) * 1000)
    client.request("shutdown", None)
    client.send({"method": "exit", "params": None})
    client.proc.wait(timeout=30)
    print(f"  {len(lines)} lines, {len(first['diagnostics'])} diagnostics on open")
    print(f"  didChange -> publishDiagnostics over {edits} edits: p50 {statistics.median(latencies):.2f} ms,"
          f" p99 {percentile(latencies, 99):.2f} ms, max {max(latencies):.2f} ms")
    print(f"  hover on FROM over 1000 requests: p50 {statistics.median(hovers):.2f} ms,"
          f" p99 {percentile(hovers, 99):.2f} ms")
    print(f"  RSS (MiB) after each tenth of the edits: {' '.join(f'{k / 1024:.1f}' for k in rss)}")


if __name__ == "__main__":
    main()
