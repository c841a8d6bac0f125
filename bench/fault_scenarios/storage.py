"""Fault scenarios, area ``storage``: a damaged, truncated, read-only or full index.

- honest: every command ends with an answer (its notes say what happened) or exit 5 with words
  that name the way back, never a traceback; `nav index` never reports success while SQLite's
  integrity check fails;
- recovered: the next query answers correctly with no hand step (for a read-only or full disk:
  the query answers from the index as it is, and `nav index` works once the disk is back);
- lost: files of the working tree missing from the index after recovery.

Read-only and full disks need a bind mount and a tmpfs: as root they are real; otherwise those
rows say "skipped".
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import subprocess
from pathlib import Path

from bench.fault_scenarios import FaultResult, Scenario
from tests.faultkit import make_repo, run_nav

AREA = "storage"
FILES = 60
QUERIES = (("status",), ("map", "--tokens", "64"), ("search", "helper value"), ("def", "Config"))


def _integrity(db: Path) -> str:
    try:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            return ",".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check(3)"))
    except sqlite3.DatabaseError as exc:  # damage the check itself cannot read past
        return str(exc)


def _files(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])


def _honest(out: subprocess.CompletedProcess[str]) -> bool:
    if "Traceback" in out.stderr:
        return False
    if out.returncode == 0:
        return True
    return out.returncode == 5 and "nav index" in out.stderr


def _setup(workdir: Path) -> Path:
    root = make_repo(workdir / "repo", files=FILES)
    out = run_nav(root, "index")
    if out.returncode != 0:
        raise RuntimeError(f"setup index failed: {out.stderr[-300:]}")
    return root


def garbage_in_the_middle(workdir: Path) -> list[FaultResult]:
    root = _setup(workdir)
    db = root / ".nav" / "index.db"
    rng = random.Random(5)
    repeats = 4
    honest = recovered = lost = 0
    for rep in range(repeats):
        size = db.stat().st_size
        with open(db, "r+b") as fh:
            fh.seek(rng.randrange(4096, size - 8192))
            fh.write(os.urandom(rng.choice([1024, 4096, 8192])))
        # search loads the embedding model (slow to start): asked on the first round only
        outs = [run_nav(root, *q) for q in QUERIES if q[0] != "search" or rep == 0]
        # then `nav index`: it must not report success over a damaged file
        index = run_nav(root, "index")
        ok = all(_honest(o) for o in outs) and index.returncode == 0 and _integrity(db) == "ok"
        honest += ok
        answered = run_nav(root, "def", "helper_5_2")
        recovered += (
            outs[-1].returncode == 0 and "config.py:1:7" in outs[-1].stdout and answered.returncode == 0
        )
        lost += max(0, FILES + 1 - _files(db))
    return [
        FaultResult(
            AREA, "random bytes written into the middle of index.db", repeats, honest, recovered, lost
        )
    ]


def truncated(workdir: Path) -> list[FaultResult]:
    root = _setup(workdir)
    db = root / ".nav" / "index.db"
    repeats = 3
    honest = recovered = lost = 0
    for frac in (2, 3, 10)[:repeats]:
        with open(db, "r+b") as fh:
            fh.truncate(db.stat().st_size // frac)
        out = run_nav(root, "def", "Config")
        honest += _honest(out) and (out.returncode != 0 or "damaged" in out.stderr)
        recovered += out.returncode == 0 and "config.py:1:7" in out.stdout and _integrity(db) == "ok"
        lost += max(0, FILES + 1 - _files(db))
    return [FaultResult(AREA, "index.db truncated", repeats, honest, recovered, lost)]


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(folder: Path) -> None:
    """Unmount; lazily if something still has a file open there (never leave a mount behind)."""
    if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def read_only_nav(workdir: Path) -> list[FaultResult]:
    root = _setup(workdir)
    nav_dir = root / ".nav"
    fault = "`.nav` on a read-only file system"
    if os.geteuid() != 0 or not _mount("--bind", str(nav_dir), str(nav_dir)):
        return [FaultResult(AREA, fault, 0, 0, 0, note="skipped: cannot bind-mount here")]
    try:
        if not _mount("-o", "remount,bind,ro", str(nav_dir)):
            return [FaultResult(AREA, fault, 0, 0, 0, note="skipped: cannot remount read-only")]
        queries = [run_nav(root, *q) for q in QUERIES] + [run_nav(root, "def", "Config", no_daemon=False)]
        index = run_nav(root, "index")
    finally:
        _umount(nav_dir)
    honest = (
        all(o.returncode == 0 and "Traceback" not in o.stderr for o in queries)
        and "read-only" in queries[-1].stderr
        and index.returncode == 5
        and "read-only" in index.stderr
        and "Traceback" not in index.stderr
    )
    recovered = all("config.py:1:7" in o.stdout for o in (queries[3], queries[4]))
    lost = max(0, FILES + 1 - _files(nav_dir / "index.db"))
    return [
        FaultResult(AREA, fault, 1, int(honest), int(recovered), lost, note="queries answer; writes refused")
    ]


def disk_full(workdir: Path) -> list[FaultResult]:
    root = make_repo(workdir / "repo", files=FILES)
    nav_dir = root / ".nav"
    nav_dir.mkdir(parents=True, exist_ok=True)
    fault = "disk full during `nav index` (tmpfs)"
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=256k", "tmpfs", str(nav_dir)):
        return [FaultResult(AREA, fault, 0, 0, 0, note="skipped: cannot mount a tmpfs here")]
    try:
        out = run_nav(root, "index")
    finally:
        _umount(nav_dir)
    honest = out.returncode == 5 and "no space left" in out.stderr and "Traceback" not in out.stderr
    again = run_nav(root, "index")  # the disk is back (unmounted): the next run completes
    recovered = again.returncode == 0 and _files(nav_dir / "index.db") == FILES + 1
    return [
        FaultResult(
            AREA, fault, 1, int(honest), int(recovered), note="recovered once space is back (a hand step)"
        )
    ]


def disk_full_reindex(workdir: Path) -> list[FaultResult]:
    """As the daemon does (refresh off, the watcher's paths): a re-index that fails on a full disk."""
    from navigator.api import Navigator
    from storage.errors import StorageFullError, SymbolNotFoundError

    root = make_repo(workdir / "repo", files=FILES)
    nav_dir = root / ".nav"
    nav_dir.mkdir(parents=True, exist_ok=True)
    fault = "disk full during a daemon-style re-index"
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(nav_dir)):
        return [FaultResult(AREA, fault, 0, 0, 0, note="skipped: cannot mount a tmpfs here")]
    honest = recovered = lost = 0
    try:
        with Navigator(root, refresh=False) as nav:
            before = nav.index().files
            filler = nav_dir / "filler"
            with open(filler, "wb") as fh, contextlib.suppress(OSError):
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            (root / "fresh.py").write_text("def brand_new_function():\n    return 1\n")  # no byte left for it
            failed_clearly = False
            try:
                nav.index(only=["fresh.py"])
            except StorageFullError:
                failed_clearly = True
            old = nav.definitions("helper_3_1")
            try:
                nav.definitions("brand_new_function")
                said = False
            except SymbolNotFoundError as exc:
                said = "last index update failed" in str(exc)
            honest = int(failed_clearly and not old.complete and said)
            filler.unlink()
            after = nav.index(only=["fresh.py"])
            recovered = int(after.files == before + 1 and nav.definitions("brand_new_function").complete)
            lost = max(0, before + 1 - after.files)
    finally:
        _umount(nav_dir)
    return [FaultResult(AREA, fault, 1, honest, recovered, lost, note="recovered once space is back")]


SCENARIOS: list[Scenario] = [
    garbage_in_the_middle,
    truncated,
    read_only_nav,
    disk_full,
    disk_full_reindex,
]
