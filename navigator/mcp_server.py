"""``nav mcp``: nav's verbs as MCP tools over stdio, for coding agents.

Each tool has a short description, returns compact text bounded by ``limit``, and
turns a nav error into a tool error whose message names the bad value.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from navigator.textout import render_response
from storage.errors import NavError

INSTRUCTIONS = (
    "nav navigates this repository. Use `find` for anything (a name, a path:line:col, or a question), "
    "`refs`/`callers` for exact usages of a name from a real language server, `def` for definitions, "
    "`search` to find code by meaning, `outline` for one file's symbols, `map` for an overview. "
    "Every answer says when it is incomplete and why."
)


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except NavError as err:
        raise ToolError(str(err)) from None


def _limit(limit: int) -> int:
    if limit < 1 or limit > 500:
        raise ToolError(f"limit must be between 1 and 500, got {limit}")
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
        description="Search code by meaning and by name; returns the best chunks with their symbols; "
        "all_repos=true: every repository published to the team store (hits read repo@commit:path)."
    )
    def search(text: str, limit: int = 10, all_repos: bool = False) -> str:
        if all_repos:
            return render_response(_call(nav.search, text, k=_limit(limit), all_repos=True), limit=limit)
        return render_response(_call(nav.search, text, k=_limit(limit)), limit=limit)

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
            raise ToolError(f"tokens must be between 16 and 16384, got {tokens}")
        result = _call(nav.repo_map, tokens=tokens)
        return f"{result.text}\n({len(result.entries)} of {result.total_symbols} symbols)"

    return server


def serve_stdio(nav: Any) -> None:
    build_server(nav).run("stdio")
