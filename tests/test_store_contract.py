"""One contract, every store: the same assertions against the SQLite index, the PostgreSQL team
store (the real server of conftest.py) and the in-memory fake (``storage/fake.py``).

:class:`storage.query.VectorCache` and :class:`storage.query.TextStats` run on all three;
:class:`storage.query.IndexQueries` (one checkout's chunk ids) on the SQLite index and the fake.
The SQLite faults at the end are real files made to fail.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from storage.db import Store
from storage.errors import IndexBusyError, IndexSchemaError, StorageError
from storage.fake import FakeIndex
from storage.model import Chunk, ParsedFile, Span, SymbolDef, SyntaxRef
from storage.query import EVERYTHING, IndexQueries, Scope, SymbolRow, TextStats, VectorCache
from storage.tokens import fts_query

WEIGHTS = (2.0, 3.0, 1.0)


def _sym(name: str, qn: str, kind: str, path: str, lang: str, start: int, end: int) -> SymbolDef:
    return SymbolDef(
        name=name, qualified_name=qn, kind=kind, path=path, language=lang,
        span=Span(start, 1, end, 10), name_span=Span(start, 5, start, 5 + len(name)),
        signature=f"{kind} {name}", container=qn.rsplit(".", 1)[0] if "." in qn else None,
    )  # fmt: skip


def _chunk(path: str, lang: str, start: int, end: int, text: str, symbol: str | None) -> Chunk:
    return Chunk(
        path, lang, start, end, text, symbol, f"sig {symbol}" if symbol else None, f"h-{path}-{start}"
    )


ORDERS = ParsedFile(
    "src/orders.py",
    "python",
    symbols=(
        _sym("createSalesOrder", "createSalesOrder", "function", "src/orders.py", "python", 1, 2),
        _sym("OrderBook", "OrderBook", "class", "src/orders.py", "python", 4, 6),
        _sym("add", "OrderBook.add", "method", "src/orders.py", "python", 5, 6),
    ),
    refs=(SyntaxRef("book", 2, 12, 16), SyntaxRef("createSalesOrder", 6, 9, 25)),
    chunks=(
        _chunk("src/orders.py", "python", 1, 2, "def createSalesOrder(customer, lines):\n    return book(customer)", "createSalesOrder"),
        _chunk("src/orders.py", "python", 4, 6, "class OrderBook:\n    def add(self, line):\n        createSalesOrder(line)", "OrderBook"),
    ),
)  # fmt: skip
BILLING = ParsedFile(
    "src/billing.py",
    "python",
    symbols=(
        _sym("InvoicePrinter", "InvoicePrinter", "class", "src/billing.py", "python", 1, 4),
        _sym("render_pdf", "InvoicePrinter.render_pdf", "method", "src/billing.py", "python", 2, 3),
        _sym("copies", "InvoicePrinter.copies", "field", "src/billing.py", "python", 4, 4),
    ),
    refs=(SyntaxRef("createSalesOrder", 3, 16, 32), SyntaxRef("createSalesOrder", 3, 40, 56)),
    chunks=(
        _chunk("src/billing.py", "python", 1, 4,
               "class InvoicePrinter:\n    def render_pdf(self, invoice):\n        return invoice\n    copies = 2",
               "InvoicePrinter"),
    ),
)  # fmt: skip
APP = ParsedFile(
    "web/app.ts",
    "typescript",
    symbols=(_sym("create_sales_order", "create_sales_order", "function", "web/app.ts", "typescript", 1, 3),),
    chunks=(
        _chunk("web/app.ts", "typescript", 1, 3,
               "export function create_sales_order(customer: string): number {\n  return customer.length;\n}",
               "create_sales_order"),
    ),
)  # fmt: skip
CORPUS = (ORDERS, BILLING, APP)


def _load(index: Store | FakeIndex, files: tuple[ParsedFile, ...] = CORPUS) -> None:
    for f in files:
        index.replace_file(f, content_hash=f"blob-{f.path}", size=100, mtime_ns=1, lines=6)


def _publish(url: str) -> Iterator[TextStats]:
    from storage.pg import PgStore, PubChunk, PubFile

    pg = PgStore(url)
    pg.ensure_schema(write=True)
    files = [
        PubFile(
            path=f.path, blob=f"blob-{f.path}", language=f.language, size=100, lines=6,
            chunks=tuple(PubChunk(f"key-{c.content_hash}", c.content_hash, c.start_line, c.end_line, c.symbol,
                                  c.signature, c.text) for c in f.chunks),
            symbols=f.symbols,
        )
        for f in CORPUS
    ]  # fmt: skip
    pg.publish(repo="shop", sha="a" * 40, branch="main", model=None, files=files, vectors={})
    try:
        yield pg
    finally:
        pg.close()


def _local(kind: str, tmp_path: Path) -> Iterator[Store | FakeIndex]:
    """One checkout's index, loaded: the real SQLite store or the fake."""
    if kind == "fake":
        fake = FakeIndex()
        _load(fake)
        yield fake
        return
    with Store(tmp_path / "idx" / "index.db") as store:
        _load(store)
        yield store


