"""Many processes, one index (issue 17, section 1): a daemon, `--no-daemon` queries, Python-API
sessions and `nav index` runs share `.nav/index.db`, and none of them makes it unreadable for
the others.

SQLite's POSIX locks belong to the process: closing any descriptor of the database file drops
every lock that process holds on it, so the next other process to close its connection thinks
it is the last one and deletes the WAL and shared-memory files under the first. nav must never
open the index outside SQLite. Real daemons, real processes, real SQLite files.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from faultkit import nav_env

from navigator.api import Navigator
from navigator.paths import daemon_paths
from storage.db import Store
from storage.errors import IndexIOError

FILES = {
    "orders.py": "class Order:\n    def total(self) -> int:\n        return 0\n\n\n"
    "def create_sales_order(customer: str) -> Order:\n    return Order()\n",
    "billing.py": "from orders import create_sales_order\n\n\ndef invoice():\n    return create_sales_order('c')\n",
}


def write_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root.resolve()


def daemon_env() -> dict[str, str]:
    env = nav_env()  # this checkout's code, NAV_NO_DAEMON unset
    env["NAV_DAEMON_NO_EMBED"] = "1"
    env["NAV_DAEMON_NO_WARM"] = "1"
    return env


def nav(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), *args],
        env=daemon_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def daemon_pid(root: Path) -> int:
    return int(json.loads(daemon_paths(root).info.read_text())["pid"])


def open_index_files(pid: int) -> list[str]:
    """The index files (index.db, -wal, -shm) the process has open."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if "/.nav/index.db" in target:
                out.append(target)
    return out


def deleted_index_files(pid: int) -> list[str]:
    """The index files the process still holds open although they were deleted."""
    out = []
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(fd_dir):
        with contextlib.suppress(OSError):
            target = os.readlink(fd_dir / fd)
            if "index.db" in target and target.endswith("(deleted)"):
                out.append(target)
    maps = Path(f"/proc/{pid}/maps").read_text()
    out += [
        line.split(None, 5)[-1] for line in maps.splitlines() if "index.db" in line and "(deleted)" in line
    ]
    return out


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Path]:
    """A small repository with its daemon running (started the way a user starts it)."""
    root = write_repo(tmp_path / "repo")
    first = nav(root, "index")
    assert first.returncode == 0, first.stderr
    answer = nav(root, "def", "create_sales_order")  # starts the daemon
    assert answer.returncode == 0, answer.stderr
    assert daemon_paths(root).info.exists()
    yield root
    with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
        nav(root, "daemon", "stop")
    with contextlib.suppress(OSError, ValueError, ProcessLookupError):
        os.kill(daemon_pid(root), signal.SIGKILL)


def assert_daemon_answers(root: Path, pid: int, after: str) -> None:
    for name, where in (("create_sales_order", "orders.py:6:5"), ("invoice", "billing.py:4:5")):
        out = nav(root, "def", name)
        assert out.returncode == 0, (after, out.stderr)
        assert out.stdout.startswith(where), (after, out.stdout)
    assert daemon_pid(root) == pid, f"the daemon was replaced after {after}"
    assert deleted_index_files(pid) == [], after


API_SESSION = """
import sys
from navigator.api import Navigator
with Navigator(sys.argv[1]) as nav:
    assert nav.definitions("create_sales_order").items
"""


