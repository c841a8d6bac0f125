"""A server launched before multilspy is imported (lsp/launch.py) is adopted by the pool: it
answers as a server the pool started does, and nothing is left running whatever happens to it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
