"""``nav show``: the source of one symbol, trimmed to a line budget, saying what was cut.

Agents ask for one function far more often than for a whole file; reading the file costs
their context the rest of it. The target is a name, a qualified name or ``path:line``
(the innermost definition around that line). Here: the span a ``path:line`` means, and the
reading and trimming of each span (:func:`read_sources`), confined to the root; the facade
(:meth:`navigator.Navigator.show`) resolves names and says what the answer must.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from navigator.confine import read_text_inside
from navigator.results import Source
from storage.errors import UsageError, shorten
from storage.model import SymbolDef
from storage.query import IndexQueries

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


@dataclass(frozen=True, slots=True)
class Span:
    """Lines of one file to show: a definition's, or a window around a line no definition holds."""

    path: str
    first: int
    last: int
    definition: SymbolDef | None = None


def span_at(root: Path, store: IndexQueries, rel: str, line: int) -> Span:
    """What ``rel:line`` shows: the innermost indexed definition around the line, else the
    lines around it. A line past the end of the file is a usage error naming the last line."""
    text = read_text_inside(root, rel)
    if text is not None and line > line_count(text):
        raise UsageError(
            f"line {line} is past the end of `{shorten(rel)}` ({line_count(text)} lines); e.g. `{shorten(rel)}:1`"
        )
    rows = store.symbols_in_file(rel)
    at = innermost(
        [(r.definition.span.start_line, r.definition.span.end_line, i) for i, r in enumerate(rows)], line
    )
    if at is not None:
        d = rows[at].definition
        return Span(rel, d.span.start_line, d.span.end_line, d)
    return Span(rel, max(1, line - WINDOW_LINES // 2), line + WINDOW_LINES // 2)


@dataclass(frozen=True, slots=True)
class Read:
    """The sources of some spans, and what an answer must say about them."""

    items: tuple[Source, ...]
    cut: int
    """How many of the items were trimmed to the line budget."""
    missing: tuple[str, ...]
    """Paths that could not be read (gone, unreadable, outside the root)."""


def read_sources(root: Path, spans: Sequence[Span], max_lines: int) -> Read:
    """Each span's lines, read from under ``root`` and trimmed to ``max_lines`` (:func:`trim`)."""
    items: list[Source] = []
    missing: list[str] = []
    cut = 0
    for span in spans:
        text = read_text_inside(root, span.path)
        if text is None:
            missing.append(span.path)
            continue
        lines = text.split("\n")
        last = min(span.last, len(lines))
        piece = trim([ln.rstrip("\r") for ln in lines[span.first - 1 : last]], span.first, max_lines)
        cut += piece.cut is not None
        defn = span.definition
        items.append(
            Source(
                path=span.path,
                start_line=span.first,
                end_line=last,
                text=piece.text,
                symbol=defn.qualified_name if defn else None,
                kind=defn.kind if defn else None,
                signature=defn.signature if defn else None,
                cut=piece.cut,
            )
        )
    return Read(items=tuple(items), cut=cut, missing=tuple(missing))
