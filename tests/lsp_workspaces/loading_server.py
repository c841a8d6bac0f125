"""A language server that takes its time to load: after ``initialized`` it logs what it is
loading and, only if started with ``--finish``, logs "Found 3 source files" (ready) a moment
later. Answers references with an empty list."""

import json
import sys
import time


def read() -> dict:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        if line.startswith(b"Content-Length:"):
            length = int(line.split(b":")[1])
        elif line in (b"\r\n", b"\n"):
            return json.loads(sys.stdin.buffer.read(length))


def write(payload: dict) -> None:
    body = json.dumps(payload).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    sys.stdout.buffer.flush()


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
