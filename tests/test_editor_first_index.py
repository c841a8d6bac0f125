"""A request that reaches `nav lsp` while its first index of the workspace is still being built
waits for it (bounded) instead of answering from the half-built index without a word: on a
fresh workspace of many files (enough for the indexer's pool of parse workers), the very first
references request lists the call in every one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

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


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"]
    ),
    scope="module",
)
async def client(lsp_client: LanguageClient, workspace: Path) -> Any:
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri())
    )
    yield
    await lsp_client.shutdown_session()


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


async def test_a_client_that_never_sends_initialized_is_still_answered(tmp_path: Path) -> None:
    """Nothing indexes before `initialized`, so nothing may wait for that index: a request from a
    client that skips it (a protocol slip) is answered at once from what is there."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "mod.py").write_text("def greet(name):\n    return name\n")

    def frame(obj: dict[str, Any]) -> bytes:
        body = json.dumps(obj).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    closing = contextlib.ExitStack()
    proc = subprocess.Popen(
        [sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"],
        cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )  # fmt: skip
    try:
        init = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        symbols = {"textDocument": {"uri": (root / "mod.py").as_uri()}}
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))  # type: ignore[union-attr]
        for n in (2, 3):  # the first makes the root's engine; the second used to wait for its index
            proc.stdin.write(frame({"jsonrpc": "2.0", "id": n, "method": "textDocument/documentSymbol", "params": symbols}))  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        # no `initialized`: the replies come without the 20 s wait for a first index

        sel = selectors.DefaultSelector()
        closing.callback(sel.close)
        sel.register(proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
        data = b""
        replies: dict[int, Any] = {}
        deadline = time.monotonic() + 10
        while 3 not in replies and time.monotonic() < deadline:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            chunk = os.read(proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                break
            data += chunk
            while b"\r\n\r\n" in data:
                head, _, rest = data.partition(b"\r\n\r\n")
                length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                if len(rest) < length:
                    break
                msg = json.loads(rest[:length])
                data = rest[length:]
                if "id" in msg and "method" not in msg:
                    replies[msg["id"]] = msg
        assert 3 in replies, "no reply to the second documentSymbol within 10 s"
        assert [s["name"] for s in replies[3]["result"]] == ["greet"]
    finally:
        proc.kill()
        proc.wait(timeout=10)
        proc.stdin.close()  # type: ignore[union-attr]
        proc.stdout.close()  # type: ignore[union-attr]
        closing.close()
