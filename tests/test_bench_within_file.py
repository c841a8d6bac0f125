"""The issue-18 bench scripts against real parts: the within-file ranker's rows over a real index
are the pool and order of nav's own code view (tests/test_code_order.py tests the signals), and
semble's export writing each blob a snapshot has while
counting the ones it lacks (``git archive`` stopped at the first)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from billing_issue import BILLING, ISSUE  # noqa: E402

from bench.loc_full_bench import LEXICAL  # noqa: E402
from bench.within_file import FEATURES, instance_rows  # noqa: E402
from navigator.code_order import load_model  # noqa: E402
from navigator.indexer import index_root  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from storage.db import Store  # noqa: E402


def test_the_bench_rows_are_the_product_s_pool_and_order(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    """Parity by construction, checked: the rows a benchmark trains and scores on are the pool nav's
    code view orders, and the model's order of those rows is the code view nav answers."""
    root = make_repo(BILLING)
    store = Store(tmp_path / "idx.db")
    try:
        index_root(root, store)
        gold = "app/billing.py::validate_total"
        got = instance_rows(store, {"id": "x", "repo": "o/r", "query": ISSUE, "gold_functions": [gold]})
        answer = SemanticSearch(store).search(ISSUE, k=5, legs=LEXICAL, view="code")
    finally:
        store.close()
    assert [r["name"] for r in got["rows"] if r["y"]] == [gold]
    assert all(len(r["x"]) == len(FEATURES) for r in got["rows"])
    model = load_model()
    scored = sorted(got["rows"], key=lambda r: -model.score(dict(zip(FEATURES, r["x"], strict=True))))
    shown = [f"{h.path}::{h.symbol or '<module>'}" for h in answer.items]
    assert shown == [r["name"] for r in scored if r["name"] in shown][: len(shown)]
    assert shown[0] == gold  # the error's raiser, named by the frame that raised it
    assert got["nav"] and all("::" in n for n in got["nav"])
    assert got["gold_files"] == ["app/billing.py"] and "app/billing.py" in got["files"]


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_export_writes_what_the_snapshot_has_and_counts_what_it_lacks(tmp_path: Path) -> None:
    from bench.semble_corpora import write_tree

    work = tmp_path / "work"
    (work / "src" / "deep").mkdir(parents=True)
    (work / "src" / "a.py").write_text("A = 1\n")
    (work / "src" / "deep" / "b.py").write_bytes(b"B = '\xc3\xa9'\n")
    (work / "src" / "gone.bin").write_bytes(b"\0" * 100)
    (work / "outside.txt").write_text("not under src\n")
    os.symlink("/etc/passwd", work / "src" / "link")
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "c")
    sha = git(work, "rev-parse", "HEAD:src/gone.bin").strip()
    (work / ".git" / "objects" / sha[:2] / sha[2:]).unlink()  # a blob the snapshot lacks
    out = tmp_path / "out"
    written, missing = write_tree(work / ".git", "HEAD", ["src"], out)
    assert (written, missing) == (2, 1)
    assert (out / "src" / "a.py").read_text() == "A = 1\n"
    assert (out / "src" / "deep" / "b.py").read_bytes() == b"B = '\xc3\xa9'\n"
    assert not (out / "outside.txt").exists() and not (out / "src" / "link").exists()
    assert not (out / "src" / "gone.bin").exists()


def test_a_dump_cut_off_mid_write_gives_the_rows_it_has(tmp_path: Path) -> None:
    import gzip

    from bench.within_file import _read

    rows = [{"id": str(n), "rows": [{"x": [n]}]} for n in range(200)]
    whole = tmp_path / "whole.jsonl.gz"
    with gzip.open(whole, "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    assert _read(whole) == rows
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])  # a writer killed part way
    got = _read(cut)
    assert 0 < len(got) < len(rows) and got == rows[: len(got)]
