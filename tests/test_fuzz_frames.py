"""The raw-frame fuzz of bench/fuzz_frames.py, short: a few hundred generated malformed envelopes
to a real `nav mcp`, `nav lsp` and daemon each (issue 17 §4). Every envelope that may be a request
is answered, the valid request after each is answered, no process dies, and a last valid request
gets the right answer."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "fuzz_frames.py"
ENVELOPES = 300


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_frames", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_frames"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


fuzz = _load()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield fuzz.prepare(tmp_path_factory.mktemp("fuzz"))


@pytest.mark.parametrize("front_end", ["mcp", "lsp", "daemon"])
def test_every_fuzzed_request_is_answered_and_nothing_dies(root: Path, front_end: str) -> None:
    report = fuzz.FRONT_ENDS[front_end](root, ENVELOPES, seed=1717)
    assert report.sent == ENVELOPES and report.owed > ENVELOPES // 2  # the fuzz did owe replies
    assert not report.died, report.line()
    assert report.unanswered == [] and report.answered == report.owed, report.unanswered[:5]
    assert report.sentinel_missing == 0, report.missed[:5]
    assert report.final_ok, report.line()


def test_the_fuzz_decides_what_is_owed_from_json_rpc_alone() -> None:
    """The oracle, checked on its own: it must not borrow nav's envelope check."""
    owed = fuzz.must_answer
    assert owed(b'{"jsonrpc": "2.0", "method": "x"}') == (False, set())  # a notification
    assert owed(b'{"jsonrpc": "2.0", "id": 3, "result": {}}') == (False, set())  # a response
    assert owed(b'{"jsonrpc": "1.0", "id": 3, "method": "x"}') == (True, {3})
    assert owed(b'[{"id": 1, "method": "x"}, {"method": "y"}]') == (True, {1})
    assert owed(b"[]") == (True, set()) and owed(b"{oops") == (True, set()) and owed(b"5") == (True, set())
    assert owed(b'{"id": "a", "method": "x", "p": "\xff"}') == (True, {"a"})
    assert "wire" not in fuzz.__dict__ and "check_message" not in BENCH.read_text()
