"""The code view's learned order (navigator/code_order.py) over real indexes: the pool and each
signal seen where it is, every language's definitions, the order a search answers, a model file
that cannot be used, and the index failing under the order."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from billing_issue import BILLING, ISSUE

from navigator.code_order import ABSENT, FEATURES, MODULE, Candidate, candidates, load_model, non_source
from navigator.indexer import index_root
from navigator.search import SemanticSearch
from semantic.analysis import query_terms
from semantic.lexical import cap_terms
from semantic.ranking import DEFAULT
from storage.db import Store

LEXICAL = ("bm25", "symbols", "path")
FUSED = dataclasses.replace(DEFAULT, code_order=None)


def _pool(store: Store, query: str) -> dict[str, Candidate]:
    search = SemanticSearch(store, config=FUSED)
    files = search.search(query, k=50, legs=LEXICAL).items
    code = search.search(query, k=50, legs=LEXICAL, view="code").items
    terms = cap_terms(store, query_terms(query))
    return {c.key: c for c in candidates(store, terms, query, files, code)}


@pytest.fixture
def billing(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path) -> Store:
    store = Store(tmp_path / "idx.db")
    index_root(make_repo(BILLING), store)
    return store


def test_the_pool_holds_a_top_file_s_every_definition_with_its_signals(billing: Store) -> None:
    try:
        pool = _pool(billing, ISSUE)
    finally:
        billing.close()
    gold, other = "app/billing.py::validate_total", "app/billing.py::format_receipt"
    assert gold in pool and other in pool and f"app/billing.py::{MODULE}" in pool
    assert all(set(c.signals) == set(FEATURES) for c in pool.values())
    sig = {k: c.signals for k, c in pool.items()}
    assert sig[gold]["literal_quoted"] == 1.0 and sig[gold]["raises_named"] == 1.0
    assert sig[other]["literal_quoted"] == 0.0 and sig[other]["raises_named"] == 0.0
    assert sig[gold]["frame_pos"] < ABSENT and sig[other]["frame_pos"] == ABSENT
    assert sig["app/billing.py::save_invoice"]["named"] == 1.0 and sig[other]["named"] == 0.0
    # the reference graph: save_invoice (named) calls validate_total; main (a frame) calls save_invoice
    assert sig[gold]["callee_of_named"] == 1.0 and sig[other]["callee_of_named"] == 0.0
    assert (
        sig["app/billing.py::save_invoice"]["callee_of_frame"] == 1.0 and sig[other]["callee_of_frame"] == 0.0
    )
    assert sig["app/billing.py::save_invoice"]["fan_in_log"] > sig[other]["fan_in_log"]
    module = pool[f"app/billing.py::{MODULE}"]
    assert module.signals["module"] == 1.0 and module.snippet.startswith("import decimal")
    assert (
        pool[gold].snippet.startswith("def validate_total")
        and pool[gold].snippet_line == pool[gold].start_line
    )
    assert all(c.signals["nonsrc"] == 1.0 for k, c in pool.items() if k.startswith("docs/"))


def test_every_language_s_definitions_join_and_its_tests_are_no_source(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    root = make_repo(
        {
            "src/invoice.ts": "export function saveInvoice(total: number) {\n  return validateTotal(total);\n}\n"
            "export function validateTotal(total: number) {\n  if (total < 0) throw new Error('negative');\n"
            "  return total;\n}\n",
            "src/invoice.test.ts": "import { saveInvoice } from './invoice';\n"
            "export function testSaveInvoice() {\n  saveInvoice(-5);\n}\n",
        }
    )
    store = Store(tmp_path / "idx.db")
    try:
        index_root(root, store)
        pool = _pool(store, "saveInvoice with a negative total should call validateTotal and throw")
    finally:
        store.close()
    gold = "src/invoice.ts::validateTotal"
    assert gold in pool and "src/invoice.ts::saveInvoice" in pool
    assert pool[gold].signals["nonsrc"] == 0.0
    assert pool["src/invoice.test.ts::testSaveInvoice"].signals["nonsrc"] == 1.0
    assert pool[gold].signals["callee_of_named"] == 1.0


@pytest.mark.parametrize(
    ("path", "language", "expected"),
    [
        ("pkg/core.py", "python", False),
        ("pkg/tests/test_core.py", "python", True),
        ("pkg/conftest.py", "python", True),
        ("docs/conf.py", "python", True),
        ("src/app.ts", "typescript", False),
        ("src/app.test.ts", "typescript", True),
        ("cmd/main_test.go", "go", True),
        ("README.md", "markdown", True),
        ("build.sh", "bash", True),
        ("src/Thing.java", "java", False),
        ("src/ThingTest.java", "java", True),
        ("lib/x.unknown", None, True),
    ],
)
def test_what_counts_as_no_source(path: str, language: str | None, expected: bool) -> None:
    assert non_source(path, language) is expected


def test_the_code_view_lists_a_definition_no_leg_found(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    """The file the query's words point at holds a definition none of its words are in: the fused
    code view cannot list it (no leg found its chunk), the learned order reads the whole file."""
    root = make_repo(
        {
            "books/journal.py": "def post_ledger_entries(book, entries):\n"
            + "".join(f"    book.append(round_cents(entries[{i}]))  # ledger entry {i}\n" for i in range(80))
            + "    return book\n\n\ndef round_cents(amount):\n    return round(amount * 100) / 100\n",
            "books/report.py": "def ledger_report(book):\n    return len(book)\n",
            "tests/test_journal.py": "def test_post_ledger_entries():\n    post_ledger_entries([], [])\n",
        }
    )
    store = Store(tmp_path / "idx.db")
    try:
        index_root(root, store)
        query = "posting ledger entries drops the last entry"
        learned = SemanticSearch(store).search(query, k=10, legs=LEXICAL, view="code")
        fused = SemanticSearch(store, config=FUSED).search(query, k=10, legs=LEXICAL, view="code")
    finally:
        store.close()
    helper = ("books/journal.py", "round_cents")
    assert helper not in [(h.path, h.symbol) for h in fused.items]
    assert learned.complete and helper in [(h.path, h.symbol) for h in learned.items]
    names = [(h.path, h.symbol) for h in learned.items]
    assert len(set(names)) == len(names)
    tests_at = [i for i, h in enumerate(learned.items) if h.path.startswith("tests/")]
    source_at = [i for i, h in enumerate(learned.items) if h.path.startswith("books/")]
    assert not tests_at or min(source_at) < min(tests_at)  # the project's code before its tests
    for hit in learned.items:
        lines = (root / hit.path).read_text().splitlines()
        assert hit.start_line <= hit.snippet_line <= hit.end_line
        assert lines[hit.snippet_line - 1].rstrip() == hit.snippet.splitlines()[0]
        assert 0.0 < hit.score < 1.0
    helper_hit = next(h for h in learned.items if h.symbol == "round_cents")
    assert set(helper_hit.ranks) == {"file"} and helper_hit.snippet.startswith("def round_cents")


def test_a_model_file_nav_cannot_use_is_refused_by_name(billing: Store, tmp_path: Path) -> None:
    bad = tmp_path / "bad-model.json"
    bad.write_text(json.dumps({"format": "nav-code-order", "features": ["no_such_signal"]}))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    try:
        for path, why in (
            (bad, "no_such_signal"),
            (broken, "cannot read"),
            (tmp_path / "none.json", "cannot read"),
        ):
            search = SemanticSearch(billing, config=dataclasses.replace(DEFAULT, code_order=str(path)))
            with pytest.raises(ValueError, match=why) as err:
                search.search(ISSUE, k=5, legs=LEXICAL, view="code")
            assert path.name in str(err.value)
        shipped = json.loads(Path(load_model().source).read_text())
        shipped["scale"] = {n: 0.0 for n in shipped["features"]}
        zero = tmp_path / "zero.json"
        zero.write_text(json.dumps(shipped))
        with pytest.raises(ValueError, match="scale"):
            load_model(str(zero))
    finally:
        billing.close()


def test_the_index_failing_under_the_order_gives_the_fused_view_said_incomplete(billing: Store) -> None:
    path = billing.path
    billing.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE refs")  # the reference graph's table, gone
    conn.commit()
    conn.close()
    store = Store(path)
    try:
        got = SemanticSearch(store).search(ISSUE, k=5, legs=LEXICAL, view="code")
    finally:
        store.close()
    assert got.items and not got.complete
    assert got.reason is not None and "code order" in got.reason


def test_threads_sharing_the_kept_files_answer_alike(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    """The daemon's request threads share the order's kept files (their split lines): several
    threads asking at once, each on its own connection, answer what one thread alone answers."""
    from navigator import code_lines

    body = "".join(f"    ledger_{i} = post_entry(book, {i})  # entry {i}\n" for i in range(300))
    files = {
        f"books/journal_{n}.py": f"def post_entries_{n}(book):\n{body}    return book\n" for n in range(6)
    }
    root = make_repo(files)
    path = tmp_path / "idx.db"
    store = Store(path)
    index_root(root, store)
    queries = ["post ledger entries to the book", "ledger entry posting", "the book's entries"]
    try:
        first = SemanticSearch(store)
        code_lines.clear_kept()
        expected = {
            q: [(h.path, h.symbol, h.score) for h in first.search(q, k=8, legs=LEXICAL, view="code").items]
            for q in queries
        }
        code_lines.clear_kept()  # the threads split the lines afresh, at once
        got: list[tuple[str, list[tuple[str, str | None, float]]]] = []
        errors: list[BaseException] = []
        start = threading.Barrier(4)

        def ask() -> None:
            mine = Store(path)
            try:
                search = SemanticSearch(mine, share_with=first)
                start.wait(timeout=30)
                for _ in range(5):
                    for q in queries:
                        items = search.search(q, k=8, legs=LEXICAL, view="code").items
                        got.append((q, [(h.path, h.symbol, h.score) for h in items]))
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)
            finally:
                mine.close()

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        store.close()
    assert not errors and not any(t.is_alive() for t in threads)
    assert len(got) == 4 * 5 * len(queries)
    assert all(answer == expected[q] for q, answer in got)
