"""A language with no server here (Rust: no rust-analyzer from nav's registries): `nav lsp`
says why once (window/logMessage), answers what the index can — syntax matches and symbol-table
definitions, from the unsaved buffer — and never hangs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp.registry import available_definition

WORKSPACE = Path(__file__).parent / "workspaces" / "rust"
INSERTED = "fn helper() -> u32 {\n    41\n}\n\n"
SHIFT = 4

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(available_definition("rust") is not None, reason="a Rust server is installed here"),
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fallback") / "ws"
    shutil.copytree(WORKSPACE, root)
    return root


async def test_no_server_answers_from_the_buffer_and_says_why(client: LanguageClient, workspace: Path) -> None:
    rel = "src/main.rs"
    uri = (workspace / rel).as_uri()
    disk = (workspace / rel).read_text()
    buffer = INSERTED + disk
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="rust", version=1, text=buffer))
    )
    doc = types.TextDocumentIdentifier(uri=uri)
    call = next(i for i, line in enumerate(buffer.splitlines()) if "let order = create_sales_order(" in line)
    col = buffer.splitlines()[call].index("create_sales_order") + 3
    refs = await client.text_document_references_async(
        types.ReferenceParams(text_document=doc, position=types.Position(line=call, character=col),
                              context=types.ReferenceContext(include_declaration=True))  # fmt: skip
    )
    in_main = {r.range.start.line for r in refs or [] if r.uri == uri}
    use_line = next(i for i, line in enumerate(buffer.splitlines()) if line.startswith("use orders::service"))
    assert {call, use_line} <= in_main  # syntax matches at the buffer's lines
    comment = next(i for i, line in enumerate(buffer.splitlines()) if line.startswith("// create_sales_order"))
    assert comment not in in_main  # not in comments
    assert any(r.uri.endswith("src/service.rs") for r in refs or [])
    assert any("references for rust" in m.message and "rust" in m.message for m in client.log_messages)

    # definition of a function that exists only in the buffer: the symbol table, from the buffer
    defs = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=types.Position(line=0, character=4))
    )
    assert [(d.uri, d.range.start.line) for d in defs or []] == [(uri, 0)]
    defs = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=types.Position(line=call, character=col))
    )
    assert defs and all(d.uri.endswith("src/service.rs") for d in defs)
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc, position=types.Position(line=call, character=col)))
    assert hover is None
    said = [m.message for m in client.log_messages if "textDocument/hover for rust" in m.message]
    assert len(said) == 1
    await client.text_document_hover_async(types.HoverParams(text_document=doc, position=types.Position(line=call, character=col)))
    assert len([m for m in client.log_messages if "textDocument/hover for rust" in m.message]) == 1  # once
    assert len(INSERTED.splitlines()) == SHIFT
