"""`nav lsp` in its default mode (the root's daemon for the index) and several workspace folders.

The overlay is per editor connection: while an editor holds an unsaved edit, `nav lsp`
answers from the buffer and the CLI, through the same daemon, keeps answering from the disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

PYTHON = Path(__file__).parent / "workspaces" / "python"
MIXED = Path(__file__).parent / "workspaces" / "mixed"
INSERTED = "\n\n\n# three blank lines and this comment above everything\n"
SHIFT = 4

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("daemon")
    a, b = base / "orders", base / "mixed"
    shutil.copytree(PYTHON, a)
    shutil.copytree(MIXED, b)
    yield a, b
    for root in (a, b):  # the daemons nav lsp started (one per root)
        subprocess.run([sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "daemon", "stop"],
                       capture_output=True, timeout=60, check=False)  # fmt: skip


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "navigator.frontends.cli", "lsp"]),
    scope="module",
)
async def client(lsp_client: LanguageClient, roots: tuple[Path, Path]) -> Any:
    a, b = roots
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=a.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=a.as_uri(), name="orders"),
                               types.WorkspaceFolder(uri=b.as_uri(), name="mixed")],  # fmt: skip
        )
    )
    yield
    await lsp_client.shutdown_session()


def cli(root: Path, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}
    done = subprocess.run([sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), *args, "--json"],
                          capture_output=True, text=True, timeout=120, env=env, check=True)  # fmt: skip
    return json.loads(done.stdout)


async def test_unsaved_buffer_for_the_editor_disk_for_the_cli(client: LanguageClient, roots: tuple[Path, Path]) -> None:
    root = roots[0]
    rel = "orders/app.py"
    disk = (root / rel).read_text()
    uri = (root / rel).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=INSERTED + disk)
        )
    )
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    disk_main = next(i for i, line in enumerate(disk.splitlines()) if line.startswith("def main"))
    main = next(s for s in symbols or [] if s.name == "main")
    assert main.selection_range.start.line == disk_main + SHIFT  # the buffer
    outline = cli(root, "outline", rel)  # the same daemon, from the CLI: the disk
    cli_main = next(e for e in outline["items"] if e["symbol"]["name"] == "main")
    assert cli_main["symbol"]["line"] == disk_main + 1
    refs = cli(root, "refs", "create_sales_order")
    call = next(i for i, line in enumerate(disk.splitlines()) if "order = create_sales_order(" in line)
    assert any(h["path"] == rel and h["line"] == call + 1 for h in refs["items"]), refs["items"]


async def test_each_folder_has_its_engine(client: LanguageClient, roots: tuple[Path, Path]) -> None:
    a, b = roots
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="apply_discount"))
    assert any(s.location.uri == (b / "shop/pricing.py").as_uri() for s in found or [])
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="create_sales_order"))
    assert any(s.location.uri == (a / "orders/service.py").as_uri() for s in found or [])
    checkout = b / "shop/checkout.py"
    line = next(i for i, t in enumerate(checkout.read_text().splitlines()) if "return apply_discount(" in t)
    defs = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=checkout.as_uri()),
            position=types.Position(line=line, character=12),
        )
    )
    assert defs and all(str(getattr(d, "uri", "")).endswith("shop/pricing.py") for d in defs)
