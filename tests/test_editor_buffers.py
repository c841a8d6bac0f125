"""`nav lsp` end to end on live buffers and the navigation protocol: a real LSP client
(pytest-lsp) over stdio, a real basedpyright behind it, the committed Python workspace.

The edited-but-unsaved buffer: lines are inserted above a call in `orders/app.py` without
saving; definition, references and documentSymbol at the shifted positions must be right,
and the disk (what the CLI sees) must not change."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

WORKSPACE = Path(__file__).parent / "workspaces" / "python"
INSERTED = "def helper() -> int:\n    return 41\n\n\n"  # 4 lines above everything
SHIFT = 4

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("buffers") / "ws"
    shutil.copytree(WORKSPACE, root)
    return root


def uri(root: Path, rel: str) -> str:
    return (root / rel).as_uri()


def find(text: str, needle: str) -> types.Position:
    for i, line in enumerate(text.splitlines()):
        if needle in line:
            return types.Position(line=i, character=line.index(needle))
    raise AssertionError(f"{needle!r} not found")


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"]),
    scope="module",
)
async def client(lsp_client: LanguageClient, workspace: Path) -> Any:
    caps = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
    await lsp_client.initialize_session(types.InitializeParams(capabilities=caps, root_uri=workspace.as_uri()))
    yield
    await lsp_client.shutdown_session()


def doc(root: Path, rel: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri(root, rel))


async def test_progress_while_the_server_loads(client: LanguageClient) -> None:
    """The warm-up after `initialized` reports work-done progress that ends."""
    for _ in range(600):
        titles = {
            r.title: token
            for token, reports in client.progress_reports.items()
            for r in reports
            if isinstance(r, types.WorkDoneProgressBegin)
        }
        token = titles.get("nav: loading the python language server")
        if token is not None and isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd):
            break
        await asyncio.sleep(0.1)  # polling the client's record of notifications, bounded (60 s)
    else:
        raise AssertionError(f"no finished progress for the python server: {client.progress_reports}")
    assert "nav: indexing" in titles


async def test_unsaved_edit_shifts_every_answer(client: LanguageClient, workspace: Path) -> None:
    rel = "orders/app.py"
    disk = (workspace / rel).read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri(workspace, rel), language_id="python", version=1, text=disk)
        )
    )
    # incremental change: insert a function above everything, and a call to it inside main()
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(workspace, rel), version=2),
            content_changes=[
                types.TextDocumentContentChangeEvent_Type1(
                    range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                    text=INSERTED,
                )
            ],
        )
    )
    buffer = INSERTED + disk
    main_at = find(buffer, "    order = create_sales_order(")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(workspace, rel), version=3),
            content_changes=[
                types.TextDocumentContentChangeEvent_Type1(
                    range=types.Range(start=main_at, end=main_at), text="    helper()\n"
                )
            ],
        )
    )
    lines = buffer.splitlines()
    lines.insert(main_at.line, "    helper()")
    buffer = "\n".join(lines) + "\n"
    assert (workspace / rel).read_text() == disk  # nothing saved

    # definition of the call, now SHIFT + 1 lines lower
    call = find(buffer, "order = create_sales_order(")
    assert call.line == find(disk, "order = create_sales_order(").line + SHIFT + 1
    pos = types.Position(line=call.line, character=call.character + len("order = ") + 2)
    defs = await client.text_document_definition_async(types.DefinitionParams(text_document=doc(workspace, rel), position=pos))
    service = (workspace / "orders/service.py").read_text()
    target = find(service, "def create_sales_order")
    assert defs and any(
        _uri(d) == uri(workspace, "orders/service.py") and _range(d).start.line == target.line for d in _list(defs)
    )

    # definition of a function that exists only in the buffer: the server sees the buffer
    helper_call = find(buffer, "    helper()")
    defs = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(workspace, rel), position=types.Position(line=helper_call.line, character=6))
    )
    assert [(_uri(d), _range(d).start.line) for d in _list(defs)] == [(uri(workspace, rel), 0)]

    # references from the definition (a file not open) find the call at its shifted line
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc(workspace, "orders/service.py"),
            position=types.Position(line=target.line, character=target.character + 6),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    in_app = sorted(r.range.start.line for r in refs or [] if r.uri == uri(workspace, rel))
    assert call.line in in_app and find(buffer, "from orders.service import").line in in_app

    # the outline comes from the buffer
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=doc(workspace, rel))
    )
    by_name = {s.name: s for s in symbols or []}
    assert by_name["helper"].selection_range.start.line == 0
    assert by_name["main"].selection_range.start.line == find(buffer, "def main").line

    # workspace/symbol finds the buffer's new function
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="helper"))
    assert any(s.name == "helper" and s.location.uri == uri(workspace, rel) for s in found or [])

    # a full-text change replaces everything
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(workspace, rel), version=4),
            content_changes=[types.TextDocumentContentChangeEvent_Type2(text="def only_one() -> None:\n    pass\n")],
        )
    )
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc(workspace, rel)))
    assert [s.name for s in symbols or []] == ["only_one"]

    # closing the buffer returns to the disk's view
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc(workspace, rel)))
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc(workspace, rel)))
    by_name = {s.name: s for s in symbols or []}
    assert "helper" not in by_name and by_name["main"].selection_range.start.line == find(disk, "def main").line


async def test_document_symbols_are_nested(client: LanguageClient, workspace: Path) -> None:
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=doc(workspace, "orders/models.py"))
    )
    order = next(s for s in symbols or [] if s.name == "Order")
    assert order.kind == types.SymbolKind.Class
    assert {"create", "total"} <= {c.name for c in order.children or []}


async def test_hover_highlight_declaration_type_definition(client: LanguageClient, workspace: Path) -> None:
    rel = "orders/service.py"
    text = (workspace / rel).read_text()
    at = find(text, "def create_sales_order")
    pos = types.Position(line=at.line, character=at.character + 6)
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc(workspace, rel), position=pos))
    assert hover is not None and "create_sales_order" in str(hover.contents)
    order_use = find(text, "return Order.create")
    highlights = await client.text_document_document_highlight_async(
        types.DocumentHighlightParams(
            text_document=doc(workspace, rel), position=types.Position(line=order_use.line, character=order_use.character + 8)
        )
    )
    lines = {h.range.start.line for h in highlights or []}
    assert {find(text, "from orders.models import").line, order_use.line} <= lines
    decl = await client.text_document_declaration_async(
        types.DeclarationParams(
            text_document=doc(workspace, rel), position=types.Position(line=order_use.line, character=order_use.character + 8)
        )
    )
    assert decl and any(_uri(d).endswith("orders/models.py") for d in _list(decl))
    tdef = await client.text_document_type_definition_async(
        types.TypeDefinitionParams(
            text_document=doc(workspace, rel), position=types.Position(line=order_use.line, character=order_use.character + 8)
        )
    )
    assert tdef is not None  # basedpyright answers (the class, or nothing for a class object): never a hang


async def test_call_hierarchy(client: LanguageClient, workspace: Path) -> None:
    rel = "orders/service.py"
    at = find((workspace / rel).read_text(), "def create_sales_order")
    items = await client.text_document_prepare_call_hierarchy_async(
        types.CallHierarchyPrepareParams(
            text_document=doc(workspace, rel), position=types.Position(line=at.line, character=at.character + 6)
        )
    )
    assert items and items[0].name == "create_sales_order"
    incoming = await client.call_hierarchy_incoming_calls_async(types.CallHierarchyIncomingCallsParams(item=items[0]))
    assert any(c.from_.name == "main" and c.from_.uri == uri(workspace, "orders/app.py") for c in incoming or [])
    outgoing = await client.call_hierarchy_outgoing_calls_async(types.CallHierarchyOutgoingCallsParams(item=items[0]))
    assert any(c.to.name == "create" for c in outgoing or [])


async def test_type_hierarchy_answers_or_says_why(client: LanguageClient, workspace: Path) -> None:
    rel = "orders/models.py"
    at = find((workspace / rel).read_text(), "class Order")
    before = len(client.log_messages)
    result = await client.text_document_prepare_type_hierarchy_async(
        types.TypeHierarchyPrepareParams(
            text_document=doc(workspace, rel), position=types.Position(line=at.line, character=at.character + 6)
        )
    )
    if not result:  # the server has no type hierarchy: an empty answer and a logMessage saying so
        assert any("typehierarchy" in m.message.lower() for m in client.log_messages[before:])


def _stopped_server_worker() -> int:
    """The basedpyright process doing the work under this test's `nav lsp` (a leaf of the tree)."""
    import psutil

    leaves = [
        p
        for p in psutil.Process().children(recursive=True)
        if "basedpyright" in " ".join(p.cmdline()) and not p.children()
    ]
    assert len(leaves) == 1, [p.cmdline() for p in leaves]
    return leaves[0].pid


