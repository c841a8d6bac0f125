"""Query latency while the daemon embeds in the background, against the same daemon idle (issue 9).

For each code tree given (``--code old=/work/main --code new=$PWD``), on a fresh copy of the corpus
with a fresh index (so no vector comes from a cache): start that code's daemon with background
embedding on, wait until it is embedding, then time ``--queries`` symbol and definition lookups
from a client of the same code; then time the same queries against a daemon of the same code with
embedding off. Prints p50/p95 per code tree and phase. Bounded: one corpus, a few minutes.

    nice -n 10 .venv/bin/python bench/embed_yield.py /work/corpora/psf-requests-2.32.3 \\
        --code old=/work/main --code new=$PWD
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

CLIENT = r"""
import json, sys, time
from navigator.frontends.client import DaemonClient
root, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = DaemonClient(root)
if mode == "embedding":  # wait (bounded) for the event: the daemon has embedded a first slice
    deadline = time.monotonic() + 300
    while not c.daemon_status().get("vectors"):  # the model is loaded and slices are running
        if time.monotonic() > deadline:
            raise SystemExit("never started embedding")
        time.sleep(0.2)
names = [s.name for s in c.symbols("session", limit=50).items] or ["x"]
out = []
for i in range(n):
    t = time.perf_counter()
    c.symbols(names[i % len(names)][:4], limit=20)
    c.definitions(names[i % len(names)])
    out.append((time.perf_counter() - t) * 1e3)
status = c.daemon_status()
c.stop()
print(json.dumps({"ms": out, "vectors": status.get("vectors"), "embedding": status.get("embedding")}))
"""


def run(code: Path, corpus: Path, n: int, embed: bool) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix="nav-embed-yield-"))
    root = work / "repo"
    shutil.copytree(corpus, root, ignore=shutil.ignore_patterns(".nav", ".git"))
    env = dict(os.environ, PYTHONPATH=str(code), NAV_DAEMON_NO_WARM="1", NAV_RUNTIME_DIR=str(work / "rt"))
    env.pop("NAV_NO_DAEMON", None)
    if not embed:
        env["NAV_DAEMON_NO_EMBED"] = "1"
    else:
        env.pop("NAV_DAEMON_NO_EMBED", None)
    subprocess.run([sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "index"], env=env, check=True,
                   capture_output=True, cwd=str(code))  # fmt: skip
    try:
        done = subprocess.run(
            [sys.executable, "-c", CLIENT, str(root), str(n), "embedding" if embed else "idle"],
            env=env, capture_output=True, text=True, timeout=900, cwd=str(code),
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    finally:
        subprocess.run([sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "daemon", "stop"], env=env,
                       capture_output=True, cwd=str(code), timeout=60)  # fmt: skip
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--code", action="append", required=True, help="label=path of a nav checkout")
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args()
    for spec in args.code:
        label, _, path = spec.partition("=")
        for embed in (True, False):
            result = run(Path(path).resolve(), args.corpus, args.queries, embed)
            ms = sorted(float(x) for x in result["ms"])  # type: ignore[attr-defined]
            p95 = ms[int(0.95 * (len(ms) - 1))]
            phase = "while embedding" if embed else "embedding off  "
            print(
                f"{label:4} {phase}  p50 {statistics.median(ms):7.1f} ms  p95 {p95:7.1f} ms  "
                f"(n={len(ms)}, vectors at end {result['vectors']}, {result.get('embedding')})",
                flush=True,
            )
            time.sleep(1)


if __name__ == "__main__":
    main()
