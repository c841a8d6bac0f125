"""Cancelled, timed-out, killed and stopped requests never leave a language server broken.

Against the REAL basedpyright on a copy of the committed Python workspace:

- a deadline storm (many requests cut off by tiny deadlines), with and without injected
  CPU load, then a normal request gets the server's complete answer from the same
  process (no restart was needed);
- a server poisoned by a cancel (basedpyright answers -32603 "this._token.cancel is not a
  function" to every later references request) is replaced, and the request retried;
- a server SIGKILLed or SIGSTOPped mid-request: an honest answer within the deadline,
  and a restarted server on the next request.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp.pool import LspAnswer, Position, ServerPool
from lsp.registry import available_definition
from lsp.session import RequestFailed

pytestmark = pytest.mark.slow

WORKSPACE = Path(__file__).parent / "workspaces" / "python"
DEADLINE = 90.0


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if available_definition("python") is None or available_definition("python")[0].name != "basedpyright":  # type: ignore[index]
        pytest.fail("basedpyright is not installed (pip install basedpyright)")
    dest = tmp_path_factory.mktemp("cancel") / "python"
    shutil.copytree(WORKSPACE, dest)
    return dest.resolve()


@pytest.fixture
def pool() -> Iterator[ServerPool]:
    with ServerPool() as p:
        yield p


def _at_definition(root: Path) -> Position:
    """``create_sales_order``'s name in service.py (0-based line 5, character 4)."""
    path = root / "orders" / "service.py"
    line = path.read_text().splitlines()[5]
    return Position(str(path), 5, line.index("create_sales_order"))


def _refs(pool: ServerPool, root: Path, deadline_s: float = DEADLINE) -> LspAnswer:
    return pool.query(root, "python", "references", [_at_definition(root)], deadline_s=deadline_s)


def _where(answer: LspAnswer) -> set[tuple[str, int, int]]:
    return {(Path(loc.path).name, loc.start_line, loc.start_character) for loc in answer.locations}


def _server_process(pid: int) -> int:
    """The process that does the work: basedpyright-langserver (Python) runs node as its child;
    an OOM kill or a stop hits that one. Not node's own children: basedpyright starts short-lived
    ones (the interpreter it asks for search paths), and killing one of those, which a loaded
    machine made likely, left the server up (the pid never changed and the test failed)."""
    while Path(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()).name != "node":
        children = [
            int(c)
            for task in os.listdir(f"/proc/{pid}/task")
            for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        ]
        if not children:
            return pid
        pid = children[0]
    return pid


