"""Benchmark: fresh warm ``nav VERB ...`` processes against ``rg -w NAME``, interleaved in one run,
optionally beside an older checkout's ``nav`` (to measure a change to the CLI's hot path).

Usage::

    .venv/bin/python bench/bench_fastpath.py [--runs 60] [--baseline-tree DIR] CORPUS NAME
    .venv/bin/python bench/bench_fastpath.py --verbs all --file PATH --query "one line" CORPUS NAME

The corpus is copied to a temporary folder and indexed; this checkout's daemon serves it (both
``nav``s talk to the same warm daemon, so only the client process differs). ``DIR`` is another
commit's tree (``git archive REV | tar -x -C DIR``). ``--verbs``: ``refs`` (default), a comma list,
or ``all`` (def, refs, callers, callees, impl, hover, symbols, outline, show, status, search, find;
outline reads ``--file``, search and find ``--query``). ``--first-ask``: every verb that takes a
name asks, in each round, about a name never asked before, so the language servers' remembered
answers (``lsp/memo.py``) never help; without it the same name is asked every round, as an agent
repeating a question does. Each round runs ``rg`` and then every
process once, in that order; the table gives p50 / p90 and, per round, the ratio to the ``rg`` run
of the same round: its median with a bootstrap 95% interval.
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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness.run import timed_ms as timed  # noqa: E402
from bench.harness.stats import bootstrap_ci  # noqa: E402
from bench.harness.stats import percentile as pct  # noqa: E402

SCRIPT = "import sys; from navigator.frontends.entry import run; sys.exit(run())"  # pip's `nav`


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("name")
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument(
        "--baseline-tree", type=Path, help="an older checkout's tree, for its `nav` beside this one"
    )
    ap.add_argument("--verbs", default="refs", help="refs (default), a comma list, or all")
    ap.add_argument("--file", help="the file `outline` reads (root-relative)")
    ap.add_argument("--query", default="where is the configuration read", help="search/find text")
    ap.add_argument(
        "--first-ask",
        action="store_true",
        help="each verb of each round asks about a name never asked before (drawn, seeded, from the "
        "index's functions, methods and classes defined once): nothing the daemon remembers helps",
    )
    ap.add_argument(
        "--no-embed",
        action="store_true",
        help="the daemon embeds nothing (NAV_DAEMON_NO_EMBED=1): search and find answer from the "
        "lexical legs, and no background embedding shares the CPU with the timing",
    )
    args = ap.parse_args()
    if shutil.which("rg") is None:
        sys.exit("ripgrep (rg) is the baseline: apt-get install ripgrep")
    tmp = Path(tempfile.mkdtemp(prefix="nav-fastpath-"))
    root = tmp / args.corpus.name
    shutil.copytree(args.corpus, root, ignore=shutil.ignore_patterns(".nav"))
    base_env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}
    if args.no_embed:
        base_env["NAV_DAEMON_NO_EMBED"] = "1"
    env = {**base_env, "PYTHONPATH": str(REPO)}
    every = [
        "def",
        "refs",
        "callers",
        "callees",
        "impl",
        "hover",
        "symbols",
        "outline",
        "show",
        "status",
        "search",
        "find",
    ]
    verbs = every if args.verbs == "all" else args.verbs.split(",")
    argv = {v: [args.name] for v in every}
    argv.update(outline=[args.file or "."], status=[], search=[args.query], find=[args.query])
    navs: dict[str, tuple[list[str], dict[str, str]]] = {
        f"nav {v}": ([sys.executable, "-c", SCRIPT, v, *argv[v]], env) for v in verbs
    }
    if args.baseline_tree:
        old_env = {**base_env, "PYTHONPATH": str(args.baseline_tree.resolve())}
        for v in verbs:
            navs[f"baseline nav {v}"] = ([sys.executable, "-c", SCRIPT, v, *argv[v]], old_env)
    nav = [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root)]
    try:
        subprocess.run([*nav, "index", "--no-embed"], env=env, check=True, capture_output=True)
        for _ in range(3):  # the daemon starts, its language server loads, the answers are warm
            for cmd, e in navs.values():
                subprocess.run(cmd, cwd=root, env=e, check=False, capture_output=True)
        times: dict[str, list[float]] = {"rg": [], **{k: [] for k in navs}}
        fresh = iter(_unasked_names(root, args.runs * len(navs), args.name) if args.first_ask else [])
        for _ in range(args.runs):
            times["rg"].append(timed(["rg", "-w", args.name, "."], root, env))
            for k, (cmd, e) in navs.items():
                verb = k.rsplit(" ", 1)[-1]
                if args.first_ask and argv[verb] == [args.name]:
                    cmd = [*cmd[:-1], next(fresh)]
                times[k].append(timed(cmd, root, e))
    finally:
        subprocess.run([*nav, "daemon", "stop"], env=env, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    row: dict[str, object] = {"corpus": args.corpus.name, "name": args.name, "runs": args.runs,
                              "first_ask": args.first_ask, "no_embed": args.no_embed}  # fmt: skip
    how = ", each verb on a name never asked before" if args.first_ask else ""
    print(f"{args.corpus.name}, `{args.name}`, {args.runs} rounds{how}")
    print("| process | p50 / p90 | ratio to rg, per round: median [95% CI] |")
    print("|---|---|---|")
    for k, xs in times.items():
        ratios = [x / g for x, g in zip(xs, times["rg"], strict=True)]
        lo, hi = bootstrap_ci(ratios, statistic=statistics.median, seed=7)
        row[k] = {"p50": round(statistics.median(xs), 1), "p90": round(pct(xs, 0.9), 1),
                  "ratio": round(statistics.median(ratios), 2), "ci": [round(lo, 2), round(hi, 2)]}  # fmt: skip
        shown = "1" if k == "rg" else f"{statistics.median(ratios):.2f}× [{lo:.2f}, {hi:.2f}]"
        print(f"| {k} | {statistics.median(xs):.1f} / {pct(xs, 0.9):.1f} ms | {shown} |")
    print(json.dumps(row))


def _unasked_names(root: Path, n: int, skip: str) -> list[str]:
    """``n`` distinct names of functions, methods and classes defined once in ``root``'s index
    (seeded draw), for rounds in which no answer can come from what the daemon remembers."""
    import random

    from navigator.api import Navigator

    nav = Navigator(root, refresh=False)
    try:
        rows = nav.store.symbols(kinds=("function", "method", "class"), limit=1_000_000)
    finally:
        nav.close()
    count: dict[str, int] = {}
    for r in rows:
        count[r.definition.name] = count.get(r.definition.name, 0) + 1
    once = sorted(k for k, c in count.items() if c == 1 and k != skip and k.isidentifier() and len(k) > 3)
    if len(once) < n:
        sys.exit(f"only {len(once)} names defined once in {root}; ask for fewer --runs")
    return random.Random(19).sample(once, n)


if __name__ == "__main__":
    main()
