"""Faults against the team store, with real processes and a real PostgreSQL: concurrent
publishers with readers, a publisher killed mid-transaction, the server stopped mid-query."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from store_repos import clone, commit_change, git, make_repo

from navigator.api import Navigator
from navigator.frontends.cli import main
from navigator.team import TeamStore
from semantic.embed import FakeEmbedder
from storage.errors import StorageError
from storage.pg import StoreSchemaError
from storage.pg_local import LocalPostgres

PUBLISHER = Path(__file__).parent / "store_publisher.py"
TABLES = ("nav_blobs", "nav_files", "nav_chunks", "nav_file_chunks", "nav_symbols", "nav_embeddings",
          "nav_commits", "nav_commit_files", "nav_heads", "nav_repos")  # fmt: skip


def _nav(root: Path, url: str) -> Navigator:
    return Navigator(root, embedder=FakeEmbedder(384), store_url=url)


def _counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as c:
        return {t: int(c.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}  # type: ignore[index]


def _wait_for(what: str, check: Callable[[], bool], timeout_s: float = 60.0) -> None:
    """Poll the database for a state change (PostgreSQL has no event for it), bounded."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.05)


def _publisher(root: Path, url: str, branch: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    args = [sys.executable, str(PUBLISHER), str(root), url] + ([branch] if branch else [])
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _partial_commits(cur: psycopg.Cursor) -> list[tuple[str, int, int]]:
    """Visible commits whose manifest is not complete (must always be empty)."""
    cur.execute(
        "SELECT c.sha, c.files, count(cf.file) FROM nav_commits c LEFT JOIN nav_commit_files cf "
        "ON cf.repo = c.repo AND cf.sha = c.sha GROUP BY c.repo, c.sha, c.files HAVING count(cf.file) <> c.files"
    )
    return [(str(a), int(b), int(n)) for a, b, n in cur.fetchall()]


@pytest.mark.slow
def test_eight_concurrent_publishers_of_overlapping_commits_with_readers(tmp_path: Path, store_url: str) -> None:
    base = make_repo(tmp_path / "billing")
    shas = [git(base, "rev-parse", "HEAD")]
    for i in range(3):
        shas.append(commit_change(base, {f"billing/step{i}.py": f"def step_{i}(x):\n    return x + {i}\n"}))
    roots = [clone(base, tmp_path / f"c{j}", rev=shas[j % 4]) for j in range(8)]
    stop = threading.Event()
    seen: dict[str, int] = {"searches": 0, "checks": 0, "no_schema_yet": 0}
    problems: list[str] = []

    def reader() -> None:
        team = TeamStore(store_url, embedder=FakeEmbedder(384))
        try:
            with psycopg.connect(store_url, autocommit=True) as c, c.cursor() as cur:
                while not stop.is_set():
                    try:
                        team.search("retry the erp call", k=5)
                        seen["searches"] += 1
                    except StoreSchemaError:
                        seen["no_schema_yet"] += 1  # a clear error before the first publisher's schema
                        continue
                    except StorageError as exc:
                        problems.append(f"search: {exc}")
                    partial = _partial_commits(cur)
                    seen["checks"] += 1
                    if partial:
                        problems.append(f"half-visible commits: {partial}")
        finally:
            team.close()

    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers:
        t.start()
    procs = [_publisher(r, store_url, branch="main" if j % 2 else "release") for j, r in enumerate(roots)]
    try:
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        stop.set()
        for t in readers:
            t.join(timeout=60)
    assert [p.returncode for p in procs] == [0] * 8, [o[1][-500:] for o in outs]
    assert not problems, problems[:5]
    assert seen["searches"] > 0 and seen["checks"] > 0
    reports = [json.loads(o[0]) for o in outs]
    # each commit was published once; its second publisher found it done
    for sha in shas:
        mine = [r for r in reports if r["commit"] == sha]
        assert len(mine) == 2 and sorted(r["already_published"] for r in mine) == [False, True]
    counts = _counts(store_url)
    keys: set[str] = set()
    for r in roots[:4]:
        with _nav(r, store_url) as nav:
            nav.index()  # the second publisher of a commit returns early, without indexing
            keys |= set(nav.team()._local_keys())
    # content-addressed: every distinct chunk stored and embedded exactly once
    with psycopg.connect(store_url) as c:
        stored = {str(r[0]): (r[1], r[2]) for r in c.execute("SELECT key, path, symbol FROM nav_chunks")}
    assert set(stored) == keys, {k: v for k, v in stored.items() if k not in keys}
    assert counts["nav_chunks"] == counts["nav_embeddings"] == len(keys)
    assert counts["nav_commits"] == 4 and counts["nav_heads"] == 2
    with psycopg.connect(store_url) as c, c.cursor() as cur:
        assert _partial_commits(cur) == []


def test_a_publisher_killed_mid_transaction_leaves_nothing_and_the_next_completes(
    tmp_path: Path, store_url: str
) -> None:
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, store_url) as nav:
        first = nav.team().publish()
    second = commit_change(repo, {"billing/late.py": "def late_fee(days: int) -> float:\n    return days * 0.5\n"})
    before = _counts(store_url)
    locker = psycopg.connect(store_url)
    # hold the branch heads: the publisher writes all its content, then waits at the very end
    locker.execute("LOCK TABLE nav_heads IN ACCESS EXCLUSIVE MODE")
    proc = _publisher(repo, store_url)
    try:
        with psycopg.connect(store_url, autocommit=True) as watch:

            def waiting() -> list[int]:
                rows = watch.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = 'nav' "
                    "AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO nav_heads%'"
                ).fetchall()
                return [int(r[0]) for r in rows]

            _wait_for("the publisher to wait inside its transaction", lambda: bool(waiting()) or proc.poll() is not None)
            assert proc.poll() is None, proc.communicate()
            backend = waiting()[0]
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
            locker.rollback()
            _wait_for(
                "the killed publisher's transaction to end",
                lambda: watch.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (backend,)).fetchone()
                == (0,),
            )
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
        locker.close()
    assert _counts(store_url) == before  # nothing half-written, nothing visible
    with psycopg.connect(store_url) as c:
        assert c.execute("SELECT sha FROM nav_heads").fetchall() == [(first.commit,)]
    with _nav(repo, store_url) as nav:
        again = nav.team().publish()
        assert again.commit == second and not again.already_published and again.new_files == 1
        hits = nav.search("late fee for days", k=3, all_repos=True)
        assert any(h.path == "billing/late.py" and getattr(h, "commit", "") == second for h in hits.items)
    with psycopg.connect(store_url) as c, c.cursor() as cur:
        assert _partial_commits(cur) == []


