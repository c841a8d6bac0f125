"""Where a first ask's time goes: the language server's requests against nav's own work, per verb,
in-process (a warm :class:`navigator.api.Navigator`), each verb on names never asked before.

    cp -r /work/corpora/pytest-dev-pytest-8.3.4 /tmp/pytest-st && (cd /tmp/pytest-st && nav index --no-embed)
    PYTHONPATH=$PWD python bench/server_time.py /tmp/pytest-st --names 40 --verbs callers implementations references

Every LSP request the session sends is timed (``ServerSession.request``); "nav" is the verb's
wall time minus its requests'. Names: functions, methods and classes defined once (seeded draw,
as ``bench_fastpath.py --first-ask``), a different set per verb, after one warm-up question.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_fastpath import _unasked_names  # noqa: E402
from lsp import session as lsp_session  # noqa: E402
from navigator.api import Navigator  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--names", type=int, default=40)
    ap.add_argument("--verbs", nargs="+", default=["references", "callers", "callees", "implementations"])
    ap.add_argument("--warm", default="getfixturevalue")
    args = ap.parse_args()
    requests: list[tuple[str, float]] = []
    original = lsp_session.ServerSession.request

    async def timed(self: Any, method: str, params: Any, *, timeout_s: float) -> Any:
        t0 = time.perf_counter()
        try:
            return await original(self, method, params, timeout_s=timeout_s)
        finally:
            requests.append((method, (time.perf_counter() - t0) * 1e3))

    lsp_session.ServerSession.request = timed  # type: ignore[method-assign]
    names = _unasked_names(args.root, args.names * len(args.verbs), args.warm)
    nav = Navigator(args.root, refresh=False)
    out: dict[str, Any] = {"root": str(args.root), "names_per_verb": args.names}
    try:
        nav.references(args.warm)
        for v, verb in enumerate(args.verbs):
            per: dict[str, list[float]] = {}
            for name in names[v * args.names : (v + 1) * args.names]:
                requests.clear()
                t0 = time.perf_counter()
                getattr(nav, verb)(name)
                total = (time.perf_counter() - t0) * 1e3
                server = 0.0
                for method, ms in requests:
                    per.setdefault(method, []).append(ms)
                    server += ms
                per.setdefault("total", []).append(total)
                per.setdefault("nav (total - requests)", []).append(total - server)
            out[verb] = {k: round(statistics.median(xs), 1) for k, xs in per.items()}
            print(verb, json.dumps(out[verb]), flush=True)
    finally:
        nav.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
