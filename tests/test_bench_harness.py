"""The harness against what the benchmarks reported: a committed semble report is regenerated from its
committed result files, and one entry point lists every fault scenario (real subprocesses, no index)."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _tables(markdown: str) -> str:
    """The report without its header (the model line and the command that made it)."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("command:")) + 1
    return "\n".join(lines[start:]).strip()


@pytest.mark.parametrize(
    ("run", "baseline"),
    [("semble63-lexical", "semble63-lexical-main-c2c9851"), ("semble63-check-r2", "semble63-lexical")],
)
def test_semble_report_is_regenerated_exactly_from_its_result_files(
    tmp_path: Path, run: str, baseline: str
) -> None:
    # every NDCG mean, paired difference and bootstrap interval of a published report, recomputed
    out = tmp_path / f"{run}.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "semble_bench.py"),
            "--merge",
            str(RESULTS / f"{run}.json"),
            "--compare",
            str(RESULTS / f"{baseline}.json"),
            "--out",
            str(out),
        ],
        env=_env(),
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=300,
    )
    committed = _tables((RESULTS / f"{run}.md").read_text())
    assert "[" in committed  # the report has intervals to compare
    assert _tables(out.with_suffix(".md").read_text()) == committed


def test_one_entry_point_lists_every_fault_scenario() -> None:
    areas = sorted(m.name for m in pkgutil.iter_modules([str(ROOT / "bench" / "fault_scenarios")]))
    assert "frames" in areas  # the raw-frame fuzz of bench/fuzz_frames.py is one of them
    listed = subprocess.run(
        [sys.executable, "-m", "bench.faults", "--list"],
        env=_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert {row.split()[0] for row in rows[:-1]} == set(areas)
    assert rows[-1] == f"{len(rows) - 1} scenarios in {len(areas)} areas"


def test_an_unknown_fault_area_is_refused_by_name() -> None:
    got = subprocess.run(
        [sys.executable, "-m", "bench.faults", "--area", "nosuch", "--list"],
        env=_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode != 0
    assert "nosuch" in got.stderr and "frames" in got.stderr
