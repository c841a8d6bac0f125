"""Position conversion between nav and the language-server protocol. Pure, no I/O.

nav counts lines and columns from 1, columns in Unicode code points (what an editor's
status bar shows). LSP counts both from 0 and columns in UTF-16 code units (the
protocol's default ``positionEncoding``). A code point above U+FFFF (an emoji, some CJK)
is one nav column and two LSP characters; everything else is one of each.
"""

from __future__ import annotations

import re

__all__ = ["from_lsp", "split_lines", "to_lsp", "utf16_len"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """``text``'s lines as the protocol counts them: ended by ``\\n``, ``\\r\\n`` or a lone ``\\r``,
    and by nothing else (``str.splitlines`` also breaks at form feeds, ``\\v``, U+2028...,
    which would shift every later line against the server's). A leading byte-order mark is
    not text: editors and servers drop it, and so do its columns here. No final empty line
    for a text that ends with a line break, like ``splitlines``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def utf16_len(text: str) -> int:
    """Number of UTF-16 code units needed to encode ``text``."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def to_lsp(line_text: str, line: int, col: int) -> tuple[int, int]:
    """nav (1-based line, 1-based code-point column) → LSP (0-based line, UTF-16 character).

    A column past the end of the line is clamped to the end (LSP says the same).
    """
    if line < 1 or col < 1:
        raise ValueError(f"positions are 1-based: got line {line}, column {col}")
    prefix = line_text[: col - 1]
    return line - 1, utf16_len(prefix)


def from_lsp(line_text: str, line: int, character: int) -> tuple[int, int]:
    """LSP (0-based line, UTF-16 character) → nav (1-based line, 1-based code-point column).

    A character in the middle of a surrogate pair maps to the code point it belongs to;
    one past the end of the line is clamped to one past the last code point.
    """
    if line < 0 or character < 0:
        raise ValueError(f"LSP positions are 0-based and non-negative: got {line}:{character}")
    units = 0
    for index, ch in enumerate(line_text):
        width = 2 if ord(ch) > 0xFFFF else 1
        if units + width > character:
            return line + 1, index + 1
        units += width
    return line + 1, len(line_text) + 1