@pytest.fixture(params=["sqlite", "fake"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexQueries]:
    yield from _local(request.param, tmp_path)


@pytest.fixture(params=["sqlite", "postgresql", "fake"])
def stats(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TextStats]:
    if request.param == "postgresql":
        yield from _publish(request.getfixturevalue("store_url"))
        return
    yield from _local(request.param, tmp_path)


@pytest.fixture(params=["sqlite", "postgresql", "fake"])
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorCache]:
    if request.param == "postgresql":
        from storage.pg import PgStore

        with PgStore(request.getfixturevalue("store_url")) as pg:
            pg.ensure_schema(write=True)
            yield pg
        return
    if request.param == "fake":
        yield FakeIndex()
        return
    with Store(tmp_path / "idx" / "index.db") as store:
        yield store


def _chunk_at(index: IndexQueries, path: str, line: int) -> int:
    """The id of the chunk of ``path`` starting at ``line`` (each store numbers its own)."""
    places = index.chunk_places(index.chunk_ids(EVERYTHING))
    return next(p.id for p in places.values() if p.path == path and p.start_line == line)


# -- the vector cache: every store ---------------------------------------------------------------


def test_vectors_pushed_are_fetched_by_model_and_key(cache: VectorCache) -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random(384, dtype=np.float32), rng.random(384, dtype=np.float32)
    assert cache.push_vectors("model-1", {"ka": a, "kb": b}) == 2
    assert cache.vector_keys("model-1", ["ka", "kb", "kc"]) == {"ka", "kb"}
    got = cache.fetch_vectors("model-1", ["kb", "kc", "ka"])
    assert set(got) == {"ka", "kb"}
    assert np.allclose(got["ka"], a, atol=1e-6) and np.allclose(got["kb"], b, atol=1e-6)
    assert got["ka"].dtype == np.float32 and got["ka"].shape == (384,)
    # another model's vectors are another cache
    assert cache.vector_keys("model-2", ["ka"]) == set()
    assert cache.fetch_vectors("model-2", ["ka"]) == {}
    assert cache.vector_keys("model-1", []) == set() and cache.fetch_vectors("model-1", []) == {}
    assert cache.push_vectors("model-1", {}) == 0


def test_many_keys_are_looked_up_in_batches(cache: VectorCache) -> None:
    vecs = {f"k{i}": np.full(384, i, dtype=np.float32) for i in range(1200)}
    cache.push_vectors("m", vecs)
    keys = [f"k{i}" for i in range(1300)]
    assert cache.vector_keys("m", keys) == set(vecs)
    got = cache.fetch_vectors("m", keys)
    assert len(got) == 1200 and float(got["k1111"][0]) == 1111.0


# -- what words weigh: every store ---------------------------------------------------------------


def test_doc_freqs_count_chunks_up_to_the_cap(stats: TextStats) -> None:
    assert stats.chunk_count() == 4
    assert stats.doc_freqs(["customer", "invoice", "zebra"], cap=10) == {
        "customer": 2,
        "invoice": 1,
        "zebra": 0,
    }
    # "return" is in three chunks: counted up to cap + 1
    assert stats.doc_freqs(["return"], cap=1) == {"return": 2}
    assert stats.doc_freqs(["return"], cap=5) == {"return": 3}
    # an identifier's words count too (createSalesOrder is stored whole and split)
    assert stats.doc_freqs(["sales"], cap=10)["sales"] == 3


def test_a_word_the_index_leaves_nothing_of_reads_zero(stats: TextStats) -> None:
    assert stats.doc_freqs(["***", '"', "customer"], cap=10) == {"***": 0, '"': 0, "customer": 2}


