"""How a daemon ends: a native crash leaves the threads' stacks in its log."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from navigator.paths import daemon_paths

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _start(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """A daemon for ``root`` as the client starts one (its log under ``.nav/``), once it said ready."""
    r, w = os.pipe()
    base = {**os.environ, "PYTHONPATH": str(ROOT), "NAV_DAEMON_NO_EMBED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "navigator.frontends.daemon", str(root), "--no-watch", "--ready-fd", str(w), *args],
        pass_fds=(w,), cwd=ROOT, env={**base, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    os.close(w)
    try:
        said, _, _ = select.select([r], [], [], 120.0)
        word = os.read(r, 64).strip() if said else b""
    finally:
        os.close(r)
    if word != b"ready":
        proc.kill()
        _, err = proc.communicate(timeout=60)
        raise AssertionError(f"the daemon did not say ready ({word!r}): {err[-2000:]}")
    return proc


def test_a_native_crash_leaves_the_thread_stacks_in_the_daemons_log(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(HERE / "workspaces" / "python", root)
    proc = _start(root, env={"NAV_DAEMON_NO_WARM": "1"})
    os.kill(proc.pid, signal.SIGSEGV)  # what a fault in SQLite, tree-sitter or a model would raise
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGSEGV
    log = daemon_paths(root.resolve()).log.read_text(encoding="utf-8", errors="replace")
    assert "Current thread" in log or "Thread 0x" in log, log[-2000:]
