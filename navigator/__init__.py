"""nav: code navigation for agents, editors and the command line.

``from navigator import Navigator`` is the Python API; see :mod:`navigator.api`.
This module stays light: importing it loads no parser, model or server (the CLI's
daemon-client path depends on that), so ``Navigator`` is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from navigator.errors import NavError

if TYPE_CHECKING:
    from navigator.api import Navigator

__all__ = ["NavError", "Navigator"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "Navigator":
        from navigator.api import Navigator

        return Navigator
    raise AttributeError(f"module 'navigator' has no attribute {name!r}")