# -- one checkout's index: SQLite and the fake ---------------------------------------------------


def test_bm25_finds_the_chunks_holding_the_words_best_first(index: IndexQueries) -> None:
    got = index.bm25_chunks(fts_query("customer"), weights=WEIGHTS, scope=EVERYTHING, limit=10)
    paths = {index.chunk_places([g.chunk_id])[g.chunk_id].path for g in got}
    assert paths == {"src/orders.py", "web/app.ts"}
    assert all(g.score > 0 for g in got)
    assert [g.score for g in got] == sorted((g.score for g in got), reverse=True)
    # every spelling of a name finds every spelling
    for q in ("createSalesOrder", "create_sales_order", "create sales order"):
        found = index.bm25_chunks(fts_query(q), weights=WEIGHTS, scope=EVERYTHING, limit=10)
        assert {index.chunk_places([g.chunk_id])[g.chunk_id].path for g in found} >= {
            "src/orders.py",
            "web/app.ts",
        }
    assert len(index.bm25_chunks(fts_query("customer"), weights=WEIGHTS, scope=EVERYTHING, limit=1)) == 1
    assert index.bm25_chunks("", weights=WEIGHTS, scope=EVERYTHING, limit=10) == []


def test_the_column_weights_count(index: IndexQueries) -> None:
    """ "invoice" is in InvoicePrinter's symbol and text: weighting the symbol column up raises
    its score, weighting it to nothing lowers it."""
    match = fts_query("invoice")
    up = index.bm25_chunks(match, weights=(1.0, 10.0, 1.0), scope=EVERYTHING, limit=5)
    down = index.bm25_chunks(match, weights=(1.0, 0.0, 1.0), scope=EVERYTHING, limit=5)
    assert len(up) == len(down) == 1 and up[0].chunk_id == down[0].chunk_id
    assert up[0].score > down[0].score


@pytest.mark.parametrize(
    ("scope", "paths"),
    [
        (Scope(paths=("src",)), {"src/orders.py"}),
        (Scope(paths=("src/",)), {"src/orders.py"}),
        (Scope(paths=("web/*.ts",)), {"web/app.ts"}),
        (Scope(paths=("web/app.ts",)), {"web/app.ts"}),
        (Scope(paths=("sr",)), set()),
        (Scope(languages=("typescript",)), {"web/app.ts"}),
        (Scope(paths=("src", "web"), languages=("python",)), {"src/orders.py"}),
    ],
)
def test_a_scope_filters_every_leg_alike(index: IndexQueries, scope: Scope, paths: set[str]) -> None:
    def where(ids: list[int]) -> set[str]:
        return {p.path for p in index.chunk_places(ids).values()}

    bm25 = index.bm25_chunks(fts_query("customer"), weights=WEIGHTS, scope=scope, limit=10)
    assert where([g.chunk_id for g in bm25]) == paths
    named = index.symbols_named(["createSalesOrder", "create_sales_order"], scope=scope, limit=10)
    assert {m.path for m in named} == paths
    assert set(index.file_paths(scope)) >= paths
    assert where(index.chunk_ids(scope)) == set(index.file_paths(scope))


@pytest.mark.parametrize("hostile", ['"unterminated', "AND OR (", ")(", '"a" AND', "NEAR(", "col:value"])
def test_a_query_the_full_text_index_cannot_parse_matches_nothing(index: IndexQueries, hostile: str) -> None:
    assert index.bm25_chunks(hostile, weights=WEIGHTS, scope=EVERYTHING, limit=10) == []
    assert index.symbol_bm25_chunks(hostile, scope=EVERYTHING, skip_kinds=(), limit=10) == []


def test_symbols_by_name_carry_the_chunk_holding_the_name(index: IndexQueries) -> None:
    got = index.symbols_named(["createSalesOrder", "render_pdf", "nosuch"], scope=EVERYTHING, limit=100)
    assert {(m.name, m.qualified_name, m.path) for m in got} == {
        ("createSalesOrder", "createSalesOrder", "src/orders.py"),
        ("render_pdf", "InvoicePrinter.render_pdf", "src/billing.py"),
    }
    by_name = {m.name: m for m in got}
    assert by_name["createSalesOrder"].chunk_id == _chunk_at(index, "src/orders.py", 1)
    assert by_name["render_pdf"].chunk_id == _chunk_at(index, "src/billing.py", 1)
    assert index.symbols_named([], scope=EVERYTHING, limit=10) == []
    assert len(index.symbols_named(["createSalesOrder", "render_pdf"], scope=EVERYTHING, limit=1)) == 1


