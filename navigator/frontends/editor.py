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
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.server import LanguageServer

from navigator.confine import confine, read_text_inside
from navigator.errors import NavError, OutsideRootError, UsageError
from navigator.frontends.editor_buffers import Buffers, BufferTable, LineMap
from navigator.frontends.editor_rpc import SHOWN, NavProtocol, Raw, serve, shorten
from navigator.public import detect_language, from_lsp, to_lsp
from navigator.results import Hit, Symbol, to_data
from navigator.watch import Watcher

if TYPE_CHECKING:
    from navigator.public import ServerPool
    from navigator.verbs import Verbs

    NavFactory = Callable[[Path], Verbs]
    """Makes the engine of one root for the disk's view (a test's, or a custom one)."""

log = logging.getLogger("nav.editor")

T = TypeVar("T")

INVALID_PARAMS = -32602
DEADLINE_S = 30.0
INDEX_WAIT_S = 20.0  # how long a request waits for a root's first index before answering anyway
PUSH_DELAY_S = 0.1
"""A buffer's text goes to the servers this long after the last change (and before any request)."""
WARM_LANGUAGES = frozenset({"python", "typescript", "tsx", "javascript", "go", "c", "cpp", "java"})

_KINDS: dict[str, types.SymbolKind] = {
    "function": types.SymbolKind.Function,
    "method": types.SymbolKind.Method,
    "class": types.SymbolKind.Class,
    "struct": types.SymbolKind.Struct,
    "interface": types.SymbolKind.Interface,
    "enum": types.SymbolKind.Enum,
    "trait": types.SymbolKind.Interface,
    "type": types.SymbolKind.TypeParameter,
    "constant": types.SymbolKind.Constant,
    "module": types.SymbolKind.Module,
    "field": types.SymbolKind.Field,
}

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


class RootEngine:
    """Everything ``nav lsp`` holds for one workspace root."""

    def __init__(
        self, root: Path, pool: ServerPool | None, *, use_daemon: bool, nav_factory: NavFactory | None = None
    ) -> None:
        from navigator.api import Navigator
        from navigator.exact import ExactNavigator, NavigatorTable

        self.root = root
        self.buffers = Buffers(root)
        self.use_daemon = use_daemon
        self.remote: Verbs | None = None
        if nav_factory is not None:
            self.remote = nav_factory(root)
        elif use_daemon:
            from navigator.frontends.client import DaemonClient

            self.remote = DaemonClient(root)
        # the index, read here (the daemon keeps it fresh; without it, each query refreshes it)
        self.local = Navigator(root, refresh=self.remote is None)
        self.watching = False
        self._observer: Watcher | None = None
        # set once the warm-up's first index of this root is done: until then, requests wait
        # (bounded), so the first answers do not come from a half-built index without a word
        self.indexed = threading.Event()
        self.table = BufferTable(NavigatorTable(self.local), self.buffers, follows_changes=False)
        self.exact = ExactNavigator(root, self.table, pool=pool)
        self.pool = pool
        self._lock = threading.Lock()

    @property
    def engine(self) -> Verbs:
        """The Navigator verbs' provider for the disk's view: the daemon, or this process."""
        return self.remote if self.remote is not None else self.local

    def start_watching(self) -> None:
        """Tell this process's language servers about files changed on disk (by a save, a
        checkout...), so requests need not walk the tree first. Only the folders the index
        covers are watched (see :mod:`navigator.watch`): a ``.venv`` costs nothing."""
        from navigator.watch import start_watcher

        self._observer = start_watcher(
            self.root,
            options=lambda: self.local.walk_options,
            on_change=self.exact.files_changed,
            on_degraded=self._watch_degraded,
        )
        if self._observer is not None:
            self.table._follows = True

    def _watch_degraded(self, why: str) -> None:
        """The watcher gave up (the watch limit): each request checks the tree again."""
        self.table._follows = False
        self.exact.files_changed(None)

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
        for part in (self.remote, self.local):
            closer = getattr(part, "close", None)
            if callable(closer):
                with contextlib.suppress(Exception):
                    closer()

    # -- positions -------------------------------------------------------------------------

    def text(self, rel: str) -> str:
        buffer = self.buffers.text_of(rel)
        if buffer is not None:
            return buffer
        disk = read_text_inside(self.root, rel)  # never outside the workspace, newlines kept
        return disk if disk is not None else ""

    def lines(self, rel: str) -> list[str]:
        return self.text(rel).splitlines()


