"""Processes and locks: a kill never leaves a hang (issue 8, section 2).

Real `nav index` and daemon processes, real signals at seeded random points while the parse pool
runs, real flocks; then the next `nav index` and `nav def` must complete promptly and correctly,
and no process of the killed run may be left.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from faultkit import (
    alive,
    lock_is_free,
    make_repo,
    nav_cmd,
    nav_env,
    parse_workers,
    rewrite_modules,
    run_nav,
    wait_until,
    workers_of,
)

FILES = 220
REPEATS = 5


def start_index(root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        nav_cmd(root, "index"), env=nav_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def kill_while_parsing(proc: subprocess.Popen[str], sig: int, rng: random.Random) -> tuple[list[int], str]:
    """Wait for the parse workers to exist, let a seeded random moment pass, send ``sig``.

    Returns the workers seen and the process's stderr."""
    wait_until(lambda: len(workers_of(proc.pid)) >= 2 or proc.poll() is not None, 60, "parse workers starting")
    workers = parse_workers(proc.pid)
    time.sleep(rng.uniform(0.0, 0.4))  # the injection point: a random moment of the run
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"nav index did not end within 30 s of signal {sig}")
    return workers, err


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_killing_nav_index_leaves_no_worker_and_no_held_lock(tmp_path: Path, sig: int) -> None:
    rng = random.Random(8 + sig)
    root = make_repo(tmp_path / "repo", files=FILES, seed=sig)
    lock = root / ".nav" / "index.lock"
    saw_workers = 0
    for rep in range(REPEATS):
        if rep:  # re-indexing: every module changed, so the pool parses them again
            rewrite_modules(root, files=FILES, rng=rng, version=rep)
        proc = start_index(root)
        workers, err = kill_while_parsing(proc, sig, rng)
        saw_workers += bool(workers)
        # every worker of the killed run ends with it (within a bound), so the lock is free
        wait_until(lambda ws=workers: not any(alive(w) for w in ws), 10, f"workers {workers} ending")
        assert lock_is_free(lock), f"repeat {rep}: index.lock still held after the kill"
        if sig == signal.SIGTERM:
            if proc.returncode == 0:
                continue  # the run finished before the signal landed: nothing to check
            if proc.returncode == -signal.SIGTERM:
                # landed in the last instant, after the report (the handler is gone): the default
                # action ends the process, and the index it leaves is complete
                status = json.loads(run_nav(root, "status", "--json").stdout)
                assert status["last_run_complete"], status
                continue
            assert proc.returncode == 143, (proc.returncode, err)
            assert "Traceback" not in err, err
            assert "terminated" in err
            if "the index run had completed" in err:  # landed while it embedded or printed
                assert json.loads(run_nav(root, "status", "--json").stdout)["last_run_complete"]
    assert saw_workers >= REPEATS - 1, "the runs should have used the parse pool"
    started = time.monotonic()
    done = run_nav(root, "index", timeout=180)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 120
    defined = run_nav(root, "def", "helper_7_3", timeout=60)
    assert defined.returncode == 0, defined.stderr
    assert "pkg7/mod7.py" in defined.stdout
    status = json.loads(run_nav(root, "status", "--json").stdout)
    assert status["last_run_complete"] and status["stale_files"] == 0


def indexed_files(root: Path) -> int:
    import sqlite3

    db = root / ".nav" / "index.db"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
    except sqlite3.Error:
        return 0


FIRST_INDEX_FILES = 1200
"""Six batches of 200 files: the first commit comes long before the last (with 220 files the
second, last batch followed the first within milliseconds, and a kill sometimes landed after it)."""


def kill_after_first_batch(root: Path) -> None:
    """kill -9 a first `nav index` once it has committed some files, before it finishes."""
    proc = start_index(root)
    wait_until(lambda: indexed_files(root) > 0 or proc.poll() is not None, 120, "a first batch committed")
    proc.kill()
    proc.communicate(timeout=30)
    assert 0 < indexed_files(root) < FIRST_INDEX_FILES, "the kill should land mid-run"