@pytest.mark.parametrize("rank_first", [False, True])
def test_symbol_bm25_matches_split_names_and_skips_kinds(index: IndexQueries, rank_first: bool) -> None:
    billing = _chunk_at(index, "src/billing.py", 1)
    got = index.symbol_bm25_chunks(
        fts_query("render pdf"), scope=EVERYTHING, skip_kinds=("field",), limit=10, rank_first=rank_first
    )
    assert [g.chunk_id for g in got] == [billing] and got[0].score > 0
    assert (
        index.symbol_bm25_chunks(
            fts_query("render pdf"), scope=EVERYTHING, skip_kinds=("method",), limit=10, rank_first=rank_first
        )
        == []
    )
    # "copies" is a field: found by BM25 only when fields are not skipped
    assert (
        index.symbol_bm25_chunks(fts_query("copies"), scope=EVERYTHING, skip_kinds=("field",), limit=10) == []
    )
    assert [
        g.chunk_id
        for g in index.symbol_bm25_chunks(fts_query("copies"), scope=EVERYTHING, skip_kinds=(), limit=10)
    ] == [billing]
    scoped = index.symbol_bm25_chunks(
        fts_query("render pdf"), scope=Scope(paths=("web",)), skip_kinds=(), limit=10
    )
    assert scoped == []


def test_symbols_by_kind_language_and_place(index: IndexQueries) -> None:
    classes = index.symbols(kinds=("class",), limit=100)
    assert [r.definition.qualified_name for r in classes] == [
        "InvoicePrinter",
        "OrderBook",
    ]  # by path, then line
    every = index.symbols(limit=100)
    assert len(every) == 7 and len({r.id for r in every}) == 7
    assert [r.definition.path for r in every] == sorted(r.definition.path for r in every)
    no_fields = index.symbols(exclude_kinds=("field",), limit=100)
    assert {r.definition.kind for r in no_fields} == {"class", "function", "method"} and len(no_fields) == 6
    ts = index.symbols(language="typescript", limit=100)
    assert [r.definition.name for r in ts] == ["create_sales_order"]
    assert ts[0].definition.language == "typescript"
    assert index.symbols(kinds=(), limit=100) == []
    assert len(index.symbols(limit=2)) == 2
    assert index.symbol_count() == 7


def test_symbols_by_name_suffix_file_and_pattern(index: IndexQueries) -> None:
    def names(rows: list[SymbolRow]) -> list[str]:
        return [r.definition.qualified_name for r in rows]

    assert names(index.symbols_by_name("render_pdf")) == ["InvoicePrinter.render_pdf"]
    assert index.symbols_by_name("InvoicePrinter.render_pdf") == []  # the unqualified name only
    assert names(index.symbols_by_qualified_suffix("InvoicePrinter.render_pdf")) == [
        "InvoicePrinter.render_pdf"
    ]
    assert names(index.symbols_by_qualified_suffix("add")) == ["OrderBook.add"]
    assert index.symbols_by_qualified_suffix("Printer.render_pdf") == []  # whole components only
    assert names(index.symbols_in_file("src/orders.py")) == ["createSalesOrder", "OrderBook", "OrderBook.add"]
    assert index.symbols_in_file("nope.py") == []
    # a pattern: any case for ASCII letters; % and _ are plain characters, not wildcards
    assert names(index.symbols_like("printer.")) == ["InvoicePrinter.render_pdf", "InvoicePrinter.copies"]
    assert names(index.symbols_like("sales_")) == ["create_sales_order"]
    assert index.symbols_like("%") == [] and len(index.symbols_like("e", limit=2)) == 2
    assert names(index.symbols_fts(fts_query("render pdf", mode="AND"))) == ["InvoicePrinter.render_pdf"]
    assert index.symbols_fts("") == [] and index.symbols_fts('"unterminated') == []
    assert sorted(index.symbol_names()) == sorted(
        [
            "createSalesOrder",
            "OrderBook",
            "add",
            "InvoicePrinter",
            "render_pdf",
            "copies",
            "create_sales_order",
        ]
    )
    row = index.symbols_by_name("createSalesOrder")[0]
    assert row.definition.span == Span(1, 1, 2, 10) and row.definition.language == "python"
    assert row.definition.signature == "function createSalesOrder"


