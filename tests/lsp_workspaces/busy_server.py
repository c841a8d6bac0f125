"""A language server too busy to answer: it says what it is doing (a log line per request)
but never answers anything after ``initialize``. Slow and talking, not hung."""

from stdio_frames import read, write

while True:
    msg = read()
    if msg.get("method") == "initialize":
        caps = {"referencesProvider": True, "definitionProvider": True, "textDocumentSync": 1}
        write({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": caps}})
    elif "id" in msg:
        text = f"working on request {msg['id']}"
        write({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": text}})
