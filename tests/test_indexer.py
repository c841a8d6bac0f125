"""Incremental indexing against real SQLite: edit, add, delete, rename, revert, crash."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from navigator.api import Navigator
from storage.db import Store
from storage.errors import SymbolNotFoundError

ORDERS = """\
class Order:
    def total(self):
        return 1


def create_sales_order(customer):
    return Order()
"""


def names(nav: Navigator) -> set[str]:
    return {r[0] for r in nav.store.conn.execute("SELECT qualified_name FROM symbols")}


def test_first_index_reports_added_and_second_is_a_no_op(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"orders.py": ORDERS, "util.py": "def helper():\n    pass\n"})
    with Navigator(root) as nav:
        first = nav.index()
        assert first.added == ("orders.py", "util.py") and not first.updated and not first.removed
        assert {"Order", "Order.total", "create_sales_order", "helper"} <= names(nav)
        second = nav.index()
        assert (second.added, second.updated, second.removed, second.unchanged) == ((), (), (), 2)
    assert (root / ".nav" / ".gitignore").read_text().strip().endswith("*")


def test_edit_add_delete_rename_revert(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"orders.py": ORDERS, "util.py": "def helper():\n    pass\n"})
    nav = Navigator(root)
    nav.index()

    (root / "orders.py").write_text(ORDERS.replace("create_sales_order", "place_order"))
    report = nav.index()
    assert report.updated == ("orders.py",)
    assert "place_order" in names(nav) and "create_sales_order" not in names(nav)
    assert nav.store.refs_by_name("create_sales_order") == []

    (root / "new.py").write_text("def fresh():\n    return 1\n")
    assert nav.index().added == ("new.py",)
    assert "fresh" in names(nav)

    (root / "util.py").unlink()
    assert nav.index().removed == ("util.py",)
    assert "helper" not in names(nav)
    assert (
        nav.store.conn.execute(
            "SELECT count(*) FROM chunks c LEFT JOIN files f ON f.id=c.file_id WHERE f.id IS NULL"
        ).fetchone()[0]
        == 0
    )

    (root / "new.py").rename(root / "renamed.py")
    report = nav.index()
    assert report.added == ("renamed.py",) and report.removed == ("new.py",)
    assert [d.path for d in nav.definitions("fresh").items] == ["renamed.py"]

    (root / "orders.py").write_text(ORDERS)  # revert the edit
    assert nav.index().updated == ("orders.py",)
    assert "create_sales_order" in names(nav) and "place_order" not in names(nav)
    fts = nav.store.conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
    chunks = nav.store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert fts == chunks
    nav.close()


def test_touch_without_change_is_not_reparsed(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"orders.py": ORDERS})
    nav = Navigator(root)
    nav.index()
    before = nav.store.conn.execute("SELECT indexed_at FROM files").fetchone()[0]
    os.utime(root / "orders.py", ns=(1, 1))
    report = nav.index()
    assert report.unchanged == 1 and not report.updated
    assert nav.store.conn.execute("SELECT indexed_at, mtime_ns FROM files").fetchone() == (before, 1)
    nav.close()


def test_invalid_utf8_and_binary_files(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"ok.py": "def fine():\n    pass\n"})
    (root / "latin.py").write_bytes(b"def caf\xe9():\n    pass\n\ndef after():\n    pass\n")
    (root / "blob.dat").write_bytes(b"\x00\x01\x02binary")
    nav = Navigator(root)
    report = nav.index()
    assert report.added == ("latin.py", "ok.py")
    assert "after" in names(nav)
    note = nav.store.conn.execute("SELECT notes FROM files WHERE path='latin.py'").fetchone()[0]
    assert "invalid UTF-8" in note
    nav.close()


def test_file_that_becomes_binary_leaves_the_index(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"a.py": "def f():\n    pass\n"})
    nav = Navigator(root)
    nav.index()
    (root / "a.py").write_bytes(b"\x00\x00garbage")
    assert nav.index().removed == ("a.py",)
    nav.close()


def test_parallel_parse_matches_serial(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(200):
        (root / f"m{i}.py").write_text(f"class C{i}:\n    def run(self):\n        return {i}\n")
    serial = Navigator(root, index_dir=tmp_path / "serial")
    parallel = Navigator(root, index_dir=tmp_path / "parallel")
    serial.index(workers=1)
    parallel.index(workers=2)
    assert names(serial) == names(parallel) and len(names(serial)) == 400
    serial.close()
    parallel.close()


CRASH_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import navigator.indexer as ix
    from storage.db import Store
    ix._BATCH_FILES = 20          # commit often, so the kill lands between and inside batches
    root, db = Path(sys.argv[1]), Path(sys.argv[2])
    def progress(done, total):
        print(done, total, flush=True)
    ix.index_root(root, Store(db), workers=1, progress=progress)
    """
)


