"""Raw-frame fuzz of nav's three JSON-RPC front ends: `nav mcp`, `nav lsp` and the daemon socket.

Thousands of generated malformed envelopes (random JSON values, wrong types in every field,
deep nesting, huge numbers, bad UTF-8, truncated and concatenated frames, stray bytes,
batches, bad Content-Length headers) go to a real process of each front end. After each
envelope a valid request (the *sentinel*) is sent; the envelope counts as answered when a
reply carrying one of its ids arrived, or a reply with id null arrived before the sentinel's.
What must be answered is decided here, from JSON-RPC 2.0 alone (nav's own check is not
used): anything but a notification (an object with a method and no id) or a response.

Checked: every envelope that may be a request is answered, the sentinel after each one is
answered, no process dies, and a final valid request gets the right answer.

    python bench/fuzz_frames.py                     # 3,000 envelopes per front end
    python bench/fuzz_frames.py -n 500 --seed 7 --only lsp
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness.jsonrpc import frame_bytes, read_frame  # noqa: E402

WORKSPACE = REPO / "tests" / "workspaces" / "python"
SENTINEL_WAIT_S = 60.0

# -- what the envelopes are made of -------------------------------------------------------------

METHODS = {
    # cheap methods only: the fuzz is about envelopes, not about starting language servers
    "mcp": ["ping", "tools/list", "tools/call", "resources/list", "prompts/list", "initialize",
            "notifications/cancelled", "notifications/progress", "nav/nope", ""],
    "lsp": ["nav/status", "workspace/symbol", "nav/nope", "$/cancelRequest", "$/setTrace",
            "textDocument/definition", "initialized", ""],
    "daemon": ["daemon.ping", "daemon.status", "symbols", "definitions", "outline", "nope", "__init__", ""],
}  # fmt: skip
NEVER = {"mcp": set(), "lsp": {"exit", "shutdown"}, "daemon": {"daemon.stop", "index"}}
"""Methods a fuzz must not send well-formed: they end or rebuild the front end by design."""

WEIRD_NUMBERS = [b"1e999", b"-1e999", b"-0", b"1.5", b"123456789012345678901234567890", b"9" * 5000,
                 b"2.5e-400", b"18446744073709551616", b"-9223372036854775809", b"0.0"]  # fmt: skip
BAD_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80"]


def rand_string(rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.4:
        return "".join(rng.choice("abcXYZ_/.:") for _ in range(rng.randint(0, 12)))
    if pick < 0.6:
        return "".join(
            chr(rng.choice([rng.randint(0, 31), rng.randint(0x80, 0x2FFF), 0xFFFD])) for _ in range(5)
        )
    if pick < 0.7:
        return "\udcff" + "x"  # a lone surrogate (json.dumps escapes it)
    if pick < 0.8:
        return "a" * rng.choice([1000, 100_000])
    return rng.choice(["", " ", "2.0", "null", "Order", "orders/service.py:1:1", "\u0000"])


def rand_value(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["null", "bool", "int", "float", "str", "list", "dict"] if depth < 4 else ["null", "int", "str"]
    kind = rng.choice(kinds)
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 1, 2**31, 2**63, -(2**63) - 1, 10**30, rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([1.5, -0.0, 1e308, 2.2e-308, 0.1])
    if kind == "str":
        return rand_string(rng)
    if kind == "list":
        return [rand_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rand_string(rng)[:20]: rand_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def rand_params(rng: random.Random, proto: str, method: str) -> Any:
    if proto == "mcp" and method == "tools/call" and rng.random() < 0.7:
        # real tools with wrong arguments, never a semantic search (no model load in a fuzz)
        name = rng.choice(["def", "outline", "map", "nope", 5, None])
        return {"name": name, "arguments": rng.choice([{}, {"name": rand_value(rng)}, rand_value(rng)])}
    if proto == "daemon" and rng.random() < 0.5:
        return {"__args__": rand_value(rng)} if rng.random() < 0.3 else {"name": rand_value(rng)}
    if rng.random() < 0.6:
        return {rand_string(rng)[:20]: rand_value(rng) for _ in range(rng.randint(0, 3))}
    return rand_value(rng)


@dataclass
class Counter:
    n: int = 0

    def next_id(self, rng: random.Random) -> str | int:
        self.n += 1
        return f"f{self.n}" if rng.random() < 0.5 else 10**6 + self.n


def envelope(rng: random.Random, proto: str, ids: Counter) -> Any:
    """One JSON-RPC-shaped object, mutated: fields missing, of every wrong type, or extra."""
    method = rng.choice(METHODS[proto])
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": ids.next_id(rng), "method": method,
                           "params": rand_params(rng, proto, method)}  # fmt: skip
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        key = rng.choice(["jsonrpc", "id", "method", "params", "result", "error", "extra"])
        action = rng.random()
        if action < 0.3:
            msg.pop(key, None)
        elif key == "id" and action < 0.6:
            msg["id"] = rng.choice([None, 1.5, -0.5, True, {"a": 1}, [1], "", ids.next_id(rng)])
        elif key == "jsonrpc" and action < 0.6:
            msg["jsonrpc"] = rng.choice(["1.0", "2", 2.0, None, "", "2.0 "])
        else:
            msg[key] = rand_value(rng)
    if isinstance(msg.get("method"), str) and msg["method"] in NEVER[proto]:
        msg["method"] = "nav/nope"
    return msg


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True).encode()


def payload(rng: random.Random, proto: str, ids: Counter) -> tuple[str, bytes]:
    """A kind and the bytes of one message (line protocols: no newline inside)."""
    kind = rng.choices(
        ["envelope", "batch", "deep", "number", "badutf8", "garbage", "truncated", "concat", "scalar",
         "empty", "notification", "response"],
        weights=[30, 8, 6, 6, 6, 5, 6, 5, 4, 2, 6, 4],
    )[0]  # fmt: skip
    if kind == "envelope":
        return kind, dumps(envelope(rng, proto, ids))
    if kind == "notification":
        msg = envelope(rng, proto, ids)
        msg.pop("id", None)
        return kind, dumps(msg)
    if kind == "response":
        resp: dict[str, Any] = {
            "jsonrpc": rng.choice(["2.0", "1.0"]),
            "id": rng.choice([ids.next_id(rng), None, 1.5]),
        }
        resp["result" if rng.random() < 0.5 else "error"] = rand_value(rng)
        return kind, dumps(resp)
    if kind == "batch":
        members = [envelope(rng, proto, ids) for _ in range(rng.choice([0, 1, 2, 5]))]
        if members and rng.random() < 0.3:
            members[0].pop("id", None)
        return kind, dumps(members)
    if kind == "deep":
        levels = rng.choice([40, 70, 200, 1000, 3000, 100_000])
        open_, close = (b"[", b"]") if rng.random() < 0.5 else (b'{"a":', b"}")
        head = dumps(envelope(rng, proto, ids))[:-1] + b', "deep": '
        return kind, head + open_ * levels + b"1" + close * levels + b"}"
    if kind == "number":
        msg = envelope(rng, proto, ids)
        text = dumps(msg)
        number = rng.choice(WEIRD_NUMBERS)
        if rng.random() < 0.5 and b'"id": ' in text:  # the id itself
            start = text.index(b'"id": ') + 6
            end = text.find(b",", start)
            end = len(text) - 1 if end < 0 else end
            return kind, text[:start] + number + text[end:]
        return kind, text[:-1] + b', "n": ' + number + b"}"
    if kind == "badutf8":
        text = dumps(envelope(rng, proto, ids))
        at = text.rfind(b'"', 0, len(text) - 1)
        at = at if at > 0 else len(text) // 2
        return kind, text[:at] + rng.choice(BAD_UTF8) + text[at:]
    if kind == "garbage":
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        return kind, raw.replace(b"\n", b" ").replace(b"\r", b" ")
    if kind == "truncated":
        text = dumps(envelope(rng, proto, ids))
        return kind, text[: rng.randint(1, max(1, len(text) - 1))]
    if kind == "concat":
        return kind, dumps(envelope(rng, proto, ids)) + rng.choice([b"", b" "]) + dumps(
            envelope(rng, proto, ids)
        )
    if kind == "scalar":
        return kind, dumps(rand_value(rng))
    return kind, b""


frame = frame_bytes  # raw bytes under an LSP header: the fuzz frames bodies that are not JSON too


@dataclass
class Case:
    kind: str
    data: bytes
    bodies: list[bytes]
    """The messages inside, as the reader should see them (for what must be answered)."""


def cases(rng: random.Random, proto: str, n: int) -> Iterator[Case]:
    ids = Counter()
    for _ in range(n):
        kind, body = payload(rng, proto, ids)
        if proto != "lsp":
            yield Case(kind, body + b"\n", [body])
            continue
        fault = rng.choices(["none", "stray", "length", "short", "long", "noheader", "headers"],
                            weights=[60, 8, 8, 6, 6, 6, 6])[0]  # fmt: skip
        if fault == "none":
            yield Case(kind, frame(body), [body])
        elif fault == "stray":
            stray = rng.choice(
                [b"abcd", b"\r\n\r\n", b"xy\n", b"\x00\xff", b"Content-Type: x\r\n\r\n", b"{}" * 30]
            )
            yield Case(f"{kind}+stray", stray + frame(body), [body])
        elif fault == "length":
            bad = rng.choice([b"abc", b"-1", b"99999999999", b"", b"1e3", b"0x10", b"+5", b"\xff"])
            yield Case(f"{kind}+bad-length", b"Content-Length: " + bad + b"\r\n\r\n" + body, [b"<bad frame>"])
        elif fault == "short" and len(body) > 2:
            cut = rng.randint(1, len(body) - 1)
            yield Case(f"{kind}+short-length", b"Content-Length: %d\r\n\r\n" % cut + body, [body[:cut]])
        elif fault == "long":
            extra = rng.randint(1, 40)
            filler = b" " * extra  # what a too-long length swallows, sent here so the next frame stays whole
            yield Case(f"{kind}+long-length", b"Content-Length: %d\r\n\r\n" % (len(body) + extra) + body + filler,
                       [body + filler])  # fmt: skip
        elif fault == "noheader":
            yield Case(
                f"{kind}+no-header", b"Content-Type: application/json\r\n\r\n" + body, [b"<bad frame>"]
            )
        else:
            second = dumps(envelope(rng, proto, ids))
            yield Case(f"{kind}+two-frames", frame(body) + frame(second), [body, second])


# -- what must be answered (JSON-RPC 2.0 only) --------------------------------------------------


def _may_be_request(msg: Any) -> bool:
    if not isinstance(msg, dict):
        return True
    if "method" in msg:
        return "id" in msg
    return not ("result" in msg or "error" in msg)


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _top_ids(body: bytes) -> set[Any]:
    """The id of a message too deep to parse: the first ``"id": `` in it (the random keys and
    strings of this fuzz are never ``id``, so that is the top-level member)."""
    at = body.find(b'"id": ')
    if at < 0:
        return set()
    try:
        value, _ = json.JSONDecoder().raw_decode(body[at + 6 : at + 200].decode("utf-8", "replace"))
    except ValueError:
        return set()
    return {value} if _valid_id(value) else set()


def must_answer(body: bytes) -> tuple[bool, set[Any]]:
    """(whether a reply is owed, the ids a reply may carry)."""
    if body == b"<bad frame>":
        return True, set()
    try:
        value = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:  # a parse error; a server that reads the id anyway may use it
        try:
            value = json.loads(body.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return True, _top_ids(body)
        return True, {m["id"] for m in (value if isinstance(value, list) else [value])
                      if isinstance(m, dict) and _valid_id(m.get("id"))}  # fmt: skip
    except RecursionError:
        return True, _top_ids(body)
    except ValueError:
        return True, set()
    members = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not value:
        return True, set()
    owed = [m for m in members if _may_be_request(m)]
    ids = {m["id"] for m in owed if isinstance(m, dict) and _valid_id(m.get("id"))}
    return bool(owed), ids


# -- the front ends -------------------------------------------------------------------------------


class Transport:
    """Bytes to a front end; its replies (parsed) on a queue; None when it closed."""

    def __init__(self) -> None:
        self.replies: queue.Queue[Any] = queue.Queue()

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def alive(self) -> bool:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class StdioLines(Transport):
    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
        super().__init__()
        self.log = cwd.parent / f"{cmd[-1]}.stderr"  # what the server logged, for a post-mortem
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=err)  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class StdioFrames(StdioLines):
    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            msg = read_frame(out)
            self.replies.put(msg)
            if msg is None:
                return


class SocketLines(Transport):
    def __init__(self, path: Path, pid: int) -> None:
        super().__init__()
        self.path, self.pid = path, pid
        self._connect()

    def _connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(self.path))
        threading.Thread(target=self._read, args=(self.sock,), daemon=True).start()

    def _read(self, sock: socket.socket) -> None:
        with sock.makefile("rb") as f:
            for line in f:
                self.replies.put(json.loads(line))
        self.replies.put(None)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def close(self) -> None:
        self.sock.close()


# -- the run ----------------------------------------------------------------------------------------


@dataclass
class Report:
    front_end: str
    sent: int = 0
    owed: int = 0
    answered: int = 0
    notifications_answered: int = 0
    unanswered: list[str] = field(default_factory=list)
    sentinel_missing: int = 0
    missed: list[str] = field(default_factory=list)
    died: bool = False
    final_ok: bool = False
    seconds: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)

    def ok(self) -> bool:
        return self.owed == self.answered and not self.sentinel_missing and not self.died and self.final_ok

    def line(self) -> str:
        return (
            f"{self.front_end:7} sent {self.sent:5}  owed a reply {self.owed:5}  answered {self.answered:5}  "
            f"unanswered {len(self.unanswered)}  sentinels missed {self.sentinel_missing}  "
            f"died {'yes' if self.died else 'no'}  final request {'ok' if self.final_ok else 'FAILED'}  "
            f"({self.seconds:.1f} s)"
        )


def run(
    name: str,
    transport: Transport,
    all_cases: list[Case],
    sentinel: Callable[[str], bytes],
    final: Callable[[Transport], bool],
    *,
    stop: Callable[[], bool] = lambda: False,
) -> Report:
    report = Report(name)
    started = time.monotonic()
    late: dict[Any, int] = {}  # id -> the case owed a reply under it
    satisfied: set[int] = set()
    owed_cases: set[int] = set()
    for i, case in enumerate(all_cases):
        if stop():
            break
        report.sent += 1
        report.kinds[case.kind] = report.kinds.get(case.kind, 0) + 1
        owed = False
        for body in case.bodies:
            must, ids = must_answer(body)
            owed = owed or must
            for req_id in ids:
                late[req_id] = i
        if owed:
            owed_cases.add(i)
        mark = f"sentinel-{i}"
        try:
            transport.send(case.data + sentinel(mark))
        except OSError:
            report.died = not transport.alive()
            if report.died:
                break
            if isinstance(transport, SocketLines):  # the daemon let this connection go: a new one
                transport._connect()
            continue
        got_null = False
        closed = False
        deadline = time.monotonic() + SENTINEL_WAIT_S
        while True:
            try:
                reply = transport.replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                report.sentinel_missing += 1
                report.missed.append(f"#{i} {case.kind}: {case.data[:160]!r}")
                break
            if reply is None:
                closed = True
                break
            done = False
            for r in reply if isinstance(reply, list) else [reply]:
                rid = r.get("id") if isinstance(r, dict) else None
                if rid == mark:
                    done = True
                elif rid is None:
                    got_null = True
                elif rid in late:
                    satisfied.add(late[rid])
            if done:
                break
        if got_null:
            if owed:
                satisfied.add(i)
            else:
                report.notifications_answered += 1
        if closed:
            if not transport.alive() or not isinstance(transport, SocketLines):
                report.died = True
                break
            report.sentinel_missing += 1  # the daemon closed this connection: go on with a new one
            transport._connect()
    # replies still on the way (a slow request) count when they come
    quiet_until = time.monotonic() + 2.0
    while time.monotonic() < quiet_until and not report.died:
        try:
            reply = transport.replies.get(timeout=0.2)
        except queue.Empty:
            continue
        for r in reply if isinstance(reply, list) else [reply]:
            if isinstance(r, dict) and r.get("id") in late:
                satisfied.add(late[r["id"]])
    report.owed = len(owed_cases)
    report.answered = len(owed_cases & satisfied)
    report.unanswered = [
        f"#{i} {all_cases[i].kind}: {all_cases[i].data[:160]!r}" for i in sorted(owed_cases - satisfied)
    ]
    report.died = report.died or not transport.alive()
    report.final_ok = not report.died and final(transport)
    report.seconds = time.monotonic() - started
    return report


def _answer(transport: Transport, req_id: str, timeout_s: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            reply = transport.replies.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if reply is None:
            return None
        if isinstance(reply, dict) and reply.get("id") == req_id:
            return reply
    return None


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NAV_DAEMON_NO_EMBED": "1", "NAV_DAEMON_NO_WARM": "1"}


def fuzz_mcp(root: Path, n: int, seed: int) -> Report:
    cmd = [sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "-C", str(root), "mcp"]
    t = StdioLines(cmd, root, _env())
    try:
        t.send(dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}) + b"\n")  # fmt: skip
        if _answer(t, "init") is None:
            raise RuntimeError("nav mcp did not answer initialize")
        t.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

        def final(tr: Transport) -> bool:
            tr.send(dumps({"jsonrpc": "2.0", "id": "final", "method": "tools/call",
                           "params": {"name": "def", "arguments": {"name": "create_sales_order"}}}) + b"\n")  # fmt: skip
            reply = _answer(tr, "final")
            text = json.dumps(reply)
            return bool(reply and "result" in reply and "orders/service.py" in text)

        return run("mcp", t, list(cases(random.Random(seed), "mcp", n)),
                   lambda mark: dumps({"jsonrpc": "2.0", "id": mark, "method": "ping"}) + b"\n", final)  # fmt: skip
    finally:
        t.close()


def fuzz_lsp(root: Path, n: int, seed: int) -> Report:
    cmd = [sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"]
    t = StdioFrames(cmd, root, {**_env(), "NAV_NO_DAEMON": "1"})
    try:
        t.send(frame(dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}})))  # fmt: skip
        if _answer(t, "init") is None:
            raise RuntimeError("nav lsp did not answer initialize")
        t.send(frame(b'{"jsonrpc":"2.0","method":"initialized","params":{}}'))

        def final(tr: Transport) -> bool:
            tr.send(frame(dumps({"jsonrpc": "2.0", "id": "final", "method": "workspace/symbol",
                                 "params": {"query": "create_sales_order"}})))  # fmt: skip
            reply = _answer(tr, "final")
            return bool(reply and "result" in reply and "create_sales_order" in json.dumps(reply))

        return run("lsp", t, list(cases(random.Random(seed), "lsp", n)),
                   lambda mark: frame(dumps({"jsonrpc": "2.0", "id": mark, "method": "nav/status", "params": {}})),
                   final)  # fmt: skip
    finally:
        t.close()


def fuzz_daemon(root: Path, n: int, seed: int) -> Report:
    sys.path.insert(0, str(REPO))
    from navigator.frontends.client import DaemonClient
    from navigator.paths import daemon_paths

    quiet = {"NAV_DAEMON_NO_EMBED": "1", "NAV_DAEMON_NO_WARM": "1"}
    saved = {k: os.environ.get(k) for k in quiet}
    os.environ.update(quiet)  # for the daemon the client starts, and only for it
    try:
        client = DaemonClient(root)
        client.connect()  # starts the real daemon process
    finally:  # a test runs this in-process: its environment must not outlive the call
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    paths = daemon_paths(root)
    pid = int(json.loads(paths.info.read_text())["pid"])
    t = SocketLines(paths.socket, pid)
    try:

        def final(tr: Transport) -> bool:
            tr.send(dumps({"jsonrpc": "2.0", "id": "final", "method": "definitions",
                           "params": {"name": "create_sales_order"}}) + b"\n")  # fmt: skip
            reply = _answer(tr, "final")
            return bool(reply and "result" in reply and "orders/service.py" in json.dumps(reply))

        return run("daemon", t, list(cases(random.Random(seed), "daemon", n)),
                   lambda mark: dumps({"jsonrpc": "2.0", "id": mark, "method": "daemon.ping"}) + b"\n", final)  # fmt: skip
    finally:
        t.close()
        client.stop()


FRONT_ENDS = {"mcp": fuzz_mcp, "lsp": fuzz_lsp, "daemon": fuzz_daemon}


def prepare(base: Path) -> Path:
    root = base / "ws"
    shutil.copytree(WORKSPACE, root)
    subprocess.run([sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "-C", str(root), "index",
                    "--no-embed"], check=True, capture_output=True, env=_env(), timeout=600)  # fmt: skip
    return root


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=3000, help="envelopes per front end (default 3000)")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--only", choices=sorted(FRONT_ENDS), action="append")
    ap.add_argument("--json", dest="as_json", action="store_true")
    args = ap.parse_args()
    reports = []
    with tempfile.TemporaryDirectory(prefix="nav-fuzz-") as tmp:
        root = prepare(Path(tmp))
        for name in args.only or sorted(FRONT_ENDS):
            report = FRONT_ENDS[name](root, args.n, args.seed)
            reports.append(report)
            print(report.line(), flush=True)
            for miss in report.unanswered[:10]:
                print("   unanswered:", miss)
            for miss in report.missed[:10]:
                print("   no reply to the sentinel after:", miss)
    if args.as_json:
        print(json.dumps([r.__dict__ for r in reports], indent=1, default=str))
    return 0 if all(r.ok() for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
