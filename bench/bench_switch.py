"""A branch switch must cost no more than indexing from scratch (issue 9, "a branch switch is cheap").

Takes two exported trees of one repository (e.g. pytest 7.0.0 and 8.3.4). Each round, in the same
run: index the old tree, switch the working tree to the new one (delete, add and rewrite the files
that differ, as `git checkout` does), time the incremental `index()`; then delete the index and time
a cold `index()` of the same tree. Prints the medians and the ratio switch / cold.

    PYTHONPATH=$PWD nice -n 10 python bench/bench_switch.py \\
        --old /work/corpora/pytest-dev-pytest-7.0.0 --new /work/corpora/pytest-dev-pytest-8.3.4 --rounds 3
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path


def files_of(tree: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".nav")]
        for name in filenames:
            out.add(os.path.relpath(os.path.join(dirpath, name), tree))
    return out


def switch(work: Path, new: Path) -> int:
    """Make ``work`` hold ``new``'s files; return how many files changed."""
    have, want = files_of(work), files_of(new)
    changed = 0
    for rel in have - want:
        (work / rel).unlink()
        changed += 1
    for rel in want:
        src, dst = new / rel, work / rel
        if rel in have and filecmp.cmp(src, dst, shallow=False):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        changed += 1
    return changed


def _cpu() -> float:
    """CPU seconds of this process and its reaped children (the parse workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed_index(root: Path) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds, report) of one index run. On a shared machine the CPU time is
    the steadier measure of the work done; the wall time is what a user waits."""
    from navigator.api import Navigator

    with Navigator(root) as nav:
        started, cpu = time.perf_counter(), _cpu()
        report = nav.index()
        return time.perf_counter() - started, _cpu() - cpu, report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--new", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    cold: list[float] = []
    switched: list[float] = []
    cold_cpu: list[float] = []
    switched_cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="nav-switch-") as tmp:
        for rnd in range(args.rounds):
            work = Path(tmp) / f"work{rnd}"
            shutil.copytree(args.old, work, ignore=shutil.ignore_patterns(".nav", ".git"))
            (work / ".git").mkdir()
            timed_index(work)  # the old branch, indexed
            changed = switch(work, args.new)
            s, s_cpu, rep = timed_index(work)
            switched.append(s)
            switched_cpu.append(s_cpu)
            shutil.rmtree(work / ".nav")
            c, c_cpu, _ = timed_index(work)
            cold.append(c)
            cold_cpu.append(c_cpu)
            print(
                f"round {rnd + 1}: {changed} files changed; switch {s:.2f} s wall / {s_cpu:.2f} s CPU "
                f"({len(rep.added)} added, {len(rep.updated)} updated, {len(rep.removed)} removed), "  # type: ignore[attr-defined]
                f"cold {c:.2f} s wall / {c_cpu:.2f} s CPU",
                flush=True,
            )
            shutil.rmtree(work)
    ms, mc = statistics.median(switched), statistics.median(cold)
    print(f"median of {args.rounds}, wall: switch {ms:.2f} s, cold {mc:.2f} s, switch/cold = {ms / mc:.2f}")
    ms, mc = statistics.median(switched_cpu), statistics.median(cold_cpu)
    print(f"median of {args.rounds}, CPU:  switch {ms:.2f} s, cold {mc:.2f} s, switch/cold = {ms / mc:.2f}")


if __name__ == "__main__":
    main()