def _dead(pid: int, *, within_s: float = 10.0) -> bool:
    """Whether ``pid`` has exited (gone, or a zombie its parent has not reaped yet: in a container
    whose init does not reap, an orphan's zombie lingers), waiting at most ``within_s``."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)  # polling the kernel's view of a process we do not own, bounded


def _pid(pool: ServerPool, root: Path) -> int:
    info = pool.session_info(root, "python")
    assert info is not None and info["pid"] is not None
    return int(info["pid"])


def _baseline(pool: ServerPool, root: Path) -> set[tuple[str, int, int]]:
    assert pool.warm(root, "python", deadline_s=DEADLINE)
    answer = _refs(pool, root)
    assert answer.complete and answer.answered, answer.reason
    found = _where(answer)
    assert ("app.py" in {f for f, _, _ in found}) and len(found) >= 3, found
    return found


class _Load:
    """Busy-loop processes (one per core), started and stopped by the test."""

    def __init__(self, n: int) -> None:
        self.procs = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
            for _ in range(n)
        ]

    def stop(self) -> None:
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait(timeout=10)


def _storm(pool: ServerPool, root: Path, n: int) -> list[LspAnswer]:
    deadlines = [0.001, 0.005, 0.02, 0.05, 0.1, 0.2]
    return [_refs(pool, root, deadlines[i % len(deadlines)]) for i in range(n)]


def test_a_deadline_storm_leaves_the_server_answering_completely(root: Path, pool: ServerPool) -> None:
    baseline = _baseline(pool, root)
    pid = _pid(pool, root)
    for answer in _storm(pool, root, 40):
        # the property, not the wording (under load the reason grows a clause): an answer is either
        # complete and whole, or says it is not and why
        if answer.complete:
            assert _where(answer) == baseline
        else:
            assert answer.reason, answer
    after = _refs(pool, root)
    assert after.complete and after.answered, after.reason
    assert _where(after) == baseline
    assert _pid(pool, root) == pid  # healthy all along: nothing had to be restarted


def test_a_deadline_storm_under_cpu_load(root: Path, pool: ServerPool) -> None:
    baseline = _baseline(pool, root)
    pid = _pid(pool, root)
    load = _Load(os.cpu_count() or 2)
    try:
        answers = _storm(pool, root, 40)
    finally:
        load.stop()
    assert any(not a.complete for a in answers)  # the storm did cut requests off
    after = _refs(pool, root)
    assert after.complete and after.answered, after.reason
    assert _where(after) == baseline
    assert _pid(pool, root) == pid


def _poison(pool: ServerPool, root: Path) -> None:
    """A references request and its ``$/cancelRequest`` in one write: the cancel lands while
    basedpyright waits for ``window/workDoneProgress/create`` (what a deadline on a busy server
    did). From then on it answers every references request with -32603."""
    session = pool._sessions[(root, "python")]
    handler = session._handler
    assert handler is not None and pool._loop is not None
    at = _at_definition(root)
    params = {
        "textDocument": {"uri": Path(at.path).as_uri()},
        "position": {"line": at.line, "character": at.character},
        "context": {"includeDeclaration": True},
    }

    async def go() -> None:
        rid = handler.request_id
        task = asyncio.ensure_future(handler.send_request("textDocument/references", params))
        await asyncio.sleep(0)
        handler.notify.cancel_request({"id": rid})
        with contextlib.suppress(Exception):  # -32800 request cancelled: what we asked for
            await asyncio.wait_for(task, 20)
        with pytest.raises(RequestFailed, match="-32603"):
            await session.request("textDocument/references", params, timeout_s=20)

    asyncio.run_coroutine_threadsafe(go(), pool._loop).result(60)


def test_a_server_answering_internal_errors_is_restarted_and_the_request_retried(
    root: Path, pool: ServerPool
) -> None:
    baseline = _baseline(pool, root)
    pid = _pid(pool, root)
    _poison(pool, root)
    answer = _refs(pool, root)
    assert answer.complete and answer.answered, answer.reason
    assert _where(answer) == baseline
    assert _pid(pool, root) != pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _pending_request(
    pool: ServerPool, root: Path, deadline_s: float
) -> tuple[threading.Thread, list[LspAnswer]]:
    """A references query running in a thread, returned once its request is in flight."""
    out: list[LspAnswer] = []
    session = pool._sessions[(root, "python")]
    handler = session._handler
    assert handler is not None
    before = handler.request_id
    thread = threading.Thread(target=lambda: out.append(_refs(pool, root, deadline_s)))
    thread.start()
    limit = time.monotonic() + 10
    while handler.request_id == before:  # bounded wait for the event "request sent"
        assert time.monotonic() < limit, "the request was never sent"
        time.sleep(0.001)
    return thread, out


def test_a_server_killed_mid_request(root: Path, pool: ServerPool) -> None:
    baseline = _baseline(pool, root)
    pid = _pid(pool, root)
    thread, out = _pending_request(pool, root, 3.0)
    started = time.monotonic()
    worker = _server_process(pid)
    os.kill(worker, signal.SIGKILL)
    thread.join(30)
    assert not thread.is_alive() and time.monotonic() - started < 3.0 + 5.0
    answer = out[0]
    # Either restarted and answered within the deadline, or honestly incomplete.
    assert (answer.complete and _where(answer) == baseline) or (not answer.complete and answer.reason), answer
    after = _refs(pool, root)
    assert after.complete and _where(after) == baseline, after.reason
    # On a loaded machine the server can answer before the kill lands: two alike answers, and the
    # pool's memo serves ``after`` without asking the dead server. A question never asked before
    # must reach a server: a new one (once the launcher has followed the worker out).
    assert _dead(worker) and _dead(pid)
    fresh = pool.query(root, "python", "definition", [_at_definition(root)], deadline_s=DEADLINE)
    assert fresh.complete and fresh.locations, fresh.reason
    assert _pid(pool, root) != pid


def test_a_server_stopped_mid_request(root: Path, pool: ServerPool) -> None:
    baseline = _baseline(pool, root)
    pid = _pid(pool, root)
    worker = _server_process(pid)
    try:
        thread, out = _pending_request(pool, root, 1.5)
        os.kill(worker, signal.SIGSTOP)
        started = time.monotonic()
        thread.join(30)
        assert not thread.is_alive() and time.monotonic() - started < 1.5 + 5.0
        answer = out[0]
        if not answer.complete:
            assert "deadline reached" in (answer.reason or "")
        after = _refs(pool, root)
        assert after.complete and _where(after) == baseline, after.reason
        assert _pid(pool, root) != pid
        assert _dead(worker), f"the stopped server process {worker} was left behind"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGCONT)
