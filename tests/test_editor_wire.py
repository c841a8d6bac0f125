"""`nav lsp` under bad input, over raw stdio frames against a real `nav lsp` process:
every request gets a reply, a bad frame is skipped, message size is bounded (issue 8 §4)."""

from __future__ import annotations

import io
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from navigator.frontends.editor_rpc import BadFrame, describe_invalid, read_messages

WORKSPACE = Path(__file__).parent / "workspaces" / "python"
WAIT_S = 30.0


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawClient:
    """Writes bytes to `nav lsp`'s stdin; reads its framed replies on a thread."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NAV_NO_DAEMON": "1"},
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.messages.put(json.loads(out.read(length)))

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout_s: float = WAIT_S) -> dict[str, Any]:
        """The first message matching ``pred`` (others are dropped); fails after ``timeout_s``."""
        while True:
            try:
                msg = self.messages.get(timeout=timeout_s)
            except queue.Empty:
                raise AssertionError(f"no matching message within {timeout_s}s") from None
            if msg is None:
                raise AssertionError(f"nav lsp exited: {self.proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            if pred(msg):
                return msg

    def reply(self, msg_id: Any, timeout_s: float = WAIT_S) -> dict[str, Any]:
        return self.wait(lambda m: "method" not in m and m.get("id") == msg_id, timeout_s)

    def close(self) -> None:
        self.send(frame({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}))
        self.reply("bye")
        self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        try:
            assert self.proc.wait(timeout=WAIT_S) == 0
        finally:
            for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    root = tmp_path_factory.mktemp("wire") / "ws"
    shutil.copytree(WORKSPACE, root)
    c = RawClient(root)
    c.send(frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}))  # fmt: skip
    assert "result" in c.reply(0)
    c.uri = (root / "orders" / "service.py").as_uri()  # type: ignore[attr-defined]
    yield c
    c.close()


def definition(msg_id: int, uri: str, position: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/definition",
            "params": {"textDocument": {"uri": uri}, "position": position}}  # fmt: skip


def alive(client: RawClient, msg_id: int) -> None:
    client.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": "nav/status", "params": {}}))
    assert "result" in client.reply(msg_id)


def test_negative_line_gets_invalid_params_naming_it(client: RawClient) -> None:
    client.send(frame(definition(1, client.uri, {"line": -1, "character": 0})))  # type: ignore[attr-defined]
    error = client.reply(1)["error"]
    assert error["code"] == -32602
    assert "params.position" in error["message"] and '"line": -1' in error["message"]


def test_string_line_gets_invalid_params_naming_it(client: RawClient) -> None:
    client.send(frame(definition(2, client.uri, {"line": "abc", "character": 0})))  # type: ignore[attr-defined]
    error = client.reply(2)["error"]
    assert error["code"] == -32602
    assert "params.position.line" in error["message"] and '"abc"' in error["message"]


def test_missing_params_gets_invalid_params(client: RawClient) -> None:
    client.send(frame({"jsonrpc": "2.0", "id": 3, "method": "textDocument/references"}))
    error = client.reply(3)["error"]
    assert error["code"] == -32602 and "`params`" in error["message"] and "missing" in error["message"]


def test_a_huge_bad_value_is_echoed_shortened(client: RawClient) -> None:
    client.send(frame(definition(4, client.uri, {"line": "x" * 100_000, "character": 0})))  # type: ignore[attr-defined]
    error = client.reply(4)["error"]
    assert error["code"] == -32602 and len(error["message"]) < 400


def test_bad_content_length_is_skipped_and_the_next_request_answered(client: RawClient) -> None:
    client.send(b'Content-Length: abc\r\n\r\n{"jsonrpc": "2.0", "id": 5, "method": "nav/status"}')
    error = client.wait(lambda m: m.get("id") is None and "error" in m)["error"]
    assert error["code"] == -32700 and "`abc`" in error["message"]
    alive(client, 6)


def test_non_json_body_is_a_parse_error_and_the_server_keeps_answering(client: RawClient) -> None:
    client.send(b"Content-Length: 9\r\n\r\nnot json!")
    error = client.wait(lambda m: m.get("id") is None and "error" in m)["error"]
    assert error["code"] == -32700 and "not JSON" in error["message"]
    alive(client, 7)


def test_an_enormous_content_length_is_refused_without_allocating_it(client: RawClient) -> None:
    client.send(b'Content-Length: 99999999999\r\n\r\n{"jsonrpc": "2.0", "id": 8, "method": "nav/status"}')
    error = client.wait(lambda m: m.get("id") is None and "error" in m)["error"]
    assert error["code"] == -32700 and "over the limit" in error["message"]
    alive(client, 9)
    assert client.proc.poll() is None


def test_unknown_method_gets_method_not_found(client: RawClient) -> None:
    client.send(frame({"jsonrpc": "2.0", "id": 10, "method": "textDocument/noSuchThing", "params": {}}))
    assert client.reply(10)["error"]["code"] == -32601


# -- the frame reader alone (pure) ----------------------------------------------------------


def test_read_messages_resynchronises_after_bad_frames() -> None:
    data = (
        b"Content-Length: abc\r\n\r\n{}"
        + frame({"a": 1})
        + b"Content-Length: 99999999999\r\n\r\n{}"
        + b"\r\n"
        + frame([1])
        + b"X-Nothing\r\n\r\n"
        + frame("tail")
    )
    got = list(read_messages(io.BytesIO(data), max_bytes=1000))
    kinds = [type(g).__name__ if isinstance(g, BadFrame) else json.loads(g) for g in got]
    assert kinds == ["BadFrame", {"a": 1}, "BadFrame", [1], "BadFrame", "tail"]


def test_read_messages_stops_at_a_truncated_body() -> None:
    assert list(read_messages(io.BytesIO(b"Content-Length: 50\r\n\r\n{}"))) == []


def test_describe_invalid_names_field_and_value() -> None:
    import cattrs
    from lsprotocol import types
    from pygls.protocol import default_converter

    msg = definition(1, "file:///x.py", {"line": "abc", "character": 0})
    with pytest.raises(cattrs.ClassValidationError) as info:
        default_converter().structure(msg, types.TextDocumentDefinitionRequest)
    text = describe_invalid("textDocument/definition", msg, info.value)
    assert text == (
        "textDocument/definition: invalid params: invalid value for type, expected int "
        'at `params.position.line` (got "abc")'
    )


def test_a_client_that_never_sends_initialized_is_still_answered(tmp_path: Path) -> None:
    """Nothing indexes before `initialized`, so nothing may wait for that index: a request from a
    client that skips it (a protocol slip) is answered at once from what is there."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "mod.py").write_text("def greet(name):\n    return name\n")
    c = RawClient(root)
    try:
        c.send(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}))  # fmt: skip
        symbols = {"textDocument": {"uri": (root / "mod.py").as_uri()}}
        for n in (2, 3):  # the first makes the root's engine; the second used to wait for its index
            c.send(frame({"jsonrpc": "2.0", "id": n, "method": "textDocument/documentSymbol", "params": symbols}))
        # no `initialized`: the replies come without the 20 s wait for a first index
        assert [s["name"] for s in c.reply(3, timeout_s=10)["result"]] == ["greet"]
    finally:
        c.close()


