"""``nav grep -w NAME`` against ``rg -w NAME``, paired per round, on trees with a running daemon.

Usage::

    .venv/bin/python bench/grep_speed.py [--rounds 9] [--queries 8] --out FILE ROOT [ROOT...]

Per root: the daemon is started (``nav daemon start``, no embedding, no warm servers) and its
first grep answered; then each round runs, for every query name in turn:

- ``rg``: ``rg -w NAME`` at the root, a fresh process, output read through a pipe;
- ``cli``: ``nav grep -w NAME`` (the console script, a fresh process) against the daemon;
- ``api``: ``Navigator(root, refresh=False).grep(NAME, word=True)`` in this process, warm;
- ``mcp``: the ``grep`` tool (``word: true``) of one ``nav mcp`` session started before the
  rounds (the agent's path: JSON-RPC over stdio, the daemon behind it), the round trip.

Every answer is checked: nav's matching lines (CLI, API) equal rg's. Figures: p50 of each, the
median of the per-pair ratios to rg with a seeded bootstrap 95% interval; the daemon's RSS
before its first grep and after the rounds (what the grep index adds); index size on disk
against the text it covers. The query names are drawn (seeded) from identifiers in a sample of
the root's files: a check set, never tuned on.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO)]

from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import bootstrap_ci  # noqa: E402
from navigator.api import Navigator  # noqa: E402
from navigator.frontends.client import DaemonClient  # noqa: E402

NAV = [str(Path(sys.executable).parent / "nav")]
IDENT = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]{5,}\b")


def env() -> dict[str, str]:
    return {
        **os.environ, "PYTHONPATH": str(REPO), "NAV_DAEMON_NO_EMBED": "1", "NAV_DAEMON_NO_WARM": "1",
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    }  # fmt: skip


def names(root: Path, k: int, seed: int = 5) -> list[str]:
    """``k`` identifiers from a seeded sample of the files ripgrep searches."""
    files = subprocess.run(["rg", "--no-config", "--files"], cwd=root, capture_output=True, check=True).stdout
    rng = random.Random(seed)
    listed = sorted(files.decode("utf-8", "replace").splitlines())
    words: set[str] = set()
    for rel in rng.sample(listed, min(400, len(listed))):
        try:
            words.update(w.decode() for w in IDENT.findall((root / rel).read_bytes()[:200_000]))
        except OSError:
            continue
    return rng.sample(sorted(words), min(k, len(words)))


def run_ms(cmd: list[str], root: Path) -> tuple[float, bytes]:
    t = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=root, env=env(), capture_output=True, check=False, stdin=subprocess.DEVNULL
    )
    return (time.perf_counter() - t) * 1e3, proc.stdout


class Mcp:
    """One ``nav mcp`` session over stdio (newline-delimited JSON-RPC)."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [*NAV, "-C", str(root), "mcp"], cwd=root, env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.n = 0
        self.call(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.n:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def grep_ms(self, name: str) -> tuple[float, str]:
        t = time.perf_counter()
        result = self.call("tools/call", {"name": "grep", "arguments": {"pattern": name, "word": True}})
        ms = (time.perf_counter() - t) * 1e3
        if result.get("isError"):
            raise RuntimeError(f"mcp grep {name}: {result}")
        return ms, result["content"][0]["text"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def rg_set(out: bytes) -> set[tuple[str, int]]:
    rows = set()
    for line in out.split(b"\n"):
        path, _, rest = line.partition(b":")
        num = rest.partition(b":")[0]
        if num.isdigit():
            rows.add((path.decode("utf-8", "replace"), int(num)))
    return rows


def summary(xs: list[float], rg: list[float]) -> dict[str, float]:
    ratios = [x / r for x, r in zip(xs, rg, strict=True)]
    lo, hi = bootstrap_ci(ratios, statistic=statistics.median, seed=0)
    return {
        "p50_ms": round(statistics.median(xs), 2), "ratio_p50": round(statistics.median(ratios), 3),
        "ratio_ci95": [round(lo, 3), round(hi, 3)],
    }  # fmt: skip


def bench_root(root: Path, rounds: int, k: int) -> dict[str, Any]:
    queries = names(root, k)
    stats = Navigator(root, refresh=False)._handle.grep_index().store.stats()
    subprocess.run([*NAV, "-C", str(root), "daemon", "start"], env=env(), capture_output=True, check=True)
    client = DaemonClient(root, autostart=False)
    before = client.daemon_status()["rss_now_mb"]
    # the first grep waits for the daemon's first walk of the grep index (its symbol index may
    # still be at work, or waiting for another process's lock: grep does not wait for that)
    first_ms, _ = run_ms([*NAV, "-C", str(root), "grep", "-w", queries[0]], root)
    after_first = client.daemon_status()["rss_now_mb"]
    mcp = Mcp(root)
    rows: dict[str, list[float]] = {"rg": [], "cli": [], "api": [], "mcp": []}
    mismatches: list[str] = []
    try:
        with Navigator(root, refresh=False) as nav:
            nav.grep("warmup", word=True)
            for q in queries:
                mcp.grep_ms(q)
            for _ in range(rounds):
                for q in queries:
                    rg_ms, rg_out = run_ms(["rg", "--no-config", "-n", "-w", q], root)
                    cli_ms, cli_out = run_ms([*NAV, "-C", str(root), "grep", "--limit", "0", "-w", q], root)
                    t = time.perf_counter()
                    r = nav.grep(q, word=True, limit=None)
                    api_ms = (time.perf_counter() - t) * 1e3
                    mcp_ms, _ = mcp.grep_ms(q)
                    want = rg_set(rg_out)
                    if rg_set(cli_out) != want or {(h.path, h.line) for h in r.items} != want:
                        mismatches.append(q)
                    for key, ms in (("rg", rg_ms), ("cli", cli_ms), ("api", api_ms), ("mcp", mcp_ms)):
                        rows[key].append(ms)
        end = client.daemon_status()
    finally:
        mcp.close()
        client.stop()
    return {
        "root": str(root), "queries": queries, "rounds": rounds, "pairs": len(rows["rg"]),
        "rg_p50_ms": round(statistics.median(rows["rg"]), 2),
        **{k: summary(v, rows["rg"]) for k, v in rows.items() if k != "rg"},
        "mismatches": sorted(set(mismatches)),
        "first_cli_grep_ms": round(first_ms, 1),
        "daemon_rss_mb": {"before_first_grep": before, "after_first_grep": after_first, "after_rounds": end["rss_now_mb"],
                          "added_by_grep": round(end["rss_now_mb"] - before, 1)},
        "index": {**stats, "ratio_to_text": round(stats["db_bytes"] / max(1, stats["text_bytes"]), 3)},
        "load_avg": os.getloadavg(),
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", type=Path, nargs="+")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--queries", type=int, default=8)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    results = []
    for root in args.roots:
        row = bench_root(root.resolve(), args.rounds, args.queries)
        results.append(row)
        print(json.dumps(row), flush=True)
        write_json(args.out, results)


if __name__ == "__main__":
    main()
