"""Implementations that nav answers without the server (``nothing_overrides``: no class of the
index declares the method's name again) against the server's own answer, the oracle, method by
method, and what each costs.

    PYTHONPATH=$PWD python bench/impl_oracle.py /tmp/pytest-co --names 300

For a seeded draw of method (or, ``--kind class``, class) names: whether nav skipped the server, the server's answer with the
shortcut off (precise hits), and both times (alternating which goes first). A skipped method
whose server answer is not empty is a difference; every one is printed.
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
    ap.add_argument("--kind", default="method", choices=("method", "class"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    nav = Navigator(args.root, refresh=False)
    shortcut, classes = exact.nothing_overrides, exact.nothing_subclasses
    out: dict[str, Any] = {"root": str(args.root), "names": 0, "skipped": 0, "asked": 0, "differ": []}
    times: dict[str, list[float]] = {"ours_skipped": [], "server_where_skipped": [], "ours_asked": []}
    try:
        rows = nav.store.symbols(kinds=(args.kind,), limit=1_000_000)
        names = sorted({r.definition.qualified_name for r in rows if len(r.definition.name) > 3})
        names = random.Random(args.seed).sample(names, min(args.names, len(names)))
        nav.implementations(names[0])  # the server loaded
        for i, name in enumerate(names):
            got: dict[str, Any] = {}
            for which in ("ours", "server") if i % 2 else ("server", "ours"):
                exact.nothing_overrides = shortcut if which == "ours" else (lambda files, target: False)  # type: ignore[assignment]
                exact.nothing_subclasses = classes if which == "ours" else (lambda files, target: False)  # type: ignore[assignment]
                t0 = time.perf_counter()
                resp = nav.implementations(name)
                got[which + "_ms"] = (time.perf_counter() - t0) * 1e3
                got[which] = sorted((h.path, h.line, h.col) for h in resp.items if "lsp" in h.provenance)
                got[which + "_skipped"] = any("the server was not asked" in n for n in resp.notes)
            out["names"] += 1
            if got["ours_skipped"]:
                out["skipped"] += 1
                times["ours_skipped"].append(got["ours_ms"])
                times["server_where_skipped"].append(got["server_ms"])
                if got["server"]:
                    out["differ"].append({"name": name, "server": got["server"][:5]})
            else:
                out["asked"] += 1
                times["ours_asked"].append(got["ours_ms"])
    finally:
        exact.nothing_overrides, exact.nothing_subclasses = shortcut, classes
        nav.close()
    out["ms_p50"] = {k: round(statistics.median(v), 1) for k, v in times.items() if v}
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
