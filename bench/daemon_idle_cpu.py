"""Benchmark: an idle daemon's CPU, and the watcher's overflows, on a real root.

Usage::

    .venv/bin/python bench/daemon_idle_cpu.py [--seconds 60] [--settle 30] ROOT

Starts (or reuses) ROOT's daemon, waits for its first index and ``--settle`` seconds more
(warm-up of the language servers, which read many files), then samples the daemon process's
user + system CPU time (``/proc/PID/stat``) over ``--seconds`` with no request, and counts
the watcher's overflow warnings in ``.nav/daemon.log`` over the same span. The daemon is
left running (``nav daemon stop`` in ROOT stops it). Linux only (``/proc``).

Issue 17's case: a clone of nav with a ``.venv`` inside (``git clone . /tmp/navclone`` and a copy
of ``.venv/lib/python3.11/site-packages`` under ``/tmp/navclone/.venv``), ``NAV_DAEMON_NO_EMBED=1``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from navigator.frontends.client import DaemonClient
from navigator.paths import daemon_paths


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--settle", type=float, default=30.0)
    args = ap.parse_args()
    root = args.root.resolve()
    log = daemon_paths(root).log
    with DaemonClient(root, idle_timeout_s=3600) as client:
        started = time.monotonic()
        client.call("status")  # waits for the first index
        first_s = time.monotonic() - started
        pid = int(client.daemon_status()["pid"])
    time.sleep(args.settle)  # the warm-up, measured apart from the idle span

    def overflows() -> int:
        return log.read_text(errors="replace").count("overflow") if log.exists() else 0

    cpu0, wall0, over0 = cpu_s(pid), time.monotonic(), overflows()
    time.sleep(args.seconds)  # idle, on purpose: that is what is measured
    cpu1, wall1, over1 = cpu_s(pid), time.monotonic(), overflows()
    with DaemonClient(root, autostart=False) as client:
        status = client.daemon_status()
    print(
        json.dumps(
            {
                "root": str(root),
                "first_index_s": round(first_s, 1),
                "idle_s": round(wall1 - wall0, 1),
                "cpu_s": round(cpu1 - cpu0, 2),
                "cpu_pct_of_a_core": round(100 * (cpu1 - cpu0) / (wall1 - wall0), 2),
                "overflow_warnings": over1 - over0,
                "syncs": status.get("syncs"),
                "watcher": status.get("watcher"),
                "servers": status.get("servers"),
            }
        )
    )


if __name__ == "__main__":
    main()
