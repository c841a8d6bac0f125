"""nav: code navigation for agents, editors and the command line.

``from navigator import Navigator`` is the Python API; see :mod:`navigator.api`.
This module stays light: importing it loads nothing but itself (not even :mod:`typing`),
because every ``nav`` process imports it first and the console script's fast path
(:mod:`navigator.frontends.entry`) is timed against ``rg``. ``Navigator``, ``NavError`` and
``Verbs`` (the typed surface ``Navigator`` and the daemon's client share, :mod:`navigator.verbs`)
are imported on first use (PEP 562).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from navigator.api import Navigator
    from navigator.errors import NavError
    from navigator.verbs import Verbs

__all__ = ["NavError", "Navigator", "Verbs"]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    if name == "Navigator":
        from navigator.api import Navigator

        return Navigator
    if name == "NavError":
        from navigator.errors import NavError

        return NavError
    if name == "Verbs":
        from navigator.verbs import Verbs

        return Verbs
    raise AttributeError(f"module 'navigator' has no attribute {name!r}")
