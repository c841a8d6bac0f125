"""Plain-text renderings of results, shared by the MCP tools (and anything without colour).

Compact and bounded: at most ``limit`` lines of items, then one line saying how many
more there were and whether the answer is complete.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from navigator.frontends.display import source_block
from navigator.paths import printable
from navigator.results import Found, GrepHit, Hit, OutlineEntry, Response, SearchHit, Source, Symbol


def _origin(item: Any) -> str:
    """``repo@commit:`` for a team-store result (which names its repository), else nothing."""
    repo = getattr(item, "repo", "")
    return f"{repo}@{str(getattr(item, 'commit', ''))[:8]}:" if repo else ""


def symbol_line(s: Symbol, indent: int = 0) -> str:
    return f"{'  ' * indent}{_origin(s)}{printable(s.path)}:{s.line}:{s.col}  {s.kind}  {s.qualified_name}  {s.signature}"


def hit_line(h: Hit) -> str:
    tag = " [def]" if h.is_definition else ""
    where = f"  in {h.symbol}" if h.symbol else ""
    src = f"  [{', '.join(h.provenance)}]" if h.provenance else ""
    return f"{printable(h.path)}:{h.line}:{h.col}{tag}{where}{src}\n    {h.code}"


def grep_line(h: GrepHit) -> str:
    """``path:line:col: text`` (``-`` after a context line's number; the count for ``count``)."""
    if h.count is not None:
        return f"{printable(h.path)}:{h.count}"
    if h.line == 0:
        return printable(h.path)
    where = f"{printable(h.path)}-{h.line}-" if h.context else f"{printable(h.path)}:{h.line}:{h.col}:"
    symbol = f"  [{h.symbol}]" if h.symbol and not h.context else ""
    return f"{where} {h.text.strip()[:300]}{symbol}"


def search_line(h: SearchHit) -> str:
    legs = ", ".join(f"{k}#{v}" for k, v in sorted(h.ranks.items(), key=lambda kv: kv[1]))
    name = f"  {h.symbol}" if h.symbol else ""
    first = h.snippet.splitlines()[0].strip() if h.snippet.strip() else ""
    at = f"{h.snippet_line}: " if h.snippet_line else ""  # where the shown line is, inside the span
    return f"{_origin(h)}{printable(h.path)}:{h.start_line}-{h.end_line}{name}  [{legs}]\n    {at}{first}"


def found_line(f: Found) -> str:
    """One answer of ``find``: where, what kind, the symbol, the legs that found it, the code."""
    legs = ", ".join(f"{k}#{v}" for k, v in sorted(f.ranks.items(), key=lambda kv: kv[1]))
    name = f"  {f.symbol}" if f.symbol else ""
    src = f"  [{legs}]" if legs else ""
    return f"{printable(f.path)}:{f.line}:{f.col}  {f.kind}{name}{src}\n    {f.code}"


def item_line(item: Any) -> str:
    if isinstance(item, Symbol):
        return symbol_line(item)
    if isinstance(item, OutlineEntry):
        return symbol_line(item.symbol, item.depth)
    if isinstance(item, Hit):
        return hit_line(item)
    if isinstance(item, SearchHit):
        return search_line(item)
    if isinstance(item, Found):
        return found_line(item)
    if isinstance(item, Source):
        return source_block(item, color=False)
    if isinstance(item, GrepHit):
        return grep_line(item)
    text = getattr(item, "text", None) or getattr(item, "contents", None)
    return str(text if text is not None else item)


def render_response(resp: Response[Any], *, limit: int = 50, offset: int = 0) -> str:
    """One page of items (``offset`` onward, at most ``limit``), a line saying where the next page
    starts when there is one, then completeness and notes. A long list starts with where its hits
    are (counts for the first files), so an agent sees the spread before it pages on."""
    items = list(resp.items)
    lines: list[str] = []
    page = items[offset : offset + limit]
    if len(items) > limit and all(hasattr(i, "path") for i in items):
        per_file = Counter(printable(str(i.path)) for i in items)
        spread = ", ".join(f"{p} ({n})" for p, n in per_file.most_common(5))
        more = f", +{len(per_file) - 5} more files" if len(per_file) > 5 else ""
        lines.append(f"{len(items)} results in {len(per_file)} files: {spread}{more}")
    lines.extend(item_line(i) for i in page)
    end = offset + len(page)
    if end < len(items):
        lines.append(f"… results {offset + 1}-{end} of {len(items)}; next page: offset={end}")
    if not items:
        lines.append("no results")
    elif not page:
        lines.append(f"no results from offset {offset} ({len(items)} in all)")
    if not resp.complete:
        lines.append(f"(incomplete: {resp.reason})")
    lines.extend(f"note: {n}" for n in resp.notes)
    return "\n".join(lines)
