"""The full-text indexes merged once enough of the repository changed: real SQLite FTS5, real
index runs, real search. Every commit adds segments and every replaced row leaves a delete marker;
unmerged, a churned index grows and its searches slow down (bench/README.md, "A churned index")."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from navigator.indexer import index_root
from navigator.search import SemanticSearch
from storage.db import UPKEEP_MIN_FILES, Store

LEXICAL = ("bm25", "symbols", "path", "refs")
QUERIES = ("retry the erp call", "create_sales_order", "invoice total with VAT", "parse config file")


def _write(root: Path, n: int, version: int) -> None:
    for i in range(n):
        (root / f"mod_{i:03d}.py").write_text(
            f"def create_sales_order_{i}(customer, lines):\n"
            f"    '''Create the sales order {i} (revision {version}) and retry the ERP call.'''\n"
            f"    total = sum(l.price for l in lines)  # invoice total with VAT {i * version}\n"
            f"    return {{'customer': customer, 'total': total, 'rev': {version}}}\n\n"
            f"class Config{i}:\n    def parse_config_file(self, path):\n        return open(path).read()\n"
        )


def _segments(store: Store) -> int:
    return sum(store._segments(t) for t in ("chunks_fts", "symbols_fts"))


def _answers(store: Store) -> list[list[tuple[str, int, float]]]:
    search = SemanticSearch(store)
    out = []
    for q in QUERIES:
        for view in ("files", "code"):
            res = search.search(q, k=20, legs=LEXICAL, view=view)
            out.append([(h.path, h.start_line, round(h.score, 9)) for h in res.items])
    return out


@pytest.fixture
def churned(tmp_path: Path) -> tuple[Path, Store]:
    """An index whose files changed run after run, each run below the merge's threshold."""
    root = tmp_path / "repo"
    root.mkdir()
    n = UPKEEP_MIN_FILES + 10
    _write(root, n, 0)
    store = Store(tmp_path / "index.db")
    index_root(root, store)  # all files new: merged at the end of the run
    assert _segments(store) == 2  # one segment per table
    for version in range(1, 6):  # 5 runs of 8 changed files: 40 < the threshold
        for i in range(8):
            (root / f"mod_{(version * 8 + i) % n:03d}.py").write_text(
                f"def retry_erp_call_{version}_{i}():\n    return 'retry the erp call {version}'\n"
            )
        index_root(root, store)
    return root, store


def test_small_runs_leave_segments_until_a_quarter_changed_then_one_run_merges(
    churned: tuple[Path, Store],
) -> None:
    root, store = churned
    try:
        assert _segments(store) > 2, "each run below the threshold adds segments"
        assert store.get_meta("fts_files_changed") == "40"  # counted across runs, in the index
        before = _answers(store)
        assert store.text_index_upkeep(0) is False  # still below: nothing merged
        assert store.text_index_upkeep(UPKEEP_MIN_FILES) is True
        assert _segments(store) == 2 and store.get_meta("fts_files_changed") == "0"
        assert _answers(store) == before  # merging moves postings, never an answer
        # a run that crosses the threshold merges on its own
        _write(root, UPKEEP_MIN_FILES + 10, 7)
        index_root(root, store)
        assert _segments(store) == 2
        assert any("revision 7" in (r[0] or "") for r in store.conn.execute("SELECT text FROM chunks"))
    finally:
        store.close()


def test_a_merge_out_of_time_goes_on_at_the_next_run(churned: tuple[Path, Store]) -> None:
    _, store = churned
    try:
        segments = _segments(store)
        assert store.text_index_upkeep(UPKEEP_MIN_FILES, budget_s=0.0) is False
        assert _segments(store) == segments  # no time, no step
        assert int(store.get_meta("fts_files_changed") or 0) >= UPKEEP_MIN_FILES  # still due
        assert store.text_index_upkeep(0) is True and _segments(store) == 2
    finally:
        store.close()


def test_a_full_disk_during_the_merge_leaves_the_index_answering(
    churned: tuple[Path, Store], caplog: pytest.LogCaptureFixture
) -> None:
    _, store = churned
    try:
        before = _answers(store)
        store.conn.execute("VACUUM")  # no free pages left for the merge to reuse
        pages = int(store.conn.execute("PRAGMA page_count").fetchone()[0])
        store.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL at the first new page
        with caplog.at_level(logging.WARNING, logger="storage.db"):
            assert store.text_index_upkeep(10 * UPKEEP_MIN_FILES) is False
        assert "could not merge the full-text index" in caplog.text
        assert _answers(store) == before
        store.conn.execute("PRAGMA max_page_count = 1073741823")
        assert store.text_index_upkeep(0) is True  # the counter was kept: still due
        assert _answers(store) == before
    finally:
        store.close()


def test_an_unchanged_run_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _write(root, 5, 0)
    store = Store(tmp_path / "index.db")
    try:
        index_root(root, store)
        assert store.get_meta("fts_files_changed") == "5"
        changes = store.conn.total_changes
        assert store.text_index_upkeep(0) is False
        assert store.conn.total_changes == changes
    finally:
        store.close()
    with sqlite3.connect(tmp_path / "index.db") as conn:  # what another process reads
        assert conn.execute("SELECT value FROM meta WHERE key='fts_files_changed'").fetchone() == ("5",)


def test_a_merge_killed_part_way_leaves_a_sound_index_that_answers_the_same(
    churned: tuple[Path, Store], tmp_path: Path
) -> None:
    """SIGKILL part way through the merge (1-page steps, killed after its third): the
    index is sound, answers as before, and the next run finishes the merge."""
    import os
    import signal
    import subprocess
    import sys

    _, store = churned
    before = _answers(store)
    segments = _segments(store)
    db = str(store.path)
    child = (
        "import sys, time\n"
        "import storage.db as db\n"
        "db.MERGE_PAGES = 1\n"
        "seen = db.Store._segments\n"
        "def said(self, table):\n"
        "    print('step', flush=True); time.sleep(0.05); return seen(self, table)\n"
        "db.Store._segments = said\n"
        "s = db.Store(sys.argv[1])\n"
        "s.text_index_upkeep(10_000, budget_s=600)\n"
        "print('done', flush=True)\n"
    )
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen(
        [sys.executable, "-c", child, db], cwd=root, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert all(line.strip() == "step" for line in lines), lines
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    store.close()
    again = Store(Path(db))
    try:
        assert again.integrity_problem() is None
        assert _answers(again) == before
        assert again.text_index_upkeep(0) is True  # still due: the killed run never reset it
        assert _segments(again) == 2 <= segments
        assert _answers(again) == before
    finally:
        again.close()
