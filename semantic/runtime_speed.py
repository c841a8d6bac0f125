"""Which embedding runtime is faster on this CPU: its key, the texts timed, the timing and the
rule. :mod:`semantic.onnx_int8` times both runtimes when it exports the model and records the
rates per CPU in the export's meta file; choosing a runtime reads them back (bench/README.md,
"The runtime chosen by measurement")."""

from __future__ import annotations

import hashlib
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

RUNTIME_MARGIN = 1.15
"""torch is chosen over int8 only when it embedded at least this many times as many chunks per
second on this CPU. A tie goes to int8: no torch in the process (model load 0.36 against 4.7 s,
272 against 538 MB; bench/README.md), and a shared machine's noise is not a reason to switch."""

SPEED_ROUNDS = 3
"""Interleaved timing rounds per runtime (after one untimed warm-up each); the median counts."""

SPEED_TEXTS = 12
"""Chunk-sized texts timed per round: windows of nav's own source, each cut at the model's
token limit as a chunk is."""


def cpu_key() -> str:
    """This CPU, as the key of a speed measured on it: architecture, model name and a hash of its
    feature flags (a cache shared by machines of other CPUs keeps one measurement per CPU)."""
    model = flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if not model and key in ("model name", "Processor", "cpu model"):
                    model = value.strip()
                elif not flags and key in ("flags", "Features"):
                    flags = value.strip()
                if model and flags:
                    break
    except OSError:
        pass
    digest = hashlib.sha256(" ".join(sorted(flags.split())).encode()).hexdigest()[:12]
    return f"{platform.machine()}|{model[:80]}|{digest}"


def speed_texts() -> list[str]:
    """:data:`SPEED_TEXTS` chunk-like texts: 20-line windows of :mod:`semantic.onnx_int8`'s source."""
    lines = Path(__file__).with_name("onnx_int8.py").read_text(encoding="utf-8").splitlines()
    windows = ["\n".join(lines[i : i + 20]) for i in range(0, len(lines), 20)]
    windows = [w for w in windows if len(w.split()) >= 40] or windows
    return [windows[i % len(windows)] for i in range(SPEED_TEXTS)]


def time_runs(runs: dict[str, Callable[[], Any]], n_texts: int) -> dict[str, float]:
    """Texts per second of each run: one untimed warm-up each, then :data:`SPEED_ROUNDS` rounds
    interleaved (so the machine's load moves all runtimes alike); the median round counts."""
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for run in runs.values():
        run()
    for _ in range(SPEED_ROUNDS):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
    return {name: round(n_texts / max(float(np.median(s)), 1e-9), 2) for name, s in seconds.items()}


def read_speed(meta_file: Path) -> dict[str, float] | None:
    """This CPU's rates from an export's meta file (``{"speed": {cpu_key: {runtime: rate}}}``), or
    None when it has none for this CPU or cannot be read."""
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        speed = meta.get("speed", {}).get(cpu_key())
        return {"torch": float(speed["torch"]), "onnx-int8": float(speed["onnx-int8"])}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return None


def torch_faster(speed: dict[str, float]) -> bool:
    """Whether torch measured at least :data:`RUNTIME_MARGIN` times int8's rate."""
    return speed["torch"] >= RUNTIME_MARGIN * speed["onnx-int8"]
