"""nav's per-user cache: files made from what is installed (the default model's ONNX export, the Go
release a gopls binary was built with). Standard library only; depends on nothing of nav's."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """``$NAV_CACHE_DIR``, else ``$XDG_CACHE_HOME/nav``, else ``~/.cache/nav`` (not created here)."""
    env = os.environ.get("NAV_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "nav"
