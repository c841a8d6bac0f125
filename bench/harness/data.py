"""The benchmark data of ``../shared/bench/`` (never committed here) and where the corpora live.

- semble's code-search benchmark: ``<shared>/bench/semble/repos.json`` and ``annotations/<repo>.json``
  (``$NAV_SEMBLE`` overrides the folder); the repositories exported under ``/work/corpora/semble/``
  (``$NAV_SEMBLE_CORPORA``; the earlier layout ``bench/corpora/`` is used when that is absent).
- issue localization: the instances built by ``<shared>/bench/loc/`` into ``/work/corpora/loc/``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO = BENCH_DIR.parent


def _semble_dir() -> Path:
    found = Path(os.environ.get("NAV_SEMBLE", REPO.parent / "shared" / "bench" / "semble"))
    return found if found.exists() else Path("/work/shared/bench/semble")


def _semble_corpora() -> Path:
    found = Path(os.environ.get("NAV_SEMBLE_CORPORA", "/work/corpora/semble"))
    if not found.exists() and (BENCH_DIR / "corpora").exists():
        return BENCH_DIR / "corpora"  # the earlier layout: bench/corpora/<name>/
    return found


SEMBLE = _semble_dir()
"""semble's benchmark: ``repos.json`` and ``annotations/``."""
SEMBLE_CORPORA = _semble_corpora()
"""Where each semble repository's pinned revision is exported, ``<SEMBLE_CORPORA>/<name>/``."""
LOC = Path("/work/corpora/loc")
"""Issue localization: ``instances.jsonl``, ``trees/OWNER-NAME``, ``idx/``."""


def semble_repos(bench: Path = SEMBLE) -> list[dict[str, Any]]:
    """The repositories of semble's benchmark (name, language, revision, benchmark_root ...)."""
    repos: list[dict[str, Any]] = json.loads((bench / "repos.json").read_text())
    return repos


def semble_queries(name: str, bench: Path = SEMBLE) -> list[dict[str, Any]]:
    """One repository's annotated queries: query, category, relevant, secondary."""
    queries: list[dict[str, Any]] = json.loads((bench / "annotations" / f"{name}.json").read_text())
    return queries


def semble_targets(query: dict[str, Any]) -> list[Any]:
    """What counts as relevant for one query: its relevant targets, then its secondary ones."""
    return list(query["relevant"]) + list(query.get("secondary", []))


def jsonl(path: Path) -> list[dict[str, Any]]:
    """The objects of a JSON-lines file (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def loc_instances(loc: Path = LOC) -> list[dict[str, Any]]:
    """The issue-localization instances: id, repo, base_commit, query, gold_files, gold_functions."""
    return jsonl(loc / "instances.jsonl")
