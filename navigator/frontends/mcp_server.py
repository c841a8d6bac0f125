"""``nav mcp``: nav's verbs as MCP tools over stdio, for coding agents.

Each tool has a short description, returns compact text bounded by ``limit``, and
turns a nav error into a tool error whose message names the bad value.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from navigator.frontends.textout import render_response
from storage.errors import NavError, shorten

log = logging.getLogger("nav.mcp")

INSTRUCTIONS = (
    "nav navigates this repository. Use `find` for anything (a name, a path:line:col, or a question), "
    "`refs`/`callers` for exact usages of a name from a real language server, `def` for definitions, "
    "`search` to find code by meaning, `outline` for one file's symbols, `map` for an overview. "
    "Every answer says when it is incomplete and why."
)


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a verb; a nav error becomes a tool error with its message (which names the bad value),
    anything else a tool error that says what failed — never a traceback in the agent's context."""
    try:
        return fn(*args, **kwargs)
    except NavError as err:
        raise ToolError(str(err)) from None
    except Exception as exc:  # a bug: logged whole on stderr, one line to the agent
        name = getattr(fn, "__name__", "the tool")
        log.error("internal error in %s: %s", name, traceback.format_exc())
        raise ToolError(f"internal error in {name}: {type(exc).__name__}: {shorten(str(exc), 300)}") from None


def _limit(limit: int) -> int:
    if limit < 1 or limit > 500:
        raise ToolError(f"limit must be between 1 and 500, got {shorten(limit)}")
    return limit


def build_server(nav: Any) -> MCPServer:
    """An MCP server over ``nav`` (a Navigator, or anything with the same verbs)."""
    server: MCPServer = MCPServer(name="nav", instructions=INSTRUCTIONS)

    @server.tool(
        description="Answer a query about the code: a name (`createSalesOrder`, `Order.create`), "
        "a position (`src/a.py:12:5`) or a question (`where do we retry the ERP call`)."
    )
    def find(query: str, limit: int = 20) -> str:
        return render_response(_call(nav.query, query, limit=_limit(limit)), limit=limit)

    @server.tool(
        description="Every reference to a symbol, from a real language server (exact), "
        "by name or qualified name; says if incomplete."
    )
    def refs(name: str, limit: int = 50) -> str:
        return render_response(_call(nav.references, name), limit=_limit(limit))

    @server.tool(
        name="def",
        description="Where a symbol is defined (all definitions if ambiguous), with signatures; "
        "all_repos=true: in every repository published to the team store (hits read repo@commit:path).",
    )
    def def_(name: str, limit: int = 20, all_repos: bool = False) -> str:
        if all_repos:
            return render_response(_call(nav.definitions, name, all_repos=True), limit=_limit(limit))
        return render_response(_call(nav.definitions, name), limit=_limit(limit))

    @server.tool(description="Functions and methods that call the given function or method (call hierarchy).")
    def callers(name: str, limit: int = 50) -> str:
        return render_response(_call(nav.callers, name), limit=_limit(limit))

    @server.tool(
        description="Search code by meaning and by name (a question, names, or pasted issue text with "
        "tracebacks); view='files' gives the best chunk of each file, view='code' the definitions "
        "to read or edit, ranked; all_repos=true: every repository published to the team store "
        "(hits read repo@commit:path)."
    )
    def search(text: str, limit: int = 10, view: str = "files", all_repos: bool = False) -> str:
        """``view``: "files" (where to look) or "code" (the definitions to read or edit);
        ``all_repos``: search every repository published to the team store."""
        if view not in ("files", "code"):
            raise ToolError(f"view must be 'files' or 'code', got {view[:100]!r}")
        if all_repos:
            return render_response(_call(nav.search, text, k=_limit(limit), all_repos=True), limit=limit)
        options = {"view": "code"} if view == "code" else {}
        return render_response(_call(nav.search, text, k=_limit(limit), **options), limit=limit)

    @server.tool(
        description="The symbols defined in one file, nested (path relative to the repository root)."
    )
    def outline(path: str, limit: int = 200) -> str:
        return render_response(_call(nav.outline, path), limit=_limit(limit))

    @server.tool(
        name="map",
        description="An overview of the repository: its most important symbols' "
        "signatures, ranked by how much the code references them, within a token budget.",
    )
    def map_(tokens: int = 1024) -> str:
        if tokens < 16 or tokens > 16384:
            raise ToolError(f"tokens must be between 16 and 16384, got {shorten(tokens)}")
        result = _call(nav.repo_map, tokens=tokens)
        return f"{result.text}\n({len(result.entries)} of {result.total_symbols} symbols)"

    return server


def serve_stdio(nav: Any) -> None:
    build_server(nav).run("stdio")
