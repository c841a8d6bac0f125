"""`nav search --all-repos` / `nav def --all-repos` from the command line: in the calling process
(`--no-daemon`, which loads the model to encode each query) against the root's warm daemon (which
keeps it loaded), interleaved in one run on one PostgreSQL + pgvector server.

Two small semble repositories are published with the default model; a third checkout asks. Each
round runs both ways in alternating order; the daemon's first answer (its start and model load)
is timed apart. The server, the daemon and the temporary folders are removed at the end.

    PYTHONPATH=$PWD python bench/bench_cli_all_repos.py --rounds 10 --out bench/results/cli-all-repos.json
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_store import SEMBLE, as_git_repo  # noqa: E402

from bench.harness.run import write_json  # noqa: E402

REPOS = ["flask", "click"]
QUERIES = ["where is the request context pushed", "parse command line options", "render a template"]
NAMES = ["Flask", "Context", "render_template"]


def nav(root: Path, env: dict[str, str], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "navigator.frontends.entry", "-C", str(root), *args],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    ms = (time.perf_counter() - t0) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"nav {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return ms, proc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--out", default=str(HERE / "results" / "cli-all-repos.json"))
    args = ap.parse_args()

    from navigator.api import Navigator
    from storage.pg_local import LocalPostgres

    work = Path(tempfile.mkdtemp(prefix="nav-bench-cli-store-", dir="/tmp"))
    work.chmod(0o755)
    pg = LocalPostgres.start(work / "pg")
    asker = as_git_repo(SEMBLE / "requests", work / "repos" / "requests")
    env = {k: v for k, v in os.environ.items() if k not in ("NAV_NO_DAEMON",)}
    env.update(NAV_STORE=pg.url(), NAV_DAEMON_NO_EMBED="1", NAV_DAEMON_NO_WARM="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = str(HERE.parent)
    result: dict[str, object] = {"repos": REPOS, "rounds": args.rounds}
    try:
        for name in REPOS:
            root = as_git_repo(SEMBLE / name, work / "repos" / name)
            with Navigator(root, store_url=pg.url()) as n:
                rep = n.team().publish()
                print(f"published {name}: {rep.chunks} chunks", file=sys.stderr)
        nav(asker, {**env, "NAV_NO_DAEMON": "1"}, "index", "--no-embed")
        first_ms, _ = nav(asker, env, "search", "--all-repos", "warm up the daemon")
        times: dict[str, list[float]] = {"search in-process": [], "search daemon": [], "def in-process": [], "def daemon": []}
        for r in range(args.rounds):
            q, name = QUERIES[r % len(QUERIES)], NAMES[r % len(NAMES)]
            ways = [("in-process", {**env, "NAV_NO_DAEMON": "1"}), ("daemon", env)]
            for way, e in ways if r % 2 == 0 else ways[::-1]:
                ms, proc = nav(asker, e, "search", "--all-repos", "--json", q)
                if json.loads(proc.stdout)["source"] != "team-store":
                    raise SystemExit(f"search {q!r} ({way}) was not answered by the team store")
                times[f"search {way}"].append(ms)
                ms, _ = nav(asker, e, "def", "--all-repos", "--json", name)
                times[f"def {way}"].append(ms)
        result["daemon_first_call_ms"] = round(first_ms)
        result["median_ms"] = {k: round(statistics.median(v)) for k, v in times.items()}
        result["ratio_in_process_over_daemon"] = {
            verb: round(statistics.median(times[f"{verb} in-process"]) / statistics.median(times[f"{verb} daemon"]), 2)
            for verb in ("search", "def")
        }
        result["times_ms"] = {k: [round(x) for x in v] for k, v in times.items()}
        print(json.dumps({k: v for k, v in result.items() if k != "times_ms"}, indent=1))
    finally:
        subprocess.run(
            [sys.executable, "-m", "navigator.frontends.cli", "-C", str(asker), "daemon", "stop"],
            capture_output=True, env=env, timeout=60,
        )  # fmt: skip
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