def test_an_answer_from_a_killed_first_index_says_it_is_unfinished(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", files=FIRST_INDEX_FILES)
    kill_after_first_batch(root)
    # `nav def` reads the index as it is (refresh off, as the daemon does with its watcher)
    from navigator.api import Navigator

    nav = Navigator(root, refresh=False)
    try:
        state = nav.store.get_meta("last_run_state")
        assert state == "running"
        from storage.errors import SymbolNotFoundError

        with pytest.raises(SymbolNotFoundError, match="the index is unfinished.*run `nav index`"):
            nav.definitions("NoSuchNameAnywhere")
        found = nav.symbols("helper")
        assert any("unfinished" in n for n in found.notes)
        st = nav.status()
        assert not st.last_run_complete and any("unfinished" in n for n in st.notes)
    finally:
        nav.close()
    # the next index completes it; then the same answers are complete and carry no such note
    assert run_nav(root, "index").returncode == 0
    with Navigator(root, refresh=False) as nav:
        resp = nav.definitions("Config")
        assert resp.complete and resp.items[0].path == "config.py" and not resp.notes


def test_cli_def_after_a_killed_first_index_says_so(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", files=FIRST_INDEX_FILES)
    kill_after_first_batch(root)
    # another process holds the index lock, so the query cannot complete the run first
    import fcntl

    fd = os.open(root / ".nav" / "index.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        out = run_nav(root, "def", "NoSuchNameAnywhere", timeout=60)
    finally:
        os.close(fd)
    assert out.returncode == 4
    assert "unfinished" in out.stderr or "being updated" in out.stderr, out.stderr


def daemon_pid(root: Path) -> int:
    return int(json.loads((root / ".nav" / "daemon.json").read_text())["pid"])


def test_kill_9_of_the_daemon_while_it_reindexes(tmp_path: Path) -> None:
    from navigator.frontends.client import DaemonClient

    rng = random.Random(5)
    root = make_repo(tmp_path / "repo", files=FILES)
    assert run_nav(root, "index").returncode == 0
    env = nav_env()
    for rep in range(3):
        rewrite_modules(root, files=FILES, rng=rng, version=rep + 1)
        daemon = subprocess.Popen(
            [sys.executable, "-m", "navigator.frontends.daemon", str(root), "--no-watch"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(lambda: (root / ".nav" / "daemon.json").exists(), 60, "the daemon listening")
            # its first sync re-parses every changed module through the pool
            wait_until(lambda d=daemon: len(workers_of(d.pid)) >= 2, 60, "the daemon's parse workers")
            workers = parse_workers(daemon.pid)
            time.sleep(rng.uniform(0.0, 0.3))  # the injection point
            daemon.kill()
            daemon.wait(timeout=10)
            wait_until(lambda ws=workers: not any(alive(w) for w in ws), 10, "the daemon's workers ending")
            assert lock_is_free(root / ".nav" / "daemon.lock")
            assert lock_is_free(root / ".nav" / "index.lock")
        finally:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait(timeout=10)
    # the next query starts a fresh daemon and answers promptly, from a completed index
    started = time.monotonic()
    out = run_nav(root, "def", "helper_3_2", timeout=120, no_daemon=False)
    elapsed = time.monotonic() - started
    try:
        assert out.returncode == 0, out.stderr
        assert "pkg3/mod3.py" in out.stdout
        assert elapsed < 90
    finally:
        client = DaemonClient(root)
        with contextlib.suppress(Exception):  # best effort; the pid below is killed anyway
            client.stop()
        info = root / ".nav" / "daemon.json"
        if info.exists():
            pid = daemon_pid(root)
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_status_does_not_count_skipped_binary_files_as_stale(tmp_path: Path) -> None:
    from navigator.api import Navigator

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "config.py").write_text("class Config:\n    pass\n", encoding="utf-8")
    (root / "notes_utf16.txt").write_bytes("hello, UTF-16 text\n".encode("utf-16"))
    (root / "data.nc").write_bytes(b"CDF\x01\x00\x00\x00\x00" + bytes(range(256)) * 8)
    with Navigator(root, refresh=False) as nav:
        report = nav.index()
        assert report.files == 1  # the two binary files are left out
        status = nav.status()
        assert status.last_run_complete and status.stale_files == 0
        # a skipped file that changes is stale until the next run looks at it again
        (root / "data.nc").write_bytes(b"CDF\x02\x00" + bytes(range(256)) * 9)
        assert nav.status().stale_files == 1
        nav.index()
        assert nav.status().stale_files == 0
        # and one that turns into text is indexed, and no longer remembered as skipped
        (root / "notes_utf16.txt").write_text("def now_text():\n    pass\n", encoding="utf-8")
        (root / "notes_utf16.txt").rename(root / "now_text.py")
        nav.index()
        assert nav.definitions("now_text").items[0].path == "now_text.py"
        assert nav.status().stale_files == 0
        assert "notes_utf16.txt" not in nav.store.skipped_rows()
