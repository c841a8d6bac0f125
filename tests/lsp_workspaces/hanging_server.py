"""A language server that answers ``initialize`` and then never answers anything else.

Used to prove that a hanging server cannot hang nav: the deadline answers instead.
"""


from stdio_frames import read, write

while True:
    msg = read()
    if msg.get("method") == "initialize":
        caps = {"referencesProvider": True, "definitionProvider": True, "textDocumentSync": 1}
        write({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": caps}})
