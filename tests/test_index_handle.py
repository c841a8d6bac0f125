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
