"""Gather issue 19's ``nav grep`` figures into ``bench/results/grep_bench.json`` (key
``issue19``): the equality logs of :mod:`bench.grep_equality` (one or more workers per root),
the speed rows of :mod:`bench.grep_speed`, the index builds and the corpus description.

Usage::

    .venv/bin/python bench/grep_report.py --speed SPEED.json [--speed ...] --build BUILD.json \\
        --corpus CORPUS.json NAME=LOG[,LOG...] [NAME=...]

Prints the table of bench/README.md's issue 19 grep section.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO)]

from bench.grep_equality import summarize  # noqa: E402
from bench.harness.run import write_json  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="NAME=LOG[,LOG...]")
    ap.add_argument("--speed", type=Path, action="append", default=[])
    ap.add_argument("--build", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    equality = {}
    for spec in args.logs:
        name, _, logs = spec.partition("=")
        equality[name] = summarize([Path(x) for x in logs.split(",")])
    speed: dict[str, Any] = {}
    for path in args.speed:
        for row in json.loads(path.read_text(encoding="utf-8")):
            speed[Path(row["root"]).name] = row
    build = json.loads(args.build.read_text(encoding="utf-8"))
    out = REPO / "bench" / "results" / "grep_bench.json"
    kept = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    if isinstance(kept, list):  # the first runs' list, before this key
        kept = {"grep_bench": kept}
    entry = {
        "note": args.note,
        "corpus_mono10m": json.loads(args.corpus.read_text(encoding="utf-8")),
        "equality": equality,
        "speed": speed,
        "build": build,
    }
    write_json(out, {**kept, "issue19": entry})
    print(
        "| repository | patterns | differences | bounded | rg p50 | nav CLI p50 | CLI/rg (95% CI) | API p50 | MCP p50 | index MB / text MB | build s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, eq in equality.items():
        s = speed.get(name, {})
        b = build.get(name, {})
        cli, api, mcp = s.get("cli", {}), s.get("api", {}), s.get("mcp", {})
        ci = cli.get("ratio_ci95", ["-", "-"])
        print(
            f"| {name} | {eq['patterns']} | {eq['differences']} | {eq['bounded']} | {s.get('rg_p50_ms', '-')} ms "
            f"| {cli.get('p50_ms', '-')} ms | {cli.get('ratio_p50', '-')} ({ci[0]}–{ci[1]}) | {api.get('p50_ms', '-')} ms "
            f"| {mcp.get('p50_ms', '-')} ms | {b.get('db_bytes', 0) / 1e6:.0f} / {b.get('text_bytes', 0) / 1e6:.0f} "
            f"| {b.get('seconds', 0):.1f} |"
        )


if __name__ == "__main__":
    main()
