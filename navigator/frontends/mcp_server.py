"""``nav mcp``: nav's verbs as MCP tools over stdio, for coding agents.

Each tool has a short description, returns compact text bounded by ``limit``, and
turns a nav error into a tool error whose message names the bad value.

Every line an agent sends gets a reply when it may be a request: the ``mcp`` SDK drops a
line it cannot validate (params that are not an object, an id of 1.5, ``jsonrpc`` "1.0", a
batch, JSON nested too deep) without a word, so the client waits for ever. Here each line is
held against :func:`navigator.frontends.wire.check_message` first: a bad one is answered
with a JSON-RPC error (its id when it can be read, else null), a malformed notification is
logged and dropped, and only good lines reach the SDK.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
import traceback
from collections.abc import AsyncIterator, Callable
from typing import IO, TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

import anyio
import anyio.to_thread
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from navigator.errors import NavError, shorten
from navigator.frontends import display
from navigator.frontends.textout import render_response
from navigator.frontends.wire import INVALID_REQUEST, MAX_MESSAGE_BYTES, Rejected, check_message

if TYPE_CHECKING:
    from navigator.results import Hit, Response
    from navigator.verbs import Verbs

P = ParamSpec("P")
R = TypeVar("R")

log = logging.getLogger("nav.mcp")

INSTRUCTIONS = (
    "nav navigates this repository. `find` answers anything (a name, path:line:col, or a question); "
    "`def` finds definitions and `show` returns a definition's source (no need to read the whole file); "
    "`refs`, `callers`, `callees`, `impl` and `hover` are exact answers from real language servers; "
    "`symbols` matches names by pattern; `grep` is ripgrep from an index; `search` finds code by meaning (paste an issue whole; "
    "view='code' ranks the definitions to edit); `outline` lists one file's symbols, `map` gives an "
    "overview, `status` says what is indexed. Lists page with `offset`. Every answer says when it is "
    "incomplete and why."
)


def _call(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
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
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1 or limit > 500:
        raise ToolError(f"limit must be between 1 and 500, got {shorten(limit)}")
    return limit


def _offset(offset: int) -> int:
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0 or offset > 1_000_000:
        raise ToolError(f"offset must be a whole number from 0, got {shorten(offset)}; e.g. offset=50")
    return offset


def _page(resp: Response[Any], limit: int, offset: int) -> str:
    return render_response(resp, limit=_limit(limit), offset=_offset(offset))


def _precise(resp: Response[Hit], precise_only: bool) -> Response[Hit]:
    """The answer without its ``possible`` hits (same name in code, unresolved by the server) when
    asked; the answer still says it is incomplete, since those may be real uses."""
    if not precise_only:
        return resp
    kept = tuple(h for h in resp.items if "possible" not in getattr(h, "provenance", ()))
    return dataclasses.replace(resp, items=kept)


def build_server(nav: Verbs) -> MCPServer:
    """An MCP server over ``nav``: a Navigator, or the daemon's client (the same verbs)."""
    server: MCPServer = MCPServer(name="nav", instructions=INSTRUCTIONS)

    @server.tool(
        description="Answer a query about the code: a name (`createSalesOrder`, `Order.create`), "
        "a position (`src/a.py:12:5`) or a question (`where do we retry the ERP call`)."
    )
    def find(query: str, limit: int = 20, offset: int = 0) -> str:
        return _page(_call(nav.query, query, limit=_limit(limit) + _offset(offset)), limit, offset)

    @server.tool(
        name="def",
        description="Where a symbol is defined (all definitions if ambiguous), with signatures; "
        "all_repos=true: in every repository published to the team store (hits read repo@commit:path).",
    )
    def def_(name: str, limit: int = 20, offset: int = 0, all_repos: bool = False) -> str:
        if all_repos:
            return _page(_call(nav.definitions, name, all_repos=True), limit, offset)
        return _page(_call(nav.definitions, name), limit, offset)

    @server.tool(
        description="The source of a definition — by name, `Class.method`, or `path:line` (the "
        "definition around that line) — trimmed to max_lines with a note of the lines cut."
    )
    def show(target: str, max_lines: int = 200, limit: int = 3) -> str:
        return render_response(_call(nav.show, target, max_lines=max_lines, limit=_limit(limit)), limit=limit)

    @server.tool(
        description="Every reference to a symbol (name, `Class.method` or path:line:col) from a real "
        "language server; `[possible]` hits are the same name where the server could not resolve a "
        "type (precise_only=true drops them). Says if incomplete."
    )
    def refs(name: str, limit: int = 50, offset: int = 0, precise_only: bool = False) -> str:
        return _page(_precise(_call(nav.references, name), precise_only), limit, offset)

    @server.tool(description="Functions and methods that call the given function or method (call hierarchy).")
    def callers(name: str, limit: int = 50, offset: int = 0, precise_only: bool = False) -> str:
        return _page(_precise(_call(nav.callers, name), precise_only), limit, offset)

    @server.tool(description="What the given function or method calls (call hierarchy, outgoing).")
    def callees(name: str, limit: int = 50, offset: int = 0) -> str:
        return _page(_call(nav.callees, name), limit, offset)

    @server.tool(
        description="Implementations of an interface, abstract method or base class (subclasses, overrides)."
    )
    def impl(name: str, limit: int = 50, offset: int = 0, precise_only: bool = False) -> str:
        return _page(_precise(_call(nav.implementations, name), precise_only), limit, offset)

    @server.tool(
        description="The language server's signature, type and documentation for a symbol or path:line:col."
    )
    def hover(name: str) -> str:
        return render_response(_call(nav.hover, name), limit=5)

    @server.tool(
        description="Symbols whose name matches a pattern: exact, prefix, substring, words "
        "(`sales order`) or fuzzy, best first; kind filters (function, class, method...)."
    )
    def symbols(pattern: str, limit: int = 50, offset: int = 0, kind: str | None = None) -> str:
        kinds = (kind,) if kind else None
        resp = _call(nav.symbols, pattern, limit=_limit(limit) + _offset(offset), kinds=kinds)
        return _page(resp, limit, offset)

    @server.tool(
        description="Search code by meaning and by name (a question, names, or pasted issue text with "
        "tracebacks); view='files' gives the best chunk of each file, view='code' the definitions "
        "to read or edit, ranked; all_repos=true: every repository published to the team store "
        "(hits read repo@commit:path)."
    )
    def search(
        text: str, limit: int = 10, offset: int = 0, view: str = "files", all_repos: bool = False
    ) -> str:
        """``view``: "files" (where to look) or "code" (the definitions to read or edit);
        ``all_repos``: search every repository published to the team store."""
        if view not in ("files", "code"):
            raise ToolError(f"view must be 'files' or 'code', got {view[:100]!r}")
        k = _limit(limit) + _offset(offset)
        if all_repos:
            return _page(_call(nav.search, text, k=k, all_repos=True), limit, offset)
        return _page(_call(nav.search, text, k=k, view=view), limit, offset)

    @server.tool(
        description="Text search like ripgrep (same files, same lines), from an index: a regular "
        "expression (Rust syntax) or, with fixed=true, a literal; ignore_case, word; glob narrows "
        "files ('*.py', '!tests/**'); hits name their enclosing symbol."
    )
    def grep(
        pattern: str,
        fixed: bool = False,
        ignore_case: bool = False,
        word: bool = False,
        glob: str | None = None,
        path: str | None = None,
        context: int = 0,
        limit: int = 50,
        offset: int = 0,
    ) -> str:
        if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= 20:
            raise ToolError(f"context must be between 0 and 20 lines, got {shorten(context)}")
        resp = _call(
            nav.grep, pattern, fixed=fixed, ignore_case=ignore_case, word=word,
            globs=(glob,) if glob else (), paths=(path,) if path else (), before=context, after=context,
            limit=_limit(limit) + _offset(offset), symbols=True,
        )  # fmt: skip
        return _page(resp, limit, offset)

    @server.tool(
        description="The symbols defined in one file, nested (path relative to the repository root)."
    )
    def outline(path: str, limit: int = 200, offset: int = 0) -> str:
        return _page(_call(nav.outline, path), limit, offset)

    @server.tool(
        name="map",
        description="An overview of the repository: its most important symbols' "
        "signatures, ranked by how much the code references them, within a token budget.",
    )
    def map_(tokens: int = 1024) -> str:
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 16 or tokens > 16384:
            raise ToolError(f"tokens must be between 16 and 16384, got {shorten(tokens)}")
        result = _call(nav.repo_map, tokens=tokens)
        return f"{result.text}\n({len(result.entries)} of {result.total_symbols} symbols)"

    @server.tool(description="What is indexed: files, symbols, chunks, languages, and files changed since.")
    def status() -> str:
        st = _call(nav.status)
        langs = ", ".join(f"{lang} {n}" for lang, n in sorted(st.languages.items(), key=lambda kv: -kv[1]))
        lines = [
            f"{st.root}: {st.files} files, {st.symbols} symbols, {st.chunks} chunks, {st.refs} references",
            f"languages: {langs or 'none'}",
            f"changed since the last index: {st.stale_files} files"
            + ("" if st.last_run_complete else "; the last index run did not finish"),
            f"git history: {display.history_line(st.history_commits, st.history_head)}",
        ]
        lines.extend(f"note: {n}" for n in st.notes)
        return "\n".join(lines)

    _refuse_unknown_arguments(server)
    return server


