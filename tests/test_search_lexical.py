"""The lexical legs and the search service without vectors (fake embedder, no model)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from navigator.indexer import index_root
from navigator.search import SemanticSearch
from navigator.vector_sync import eta_note
from semantic.analysis import query_terms
from semantic.embed import FakeEmbedder
from semantic.lexical import bm25_chunks, symbol_chunks
from semantic.ranking import DEFAULT
from storage.db import Store

FILES = {
    "src/orders.py": '''
        def createSalesOrder(customer, lines):
            """Book an order for a customer."""
            return {"customer": customer, "lines": lines}
        ''',
    "src/billing.py": '''
        class InvoicePrinter:
            def render_pdf(self, invoice):
                return b"%PDF" + bytes(invoice)
        ''',
    "web/app.ts": '''
        export function create_sales_order(customer: string): number {
          return customer.length;
        }
        ''',
}


@pytest.fixture
def store(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path) -> Store:
    root = make_repo(FILES)
    s = Store(tmp_path / "idx" / "index.db")
    index_root(root, s)
    return s


def _paths(conn_rows: list[tuple[int, float]], store: Store) -> set[str]:
    rows = store.chunks_by_ids([i for i, _ in conn_rows])
    return {r.path for r in rows.values()}


@pytest.mark.parametrize("query", ["createSalesOrder", "create_sales_order", "create sales order", "CreateSalesOrder"])
def test_spellings_find_each_other_through_bm25(store: Store, query: str) -> None:
    found = _paths(bm25_chunks(store, query_terms(query)), store)
    assert {"src/orders.py", "web/app.ts"} <= found


def test_exact_identifier_ranks_its_own_spelling_first(store: Store) -> None:
    ranked = bm25_chunks(store, query_terms("create_sales_order"))
    first = store.chunks_by_ids([ranked[0][0]])[ranked[0][0]]
    assert first.path == "web/app.ts"


def test_symbol_leg_matches_names_and_words(store: Store) -> None:
    exact = symbol_chunks(store, query_terms("InvoicePrinter"))
    assert _paths(exact[:1], store) == {"src/billing.py"}
    words = symbol_chunks(store, query_terms("render pdf"))
    assert _paths(words, store) == {"src/billing.py"}


def test_filters_by_path_and_language(store: Store) -> None:
    terms = query_terms("create sales order")
    assert _paths(bm25_chunks(store, terms, paths=["src"]), store) == {"src/orders.py"}
    assert _paths(bm25_chunks(store, terms, languages=["typescript"]), store) == {"web/app.ts"}
    assert _paths(bm25_chunks(store, terms, paths=["web/*.ts"]), store) == {"web/app.ts"}


def test_lexical_answers_without_vectors_and_says_incomplete(store: Store) -> None:
    search = SemanticSearch(store, embedder=FakeEmbedder())
    resp = search.search("createSalesOrder", k=5)
    assert resp.items and resp.items[0].path in {"src/orders.py", "web/app.ts"}
    assert not resp.complete and resp.reason is not None and "vectors for 0/" in resp.reason
    assert "vector" not in resp.items[0].ranks


def test_missing_vectors_say_when_they_will_be_there_at_the_rate_measured_here(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    root = make_repo({f"src/m{i}.py": f"def step_{i}(x):\n    return x + {i}\n" for i in range(9)})
    store = Store(tmp_path / "idx" / "rate.db")
    index_root(root, store)
    search = SemanticSearch(store, embedder=FakeEmbedder())
    assert search.embed_rate() is None  # nothing measured yet
    search.sync(max_embed=2, batch_size=2)  # one batch: it pays for loading the model, so no rate
    assert search.embed_rate() is None
    search.sync(max_embed=6, batch_size=2)
    rate = search.embed_rate()
    assert rate is not None and rate > 0
    resp = search.search("step", k=3)
    assert not resp.complete and resp.reason is not None
    assert "vectors for 8/9" in resp.reason and "chunks/s measured here" in resp.reason, resp.reason
    search.sync()
    assert search.search("step", k=3).complete


def test_eta_note_reads_as_a_person_would_say_it() -> None:
    assert eta_note(100, None) == "" and eta_note(0, 5.0) == ""
    assert eta_note(30, 10.0) == ", about 3 s more at 10.0 chunks/s measured here"
    assert eta_note(6000, 10.0) == ", about 10 min more at 10.0 chunks/s measured here"
    assert eta_note(600_000, 10.0) == ", about 16.7 h more at 10.0 chunks/s measured here"


def test_search_filters_apply_to_every_leg(store: Store) -> None:
    search = SemanticSearch(store, embedder=FakeEmbedder())
    search.sync()
    resp = search.search("create sales order", k=10, languages=["python"])
    assert resp.complete
    assert resp.items[0].path == "src/orders.py"
    assert all(h.path.startswith("src/") and h.language == "python" for h in resp.items)


def test_search_rejects_empty_text(store: Store) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        SemanticSearch(store, embedder=FakeEmbedder()).search("  ")


PRF_FILES = {
    "erp/retry.py": '''
        def retry_erp_call(request):
            """Retry the ERP call with backoff until the gateway answers."""
            return backoff_gateway(request)
        ''',
    "erp/timeouts.py": '''
        def erp_call_deadline(request):
            """How long one ERP call may take before the gateway gives up."""
            return backoff_gateway(request, deadline=30)
        ''',
    "net/gateway.py": '''
        def backoff_gateway(request, deadline=10):
            """Exponential backoff around the gateway socket."""
            return request
        ''',
    "ui/colors.py": '''
        def palette():
            return ["red", "green"]
        ''',
}


def test_feedback_leg_brings_the_words_the_best_hits_share(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    """Pseudo-relevance feedback (on by default): "ERP call" matches retry.py and timeouts.py,
    which both use ``backoff_gateway``; the feedback leg finds gateway.py, which says neither
    word. A long query (issue text) gets no feedback leg."""
    filler = {f"misc/m{i}.py": f"def helper_{i}(x):\n    return x + {i}\n" for i in range(40)}
    root = make_repo({**PRF_FILES, **filler})  # a feedback word must be rare: in at most 10% of chunks
    s = Store(tmp_path / "idx" / "index.db")
    index_root(root, s)
    search = SemanticSearch(s, embedder=FakeEmbedder())
    assert search.config.prf_terms == 8  # on by default
    without = SemanticSearch(s, embedder=FakeEmbedder(), config=dataclasses.replace(DEFAULT, prf_terms=0))
    query = "ERP call"
    off = [h.path for h in without.search(query, k=10, legs=("bm25", "symbols", "path")).items]
    assert "net/gateway.py" not in off
    on = [h.path for h in search.search(query, k=10, legs=("bm25", "symbols", "path")).items]
    assert on[:2] == off[:2]  # the direct matches keep the lead
    assert "net/gateway.py" in on
    assert not any(p.startswith(("ui/", "misc/")) for p in on)
    hits = search.search(query, k=10, legs=("bm25", "symbols", "path")).items
    assert any("prf" in h.ranks for h in hits)  # the answer says which leg found what
    long_query = "ERP call " + " ".join(f"word{i}" for i in range(40))  # issue text: names lead, no feedback
    assert not any("prf" in h.ranks for h in search.search(long_query, k=10, legs=("bm25", "symbols", "path")).items)
    s.close()


def test_symbol_leg_matches_fields_by_exact_name_only(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    """A data member (here Java fields) is found when the query names it, not by a prose word:
    `retryDelay` the field must not stand in for the method that retries."""
    root = make_repo(
        {
            "src/main/java/shop/Client.java": """
                package shop;
                public class Client {
                    private long retryDelay = 50;
                    private int attempts;
                    public void send(String body) {
                        attempts += 1;
                    }
                }
                """,
            "src/main/java/shop/Retrier.java": """
                package shop;
                public class Retrier {
                    public void retryDelayed(Runnable call) {
                        call.run();
                    }
                }
                """,
        }
    )
    s = Store(tmp_path / "idx" / "index.db")
    index_root(root, s)
    kinds = {r[0]: r[1] for r in s.conn.execute("SELECT qualified_name, kind FROM symbols")}
    assert kinds["Client.retryDelay"] == "field"
    by_words = _paths(symbol_chunks(s, query_terms("where do we retry with a delay")), s)
    assert by_words == {"src/main/java/shop/Retrier.java"}  # the method's words, not the field's
    by_name = _paths(symbol_chunks(s, query_terms("retryDelay")), s)
    assert "src/main/java/shop/Client.java" in by_name


def test_a_name_of_letters_and_digits_is_matched_whole_not_as_loose_words(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    """``sha256`` (or ``E1152``, ``http2``) in a query is one name: matched whole or as the
    phrase ``sha 256``, not as ``sha`` OR ``256`` anywhere (a file full of 256s and shas)."""

    root = make_repo(
        {
            "src/digest.py": """
                import hashlib
                def file_digest(path):
                    return hashlib.sha256(open(path, "rb").read()).hexdigest()
                """,
            "src/sizes.py": """
                HASHES = ["sha", "sha1", "md5"]  # the sha family we accept
                BLOCK = 256
                LIMIT = 256 * 256
                PAGE = 256 + 256
                """,
        }
    )
    s = Store(tmp_path / "idx" / "index.db")
    index_root(root, s)
    assert "sha256" in query_terms("sha256 of a download").identifiers
    assert "E1152" in query_terms("E1152 and dynamic parameters").identifiers
    assert query_terms("retry 3 times").identifiers == ()  # a number alone is not a name

    def first(query: str) -> str:
        ranked = bm25_chunks(s, query_terms(query))
        return s.chunks_by_ids([ranked[0][0]])[ranked[0][0]].path

    assert first("sha256 of a download") == "src/digest.py"
    loose = dataclasses.replace(DEFAULT, alnum_names=False)  # loose words: the 256s win
    ranked = bm25_chunks(s, query_terms("sha256 of a download", config=loose))
    assert s.chunks_by_ids([ranked[0][0]])[ranked[0][0]].path == "src/sizes.py"


def test_path_leg_finds_the_agent_a_query_names_by_its_action() -> None:
    """"pagination" finds ``paginator.rb`` and "logging" ``job_logger.rb`` by their file names
    (a Ruby or Java file is named after its class); the other way round, and through a folder's
    name, a root does not count ("router" must not pull every file under ``routing/``)."""
    from semantic.analysis import path_words
    from semantic.path_leg import path_files

    files = [
        "lib/sidekiq/paginator.rb",
        "lib/sidekiq/api.rb",
        "lib/sidekiq/job_logger.rb",
        "lib/sidekiq/web/router.rb",
        "src/routing/method_routing.rs",
        "src/routing/mod.rs",
    ]
    file_words = {p: path_words(p) for p in files}

    def ranked(query: str) -> list[str]:
        return [p for p, _ in path_files(file_words, query_terms(query))]

    assert ranked("pagination of sorted set entries") == ["lib/sidekiq/paginator.rb"]
    assert ranked("per-job execution logging with elapsed time") == ["lib/sidekiq/job_logger.rb"]
    assert ranked("how the web router works") == ["lib/sidekiq/web/router.rb"]  # not routing/
    assert ranked("routing of requests")[:1] == ["lib/sidekiq/web/router.rb"]  # the file's own name
    assert "src/routing/mod.rs" in ranked("routing of requests")  # by its spelling, as before
    spelled = dataclasses.replace(DEFAULT, path_roots=False)
    assert path_files(file_words, query_terms("pagination of sorted set entries"), config=spelled) == []
