"""What the user's daemons cost and share (issue 17, section 2): warm-up starts the servers of what
the root is made of, a per-user registry and budget of daemons, embedding shared fairly across
roots, and servers that stopped idle said so and started again within a query's deadline.

Real daemon processes, real language servers and the real default model on tiny roots; waits
are on the daemons' own reported state (``daemon.status``, which does not count as use), bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from navigator.api import Navigator
from navigator.frontends.client import DaemonClient
from navigator.frontends.daemon_servers import languages_to_warm
from navigator.frontends.registry import (
    Entry,
    Registration,
    Want,
    budget_plan,
    live_entries,
    next_embedder,
    turn_cost,
)
from navigator.paths import daemon_paths

PY = "def f{i}(x):\n    return x + {i}\n\n\ndef g{i}():\n    return f{i}(1)\n"
TS = "export function hello(n: number): number {\n  return n + 1;\n}\n\nhello(2);\n"
C = "int add(int a, int b) { return a + b; }\n"


def wait_for(
    client: DaemonClient, what: str, ok: Callable[[dict[str, Any]], bool], timeout_s: float = 180
) -> dict[str, Any]:
    """Wait for the daemon to report a state (its own status over RPC, bounded)."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = client.daemon_status()
        if ok(status):
            return status
        assert time.monotonic() < deadline, f"the daemon never reported {what}: {status}"
        time.sleep(0.1)  # polling the daemon's own state, bounded


def kill_daemon(root: Path) -> None:
    info = daemon_paths(root).info
    if info.exists():  # never leave a daemon behind
        with contextlib.suppress(ProcessLookupError, ValueError, KeyError, OSError):
            os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGKILL)