def _refuse_unknown_arguments(server: MCPServer) -> None:
    """A tool called with an argument it does not take (``k`` for ``limit``) is refused, naming
    it and the tool's arguments: the library would drop it silently and answer as if unasked."""
    taken: dict[str, list[str]] = {}
    call = server.call_tool

    async def checked(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if not taken:
            for tool in await server.list_tools():
                taken[tool.name] = sorted((tool.input_schema or {}).get("properties", {}))
        known = taken.get(name)
        unknown = [a for a in arguments if known is not None and a not in known]
        if unknown:
            said = ", ".join(f"'{shorten(str(a), 40)}'" for a in unknown[:3]) + (
                " …" if len(unknown) > 3 else ""
            )
            raise ToolError(
                f"{name} takes no argument {said}; its arguments are {', '.join(known or ()) or 'none'}"
            )
        return await call(name, arguments, context)

    server.call_tool = checked  # type: ignore[method-assign]


MAX_DEPTH = 64
"""Nesting of an MCP message: its envelope, params, and tool arguments (nav's are scalars)."""


def check_line(line: bytes) -> str | list[dict[str, Any]]:
    """One line from the agent: the text to hand to the SDK, or the error replies to send
    instead (none for a malformed notification, which is logged). Pure; never raises."""
    checked = check_message(line, max_bytes=MAX_MESSAGE_BYTES, max_depth=MAX_DEPTH)
    if isinstance(checked, dict):
        try:  # the SDK's own parse of the same text, so nothing that passes here is dropped there
            mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError as exc:  # e.g. a lone surrogate (`"\udcff"`), an id past 64 bits
            req_id = checked.get("id")
            checked = Rejected(
                INVALID_REQUEST,
                f"not an MCP message: {_describe(exc)}",
                (req_id if isinstance(req_id, str | int) and not isinstance(req_id, bool) else None,),
                answer="id" in checked and "method" in checked,
            )
        else:
            return line.decode("utf-8")
    if not checked.answer:
        log.warning("ignored a malformed notification or response: %s", checked.message)
    return checked.replies()


def _describe(exc: ValueError) -> str:
    """pydantic's first complaint, shortened: ``Invalid JSON: lone leading surrogate in hex
    escape at line 1 column 58``."""
    errors = getattr(exc, "errors", None)
    try:
        first = errors(include_url=False)[0] if callable(errors) else None
    except (IndexError, TypeError):
        first = None
    if not isinstance(first, dict):
        return shorten(str(exc))
    where = ".".join(str(p) for p in first.get("loc", ()))
    return shorten(f"{first.get('msg', exc)}{f' at `{where}`' if where else ''}")


def _error_message(reply: dict[str, Any]) -> mcp_types.JSONRPCError:
    """The SDK's type of an error reply; under id null when the SDK cannot carry the id
    (an integer past 64 bits, a string with a lone surrogate)."""
    try:
        message = mcp_types.JSONRPCError.model_validate(reply)
        message.model_dump_json()  # an id with a lone surrogate parses in Python, but cannot be sent
        return message
    except ValueError:
        error = dict(reply["error"])
        error["message"] = str(error.get("message", "")).encode("utf-8", "backslashreplace").decode("utf-8")
        return mcp_types.JSONRPCError.model_validate({**reply, "id": None, "error": error})


def _read_line(rfile: IO[bytes]) -> bytes:
    """The next line, at most MAX_MESSAGE_BYTES + 1 bytes of it held (the rest of a longer
    one is read and dropped, so it reaches :func:`check_line` as too large). b"" at the end."""
    line = rfile.readline(MAX_MESSAGE_BYTES + 1)
    if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
        while (rest := rfile.readline(1 << 16)) and not rest.endswith(b"\n"):
            pass
    return line


@contextlib.contextmanager
def _own_stdin() -> Any:
    """Read the agent from a private copy of fd 0 and point fd 0 at the null device, so no
    child (git, a language server) can read the agent's messages; fd 0 is restored after."""
    if sys.stdin is None:  # started with fd 0 closed: whatever holds fd 0 now is not the agent
        with open(os.devnull, "rb") as empty:
            yield empty
        return
    private = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
    finally:
        os.close(devnull)
    try:
        with os.fdopen(private, "rb", closefd=False) as rfile:
            yield rfile
    finally:
        os.dup2(private, 0)
        os.close(private)


async def _serve(server: MCPServer) -> None:
    write_ready = anyio.Event()
    sink: list[Any] = []

    with _own_stdin() as rfile:

        async def lines() -> AsyncIterator[str]:
            while line := await anyio.to_thread.run_sync(_read_line, rfile, abandon_on_cancel=True):
                checked = check_line(line)
                if isinstance(checked, str):
                    yield checked
                    continue
                await write_ready.wait()
                for reply in checked:
                    await sink[0].send(SessionMessage(_error_message(reply)))

        # stdout stays the SDK's (it keeps stray prints off the wire); stdin is read here
        async with stdio_server(stdin=cast(Any, lines())) as (read_stream, write_stream):
            sink.append(write_stream)
            write_ready.set()
            lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs; no public name
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def serve_stdio(nav: Verbs) -> None:
    anyio.run(_serve, build_server(nav))
