"""`nav lsp` end to end: a real LSP client (pytest-lsp) over stdio against the real engine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

WORKSPACE = Path(__file__).parent / "workspaces" / "python"
REPO = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("editor") / "ws"
    shutil.copytree(WORKSPACE, root)
    return root


def uri(root: Path, rel: str) -> str:
    return (root / rel).as_uri()


def line_of(root: Path, rel: str, needle: str) -> tuple[int, int]:
    """0-based (line, character) of the first occurrence of ``needle`` in a file."""
    for i, text in enumerate((root / rel).read_text().splitlines()):
        if needle in text:
            return i, text.index(needle)
    raise AssertionError(f"{needle!r} not in {rel}")


@pytest.mark.asyncio(loop_scope="module")
async def test_workspace_symbol_names_first(client: LanguageClient, workspace: Path) -> None:
    result = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="create_sales_order"))
    assert result
    first = result[0]
    assert first.name == "create_sales_order" and first.location.uri == uri(workspace, "orders/service.py")
    assert first.kind == types.SymbolKind.Function


@pytest.mark.asyncio(loop_scope="module")
async def test_definition_and_references_across_files(client: LanguageClient, workspace: Path) -> None:
    line, char = line_of(workspace, "orders/__init__.py", "create_sales_order")
    pos = types.TextDocumentIdentifier(uri=uri(workspace, "orders/__init__.py"))
    defs = await client.text_document_definition_async(
        types.DefinitionParams(text_document=pos, position=types.Position(line=line, character=char + 2))
    )
    assert defs and any(d.uri == uri(workspace, "orders/service.py") for d in defs)
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=pos,
            position=types.Position(line=line, character=char + 2),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    files = {r.uri.rsplit("/", 1)[-1] for r in refs or []}
    assert {"service.py", "__init__.py"} <= files


@pytest.mark.asyncio(loop_scope="module")
async def test_hover(client: LanguageClient, workspace: Path) -> None:
    line, char = line_of(workspace, "orders/service.py", "def create_sales_order")
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri(workspace, "orders/service.py")),
            position=types.Position(line=line, character=char + 6),
        )
    )
    assert hover is not None and "create_sales_order" in str(hover.contents)


@pytest.mark.asyncio(loop_scope="module")
async def test_custom_requests(client: LanguageClient) -> None:
    status = await client.protocol.send_request_async("nav/status", {})
    assert status.files >= 5 and status.indexed
    found = await client.protocol.send_request_async("nav/find", {"query": "Order.total", "limit": 5})
    assert found.items and found.items[0].path == "orders/models.py"


@pytest.mark.asyncio(loop_scope="module")
async def test_malformed_and_outside_requests_are_errors_not_crashes(
    client: LanguageClient, tmp_path: Path
) -> None:
    with pytest.raises(Exception, match="nav/find needs a string `query`"):
        await client.protocol.send_request_async("nav/find", {"query": 42})
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    with pytest.raises(Exception, match="outside the root"):
        await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=outside.as_uri()),
                position=types.Position(line=0, character=0),
            )
        )
    with pytest.raises(Exception, match="no symbol named `no_such_thing`"):
        await client.protocol.send_request_async("nav/refs", {"name": "no_such_thing"})
    # still alive
    status = await client.protocol.send_request_async("nav/status", {})
    assert status.files >= 5
