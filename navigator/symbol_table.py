"""The symbol table's verbs as pure functions over the index's queries.

How a name resolves to definitions (exact name, qualified suffix, module path), the close names
offered when nothing matches, the ranking of ``symbols`` (exact, prefix, substring, words, then
fuzzy), a file's outline, the enclosing symbol of a grep hit and the repository map's ranking:
each takes a :class:`storage.query.IndexQueries` (the local SQLite index, or a fake in a test)
and returns nav's result types. No I/O of their own, no freshness, no notes: the facade
(:class:`navigator.api.Navigator`) brings the index up to date and says what the answer must.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from navigator.close_names import NameTable, subsequence, table_for
from navigator.results import GrepHit, MapEntry, OutlineEntry, RepoMap, Symbol
from storage.errors import FileNotInIndexError
from storage.query import IndexQueries, SymbolRow

_KIND_WEIGHT = {
    "class": 0, "struct": 0, "interface": 0, "trait": 0, "enum": 0, "type": 1,
    "function": 1, "method": 2, "constant": 2, "module": 3, "field": 4,
}  # fmt: skip


def name_table(store: IndexQueries) -> NameTable:
    """Every symbol name of ``store``'s index with what finds close ones fast, kept while the
    index's files are unchanged (:meth:`~storage.query.IndexQueries.files_signature`)."""
    index = getattr(store, "path", None)
    if index is None:  # an index in memory (a test's fake): nothing to tell one from another by
        return NameTable(store.symbol_names())
    state = store.files_signature()
    table = table_for(index, state)
    return table if table is not None else table_for(index, state, store.symbol_names()) or NameTable([])


def to_symbol(row: SymbolRow) -> Symbol:
    d = row.definition
    return Symbol(
        name=d.name,
        qualified_name=d.qualified_name,
        kind=d.kind,
        path=d.path,
        line=d.name_span.start_line,
        col=d.name_span.start_col,
        end_line=d.span.end_line,
        end_col=d.span.end_col,
        signature=d.signature,
        language=d.language,
        container=d.container,
        docstring=d.docstring,
    )


