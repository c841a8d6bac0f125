"""Fault scenarios, area ``input``: hostile requests to a real daemon, hostile arguments to the real CLI,
hostile replies to the real client (issue 8 §4, "bad input always gets a reply, bounded").

A fault is *honest* when it is answered with a clear error (the right JSON-RPC code or exit code, a
message that quotes the bad value shortened) within its bound, and *recovered* when the daemon then
answers a real question correctly without anyone touching it. *lost* counts symbols of the finished
index that were gone afterwards (must be 0).

    PYTHONPATH=$PWD .venv/bin/python -c "import bench.fault_scenarios.input as m, pathlib, tempfile; \
        [print(r) for s in m.SCENARIOS for r in s(pathlib.Path(tempfile.mkdtemp()))]"
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.fault_scenarios import FaultResult, Scenario

AREA = "input"
REPO = Path(__file__).resolve().parent.parent.parent
ORDERS = (
    "class Order:\n    def total(self) -> int:\n        return 0\n\n\n"
    "def create_sales_order(customer: str) -> Order:\n    return Order()\n"
)
LINE_BOUND = 400
REPLY_BOUND_S = 10.0


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), NAV_DAEMON_NO_EMBED="1", NAV_DAEMON_NO_WARM="1")
    env.pop("NAV_NO_DAEMON", None)
    return env


def _make_repo(workdir: Path) -> Path:
    root = (workdir / "repo").resolve()
    root.mkdir(parents=True, exist_ok=True)
    (root / "orders.py").write_text(ORDERS, encoding="utf-8")
    return root


def _nav(root: Path, *args: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "navigator.frontends.entry", "-C", str(root), *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=str(REPO),
    )


class _Daemon:
    """A real daemon for ``root``, started through the CLI and stopped (or killed) at the end."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sock = str(root / ".nav" / "daemon.sock")
        started = _nav(root, "daemon", "start")
        if started.returncode != 0:
            raise RuntimeError(f"daemon did not start: {started.stderr[-500:]}")
        self.pid = int(json.loads((root / ".nav" / "daemon.json").read_text())["pid"])

    def answers(self) -> bool:
        """A real question, answered correctly."""
        done = _nav(self.root, "def", "create_sales_order")
        return done.returncode == 0 and done.stdout.startswith("orders.py:6:5")

    def symbols(self) -> int:
        done = _nav(self.root, "status", "--json")
        return int(json.loads(done.stdout)["symbols"]) if done.returncode == 0 else -1

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            _nav(self.root, "daemon", "stop", timeout_s=30)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, 0)
            os.kill(self.pid, signal.SIGKILL)


