"""The watcher of indexed folders: the pure event table, then the real inotify reader."""

from __future__ import annotations

import ctypes
import errno
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from navigator.walk import WalkOptions, walk_dirs
from navigator.watch import (
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_IGNORED,
    IN_ISDIR,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    IN_Q_OVERFLOW,
    Event,
    InotifyWatcher,
    WatchTable,
    parse_events,
)

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def table_of(*folders: str) -> WatchTable:
    table = WatchTable()
    for wd, rel in enumerate(folders, start=1):
        table.add(rel, wd)
    return table


def test_file_changes_in_watched_folders_are_their_paths() -> None:
    table = table_of("", "pkg")
    plan = table.plan([Event(1, IN_CLOSE_WRITE, 0, "a.py"), Event(2, IN_DELETE, 0, "b.py")])
    assert plan.paths == {"a.py", "pkg/b.py"}
    assert not plan.full and not plan.reconcile


def test_files_the_walk_never_indexes_are_no_change() -> None:
    plan = table_of("").plan([Event(1, IN_CREATE, 0, "mod.pyc"), Event(1, IN_CLOSE_WRITE, 0, "x.min.js")])
    assert not plan.paths and not plan.full


def test_an_overflow_asks_for_one_reconcile_however_many_arrive() -> None:
    plan = table_of("").plan([Event(-1, IN_Q_OVERFLOW), Event(1, IN_CREATE, 0, "a.py"), Event(-1, IN_Q_OVERFLOW)])
    assert plan.overflowed and plan.reconcile and plan.full


def test_an_ignore_file_change_re_reads_the_rules() -> None:
    plan = table_of("", "pkg").plan([Event(2, IN_CLOSE_WRITE, 0, ".gitignore")])
    assert plan.reconcile and plan.full


def test_folders_appearing_and_going() -> None:
    table = table_of("", "pkg", "pkg/sub")
    plan = table.plan([Event(1, IN_CREATE | IN_ISDIR, 0, "new"), Event(1, IN_MOVED_TO | IN_ISDIR, 7, "came")])
    assert plan.scan == ["new", "came"] and not plan.full
    moved = table.plan([Event(1, IN_MOVED_FROM | IN_ISDIR, 8, "pkg")])
    assert moved.forget == ["pkg"] and moved.full  # the files that went with it are not known here
    assert sorted(table.drop("pkg")) == [2, 3] and table.folders() == {""}
    # a deleted folder's files were events of their own; an unwatched (ignored) one is nothing
    deleted = table_of("", "gen").plan([Event(1, IN_DELETE | IN_ISDIR, 0, "gen"), Event(1, IN_DELETE | IN_ISDIR, 0, "node_modules")])
    assert deleted.forget == ["gen"] and not deleted.full


def test_the_root_going_is_said_and_unknown_watches_are_skipped() -> None:
    table = table_of("", "pkg")
    assert table.plan([Event(1, IN_DELETE_SELF)]).root_event
    assert not table.plan([Event(2, IN_DELETE_SELF), Event(2, IN_IGNORED)]).root_event
    assert table.folders() == {""}
    assert not table.plan([Event(99, IN_CREATE, 0, "a.py")]).paths


def test_parse_events_reads_the_kernels_layout() -> None:
    import struct

    name = b"caf\xc3\xa9.py\0\0\0\0\0\0"  # NUL-padded, as the kernel pads
    data = struct.pack("iIII", 3, IN_CREATE, 0, len(name)) + name + struct.pack("iIII", -1, IN_Q_OVERFLOW, 0, 0)
    assert parse_events(data) == [Event(3, IN_CREATE, 0, "café.py"), Event(-1, IN_Q_OVERFLOW, 0, "")]


