"""Storage faults: clear words, one documented way back, nothing lost (issue 8, section 5).

Real SQLite files damaged with real bytes, real read-only and full file systems (a bind mount
and a small tmpfs; skipped where this process may not mount), real `nav` processes.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from faultkit import make_repo, run_nav

from navigator.api import Navigator
from storage.errors import IndexReadOnlyError, StorageFullError, SymbolNotFoundError

FILES = 60


def integrity(db: Path) -> str:
    """SQLite's own check: "ok", what it found, or the error it stopped on (damage where the
    check itself cannot read past: "database disk image is malformed")."""
    try:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            return ",".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check(3)"))
    except sqlite3.DatabaseError as exc:
        return str(exc)


def damage(db: Path, rng: random.Random) -> int:
    """Write random bytes over a random stretch in the middle of the file; return the offset."""
    size = db.stat().st_size
    offset = rng.randrange(4096, max(4097, size - 8192))
    with open(db, "r+b") as fh:
        fh.seek(offset)
        fh.write(rng.randbytes(rng.choice([64, 1024, 4096, 8192])))  # seeded: the same damage every run
    return offset


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", files=FILES)
    out = run_nav(root, "index")
    assert out.returncode == 0, out.stderr
    return root


def test_garbage_in_the_index_is_detected_and_rebuilt(indexed: Path) -> None:
    root = indexed
    db = root / ".nav" / "index.db"
    rng = random.Random(5)
    damaged_runs = 0
    for rep in range(4):
        damage(db, rng)
        damaged_runs += integrity(db) != "ok"
        queries = [("status",), ("map", "--tokens", "64"), ("def", "Config")]
        if rep == 0:
            queries.append(("search", "helper value"))  # loads the model: once is enough
        for args in queries:
            out = run_nav(root, *args)
            assert "Traceback" not in out.stderr, (args, out.stderr)
            # either it answered (rebuilt, with a note) or it said what is wrong and the way back
            assert out.returncode in (0, 5), (args, out.returncode, out.stderr)
            if out.returncode == 5:
                assert "damaged" in out.stderr and "nav index" in out.stderr
        out = run_nav(root, "index")
        assert out.returncode == 0, out.stderr
        assert integrity(db) == "ok", "nav index reported success over a damaged file"
        defined = run_nav(root, "def", "helper_5_2")
        assert defined.returncode == 0 and "pkg5/mod5.py" in defined.stdout
    assert damaged_runs >= 2, "the injected garbage should have damaged the file"


def test_nav_index_never_reports_success_over_damage(indexed: Path) -> None:
    root = indexed
    db = root / ".nav" / "index.db"
    rng = random.Random(11)
    while integrity(db) == "ok":  # damage the file until SQLite's check sees it (bounded by the seed)
        damage(db, rng)
    out = run_nav(root, "index")
    assert out.returncode == 0, out.stderr
    assert "damaged" in out.stderr and "rebuilt" in out.stderr  # the note says what happened
    assert integrity(db) == "ok"
    with Navigator(root, refresh=False) as nav:
        assert nav.status().files == FILES + 1


def test_a_truncated_index_is_rebuilt_on_the_next_query(indexed: Path) -> None:
    root = indexed
    db = root / ".nav" / "index.db"
    with open(db, "r+b") as fh:
        fh.truncate(db.stat().st_size // 3)
    out = run_nav(root, "def", "Config")
    assert out.returncode == 0, out.stderr
    assert "config.py:1:7" in out.stdout
    assert "damaged" in out.stderr  # the note
    assert integrity(db) == "ok"


def test_a_file_that_is_not_a_database(indexed: Path) -> None:
    db = indexed / ".nav" / "index.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"not a database at all " * 500)
    out = run_nav(indexed, "symbols", "helper_1_1")
    assert out.returncode == 0, out.stderr
    assert "helper_1_1" in out.stdout


# -- read-only and full file systems ------------------------------------------------------------


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(folder: Path) -> None:
    """Unmount; lazily if something still has a file open there (never leave a mount behind)."""
    if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(folder)], check=True)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` read-only for everyone, root included (a read-only bind mount)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if not _mount("--bind", str(folder), str(folder)):
        pytest.skip("cannot bind-mount here to make a folder read-only")
    try:
        if not _mount("-o", "remount,bind,ro", str(folder)):
            pytest.skip("cannot remount read-only here")
        yield
    finally:
        _umount(folder)


@contextlib.contextmanager
def small_disk(folder: Path, size: str) -> Iterator[None]:
    """A tmpfs of ``size`` mounted at ``folder`` (a full disk on demand)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)):
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield
    finally:
        _umount(folder)


