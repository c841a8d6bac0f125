"""A language server that takes its time to load: after ``initialized`` it logs what it is
loading and, only if started with ``--finish``, logs "Found 3 source files" (ready) a moment
later. Answers references with an empty list."""

import sys
import time

from stdio_frames import read, write


def log(message: str) -> None:
    write({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": message}})


while True:
    msg = read()
    method = msg.get("method")
    if method == "initialize":
        caps = {"referencesProvider": True, "textDocumentSync": 1}
        write({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": caps}})
    elif method == "initialized":
        log("Searching for source files")
        if "--finish" in sys.argv:
            time.sleep(0.5)  # the server's own loading time
            log("Found 3 source files")
    elif method == "shutdown":
        write({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif "id" in msg:
        write({"jsonrpc": "2.0", "id": msg["id"], "result": []})