class NavLanguageServer(LanguageServer):
    """One engine per workspace root, one pool of language servers for them all."""

    def __init__(self, nav_factory: NavFactory | None = None, *, use_daemon: bool = False) -> None:
        super().__init__("nav", "0.2.0", protocol_cls=NavProtocol, max_workers=4)
        self._nav_factory = nav_factory
        self.use_daemon = use_daemon
        self.engines: dict[Path, RootEngine] = {}
        self._pool: ServerPool | None = None
        self._lock = threading.RLock()
        self._said: set[tuple[str, str]] = set()
        self._pushes: dict[str, asyncio.TimerHandle] = {}
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="nav-lsp")
        self._tokens = itertools.count(1)
        self.warming_up = False
        """Set by ``initialized``: from then on each root's warm-up brings its index up first."""

    @property
    def pool(self) -> ServerPool:
        with self._lock:
            if self._pool is None:
                from navigator.public import ServerPool

                self._pool = ServerPool()
            return self._pool

    # -- roots -----------------------------------------------------------------------------

    def folders(self) -> list[Path]:
        ws = self.workspace
        roots = [Path(unquote(urlparse(f.uri).path)) for f in ws.folders.values()] if ws.folders else []
        if not roots and ws.root_path:
            roots = [Path(ws.root_path)]
        if not roots:
            raise UsageError("the client sent no workspace root (rootUri or workspaceFolders); open a folder")
        return [r.resolve() for r in roots]

    def engine_for_root(self, root: Path) -> RootEngine:
        with self._lock:
            engine = self.engines.get(root)
            if engine is None:
                engine = RootEngine(root, self.pool, use_daemon=self.use_daemon, nav_factory=self._nav_factory)
                self.engines[root] = engine
            return engine

    def locate(self, uri: str) -> tuple[RootEngine, str]:
        """The engine of the deepest workspace root holding ``uri``, and the root-relative path."""
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            raise UsageError(f"only file:// URIs are supported, got `{shorten(uri)}`")
        path = Path(unquote(parsed.path)).resolve()
        best: Path | None = None
        for root in self.folders():
            inside = path == root or root in path.parents
            if inside and (best is None or len(root.parts) > len(best.parts)):
                best = root
        if best is None:
            raise OutsideRootError(
                f"`{shorten(uri)}` is outside the root of every workspace folder "
                f"({shorten(', '.join(map(str, self.folders())))}); nav only reads files inside them"
            )
        return self.engine_for_root(best), confine(best, path, given_as=uri)  # the one check every front end uses

    @property
    def nav(self) -> Verbs:
        """The first root's engine for the disk's view (custom requests)."""
        return self.engine_for_root(self.folders()[0]).engine

    # -- editor feedback -------------------------------------------------------------------

    def say_once(self, key: str, text: str) -> None:
        """A ``window/logMessage`` (warning) once per key and text."""
        if (key, text) in self._said:
            return
        self._said.add((key, text))
        self.show_message_log(f"nav: {text}", types.MessageType.Warning)

    def supports_progress(self) -> bool:
        caps = self.client_capabilities
        return bool(caps and caps.window and caps.window.work_done_progress)

    @contextlib.asynccontextmanager
    async def work_progress(self, title: str, message: str | None = None) -> Any:
        """Work-done progress around a wait the editor should see (when it supports it)."""
        token: str | None = None
        if self.supports_progress():
            token = f"nav-{next(self._tokens)}"
            try:
                await asyncio.wait_for(self.progress_create(token), 5.0)
                self.lsp.progress.begin(token, types.WorkDoneProgressBegin(title=title, message=message))
            except (TimeoutError, JsonRpcException) as exc:
                log.info("no progress for %s: %s", title, exc)
                token = None

        def report(text: str, percentage: int | None = None) -> None:
            if token is not None:
                self.lsp.progress.report(token, types.WorkDoneProgressReport(message=text, percentage=percentage))

        try:
            yield report
        finally:
            if token is not None:
                self.lsp.progress.end(token, types.WorkDoneProgressEnd())

    async def progress_create(self, token: str) -> None:
        await self.lsp.progress.create_async(token)

    async def wait_indexed(self, bound_s: float | None = None) -> None:
        """Wait (at most ``bound_s``) for the first index of every root being warmed up; past
        that, the editor is told once that answers may miss files not indexed yet."""
        if not self.warming_up:
            return  # no `initialized` yet (nothing indexes until then): answer from what is there
        bound_s = INDEX_WAIT_S if bound_s is None else bound_s
        until = time.monotonic() + bound_s
        while True:
            pending = [e for e in list(self.engines.values()) if not e.indexed.is_set()]
            if not pending:
                return
            if time.monotonic() >= until:
                for engine in pending:
                    self.say_once(
                        "indexing",
                        f"{engine.root}: the first index is still being built; answers may miss files "
                        "it has not reached yet",
                    )
                return
            await asyncio.sleep(0.05)

    async def run(self, fn: Callable[[], T]) -> T:
        """Run blocking work off the protocol's loop (a cancel answers at once meanwhile)."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn)

    # -- buffers -----------------------------------------------------------------------------

    def schedule_push(self, uri: str) -> None:
        handle = self._pushes.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self._pushes[uri] = self.loop.call_later(PUSH_DELAY_S, self.push, uri)

    def push(self, uri: str) -> None:
        """Send the buffer of ``uri`` (or the disk's text, when closed) to this process's servers."""
        handle = self._pushes.pop(uri, None)
        if handle is not None:
            handle.cancel()
        try:
            engine, rel = self.locate(uri)
        except NavError:
            return
        text = engine.buffers.text_of(rel)
        self.pool.set_buffer(engine.root, str(engine.root / rel), text)
        if text is not None:  # parse now, off the loop, so the next request finds it done
            self.executor.submit(engine.buffers.parsed, rel)

    def flush_pushes(self) -> None:
        for uri in list(self._pushes):
            self.push(uri)

    def shutdown_engines(self) -> None:
        for handle in self._pushes.values():
            handle.cancel()
        self._pushes.clear()
        for engine in list(self.engines.values()):
            engine.close()
        self.engines.clear()
        if self._pool is not None:
            self._pool.close()
            self._pool = None


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


def nav_position(engine: RootEngine, rel: str, pos: types.Position) -> tuple[int, int]:
    """The editor's position (0-based, UTF-16) in nav's terms (1-based, code points),
    checked against the buffer (or the disk) it points into."""
    lines = engine.lines(rel)
    if pos.line > len(lines) or (pos.line == len(lines) and pos.character > 0):
        raise UsageError(f"line {pos.line} is outside `{shorten(rel)}`, which has {len(lines)} lines (0-based)")
    text = lines[pos.line] if pos.line < len(lines) else ""
    return from_lsp(text, pos.line, pos.character)


def lsp_range(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> types.Range:
    def at(ln: int, c: int) -> types.Position:
        text = lines[ln - 1] if 1 <= ln <= len(lines) else ""
        return types.Position(*to_lsp(text, max(ln, 1), max(c, 1)))

    return types.Range(start=at(line, col), end=at(end_line, end_col))


class _Lines:
    """Per-answer cache of each file's lines (buffer first)."""

    def __init__(self, engine: RootEngine) -> None:
        self.engine = engine
        self._cache: dict[str, list[str]] = {}

    def __call__(self, rel: str) -> list[str]:
        if rel not in self._cache:
            self._cache[rel] = self.engine.lines(rel)
        return self._cache[rel]


def hit_location(engine: RootEngine, lines: _Lines, hit: Hit) -> types.Location:
    end_line = hit.end_line if hit.end_line is not None else hit.line
    end_col = hit.end_col if hit.end_col is not None else hit.col
    return types.Location(
        uri=(engine.root / hit.path).as_uri(), range=lsp_range(lines(hit.path), hit.line, hit.col, end_line, end_col)
    )


def _language(engine: RootEngine, rel: str) -> str:
    return engine.table.file_language(rel) or detect_language(rel) or ""


def _is_possible(hit: Hit) -> bool:
    return "possible" in (hit.kind or "") or "possible" in hit.provenance


def document_symbols(engine: RootEngine, rel: str) -> list[types.DocumentSymbol]:
    """The outline of ``rel``, nested by span: from its buffer when open, else the index
    (else a parse of the disk's text, for a file the index does not hold yet)."""
    rows = engine.table.symbols_in_file(rel)
    if not rows and engine.buffers.text_of(rel) is None:
        from navigator.public import parse_source

        text = engine.text(rel)
        defs = list(parse_source(rel, text, detect_language(rel, text)).symbols) if text else []
    else:
        defs = [r.definition for r in rows]
    lines = engine.lines(rel)
    defs.sort(key=lambda d: (d.span.start_line, d.span.start_col, -d.span.end_line, -d.span.end_col))
    roots: list[types.DocumentSymbol] = []
    stack: list[tuple[Any, types.DocumentSymbol]] = []
    for d in defs:
        sym = types.DocumentSymbol(
            name=d.name,
            detail=d.signature or None,
            kind=_KINDS.get(d.kind, types.SymbolKind.Variable),
            range=lsp_range(lines, d.span.start_line, d.span.start_col, d.span.end_line, d.span.end_col),
            selection_range=lsp_range(
                lines, d.name_span.start_line, d.name_span.start_col, d.name_span.end_line, d.name_span.end_col
            ),
            children=[],
        )
        while stack and not _contains(stack[-1][0].span, d.span):
            stack.pop()
        if stack:
            assert stack[-1][1].children is not None
            stack[-1][1].children.append(sym)
        else:
            roots.append(sym)
        stack.append((d, sym))
    return roots


def _contains(outer: Any, inner: Any) -> bool:
    return (outer.start_line, outer.start_col) <= (inner.start_line, inner.start_col) and (
        inner.end_line,
        inner.end_col,
    ) <= (outer.end_line, outer.end_col)


def _matches(query: str, name: str) -> bool:
    q, n = query.lower(), name.lower()
    return q in n or (len(q) >= 3 and _subsequence(q, n))


def _subsequence(needle: str, hay: str) -> bool:
    it = iter(hay)
    return all(ch in it for ch in needle)


def workspace_symbols(ls: NavLanguageServer, query: str) -> list[types.SymbolInformation]:
    """Names first (the symbol table; open buffers' own symbols), then meaning (search)."""
    out: list[types.SymbolInformation] = []
    for root in ls.folders():
        engine = ls.engine_for_root(root)
        dirty = {rel for rel in engine.buffers.paths() if engine.buffers.dirty(rel)}
        seen: set[tuple[str, int]] = set()
        names: list[tuple[Any, str, int, int, int, str | None]] = []
        try:
            found: tuple[Symbol, ...] = engine.local.symbols(query, limit=50).items
        except NavError as err:
            log.warning("workspace/symbol name leg failed for %s: %s", root, err)
            found = ()
        for sym in found:
            if sym.path not in dirty:
                names.append((sym.kind, sym.qualified_name, 0, 0, 0, None))
                seen.add((sym.path, sym.line))
                out.append(
                    types.SymbolInformation(
                        name=sym.qualified_name,
                        kind=_KINDS.get(sym.kind, types.SymbolKind.Variable),
                        location=types.Location(
                            uri=(root / sym.path).as_uri(),
                            range=lsp_range(engine.lines(sym.path), sym.line, sym.col, sym.line, sym.col + len(sym.name)),
                        ),
                        container_name=sym.container,
                    )
                )
        for rel in sorted(dirty):  # the buffer's symbols stand in for the index's
            lines = engine.lines(rel)
            for row in engine.table.symbols_in_file(rel):
                d = row.definition
                if _matches(query, d.name):
                    seen.add((rel, d.name_span.start_line))
                    out.append(
                        types.SymbolInformation(
                            name=d.qualified_name,
                            kind=_KINDS.get(d.kind, types.SymbolKind.Variable),
                            location=types.Location(
                                uri=(root / rel).as_uri(),
                                range=lsp_range(lines, d.name_span.start_line, d.name_span.start_col,
                                                d.name_span.start_line, d.name_span.end_col),  # fmt: skip
                            ),
                            container_name=d.container,
                        )
                    )
        if " " in query or len(out) < 5:  # then meaning: a phrase finds code by what it does
            out += _search_symbols(engine, query, seen, dirty)
    return out


def _search_symbols(
    engine: RootEngine, query: str, seen: set[tuple[str, int]], dirty: set[str]
) -> list[types.SymbolInformation]:
    try:
        hits = engine.engine.search(query, k=20).items
    except NavError as err:
        log.warning("workspace/symbol search leg failed: %s", err)
        return []
    maps: dict[str, LineMap] = {}
    out: list[types.SymbolInformation] = []
    for h in hits:
        start, end = h.start_line, h.end_line
        if h.path in dirty:  # the index holds the disk's lines: move them to the buffer's
            if h.path not in maps:
                disk = read_text_inside(engine.root, h.path) or ""
                maps[h.path] = LineMap(disk, engine.text(h.path))
            s, e = maps[h.path].line(start), maps[h.path].line(end)
            if s is None:
                continue  # its first line was edited: the chunk is not there as indexed
            start, end = s, e if e is not None else s
        if (h.path, start) in seen:
            continue
        seen.add((h.path, start))
        lines = engine.lines(h.path)
        out.append(
            types.SymbolInformation(
                name=h.symbol or f"{h.path}:{start}",
                kind=types.SymbolKind.Function if h.symbol else types.SymbolKind.Namespace,
                location=types.Location(
                    uri=(engine.root / h.path).as_uri(), range=lsp_range(lines, start, 1, end, 1)
                ),
                container_name=f"search: {shorten(query, 60)}",
            )
        )
    return out


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
        return _language(engine, rel)

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


async def _with_loading_progress(ls: NavLanguageServer, engine: RootEngine, language: str, ask: Callable[[], T]) -> T:
    info = ls.pool.session_info(engine.root, language) if language else None
    if info is not None and info.get("ready") and info.get("alive"):
        return await ls.run(ask)
    from navigator.public import server_key

    if not language or server_key(language) is None:
        return await ls.run(ask)
    async with ls.work_progress(f"nav: loading the {language} language server", str(engine.root)):
        return await ls.run(ask)


def _definition_fallback(engine: RootEngine, rel: str, pos: types.Position) -> list[types.Location]:
    """No server answered: the symbol table's definitions of the name under the cursor."""
    line, col = nav_position(engine, rel, pos)
    lines = _Lines(engine)
    text = lines(rel)[line - 1] if line - 1 < len(lines(rel)) else ""
    import re

    name = ""
    for m in re.finditer(r"[A-Za-z_$][\w$]*", text):
        if m.start() < col <= m.end() + 1:
            name = m.group()
            break
    if not name:
        return []
    out = []
    for row in engine.table.resolve(name):
        d = row.definition
        out.append(
            types.Location(
                uri=(engine.root / d.path).as_uri(),
                range=lsp_range(lines(d.path), d.name_span.start_line, d.name_span.start_col,
                                d.name_span.end_line, d.name_span.end_col),  # fmt: skip
            )
        )
    return out


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
        return await ls.run(lambda: _definition_fallback(engine, rel, params.position))

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
            return (*nav_position(engine, rel, params.position), _language(engine, rel))

        line, col, language = await ls.run(where)

        def ask() -> Any:
            return engine.exact.references(f"{rel}:{line}:{col}", deadline_s=DEADLINE_S)

        resp = await _with_loading_progress(ls, engine, language, ask)
        hits = [h for h in resp.items if include_decl or not h.is_definition]
        precise = [h for h in hits if not _is_possible(h)]
        possible = [h for h in hits if _is_possible(h)]

        def locations() -> list[types.Location]:  # reads every file with a hit: off the loop
            lines = _Lines(engine)
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
                await ls.run(partial(_index, engine, report))
        engine.indexed.set()  # (on a failure, _warm_up's finally sets it)
        await ls.run(engine.start_watching)
        try:
            languages: dict[str, int] = await ls.run(partial(_languages, engine))
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


def _languages(engine: RootEngine) -> dict[str, int]:
    languages: dict[str, int] = engine.local.store.stats().languages
    return languages


def _index(engine: RootEngine, report: Callable[[str, int | None], None]) -> None:
    try:
        if engine.remote is not None:
            engine.remote.symbols("nav", limit=1)  # the daemon answers once its first index is there
        else:

            def progress(done: int, total: int) -> None:
                report(f"{done}/{total} files", int(100 * done / total) if total else None)

            engine.local.index(progress=progress)
    except NavError as err:
        log.warning("indexing %s: %s", engine.root, err)


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
