"""The harness against what the benchmarks reported: a committed semble report is regenerated from its
committed result files, and one entry point lists every fault scenario (real subprocesses, no index)."""

from __future__ import annotations

import io
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness.data import jsonl, semble_targets  # noqa: E402
from bench.harness.jsonrpc import frame, frame_bytes, read_frame  # noqa: E402
from bench.harness.run import timed_ms, write_json  # noqa: E402

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


# -- the helpers the scripts shared: LSP framing, timing a command, result files, the data's shape ------


def test_frames_round_trip_and_the_reader_skips_a_header_without_length() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"name": "créer"}}
    stream = io.BytesIO(b"X-Other: 1\r\n\r\n" + frame(message) + frame_bytes(b"not json") + frame({"id": 2}))
    assert read_frame(stream) == message
    with pytest.raises(ValueError):
        read_frame(stream)
    assert read_frame(stream) == {"id": 2}
    assert read_frame(stream) is None  # the end of the input


def test_timed_ms_runs_the_command_and_write_json_makes_its_folder(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    ms = timed_ms([sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"], tmp_path)
    assert marker.exists() and ms > 0
    out = tmp_path / "deep" / "result.json"
    write_json(out, {"ndcg": [0.5, 1.0]})
    assert out.read_text() == '{\n "ndcg": [\n  0.5,\n  1.0\n ]\n}\n'


def test_semble_targets_are_relevant_then_secondary_and_jsonl_skips_blank_lines(tmp_path: Path) -> None:
    q = {"query": "q", "relevant": ["a.py"], "secondary": [{"path": "b.py", "start_line": 3}]}
    assert semble_targets(q) == ["a.py", {"path": "b.py", "start_line": 3}]
    assert semble_targets({"relevant": ["a.py"]}) == ["a.py"]
    lines = tmp_path / "x.jsonl"
    lines.write_text('{"id": 1}\n\n{"id": 2}\n')
    assert jsonl(lines) == [{"id": 1}, {"id": 2}]
