"""A daemon watches what it indexes, costs nothing when the rest of the tree churns, and
follows its root: deleted or moved, it exits; a client never talks to a daemon of another path.
Real daemons, real inotify, real subprocesses."""

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

import pytest

from navigator.frontends.client import DaemonClient
from navigator.paths import daemon_paths

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify and /proc are Linux's")

FILES = {
    "orders.py": "def create_sales_order(customer: str) -> int:\n    return 1\n",
    "pkg/util.py": "def helper() -> int:\n    return 2\n",
    ".venv/pyvenv.cfg": "home = /usr/bin\n",
    ".venv/lib/python3.11/site-packages/dep/__init__.py": "def vendored() -> int:\n    return 3\n",
    "node_modules/left-pad/index.js": "module.exports = function leftPad() {};\n",
}


def cpu_s(pid: int) -> float:
    """The process's user + system CPU time so far (/proc/PID/stat, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as fh:  # a zombie (not yet reaped) is gone too
        return fh.read().rsplit(")", 1)[1].split()[0] == "Z"


def wait_until(cond: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # polling a condition, bounded


def wait_for_sync(client: DaemonClient, after: int) -> int:
    wait_until(lambda: client.daemon_status()["syncs"] > after, "the watcher's re-index")
    return int(client.daemon_status()["syncs"])


@pytest.fixture
def root(make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    r = make_repo(FILES).resolve()
    pids: list[int] = []
    yield r
    for where in (r, r.parent / "moved"):
        info = daemon_paths(where).info
        with contextlib.suppress(OSError, ValueError, KeyError):
            pids.append(int(json.loads(info.read_text())["pid"]))
    for pid in pids:  # never leave a daemon behind
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def client(root: Path) -> Iterator[DaemonClient]:
    c = DaemonClient(root)
    yield c
    with contextlib.suppress(Exception):
        c.stop()


def churn(folders: list[Path], rounds: int, per_round: int, readable: list[Path]) -> None:
    """What a language server, an installer and a test run do to the ignored parts of a tree:
    files created, read and deleted in bulk; indexed files read over and over."""
    for r in range(rounds):
        for folder in folders:
            for i in range(per_round):
                path = folder / f"churn_{r}_{i}.py"
                path.write_text("x = 1\n")
                path.read_text()
                path.unlink()
        for path in readable:
            for _ in range(20):
                path.read_bytes()
        time.sleep(0.2)  # pacing the workload (rounds apart, as an installer's steps are), not a wait


def test_churn_in_ignored_folders_costs_no_sync_and_little_cpu(root: Path, client: DaemonClient) -> None:
    assert client.definitions("create_sales_order").items
    status = client.daemon_status()
    assert status["watching"] and status["watcher"]["kind"] == "inotify"
    assert status["watcher"]["folders"] == 2  # the root and pkg: not .venv, not node_modules
    pid, syncs = status["pid"], status["syncs"]
    site = root / ".venv/lib/python3.11/site-packages/dep"
    modules = root / "node_modules/left-pad"
    cpu0, wall0 = cpu_s(pid), time.monotonic()
    churn([site, modules], rounds=15, per_round=150, readable=[root / "orders.py", root / "pkg/util.py"])
    cpu, wall = cpu_s(pid) - cpu0, time.monotonic() - wall0
    # an indexed edit after the churn: the one re-index the daemon owes
    (root / "pkg/util.py").write_text("def helper() -> int:\n    return 2\n\n\ndef after_churn() -> None:\n    pass\n")
    wait_until(lambda: bool(_defs(client, "after_churn")), "the edit after the churn")
    after = client.daemon_status()["syncs"]  # a query waits for pending re-indexes: this is final
    assert after == syncs + 1, f"{after - syncs - 1} re-indexes for changes in ignored folders"
    assert cpu < 0.2 * wall, f"the daemon used {cpu:.2f} s of CPU over {wall:.2f} s of churn"
    assert client.daemon_status()["watcher"]["overflows"] == 0


def test_edits_and_new_folders_are_picked_up(root: Path, client: DaemonClient) -> None:
    assert client.definitions("helper").items
    syncs = client.daemon_status()["syncs"]
    (root / "orders.py").write_text("def create_sales_order(customer: str) -> int:\n    return 1\n\n\ndef refund() -> None:\n    pass\n")
    syncs = wait_for_sync(client, syncs)
    assert client.definitions("refund").items[0].path == "orders.py"
    deep = root / "billing" / "invoices"
    deep.mkdir(parents=True)  # a new folder and its code, written before the watch can be there
    (deep / "issue.py").write_text("def issue_invoice() -> None:\n    pass\n")
    wait_until(lambda: bool(_defs(client, "issue_invoice")), "the new folder's definition")
    assert _defs(client, "issue_invoice") == ["billing/invoices/issue.py"]
    assert client.daemon_status()["watcher"]["folders"] == 4
    (deep / "later.py").write_text("def later_one() -> None:\n    pass\n")  # now watched
    wait_until(lambda: bool(_defs(client, "later_one")), "a file in the watched new folder")


def _defs(client: DaemonClient, name: str) -> list[str]:
    from storage.errors import SymbolNotFoundError

    try:
        return [s.path for s in client.definitions(name).items]
    except SymbolNotFoundError:
        return []


def test_a_deleted_root_stops_its_daemon_and_is_not_made_again(root: Path, client: DaemonClient) -> None:
    assert client.definitions("helper").items
    pid = client.daemon_status()["pid"]
    client.close()
    subprocess.run(["rm", "-rf", str(root)], check=True)
    wait_until(lambda: gone(pid), "the daemon of a deleted root to exit")
    assert not root.exists()


def test_a_deleted_root_stops_even_an_unwatching_daemon(root: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "navigator.frontends.daemon", str(root), "--no-watch", "--no-embed", "--no-warm"],
        cwd=Path(__file__).parent.parent,
    )
    try:
        wait_until(lambda: daemon_paths(root).socket.exists(), "the daemon's socket")
        # the daemon's first index may still be writing into .nav/ while rm descends ("Directory
        # not empty"): remove as a user would, again until it is gone
        wait_until(lambda: not subprocess.run(["rm", "-rf", str(root)], capture_output=True).returncode, "rm -rf")
        assert proc.wait(timeout=30) == 0  # its idle clock saw the root go
        assert not root.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def nav(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}
    code = "import sys; from navigator.frontends.entry import run; sys.argv[0] = 'nav'; sys.exit(run())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_moved_root_is_answered_by_a_daemon_of_its_new_path(root: Path) -> None:
    first = nav(root, "def", "helper")
    assert first.returncode == 0, first.stderr
    old_pid = int(json.loads(daemon_paths(root).info.read_text())["pid"])
    moved = root.parent / "moved"
    root.rename(moved)
    answer = nav(moved, "def", "helper")
    assert answer.returncode == 0, answer.stderr
    assert "pkg/util.py" in answer.stdout
    info = json.loads(daemon_paths(moved).info.read_text())
    assert info["root"] == str(moved) and info["pid"] != old_pid
    wait_until(lambda: gone(old_pid), "the old daemon to exit")
    assert not root.exists()


def test_a_client_never_uses_a_daemon_of_another_root(root: Path, make_repo: Callable[[dict[str, str]], Path]) -> None:
    """The old path's daemon still on the new path's socket (a move its clock has not seen yet):
    refused by the fast path and the client alike, stopped, and a daemon of this root answers."""
    first = nav(root, "def", "helper")
    assert first.returncode == 0, first.stderr
    other_pid = int(json.loads(daemon_paths(root).info.read_text())["pid"])
    twin = root.parent / "twin"
    twin.mkdir()
    (twin / "twin.py").write_text("def twin_only() -> None:\n    pass\n")
    (twin / ".nav").mkdir(mode=0o700)
    os.link(daemon_paths(root).socket, daemon_paths(twin).socket)  # the other daemon's socket, here
    answer = nav(twin, "def", "twin_only")
    assert answer.returncode == 0, answer.stderr
    assert "twin.py" in answer.stdout
    info = json.loads(daemon_paths(twin).info.read_text())
    assert info["root"] == str(twin)
    wait_until(lambda: gone(other_pid), "the other root's daemon to be stopped")
    with DaemonClient(twin, autostart=False) as c:
        assert c.daemon_status()["root"] == str(twin)
    assert nav(twin, "daemon", "stop").returncode == 0
