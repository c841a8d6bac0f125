"""A server launched before multilspy is imported (lsp/launch.py) is adopted by the pool: it
answers as a server the pool started does, and nothing is left running whatever happens to it."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from faultkit import DAEMON_LAUNCH

from lsp.launch import prelaunch
from lsp.pool import Position, ServerPool
from lsp.registry import available_definition

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
pytestmark = pytest.mark.skipif(available_definition("python") is None, reason="no Python server installed")


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(HERE / "workspaces" / "python", root)
    return root


def _definition(root: Path) -> Position:
    path = root / "orders" / "service.py"
    line = next(
        i for i, text in enumerate(path.read_text().splitlines()) if text.startswith("def create_sales_order")
    )
    return Position(str(path), line, len("def "))


def _refs(pool: ServerPool, root: Path) -> set[tuple[str, int, int]]:
    answer = pool.query(root, "python", "references", [_definition(root)], deadline_s=120.0)
    assert answer.answered and answer.complete, answer.reason
    return {(loc.path, loc.start_line, loc.start_character) for loc in answer.locations}


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_importing_the_launcher_does_not_import_multilspy() -> None:
    """The point of lsp.launch: a daemon can launch servers before ~0.5-1 s of imports."""
    code = "import sys, lsp.launch, lsp.registry; print(sorted(m for m in ('multilspy', 'requests', 'asyncio') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_a_prelaunched_server_is_adopted_and_answers_as_a_started_one(workspace: Path) -> None:
    with ServerPool() as pool:
        started = _refs(pool, workspace)
        info = pool.session_info(workspace, "python")
        assert info is not None and info["launched_early"] is False
    launched = prelaunch(workspace, "python")
    assert launched is not None
    pid = launched.popen.pid
    with ServerPool() as pool:
        pool.adopt(launched)
        adopted = _refs(pool, workspace)
        info = pool.session_info(workspace, "python")
        assert info is not None and info["pid"] == pid and info["launched_early"] is True
    assert adopted == started and len(adopted) >= 2  # the definition and the call in app.py
    assert _gone(pid)  # the pool's close() stopped the adopted process


def test_a_prelaunched_server_nobody_asks_for_is_killed_with_the_pool(workspace: Path) -> None:
    launched = prelaunch(workspace, "python")
    assert launched is not None
    pool = ServerPool()
    pool.adopt(launched)
    pool.close()
    assert launched.popen.returncode is not None and _gone(launched.popen.pid)


def test_a_prelaunched_server_that_died_is_replaced_by_a_fresh_one(workspace: Path) -> None:
    launched = prelaunch(workspace, "python")
    assert launched is not None
    launched.kill()
    with ServerPool() as pool:
        pool.adopt(launched)
        assert len(_refs(pool, workspace)) >= 2
        info = pool.session_info(workspace, "python")
        assert info is not None and info["pid"] != launched.popen.pid and info["launched_early"] is False


def test_no_prelaunch_for_a_language_without_a_server(workspace: Path) -> None:
    assert prelaunch(workspace, "rust") is None


@pytest.mark.skipif(available_definition("c") is None, reason="clangd is not installed")
def test_warming_clangd_starts_its_index_without_waiting_for_a_question(tmp_path: Path) -> None:
    """clangd reads the compilation database, and so indexes, only once a file is opened: a
    warm-up that opened nothing waited for the first question (or its deadline) to begin."""
    root = tmp_path / "c"
    shutil.copytree(HERE / "workspaces" / "c", root)
    with ServerPool() as pool:
        assert pool.warm(root, "c", deadline_s=120.0)
        info = pool.session_info(root, "c")
        assert info is not None and info["ready"]


@pytest.mark.skipif(available_definition("typescript") is None, reason="no TypeScript server installed")
def test_a_file_handed_over_early_starts_tsservers_load(tmp_path: Path) -> None:
    """tsserver loads a project only once one of its files is opened: a warm-up alone never gets
    it ready; ``open_early`` (the daemon's hint while its first index runs) does."""
    root = tmp_path / "ts"
    shutil.copytree(HERE / "workspaces" / "typescript", root)
    with ServerPool() as pool:
        assert not pool.warm(root, "typescript", deadline_s=3.0)  # started, and waiting for a file
        pool.open_early(root, "typescript", str(root / "src" / "service.ts"))
        assert pool.warm(root, "typescript", deadline_s=120.0)
        pool.open_early(root, "python", str(root / "src" / "service.ts"))  # no such server here: nothing


def test_target_files_reads_the_index_as_it_is(tmp_path: Path) -> None:
    from navigator.api import Navigator
    from storage.peek import target_files

    root = tmp_path / "ws"
    shutil.copytree(HERE / "workspaces" / "python", root)
    with Navigator(root) as nav:
        nav.index()
    db = root / ".nav" / "index.db"
    assert target_files(db, "create_sales_order") == [("orders/service.py", "python")]
    assert target_files(db, "orders.service.create_sales_order") == [("orders/service.py", "python")]
    assert target_files(db, "orders/app.py:12:13") == [("orders/app.py", "python")]
    assert target_files(db, "no_such_name") == []
    assert target_files(tmp_path / "missing.db", "create_sales_order") == []


def test_the_daemon_hands_over_the_files_of_a_question_about_a_server(tmp_path: Path) -> None:
    from navigator.api import Navigator
    from navigator.frontends.daemon_servers import open_asked_files

    root = tmp_path / "ws"
    shutil.copytree(HERE / "workspaces" / "python", root)
    with Navigator(root) as nav:
        nav.index()
    db = root / ".nav" / "index.db"

    class Recorder:
        def __init__(self) -> None:
            self.opened: list[tuple[str, str]] = []

        def open_early(self, where: Path, language: str, path: str) -> None:
            assert where == root
            self.opened.append((language, path))

    pool = Recorder()
    service = str(root / "orders" / "service.py")
    assert open_asked_files(pool, root, db, "references", {"__args__": ["create_sales_order"]}) == 1  # type: ignore[arg-type]  # records, serves nothing
    assert open_asked_files(pool, root, db, "hover", {"target": "create_sales_order"}) == 1  # type: ignore[arg-type]
    assert open_asked_files(pool, root, db, "definition", ["orders/service.py:6:5"]) == 1  # type: ignore[arg-type]
    assert pool.opened == [("python", service)] * 3
    assert open_asked_files(pool, root, db, "search", {"__args__": ["create_sales_order"]}) == 0  # type: ignore[arg-type]
    assert open_asked_files(pool, root, db, "references", {"__args__": [7]}) == 0  # type: ignore[arg-type]
    assert open_asked_files(pool, root, db, "references", {"__args__": ["../../etc/passwd:1"]}) == 0  # type: ignore[arg-type]


def test_a_daemons_early_pool_warms_the_servers_it_launched_first(workspace: Path) -> None:
    import time

    from navigator.api import Navigator
    from navigator.frontends.daemon_servers import early_pool

    with Navigator(workspace) as nav:
        nav.index()
    early = early_pool(workspace, workspace / ".nav" / "index.db")
    assert early is not None
    pool = early.pool
    try:
        deadline = time.monotonic() + 120
        while not ((info := pool.session_info(workspace, "python")) and info["ready"]):
            assert time.monotonic() < deadline, "the early server never got ready"
            time.sleep(0.05)
        assert info["launched_early"] is True
        assert len(_refs(pool, workspace)) >= 2
        pid = info["pid"]
    finally:
        pool.close()
    assert _gone(pid)


@pytest.mark.parametrize("language", ["python", "go"])
def test_a_daemon_launches_its_server_before_it_imports_multilspy(tmp_path: Path, language: str) -> None:
    """The daemon's start, as ``nav`` runs it, spawns the server of an indexed root before anything
    imports multilspy (~0.3 s, more on a loaded machine, that the server's load then overlaps).
    Its reading of the server idle time (``NAV_SERVER_IDLE_S``) imported ``lsp.pool`` first."""
    from navigator.api import Navigator

    found = available_definition(language)
    if found is None:
        pytest.skip(f"no {language} server installed")
    root = tmp_path / language
    shutil.copytree(HERE / "workspaces" / language, root)
    with Navigator(root) as nav:
        nav.index()
    r, w = os.pipe()
    # the daemon as nav starts it: warming servers whatever an earlier test left in the environment
    env = {k: v for k, v in os.environ.items() if k != "NAV_DAEMON_NO_WARM"}
    env.update({"PYTHONPATH": str(ROOT), "NAV_DAEMON_NO_EMBED": "1"})
    proc = subprocess.Popen(
        [sys.executable, "-c", DAEMON_LAUNCH, str(root), "--no-watch", "--ready-fd", str(w),
         "--expect", "references", "CreateSalesOrder" if language == "go" else "create_sales_order"],
        pass_fds=(w,), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(w)
    try:
        said, _, _ = select.select([r], [], [], 120.0)
        assert said and os.read(r, 64).strip() == b"ready", "the daemon did not say ready"
    finally:
        os.close(r)
        proc.terminate()  # the daemon's SIGTERM: it stops its servers and returns from main()
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    events: list[str] = json.loads(out.strip().splitlines()[-1])
    spawn = f"spawn {Path(found[1]).name}"
    assert spawn in events, events
    assert "import multilspy" in events, events  # the pool was made, after
    assert events.index(spawn) < events.index("import multilspy"), events


@pytest.mark.skipif(available_definition("go") is None, reason="gopls is not installed")
def test_a_prelaunched_gopls_loads_before_any_pool_exists(tmp_path: Path) -> None:
    """A server loads nothing before ``initialize`` (gopls: nor before its configuration): the
    launch sends it and answers for the client until a pool adopts the process, so the load
    runs while nav imports multilspy. Adopted, it answers as a server the pool started does."""
    root = tmp_path / "go"
    shutil.copytree(HERE / "workspaces" / "go", root)
    path = root / "service.go"
    line = next(
        i for i, t in enumerate(path.read_text().splitlines()) if t.startswith("func CreateSalesOrder")
    )
    at = Position(str(path), line, len("func "))

    def refs(pool: ServerPool) -> set[tuple[str, int, int]]:
        answer = pool.query(root, "go", "references", [at], deadline_s=120.0)
        assert answer.answered and answer.complete, answer.reason
        return {(loc.path, loc.start_line, loc.start_character) for loc in answer.locations}

    with ServerPool() as pool:
        started = refs(pool)
    launched = prelaunch(root, "go")
    assert launched is not None and launched.handshake is not None
    loaded = launched.handshake.wait_said(
        lambda m: (
            m.get("method") == "$/progress" and (m.get("params") or {}).get("value", {}).get("kind") == "end"
        ),
        120.0,
    )
    assert loaded, "gopls did not finish loading packages before a pool adopted it"
    with ServerPool() as pool:
        pool.adopt(launched)
        assert refs(pool) == started and len(started) >= 2
        info = pool.session_info(root, "go")
        assert info is not None and info["launched_early"] is True and info["ready"]
    assert _gone(launched.popen.pid)


@pytest.mark.skipif(available_definition("typescript") is None, reason="no TypeScript server installed")
def test_tsserver_launched_with_the_questions_file_loads_and_sees_a_later_change(tmp_path: Path) -> None:
    """tsserver loads a project only once a file of it is open: launched with the file the coming
    question starts at, it loads with no pool at all. The file opened then and changed before a
    session adopts the server is sent again: the answer counts the new reference."""
    root = tmp_path / "ts"
    shutil.copytree(HERE / "workspaces" / "typescript", root)
    service = root / "src" / "service.ts"
    line = next(i for i, t in enumerate(service.read_text().splitlines()) if "function createSalesOrder" in t)
    at = Position(str(service), line, service.read_text().splitlines()[line].index("createSalesOrder"))
    launched = prelaunch(root, "typescript", open_first=[str(service)])
    assert launched is not None and launched.handshake is not None
    loaded = launched.handshake.wait_said(
        lambda m: (
            m.get("method") == "$/progress" and (m.get("params") or {}).get("value", {}).get("kind") == "end"
        ),
        120.0,
    )
    assert loaded, "tsserver did not load the project it was given at launch"
    added = len(service.read_text().splitlines())
    with service.open("a") as fh:
        fh.write('export const again = () => createSalesOrder("bob", []);\n')
    with ServerPool() as pool:
        pool.adopt(launched)
        answer = pool.query(root, "typescript", "references", [at], deadline_s=120.0)
        assert answer.answered and answer.complete, answer.reason
        found = {(Path(loc.path).name, loc.start_line) for loc in answer.locations}
        info = pool.session_info(root, "typescript")
        assert info is not None and info["launched_early"] is True
    assert ("service.ts", added) in found, found  # the line written after the early open
    assert ("app.ts", 7) in found, found  # and the project's other files: it was loaded


def test_the_files_of_an_expected_question_are_read_from_the_index(tmp_path: Path) -> None:
    from navigator.api import Navigator
    from navigator.frontends.daemon_servers import _expected_files

    root = tmp_path / "ws"
    shutil.copytree(HERE / "workspaces" / "typescript", root)
    with Navigator(root) as nav:
        nav.index()
    db = root / ".nav" / "index.db"
    service = str((root / "src" / "service.ts").resolve())
    assert _expected_files(root.resolve(), db, ("references", "createSalesOrder")) == {
        "typescript": [service]
    }
    assert _expected_files(root.resolve(), db, ("callers", "src/service.ts:4")) == {"typescript": [service]}
    assert _expected_files(root.resolve(), db, ("search", "createSalesOrder")) == {}  # no server question
    assert _expected_files(root.resolve(), db, ("references", "noSuchThing")) == {}
    assert _expected_files(root.resolve(), db, None) == {}