def _ask(path: str, data: bytes, *, timeout_s: float = REPLY_BOUND_S) -> tuple[dict[str, Any] | None, float]:
    """Send raw bytes (from a thread, so a big payload cannot deadlock) and read one reply line."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    started = time.monotonic()
    try:
        sock.connect(path)
        threading.Thread(target=lambda: _send_quietly(sock, data), daemon=True).start()
        buf = b""
        while b"\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                return None, time.monotonic() - started
            buf += chunk
        return json.loads(buf.split(b"\n", 1)[0]), time.monotonic() - started
    except (OSError, ValueError):
        return None, time.monotonic() - started
    finally:
        sock.close()


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):
        sock.sendall(data)


def _req(method: str, params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode() + b"\n"


def _error_is(reply: dict[str, Any] | None, code: int, *words: str) -> bool:
    if not reply or "error" not in reply:
        return False
    message = str(reply["error"].get("message", ""))
    return (
        reply["error"].get("code") == code
        and len(message) < LINE_BOUND + 300
        and all(w in message for w in words)
    )


def _frames(d: _Daemon) -> list[FaultResult]:
    cases: list[tuple[str, bytes, int, tuple[str, ...]]] = [
        ("wrong param type: limit \"ten\"", _req("symbols", {"pattern": "x", "limit": "ten"}), -32602, ("`limit`", '"ten"')),
        ("wrong param type: name 5", _req("definitions", {"name": 5}), -32602, ("`name`",)),
        ("wrong param type: deadline_s \"soon\"", _req("references", {"target": "Order", "deadline_s": "soon"}), -32602, ("`deadline_s`",)),
        ("wrong param type: progress callback", _req("index", {"progress": "print"}), -32602, ("`progress`",)),
        ("100,000-character pattern", _req("symbols", {"pattern": "a" * 100_000}), -32602, ("too long", "100,000")),
        ("position line 0", _req("references", {"target": "orders.py:0:1"}), -32602, ("line 0",)),
        ("JSON nested 100,000 deep", b"[" * 100_000 + b"]" * 100_000 + b"\n", -32600, ("nested too deep",)),
        ("params nested 100,000 deep", _req("symbols", {})[:-3] + b'"pattern": ' + b"[" * 100_000 + b"\n", -32600, ("nested too deep",)),
        ("not JSON", b"{not json\n", -32700, ("not JSON",)),  # the wording of frontends/wire.py since 733a749
        ("bytes that are not UTF-8", b"\xff\xfe\xfd\n", -32700, ("not valid UTF-8",)),
        ("NaN in params", b'{"jsonrpc": "2.0", "id": 1, "method": "symbols", "params": {"pattern": "x", "limit": NaN}}\n', -32700, ("NaN",)),
        ("an array, not a request", b"[1, 2]\n", -32600, ("batches are not supported",)),
        ("unknown method, 100,000 characters", b'{"jsonrpc": "2.0", "id": 1, "method": "' + b"m" * 100_000 + b'"}\n', -32601, ("unknown method",)),
    ]  # fmt: skip
    rows = []
    for fault, data, code, words in cases:
        injected = honest = recovered = 0
        for _ in range(2):
            injected += 1
            reply, elapsed = _ask(d.sock, data)
            honest += _error_is(reply, code, *words) and elapsed < REPLY_BOUND_S
            recovered += d.answers()
        rows.append(FaultResult(AREA, f"daemon request: {fault}", injected, honest, recovered))
    return rows


def _big_line(d: _Daemon) -> list[FaultResult]:
    injected = honest = recovered = 0
    worst_cpu = 0.0
    for _ in range(3):
        injected += 1
        cpu = d.cpu_s()
        payload = (
            b'{"jsonrpc": "2.0", "id": 1, "method": "symbols", "params": {"pattern": "'
            + b"a" * 50_000_000
            + b'"}}\n'
        )
        reply, elapsed = _ask(d.sock, payload, timeout_s=60)
        spent = d.cpu_s() - cpu
        worst_cpu = max(worst_cpu, spent)
        honest += _error_is(reply, -32600, "request too large") and elapsed < REPLY_BOUND_S and spent < 3.0
        recovered += d.answers()
    return [
        FaultResult(
            AREA,
            "daemon request: a 50 MB line",
            injected,
            honest,
            recovered,
            note=f"worst daemon CPU {worst_cpu:.2f} s (was 31 s)",
        )
    ]


def _burst(d: _Daemon) -> list[FaultResult]:
    socks: list[socket.socket] = []
    refused = 0
    for _ in range(200):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(d.sock)
            socks.append(s)
        except BlockingIOError:
            refused += 1
            s.close()
    answered = 0
    for i, s in enumerate(socks):
        s.setblocking(True)
        s.settimeout(REPLY_BOUND_S)
        with contextlib.suppress(OSError):
            s.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": "daemon.ping"}).encode() + b"\n")
    for i, s in enumerate(socks):
        buf = b""
        with contextlib.suppress(OSError):
            while not buf.endswith(b"\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
        with contextlib.suppress(ValueError):
            answered += bool(buf) and json.loads(buf).get("id") == i
        s.close()
    ok = d.answers()
    return [
        FaultResult(
            AREA,
            "200 concurrent non-blocking connects",
            200,
            answered,
            200 if ok else 0,
            note=f"{refused} got EAGAIN",
        )
    ]


def _held_connections(d: _Daemon, extra: int = 20) -> list[FaultResult]:
    """More connections held open than the daemon serves at once: the extra ones are told and closed."""
    from navigator.frontends.daemon import MAX_CONNECTIONS

    held: list[socket.socket] = []
    busy = 0
    try:
        for i in range(MAX_CONNECTIONS + extra):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(REPLY_BOUND_S)
            held.append(s)
            with contextlib.suppress(OSError):
                s.connect(d.sock)
                s.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": "daemon.ping"}).encode() + b"\n")
            with contextlib.suppress(OSError, ValueError), s.makefile("rb") as f:
                reply = json.loads(f.readline())
                busy += "too many connections" in str(reply.get("error", {}).get("message", ""))
    finally:
        for s in held:
            s.close()
    deadline = time.monotonic() + 30
    ok = False
    while not ok and time.monotonic() < deadline:  # slots come back as the daemon sees the closes
        reply, _ = _ask(d.sock, b'{"jsonrpc": "2.0", "id": 1, "method": "daemon.ping"}\n')
        ok = bool(reply and reply.get("result"))
        if not ok:
            time.sleep(0.05)
    return [
        FaultResult(
            AREA,
            f"{MAX_CONNECTIONS + extra} connections held open (cap {MAX_CONNECTIONS})",
            extra,
            min(busy, extra),
            extra if ok and d.answers() else 0,
        )
    ]


def daemon_requests(workdir: Path) -> list[FaultResult]:
    root = _make_repo(workdir)
    index = _nav(root, "index")
    if index.returncode != 0:
        raise RuntimeError(index.stderr[-500:])
    d = _Daemon(root)
    try:
        before = d.symbols()
        rows = _frames(d) + _big_line(d) + _burst(d) + _held_connections(d)
        lost = max(0, before - d.symbols())
    finally:
        d.stop()
    if lost:
        rows[-1] = dataclasses.replace(rows[-1], lost=lost)
    return rows


HUGE = "a" * 100_000
CLI_CASES: list[tuple[str, list[str], str]] = [
    ("nav symbols <100,000 characters>", ["symbols", HUGE], "a pattern is too long"),
    ("nav def <100,000 characters>", ["def", HUGE], "a symbol name is too long"),
    ("nav outline <100,000 characters>", ["outline", HUGE], "a path is too long"),
    ("nav symbols with a control character", ["symbols", "Or\x1bder"], "control characters"),
    ("nav refs PATH:0:1", ["refs", "orders.py:0:1"], "line 0"),
    ("nav hover PATH:1:-3", ["hover", "orders.py:1:-3"], "column -3"),
    ("nav refs --deadline inf", ["refs", "Order", "--deadline", "inf"], "deadline"),
    ("nav symbols -n <100,000 characters>", ["symbols", "x", "-n", HUGE], "not a valid integer"),
    ("nav search -k 99999999999", ["search", "x", "-k", "99999999999"], "k must be between"),
    ("nav map --tokens 10^23", ["map", "--tokens", "99999999999999999999999"], "tokens must be between"),
]


def cli_arguments(workdir: Path) -> list[FaultResult]:
    root = _make_repo(workdir)
    if _nav(root, "index").returncode != 0:
        raise RuntimeError("index failed")
    d = _Daemon(root)
    rows = []
    try:
        for fault, args, words in CLI_CASES:
            started = time.monotonic()
            done = _nav(root, *args)
            elapsed = time.monotonic() - started
            honest = (
                done.returncode == 2
                and words in done.stderr
                and "Traceback" not in done.stderr
                and all(len(line) < LINE_BOUND for line in done.stderr.splitlines())
                and elapsed < 30
            )
            rows.append(FaultResult(AREA, f"CLI: {fault}", 1, int(honest), int(d.answers())))
    finally:
        d.stop()
    return rows


def client_replies(workdir: Path) -> list[FaultResult]:
    """What answers on the daemon's socket sends garbage: the client says so, bounded, no traceback."""
    from navigator.frontends.client import DaemonClient
    from storage.errors import ServerError

    root = _make_repo(workdir)
    replies = [
        b"{not json\n",
        b"[" * 100_000 + b"\n",
        b'{"jsonrpc": "2.0", "id": 1}\n',
        b'{"jsonrpc": "2.0", "id": 1, "error": "boom"}\n',
        b'{"jsonrpc": "2.0", "id": 1, "result": {"type": "os:system", "value": {}}}\n',
    ]
    honest = recovered = 0
    for reply in replies:
        sock_path = root / ".nav" / "daemon.sock"
        sock_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            sock_path.unlink()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(sock_path))
        server.listen(1)
        server.settimeout(REPLY_BOUND_S)

        def answer(srv: socket.socket = server, data: bytes = reply) -> None:
            # garbage first; then, on whatever connection the client comes back on, a good answer
            with contextlib.suppress(OSError):
                conn, _ = srv.accept()
                with conn, conn.makefile("rb") as f:
                    f.readline()
                    conn.sendall(data)
                    if f.readline():
                        conn.sendall(b'{"jsonrpc": "2.0", "id": 2, "result": {"value": {"pid": 1}}}\n')
                        return
                conn, _ = srv.accept()
                with conn, conn.makefile("rb") as f:
                    f.readline()
                    conn.sendall(b'{"jsonrpc": "2.0", "id": 1, "result": {"value": {"pid": 1}}}\n')

        t = threading.Thread(target=answer, daemon=True)
        t.start()
        client = DaemonClient(root, autostart=False, timeout_s=REPLY_BOUND_S)
        try:
            client.symbols("order")
        except ServerError as exc:
            honest += len(str(exc)) < LINE_BOUND
        except Exception:  # anything else is the dishonest outcome this scenario counts
            pass
        try:
            recovered += client.daemon_status() == {"pid": 1}
        except Exception:  # not recovered: counted, not raised
            pass
        finally:
            client.close()
            server.close()
            t.join(timeout=REPLY_BOUND_S)
    return [
        FaultResult(AREA, "client: hostile replies on the daemon's socket", len(replies), honest, recovered)
    ]


SCENARIOS: list[Scenario] = [daemon_requests, cli_arguments, client_replies]
