"""One question to one server about one position, as LSP requests (definition, references,
implementation, hover, and the call hierarchy for callers and callees), and the server's result
read into :class:`lsp.answers.Location` values. :class:`lsp.pool.ServerPool` runs these within
each query's deadline.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from lsp.answers import Location, Operation, Position
from lsp.session import ServerSession, path_of

_METHODS: dict[str, str] = {
    "definition": "textDocument/definition",
    "references": "textDocument/references",
    "implementation": "textDocument/implementation",
    "hover": "textDocument/hover",
}


def _doc_pos(pos: Position) -> dict[str, Any]:
    return {
        "textDocument": {"uri": Path(pos.path).as_uri()},
        "position": {"line": pos.line, "character": pos.character},
    }


async def ask_one(
    session: ServerSession, op: Operation, pos: Position, timeout_s: float
) -> tuple[list[Location], str | None]:
    deadline = time.monotonic() + timeout_s

    def left() -> float:
        return deadline - time.monotonic()

    if op in _METHODS:
        params = _doc_pos(pos)
        if op == "references":
            params["context"] = {"includeDeclaration": True}
        result = await session.request(_METHODS[op], params, timeout_s=left())
        if op == "hover":
            return [], _hover_text(result)
        return _locations(result), None
    items = await session.request("textDocument/prepareCallHierarchy", _doc_pos(pos), timeout_s=left())
    out: list[Location] = []
    for item in items or []:
        if op == "callers":
            calls = await session.request("callHierarchy/incomingCalls", {"item": item}, timeout_s=left())
            for call in calls or []:
                caller = call.get("from") or {}
                path = path_of(caller.get("uri", ""))
                for rng in call.get("fromRanges") or [caller.get("selectionRange")]:
                    if rng:
                        out.append(_location(path, rng, caller.get("name")))
        else:
            calls = await session.request("callHierarchy/outgoingCalls", {"item": item}, timeout_s=left())
            for call in calls or []:
                callee = call.get("to") or {}
                rng = callee.get("selectionRange") or callee.get("range")
                if rng:
                    out.append(_location(path_of(callee.get("uri", "")), rng, callee.get("name")))
    return out, None


def _location(path: str, rng: dict[str, Any], name: str | None = None) -> Location:
    start, end = rng["start"], rng["end"]
    return Location(path, int(start["line"]), int(start["character"]), int(end["line"]),
                    int(end["character"]), name)  # fmt: skip


def _locations(result: Any) -> list[Location]:
    if result is None:
        return []
    if isinstance(result, dict):
        result = [result]
    out: list[Location] = []
    for item in result:
        if "targetUri" in item:  # LocationLink
            out.append(
                _location(path_of(item["targetUri"]), item.get("targetSelectionRange") or item["targetRange"])
            )
        elif "uri" in item:
            out.append(_location(path_of(item["uri"]), item["range"]))
    return out


def _hover_text(result: Any) -> str | None:
    if not result:
        return None
    contents = result.get("contents")
    parts: list[str] = []
    items = contents if isinstance(contents, list) else [contents]
    for c in items:
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, dict):
            parts.append(str(c.get("value", "")))
    text = "\n".join(p for p in parts if p).strip()
    return text or None
