"""Per-call notes travel inside each answer: a note about the index one call answered from
(another process updating it, a rebuild) is that call's, never state another thread's call
clears or takes.

The threads are ordered by events, never by sleeping: a query's embedding waits (inside the
answer, after the index was found busy) until the other thread has had its own answer.
"""

from __future__ import annotations

import threading
from pathlib import Path

from navigator.api import Navigator
from navigator.indexer import index_lock
from navigator.results import Response, SearchHit
from semantic.embed import FakeEmbedder, Vectors

BUSY = "another process is updating the index"


class GatedQueries(FakeEmbedder):
    """Embeds a query that mentions ``gate`` only once ``release`` is set (``entered`` says it waits)."""

    def __init__(self, gate: str) -> None:
        super().__init__(model_id="fake:gated-queries")
        self.gate = gate
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_query(self, text: str) -> Vectors:
        if self.gate in text:
            self.entered.set()
            if not self.release.wait(timeout=60):
                raise TimeoutError("the test never released the query")
        return super().embed_query(text)


def test_two_threads_asking_at_once_each_get_their_own_note(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "net.py").write_text("def fetch_with_retry(url):\n    return url\n", encoding="utf-8")
    (root / "colors.py").write_text("def rgb_to_hex(r, g, b):\n    return r\n", encoding="utf-8")
    embedder = GatedQueries(gate="retry")
    answers: dict[str, Response[SearchHit]] = {}
    failures: list[BaseException] = []

    def first() -> None:
        try:
            answers["first"] = nav.search("where do we retry the fetch", k=3)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    with Navigator(root, embedder=embedder) as nav:
        nav.index()
        assert nav.embed().complete  # vectors, so the search embeds its query (and waits there)
        nav.lock_wait_s = 0.05
        worker = threading.Thread(target=first)
        with index_lock(nav.nav_dir, timeout_s=10):  # as another process's long index run holds it
            worker.start()
            assert embedder.entered.wait(timeout=60), "the first query never reached its embedding"
        # the index is free again: this thread's answer is up to date and says nothing of it
        second = nav.definitions("rgb_to_hex")
        embedder.release.set()
        worker.join(timeout=60)
    assert not failures, failures
    assert [s.path for s in second.items] == ["colors.py"]
    assert not any(BUSY in n for n in second.notes), second.notes
    # the first answer came from the index as another process held it, and still says so
    assert any(BUSY in n for n in answers["first"].notes), answers["first"].notes