async def test_cancel_request_is_answered_at_once(client: LanguageClient, workspace: Path) -> None:
    # a request only the managed server can answer, whose process is stopped: without the cancel it
    # would wait for its deadline (seconds); the cancel must answer it at once
    where = types.Position(line=5, character=4)  # create_sales_order's name
    await client.text_document_hover_async(types.HoverParams(text_document=doc(workspace, "orders/service.py"), position=where))
    worker = _stopped_server_worker()
    os.kill(worker, signal.SIGSTOP)
    try:
        future = asyncio.wrap_future(
            client.protocol.send_request(
                types.TEXT_DOCUMENT_HOVER,
                types.HoverParams(text_document=doc(workspace, "orders/service.py"), position=where),
                msg_id="slow-1",
            )
        )
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-1"))
        started = time.monotonic()
        with pytest.raises(Exception, match="cancel"):
            await asyncio.wait_for(future, 10.0)
        assert time.monotonic() - started < 5.0
    finally:
        os.kill(worker, signal.SIGCONT)


async def test_position_outside_the_document_is_a_clear_error(client: LanguageClient, workspace: Path) -> None:
    with pytest.raises(Exception, match="line 999 is outside `orders/service.py`"):
        await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(workspace, "orders/service.py"), position=types.Position(line=999, character=0))
        )


def _list(result: Any) -> list[Any]:
    return result if isinstance(result, list) else [result]


def _uri(loc: Any) -> str:
    return str(getattr(loc, "uri", None) or loc.target_uri)


def _range(loc: Any) -> types.Range:
    return getattr(loc, "range", None) or loc.target_selection_range
