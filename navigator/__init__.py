"""nav: code navigation for agents, editors and the command line.

``from navigator import Navigator`` is the Python API; see :mod:`navigator.api`.
This module stays light: importing it loads no model and starts no server.
"""

from navigator.api import Navigator
from navigator.errors import NavError

__all__ = ["NavError", "Navigator"]
__version__ = "0.1.0"
