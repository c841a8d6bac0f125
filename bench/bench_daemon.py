"""Benchmark: end-to-end CLI latency with a warm daemon, beside ripgrep, in the same run.

Usage::

    .venv/bin/python bench/bench_daemon.py [--runs 20] [--refs-only] CORPUS NAME "SEARCH TEXT" [...]

For each corpus (indexed into a temporary copy, so the corpus is never touched):

- wall time of a fresh ``nav refs NAME``, ``nav def NAME``, ``nav search TEXT`` and
  ``nav find NAME`` process, each talking to the warm daemon (p50 / p90 over ``--runs``);
- wall time of ``rg -w NAME`` over the same tree, measured interleaved with nav's runs;
- save-to-visible: append a new function to a file, then ask the daemon until the
  symbol is found (median of 5);
- the daemon's own peak RSS (language servers and their memory excluded);
- ``refs_over_rg``: p50 of ``nav refs`` over p50 of ``rg -w``, and the median of the paired
  per-run ratios (each ``nav refs`` beside the ``rg`` run just before it).

nav is run as the ``nav`` console script runs it (``python -c "from navigator.frontends.entry
import run; run()"``, which is what pip's generated script does; ``python -m`` would add runpy's
imports). ``--refs-only``: no embedding, no ``search``/``find``, no save-to-visible — just
``rg``, ``nav refs`` and ``nav def`` (minutes, not the model's load).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness.run import timed_ms as timed  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import percentile as pct  # noqa: E402
from navigator.frontends.client import DaemonClient  # noqa: E402

# what the `nav` console script runs (pip's script: import run, call it)
NAV = [sys.executable, "-c", "import sys; from navigator.frontends.entry import run; sys.exit(run())"]


def bench(corpus: Path, name: str, text: str, runs: int, refs_only: bool = False) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp(prefix="nav-bench-"))
    root = tmp / corpus.name
    shutil.copytree(corpus, root, ignore=shutil.ignore_patterns(".nav"))
    env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}
    env["PYTHONPATH"] = str(REPO)
    subprocess.run([*NAV, "-C", str(root), "index", "--no-embed"], env=env, check=True, capture_output=True)
    if not refs_only:
        subprocess.run([*NAV, "-C", str(root), "index", "--embed"], env=env, check=True, capture_output=True)
    client = DaemonClient(root)
    try:
        client.connect()
        for _ in range(2):  # warm: language server up, model loaded
            subprocess.run([*NAV, "-C", str(root), "refs", name], env=env, capture_output=True)
            if not refs_only:
                subprocess.run([*NAV, "-C", str(root), "search", text], env=env, capture_output=True)
        kinds = ["rg", "refs", "def"] if refs_only else ["rg", "refs", "def", "search", "find"]
        times: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(runs):
            times["rg"].append(timed(["rg", "-w", name, "."], root, env))
            times["refs"].append(timed([*NAV, "-C", str(root), "refs", name], root, env))
            times["def"].append(timed([*NAV, "-C", str(root), "def", name], root, env))
            if not refs_only:
                times["search"].append(timed([*NAV, "-C", str(root), "search", text], root, env))
                times["find"].append(timed([*NAV, "-C", str(root), "find", name], root, env))
        visible: list[float] = []
        target = sorted(p for p in root.rglob("*.py") if ".nav" not in p.parts)[0]
        for i in range(0 if refs_only else 5):
            fn = f"bench_fresh_symbol_{i}_{int(time.time() * 1000)}"
            t = time.perf_counter()
            with open(target, "a") as fh:
                fh.write(f"\n\ndef {fn}():\n    return {i}\n")
            while True:
                try:
                    client.definitions(fn)
                    break
                except Exception:
                    if time.perf_counter() - t > 10:
                        raise
                    time.sleep(0.005)  # polling the answer is the measurement
            visible.append((time.perf_counter() - t) * 1e3)
        info = client.daemon_status()
    finally:
        client.stop()
        client.close()
        shutil.rmtree(tmp, ignore_errors=True)
    row: dict[str, object] = {"corpus": corpus.name, "name": name, "search": text}
    for k, xs in times.items():
        row[f"{k}_p50_ms"] = round(statistics.median(xs), 1)
        row[f"{k}_p90_ms"] = round(pct(xs, 0.9), 1)
    row["refs_over_rg"] = round(statistics.median(times["refs"]) / statistics.median(times["rg"]), 2)
    row["refs_over_rg_paired_median"] = round(
        statistics.median(r / g for r, g in zip(times["refs"], times["rg"], strict=True)), 2
    )
    row["save_to_visible_ms_median"] = round(statistics.median(visible), 1) if visible else None
    row["daemon_rss_mb"] = info["rss_mb"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("triples", nargs="+", help="CORPUS NAME TEXT, repeated")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--refs-only", action="store_true", help="rg, nav refs and nav def only; no model")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "daemon.json")
    args = ap.parse_args()
    if len(args.triples) % 3:
        ap.error("give CORPUS NAME TEXT triples")
    rows = []
    for i in range(0, len(args.triples), 3):
        corpus, name, text = Path(args.triples[i]), args.triples[i + 1], args.triples[i + 2]
        row = bench(corpus.resolve(), name, text, args.runs, args.refs_only)
        print(json.dumps(row), flush=True)
        rows.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, rows, indent=2)
    print(
        "\n| corpus | rg -w (p50/p90) | nav refs | refs / rg (p50; paired) | nav def | nav search | nav find "
        "| save→visible | daemon RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['corpus']} | {_pp(r, 'rg')} | {_pp(r, 'refs')} | {r['refs_over_rg']}× ; "
            f"{r['refs_over_rg_paired_median']}× | {_pp(r, 'def')} | {_pp(r, 'search')} | {_pp(r, 'find')} | "
            f"{r['save_to_visible_ms_median']} ms | {r['daemon_rss_mb']} MB |"
        )


def _pp(row: dict[str, object], kind: str) -> str:
    if f"{kind}_p50_ms" not in row:
        return "-"
    return f"{row[kind + '_p50_ms']} / {row[kind + '_p90_ms']} ms"


if __name__ == "__main__":
    main()