def test_read_only_index_answers_queries_and_refuses_writes(indexed: Path) -> None:
    root = indexed
    with read_only(root / ".nav"):
        for args in (("def", "Config"), ("symbols", "helper_2"), ("status",), ("search", "helper value")):
            out = run_nav(root, *args)
            assert out.returncode == 0, (args, out.stderr)
            assert "Traceback" not in out.stderr
        out = run_nav(root, "def", "Config")
        assert "config.py:1:7" in out.stdout and "read-only" in out.stderr
        # the default path (through a daemon) cannot host one in a read-only .nav: it answers in-process
        out = run_nav(root, "def", "Config", no_daemon=False)
        assert out.returncode == 0 and "config.py:1:7" in out.stdout, out.stderr
        out = run_nav(root, "index")
        assert out.returncode == 5
        assert "read-only" in out.stderr and "writable" in out.stderr and "Traceback" not in out.stderr
    with Navigator(root) as nav:
        assert nav.index().files == FILES + 1  # writable again: nothing was lost


def test_read_only_api_raises_the_named_error(indexed: Path) -> None:
    with read_only(indexed / ".nav"), Navigator(indexed, refresh=False) as nav:
        assert nav.store.read_only
        with pytest.raises(IndexReadOnlyError, match="make .* writable"):
            nav.index()
        assert nav.definitions("Config").items[0].path == "config.py"


