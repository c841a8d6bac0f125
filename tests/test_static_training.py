"""bench/static: training triples from a real git history (nav's chunker, BM25 hard negatives) and
the static model's contrastive fine-tune, end to end on a tiny model built from MiniLM's tokenizer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "static"))

import training_data as td  # noqa: E402


def _function(name: str, args: str, body: str) -> str:
    """A function long enough that nav's chunker gives it a chunk of its own."""
    pad = "".join(f"    step_{k} = {k} * 2  # bookkeeping line {k} of {name}\n" for k in range(30))
    return f"def {name}({args}):\n{pad}{body}\n\n\n"


ORDERS_V1 = (
    _function(
        "create_sales_order",
        "customer, items",
        "    return {'customer': customer, 'order_total': sum(items)}",
    )
    + _function("cancel_order", "order", "    order['cancelled'] = True\n    return order")
    + _function("retry_erp_call", "fn, attempts=3", "    for _ in range(attempts):\n        return fn()")
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_words_split_identifiers_and_drop_stopwords() -> None:
    assert td.words("parseHTTPResponse of the create_sales_order") == [
        "parse",
        "http",
        "response",
        "create",
        "sales",
        "order",
    ]


def test_bm25_pool_ranks_lexical_matches_and_skips_positives() -> None:
    pool = td.Pool()
    a = pool.add("a.py::retry", "def retry_erp_call(): retry the erp call")
    b = pool.add("a.py::cancel", "def cancel_order(): cancel")
    c = pool.add("b.py::erp", "erp client call helper")
    assert pool.add("a.py::retry", "def retry_erp_call(): retry the erp call") == a  # same text once
    assert pool.rank("retry the ERP call", 3, set(), set())[0] == a
    ranked = pool.rank("retry the ERP call", 3, {a}, set())
    assert a not in ranked and ranked[0] == c and b not in ranked  # no shared word: not ranked
    assert pool.rank("erp call", 3, set(), {"b.py::erp"}) == [a]  # same path::symbol as a positive


def test_repo_triples_from_a_real_history(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    git(work, "init", "-q")
    git(work, "config", "user.email", "t@example.com")
    git(work, "config", "user.name", "t")
    (work / "orders.py").write_text(ORDERS_V1)
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "orders")
    parent = git(work, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    (mirrors / "acme+shop").mkdir(parents=True)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(mirrors / "acme+shop" / "repo")], check=True
    )
    pair = {
        "id": "acme/shop@1",
        "repo": "acme/shop",
        "language": "python",
        "parent": parent,
        "query": "retry the ERP call when the order total fails",
        "positive_functions": ["orders.py::retry_erp_call", "orders.py::<module>"],
    }
    missing = {**pair, "id": "acme/shop@2", "positive_functions": ["gone.py::f"]}
    rows = td.repo_triples("acme/shop", [pair, missing], mirrors, negatives=3)
    assert [r["id"] for r in rows] == ["acme/shop@1"]  # a pair whose files are gone gives no triple
    (row,) = rows
    assert row["positives"] and all("retry_erp_call" in p for p in row["positives"])
    assert all("orders.py::" in p.split("\n", 1)[0] for p in row["positives"])  # nav's embedding text
    assert all("def retry_erp_call" not in n for n in row["negatives"])
    assert any("create_sales_order" in n for n in row["negatives"])  # shares "order", "total"


def _tiny_model(tmp_path: Path) -> Path:
    model2vec = pytest.importorskip("model2vec")
    from tokenizers import Tokenizer

    from semantic.embed import default_model_path

    tok_file = default_model_path() / "tokenizer.json"
    if not tok_file.exists():
        pytest.skip("the default model's tokenizer is not installed")
    tok = Tokenizer.from_file(str(tok_file))
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(tok.get_vocab_size(), 16)).astype(np.float32)
    out = tmp_path / "tiny-m2v"
    model2vec.StaticModel(
        vectors=vectors, tokenizer=tok, config={"model_type": "model2vec"}, normalize=True
    ).save_pretrained(str(out))
    return out


