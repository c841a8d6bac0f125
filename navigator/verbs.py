"""nav's verbs: the one typed surface every front end is written against.

:class:`Verbs` is what the CLI, the MCP server, ``nav lsp`` and the daemon's dispatch use of
the engine. Two classes implement it, with the same signatures (``tests/test_verbs.py`` holds
them to it, and mypy checks each against the Protocol):

- :class:`navigator.api.Navigator`, in-process;
- :class:`navigator.frontends.client.DaemonClient`, the root's daemon over its socket, which
  returns the same result types (:mod:`navigator.results`) and raises the same errors.

:data:`SERVED` names the verbs the daemon answers over JSON-RPC, and :func:`served` binds each
to an implementation: the daemon's one table from method names to methods, so no name read
from the wire is ever looked up as an attribute.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from navigator.results import (
    Found,
    GrepHit,
    Hit,
    HoverInfo,
    IndexReport,
    OutlineEntry,
    RepoMap,
    Response,
    SearchHit,
    Source,
    Status,
    Symbol,
)

if TYPE_CHECKING:
    from lsp.registry import Availability
    from navigator.indexer import ProgressFn

__all__ = ["SERVED", "Verbs", "served"]


class Verbs(Protocol):
    """The verbs of one indexed repository (see :class:`navigator.api.Navigator` for each)."""

    # -- the index -------------------------------------------------------------------------

    def index(
        self,
        *,
        progress: ProgressFn | None = None,
        workers: int | None = None,
        only: Sequence[str] | None = None,
    ) -> IndexReport: ...

    def status(self) -> Status: ...

    # -- the symbol table ------------------------------------------------------------------

    def definitions(
        self, name: str, *, all_repos: bool = False, store: str | None = None
    ) -> Response[Symbol]: ...

    def symbols(
        self, pattern: str, *, limit: int = 50, kinds: tuple[str, ...] | None = None
    ) -> Response[Symbol]: ...

    def outline(self, path: str | os.PathLike[str]) -> Response[OutlineEntry]: ...

    def show(self, target: str, *, max_lines: int = 200, limit: int = 5) -> Response[Source]: ...

    def repo_map(self, *, tokens: int = 1024) -> RepoMap: ...

    # -- search ----------------------------------------------------------------------------

    def search(
        self,
        text: str,
        *,
        k: int = 10,
        paths: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        view: str = "files",
        all_repos: bool = False,
        store: str | None = None,
    ) -> Response[SearchHit]: ...

    def query(self, text: str, *, limit: int = 20, deadline_s: float = 10.0) -> Response[Found]: ...

    def grep(
        self,
        pattern: str,
        *,
        fixed: bool = False,
        ignore_case: bool = False,
        word: bool = False,
        files_only: bool = False,
        count: bool = False,
        globs: tuple[str, ...] = (),
        types: tuple[str, ...] = (),
        paths: tuple[str, ...] = (),
        before: int = 0,
        after: int = 0,
        max_count: int | None = None,
        limit: int | None = 1000,
        deadline_s: float = 30.0,
        symbols: bool = False,
    ) -> Response[GrepHit]: ...

    # -- exact navigation (language servers) ------------------------------------------------

    def definition(self, target: str, *, deadline_s: float = 30.0) -> Response[Hit]: ...

    def references(
        self, target: str, *, deadline_s: float = 30.0, limit: int | None = None
    ) -> Response[Hit]: ...

    def callers(
        self, target: str, *, deadline_s: float = 30.0, limit: int | None = None
    ) -> Response[Hit]: ...

    def callees(
        self, target: str, *, deadline_s: float = 30.0, limit: int | None = None
    ) -> Response[Hit]: ...

    def implementations(
        self, target: str, *, deadline_s: float = 30.0, limit: int | None = None
    ) -> Response[Hit]: ...

    def hover(self, target: str, *, deadline_s: float = 30.0) -> Response[HoverInfo]: ...

    def doctor(self) -> Response[Availability]: ...

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None: ...


SERVED: tuple[str, ...] = (
    "index",
    "status",
    "definitions",
    "symbols",
    "outline",
    "show",
    "repo_map",
    "search",
    "query",
    "grep",
    "definition",
    "references",
    "callers",
    "callees",
    "implementations",
    "hover",
    "doctor",
)
"""The verbs the daemon answers (every verb of :class:`Verbs` but ``close``)."""


def served(nav: Verbs) -> dict[str, Callable[..., object]]:
    """Each served verb's name to ``nav``'s method: the daemon's dispatch table. Written out, so
    that mypy checks every entry against :class:`Verbs` (``tests/test_verbs.py``: its keys are
    :data:`SERVED`)."""
    return {
        "index": nav.index,
        "status": nav.status,
        "definitions": nav.definitions,
        "symbols": nav.symbols,
        "outline": nav.outline,
        "show": nav.show,
        "repo_map": nav.repo_map,
        "search": nav.search,
        "query": nav.query,
        "grep": nav.grep,
        "definition": nav.definition,
        "references": nav.references,
        "callers": nav.callers,
        "callees": nav.callees,
        "implementations": nav.implementations,
        "hover": nav.hover,
        "doctor": nav.doctor,
    }
