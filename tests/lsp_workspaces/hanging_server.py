"""A language server that answers ``initialize`` and then never answers anything else.

Used to prove that a hanging server cannot hang nav: the deadline answers instead.
"""

import json
import sys


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


while True:
    msg = read()
    if msg.get("method") == "initialize":
        caps = {"referencesProvider": True, "definitionProvider": True, "textDocumentSync": 1}
        write({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": caps}})
