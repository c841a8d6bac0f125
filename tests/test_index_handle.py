"""The index handle (navigator/index_handle.py) on its own, over a real SQLite index: per-thread
connections and the state dropped with them, a damaged file rebuilt with the note said once,
and freshness with refresh off."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from navigator.calls import Calls
from navigator.config import load_config
from navigator.index_handle import IndexHandle
from storage.errors import NotIndexedError


def _repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "orders.py").write_text("def create_order(customer):\n    return customer\n")
    return root


def _handle(root: Path) -> IndexHandle:
    return IndexHandle(root, root / ".nav", load_config(root), Calls())


def test_each_thread_has_its_connection_and_closing_drops_them_all(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    handle = _handle(root)
    try:
        report = handle.index(progress=None, workers=None, only=None)
        assert report.added == ("pkg/orders.py",)
        mine = handle.store
        assert handle.store is mine  # kept for this thread
        theirs: list[object] = []
        worker = threading.Thread(target=lambda: theirs.append(handle.store))
        worker.start()
        worker.join()
        assert theirs and theirs[0] is not mine  # SQLite connections are per thread
        handle.thread.healing = True
        generation = handle.generation
        handle.close_stores()
        assert handle.generation == generation + 1
        assert handle.thread.store is None and not handle.thread.healing  # the thread's state went too
        assert handle.store is not mine and handle.store.stats().files == 1  # reopened on next use
    finally:
        handle.close()


def test_a_damaged_index_is_rebuilt_on_opening_and_the_next_call_says_so_once(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    first = _handle(root)
    first.index(progress=None, workers=None, only=None)
    first.close()
    (root / ".nav" / "index.db").write_bytes(b"not a database at all " * 500)
    handle = _handle(root)
    try:
        assert handle.store.stats().files == 0  # opened outside any call: rebuilt empty
        with handle.calls.call():
            notes = handle.notes()
        assert any("has been rebuilt" in n for n in notes), notes
        with handle.calls.call():
            assert not any("has been rebuilt" in n for n in handle.notes())  # said once
    finally:
        handle.close()


def test_with_refresh_off_an_empty_index_is_not_indexed(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    handle = _handle(root)
    try:
        with pytest.raises(NotIndexedError, match="no index yet"):
            handle.fresh(refresh=False, lock_wait_s=0.1)
        assert handle.fresh(refresh=True, lock_wait_s=5.0).stats().files == 1  # brought up to date
        assert handle.fresh(refresh=False, lock_wait_s=0.1).stats().files == 1
    finally:
        handle.close()


def _index_fds() -> int:
    import os

    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += "index.db" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
    return n


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_a_thread_per_request_takes_over_a_finished_threads_connection(tmp_path: Path) -> None:
    """The daemon answers each connection on a thread of its own: each opened a connection to the
    index that stayed open until the daemon exited (two descriptors per request: 65 after 31)."""
    from navigator.api import Navigator

    root = _repo(tmp_path / "repo")
    with Navigator(root, refresh=False) as nav:
        nav.index()
        assert nav.definitions("create_order").items
        before = _index_fds()
        answers: list[int] = []
        for _ in range(25):
            t = threading.Thread(target=lambda: answers.append(len(nav.definitions("create_order").items)))
            t.start()
            t.join(60)
        assert answers == [1] * 25
        assert _index_fds() <= before + 3  # one more connection at most (the threads' one)
        # two threads at once still get a connection each
        both: list[object] = []
        barrier = threading.Barrier(2)

        def hold() -> None:
            both.append(nav.store)
            barrier.wait(30)

        pair = [threading.Thread(target=hold) for _ in range(2)]
        for t in pair:
            t.start()
        for t in pair:
            t.join(60)
        assert len(both) == 2 and both[0] is not both[1]
