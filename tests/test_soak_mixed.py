"""Two minutes of mixed use on one root (issue 17's soak, short): a real daemon, CLI queries through it
and without it, Python-API sessions, `nav index` runs, `nav lsp` and `nav mcp` sessions opened and closed,
file edits, `git checkout`s and a second root, all at once. Every answer is checked against `rg`
(``bench/soak_mixed.py``; the 30-minute run is in bench/README.md)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import soak_mixed  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.mark.skipif(
    shutil.which("rg") is None, reason="ripgrep is the oracle (scripts/install-servers.sh installs it)"
)
def test_mixed_use_on_one_root_loses_nothing_and_answers_rightly(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    root = soak_mixed.generated_repo(tmp_path / "root", 1, files=12)
    second = soak_mixed.generated_repo(tmp_path / "second", 2, files=8)
    try:
        result = soak_mixed.soak(
            root, second, duration_s=120, idle_s=20, rss_after_s=0, runtime=runtime, log=lambda _m: None
        )
    finally:
        env = soak_mixed.nav_env(runtime)
        for r in (root, second):
            soak_mixed.nav(r, "daemon", "stop", env=env, timeout=120)
    t = result.tally
    text = soak_mixed.report(result)
    # every front end was exercised, and each answer was right
    assert {"cli", "no-daemon", "api", "index", "lsp", "mcp", "edit", "checkout", "second-root"} <= set(
        t.answers
    ), text
    assert sum(t.errors.values()) == 0, text
    assert sum(t.wrong.values()) == 0, text
    assert all(v == "ok" for v in result.integrity.values()), text
    for r, before in result.vectors_before.items():
        assert before > 0 and result.vectors_after[r] >= before, text  # no vector lost
    # an idle daemon costs (next to) nothing: the bench holds it to 1% of a core over 5 minutes
    assert result.idle_cpu_pct < 10.0, text
    assert result.left_running == 0, text
