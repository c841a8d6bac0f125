"""``nav grep`` (the Python API, index built) against ``rg`` at the root, pattern by pattern, with
a progress log: the equality run of issue 19 on trees too big to hold ripgrep's answer twice.

Usage::

    .venv/bin/python bench/grep_equality.py ROOT COUNT LOG.jsonl [--seed 11] [--reverse FIRST_LOG]
    .venv/bin/python bench/grep_equality.py --summary LOG.jsonl [LOG.jsonl...]

Patterns come from ``tests/grep_oracle.py`` (seeded). Each line of LOG is one pattern's outcome:

- ``same``: equal (path, line, text) sets (a line over nav's 1M-character cut compared cut, as
  nav's notes say it is; ``cut_lines`` counts them) (``-l``: paths; ``-c``: path and count), or both refused;
- ``bounded``: nav stopped at its answer bound (``limit``/characters/deadline) and said so
  (``complete: false``): every hit it returned is one of ripgrep's;
- ``diff``: anything else, with up to 3 lines from each side.

ripgrep's output is streamed and checked against nav's hits one line at a time, so only nav's
answer is held in memory. A file with a NUL byte where the two disagree whole (ripgrep itself
skips such a file in some runs: see ``grep_oracle.same_answer``) is counted ``same`` and noted.
Already logged patterns are skipped (the run resumes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from grep_oracle import answer_set, nav_flags, patterns, rg_lines  # noqa: E402

from navigator.api import Navigator  # noqa: E402
from navigator.grep import MAX_TEXT_CHARS  # noqa: E402
from navigator.grep_plan import ALL, plan  # noqa: E402
from storage.errors import UsageError  # noqa: E402

Row = tuple[str, int, str]


def rg_stream(
    root: Path, pattern: str, flags: tuple[str, ...], nav: set[Row], cut: list[int]
) -> tuple[int, list[Row], set[Row]]:
    """(exit code, ripgrep's lines nav lacks (first 1000), nav's lines ripgrep printed); lines
    longer than nav's :data:`~navigator.grep.MAX_TEXT_CHARS` are compared cut as nav cuts them
    (counted in ``cut[0]``)."""
    if "-l" in flags or "-c" in flags:
        rc, want = rg_lines(root, pattern, flags)
        return rc, sorted(want - nav)[:1000], want & nav
    cmd = ["rg", "--no-config", "--no-heading", "--with-filename", "--null", "-n", "--color", "never"]
    proc = subprocess.Popen(
        [*cmd, *flags, "-e", pattern],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    missing: list[Row] = []
    seen: set[Row] = set()
    for raw in proc.stdout:
        raw = raw.rstrip(b"\n")
        path, sep, rest = raw.partition(b"\0")
        if not sep:
            continue  # ripgrep's note on a binary file it stopped reading
        num, _, text = rest.partition(b":")
        line = text.decode("utf-8", "replace")
        if len(line) > MAX_TEXT_CHARS:
            line = line[:MAX_TEXT_CHARS]  # nav's documented cut of a long line (its notes say so)
            cut[0] += 1
        row = (os.fsdecode(path), int(num), line)
        if row in nav:
            seen.add(row)
        elif len(missing) < 1000:
            missing.append(row)
    return proc.wait(), missing, seen


def binary(root: Path, path: str) -> bool:
    try:
        with open(root / path, "rb") as fh:
            return b"\0" in fh.read()
    except OSError:
        return False


def one(nav: Navigator, root: Path, pattern: str, flags: tuple[str, ...]) -> dict[str, object]:
    t = time.perf_counter()
    try:
        r = nav.grep(pattern, limit=None, deadline_s=900, **nav_flags(flags))  # type: ignore[arg-type]
        got, refused, complete, reason = answer_set(r.items, flags), False, r.complete, r.reason
    except UsageError as exc:
        got, refused, complete, reason = set(), True, True, str(exc)[:200]
    nav_s = time.perf_counter() - t
    t = time.perf_counter()
    cut = [0]
    rc, missing, seen = rg_stream(root, pattern, flags, got, cut)
    rg_s = time.perf_counter() - t
    extra = sorted(got - seen)
    out: dict[str, object] = {
        "pattern": pattern, "flags": list(flags), "nav_s": round(nav_s, 3), "rg_s": round(rg_s, 3),
        "narrowed": plan(pattern, fixed="-F" in flags, ignore_case="-i" in flags) != ALL,
        "hits": len(got), "rc": rc, "cut_lines": cut[0],
    }  # fmt: skip
    if refused or rc == 2:
        out["status"] = "same" if refused and rc == 2 else "diff"
        out["reason"] = reason
        return out
    if not complete:
        out["status"] = "bounded" if not extra else "diff"
        out["reason"] = reason
        out["extra"] = [str(x)[:200] for x in extra[:3]]
        return out
    if not missing and not extra:
        out["status"] = "same"
        return out
    paths = {p for p, _, _ in missing} | {p for p, _, _ in extra}
    if len(missing) < 1000 and all(binary(root, p) for p in paths):
        whole = all(not any(x[0] == p for x in got) or not any(x[0] == p for x in missing) for p in paths)
        if whole:
            out["status"] = "same"
            out["note"] = f"ripgrep's NUL-byte files answered differently run to run: {sorted(paths)[:3]}"
            return out
    out["status"] = "diff"
    out["missing"] = [str(x)[:200] for x in missing[:3]]
    out["extra"] = [str(x)[:200] for x in extra[:3]]
    return out


def _ranges(ns: list[int]) -> list[list[int]]:
    """[[first, last], ...] of the runs in sorted ``ns``: which of the seeded stream's patterns ran."""
    out: list[list[int]] = []
    for n in ns:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def summarize(logs: list[Path]) -> dict[str, object]:
    """The outcome of one root's logs (its workers'): patterns, differences, bounded answers."""
    rows = [
        json.loads(line)
        for log in logs
        for line in log.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    by: dict[tuple[str, tuple[str, ...]], dict[str, object]] = {}
    for row in rows:
        by[(str(row["pattern"]), tuple(row["flags"]))] = row  # type: ignore[arg-type]
    kept = list(by.values())
    status = [str(r["status"]) for r in kept]
    return {
        "patterns": len(kept),
        "stream_indices": _ranges(sorted(int(r["i"]) for r in kept)),  # type: ignore[call-overload]
        "differences": status.count("diff"),
        "bounded": status.count("bounded"),
        "refused_by_both": sum(1 for r in kept if r["status"] == "same" and r["rc"] == 2),
        "of_which_filters_left_no_file": sum(
            1 for r in kept if r["status"] == "same" and r["rc"] == 2 and "filters" in str(r.get("reason"))
        ),
        "lines_compared_cut": sum(int(r.get("cut_lines", 0)) for r in kept),  # type: ignore[call-overload]
        "narrowed_by_the_index": sum(1 for r in kept if r["narrowed"]),
        "option_shapes": {f: sum(1 for r in kept if f in r["flags"]) for f in ("-F", "-i", "-w", "-l", "-c", "-g", "-t", "-m")},  # type: ignore[operator]
        "nul_file_notes": [r["note"] for r in kept if "note" in r][:5],
        "diff_examples": [r for r in kept if r["status"] == "diff"][:5],
        "bounded_examples": [{"pattern": r["pattern"], "flags": r["flags"], "reason": r.get("reason")} for r in kept if r["status"] == "bounded"][:5],
        "nav_seconds": round(sum(float(r["nav_s"]) for r in kept), 1),  # type: ignore[arg-type]
        "rg_seconds": round(sum(float(r["rg_s"]) for r in kept), 1),  # type: ignore[arg-type]
    }  # fmt: skip


def main() -> None:
    if sys.argv[1:2] == ["--summary"]:
        print(json.dumps(summarize([Path(a) for a in sys.argv[2:]]), indent=1, ensure_ascii=False))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("count", type=int)
    ap.add_argument("log", type=Path)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument(
        "--reverse", type=Path, metavar="OTHER_LOG",
        help="a second worker: take the patterns from the last, skipping those OTHER_LOG (the first "
        "worker's) holds, and stop where the two meet",
    )  # fmt: skip
    ap.add_argument(
        "--start", type=int, default=0, metavar="I",
        help="a third worker: begin at pattern I, stopping where it meets --meet's log",
    )  # fmt: skip
    ap.add_argument(
        "--meet", type=Path, metavar="OTHER_LOG", help="with --start: the log of the worker ahead"
    )
    args = ap.parse_args()
    root = args.root.resolve()

    def logged(path: Path) -> set[tuple[str, tuple[str, ...]]]:
        if not path.exists():
            return set()
        rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        return {(row["pattern"], tuple(row["flags"])) for row in rows}

    done = logged(args.log)
    todo = list(enumerate(patterns(root, count=args.count, seed=args.seed)))
    with Navigator(root, refresh=False) as nav, args.log.open("a", encoding="utf-8") as log:
        for i, (pattern, flags) in reversed(todo) if args.reverse else todo[args.start :]:
            if (pattern, flags) in done:
                continue
            ahead = args.reverse or args.meet
            if ahead and (pattern, flags) in logged(ahead):
                break  # the other worker got here: every pattern is done
            row = {"i": i, **one(nav, root, pattern, flags)}
            log.write(json.dumps(row, ensure_ascii=False) + "\n")
            log.flush()


if __name__ == "__main__":
    main()
