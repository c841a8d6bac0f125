"""``nav lsp``: one language server over stdio that gives an editor navigation in every
language nav has a server for.

Requests and where their answers come from:

- ``textDocument/definition``, ``declaration``, ``typeDefinition``, ``implementation``,
  ``hover``, ``documentHighlight``, ``callHierarchy`` (prepare, incoming, outgoing) and
  ``typeHierarchy`` (prepare, supertypes, subtypes): the managed language server of the
  file's language (basedpyright, typescript-language-server, gopls, clangd...), asked as
  the editor asked, its own answer passed back. When no server can answer (none
  installed, crashed, not supporting the request), definition falls back to the symbol
  table and documentHighlight to syntax matches; the editor gets a ``window/logMessage``
  saying why, once per language and reason, and an empty answer otherwise — never a hang.
- ``textDocument/references``: nav's exact leg (the server's answer, then *possible*
  references — same name, not resolved by the server — when the exact leg gives them, and
  syntax matches when no server answers). An LSP location cannot carry provenance, so
  possible ones are included, after the precise ones, and counted in a logMessage.
- ``textDocument/documentSymbol`` (hierarchical) and ``workspace/symbol`` (names first from
  the symbol table, then meaning from search): nav's index.

Live buffers: ``didOpen``/``didChange`` (full or incremental)/``didSave``/``didClose``. The
managed servers get the buffer's text (versioned didOpen/didChange, pushed 100 ms after the
last keystroke and always before a request), and nav's own answers for an open file come
from the buffer: its outline, the symbols and syntax references the exact leg uses, and
the workspace/symbol hits in it. The buffer is parsed (the indexer's tree-sitter code) when
it is pushed, i.e. debounced, and a request that comes first parses it itself; either way
once per version. Closing the buffer returns to the disk's view.

Where this runs, and why. The buffers live in this process, one per editor connection,
and so do the language servers that see them: a server holds one text per document, so a
server that saw an editor's unsaved buffer would answer the CLI from it too. The index
and the search model are the root's daemon's (shared with the CLI and agents, kept fresh
by its watcher; ``--no-daemon``: in this process); the index is read directly (SQLite),
search is asked over the daemon's socket. The CLI and agents keep seeing the disk.

Several ``workspaceFolders``: one engine per root; a file belongs to the deepest root
holding it. ``$/cancelRequest`` answers the request at once with ``-32800``;
``$/progress`` (work-done progress, when the client supports it) while the index is
built, the language servers load, and vectors are embedded.

Custom requests: ``nav/find`` ``{query, limit?}``, ``nav/search`` ``{text, k?}``,
``nav/refs`` ``{name}``, ``nav/status`` ``{}`` (nav's result objects as JSON, the disk's view).

This module holds the request handlers, the passthrough to the managed servers and the
warm-up; the server's state is :class:`~navigator.frontends.editor_server.NavLanguageServer`,
each root's engine and index :class:`~navigator.frontends.editor_engine.RootEngine`, the
answers computed from the index and buffers :mod:`~navigator.frontends.editor_answers`, the
buffers :mod:`~navigator.frontends.editor_buffers`, the JSON-RPC framing
:mod:`~navigator.frontends.editor_rpc`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from navigator.errors import NavError, UsageError
from navigator.frontends.editor_answers import (
    Lines,
    definition_fallback,
    document_symbols,
    file_language,
    hit_location,
    is_possible,
    lsp_range,
    nav_position,
    workspace_symbols,
)
from navigator.frontends.editor_engine import RootEngine, index_root, root_languages
from navigator.frontends.editor_rpc import SHOWN, Raw, serve, shorten
from navigator.frontends.editor_server import NavLanguageServer
from navigator.public import detect_language
from navigator.results import to_data

if TYPE_CHECKING:
    from navigator.frontends.editor_engine import NavFactory


log = logging.getLogger("nav.editor")

T = TypeVar("T")

INVALID_PARAMS = -32602
DEADLINE_S = 30.0
WARM_LANGUAGES = frozenset({"python", "typescript", "tsx", "javascript", "go", "c", "cpp", "java"})


# LSP method -> the server capability that says it is supported
_PASSTHROUGH: dict[str, str] = {
    types.TEXT_DOCUMENT_DEFINITION: "definitionProvider",
    types.TEXT_DOCUMENT_DECLARATION: "declarationProvider",
    types.TEXT_DOCUMENT_TYPE_DEFINITION: "typeDefinitionProvider",
    types.TEXT_DOCUMENT_IMPLEMENTATION: "implementationProvider",
    types.TEXT_DOCUMENT_HOVER: "hoverProvider",
    types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT: "documentHighlightProvider",
    types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY: "callHierarchyProvider",
    types.CALL_HIERARCHY_INCOMING_CALLS: "callHierarchyProvider",
    types.CALL_HIERARCHY_OUTGOING_CALLS: "callHierarchyProvider",
    types.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY: "typeHierarchyProvider",
    types.TYPE_HIERARCHY_SUPERTYPES: "typeHierarchyProvider",
    types.TYPE_HIERARCHY_SUBTYPES: "typeHierarchyProvider",
}


class NavRpcError(JsonRpcException):
    CODE = -32000
    MESSAGE = "nav error"


def _rpc_error(err: NavError) -> NavRpcError:
    from navigator.frontends.wire import error_type

    return NavRpcError(message=str(err), code=err.rpc_code, data={"type": error_type(err)})  # type: ignore[no-untyped-call]


# -- helpers shared by the handlers --------------------------------------------------------


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a handler; nav errors and bad params become JSON-RPC errors, never a dead server."""

    async def wrapper(ls: NavLanguageServer, params: Any) -> Any:
        try:
            ls.flush_pushes()  # every buffer change reaches the servers before the request
            await ls.wait_indexed()
            return await fn(ls, params)
        except NavError as err:
            raise _rpc_error(err) from None
        except (AttributeError, TypeError, KeyError, ValueError) as err:
            raise NavRpcError(message=f"invalid params: {shorten(str(err))}", code=INVALID_PARAMS) from None  # type: ignore[no-untyped-call]

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _param(params: Any, name: str, default: Any = None) -> Any:
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


