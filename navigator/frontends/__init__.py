"""nav's front ends: the CLI, its console-script fast path, the daemon and its client, the
wire format between them, the editor (LSP) and MCP servers, and the text they print.

They import the engine (``navigator.api`` and the modules it composes); the engine never imports
them (``tests/test_layout.py`` checks). Importing this package loads nothing.
"""
