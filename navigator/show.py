"""``nav show``: the source of one symbol, trimmed to a line budget, saying what was cut.

Agents ask for one function far more often than for a whole file; reading the file costs
their context the rest of it. The target is a name, a qualified name or ``path:line``
(the innermost definition around that line). Pure helpers here; the reading is done by
:meth:`navigator.Navigator.show`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_MAX_LINES = 200
"""Lines of source shown per definition unless asked otherwise."""
MAX_MAX_LINES = 10_000
WINDOW_LINES = 20
"""Lines shown around a ``path:line`` that no definition encloses (module-level code)."""


@dataclass(frozen=True, slots=True)
class Trimmed:
    text: str
    shown: int
    """Lines of the span shown (the cut marker not counted)."""
    cut: tuple[int, int] | None
    """The 1-based first and last line left out, or None when nothing was."""


def trim(lines: Sequence[str], first_line: int, max_lines: int) -> Trimmed:
    """``lines`` (a span starting at 1-based ``first_line``) within ``max_lines``: the head,
    where the signature and docstring are, and a short tail (the return), with one marker line
    in place of the middle that names the lines left out."""
    if len(lines) <= max_lines:
        return Trimmed("\n".join(lines), len(lines), None)
    tail = min(max(max_lines // 5, 0), 10) if max_lines >= 10 else 0
    head = max_lines - tail
    cut_first = first_line + head
    cut_last = first_line + len(lines) - tail - 1
    indent = lines[head][: len(lines[head]) - len(lines[head].lstrip())] if head < len(lines) else ""
    marker = f"{indent}... {cut_last - cut_first + 1} lines cut ({cut_first}-{cut_last}) ..."
    kept = [*lines[:head], marker, *(lines[len(lines) - tail :] if tail else [])]
    return Trimmed("\n".join(kept), head + tail, (cut_first, cut_last))


def line_count(text: str) -> int:
    """Lines in ``text`` as an editor counts them (a final newline ends the last line)."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def innermost(spans: Sequence[tuple[int, int, int]], line: int) -> int | None:
    """Of ``(start, end, key)`` spans, the key of the smallest one holding ``line``."""
    best: tuple[int, int] | None = None
    for start, end, key in spans:
        if start <= line <= end and (best is None or end - start < best[0]):
            best = (end - start, key)
    return None if best is None else best[1]