def _string_param(params: Any, method: str, name: str) -> str:
    value = _param(params, name)
    if not isinstance(value, str):
        raise UsageError(f"{method} needs a string `{name}`, got {shorten(repr(value))}")
    return value


def _int_param(params: Any, method: str, name: str, default: int) -> int:
    value = _param(params, name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{method} needs a positive integer `{name}`, got {shorten(repr(value))}")
    return value


def _unstructure(ls: NavLanguageServer, params: Any) -> Any:
    return ls.lsp._converter.unstructure(params)


def _uri_of(params: Any) -> str:
    doc = getattr(params, "text_document", None)
    if doc is not None:
        return str(doc.uri)
    item = getattr(params, "item", None)
    if item is not None:
        return str(item.uri)
    raise UsageError("the request names no document (textDocument.uri or item.uri)")


async def passthrough(ls: NavLanguageServer, method: str, params: Any) -> tuple[Raw | None, str]:
    """Ask the managed server of the document's language, as the editor asked. Returns its
    own result (None when no server answered; the editor is told why once) and the reason."""
    engine, rel = ls.locate(_uri_of(params))
    position = getattr(params, "position", None)

    def check() -> str:  # reads the buffer or the disk, and the index: off the loop
        if position is not None:
            nav_position(engine, rel, position)  # inside the document, or a clear error
        return file_language(engine, rel)

    language = await ls.run(check)
    raw = _unstructure(ls, params)
    path = str(engine.root / rel)

    def ask() -> Any:
        return ls.pool.request(
            engine.root, language, method, raw, path=path, capability=_PASSTHROUGH[method],
            deadline_s=DEADLINE_S, rescan=not engine.table.follows_changes(),
        )  # fmt: skip

    answer = await _with_loading_progress(ls, engine, language, ask)
    if answer.answered:
        return Raw(answer.result), ""
    reason = answer.reason or "no answer"
    ls.say_once(f"{language}:{method}", f"{method} for {language or rel}: {reason}")
    return None, reason


async def _with_loading_progress(
    ls: NavLanguageServer, engine: RootEngine, language: str, ask: Callable[[], T]
) -> T:
    info = ls.pool.session_info(engine.root, language) if language else None
    if info is not None and info.get("ready") and info.get("alive"):
        return await ls.run(ask)
    from navigator.public import server_key

    if not language or server_key(language) is None:
        return await ls.run(ask)
    async with ls.work_progress(f"nav: loading the {language} language server", str(engine.root)):
        return await ls.run(ask)


def build_server(nav_factory: NavFactory | None = None, *, use_daemon: bool = False) -> NavLanguageServer:
    server = NavLanguageServer(nav_factory, use_daemon=use_daemon)

    # -- lifecycle and buffers ---------------------------------------------------------------

    @server.feature(types.INITIALIZED)
    def initialized(ls: NavLanguageServer, params: Any) -> None:
        ls.warming_up = True  # before any later message: requests wait for the first index
        asyncio.ensure_future(_warm_up(ls))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: NavLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            root = Path(unquote(urlparse(folder.uri).path)).resolve()
            engine = ls.engines.pop(root, None)
            if engine is not None:
                engine.close()
        asyncio.ensure_future(_warm_up(ls))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: NavLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        with _notification("didOpen"):
            engine, rel = ls.locate(params.text_document.uri)
            engine.buffers.open(rel, params.text_document.text, params.text_document.version)
            ls.push(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: NavLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        with _notification("didChange"):
            uri = params.text_document.uri
            engine, rel = ls.locate(uri)
            # pygls has applied the change (full or incremental) to its copy already
            text = ls.workspace.get_text_document(uri).source
            engine.buffers.change(rel, text, params.text_document.version)
            ls.schedule_push(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: NavLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        with _notification("didSave"):
            engine, rel = ls.locate(params.text_document.uri)
            engine.exact.files_changed([rel])  # the disk changed: the servers re-read what is not open

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NavLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        with _notification("didClose"):
            engine, rel = ls.locate(params.text_document.uri)
            engine.buffers.close(rel)
            ls.push(params.text_document.uri)  # back to the disk's text

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: NavLanguageServer, params: Any) -> None:
        ls.shutdown_engines()

    # -- navigation ------------------------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @_guard
    async def definition(ls: NavLanguageServer, params: types.DefinitionParams) -> Any:
        raw, _ = await passthrough(ls, types.TEXT_DOCUMENT_DEFINITION, params)
        if raw is not None:
            return raw
        engine, rel = ls.locate(params.text_document.uri)
        return await ls.run(lambda: definition_fallback(engine, rel, params.position))

    def simple(method: str) -> None:
        @server.feature(method)
        @_guard
        async def handler(ls: NavLanguageServer, params: Any) -> Any:
            raw, _ = await passthrough(ls, method, params)
            if raw is not None:
                return raw
            return None if method in (types.TEXT_DOCUMENT_HOVER,) else []

        handler.__name__ = method.replace("/", "_")

    for method in (
        types.TEXT_DOCUMENT_DECLARATION,
        types.TEXT_DOCUMENT_TYPE_DEFINITION,
        types.TEXT_DOCUMENT_IMPLEMENTATION,
        types.TEXT_DOCUMENT_HOVER,
        types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
        types.CALL_HIERARCHY_INCOMING_CALLS,
        types.CALL_HIERARCHY_OUTGOING_CALLS,
        types.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY,
        types.TYPE_HIERARCHY_SUPERTYPES,
        types.TYPE_HIERARCHY_SUBTYPES,
    ):
        simple(method)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    @_guard
    async def highlight(ls: NavLanguageServer, params: types.DocumentHighlightParams) -> Any:
        raw, _ = await passthrough(ls, types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, params)
        if raw is not None:
            return raw
        engine, rel = ls.locate(params.text_document.uri)  # syntax matches of the name in this file

        def same_name() -> list[types.DocumentHighlight]:
            line, col = nav_position(engine, rel, params.position)
            parsed = engine.buffers.parsed(rel)
            refs = parsed.refs if parsed is not None else ()
            if parsed is None:
                from navigator.public import parse_source

                text = engine.text(rel)
                refs = parse_source(rel, text, detect_language(rel, text)).refs
            here = next((r for r in refs if r.line == line and r.col <= col <= r.end_col), None)
            if here is None:
                return []
            lines = engine.lines(rel)
            return [
                types.DocumentHighlight(range=lsp_range(lines, r.line, r.col, r.line, r.end_col))
                for r in refs
                if r.name == here.name
            ]

        return await ls.run(same_name)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    @_guard
    async def references(ls: NavLanguageServer, params: types.ReferenceParams) -> list[types.Location]:
        engine, rel = ls.locate(params.text_document.uri)
        include_decl = bool(params.context and params.context.include_declaration)

        def where() -> tuple[int, int, str]:  # reads the buffer or the disk, and the index: off the loop
            return (*nav_position(engine, rel, params.position), file_language(engine, rel))

        line, col, language = await ls.run(where)

        def ask() -> Any:
            return engine.exact.references(f"{rel}:{line}:{col}", deadline_s=DEADLINE_S)

        resp = await _with_loading_progress(ls, engine, language, ask)
        hits = [h for h in resp.items if include_decl or not h.is_definition]
        precise = [h for h in hits if not is_possible(h)]
        possible = [h for h in hits if is_possible(h)]

        def locations() -> list[types.Location]:  # reads every file with a hit: off the loop
            lines = Lines(engine)
            return [hit_location(engine, lines, h) for h in precise + possible]

        found = await ls.run(locations)
        if possible:
            ls.show_message_log(
                f"nav: references at {rel}:{line}:{col}: {len(precise)} from the language server, then "
                f"{len(possible)} possible (same name, not resolved by the server)",
                types.MessageType.Info,
            )
        if not resp.complete:
            ls.say_once(f"{language}:references", f"references for {language or rel}: {resp.reason}")
        return found

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @_guard
    async def document_symbol(ls: NavLanguageServer, params: types.DocumentSymbolParams) -> Any:
        engine, rel = ls.locate(params.text_document.uri)
        return await ls.run(lambda: document_symbols(engine, rel))

    @server.feature(types.WORKSPACE_SYMBOL)
    @_guard
    async def workspace_symbol(ls: NavLanguageServer, params: types.WorkspaceSymbolParams) -> Any:
        query = (params.query or "").strip()
        if not query:
            return []
        return await ls.run(lambda: workspace_symbols(ls, query))

    # -- nav's own requests (the disk's view, as the CLI sees it) ---------------------------

    @server.feature("nav/find")
    @_guard
    async def nav_find(ls: NavLanguageServer, params: Any) -> Any:
        query = _string_param(params, "nav/find", "query")
        limit = _int_param(params, "nav/find", "limit", 20)
        return await ls.run(lambda: to_data(ls.nav.query(query, limit=limit)))

    @server.feature("nav/search")
    @_guard
    async def nav_search(ls: NavLanguageServer, params: Any) -> Any:
        text = _string_param(params, "nav/search", "text")
        k = _int_param(params, "nav/search", "k", 10)
        return await ls.run(lambda: to_data(ls.nav.search(text, k=k)))

    @server.feature("nav/refs")
    @_guard
    async def nav_refs(ls: NavLanguageServer, params: Any) -> Any:
        name = _string_param(params, "nav/refs", "name")
        return await ls.run(lambda: to_data(ls.nav.references(name)))

    @server.feature("nav/status")
    @_guard
    async def nav_status(ls: NavLanguageServer, params: Any) -> Any:
        return await ls.run(lambda: to_data(ls.nav.status()))

    return server


@contextlib.contextmanager
def _notification(what: str) -> Iterator[None]:
    """A notification has no reply: a bad one is logged (with the value) and dropped."""
    try:
        yield
    except NavError as err:
        log.warning("%s ignored: %s", what, shorten(str(err), 2 * SHOWN))


async def _warm_up(ls: NavLanguageServer) -> None:
    """After ``initialized``: bring each root's index up (progress shown), then start the
    language servers of its main languages, so the first request does not pay their start."""
    try:
        roots = ls.folders()
    except NavError as err:
        ls.say_once("roots", str(err))
        return
    try:
        await _warm_up_roots(ls, roots)
    finally:  # whatever failed, no request waits for an index this warm-up will not build
        for root in roots:
            ls.engine_for_root(root).indexed.set()


async def _warm_up_roots(ls: NavLanguageServer, roots: list[Path]) -> None:
    for root in roots:
        engine = ls.engine_for_root(root)
        if not engine.indexed.is_set() and (engine.remote is not None or engine.local.refresh):
            async with ls.work_progress("nav: indexing", str(root)) as report:
                await ls.run(partial(index_root, engine, report))
        engine.indexed.set()  # (on a failure, _warm_up's finally sets it)
        await ls.run(engine.start_watching)
        try:
            languages: dict[str, int] = await ls.run(partial(root_languages, engine))
        except NavError as err:
            ls.say_once("index", f"{root}: {err}")
            continue
        ranked = sorted((n, lang) for lang, n in languages.items() if lang in WARM_LANGUAGES)
        for _, language in reversed(ranked[-4:]):
            info = ls.pool.session_info(root, language)
            if info is not None:
                continue
            async with ls.work_progress(f"nav: loading the {language} language server", str(root)):
                ready = await ls.run(partial(ls.pool.warm, root, language, deadline_s=120.0))
            if not ready:
                log.info("the %s server for %s is not available", language, root)
        if engine.remote is not None:
            asyncio.ensure_future(_embedding_progress(ls, engine))


async def _embedding_progress(ls: NavLanguageServer, engine: RootEngine, *, every_s: float = 2.0) -> None:
    """While the daemon embeds the root's chunks, show how far it is."""
    daemon_status: Callable[[], dict[str, Any]] | None = getattr(engine.remote, "daemon_status", None)
    if daemon_status is None:  # an engine that is not the daemon's client: nothing to follow
        return
    status = await ls.run(daemon_status)
    vectors = (status or {}).get("vectors")
    if not vectors or vectors.split("/")[0] == vectors.split("/")[1]:
        return
    async with ls.work_progress("nav: embedding code for search", str(engine.root)) as report:
        for _ in range(3600):
            status = await ls.run(daemon_status)
            vectors = (status or {}).get("vectors") or ""
            done, _, total = vectors.partition("/")
            if not done.isdigit() or not total.isdigit() or int(done) >= int(total):
                return
            report(f"{done}/{total} chunks", int(100 * int(done) / max(1, int(total))))
            await asyncio.sleep(every_s)


def serve_stdio(nav_factory: NavFactory | None = None, *, use_daemon: bool = False) -> None:
    """Serve over stdio. ``use_daemon``: the index and search come from the root's daemon
    (started on first use); ``nav_factory(root)``: a custom engine for the disk's view."""
    server = build_server(nav_factory, use_daemon=use_daemon)
    code = 1
    try:
        code = serve(server, sys.stdin.buffer, sys.stdout.buffer)
    finally:
        server.shutdown_engines()  # stops every language server this process started
        sys.stdout.flush()
        sys.stderr.flush()
        # Worker threads may still wait on a request to a server that is gone (bounded by its
        # deadline); the editor asked us to exit, so nothing is left to answer them for.
        os._exit(code)
