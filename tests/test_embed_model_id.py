"""A model's id keys its cached vectors: a configured model changed in place (fine-tuned into the
same folder: every file the same size, every config byte the same) must get a new id, or nav
answers from vectors of the model it no longer runs. Real default model, real safetensors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from semantic.embed import SentenceTransformerEmbedder, default_model_path, dir_fingerprint, st_model_id
from storage.db import Store


@pytest.fixture
def configured(tmp_path: Path) -> Path:
    folder = tmp_path / "my-model"
    shutil.copytree(default_model_path(), folder)
    return folder


def _retrain_in_place(folder: Path) -> None:
    """Every weight moved a little, written back as a trainer saves: same tensors, same header."""
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file

    weights = folder / "model.safetensors"
    with safe_open(str(weights), framework="pt") as f:
        meta = f.metadata()
        tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (safe_open is no mapping)
    gen = torch.Generator().manual_seed(18)
    moved = {k: t + 1e-3 * torch.randn(t.shape, generator=gen, dtype=t.dtype) if t.is_floating_point() else t
             for k, t in tensors.items()}  # fmt: skip
    size = weights.stat().st_size
    save_file(moved, str(weights), metadata=meta)
    assert weights.stat().st_size == size  # what made the old fingerprint blind


def test_a_configured_model_retrained_in_place_gets_a_new_id(configured: Path) -> None:
    before = st_model_id(configured, True, 128)
    assert st_model_id(configured, True, 128) == before  # stable
    _retrain_in_place(configured)
    assert dir_fingerprint(configured) == dir_fingerprint(default_model_path())  # sizes and configs alike
    assert st_model_id(configured, True, 128) != before


def test_the_default_model_keeps_the_id_its_cached_vectors_have() -> None:
    """The default model's id does not read its weights (a pinned package): indexes made before
    keep their vectors."""
    path = default_model_path()
    assert st_model_id(path, False, 128) == f"st:all-MiniLM-L6-v2:{dir_fingerprint(path)}:128"


def test_a_search_re_embeds_after_its_model_was_retrained_in_place(configured: Path, tmp_path: Path) -> None:
    from navigator.indexer import index_root
    from navigator.search import SemanticSearch

    root = tmp_path / "repo"
    root.mkdir()
    (root / "orders.py").write_text("def create_sales_order(customer):\n    return {'customer': customer}\n")
    (root / "retry.py").write_text("def retry_erp_call(fn, attempts=3):\n    for _ in range(attempts):\n        fn()\n")
    store = Store(tmp_path / "index.db")
    try:
        index_root(root, store)
        first = SemanticSearch(store, embedder=SentenceTransformerEmbedder(configured, max_seq_length=64)).sync()
        assert first.embedded >= 2
        _retrain_in_place(configured)
        again = SemanticSearch(store, embedder=SentenceTransformerEmbedder(configured, max_seq_length=64)).sync()
        assert again.embedded == first.embedded and again.complete  # nothing answered from stale vectors
        models = {r[0] for r in store.conn.execute("SELECT DISTINCT model FROM embeddings")}
        assert len(models) == 2
    finally:
        store.close()
