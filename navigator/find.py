"""``Navigator.query``: route a query, run the legs it needs, fuse them with RRF (k = 60).

Kept apart from the facade so the facade stays a list of verbs. The exact leg is the
symbol table plus the language server's references; the semantic leg is the fused
search of :mod:`navigator.search`. Every hit keeps the rank each leg gave it.

An exact question ("who calls `f`", "where is `X` defined", "references to `Y`") that the
exact leg answers completely is answered first and whole: the call sites (or references,
implementations, definitions) in the server's order, then the definitions named, then
search hits marked ``related``. Otherwise the legs are fused by RRF.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Protocol

from navigator.exact_targets import disk_lines
from navigator.results import Found, Hit, Response, SearchHit, Symbol
from navigator.router import Route, classify
from semantic.analysis import mentions
from semantic.fusion import rrf
from semantic.ranking import DEFAULT, RankingConfig
from storage.errors import NavError, SymbolNotFoundError, UsageError

Key = tuple[str, int]


def _from_symbol(s: Symbol) -> Found:
    return Found(
        s.path, s.line, s.col, s.end_line, "definition", s.signature, s.qualified_name, 0.0, {}, s.signature
    )


def _from_hit(h: Hit) -> Found:
    return Found(
        h.path,
        h.line,
        h.col,
        h.end_line,
        "definition" if h.is_definition else "reference",
        h.code,
        h.symbol,
        0.0,
    )


def _from_chunk(c: SearchHit) -> Found:
    first = next((ln.strip() for ln in c.snippet.splitlines() if ln.strip()), "")
    return Found(c.path, c.start_line, 1, c.end_line, "code", first, c.symbol, 0.0, {}, c.signature)


class Legs(Protocol):
    """What a routed query asks of the facade. :class:`navigator.api.Navigator` is one (it
    composes this module, which therefore does not import it). The exact leg's verbs
    (``references``, ``callers``, ``callees``, ``implementations``) are optional: a facade
    without them answers from the symbol table and search alone."""

    def definitions(self, name: str) -> Response[Symbol]: ...

    def search(self, text: str, *, k: int, view: str = ...) -> Response[SearchHit]: ...


def run_query(
    nav: Legs, text: str, *, limit: int = 20, deadline_s: float = 10.0, config: RankingConfig = DEFAULT
) -> Response[Found]:
    """Route ``text``, run the legs it needs and fuse them (``config.query_rrf_k``,
    ``config.query_leg_depth``, ``config.max_exact_names``)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UsageError(f"limit must be a positive integer, got {limit!r}")
    started = time.perf_counter()
    route = classify(text)
    legs: dict[str, list[Key]] = {}
    found: dict[Key, Found] = {}
    reasons: list[str] = []
    notes: list[str] = [f"routed {route.describe()}"]
    complete = True

    def add(leg: str, item: Found) -> None:
        key = (item.path, item.line)
        legs.setdefault(leg, []).append(key)
        found.setdefault(key, item)

    def absorb(resp: Response[Any]) -> None:
        nonlocal complete
        if not resp.complete:
            complete = False
            if resp.reason:
                reasons.append(resp.reason)
        notes.extend(n for n in resp.notes if n not in notes)

    def exact(name: str) -> None:
        try:
            defs = nav.definitions(name)
        except SymbolNotFoundError as err:
            notes.append(str(err))
            return
        for s in defs.items:
            add("symbols", _from_symbol(s))
        if route.intent == "definition":
            return  # the symbol table's definitions are the answer
        verb = {"callers": "callers", "callees": "callees", "implementations": "implementations"}.get(
            route.intent, "references"
        )
        refs = getattr(nav, verb, None)
        if refs is None:
            return
        resp = refs(name, deadline_s=deadline_s, limit=config.query_leg_depth * 4)
        absorb(resp)
        for h in resp.items:
            add("lsp" if "lsp" in h.provenance else "syntax", _from_hit(h))

    if route.kind == "position":
        refs = getattr(nav, "references", None)
        if refs is None:
            raise UsageError("position queries need the exact-navigation leg, which is not available")
        resp = refs(text.strip(), deadline_s=deadline_s, limit=config.query_leg_depth * 4)
        absorb(resp)
        for h in resp.items:
            add("lsp" if "lsp" in h.provenance else "syntax", _from_hit(h))
    if route.kind in ("exact", "both"):
        names = list(route.identifiers)
        if len(names) > config.max_exact_names:
            # Pasted issue text names dozens of things: ask the exact leg about the strongest
            # few (traceback frames and quoted code first, see semantic.analysis.mentions).
            ranked = [n for n in mentions(route.text).names if n in names]
            names = list(dict.fromkeys([*ranked, *names]))[: config.max_exact_names]
            notes.append(
                f"the exact leg looked up {len(names)} of the {len(route.identifiers)} names: "
                + ", ".join(f"`{n}`" for n in names)
            )
        for name in names:
            exact(name)
    if route.kind in ("semantic", "both") or (route.kind == "exact" and not found):
        if route.kind == "exact":
            notes.append("no exact match; showing search results")
        try:
            # the code view: definitions, each ranked on its own (the files view lists one chunk per
            # file first, so a file's second definition came after every weak file's first)
            resp = nav.search(route.text.replace("`", ""), k=config.query_leg_depth, view="code")
        except NavError as err:
            complete = False
            reasons.append(f"search unavailable: {err}")
        else:
            absorb(resp)
            for c in resp.items:
                add("search", _from_chunk(c))

    lsp_count = len(dict.fromkeys(legs.get("lsp", [])))
    # Possible references (the `syntax` leg) are an appendix to the server's answer, never an
    # equal vote beside it: weighted so that its first hit scores below the server's last.
    weights = {"syntax": (config.query_rrf_k + 1) / (config.query_rrf_k + lsp_count + 1)}
    fused = rrf(legs, k=config.query_rrf_k, weights=weights)
    answer_leg = "symbols" if route.intent == "definition" else "lsp"
    answered = route.asks and bool(legs.get(answer_leg))
    if answered:
        # The exact answer first and whole (the server's order, then the definitions, then
        # possible references), then search hits that mention an asked name, as related code:
        # a hit that does not even name it is no help beside an exact answer.
        lead = list(
            dict.fromkeys([*legs.get(answer_leg, []), *legs.get("symbols", []), *legs.get("syntax", [])])
        )
        lead_set = set(lead)
        rest = sorted(
            (kv for kv in fused.items() if kv[0] not in lead_set), key=lambda kv: (-kv[1][0], kv[0])
        )
        root = getattr(nav, "root", None)
        asked = _asked_names(route.identifiers)
        related = [kv for kv in rest if _mentions(root, found[kv[0]], asked)]
        ordered = [(key, fused[key]) for key in lead] + related
        left_out = len(rest) - len(related)
        notes.append(
            f"the exact answer ({len(legs[answer_leg])} {route.intent}) comes first; search results "
            "that mention the name follow as related"
            + (f" ({left_out} that do not were left out)" if left_out else "")
        )
    else:
        ordered = sorted(fused.items(), key=lambda kv: (-kv[1][0], kv[0]))
        lead_set = set()
    items = []
    for key, (score, ranks) in ordered[:limit]:
        base = found[key]
        kind = "related" if answered and key not in lead_set else base.kind
        items.append(
            Found(
                base.path,
                base.line,
                base.col,
                base.end_line,
                kind,
                base.code,
                base.symbol,
                round(score, 6),
                ranks,
                base.signature,
            )  # fmt: skip
        )
    if len(ordered) > limit:
        complete = False
        reasons.append(f"limit reached: {len(ordered)} results, showing {limit}")
    return Response(
        items=tuple(items),
        complete=complete,
        reason="; ".join(dict.fromkeys(reasons)) or None,
        source=f"router:{route.kind}",
        elapsed_ms=(time.perf_counter() - started) * 1e3,
        notes=tuple(notes),
    )


def _asked_names(identifiers: tuple[str, ...]) -> re.Pattern[str] | None:
    """The last part of each asked name (`Session.request` -> `request`), as a whole word."""
    parts = sorted({i.rsplit(".", 1)[-1].rsplit("::", 1)[-1] for i in identifiers} - {""})
    if not parts:
        return None
    return re.compile(r"(?<![\w$])(?:" + "|".join(map(re.escape, parts)) + r")(?![\w$])")


def _mentions(root: Path | None, item: Found, names: re.Pattern[str] | None) -> bool:
    """Whether the code of ``item`` (its lines on disk; the shown text without a root) names
    one of ``names``."""
    if names is None:
        return False
    read = disk_lines(root, root / item.path) if isinstance(root, Path) else None
    if read is None:
        return bool(names.search(item.code or "") or names.search(item.symbol or ""))
    lines = read[0][max(0, item.line - 1) : item.end_line]
    return any(names.search(line) for line in lines)


__all__ = ["Route", "run_query"]
