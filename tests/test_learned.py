"""The learned fusion (issue 18): the features fusion hands a ranker, the model file's scorers
(linear and trees, evaluated in numpy), and a ranker's scores ordering both views."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from navigator.indexer import index_root
from navigator.pipeline import Candidates, rank
from navigator.search import SemanticSearch
from semantic.analysis import query_terms
from semantic.fusion import ChunkMeta, fuse
from semantic.learned import CHUNK_FEATURES, FILE_FEATURES, ModelRanker, Table, load_ranker, rank_feature
from semantic.ranking import DEFAULT
from storage.db import Store


class Recorder:
    """Keeps each table and changes nothing."""

    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}

    def score(self, table: Table) -> Sequence[float] | None:
        self.tables[table.view] = table
        return None


META = {
    1: ChunkMeta(1, "pkg/orders.py", "create_order", 1),
    2: ChunkMeta(2, "pkg/orders.py", None, 40),
    3: ChunkMeta(3, "tests/test_orders.py", "test_create_order", 1),
    4: ChunkMeta(4, ".github/ISSUE_TEMPLATE/bug.md", None, 1),
    5: ChunkMeta(5, "pkg/billing.py", "Invoice.total", 10),
}
LEGS = {"bm25": [4, 1, 3, 2], "symbols": [1, 3], "prf": [5]}


def _table(view: str) -> Table:
    """The one table fusion hands the ranker in ``view`` (files: the files table, code: the chunks')."""
    rec = Recorder()
    config = dataclasses.replace(DEFAULT, ranker=rec)
    terms = query_terms("where is create_order called")
    fuse(LEGS, META, terms, path_leg=["pkg/billing.py"], limit=10, view=view, config=config)
    assert list(rec.tables) == ["files" if view == "files" else "chunks"]
    return next(iter(rec.tables.values()))


def _row(table: Table, key: str | int) -> dict[str, float]:
    return dict(zip(table.names, table.rows[table.keys.index(key)].tolist(), strict=True))


def test_file_features_are_what_fusion_saw() -> None:
    files = _table("files")
    assert files.names == FILE_FEATURES and set(files.keys) == {p.path for p in META.values()}
    orders = _row(files, "pkg/orders.py")
    assert orders["file_chunks"] == pytest.approx(math.log1p(2))
    assert orders["best_bm25"] == pytest.approx(rank_feature(2)) and orders["best_symbols"] == 1.0
    assert orders["best_ident"] == 0.0 and orders["any_def_match"] == 1.0
    assert orders["nav_file_rank"] == 0.0 and orders["nav_file_rel"] == 0.0  # nav's best file
    test = _row(files, "tests/test_orders.py")
    assert test["test"] == 1.0 and test["penalty"] == pytest.approx(math.log(DEFAULT.test_penalty))
    assert orders["test"] == 0.0 and orders["penalty"] == 0.0
    meta = _row(files, ".github/ISSUE_TEMPLATE/bug.md")
    assert meta["non_source"] == 1.0 and meta["prose"] == 1.0 and meta["penalty"] < math.log(0.3)
    billing = _row(files, "pkg/billing.py")
    assert billing["path_leg"] == 1.0 and billing["best_prf"] == 1.0 and billing["legs_hit"] == 2.0
    assert {_row(files, k)["q_words"] for k in files.keys} == {
        math.log1p(len(query_terms("where is create_order called").words))
    }


def test_chunk_features_carry_legs_evidence_and_their_file() -> None:
    chunks = _table("code")
    assert chunks.names == CHUNK_FEATURES and sorted(chunks.keys) == [1, 2, 3, 4, 5]
    one, two = _row(chunks, 1), _row(chunks, 2)
    assert one["leg_bm25"] == pytest.approx(rank_feature(2)) and one["leg_symbols"] == 1.0
    assert one["def_match"] == 1.0 and one["module_level"] == 0.0 and one["chunk_in_file"] == 0.0
    assert two["def_match"] == 0.0 and two["module_level"] == 1.0 and two["leg_symbols"] == 0.0
    assert two["chunk_in_file"] == pytest.approx(math.log1p(1))
    assert one["nav_file"] == two["nav_file"]  # the file's features ride on each of its chunks
    assert one["nav_code_rank"] == 0.0 and two["nav_code_rank"] > 0


def test_a_ranker_that_returns_none_changes_nothing() -> None:
    terms = query_terms("where is create_order called")
    for view in ("files", "code"):
        plain = fuse(LEGS, META, terms, path_leg=["pkg/billing.py"], limit=10, view=view)
        rec = fuse(LEGS, META, terms, path_leg=["pkg/billing.py"], limit=10, view=view,
                   config=dataclasses.replace(DEFAULT, ranker=Recorder()))  # fmt: skip
        assert [r.id for r in plain] == [r.id for r in rec]


def _linear(view: str, names: tuple[str, ...], weights: dict[str, float]) -> dict[str, object]:
    return {
        "kind": "linear",
        "features": list(names),
        "mean": [0.0] * len(names),
        "scale": [1.0] * len(names),
        "coef": [weights.get(n, 0.0) for n in names],
        "intercept": 0.5,
    }


def test_a_linear_model_orders_both_views() -> None:
    model = ModelRanker(
        {
            "format": "nav-ranker",
            "files": _linear("files", FILE_FEATURES, {"test": 5.0}),
            "chunks": _linear("chunks", CHUNK_FEATURES, {"module_level": 3.0}),
        }
    )
    terms = query_terms("where is create_order called")
    config = dataclasses.replace(DEFAULT, ranker=model)
    files = fuse(LEGS, META, terms, path_leg=["pkg/billing.py"], limit=10, config=config)
    assert files[0].path == "tests/test_orders.py"  # the model's, not nav's (which penalizes tests)
    assert fuse(LEGS, META, terms, path_leg=["pkg/billing.py"], limit=10)[0].path == "pkg/orders.py"
    code = fuse(LEGS, META, terms, path_leg=["pkg/billing.py"], limit=10, view="code", config=config)
    assert {r.id for r in code[:2]} == {2, 4}  # the module-level chunks
    assert all(0 < r.code_score <= 1 for r in code)


def test_linear_scores_are_the_formula() -> None:
    table = Table("files", ("a", "b"), ("x", "y"), np.array([[1.0, 2.0], [3.0, -1.0]]))
    spec = {"kind": "linear", "features": ["b", "a"], "mean": [1.0, 0.0], "scale": [2.0, 1.0],
            "coef": [1.0, -0.5], "intercept": 0.0}  # fmt: skip
    got = ModelRanker({"format": "nav-ranker", "files": spec}).score(table)
    raw = np.array([(2 - 1) / 2 * 1.0 - 0.5 * 1.0, (-1 - 1) / 2 * 1.0 - 0.5 * 3.0])
    assert got == pytest.approx(np.exp(raw - raw.max()).tolist())
    assert (
        ModelRanker({"format": "nav-ranker", "files": spec}).score(dataclasses.replace(table, view="chunks"))
        is None
    )


def test_trees_walk_their_splits() -> None:
    # tree 1: a <= 0.5 ? (b <= 1 ? 1 : 2) : 3 ; tree 2: a single leaf 10
    spec = {
        "kind": "trees",
        "features": ["a", "b"],
        "trees": [
            {"feature": [0, 1], "threshold": [0.5, 1.0], "left": [1, ~0], "right": [~2, ~1], "leaf": [1.0, 2.0, 3.0]},
            {"feature": [], "threshold": [], "left": [], "right": [], "leaf": [10.0]},
        ],
    }  # fmt: skip
    table = Table(
        "chunks", ("a", "b"), (1, 2, 3, 4), np.array([[0.0, 0.0], [0.5, 1.5], [0.9, 0.0], [0.5, 1.0]])
    )
    got = ModelRanker({"format": "nav-ranker", "chunks": spec}).score(table)
    raw = np.array([11.0, 12.0, 13.0, 11.0])
    assert got == pytest.approx(np.exp(raw - raw.max()).tolist())


def test_bad_models_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a nav ranker"):
        ModelRanker({"format": "other"})
    with pytest.raises(ValueError, match="kind must be linear or trees"):
        ModelRanker({"format": "nav-ranker", "files": {"kind": "forest", "features": []}})
    with pytest.raises(ValueError, match="no model file"):
        load_ranker("no-such-model")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="cannot read"):
        load_ranker(str(bad))
    needs = ModelRanker({"format": "nav-ranker", "files": _linear("files", ("unknown_feature",), {})})
    table = Table("files", ("a",), ("x",), np.array([[1.0]]))
    with pytest.raises(ValueError, match="unknown_feature"):
        needs.score(table)


