"""LSP's ``Content-Length`` framing, as the benchmarks and fault scenarios speak it to ``nav lsp``,
language servers and ``nav mcp`` (whose messages are lines, not frames)."""

from __future__ import annotations

import json
from typing import IO, Any


def frame(message: Any) -> bytes:
    """One message as an LSP frame: ``Content-Length: N\\r\\n\\r\\n`` and the JSON body."""
    return frame_bytes(json.dumps(message).encode())


def frame_bytes(body: bytes) -> bytes:
    """Raw bytes under an LSP header (for a body that is deliberately not valid JSON)."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frame(stream: IO[bytes]) -> Any | None:
    """The next framed message from ``stream`` (blocking), or None at the end of the input. A header
    block without ``Content-Length`` is skipped; a body that is not JSON raises ``ValueError``."""
    while True:
        length: int | None = None
        while True:
            line = stream.readline()
            if not line:
                return None
            if not line.strip():
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if length is not None:
            return json.loads(stream.read(length))