def children(pid: int) -> list[str]:
    """The command lines of ``pid``'s descendants."""
    out: list[str] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        for tid in os.listdir(f"/proc/{p}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{p}/task/{tid}/children") as fh:
                for c in fh.read().split():
                    todo.append(int(c))
                    with contextlib.suppress(OSError), open(f"/proc/{c}/cmdline", "rb") as cmd:
                        out.append(cmd.read().replace(b"\0", b" ").decode(errors="replace"))
    return out


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own runtime folder: its registry, its embedding lock."""
    folder = tmp_path / "runtime"
    monkeypatch.setenv("NAV_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")
    monkeypatch.delenv("NAV_DAEMON_NO_WARM", raising=False)
    return folder


@pytest.fixture
def roots(tmp_path: Path, runtime: Path) -> Iterator[Callable[[str, dict[str, str]], Path]]:
    made: list[Path] = []

    def make(name: str, files: dict[str, str]) -> Path:
        root = (tmp_path / name).resolve()
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        made.append(root)
        return root

    yield make
    for root in made:
        kill_daemon(root)


def python_root(n: int = 5) -> dict[str, str]:
    return {f"m{i}.py": PY.format(i=i) for i in range(n)}


# -- pure rules -----------------------------------------------------------------------------


def test_warm_up_takes_the_main_language_and_the_sizeable_ones() -> None:
    # nav's own shape: Python, with a few test fixtures in other languages
    sizes = {"python": (300, 60000), "java": (3, 80), "typescript": (4, 60), "c": (2, 30), "markdown": (40, 9000)}
    assert languages_to_warm(sizes) == ["python"]
    # a second language with a real share of the files (or lines) is warmed too, one per server
    assert languages_to_warm({"python": (10, 900), "javascript": (4, 100), "tsx": (1, 10)}) == ["python", "javascript"]
    assert languages_to_warm({"python": (20, 900), "go": (2, 400)}) == ["python", "go"]  # 30% of the lines
    assert languages_to_warm({"markdown": (3, 10)}) == []


def entry(name: str, used: float) -> Entry:
    return Entry(id=name, pid=1, root=f"/{name}", socket="", started_at=0.0, last_used=used)


def test_budget_keeps_the_most_recently_used_and_releases_the_rest() -> None:
    live = [entry("a", 10.0), entry("b", 30.0), entry("c", 20.0)]
    plan = {e.id: budget_plan(e.id, live, budget=2, idle_s=5, exit_idle_s=300, holding=True) for e in live}
    assert plan == {"a": "release", "b": "keep", "c": "keep"}
    assert budget_plan("a", live, budget=2, idle_s=5, exit_idle_s=300, holding=False) == "keep"  # nothing to give
    assert budget_plan("a", live, budget=2, idle_s=400, exit_idle_s=300, holding=False) == "exit"
    # within the budget, idle while another root was used since: the servers go back sooner
    assert budget_plan("c", live, budget=3, idle_s=200, exit_idle_s=300, holding=True) == "release"
    assert budget_plan("b", live, budget=3, idle_s=200, exit_idle_s=300, holding=True) == "keep"


def test_embedding_turns_favour_the_root_asked_last_and_starve_nobody() -> None:
    wants = {"a": Want("a", asked=1.0, passes=0.0), "b": Want("b", asked=2.0, passes=0.0)}
    order = []
    for _ in range(20):
        who = next_embedder(list(wants.values()))
        assert who is not None
        order.append(who)
        w = wants[who]
        wants[who] = Want(who, w.asked, w.passes + turn_cost(who, list(wants.values())))
    assert order[0] == "b"  # asked last: first
    assert order.count("b") > 2 * order.count("a") > 0  # and most often, but `a` has turns too


# -- real daemons -----------------------------------------------------------------------------


def test_warm_up_starts_only_what_the_root_is_made_of(roots: Callable[..., Path]) -> None:
    root = roots("mostly-python", {**python_root(5), "web/app.ts": TS, "native/add.c": C})
    Navigator(root).index()  # an index already there: the daemon warms before its first query
    client = DaemonClient(root)
    try:
        status = wait_for(client, "python running", lambda s: s["servers"].get("python") == "running")
        assert status["servers"].get("typescript") == "not started", status["servers"]
        assert status["servers"].get("c") == "not started", status["servers"]
        procs = children(status["pid"])
        assert any("basedpyright" in p for p in procs), procs
        assert not any("typescript-language-server" in p or "tsserver" in p or "clangd" in p for p in procs), procs
        refs = client.references("hello", deadline_s=60)  # started on first use
        assert refs.complete and {(h.path, h.line) for h in refs.items} == {("web/app.ts", 1), ("web/app.ts", 5)}
        assert all(h.provenance == ("lsp",) for h in refs.items)
        assert client.daemon_status()["servers"]["typescript"] == "running"
    finally:
        client.stop()


def test_a_server_stopped_idle_says_so_and_answers_again_precisely(
    roots: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAV_SERVER_IDLE_S", "2")
    root = roots("idle", python_root(3))
    Navigator(root).index()
    client = DaemonClient(root)
    try:
        wait_for(client, "python stopped idle", lambda s: s["servers"].get("python") == "stopped idle")
        refs = client.references("f1", deadline_s=60)
        assert refs.complete, refs.reason
        assert {(h.path, h.line) for h in refs.items} == {("m1.py", 1), ("m1.py", 6)}
        assert all(h.provenance == ("lsp",) for h in refs.items)
        assert any("started again" in n for n in refs.notes)
        assert client.daemon_status()["servers"]["python"] == "running"
        # stopped idle again, and a deadline too short for the restart: an honest partial answer
        wait_for(client, "python stopped idle", lambda s: s["servers"].get("python") == "stopped idle")
        short = client.references("f1", deadline_s=0.05)
        assert not short.complete and short.reason and "starting again" in short.reason
        assert all(h.provenance == ("syntax",) for h in short.items)
    finally:
        client.stop()


def nav_status_all() -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "navigator.frontends.cli", "daemon", "status", "--all", "--json"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    rows: list[dict[str, Any]] = json.loads(out.stdout)
    return rows


def test_beyond_the_budget_the_least_recently_used_daemon_releases_its_servers(
    roots: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, runtime: Path
) -> None:
    monkeypatch.setenv("NAV_MAX_DAEMONS", "2")
    a, b, c = (roots(name, python_root(2)) for name in ("a", "b", "c"))
    clients = {r: DaemonClient(r) for r in (a, b)}
    try:
        for cl in clients.values():  # a, then b: a is the least recently used
            cl.references("f1", deadline_s=60)
            wait_for(cl, "python running", lambda s: s["servers"].get("python") == "running")
        assert not clients[a].daemon_status()["budget"]["over"]
        clients[c] = DaemonClient(c)
        clients[c].references("f1", deadline_s=60)  # a third root in use: a is beyond the budget of 2
        released = wait_for(clients[a], "a release", lambda s: s["servers"].get("python") == "released")
        assert released["budget"]["over"] and released["budget"]["released"]
        assert released["servers_rss_mb"] == 0
        assert clients[b].daemon_status()["servers"]["python"] == "running"
        listed = {row["root"]: row for row in nav_status_all()}
        assert set(listed) == {str(a), str(b), str(c)}
        assert listed[str(a)]["servers"]["python"] == "released" and listed[str(b)]["rss_mb"] > 0
        # asked again, a answers exactly (its server starts again) and b, now the least
        # recently used, gives its server back
        refs = clients[a].references("f1", deadline_s=60)
        assert refs.complete and all(h.provenance == ("lsp",) for h in refs.items)
        wait_for(clients[b], "b release", lambda s: s["servers"].get("python") == "released")
        # a daemon that died is not listed, and its entry is gone
        pid_c = clients[c].daemon_status()["pid"]
        os.kill(pid_c, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while str(c) in {row["root"] for row in nav_status_all()}:
            assert time.monotonic() < deadline, "a dead daemon stays listed"
            time.sleep(0.1)  # the kernel drops its lock when it is reaped; bounded
        assert {row["root"] for row in nav_status_all()} == {str(a), str(b)}
        assert len(list((runtime / "daemons").glob("*.json"))) == 2
    finally:
        for cl in clients.values():
            with contextlib.suppress(Exception):
                cl.stop()


def test_registry_entries_of_dead_daemons_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "daemons"
    mine = Registration(folder, root="/r", socket="/r/.nav/daemon.sock")
    assert [e.root for e in live_entries(folder)] == ["/r"]
    # a daemon killed with -9 leaves its file, unlocked
    (folder / "999999-1.json").write_text(json.dumps({"pid": 999999, "root": "/gone", "socket": "", "started_at": 0}))
    (folder / "999999-1.want").write_text(json.dumps({"asked": 0, "pass": 0}))
    assert [e.root for e in live_entries(folder)] == ["/r"]
    assert not (folder / "999999-1.json").exists() and not (folder / "999999-1.want").exists()
    mine.close()
    assert live_entries(folder) == []


def embed_root(n_files: int) -> dict[str, str]:
    words = ["order", "customer", "invoice", "payment", "refund", "ship"]
    words += ["stock", "price", "tax", "discount", "cart", "account"]
    files = {}
    for f in range(n_files):
        body = []
        for i in range(30):
            a, b, c = words[(f + i) % 12], words[(f * 7 + i * 3) % 12], words[(i * 5 + 1) % 12]
            body.append(
                f"def {a}_{b}_{f}_{i}({c}, limit=10):\n    \"\"\"The {a} {b} of a {c} within a limit.\"\"\"\n"
                f"    total = 0\n    for item in {c}:\n        if item.{a} > limit:\n            total += item.{b}\n"
                "    return total\n\n\n"
            )
        files[f"mod{f}.py"] = "".join(body)
    return files


def vectors_done(status: dict[str, Any]) -> bool:
    v = status.get("vectors")
    return bool(v) and v.split("/")[0] == v.split("/")[1] and status["embedding"] == "done"


def test_embedding_is_shared_across_roots_the_queried_one_first(
    roots: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NAV_DAEMON_NO_EMBED", raising=False)
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    monkeypatch.setenv("NAV_EMBED_SLICE_S", "0.001")  # one batch of 16 chunks per slice
    big = roots("big", embed_root(100))  # ~400 chunks: ~25 slices
    small = roots("small", embed_root(4))  # ~16 chunks: a slice or two
    for r in (big, small):
        Navigator(r).index()
    first = DaemonClient(big)
    second = DaemonClient(small)
    try:
        wait_for(first, "embedding under way", lambda s: bool(s["vectors"]) and s["vectors"].split("/")[0] != "0")
        assert second.search("payment refund of a customer", k=3).items  # the second root, queried
        done = wait_for(second, "complete vectors", vectors_done, timeout_s=300)
        assert done["vectors"]
        assert not vectors_done(first.daemon_status()), "the queried root waited for the other's whole backlog"
        wait_for(first, "complete vectors", vectors_done, timeout_s=600)  # and the first one finishes too
    finally:
        first.stop()
        second.stop()


def test_an_idle_daemon_beyond_the_budget_exits(roots: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAV_MAX_DAEMONS", "1")
    monkeypatch.setenv("NAV_MODEL_IDLE_S", "1")  # the idle time after which one beyond the budget exits
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    old, new = roots("old", python_root(1)), roots("new", python_root(1))
    first, second = DaemonClient(old), DaemonClient(new)
    try:
        first.definitions("f0")
        pid = first.daemon_status()["pid"]
        second.definitions("f0")  # another root in use: the first is beyond a budget of 1, and idle
        deadline = time.monotonic() + 60
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    break  # exited; our own child, not yet reaped
            assert time.monotonic() < deadline, "the daemon beyond the budget never exited"
            time.sleep(0.1)  # waiting for the process to exit, bounded
        assert {row["root"] for row in nav_status_all()} == {str(new)}
        assert first.definitions("f0").items  # asked again, a new daemon answers
    finally:
        first.stop()
        second.stop()