def module_path(path: str) -> str:
    """``src/pkg/orders.py`` -> ``pkg.orders``; ``pkg/__init__.py`` -> ``pkg``."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] in ("__init__", "index", "mod"):
        parts = parts[:-1]
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    return ".".join(parts)


def resolve(store: IndexQueries, name: str) -> list[SymbolRow]:
    """Definitions a name can mean: exact name, qualified suffix, or module-qualified path."""
    dotted = name.replace("::", ".").replace("#", ".")
    if "." not in dotted:
        return store.symbols_by_name(dotted)
    rows = store.symbols_by_qualified_suffix(dotted)
    if rows:
        return rows
    # `pkg.module.func` or `module.Class.method`: match module path + qualified name
    last = dotted.rsplit(".", 1)[-1]
    out = []
    for row in store.symbols_by_name(last):
        full = module_path(row.definition.path) + "." + row.definition.qualified_name
        # the root may sit inside the package (`click/` indexed on its own): allow extra leading parts
        if full == dotted or full.endswith("." + dotted) or dotted.endswith("." + full):
            out.append(row)
    return out


def suggestions(store: IndexQueries, name: str, *, limit: int = 5) -> list[str]:
    """Close symbol names, each with where it is defined: "`createSalesOrder` (src/orders.py:41)"."""
    last = name.replace("::", ".").rsplit(".", 1)[-1]
    table = name_table(store)
    names = table.names
    lowered = {n.lower(): n for n in names}
    picks: list[str] = []
    if last.lower() in lowered and lowered[last.lower()] != last:
        picks.append(lowered[last.lower()])
    picks += table.close_matches(last, n=limit, cutoff=0.6)
    low = last.lower()
    if len(picks) < limit and len(low) >= 3:
        picks += sorted((n for n in names if low in n.lower()), key=len)[:limit]
    out: list[str] = []
    seen: set[str] = set()
    for pick in picks:
        if pick in seen:
            continue
        seen.add(pick)
        rows = store.symbols_by_name(pick)
        where = f" ({rows[0].definition.path}:{rows[0].definition.name_span.start_line})" if rows else ""
        out.append(f"`{pick}`{where}")
        if len(out) >= limit:
            break
    return out


def ranked_symbols(store: IndexQueries, pattern: str, *, limit: int) -> list[SymbolRow]:
    """Symbols whose name matches ``pattern``, ranked: exact, prefix, substring, words, then fuzzy;
    then by how many of its words the name covers, its kind, its length and its place."""
    from storage.tokens import fts_query, split_identifier

    pat = pattern.strip()
    low = pat.lower()
    pat_words = [w for part in pat.split() for w in split_identifier(part)]

    candidates: dict[int, SymbolRow] = {}
    for row in store.symbols_like(pat, limit=5000):
        candidates[row.id] = row
    for row in store.symbols_fts(fts_query(pat, mode="AND"), limit=500):
        candidates.setdefault(row.id, row)
    if len(candidates) < limit:
        table = name_table(store)
        # close spellings are for a name mistyped: one that names a symbol exactly gets none
        named = any(
            r.definition.name == pat or r.definition.qualified_name == pat for r in candidates.values()
        )
        close = set() if named else set(table.close_matches(pat, n=limit, cutoff=0.6))
        close |= set(table.subsequences(low))
        for n in list(close)[:2000]:
            for row in store.symbols_by_name(n):
                candidates.setdefault(row.id, row)

    def rank(row: SymbolRow) -> tuple[Any, ...]:
        d = row.definition
        name, qn = d.name, d.qualified_name
        if name == pat or qn == pat:
            tier = 0
        elif name.lower() == low or qn.lower() == low:
            tier = 1
        elif name.lower().startswith(low):
            tier = 2
        elif low in name.lower():
            tier = 3
        elif low in qn.lower():
            tier = 4
        elif subsequence(low, name.lower()):
            tier = 6
        else:
            tier = 5  # word match through FTS or a close spelling
        words = set(split_identifier(qn.replace(".", "_")))
        covered = sum(1 for w in pat_words if any(x.startswith(w) for x in words))
        return (
            tier,
            -covered,
            _KIND_WEIGHT.get(d.kind, 5),
            len(name),
            d.path.count("/"),
            d.path,
            d.span.start_line,
        )

    return sorted(candidates.values(), key=rank)


def outline(store: IndexQueries, rel: str) -> tuple[OutlineEntry, ...]:
    """The symbols of the indexed file ``rel``, in source order, with their nesting depth."""
    if store.file_row(rel) is None:
        raise FileNotInIndexError(
            f"`{rel}` is not indexed (ignored, binary or larger than the size limit); see `nav status`"
        )
    rows = sorted(
        store.symbols_in_file(rel),
        key=lambda r: (r.definition.span.start_line, r.definition.span.start_col),
    )
    entries = []
    for row in rows:
        cont = row.definition.container
        depth = 0 if not cont else cont.count(".") + 1
        entries.append(OutlineEntry(symbol=to_symbol(row), depth=depth))
    return tuple(entries)


def with_symbols(store: IndexQueries, hits: tuple[GrepHit, ...]) -> tuple[GrepHit, ...]:
    """Each hit with the qualified name of the innermost symbol around its line (as indexed)."""
    spans: dict[str, list[tuple[int, int, str]]] = {}
    out = []
    for hit in hits:
        if hit.path not in spans:
            rows = store.symbols_in_file(hit.path) if len(spans) < 500 else []
            spans[hit.path] = sorted(
                (
                    (r.definition.span.start_line, r.definition.span.end_line, r.definition.qualified_name)
                    for r in rows
                ),
                key=lambda t: t[1] - t[0],
            )
        inner = next((q for a, b, q in spans[hit.path] if a <= hit.line <= b), None) if hit.line else None
        out.append(dataclasses.replace(hit, symbol=inner) if inner else hit)
    return tuple(out)


def repo_map(store: IndexQueries, tokens: int, *, started: float) -> RepoMap:
    """The most important definitions (PageRank over references) within ``tokens``; ``started``:
    when the call began (its ``elapsed_ms`` counts from there)."""
    from navigator.repomap import Definition, rank_definitions, render

    rows = store.symbols(exclude_kinds=("field",), limit=10_000_000)
    by_key = {r.id: r for r in rows}
    defs = [
        Definition(
            key=r.id,
            name=r.definition.name,
            path=r.definition.path,
            line=r.definition.name_span.start_line,
            signature=r.definition.signature,
            kind=r.definition.kind,
            qualified_name=r.definition.qualified_name,
            container=r.definition.container,
        )
        for r in rows
    ]
    counts = store.ref_counts_by_file()
    ranked = rank_definitions(defs, counts)
    text, chosen = render(ranked, tokens=tokens)
    scores = {d.key: s for s, d in ranked}
    entries = tuple(MapEntry(symbol=to_symbol(by_key[d.key]), score=round(scores[d.key], 6)) for d in chosen)
    return RepoMap(
        text=text,
        entries=entries,
        tokens=tokens,
        total_symbols=len(defs),
        elapsed_ms=(time.perf_counter() - started) * 1e3,
    )
