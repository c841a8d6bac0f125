"""Fault scenarios for ``nav lsp`` (area ``editor``): malformed requests and frames written as raw
bytes to a real ``nav lsp --no-daemon`` process, and an editor that goes away without ``exit``.

Honest: the fault got a JSON-RPC reply (a request: its id; a bad frame: id null) with the right
code and a message naming the bad value, or (input closed) the process exited on its own.
Recovered: the next request on the same connection was answered (the server still serves)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from bench.fault_scenarios import FaultResult, Scenario
from bench.harness.jsonrpc import frame as _frame
from bench.harness.jsonrpc import read_frame

AREA = "editor"
WAIT_S = 20.0
REPEAT = 3


class _Client:
    def __init__(self, root: Path) -> None:
        repo = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": repo + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"],
            cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.ids = iter(range(1, 1_000_000))
        self.send(_frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}))  # fmt: skip
        self.reply(0)

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            msg = read_frame(out)
            self.inbox.put(msg)
            if msg is None:
                return

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self, msg_id: Any) -> dict[str, Any] | None:
        """The reply to ``msg_id`` (None: no reply within WAIT_S, or the server died)."""
        while True:
            try:
                msg = self.inbox.get(timeout=WAIT_S)
            except queue.Empty:
                return None
            if msg is None:
                return None
            if "method" not in msg and msg.get("id") == msg_id:
                return msg

    def alive(self) -> bool:
        msg_id = next(self.ids)
        self.send(_frame({"jsonrpc": "2.0", "id": msg_id, "method": "nav/status", "params": {}}))
        reply = self.reply(msg_id)
        return reply is not None and "result" in reply

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


def _workspace(workdir: Path) -> Path:
    root = workdir / "ws"
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "mod.py").write_text("def greet(name: str) -> str:\n    return 'hi ' + name\n")
    return root


def bad_params(workdir: Path) -> list[FaultResult]:
    root = _workspace(workdir)
    uri = (root / "pkg" / "mod.py").as_uri()
    kinds = [
        ({"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}}, "-1"),
        ({"textDocument": {"uri": uri}, "position": {"line": "abc", "character": 0}}, '"abc"'),
        (None, "missing"),
    ]
    client = _Client(root)
    injected = honest = recovered = 0
    try:
        for _ in range(REPEAT):
            for params, named in kinds:
                msg_id = next(client.ids)
                msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/definition"}
                if params is not None:
                    msg["params"] = params
                client.send(_frame(msg))
                injected += 1
                reply = client.reply(msg_id)
                error = (reply or {}).get("error") or {}
                if error.get("code") == -32602 and named in error.get("message", ""):
                    honest += 1
                recovered += client.alive()
    finally:
        client.stop()
    return [FaultResult(AREA, "LSP request whose params do not deserialise (line -1, \"abc\", no params)",
                        injected, honest, recovered)]  # fmt: skip


def bad_frames(workdir: Path) -> list[FaultResult]:
    root = _workspace(workdir)
    cases = [
        ("LSP frame with `Content-Length: abc`", b'Content-Length: abc\r\n\r\n{"jsonrpc": "2.0", "id": 99}', "abc"),
        ("LSP frame whose body is not JSON", b"Content-Length: 9\r\n\r\nnot json!", "not JSON"),
        ("LSP frame with `Content-Length: 99999999999`", b"Content-Length: 99999999999\r\n\r\n{}", "over the limit"),
    ]
    out = []
    client = _Client(root)
    try:
        for fault, data, named in cases:
            injected = honest = recovered = 0
            for _ in range(REPEAT):
                client.send(data)
                injected += 1
                reply = client.reply(None)
                error = (reply or {}).get("error") or {}
                honest += error.get("code") == -32700 and named in error.get("message", "")
                recovered += client.alive()
            out.append(FaultResult(AREA, fault, injected, honest, recovered))
    finally:
        client.stop()
    return out


def input_closed(workdir: Path) -> list[FaultResult]:
    """The editor dies: its end of stdin closes without shutdown/exit. The server must exit."""
    root = _workspace(workdir)
    injected = honest = 0
    for _ in range(REPEAT):
        client = _Client(root)
        try:
            assert client.proc.stdin is not None
            client.proc.stdin.close()
            injected += 1
            try:
                client.proc.wait(timeout=WAIT_S)
                honest += 1
            except subprocess.TimeoutExpired:
                pass
        finally:
            client.stop()
    return [FaultResult(AREA, "editor gone without exit (stdin closed): nav lsp exits", injected, honest, honest,
                        note="recovered = exited on its own, leaving no process")]  # fmt: skip


SCENARIOS: list[Scenario] = [bad_params, bad_frames, input_closed]
