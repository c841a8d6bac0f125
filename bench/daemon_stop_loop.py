"""Start a daemon on an indexed copy of a test workspace, wait for ``ready``, SIGTERM it, N times.

The reproduction of a daemon that sometimes died by SIGSEGV when stopped right after it said
ready (run it beside CPU hogs). The daemon is started as
``tests/test_lsp_prelaunch.py::test_a_daemon_launches_its_server_before_it_imports_multilspy``
starts it (an audit hook, ``--no-watch``, ``--expect``, no background embedding). Each run's
exit code is counted; for an exit that is not 0 the daemon's log (with faulthandler's thread
stacks) and stderr are kept under ``--keep``.

    nice -n 10 python -m bench.daemon_stop_loop --minutes 25 --keep /tmp/stops --out bench/results/x.json
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKSPACES = ROOT / "tests" / "workspaces"
sys.path.insert(0, str(ROOT / "tests"))
from faultkit import DAEMON_LAUNCH, running_in  # noqa: E402  (the daemon as the prelaunch test starts it)

TARGET = {"python": "create_sales_order", "go": "CreateSalesOrder"}


def one_run(base: Path, n: int, language: str, keep: Path) -> tuple[int, float, int, bool]:
    """One start, ready, SIGTERM: the daemon's exit code, how long the stop took (s), how many
    processes were left running in the root, and whether a traceback was printed."""
    from navigator.api import Navigator

    root = (base / f"{language}-{n}").resolve()
    shutil.copytree(WORKSPACES / language, root)
    with Navigator(root) as nav:
        nav.index()
    r, w = os.pipe()
    env = {k: v for k, v in os.environ.items() if k != "NAV_DAEMON_NO_WARM"}
    env.update({"PYTHONPATH": str(ROOT), "NAV_DAEMON_NO_EMBED": "1"})
    cmd = [sys.executable, "-c", DAEMON_LAUNCH, str(root), "--no-watch", "--ready-fd", str(w)]
    cmd += ["--expect", "references", TARGET[language]]
    proc = subprocess.Popen(
        cmd, pass_fds=(w,), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    os.close(w)
    try:
        said, _, _ = select.select([r], [], [], 120.0)
        word = os.read(r, 64).strip() if said else b""
    finally:
        os.close(r)
    t0 = time.monotonic()
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        err += "\n[daemon_stop_loop] no exit within 120 s of SIGTERM: killed\n"
    took = time.monotonic() - t0
    code = proc.returncode if word == b"ready" else 1000  # 1000: never said ready
    left = running_in(root)
    for entry in left:  # counted, then ended: the next run starts clean
        with contextlib.suppress(OSError):
            os.kill(int(entry.split(":", 1)[0]), signal.SIGKILL)
    log = root / ".nav" / "daemon.log"
    logged = log.read_text(errors="replace") if log.exists() else ""
    traceback = "Traceback" in err + logged
    if code != 0 or left or traceback:
        dest = keep / f"{language}-{n}-rc{code}-left{len(left)}{'-tb' if traceback else ''}"
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "daemon.log").write_text(logged)
        (dest / "stderr.txt").write_text(err)
    shutil.rmtree(root, ignore_errors=True)
    return code, took, len(left), traceback


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=25.0)
    ap.add_argument("--runs", type=int, default=0, help="stop after this many runs (0: the time budget)")
    ap.add_argument("--languages", default="python,go")
    ap.add_argument("--keep", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    import tempfile

    from lsp.registry import available_definition

    languages = [lang for lang in args.languages.split(",") if available_definition(lang) is not None]
    base = Path(tempfile.mkdtemp(prefix="nav-stop-loop-"))
    args.keep.mkdir(parents=True, exist_ok=True)
    codes: dict[str, collections.Counter[int]] = {lang: collections.Counter() for lang in languages}
    stops: list[float] = []
    leaked = tracebacks = 0
    deadline = time.monotonic() + args.minutes * 60
    n = 0
    while time.monotonic() < deadline and (args.runs == 0 or n < args.runs):
        language = languages[n % len(languages)]
        code, took, left, traceback = one_run(base, n, language, args.keep)
        codes[language][code] += 1
        stops.append(took)
        leaked += left > 0
        tracebacks += traceback
        n += 1
        print(f"run {n} {language}: rc={code} stop={took:.2f}s left={left} tb={traceback}", flush=True)
    shutil.rmtree(base, ignore_errors=True)
    stops.sort()
    result = {
        "label": args.label,
        "runs": n,
        "exit_codes": {lang: {str(k): v for k, v in c.items()} for lang, c in codes.items()},
        "not_zero": sum(v for c in codes.values() for k, v in c.items() if k != 0),
        "runs_leaving_a_process": leaked,
        "runs_with_a_traceback": tracebacks,
        "stop_s_median": stops[len(stops) // 2] if stops else None,
        "stop_s_max": stops[-1] if stops else None,
    }
    print(json.dumps(result, indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
