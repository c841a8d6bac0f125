"""A query never waits for embedding (issue 9).

- With no vectors, a search answers from the lexical legs and never loads the model
  (checked in a fresh process: torch and sentence-transformers are never imported).
- With some vectors, a search encodes the query only: no chunk is embedded, and the
  answer says how many vectors are missing.
- Query encoding runs with a bounded torch thread count, restored afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from counting import CountingEmbedder

from navigator.indexer import index_root
from navigator.search import SemanticSearch
from semantic.embed import QUERY_THREADS, SentenceTransformerEmbedder
from storage.db import Store

FILES = {
    "net.py": "def fetch_with_attempts(url, tries=5):\n    for attempt in range(tries):\n        return url\n",
    "colors.py": 'def rgb_to_hex(red, green, blue):\n    return "#%02x%02x%02x" % (red, green, blue)\n',
    "invoice.py": "class InvoiceTotals:\n    def vat_amount(self, lines, rate):\n        return rate\n",
    "legacy.py": "def zq_frobnicate_widget_cache(handle):\n    return handle\n",
}


def _write(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")


PROBE = """
import json, sys
from navigator import Navigator
from navigator.frontends.cli import main
with Navigator(sys.argv[1]) as nav:
    nav.index()
    resp = nav.search("fetch a url in attempts", k=3)
    api = {"complete": resp.complete, "reason": resp.reason, "top": resp.items[0].path if resp.items else None}
try:
    main(["-C", sys.argv[1], "--no-daemon", "search", "--json", "frobnicate widget cache"], standalone_mode=False)
except SystemExit:
    pass
print("\\nPROBE" + json.dumps({"api": api, "torch": "torch" in sys.modules,
      "st": "sentence_transformers" in sys.modules}))
"""


def test_search_without_vectors_never_loads_the_model(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root)
    env = {**os.environ, "NAV_NO_DAEMON": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(root)], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.rsplit("PROBE", 1)[1])
    assert out["api"]["complete"] is False and "vectors for 0/4 chunks" in out["api"]["reason"]
    assert out["api"]["top"] == "net.py"  # the lexical legs answered
    assert '"legacy.py"' in proc.stdout  # the CLI's in-process search answered too
    assert out["torch"] is False and out["st"] is False, "a search loaded the model it does not use"


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    _write(tmp_path / "repo")
    st = Store(tmp_path / "nav" / "index.db")
    index_root(tmp_path / "repo", st)
    yield st
    st.close()


@pytest.mark.slow
def test_search_with_some_vectors_encodes_the_query_only(store: Store, model: SentenceTransformerEmbedder) -> None:
    SemanticSearch(store, embedder=model).sync(max_embed=2)  # an explicit, partial embed
    counting = CountingEmbedder(model)
    search = SemanticSearch(store, embedder=counting)  # a new process's view: loads the saved vectors
    resp = search.search("retry a failed download", k=3)
    assert counting.texts_embedded == 0 and counting.queries == 1
    assert not resp.complete and "vectors for 2/4 chunks" in (resp.reason or "")
    assert any("vector" in h.ranks for h in resp.items)
    # Another process embeds the rest (`nav index --embed`); this one picks its saved vectors up
    # without the model.
    SemanticSearch(Store(store.path), embedder=model).sync()
    again = search.search("retry a failed download", k=3)
    assert again.complete and counting.texts_embedded == 0 and counting.queries == 2


@pytest.mark.slow
def test_query_encoding_runs_with_bounded_threads(model: SentenceTransformerEmbedder) -> None:
    import torch

    inner = model._load()
    seen: list[int] = []
    original = inner.encode

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    inner.encode = spy
    try:
        model.embed_query("where do we retry")
        assert seen == [QUERY_THREADS]
        assert torch.get_num_threads() == 2  # restored for the embedding work that follows
    finally:
        inner.encode = original
        torch.set_num_threads(before)


def test_search_without_vectors_leaves_the_embedders_load_counter_at_zero(store: Store) -> None:
    emb = SentenceTransformerEmbedder()  # a fresh embedder: nothing loaded yet
    resp = SemanticSearch(store, embedder=emb).search("frobnicate widget cache", k=3)
    assert resp.items[0].path == "legacy.py" and not resp.complete
    assert emb.loads == 0
