"""Timing a command and writing a result file, as the benchmarks do."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def timed_ms(cmd: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> float:
    """Wall milliseconds of one run of ``cmd`` (output discarded; its exit status is not checked:
    the benchmarks check answers separately)."""
    t = time.perf_counter()
    subprocess.run(
        list(cmd),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return (time.perf_counter() - t) * 1e3


def write_json(path: Path, data: Any, *, indent: int | None = 1, default: Any = None) -> None:
    """Write a result file (its folder made first), JSON with a final newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, default=default) + "\n", encoding="utf-8")
