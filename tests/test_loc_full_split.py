"""bench/loc_full_split.py: the split is a partition, stratified by repository, and fixed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import loc_full_split as lfs  # noqa: E402

ROWS = [{"id": f"{r}-{i}", "repo": r} for r, n in (("a/a", 10), ("b/b", 5), ("c/c", 1)) for i in range(n)]


def test_split_is_a_seeded_stratified_partition() -> None:
    split = lfs.make_split(ROWS)
    dev, check = set(split["development"]), set(split["check"])
    assert not dev & check and dev | check == {r["id"] for r in ROWS}
    assert sum(i.startswith("a/a") for i in dev) == 4 and sum(i.startswith("b/b") for i in dev) == 2
    assert lfs.make_split(list(reversed(ROWS))) == split  # the input's order does not matter
    assert lfs.make_split(ROWS, seed=1) != split


def test_committed_split_and_lookup() -> None:
    doc = json.loads(lfs.SPLIT_FILE.read_text())
    assert len(doc["development"]) == 95 and len(doc["check"]) == 142
    assert not set(doc["development"]) & set(doc["check"])
    assert lfs.split_of(doc["check"][0]) == "check"
    with pytest.raises(KeyError, match="not an instance"):
        lfs.split_of("django__django-0")
