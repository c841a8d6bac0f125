"""The model never runs under the shared lock: a search answers while another thread embeds.

A fake embedder blocks inside ``embed_documents`` until the test releases it, so the test
waits on events (never on sleep) and fails by timeout if a search is held up.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from navigator.indexer import index_root
from navigator.search import SemanticSearch
from semantic.embed import FakeEmbedder, Vectors
from storage.db import Store


class GatedEmbedder(FakeEmbedder):
    """A FakeEmbedder whose document batches wait for ``release``; ``entered`` is set on entry."""

    def __init__(self) -> None:
        super().__init__(model_id="fake:gated")
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.entered.set()
        if not self.release.wait(timeout=30):
            raise TimeoutError("the test never released the embedder")
        return super().embed_documents(texts)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "net.py").write_text("def fetch_with_retry(url):\n    return url\n")
    (root / "colors.py").write_text("def rgb_to_hex(r, g, b):\n    return '#%02x%02x%02x' % (r, g, b)\n")
    st = Store(tmp_path / "index.db")
    index_root(root, st)
    return st


def test_search_answers_while_another_thread_embeds(store: Store, tmp_path: Path) -> None:
    emb = GatedEmbedder()
    first = SemanticSearch(store, embedder=emb, vectors_dir=tmp_path)
    reports = []
    worker = threading.Thread(target=lambda: reports.append(first.sync()))
    worker.start()
    try:
        assert emb.entered.wait(timeout=30), "the background sync never reached the model"
        # Another thread's connection, sharing the model, vectors and lock.
        other_store = Store(store.path)
        other = SemanticSearch(other_store, share_with=first)
        done = threading.Event()
        answers = []

        def query() -> None:
            answers.append(other.search("rgb_to_hex", k=3))
            done.set()

        threading.Thread(target=query, daemon=True).start()
        assert done.wait(timeout=20), "a search waited for the embedding thread"
        resp = answers[0]
        assert resp.complete is False and "vectors for 0/" in (resp.reason or "")
        assert resp.items and resp.items[0].path == "colors.py"
    finally:
        emb.release.set()
        worker.join(timeout=30)
    assert reports and reports[0].complete and reports[0].embedded == 2
    assert first.search("rgb_to_hex", k=1).complete


def test_concurrent_syncs_do_not_embed_a_chunk_twice(store: Store, tmp_path: Path) -> None:
    emb = GatedEmbedder()
    first = SemanticSearch(store, embedder=emb, vectors_dir=tmp_path)
    second = SemanticSearch(Store(store.path), share_with=first)
    worker = threading.Thread(target=first.sync)
    worker.start()
    try:
        assert emb.entered.wait(timeout=30)
        report = second.sync()  # everything is in flight in the other thread
        assert report.embedded == 0 and not report.complete
    finally:
        emb.release.set()
        worker.join(timeout=30)
    assert emb.texts_embedded == 2
    assert second.sync().complete
