"""Fault scenarios for the three JSON-RPC front ends (area ``frames``): the raw-frame fuzz of
``bench/fuzz_frames.py``, short, in the shared fault table — generated malformed envelopes (wrong
types, deep nesting, bad UTF-8, truncated and concatenated frames, bad Content-Length headers,
batches) written to a real ``nav mcp``, ``nav lsp`` and daemon, each followed by a valid request.

Honest: the envelope was answered when JSON-RPC 2.0 says it must be (a request), its sentinel got
its reply, and the process lived. Recovered: the valid request after it was answered, and the last
valid request got the right answer. The long run (3,000 per front end) is ``bench/fuzz_frames.py``."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bench import fuzz_frames
from bench.fault_scenarios import FaultResult, Scenario

AREA = "frames"
ENVELOPES = 300
SEED = 1717


@contextmanager
def _same_environment() -> Iterator[None]:
    """The daemon fuzz sets NAV_DAEMON_NO_* in this process: later scenarios must not see them."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _row(report: fuzz_frames.Report, what: str) -> FaultResult:
    if report.died:
        honest = recovered = 0
    else:
        honest = max(0, report.sent - len(report.unanswered) - report.sentinel_missing)
        recovered = max(0, report.sent - report.sentinel_missing) if report.final_ok else 0
    note = (
        f"owed a reply {report.owed}, answered {report.answered}; "
        f"final request {'right' if report.final_ok else 'WRONG'}"
        + ("; the process DIED" if report.died else "")
    )
    return FaultResult(
        AREA, f"malformed JSON-RPC envelopes to {what}", report.sent, honest, recovered, note=note
    )


def _scenario(front_end: str, what: str) -> Scenario:
    def scenario(work: Path) -> list[FaultResult]:
        root = fuzz_frames.prepare(work)
        with _same_environment():
            report = fuzz_frames.FRONT_ENDS[front_end](root, ENVELOPES, SEED)
        return [_row(report, what)]

    scenario.__name__ = f"fuzz_{front_end}"
    scenario.__doc__ = (
        f"{ENVELOPES} generated malformed envelopes to {what}, each followed by a valid request."
    )
    return scenario


fuzz_mcp: Callable[[Path], list[FaultResult]] = _scenario("mcp", "`nav mcp`")
fuzz_lsp: Callable[[Path], list[FaultResult]] = _scenario("lsp", "`nav lsp`")
fuzz_daemon: Callable[[Path], list[FaultResult]] = _scenario("daemon", "the daemon socket")

SCENARIOS: list[Scenario] = [fuzz_mcp, fuzz_lsp, fuzz_daemon]
