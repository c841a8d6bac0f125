"""A request that reaches `nav lsp` while its first index of the workspace is still being built
waits for it (bounded) instead of answering from the half-built index without a word: on a
fresh workspace of many files (enough for the indexer's pool of parse workers), the very first
references request lists the call in every one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp.registry import available_definition

FILES = 1200

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(available_definition("rust") is not None, reason="a Rust server is installed here"),
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("first-index") / "ws"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text('[package]\nname = "many"\nversion = "0.1.0"\nedition = "2021"\n')
    (root / "src" / "main.rs").write_text(
        "mod service;\n\nfn main() {\n    service::create_sales_order(1);\n}\n"
    )
    (root / "src" / "service.rs").write_text("pub fn create_sales_order(id: u32) -> u32 {\n    id + 1\n}\n")
    for i in range(FILES):
        (root / "src" / f"caller_{i:04d}.rs").write_text(
            f"use crate::service::create_sales_order;\n\npub fn caller_{i}() -> u32 {{\n"
            f"    create_sales_order({i})\n}}\n"
        )
    return root


async def test_first_request_waits_for_the_first_index(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "src" / "main.rs").as_uri()
    asked = client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=3, character=len("    service::create")),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    # forked parse workers used to hang for ever in `nav lsp` (a lock held by its stdin reader)
    refs = await asyncio.wait_for(asked, timeout=120)
    files = {Path(r.uri).name for r in refs or []}
    missing = [f"caller_{i:04d}.rs" for i in range(FILES) if f"caller_{i:04d}.rs" not in files]
    assert not missing, f"{len(missing)} callers missing, e.g. {missing[:3]}"
    assert {"main.rs", "service.rs"} <= files

