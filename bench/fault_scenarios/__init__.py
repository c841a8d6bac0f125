"""Fault scenarios for ``bench/faults.py``: one module per area, each exposing ``SCENARIOS``.

A scenario is a function ``(workdir: Path) -> list[FaultResult]`` that builds what it needs under
``workdir`` (a fresh empty folder), injects one kind of fault one or more times against the real parts
(real processes, language servers, SQLite files, sockets), and reports per fault kind:

- ``injected``: how many times the fault was injected;
- ``honest``: how many of those ended in a clear error or an answer that says it is partial
  (never a hang, a traceback, a silently wrong or silently partial answer, or a leak);
- ``recovered``: how many were followed, without a hand step, by a correct complete answer;
- ``lost``: data lost (rows of a finished index that vanished, a published commit half-visible...): must be 0.

Scenarios stop what they start (daemons, servers) and bound every wait.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class FaultResult:
    area: str  # "processes", "storage", "boundaries", "input", "exact", ...
    fault: str  # one line: what was injected, e.g. "kill -9 of nav index at a random point"
    injected: int
    honest: int
    recovered: int
    lost: int = 0
    note: str = ""


Scenario = Callable[[Path], list[FaultResult]]
