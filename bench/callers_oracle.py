"""Callers as nav answers them from a server's references (``callers_from_references``) against
the same server's call hierarchy, the oracle, name by name, and what each costs.

    cp -r /work/corpora/pytest-dev-pytest-8.3.4 /tmp/pytest-co && (cd /tmp/pytest-co && nav index --no-embed)
    PYTHONPATH=$PWD python bench/callers_oracle.py /tmp/pytest-co --names 300

For a seeded draw of function, method and class names (each at least 4 characters): the call
sites of nav's answer (the precise, ``lsp``, hits) against those of the call hierarchy (nav's
answer with ``callers_from_references`` off: incoming calls, then its references check), as
(path, line, column) sets; and each answer's time, both on the same warm server, alternating
which goes first. Prints the totals, every name whose answers differ (up to 5 sites each), and
the median times.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import navigator.exact as exact  # noqa: E402
from navigator.api import Navigator  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--names", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    nav = Navigator(args.root, refresh=False)
    derived = exact._callers_from_references
    out: dict[str, Any] = {
        "root": str(args.root),
        "names": 0,
        "sites_ours": 0,
        "sites_oracle": 0,
        "differ": [],
    }
    times: dict[str, list[float]] = {"ours": [], "oracle": []}
    try:
        rows = nav.store.symbols(kinds=("function", "method", "class"), limit=1_000_000)
        names = sorted(
            {
                r.definition.name
                for r in rows
                if r.definition.name.isidentifier() and len(r.definition.name) > 3
            }
        )
        names = random.Random(args.seed).sample(names, min(args.names, len(names)))
        nav.callers(names[0])  # the server loaded
        for i, name in enumerate(names):
            got: dict[str, set[tuple[str, int, int]]] = {}
            for which in ("ours", "oracle") if i % 2 else ("oracle", "ours"):
                exact._callers_from_references = derived if which == "ours" else (lambda language: False)  # type: ignore[assignment]
                t0 = time.perf_counter()
                resp = nav.callers(name)
                times[which].append((time.perf_counter() - t0) * 1e3)
                got[which] = {(h.path, h.line, h.col) for h in resp.items if "lsp" in h.provenance}
            out["names"] += 1
            out["sites_ours"] += len(got["ours"])
            out["sites_oracle"] += len(got["oracle"])
            if got["ours"] != got["oracle"]:
                extra, missing = sorted(got["ours"] - got["oracle"]), sorted(got["oracle"] - got["ours"])
                out["differ"].append({"name": name, "only_ours": extra[:5], "only_oracle": missing[:5],
                                      "n_only_ours": len(extra), "n_only_oracle": len(missing)})  # fmt: skip
    finally:
        exact._callers_from_references = derived
        nav.close()
    out["first_ask_ms_p50"] = {k: round(statistics.median(v), 1) for k, v in times.items() if v}
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
