"""Text safe for one line of output. No imports: the console script's fast path
(:mod:`navigator.frontends.entry`) prints through it without loading :mod:`navigator.paths`."""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` safe for one line of output: bytes that are not UTF-8 (a file name's surrogate
    escapes) as ``\\xff``, control characters (newline, tab, ESC) as escapes."""
    if text.isprintable():
        return text
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