def test_references_by_name_in_reading_order(index: IndexQueries) -> None:
    refs = index.refs_by_name("createSalesOrder")
    assert [(r.path, r.line, r.col, r.end_col) for r in refs] == [
        ("src/billing.py", 3, 16, 32),
        ("src/billing.py", 3, 40, 56),
        ("src/orders.py", 6, 9, 25),
    ]
    assert len(index.refs_by_name("createSalesOrder", limit=1)) == 1 and index.refs_by_name("nosuch") == []


def test_chunks_and_files_by_key(index: IndexQueries) -> None:
    cid = _chunk_at(index, "src/billing.py", 1)
    rows = index.chunks_by_ids([cid, 10**9])
    assert list(rows) == [cid]
    row = rows[cid]
    assert (row.path, row.language, row.start_line, row.end_line, row.symbol, row.hash) == (
        "src/billing.py", "python", 1, 4, "InvoicePrinter", "h-src/billing.py-1",
    )  # fmt: skip
    assert row.text.startswith("class InvoicePrinter:") and row.signature == "sig InvoicePrinter"
    f = index.file_row("web/app.ts")
    assert f is not None and (f.path, f.language, f.hash, f.size, f.mtime_ns) == (
        "web/app.ts", "typescript", "blob-web/app.ts", 100, 1,
    )  # fmt: skip
    assert index.file_row("nope.py") is None


def test_definitions_in_a_chunk_s_lines(index: IndexQueries) -> None:
    defs = index.definitions_in("src/billing.py", kinds=("class", "method"), start_line=2, end_line=3)
    assert [(d.qualified_name, d.start_line, d.end_line) for d in defs] == [
        ("InvoicePrinter", 1, 4),
        ("InvoicePrinter.render_pdf", 2, 3),
    ]
    assert defs[1].signature == "method render_pdf"
    assert index.definitions_in("src/billing.py", kinds=("function",), start_line=1, end_line=9) == []


def test_a_file_s_chunk_texts_and_the_names_a_span_uses(index: IndexQueries) -> None:
    texts = index.file_chunk_texts(["src/orders.py", "nope.py", "web/app.ts"])
    assert set(texts) == {"src/orders.py", "web/app.ts"}
    assert [start for start, _ in texts["src/orders.py"]] == [1, 4]
    assert texts["src/orders.py"][1][1].startswith("class OrderBook:")
    assert index.file_chunk_texts([]) == {}
    defs = index.definitions_of(["src/billing.py", "src/orders.py", "nope.py"], kinds=("class", "method"))
    assert {p: [d.qualified_name for d in ds] for p, ds in defs.items()} == {
        "src/billing.py": ["InvoicePrinter", "InvoicePrinter.render_pdf"],
        "src/orders.py": ["OrderBook", "OrderBook.add"],
    }
    assert [d[:4] for d in defs["src/billing.py"]] == index.definitions_in(
        "src/billing.py", kinds=("class", "method"), start_line=1, end_line=99
    )
    assert [d.kind for d in defs["src/orders.py"]] == ["class", "method"]
    assert index.names_used_in("src/orders.py", 1, 2) == {"book"}
    assert index.names_used_in("src/orders.py", 1, 9) == {"book", "createSalesOrder"}
    assert index.names_used_in("src/orders.py", 3, 5) == set()
    assert index.names_used_in("src/billing.py", 3, 3) == {"createSalesOrder"}


def test_references_counted_by_name_chunk_and_file(index: IndexQueries) -> None:
    assert index.ref_counts(["createSalesOrder", "book", "nosuch"]) == {"createSalesOrder": 3, "book": 1}
    assert index.ref_counts([]) == {}
    using = index.chunks_using(["createSalesOrder"], scope=EVERYTHING, limit=10)
    # two uses in billing's chunk, one in OrderBook's
    assert using == [_chunk_at(index, "src/billing.py", 1), _chunk_at(index, "src/orders.py", 4)]
    assert index.chunks_using(["createSalesOrder"], scope=Scope(paths=("src/orders.py",)), limit=10) == [
        _chunk_at(index, "src/orders.py", 4)
    ]
    assert index.chunks_using([], scope=EVERYTHING, limit=10) == []
    assert sorted(index.ref_counts_by_file()) == [
        ("src/billing.py", "createSalesOrder", 2),
        ("src/orders.py", "book", 1),
        ("src/orders.py", "createSalesOrder", 1),
    ]