# -- the real reader ---------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.calls: list[list[str] | None] = []
        self.cond = threading.Condition()

    def __call__(self, paths: list[str] | None) -> None:
        with self.cond:
            self.calls.append(paths)
            self.cond.notify_all()

    def wait_for(self, pred: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
        with self.cond:
            assert self.cond.wait_for(pred, timeout=timeout_s), f"never saw {what}; calls: {self.calls[-5:]}"

    def saw(self, path: Path) -> bool:
        return any(c is not None and str(path) in c for c in self.calls)


def wait_for_folders(watcher: InotifyWatcher, pred: Callable[[set[str]], bool], what: str) -> None:
    deadline = time.monotonic() + 20
    while True:
        with watcher.paused:  # the table is the watcher thread's; read it between its batches
            if pred(watcher.table.folders()):
                return
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.02)  # polling the watcher's table, bounded


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for rel in ("pkg/mod.py", "gen/out.py", ".venv/lib/site.py", "node_modules/x/index.js"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
    return root


@pytest.fixture
def watched(tree: Path) -> Iterator[tuple[InotifyWatcher, Recorder]]:
    rec = Recorder()
    watcher = InotifyWatcher(tree, options=WalkOptions, on_change=rec)
    watcher.start()
    yield watcher, rec
    watcher.stop()


@linux_only
def test_only_the_folders_the_walk_enters_are_watched(
    tree: Path, watched: tuple[InotifyWatcher, Recorder]
) -> None:
    watcher, _ = watched
    with watcher.paused:
        assert watcher.table.folders() == set(walk_dirs(tree)) == {"", "pkg", "gen"}


@linux_only
def test_new_folders_are_watched_and_their_files_reported(
    tree: Path, watched: tuple[InotifyWatcher, Recorder]
) -> None:
    watcher, rec = watched
    deep = tree / "a" / "b" / "c"
    deep.mkdir(parents=True)  # faster than the watcher: its files are found by the scan
    (deep / "m.py").write_text("def m(): pass\n")
    rec.wait_for(lambda: rec.saw(deep / "m.py"), "the new folder's file")
    wait_for_folders(watcher, lambda folders: {"a", "a/b", "a/b/c"} <= folders, "the new folders watched")
    (tree / "node_modules" / "new").mkdir()  # skipped by the walk: no watch
    (deep / "n.py").write_text("n = 1\n")
    rec.wait_for(lambda: rec.saw(deep / "n.py"), "a file in the watched new folder")
    with watcher.paused:
        assert not any(f.startswith("node_modules") for f in watcher.table.folders())


@linux_only
def test_an_ignore_file_change_unwatches_what_it_now_ignores(
    tree: Path, watched: tuple[InotifyWatcher, Recorder]
) -> None:
    watcher, rec = watched
    (tree / ".gitignore").write_text("gen/\n")
    wait_for_folders(watcher, lambda folders: "gen" not in folders, "gen/ unwatched")
    assert None in rec.calls  # and the tree re-indexed: what the rules now ignore leaves the index
    before = len(rec.calls)
    (tree / "gen" / "more.py").write_text("y = 2\n")
    (tree / "pkg" / "sentinel.py").write_text("z = 3\n")
    # the sentinel reported by its path, or by a second reconcile's full re-check (the rules
    # file's write may have come in two reads: two reconciles, a second apart)
    rec.wait_for(lambda: rec.saw(tree / "pkg" / "sentinel.py") or None in rec.calls[before:], "the sentinel")
    assert not any(c is not None and any("gen/" in p for p in c) for c in rec.calls[before:])


@linux_only
def test_a_full_queue_costs_exactly_one_reconcile(tree: Path, watched: tuple[InotifyWatcher, Recorder]) -> None:
    watcher, rec = watched
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 200_000:
        pytest.skip(f"max_queued_events is {limit}: too many files to fill the queue in a test")
    spot = tree / "pkg" / "churn"
    with watcher.paused:  # the reader waits: the kernel queues, then drops and says so
        for i in range(limit // 3 + 500):  # 3 events each: created, closed after writing, deleted
            path = f"{spot}{i}.py"
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
            os.unlink(path)
    rec.wait_for(lambda: watcher.reconciles >= 1 and None in rec.calls, "the reconcile")
    (tree / "pkg" / "after.py").write_text("a = 1\n")
    rec.wait_for(lambda: rec.saw(tree / "pkg" / "after.py"), "the first change after the reconcile")
    assert (watcher.overflows, watcher.reconciles) == (1, 1)
    assert rec.calls.count(None) == 1
    with watcher.paused:
        assert watcher.table.folders() == {"", "pkg", "gen"}


@linux_only
def test_the_watch_limit_reached_gives_up_once_and_says_so(
    tree: Path, watched: tuple[InotifyWatcher, Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher, rec = watched
    reasons: list[str] = []
    watcher._on_degraded = reasons.append

    def full(fd: int, path: bytes, mask: int) -> int:  # the kernel's answer at the limit
        ctypes.set_errno(errno.ENOSPC)
        return -1

    monkeypatch.setattr(watcher._libc, "add_watch", full)
    (tree / "x").mkdir()
    (tree / "y").mkdir()
    deadline = time.monotonic() + 20
    while watcher.degraded is None:
        assert time.monotonic() < deadline, "the watcher never gave up"
        time.sleep(0.02)
    assert watcher._thread is not None
    watcher._thread.join(timeout=10)
    assert not watcher._thread.is_alive()  # no more events read: the daemon checks stats instead
    assert len(reasons) == 1 and "max_user_watches" in reasons[0]
    assert len(watcher.table) == 0


@linux_only
def test_the_editor_engine_watches_the_indexed_folders_only(tree: Path) -> None:
    """`nav lsp` without a daemon watches in its own process: the same watcher, the same folders."""
    from navigator.frontends.editor import RootEngine

    engine = RootEngine(tree, None, use_daemon=False)
    rec = Recorder()
    engine.exact.files_changed = rec  # type: ignore[method-assign]  # what the servers would be told
    try:
        engine.start_watching()
        assert engine._observer is not None and engine.table.follows_changes()
        (tree / ".venv" / "lib" / "noise.py").write_text("n = 1\n")
        (tree / "pkg" / "saved.py").write_text("s = 1\n")
        rec.wait_for(lambda: rec.saw(tree / "pkg" / "saved.py"), "the saved file")
        assert not any(c is None or any(".venv" in p for p in c) for c in rec.calls)
        assert engine._observer.describe()["folders"] == 3  # the root, pkg, gen
    finally:
        engine.close()


@linux_only
def test_the_editor_engine_indexes_what_its_watcher_saw_instead_of_walking_per_request(tree: Path) -> None:
    """Without a daemon, `nav lsp` walked the tree before every request that reads the index
    (references, workspace/symbol: +150-300 ms on trpc); once its watcher runs, it indexes the
    files the watcher reports, and the index still follows the disk."""
    from navigator.frontends.editor import RootEngine

    engine = RootEngine(tree, None, use_daemon=False)
    try:
        engine.local.index()
        assert engine.local.refresh  # no watcher yet: each request checks the tree
        engine.start_watching()
        assert engine._observer is not None and not engine.local.refresh
        (tree / "pkg" / "fresh_module.py").write_text("def brand_new_function():\n    return 1\n")
        deadline = time.monotonic() + 30
        while not engine.local.symbols("brand_new_function", limit=5).items:
            assert time.monotonic() < deadline, "the watcher's change never reached the index"
            time.sleep(0.05)
        (tree / "pkg" / "fresh_module.py").unlink()
        while engine.local.symbols("brand_new_function", limit=5).items:
            assert time.monotonic() < deadline, "the deleted file stayed in the index"
            time.sleep(0.05)
        engine._watch_degraded("test: the watch limit")
        assert engine.local.refresh  # the watcher gave up: requests check the tree again
    finally:
        engine.close()


def test_the_watchdog_fallback_drops_events_in_skipped_folders(tree: Path) -> None:
    """Where there is no inotify (macOS, BSD) watchdog watches; what the walk skips is still no change."""
    pytest.importorskip("watchdog")
    from navigator.watch import WatchdogWatcher

    rec = Recorder()
    watcher = WatchdogWatcher(tree, options=WalkOptions, on_change=rec)
    watcher.start()
    try:
        (tree / "node_modules" / "x" / "noise.js").write_text("n = 1\n")
        (tree / "pkg" / "saved.py").write_text("s = 1\n")
        rec.wait_for(lambda: rec.saw(tree / "pkg" / "saved.py"), "the saved file")
        assert not any(c is not None and any("node_modules" in p for p in c) for c in rec.calls)
    finally:
        watcher.stop()
