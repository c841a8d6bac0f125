"""Time ``semantic.parse.parse_source`` over a directory: median of 3 runs, lines per second.

Wall-clock and CPU-time rates are both printed: on a busy machine the CPU figure is the
per-core throughput.

    .venv/bin/python bench/bench_parse.py [DIR] [--language python] [--budget 1500]

DIR defaults to the installed standard library's ``email`` + ``json`` + ``asyncio``
packages (plain Python, present everywhere). Single process, so the figure is per core.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from semantic.languages import detect_language  # noqa: E402
from semantic.parse import parse_source  # noqa: E402


def _files(roots: list[Path], language: str | None) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for root in roots:
        for p in sorted(root.rglob("*")):
            if not p.is_file():
                continue
            lang = detect_language(p.as_posix())
            if lang is None or (language is not None and lang != language):
                continue
            try:
                text = p.read_text("utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            out.append((p.as_posix(), text, lang))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--language", default=None)
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    roots: list[Path] = args.dirs or [
        Path(sysconfig.get_paths()["stdlib"]) / name for name in ("email", "json", "asyncio", "importlib")
    ]
    files = _files(roots, args.language)
    lines = sum(text.count("\n") + 1 for _, text, _ in files)
    parse_source("warm.py", "x = 1\n", "python")  # load grammars outside the timing
    for lang in {lang for _, _, lang in files}:
        parse_source("warm", "\n", lang)
    times: list[float] = []
    cpu_times: list[float] = []
    counts = (0, 0, 0)
    for _ in range(args.runs):
        started = time.perf_counter()
        cpu_started = time.process_time()
        symbols = refs = chunks = 0
        for path, text, lang in files:
            pf = parse_source(path, text, lang, chunk_budget=args.budget)
            symbols += len(pf.symbols)
            refs += len(pf.refs)
            chunks += len(pf.chunks)
        times.append(time.perf_counter() - started)
        cpu_times.append(time.process_time() - cpu_started)
        counts = (symbols, refs, chunks)
    median = statistics.median(times)
    cpu = statistics.median(cpu_times)
    print(
        f"{len(files)} files, {lines} lines: median {median:.3f} s wall over {args.runs} runs "
        f"= {lines / median:,.0f} lines/s ({lines / cpu:,.0f} lines/s of CPU time); "
        f"{counts[0]} symbols, {counts[1]} refs, {counts[2]} chunks"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
