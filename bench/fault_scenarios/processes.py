"""Fault scenarios, area ``processes``: signals to `nav index` and to the daemon mid-run.

Each scenario generates a repository big enough for the parse pool (220 modules), then kills at
seeded random points while the workers run. Per injection:

- honest: the killed run's workers end with it (within 10 s), no lock stays held, and a SIGTERM
  ends `nav index` with exit 143 and a message, no traceback;
- recovered: the next `nav index` completes (exit 0) and `nav def` answers correctly, no hand step;
- lost: files of the previous complete index missing after the kill.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bench.fault_scenarios import FaultResult, Scenario
from tests.faultkit import (
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

AREA = "processes"
FILES = 220


def _indexed_files(root: Path) -> int:
    db = root / ".nav" / "index.db"
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=2)
        try:
            return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _recovered(root: Path, name: str, where: str) -> bool:
    done = run_nav(root, "index", timeout=180)
    if done.returncode != 0:
        return False
    out = run_nav(root, "def", name, timeout=60)
    return out.returncode == 0 and where in out.stdout


def _signal_index(workdir: Path, sig: int, repeats: int, seed: int) -> FaultResult:
    rng = random.Random(seed)
    root = make_repo(workdir / "repo", files=FILES, seed=seed)
    if run_nav(root, "index", timeout=180).returncode != 0:
        return FaultResult(AREA, "setup failed", 0, 0, 0, note="first index failed")
    honest = recovered = lost = 0
    for rep in range(repeats):
        before = _indexed_files(root)
        rewrite_modules(root, files=FILES, rng=rng, version=rep + 1)
        proc = subprocess.Popen(
            nav_cmd(root, "index"), env=nav_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        ok = True
        try:
            wait_until(lambda p=proc: len(workers_of(p.pid)) >= 2 or p.poll() is not None, 60, "workers")
            workers = parse_workers(proc.pid)
            time.sleep(rng.uniform(0.0, 0.4))  # the injection point: a random moment of the run
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=30)
            wait_until(lambda ws=workers: not any(alive(w) for w in ws), 10, "workers ending")
        except (TimeoutError, subprocess.TimeoutExpired):
            ok = False
            proc.kill()
            _, err = proc.communicate(timeout=10)
        ok = ok and lock_is_free(root / ".nav" / "index.lock")
        if sig == signal.SIGTERM and proc.returncode not in (0, None):
            ok = ok and proc.returncode == 143 and "Traceback" not in err and "terminated" in err
        honest += ok
        lost += max(0, before - _indexed_files(root))
        recovered += _recovered(root, "helper_7_3", "pkg7/mod7.py")
    name = "kill -9" if sig == signal.SIGKILL else "SIGTERM"
    return FaultResult(
        AREA, f"{name} of `nav index` at a random point of a re-index", repeats, honest, recovered, lost
    )


def kill9_index(workdir: Path) -> list[FaultResult]:
    return [_signal_index(workdir, signal.SIGKILL, repeats=5, seed=9)]


def sigterm_index(workdir: Path) -> list[FaultResult]:
    return [_signal_index(workdir, signal.SIGTERM, repeats=5, seed=15)]


def kill9_daemon_reindexing(workdir: Path) -> list[FaultResult]:
    rng = random.Random(7)
    root = make_repo(workdir / "repo", files=FILES)
    if run_nav(root, "index", timeout=180).returncode != 0:
        return [FaultResult(AREA, "setup failed", 0, 0, 0, note="first index failed")]
    honest = recovered = lost = 0
    repeats = 3
    for rep in range(repeats):
        before = _indexed_files(root)
        rewrite_modules(root, files=FILES, rng=rng, version=rep + 1)
        daemon = subprocess.Popen(
            [sys.executable, "-m", "navigator.frontends.daemon", str(root), "--no-watch"],
            env=nav_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        ok = True
        try:
            wait_until(lambda d=daemon: len(workers_of(d.pid)) >= 2 or d.poll() is not None, 60, "workers")
            workers = parse_workers(daemon.pid)
            time.sleep(rng.uniform(0.0, 0.3))
            daemon.kill()
            daemon.wait(timeout=10)
            wait_until(lambda ws=workers: not any(alive(w) for w in ws), 10, "workers ending")
        except (TimeoutError, subprocess.TimeoutExpired):
            ok = False
        finally:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait(timeout=10)
        ok = ok and lock_is_free(root / ".nav" / "daemon.lock") and lock_is_free(root / ".nav" / "index.lock")
        honest += ok
        lost += max(0, before - _indexed_files(root))
        recovered += _recovered(root, "helper_3_2", "pkg3/mod3.py")
    return [FaultResult(AREA, "kill -9 of the daemon while it re-indexes", repeats, honest, recovered, lost)]


def killed_first_index(workdir: Path) -> list[FaultResult]:
    """A first `nav index` killed mid-run; a query that cannot complete it must say it is unfinished."""
    import fcntl
    import os

    honest = recovered = 0
    repeats = 2
    for rep in range(repeats):
        root = make_repo(workdir / f"repo{rep}", files=6 * FILES, seed=rep)  # many batches: the kill lands mid-run
        proc = subprocess.Popen(
            nav_cmd(root, "index"), env=nav_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            wait_until(
                lambda p=proc, r=root: _indexed_files(r) > 0 or p.poll() is not None, 120, "a first batch"
            )
        finally:
            proc.kill()
            proc.wait(timeout=30)
        fd = os.open(root / ".nav" / "index.lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # another process "indexing": the query cannot finish the run
            out = run_nav(root, "def", "Config", timeout=60)
        finally:
            os.close(fd)
        honest += out.returncode in (0, 4) and ("unfinished" in out.stderr or "being updated" in out.stderr)
        recovered += _recovered(root, "Config", "config.py")
    return [FaultResult(AREA, "query after a killed first `nav index`", repeats, honest, recovered)]


SCENARIOS: list[Scenario] = [kill9_index, sigterm_index, kill9_daemon_reindexing, killed_first_index]