def test_chunk_metadata_and_first_chunks(index: IndexQueries) -> None:
    ids = index.chunk_ids(EVERYTHING)
    assert len(ids) == 4 == index.chunk_count()
    assert index.chunk_id_high() >= max(ids)
    places = index.chunk_places([*ids, 10**9])
    assert set(places) == set(ids)
    assert {(p.path, p.start_line, p.symbol) for p in places.values()} == {
        ("src/orders.py", 1, "createSalesOrder"), ("src/orders.py", 4, "OrderBook"),
        ("src/billing.py", 1, "InvoicePrinter"), ("web/app.ts", 1, "create_sales_order"),
    }  # fmt: skip
    assert index.first_chunks(["src/orders.py", "nope.py"]) == {
        "src/orders.py": _chunk_at(index, "src/orders.py", 1)
    }
    keys = {k.id: k for k in index.chunk_keys()}
    assert set(keys) == set(ids)
    k = keys[_chunk_at(index, "web/app.ts", 1)]
    assert (k.hash, k.path, k.symbol, k.signature) == (
        "h-web/app.ts-1",
        "web/app.ts",
        "create_sales_order",
        "sig create_sales_order",
    )
    words = index.chunk_words([_chunk_at(index, "src/billing.py", 1)])
    assert len(words) == 1 and "invoiceprinter invoice printer" in (words[0].symbol or "")
    assert "render_pdf render pdf" in words[0].text
    assert index.chunk_words([]) == []


def test_full_text_frequencies_of_chunks_and_names(index: IndexQueries) -> None:
    assert index.table_doc_freqs(["printer", "customer"], cap=10, table="symbols") == {
        "printer": 3,
        "customer": 0,
    }
    assert index.table_doc_freqs(["customer"], cap=10, table="chunks") == {"customer": 2}
    with pytest.raises(ValueError, match="table must be one of"):
        index.table_doc_freqs(["x"], cap=1, table="refs")  # type: ignore[arg-type]
    # as stored: the real index stems ("customer" is stored as "custom"), so a word whose stem is itself
    assert index.vocab_doc_freqs(["return", "zebra", "return"]) == {"return": 3}


def test_files_signature_and_contents_follow_the_index(index: IndexQueries, tmp_path: Path) -> None:
    assert index.has_files()
    assert sorted(index.file_paths()) == ["src/billing.py", "src/orders.py", "web/app.ts"]
    before, files_before = index.index_signature(), index.files_signature()
    assert files_before[0] == 3 and before.chunks == 4 and before.files == 3
    contents = index.file_contents()
    assert [f.path for f in contents] == ["src/billing.py", "src/orders.py", "web/app.ts"]
    orders = contents[1]
    assert (orders.language, orders.hash, orders.size, orders.lines) == (
        "python",
        "blob-src/orders.py",
        100,
        6,
    )
    assert [(c.start_line, c.symbol, c.hash) for c in orders.chunks] == [
        (1, "createSalesOrder", "h-src/orders.py-1"), (4, "OrderBook", "h-src/orders.py-4"),
    ]  # fmt: skip
    assert [s.qualified_name for s in orders.symbols] == ["createSalesOrder", "OrderBook", "OrderBook.add"]
    # re-indexing a file changes both signatures
    changed = ParsedFile(
        "web/app.ts",
        "typescript",
        chunks=(_chunk("web/app.ts", "typescript", 1, 1, "export const x = 1", None),),
    )
    assert isinstance(index, (Store, FakeIndex))
    index.replace_file(changed, content_hash="blob-2", size=10, mtime_ns=2, lines=1)
    assert index.index_signature() != before and index.files_signature() != files_before
    assert index.symbols(language="typescript", limit=10) == []


def test_vector_dim_is_known_from_a_cached_vector(index: IndexQueries) -> None:
    assert index.vector_dim("m") is None
    index.push_vectors("m", {"k": np.zeros(8, dtype=np.float32)})
    assert index.vector_dim("m") == 8 and index.vector_dim("other") is None


def test_an_empty_index_answers_empty() -> None:
    empty = FakeIndex()
    assert not empty.has_files() and empty.chunk_count() == 0 and empty.index_signature().max_chunk_id is None


# -- SQLite faults: a real file made to fail -----------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "idx" / "index.db") as s:
        _load(s)
        yield s