def test_killed_indexer_leaves_a_usable_index_and_rerun_completes(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    n = 400
    for i in range(n):
        body = "".join(f"    def m{j}(self, x):\n        return x + {j}\n\n" for j in range(30))
        (root / f"mod{i:03}.py").write_text(f"class K{i}:\n{body}\ndef top{i}():\n    return K{i}()\n")
    db = tmp_path / "index.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASH_SCRIPT, str(root), str(db)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # wait for the event: half the files parsed
        if int(line.split()[0]) >= n // 2:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()

    # The index answers, and is consistent: every file has its class and all its methods.
    with Store(db) as store:
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stats = store.stats()
        assert stats.last_run == "running" and not stats.last_run_complete
        assert 0 < stats.files < n
        per_file = store.conn.execute(
            "SELECT f.path, count(s.id) FROM files f LEFT JOIN symbols s ON s.file_id=f.id GROUP BY f.id"
        ).fetchall()
        assert all(count == 32 for _, count in per_file), per_file[:3]
        tops = store.conn.execute("SELECT count(*) FROM symbols WHERE name LIKE 'top%'").fetchone()[0]
        assert tops == stats.files

    nav = Navigator(root, index_dir=tmp_path)
    report = nav.index()
    assert len(report.added) == n - stats.files and report.unchanged == stats.files
    status = nav.status()
    assert status.files == n and status.last_run_complete and status.symbols == 32 * n
    nav.close()


def test_newer_schema_is_refused_with_advice(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    Store(db).close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    from storage.errors import StorageError

    with pytest.raises(StorageError, match="schema version 99.*delete"):
        Store(db)


def test_corrupt_database_gives_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    db.write_bytes(b"this is not sqlite" * 100)
    from storage.errors import IndexDamagedError

    with pytest.raises(IndexDamagedError, match="damaged .*run `nav index` to rebuild it"):
        Store(db)


def test_a_parser_change_reparses_everything(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"orders.py": ORDERS, "util.py": "def helper():\n    pass\n"})
    nav = Navigator(root)
    nav.index()
    nav.store.set_meta("parser_fingerprint", "from-an-older-nav")
    report = nav.index()
    assert report.updated == ("orders.py", "util.py") and report.unchanged == 0
    assert nav.index().unchanged == 2  # and then it is current again
    nav.close()


def test_a_version_1_index_is_migrated_in_place(make_repo: Callable[[dict[str, str]], Path]) -> None:
    from storage import sqlite_schema

    root = make_repo({"orders.py": ORDERS})
    db = root / ".nav" / "index.db"
    db.parent.mkdir()
    conn = sqlite3.connect(db)  # an index as nav wrote it before stemming (schema 1)
    for stmt in sqlite_schema.split_sql(sqlite_schema.SCHEMA_V1):
        conn.execute(stmt)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.commit()
    conn.close()
    nav = Navigator(root)
    nav.index()
    assert nav.store.get_meta("schema_version") == str(sqlite_schema.SCHEMA_VERSION)
    sql = nav.store.conn.execute("SELECT sql FROM sqlite_master WHERE name='chunks_fts'").fetchone()[0]
    assert "porter" in sql
    # stemming: "creates sales orders" finds create_sales_order
    hits = nav.store.conn.execute(
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", ('"creates" AND "orders"',)
    ).fetchone()[0]
    assert hits == 1
    nav.close()


def test_scoped_update_checks_only_the_given_paths(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo(
        {"orders.py": ORDERS, "util.py": "def helper():\n    pass\n", "other.py": "def o():\n    pass\n"}
    )
    nav = Navigator(root)
    nav.index()
    (root / "orders.py").write_text(ORDERS.replace("create_sales_order", "place_order"))
    (root / "util.py").unlink()
    (root / "other.py").write_text("def changed_outside_scope():\n    pass\n")
    (root / "new.py").write_text("def fresh():\n    pass\n")
    report = nav.index(only=["orders.py", "util.py", "new.py"])
    assert (report.added, report.updated, report.removed) == (("new.py",), ("orders.py",), ("util.py",))
    assert {"place_order", "fresh", "o"} <= names(nav) and "changed_outside_scope" not in names(nav)
    assert nav.index().updated == ("other.py",)  # a full run still catches what the scope missed
    nav.close()


def test_scoped_update_after_an_interrupted_run_is_a_full_run(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    root = make_repo({"orders.py": ORDERS, "util.py": "def helper():\n    pass\n"})
    nav = Navigator(root)
    nav.index()
    nav.store.set_meta("last_run_state", "running")  # as a killed run leaves it
    (root / "util.py").write_text("def helper2():\n    pass\n")
    report = nav.index(only=["orders.py"])
    assert report.updated == ("util.py",)
    nav.close()


def test_an_update_keeps_unchanged_rows_and_their_full_text_entries(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A changed file keeps the ids (and FTS rows) of chunks and symbols whose text did not change,
    with their new lines; what changed or went away is gone from the tables and the full text."""
    def body(name: str, word: str) -> str:  # big enough to be a chunk of its own (budget 1500)
        lines = [f"    value_{i} = '{word} {i}' * {i}" for i in range(60)]
        return f"def {name}():\n" + "\n".join(lines) + "\n    return value_1\n"

    kept, dropped = body("kept_function", "stable"), body("dropped_function", "vanishing")
    # other.py, smaller, is written after mod.py: its rows hold the highest ids
    root = make_repo({"mod.py": kept + "\n\n" + dropped, "other.py": "def other():\n    return 2\n"})
    nav = Navigator(root)
    nav.index()
    c = nav.store.conn
    kept_id = c.execute("SELECT id FROM chunks WHERE symbol='kept_function'").fetchone()[0]
    sym_id = c.execute("SELECT id FROM symbols WHERE name='kept_function'").fetchone()[0]
    (root / "mod.py").write_text("\n\n\n" + kept + "\n\n" + body("added_function", "fresh"))  # lines move
    nav.index()
    assert c.execute("SELECT id, start_line FROM chunks WHERE symbol='kept_function'").fetchone() == (kept_id, 4)
    assert c.execute("SELECT id, name_line FROM symbols WHERE name='kept_function'").fetchone() == (sym_id, 4)
    assert nav.definitions("added_function").items[0].line == 4 + 62 + 2
    with pytest.raises(SymbolNotFoundError):
        nav.definitions("dropped_function")
    fts = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
    assert c.execute(fts, ("vanishing",)).fetchone()[0] == 0
    assert c.execute(fts, ("stable",)).fetchone()[0] == 1
    assert c.execute(fts, ("fresh",)).fetchone()[0] == 1
    sym_fts = "SELECT count(*) FROM symbols_fts WHERE symbols_fts MATCH ?"
    assert c.execute(sym_fts, ("dropped",)).fetchone()[0] == 0
    # every FTS row belongs to a live row
    n_chunks = c.execute("SELECT count(*) FROM chunks").fetchone()[0]
    n_symbols = c.execute("SELECT count(*) FROM symbols").fetchone()[0]
    assert c.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == n_chunks
    assert c.execute("SELECT count(*) FROM symbols_fts").fetchone()[0] == n_symbols
    nav.close()


def test_files_indexed_without_a_parse_are_named_in_the_report(
    make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file with a grammar that nav had to chunk by line windows (minified, or a parse over its
    CPU budget) has no symbols: the index run says which and why, once, in its notes."""
    import semantic.parse

    monkeypatch.setattr(semantic.parse, "PARSE_CPU_BUDGET_S", 0.2)
    hostile = "def f():\n" + "".join(f"    # comment {i}\n" for i in range(8000)) + "    return 1\n"
    root = make_repo({"orders.py": ORDERS, "hostile.py": hostile, "bundle.js": "var a=1;" * 30_000 + "\n"})
    report = Navigator(root, refresh=False).index(workers=1)
    assert len(report.notes) == 1, report.notes
    note = report.notes[0]
    assert note.startswith("2 files indexed as plain line windows")
    assert "hostile.py (not parsed: the python parser took over" in note
    assert "bundle.js (not parsed: looks minified" in note
    with Navigator(root, refresh=False) as nav:
        assert nav.index(workers=1).notes == ()  # said by the run that indexed them...
        assert note in nav.status().notes  # ...and by `nav status` while they are indexed so
