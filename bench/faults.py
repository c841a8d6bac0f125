"""One table of every injected fault: injected, answered honestly, recovered without a hand step, data lost.

Runs every scenario of every module in ``bench/fault_scenarios/`` (see its ``__init__`` for the protocol)
against the real parts, each in a fresh folder, and prints a Markdown table (``--json`` for the rows).
The fault parts of other benchmarks run here too: area ``frames`` is ``bench/fuzz_frames.py``, short.

    .venv/bin/python -m bench.faults                 # every area (or: .venv/bin/python bench/faults.py)
    .venv/bin/python -m bench.faults --area storage  # one area (repeatable)
    .venv/bin/python -m bench.faults --list          # the areas and their scenarios, nothing run
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
from bench.fault_scenarios import FaultResult, Scenario  # noqa: E402


def _modules(areas: list[str]) -> list[str]:
    names = sorted(m.name for m in pkgutil.iter_modules(fault_scenarios.__path__))
    return [n for n in names if not areas or n in areas]


def scenarios(areas: list[str]) -> list[tuple[str, Scenario]]:
    """(area, scenario) of every area asked (every area when none is), in the order they run."""
    known = _modules([])
    unknown = sorted(set(areas) - set(known))
    if unknown:
        raise SystemExit(f"--area {', '.join(unknown)}: no such area (areas: {', '.join(known)})")
    found: list[tuple[str, Scenario]] = []
    for name in _modules(areas):
        module = importlib.import_module(f"bench.fault_scenarios.{name}")
        found.extend((name, scenario) for scenario in module.SCENARIOS)
    return found


def listing(found: list[tuple[str, Scenario]]) -> str:
    lines = []
    for area, scenario in found:
        doc = (scenario.__doc__ or "").strip().splitlines()
        lines.append(f"{area:14} {scenario.__name__:32} {doc[0] if doc else ''}".rstrip())
    lines.append(f"{len(found)} scenarios in {len({a for a, _ in found})} areas")
    return "\n".join(lines)


def run(areas: list[str]) -> list[FaultResult]:
    rows: list[FaultResult] = []
    for name, scenario in scenarios(areas):
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
    ap.add_argument("--list", action="store_true", help="list the areas and scenarios; run nothing")
    args = ap.parse_args()
    if args.list:
        print(listing(scenarios(args.area)))
        return 0
    rows = run(args.area)
    print(json.dumps([asdict(r) for r in rows], indent=1) if args.json else table(rows))
    return 0 if all(r.lost == 0 and r.honest == r.injected for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
