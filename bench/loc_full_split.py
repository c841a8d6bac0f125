"""The development/check split of the full-issue-text localization set (``../shared/bench/loc_full/``).

Fixed before any result on the set was seen: by instance, stratified by repository, seeded.
Per repository the instance ids are sorted, shuffled with ``random.Random(SEED)`` (one generator,
repositories in sorted order) and the first ``round(n * DEV_SHARE)`` are **development** (tune on
these, as often as you like); the rest are **check** (report on them, do not tune on them).
The split is committed as ``bench/loc_full_split.json``; this script rebuilds it from the
instances and fails if the committed one differs.

    python3 bench/loc_full_split.py --instances bench/corpora/loc_full/instances.jsonl          # verify
    python3 bench/loc_full_split.py --instances bench/corpora/loc_full/instances.jsonl --write  # (re)write

The trees: the search tool's ``fetch`` refuses django/django, matplotlib/matplotlib and
scikit-learn/scikit-learn (over its 500 MB cap), but public forks of them whose snapshots are
smaller hold every base commit of this set (same commit ids, so the same trees): ``FORKS``.
``--link-mirrors DIR`` makes DIR/OWNER+NAME/repo point at them (after checking that each
instance's base commit is there), a ``--mirror-root`` for ``../shared/bench/loc_full/build.py``.

Standard library only. ``split_of(id)`` gives an instance's part for other scripts.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

SEED = 18  # issue 18
DEV_SHARE = 0.4
SPLIT_FILE = Path(__file__).resolve().parent / "loc_full_split.json"
FORKS = {  # repository → a fetched fork holding all its base commits (checked 2026-12-01)
    "django/django": "apprent1c3/django",  # 226 MB snapshot, 114/114 base commits
    "matplotlib/matplotlib": "williamlus/matplotlib",  # 486 MB, 23/23
    "scikit-learn/scikit-learn": "Agent-Benchmarking/scikit-learn",  # 165 MB, 23/23
    "sympy/sympy": "sympy/sympy",  # the repository itself, 339 MB
    "gersteinlab/LocAgent": "gersteinlab/LocAgent",  # the labels' source
}


def make_split(
    rows: Iterable[dict[str, str]], seed: int = SEED, dev_share: float = DEV_SHARE
) -> dict[str, list[str]]:
    """``{"development": [...ids], "check": [...ids]}``, each sorted."""
    by_repo: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r["id"])
    rng = random.Random(seed)
    dev: list[str] = []
    check: list[str] = []
    for repo in sorted(by_repo):
        ids = sorted(set(by_repo[repo]))
        rng.shuffle(ids)
        n_dev = round(len(ids) * dev_share)
        dev += ids[:n_dev]
        check += ids[n_dev:]
    return {"development": sorted(dev), "check": sorted(check)}


def split_of(instance_id: str, split_file: Path = SPLIT_FILE) -> str:
    """``"development"`` or ``"check"``; a clear error for an id that is in neither."""
    split = json.loads(split_file.read_text())
    for part in ("development", "check"):
        if instance_id in split[part]:
            return part
    raise KeyError(f"{instance_id[:80]!r} is not an instance of the loc_full set ({split_file})")


def link_mirrors(dest: Path, mirror_root: Path, rows: list[dict[str, str]]) -> None:
    """``dest/OWNER+NAME/repo`` → the fork's fetched git dir; raises naming a missing base commit."""
    dest.mkdir(parents=True, exist_ok=True)
    for repo, fork in FORKS.items():
        git_dir = mirror_root / fork.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            raise SystemExit(f"no mirror of {fork} at {git_dir}: fetch github:{fork} first")
        for r in rows:
            if r["repo"] == repo:
                ok = subprocess.run(
                    ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{r['base_commit']}^{{commit}}"]
                )
                if ok.returncode != 0:
                    raise SystemExit(f"{fork} lacks {r['id']}'s base commit {r['base_commit'][:12]}")
        link = dest / repo.replace("/", "+")
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(git_dir.parent)
    print(f"{dest}: {', '.join(f'{r} → {f}' for r, f in FORKS.items())}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--instances", required=True, help="instances.jsonl written by ../shared/bench/loc_full/build.py"
    )
    ap.add_argument("--write", action="store_true", help=f"write {SPLIT_FILE.name} instead of checking it")
    ap.add_argument(
        "--link-mirrors", default="", help="make this folder a --mirror-root for build.py (forks)"
    )
    ap.add_argument("--mirror-root", default="/work/.mirror", help="where fetch put the OWNER+NAME/repo dirs")
    args = ap.parse_args(argv)
    if args.link_mirrors:  # before the build: base commits are checked when the instances exist
        rows = []
        if Path(args.instances).exists():
            rows = [
                json.loads(line) for line in Path(args.instances).read_text().splitlines() if line.strip()
            ]
        link_mirrors(Path(args.link_mirrors), Path(args.mirror_root), rows)
        return 0
    rows = [json.loads(line) for line in Path(args.instances).read_text().splitlines() if line.strip()]
    split = make_split(rows)
    repo_of = {r["id"]: r["repo"] for r in rows}
    counts = {part: {repo: sum(1 for i in ids if repo_of[i] == repo) for repo in sorted(set(repo_of.values()))}
              for part, ids in split.items()}  # fmt: skip
    doc = {
        "about": "loc_full (SWE-bench Lite, 4 repositories, full issue text): development = tune on it; "
        "check = report on it, never tune. Rebuild/verify: python3 bench/loc_full_split.py --instances ...",
        "seed": SEED,
        "dev_share": DEV_SHARE,
        "counts": counts,
        **split,
    }
    text = json.dumps(doc, indent=1) + "\n"
    if args.write:
        SPLIT_FILE.write_text(text)
        print(f"wrote {SPLIT_FILE}: {json.dumps(counts)}")
        return 0
    if not SPLIT_FILE.exists() or json.loads(SPLIT_FILE.read_text()) != doc:
        print(f"{SPLIT_FILE} differs from the split of {args.instances}; rewrite it with --write "
              "only if the instances changed on purpose", file=sys.stderr)  # fmt: skip
        return 1
    print(f"{SPLIT_FILE.name} matches: {json.dumps(counts)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