def test_disk_full_during_nav_index(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", files=FILES)
    with small_disk(root / ".nav", "256k"):
        out = run_nav(root, "index")
        assert out.returncode == 5, (out.returncode, out.stderr)
        assert "no space left" in out.stderr and "Traceback" not in out.stderr


def test_a_failed_reindex_on_a_full_disk_leaves_answers_that_say_so(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", files=FILES)
    nav_dir = root / ".nav"
    with small_disk(nav_dir, "8m"):
        # as the daemon does: refresh off, re-index the watcher's paths
        nav = Navigator(root, refresh=False)
        try:
            before = nav.index()
            filler = nav_dir / "filler"
            with open(filler, "wb") as fh, contextlib.suppress(OSError):
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            # the disk is full to the last byte: even this small file's rows cannot be written
            (root / "fresh.py").write_text("def brand_new_function():\n    return 1\n", encoding="utf-8")
            with pytest.raises(StorageFullError, match="no space left"):
                nav.index(only=["fresh.py"])
            old = nav.definitions("helper_3_1")
            assert old.items and not old.complete and "failed" in (old.reason or "")
            with pytest.raises(SymbolNotFoundError, match="last index update failed"):
                nav.definitions("brand_new_function")
            filler.unlink()
            after = nav.index(only=["fresh.py"])
            assert after.files == before.files + 1  # nothing lost, the new file in
            resp = nav.definitions("brand_new_function")
            assert resp.complete and not resp.notes
        finally:
            nav.close()


# -- damage is decided by integrity_check; what reads cleanly is kept (issue 17) -----------------


def embedded_repo(tmp_path: Path) -> tuple[Path, int]:
    """An indexed repository whose chunks all have cached vectors; the index closed (checkpointed)."""
    from semantic.embed import FakeEmbedder

    root = make_repo(tmp_path / "repo", files=FILES)
    with Navigator(root, embedder=FakeEmbedder(384)) as nav:
        nav.index()
        nav.embed()
        vectors = int(nav.store.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
    assert vectors > FILES
    db = root / ".nav" / "index.db"
    assert not Path(f"{db}-wal").exists()  # the last connection checkpointed: the pages are in the file
    return root, vectors


def overwrite_pages_of(db: Path, name: str, pages: int = 1) -> None:
    """Write garbage over ``pages`` pages from the root page of table or index ``name``."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root_page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
    with open(db, "r+b") as fh:  # this process holds no connection to the file
        fh.seek((root_page - 1) * page_size)
        fh.write(bytes(random.Random(root_page).randrange(256) for _ in range(page_size * pages)))


def vectors_in(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])


@pytest.mark.parametrize("damaged", ["chunks", "symbols_name"])
def test_a_damaged_index_is_rebuilt_keeping_its_vectors(tmp_path: Path, damaged: str) -> None:
    from semantic.embed import FakeEmbedder

    root, vectors = embedded_repo(tmp_path)
    db = root / ".nav" / "index.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:  # wrong bytes that still read cleanly
        conn.execute(
            "UPDATE symbols SET name = 'helper_x', qualified_name = 'helper_x' WHERE name = 'helper_5_2'"
        )
        conn.execute("UPDATE chunks SET text = 'garbage' WHERE text LIKE '%def helper_5_2%'")
        conn.commit()
    overwrite_pages_of(db, damaged)
    assert integrity(db) != "ok"
    out = run_nav(root, "index")
    assert out.returncode == 0, out.stderr
    assert "damaged" in out.stderr and f"{vectors:,} cached vectors" in out.stderr, out.stderr
    assert integrity(db) == "ok"
    assert vectors_in(db) == vectors
    if damaged == "symbols_name":  # only an index b-tree: every table reads cleanly and is kept
        assert f"of {FILES + 1} files" in out.stderr, out.stderr
    embedder = FakeEmbedder(384)
    with Navigator(root, embedder=embedder) as nav:
        nav.embed()
        assert embedder.texts_embedded == 0  # nothing to embed again
        assert nav.definitions("helper_5_2").items[0].path == "pkg5/mod5.py"
        assert not nav.store.symbols_by_name("helper_x")  # what was kept was checked again
        texts = [
            r[0] for r in nav.store.conn.execute("SELECT text FROM chunks WHERE text LIKE '%helper_5_2%'")
        ]
        assert texts and "garbage" not in texts


def test_a_wal_deleted_under_the_process_is_reopened_not_rebuilt(tmp_path: Path) -> None:
    """What another process's close did to the daemon: this process's WAL and shared memory
    deleted under it, then new ones written by someone else. A new thread's connection then
    reads the new WAL through the old shared memory: SQLite's disk I/O error. nav closes its
    connections, reopens, and answers; the file is the same, its vectors all there."""
    root, vectors = embedded_repo(tmp_path)
    db = root / ".nav" / "index.db"
    with Navigator(root) as nav:
        assert nav.definitions("helper_1_1").items
        inode = db.stat().st_ino
        answers: list[object] = []
        notes: list[str] = []

        def ask(name: str) -> None:
            try:
                resp = nav.definitions(name)
                answers.append([h.path for h in resp.items])
                notes.extend(resp.notes)
            except Exception as exc:  # reported below, with the step
                answers.append(exc)

        for step in range(2):
            for suffix in ("-wal", "-shm"):
                Path(f"{db}{suffix}").unlink()
            (root / f"late{step}.py").write_text(
                f"def arrived_late_{step}():\n    return 2\n", encoding="utf-8"
            )
            other = run_nav(root, "def", f"arrived_late_{step}")  # indexes it, into a WAL of its own
            assert other.returncode == 0, other.stderr
            answers.clear()
            worker = threading.Thread(target=ask, args=(f"arrived_late_{step}",))  # as a daemon worker
            worker.start()
            worker.join(120)
            ask("helper_1_1")
            assert answers == [[f"late{step}.py"], ["pkg1/mod1.py"]], (step, answers)
        assert not [n for n in notes if "has been rebuilt" in n], notes  # no answer says the index was rebuilt
    assert db.stat().st_ino == inode  # the same file: nothing was deleted
    assert vectors_in(db) == vectors
    assert integrity(db) == "ok"
