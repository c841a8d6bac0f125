"""What nav remembers between requests so a repeated question is cheap, and that it forgets at
every change: the language servers' answers (:mod:`lsp.memo`), a file's symbols per index
connection, a file's split lines, the table of symbol names. Real servers, real SQLite, real files."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp.memo import AnswerMemo
from lsp.registry import available_definition
from navigator import exact_targets
from navigator.api import Navigator
from navigator.close_names import NameTable, subsequence
from navigator.exact_targets import disk_lines
from navigator.frontends.client import DaemonClient
from navigator.paths import daemon_paths
from storage.db import Store

WORKSPACES = Path(__file__).parent / "workspaces"
DEADLINE = 90.0


# -- the memo itself (pure) ------------------------------------------------------------------


def test_an_answer_is_served_only_once_given_twice_alike() -> None:
    memo: AnswerMemo[str] = AnswerMemo()
    assert memo.get("q") is None
    memo.put("q", "partial", memo.epoch)  # a server still loading answered partially
    assert memo.get("q") is None
    memo.put("q", "whole", memo.epoch)  # then differently: still not trusted
    assert memo.get("q") is None
    memo.put("q", "whole", memo.epoch)
    assert memo.get("q") == "whole"
    assert memo.served == 1


def test_any_change_forgets_and_an_answer_overlapping_a_change_is_dropped() -> None:
    memo: AnswerMemo[str] = AnswerMemo()
    memo.put("q", "a", memo.epoch)
    memo.put("q", "a", memo.epoch)
    memo.changed()
    assert memo.get("q") is None
    epoch = memo.epoch  # a request is sent ...
    memo.changed()  # ... a file changes while it runs ...
    memo.put("q", "b", epoch)
    memo.put("q", "b", epoch)  # ... its answers are never kept
    assert memo.get("q") is None


def test_the_memo_is_bounded_oldest_first() -> None:
    memo: AnswerMemo[int] = AnswerMemo(limit=3)
    for key in range(5):
        memo.put(key, key, memo.epoch)
        memo.put(key, key, memo.epoch)
    assert [memo.get(k) for k in range(5)] == [None, None, 2, 3, 4]


# -- a real server: remembered, then forgotten at an edit --------------------------------------


def _require_python_server() -> None:
    if available_definition("python") is None:
        message = "no language server for python is installed (run scripts/install-servers.sh)"
        if os.environ.get("NAV_ALLOW_MISSING_SERVERS") == "1":
            pytest.skip(message)
        pytest.fail(message)


def _places(resp: object) -> set[tuple[str, int]]:
    return {(h.path, h.line) for h in resp.items}  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_repeated_question_is_remembered_and_an_edit_of_the_same_size_is_seen(tmp_path: Path) -> None:
    _require_python_server()
    root = tmp_path / "python"
    shutil.copytree(WORKSPACES / "python", root)
    nav = Navigator(root)
    nav.index()
    try:
        answers = [nav.references("create_sales_order", deadline_s=DEADLINE) for _ in range(3)]
        assert all(a.complete for a in answers), [a.reason for a in answers]
        assert _places(answers[0]) == _places(answers[1]) == _places(answers[2])
        info = nav.exact.pool.session_info(nav.root, "python")
        assert info and info["answers_remembered"] >= 1  # the third came from memory
        app = root / "orders" / "app.py"
        before = app.read_text()
        line = next(i for i, t in enumerate(before.splitlines(), 1) if "order = create_sales_order(" in t)
        assert ("orders/app.py", line) in _places(answers[2])
        # the same size, within the same clock tick: the call is gone, and the answer says so
        app.write_text(before.replace("order = create_sales_order(", "order = create_sales_ordex("))
        after = nav.references("create_sales_order", deadline_s=DEADLINE)
        assert ("orders/app.py", line) not in _places(after)
        app.write_text(before)
        again = nav.references("create_sales_order", deadline_s=DEADLINE)
        assert ("orders/app.py", line) in _places(again)
    finally:
        nav.close()


@pytest.fixture
def daemon_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    root = (tmp_path / "python").resolve()
    shutil.copytree(WORKSPACES / "python", root)
    yield root
    info = daemon_paths(root).info
    if info.exists():  # never leave a daemon behind
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGKILL)


@pytest.mark.slow
def test_the_daemons_remembered_answers_follow_its_watcher(daemon_root: Path) -> None:
    _require_python_server()
    client = DaemonClient(daemon_root)
    try:
        first = [client.callers("create_sales_order", deadline_s=DEADLINE) for _ in range(3)]
        assert all(a.complete for a in first), [a.reason for a in first]
        assert client.daemon_status()["watching"]
        app = daemon_root / "orders" / "app.py"
        before = app.read_text()
        line = next(i for i, t in enumerate(before.splitlines(), 1) if "order = create_sales_order(" in t)
        assert ("orders/app.py", line) in _places(first[2])
        syncs = client.daemon_status()["syncs"]
        app.write_text(before.replace("order = create_sales_order(", "order = create_sales_ordex("))
        deadline = time.monotonic() + 30
        while client.daemon_status()["syncs"] <= syncs:  # the daemon's own counter, over RPC
            assert time.monotonic() < deadline, "the watcher never re-indexed"
            time.sleep(0.02)
        after = client.callers("create_sales_order", deadline_s=DEADLINE)
        assert ("orders/app.py", line) not in _places(after)
        refs = client.references("create_sales_order", deadline_s=DEADLINE)
        assert ("orders/app.py", line) not in _places(refs)
    finally:
        client.stop()


# -- a file's symbols, per index connection ------------------------------------------------------


@contextlib.contextmanager
def indexed_reader(root: Path) -> Iterator[tuple[Navigator, Store]]:
    """``root`` indexed by a Navigator (the connection that commits) and a second connection to
    read its index, both closed after."""
    nav = Navigator(root)
    nav.index()
    reader = Store(nav.index_path)
    try:
        yield nav, reader
    finally:
        reader.close()
        nav.close()


def test_a_connections_file_symbols_follow_commits_of_any_connection(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    root = make_repo({"a.py": "def one():\n    pass\n"})
    with indexed_reader(root) as (nav, reader):
        assert [r.definition.name for r in reader.symbols_in_file("a.py")] == ["one"]
        assert [r.definition.name for r in reader.symbols_in_file("a.py")] == ["one"]  # remembered
        (root / "a.py").write_text("def two():\n    pass\n\n\ndef three():\n    pass\n")
        nav.index()  # another connection commits
        assert [r.definition.name for r in reader.symbols_in_file("a.py")] == ["two", "three"]
        rows = reader.symbols_in_file("a.py")
        rows.clear()  # a caller's list is its own
        assert len(reader.symbols_in_file("a.py")) == 2


def test_a_connections_definitions_of_files_are_read_once_and_follow_commits_of_any_connection(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    root = make_repo({"a.py": "def one():\n    pass\n", "b.py": "X = 1\n"})
    with indexed_reader(root) as (nav, reader):
        reads: list[str] = []
        reader.conn.set_trace_callback(lambda sql: reads.append(sql) if "FROM symbols s" in sql else None)
        kinds = ("function", "class")

        def names(paths: list[str], kinds: tuple[str, ...] = kinds) -> dict[str, list[str]]:
            return {
                p: [d.qualified_name for d in ds]
                for p, ds in reader.definitions_of(paths, kinds=kinds).items()
            }

        assert names(["a.py", "b.py"]) == {"a.py": ["one"]}  # a file without any: absent
        assert names(["b.py", "a.py"]) == {"a.py": ["one"]} and len(reads) == 1  # both remembered
        assert names(["a.py"], ("class",)) == {} and len(reads) == 2  # other kinds: read
        got = reader.definitions_of(["a.py"], kinds=kinds)
        got["a.py"].clear()  # a caller's list is its own
        assert names(["a.py"]) == {"a.py": ["one"]}
        (root / "a.py").write_text("def two():\n    pass\n\n\nclass Three:\n    pass\n")
        nav.index()  # another connection commits
        assert names(["a.py", "b.py"]) == {"a.py": ["two", "Three"]}


def test_a_connections_use_counts_are_counted_once_and_follow_commits_of_any_connection(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    root = make_repo({"a.py": "def one():\n    pass\n\n\none()\none()\n"})
    with indexed_reader(root) as (nav, reader):
        counted: list[str] = []
        reader.conn.set_trace_callback(lambda sql: counted.append(sql) if "FROM refs" in sql else None)
        first = reader.ref_counts(["one", "two"])
        assert first.get("one", 0) >= 2 and "two" not in first  # a name without uses: left out
        assert reader.ref_counts(["two", "one"]) == first and len(counted) == 1  # both remembered
        (root / "b.py").write_text("from a import one\n\n\ndef two():\n    return one()\n")
        nav.index()  # another connection commits
        again = reader.ref_counts(["one", "two"])
        assert again["one"] > first["one"] and len(counted) == 2


def test_a_connections_document_frequencies_are_counted_once_and_follow_commits(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    root = make_repo({f"a{i}.py": f"def f{i}():\n    return ledger_total + {i}\n" for i in range(4)})
    with indexed_reader(root) as (nav, reader):
        counted: list[str] = []
        reader.conn.set_trace_callback(lambda sql: counted.append(sql) if "MATCH" in sql else None)
        assert reader.doc_freqs(["ledger", "zebra"], cap=2) == {"ledger": 3, "zebra": 0}  # up to cap + 1
        assert reader.doc_freqs(["ledger", "zebra"], cap=2) == {"ledger": 3, "zebra": 0}
        assert len(counted) == 2  # remembered: an exact count and a bound good up to its cap
        assert reader.doc_freqs(["ledger"], cap=1) == {"ledger": 2}  # a smaller cap: from the bound
        assert reader.doc_freqs(["ledger"], cap=10) == {"ledger": 4}  # a larger one: counted again
        assert reader.doc_freqs(["zebra"], cap=10) == {"zebra": 0} and len(counted) == 3
        (root / "b.py").write_text("def zebra_ledger():\n    return 0\n")
        nav.index()  # another connection commits
        assert reader.doc_freqs(["ledger", "zebra"], cap=10) == {"ledger": 5, "zebra": 1}


def test_a_connections_vocabulary_counts_are_read_once_and_follow_commits(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """The code view's per-word document counts (fts5vocab): read once per word, a word the
    index lacks left out (and not read again), everything read afresh after a commit."""
    root = make_repo({f"a{i}.py": f"def f{i}():\n    return ledger_total + {i}\n" for i in range(4)})
    with indexed_reader(root) as (nav, reader):
        reads: list[str] = []
        reader.conn.set_trace_callback(
            lambda sql: reads.append(sql) if "nav_chunks_vocab WHERE" in sql else None
        )
        first = reader.vocab_doc_freqs(["ledger", "zebra"])
        assert first.get("ledger", 0) >= 4 and "zebra" not in first
        assert reader.vocab_doc_freqs(["zebra", "ledger", "ledger"]) == first and len(reads) == 1
        got = reader.vocab_doc_freqs(["ledger", "total"])
        assert got["ledger"] == first["ledger"] and got["total"] >= 4 and len(reads) == 2  # only "total" read
        (root / "b.py").write_text("def zebra_ledger():\n    return 0\n")
        nav.index()  # another connection commits
        again = reader.vocab_doc_freqs(["ledger", "zebra"])
        assert again["ledger"] > first["ledger"] and again["zebra"] >= 1


# -- a file's split lines ----------------------------------------------------------------------------


def test_split_lines_are_remembered_by_what_fstat_says_and_never_across_a_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path
    f = root / "m.py"
    f.write_text("alpha\nbeta\n")
    fresh = disk_lines(root, f)
    assert fresh == (["alpha", "beta"], False)
    assert disk_lines(root, f) is not fresh  # just written (git's racy window): read every time
    monkeypatch.setattr(exact_targets, "_SETTLED_S", 0.0)  # as if written long ago
    first = disk_lines(root, f)
    assert disk_lines(root, f) is first  # remembered
    stat = f.stat()
    f.write_text("gamma\ndelta\n")  # the same size ...
    os.utime(f, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # ... and the same mtime: the ctime moved
    assert disk_lines(root, f) == (["gamma", "delta"], False)
    f.write_bytes(b"\xef\xbb\xbfmark\n")
    assert disk_lines(root, f) == (["mark"], True)  # the mark is not text, and it is said
    outside = tmp_path.parent / f"outside-{os.getpid()}.py"
    outside.write_text("secret\n")
    try:
        (root / "link.py").symlink_to(outside)
        assert disk_lines(root, root / "link.py") is None  # never outside the root
    finally:
        outside.unlink()


# -- close names: the same answers as difflib and the plain loop ------------------------------------

NAMES = st.lists(
    st.text(
        alphabet=st.characters(min_codepoint=32, max_codepoint=0x24F) | st.sampled_from("_abcxyzÄİß"),
        max_size=14,
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(
    NAMES, st.text(alphabet=st.sampled_from("abcxyz_ÄİßABC"), max_size=12), st.sampled_from([0.0, 0.6, 0.8])
)
def test_close_names_equal_difflib_and_the_plain_subsequence_loop(
    names: list[str], word: str, cutoff: float
) -> None:
    table = NameTable(names)
    assert table.close_matches(word, n=7, cutoff=cutoff) == difflib.get_close_matches(
        word, names, n=7, cutoff=cutoff
    )
    low = word.lower()
    assert table.subsequences(low) == [n for n in names if subsequence(low, n.lower())]


def test_close_names_on_a_real_index_equal_difflib(make_repo: Callable[[dict[str, str]], Path]) -> None:
    files = {
        f"pkg/m{i}.py": "".join(
            f"def {w}_{i}():\n    pass\n\n\n" for w in ("fetch_order", "get_fixture", "parse")
        )
        for i in range(30)
    }
    nav = Navigator(make_repo(files))
    nav.index()
    try:
        names = nav.store.symbol_names()
        table = NameTable(names)
        for word in ("getfixture", "fetch_ordr", "prase_3", "zzz", "get_fixture_12"):
            assert table.close_matches(word, n=30, cutoff=0.6) == difflib.get_close_matches(
                word, names, n=30, cutoff=0.6
            )
        hits = nav.symbols("getfixtre")  # few match by name: close spellings fill the answer
        assert any(s.name.startswith("get_fixture") for s in hits.items)
    finally:
        nav.close()


def test_close_spellings_only_for_a_name_that_is_no_symbol(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """`nav symbols parse_config` is the symbol asked for, its prefix, substring and word matches;
    `parse_conflg` is offered only for a name that is not exactly a symbol (a typo)."""
    nav = Navigator(make_repo({"m.py": "def parse_config():\n    pass\n\n\ndef parse_conflg():\n    pass\n"}))
    nav.index()
    try:
        exact = [s.name for s in nav.symbols("parse_config").items]
        assert exact == ["parse_config"]
        typo = {s.name for s in nav.symbols("parse_confxg").items}
        assert typo == {"parse_config", "parse_conflg"}
    finally:
        nav.close()
