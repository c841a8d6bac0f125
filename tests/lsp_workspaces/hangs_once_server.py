"""A language server whose first life hangs (answers ``initialize``, then nothing, silently) and
whose later lives answer: argv[1] is a marker file, created by the first life."""

import sys
from pathlib import Path

from stdio_frames import read, write

marker = Path(sys.argv[1])
hang = not marker.exists()
marker.touch()
while True:
    msg = read()
    if msg.get("method") == "initialize":
        caps = {"referencesProvider": True, "definitionProvider": True, "textDocumentSync": 1}
        write({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": caps}})
    elif msg.get("method") == "shutdown":
        write({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif "id" in msg and not hang:
        write({"jsonrpc": "2.0", "id": msg["id"], "result": []})
