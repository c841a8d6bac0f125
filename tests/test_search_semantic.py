"""Search with the real default model (all-MiniLM-L6-v2, offline) on a tiny workspace.

Covers: a query only reachable by meaning, one only by identifier, vectors following
edits and deletes, the cache after a revert (no re-embedding), a model change, and the
``complete=False`` state while vectors are missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from counting import CountingEmbedder

from navigator.indexer import index_root
from navigator.search import SemanticSearch
from semantic.embed import SentenceTransformerEmbedder
from storage.db import Store

pytestmark = pytest.mark.slow

FILES = {
    "net.py": '''\
import time


def fetch_with_attempts(url, tries=5):
    delay = 0.5
    for attempt in range(tries):
        try:
            return http_get(url)
        except TimeoutError:
            time.sleep(delay)
            delay *= 2
    raise RuntimeError(url)
''',
    "colors.py": '''\
def rgb_to_hex(red, green, blue):
    """Format a colour as #rrggbb."""
    return "#%02x%02x%02x" % (red, green, blue)
''',
    "invoice.py": '''\
class InvoiceTotals:
    def vat_amount(self, lines, rate):
        return sum(line.price * line.qty for line in lines) * rate
''',
    "legacy.py": '''\
def zq_frobnicate_widget_cache(handle):
    return handle
''',
}


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[tuple[Path, Store]]:
    root = tmp_path / "repo"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    store = Store(tmp_path / "nav" / "index.db")
    index_root(root, store)
    yield root, store
    store.close()
    shutil.rmtree(root)


def test_query_reachable_only_by_meaning(repo: tuple[Path, Store], model: SentenceTransformerEmbedder) -> None:
    _, store = repo
    search = SemanticSearch(store, embedder=model)
    assert search.sync().complete
    resp = search.search("retry a failed download with exponential backoff", k=3)
    assert resp.complete and resp.reason is None
    top = resp.items[0]
    assert top.path == "net.py" and top.symbol == "fetch_with_attempts"
    assert "vector" in top.ranks and "bm25" not in top.ranks  # no shared word: only the meaning found it


def test_query_reachable_only_by_identifier(repo: tuple[Path, Store], model: SentenceTransformerEmbedder) -> None:
    _, store = repo
    search = SemanticSearch(store, embedder=model)
    search.sync()
    resp = search.search("zqFrobnicateWidgetCache", k=3)
    top = resp.items[0]
    assert top.path == "legacy.py"
    assert top.ranks.get("bm25") == 1 and top.ranks.get("symbols") == 1


def test_vectors_follow_edits_deletes_and_reverts(repo: tuple[Path, Store], model: SentenceTransformerEmbedder) -> None:
    root, store = repo
    emb = CountingEmbedder(model)
    search = SemanticSearch(store, embedder=emb)
    first = search.sync()
    assert first.complete and first.embedded == first.chunks == 4 and emb.texts_embedded == 4

    original = (root / "colors.py").read_text()
    (root / "colors.py").write_text(original.replace("rgb_to_hex", "rgb_to_css_hex"))
    index_root(root, store)
    edited = search.sync()
    assert edited.embedded == 1 and edited.removed == 1 and edited.complete and emb.texts_embedded == 5
    assert search.search("rgb to css hex", k=1).items[0].symbol == "rgb_to_css_hex"

    (root / "colors.py").write_text(original)  # revert: the old vector comes from the cache
    index_root(root, store)
    reverted = search.sync()
    assert reverted.embedded == 0 and reverted.from_cache == 1 and emb.texts_embedded == 5

    (root / "invoice.py").unlink()
    index_root(root, store)
    deleted = search.sync()
    assert deleted.removed == 1 and deleted.vectors == deleted.chunks == 3
    assert all(h.path != "invoice.py" for h in search.search("VAT amount of invoice lines", k=5).items)

    # A new process loads the saved vectors and has nothing to do.
    again = SemanticSearch(store, embedder=emb).sync()
    assert again.embedded == 0 and again.from_cache == 0 and again.vectors == 3 and emb.texts_embedded == 5


def test_model_change_rebuilds_vectors_only(repo: tuple[Path, Store], model: SentenceTransformerEmbedder) -> None:
    _, store = repo
    chunk_ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks ORDER BY id")]
    SemanticSearch(store, embedder=model).sync()
    other = CountingEmbedder(SentenceTransformerEmbedder(max_seq_length=64))
    assert other.model_id != model.model_id
    switched = SemanticSearch(store, embedder=other)
    report = switched.sync()
    assert report.embedded == 4 and report.complete and other.texts_embedded == 4
    assert [r[0] for r in store.conn.execute("SELECT id FROM chunks ORDER BY id")] == chunk_ids
    models = {r[0] for r in store.conn.execute("SELECT DISTINCT model FROM embeddings")}
    assert models == {model.model_id, other.model_id}
    # Switching back costs nothing: both models' vectors are cached and saved.
    back = CountingEmbedder(model)
    assert SemanticSearch(store, embedder=back).sync().embedded == 0 and back.texts_embedded == 0


def test_incomplete_while_vectors_are_missing(repo: tuple[Path, Store], model: SentenceTransformerEmbedder) -> None:
    _, store = repo
    search = SemanticSearch(store, embedder=model)
    resp = search.search("zqFrobnicateWidgetCache", k=3)
    assert not resp.complete and resp.reason is not None and "vectors for 0/4 chunks" in resp.reason
    assert resp.items[0].path == "legacy.py"  # lexical legs answer meanwhile
    partial = search.sync(max_embed=2)
    assert partial.vectors == 2 and not partial.complete
    assert "vectors for 2/4" in (search.search("colour", k=1).reason or "")
    search.sync()
    assert search.search("colour", k=1).complete
