"""bench/ranked_lists.py: the before/after comparison of ranked lists (issue 20's evidence)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import ranked_lists as rl  # noqa: E402

WORKSPACE = ROOT / "tests" / "workspaces" / "python"


def _rec(qid: str, items: list[list[Any]], *, view: str = "files", complete: bool = True) -> dict[str, Any]:
    return {
        "set": "semble",
        "repo": "r",
        "id": qid,
        "config": "lexical",
        "view": view,
        "k": 30,
        "query": f"query {qid}",
        "query_sha": qid,
        "complete": complete,
        "items": items,
    }


A1 = ["a.py", 1, 10, "f", 0.5]
B1 = ["b.py", 3, 8, "g", 0.25]
C1 = ["c.py", 2, 4, None, 0.125]


def _write(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join([json.dumps({"meta": {"commit": "x"}}), *map(json.dumps, recs)]) + "\n")
    return path


def _diff(tmp_path: Path, a: list[dict[str, Any]], b: list[dict[str, Any]]) -> rl.SetDiff:
    sets = rl.compare(rl.load(_write(tmp_path / "a.jsonl", a)), rl.load(_write(tmp_path / "b.jsonl", b)))
    return sets["semble"]


def test_identical_lists(tmp_path: Path) -> None:
    recs = [_rec("1", [A1, B1, C1]), _rec("1", [B1], view="code"), _rec("2", [])]
    d = _diff(tmp_path, recs, list(reversed(recs)))  # the order of the lines does not matter
    assert (d.compared, d.identical, d.clean) == (3, 3, True)
    assert rl.main(["--compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0


def test_one_rank_swapped(tmp_path: Path) -> None:
    d = _diff(
        tmp_path, [_rec("1", [A1, B1, C1]), _rec("2", [A1])], [_rec("1", [A1, C1, B1]), _rec("2", [A1])]
    )
    assert (d.compared, d.identical, len(d.differing), len(d.score_only)) == (2, 1, 1, 0)
    x = d.differing[0]
    assert x["rank"] == 2 and x["key"] == ("semble", "r", "1", "lexical", "files") and x["query"] == "query 1"
    assert x["a"] == B1 and x["b"] == C1 and x["a_top"] == [A1, B1, C1]
    assert "differs at rank 2" in rl.report({"semble": d})
    assert rl.main(["--compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 1


def test_a_shorter_list_differs_where_it_ends(tmp_path: Path) -> None:
    d = _diff(tmp_path, [_rec("1", [A1, B1])], [_rec("1", [A1])])
    assert [x["rank"] for x in d.differing] == [2]


def test_score_only_difference_is_told_apart(tmp_path: Path) -> None:
    d = _diff(tmp_path, [_rec("1", [A1, B1, C1])], [_rec("1", [A1, [*B1[:4], 0.2500001], C1])])
    assert (d.identical, len(d.differing), len(d.score_only)) == (0, 0, 1)
    assert d.score_only[0]["ranks"] == [2] and not d.clean


def test_completeness_and_missing_queries_count(tmp_path: Path) -> None:
    d = _diff(
        tmp_path,
        [_rec("1", [A1], complete=True), _rec("2", [A1])],
        [_rec("1", [A1], complete=False), _rec("3", [A1])],
    )
    assert [x["rank"] for x in d.differing] == [None]  # same items, but one answer says incomplete
    assert d.only_a == [("semble", "r", "2", "lexical", "files")] and d.only_b == [
        ("semble", "r", "3", "lexical", "files")
    ]


QUERIES = [("0", "create an order and compute its total"), ("1", "Order")]


def _dump(root: Path, db: Path, out: Path) -> Path:
    recs = list(rl.dump_root("semble", "python", root, db, QUERIES, rl.SEMBLE_CONFIGS, 30))
    return _write(out, recs)


def test_real_index_dumped_twice_is_identical_and_an_edit_shows(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(WORKSPACE, root)
    a = _dump(root, tmp_path / "idx" / "a.db", tmp_path / "a.jsonl")
    b = _dump(root, tmp_path / "idx" / "b.db", tmp_path / "b.jsonl")
    recs = rl.load(a)
    assert len(recs) == len(QUERIES) * len(rl.SEMBLE_CONFIGS) * 2
    assert all(r["items"] for r in recs.values() if r["config"] in ("lexical", "bm25"))
    d = rl.compare(recs, rl.load(b))["semble"]
    assert (d.compared, d.identical, d.clean) == (len(recs), len(recs), True)

    # A new definition that matches the query changes the lists, and the comparison says so.
    (root / "orders" / "zz_totals.py").write_text(
        "def compute_order_total(order):\n    '''create an order and compute its total'''\n    return sum(order)\n"
    )
    c = _dump(root, tmp_path / "idx" / "c.db", tmp_path / "c.jsonl")
    d = rl.compare(recs, rl.load(c))["semble"]
    assert d.differing and not d.clean
