"""bench/finetune: the whole-MiniLM fine-tune (a real run of a few steps on the installed model, whose
checkpoint nav then loads offline) and the reranking evaluation's pure parts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "finetune"))

import loc_rerank as lr  # noqa: E402
import train_minilm as tm  # noqa: E402


def test_rrf_order_lifts_a_hit_both_legs_like_and_keeps_lexical_order_on_ties() -> None:
    # lexical order 0..3; the vector leg likes hit 2 best, then 0
    # 1/(10+3) + 1/(10+1) beats 1/(10+2) + 1/(10+3); 1/11 + 1/12 beats both
    assert lr.rrf_order(4, [0.5, 0.1, 0.9, 0.0], k=10) == [0, 2, 1, 3]
    # the vector leg agreeing with the lexical order changes nothing
    assert lr.rrf_order(4, [0.9, 0.8, 0.7, 0.6], k=10) == [0, 1, 2, 3]


def test_metrics_of_scores_files_and_definitions_in_the_given_order() -> None:
    inst = {
        "gold_files": ["b.py"],
        "gold_functions": ["b.py::g"],
        "hits": [
            {"path": "a.py", "start": 1, "end": 5, "fn": ["a.py::f"], "texts": []},
            {"path": "b.py", "start": 1, "end": 9, "fn": ["b.py::g"], "texts": []},
        ],
    }
    first = lr.metrics_of(inst, [0, 1])
    assert first["file@1"] == 0.0 and first["file@5"] == 1.0 and first["fn@5"] == 1.0
    assert lr.metrics_of(inst, [1, 0])["file@1"] == 1.0


def test_hit_texts_finds_the_chunk_a_nested_definition_sits_in(tmp_path: Path) -> None:
    from navigator.indexer import index_root
    from storage.db import Store

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "orders.py").write_text(
        "class Orders:\n    def create(self, customer):\n        return {'customer': customer}\n\n"
        "    def cancel(self, order):\n        order['cancelled'] = True\n        return order\n"
    )
    (tree / "other.py").write_text("def unrelated():\n    return 1\n")
    store = Store(tmp_path / "idx.db")
    try:
        index_root(tree, store)
        (cancel,) = [
            (int(a), int(b))
            for a, b, qn in store.conn.execute("SELECT start_line, end_line, qualified_name FROM symbols")
            if qn == "Orders.cancel"
        ]
        texts = lr.hit_texts(store, "orders.py", *cancel, 3)
        assert texts and any("def cancel" in t for t in texts)  # the method's lines are inside a chunk
        assert texts[0].startswith("orders.py")  # embedded as nav embeds a chunk: path header first
        assert lr.hit_texts(store, "other.py", 50, 60, 3) == []  # no chunk on those lines
    finally:
        store.close()


class _Encoder:
    """An encoder over fixed vectors per text (what holdout_mrr needs of a model)."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        v = np.array([self.table[t] for t in texts], dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_holdout_mrr_ranks_the_first_positive_among_the_repository_pool() -> None:
    rows = [
        {"id": "1", "repo": "r", "query": "q1", "positives": ["p1"], "negatives": ["n1"]},
        {"id": "2", "repo": "r", "query": "q2", "positives": ["p2"], "negatives": ["n1"]},
        {
            "id": "3",
            "repo": "s",
            "query": "q3",
            "positives": ["p3"],
            "negatives": ["p1"],
        },  # another repo's pool
    ]
    enc = _Encoder(
        {
            "q1": [1, 0, 0],
            "q2": [0, 1, 0],
            "q3": [0, 0, 1],
            "p1": [1, 0.1, 0],  # q1's best: rank 1
            "p2": [0.2, 0.5, 0],  # q2: n1 is closer -> rank 2
            "n1": [0, 1, 0.1],
            "p3": [0, 0, 1],
        }
    )
    assert tm.holdout_mrr(enc, rows, 8) == pytest.approx((1 + 0.5 + 1) / 3)
    sample = tm.eval_sample(rows * 3, 2, seed=0)
    assert {r["repo"] for r in sample} == {"r", "s"}  # spread over the repositories


def test_a_few_real_steps_save_a_checkpoint_nav_loads_offline(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from semantic.embed import SentenceTransformerEmbedder, default_model_path, load_embedder

    try:
        default_model_path()
    except Exception as exc:  # the default model's package is not installed here
        pytest.skip(str(exc))
    rows = []
    for i in range(10):
        rows.append(
            {
                "id": str(i),
                "repo": "held/r" if i >= 8 else "train/r",
                "split": "holdout" if i >= 8 else "train",
                "query": f"retry the erp call {i}",
                "positives": [f"m.py::retry_{i}\ndef retry_{i}(fn):\n    return fn()"],
                "negatives": [f"m.py::cancel_{i}\ndef cancel_{i}(order):\n    order.cancel()"],
            }
        )
    triples = tmp_path / "t.jsonl"
    triples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "ft"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "finetune" / "train_minilm.py"), "--triples", str(triples),
         "--out", str(out), "--batch", "4", "--max-steps", "2", "--eval-every", "1", "--eval-queries", "2",
         "--minutes", "5"],
        check=True, capture_output=True, text=True, timeout=600,
        env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
             "HOME": str(tmp_path),
             "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    info = json.loads((out / "nav_train.json").read_text())
    assert info["steps"] == 2 and info["stopped"] == "max steps"
    assert info["train_triples"] == 8 and info["holdout_repositories"] == ["held/r"]
    assert [h["step"] for h in info["history"]] == [0, 1, 2]
    emb = load_embedder(out)
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.dim == 384
    v = emb.embed_query("retry the erp call")
    assert v.shape == (384,) and float(np.linalg.norm(v)) == pytest.approx(1.0, abs=1e-4)
