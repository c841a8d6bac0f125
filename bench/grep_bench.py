"""Benchmark: ``nav grep`` against ``rg`` on the same trees — equality, speed, index size, build.

Usage::

    .venv/bin/python bench/grep_bench.py [--patterns 300] [--pairs 9] [--daemon] ROOT [ROOT...]

Per root (indexed in place: ``ROOT/.nav/grep.db``, rebuilt from nothing first):

- **build**: seconds and peak RSS of a fresh process building the grep index; its size on disk
  against the text it covers (the ratio the issue caps at ~3x);
- **equality**: generated patterns (``tests/grep_oracle.py``: identifiers, literals with
  punctuation under -F, classes, alternation, anchors, -i, -w, Unicode) answered by the Python
  API and by ``rg`` at the root; every difference in the (path, line, text) sets counts;
- **speed**, paired per query (medians of ``--pairs`` rounds, each round running every
  contender once in turn, over identifiers drawn from the tree): ``rg -w NAME`` (a fresh
  process), ``nav grep -w NAME`` as a fresh CLI in-process (its stat walk included), the Python
  API warm (``Navigator(root, refresh=False)``: no walk, as in the daemon), and with
  ``--daemon`` a fresh CLI against a running daemon.

Results go to ``bench/results/grep_bench.json`` (key ``grep_bench``) and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from grep_oracle import answer_set, nav_flags, patterns, rg_lines, same_answer  # noqa: E402

from bench.harness.run import timed_ms, write_json  # noqa: E402
from navigator.api import Navigator  # noqa: E402
from storage.errors import UsageError  # noqa: E402

NAV = [sys.executable, "-m", "navigator.frontends.entry"]
BUILD = (
    "import sys, time; from pathlib import Path; from navigator.grep_index import GrepIndex; "
    "r = Path(sys.argv[1]); t = time.perf_counter(); i = GrepIndex(r, r / '.nav'); i.update(); "
    "s = i.store.stats(); s['seconds'] = time.perf_counter() - t; "
    "s['peak_rss_mb'] = [int(x.split()[1]) / 1024 for x in open('/proc/self/status') if x.startswith('VmHWM')][0]; "
    "print(repr(s))"  # VmHWM, not ru_maxrss: that one counts the forking parent's pages too
)


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NAV_DAEMON_NO_EMBED": "1", "NAV_DAEMON_NO_WARM": "1"}


def timed(cmd: list[str], cwd: Path, extra: dict[str, str] | None = None) -> float:
    return timed_ms(cmd, cwd, {**env(), **(extra or {})})


def build(root: Path) -> dict[str, float]:
    db = root / ".nav" / "grep.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    out = subprocess.run(
        [sys.executable, "-c", BUILD, str(root)], env=env(), capture_output=True, text=True, check=True
    )
    stats: dict[str, float] = eval(out.stdout.strip())  # our own repr of a dict of numbers
    stats["ratio"] = stats["db_bytes"] / max(1, stats["text_bytes"])
    return stats


def equality(root: Path, count: int) -> dict[str, object]:
    diffs: list[str] = []
    incomplete: list[str] = []
    t = time.perf_counter()
    with Navigator(root, refresh=False) as nav:
        for pattern, flags in patterns(root, count=count):
            rc, want = rg_lines(root, pattern, flags)
            try:
                # no deadline short of a slow machine's: a pattern matching every line of a
                # million takes ripgrep and the parsing of its output a while
                r = nav.grep(pattern, limit=None, deadline_s=600, **nav_flags(flags))  # type: ignore[arg-type]
                got, refused = answer_set(r.items, flags), False
                if not r.complete:
                    incomplete.append(f"{pattern!r} {flags}: {r.reason}")
            except UsageError:
                got, refused = set(), True
            if refused != (rc == 2) or not same_answer(root, want, got):
                diffs.append(f"{pattern!r} {flags}")
    return {
        "patterns": count, "differences": len(diffs), "examples": diffs[:5],
        "incomplete": len(incomplete), "incomplete_examples": incomplete[:3], "seconds": time.perf_counter() - t,
    }  # fmt: skip


def names(root: Path, k: int, seed: int = 5) -> list[str]:
    """Identifiers from the tree, common and rare alike."""
    proc = subprocess.run(
        ["rg", "--no-config", "-o", "-N", "--no-filename", r"\b[A-Za-z_][A-Za-z0-9_]{5,}\b"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    words = sorted(set(proc.stdout.split()))
    return random.Random(seed).sample(words, min(k, len(words)))


def speed(root: Path, queries: list[str], pairs: int, daemon: bool) -> dict[str, object]:
    rows: dict[str, list[float]] = {"rg": [], "cli_in_process": [], "api_warm": []}
    if daemon:
        rows["cli_daemon"] = []
        subprocess.run(
            [*NAV, "-C", str(root), "status"], env=env(), capture_output=True, check=False
        )  # starts it
        subprocess.run([*NAV, "-C", str(root), "grep", "warmup"], env=env(), capture_output=True, check=False)
    ratios: dict[str, list[float]] = {k: [] for k in rows if k != "rg"}
    with Navigator(root, refresh=False) as nav:
        nav.grep("warmup")
        for _ in range(pairs):
            for q in queries:
                r = timed(["rg", "-w", q], root)
                rows["rg"].append(r)
                c = timed([*NAV, "-C", str(root), "grep", "--no-daemon", "-w", q], root)
                rows["cli_in_process"].append(c)
                ratios["cli_in_process"].append(c / r)
                t = time.perf_counter()
                nav.grep(q, word=True)
                a = (time.perf_counter() - t) * 1e3
                rows["api_warm"].append(a)
                ratios["api_warm"].append(a / r)
                if daemon:
                    d = timed([*NAV, "-C", str(root), "grep", "-w", q], root)
                    rows["cli_daemon"].append(d)
                    ratios["cli_daemon"].append(d / r)
    if daemon:
        from navigator.frontends.client import DaemonClient

        status = DaemonClient(root).daemon_status()
        DaemonClient(root).stop()
        rows_out: dict[str, object] = {"daemon_rss_mb": status.get("rss_now_mb")}
    else:
        rows_out = {}
    for k, xs in rows.items():
        rows_out[f"{k}_p50_ms"] = round(statistics.median(xs), 2)
    for k, xs in ratios.items():
        rows_out[f"{k}_ratio_to_rg_p50"] = round(statistics.median(xs), 3)
    return rows_out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", type=Path, nargs="+")
    ap.add_argument("--patterns", type=int, default=300)
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--queries", type=int, default=6)
    ap.add_argument("--daemon", action="store_true", help="also time a fresh CLI against a running daemon")
    args = ap.parse_args()
    if shutil.which("rg") is None:
        sys.exit("ripgrep (rg) is the oracle and the baseline: apt-get install ripgrep")
    results = []
    for root in args.roots:
        root = root.resolve()
        count = subprocess.run(
            ["rg", "--no-config", "-c", "^"], cwd=root, capture_output=True, text=True, check=False
        ).stdout
        text_lines = sum(int(x.rsplit(":", 1)[1]) for x in count.splitlines() if ":" in x)
        b = build(root)
        eq = equality(root, args.patterns)
        sp = speed(root, names(root, args.queries), args.pairs, args.daemon)
        row = {
            "root": root.name,
            "files": b["files"],
            "lines": text_lines,
            "build": b,
            "equality": eq,
            "speed": sp,
        }
        results.append(row)
        print(json.dumps(row, indent=1), flush=True)
    out = REPO / "bench" / "results" / "grep_bench.json"
    kept = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    write_json(out, {**kept, "grep_bench": results})  # beside grep_equality/grep_speed's entries
    print(
        f"\n{'root':<14}{'files':>7}{'lines':>10}{'build s':>9}{'MB':>7}{'ratio':>7}{'diffs':>7}  rg / cli / api / daemon p50 ms"
    )
    for r in results:
        b, s = r["build"], r["speed"]
        print(
            f"{r['root']:<14}{r['files']:>7}{r['lines']:>10}{b['seconds']:>9.1f}{b['db_bytes'] / 1e6:>7.1f}{b['ratio']:>7.2f}"
            f"{r['equality']['differences']:>7}  {s['rg_p50_ms']} / {s['cli_in_process_p50_ms']} / {s['api_warm_p50_ms']} / {s.get('cli_daemon_p50_ms', '-')}"
        )


if __name__ == "__main__":
    main()
