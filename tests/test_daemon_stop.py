"""How a daemon ends: a native crash leaves the threads' stacks in its log."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from faultkit import running_in

from navigator.paths import daemon_paths

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _start(
    root: Path, *args: str, env: dict[str, str] | None = None, watch: bool = False
) -> subprocess.Popen[str]:
    """A daemon for ``root`` as the client starts one (its log under ``.nav/``), once it said ready."""
    r, w = os.pipe()
    base = {**os.environ, "PYTHONPATH": str(ROOT), "NAV_DAEMON_NO_EMBED": "1"}
    args = args if watch else ("--no-watch", *args)
    proc = subprocess.Popen(
        [sys.executable, "-m", "navigator.frontends.daemon", str(root), "--ready-fd", str(w), *args],
        pass_fds=(w,), cwd=ROOT, env={**base, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    os.close(w)
    try:
        said, _, _ = select.select([r], [], [], 120.0)
        word = os.read(r, 64).strip() if said else b""
    finally:
        os.close(r)
    if word != b"ready":
        proc.kill()
        _, err = proc.communicate(timeout=60)
        raise AssertionError(f"the daemon did not say ready ({word!r}): {err[-2000:]}")
    return proc


def test_a_native_crash_leaves_the_thread_stacks_in_the_daemons_log(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(HERE / "workspaces" / "python", root)
    proc = _start(root, env={"NAV_DAEMON_NO_WARM": "1"})
    os.kill(proc.pid, signal.SIGSEGV)  # what a fault in SQLite, tree-sitter or a model would raise
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGSEGV
    log = daemon_paths(root.resolve()).log.read_text(encoding="utf-8", errors="replace")
    assert "Current thread" in log or "Thread 0x" in log, log[-2000:]


def _many_files(root: Path) -> Path:
    """400 Python files of 30 functions each, every one calling the next file's."""
    for i in range(400):
        pkg = root / f"pkg{i % 20}"
        pkg.mkdir(parents=True, exist_ok=True)
        body = (
            f"def f{i}_{j}(x: int) -> int:\n    return f{(i + 1) % 400}_{j}(x) + {j}\n\n\n" for j in range(30)
        )
        (pkg / f"mod{i}.py").write_text("".join(body), encoding="utf-8")
    return root


def test_a_daemon_stopped_during_its_first_index_exits_and_leaves_the_index_whole(tmp_path: Path) -> None:
    """Stopped while its first index runs (SIGTERM right after ``ready``), a daemon closed the
    index's connection under that thread as it read the index's languages, and CPython's
    sqlite3 then read the closed handle: SIGSEGV. It waits for the thread now (bounded) and
    exits as SIGTERM asks."""
    root = _many_files(tmp_path / "many")
    proc = _start(root, env={"NAV_DAEMON_NO_WARM": "1"})
    proc.terminate()
    _, err = proc.communicate(timeout=120)
    log = daemon_paths(root.resolve()).log.read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, (proc.returncode, err[-2000:], log[-3000:])
    assert "Traceback" not in err + log, err[-2000:] + log[-3000:]
    from navigator.api import Navigator

    with Navigator(root) as nav:  # whatever the stop cut short, the next run finishes it
        nav.index()
        assert nav.definitions("f399_29").items


def test_a_daemon_stopped_while_it_launches_its_server_early_exits_and_leaves_none(tmp_path: Path) -> None:
    """The daemon launches the server of an indexed root before it imports the pool, in a thread
    that then waits for the server to load: stopped then, it exits as SIGTERM asks and no
    language server outlives it."""
    from lsp.registry import available_definition
    from navigator.api import Navigator

    if available_definition("python") is None:
        pytest.skip("no Python server installed")
    root = (tmp_path / "ws").resolve()
    shutil.copytree(HERE / "workspaces" / "python", root)
    with Navigator(root) as nav:
        nav.index()
    env = {k: v for k, v in os.environ.items() if k != "NAV_DAEMON_NO_WARM"}
    proc = _start(root, "--expect", "references", "create_sales_order", env=env)
    launched = running_in(root)
    proc.terminate()
    _, err = proc.communicate(timeout=120)
    log = daemon_paths(root).log.read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, (proc.returncode, err[-2000:], log[-3000:])
    assert "Traceback" not in err + log, err[-2000:] + log[-3000:]
    assert launched, "no server was running when the daemon was stopped"  # else this tests nothing
    assert running_in(root) == [], (launched, log[-3000:])


def test_requests_in_flight_when_a_daemon_stops_do_not_crash_it(tmp_path: Path) -> None:
    """A request reading the index (its cursor mid-way through the rows) when the daemon stops
    had its connection closed under it: SIGSEGV (about 1 stop in 8 here, before). The stop now
    waits for the requests in flight (bounded), answers no new one, then closes the index."""
    import json
    import socket
    import threading

    from navigator.api import Navigator

    root = _many_files(tmp_path / "many")
    with Navigator(root) as nav:
        nav.index()
    questions = [
        {"method": "repo_map", "params": {"tokens": 8192}},
        {"method": "symbols", "params": {"__args__": ["f1"], "limit": 5000}},
        {"method": "definitions", "params": {"__args__": ["f3_7"]}},
    ]
    for _ in range(4):
        proc = _start(root, env={"NAV_DAEMON_NO_WARM": "1"}, watch=True)  # watching: no stat walk per query
        answered = threading.Event()
        refused: list[str] = []

        def ask(question: dict[str, object], answered: threading.Event, refused: list[str]) -> None:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(str(daemon_paths(root.resolve()).socket))
                with sock.makefile("rwb") as f:
                    for i in range(10_000):  # until the daemon closes the connection
                        try:
                            f.write((json.dumps({"jsonrpc": "2.0", "id": i, **question}) + "\n").encode())
                            f.flush()
                            line = f.readline()
                        except OSError:  # the daemon is gone
                            return
                        if not line.endswith(b"\n"):  # closed (mid-reply: the process ended)
                            return
                        reply = json.loads(line)
                        if "result" in reply:
                            answered.set()
                        else:  # asked as the daemon stops: it says so
                            refused.append(reply["error"]["message"])

        askers = [threading.Thread(target=ask, args=(q, answered, refused), daemon=True) for q in questions]
        for t in askers:
            t.start()
        assert answered.wait(120), "no answer from the daemon"
        proc.terminate()
        _, err = proc.communicate(timeout=120)
        for t in askers:
            t.join(timeout=60)
        log = daemon_paths(root.resolve()).log.read_text(encoding="utf-8", errors="replace")
        assert proc.returncode == 0, (proc.returncode, err[-2000:], log[-3000:])
        assert not any(t.is_alive() for t in askers)
        assert all("stopping" in why for why in refused), refused