def test_a_dropped_full_text_table_is_a_schema_error_not_an_empty_answer(store: Store) -> None:
    store.conn.execute("DROP TABLE chunks_fts")
    with pytest.raises(IndexSchemaError, match="no such table: chunks_fts") as err:
        store.bm25_chunks(fts_query("customer"), weights=WEIGHTS, scope=EVERYTHING, limit=10)
    assert err.value.kind == "schema" and isinstance(err.value, StorageError)
    with pytest.raises(IndexSchemaError):
        store.doc_freqs(["customer"], cap=10)
    with pytest.raises(IndexSchemaError):
        store.chunk_words([1])


def test_a_dropped_table_is_a_schema_error_for_every_read(store: Store) -> None:
    store.conn.execute("DROP TABLE refs")
    with pytest.raises(IndexSchemaError, match="refs"):
        store.ref_counts(["createSalesOrder"])
    with pytest.raises(IndexSchemaError):
        store.chunks_using(["createSalesOrder"], scope=EVERYTHING, limit=10)
    with pytest.raises(IndexSchemaError):
        store.names_used_in("src/orders.py", 1, 9)


def test_a_locked_database_is_a_busy_error(tmp_path: Path) -> None:
    db = tmp_path / "idx" / "index.db"
    with Store(db) as s:
        _load(s)
    with Store(db, timeout_s=0.05) as reader:
        # another connection holds an exclusive lock (a rollback-journal writer mid-transaction)
        reader.conn.execute("PRAGMA journal_mode=DELETE")
        other = sqlite3.connect(db, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")
            other.execute("DELETE FROM refs")
            with pytest.raises(IndexBusyError) as err:
                reader.ref_counts(["createSalesOrder"])
            assert err.value.kind == "busy" and "locked" in str(err.value)
            with pytest.raises(IndexBusyError):
                reader.bm25_chunks(fts_query("customer"), weights=WEIGHTS, scope=EVERYTHING, limit=10)
        finally:
            other.execute("ROLLBACK")
            other.close()
        # the lock gone, the same reads answer
        assert reader.ref_counts(["createSalesOrder"]) == {"createSalesOrder": 3}


def test_the_fake_and_sqlite_rank_a_clear_case_alike(tmp_path: Path) -> None:
    """Not the same scores (the fake's BM25 is simpler), the same order where the evidence is
    unambiguous: the chunk naming a word three times over the one naming it once."""
    files = (
        ParsedFile(
            "a.py", "python", chunks=(_chunk("a.py", "python", 1, 1, "retry retry retry later", None),)
        ),
        ParsedFile(
            "b.py", "python", chunks=(_chunk("b.py", "python", 1, 1, "retry once then give up now", None),)
        ),
        ParsedFile("c.py", "python", chunks=(_chunk("c.py", "python", 1, 1, "nothing here at all", None),)),
    )
    fake = FakeIndex()
    _load(fake, files)
    with Store(tmp_path / "i.db") as s:
        _load(s, files)
        for idx in (fake, s):
            got = idx.bm25_chunks(fts_query("retry"), weights=WEIGHTS, scope=EVERYTHING, limit=5)
            assert [idx.chunk_places([g.chunk_id])[g.chunk_id].path for g in got] == ["a.py", "b.py"]


def test_a_thread_reads_while_another_writes(store: Store, tmp_path: Path) -> None:
    """WAL: a second connection reads the same answers while this one holds a write open."""
    with Store(store.path) as other:
        done = threading.Event()
        with store.transaction():
            store.conn.execute("DELETE FROM refs")

            def read() -> None:
                assert other.ref_counts(["createSalesOrder"]) == {"createSalesOrder": 3}
                done.set()

            t = threading.Thread(target=read)
            t.start()
            t.join(timeout=30)
        assert done.is_set()


def test_a_glance_at_the_languages_reads_what_the_store_counts(store: Store) -> None:
    from storage.peek import language_sizes

    assert language_sizes(store.path) == store.language_sizes() == {"python": (2, 12), "typescript": (1, 6)}


def test_a_glance_at_a_missing_index_is_a_classified_error(tmp_path: Path) -> None:
    from storage.errors import IndexIOError
    from storage.peek import language_sizes

    with pytest.raises(IndexIOError, match="cannot read or write the index"):
        language_sizes(tmp_path / "none.db")
