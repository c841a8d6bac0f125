"""Human output of the CLI, as plain functions with no click import.

Shared by the click commands (``navigator.frontends.cli``) and the daemon fast path
(``navigator.frontends.entry``), so both print the same lines. Colour is ANSI, on only when
asked (the click side always asks and lets ``click.echo`` strip it off a terminal).
"""

from __future__ import annotations

from collections import Counter

from navigator.printing import printable

TYPE_CHECKING = False  # not typing's: the console script's fast path prints through this module
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

_FG = {"red": 31, "green": 32, "yellow": 33, "cyan": 36, "bright_black": 90}

SHRINK_ABOVE = 150
"""More hits than this (and no -n) are shown as counts per file, not a flood of lines."""


def style(text: str, *, fg: str | None = None, bold: bool = False, color: bool = True) -> str:
    if not color or (fg is None and not bold):
        return text
    codes = ([f"\033[{_FG[fg]}m"] if fg else []) + (["\033[1m"] if bold else [])
    return "".join(codes) + text + "\033[0m"


def symbol_line(sym: Any, *, indent: int = 0, color: bool = True) -> str:
    where = style(f"{printable(sym.path)}:{sym.line}:{sym.col}", fg="cyan", color=color)
    kind = style(f"{sym.kind:<9}", fg="yellow", color=color)
    name = style(sym.qualified_name, bold=True, color=color)
    return f"{'  ' * indent}{where}  {kind} {name}  {sym.signature}"


def source_block(src: Any, *, color: bool = True) -> str:
    """A definition's source: ``path:first-last  kind  name`` over its (trimmed) lines."""
    where = style(f"{printable(src.path)}:{src.start_line}-{src.end_line}", fg="cyan", color=color)
    what = f"  {src.kind}  {style(src.symbol, bold=True, color=color)}" if src.symbol else ""
    return f"{where}{what}\n{src.text}"


def hover_lines(item: Any, *, color: bool = True) -> Iterator[str]:
    """``nav hover``: where, then the server's text."""
    yield style(f"{printable(item.path)}:{item.line}:{item.col}", fg="cyan", color=color)
    yield item.text


def search_lines(hit: Any, *, color: bool = True) -> Iterator[str]:
    """``nav search``: where (``repo@commit:`` for a team-store hit), the symbol and the legs, then
    the signature or the chunk's first line."""
    team = f"{hit.repo}@{hit.commit[:8]}:" if getattr(hit, "repo", "") else ""
    where = style(f"{team}{printable(hit.path)}:{hit.start_line}-{hit.end_line}", fg="cyan", color=color)
    legs = " ".join(f"{leg}#{rank}" for leg, rank in sorted(hit.ranks.items(), key=lambda kv: kv[1]))
    yield f"{where}  {style(hit.symbol or '', bold=True, color=color)}  {style(legs, fg='bright_black', color=color)}"
    first = hit.signature or next((ln.strip() for ln in hit.snippet.splitlines() if ln.strip()), "")
    yield f"    {first}"


def found_lines(found: Any, *, color: bool = True) -> Iterator[str]:
    """``nav find``: where, the kind, the symbol and the legs that found it, then the code."""
    where = style(f"{printable(found.path)}:{found.line}:{found.col}", fg="cyan", color=color)
    kind = style(f"{found.kind:<10}", fg="yellow", color=color)
    legs = ", ".join(f"{k}#{v}" for k, v in sorted(found.ranks.items(), key=lambda kv: kv[1]))
    name = style(found.symbol or "", bold=True, color=color)
    yield f"{where}  {kind} {name}  {style('[' + legs + ']', fg='bright_black', color=color)}"
    yield f"    {found.code}"


def find_tail_lines(resp: Any, *, color: bool = True) -> Iterator[str]:
    """``nav find``'s stderr: its first note (how the query was routed) plain, then whether it
    is complete and the other notes."""
    for note in resp.notes[:1]:
        yield style(note, fg="bright_black", color=color)
    if not resp.complete:
        yield style(f"(incomplete: {resp.reason})", fg="yellow", color=color)
    for note in resp.notes[1:]:
        yield style(f"note: {note}", fg="yellow", color=color)


def hit_line(hit: Any, *, color: bool = True) -> str:
    where = style(f"{printable(hit.path)}:{hit.line}:{hit.col}", fg="cyan", color=color)
    mark = style("def ", fg="green", color=color) if hit.is_definition else "    "
    via = (
        ""
        if hit.provenance == ("lsp",)
        else style(f" [{','.join(hit.provenance)}]", fg="yellow", color=color)
    )
    symbol = style(hit.symbol or "<module>", fg="bright_black", color=color)
    return f"{where}  {mark}{symbol}  {hit.code}{via}"


def counts_per_file(items: Iterable[Any], what: str, *, color: bool = True) -> Iterator[str]:
    items = list(items)
    per_file = Counter(h.path for h in items)
    yield style(
        f"{len(items)} {what} in {len(per_file)} files (counts per file; -n N lists hits, --json all):",
        bold=True,
        color=color,
    )
    for path, n in per_file.most_common():
        yield f"{n:>6}  {style(printable(path), fg='cyan', color=color)}"


def incomplete_lines(resp: Any, *, color: bool = True) -> Iterator[str]:
    """The stderr lines that say an answer is partial, and its notes."""
    if not resp.complete:
        yield style(f"(incomplete: {resp.reason})", fg="yellow", color=color)
    for note in resp.notes:
        yield style(f"note: {note}", fg="yellow", color=color)


def history_line(commits: int, head: str | None) -> str:
    """``nav status``'s history line: the past commits the history leg reads."""
    if not head:
        return "none (the root is not a git repository's top level, or git could not read it)"
    return f"{commits} commits, to {head[:12]}"