def test_a_model_file_path_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(
        json.dumps({"format": "nav-ranker", "files": _linear("files", FILE_FEATURES, {"test": 5.0})})
    )
    terms = query_terms("where is create_order called")
    config = dataclasses.replace(DEFAULT, ranker=str(path))
    assert fuse(LEGS, META, terms, limit=10, config=config)[0].path == "tests/test_orders.py"


def test_a_model_file_ranks_a_real_index(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path) -> None:
    """End to end over a real SQLite index: the shipped ranking puts the source first; a model that
    prefers test files (files view) and module-level chunks (code view) reorders both views."""
    root = make_repo(
        {
            "pkg/orders.py": "def create_order(items):\n    return Order(items)\n\n\nclass Order:\n    pass\n",
            "tests/test_orders.py": "from pkg.orders import create_order\n\n\ndef test_create_order():\n"
            "    assert create_order([1])\n",
            "pkg/billing.py": "TOTAL = 0\n\n\ndef bill(order):\n    return create_order(order)\n",
        }
    )
    store = Store(tmp_path / "idx.db")
    try:
        index_root(root, store)
        model = tmp_path / "m.json"
        model.write_text(
            json.dumps(
                {
                    "format": "nav-ranker",
                    "files": _linear("files", FILE_FEATURES, {"test": 5.0}),
                    "chunks": _linear("chunks", CHUNK_FEATURES, {"test": 5.0, "def_match": -2.0}),
                }
            )
        )
        shipped = SemanticSearch(store)
        learned = SemanticSearch(
            store, config=dataclasses.replace(DEFAULT, ranker=str(model), code_order=None), share_with=shipped
        )
        legs = ("bm25", "symbols", "path")
        plain = shipped.search("where is create_order called", k=5, legs=legs)
        got = learned.search("where is create_order called", k=5, legs=legs)
        assert plain.items[0].path == "pkg/orders.py"
        assert got.items[0].path == "tests/test_orders.py"
        assert {h.path for h in got.items} == {h.path for h in plain.items}  # the same candidates
        code = learned.search("where is create_order called", k=5, legs=legs, view="code")
        assert code.items[0].path == "tests/test_orders.py" and code.complete
    finally:
        store.close()


def test_the_feedback_leg_is_seeded_by_the_hand_tuned_fusion() -> None:
    """A learned ranker orders the final candidates; the ``prf`` leg's seed stays nav's (the
    candidates the ranker was trained on were seeded so)."""
    terms = query_terms("where is create_order called")
    reverse = ModelRanker(
        {"format": "nav-ranker", "files": _linear("files", FILE_FEATURES, {"nav_file_rank": 5.0})}
    )
    seeds: dict[str, list[int]] = {}

    def feedback(best: Sequence[int], name: str) -> tuple[list[int], dict[int, ChunkMeta]]:
        seeds[name] = list(best)
        return [5], {}

    for name, config in (("nav", DEFAULT), ("learned", dataclasses.replace(DEFAULT, ranker=reverse))):
        cands = Candidates({k: list(v) for k, v in LEGS.items()}, dict(META), ["pkg/billing.py"])
        got = rank(cands, terms, k=5, config=config, feedback=lambda best, n=name: feedback(best, n))
        seeds[f"{name} first"] = [got[0].id]
    assert seeds["learned"] == seeds["nav"]
    assert seeds["learned first"] != seeds["nav first"]  # the ranker did order the final list