@pytest.fixture
def own_server():  # type: ignore[no-untyped-def]
    """A server of this test's own, to stop mid-query without disturbing the others."""
    base = Path(tempfile.mkdtemp(prefix="nav-pg-stop-", dir="/tmp"))
    pg = LocalPostgres.start(base)
    try:
        yield pg
    finally:
        pg.stop(mode="immediate")
        shutil.rmtree(base, ignore_errors=True)


def test_the_server_stopped_mid_query_leaves_local_answers_with_a_note(tmp_path: Path, own_server) -> None:  # type: ignore[no-untyped-def]
    url = own_server.url()
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, url) as nav:
        nav.team().publish()
    locker = psycopg.connect(url)
    locker.execute("LOCK TABLE nav_chunks IN ACCESS EXCLUSIVE MODE")  # the query will wait here
    result: dict[str, object] = {}
    with _nav(repo, url) as nav:
        nav.index()

        def ask() -> None:
            try:
                result["resp"] = nav.search("parse an invoice", k=3, all_repos=True)
            except Exception as exc:  # the test reports any exception as a failure below
                result["error"] = exc

        t = threading.Thread(target=ask)
        t.start()
        with psycopg.connect(url, autocommit=True) as watch:
            _wait_for(
                "the search to be waiting in PostgreSQL",
                lambda: watch.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'nav' AND wait_event_type = 'Lock'"
                ).fetchone()
                != (0,)
                or not t.is_alive(),
            )
        own_server.stop(mode="immediate")
        t.join(timeout=60)
        assert not t.is_alive()
        assert "error" not in result, result.get("error")
        resp = result["resp"]
        assert resp.complete is False and resp.source == "index"  # type: ignore[attr-defined]
        assert "team store unavailable" in (resp.reason or "")  # type: ignore[attr-defined]
        assert resp.items and resp.items[0].path == "billing/invoices.py"  # type: ignore[attr-defined]
        defs = nav.definitions("parse_invoice", all_repos=True)
        assert defs.complete is False and defs.items[0].path == "billing/invoices.py"
    locker.close()
    # a fresh clone indexes with the store down: a note, not an error; everything embedded here
    fresh = clone(repo, tmp_path / "fresh")
    out = CliRunner().invoke(main, ["-C", str(fresh), "index", "--no-embed", "--store", url])
    assert out.exit_code == 0, out.output
    assert "team store not used" in out.output and "cannot reach" in out.output


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nobody listens there


def test_all_repos_with_the_store_down_says_so_when_nothing_local_answers(tmp_path: Path) -> None:
    """`nav def Flask --all-repos` with the store down said "no symbol named Flask" (exit 4) and
    nothing of the store (issue 17 §5)."""
    repo = make_repo(tmp_path / "billing")
    down = f"postgresql://nav@127.0.0.1:{_closed_port()}/nav"
    runner = CliRunner()
    assert runner.invoke(main, ["-C", str(repo), "index", "--no-embed"]).exit_code == 0
    out = runner.invoke(main, ["-C", str(repo), "def", "--all-repos", "--store", down, "Flask"])
    assert out.exit_code == 5, out.output  # a store error: nothing could be answered
    assert "cannot reach the team store" in out.output and "no symbol named `Flask`" in out.output
    # what the local index can answer is answered, marked incomplete, naming the store
    out = runner.invoke(main, ["-C", str(repo), "def", "--all-repos", "--store", down, "parse_invoice"])
    assert out.exit_code == 0 and "billing/invoices.py" in out.output
    assert "incomplete: team store unavailable" in out.output
    with _nav(repo, down) as nav, pytest.raises(StorageError, match="cannot reach the team store.*`Flask`"):
        nav.definitions("Flask", all_repos=True)
    out = runner.invoke(main, ["-C", str(tmp_path), "def", "--all-repos", "--store", down, "Flask"])
    assert out.exit_code == 5 and "cannot reach the team store" in out.output, out.output  # no index at all
