"""What the language-server layer answers, and what the engine asks of it: positions and
locations (absolute paths, 0-based lines, UTF-16 characters, as LSP counts them), answers with
their completeness, and the :class:`LanguageServers` Protocol that :class:`lsp.pool.ServerPool`
and the test fakes implement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

__all__ = ["LanguageServers", "Location", "LspAnswer", "Operation", "Position", "RawAnswer"]

Operation = Literal["definition", "references", "implementation", "hover", "callers", "callees"]


@dataclass(frozen=True, slots=True)
class Position:
    """An LSP position: absolute path, 0-based line, UTF-16 character."""

    path: str
    line: int
    character: int


@dataclass(frozen=True, slots=True)
class Location:
    """An LSP range in a file (absolute path, 0-based, UTF-16). ``name`` is set for
    call-hierarchy items (the caller or callee)."""

    path: str
    start_line: int
    start_character: int
    end_line: int
    end_character: int
    name: str | None = None


@dataclass(frozen=True, slots=True)
class LspAnswer:
    locations: tuple[Location, ...] = ()
    complete: bool = True
    reason: str | None = None
    server: str | None = None
    answered: bool = True
    """False when no server answered at all (none installed, not ready, crashed): the
    caller should fall back to syntax matches and say so."""
    text: str | None = None
    """Hover text."""
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class RawAnswer:
    """The server's own result for a request sent as is (:meth:`ServerPool.request`)."""

    result: Any = None
    complete: bool = True
    reason: str | None = None
    server: str | None = None
    answered: bool = True


class LanguageServers(Protocol):
    """What the exact leg (:class:`navigator.exact.ExactNavigator`) asks of the language servers:
    :class:`ServerPool`, or a fake for unit tests. Both calls are the pool's own (see there)."""

    def query(
        self,
        root: Path,
        language: str,
        op: Operation,
        positions: Sequence[Position],
        *,
        deadline_s: float,
        rescan: bool = True,
    ) -> LspAnswer:
        """Ask the server for ``language`` under ``root`` about each position, within the deadline."""
        ...

    def files_changed(self, root: Path, paths: Iterable[str | Path] | None = None) -> None:
        """Files under ``root`` changed (None: any may have); returns at once."""
        ...

    def close(self) -> None:
        """Stop every server (called only on a pool the exact leg made itself)."""
        ...