def test_fine_tune_moves_queries_to_their_code_and_loads_in_nav(tmp_path: Path) -> None:
    base = _tiny_model(tmp_path)
    # queries and their code share no word: only training can tie them together
    topics = [
        ("retry erp call", "backoff upstream"), ("parse invoice date", "ledger timestamp"),
        ("render template cache", "jinja memo"), ("hash password salt", "bcrypt digest"),
        ("sort queue priority", "heap scheduler"), ("resize image thumbnail", "pillow scale"),
    ]  # fmt: skip
    rows = []
    for i in range(24):
        words, code = topics[i % 6]
        other = topics[(i + 1) % 6][1]
        held = i >= 18
        rows.append(
            {
                "id": str(i),
                "repo": "held/r" if held else "train/r",
                "split": "holdout" if held else "train",
                "query": f"{'bug in' if held else 'fix'} {words}",
                "positives": [f"m.py::{code.replace(' ', '_')}\n\ndef {code.replace(' ', '_')}(): {code}"],
                "negatives": [f"m.py::{other.replace(' ', '_')}\n\ndef {other.replace(' ', '_')}(): {other}"],
            }
        )
    triples = tmp_path / "t.jsonl"
    triples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "ft"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "static" / "train.py"), "--base", str(base), "--triples", str(triples),
         "--out", str(out), "--batch", "6", "--epochs", "30", "--eval-every", "3", "--patience", "50", "--lr", "0.05"],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    info = json.loads((out / "nav_train.json").read_text())
    assert info["train_triples"] == 18 and info["holdout_triples"] == 6
    assert info["best_holdout_mrr"] > info["start_holdout_mrr"]  # held-out queries rank their code higher

    from semantic.embed import StaticEmbedder, load_embedder

    emb = load_embedder(out)
    assert isinstance(emb, StaticEmbedder) and emb.dim == 16
    q = emb.embed_query("retry erp call")
    docs = emb.embed_documents(
        [
            "m.py::backoff_upstream\n\ndef backoff_upstream(): backoff upstream",
            "m.py::bcrypt_digest\n\ndef bcrypt_digest(): bcrypt digest",
        ]
    )
    assert float(docs[0] @ q) > float(docs[1] @ q)


def _semble_result(ndcg: dict[str, list[float]], embed_s: float) -> dict[str, object]:
    queries = [f"q{i}" for i in range(len(ndcg["fused"]))]
    return {
        "repos": [
            {
                "repo": "flask",
                "embedded": 100,
                "embed_s": embed_s,
                "p50_ms": 5.0,
                "per_query": {
                    cfg: [{"query": q, "ndcg": v} for q, v in zip(queries, vals, strict=True)]
                    for cfg, vals in ndcg.items()
                },
            }
        ]
    }


def test_compare_semble_pairs_models_per_query_and_refuses_other_repositories() -> None:
    import compare_semble as cs

    a = _semble_result({"fused": [0.5, 1.0, 0.0], "vector": [0.2, 0.4, 0.0], "lexical": [0.5, 0.5, 0.5]}, 1.0)
    b = _semble_result(
        {"fused": [1.0, 1.0, 0.3], "vector": [0.2, 0.4, 0.3], "lexical": [0.5, 0.5, 0.5]}, 10.0
    )
    out = cs.compare({"a": a, "b": b}, ["fused", "vector", "lexical"])
    assert out["paired"]["fused: b − a"][0] == pytest.approx((0.5 + 0.0 + 0.3) / 3, abs=1e-4)
    assert out["paired"]["vector: b − a"][0] == pytest.approx(0.1, abs=1e-4)
    assert out["paired"]["a: fused − lexical"][0] == pytest.approx(0.0, abs=1e-4)
    assert out["cost"]["b"]["s_per_1000_chunks"] == pytest.approx(100.0)
    other = _semble_result(
        {"fused": [1.0, 1.0, 0.3], "vector": [0.2, 0.4, 0.3], "lexical": [0.5, 0.5, 0.5]}, 1.0
    )
    other["repos"][0]["repo"] = "click"  # type: ignore[index]
    with pytest.raises(SystemExit, match="click"):
        cs.compare({"a": a, "c": other}, ["fused"])
