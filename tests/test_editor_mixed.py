"""One `nav lsp` for every language: a Python, TypeScript, Go and C file in the same
workspace (tests/workspaces/mixed) get answers from their own managed servers
(basedpyright, typescript-language-server, gopls, clangd) through one process.

Hover proves a server answered (nav has no hover of its own): its text carries the
signature as each server prints it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp.registry import available_definition

WORKSPACE = Path(__file__).parent / "workspaces" / "mixed"

pytestmark = pytest.mark.asyncio(loop_scope="module")

# language, caller file, call text (cursor on the name), definition files, hover must contain
CASES = [
    ("python", "shop/checkout.py", "apply_discount(amount", {"shop/pricing.py"}, "percent: float"),
    ("typescript", "ts/main.ts", "cartTotal(lines)", {"ts/cart.ts"}, "Line[]"),
    ("go", "goship/quote.go", "ShippingCost(grams)", {"goship/shipping.go"}, "func ShippingCost(grams int) int"),
    ("c", "c/main.c", "tax_for(1000)", {"c/tax.h", "c/tax.c"}, "int cents"),
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mixed") / "ws"
    shutil.copytree(WORKSPACE, root)
    return root


def at(root: Path, rel: str, needle: str) -> types.Position:
    for i, line in enumerate((root / rel).read_text().splitlines()):
        if needle in line:
            return types.Position(line=i, character=line.index(needle) + 2)
    raise AssertionError(f"{needle!r} not in {rel}")


@pytest.mark.parametrize(("language", "rel", "call", "targets", "signature"), CASES, ids=[c[0] for c in CASES])
async def test_each_language_through_one_server(
    client: LanguageClient, workspace: Path, language: str, rel: str, call: str, targets: set[str], signature: str
) -> None:
    if available_definition(language) is None:
        pytest.skip(f"no {language} server installed (scripts/install-servers.sh installs it)")
    uri = (workspace / rel).as_uri()
    text = (workspace / rel).read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text))
    )
    pos = at(workspace, rel, call)
    doc = types.TextDocumentIdentifier(uri=uri)
    defs = await client.text_document_definition_async(types.DefinitionParams(text_document=doc, position=pos))
    found = {str(getattr(d, "uri", None) or d.target_uri) for d in (defs if isinstance(defs, list) else [defs] if defs else [])}
    assert found and found <= {(workspace / t).as_uri() for t in targets}, found
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc, position=pos))
    assert hover is not None and signature in str(hover.contents), hover
    refs = await client.text_document_references_async(
        types.ReferenceParams(text_document=doc, position=pos, context=types.ReferenceContext(include_declaration=False))
    )
    assert any(r.uri == uri and r.range.start.line == pos.line for r in refs or [])
