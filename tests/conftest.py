"""Shared fixtures. Tests never sleep to wait for something; they wait for the event."""

from __future__ import annotations

import os
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

WORKSPACES = Path(__file__).parent / "workspaces"

# Offline by design: nothing may reach a model hub during tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Write a dict of {relative path: source} under a fresh folder and return it."""

    def make(files: dict[str, str]) -> Path:
        root = tmp_path / "repo"
        root.mkdir(exist_ok=True)
        for rel, text in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(text), encoding="utf-8")
        return root

    return make


# Daemons started by tests cap their background embedding with a lock of this test session, not the
# user's real one (which a developer's own daemons hold).
os.environ.setdefault("NAV_RUNTIME_DIR", tempfile.mkdtemp(prefix="nav-test-runtime-"))

# The CLI talks to a warm daemon by default; tests run it in-process unless they test the daemon.
os.environ.setdefault("NAV_NO_DAEMON", "1")
