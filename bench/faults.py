"""One table of every injected fault: injected, answered honestly, recovered without a hand step, data lost.

Runs every scenario of every module in ``bench/fault_scenarios/`` (see its ``__init__`` for the protocol)
against the real parts, each in a fresh folder, and prints a Markdown table (``--json`` for the rows).

    .venv/bin/python bench/faults.py                 # every area
    .venv/bin/python bench/faults.py --area storage  # one area (repeatable)
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import fault_scenarios  # noqa: E402
from bench.fault_scenarios import FaultResult  # noqa: E402


def _modules(areas: list[str]) -> list[str]:
    names = sorted(m.name for m in pkgutil.iter_modules(fault_scenarios.__path__))
    return [n for n in names if not areas or n in areas]


def run(areas: list[str]) -> list[FaultResult]:
    rows: list[FaultResult] = []
    for name in _modules(areas):
        module = importlib.import_module(f"bench.fault_scenarios.{name}")
        for scenario in module.SCENARIOS:
            work = Path(tempfile.mkdtemp(prefix=f"nav-fault-{name}-"))
            t0 = time.monotonic()
            try:
                got = scenario(work)
            except Exception as exc:  # a scenario that breaks is a row of its own, never a lost table
                traceback.print_exc()
                got = [FaultResult(name, f"{scenario.__name__} (scenario failed)", 1, 0, 0, 0, f"{type(exc).__name__}: {exc}"[:200])]
            finally:
                shutil.rmtree(work, ignore_errors=True)
            print(f"[faults] {name}.{scenario.__name__}: {time.monotonic() - t0:.1f} s", file=sys.stderr)
            rows.extend(got)
    return rows


def table(rows: list[FaultResult]) -> str:
    out = [
        "| area | fault | injected | answered honestly | recovered without a hand step | data lost | note |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        out.append(f"| {r.area} | {r.fault} | {r.injected} | {r.honest} | {r.recovered} | {r.lost} | {r.note} |")
    tot = [sum(getattr(r, f) for r in rows) for f in ("injected", "honest", "recovered", "lost")]
    out.append(f"| **all** | {len(rows)} kinds | {tot[0]} | {tot[1]} | {tot[2]} | {tot[3]} | |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--area", action="append", default=[], help="run only this area (module name); repeatable")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = ap.parse_args()
    rows = run(args.area)
    print(json.dumps([asdict(r) for r in rows], indent=1) if args.json else table(rows))
    return 0 if all(r.lost == 0 and r.honest == r.injected for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
