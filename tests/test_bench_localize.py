"""The localization harness's baselines against a real index: an incremental update of the
baselines' FTS tables ranks exactly as a fresh build over the updated index (chunks deleted,
added, and changed in place under the same id), and which paths count as no source."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness.localize import CodeBM25, PlainBM25, non_source  # noqa: E402
from navigator.indexer import index_root  # noqa: E402
from storage.db import Store  # noqa: E402


def test_updated_baselines_rank_as_a_fresh_build(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    root = make_repo(
        {
            "a.py": "def alpha_beta():\n    return 1\n",
            "b.py": "def gamma(x):\n    return alpha(x)\n",
            "c.md": "alpha gamma docs\n",
        }
    )
    store = Store(tmp_path / "idx.db")
    index_root(root, store)
    kept = [PlainBM25(store.conn), CodeBM25(store.conn)]
    assert kept[0].search("docs gamma")  # c.md and b.py
    (root / "b.py").write_text("def delta(x):\n    return alpha_beta(x)\n")  # changed in place
    (root / "c.md").unlink()
    (root / "e.py").write_text("class AlphaBeta:\n    pass\n")
    index_root(root, store)
    for b in kept:
        b.update(store.conn)
    fresh = [PlainBM25(store.conn), CodeBM25(store.conn)]
    for query in ("alpha beta gamma delta", "AlphaBeta", "docs gamma", "delta"):
        for old, new in zip(kept, fresh, strict=True):
            assert old.search(query) == new.search(query), query
    assert kept[0].search("docs gamma") == []
    assert [p for p, _, _ in kept[1].search("AlphaBeta")][0] == "e.py"
    store.close()


def test_non_source_paths() -> None:
    for path in ("tests/test_x.py", "docs/conf.py", "CHANGES.rst", ".github/workflows/ci.yml", "setup.py",
                 "examples/demo.py", "pkg/static/app.js", "src/pkg/conftest.py"):  # fmt: skip
        assert non_source(path), path
    for path in ("django/db/models/query.py", "sympy/core/basic.py", "lib/matplotlib/axes/_base.py"):
        assert not non_source(path), path