class Session:
    """A `nav mcp` (JSON lines) or `nav lsp` (Content-Length frames) process, driven request by
    request: each reply is waited for (bounded), then stdin closes and the process must exit."""

    def __init__(self, argv: list[str], *, framed: bool) -> None:
        self.framed = framed
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=daemon_env()
        )
        self.replies: queue.Queue[dict[str, object] | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            if self.framed:
                length = 0
                while (line := out.readline()).strip():
                    name, _, value = line.decode().partition(":")
                    length = int(value) if name.lower() == "content-length" else length
                body = out.read(length) if line else b""
            else:
                body = out.readline()
            if not body:
                self.replies.put(None)
                return
            self.replies.put(json.loads(body))

    def send(self, msg: dict[str, object]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        data = b"Content-Length: %d\r\n\r\n%s" % (len(body), body) if self.framed else body + b"\n"
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def ask(self, msg_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
        self.send({"id": msg_id, "method": method, "params": params})
        while True:
            reply = self.replies.get(timeout=120)
            assert reply is not None, f"{method}: the server exited"
            if reply.get("id") == msg_id:
                assert "error" not in reply, reply
                return reply

    def finish(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.reader.join(30)  # it ends at the end of the output
            for pipe in (self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()


def mcp_session(root: Path) -> None:
    argv = [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "--no-daemon", "mcp"]
    session = Session(argv, framed=False)
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    }
    session.ask(1, "initialize", hello)
    session.send({"method": "notifications/initialized"})
    reply = session.ask(2, "tools/call", {"name": "def", "arguments": {"name": "create_sales_order"}})
    assert "orders.py:6:5" in json.dumps(reply)
    assert session.finish() == 0


def lsp_session(root: Path) -> None:
    argv = [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "lsp"]
    session = Session(argv, framed=True)
    session.ask(1, "initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
    session.send({"method": "initialized", "params": {}})
    reply = session.ask(2, "workspace/symbol", {"query": "create_sales_order"})
    assert "orders.py" in json.dumps(reply)
    session.ask(3, "shutdown", {})
    session.send({"method": "exit"})
    assert session.finish() == 0


def test_a_daemon_keeps_answering_while_other_processes_open_and_close_the_index(served: Path) -> None:
    root = served
    pid = daemon_pid(root)
    assert_daemon_answers(root, pid, "the daemon's own first answers")
    others: list[tuple[str, list[str]]] = [
        ("nav --no-daemon def", [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "--no-daemon",
                                 "def", "create_sales_order"]),
        ("a Navigator session", [sys.executable, "-c", API_SESSION, str(root)]),
        ("nav --no-daemon index", [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "--no-daemon",
                                   "index"]),
    ]  # fmt: skip
    for step, (what, argv) in enumerate(others):
        # an edit first, so both the other process and the daemon write to the index
        with open(root / "billing.py", "a", encoding="utf-8") as fh:
            fh.write(f"\n\ndef refund_{step}():\n    return invoice()\n")
        other = subprocess.run(argv, env=daemon_env(), capture_output=True, text=True, timeout=120)
        assert other.returncode == 0, (what, other.stderr)
        assert_daemon_answers(root, pid, what)
        new = nav(root, "def", f"refund_{step}")
        assert new.returncode == 0 and new.stdout.startswith("billing.py:"), (what, new.stderr)
    for what, session in (("a nav mcp session", mcp_session), ("a nav lsp session", lsp_session)):
        session(root)
        assert_daemon_answers(root, pid, what)
    through_daemon = nav(root, "index")
    assert through_daemon.returncode == 0, through_daemon.stderr
    assert_daemon_answers(root, pid, "nav index")
    with contextlib.closing(sqlite3.connect(root / ".nav" / "index.db")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# -- the mechanism, in one process ------------------------------------------------------------


def posix_locks_on(path: Path, pid: int) -> int:
    """How many POSIX (fcntl) locks ``pid`` holds on ``path``'s inode, from /proc/locks."""
    st = os.stat(path)
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    n = 0
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        # "1: POSIX  ADVISORY  READ 1234 08:01:5678 1073741826 1073741826"; blocked waiters have "->"
        if "->" in fields or len(fields) < 6:
            continue
        if fields[1] == "POSIX" and fields[4] == str(pid) and fields[5] == want:
            n += 1
    return n


def test_closing_any_descriptor_of_the_file_drops_the_process_locks(tmp_path: Path) -> None:
    """The hazard itself, so the next test's measure is known to see it."""
    db = tmp_path / "index.db"
    with Store(db) as store:
        store.set_meta("probe", "1")
        store.conn.execute("SELECT count(*) FROM files").fetchone()
        assert posix_locks_on(db, os.getpid()) > 0  # a WAL connection holds a shared lock
        os.close(os.open(db, os.O_RDONLY))
        assert posix_locks_on(db, os.getpid()) == 0


def test_opening_the_index_in_another_thread_keeps_this_process_locks(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    with Navigator(root) as nav:
        nav.index()
        assert nav.definitions("create_sales_order").items
        db = nav.index_path
        held = posix_locks_on(db, os.getpid())
        assert held > 0
        answers: list[int] = []
        # a new thread gets its own connection, as each daemon worker does
        worker = threading.Thread(target=lambda: answers.append(len(nav.definitions("invoice").items)))
        worker.start()
        worker.join(60)
        assert answers == [1]
        assert posix_locks_on(db, os.getpid()) >= held
        # another process opening and closing the index now must not take the WAL away
        other = subprocess.run(
            [sys.executable, "-c", API_SESSION, str(root)],
            env=nav_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert other.returncode == 0, other.stderr
        assert Path(f"{db}-wal").exists() and Path(f"{db}-shm").exists()
        assert deleted_index_files(os.getpid()) == []
        assert nav.definitions("create_sales_order").items


# -- an index file that is not a plain file ---------------------------------------------------


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`nav --no-daemon ...`, bounded: a FIFO must never block it."""
    return subprocess.run(
        [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "--no-daemon", *args],
        env=nav_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("name", ["index.db", "index.db-wal", "index.db-shm"])
def test_an_index_file_that_is_a_symlink_is_refused_and_its_target_untouched(
    tmp_path: Path, name: str
) -> None:
    root = write_repo(tmp_path / "repo")
    other = tmp_path / "elsewhere.db"
    with contextlib.closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE mine (x)")
        db.commit()
    before = other.read_bytes()
    (root / ".nav").mkdir(mode=0o700)
    link = root / ".nav" / name
    link.symlink_to(other)
    out = run_cli(root, "index")
    assert out.returncode == 5, out.stderr
    assert str(link) in out.stderr and "symlink" in out.stderr
    assert "Traceback" not in out.stderr
    assert other.read_bytes() == before
    with contextlib.closing(sqlite3.connect(other)) as db:
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master")] == ["mine"]
    assert link.is_symlink()


def make_fifo(p: Path) -> None:
    os.mkfifo(p, 0o600)


def make_folder(p: Path) -> None:
    p.mkdir()


def make_device(p: Path) -> None:
    try:
        os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # the same device as /dev/null
    except PermissionError:
        pytest.skip("this process may not create device files")


@pytest.mark.parametrize(
    ("make", "words"),
    [(make_fifo, "named pipe (FIFO)"), (make_folder, "a folder"), (make_device, "character device")],
)
def test_an_index_that_is_not_a_file_gets_an_error_saying_what_it_is(
    tmp_path: Path, make: Callable[[Path], None], words: str
) -> None:
    root = write_repo(tmp_path / "repo")
    (root / ".nav").mkdir(mode=0o700)
    db = root / ".nav" / "index.db"
    make(db)
    for args in (("index",), ("def", "create_sales_order"), ("status",)):
        out = run_cli(root, *args)  # bounded: a FIFO opened by SQLite would block for ever
        assert out.returncode == 5, (args, out.returncode, out.stderr)
        assert str(db) in out.stderr and words in out.stderr, (args, out.stderr)
        assert "disk is not full" not in out.stderr
        assert "Traceback" not in out.stderr


def test_a_connection_closed_to_reopen_the_index_says_so_and_the_next_answer_reopens(tmp_path: Path) -> None:
    """Reopening closes every thread's connection; a thread still holding one gets a storage
    error it recovers from (asking again), never sqlite's "Cannot operate on a closed database"."""
    root = write_repo(tmp_path / "repo")
    with Navigator(root) as nav:
        nav.index()
        held = nav.store
        rows = held.conn.execute("SELECT path FROM files")
        rows.fetchone()  # a cursor in the middle of its rows
        nav._handle.close_stores()  # what a recovery in another thread does
        # really closed: a live cursor must not keep the file (and this process's view of it) open
        assert open_index_files(os.getpid()) == []
        with pytest.raises(IndexIOError, match="closed"):
            held.conn.execute("SELECT 1")
        with pytest.raises(IndexIOError, match="closed"):
            rows.fetchall()
        assert nav.definitions("invoice").items[0].path == "billing.py"
