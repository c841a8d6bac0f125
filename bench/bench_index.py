"""Benchmark: cold index, one-file re-index and peak memory on real repositories.

Usage::

    .venv/bin/python bench/bench_index.py [--runs 3] CORPUS_DIR ...

Each measurement runs in a fresh subprocess (so peak RSS is that run's own). The
baseline, measured in the same run, is the I/O floor: walk the tree and read and
hash every file, with no parsing. Corpora are PyPI source distributions unpacked
under ``bench/corpora/`` (never committed), e.g.::

    pip download --no-deps --no-binary :all: requests==2.32.3 pytest==8.3.4 django==5.1.4 -d bench/corpora/sdist
    for f in bench/corpora/sdist/*.tar.gz; do tar xzf "$f" -C bench/corpora; done
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness.run import write_json  # noqa: E402

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time, hashlib, shutil
    from pathlib import Path
    sys.path.insert(0, {repo!r})
    from navigator.api import Navigator
    from navigator.walk import walk
    mode, root, idx = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    out = {{}}
    if mode == "baseline":
        t = time.perf_counter()
        files = walk(root).files
        for f in files:
            hashlib.blake2b(open(f.abspath, "rb").read(), digest_size=16).hexdigest()
        out["seconds"] = time.perf_counter() - t
    elif mode == "cold":
        nav = Navigator(root, index_dir=idx)
        t = time.perf_counter()
        r = nav.index()
        out["seconds"] = time.perf_counter() - t
        out.update(files=r.files, symbols=r.symbols, chunks=r.chunks)
        out["lines"] = nav.store.conn.execute("SELECT sum(lines) FROM files").fetchone()[0]
        out["refs"] = nav.store.stats().refs
    elif mode == "edit":
        nav = Navigator(root, index_dir=idx)
        target = Path(sys.argv[4])
        times = []
        for i in range(5):
            with open(target, "a") as fh:
                fh.write(f"\\n\\ndef bench_added_{{i}}():\\n    return {{i}}\\n")
            t = time.perf_counter()
            r = nav.index()
            times.append(time.perf_counter() - t)
            assert r.updated == (target.relative_to(root).as_posix(),), r.updated
        out["seconds"] = sorted(times)[len(times) // 2]
        t = time.perf_counter()
        nav.index()
        out["noop_seconds"] = time.perf_counter() - t
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out["peak_rss_mb"] = round(max(self_kb, child_kb) / 1024, 1)
    print(json.dumps(out))
    """
).format(repo=str(REPO))


def run(mode: str, root: Path, idx: Path, *extra: str) -> dict[str, float]:
    res = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(root), str(idx), *extra],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def pick_edit_target(root: Path) -> Path:
    files = sorted(p for p in root.rglob("*.py") if p.stat().st_size > 2000 and ".nav" not in p.parts)
    return files[len(files) // 2]


def bench(root: Path, runs: int) -> dict[str, object]:
    base, cold, edit = [], [], []
    last: dict[str, float] = {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            base.append(run("baseline", root, Path(tmp))["seconds"])
            last = run("cold", root, Path(tmp))
            cold.append(last["seconds"])
            work = Path(tmp) / "tree"
            # edits go to a copy, never to the corpus
            subprocess.run(["cp", "-r", str(root), str(work)], check=True)
            run("cold", work, Path(tmp) / "idx2")
            e = run("edit", work, Path(tmp) / "idx2", str(pick_edit_target(work)))
            edit.append(e["seconds"])
            last["noop_seconds"] = e["noop_seconds"]
            last["edit_peak_rss_mb"] = e["peak_rss_mb"]
    med = statistics.median(cold)
    return {
        "corpus": root.name,
        "files": last["files"],
        "lines": last["lines"],
        "symbols": last["symbols"],
        "chunks": last["chunks"],
        "refs": last["refs"],
        "cold_s_median": round(med, 2),
        "cold_s_all": [round(x, 2) for x in cold],
        "baseline_read_hash_s": round(statistics.median(base), 2),
        "ratio_vs_baseline": round(med / statistics.median(base), 1),
        "lines_per_s": int(last["lines"] / med),
        "symbols_per_s": int(last["symbols"] / med),
        "chunks_per_s": int(last["chunks"] / med),
        "one_file_reindex_s_median": round(statistics.median(edit), 3),
        "noop_reindex_s": round(last["noop_seconds"], 3),
        "peak_rss_mb": last["peak_rss_mb"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="+", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "index.json")
    args = ap.parse_args()
    rows = []
    for root in args.corpora:
        row = bench(root.resolve(), args.runs)
        print(json.dumps(row), flush=True)
        rows.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, rows, indent=2)
    print()
    print("| corpus | files | lines | symbols | chunks | cold index (median) | read+hash baseline | "
          "lines/s | symbols/s | chunks/s | 1-file re-index | no-op | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['corpus']} | {r['files']} | {r['lines']} | {r['symbols']} | {r['chunks']} | "
            f"{r['cold_s_median']} s | {r['baseline_read_hash_s']} s (×{r['ratio_vs_baseline']}) | "
            f"{r['lines_per_s']} | {r['symbols_per_s']} | {r['chunks_per_s']} | "
            f"{r['one_file_reindex_s_median']} s | {r['noop_reindex_s']} s | {r['peak_rss_mb']} MB |"
        )


if __name__ == "__main__":
    main()
