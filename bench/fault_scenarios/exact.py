"""Fault scenarios of the exact leg, against the real basedpyright on a copy of the committed
Python workspace: deadline storms under CPU load, a cancel that poisons the server, and the
server killed (SIGKILL) or stopped (SIGSTOP) mid-request.

Each fault is followed by a normal request: ``recovered`` counts those answered completely,
with the answer the server gave before the fault (no hand step in between).
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
from pathlib import Path
from typing import Any

from bench.fault_scenarios import FaultResult, Scenario
from lsp.pool import LspAnswer, Position, ServerPool

WORKSPACE = Path(__file__).resolve().parents[2] / "tests" / "workspaces" / "python"
AREA = "exact"
DEADLINE = 60.0


def _setup(workdir: Path) -> tuple[Path, Position]:
    root = workdir / "python"
    shutil.copytree(WORKSPACE, root)
    path = root / "orders" / "service.py"
    line = path.read_text().splitlines()[5]
    return root.resolve(), Position(str(path.resolve()), 5, line.index("create_sales_order"))


def _refs(pool: ServerPool, root: Path, at: Position, deadline_s: float = DEADLINE) -> LspAnswer:
    return pool.query(root, "python", "references", [at], deadline_s=deadline_s)


def _where(answer: LspAnswer) -> frozenset[tuple[str, int, int]]:
    return frozenset((loc.path, loc.start_line, loc.start_character) for loc in answer.locations)


def _baseline(pool: ServerPool, root: Path, at: Position) -> frozenset[tuple[str, int, int]]:
    if not pool.warm(root, "python", deadline_s=DEADLINE):
        raise RuntimeError("basedpyright did not start")
    answer = _refs(pool, root, at)
    if not (answer.complete and answer.locations):
        raise RuntimeError(f"no baseline answer: {answer.reason}")
    return _where(answer)


def _recovered(pool: ServerPool, root: Path, at: Position, baseline: frozenset[tuple[str, int, int]]) -> bool:
    answer = _refs(pool, root, at)
    return answer.complete and _where(answer) == baseline


def _worker(pool: ServerPool, root: Path) -> int:
    """The process doing the work: basedpyright-langserver (Python) runs node as its child."""
    info = pool.session_info(root, "python")
    pid = int(info["pid"]) if info and info["pid"] else 0
    while True:
        children = [
            int(c)
            for task in os.listdir(f"/proc/{pid}/task")
            for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        ]
        if not children:
            return pid
        pid = children[0]


def deadline_storm(workdir: Path) -> list[FaultResult]:
    root, at = _setup(workdir)
    storms, cut, honest, recovered = 3, 0, 0, 0
    with ServerPool() as pool:
        baseline = _baseline(pool, root, at)
        for _ in range(storms):
            load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
            try:
                for deadline in [0.001, 0.005, 0.02, 0.05, 0.1, 0.2] * 3:
                    answer = _refs(pool, root, at, deadline)
                    if not answer.complete:
                        cut += 1
                        honest += bool(answer.reason)
            finally:
                for p in load:
                    p.kill()
                    p.wait(timeout=10)
            recovered += _recovered(pool, root, at, baseline)
    return [FaultResult(AREA, "deadline storm under CPU load (18 refs with 1-200 ms deadlines), then a normal "
                        "request", storms, storms if honest == cut else 0, recovered,
                        note=f"{cut} requests cut off, {honest} said why")]  # fmt: skip


def poisoned_server(workdir: Path) -> list[FaultResult]:
    """basedpyright poisoned the way a cancel on a busy server did it (request and cancel in one
    write): it answers -32603 to every references request until restarted."""
    root, at = _setup(workdir)
    n, honest, recovered = 3, 0, 0
    with ServerPool() as pool:
        baseline = _baseline(pool, root, at)
        for _ in range(n):
            session = pool._sessions[(root, "python")]
            handler = session._handler
            assert handler is not None and pool._loop is not None
            params = {"textDocument": {"uri": Path(at.path).as_uri()},
                      "position": {"line": at.line, "character": at.character},
                      "context": {"includeDeclaration": True}}  # fmt: skip

            async def poison(handler: Any = handler, params: dict[str, Any] = params) -> None:
                rid = handler.request_id
                task = asyncio.ensure_future(handler.send_request("textDocument/references", params))
                await asyncio.sleep(0)
                handler.notify.cancel_request({"id": rid})
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 20)

            asyncio.run_coroutine_threadsafe(poison(), pool._loop).result(60)
            answer = _refs(pool, root, at)
            honest += answer.complete or bool(answer.reason)
            recovered += answer.complete and _where(answer) == baseline
    return [FaultResult(AREA, "basedpyright poisoned by a cancel (-32603 on every references request)", n,
                        honest, recovered)]  # fmt: skip


def _mid_request(workdir: Path, sig: signal.Signals, deadline_s: float) -> list[FaultResult]:
    root, at = _setup(workdir)
    n, honest, recovered = 3, 0, 0
    with ServerPool() as pool:
        baseline = _baseline(pool, root, at)
        for _ in range(n):
            worker = _worker(pool, root)
            handler = pool._sessions[(root, "python")]._handler
            assert handler is not None
            before = handler.request_id
            out: list[LspAnswer] = []
            thread = threading.Thread(target=lambda out=out: out.append(_refs(pool, root, at, deadline_s)))
            thread.start()
            limit = time.monotonic() + 10
            while handler.request_id == before and time.monotonic() < limit:
                time.sleep(0.001)  # bounded wait for the event "request sent"
            os.kill(worker, sig)
            started = time.monotonic()
            thread.join(deadline_s + 10)
            in_time = not thread.is_alive() and time.monotonic() - started <= deadline_s + 5
            if in_time and out and (out[0].complete or out[0].reason):
                honest += 1
            recovered += _recovered(pool, root, at, baseline)
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGCONT)
    what = "killed (SIGKILL)" if sig == signal.SIGKILL else "stopped (SIGSTOP)"
    return [FaultResult(AREA, f"language server {what} mid-request, then the next request", n, honest, recovered)]


def killed(workdir: Path) -> list[FaultResult]:
    return _mid_request(workdir, signal.SIGKILL, 3.0)


def stopped(workdir: Path) -> list[FaultResult]:
    return _mid_request(workdir, signal.SIGSTOP, 1.5)


def hung_silent(workdir: Path) -> list[FaultResult]:
    """A server that stops answering and says nothing (a stand-in process: no real server here
    can be made to hang on purpose): the answers say so, and the next query past the rule
    (2 unanswered in a row, 1 s of silence here; 3 and 60 s by default) runs on a fresh start."""
    import lsp.registry as registry
    from tests.fake_servers import script_server

    n, honest, recovered = 3, 0, 0
    for i in range(n):
        hangs_once = script_server("hangs-once", "hangs_once_server.py", str(workdir / f"lived-{i}"))
        root = workdir / f"ws{i}"
        root.mkdir()
        (root / "a.py").write_text("x = 1\n")
        at = Position(str(root / "a.py"), 0, 0)
        saved = registry.SERVERS.get("python")
        registry.SERVERS["python"] = (hangs_once,)
        try:
            with ServerPool(hung_after=2, hung_silent_s=1.0) as pool:
                answers = [pool.query(root, "python", "references", [at], deadline_s=0.8) for _ in range(2)]
                honest += all(not a.complete and (a.reason or "").startswith("deadline reached") for a in answers) and (
                    "answered none of the last 2 requests" in (answers[1].reason or ""))  # fmt: skip
                recovered += pool.query(root, "python", "references", [at], deadline_s=5.0).complete
        finally:
            if saved is not None:
                registry.SERVERS["python"] = saved
    return [FaultResult(AREA, "language server hung silently (answers nothing, says nothing)", n, honest,
                        recovered)]  # fmt: skip


SCENARIOS: list[Scenario] = [deadline_storm, poisoned_server, killed, stopped, hung_silent]