# -- issue 17 §4: every message gets a reply --------------------------------------------------


def body_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


DEEP_1000 = b'{"jsonrpc":"2.0","id":40,"method":"nav/status","params":{"a":' + b"[" * 1000 + b"]" * 1000 + b"}}"  # fmt: skip


@pytest.mark.parametrize(
    ("data", "reply_id", "code"),
    [
        (body_frame(DEEP_1000), 40, -32600),  # a 2 KB frame that killed the server
        (body_frame(b'[{"jsonrpc":"2.0","id":41,"method":"nav/status","params":{}}]'), 41, -32600),
        (body_frame(b'{"jsonrpc":"2.0","id":42,"method":"nav/status","params":{"a":"\xff"}}'), 42, -32700),
        (body_frame(b'{"jsonrpc":"1.0","id":43,"method":"nav/status","params":{}}'), 43, -32600),
        (body_frame(b'{"id":44,"method":"nav/status","params":{}}'), 44, -32600),
        (body_frame(b'{"jsonrpc":"2.0","id":45.5,"method":"nav/status"}'), None, -32600),
    ],
    ids=["nested-1000", "batch", "bad-utf8", "jsonrpc-1.0", "no-jsonrpc", "id-1.5"],
)
def test_every_malformed_request_gets_a_reply(client: RawClient, data: bytes, reply_id: Any, code: int) -> None:
    client.send(data)
    reply = client.wait(lambda m: "method" not in m and m.get("id") == reply_id and "error" in m)
    assert reply["error"]["code"] == code, reply
    alive(client, 49)
    assert client.proc.poll() is None


def test_a_frame_after_stray_bytes_is_still_answered(client: RawClient) -> None:
    client.send(b"abcd" + frame({"jsonrpc": "2.0", "id": 50, "method": "nav/status", "params": {}}))
    assert "result" in client.reply(50)
    client.send(b"junk\r\n" + frame({"jsonrpc": "2.0", "id": 51, "method": "nav/status", "params": {}}))
    assert "result" in client.reply(51)


def test_read_messages_keeps_the_frame_after_stray_bytes() -> None:
    data = b"abcd" + frame({"a": 1}) + b"xy\n" + frame({"b": 2}) + b"q" * 20_000 + frame({"c": 3})
    got = list(read_messages(io.BytesIO(data)))
    kinds = [type(g).__name__ if isinstance(g, BadFrame) else json.loads(g) for g in got]
    assert kinds == ["BadFrame", {"a": 1}, "BadFrame", {"b": 2}, "BadFrame", {"c": 3}]


def test_requests_after_shutdown_are_refused_and_exit_still_exits(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(WORKSPACE, root)
    c = RawClient(root)
    try:
        c.send(frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}))  # fmt: skip
        assert "result" in c.reply(0)
        c.send(frame({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}))
        assert "error" not in c.reply(1)
        for msg_id, method in ((2, "nav/status"), (3, "workspace/symbol"), (4, "shutdown")):
            c.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {"query": "x"}}))
            error = c.reply(msg_id)["error"]
            assert error["code"] == -32600 and "shutting down" in error["message"]
        c.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert c.proc.wait(timeout=WAIT_S) == 0
    finally:
        c.proc.kill()
        c.proc.wait()
        for pipe in (c.proc.stdin, c.proc.stdout, c.proc.stderr):
            if pipe is not None:
                pipe.close()
